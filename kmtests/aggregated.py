r"""Aggregated kernel tests: several statistics, one permutation null, exact level.

The faces :func:`aggregated_two_sample_test` and :func:`aggregated_independence_test`
build a collection of members — bandwidths, kernel mean estimators, U/V forms,
spectral-regularised statistics over a grid of lambdas — as one
:class:`~kmtests.statistics.Aggregate` statistic, computed on the *same*
permutations and combined with exact level by MMDAgg's weighted min-p or by
MMD-FUSE (:mod:`kmtests.null.combine`, where the calibration is described).

Costs: every batch of permutations is evaluated by all members, and all
members' Gram matrices are held at once (the memory is checked first); the
lambdas of a spectral-regularised grid share one eigendecomposition and one
projection per permutation, so a whole grid costs about one test.
"""

from __future__ import annotations

import dataclasses
import itertools
import numbers
from typing import Any, Iterable, Literal

import numpy as np

from . import _driver
from ._typing import ArrayLike, SeedLike
from ._validation import check_choice, check_positive_int
from .engines import Engine, resolve_engine
from .estimators import KernelMeanEstimator, resolve_estimator
from .kernels import Kernel, resolve_kernel
from .null import PermutationMethod, resolve_method
from .null.combine import Fuse, MinP, fuse_statistic, member_rejections, minp_combination
from .problems import independence_problem, two_sample_problem
from .problems.conventions import check_alternative
from .results import AggregatedIndependenceResult, AggregatedTwoSampleResult
from .statistics import NOCCO, Aggregate, KernelHSIC, KernelMMD, SpectralMMD, Statistic
from .statistics.spectral import FILTERS, lambda_grid
from .statistics.tuning import TUNINGS

__all__ = ["AggregatedIndependenceResult", "AggregatedTwoSampleResult",
           "aggregated_independence_test", "aggregated_two_sample_test", "bandwidth_grid",
           "fuse_statistic", "lambda_grid", "member_rejections", "minp_combination"]

_METHODS = ("mmdagg", "fuse")


# -- collections ------------------------------------------------------------------------------
def bandwidth_grid(z: np.ndarray, count: int = 10) -> np.ndarray:
    """A geometric grid of bandwidths from the pooled (or one variable's) distances.

    From half the 5% quantile to twice the 95% quantile of the non-zero
    pairwise Euclidean distances of `z` (on the seeded, order-invariant
    subsample of :func:`kmtests.kernels.median_bandwidth` above 1000 points): a
    function of the set of points, so the permutation tests stay exact. (MMDAgg
    takes its range from the distances *between* the two observed samples,
    which is not permutation-invariant; MMD-FUSE uses these quantiles with a
    linear grid.)

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.aggregated import bandwidth_grid
    >>> g = bandwidth_grid(np.random.default_rng(0).normal(size=(50, 2)), 5)
    >>> print(np.round(g, 3))
    [0.243 0.553 1.258 2.861 6.506]
    """
    from scipy.spatial.distance import pdist

    from .kernels import MEDIAN_MAX_POINTS, _canonical_subsample

    count = check_positive_int(count, "bandwidths")
    d = pdist(_canonical_subsample(np.asarray(z, dtype=np.float64), MEDIAN_MAX_POINTS))
    d = d[d > 0]
    if d.size == 0:
        raise ValueError("every pair of points ties (constant data): no bandwidth grid can be "
                         "derived; pass explicit `bandwidths`.")
    lo, hi = float(np.quantile(d, 0.05)) / 2.0, float(np.quantile(d, 0.95)) * 2.0
    return np.geomspace(lo, hi, count) if count > 1 else np.array([float(np.median(d))])


def _kernels_for(kernel: Any, bandwidths: Any, data: np.ndarray, name: str,
                 auto_count: int = 10) -> list[Kernel]:
    """The kernels of a collection: one per bandwidth, or the kernel itself."""
    kern = resolve_kernel(kernel, "median", name=f"kernel{name}")
    if not kern.has_bandwidth:
        if not _is_auto(bandwidths):
            raise ValueError(f"`bandwidths{name}` does not apply to the {kern.name} kernel.")
        return [kern]
    if kern.is_fitted:
        return [kern]
    msg = (f"`bandwidths{name}` must be 'auto', a number of bandwidths or distinct positive "
           f"numbers; got {bandwidths!r}.")
    if _is_auto(bandwidths):
        grid = bandwidth_grid(data, auto_count)
    elif isinstance(bandwidths, numbers.Integral) and not isinstance(bandwidths, bool):
        grid = bandwidth_grid(data, int(bandwidths))
    else:
        if isinstance(bandwidths, (str, bool)):
            raise ValueError(msg)
        try:
            grid = np.atleast_1d(np.asarray(bandwidths, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise ValueError(msg) from exc
        if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) \
                or np.any(grid <= 0) or np.unique(grid).size != grid.size:
            raise ValueError(msg)
    from .kernels import _BandwidthKernel

    assert isinstance(kern, _BandwidthKernel)  # has_bandwidth
    return [dataclasses.replace(kern, bandwidth=float(b)) for b in grid]


def _is_auto(value: Any) -> bool:
    """`value` is None or the string "auto" (comparing an array with "auto" is ambiguous)."""
    return value is None or (isinstance(value, str) and value == "auto")


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, KernelMeanEstimator)) or not isinstance(value, Iterable):
        return [value]
    return list(value)


