"""Kernel independence test (HSIC) with a pluggable kernel mean estimator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from . import _resampling
from ._driver import (Options, PreparedRule, check_options, estimator_config, identity,
                      prepare_rule, run_permutation, scalar_params, scaled_gram,
                      statistic_name, timed_observed)
from ._gamma import hsic_gamma
from ._gram import CentredGram, check_symmetric
from ._guards import check_memory, format_bytes
from .engines.hsic import PairedGrams, hsic_values
from .engines._threads import numba_threads
from ._typing import ArrayLike, SeedLike
from ._validation import as_sample, check_choice
from .estimators import KernelMeanEstimator, resolve_estimator
from .estimators._rules import General, Uniform
from .kernels import Kernel, Precomputed, resolve_kernel
from .results import IndependenceResult

__all__ = ["hsic", "independence_test"]

_STATISTICS = ("biased", "unbiased")


@dataclass(frozen=True)
class _Variable:
    kernel: Kernel
    data: np.ndarray | None   # None when the Gram matrix was given
    K: np.ndarray | None      # the precomputed Gram matrix


@dataclass(frozen=True)
class _Spec:
    x: _Variable
    y: _Variable
    estimator: KernelMeanEstimator
    unbiased: bool
    n: int


@dataclass(frozen=True)
class _Prepared:
    pg: PairedGrams            # in canonical order (see _orient)
    kernels: dict[str, Kernel]
    notes: dict[str, str]
    transform_params: dict[str, dict[str, Any]]
    prep: PreparedRule


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
                     bandwidth_y: Any, estimator: Any, statistic: str) -> _Spec:
    unbiased = check_choice(statistic, "statistic", _STATISTICS) == "unbiased"
    est = resolve_estimator(estimator)
    rule = est.rule()
    vx = _variable_iv(x, kernel_x, bandwidth_x, "x")
    vy = _variable_iv(y, kernel_y, bandwidth_y, "y")
    nx = (vx.K if vx.data is None else vx.data).shape[0]
    ny = (vy.K if vy.data is None else vy.data).shape[0]
    if nx != ny:
        raise ValueError("`x` and `y` must have the same number of observations (paired "
                         f"data); got {nx} and {ny}.")
    if unbiased and nx < 5:
        raise ValueError(f"statistic='unbiased' needs at least 5 observations; got {nx}.")
    if unbiased and not isinstance(rule, Uniform):
        raise ValueError("statistic='unbiased' is available with uniform-weight and "
                         "marginalized estimators only; use statistic='biased' for "
                         f"{est.name!r}.")
    for v, name in ((vx, "x"), (vy, "y")):
        if v.data is None:
            try:
                est.transform_kernel(v.kernel, None)
            except ValueError as exc:
                raise ValueError(str(exc).replace("kernel='precomputed'",
                                                  f"kernel_{name}='precomputed'")) from None
    return _Spec(vx, vy, est, unbiased, nx)


def _check_memory(spec: _Spec, opts: Options | None) -> None:
    n = spec.n
    need = 2 * 8.0 * n * n + 8.0 * n * 2 * 256
    if opts is not None:
        need += 16.0 * opts.n_resamples + 8.0 * n * (opts.batch or 1)
        if not isinstance(spec.estimator.rule(), Uniform):
            import os

            need += 2 * 8.0 * n * n * (os.cpu_count() or 1)  # per-thread cross Gram + weights
    check_memory(need, f"two {n} x {n} Gram matrices take {format_bytes(16.0 * n * n)}",
                 "Test a random subsample of the pairs, or use a machine with more memory.")


def _gram(v: _Variable, est: KernelMeanEstimator, name: str
          ) -> tuple[CentredGram, Kernel, str, dict[str, Any]]:
    if v.data is None:
        return v.kernel.centred_gram(v.K, name=name), v.kernel, "", {}
    kern = v.kernel.fitted_to(v.data, name=name)
    tk = est.transform_kernel(kern, v.data)  # tuned on this variable alone: invariant
    if tk is None:
        return kern.centred_gram(v.data, name=name), kern, "", {}
    c, infl, params = tk
    return (scaled_gram(infl, v.data, c, name), kern,
            f"marginalized: {c:.4g} x {infl.describe()}", params)


def _key(M: np.ndarray) -> tuple[float, float, float]:
    return (float(np.sum(M * M)), float(np.trace(M)), float(np.sum(np.abs(M))))


def _orient(Kc: np.ndarray, Lc: np.ndarray) -> PairedGrams:
    """The pair in a canonical order, so the test does not depend on argument order.

    The statistics are symmetric in the two matrices, and permuting the rows
    of one variable or of the other gives the same null distribution; putting
    the pair in an order fixed by the matrices themselves makes the Monte Carlo
    p-value, for a given seed, identical too.
    """
    return PairedGrams(Lc, Kc) if _key(Lc) < _key(Kc) else PairedGrams(Kc, Lc)


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


def _prepare(spec: _Spec, tuning: str) -> _Prepared:
    est = spec.estimator
    cgx, kx, note_x, px = _gram(spec.x, est, "x")
    cgy, ky, note_y, py = _gram(spec.y, est, "y")
    pg = _orient(cgx.Kc, cgy.Kc)
    transformed = bool(note_x or note_y)
    prep = prepare_rule(est, tuning, lambda: symmetric_cose_gram(pg.Kc, pg.Lc), transformed)
    return _Prepared(pg, {"x": kx, "y": ky}, {"x": note_x, "y": note_y},
                     {"x": px, "y": py}, prep)


def _observed(spec: _Spec, prepared: _Prepared, n_jobs: int | None
              ) -> tuple[Any, dict[str, Any]]:
    pg, rule = prepared.pg, prepared.prep.rule
    with numba_threads(n_jobs):
        vals = hsic_values(pg, identity(spec.n), rule, spec.unbiased, n_jobs)
    params: dict[str, Any] = {}
    if prepared.prep.tuning == "permutation" and not (isinstance(rule, Uniform)
                                                      and rule.fixed is not None):
        params = spec.estimator.weights(pg.Kc * pg.Lc)[1]
    return vals, params


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
    tuning = check_choice(tuning, "tuning", ("permutation", "pooled"))
    spec = _independence_iv(x, y, kernel_x, kernel_y, bandwidth_x, bandwidth_y, estimator,
                            statistic)
    _check_memory(spec, None)
    prepared = _prepare(spec, tuning)
    vals, _ = _observed(spec, prepared, None)
    value = float(vals.stat[0])
    _resampling.check_finite_statistic(value, None, "the HSIC statistic")
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
    statistic: Literal["biased", "unbiased"] = "biased",
    method: Literal["permutation", "gamma"] = "permutation",
    tuning: Literal["permutation", "pooled"] = "permutation",
    n_resamples: int = _resampling.DEFAULT_N_RESAMPLES,
    rng: SeedLike = None,
    batch: int | None = None,
    n_jobs: int | None = None,
    data_name: str | None = None,
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
        ``"biased"`` (default): the V-statistic ``HSIC_b = tr(HKH HLH) / n^2``;
        ``"unbiased"``: ``HSIC_u`` of Song et al. (2012) (KME and the
        marginalized estimators, n >= 5).
    method : {"permutation", "gamma"}
        Null distribution: permutations (default, exact level) or the gamma
        approximation of Gretton et al. (2008) for ``HSIC_b`` (approximate).
    tuning : {"permutation", "pooled"}
        How data-driven estimator parameters enter the permutation test:
        re-tuned on every permuted data set (``"permutation"``, default), or
        tuned once on a permutation-invariant function of the data and held
        fixed (``"pooled"``: the permutation-averaged cross-covariance Gram, a function of the marginals). Both keep the test exact; the
        parameters of the observed split are never reused. Marginalized
        estimators tune their corruption variance on each variable, which is
        permutation-invariant, so both settings give the same test. See
        :doc:`/estimators_in_tests`.
    n_resamples : int
        Number of random permutations (default 9999); when ``n!`` is not
        larger, all permutations are enumerated (exact p-value).
    rng : None, int, SeedSequence or Generator
        Source of the permutations; a fixed value gives bit-identical
        p-values whatever `batch` and `n_jobs` are.
    batch : int, optional
        Permutations processed per step (memory ``O(n^2 + batch n)``).
    n_jobs : int, optional
        Threads for the permutation loops (None or -1: all CPUs, or 1 to the
        number of CPUs): the numba loop of the KME and uniform estimators and
        the thread pool (one BLAS thread each) of estimators evaluated
        permutation by permutation. Results do not depend on `n_jobs`.
    data_name : str, optional
        Name of the data for the report (default ``"x and y"``).

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
    opts = check_options(method, tuning, n_resamples, batch, n_jobs, rng)
    spec = _independence_iv(x, y, kernel_x, kernel_y, bandwidth_x, bandwidth_y, estimator,
                            statistic)
    est = spec.estimator
    n = spec.n
    if opts.method == "gamma":
        rule = est.rule()
        if spec.unbiased or not (isinstance(rule, Uniform) and rule.fixed == 1.0):
            raise ValueError("method='gamma' approximates the null of HSIC_b with the KME; use "
                             "statistic='biased', estimator='kme', or method='permutation'.")
        if n < 6:
            raise ValueError(f"method='gamma' needs at least 6 observations; got {n}.")
    _check_memory(spec, opts)
    prepared = _prepare(spec, opts.tuning)
    rule = prepared.prep.rule
    observed, obs_params = timed_observed(lambda: _observed(spec, prepared, opts.n_jobs), rule,
                                          opts.n_resamples, opts.n_jobs)
    t_obs = float(observed.stat[0])
    stat_name = statistic_name("HSIC_u" if spec.unbiased else "HSIC_b", est)
    what = (f"{stat_name} with {prepared.kernels['x'].phrase()} on x and "
            f"{prepared.kernels['y'].phrase()} on y")
    common = _common_fields(spec, prepared, t_obs, stat_name, obs_params, opts.seed,
                            data_name)
    pg = prepared.pg
    if opts.method == "gamma":
        _resampling.check_finite_statistic(t_obs, None, what)
        pval, details = hsic_gamma(pg.Kc, pg.Lc, t_obs)
        return IndependenceResult(pvalue=pval, null_distribution=None, method="gamma",
                                  exact=False, n_resamples=None, count=None, details=details,
                                  **common)
    plan = _resampling.plan_independence(n, opts.n_resamples, opts.batch)
    with numba_threads(opts.n_jobs):
        null, pval, count = run_permutation(
            plan, opts, n, "perm",
            lambda perms: hsic_values(pg, perms, rule, spec.unbiased, opts.n_jobs),
            observed, 0, what)
    return IndependenceResult(pvalue=pval, null_distribution=null, method="permutation",
                              exact=plan.exact, n_resamples=plan.n_resamples, count=count,
                              **common)


def _common_fields(spec: _Spec, prepared: _Prepared, observed: float, stat_name: str,
                   obs_params: dict[str, Any], seed: int | None,
                   data_name: str | None) -> dict[str, Any]:
    est = spec.estimator
    prep = prepared.prep
    params: dict[str, Any] = {}
    for role in ("x", "y"):
        params.update(scalar_params(prepared.transform_params[role], f" ({role})"))
    if prep.params:
        params.update(scalar_params(prep.params, " (pooled)"))
    if obs_params:
        params.update(scalar_params(obs_params, " (observed)"))
    if prep.note:
        params["note"] = prep.note

    def bw(k: Kernel) -> Any:
        b = getattr(k, "bandwidth", None)
        return b.tolist() if isinstance(b, np.ndarray) else b

    kernels = prepared.kernels
    return dict(
        statistic=observed,
        statistic_name=stat_name,
        estimator=est.name,
        estimator_params={"label": est.label, **estimator_config(est), **params},
        tuning=prep.tuning,
        kernels={r: k.describe() + (f"; {prepared.notes[r]}" if prepared.notes.get(r) else "")
                 for r, k in kernels.items()},
        bandwidths={r: bw(k) for r, k in kernels.items()},
        sizes={"n": spec.n},
        seed=seed,
        data_name=data_name or "x and y",
    )
