"""The kernel MMD statistic with a kernel mean estimator (U- or V-form).

``MMD^2_u`` (default for the KME, the uniform shrinkage and the marginalized
estimators) or ``MMD^2_b`` (the squared distance of the estimated embeddings),
on any engine that holds the pooled Gram matrix or its block sums
(:mod:`kmtests.engines`); see :func:`kmtests.two_sample_test`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..engines import Engine, Values
from ..engines.lowrank import lowrank_mmd_general
from ..engines.mmd import mmd_general, mmd_uniform, split_sums, swap_split_sums
from ..estimators import KME, KernelMeanEstimator
from ..estimators._rules import General, Uniform
from ..kernels import Kernel
from ._base import (EstimatorStatistic, Prepared, features_need, gram_need,  # noqa: F401
                    statistic_name)  # (their old paths)
from .forms import KernelForm, MMDForm
from .tuning import prepare_rule, reportable
from .witness import NO_POINTS, MMDWitness

__all__ = ["KernelMMD", "describe_kernel", "features_need", "gram_need", "statistic_name"]

#: why a low-rank test of a re-weighting estimator has no witness function
LOWRANK_WEIGHTS = ("the low-rank engine weighted the points on the approximate kernel, so "
                   "the exact kernel's witness would not be the function that was tested: "
                   "run the test with engine='exact' for its witness")


def describe_kernel(k: Kernel) -> str:
    """A kernel in a member's label: ``gaussian bw=0.737`` (or its name)."""
    bw = getattr(k, "bandwidth", None)
    return f"{k.name} bw={float(bw):.3g}" if isinstance(bw, (float, int)) else k.name


