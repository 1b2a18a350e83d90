r"""The k-sample MMD statistic: a size-weighted average of the pairwise MMDs.

For ``k`` samples of sizes ``n_1 .. n_k`` (``N`` in all),

.. math:: T = \sum_{a<b} \frac{n_a n_b}{W}\, \mathrm{MMD}^2(a, b),
          \qquad W = \sum_{a<b} n_a n_b,

with ``MMD^2_u`` (U-form, default) or ``MMD^2_b`` (V-form) between the estimated
embeddings of samples ``a`` and ``b``. The weights sum to 1, so for ``k = 2`` the
statistic *is* the two-sample ``MMD^2`` (:func:`kmtests.two_sample_test`).

Why these weights: in V-form, with the centred pooled Gram matrix ``Kc`` and the
within-sample sums ``s_g = 1_g' Kc 1_g``,

.. math:: T_b = \frac{N}{W} \sum_g \frac{s_g}{n_g}
              = \frac{N}{W}\, \mathrm{tr}(K_c L), \qquad L_{ij} = \frac{1[g_i = g_j]}{n_{g_i}},

the between-groups sum of squares in feature space (kernel ANOVA), i.e. the HSIC of
the data with the normalised label kernel ``L`` up to a constant: both statistics
give the same permutation test (the constant does not change ranks), and the
permutation moments of the HSIC form give the gamma approximation. In U-form the
within-sample diagonal terms are dropped:

.. math:: T_u = \frac{1}{W}\Big[\sum_g n_g (N - n_g)\, \frac{s_g - t_g}{n_g (n_g - 1)}
              + \sum_g s_g\Big], \qquad t_g = \sum_{i \in g} (K_c)_{ii}.

Both need only the ``k`` within-sample sums of every arrangement, which every engine
computes (block sums; :mod:`kmtests.engines`): ``k`` times the cost of a two-sample
MMD. Estimators whose weights are not a fixed multiple of ``1/n`` are evaluated
arrangement by arrangement on the in-memory Gram matrix (the pairwise
``beta_a' K_ab beta_b``, U-form as in :func:`kmtests.engines.mmd.mmd_general`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..engines import Engine, Requirements, Values
from ..engines._loop import map_rows_multi
from ..engines.exact import Exact
from ..estimators import KME, KernelMeanEstimator
from ..estimators._rules import General, Rule, Uniform
from ..kernels import Kernel
from ._base import EstimatorStatistic, Prepared
from .forms import KernelForm, KWayForm
from .tuning import prepare_rule, reportable

__all__ = ["KSampleMMD", "group_first"]


def group_first(perms: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Rows with the entries ``start:stop`` (one group) moved to the front, so that the
    engines' within-sample sums of "the first n points" are that group's."""
    return np.ascontiguousarray(np.concatenate(
        [perms[:, start:stop], perms[:, :start], perms[:, stop:]], axis=1))


def _fixed_factor(rule: Rule) -> float | None:
    return float(rule.fixed) if isinstance(rule, Uniform) and rule.fixed is not None else None


