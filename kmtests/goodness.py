"""Kernel goodness-of-fit test (kernel Stein discrepancy): does a sample come from a model
known up to its normalising constant? The face.

:func:`goodness_of_fit_test` is a signature and a docstring: the plan
(:mod:`kmtests._plan`) maps its keywords to the one-sample problem
(:mod:`kmtests.problems.onesample`: the sample and the model's score), the statistic
(:mod:`kmtests.statistics.ksd`), the in-memory engine and a null method (the wild
bootstrap, or fresh samples of the model), and runs them once.
"""

from __future__ import annotations

from typing import Any, Literal

from . import _plan
from ._docs import shared_docs
from ._typing import ArrayLike, SeedLike
from .estimators import KernelMeanEstimator
from .null import NullMethod
from .problems.onesample import OneSampleProblem
from .results import GoodnessOfFitResult

__all__ = ["goodness_of_fit_test"]


@_plan.face(OneSampleProblem)
@shared_docs
def goodness_of_fit_test(
    x: ArrayLike,
    *,
    score: Any = None,
    model: Any = None,
    kernel: Any = "imq",
    bandwidth: Any = "median",
    estimator: str | KernelMeanEstimator = "kme",
    statistic: Literal["unbiased", "biased", "ksdagg", "fssd"] | None = None,
    levels: tuple[int, int] | None = None,
    grid: Any = None,
    weights: Any = None,
    n_locations: int | None = None,
    split_size: int | None = None,
    method: Literal["wild", "monte_carlo", "chi2"] | NullMethod | None = None,
    n_resamples: int | None = None, rng: SeedLike = None, batch: int | None = None,
    n_jobs: int | None = None, progress: bool | None = None,
    data_name: str | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0,
) -> GoodnessOfFitResult:
    r"""Kernel goodness-of-fit test: is `x` a sample of the model?

    The statistic is the kernel Stein discrepancy ``KSD^2`` between the sample and
    the model (:mod:`kmtests.statistics.ksd`): it needs the model only through its
    score ``grad log p`` (the normalising constant cancels), so it tests a Bayesian
    posterior or an energy-based model as readily as a named law.

    Parameters
    ----------
    x : array_like, shape (n, d) or (n,)
        The sample (a 1-D array is one column).
    score : callable or array_like, optional
        The model's score ``d log p / dx``: a function of the points (an ``(n, d)``
        array, or ``(n,)`` for one column) returning an array of their shape, or
        its values at the points. Give `score` or `model`.
    model : frozen scipy.stats distribution, optional
        The model as a distribution (e.g. ``scipy.stats.norm(0, 1)``,
        ``multivariate_normal(mean, cov)``): its score (analytic for the normal
        laws, else the derivative of ``logpdf``) and its sampler (``rvs``, for
        ``method="monte_carlo"``).
    kernel : {"imq", "gaussian", "matern32", "matern52"} or Kernel
        The kernel of the Stein discrepancy: the inverse multiquadric
        ``(1 + ||x - y||^2 / h^2)^(-1/2)`` (default, as KSDAgg), the Gaussian, or
        the Matérn kernels of smoothness 3/2 and 5/2 (``r = ||x - y||``:
        ``(1 + sqrt(3) r / h) exp(-sqrt(3) r / h)`` and
        ``(1 + sqrt(5) r / h + 5 r^2 / (3 h^2)) exp(-sqrt(5) r / h)``).
    bandwidth : "median" or float
        Its bandwidth ``h``: the median heuristic on the sample (default) or a value.
    statistic : {"unbiased", "biased", "ksdagg", "fssd"}, optional
        The U-form ``KSD^2_u`` (default), the V-form ``KSD^2_b``, KSDAgg
        (Schrab, Guedj & Gretton, 2022): the U-form over a collection of
        bandwidths, all computed on the same draws and combined by the weighted
        minimum of their p-values with MMDAgg's level correction
        (:mod:`kmtests.statistics.ksdagg`; the result lists the members), or the
        linear-time FSSD at learned locations (see `n_locations`).
    levels : (int, int), optional
        KSDAgg's collection ``2^l h`` for ``l`` from ``levels[0]`` to
        ``levels[1]``, ``h`` the `bandwidth` (the median heuristic by default);
        default ``(-20, 0)``, the paper's RBM setting (its Gamma setting:
        ``(0, 10)``).
    grid : sequence of float, optional
        KSDAgg's collection given as bandwidths (instead of `levels`).
    weights : {"uniform", "centred", "increasing", "decreasing"} or sequence, optional
        KSDAgg's weights of the members (default uniform, as the paper).
    n_locations : int, optional
        FSSD (``statistic="fssd"``, Jitkrittum et al., 2017; linear time): the number
        of test locations (default 5), learned with the kernel's bandwidth on a
        training split (:mod:`kmtests.statistics.fssd`).
    split_size : int, optional
        FSSD's training points (default: half the sample, drawn by `rng`).
    estimator : str or KernelMeanEstimator, optional
        The estimator of the mean embedding of the Stein features (``statistic``
        ``"unbiased"`` or ``"biased"``; default ``"kme"``), fitted on their Gram matrix, the
        Stein kernel matrix ``H``: the statistic is ``beta' H beta`` for its weights
        ``beta``. The shrinkage estimators (``"skmse"``, ``"bkmse"``: weights ``c / n``)
        scale the KME's statistic by ``c^2``, a function of the sample; with the wild
        bootstrap the factor is the same for every draw, so the p-value is the KME's (the
        report shows the shrunk statistic), while with ``method="monte_carlo"`` it is
        recomputed on every fresh sample, a different (exact) test. Estimators of unequal
        weights (the spectral filters ``"fkmse"``, ``"tsvd"``, ...) take the V-form and
        ``method="monte_carlo"`` only (no wild bootstrap has their law). The marginalized
        estimators act through the kernel and are refused; KSDAgg and FSSD take the KME.
    method : {"wild", "monte_carlo", "chi2"} or a method object, optional
        The null distribution: the wild bootstrap (default but for FSSD; i.i.d. Rademacher
        multipliers; ``WildBootstrap(process="ar", length=...)`` for MCMC output,
        whose draws are dependent) or fresh samples of `model`
        (:class:`~kmtests.null.MonteCarloMethod`: exact level for any number of
        draws), or for FSSD its asymptotic weighted chi-square (its default,
        approximate). Each draws `n_resamples` times.
    {{resampling}}
    data_name : str, optional
        Name of the data for the report.
    {{conventions}}

    Returns
    -------
    GoodnessOfFitResult

    References
    ----------
    .. [1] Chwialkowski, Strathmann, Gretton (2016). A kernel test of goodness of fit.
       ICML.
    .. [2] Liu, Lee, Jordan (2016). A kernelized Stein discrepancy for goodness-of-fit
       tests. ICML.
    .. [3] Gorham, Mackey (2017). Measuring sample quality with kernels. ICML.
    .. [4] Schrab, Guedj, Gretton (2022). KSD aggregated goodness-of-fit test.
       NeurIPS.
    .. [5] Jitkrittum, Xu, Szabó, Fukumizu, Gretton (2017). A linear-time kernel
       goodness-of-fit test. NeurIPS.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from kmtests import goodness_of_fit_test
    >>> x = np.random.default_rng(0).standard_t(df=3, size=300)
    >>> res = goodness_of_fit_test(x, model=stats.norm(0, 1), n_resamples=999, rng=1)
    >>> print(f"{res.statistic_name} = {res.statistic:.4f}, p = {res.pvalue:.3f}")
    KSD^2_u = 0.0295, p = 0.004
    >>> res = goodness_of_fit_test(x, score=lambda t: -4 * t / (3 + t ** 2),  # t(3)
    ...                            n_resamples=999, rng=1)
    >>> print(f"p = {res.pvalue:.3f}")
    p = 0.621

    KSDAgg over the bandwidths ``2^l h``, ``l = -3..3``:

    >>> res = goodness_of_fit_test(x, model=stats.norm(0, 1), statistic="ksdagg",
    ...                            levels=(-3, 3), n_resamples=999, rng=1)
    >>> print(f"{res.family}: p = {res.pvalue:.3f}, {len(res.members)} members, "
    ...       f"{sum(m['rejects'] for m in res.members)} reject")
    KSDAgg: p = 0.012, 7 members, 2 reject
    """
    return _plan.run((x, score, model), locals())
