"""The one driver of the kernel tests.

Both public tests (:func:`kmtests.two_sample_test`, :func:`kmtests.independence_test`)
are thin front-ends: each validates its inputs into a *problem* (nothing is
computed yet), and :func:`run_test` does the rest, the same way for both:

1. the memory the Gram matrices need is checked;
2. ``problem.prepare(tuning)`` builds the Gram matrices once (centred form,
   :mod:`kmtests._gram`) and prepares the estimator on them
   (:func:`prepare_rule`: its kernel transformation, its weight rule, and for
   ``tuning="pooled"`` its parameters fixed on a permutation-invariant Gram
   matrix);
3. the observed statistic is computed (with the parameters the estimator chose
   on the observed data, from the same pass), then the null distribution
   (:func:`kmtests._resampling.permutation_null`, or the gamma approximation);
4. the result object is built.

A new test (k-sample, a new statistic) is a new problem class; nothing here
branches on the kind of test or on the estimator.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np

from . import _resampling
from ._gram import CentredGram
from ._guards import check_memory, warn_if_slow
from .engines import Values
from .estimators import KernelMeanEstimator
from .estimators._rules import General, Rule, Uniform
from .kernels import Kernel
from .null import GammaMethod, NormalMethod, NullMethod, PermutationMethod
from .results import KernelTestResult

__all__ = ["Prepared", "PreparedRule", "Problem", "prepare_rule", "run_test"]

TUNINGS = ("permutation", "pooled")


@dataclass(frozen=True)
class PreparedRule:
    """An estimator prepared on the data: the rule the engines apply and what to report."""

    rule: Rule
    params: dict[str, Any]   # parameters fixed on the invariant Gram (pooled tuning)
    tuning: str              # the tuning that applies ("pooled" when nothing is re-tuned)
    note: str = ""           # e.g. a fallback that was taken


def prepare_rule(est: KernelMeanEstimator, tuning: str,
                 invariant_gram: Callable[[], np.ndarray], transformed: bool) -> PreparedRule:
    """The estimator's weight rule for the engines, with pooled tuning applied.

    ``invariant_gram()`` returns the permutation-invariant Gram matrix on
    which ``tuning="pooled"`` fixes the parameters (the pooled sample's for
    MMD, the permutation-averaged cross-covariance Gram for HSIC).
    `transformed` says that the estimator acts through a kernel transformation
    tuned on invariant data (nothing is re-tuned per permutation).

    A fixed uniform shrinkage that would annihilate the statistic (factor 0,
    e.g. pooled LOOCV shrinkage 1 with a linear kernel on centred data) is
    replaced by the unshrunk statistic, with a note: a fixed factor c > 0 only
    rescales every statistic, so the p-value is the limit c -> 0+, i.e. the
    KME test's.
    """
    if transformed:
        return PreparedRule(est.rule(), {}, "pooled")
    if tuning == "permutation":
        return PreparedRule(est.rule(), {}, "permutation")
    _, params = est.weights(invariant_gram())
    rule = est.with_fixed(params).rule()
    note = ""
    if isinstance(rule, Uniform) and rule.fixed == 0.0:
        from ._warnings import DegenerateStatisticWarning

        note = ("the pooled shrinkage is 1: the shrunk statistic would be identically 0, so "
                "the unshrunk statistic is used (a fixed shrinkage only rescales it: the "
                "p-value is the KME test's)")
        warnings.warn(f"estimator {est.name!r}: {note}.", DegenerateStatisticWarning,
                      stacklevel=5)
        rule = Uniform(fixed=1.0)
    return PreparedRule(rule, params, "pooled", note)


@dataclass
class Prepared:
    """A test prepared on its data: what the null computation and the result need."""

    values: Callable[[np.ndarray, int | None], Values]      # statistics of permutations
    observed: Callable[[int | None], tuple[Values, dict[str, dict[str, Any]]]]
    gamma: Callable[[float, str], tuple[float, dict[str, Any]]]
    prep: PreparedRule
    kernels: dict[str, Kernel]
    kernel_notes: dict[str, str] = field(default_factory=dict)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    what: str = "the statistic"
    #: the asymptotic normal p-value and its details (the linear-time engines only)
    normal: Callable[[], tuple[float, dict[str, Any]]] | None = None


class Problem(Protocol):
    """A validated test, before anything is computed (see the module docs)."""

    @property
    def kind(self) -> str: ...           # "split" (two-sample) or "perm" (independence)

    @property
    def n(self) -> int: ...              # points permuted

    @property
    def n_x(self) -> int: ...            # size of the first sample ("split")

    @property
    def estimator(self) -> KernelMeanEstimator: ...

    @property
    def unbiased(self) -> bool: ...

    @property
    def result_class(self) -> type[KernelTestResult]: ...

    @property
    def sizes(self) -> dict[str, int]: ...

    def statistic_name(self) -> str: ...

    def memory(self, method: NullMethod, tuning: str) -> tuple[float, str, str]: ...

    def check_gamma(self) -> None: ...

    def prepare(self, tuning: str) -> Prepared: ...

    def plan(self, method: PermutationMethod) -> _resampling.PermutationPlan: ...


def statistic_name(base: str, est: KernelMeanEstimator) -> str:
    """``MMD^2_u`` for the KME; ``MMD^2_u[skmse]`` etc. when an estimator changes it."""
    return base if est.name == "kme" else f"{base}[{est.name}]"


def reportable(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters worth reporting: scalars and short lists (curves left out)."""
    out: dict[str, Any] = {}
    for k, v in params.items():
        if k in ("loocv_curve", "selection", "sigma2_bounds", "lam_bounds"):
            continue
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, (bool, int, float, str)):
            out[k] = v
        elif isinstance(v, (list, tuple, np.ndarray)) and np.size(v) <= 64:
            out[k] = [u.item() if isinstance(u, np.generic) else u for u in np.ravel(v)]
    return out


