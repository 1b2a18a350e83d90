r"""Aggregated tests of incomplete U-statistics (MMDAggInc, HSICAggInc): the faces.

:func:`mmdagginc_test` and :func:`hsicagginc_test` are a signature and a docstring
each: the plan (:mod:`kmtests._plan`) builds the statistic of
:mod:`kmtests.statistics.agginc` (the design, the members, the swaps that draw the null)
and runs it with the wild bootstrap's Rademacher multipliers, combined over the
bandwidths by MMDAgg's min-p with exact level. The same statistics are
``two_sample_test(x, y, statistic="mmdagginc")`` and
``independence_test(x, y, statistic="hsicagginc")`` with their default collection and
design; these faces also take `diagonals`, `levels`, `grid` and `weights`.
"""

from __future__ import annotations

from typing import Any, Literal

from . import _plan
from ._docs import shared_docs
from ._typing import ArrayLike, SeedLike
from .null import NullMethod
from .problems import IndependenceProblem, TwoSampleProblem
from .results import IndependenceResult, TwoSampleResult

__all__ = ["hsicagginc_test", "mmdagginc_test"]


@_plan.face(TwoSampleProblem)
@shared_docs
def mmdagginc_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    kernel: Any = "gaussian",
    bandwidth: Any = "median",
    statistic: Literal["mmdagginc"] = "mmdagginc",
    diagonals: int | None = None,
    levels: tuple[int, int] | None = None,
    grid: Any = None,
    weights: Any = None,
    method: Literal["wild"] | NullMethod | None = None,
    n_resamples: int | None = 999, rng: SeedLike = None, batch: int | None = None,
    n_jobs: int | None = None, progress: bool | None = None,
    engine: Literal["exact"] = "exact",
    data_name: str | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0,
) -> TwoSampleResult:
    r"""MMDAggInc: the aggregated two-sample test of incomplete U-statistics.

    Schrab, Kim, Guedj & Gretton (2022): every member's ``MMD^2`` is the mean of
    ``h(i, j) = k(x_i, x_j) + k(y_i, y_j) - k(x_i, y_j) - k(x_j, y_i)`` over the pairs
    ``(i, i + r)``, ``r = 1..R`` (time linear in the sample size), its null drawn by
    Rademacher swaps of ``x_i`` and ``y_i`` (exact level), the members combined by
    MMDAgg's weighted min-p (:mod:`kmtests.statistics.agginc`).

    Parameters
    ----------
    x, y : array_like
        The two samples; the first ``N = min(n_x, n_y)`` points of each are paired (the
        report says how many of the larger sample are left out).
    kernel : str or Kernel
        A kernel with one bandwidth (``"gaussian"``, ``"laplacian"``, ``"imq"``, ...).
    bandwidth : "median" or float
        The reference ``h`` of the collection ``2^l h`` (the median heuristic on the
        pooled pairs by default).
    statistic : {"mmdagginc"}
        The statistic (the only one of this face).
    diagonals : int, optional
        ``R``, the superdiagonals of the design (default 200, the paper's; ``R >= N - 1``:
        the complete U-statistic). The cost is linear in ``R``.
    levels : (int, int), optional
        The collection ``2^l h`` for ``l`` from ``levels[0]`` to ``levels[1]``. Default:
        10 bandwidths from the pooled distances (with the median heuristic), or
        ``(-2, 2)`` around a `bandwidth` given.
    grid : sequence of float, optional
        The collection itself (the kernel's bandwidths).
    weights : {"uniform", "increasing", "decreasing", "centred"} or sequence, optional
        MMDAgg's weights of the members (default uniform).
    method : {"wild"} or WildBootstrap, optional
        The null: Rademacher multipliers, which are swaps here; `n_resamples` draws
        (default 999: the authors draw ``B1 + B2 = 1000``), `rng`, `batch`, `n_jobs`
        (threads over blocks of draws) and `progress` as in every resampling test.
    engine : {"exact"}
        The kernel is evaluated on the design's pairs (no Gram matrix is formed).
    data_name : str, optional
        Name of the data for the report.
    {{conventions}}

    Returns
    -------
    TwoSampleResult
        ``statistic`` the weighted minimum of the members' p-values, ``pvalue`` its
        p-value, ``members`` one row per bandwidth.

    References
    ----------
    .. [1] Schrab, Kim, Guedj, Gretton (2022). Efficient aggregated kernel tests using
       incomplete U-statistics. NeurIPS.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import mmdagginc_test
    >>> gen = np.random.default_rng(0)
    >>> x, y = gen.normal(size=(500, 2)), gen.normal(size=(500, 2)) * [1.0, 1.5]
    >>> res = mmdagginc_test(x, y, n_resamples=499, rng=1)
    >>> print(f"{res.pvalue:.3f}, {len(res.members)} members")
    0.002, 10 members
    """
    return _plan.run((x, y), locals())


