"""The members of an aggregated test: collections of bandwidths, estimators, statistic
forms and regularised statistics, built into one :class:`~kmtests.statistics.Aggregate`
statistic, and the plan that runs it (:func:`build`).

The faces :func:`kmtests.aggregated_two_sample_test` and
:func:`kmtests.aggregated_independence_test` are a signature and a docstring; this module
reads their keywords: the collection (``bandwidths``, ``estimators``, ``statistics``,
``filters``, ``lams``), its ``combination`` (MMDAgg's weighted min-p or MMD-FUSE) and
weights; the problem's keywords, engine and null method as every test reads them
(:mod:`kmtests._plan`).
"""

from __future__ import annotations

import dataclasses
import itertools
import numbers
import warnings
from typing import Any, Iterable, Mapping

import numpy as np

from ._plan import Plan
from ._validation import check_choice, check_positive_int, positive_grid
from .engines import resolve_engine
from .estimators import KernelMeanEstimator, resolve_estimator
from .kernels import Kernel, resolve_kernel
from .null import NullMethod, resolve_method
from .null.combine import Fuse, MinP, fuse_statistic, member_rejections, minp_combination
from .problems.conventions import check_alternative
from .statistics import NOCCO, Aggregate, KernelHSIC, KernelMMD, SpectralMMD, Statistic
from .statistics.agginc import distance_grid
from .statistics.spectral import FILTERS, lambda_grid
from .statistics.tuning import TUNINGS

__all__ = ["COMBINATIONS", "bandwidth_grid", "build", "fuse_statistic", "lambda_grid",
           "member_rejections", "minp_combination"]

#: the combinations of the members' p-values or statistics
COMBINATIONS = ("mmdagg", "fuse")
#: the permutations of an aggregated test when none are given
DEFAULT_N_RESAMPLES = 1999


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
    count = check_positive_int(count, "bandwidths")
    return distance_grid(z, count, "pass explicit `bandwidths`")


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
        grid = positive_grid(bandwidths, msg)
    from .kernels import _BandwidthKernel  # noqa: PLC0415 - a private class of kernels

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


def _options(combination: Any, alpha: Any, estimators: Any, statistics: Any, filters: Any,
             lams: Any) -> tuple[str, float, list[KernelMeanEstimator], list[str], list[str]]:
    """The collection's options validated: combination, alpha, estimators, forms, filters."""
    combination = check_choice(combination, "combination", COMBINATIONS)
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


def _combination(name: str, weights: Any, alpha: float, n: int) -> Any:
    if name == "mmdagg":
        return MinP(weights, alpha)
    return Fuse(weights, float(np.sqrt(n * (n - 1))), alpha)


def _combination_and_method(kw: Mapping[str, Any]) -> tuple[str, Any]:
    """``combination=``, and ``method=`` as the null method; ``method="mmdagg" | "fuse"`` is
    the combination's old name (deprecated), ``null=`` the method object's."""
    combination, method, null = kw.get("combination"), kw.get("method"), kw.get("null")
    if isinstance(method, str) and method.lower() in COMBINATIONS:
        warnings.warn("method='mmdagg' / 'fuse' names the combination: use combination= "
                      "(method= is the null method, as in every test).", FutureWarning,
                      stacklevel=4)
        if combination is not None and combination != method:
            raise ValueError(f"give the combination once: combination={combination!r} and "
                             f"method={method!r}.")
        combination, method = method, None
    if null is not None:
        if method is not None:
            raise ValueError("give the null method once: `method` or `null`.")
        if not isinstance(null, NullMethod):
            raise TypeError("`null` must be a null method object (kmtests.null); got "
                            f"{type(null).__name__}.")
        method = null
    return ("mmdagg" if combination is None else combination), method


def _kernels(kind: str, kw: Mapping[str, Any], problem: Any) -> list[tuple[Kernel, ...]]:
    """The members' kernels: one per bandwidth, or per pair of bandwidths (x, y)."""
    if kind == "two_sample":
        assert problem.z is not None
        return [(k,) for k in _kernels_for(kw["kernel"], kw["bandwidths"], problem.z, "")]
    assert problem.x.data is not None and problem.y.data is not None
    kxs = _kernels_for(kw["kernel_x"], kw["bandwidths_x"], problem.x.data, "_x", auto_count=5)
    kys = _kernels_for(kw["kernel_y"], kw["bandwidths_y"], problem.y.data, "_y", auto_count=5)
    return list(itertools.product(kxs, kys))


def build(problem_cls: Any, data: tuple[Any, ...], kw: Mapping[str, Any]) -> Plan:
    """The plan of an aggregated test of `problem_cls` (two samples or two variables)."""
    kind = problem_cls.kind
    combination, method = _combination_and_method(kw)
    meth = resolve_method(method, n_resamples=(DEFAULT_N_RESAMPLES if kw["n_resamples"] is None
                                               and not isinstance(method, NullMethod)
                                               else kw["n_resamples"]),
                          batch=kw["batch"], rng=kw["rng"], n_jobs=kw["n_jobs"],
                          progress=kw["progress"], problem=problem_cls)
    combination, alpha, ests, stats, filts = _options(combination, kw["alpha"],
                                                      kw["estimators"], kw["statistics"],
                                                      kw["filters"], kw["lams"])
    tuning = check_choice(kw["tuning"], "tuning", TUNINGS)
    check_alternative(kw["alternative"])
    problem = problem_cls.from_data(data, {"kernel": None, "x": None, "y": None},
                                    data_name=kw["data_name"], axis=kw["axis"],
                                    nan_policy=kw["nan_policy"])
    n = min(problem.n_x, problem.n_y) if kind == "two_sample" else problem.n
    if kind == "independence" and "unbiased" in stats and n < 5:
        raise ValueError(f"statistic 'unbiased' needs at least 5 observations; got {n}.")
    kernels = _kernels(kind, kw, problem)
    lams = "auto" if kw["lams"] is None else kw["lams"]
    if kind == "two_sample":
        members: list[Statistic] = [KernelMMD(k, est, form == "unbiased") for est in ests
                                    for form in stats for (k,) in kernels]
        members += [SpectralMMD(k, f, lams) for f in filts for (k,) in kernels]
    else:
        members = [KernelHSIC(kx, ky, est, form == "unbiased") for est in ests
                   for form in stats for kx, ky in kernels]
        members += [NOCCO(kx, ky, f, lams) for f in filts for kx, ky in kernels]
    stat = Aggregate(members, _combination(combination, kw["weights"], alpha, n))
    eng = resolve_engine(kw["engine"], {"n_features": kw["n_features"]},
                         scheme=problem_cls.engine_scheme)
    return Plan(problem, stat, eng, meth, tuning)
