r"""Time series: drift between two windows of one series, and cross-dependence at lags.

* :func:`drift_test` — did the distribution change between two windows of one
  series? The kernel two-sample test of the windows with block permutations of
  a data-driven length (``blocks="auto"``), or the wild bootstrap with AR(1)
  multipliers of a data-driven length (``method="wild"``); on long memory or near a
  unit root (an ARFIMA(1, d, 0) model fitted first, ``memory="auto"``) the
  self-normalised kernel drift test against rearrangements by the model's simulated
  paths (:mod:`kmtests._longmemory`).
* :func:`cross_dependence_test` — are two series independent? The HSIC of
  ``x_t`` and ``y_{t-j}`` at the lags ``j = 0, ..., max_lag``, combined into one
  p-value: their sum weighted by ``(n - j) / n`` (``combine="sum"``, the
  statistic of hyppo's ``DcorrX`` with HSIC for the distance correlation), or the
  smallest of the per-lag p-values calibrated jointly (``combine="max"``, MinP);
  the null permutes blocks of ``y`` against ``x`` (the same arrangement for every
  lag), with the block length of ``blocks="auto"``.
* :func:`optimal_block_length` — the Politis & White (2004) block lengths,
  corrected by Patton, Politis & White (2009) (the numbers of
  ``arch.bootstrap.optimal_block_length``, without importing arch).

The automatic lengths are the largest Politis-White length over the data's
columns and the first principal components of the Gaussian kernel's features
(:mod:`kmtests._serial`); their level is measured in
``benchmarks/dependent_level.py`` (``benchmarks/README.md``).

Examples
--------
>>> import numpy as np
>>> from kmtests.timeseries import cross_dependence_test, drift_test
>>> gen = np.random.default_rng(0)
>>> e = gen.normal(size=(400, 2))
>>> x, y = np.zeros(400), np.zeros(400)
>>> for t in range(2, 400):   # x follows y two steps later, nonlinearly
...     y[t] = 0.7 * y[t - 1] + e[t, 1]
...     x[t] = 0.5 * x[t - 1] + np.sin(2 * y[t - 2]) + 0.5 * e[t, 0]
>>> res = cross_dependence_test(x, y, max_lag=3, n_resamples=199, rng=1)
>>> print(f"p = {res.pvalue:.3f}; strongest at lag {res.lag}; blocks of {res.block_length}")
p = 0.005; strongest at lag 2; blocks of 34
>>> print(f"{drift_test(x, n_resamples=199, rng=1).pvalue:.2f}")   # no drift in x
0.68
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from . import _plan
from ._docs import shared_docs
from ._serial import politis_white_columns
from ._typing import ArrayLike, SeedLike
from ._validation import as_sample, check_positive_int
from .problems.lagged import CrossDependenceProblem
from .results.drift import SelfNormalizedDriftResult
from .results.lagged import CrossDependenceResult
from .twosample import two_sample_test

__all__ = ["CrossDependenceResult", "SelfNormalizedDriftResult", "cross_dependence_test",
           "drift_test", "optimal_block_length"]


def optimal_block_length(x: ArrayLike) -> np.ndarray:
    """The Politis-White optimal block lengths of each column of `x`.

    Parameters
    ----------
    x : array_like, shape (n,) or (n, d)
        The series (rows in time order; at least 8).

    Returns
    -------
    ndarray, shape (d, 2)
        Per column, the stationary-bootstrap and the circular-block-bootstrap
        lengths (as ``arch.bootstrap.optimal_block_length``'s columns
        ``stationary`` and ``circular``).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.timeseries import optimal_block_length
    >>> print(optimal_block_length(np.sin(np.arange(200) / 5.0)).round(1))
    [[43. 43.]]
    """
    a = as_sample(x, "x")
    sb, cb = politis_white_columns(a)
    return np.column_stack([sb, cb])


def drift_test(series: Any, split: int | None = None, *, blocks: Any = "auto",
               memory: Literal["auto", "short", "long"] = "auto", **kwargs: Any) -> Any:
    """Kernel two-sample test between two windows of one series (drift detection).

    Parameters
    ----------
    series : array_like, shape (n,) or (n, d), or a pandas Series/DataFrame
        The observations in time order.
    split : int, optional
        The first window is ``series[:split]``, the second ``series[split:]``
        (default ``n // 2``).
    blocks : "auto" or int, optional
        The block length of the block permutations, or ``"auto"`` (default: the
        Politis-White rule on the windows' columns and kernel features, each window
        centred on its own mean). With ``method="wild"`` the AR(1) multipliers
        take the automatic length (or `blocks`, if a number).
    memory : {"auto", "short", "long"}, optional
        Which null keeps the level. ``"short"``: the kernel two-sample test of the
        windows with `blocks` (and the other options). ``"long"``: the self-normalised
        kernel drift test (:mod:`kmtests._longmemory`): the windows' mean difference of
        the data and kernel feature series over its self-normalising matrix, against
        rearrangements of the series by the ranks of simulated paths of an
        ARFIMA(1, d, 0) model fitted by Whittle within the windows; it takes
        `n_resamples`, `rng` and `data_name` only. ``"auto"`` (default, with
        ``blocks="auto"``): fits the model and takes ``"long"`` where block
        permutations do not keep the level, long memory (fitted ``d > 0.15`` with
        ``phi < 0.3``) or a root near one (fewer than 22 effective observations,
        ``n (1 - phi) / (1 + phi) < 22``, with ``d > -0.2``: phi above 0.80 at n = 200,
        0.92 at n = 500), else ``"short"``; with a given block length it is
        ``"short"``.
    **kwargs
        The other options of :func:`kmtests.two_sample_test` (``method``,
        ``kernel``, ``n_resamples``, ``rng``, ...).

    Returns
    -------
    TwoSampleResult or SelfNormalizedDriftResult
        The second when the self-normalised test ran (its `reason` says why).

    Raises
    ------
    ValueError
        With ``memory="auto"``, when the series calls for the self-normalised test and
        options it does not take were given (``method``, ``estimator``, ``kernel`` ...):
        leave them out, or pass ``memory="short"`` to run the block test anyway.

    Notes
    -----
    Two windows of ARFIMA(0, 0.3, 0) series with ``memory="short"`` (block permutations
    of the automatic length) rejected 31, 47 and 50 of 300 at 5% at n = 200, 500 and
    2000; with ``memory="auto"`` 21, 22 and 11 (``benchmarks/README.md``,
    ``drift_test(memory="auto")``).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.timeseries import drift_test
    >>> gen = np.random.default_rng(3)
    >>> s = np.convolve(gen.normal(size=600), np.ones(5) / 5, mode="valid")
    >>> s[300:] += 0.5                                  # a shift half way
    >>> res = drift_test(s, 300, n_resamples=199, rng=1)
    >>> print(f"p = {res.pvalue:.3f}")
    p = 0.005
    """
    n = len(series)
    cut = n // 2 if split is None else check_positive_int(split, "split")
    if not 2 <= cut <= n - 2:
        raise ValueError(f"`split` must leave at least 2 observations in each window of "
                         f"the {n}; got {cut}.")
    if memory not in _MEMORY:
        raise ValueError(f"`memory` must be one of {_MEMORY}; got {memory!r}.")
    kwargs.setdefault("data_name", f"rows 0-{cut - 1} and {cut}-{n - 1} of the series")
    if memory == "long":
        z, ranking, fit = _arfima_of(np.asarray(series, dtype=np.float64), cut)
        return _selfnormalized_drift(z, cut, ranking, fit, "asked for (memory='long')",
                                     kwargs)
    if memory == "auto" and isinstance(blocks, str) and blocks.lower() == "auto":
        from . import _longmemory as lm

        fitted = _arfima_if_fits(series, cut)
        if fitted is not None and lm.is_long_memory(fitted[2], n):
            z, ranking, fit = fitted
            why = (("a root near one" if lm.near_unit_root(fit, n) else "long memory")
                   + f" ({fit}), where block permutations do not keep the level "
                   "(memory='auto')")
            return _selfnormalized_drift(z, cut, ranking, fit, why, kwargs)
    if hasattr(series, "iloc"):
        first, second = series.iloc[:cut], series.iloc[cut:]
    else:
        arr = np.asarray(series)
        first, second = arr[:cut], arr[cut:]
    return two_sample_test(first, second, blocks=blocks, **kwargs)


_MEMORY = ("auto", "short", "long")

#: the options of the self-normalised drift test
_SN_OPTIONS = frozenset({"n_resamples", "rng", "data_name"})

#: the fewest observations of a window for the self-normalised test (its matrix has up
#: to 8 feature series; the Whittle fit at least 9 frequencies per window)
_SN_MIN_WINDOW = 20


def _arfima_of(values: np.ndarray, cut: int) -> tuple[np.ndarray, np.ndarray, Any]:
    """The series' rows (2-d, finite), their ranking series (the first column of the
    windows' feature series: the data's first principal component, centred within the
    windows) and the ARFIMA(1, d, 0) fitted to it (:mod:`kmtests._longmemory`)."""
    from ._longmemory import whittle_arfima
    from ._serial import feature_series

    z = values[:, None] if values.ndim == 1 else values
    if z.ndim != 2 or not np.all(np.isfinite(z)):
        raise ValueError("the self-normalised drift test needs a finite series of shape "
                         f"(n,) or (n, d); got shape {values.shape}"
                         + ("" if np.all(np.isfinite(z)) else " with missing values") + ".")
    n = z.shape[0]
    if min(cut, n - cut) < _SN_MIN_WINDOW:
        raise ValueError(f"the self-normalised drift test needs at least {_SN_MIN_WINDOW} "
                         f"observations in each window; got {cut} and {n - cut}.")
    ranking = feature_series(z, (cut, n - cut))[:, 0]
    return z, ranking, whittle_arfima(ranking, (cut, n - cut))


def _arfima_if_fits(series: Any, cut: int) -> tuple[np.ndarray, np.ndarray, Any] | None:
    """:func:`_arfima_of` for ``memory="auto"``, or None where the self-normalised test
    does not apply and the block test decides alone: windows shorter than 20, values that
    are not finite numbers (the two-sample test's `nan_policy` decides), a series constant
    within its windows."""
    try:
        values = np.asarray(series, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    n = values.shape[0]
    if values.ndim > 2 or min(cut, n - cut) < _SN_MIN_WINDOW or not np.all(
            np.isfinite(values)):
        return None
    try:
        return _arfima_of(values, cut)
    except ValueError:      # constant within its windows
        return None


def _selfnormalized_drift(z: np.ndarray, cut: int, ranking: np.ndarray, fit: Any, why: str,
                          kwargs: dict[str, Any]) -> Any:
    """The self-normalised drift test of the windows ``z[:cut]`` and ``z[cut:]``: the
    statistic of the feature series, against the rearrangements by the ranks of `fit`'s
    simulated paths, the observations ordered by `ranking` (whose Gaussian copula the
    rearrangements keep)."""
    from . import _longmemory as lm
    from ._rng import generator, seed_of
    from ._serial import feature_series
    from .null.permutation import DEFAULT_N_RESAMPLES, pvalue_upper, tie_tolerance

    other = sorted(set(kwargs) - _SN_OPTIONS)
    if other:
        raise ValueError(
            f"{why}; the self-normalised drift test that keeps it takes `n_resamples`, "
            f"`rng` and `data_name` only, not {', '.join(f'`{o}`' for o in other)}: leave "
            "them out, or pass memory='short' to run the kernel two-sample test with "
            "blocks anyway.")
    b = kwargs.get("n_resamples")
    b = DEFAULT_N_RESAMPLES if b is None else check_positive_int(b, "n_resamples")
    rng = kwargs.get("rng")
    gen = generator(rng)
    n = z.shape[0]
    feats = feature_series(z)
    order = np.argsort(ranking, kind="stable")
    observed = float(lm.selfnormalized(feats, cut)[0])
    null = np.empty(b)
    step = max(1, min(b, 2**22 // (n * feats.shape[1])))
    for lo in range(0, b, step):
        rows = lm.model_arrangements(order, fit, gen, min(step, b - lo))
        null[lo:lo + rows.shape[0]] = lm.selfnormalized(feats[rows], cut)
    pvalue, count = pvalue_upper(observed, null, False, tie_tolerance(observed, null))
    return SelfNormalizedDriftResult(
        observed, pvalue, null, b, count, fit.phi, fit.d, int(feats.shape[1]),
        {"n_x": cut, "n_y": n - cut}, seed_of(rng), kwargs["data_name"], why)


@_plan.face(CrossDependenceProblem)
@shared_docs
def cross_dependence_test(x: ArrayLike, y: ArrayLike, *, max_lag: int = 5,
                          combine: Literal["sum", "max"] = "sum", kernel_x: Any = "gaussian",
                          kernel_y: Any = "gaussian", bandwidth_x: Any = "median",
                          bandwidth_y: Any = "median", blocks: Any = "auto",
                          n_resamples: int = 999, rng: SeedLike = None,
                          batch: int | None = None, n_jobs: int | None = None,
                          progress: bool | None = None, data_name: str | None = None,
                          alternative: Literal["greater"] = "greater",
                          nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0
                          ) -> CrossDependenceResult:
    r"""Are two series independent? HSIC at lags ``0..max_lag``, one p-value.

    The statistic at lag ``j`` is ``HSIC_b`` of the pairs ``(x_t, y_{t - j})``,
    ``t = j, ..., n - 1`` (the Gram matrices of the whole series, restricted and
    centred). ``combine="sum"`` adds them with the weights ``(n - j) / n`` (hyppo's
    ``DcorrX`` statistic with HSIC); ``combine="max"`` takes the smallest per-lag
    p-value and calibrates it on the same arrangements (MinP: a max-type test that
    also says at which lag). The null permutes the blocks of ``y`` against ``x``
    (one arrangement for all lags); the p-value is ``(1 + #{T_b >= T}) / (1 + B)``,
    approximate as block permutations are (valid when the dependence is shorter
    than the blocks).

    Parameters
    ----------
    x, y : array_like, shape (n,) or (n, d)
        The two series, rows in time order (paired: row ``t`` of each at time ``t``).
    max_lag : int, optional
        The largest lag of ``y`` behind ``x`` (default 5); ``max_lag=0`` is the
        independence test of the pairs with block permutations.
    combine : {"sum", "max"}, optional
        How the lags are combined (see above).
    kernel_x, kernel_y, bandwidth_x, bandwidth_y
        As for :func:`kmtests.independence_test` (bandwidths of the whole series).
    blocks : "auto" or int, optional
        The block length, or ``"auto"`` (default; the Politis-White rule of
        ``blocks="auto"``, the largest over both series).
    n_resamples : int, optional
        Number of block permutations (default 999; all orders of the blocks when they
        are not more, and the p-value is then exact for the blocks).
    rng, batch, n_jobs, progress, data_name
        As for :func:`kmtests.independence_test`: a fixed `rng` gives the same p-value
        whatever `batch` and `n_jobs` are.
    {{conventions}}

    Returns
    -------
    CrossDependenceResult
        An aggregated result whose members are the lags (``members_frame()``), with
        ``statistics``, ``pvalues`` (per lag), ``lag`` (the smallest per-lag p-value),
        ``block_length`` and ``rule``.

    Notes
    -----
    Cost: ``(max_lag + 1) n^2`` per permutation, and ``(max_lag + 1)`` centred
    ``n x n`` matrices in memory. Measured level: ``benchmarks/README.md``.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.timeseries import cross_dependence_test
    >>> gen = np.random.default_rng(0)
    >>> x, y = gen.normal(size=200), gen.normal(size=200)
    >>> res = cross_dependence_test(x, y, max_lag=2, n_resamples=99, rng=0)
    >>> print(f"{res.pvalue:.2f}, block length {res.block_length}")
    0.85, block length 6
    """
    return _plan.run((x, y), locals())