@_plan.face(IndependenceProblem)
@shared_docs
def hsicagginc_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    kernel_x: Any = "gaussian",
    kernel_y: Any = "gaussian",
    bandwidth_x: Any = "median",
    bandwidth_y: Any = "median",
    statistic: Literal["hsicagginc"] = "hsicagginc",
    diagonals: int | None = None,
    levels: tuple[int, int] | None = None,
    grid: Any = None,
    weights: Any = None,
    method: Literal["wild"] | NullMethod | None = None,
    n_resamples: int | None = 999, rng: SeedLike = None, batch: int | None = None,
    n_jobs: int | None = None, progress: bool | None = None,
    engine: Literal["exact"] = "exact",
    data_name: str | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0,
) -> IndependenceResult:
    r"""HSICAggInc: the aggregated independence test of incomplete U-statistics.

    Schrab, Kim, Guedj & Gretton (2022): the observations ``i`` and ``N + i`` form the
    pair ``i`` (``N = floor(n / 2)``); every member's statistic is the mean of ``h_k
    h_l`` over the pairs ``(i, i + r)``, ``r = 1..R``, its null drawn by Rademacher
    swaps of ``y_i`` and ``y_{N+i}`` (exact level), the bandwidth pairs combined by
    MMDAgg's weighted min-p (:mod:`kmtests.statistics.agginc`).

    Parameters
    ----------
    x, y : array_like
        The paired variables (the last observation is left out when ``n`` is odd).
    kernel_x, kernel_y : str or Kernel
        Kernels with one bandwidth each.
    bandwidth_x, bandwidth_y : "median" or float
        The references ``h`` of the collections ``2^l h`` (the median heuristic of each
        variable by default).
    statistic : {"hsicagginc"}
        The statistic (the only one of this face).
    diagonals : int, optional
        ``R`` (default 200), as in :func:`mmdagginc_test`.
    levels : (int, int), optional
        The exponents of ``2^l h`` of both variables (default ``(-2, 2)``: 5 x 5 members,
        the paper's).
    grid : sequence of float, or a pair of them, optional
        The bandwidths of both variables, or ``(x's, y's)``.
    weights : {"uniform", "increasing", "decreasing", "centred"} or sequence, optional
        MMDAgg's weights of the members (x's bandwidth varying fastest).
    method : {"wild"} or WildBootstrap, optional
        The null: Rademacher multipliers, which are swaps here; `n_resamples` draws
        (default 999: the authors draw ``B1 + B2 = 1000``), `rng`, `batch`, `n_jobs`
        (threads over blocks of draws) and `progress` as in every resampling test.
    engine : {"exact"}
        The kernels are evaluated on the design's pairs.
    data_name : str, optional
        Name of the data for the report.
    {{conventions}}

    Returns
    -------
    IndependenceResult
        As :func:`mmdagginc_test`'s: ``members`` one row per bandwidth pair.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import hsicagginc_test
    >>> gen = np.random.default_rng(0)
    >>> u = gen.uniform(-np.pi, np.pi, 600)
    >>> v = np.sin(3 * u) + gen.normal(size=600)
    >>> res = hsicagginc_test(u, v, n_resamples=499, rng=1)
    >>> print(f"{res.pvalue:.3f}, {len(res.members)} members")
    0.002, 25 members
    """
    return _plan.run((x, y), locals())
