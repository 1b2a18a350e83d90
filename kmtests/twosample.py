"""Kernel two-sample test (MMD) with a pluggable kernel mean estimator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from . import _resampling
from ._driver import (Options, PreparedRule, check_options, estimator_config, identity,
                      prepare_rule, run_permutation, scalar_params, scaled_gram,
                      statistic_name, timed_observed)
from ._gamma import mmd_gamma
from ._gram import CentredGram, check_symmetric
from ._guards import check_memory, format_bytes
from .engines import Values
from .engines.mmd import PooledGram, mmd_general, mmd_values
from ._typing import ArrayLike, SeedLike
from ._validation import as_sample, check_choice, check_same_dim
from .estimators import KernelMeanEstimator, resolve_estimator
from .estimators._rules import General, Uniform
from .kernels import Kernel, Precomputed, resolve_kernel
from .results import TwoSampleResult

__all__ = ["mmd", "two_sample_test"]

_STATISTICS = ("unbiased", "biased")


@dataclass(frozen=True)
class _Spec:
    """The validated inputs of a two-sample test (nothing computed yet)."""

    kernel: Kernel
    estimator: KernelMeanEstimator
    unbiased: bool
    z: np.ndarray | None          # the pooled data (None for a precomputed Gram matrix)
    K: np.ndarray | None          # the precomputed pooled Gram matrix
    n_x: int
    n_y: int


@dataclass(frozen=True)
class _Prepared:
    pg: PooledGram
    kernel: Kernel
    prep: PreparedRule
    kernel_note: str
    transform_params: dict[str, Any]


def _two_sample_iv(x: Any, y: Any, kernel: Any, bandwidth: Any, estimator: Any,
                   statistic: str | None) -> _Spec:
    kern = resolve_kernel(kernel, bandwidth)
    est = resolve_estimator(estimator)
    rule = est.rule()  # raises for estimators that cannot run inside a test
    if statistic is None:
        statistic = "unbiased" if isinstance(rule, Uniform) else "biased"
    unbiased = check_choice(statistic, "statistic", _STATISTICS) == "unbiased"
    if unbiased and not isinstance(rule, Uniform):
        raise ValueError(f"`statistic='unbiased'` is defined only for uniform-weight and "
                         f"marginalized estimators; use statistic='biased' (V-form) with "
                         f"{est.name!r}.")
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
        return _Spec(kern, est, unbiased, None, K, n_x, n_y)
    xa = as_sample(x, "x")
    ya = as_sample(y, "y")
    check_same_dim(xa, ya)
    return _Spec(kern, est, unbiased, np.vstack([xa, ya]), None, xa.shape[0], ya.shape[0])


def _check_memory(spec: _Spec, opts: Options | None) -> None:
    n = spec.n_x + spec.n_y
    need = 8.0 * n * n + 8.0 * n * (2 * 256 + 2 * 128)
    if opts is not None:
        need += 16.0 * opts.n_resamples + 8.0 * n * (opts.batch or 1)
        if opts.tuning == "pooled" and not isinstance(spec.estimator.rule(), Uniform):
            need += 3 * 8.0 * n * n  # the uncentred pooled Gram matrix and its eigenvectors
    check_memory(need, f"the {n} x {n} pooled Gram matrix takes {format_bytes(8.0 * n * n)}",
                 "Test a random subsample of each sample, or use a machine with more "
                 "memory.")


def _prepare(spec: _Spec, tuning: str) -> _Prepared:
    est, kern = spec.estimator, spec.kernel
    note, tparams = "", {}
    if spec.z is None:
        cg: CentredGram = kern.centred_gram(spec.K, name="x")
    else:
        kern = kern.fitted_to(spec.z, name="the pooled sample")
        tk = est.transform_kernel(kern, spec.z)
        if tk is None:
            cg = kern.centred_gram(spec.z, name="the pooled sample")
        else:
            c, infl, tparams = tk
            cg = scaled_gram(infl, spec.z, c, "the pooled sample")
            note = f"marginalized: {c:.4g} x {infl.describe()}"
    prep = prepare_rule(est, tuning, cg.full, transformed=bool(note))
    return _Prepared(PooledGram(cg), kern, prep, note, tparams)


def _observed(spec: _Spec, prepared: _Prepared, unbiased: bool,
              n_jobs: int | None) -> tuple[Values, dict[str, Any]]:
    """The observed statistic and the parameters the estimator chose on each sample."""
    ident = identity(spec.n_x + spec.n_y)
    rule = prepared.prep.rule
    if isinstance(rule, General):
        vals, params = mmd_general(prepared.pg, ident, spec.n_x, rule, n_jobs)
        return vals, {"x": params[0]["x"], "y": params[0]["y"]}
    vals = mmd_values(prepared.pg, ident, spec.n_x, rule, unbiased)
    if rule.fixed is not None:
        return vals, {}
    cg = prepared.pg.cg
    ix, iy = np.arange(spec.n_x), np.arange(spec.n_x, spec.n_x + spec.n_y)
    return vals, {"x": spec.estimator.weights(cg.block(ix))[1],
                  "y": spec.estimator.weights(cg.block(iy))[1]}


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
    tuning = check_choice(tuning, "tuning", ("permutation", "pooled"))
    spec = _two_sample_iv(x, y, kernel, bandwidth, estimator, statistic)
    _check_memory(spec, None)
    prepared = _prepare(spec, tuning)
    vals, _ = _observed(spec, prepared, spec.unbiased, None)
    value = float(vals.stat[0])
    from ._resampling import check_finite_statistic

    check_finite_statistic(value, None, "the MMD statistic")
    return value


def two_sample_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    kernel: Any = "gaussian",
    bandwidth: Any = "median",
    estimator: str | KernelMeanEstimator = "kme",
    statistic: Literal["unbiased", "biased"] | None = None,
    method: Literal["permutation", "gamma"] = "permutation",
    tuning: Literal["permutation", "pooled"] = "permutation",
    n_resamples: int = _resampling.DEFAULT_N_RESAMPLES,
    rng: SeedLike = None,
    batch: int | None = None,
    n_jobs: int | None = None,
    data_name: str | None = None,
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
        ``"unbiased"``: ``MMD^2_u``, within-sample diagonals excluded (default
        for the KME, the uniform shrinkage and the marginalized estimators);
        ``"biased"``: the V-statistic ``||mu_x - mu_y||^2`` of the estimated
        embeddings (default for the spectral estimators, the only choice
        there).
    method : {"permutation", "gamma"}
        Null distribution: permutations (default; exact level) or the gamma
        approximation of Gretton et al. (2009) for the biased statistic
        (approximate).
    tuning : {"permutation", "pooled"}
        How data-driven estimator parameters enter the permutation test:
        re-tuned on every permuted data set (``"permutation"``, default), or
        tuned once on a permutation-invariant function of the data and held
        fixed (``"pooled"``: the pooled sample). Both keep the test exact; the
        parameters of the observed split are never reused. Marginalized
        estimators tune their corruption variance on the pooled sample, which is
        permutation-invariant, so both settings give the same test. See
        :doc:`/estimators_in_tests`.
    n_resamples : int
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
        Threads for estimators evaluated permutation by permutation (a
        thread pool, one BLAS thread each; None: all CPUs, -1: all CPUs, or
        1 to the number of CPUs). The block sums of the KME and the uniform
        shrinkage estimators run in BLAS, whose threads are set by the BLAS
        library's environment variables. Results do not depend on `n_jobs`.
    data_name : str, optional
        Name of the data for the report (default ``"x and y"``).

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
    opts = check_options(method, tuning, n_resamples, batch, n_jobs, rng)
    spec = _two_sample_iv(x, y, kernel, bandwidth, estimator, statistic)
    est = spec.estimator
    if opts.method == "gamma":
        rule = est.rule()
        if spec.unbiased or not (isinstance(rule, Uniform) and rule.fixed == 1.0):
            raise ValueError("method='gamma' approximates the null of the biased KME statistic; "
                             "use statistic='biased' with estimator='kme', or "
                             "method='permutation'.")
    _check_memory(spec, opts)
    prepared = _prepare(spec, opts.tuning)
    rule = prepared.prep.rule
    n_x, n_y = spec.n_x, spec.n_y
    observed, obs_params = timed_observed(
        lambda: _observed(spec, prepared, spec.unbiased, opts.n_jobs), rule,
        opts.n_resamples, opts.n_jobs)
    stat_name = statistic_name("MMD^2_u" if spec.unbiased else "MMD^2_b", est)
    what = f"{stat_name} with {prepared.kernel.phrase()}"
    t_obs = float(observed.stat[0])
    common = _common_fields(spec, prepared, t_obs, stat_name, obs_params, opts.seed,
                            data_name)
    if opts.method == "gamma":
        _resampling.check_finite_statistic(t_obs, None, what)
        pval, details = mmd_gamma(prepared.pg.Kc, n_x, t_obs)
        return TwoSampleResult(pvalue=pval, null_distribution=None, method="gamma", exact=False,
                               n_resamples=None, count=None, details=details, **common)
    plan = _resampling.plan_two_sample(n_x, n_y, opts.n_resamples, opts.batch)
    null, pval, count = run_permutation(
        plan, opts, n_x + n_y, "split",
        lambda perms: mmd_values(prepared.pg, perms, n_x, rule, spec.unbiased, opts.n_jobs),
        observed, n_x, what)
    return TwoSampleResult(pvalue=pval, null_distribution=null, method="permutation",
                           exact=plan.exact, n_resamples=plan.n_resamples, count=count,
                           **common)


def _common_fields(spec: _Spec, prepared: _Prepared, observed: float, stat_name: str,
                   obs_params: dict[str, Any], seed: int | None,
                   data_name: str | None) -> dict[str, Any]:
    est = spec.estimator
    prep = prepared.prep
    params: dict[str, Any] = {}
    if prepared.transform_params:
        params.update(scalar_params(prepared.transform_params, ""))
    if prep.params:
        params.update(scalar_params(prep.params, " (pooled)"))
    for role in ("x", "y"):
        if role in obs_params:
            params.update(scalar_params(obs_params[role], f" ({role})"))
    if prep.note:
        params["note"] = prep.note
    est_params = {"label": est.label, **estimator_config(est), **params}
    kern = prepared.kernel
    bw = getattr(kern, "bandwidth", None)
    if isinstance(bw, np.ndarray):
        bw = bw.tolist()
    kdesc = kern.describe() + (f"; {prepared.kernel_note}" if prepared.kernel_note else "")
    return dict(
        statistic=observed,
        statistic_name=stat_name,
        estimator=est.name,
        estimator_params=est_params,
        tuning=prep.tuning,
        kernels={"kernel": kdesc},
        bandwidths={"kernel": bw},
        sizes={"n_x": spec.n_x, "n_y": spec.n_y},
        seed=seed,
        data_name=data_name or "x and y",
    )
