"""Kernel two-sample test (MMD) with a pluggable kernel mean estimator: the face.

:func:`two_sample_test` is a signature and a docstring: the plan
(:mod:`kmtests._plan`) maps its keywords to a problem (the two samples,
:class:`~kmtests.problems.TwoSampleProblem`), a statistic (``statistic=``: the MMD
with an estimator, the spectral-regularised MMD, the linear-time statistics), an
engine (``engine=``) and a null method (``method=``), and runs them once.
"""

from __future__ import annotations

from typing import Any, Literal

from . import _plan
from ._docs import shared_docs
from ._typing import ArrayLike, SeedLike
from .engines import Engine
from .estimators import KernelMeanEstimator
from .null import NullMethod
from .problems import TwoSampleProblem
from .results import TwoSampleResult
from .statistics import Statistic

__all__ = ["mmd", "two_sample_test"]

@_plan.face(TwoSampleProblem)
def mmd(x: ArrayLike, y: ArrayLike, *, kernel: Any = "gaussian", bandwidth: Any = "median",
        estimator: str | KernelMeanEstimator = "kme",
        statistic: Literal["unbiased", "biased"] | None = None,
        tuning: Literal["permutation", "pooled"] = "permutation",
        nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0) -> float:
    """Squared maximum mean discrepancy between two samples.

    Parameters are as in :func:`two_sample_test` (`nan_policy` and `axis` too).

    Returns
    -------
    float
        ``MMD^2_u`` (unbiased, default for KME) or ``MMD^2_b`` (biased V-form
        ``||mu_x - mu_y||^2`` of the estimated embeddings).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import mmd
    >>> x = np.array([[0.0], [1.0], [2.0]]); y = np.array([[0.5], [3.0]])
    >>> print(f"{mmd(x, y, kernel='linear', statistic='biased'):.4f}")
    0.5625
    """
    return _plan.value((x, y), locals(), names=("unbiased", "biased"))


