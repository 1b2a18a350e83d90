"""Kernel k-sample test: do the k samples come from one distribution? The face.

:func:`k_sample_test` maps its keywords to a problem (the pooled samples, arranged
by :class:`~kmtests.problems.schemes.KWay`), the k-sample MMD statistic
(:mod:`kmtests.statistics.ksample`), an engine and a null method, and runs them once.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, Sequence

from . import _driver
from ._typing import ArrayLike, SeedLike
from ._validation import check_choice
from .engines import Engine, resolve_engine
from .estimators import KernelMeanEstimator, resolve_estimator
from .kernels import Precomputed, resolve_kernel
from .null import NullMethod, method_statistic, resolve_method
from .problems.conventions import check_alternative
from .problems.data import KSampleProblem, data_label, k_sample_problem
from .results import KSampleResult
from .statistics import Statistic, resolve_statistic
from .statistics.tuning import TUNINGS

__all__ = ["k_sample_test"]


def k_sample_test(
    *samples: ArrayLike,
    kernel: Any = "gaussian",
    bandwidth: Any = "median",
    estimator: str | KernelMeanEstimator = "kme",
    statistic: Literal["unbiased", "biased"] | Statistic | None = None,
    method: Literal["permutation", "gamma"] | NullMethod | None = None,
    tuning: Literal["permutation", "pooled"] = "permutation",
    n_resamples: int | None = None,
    rng: SeedLike = None,
    batch: int | None = None,
    n_jobs: int | None = None,
    progress: bool | None = None,
    data_name: str | None = None,
    engine: str | Engine = "exact",
    n_features: int | None = None,
    sample_names: Sequence[str] | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise",
    axis: int = 0,
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
    alternative, nan_policy, axis
        As for :func:`kmtests.two_sample_test`: the test is one-sided
        (``"greater"``, the only value); ``nan_policy="omit"`` leaves out each
        sample's observations with a missing value; ``axis=1`` reads one
        observation per column (:doc:`/user_guide/conventions`).

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
    names = _sample_names(samples, sample_names)
    if data_name is None and sample_names is not None:  # the report names the samples too
        data_name = ", ".join(names[:-1]) + " and " + names[-1]
    problem, stat, eng, meth, tuning_ = _plan(
        samples, kernel=kernel, bandwidth=bandwidth, estimator=estimator, statistic=statistic,
        method=method, tuning=tuning, n_resamples=n_resamples, rng=rng, batch=batch,
        n_jobs=n_jobs, progress=progress, data_name=data_name, engine=engine,
        n_features=n_features, alternative=alternative, nan_policy=nan_policy, axis=axis)
    res = _driver.run(problem, stat, eng, meth, tuning_)
    assert isinstance(res, KSampleResult)
    return dataclasses.replace(res, samples=names, _pairwise=_pairwise(
        problem, res, stat, meth, tuning_, eng))


def _sample_names(samples: tuple[Any, ...], given: Sequence[str] | None) -> tuple[str, ...]:
    """The samples' names: `given` (checked), or Series names when distinct, or x1..xk."""
    k = len(samples)
    if given is not None:
        if isinstance(given, str) or len(given) != k:
            raise ValueError(f"`sample_names` must give one name per sample ({k}); got "
                             f"{given!r}.")
        names = tuple(str(v) for v in given)
        if len(set(names)) != k:
            raise ValueError(f"`sample_names` must be distinct; got {list(names)}.")
        return names
    default = tuple(f"x{g + 1}" for g in range(k))
    names = tuple(data_label(s, x) if not hasattr(s, "columns") else x
                  for s, x in zip(samples, default))
    return names if len(set(names)) == k else default


def _plan(samples: tuple[Any, ...], *, kernel: Any = "gaussian", bandwidth: Any = "median",
          estimator: Any = "kme", statistic: Any = None, method: Any = None,
          tuning: Any = "permutation", n_resamples: Any = None, rng: SeedLike = None,
          batch: Any = None, n_jobs: Any = None, progress: Any = None,
          data_name: str | None = None, engine: Any = "exact", n_features: Any = None,
          alternative: Any = "greater", nan_policy: Any = "raise", axis: Any = 0
          ) -> tuple[KSampleProblem, Statistic, Engine, NullMethod, str]:
    """:func:`k_sample_test`'s keywords -> (problem, statistic, engine, method, tuning)."""
    check_alternative(alternative)
    tuning_ = check_choice(tuning, "tuning", TUNINGS)
    kern = resolve_kernel(kernel, bandwidth)
    if isinstance(kern, Precomputed):
        raise ValueError("k_sample_test computes the kernel from the samples; a "
                         "precomputed Gram matrix is not supported (use the data).")
    est = resolve_estimator(estimator)
    problem = k_sample_problem(samples, data_name=data_name, axis=axis, nan_policy=nan_policy)
    if statistic is None:  # the method's own statistic (the gamma: kMMD^2_b), if it has one
        statistic = method_statistic(method, "k_sample")
    stat = resolve_statistic(statistic, "k_sample", kernels={"kernel": kern}, estimator=est,
                             options={})
    meth = resolve_method(method, n_resamples=n_resamples, batch=batch, rng=rng,
                          n_jobs=n_jobs, progress=progress, default=stat.default_method)
    eng = resolve_engine(engine, {"n_features": n_features}, scheme="split")
    return problem, stat, eng, meth, tuning_


def _pairwise(problem: KSampleProblem, res: KSampleResult, stat: Statistic,
              meth: NullMethod, tuning: str, eng: Engine) -> Any:
    """The post-hoc test of a pair of samples, with this test's settings."""
    from ._rng import keyed, root_sequence
    from .twosample import _plan as two_sample_plan

    kernel = res.kernels["kernel"]
    root = root_sequence(meth.source_of_randomness)[0] \
        if meth.source_of_randomness is not None else None
    form = "unbiased" if getattr(stat, "unbiased", True) else "biased"

    def run(pair: tuple[int, int]) -> Any:
        a, b = pair
        m: Any = meth
        if "rng" in meth.test_options:  # a resampling method: its own keyed stream
            m = dataclasses.replace(meth, rng=None if root is None  # type: ignore[call-arg]
                                    else keyed(root, a, b), progress=False)
        plan = two_sample_plan(problem.sample(a), problem.sample(b), kernel=kernel,
                               estimator=stat.estimator, statistic=form, method=m,
                               tuning=tuning, engine=eng)
        return _driver.run(*plan)

    return run
