"""Kernel two-sample test (MMD) with a pluggable kernel mean estimator."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from . import _resampling
from ._driver import (Prepared, data_label, identity, prepare_rule, reportable, run_test,
                      scaled_gram, statistic_name)
from ._gamma import mmd_gamma
from ._gram import CentredGram, check_symmetric
from ._guards import format_bytes
from ._typing import ArrayLike, SeedLike
from ._validation import as_sample, check_choice, check_same_dim
from .engines import Values
from .engines.mmd import PooledGram, mmd_general, mmd_values
from .estimators import KernelMeanEstimator, resolve_estimator
from .estimators._rules import General, Uniform
from .kernels import Kernel, Precomputed, resolve_kernel
from .null import GammaMethod, NullMethod, PermutationMethod, resolve_method
from .results import TwoSampleResult

__all__ = ["mmd", "two_sample_test"]

_STATISTICS = ("unbiased", "biased")
_TUNINGS = ("permutation", "pooled")


@dataclass
class _TwoSample:
    """A validated two-sample test (a :class:`kmtests._driver.Problem`)."""

    kernel: Kernel
    estimator: KernelMeanEstimator
    unbiased: bool
    z: np.ndarray | None          # the pooled data (None for a precomputed Gram matrix)
    K: np.ndarray | None          # the precomputed pooled Gram matrix
    n_x: int
    n_y: int
    kind: str = "split"
    result_class: type[TwoSampleResult] = TwoSampleResult
    sizes: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sizes = {"n_x": self.n_x, "n_y": self.n_y}

    @property
    def n(self) -> int:
        return self.n_x + self.n_y

    def statistic_name(self) -> str:
        return statistic_name("MMD^2_u" if self.unbiased else "MMD^2_b", self.estimator)

    def memory(self, method: NullMethod, tuning: str) -> tuple[float, str, str]:
        n = self.n
        need = 8.0 * n * n + 8.0 * n * (2 * 256 + 2 * 128)
        if isinstance(method, PermutationMethod):
            need += 16.0 * method.n_resamples + 8.0 * n * (method.batch or 1)
        if tuning == "pooled" and not isinstance(self.estimator.rule(), Uniform):
            need += 3 * 8.0 * n * n  # the uncentred pooled Gram matrix and its eigenvectors
        return (need, f"the {n} x {n} pooled Gram matrix takes {format_bytes(8.0 * n * n)}",
                "Test a random subsample of each sample, or use a machine with more memory.")

    def check_gamma(self) -> None:
        rule = self.estimator.rule()
        if self.unbiased or not (isinstance(rule, Uniform) and rule.fixed == 1.0):
            raise ValueError("method='gamma' approximates the null of the biased KME "
                             "statistic; use statistic='biased' with estimator='kme', or "
                             "method='permutation'.")

    def plan(self, method: PermutationMethod) -> _resampling.PermutationPlan:
        return _resampling.plan_two_sample(self.n_x, self.n_y, method.n_resamples,
                                           method.batch)

    def prepare(self, tuning: str) -> Prepared:
        est, kern = self.estimator, self.kernel
        note, tparams = "", {}  # type: tuple[str, dict[str, Any]]
        if self.z is None:
            assert self.K is not None
            cg: CentredGram = kern.centred_gram(self.K, name="x")
        else:
            kern = kern.fitted_to(self.z, name="the pooled sample")
            tk = est.transform_kernel(kern, self.z)
            if tk is None:
                cg = kern.centred_gram(self.z, name="the pooled sample")
            else:
                c, infl, tparams = tk
                cg = scaled_gram(infl, self.z, c, "the pooled sample")
                note = f"marginalized: {c:.4g} x {infl.describe()}"
        prep = prepare_rule(est, tuning, cg.full, transformed=bool(note))
        pg = PooledGram(cg)
        rule, n_x, unbiased = prep.rule, self.n_x, self.unbiased
        params = {}
        if tparams or prep.params:
            params["pooled"] = reportable({**tparams, **prep.params})

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            ident = identity(self.n)
            if isinstance(rule, General):
                vals, ps = mmd_general(pg, ident, n_x, rule, n_jobs, unbiased)
                if prep.tuning == "pooled":  # the parameters are the pooled ones
                    return vals, {}
                return vals, {"x": ps[0]["x"], "y": ps[0]["y"]}
            vals = mmd_values(pg, ident, n_x, rule, unbiased, n_jobs)
            if rule.fixed is not None:
                return vals, {}
            ix, iy = np.arange(n_x), np.arange(n_x, self.n)
            return vals, {"x": est.weights(cg.block(ix))[1], "y": est.weights(cg.block(iy))[1]}

        return Prepared(
            values=lambda perms, n_jobs: mmd_values(pg, perms, n_x, rule, unbiased, n_jobs),
            observed=observed,
            gamma=lambda t, moments: mmd_gamma(pg.Kc, n_x, t, moments),
            prep=prep, kernels={"kernel": kern}, kernel_notes={"kernel": note},
            params=params, what=f"{self.statistic_name()} with {kern.phrase()}")


def _two_sample_iv(x: Any, y: Any, kernel: Any, bandwidth: Any, estimator: Any,
                   statistic: str | None) -> _TwoSample:
    kern = resolve_kernel(kernel, bandwidth)
    est = resolve_estimator(estimator)
    rule = est.rule()  # raises for estimators that cannot run inside a test
    if statistic is None:
        statistic = "unbiased" if isinstance(rule, Uniform) else "biased"
    unbiased = check_choice(statistic, "statistic", _STATISTICS) == "unbiased"
    if isinstance(kern, Precomputed):
        K = as_sample(x, "x", min_size=4)
        if K.shape[0] != K.shape[1]:
            raise ValueError("with kernel='precomputed', `x` must be the square pooled Gram "
                             f"matrix; got shape {K.shape}.")
        K = check_symmetric(K, "with kernel='precomputed', `x`")
        if isinstance(y, (bool, np.bool_)) or not isinstance(y, (int, np.integer)):
            raise TypeError("with kernel='precomputed', `y` must be the integer size of the "
                            "first sample (its rows come first in `x`).")
        n_x = int(y)
        n_y = K.shape[0] - n_x
        if n_x < 2 or n_y < 2:
            raise ValueError("with kernel='precomputed', each sample must have at least 2 "
                             f"observations; got {n_x} and {n_y}.")
        est.transform_kernel(kern, None)  # marginalized estimators need the data: raises
        return _TwoSample(kern, est, unbiased, None, K, n_x, n_y)
    xa = as_sample(x, "x")
    ya = as_sample(y, "y")
    check_same_dim(xa, ya)
    return _TwoSample(kern, est, unbiased, np.vstack([xa, ya]), None, xa.shape[0],
                      ya.shape[0])


def mmd(x: ArrayLike, y: ArrayLike, *, kernel: Any = "gaussian", bandwidth: Any = "median",
        estimator: str | KernelMeanEstimator = "kme",
        statistic: Literal["unbiased", "biased"] | None = None,
        tuning: Literal["permutation", "pooled"] = "permutation") -> float:
    """Squared maximum mean discrepancy between two samples.

    Parameters are as in :func:`two_sample_test`.

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
    tuning_ = check_choice(tuning, "tuning", _TUNINGS)
    problem = _two_sample_iv(x, y, kernel, bandwidth, estimator, statistic)
    from ._guards import check_memory

    check_memory(*problem.memory(GammaMethod(), tuning_))
    prepared = problem.prepare(tuning_)
    value = float(prepared.observed(None)[0].stat[0])
    _resampling.check_finite_statistic(value, None, prepared.what)
    return value


