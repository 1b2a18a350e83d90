r"""The conditional two-sample test: is ``P(Y | X)`` the same in two groups?

:func:`conditional_two_sample_test` — the question of context-aware drift detection (Cobb
& Van Looveren, 2022) and of conditional distributional treatment effects (Park et al.,
2021): the covariates ``x`` may be distributed differently in the two groups (covariate
shift is allowed), only the law of the outcome ``y`` given ``x`` is compared.
"""

from __future__ import annotations

from typing import Any, Literal

from . import _plan
from ._docs import shared_docs
from ._typing import ArrayLike, SeedLike
from .problems.conditional_two_sample import ConditionalTwoSampleProblem
from .results.conditional_two_sample import ConditionalTwoSampleResult

__all__ = ["ConditionalTwoSampleResult", "conditional_two_sample_test"]


@_plan.face(ConditionalTwoSampleProblem)
@shared_docs
def conditional_two_sample_test(x1: ArrayLike, y1: ArrayLike, x2: ArrayLike, y2: ArrayLike,
                                *, statistic: Literal["cmmd"] = "cmmd",
                                kernel_x: Any = "gaussian", kernel_y: Any = "gaussian",
                                bandwidth_x: Any = "median", bandwidth_y: Any = "median",
                                lam: Any = "auto",
                                weights: Literal["overlap", "uniform"] = "overlap",
                                criterion: Literal["shift", "gcv", "loo",
                                                   "marglik"] = "shift",
                                propensity: Any = "kernel", clip: float = 0.01,
                                n_resamples: int = 999, rng: SeedLike = None,
                                batch: int | None = None, n_jobs: int | None = None,
                                progress: bool | None = None, data_name: str | None = None,
                                alternative: Literal["greater"] = "greater",
                                nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0
                                ) -> ConditionalTwoSampleResult:
    r"""Is the law of ``y`` given ``x`` the same in two groups (covariate shift allowed)?

    H0: ``P_1(Y | X) = P_2(Y | X)``, whatever ``P_1(X)`` and ``P_2(X)``. The statistic
    (``statistic="cmmd"``) is the conditional MMD: per group, the kernel ridge regression of
    the features of ``y`` on ``x`` (the conditional mean embedding ``mu_g(x)``), and the
    mean over the pooled covariates of ``||mu_1(x) - mu_2(x)||^2`` (Park et al., 2021),
    weighted by the overlap of the groups (`weights`), with the regularisation tuned
    once on the pooled pairs (`criterion`). The null draws the group labels again with
    the odds of the estimated propensity ``e(x_i) = P(group 2 | x_i)`` (cross-fitted,
    clipped), the groups' sizes kept, and recomputes the statistic (conditional
    permutations; Berrett et al., 2020; Cobb & Van Looveren, 2022, who draw the labels
    without keeping the sizes); the p-value is ``(1 + #{T_b >= T}) / (1 + B)``.

    Parameters
    ----------
    x1, y1 : array_like, shape (n1,) or (n1, d_x); (n1,) or (n1, d_y)
        The covariates and outcomes of the first group, one pair per row.
    x2, y2 : array_like, shape (n2,) or (n2, d_x); (n2,) or (n2, d_y)
        Those of the second group.
    statistic : {"cmmd"}, optional
        The conditional MMD (the only statistic).
    kernel_x, kernel_y, bandwidth_x, bandwidth_y
        The kernels on the covariates and on the outcomes (default Gaussian) and their
        bandwidths (default: the median heuristic on the pooled sample).
    lam : "auto", float or sequence of float, optional
        The ridge of the regressions in operator units (each group's Gram matrix gets
        ``n_g lam``): ``"auto"`` (default) searches the grid of
        :func:`~kmtests.estimators.conditional.lambda_grid_cme` by `criterion`, a
        sequence searches those values, a number fixes it.
    weights : {"overlap", "uniform"}, optional
        How the pooled points enter the mean: ``"overlap"`` (default) weights point ``i``
        by ``e(x_i) (1 - e(x_i))`` of the propensity (Li, Morgan & Zaslavsky's overlap
        weights: the covariates where both groups have pairs, where the conditionals
        can be compared), ``"uniform"`` weights them equally (Park et al.'s and kcd's
        mean). With uniform weights the regions one group hardly reaches, where its
        regression extrapolates, weigh as much as the others, and the level rests on
        the propensity's tails (``benchmarks/README.md``).
    criterion : {"shift", "gcv", "loo", "marglik"}, optional
        How `lam` is tuned on the pooled pairs. ``"shift"`` (default): the smallest
        error of predicting the outcome's features of one group by the other group's
        regression, averaged over 3 pseudo-groups drawn from the propensity (the
        covariate shift the statistic meets; the observed labels do not enter). The
        others are the in-sample criteria of
        :func:`kmtests.conditional_independence_test`; they choose regressions that
        extrapolate poorly across the shift (``benchmarks/README.md``).
    propensity : {"kernel", "linear"} or array_like, optional
        The model of ``P(group 2 | x)``: kernel logistic regression with the covariates'
        kernel (default), logistic regression on the standardised covariates, or the
        ``n1 + n2`` known propensities (group 1's pairs first). Estimated ones are
        cross-fitted in 5 folds (:mod:`kmtests.statistics.propensity`).
    clip : float, optional
        The propensities are clipped to ``[clip, 1 - clip]`` (default 0.01).
    n_resamples : int, optional
        Number of relabellings (default 999).
    rng : None, int, SeedSequence or Generator, optional
        The source of the relabellings and of the cross-fitting folds: a fixed value gives
        the same p-value whatever `batch` and `n_jobs` are.
    batch, n_jobs, progress, data_name
        Relabellings per step, threads, the progress bar and the data's name in the
        report, as for :func:`kmtests.two_sample_test`.
    {{conventions}}

    Returns
    -------
    ConditionalTwoSampleResult
        With ``statistic``, ``pvalue``, ``null_distribution``, ``details`` (``lam``,
        ``df``, ``criterion``, ``propensity_model``, ``clip``, ``clipped``) and
        ``witness(points)``, the squared distance of the conditional embeddings at
        given covariates.

    Raises
    ------
    ValueError
        Groups of fewer than 4 pairs, ``x`` and ``y`` of a group with different numbers
        of rows, non-finite values (with ``nan_policy="raise"``), an invalid option.

    Notes
    -----
    The level rests on the propensity estimate (as every conditional test's rests on
    its regression): under a pure covariate shift the test keeps its level where a plain
    two-sample test of the pairs rejects (``benchmarks/README.md``). Cost: two Cholesky
    factorisations of the groups' Gram matrices per relabelling, ``O(n^3)`` each.

    References
    ----------
    .. [1] J. Park, U. Shalit, B. Schölkopf, K. Muandet, "Conditional distributional
       treatment effect with kernel conditional mean embeddings and U-statistic
       regression", ICML 2021.
    .. [2] O. Cobb, A. Van Looveren, "Context-aware drift detection", ICML 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import conditional_two_sample_test
    >>> gen = np.random.default_rng(0)
    >>> x1, x2 = gen.normal(-0.5, 1, 150), gen.normal(0.5, 1, 150)   # covariate shift
    >>> y1 = np.sin(2 * x1) + 0.3 * gen.normal(size=150)
    >>> y2 = np.sin(2 * x2) + 0.3 * gen.normal(size=150)             # same P(y | x)
    >>> res = conditional_two_sample_test(x1, y1, x2, y2, n_resamples=199, rng=1)
    >>> print(f"p = {res.pvalue:.3f}")
    p = 0.060
    """
    return _plan.run((x1, y1, x2, y2), locals())