def _options(method: Any, alpha: Any, estimators: Any, statistics: Any, filters: Any,
             lams: Any) -> tuple[str, float, list[KernelMeanEstimator], list[str], list[str]]:
    """The collection's options validated: combination, alpha, estimators, forms, filters."""
    combination = check_choice(method, "method", _METHODS)
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"`alpha` must be a number in (0, 1); got {alpha!r}.")
    if not 0 < float(alpha) < 1:
        raise ValueError(f"`alpha` must be in (0, 1); got {alpha!r}.")
    ests = [resolve_estimator(e) for e in _as_list(estimators)]
    stats = [check_choice(s, "statistics", ("unbiased", "biased")) for s in _as_list(statistics)]
    filts = [check_choice(f, "filters", tuple(FILTERS)) for f in _as_list(filters)]
    if not (ests and stats) and not filts:
        raise ValueError("the collection is empty: give `estimators` and `statistics`, or "
                         "`filters`.")
    if lams is not None and not filts:
        raise ValueError("`lams` configures the regularised members, and there are none: give "
                         "`filters` too (or leave `lams` out).")
    for name, values in (("estimators", [e.name for e in ests]), ("statistics", stats),
                         ("filters", filts)):
        if len(set(values)) != len(values):
            raise ValueError(f"`{name}` must not repeat a value (a repeated member would "
                             f"count twice in the aggregated test); got {values}.")
    return combination, float(alpha), ests, stats, filts


def _null_method(null: Any, n_resamples: Any, batch: Any, rng: Any, n_jobs: Any,
                 progress: Any) -> PermutationMethod:
    if null is None:
        meth = resolve_method("permutation", n_resamples=1999 if n_resamples is None
                              else n_resamples, batch=batch, rng=rng, n_jobs=n_jobs,
                              progress=progress)
    else:
        if not isinstance(null, PermutationMethod):
            raise TypeError("`null` must be a PermutationMethod (aggregated tests are "
                            "calibrated by permutations).")
        meth = resolve_method(null, n_resamples=n_resamples, batch=batch, rng=rng,
                              n_jobs=n_jobs, progress=progress)
    assert isinstance(meth, PermutationMethod)
    return meth


def _combination(name: str, weights: Any, alpha: float, n: int) -> Any:
    if name == "mmdagg":
        return MinP(weights, alpha)
    return Fuse(weights, float(np.sqrt(n * (n - 1))), alpha)