def run_test(problem: Problem, method: NullMethod, tuning: str,
             data_name: str) -> KernelTestResult:
    """Run a validated test (see the module docs)."""
    if isinstance(method, GammaMethod):
        problem.check_gamma()
    if isinstance(method, NormalMethod):
        from ._scale import LINEAR_TIME

        if getattr(problem, "engine", "exact") not in LINEAR_TIME:
            raise ValueError("method='normal' is the null of the linear-time two-sample "
                             "statistics (engine='block' or 'linear'); the other engines "
                             "take method='permutation' or 'gamma'.")
    check_memory(*problem.memory(method, tuning))
    prepared = problem.prepare(tuning)
    n_jobs = getattr(method, "n_jobs", None)
    rule = prepared.prep.rule
    t0 = time.perf_counter()
    observed, obs_params = prepared.observed(n_jobs)
    per_arrangement = time.perf_counter() - t0
    t_obs = float(observed.stat[0])
    _resampling.check_finite_statistic(t_obs, None, prepared.what)
    params = {**prepared.params, **{k: reportable(v) for k, v in obs_params.items()}}
    notes = _notes(problem, prepared, params, t_obs)
    common: dict[str, Any] = dict(
        statistic=t_obs, statistic_name=problem.statistic_name(), estimator=problem.estimator,
        params=params, kernels=prepared.kernels, sizes=problem.sizes,
        tuning=prepared.prep.tuning, data_name=data_name, notes=tuple(notes),
        kernel_notes={k: v for k, v in prepared.kernel_notes.items() if v},
        engine=getattr(problem, "engine", "exact"),
        engine_info=getattr(problem, "engine_info", ""))
    if isinstance(method, GammaMethod):
        pval, details = prepared.gamma(t_obs, method.moments)
        return problem.result_class(pvalue=pval, null_distribution=None, method=method,
                                    exact=False, n_resamples=None, count=None,
                                    details=details, **common)
    if isinstance(method, NormalMethod):
        assert prepared.normal is not None
        pval, details = prepared.normal()
        return problem.result_class(pvalue=pval, null_distribution=None, method=method,
                                    exact=False, n_resamples=None, count=None,
                                    details=details, **common)
    assert isinstance(method, PermutationMethod)
    from ._validation import check_rng, seed_of

    plan = problem.plan(method)
    expected = None
    if isinstance(rule, General):
        threads = _threads(n_jobs)
        expected = per_arrangement * plan.n_resamples / threads
        warn_if_slow(expected, f"{plan.n_resamples} permutations x {per_arrangement:.2g} s "
                     f"each on {threads} thread(s)",
                     "Use fewer permutations (`n_resamples`), tuning='pooled' where the "
                     "estimator allows it, or a cheaper estimator.")
    null, pval, count = _resampling.permutation_null(
        plan, check_rng(method.rng), problem.n, problem.kind,
        lambda perms: prepared.values(perms, n_jobs), observed, problem.n_x,
        what=prepared.what, progress=method.progress, expected_seconds=expected)
    return problem.result_class(pvalue=pval, null_distribution=null, method=method,
                                exact=plan.exact, n_resamples=plan.n_resamples, count=count,
                                seed=seed_of(method.rng), **common)


def _threads(n_jobs: int | None) -> int:
    import os

    from .engines._threads import resolve_n_jobs

    return resolve_n_jobs(n_jobs) or os.cpu_count() or 1


def _notes(problem: Problem, prepared: Prepared, params: dict[str, dict[str, Any]],
           t_obs: float) -> list[str]:
    notes = []
    if getattr(problem, "engine_note", ""):
        notes.append(problem.engine_note)  # type: ignore[attr-defined]
    if prepared.prep.note:
        notes.append(prepared.prep.note)
    if problem.unbiased and t_obs < 0:
        notes.append("the unbiased statistic is negative; it estimates a non-negative "
                     "quantity without bias, so it is negative about half the time when the "
                     "null hypothesis holds")
    for role, p in params.items():
        if p.get("converged") is False:
            notes.append(f"the estimator's optimiser did not converge on the {role} data "
                         f"({p.get('n_iter', '?')} iterations); its parameters are the best "
                         "found")
    return notes


def scaled_gram(kernel: Any, data: np.ndarray, c: float, name: str) -> CentredGram:
    """The centred Gram matrix of ``c * kernel`` on `data`."""
    cg = kernel.centred_gram(data, name=name)
    return cg.scaled(c) if c != 1.0 else cg


def identity(n: int) -> np.ndarray:
    return np.arange(n, dtype=np.int64)[None, :]


def data_label(data: Any, role: str) -> str:
    """How the report names an input: a pandas Series' name or a DataFrame's columns."""
    name = getattr(data, "name", None)
    if type(data).__module__.split(".")[0] == "pandas":
        if hasattr(data, "columns"):
            cols = [str(c) for c in data.columns]
            shown = ", ".join(cols[:4]) + (", ..." if len(cols) > 4 else "")
            return f"{role}[{shown}]" if cols else role
        if name is not None:
            return str(name)
    return role
