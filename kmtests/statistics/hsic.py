"""The kernel HSIC statistic with a kernel mean estimator (V- or U-form).

``HSIC_b = tr(Kc Lc) / n^2`` for the KME (default), the unbiased ``HSIC_u``, or
for a weight estimator the embedding of the centred cross-covariance
``beta'(Kc o Lc_p)beta``; see :func:`kmtests.independence_test`. The pairing is
permuted on one variable chosen from the data (or fixed by `orientation`, so
that the members of an aggregated test all permute the same one).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..engines import Engine, Values
from ..engines.exact import Exact
from ..engines.hsic import hsic_general, hsic_uniform
from ..estimators import KME, KernelMeanEstimator
from ..estimators._rules import General
from ..kernels import Kernel
from ._base import EstimatorStatistic, Prepared
from .forms import HSICForm, KernelForm
from .mmd import describe_kernel
from .tuning import prepare_rule, reportable, symmetric_cose_gram
from .witness import NO_POINTS, HSICWitness

__all__ = ["KernelHSIC"]


class KernelHSIC(EstimatorStatistic):
    """HSIC of paired variables with a kernel mean estimator.

    Parameters
    ----------
    kernel_x, kernel_y : Kernel
        The kernels (bandwidths may be ``"median"``: fitted on each variable).
    estimator : KernelMeanEstimator
    unbiased : bool
    orientation : bool or None
        Which variable the permutations act on (False: `y`, True: `x`); None
        chooses it from the centred Gram matrices (argument-order free).
    """

    name: ClassVar[str] = "hsic"
    registered_as: ClassVar[tuple[str, ...]] = ("unbiased", "biased")
    problem_kind: ClassVar[str] = "independence"
    roles: ClassVar[tuple[str, ...]] = ("x", "y")
    symbols: ClassVar[tuple[str, str]] = ("HSIC_u", "HSIC_b")
    scheme: ClassVar[str] = "pairing"
    family_name: ClassVar[str] = "HSIC"
    form_class: ClassVar[type[KernelForm] | None] = HSICForm

    def __init__(self, kernel_x: Kernel, kernel_y: Kernel,
                 estimator: KernelMeanEstimator = KME(), unbiased: bool = False,
                 orientation: bool | None = None) -> None:
        self.kernel_x, self.kernel_y = kernel_x, kernel_y
        self.estimator = estimator
        self.unbiased = unbiased
        self.orientation = orientation
        estimator.rule()  # raises for estimators that cannot run inside a test

    def __repr__(self) -> str:
        return (f"KernelHSIC(kernel_x={self.kernel_x!r}, kernel_y={self.kernel_y!r}, "
                f"estimator={self.estimator!r}, unbiased={self.unbiased})")

    def check(self, problem: Any, tuning: str) -> None:
        if self.unbiased and problem.n < 5:
            raise ValueError(f"statistic='unbiased' needs at least 5 observations; got "
                             f"{problem.n}.")
        for v, k, role in ((problem.x, self.kernel_x, "x"), (problem.y, self.kernel_y, "y")):
            if v.data is None:
                try:
                    self.estimator.transform_kernel(k, None)
                except ValueError as exc:
                    raise ValueError(str(exc).replace("kernel='precomputed'",
                                                      f"kernel_{role}='precomputed'")) from None

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        need, what, advice = super().memory(problem, engine, tuning, batch)
        if engine.holds_gram and not self.estimator.uniform:
            need += Exact.per_thread_bytes(problem.n)  # per-thread cross Gram + weights
        return need, what, advice

    def columns(self) -> list[tuple[str, dict[str, Any]]]:
        form = "U" if self.unbiased else "V"
        kx, ky = self.kernel_x, self.kernel_y

        def bw(k: Kernel) -> float | None:
            b = getattr(k, "bandwidth", None)
            return float(b) if isinstance(b, (float, int)) else None

        return [(f"x: {describe_kernel(kx)}, y: {describe_kernel(ky)}, "
                 f"{self.estimator.name}, {form}",
                 {"bandwidth_x": bw(kx), "bandwidth_y": bw(ky),
                  "estimator": self.estimator.name, "form": form, "filter": None,
                  "lam": None})]

    def _variable(self, v: Any, kernel: Kernel, role: str
                  ) -> tuple[Kernel, Kernel, np.ndarray, float, str, dict[str, Any]]:
        """(kernel reported, kernel evaluated, data, scale, note, params) of a variable."""
        if v.data is None:
            return kernel, kernel, v.K, 1.0, "", {}
        kern = kernel.fitted_to(v.data, name=role)
        tk = self.estimator.transform_kernel(kern, v.data)  # tuned on this variable: invariant
        if tk is None:
            return kern, kern, v.data, 1.0, "", {}
        c, infl, params = tk
        return kern, infl, v.data, c, f"marginalized: {c:.4g} x {infl.describe()}", params

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        est = self.estimator
        kx, ex, x, cx, note_x, px = self._variable(problem.x, self.kernel_x, "x")
        ky, ey, y, cy, note_y, py = self._variable(problem.y, self.kernel_y, "y")
        source = engine.paired(ex, x, ey, y, rng=rng, scales=(cx, cy),
                               orientation=self.orientation)
        gram = engine.holds_gram
        prep = prepare_rule(est, tuning,
                            (lambda: symmetric_cose_gram(source.Kc, source.Lc)) if gram
                            else None, bool(note_x or note_y))
        rule, unbiased, n = prep.rule, self.unbiased, problem.n
        params = {role: reportable(p) for role, p in (("x", px), ("y", py)) if p}
        if prep.params:
            params["pooled"] = reportable(prep.params)

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            if isinstance(rule, General):
                return hsic_general(source, perms, rule, n_jobs, unbiased)[0]
            S, D = source.pair_sums(perms, n_jobs)
            return hsic_uniform(S, D, n, source.trK, source.trL, source.scale, rule, unbiased)

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            ident = np.arange(n, dtype=np.int64)[None, :]
            if isinstance(rule, General):
                vals, ps = hsic_general(source, ident, rule, n_jobs, unbiased)
                return vals, ({} if prep.tuning == "pooled" else {"observed": ps[0]})
            vals = values(ident, n_jobs)
            if rule.fixed is not None or not gram:
                return vals, {}
            return vals, {"observed": est.weights(source.Kc * source.Lc)[1]}

        def kernel_form() -> KernelForm:
            return HSICForm(unbiased, source.Kc, source.Lc)

        def norms() -> np.ndarray:
            # ||Kc||_F ||Lc||_F / (n (n - 1)): a function of the marginals only, so the
            # fused statistic of every arrangement is normalised alike (exact level)
            return np.array([source.norm() / (n * (n - 1))])

        return Prepared(
            values=values, observed=observed, kernels={"x": kx, "y": ky},
            what=f"{self.label()} with {kx.phrase()} on x and {ky.phrase()} on y",
            tuning=prep.tuning, rule=rule, kernel_notes={"x": note_x, "y": note_y},
            params=params, notes=[prep.note] if prep.note else [],
            engine_info=getattr(source, "info", ""), columns=self.columns(),
            kernel_form=kernel_form if gram else None, norms=norms,
            details={"orientation": bool(source.swapped)},
            witness=(NO_POINTS if problem.x.data is None or problem.y.data is None else
                     HSICWitness(ex, ey, x, y, rule, (cx, cy), self.label())))
