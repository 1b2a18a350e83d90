"""Kernel independence test (HSIC) with a pluggable kernel mean estimator: the face.

:func:`independence_test` is a signature and a docstring: the plan
(:mod:`kmtests._plan`) maps its keywords to a problem (the paired variables), a
statistic (``statistic=``: HSIC with an estimator, the normalised cross-covariance,
NFSIC), an engine and a null method, and runs them once.
"""

from __future__ import annotations

from typing import Any, Literal


from . import _plan
from ._docs import shared_docs
from ._typing import ArrayLike, SeedLike
from .engines import Engine
from .estimators import KernelMeanEstimator
from .null import NullMethod
from .problems import IndependenceProblem
from .results import IndependenceResult
from .statistics import Statistic

__all__ = ["hsic", "independence_test"]


@_plan.face(IndependenceProblem)
def hsic(x: ArrayLike, y: ArrayLike, *, kernel_x: Any = "gaussian", kernel_y: Any = "gaussian",
         bandwidth_x: Any = "median", bandwidth_y: Any = "median",
         estimator: str | KernelMeanEstimator = "kme",
         statistic: Literal["biased", "unbiased"] = "biased",
         tuning: Literal["permutation", "pooled"] = "permutation",
         nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0) -> float:
    """Hilbert-Schmidt independence criterion of paired samples.

    Parameters are as in :func:`independence_test` (`nan_policy` and `axis` too).

    Returns
    -------
    float
        ``HSIC_b = tr(HKH HLH) / n^2`` (default), the unbiased ``HSIC_u``, or
        for a shrinkage estimator ``beta' (HKH o HLH) beta``.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import hsic
    >>> x = np.array([0.0, 1.0, 2.0, 3.0])
    >>> print(f"{hsic(x, x, kernel_x='linear', kernel_y='linear'):.4f}")
    1.5625
    """
    return _plan.value((x, y), locals(), names=("biased", "unbiased"))


