"""``statistic="regularized"`` in the two tests: problems for the driver.

* two-sample: the spectral-regularised MMD (Hagrass, Sriperumbudur & Li, 2024)
  in U-form, the covariance operator estimated on the pooled sample (default:
  permutation-invariant, no split) or on held-out points (the paper's
  ``covariance="split"``);
* independence: the normalised cross-covariance statistic (HSNIC/NOCCO,
  Fukumizu et al., 2008) and its filter family.

A single lambda is one statistic, run by :func:`kmtests._driver.run_test`; a grid
(or ``"auto"``) is the aggregated test over the grid (min-p, exact level;
:mod:`kmtests.aggregated`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _resampling
from ._driver import Prepared, PreparedRule, identity
from ._guards import format_bytes
from .engines import Values
from .estimators import KernelMeanEstimator
from .estimators._rules import Uniform
from .kernels import Kernel
from .null import NullMethod, PermutationMethod
from .results import IndependenceResult, TwoSampleResult

__all__ = ["RegularizedIndependence", "RegularizedTwoSample", "regularized_independence",
           "regularized_two_sample", "split_held_out"]

_NO_GAMMA = ("method='gamma' approximates the null of the biased KME statistic only; use "
             "method='permutation' with statistic='regularized'.")


def split_held_out(n_x: int, n_y: int, s: int, gen: np.random.Generator
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The paper's held-out design: ``s`` random rows of each sample, of which a fair coin
    keeps one of each pair for z (the other is discarded); returns
    ``(z rows of x, z rows of y, remaining rows of x, remaining rows of y)``."""
    hx = gen.choice(n_x, size=s, replace=False)
    hy = gen.choice(n_y, size=s, replace=False)
    coin = gen.random(s) < 0.5
    rest_x = np.setdiff1d(np.arange(n_x), hx)
    rest_y = np.setdiff1d(np.arange(n_y), hy)
    return hx[coin], hy[~coin], rest_x, rest_y


@dataclass
class RegularizedTwoSample:
    """The spectral-regularised MMD test with one lambda (a :class:`Problem`)."""

    kernel: Kernel
    estimator: KernelMeanEstimator
    z: np.ndarray                    # the points permuted (after the split, if any)
    n_x: int
    n_y: int
    filter: str
    lam: float
    held_out: np.ndarray | None = None   # z of the paper (covariance="split")
    fit_on: np.ndarray | None = None     # the data the bandwidth is fitted on
    unbiased: bool = True
    kind: str = "split"
    result_class: type[TwoSampleResult] = TwoSampleResult
    sizes: dict[str, int] = field(default_factory=dict)
    _lam_used: float = 0.0

    def __post_init__(self) -> None:
        self.sizes = {"n_x": self.n_x, "n_y": self.n_y}
        if self.held_out is not None:
            self.sizes["held out"] = int(self.held_out.shape[0])

    @property
    def n(self) -> int:
        return self.n_x + self.n_y

    def statistic_name(self) -> str:
        return f"MMD^2_u[{self.filter}]"

    def memory(self, method: NullMethod, tuning: str) -> tuple[float, str, str]:
        n = self.n
        need = 3 * 8.0 * n * n  # the centred Gram matrix, its eigenvectors, workspace
        if isinstance(method, PermutationMethod):
            need += 16.0 * method.n_resamples + 8.0 * n * 128
        return (need, f"the {n} x {n} pooled Gram matrix and its eigenvectors take "
                f"{format_bytes(16.0 * n * n)}",
                "Test a random subsample of each sample, or use a machine with more memory.")

    def check_gamma(self) -> None:
        raise ValueError(_NO_GAMMA)

    def plan(self, method: PermutationMethod) -> _resampling.PermutationPlan:
        return _resampling.plan_two_sample(self.n_x, self.n_y, method.n_resamples,
                                           method.batch)

    def prepare(self, tuning: str) -> Prepared:
        from .engines.spectral import (filter_function, held_out_spectral, pooled_spectral,
                                       spectral_mmd_values)

        fit_on = self.z if self.fit_on is None else self.fit_on
        kern = self.kernel.fitted_to(fit_on, name="the pooled sample")
        cg = kern.centred_gram(self.z, name="the pooled sample")
        filt = filter_function(self.filter)
        lam = float(self.lam)
        if self.held_out is None:
            sg = pooled_spectral(cg, filt, np.array([lam]))
            params = {"regularization": {"filter": self.filter, "lam": lam,
                                         "covariance": "pooled", "rank": int(sg.F.shape[1])}}
            note = ("regularisation: the spectral filter acts on the centred covariance "
                    "operator of the pooled sample, which the permutations leave unchanged "
                    f"(one eigendecomposition; rank {int(sg.F.shape[1])}); lam is in the units "
                    "of its eigenvalues.")
        else:
            zz = self.held_out
            K_z = kern.gram(zz)
            sg, ev = held_out_spectral(cg, kern.gram(self.z, zz), K_z, filt, np.array([lam]))
            params = {"regularization": {"filter": self.filter, "lam": lam,
                                         "covariance": "split", "rank": int(ev.size)}}
            note = (f"regularisation: the covariance operator is estimated on {zz.shape[0]} "
                    "held-out points (one of each of the split_size pairs drawn from x and "
                    "y, Hagrass et al.), the statistic and its permutations use the other "
                    "points; lam is in the units of the operator's eigenvalues.")
        self._lam_used = lam
        n_x = self.n_x
        prep = PreparedRule(Uniform(fixed=1.0), {}, "pooled", note)

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            v = spectral_mmd_values(sg, perms, n_x, True, n_jobs)
            return Values(v.stat[:, 0], v.scale[:, 0])

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return values(identity(self.n), n_jobs), {}

        def gamma(t: float, moments: str) -> tuple[float, dict[str, Any]]:
            raise ValueError(_NO_GAMMA)

        return Prepared(values=values, observed=observed, gamma=gamma, prep=prep,
                        kernels={"kernel": kern}, params=params,
                        what=f"{self.statistic_name()} with {kern.phrase()}")


