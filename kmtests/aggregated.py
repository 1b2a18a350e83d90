r"""Aggregated kernel tests: several statistics, one permutation null, exact level.

The faces :func:`aggregated_two_sample_test` and :func:`aggregated_independence_test`
(a signature and a docstring each; :mod:`kmtests._collection` reads their keywords)
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

from typing import Any, Literal

from ._collection import (bandwidth_grid, build, fuse_statistic, lambda_grid,
                          member_rejections, minp_combination)
from ._docs import shared_docs
from ._typing import ArrayLike, SeedLike
from .engines import Engine
from .null import NullMethod
from .problems import IndependenceProblem, TwoSampleProblem
from .results import AggregatedIndependenceResult, AggregatedTwoSampleResult

__all__ = ["AggregatedIndependenceResult", "AggregatedTwoSampleResult",
           "aggregated_independence_test", "aggregated_two_sample_test", "bandwidth_grid",
           "fuse_statistic", "lambda_grid", "member_rejections", "minp_combination"]

# -- the two-sample collection -------------------------------------------------------------------
@shared_docs
def aggregated_two_sample_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    kernel: Any = "gaussian",
    bandwidths: Any = "auto",
    estimators: Any = ("kme",),
    statistics: Any = ("unbiased",),
    filters: Any = None, lams: Any = None,
    combination: Literal["mmdagg", "fuse"] | None = None,
    weights: Any = "uniform", alpha: float = 0.05,
    method: Literal["permutation", "swap", "mmdagg", "fuse"] | NullMethod | None = None,
    null: NullMethod | None = None,
    n_resamples: int | None = None, rng: SeedLike = None, batch: int | None = None,
    n_jobs: int | None = None, progress: bool | None = None,
    data_name: str | None = None,
    tuning: Literal["permutation", "pooled"] = "permutation",
    engine: str | Engine = "exact", n_features: int | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0,
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
    combination : {"mmdagg", "fuse"}
        The combination (module docs; default ``"mmdagg"``). Named `method` before
        0.3: ``method="mmdagg" | "fuse"`` still works, with a FutureWarning.
    weights : {"uniform", "increasing", "decreasing", "centred"} or sequence
        The members' weights (MMDAgg's, in the order of the collection:
        bandwidths vary fastest). For FUSE, the prior weights of the soft
        maximum.
    alpha : float
        The level at which the report says which members reject.
    method : "permutation", "swap" or a null method object, optional
        The null distribution, as in every test (default the permutations,
        configured by `n_resamples`, `rng`, `batch`, `n_jobs`, `progress`;
        default 1999 permutations). Any method whose needs the collection
        meets; the combinations need every member's value on every arrangement,
        which the permutations give. ``"swap"`` (samples of equal size): the
        arrangements exchange the points of random pairs ``(x_i, y_j)``
        (:class:`~kmtests.null.SwapMethod`: exact level, MMDAgg's null for
        equal sizes), with the KME a quarter of the permutations' flops: 0.37-0.44
        times their time, and 0.81-0.85 times kerneltests' MMDAgg's at ``n =
        500``-``1000`` (0.61-0.63 at 2000, 1.02-1.11 at 200; ``benchmarks/README.md``).
    null : null method object, optional
        The same as an object in `method` (the keyword of 0.2).
    tuning : {"permutation", "pooled"}
        How the estimators' data-driven parameters enter (as in
        :func:`kmtests.two_sample_test`).
    engine : {"exact", "streamed", "auto", "nystrom", "rff"} or Engine
        How every member's statistics are computed (as in
        :func:`kmtests.two_sample_test`; MMD-FUSE and the regularised members
        need ``"exact"``); `n_features` configures the low-rank engines.
    data_name : str, optional
        Name of the data for the report.
    {{conventions}}

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
    return build(TwoSampleProblem, (x, y), locals()).run()  # type: ignore[return-value]


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
    filters: Any = None, lams: Any = None,
    combination: Literal["mmdagg", "fuse"] | None = None,
    weights: Any = "uniform", alpha: float = 0.05,
    method: Literal["permutation", "mmdagg", "fuse"] | NullMethod | None = None,
    null: NullMethod | None = None,
    n_resamples: int | None = None, rng: SeedLike = None, batch: int | None = None,
    n_jobs: int | None = None, progress: bool | None = None,
    data_name: str | None = None,
    tuning: Literal["permutation", "pooled"] = "permutation",
    engine: str | Engine = "exact", n_features: int | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0,
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
    return build(IndependenceProblem, (x, y), locals()).run()  # type: ignore[return-value]