@_plan.face(IndependenceProblem)
@shared_docs
def independence_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    kernel_x: Any = "gaussian",
    kernel_y: Any = "gaussian",
    bandwidth_x: Any = "median",
    bandwidth_y: Any = "median",
    estimator: str | KernelMeanEstimator = "kme",
    statistic: Literal["biased", "unbiased", "regularized", "fsic", "hsicagginc"] | Statistic
    | None = None,
    method: Literal["permutation", "gamma", "wild", "chi2", "asymptotic"] | NullMethod
    | None = None,
    tuning: Literal["permutation", "pooled"] = "permutation",
    n_resamples: int | None = None, rng: SeedLike = None, batch: int | None = None,
    n_jobs: int | None = None, progress: bool | None = None,
    data_name: str | None = None,
    filter: str | None = None,
    lam: Any = None,
    engine: str | Engine = "exact", n_features: int | None = None,
    strata: Any = None,
    blocks: int | Literal["auto"] | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0,
    n_locations: int | None = None,
    split_size: int | None = None,
    diagonals: int | None = None, levels: tuple[int, int] | None = None,
    grid: Any = None, weights: Any = None,
) -> IndependenceResult:
    r"""Kernel independence test: are the paired variables `x` and `y` independent?

    The statistic is the Hilbert-Schmidt norm of the (estimated) centred
    cross-covariance operator, HSIC. Its null distribution is obtained by
    permuting the rows of `y` against those of `x` (exact level), or
    approximated by a moment-matched gamma law.

    Parameters
    ----------
    x : array_like, shape (n, p) or (n,)
        First variable. With ``kernel_x="precomputed"``: its n x n Gram matrix.
    y : array_like, shape (n, q) or (n,)
        Second variable, paired with `x` row by row (two pandas objects are
        paired *by index label*: `y` is put in `x`'s order, and different
        labels are an error). With ``kernel_y="precomputed"``: its n x n Gram
        matrix.
    kernel_x, kernel_y : str, Kernel or callable
        Kernels on each variable (see :func:`two_sample_test`).
    bandwidth_x, bandwidth_y : "median" or float
        Bandwidths; ``"median"`` is the median heuristic on each variable
        separately (permutation-invariant).
    estimator : str or KernelMeanEstimator
        Estimator of the cross-covariance embedding; ``"kme"`` (default) gives
        the classical HSIC.
    statistic : {"biased", "unbiased", "regularized", "fsic", "hsicagginc"} or Statistic, optional
        None (default): the null method's own statistic if it has one (the
        biased KME statistic for ``method="gamma"`` and ``"chi2"``), else
        ``"biased"``. ``"biased"``: the V-form, ``HSIC_b = tr(HKH HLH) / n^2`` for
        the KME; ``"unbiased"``: the U-form, ``HSIC_u`` of Song et al. (2012)
        for the KME and its generalisation to weighted embeddings (diagonal
        terms dropped; ``c^2 HSIC_u`` for uniform weights ``c/n``), n >= 5.
        See :doc:`/estimators_in_tests`. ``"regularized"``: the normalised
        cross-covariance (HSNIC/NOCCO, Fukumizu et al., 2008)
        ``tr(R_x R_y)``, ``R = Kc (Kc + n lam I)^{-1}`` for the Tikhonov
        filter, with the KME; configured by `filter` and `lam` (see
        :func:`kmtests.two_sample_test` and :doc:`/user_guide/regularized`).
        ``"fsic"``: the interpretable linear-time NFSIC test of Jitkrittum et
        al. (2017), the HSIC witness at `n_locations` paired locations
        ``(v_j, w_j)`` learned with the Gaussian widths on `split_size`
        training pairs and tested on the others, with the permutation null of
        the test pairs (the default) or the papers' chi-square null
        (``method="asymptotic"``); the locations are in
        ``res.details["locations"]`` and ``["locations_y"]``; see
        :doc:`/user_guide/where`. ``"hsicagginc"``: HSICAggInc (Schrab et al.,
        2022), as MMDAggInc in :func:`kmtests.two_sample_test` (the pair ``i``:
        observations ``i`` and ``N + i``); see :doc:`/user_guide/agginc`.
    method : {"permutation", "gamma", "wild", "chi2", "asymptotic"} or a method object, optional
        Null distribution: permutations (default, exact level), the gamma
        approximation of Gretton et al. (2008) for ``HSIC_b`` (approximate),
        the weighted chi-square of ``HSIC_b`` (``"chi2"``), the chi-square of
        ``statistic="fsic"`` (``"asymptotic"``; approximate), or
        the wild bootstrap (:class:`~kmtests.null.WildBootstrap`, approximate;
        with an autoregressive multiplier process for time series, where
        permutations do not keep the level); an object configures it
        (:mod:`kmtests.null`).
    tuning : {"permutation", "pooled"}
        How data-driven estimator parameters enter the permutation test:
        re-tuned on every permuted data set (``"permutation"``, default), or
        tuned once on a permutation-invariant function of the data and held
        fixed (``"pooled"``: the permutation-averaged cross-covariance Gram, a function of the marginals). Both keep the test exact; the
        parameters of the observed split are never reused. Marginalized
        estimators tune their corruption variance on each variable, which is
        permutation-invariant, so both settings give the same test. See
        :doc:`/estimators_in_tests`.
    {{resampling}}
    data_name : str, optional
        Name of the data for the report. Default: ``"x and y"``, or the
        names of pandas Series / the columns of pandas DataFrames.
    filter, lam : optional
        The spectral filter (default ``"tikhonov"``) and its parameter (one
        value, a grid of distinct values, or ``"auto"``, the default,
        aggregated with exact level) of ``statistic="regularized"`` (an error
        with another statistic);
        as in :func:`kmtests.two_sample_test`, with the same lambda for both
        variables.
    engine : {"exact", "auto", "nystrom", "rff"} or Engine
        How the statistics are computed (:doc:`/user_guide/scale`);
        ``"exact"`` (default) holds both Gram matrices in memory; ``"auto"``
        is ``"exact"`` while they take at most a quarter of the available
        memory. ``"nystrom"`` and ``"rff"`` test the HSIC of low-rank
        approximations of both kernels (Nyström landmarks drawn from each
        variable, any kernel; random Fourier features of the Gaussian, ARD
        and Laplacian kernels), drawn once from `rng` on each variable: the
        permutation p-value is exact for this approximate statistic; memory
        ``O(n (p + q + r))``, ``2 n r^2`` flops per permutation; the KME and
        the uniform-weight estimators; never chosen by ``"auto"``. The
        report says which engine ran (and for a low-rank engine, the
        features and that the statistic is approximate). ``"dask-rff"`` and
        ``"dask-nystrom"`` (or :class:`kmtests.scaleout.DaskRFF`, ``DaskNystrom``)
        compute the low-rank ``HSIC_b`` on dask arrays past one machine's memory, with
        the weighted chi-square null of the feature covariances (:mod:`kmtests.scaleout`).
    n_features : int, optional
        The number of features ``r`` per variable of ``engine="nystrom"``
        (landmarks, clipped to n) or ``"rff"``; default 200, and for
        ``"nystrom"`` the smallest rank whose eigenvalues hold 99.9% of the
        trace of those 200 landmarks' Gram matrix (reported in
        ``engine_info``). An error with the other engines.
    n_locations, split_size : int, optional
        ``statistic="fsic"``: the number of paired test locations (default 5)
        and of training pairs (default half); an error with another statistic.
    strata : array_like, optional
        Permute `y` against `x` only within strata (one label per pair, e.g. a
        discrete variable the dependence may go through): tests independence
        within the strata; exact. The gamma and wild-bootstrap nulls do not
        apply.
    blocks : int or "auto", optional
        Permute blocks of `blocks` consecutive pairs of `y` against `x` (time
        series whose dependence is shorter than the blocks: an approximation);
        ``"auto"``: a length from the data (:doc:`/user_guide/dependent`). With
        ``method="wild"``: AR(1) multipliers of that length.
    diagonals, levels, grid, weights : optional
        ``statistic="hsicagginc"``: as for MMDAggInc in
        :func:`kmtests.two_sample_test` (default collection ``2^l h``,
        ``l = -2..2``, for each variable; `grid` one sequence or a pair).
    {{conventions}}

    Returns
    -------
    IndependenceResult

    Raises
    ------
    ValueError
        NaN/inf, different numbers of observations, fewer than 2 observations,
        a constant variable with the median heuristic, unknown option names,
        non-positive bandwidths or `n_resamples`, a bandwidth out of range for
        the data, kernel values that overflow, a non-finite statistic, a
        non-symmetric user kernel.
    TypeError
        Non-numeric data (strings, dates, masked arrays) or wrongly typed
        options.
    MemoryError
        When the two Gram matrices would not fit in the available memory.

    Warns
    -----
    IndefiniteKernelWarning, DegenerateStatisticWarning, SlowTestWarning
        As for :func:`kmtests.two_sample_test`.

    Notes
    -----
    The test does not depend on the order of its arguments:
    ``independence_test(x, y)`` and ``independence_test(y, x)`` give the same
    statistic and, for the same `rng`, the same p-value (the permutations are
    applied to a canonical one of the two variables).

    ``HSIC_b`` here is ``(1/n^2) tr(K H L H)``, the scaling of Gretton et
    al.'s (2008) test code and of R's ``dHSIC::dhsic``; Gretton et al. (2005)
    use ``1/(n-1)^2``. With the distance kernel it equals ``dCov_n^2 / 4`` of
    R's ``energy::dcov`` (checked in the test-suite). The permuted statistics
    ``sum_ij Kc_ij Lc_{p_i p_j}`` are computed in a parallel numba loop over
    permutations, each in a fixed order.

    References
    ----------
    .. [1] Gretton, Fukumizu, Teo, Song, Schölkopf, Smola (2008). A kernel
       statistical test of independence. NIPS.
    .. [2] Song, Smola, Gretton, Bedo, Borgwardt (2012). Feature selection via
       dependence maximization. JMLR 13.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import independence_test
    >>> gen = np.random.default_rng(0)
    >>> x = gen.normal(size=80); y = x**2 + 0.5 * gen.normal(size=80)
    >>> res = independence_test(x, y, n_resamples=999, rng=1)
    >>> print(f"HSIC_b = {res.statistic:.4f}, p = {res.pvalue:.4f}")
    HSIC_b = 0.0279, p = 0.0010

    With ``nan_policy="omit"`` a pair with a missing value is left out as a
    whole; data with one column per observation take ``axis=1``:

    >>> y[[5, 9]] = np.nan
    >>> res = independence_test(x[None, :], y, axis=1, nan_policy="omit", n_resamples=999,
    ...                         rng=1)
    >>> res.sizes
    {'n': 78}
    """
    return _plan.run((x, y), locals())