@dataclass
class RegularizedIndependence:
    """The normalised cross-covariance test with one lambda (a :class:`Problem`)."""

    kernel_x: Kernel
    kernel_y: Kernel
    x: np.ndarray
    y: np.ndarray
    estimator: KernelMeanEstimator
    filter: str
    lam: float
    unbiased: bool = False
    kind: str = "perm"
    n_x: int = 0
    result_class: type[IndependenceResult] = IndependenceResult
    sizes: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sizes = {"n": self.n}

    @property
    def n(self) -> int:
        return self.x.shape[0]

    def statistic_name(self) -> str:
        return f"NOCCO[{self.filter}]"

    def memory(self, method: NullMethod, tuning: str) -> tuple[float, str, str]:
        n = self.n
        need = 6 * 8.0 * n * n
        if isinstance(method, PermutationMethod):
            need += 16.0 * method.n_resamples + 8.0 * n * 128
        return (need, f"the {n} x {n} normalised operators of the two variables take "
                f"{format_bytes(16.0 * n * n)}",
                "Test a random subsample of the pairs, or use a machine with more memory.")

    def check_gamma(self) -> None:
        raise ValueError(_NO_GAMMA)

    def plan(self, method: PermutationMethod) -> _resampling.PermutationPlan:
        return _resampling.plan_independence(self.n, method.n_resamples, method.batch)

    def prepare(self, tuning: str) -> Prepared:
        from .engines.nocco import nocco_values, normalized_operators

        kx = self.kernel_x.fitted_to(self.x, name="x")
        ky = self.kernel_y.fitted_to(self.y, name="y")
        cgx, cgy = kx.centred_gram(self.x, name="x"), ky.centred_gram(self.y, name="y")
        n = self.n
        lam = float(self.lam)
        ops = normalized_operators(cgx.Kc, cgy.Kc, self.filter, np.array([lam]))

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            v = nocco_values(ops, perms, n_jobs)
            return Values(v.stat[:, 0], v.scale[:, 0])

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return values(identity(n), n_jobs), {}

        def gamma(t: float, moments: str) -> tuple[float, dict[str, Any]]:
            raise ValueError(_NO_GAMMA)

        note = ("regularisation: each variable's centred Gram matrix Kc is normalised as "
                f"R = (Kc/n) g(Kc/n), g the {self.filter} filter (Tikhonov: R = Kc (Kc + n "
                "lam I)^-1), the same lam for both variables, in the units of the "
                "covariance operators' eigenvalues; the permutations leave R unchanged.")
        return Prepared(values=values, observed=observed, gamma=gamma,
                        prep=PreparedRule(Uniform(fixed=1.0), {}, "pooled", note),
                        kernels={"x": kx, "y": ky},
                        params={"regularization": {"filter": self.filter, "lam": lam}},
                        what=(f"{self.statistic_name()} with {kx.phrase()} on x and "
                              f"{ky.phrase()} on y"))