# -- the two-sample collection -------------------------------------------------------------------
def aggregated_two_sample_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    kernel: Any = "gaussian",
    bandwidths: Any = "auto",
    estimators: Any = ("kme",),
    statistics: Any = ("unbiased",),
    filters: Any = None,
    lams: Any = None,
    method: Literal["mmdagg", "fuse"] = "mmdagg",
    weights: Any = "uniform",
    alpha: float = 0.05,
    null: PermutationMethod | None = None,
    n_resamples: int | None = None,
    rng: SeedLike = None,
    batch: int | None = None,
    n_jobs: int | None = None,
    progress: bool | None = None,
    data_name: str | None = None,
    tuning: Literal["permutation", "pooled"] = "permutation",
    engine: str | Engine = "exact",
    n_features: int | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise",
    axis: int = 0,
) -> AggregatedTwoSampleResult:
    r"""Aggregated kernel two-sample test over a collection of MMD statistics.

    The collection is the product of the kernels (one per bandwidth), the
    estimators and the statistic forms, plus the spectral-regularised MMDs of
    every filter in `filters` over the `lams` grid (pooled covariance
    operator; see :func:`kmtests.two_sample_test`). All members are computed on
    the same permutations and combined with exact level (module docs).

    Parameters
    ----------
    x, y : array_like
        The two samples, as for :func:`kmtests.two_sample_test`.
    kernel : str or Kernel
        ``"gaussian"`` (default), ``"laplacian"``, ... A Kernel object with a
        fixed bandwidth is used as it is.
    bandwidths : "auto", int or sequence of float
        ``"auto"``: 10 bandwidths on a geometric grid from the pooled
        distances (:func:`bandwidth_grid`); an int: that many; or the
        bandwidths themselves (distinct: a repeated one would count twice).
        Ignored (and an error if given) for kernels without a bandwidth.
    estimators : str, KernelMeanEstimator or sequence of them
        The kernel mean estimators (default the KME).
    statistics : {"unbiased", "biased"} or a sequence of them
        The statistic forms (default the U-statistic, as in MMDAgg and
        MMD-FUSE: zero mean under the null, which the FUSE soft maximum
        needs).
    filters : str or sequence of str, optional
        Spectral filters (``"tikhonov"``, ``"showalter"``,
        ``"iterated_tikhonov"``, ``"cutoff"``) of regularised members, one per
        filter, kernel and lambda.
    lams : "auto" or sequence of float, optional
        The regularisation parameters of the regularised members (operator
        units, distinct; default ``"auto"``: :func:`lambda_grid`); an error
        without `filters`.
    method : {"mmdagg", "fuse"}
        The combination (module docs).
    weights : {"uniform", "increasing", "decreasing", "centred"} or sequence
        The members' weights (MMDAgg's, in the order of the collection:
        bandwidths vary fastest). For FUSE, the prior weights of the soft
        maximum.
    alpha : float
        The level at which the report says which members reject.
    null : PermutationMethod, optional
        The permutation null (otherwise `n_resamples`, `rng`, `batch`,
        `n_jobs`, `progress` configure it; default 1999 permutations).
    tuning : {"permutation", "pooled"}
        How the estimators' data-driven parameters enter (as in
        :func:`kmtests.two_sample_test`).
    engine : {"exact", "streamed", "auto", "nystrom", "rff"} or Engine
        How every member's statistics are computed (as in
        :func:`kmtests.two_sample_test`; MMD-FUSE and the regularised members
        need ``"exact"``); `n_features` configures the low-rank engines.
    data_name : str, optional
        Name of the data for the report.
    alternative, nan_policy, axis
        As for :func:`kmtests.two_sample_test` (:doc:`/user_guide/conventions`):
        one-sided (``"greater"``, the only value); ``nan_policy="omit"`` leaves
        out each sample's observations with a missing value (for the
        independence test, every pair with one); ``axis=1`` reads one
        observation per column.

    Returns
    -------
    AggregatedTwoSampleResult
        ``statistic`` is the aggregated statistic (MMDAgg: the weighted
        minimum p-value; FUSE: the soft maximum), ``pvalue`` its exact
        permutation p-value, ``members`` one row per member (statistic,
        p-value, weight, and for MMDAgg its threshold and whether it rejects
        at `alpha`).

    References
    ----------
    .. [1] Schrab, Kim, Albert, Laurent, Guedj, Gretton (2023). MMD aggregated
       two-sample test. JMLR 24.
    .. [2] Biggs, Schrab, Gretton (2023). MMD-FUSE: learning and combining
       kernels for two-sample testing without data splitting. NeurIPS.
    .. [3] Hagrass, Sriperumbudur, Li (2024). Spectral regularized kernel
       two-sample tests. Ann. Statist.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import aggregated_two_sample_test
    >>> gen = np.random.default_rng(0)
    >>> x, y = gen.normal(size=(50, 2)), gen.normal(size=(50, 2)) * [1.0, 2.5]
    >>> res = aggregated_two_sample_test(x, y, bandwidths=5, n_resamples=499, rng=1)
    >>> print(f"{res.pvalue:.3f}, {sum(m['rejects'] for m in res.members)} of 5 members reject")
    0.006, 2 of 5 members reject
    >>> print(res.members_frame()[["bandwidth", "pvalue", "rejects"]].round(3))
    ... # doctest: +NORMALIZE_WHITESPACE
                               bandwidth  pvalue  rejects
    member
    gaussian bw=0.307, kme, U      0.307   0.198    False
    gaussian bw=0.737, kme, U      0.737   0.004     True
    gaussian bw=1.77, kme, U       1.770   0.002     True
    gaussian bw=4.25, kme, U       4.255   0.024    False
    gaussian bw=10.2, kme, U      10.225   0.384    False
    """
    meth = _null_method(null, n_resamples, batch, rng, n_jobs, progress)
    combination, alpha, ests, stats, filts = _options(method, alpha, estimators, statistics,
                                                      filters, lams)
    tuning_ = check_choice(tuning, "tuning", TUNINGS)
    check_alternative(alternative)
    problem = two_sample_problem(x, y, data_name=data_name, axis=axis, nan_policy=nan_policy)
    assert problem.z is not None
    kerns = _kernels_for(kernel, bandwidths, problem.z, "")
    members: list[Statistic] = [KernelMMD(kern, est, stat == "unbiased")
                                for est in ests for stat in stats for kern in kerns]
    members += [SpectralMMD(kern, f, "auto" if lams is None else lams)
                for f in filts for kern in kerns]
    nmin = min(problem.n_x, problem.n_y)
    stat = Aggregate(members, _combination(combination, weights, alpha, nmin))
    eng = resolve_engine(engine, {"n_features": n_features}, scheme="split")
    res = _driver.run(problem, stat, eng, meth, tuning_)
    assert isinstance(res, AggregatedTwoSampleResult)
    return res


