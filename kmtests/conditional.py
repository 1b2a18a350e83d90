"""Kernel conditional independence test (KCI) with a tuned regression on z: the face.

:func:`conditional_independence_test` (alias :func:`ci_test`) maps its keywords to a
problem (:class:`~kmtests.problems.conditional.ConditionalProblem`), the statistic
(:class:`~kmtests.statistics.KCI` with a
:class:`~kmtests.estimators.ConditionalMeanEmbedding`), the in-memory engine and a
null method, and runs them once (:func:`kmtests._driver.run`).
"""

from __future__ import annotations

from dataclasses import replace

from typing import Any, Literal, Sequence

from . import _driver
from ._typing import ArrayLike, SeedLike
from .engines import Engine, resolve_engine
from .estimators import KME
from .kernels import Precomputed, resolve_kernel
from .null import (
    METHODS,
    GammaMethod,
    NullMethod,
    WildBootstrap,
    note_unused_seed,
    resolve_method,
)
from .problems.conditional import ConditionalProblem, conditional_problem
from .problems.conventions import check_alternative
from .results import ConditionalIndependenceResult
from .statistics import KCI, Statistic, resolve_statistic

__all__ = ["ci_test", "conditional_independence_test"]


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
    split_size: float | None = None,
    method: Literal["gamma", "chi2", "wild", "permutation"] | NullMethod | None = None,
    strata: ArrayLike | None = None,
    n_resamples: int | None = None,
    rng: SeedLike = None,
    batch: int | None = None,
    n_jobs: int | None = None,
    progress: bool | None = None,
    data_name: str | None = None,
    engine: str | Engine = "exact",
    n_features: int | None = None,
    cache: bool | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise",
    axis: int = 0,
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
    bandwidth_z : "auto", "median", float or sequence of float
        The bandwidth of the regression on z: ``"auto"`` (default) searches the
        median heuristic times 1/8, 1/4, 1/2, 1 and 2 by the regression's
        `criterion`; a sequence searches those values; a number or ``"median"``
        fixes it.
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
        features are drawn from `rng`.
    n_features : int, optional
        The features of z on ``engine="rff"`` or ``"nystrom"`` (default 200).
    cache : bool, optional
        Reuse the eigendecompositions of the Gram matrices of z across calls with
        the same z (default True; causal discovery asks many questions with the
        same conditioning set: :func:`kmtests.estimators.conditional.clear_cache`
        empties it).
    alternative : {"greater"}
        The test is one-sided: KCI estimates a quantity that is 0 under
        conditional independence and positive otherwise; ``"greater"``
        (default) is the only value.
    nan_policy : {"raise", "omit"}
        ``"raise"`` (default) names the first missing value; ``"omit"`` leaves
        out every observation with a missing value in `x`, `y` or `z`.
    axis : {0, 1}
        The axis of 2-D data that indexes the observations (1: a column per
        observation). See :doc:`/user_guide/conventions`.

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
    KCI = 1.27e-05, p = 0.844
    """
    res = _driver.run(*_plan(
        x, y, z, kernel_x=kernel_x, kernel_y=kernel_y, kernel_z=kernel_z,
        bandwidth_x=bandwidth_x, bandwidth_y=bandwidth_y, bandwidth_z=bandwidth_z,
        statistic=statistic, filter=filter, lam=lam, criterion=criterion, augment=augment,
        split_size=split_size, method=method, strata=strata, n_resamples=n_resamples,
        rng=rng, batch=batch, n_jobs=n_jobs, progress=progress, data_name=data_name,
        engine=engine, n_features=n_features, cache=cache, alternative=alternative,
        nan_policy=nan_policy, axis=axis))
    assert isinstance(res, ConditionalIndependenceResult)
    return res


#: the short name
ci_test = conditional_independence_test


def _plan(x: Any, y: Any, z: Any, *, kernel_x: Any = "gaussian", kernel_y: Any = "gaussian",
          kernel_z: Any = "gaussian", bandwidth_x: Any = "median", bandwidth_y: Any = "median",
          bandwidth_z: Any = "auto", statistic: Any = None, filter: Any = None,
          lam: Any = None, criterion: Any = None, augment: Any = None, split_size: Any = None,
          method: Any = None, strata: Any = None, n_resamples: Any = None,
          rng: SeedLike = None, batch: Any = None, n_jobs: Any = None, progress: Any = None,
          data_name: str | None = None, engine: Any = "exact", n_features: Any = None,
          cache: Any = None, alternative: Any = "greater", nan_policy: Any = "raise",
          axis: Any = 0) -> tuple[ConditionalProblem, Statistic, Engine, NullMethod, str]:
    """:func:`conditional_independence_test`'s keywords -> the four objects and tuning."""
    check_alternative(alternative)
    kx = resolve_kernel(kernel_x, bandwidth_x, name="kernel_x", bandwidth_name="bandwidth_x")
    ky = resolve_kernel(kernel_y, bandwidth_y, name="kernel_y", bandwidth_name="bandwidth_y")
    fixed_z = (isinstance(bandwidth_z, (int, float)) and not isinstance(bandwidth_z, bool))
    kz = resolve_kernel(kernel_z, bandwidth_z if fixed_z else "median", name="kernel_z",
                        bandwidth_name="bandwidth_z")
    if any(isinstance(k, Precomputed) for k in (kx, ky, kz)):
        raise ValueError("the conditional test standardises the data and computes the "
                         "kernels from them; precomputed Gram matrices are not supported.")
    problem = conditional_problem(x, y, z, data_name=data_name, axis=axis,
                                  nan_policy=nan_policy)
    if strata is not None:
        problem = problem.within(strata)
    options = {"filter": filter, "lam": lam, "criterion": criterion,
               "bandwidth_z": (None if isinstance(bandwidth_z, str) and bandwidth_z == "auto"
                               else bandwidth_z),
               "augment": augment, "split_size": split_size, "cache": cache}
    stat = resolve_statistic(statistic, "conditional", kernels={"x": kx, "y": ky, "z": kz},
                             estimator=KME(), options=options)
    if isinstance(stat, KCI):
        from .engines._threads import check_n_jobs

        stat.n_jobs = check_n_jobs(n_jobs)
    eng = resolve_engine(engine, {"n_features": n_features}, scheme="pairing")
    method_rng = rng
    draws = getattr(stat, "split", None) is not None or eng.name in ("rff", "nystrom")
    if draws and rng is not None:
        # the split or the features are drawn from `rng` even when the null draws nothing
        stat.split_rng = rng  # type: ignore[attr-defined]
        name = stat.default_method if method is None else method
        cls = METHODS.get(name.lower()) if isinstance(name, str) else None
        if cls is not None and "rng" not in cls.test_options:
            method_rng = None
    if method is None and strata is not None:
        method = "permutation"  # strata are for the (exact) permutations within them
    if method is None or (isinstance(method, str) and method.lower() == "gamma"):
        # the gamma of a conditional statistic: the asymptotic moments (Zhang et al.)
        given = {"n_resamples": n_resamples, "batch": batch, "progress": progress}
        clash = [f"`{k}`" for k, v in given.items() if v is not None]
        if clash:
            which = "method='gamma'" + (" (the default)" if method is None else "")
            raise ValueError(f"{which} computes the p-value from the eigenvalues' moments, "
                             f"with no random draws: {', '.join(clash)} do(es) not apply. "
                             "Drop them, or draw the null with method='chi2' or 'wild'.")
        method = GammaMethod(moments="asymptotic")
        if method_rng is not None:  # a seed is welcome, and the result says it was unused
            method = note_unused_seed(method)
            method_rng = None
    meth = resolve_method(method, n_resamples=n_resamples, batch=batch, rng=method_rng,
                          n_jobs=n_jobs, progress=progress, default=stat.default_method)
    if isinstance(method, str) and isinstance(meth, WildBootstrap):
        # Gaussian multipliers: the draws are the weighted chi-square null itself
        meth = replace(meth, process="gaussian")
    return problem, stat, eng, meth, "pooled"