def _scalar_lam(lam: Any) -> float | None:
    """`lam` as one positive number, or None for a grid / "auto"."""
    if isinstance(lam, str):
        if lam.lower() != "auto":
            raise ValueError(f"`lam` must be 'auto', a positive number or a sequence of them; "
                             f"got {lam!r}.")
        return None
    if np.ndim(lam) == 0:
        v = float(lam)
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"`lam` must be a positive finite number; got {lam!r}.")
        return v
    return None


def _check_kme(est: KernelMeanEstimator) -> None:
    if est.name != "kme":
        raise ValueError("statistic='regularized' regularises the covariance operator of the "
                         "empirical kernel mean; use estimator='kme' (the regularisation is "
                         "the filter and lam), or another statistic with "
                         f"{est.name!r}.")


def regularized_two_sample(x: Any, y: Any, kern: Kernel, est: KernelMeanEstimator,
                           meth: NullMethod, filt: str, lam: Any, covariance: str,
                           split_size: Any, data_name: str) -> TwoSampleResult:
    """``two_sample_test(..., statistic="regularized")``."""
    from ._driver import run_test
    from ._validation import as_sample, check_choice, check_positive_int, check_rng
    from .aggregated import aggregated_two_sample_test
    from .engines.spectral import FILTERS

    _check_kme(est)
    filt = check_choice(filt, "filter", tuple(FILTERS))
    covariance = check_choice(covariance, "covariance", ("pooled", "split"))
    if not isinstance(meth, PermutationMethod):
        raise ValueError(_NO_GAMMA)
    xa, ya = as_sample(x, "x"), as_sample(y, "y")
    from ._validation import check_same_dim

    check_same_dim(xa, ya)
    z = np.vstack([xa, ya])
    held = None
    if covariance == "split":
        n_min = min(xa.shape[0], ya.shape[0])
        s = max(3, int(round(0.2 * n_min))) if split_size is None else \
            check_positive_int(split_size, "split_size")
        if s < 3 or n_min - s < 2:
            raise ValueError(f"`split_size` must be at least 3 and leave 2 points in each "
                             f"sample; got {s} with samples of {xa.shape[0]} and "
                             f"{ya.shape[0]}.")
        gen = check_rng(meth.rng)
        split_gen = np.random.default_rng(gen.bit_generator.seed_seq.spawn(1)[0])  # type: ignore[attr-defined]
        zx, zy, rx, ry = split_held_out(xa.shape[0], ya.shape[0], s, split_gen)
        held = np.vstack([xa[zx], ya[zy]])
        xa, ya = xa[rx], ya[ry]
        z = np.vstack([xa, ya])
    fitted = kern.fitted_to(np.vstack([z, held]) if held is not None else z,
                            name="the pooled sample")
    single = _scalar_lam(lam)
    if single is not None:
        problem = RegularizedTwoSample(fitted, est, z, xa.shape[0], ya.shape[0], filt, single,
                                       held_out=held)
        res = run_test(problem, meth, "pooled", data_name)
        assert isinstance(res, TwoSampleResult)
        return res
    return aggregated_two_sample_test(
        xa, ya, kernel=fitted, estimators=(), filters=(filt,), lams=lam, method="mmdagg",
        null=meth, data_name=data_name, _held_out=held)


def regularized_independence(x: Any, y: Any, kx: Kernel, ky: Kernel,
                             est: KernelMeanEstimator, meth: NullMethod, filt: str, lam: Any,
                             data_name: str) -> IndependenceResult:
    """``independence_test(..., statistic="regularized")``."""
    from ._driver import run_test
    from ._validation import as_sample, check_choice
    from .aggregated import aggregated_independence_test
    from .engines.spectral import FILTERS

    _check_kme(est)
    filt = check_choice(filt, "filter", tuple(FILTERS))
    if not isinstance(meth, PermutationMethod):
        raise ValueError(_NO_GAMMA)
    xa, ya = as_sample(x, "x"), as_sample(y, "y")
    if xa.shape[0] != ya.shape[0]:
        raise ValueError("`x` and `y` must have the same number of observations (paired "
                         f"data); got {xa.shape[0]} and {ya.shape[0]}.")
    kx, ky = kx.fitted_to(xa, name="x"), ky.fitted_to(ya, name="y")
    single = _scalar_lam(lam)
    if single is not None:
        problem = RegularizedIndependence(kx, ky, xa, ya, est, filt, single)
        res = run_test(problem, meth, "pooled", data_name)
        assert isinstance(res, IndependenceResult)
        return res
    return aggregated_independence_test(
        xa, ya, kernel_x=kx, kernel_y=ky, estimators=(), filters=(filt,), lams=lam,
        method="mmdagg", null=meth, data_name=data_name)
