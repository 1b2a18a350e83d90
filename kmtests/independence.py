"""Kernel independence test (HSIC) with a pluggable kernel mean estimator."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from . import _resampling
from ._driver import (Prepared, data_label, identity, prepare_rule, reportable, run_test,
                      scaled_gram, statistic_name)
from ._gamma import hsic_gamma
from ._gram import CentredGram, check_symmetric
from ._guards import format_bytes
from ._typing import ArrayLike, SeedLike
from ._validation import as_sample, check_choice
from .engines import Values
from .engines._threads import numba_threads
from .engines.hsic import PairedGrams, hsic_general, hsic_values
from .estimators import KernelMeanEstimator, resolve_estimator
from .estimators._rules import General, Uniform
from .kernels import Kernel, Precomputed, resolve_kernel
from .null import GammaMethod, NullMethod, PermutationMethod, resolve_method
from .results import IndependenceResult

__all__ = ["hsic", "independence_test"]

_STATISTICS = ("biased", "unbiased")
_TUNINGS = ("permutation", "pooled")


@dataclass(frozen=True)
class _Variable:
    kernel: Kernel
    data: np.ndarray | None   # None when the Gram matrix was given
    K: np.ndarray | None      # the precomputed Gram matrix


def _orient(Kc: np.ndarray, Lc: np.ndarray) -> PairedGrams:
    """The pair in a canonical order (:meth:`PairedGrams.oriented`)."""
    return PairedGrams.oriented(Kc, Lc)


def expected_cose_gram(Kc: np.ndarray, Lc: np.ndarray) -> np.ndarray:
    """``E_pi[Kc o Lc[pi][:, pi]]`` over uniform permutations pi (marginals only).

    For centred ``Lc`` the average of ``Lc_pi`` is ``tr(Lc)/(n-1) H``, so the
    result is ``tr(Lc)/(n-1) Kc o H``.
    """
    n = Kc.shape[0]
    t = float(np.trace(Lc))
    G = Kc * (-t / (n * (n - 1)))
    G[np.diag_indices(n)] = np.diag(Kc) * (t / n)
    return G


def symmetric_cose_gram(Kc: np.ndarray, Lc: np.ndarray) -> np.ndarray:
    """The permutation-invariant Gram matrix of ``tuning="pooled"`` for HSIC.

    The average of :func:`expected_cose_gram` over the two directions
    (permuting y against x, and x against y): a function of the marginals,
    symmetric in the two variables.
    """
    return 0.5 * (expected_cose_gram(Kc, Lc) + expected_cose_gram(Lc, Kc))


@dataclass
class _Independence:
    """A validated independence test (a :class:`kmtests._driver.Problem`)."""

    x: _Variable
    y: _Variable
    estimator: KernelMeanEstimator
    unbiased: bool
    n: int
    kind: str = "perm"
    n_x: int = 0
    result_class: type[IndependenceResult] = IndependenceResult
    sizes: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sizes = {"n": self.n}

    def statistic_name(self) -> str:
        return statistic_name("HSIC_u" if self.unbiased else "HSIC_b", self.estimator)

    def memory(self, method: NullMethod, tuning: str) -> tuple[float, str, str]:
        n = self.n
        need = 2 * 8.0 * n * n + 8.0 * n * 2 * 256
        if isinstance(method, PermutationMethod):
            need += 16.0 * method.n_resamples + 8.0 * n * (method.batch or 1)
        if not isinstance(self.estimator.rule(), Uniform):
            import os

            need += 2 * 8.0 * n * n * (os.cpu_count() or 1)  # per-thread cross Gram + weights
        return (need, f"two {n} x {n} Gram matrices take {format_bytes(16.0 * n * n)}",
                "Test a random subsample of the pairs, or use a machine with more memory.")

    def check_gamma(self) -> None:
        rule = self.estimator.rule()
        if self.unbiased or not (isinstance(rule, Uniform) and rule.fixed == 1.0):
            raise ValueError("method='gamma' approximates the null of HSIC_b with the KME; use "
                             "statistic='biased', estimator='kme', or method='permutation'.")
        if self.n < 6:
            raise ValueError(f"method='gamma' needs at least 6 observations; got {self.n}.")

    def plan(self, method: PermutationMethod) -> _resampling.PermutationPlan:
        return _resampling.plan_independence(self.n, method.n_resamples, method.batch)

    def _gram(self, v: _Variable, name: str) -> tuple[CentredGram, Kernel, str, dict[str, Any]]:
        est = self.estimator
        if v.data is None:
            assert v.K is not None
            return v.kernel.centred_gram(v.K, name=name), v.kernel, "", {}
        kern = v.kernel.fitted_to(v.data, name=name)
        tk = est.transform_kernel(kern, v.data)  # tuned on this variable alone: invariant
        if tk is None:
            return kern.centred_gram(v.data, name=name), kern, "", {}
        c, infl, params = tk
        return (scaled_gram(infl, v.data, c, name), kern,
                f"marginalized: {c:.4g} x {infl.describe()}", params)

    def prepare(self, tuning: str) -> Prepared:
        est = self.estimator
        cgx, kx, note_x, px = self._gram(self.x, "x")
        cgy, ky, note_y, py = self._gram(self.y, "y")
        pg = _orient(cgx.Kc, cgy.Kc)
        prep = prepare_rule(est, tuning, lambda: symmetric_cose_gram(pg.Kc, pg.Lc),
                            transformed=bool(note_x or note_y))
        rule, unbiased = prep.rule, self.unbiased
        params = {role: reportable(p) for role, p in (("x", px), ("y", py)) if p}
        if prep.params:
            params["pooled"] = reportable(prep.params)

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            with numba_threads(n_jobs):
                return hsic_values(pg, perms, rule, unbiased, n_jobs)

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            ident = identity(self.n)
            if isinstance(rule, General):
                vals, ps = hsic_general(pg, ident, rule, n_jobs, unbiased)
                return vals, ({} if prep.tuning == "pooled" else {"observed": ps[0]})
            vals = values(ident, n_jobs)
            if rule.fixed is not None:
                return vals, {}
            return vals, {"observed": est.weights(pg.Kc * pg.Lc)[1]}

        kernels = {"x": kx, "y": ky}
        return Prepared(
            values=values, observed=observed,
            gamma=lambda t, moments: hsic_gamma(pg.Kc, pg.Lc, t, moments),
            prep=prep, kernels=kernels, kernel_notes={"x": note_x, "y": note_y},
            params=params,
            what=(f"{self.statistic_name()} with {kx.phrase()} on x and {ky.phrase()} on y"))


def _variable_iv(data: Any, kernel: Any, bandwidth: Any, name: str) -> _Variable:
    kern = resolve_kernel(kernel, bandwidth, name=f"kernel_{name}",
                          bandwidth_name=f"bandwidth_{name}")
    if isinstance(kern, Precomputed):
        K = as_sample(data, name, min_size=2)
        if K.shape[0] != K.shape[1]:
            raise ValueError(f"with kernel_{name}='precomputed', `{name}` must be a square "
                             f"symmetric Gram matrix; got shape {K.shape}.")
        K = check_symmetric(K, f"with kernel_{name}='precomputed', `{name}`")
        return _Variable(kern, None, K)
    return _Variable(kern, as_sample(data, name), None)


def _independence_iv(x: Any, y: Any, kernel_x: Any, kernel_y: Any, bandwidth_x: Any,
                     bandwidth_y: Any, estimator: Any, statistic: str) -> _Independence:
    unbiased = check_choice(statistic, "statistic", _STATISTICS) == "unbiased"
    est = resolve_estimator(estimator)
    est.rule()  # raises for estimators that cannot run inside a test
    vx = _variable_iv(x, kernel_x, bandwidth_x, "x")
    vy = _variable_iv(y, kernel_y, bandwidth_y, "y")
    nx = (vx.K if vx.data is None else vx.data).shape[0]  # type: ignore[union-attr]
    ny = (vy.K if vy.data is None else vy.data).shape[0]  # type: ignore[union-attr]
    if nx != ny:
        raise ValueError("`x` and `y` must have the same number of observations (paired "
                         f"data); got {nx} and {ny}.")
    if unbiased and nx < 5:
        raise ValueError(f"statistic='unbiased' needs at least 5 observations; got {nx}.")
    for v, name in ((vx, "x"), (vy, "y")):
        if v.data is None:
            try:
                est.transform_kernel(v.kernel, None)
            except ValueError as exc:
                raise ValueError(str(exc).replace("kernel='precomputed'",
                                                  f"kernel_{name}='precomputed'")) from None
    return _Independence(vx, vy, est, unbiased, nx)


def hsic(x: ArrayLike, y: ArrayLike, *, kernel_x: Any = "gaussian", kernel_y: Any = "gaussian",
         bandwidth_x: Any = "median", bandwidth_y: Any = "median",
         estimator: str | KernelMeanEstimator = "kme",
         statistic: Literal["biased", "unbiased"] = "biased",
         tuning: Literal["permutation", "pooled"] = "permutation") -> float:
    """Hilbert-Schmidt independence criterion of paired samples.

    Parameters are as in :func:`independence_test`.

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
    tuning_ = check_choice(tuning, "tuning", _TUNINGS)
    problem = _independence_iv(x, y, kernel_x, kernel_y, bandwidth_x, bandwidth_y, estimator,
                               statistic)
    from ._guards import check_memory

    check_memory(*problem.memory(GammaMethod(), tuning_))
    prepared = problem.prepare(tuning_)
    value = float(prepared.observed(None)[0].stat[0])
    _resampling.check_finite_statistic(value, None, prepared.what)
    return value


