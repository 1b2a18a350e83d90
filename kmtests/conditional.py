"""Kernel conditional independence test (KCI) with a tuned regression on z: the face.

:func:`conditional_independence_test` (alias :func:`ci_test`) is a signature and a
docstring: the plan (:mod:`kmtests._plan`) maps its keywords to a problem
(:class:`~kmtests.problems.conditional.ConditionalProblem`), the statistic
(:class:`~kmtests.statistics.KCI` with a
:class:`~kmtests.estimators.ConditionalMeanEmbedding`), an engine and a null method
(``method="gamma"`` of this problem: Zhang et al.'s asymptotic moments), and runs them
once.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

from . import _plan
from ._docs import shared_docs
from ._typing import ArrayLike, SeedLike
from .engines import Engine
from .null import NullMethod
from .problems.conditional import ConditionalProblem
from .results import ConditionalIndependenceResult
from .statistics import Statistic

__all__ = ["ci_test", "conditional_independence_test"]


@_plan.face(ConditionalProblem)
@shared_docs
def conditional_independence_test(
    x: ArrayLike,
    y: ArrayLike,
    z: ArrayLike,
    *,
    kernel_x: Any = "gaussian",
    kernel_y: Any = "gaussian",
    kernel_z: Any = "gaussian",
    bandwidth_x: Any = "median",
    bandwidth_y: Any = "median",
    bandwidth_z: Any = "auto",
    statistic: Literal["kci", "split"] | Statistic | None = None,
    filter: str | None = None,
    lam: float | Sequence[float] | Literal["auto"] | None = None,
    criterion: Literal["gcv", "loo", "marglik"] | None = None,
    augment: bool | None = None,
    z_transform: Literal["none", "normal_scores", "rank"] | None = None,
    undersmooth: float | None = None,
    null_moments: Literal["corrected", "zhang"] | None = None,
    split_size: float | None = None,
    method: Literal["gamma", "chi2", "wild", "permutation"] | NullMethod | None = None,
    strata: ArrayLike | None = None,
    n_resamples: int | None = None, rng: SeedLike = None, batch: int | None = None,
    n_jobs: int | None = None, progress: bool | None = None,
    data_name: str | None = None,
    engine: str | Engine = "exact", n_features: int | None = None,
    cache: bool | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0,
) -> ConditionalIndependenceResult:
    r"""Kernel test of conditional independence: are `x` and `y` independent given `z`?

    The statistic is KCI (Zhang et al., 2011): the HSIC of the residuals of `x`
    (augmented by ``z / 2``) and of `y` after a regularised regression of their
    kernel features on `z` — a conditional mean embedding. Here the regression is
    an estimator (:class:`~kmtests.estimators.ConditionalMeanEmbedding`): its
    regularisation ``lam`` and the bandwidth of the kernel on `z` are chosen for
    each variable from the data (generalised cross-validation by default), since
    the regression's error is what makes KCI reject too often when the
    dependence on `z` is sharper than a fixed ridge and width can follow
    (Pogodin et al., 2024). See :doc:`/user_guide/conditional`.

    Parameters
    ----------
    x, y, z : array_like, shape (n,) or (n, d)
        Paired observations (pandas objects are paired by index label). Every
        variable is standardised (mean 0, standard deviation 1).
    kernel_x, kernel_y, kernel_z : str or Kernel
        The kernels (Gaussian by default; see :func:`kmtests.two_sample_test`).
    bandwidth_x, bandwidth_y : "median" or float
        Bandwidths of `kernel_x` (on ``(x, z / 2)``) and `kernel_y`.
    bandwidth_z : "auto", "isotropic", "ard", "ard_each", "median", float or sequence of float
        The bandwidth of the regression on z: ``"isotropic"`` searches the median
        heuristic times 1/8, 1/4, 1/2, 1 and 2 by the regression's `criterion`;
        ``"ard"`` then gives each coordinate of z its own bandwidth (a greedy sweep in
        an order set by the data, not by the columns' order, each coordinate's
        bandwidth tried times 1e4, 1/2 and 2, scored by the
        criterion summed over x and y: ``5 + 3 d_z`` eigendecompositions;
        ``engine="exact"``, Gaussian `kernel_z`); ``"ard_each"`` searches one such
        set for x's regression (scored on x alone) and one for y's (twice the
        eigendecompositions); a sequence searches those values; a number or
        ``"median"`` fixes it. ``"auto"`` (default) is ``"isotropic"`` on a z of one
        or two coordinates, and on a z of three or more (Gaussian `kernel_z`, the
        exact engine, ``statistic="kci"``) ``"ard_each"`` with ``undersmooth=10``
        (unless `undersmooth` is given): on 520 null data sets with z of 3 to 10
        coordinates, where ``"isotropic"`` rejected 145 at 5%, it rejected 37; on 1200
        others, where ``"isotropic"`` kept the level (75), 87. It takes 3-8 times the
        CPU time (:doc:`/user_guide/conditional`). The report says which ran.
    statistic : {"kci", "split"} or Statistic, optional
        ``"kci"`` (default): the regressions and the statistic on the whole
        sample. ``"split"`` (SplitKCI, Pogodin et al.): the regressions fitted on
        a random part of the sample (`split_size`, default 0.5) and the
        statistic computed on the rest.
    filter : str, optional
        The spectral filter of the regression (``"tikhonov"``: kernel ridge
        regression, the default; ``"showalter"``, ``"iterated_tikhonov"``,
        ``"cutoff"``).
    lam : float, sequence of float or "auto", optional
        The regularisation, in the units of the eigenvalues of the covariance
        operator of z (KCI's ridge ``epsilon`` is ``n lam``; causal-learn's
        default ``epsilon = 1e-3`` is ``lam = 1e-3 / n``): a value, a grid, or
        ``"auto"`` (default: a grid of 13 values, ``10^-6`` to 1 times the
        operator's trace).
    criterion : {"gcv", "loo", "marglik"}, optional
        How a grid of `lam` or of bandwidths on z is searched: generalised
        cross-validation (default), exact leave-one-out (Tikhonov), or the
        Gaussian-process marginal likelihood (what causal-learn's ``use_gp``
        maximises).
    augment : bool, optional
        Compare ``(x, z / 2)`` rather than `x` (default True, as KCI).
    z_transform : {"none", "normal_scores", "rank"}, optional
        A monotone map of each coordinate of z before the regressions (the
        conditional null is unchanged by it, and the p-value is then unchanged by
        an increasing map of a coordinate): ``"normal_scores"`` replaces each
        coordinate by ``Phi^-1(rank / (n + 1))``, ``"rank"`` by ``rank / (n + 1)``,
        ``"none"`` (default) keeps z (:mod:`kmtests.problems.marginal`).
    undersmooth : float, optional
        The searched `lam` of each regression divided by this factor (>= 1): less bias
        in the residuals, which is what makes the test reject too often, for more
        variance (:class:`~kmtests.estimators.ConditionalMeanEmbedding`; no further than
        0.35 (n - 1) degrees of freedom). Default: 10 where
        ``bandwidth_z="auto"`` searches per-coordinate bandwidths (a z of three or
        more coordinates), else 1 (the `criterion`'s choice).
    null_moments : {"corrected", "zhang"}, optional
        The moments of the gamma null on the exact engine (KCI, the whole sample).
        ``"corrected"`` (default) adds to the mean the terms that the rows' correlation
        through the regressions on z contributes with the noise, and scales the variance
        by the same ratio (:func:`kmtests.statistics.kci.noise_mean_factor`; Zhang et
        al.'s diagonal approximation was 1-30% too small on 22 of 23 null cells
        measured); ``"zhang"`` keeps Zhang et al.'s (causal-learn's p-value).
    split_size : float, optional
        The fraction of the sample the regressions of ``statistic="split"`` are
        fitted on.
    method : {"gamma", "chi2", "wild", "permutation"} or NullMethod, optional
        The null distribution: ``"gamma"`` (default) — the gamma fitted to the
        mean and variance of the asymptotic null (a weighted sum of chi-squares
        with the eigenvalues of the product of the residual Gram matrices);
        ``"chi2"`` — that weighted sum itself, drawn `n_resamples` times;
        ``"wild"`` — the wild bootstrap of the residual HSIC with Gaussian
        multipliers (the same null drawn without the eigenvalues; for dependent
        data pass ``WildBootstrap(process="ar")``; not with SplitKCI). All three
        are approximate. ``"permutation"`` with `strata`: y permuted within
        groups of equal z — exact when z is discrete (the only exact null).
    strata : array_like, optional
        One label per observation (e.g. the values of a discrete z): the
        permutations of ``method="permutation"`` stay within strata.
    n_resamples, rng, batch, n_jobs, progress
        Draws of the ``"chi2"``, ``"wild"`` and permutation nulls and their
        options, as for :func:`kmtests.independence_test`. `rng` also draws the
        split of ``statistic="split"``.
    data_name : str, optional
        Name of the data for the report.
    engine : {"exact", "rff", "nystrom"} or Engine
        ``"exact"`` (default): the Gram matrices in memory (O(n^2) memory, O(n^3)
        time for the decompositions of z's Gram matrices). ``"rff"`` or
        ``"nystrom"``: random Fourier or Nyström features of x, y (16 each) and z
        (`n_features`), the regressions on z's features — the RCoT approximation of
        Strobl et al. (2019), O(n) memory and time, for n = 10^4 to 10^5; the
        features are drawn from `rng`. The exact engine warns
        (:class:`~kmtests.SlowTestWarning`, naming these options) from n = 2000
        with the tuned regression on a z of one coordinate (about 6 s of CPU there,
        growing as n^3), from about 1130 (three coordinates) to 830 (ten) with the
        per-coordinate search of a multivariate z, from about 4900 with one given
        `lam` and `bandwidth_z`.
    n_features : int, optional
        The features of z on ``engine="rff"`` or ``"nystrom"`` (default 200).
    cache : bool, optional
        Reuse, across calls on the same data, the eigendecompositions of the Gram
        matrices of z and each variable's regression on z (default True: causal
        discovery asks many questions with the same conditioning set and the same
        variables; :mod:`kmtests.statistics.residual_cache`). The p-values are the
        same with and without; :func:`kmtests.estimators.conditional.clear_cache`
        empties the caches.
    {{conventions}}

    Returns
    -------
    ConditionalIndependenceResult
        With ``statistic`` (KCI; causal-learn reports ``n^2`` times it),
        ``pvalue``, ``params`` (each regression's ``lam``, ``epsilon``, bandwidth
        on z, degrees of freedom and criterion) and the reports.

    Raises
    ------
    ValueError
        Different numbers of observations, fewer than 6, NaN/inf, unknown
        options, ``method="permutation"`` without `strata`.

    References
    ----------
    .. [1] Zhang, Peters, Janzing, Schölkopf (2011). Kernel-based conditional
       independence test and application in causal discovery. UAI.
    .. [2] Pogodin, Schrab, Li, Sutherland, Gretton (2024). Practical kernel
       tests of conditional independence. arXiv:2402.13196.
    .. [3] Song, Huang, Smola, Fukumizu (2009). Hilbert space embeddings of
       conditional distributions. ICML.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import conditional_independence_test
    >>> gen = np.random.default_rng(0)
    >>> z = gen.normal(size=300)
    >>> x = np.sin(2 * z) + 0.3 * gen.normal(size=300)
    >>> y = np.cos(2 * z) + 0.3 * gen.normal(size=300)   # dependent only through z
    >>> res = conditional_independence_test(x, y, z)
    >>> print(f"KCI = {res.statistic:.3g}, p = {res.pvalue:.3f}")
    KCI = 1.27e-05, p = 0.858
    """
    return _plan.run((x, y, z), locals())


#: the short name
ci_test = conditional_independence_test