class KSampleMMD(EstimatorStatistic):
    """The k-sample MMD (module docs) with a kernel mean estimator.

    Parameters
    ----------
    kernel : Kernel
        The kernel (a ``"median"`` bandwidth is fitted on the pooled sample).
    estimator : KernelMeanEstimator
    unbiased : bool
        U-form (default) or V-form of the pairwise MMDs.
    """

    name: ClassVar[str] = "k_sample"
    registered_as: ClassVar[tuple[str, ...]] = ("unbiased", "biased")
    problem_kind: ClassVar[str] = "k_sample"
    symbols: ClassVar[tuple[str, str]] = ("kMMD^2_u", "kMMD^2_b")
    family_name: ClassVar[str] = "MMD"
    form_class: ClassVar[type[KernelForm] | None] = KWayForm
    what: ClassVar[str] = "the k-sample MMD^2"

    def __init__(self, kernel: Kernel, estimator: KernelMeanEstimator = KME(),
                 unbiased: bool = True) -> None:
        super().__init__(kernel, estimator, unbiased)

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        est = self.estimator
        rule = est.rule()
        gram = ""
        if _fixed_factor(rule) is None:
            gram = (f"the estimator {est.name!r} needs with k samples (its weights are "
                    "computed arrangement by arrangement; only the KME and fixed uniform "
                    "factors run without it)")
        if tuning == "pooled" and not est.uniform:
            gram = gram or "tuning='pooled' needs (it tunes on the pooled Gram matrix)"
        return Requirements("split", {"kernel": self.kernel}, gram=gram,
                            marginalized=est.name if est.transforms_kernel else "")

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        need, what, advice = super().memory(problem, engine, tuning, batch)
        if engine.holds_gram and _fixed_factor(self.estimator.rule()) is None:
            need += Exact.per_thread_bytes(problem.n) / 2
        return need, what, advice

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        est, z = self.estimator, problem.z
        kern = self.kernel.fitted_to(z, name="the pooled sample")
        note, tparams = "", {}  # type: tuple[str, dict[str, Any]]
        tk = est.transform_kernel(kern, z)
        if tk is None:
            source = engine.pooled(kern, z, rng=rng)
        else:
            c, infl, tparams = tk
            source = engine.pooled(infl, z, rng=rng, scale=c)
            note = f"marginalized: {c:.4g} x {infl.describe()}"
        cg = source.cg if engine.holds_gram else None
        prep = prepare_rule(est, tuning, None if cg is None else cg.full, bool(note))
        rule, unbiased = prep.rule, self.unbiased
        sizes = np.asarray(problem.sizes_, dtype=np.int64)
        offsets = problem.offsets
        N, k = int(sizes.sum()), sizes.size
        W = float((sizes.sum() ** 2 - (sizes ** 2).sum()) / 2)
        fixed = _fixed_factor(rule)

        def fast(perms: np.ndarray, n_jobs: int | None) -> Values:
            return _fixed_values(source, perms, n_jobs, sizes, offsets, unbiased, fixed)

        def general(perms: np.ndarray, n_jobs: int | None) -> tuple[Values, list[Any]]:
            assert cg is not None
            Kc, r, g0 = cg.Kc, cg.r, cg.g
            w = np.outer(sizes, sizes) / W

            def one(p: np.ndarray) -> tuple[float, float, dict[str, Any]]:
                B = np.zeros((N, k))
                params = {}
                for gi in range(k):
                    idx = np.sort(p[offsets[gi]:offsets[gi + 1]])
                    Kg = cg.block(idx)
                    beta, params[str(gi + 1)] = _weights(rule, Kg)
                    B[idx, gi] = beta
                Q = B.T @ (Kc @ B)
                sb = B.sum(axis=0)
                rb = B.T @ r
                Q = Q + rb[:, None] * sb[None, :] + sb[:, None] * rb[None, :] - g0 * np.outer(sb, sb)
                diag = np.diag(Q).copy()
                if unbiased:
                    d = (B * B).T @ cg.diag
                    diag = (diag - d) * sizes / (sizes - 1)
                stat = (diag * (w.sum(axis=1) - np.diag(w))).sum() \
                    - 2.0 * np.triu(w * Q, 1).sum()
                l1 = float(np.abs(B).sum())
                return float(stat), l1 * l1 * cg.kc_max, params

            rows = map_rows_multi(one, perms, n_jobs)
            return (Values(np.array([u[0] for u in rows]), np.array([u[1] for u in rows])),
                    [u[2] for u in rows])

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            return fast(perms, n_jobs) if fixed is not None else general(perms, n_jobs)[0]

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            ident = np.arange(N, dtype=np.int64)[None, :]
            if fixed is not None:
                return fast(ident, n_jobs), {}
            vals, ps = general(ident, n_jobs)
            return vals, ({} if prep.tuning == "pooled" else
                          {f"sample {g}": p for g, p in ps[0].items()})

        def kernel_form() -> KernelForm:
            assert cg is not None
            labels = np.repeat(np.arange(k), sizes)
            L = (labels[:, None] == labels[None, :]) / sizes[labels][:, None]
            Lc = L - L.mean(axis=0) - L.mean(axis=1)[:, None] + L.mean()
            return KWayForm(unbiased, cg.Kc, Lc, scale=N ** 3 / W)

        params = {}
        if tparams or prep.params:
            params["pooled"] = reportable({**tparams, **prep.params})
        return Prepared(values=values, observed=observed, kernels={"kernel": kern},
                        what=f"{self.label()} with {kern.phrase()}", tuning=prep.tuning,
                        rule=rule, kernel_notes={"kernel": note}, params=params,
                        notes=[prep.note] if prep.note else [],
                        engine_info=getattr(source, "info", ""),
                        kernel_form=kernel_form if cg is not None else None)


def _weights(rule: Rule, K: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
    """A sample's weights from its (uncentred) Gram matrix, for any rule."""
    if isinstance(rule, General):
        return rule.weights(K)
    n = K.shape[0]
    rho = float(K.sum()) / n ** 2
    c = float(rule(np.array([rho]), np.array([float(np.trace(K)) / n - rho]), n)[0])
    return np.full(n, c / n), {}


def _fixed_values(source: Any, perms: np.ndarray, n_jobs: int | None, sizes: np.ndarray,
                  offsets: np.ndarray, unbiased: bool, fixed: Any) -> Values:
    """The statistic on each arrangement of `perms` for fixed weights (``fixed`` times the
    uniform ones), from the within-sample sums of the pooled Gram matrix."""
    k, N = sizes.size, int(sizes.sum())
    W = float((sizes.sum() ** 2 - (sizes ** 2).sum()) / 2)
    s = np.empty((perms.shape[0], k))
    t = np.empty((perms.shape[0], k))
    for g in range(k):
        a, b = int(offsets[g]), int(offsets[g + 1])
        s[:, g] = source.within_sums(group_first(perms, a, b), int(sizes[g]), n_jobs)
        t[:, g] = source.diag_c[perms[:, a:b]].sum(axis=1)
    if unbiased:
        u = (s - t) / (sizes * (sizes - 1))
        stat = ((u * (sizes * (N - sizes))).sum(axis=1) + s.sum(axis=1)) / W
    else:
        stat = (N / W) * (s / sizes).sum(axis=1)
    c2 = float(fixed) ** 2
    return Values(c2 * stat, np.full(stat.shape, 4.0 * c2 * source.kc_max))