def two_sample_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    kernel: Any = "gaussian",
    bandwidth: Any = "median",
    estimator: str | KernelMeanEstimator = "kme",
    statistic: Literal["unbiased", "biased", "regularized"] | None = None,
    method: Literal["permutation", "gamma", "normal"] | NullMethod = "permutation",
    tuning: Literal["permutation", "pooled"] = "permutation",
    n_resamples: int | None = None,
    rng: SeedLike = None,
    batch: int | None = None,
    n_jobs: int | None = None,
    progress: bool | None = None,
    data_name: str | None = None,
    filter: str = "tikhonov",
    lam: Any = "auto",
    covariance: Literal["pooled", "split"] = "pooled",
    split_size: int | None = None,
    engine: str = "exact",
    n_features: int | None = None,
    block_size: int | None = None,
) -> TwoSampleResult:
    r"""Kernel two-sample test: do `x` and `y` come from the same distribution?

    The statistic is the squared MMD between the kernel mean embeddings of
    the two samples, estimated with `estimator`. Its null distribution is
    obtained by permuting the pooled sample (exact finite-sample level), or
    approximated by a moment-matched gamma law.

    Parameters
    ----------
    x : array_like, shape (n_x, d) or (n_x,)
        First sample. Lists, pandas objects and 1-D arrays are accepted.
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
    statistic : {"unbiased", "biased"}, optional
        ``"unbiased"``: the U-form, within-sample diagonal terms dropped
        (``MMD^2_u`` for the KME; default for the KME, the uniform shrinkage
        and the marginalized estimators); ``"biased"``: the V-form
        ``||mu_x - mu_y||^2`` of the estimated embeddings (default for the
        estimators with per-sample weights, e.g. the spectral ones). Both
        forms exist for every estimator, so a shrunk statistic can be
        compared with the KME statistic of the same form; see
        :doc:`/estimators_in_tests`. ``"regularized"``: the spectral-regularised
        MMD of Hagrass et al. (2024), ``||g_lam(Sigma)^{1/2}(mu_x - mu_y)||^2``
        in U-form (with the KME), configured by `filter`, `lam`, `covariance`;
        see :doc:`/user_guide/regularized`.
    method : {"permutation", "gamma", "normal"} or PermutationMethod, GammaMethod, NormalMethod
        Null distribution: permutations (default; exact level) or the gamma
        approximation of Gretton et al. (2009) for the biased KME statistic
        (approximate); an object configures it (:mod:`kmtests.null`), in
        which case `n_resamples`, `batch`, `rng` and `progress` are given
        there instead. With ``engine="block"`` or ``"linear"`` the default
        stands for their asymptotic normal null (``"normal"``, the only one
        they take); permutation options are then an error.
    tuning : {"permutation", "pooled"}
        How data-driven estimator parameters enter the permutation test:
        re-tuned on every permuted data set (``"permutation"``, default), or
        tuned once on a permutation-invariant function of the data and held
        fixed (``"pooled"``: the pooled sample). Both keep the test exact; the
        parameters of the observed split are never reused. Marginalized
        estimators tune their corruption variance on the pooled sample, which is
        permutation-invariant, so both settings give the same test. See
        :doc:`/estimators_in_tests`.
    n_resamples : int, optional
        Number of random permutations (default 9999). When the number of
        distinct splits ``C(n_x + n_y, n_x)`` is not larger, all splits are
        enumerated and the p-value is exact.
    rng : None, int, SeedSequence or Generator
        Source of the permutations. A fixed value gives bit-identical
        p-values whatever `batch` and `n_jobs` are.
    batch : int, optional
        Permutations processed per step; memory is ``O(N^2 + batch N)``.
        Default: as many as fit in about 16 MB.
    n_jobs : int, optional
        Threads: -1 or 1 to the number of CPUs (None: the default, all CPUs
        for large problems). The same meaning in both tests: the BLAS threads
        of the block sums (KME, uniform shrinkage), or the workers of the
        thread pool that evaluates per-sample weights (one BLAS thread
        each). Results do not depend on `n_jobs`.
    progress : bool, optional
        Show a progress bar (needs tqdm). None (default): only when the
        null distribution is expected to take more than a few seconds.
    data_name : str, optional
        Name of the data for the report. Default: ``"x and y"``, or the
        names of pandas Series / the columns of pandas DataFrames.
    filter : {"tikhonov", "showalter", "iterated_tikhonov", "cutoff"}
        The spectral filter ``g_lam`` of ``statistic="regularized"``
        (Tikhonov ``1/(x + lam)``, Showalter ``(1 - exp(-x/lam))/x``, iterated
        Tikhonov of order 2, spectral cut-off).
    lam : float, sequence of float or "auto"
        Its parameter, in the units of the covariance operator's
        eigenvalues: one value (one statistic), or a grid — ``"auto"``
        (default) is ``tr(Sigma) x 10^[-6, 1]`` on 10 points — aggregated with
        exact level (the adaptive test: the weighted minimum of the members'
        permutation p-values, :func:`kmtests.aggregated_two_sample_test`).
    covariance : {"pooled", "split"}
        The covariance operator ``Sigma`` of ``statistic="regularized"``: of
        the pooled sample (default; permutation-invariant, no data are held
        out), or of held-out points as in Hagrass et al. (``"split"``:
        `split_size` random points of each sample, of which a fair coin keeps
        one per pair, the statistic on the other points).
    split_size : int, optional
        The number of held-out pairs for ``covariance="split"`` (default 20%
        of the smaller sample).
    engine : {"exact", "streamed", "auto", "block", "linear", "nystrom", "rff"}
        How the statistics are computed (:doc:`/user_guide/scale`):
        ``"exact"`` (default) holds the pooled Gram matrix in memory;
        ``"streamed"`` gives the same statistics and p-value for the
        uniform-weight estimators (kme, skmse, bkmse, ...) without it, from
        Gram tiles computed on the fly (memory ``O(N d + B N)``); ``"auto"``
        is ``"exact"`` while the Gram matrix takes at most a quarter of the
        available memory, else ``"streamed"`` (the report says which ran).
        ``"block"`` (the B-test of Zaremba et al., 2013: the mean of
        ``MMD^2_u`` over blocks of `block_size` consecutive points) and
        ``"linear"`` (``MMD^2_l`` of Gretton et al., 2012, Sec. 6, over
        disjoint pairs) are linear-time tests of a *different* statistic,
        with an asymptotic normal null (``method="normal"``) and lower power
        than the quadratic-time test: memory ``O(N d + b^2)``, time
        ``O(N b d)``; the KME only, samples of the same size, the data in
        random order; never chosen by ``"auto"``. ``"nystrom"`` and ``"rff"``
        test the MMD of a low-rank approximation ``phi(x)'phi(y)`` of the
        kernel (Nyström landmarks, any kernel; random Fourier features of the
        Gaussian, ARD and Laplacian kernels), drawn once from `rng` on the
        pooled sample: the permutation p-value is exact for this approximate
        statistic; memory ``O(N (d + r))``, ``2 N r`` flops per permutation;
        the KME and the uniform-weight estimators; never chosen by
        ``"auto"``.
    n_features : int, optional
        The number of features ``r`` of ``engine="nystrom"`` (landmarks,
        clipped to the number of points, with a note) or ``"rff"``
        (frequencies); default 200. An error with the other engines.
    block_size : int, optional
        The block size ``b`` of ``engine="block"`` (default
        ``floor(sqrt(n))``, as in Zaremba et al., 2013; from 2 to ``n // 2``).

    Returns
    -------
    TwoSampleResult
        With ``statistic``, ``pvalue``, ``null_distribution``, the settings
        and ``summary()``, ``summary_frame()``, ``conf_int()``.

    Raises
    ------
    ValueError
        NaN/inf in the data, different numbers of columns, fewer than 2
        observations per sample, constant data with the median heuristic,
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
    """
    from ._scale import LINEAR_TIME

    if isinstance(engine, str) and engine.lower() in LINEAR_TIME:
        from ._linear_time import linear_time_method

        meth: NullMethod = linear_time_method(engine.lower(), method, n_resamples=n_resamples,
                                              batch=batch, rng=rng, n_jobs=n_jobs,
                                              progress=progress)
    else:
        meth = resolve_method(method, n_resamples=n_resamples, batch=batch, rng=rng,
                              n_jobs=n_jobs, progress=progress)
    tuning_ = check_choice(tuning, "tuning", _TUNINGS)
    name = data_name or f"{data_label(x, 'x')} and {data_label(y, 'y')}"
    if isinstance(statistic, str) and statistic.lower() == "regularized":
        from ._regularized import regularized_two_sample

        if engine != "exact":
            raise ValueError("statistic='regularized' runs on engine='exact' (it needs the "
                             "eigendecomposition of the pooled Gram matrix).")

        return regularized_two_sample(x, y, resolve_kernel(kernel, bandwidth),
                                      resolve_estimator(estimator), meth, filter, lam,
                                      covariance, split_size, name)
    problem = _two_sample_iv(x, y, kernel, bandwidth, estimator, statistic)
    problem = _with_engine(problem, engine, n_features, block_size,
                           rng=getattr(meth, "rng", None))
    res = run_test(problem, meth, tuning_, name)
    assert isinstance(res, TwoSampleResult)
    return res


