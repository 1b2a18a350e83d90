"""Kernel two-sample test (MMD) with a pluggable kernel mean estimator."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from . import _resampling
from ._gamma import mmd_gamma
from ._mmd_engine import PooledGram, mmd_statistics
from ._typing import ArrayLike, SeedLike
from ._validation import as_sample, check_choice, check_same_dim, check_test_options
from ._tuning import check_tuning, freeze, marginalize, scalar_params
from .estimators import KME, KernelMeanEstimator, resolve_estimator
from .estimators.marginalized import MarginalizedEstimator
from .kernels import Kernel, Precomputed, resolve_kernel
from .results import TwoSampleResult

__all__ = ["mmd", "two_sample_test"]

_STATISTICS = ("unbiased", "biased")
_METHODS = ("permutation", "gamma")


@dataclass(frozen=True)
class _TwoSampleInput:
    K: np.ndarray
    n_x: int
    n_y: int
    kernel: Kernel
    estimator: KernelMeanEstimator  # what the user asked for
    engine_estimator: KernelMeanEstimator  # what the permutation engine applies
    unbiased: bool
    tuning: str
    params: dict[str, Any]  # data-driven parameters, for the report
    kernel_note: str = ""
    z: np.ndarray | None = None  # the pooled data (None for a precomputed Gram)


def _statistic_name(base: str, est: KernelMeanEstimator) -> str:
    """``MMD^2_u`` for the KME; ``MMD^2_u[skmse]`` etc. when an estimator changes it."""
    return base if type(est) is KME else f"{base}[{est.name}]"


def _prepare(x: Any, y: Any, kernel: Any, bandwidth: Any, estimator: Any,
             statistic: str | None, tuning: str = "permutation") -> _TwoSampleInput:
    inp = _prepare_gram(x, y, kernel, bandwidth, estimator, statistic)
    tuning = check_tuning(tuning)
    est = inp.estimator
    if isinstance(est, MarginalizedEstimator):
        if isinstance(inp.kernel, Precomputed):
            raise ValueError(f"estimator {est.name!r} needs the data and a Gaussian kernel, "
                             "not kernel='precomputed'.")
        z = inp.z
        c, infl, params = marginalize(est, z, inp.kernel)
        note = f"marginalized: {c:.4g} x {infl.describe()}"
        return dataclasses.replace(inp, K=c * infl.gram(z), engine_estimator=KME(),
                                   tuning="pooled", params=scalar_params(params),
                                   kernel_note=note)
    if tuning == "pooled":
        _, params = est.weights(inp.K)
        return dataclasses.replace(inp, engine_estimator=freeze(est, params), tuning=tuning,
                                   params=scalar_params(params, " (pooled)"))
    K, n_x = inp.K, inp.n_x
    _, px = est.weights(K[:n_x, :n_x])
    _, py = est.weights(K[n_x:, n_x:])
    return dataclasses.replace(inp, tuning=tuning,
                               params={**scalar_params(px, " (x)"), **scalar_params(py, " (y)")})


def _prepare_gram(x: Any, y: Any, kernel: Any, bandwidth: Any, estimator: Any,
                  statistic: str | None) -> _TwoSampleInput:
    kern = resolve_kernel(kernel, bandwidth)
    est = resolve_estimator(estimator)
    marginal = isinstance(est, MarginalizedEstimator)
    if statistic is None:
        statistic = "unbiased" if (est.uniform or marginal) else "biased"
    unbiased = check_choice(statistic, "statistic", _STATISTICS) == "unbiased"
    if unbiased and not (est.uniform or marginal):
        raise ValueError(f"`statistic='unbiased'` is defined only for uniform-weight and "
                         f"marginalized estimators; use statistic='biased' (V-form) with "
                         f"{est.name!r}.")
    if isinstance(kern, Precomputed):
        K = as_sample(x, "x", min_size=4)
        if K.shape[0] != K.shape[1]:
            raise ValueError("with kernel='precomputed', `x` must be the square pooled Gram "
                             f"matrix; got shape {K.shape}.")
        if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * np.max(np.abs(K))):
            raise ValueError("with kernel='precomputed', `x` must be a symmetric Gram matrix.")
        if isinstance(y, (bool, np.bool_)) or not isinstance(y, (int, np.integer)):
            raise TypeError("with kernel='precomputed', `y` must be the integer size of the "
                            "first sample (its rows come first in `x`).")
        n_x = int(y)
        n_y = K.shape[0] - n_x
        if n_x < 2 or n_y < 2:
            raise ValueError("with kernel='precomputed', each sample must have at least 2 "
                             f"observations; got {n_x} and {n_y}.")
        return _TwoSampleInput(0.5 * (K + K.T), n_x, n_y, kern, est, est, unbiased,
                               "permutation", {})
    xa = as_sample(x, "x")
    ya = as_sample(y, "y")
    check_same_dim(xa, ya)
    z = np.vstack([xa, ya])
    kern = kern.fitted_to(z, name="the pooled sample")
    return _TwoSampleInput(kern.gram(z), xa.shape[0], ya.shape[0], kern, est, est, unbiased,
                           "permutation", {}, z=z)


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
    inp = _prepare(x, y, kernel, bandwidth, estimator, statistic, tuning)
    pg = PooledGram.from_gram(inp.K)
    ident = np.arange(inp.n_x + inp.n_y, dtype=np.int64)[None, :]
    return float(mmd_statistics(pg, ident, inp.n_x, inp.engine_estimator, inp.unbiased)[0])


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
        Threads for the jitted loops (None: numba's default, -1: all).
        The permuted MMD itself runs in BLAS, whose threads are set by the
        BLAS library's environment variables.
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
        observations per sample, a zero median bandwidth (constant data),
        unknown kernel/estimator/statistic/method names, non-positive
        bandwidth or `n_resamples`.
    TypeError
        Non-numeric data or wrongly typed options.

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
    inp = _prepare(x, y, kernel, bandwidth, estimator, statistic, tuning)
    method, n_resamples, batch, seed, gen = check_test_options(
        method, _METHODS, n_resamples, batch, n_jobs, rng)
    n_x, n_y = inp.n_x, inp.n_y
    pg = PooledGram.from_gram(inp.K)
    ident = np.arange(n_x + n_y, dtype=np.int64)[None, :]
    observed = float(mmd_statistics(pg, ident, n_x, inp.engine_estimator, inp.unbiased)[0])
    common = _common_fields(inp, observed, seed, data_name)
    if method == "gamma":
        if inp.unbiased or inp.engine_estimator.name != "kme":
            raise ValueError("method='gamma' approximates the null of the biased KME statistic; "
                             "use statistic='biased' with estimator='kme', or "
                             "method='permutation'.")
        pval, details = mmd_gamma(inp.K, n_x, observed)
        return TwoSampleResult(pvalue=pval, null_distribution=None, method="gamma", exact=False,
                               n_resamples=None, count=None, details=details, **common)
    plan = _resampling.plan_two_sample(n_x, n_y, n_resamples, batch)
    null, pval, count = _resampling.permutation_null(
        plan, gen, n_x + n_y, "split",
        lambda perms: mmd_statistics(pg, perms, n_x, inp.engine_estimator, inp.unbiased),
        observed, pg.scale, n_x)
    return TwoSampleResult(pvalue=pval, null_distribution=null, method="permutation",
                           exact=plan.exact, n_resamples=plan.n_resamples, count=count,
                           **common)


def _config(est: KernelMeanEstimator) -> dict[str, Any]:
    """The estimator's configuration values that were set (not None), for reports."""
    return {k: v for k, v in est.get_params().items()
            if v is not None and isinstance(v, (int, float, str, bool))
            and k not in ("target_points", "target_weights")}


def _common_fields(inp: _TwoSampleInput, observed: float, seed: int | None,
                   data_name: str | None) -> dict[str, Any]:
    est_params = {"label": inp.estimator.label, **_config(inp.estimator), **inp.params}
    bw = getattr(inp.kernel, "bandwidth", None)
    if isinstance(bw, np.ndarray):
        bw = bw.tolist()
    kdesc = inp.kernel.describe() + (f"; {inp.kernel_note}" if inp.kernel_note else "")
    return dict(
        statistic=observed,
        statistic_name=_statistic_name("MMD^2_u" if inp.unbiased else "MMD^2_b", inp.estimator),
        estimator=inp.estimator.name,
        estimator_params=est_params,
        tuning=inp.tuning,
        kernels={"kernel": kdesc},
        bandwidths={"kernel": bw},
        sizes={"n_x": inp.n_x, "n_y": inp.n_y},
        seed=seed,
        data_name=data_name or "x and y",
    )