class KernelMMD(EstimatorStatistic):
    """``MMD^2`` between the estimated embeddings of two samples.

    Parameters
    ----------
    kernel : Kernel
        The kernel (its bandwidth may be ``"median"``: fitted on the pooled sample).
    estimator : KernelMeanEstimator
    unbiased : bool
        U-form (within-sample diagonal terms dropped) or V-form.
    """

    name: ClassVar[str] = "mmd"
    registered_as: ClassVar[tuple[str, ...]] = ("unbiased", "biased")
    problem_kind: ClassVar[str] = "two_sample"
    symbols: ClassVar[tuple[str, str]] = ("MMD^2_u", "MMD^2_b")
    family_name: ClassVar[str] = "MMD"
    feature_form: ClassVar[bool] = True
    form_class: ClassVar[type[KernelForm] | None] = MMDForm

    def __init__(self, kernel: Kernel, estimator: KernelMeanEstimator = KME(),
                 unbiased: bool = True) -> None:
        super().__init__(kernel, estimator, unbiased)

    def __repr__(self) -> str:
        return (f"KernelMMD(kernel={self.kernel!r}, estimator={self.estimator!r}, "
                f"unbiased={self.unbiased})")

    def check(self, problem: Any, tuning: str) -> None:
        if problem.precomputed:
            self.estimator.transform_kernel(self.kernel, None)  # marginalized: raises

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        need, what, advice = super().memory(problem, engine, tuning, batch)
        if engine.holds_gram and tuning == "pooled" and not self.estimator.uniform:
            need += 3 * 8.0 * problem.n ** 2  # the uncentred pooled Gram and its eigenvectors
        return need, what, advice

    def columns(self) -> list[tuple[str, dict[str, Any]]]:
        form = "U" if self.unbiased else "V"
        bw = getattr(self.kernel, "bandwidth", None)
        return [(f"{describe_kernel(self.kernel)}, {self.estimator.name}, {form}",
                 {"bandwidth": float(bw) if isinstance(bw, (float, int)) else None,
                  "estimator": self.estimator.name, "form": form, "filter": None,
                  "lam": None})]

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        est, kern = self.estimator, self.kernel
        note, tparams = "", {}  # type: tuple[str, dict[str, Any]]
        evaluated, c = kern, 1.0
        if problem.z is None:
            source = engine.pooled(kern, problem.K)
        else:
            kern = kern.fitted_to(problem.z, name="the pooled sample")
            tk = est.transform_kernel(kern, problem.z)
            evaluated = kern
            if tk is None:
                source = engine.pooled(kern, problem.z, rng=rng)
            else:
                c, infl, tparams = tk
                evaluated = infl
                source = engine.pooled(infl, problem.z, rng=rng, scale=c)
                note = f"marginalized: {c:.4g} x {infl.describe()}"
        cg = source.cg if engine.holds_gram else None
        feats = getattr(source, "f", None) if engine.holds_features else None
        prep = prepare_rule(est, tuning, None if cg is None else cg.full, bool(note),
                            None if feats is None else (lambda: feats.phi + feats.mean))
        rule, n_x, unbiased, n = prep.rule, problem.n_x, self.unbiased, problem.n
        params = {}
        if tparams or prep.params:
            params["pooled"] = reportable({**tparams, **prep.params})

        general = mmd_general if cg is not None else lowrank_mmd_general

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            if isinstance(rule, General):
                return general(source, perms, n_x, rule, n_jobs, unbiased)[0]
            return mmd_uniform(source, split_sums(source, perms, n_x, n_jobs), n_x, rule,
                               unbiased)

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            ident = np.arange(n, dtype=np.int64)[None, :]
            if isinstance(rule, General):
                vals, ps = general(source, ident, n_x, rule, n_jobs, unbiased)
                if prep.tuning == "pooled":  # the parameters are the pooled ones
                    return vals, {}
                return vals, {"x": ps[0]["x"], "y": ps[0]["y"]}
            vals = mmd_uniform(source, split_sums(source, ident, n_x, n_jobs, own=True), n_x,
                               rule, unbiased)
            if rule.fixed is not None or cg is None:
                return vals, {}
            ix, iy = np.arange(n_x), np.arange(n_x, n)
            return vals, {"x": est.weights(cg.block(ix))[1], "y": est.weights(cg.block(iy))[1]}

        def kernel_form() -> KernelForm:
            assert cg is not None
            return MMDForm(unbiased, cg.Kc, n_x=n_x, diag=cg.diag)

        def norms() -> np.ndarray:
            return np.array([fuse_norm_mmd(kern, problem.z, min(n_x, n - n_x))])

        return Prepared(
            values=values, observed=observed, kernels={"kernel": kern},
            what=f"{self.label()} with {kern.phrase()}", tuning=prep.tuning, rule=rule,
            kernel_notes={"kernel": note}, params=params,
            notes=[prep.note] if prep.note else [],
            engine_info=getattr(source, "info", ""), columns=self.columns(),
            kernel_form=kernel_form if cg is not None else None,
            swap_values=_swap_values(source, n_x, rule, unbiased),
            norms=norms if engine.holds_gram and problem.z is not None else None,
            witness=(NO_POINTS if problem.z is None else LOWRANK_WEIGHTS
                     if cg is None and isinstance(rule, General) else
                     MMDWitness(evaluated, problem.z, n_x, rule, c, self.label())))


def _swap_values(source: Any, n_x: int, rule: Any, unbiased: bool) -> Any:
    """The statistic of a batch of pair swaps from the source's sums over the pairs (the
    uniform-weight rules; None for per-sample weights: their arrangements' values)."""
    if not isinstance(rule, Uniform):
        return None

    def swap_values(rows: Any, n_jobs: int | None) -> Values:
        return mmd_uniform(source, swap_split_sums(source, rows, n_jobs), n_x, rule,
                           unbiased)

    return swap_values


def fuse_norm_mmd(kern: Kernel, z: np.ndarray, nmin: int) -> float:
    """MMD-FUSE's normaliser: the Frobenius norm of the pooled Gram matrix with zero
    diagonal, over ``n (n - 1)`` (``n`` the smaller sample), so that ``nu MMD^2_u / N`` is
    the published ``n (n - 1) sqrt(n (n - 1)) MMD^2_u / ||K||_F``; a function of the
    pooled sample, which the permutations leave unchanged."""
    K = kern.gram(z)
    np.fill_diagonal(K, 0.0)
    return float(np.sqrt(np.einsum("ij,ij->", K, K))) / (nmin * (nmin - 1))