def _with_engine(problem: _TwoSample, engine: Any, n_features: Any,
                 block_size: Any = None, rng: Any = None) -> _TwoSample:
    """The problem on the engine `engine` names (``"auto"`` resolved, see kmtests._scale);
    `rng` is the test's (the low-rank engines draw their features from a child of it)."""
    from ._scale import LINEAR_TIME, LOW_RANK, check_n_features, choose_engine

    name, why = choose_engine(engine, "two_sample", problem.n,
                              isinstance(problem.estimator.rule(), Uniform))
    r = check_n_features(name, n_features)
    if block_size is not None and name != "block":
        raise ValueError(f"`block_size` applies to engine='block'; got engine={name!r}.")
    if name == "exact":
        return problem
    if problem.z is None:
        raise ValueError(f"engine={name!r} computes the kernel from the data; with "
                         "kernel='precomputed' the Gram matrix is given: use engine='exact'.")
    if name in LINEAR_TIME:
        from ._linear_time import linear_time_problem

        return linear_time_problem(problem, name, block_size, why)
    if name in LOW_RANK:
        from ._lowrank import lowrank_two_sample

        return lowrank_two_sample(problem, name, r, rng, why)
    from ._streamed import StreamedTwoSample

    return StreamedTwoSample(problem.kernel, problem.estimator, problem.unbiased, problem.z,
                             None, problem.n_x, problem.n_y, engine_note=why)