def independence_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    kernel_x: Any = "gaussian",
    kernel_y: Any = "gaussian",
    bandwidth_x: Any = "median",
    bandwidth_y: Any = "median",
    estimator: str | KernelMeanEstimator = "kme",
    statistic: Literal["biased", "unbiased", "regularized"] = "biased",
    method: Literal["permutation", "gamma"] | NullMethod = "permutation",
    tuning: Literal["permutation", "pooled"] = "permutation",
    n_resamples: int | None = None,
    rng: SeedLike = None,
    batch: int | None = None,
    n_jobs: int | None = None,
    progress: bool | None = None,
    data_name: str | None = None,
    filter: str = "tikhonov",
    lam: Any = "auto",
    engine: str = "exact",
    n_features: int | None = None,
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
        Second variable, paired with `x` row by row. With
        ``kernel_y="precomputed"``: its n x n Gram matrix.
    kernel_x, kernel_y : str, Kernel or callable
        Kernels on each variable (see :func:`two_sample_test`).
    bandwidth_x, bandwidth_y : "median" or float
        Bandwidths; ``"median"`` is the median heuristic on each variable
        separately (permutation-invariant).
    estimator : str or KernelMeanEstimator
        Estimator of the cross-covariance embedding; ``"kme"`` (default) gives
        the classical HSIC.
    statistic : {"biased", "unbiased"}
        ``"biased"`` (default): the V-form, ``HSIC_b = tr(HKH HLH) / n^2`` for
        the KME; ``"unbiased"``: the U-form, ``HSIC_u`` of Song et al. (2012)
        for the KME and its generalisation to weighted embeddings (diagonal
        terms dropped; ``c^2 HSIC_u`` for uniform weights ``c/n``), n >= 5.
        See :doc:`/estimators_in_tests`. ``"regularized"``: the normalised
        cross-covariance (HSNIC/NOCCO, Fukumizu et al., 2008)
        ``tr(R_x R_y)``, ``R = Kc (Kc + n lam I)^{-1}`` for the Tikhonov
        filter, with the KME; configured by `filter` and `lam` (see
        :func:`kmtests.two_sample_test` and :doc:`/user_guide/regularized`).
    method : {"permutation", "gamma"} or PermutationMethod or GammaMethod
        Null distribution: permutations (default, exact level) or the gamma
        approximation of Gretton et al. (2008) for ``HSIC_b`` (approximate);
        an object configures it (:mod:`kmtests.null`).
    tuning : {"permutation", "pooled"}
        How data-driven estimator parameters enter the permutation test:
        re-tuned on every permuted data set (``"permutation"``, default), or
        tuned once on a permutation-invariant function of the data and held
        fixed (``"pooled"``: the permutation-averaged cross-covariance Gram, a function of the marginals). Both keep the test exact; the
        parameters of the observed split are never reused. Marginalized
        estimators tune their corruption variance on each variable, which is
        permutation-invariant, so both settings give the same test. See
        :doc:`/estimators_in_tests`.
    n_resamples : int, optional
        Number of random permutations (default 9999); when ``n!`` is not
        larger, all permutations are enumerated (exact p-value).
    rng : None, int, SeedSequence or Generator
        Source of the permutations; a fixed value gives bit-identical
        p-values whatever `batch` and `n_jobs` are.
    batch : int, optional
        Permutations processed per step (memory ``O(n^2 + batch n)``).
    n_jobs : int, optional
        Threads (None or -1: all CPUs, or 1 to the number of CPUs): the
        numba loop of the KME and uniform estimators, or the thread pool (one
        BLAS thread each) of estimators evaluated permutation by permutation.
        Results do not depend on `n_jobs`.
    progress : bool, optional
        Show a progress bar (needs tqdm). None (default): only when the
        null distribution is expected to take more than a few seconds.
    data_name : str, optional
        Name of the data for the report. Default: ``"x and y"``, or the
        names of pandas Series / the columns of pandas DataFrames.
    filter, lam
        The spectral filter and its parameter (one value, a grid, or
        ``"auto"``, aggregated with exact level) of ``statistic="regularized"``;
        as in :func:`kmtests.two_sample_test`, with the same lambda for both
        variables.
    engine : {"exact", "auto", "nystrom", "rff"}
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
        features and that the statistic is approximate).
    n_features : int, optional
        The number of features ``r`` per variable of ``engine="nystrom"``
        (landmarks, clipped to n) or ``"rff"``; default 200. An error with the
        other engines.

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
    """
    meth = resolve_method(method, n_resamples=n_resamples, batch=batch, rng=rng, n_jobs=n_jobs,
                          progress=progress)
    tuning_ = check_choice(tuning, "tuning", _TUNINGS)
    name = data_name or f"{data_label(x, 'x')} and {data_label(y, 'y')}"
    if isinstance(statistic, str) and statistic.lower() == "regularized":
        from ._regularized import regularized_independence

        if engine != "exact":
            raise ValueError("statistic='regularized' runs on engine='exact' (it needs the "
                             "eigendecompositions of the Gram matrices).")

        return regularized_independence(
            x, y, resolve_kernel(kernel_x, bandwidth_x, name="kernel_x",
                                 bandwidth_name="bandwidth_x"),
            resolve_kernel(kernel_y, bandwidth_y, name="kernel_y", bandwidth_name="bandwidth_y"),
            resolve_estimator(estimator), meth, filter, lam, name)
    problem = _independence_iv(x, y, kernel_x, kernel_y, bandwidth_x, bandwidth_y, estimator,
                               statistic)
    problem = _with_engine(problem, engine, n_features, rng=getattr(meth, "rng", None))
    res = run_test(problem, meth, tuning_, name)
    assert isinstance(res, IndependenceResult)
    return res


def _with_engine(problem: _Independence, engine: Any, n_features: Any,
                 rng: Any = None) -> _Independence:
    """The problem on the engine `engine` names (``"auto"`` resolved, see kmtests._scale);
    `rng` is the test's (the low-rank engines draw their features from a child of it)."""
    from ._scale import LOW_RANK, check_n_features, choose_engine

    name, why = choose_engine(engine, "independence", problem.n,
                              isinstance(problem.estimator.rule(), Uniform))
    r = check_n_features(name, n_features)
    if name in LOW_RANK:
        from ._lowrank import lowrank_independence

        return lowrank_independence(problem, name, r, rng, why)
    return problem