@_plan.face(TwoSampleProblem)
@shared_docs
def two_sample_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    kernel: Any = "gaussian",
    bandwidth: Any = "median",
    estimator: str | KernelMeanEstimator = "kme",
    statistic: Literal["unbiased", "biased", "regularized", "block", "linear", "me", "scf",
                       "selfnormalized", "mmdagginc"] | Statistic | None = None,
    method: Literal["permutation", "swap", "gamma", "normal", "wild", "asymptotic"] | NullMethod
    | None = None,
    tuning: Literal["permutation", "pooled"] = "permutation",
    n_resamples: int | None = None, rng: SeedLike = None, batch: int | None = None,
    n_jobs: int | None = None, progress: bool | None = None,
    data_name: str | None = None,
    filter: str | None = None,
    lam: Any = None,
    covariance: Literal["pooled", "split"] | None = None,
    split_size: int | None = None,
    engine: str | Engine | None = None, n_features: int | None = None,
    block_size: int | None = None,
    strata: Any = None,
    blocks: int | Literal["auto"] | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0,
    n_locations: int | None = None,
    diagonals: int | None = None, levels: tuple[int, int] | None = None,
    grid: Any = None, weights: Any = None,
) -> TwoSampleResult:
    r"""Kernel two-sample test: do `x` and `y` come from the same distribution?

    The statistic is the squared MMD between the kernel mean embeddings of
    the two samples, estimated with `estimator`. Its null distribution is
    obtained by permuting the pooled sample (exact finite-sample level), or
    approximated by a moment-matched gamma law.

    Parameters
    ----------
    x : array_like, shape (n_x, d) or (n_x,)
        First sample. Lists, pandas objects and 1-D arrays are accepted; two
        DataFrames are compared column by column *by name* (`y`'s columns are
        put in `x`'s order; different column names are an error).
        With ``kernel="precomputed"``: the pooled (n_x + n_y) square Gram
        matrix, the first sample's rows first.
    y : array_like, shape (n_y, d) or (n_y,)
        Second sample, same number of columns. With ``kernel="precomputed"``:
        the integer `n_x`.
    kernel : str, Kernel or callable
        ``"gaussian"`` (default), ``"laplacian"``, ``"ard"``, ``"linear"``,
        ``"polynomial"``, ``"distance"``, ``"precomputed"``, a
        :class:`kmtests.kernels.Kernel` or a callable ``f(X, Y) -> Gram``.
    bandwidth : "median" or float
        Bandwidth of the Gaussian/Laplacian/ARD kernel. ``"median"`` (default)
        is the median heuristic on the *pooled* sample, a permutation-invariant
        choice that keeps the test exact.
    estimator : str or KernelMeanEstimator
        Kernel mean estimator (see :mod:`kmtests.estimators`); ``"kme"`` is
        the empirical mean (classical MMD).
    statistic : {"unbiased", "biased", "regularized", "block", "linear", "me", "scf", "selfnormalized", "mmdagginc"} or Statistic, optional
        None (default): the null method's own statistic if it has one
        (``method="gamma"`` approximates the null of the biased KME statistic
        ``MMD^2_b``, so it computes that one), else the estimator's default
        form (below). ``"unbiased"``: the U-form, within-sample diagonal terms dropped
        (``MMD^2_u`` for the KME; default for the KME, the uniform shrinkage
        and the marginalized estimators); ``"biased"``: the V-form
        ``||mu_x - mu_y||^2`` of the estimated embeddings (default for the
        estimators with per-sample weights, e.g. the spectral ones). Both
        forms exist for every estimator, so a shrunk statistic can be
        compared with the KME statistic of the same form; see
        :doc:`/estimators_in_tests`. ``"regularized"``: the spectral-regularised
        MMD of Hagrass et al. (2024), ``||g_lam(Sigma)^{1/2}(mu_x - mu_y)||^2``
        in U-form (with the KME), configured by `filter`, `lam`, `covariance`;
        see :doc:`/user_guide/regularized`. ``"block"``, ``"linear"``: the
        linear-time statistics (as ``engine="block"`` / ``"linear"``).
        ``"me"``, ``"scf"``: the interpretable linear-time tests of
        Jitkrittum et al. (2016), the mean-embedding and smooth
        characteristic function statistics at `n_locations` test locations
        (frequencies) and a Gaussian width learned on `split_size` training
        pairs (samples of the same size) and tested on the others, with the
        permutation null of the test pairs (the default; exact given the
        split) or the papers' chi-square null (``method="asymptotic"``); the
        learned locations are in ``res.details["locations"]``; see
        :doc:`/user_guide/where`. ``"selfnormalized"``: ``MMD^2_b`` over Shao &
        Zhang's self-normaliser, for two windows of one series with ``blocks=``
        (:mod:`kmtests.statistics.selfnormalized`; :doc:`/user_guide/dependent`).
        ``"mmdagginc"``: MMDAggInc (Schrab et al.,
        2022), the min-p aggregate over bandwidths of incomplete U-statistics on
        the first `diagonals` superdiagonals, its null drawn by Rademacher swaps
        (``method="wild"``, its default; exact level), configured by
        `diagonals`, `levels`, `grid`, `weights`; see :doc:`/user_guide/agginc`. A
        statistic object of :mod:`kmtests.statistics` is used as it is.
    method : {"permutation", "swap", "gamma", "normal", "wild", "asymptotic"} or a method object, optional
        Null distribution (default: the statistic's own): permutations
        (exact level; the default), for two samples of equal size the swaps
        within random pairs (:class:`~kmtests.null.SwapMethod`: exact level, a
        quarter of the flops for the MMD with the KME), the gamma approximation of Gretton et al.
        (2009) for the biased KME statistic (approximate), the wild bootstrap
        (:class:`~kmtests.null.WildBootstrap`: approximate; with an
        autoregressive multiplier process for dependent data), or for the
        linear-time statistics their own null (``"normal"``, their default and
        the only one they take; permutation options are then an error), or
        for ``statistic="me"``/``"scf"`` the papers' chi-square
        (``"asymptotic"``; approximate). An
        object configures it (:mod:`kmtests.null`), in which case
        `n_resamples`, `batch`, `rng` and `progress` are given there instead.
    tuning : {"permutation", "pooled"}
        How data-driven estimator parameters enter the permutation test:
        re-tuned on every permuted data set (``"permutation"``, default), or
        tuned once on a permutation-invariant function of the data and held
        fixed (``"pooled"``: the pooled sample). Both keep the test exact; the
        parameters of the observed split are never reused. Marginalized
        estimators tune their corruption variance on the pooled sample, which is
        permutation-invariant, so both settings give the same test. See
        :doc:`/estimators_in_tests`.
    {{resampling}}
    data_name : str, optional
        Name of the data for the report. Default: ``"x and y"``, or the
        names of pandas Series / the columns of pandas DataFrames.
    filter : {"tikhonov", "showalter", "iterated_tikhonov", "cutoff"}, optional
        The spectral filter ``g_lam`` of ``statistic="regularized"`` (default
        ``"tikhonov"``; an error with another statistic)
        (Tikhonov ``1/(x + lam)``, Showalter ``(1 - exp(-x/lam))/x``, iterated
        Tikhonov of order 2, spectral cut-off).
    lam : float, sequence of float or "auto", optional
        Its parameter, in the units of the covariance operator's
        eigenvalues: one value (one statistic), or a grid of distinct values —
        ``"auto"`` (default) is ``tr(Sigma) x 10^[-6, 1]`` on 10 points — aggregated with
        exact level (the adaptive test: the weighted minimum of the members'
        permutation p-values, :func:`kmtests.aggregated_two_sample_test`).
    covariance : {"pooled", "split"}, optional
        The covariance operator ``Sigma`` of ``statistic="regularized"``: of
        the pooled sample (default; permutation-invariant, no data are held
        out), or of held-out points as in Hagrass et al. (``"split"``, drawn
        from a child of `rng` (:mod:`kmtests._rng`):
        `split_size` random points of each sample, of which a fair coin keeps
        one per pair, the statistic on the other points).
    split_size : int, optional
        The number of held-out pairs for ``covariance="split"`` (default 20%
        of the smaller sample); for ``statistic="me"`` or ``"scf"`` the number
        of training pairs (default half).
    engine : {"exact", "streamed", "auto", "block", "linear", "nystrom", "rff"} or Engine
        How the statistics are computed (:doc:`/user_guide/scale`; default
        ``"exact"``, ``"streamed"`` for the linear-time statistics):
        ``"exact"`` holds the pooled Gram matrix in memory;
        ``"streamed"`` gives the same statistics and p-value for the
        uniform-weight estimators (kme, skmse, bkmse, ...) without it, from
        Gram tiles computed on the fly (memory ``O(N d + B N)``); ``"auto"``
        is ``"exact"`` while the Gram matrix takes at most a quarter of the
        available memory, else ``"streamed"`` (the report says which ran).
        ``"block"`` (the B-test of Zaremba et al., 2013: the mean of
        ``MMD^2_u`` over blocks of `block_size` consecutive points) and
        ``"linear"`` (``MMD^2_l`` of Gretton et al., 2012, Sec. 6, over
        disjoint pairs) are linear-time tests of a *different* statistic
        (``statistic="block"`` / ``"linear"`` on the streamed engine), with a
        Student-t null on their i.i.d. terms (``method="normal"``) and lower power
        than the quadratic-time test: memory ``O(N d + b^2)``, time
        ``O(N b d)``; the KME only, samples of the same size, the data in
        random order; never chosen by ``"auto"``. ``"nystrom"`` and ``"rff"``
        test the MMD of a low-rank approximation ``phi(x)'phi(y)`` of the
        kernel (Nyström landmarks, any kernel; random Fourier features of the
        Gaussian, ARD and Laplacian kernels), drawn once from `rng` on the
        pooled sample: the permutation p-value is exact for this approximate
        statistic; memory ``O(N (d + r))``, ``2 N r`` flops per permutation;
        the KME and the uniform-weight estimators; never chosen by
        ``"auto"``. ``"dask-rff"`` and ``"dask-nystrom"`` (or
        :class:`kmtests.scaleout.DaskRFF`, ``DaskNystrom``) run the low-rank statistic
        on dask arrays past one machine's memory, with an exact permutation null drawn
        chunk by chunk (:mod:`kmtests.scaleout`).
    n_features : int, optional
        The number of features ``r`` of ``engine="nystrom"`` (landmarks,
        clipped to the number of points, with a note) or ``"rff"``
        (frequencies); default 200, and for ``"nystrom"`` the smallest rank
        whose eigenvalues hold 99.9% of the trace of those 200 landmarks' Gram
        matrix (reported in ``engine_info``). An error with the other engines.
    block_size : int, optional
        The block size ``b`` of ``engine="block"`` (default
        ``floor(sqrt(n))``, as in Zaremba et al., 2013; from 2 to ``n // 2``;
        an error with another statistic).
    n_locations : int, optional
        The number ``J`` of test locations (frequencies) of ``statistic="me"``
        or ``"scf"`` (default 5; an error with another statistic).
    strata : array_like or pair of array_like, optional
        Permute only within strata: one label per observation (a pair of label
        arrays for x and y, or one label per pooled point, x first). Every
        arrangement keeps each stratum's number of x points: the exact
        permutation test of a paired design (one stratum per pair) or of
        clustered data. Exact; the gamma and wild-bootstrap nulls do not apply.
    blocks : int or "auto", optional
        Permute blocks of `blocks` consecutive observations instead of single
        ones (time series whose dependence is shorter than the blocks: an
        approximation; both sample sizes must be multiples of it). ``"auto"``:
        the rows are two windows of one series, and the length comes from the
        data (:doc:`/user_guide/dependent`; the sizes need not be multiples).
        With ``method="wild"``: AR(1) multipliers of that length.
    diagonals, levels, grid, weights : optional
        ``statistic="mmdagginc"``: ``R`` of its design (default 200), its
        bandwidth collection ``2^l h`` for ``l`` in `levels` or the bandwidths
        `grid` (default 10 from the pooled distances), MMDAgg's `weights`
        (default uniform); an error with another statistic.
    {{conventions}}

    Returns
    -------
    TwoSampleResult
        With ``statistic``, ``pvalue``, ``null_distribution``, the settings
        and ``summary()``, ``summary_frame()``, ``pvalue_interval()``.

    Raises
    ------
    ValueError
        NaN/inf in the data, different numbers of columns (or DataFrame
        columns of other names), fewer than 2 observations per sample, an
        option that does not configure the statistic or engine that runs
        (e.g. `lam` without ``statistic="regularized"``), constant data with the median heuristic,
        unknown kernel/estimator/statistic/method names, a non-positive
        bandwidth or `n_resamples`, a bandwidth out of range for the data,
        kernel values that overflow, a non-finite statistic, a non-symmetric
        user kernel.
    TypeError
        Non-numeric data (strings, dates, masked arrays) or wrongly typed
        options.
    MemoryError
        When the pooled Gram matrix would not fit in the available memory
        (checked before anything is computed).

    Warns
    -----
    IndefiniteKernelWarning
        A user kernel or precomputed Gram matrix that is not positive
        semi-definite.
    DegenerateStatisticWarning
        The statistic is 0 for every arrangement (e.g. constant data), or a
        pooled shrinkage of 1 was replaced by the unshrunk statistic.
    SlowTestWarning
        A per-permutation estimator whose null distribution will take more
        than 10 minutes (the estimate is in the message).

    Notes
    -----
    With weights ``beta`` from the estimator, the biased statistic is
    ``beta_x' K_xx beta_x + beta_y' K_yy beta_y - 2 beta_x' K_xy beta_y``; for
    the KME (``beta = 1/n``) the unbiased statistic is Gretton et al.'s
    (2012) ``MMD^2_u``. The Monte Carlo p-value is ``(1 + #{T_b >= T}) / (1 + B)``
    (ties within rounding count); it is never zero and the test has exact
    level. Permuted statistics are block sums of the pooled Gram matrix,
    computed for many permutations in one matrix product.

    References
    ----------
    .. [1] Gretton, Borgwardt, Rasch, Schölkopf, Smola (2012). A kernel
       two-sample test. JMLR 13.
    .. [2] Gretton, Fukumizu, Harchaoui, Sriperumbudur (2009). A fast,
       consistent kernel two-sample test. NIPS.
    .. [3] Phipson, Smyth (2010). Permutation p-values should never be zero.
    .. [4] Zaremba, Gretton, Blaschko (2013). B-test: a non-parametric, low
       variance kernel two-sample test. NIPS.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import two_sample_test
    >>> gen = np.random.default_rng(0)
    >>> x = gen.normal(size=(50, 2)); y = gen.normal(0.8, size=(60, 2))
    >>> res = two_sample_test(x, y, n_resamples=999, rng=1)
    >>> print(f"MMD^2_u = {res.statistic:.4f}, p = {res.pvalue:.4f}")
    MMD^2_u = 0.1042, p = 0.0010

    Missing values are an error naming where the first one is, or left out
    with ``nan_policy="omit"`` (the report's notes say which):

    >>> x[3, 1] = np.nan
    >>> res = two_sample_test(x, y, nan_policy="omit", n_resamples=999, rng=1)
    >>> res.sizes
    {'n_x': 49, 'n_y': 60}
    >>> print(res.notes[0])
    nan_policy='omit': 1 of the 50 observations of x had a missing value and were left out (row 3)
    """
    return _plan.run((x, y), locals())