# -- the independence collection -------------------------------------------------------------------
def aggregated_independence_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    kernel_x: Any = "gaussian",
    kernel_y: Any = "gaussian",
    bandwidths_x: Any = "auto",
    bandwidths_y: Any = "auto",
    estimators: Any = ("kme",),
    statistics: Any = ("unbiased",),
    filters: Any = None,
    lams: Any = None,
    method: Literal["mmdagg", "fuse"] = "mmdagg",
    weights: Any = "uniform",
    alpha: float = 0.05,
    null: PermutationMethod | None = None,
    n_resamples: int | None = None,
    rng: SeedLike = None,
    batch: int | None = None,
    n_jobs: int | None = None,
    progress: bool | None = None,
    data_name: str | None = None,
    tuning: Literal["permutation", "pooled"] = "permutation",
    engine: str | Engine = "exact",
    n_features: int | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise",
    axis: int = 0,
) -> AggregatedIndependenceResult:
    r"""Aggregated kernel independence test (HSICAgg / HSIC-FUSE) over a collection.

    The collection is the product of the bandwidth pairs (``bandwidths_x`` x
    ``bandwidths_y``, default 5 x 5 from each variable's distances), the
    estimators and the statistic forms, plus the regularised (normalised
    cross-covariance) statistics of every filter in `filters` over the `lams`
    grid, with the same lambda for both variables (see
    :func:`kmtests.independence_test`). Combined with exact level as in
    :func:`aggregated_two_sample_test` (HSICAgg: Albert et al., 2022; Schrab
    et al., 2022). For FUSE the normaliser of a member is ``||Kc||_F ||Lc||_F /
    (n (n - 1))``, a function of the marginals only (so that the fused
    statistics of all arrangements are normalised alike).

    Parameters are as in :func:`aggregated_two_sample_test`, per variable
    (``bandwidths_x="auto"``: 5 bandwidths of each variable). Every member
    permutes the same variable (the one the first member chooses, symmetrically
    in x and y), so that the members of an arrangement are computed on the same
    pairing: exact level.

    Returns
    -------
    AggregatedIndependenceResult

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import aggregated_independence_test
    >>> gen = np.random.default_rng(0)
    >>> u = gen.uniform(-np.pi, np.pi, 60)
    >>> v = np.sin(4 * u) + gen.normal(size=60)
    >>> res = aggregated_independence_test(u, v, bandwidths_x=3, bandwidths_y=3,
    ...                                    n_resamples=499, rng=1)
    >>> print(f"{res.pvalue:.3f}")
    0.010
    """
    meth = _null_method(null, n_resamples, batch, rng, n_jobs, progress)
    combination, alpha, ests, stats, filts = _options(method, alpha, estimators, statistics,
                                                      filters, lams)
    tuning_ = check_choice(tuning, "tuning", TUNINGS)
    check_alternative(alternative)
    problem = independence_problem(x, y, data_name=data_name, axis=axis,
                                   nan_policy=nan_policy)
    n = problem.n
    if "unbiased" in stats and n < 5:
        raise ValueError(f"statistic 'unbiased' needs at least 5 observations; got {n}.")
    assert problem.x.data is not None and problem.y.data is not None
    kxs = _kernels_for(kernel_x, bandwidths_x, problem.x.data, "_x", auto_count=5)
    kys = _kernels_for(kernel_y, bandwidths_y, problem.y.data, "_y", auto_count=5)
    members: list[Statistic] = [KernelHSIC(kx, ky, est, stat == "unbiased")
                                for est in ests for stat in stats
                                for kx, ky in itertools.product(kxs, kys)]
    members += [NOCCO(kx, ky, f, "auto" if lams is None else lams)
                for f in filts for kx, ky in itertools.product(kxs, kys)]
    stat_ = Aggregate(members, _combination(combination, weights, alpha, n))
    eng = resolve_engine(engine, {"n_features": n_features}, scheme="pairing")
    res = _driver.run(problem, stat_, eng, meth, tuning_)
    assert isinstance(res, AggregatedIndependenceResult)
    return res
