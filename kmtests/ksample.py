"""Kernel k-sample test: do the k samples come from one distribution? The face.

:func:`k_sample_test` is a signature and a docstring: the plan (:mod:`kmtests._plan`)
maps its keywords to a problem (the pooled samples, arranged by
:class:`~kmtests.problems.schemes.KWay`), the k-sample MMD statistic
(:mod:`kmtests.statistics.ksample`), an engine and a null method, and runs them once;
:mod:`kmtests._posthoc` adds the pairwise tests.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

from . import _plan
from ._docs import shared_docs
from ._posthoc import sample_names as sample_names_of
from ._posthoc import with_pairwise
from ._typing import ArrayLike, SeedLike
from .engines import Engine
from .estimators import KernelMeanEstimator
from .null import NullMethod
from .problems.data import KSampleProblem
from .results import KSampleResult
from .statistics import Statistic

__all__ = ["k_sample_test"]


@_plan.face(KSampleProblem)
@shared_docs
def k_sample_test(
    *samples: ArrayLike,
    kernel: Any = "gaussian",
    bandwidth: Any = "median",
    estimator: str | KernelMeanEstimator = "kme",
    statistic: Literal["unbiased", "biased"] | Statistic | None = None,
    method: Literal["permutation", "gamma"] | NullMethod | None = None,
    tuning: Literal["permutation", "pooled"] = "permutation",
    n_resamples: int | None = None, rng: SeedLike = None, batch: int | None = None,
    n_jobs: int | None = None, progress: bool | None = None,
    data_name: str | None = None,
    engine: str | Engine = "exact", n_features: int | None = None,
    sample_names: Sequence[str] | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0,
) -> KSampleResult:
    r"""Kernel k-sample test: do all the samples come from the same distribution?

    The statistic is the average of the pairwise ``MMD^2`` between the samples'
    estimated embeddings, weighted by ``n_a n_b`` (:mod:`kmtests.statistics.ksample`):
    for two samples it is the two-sample ``MMD^2`` (:func:`kmtests.two_sample_test`
    gives the same statistic and, for the same seed, p-value), and in V-form it is
    the between-groups statistic of kernel ANOVA, i.e. HSIC with a label kernel (the
    same permutation test). Its null distribution is obtained by permuting the pooled
    sample across the groups (exact level: all divisions are enumerated when there
    are at most `n_resamples`), or by the gamma approximation fitted to its exact
    permutation moments (V-form, KME). :meth:`KSampleResult.pairwise` gives the
    post-hoc pairwise tests with Holm-adjusted p-values.

    Parameters
    ----------
    *samples : array_like, shape (n_g, d) or (n_g,)
        Two or more samples with the same columns (DataFrames: matched by name).
    kernel, bandwidth, estimator, tuning, n_resamples, rng, batch, n_jobs, progress
        As for :func:`kmtests.two_sample_test` (the median heuristic on the pooled
        sample).
    statistic : {"unbiased", "biased"}, optional
        The form of the pairwise MMDs (default: the null method's own statistic
        if it has one, the V-form ``kMMD^2_b`` for ``method="gamma"``; else the
        U-form for the KME and uniform estimators, the V-form otherwise).
    method : {"permutation", "gamma"} or a method object, optional
        The null (default: permutations).
    data_name : str, optional
        Name of the data for the report.
    engine : {"exact", "streamed", "auto", "nystrom", "rff"} or Engine
        As for :func:`kmtests.two_sample_test` (estimators whose weights are not a
        fixed multiple of ``1/n`` need ``"exact"``).
    n_features : int, optional
        The features of the low-rank engines.
    sample_names : sequence of str, optional
        The samples' names in :meth:`KSampleResult.pairwise` (default: the names of
        pandas Series when they are distinct, else ``x1``, ..., ``xk``).
    {{conventions}}

    Returns
    -------
    KSampleResult
        With ``pairwise()`` besides the usual attributes and reports.

    References
    ----------
    .. [1] Gretton, Borgwardt, Rasch, Schölkopf, Smola (2012). A kernel two-sample
       test. JMLR 13.
    .. [2] Rizzo, Székely (2010). DISCO analysis: a nonparametric extension of
       analysis of variance. Ann. Appl. Stat. 4.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import k_sample_test
    >>> gen = np.random.default_rng(0)
    >>> a, b, c = gen.normal(size=(30, 2)), gen.normal(size=(30, 2)), gen.normal(1, size=(30, 2))
    >>> res = k_sample_test(a, b, c, n_resamples=499, rng=1)
    >>> print(f"{res.statistic_name} = {res.statistic:.4f}, p = {res.pvalue:.3f}")
    kMMD^2_u = 0.1041, p = 0.002
    """
    names = sample_names_of(samples, sample_names)
    if data_name is None and sample_names is not None:  # the report names the samples too
        data_name = ", ".join(names[:-1]) + " and " + names[-1]
    plan = _plan.build_here(samples, locals())
    return with_pairwise(plan, samples, sample_names)
