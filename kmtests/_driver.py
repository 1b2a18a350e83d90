"""The one driver of the kernel tests: ``run(problem, statistic, engine, method, tuning)``.

Every public test is a face whose keywords the plan (:mod:`kmtests._plan`) maps to
four objects — a problem (:mod:`kmtests.problems`: the data by role and the
permutation scheme), a statistic (:mod:`kmtests.statistics`), an engine
(:mod:`kmtests.engines`) and a null method (:mod:`kmtests.null`) — and calls
:func:`run` once, which

1. resolves and validates everything before anything is computed: the
   statistic's own refusals, the engine (``"auto"`` chooses one) and whether it
   runs the statistic, whether the null method applies, and the memory all of
   it will take;
2. prepares the statistic (Gram matrices, decompositions, tuned parameters);
3. computes the observed statistic (with the parameters the estimator chose on
   the data) and checks it is finite;
4. asks the null method for the p-value (unless the statistic found that the null
   hypothesis holds by construction of the data, ``Prepared.holds``: then p = 1);
5. builds the result, which names what ran.

Nothing here branches on the kind of test, statistic, engine or method.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from ._guards import check_memory
from ._serial import serial_check
from ._warnings import DegenerateStatisticWarning
from .results._hints import hints
from .null import NullMethod, NullOutcome, RunContext
from .null.combine import resolve_combination
from .null.permutation import check_finite_statistic
from .results import KernelTestResult, result_class
from .statistics import Statistic
from .statistics.tuning import reportable

__all__ = ["prepare", "run", "run_each", "value"]


def _resolve(problem: Any, statistic: Statistic, engine: Any, method: NullMethod | None,
             tuning: str) -> Any:
    """Step 1: validate, choose the engine, check the memory; return the engine."""
    statistic.check(problem, tuning)
    req = statistic.requirements(problem, tuning)
    engine = engine.resolved(req, problem.n, problem.dims)
    why = engine.supports(req)
    if why:
        raise ValueError(why)
    if method is not None:
        method.check(statistic, problem, engine)
    batch = (getattr(method, "batch", None)
             or engine.batch(_scheme_kind(problem), problem.n, _n_resamples(method)) or 1)
    need, what, advice = statistic.memory(problem, engine, tuning, batch)
    need += _method_memory(method, problem.n, batch)
    check_memory(need, what, advice)
    return engine


def _scheme_kind(problem: Any) -> str:
    """The kind of the problem's arrangements ("none" for a problem without any)."""
    scheme = getattr(problem, "scheme", None)
    return "none" if scheme is None else str(scheme.kind)


def _n_resamples(method: NullMethod | None) -> int:
    n = getattr(method, "n_resamples", None)
    return int(n) if n is not None else 1


def _method_memory(method: NullMethod | None, n: int, batch: int) -> float:
    """The arrays a resampling method keeps: the null sample and one batch of indices."""
    if method is None or not method.test_options:
        return 0.0
    return 16.0 * _n_resamples(method) + 8.0 * n * batch


def value(problem: Any, statistic: Statistic, tuning: str) -> float:
    """The statistic of the data on the in-memory engine (no null): what the
    statistic-only functions (:func:`kmtests.mmd`, :func:`kmtests.hsic`) return."""
    from .engines import Exact

    _, observed, _, _ = prepare(problem, statistic, Exact(), tuning)
    return float(np.asarray(observed.stat).reshape(-1)[0])


def prepare(problem: Any, statistic: Statistic, engine: Any, tuning: str
            ) -> tuple[Any, Any, float, dict[str, Any]]:
    """The statistic of the data alone (no null): ``(prepared, observed, seconds, params)``.

    Used by the statistic-only functions (:func:`kmtests.mmd`, :func:`kmtests.hsic`).
    """
    engine = _resolve(problem, statistic, engine, None, tuning)
    prepared = statistic.prepare(problem, engine, tuning, None)
    t0 = time.perf_counter()
    observed, params = prepared.observed(None)
    seconds = time.perf_counter() - t0
    stat = np.asarray(observed.stat, dtype=np.float64).reshape(-1)
    for v in stat:
        check_finite_statistic(float(v), None, prepared.what)
    return prepared, observed, seconds, params


def _permutes(method: NullMethod) -> bool:
    """Whether `method` runs the permutation loop (the one reader of the slow advice)."""
    from .null import PermutationMethod

    return isinstance(method, PermutationMethod)


def run(problem: Any, statistic: Statistic, engine: Any, method: NullMethod, tuning: str
        ) -> KernelTestResult:
    """Run a test (see the module docs)."""
    engine = _resolve(problem, statistic, engine, method, tuning)
    serial_check(problem, method)  # warns when an i.i.d. null meets autocorrelated rows
    n_jobs = method.threads
    rng = method.source_of_randomness
    prepared = statistic.prepare(problem, engine, tuning, rng)
    prepared.combination = resolve_combination(prepared.combination)  # a name: its object
    if prepared.slow_advice is None and _permutes(method):  # read by the permutation loop only
        prepared.slow_advice = statistic.slow_advice(problem, engine, tuning)
    if prepared.on_sample is None and hasattr(problem, "with_sample"):
        prepared.on_sample = lambda data, jobs: statistic.prepare(
            problem.with_sample(data), engine, tuning, rng).observed(jobs)[0]
    t0 = time.perf_counter()
    observed, obs_params = prepared.observed(n_jobs)
    seconds = time.perf_counter() - t0
    stat = np.asarray(observed.stat, dtype=np.float64).reshape(-1)
    if prepared.combination is None:
        check_finite_statistic(float(stat[0]), None, prepared.what)
    if prepared.holds is not None:
        # the null holds by construction (the statistic says why): no null distribution
        warnings.warn(f"{prepared.holds}.", DegenerateStatisticWarning, stacklevel=5)
        out = NullOutcome(1.0, notes=[prepared.holds], details={"holds_trivially": True})
        return _result(problem, statistic, engine, method, prepared, float(stat[0]),
                       obs_params, out)
    ctx = RunContext(n_jobs=n_jobs, seconds_per_arrangement=seconds,
                     batch=engine.batch(_scheme_kind(problem), problem.n, _n_resamples(method)))
    out = method.run(prepared, problem, observed, ctx)
    return _result(problem, statistic, engine, method, prepared, float(stat[0]), obs_params,
                   out)


def run_each(problem: Any, statistics: list[Statistic], engine: Any, method: NullMethod,
             tuning: str) -> list[KernelTestResult]:
    """Several statistics of one problem, each with its own p-value, from one stream.

    With a permutation method, the statistics are computed on the *same* arrangements
    in one loop (common random numbers: differences between their p-values come from
    the statistics, not from Monte Carlo noise; :func:`kmtests.compare_estimators`).
    Other methods run each statistic on its own.
    """
    from .null import PermutationMethod
    from .null.combine import Separate
    from .statistics import Aggregate

    if not isinstance(method, PermutationMethod) or len(statistics) == 1:
        return [run(problem, s, engine, method, tuning) for s in statistics]
    agg = Aggregate(statistics, Separate())
    engine = _resolve(problem, agg, engine, method, tuning)
    n_jobs = method.threads
    prepared = agg.prepare(problem, engine, tuning, method.source_of_randomness)
    if prepared.slow_advice is None:
        prepared.slow_advice = agg.slow_advice(problem, engine, tuning)
    parts = prepared.details["parts"]
    if any(p.width != 1 for p in parts):
        raise ValueError("compare the statistics of one column each (one lambda, one "
                         "bandwidth).")
    t0 = time.perf_counter()
    observed, _ = prepared.observed(n_jobs)
    seconds = time.perf_counter() - t0
    ctx = RunContext(n_jobs=n_jobs, seconds_per_arrangement=seconds,
                     batch=engine.batch(_scheme_kind(problem), problem.n, _n_resamples(method)))
    out = method.run(prepared, problem, observed, ctx)
    assert out.members is not None
    results = []
    for j, (s, part, row) in enumerate(zip(statistics, parts, out.members)):
        vals, params = part.observed(n_jobs)  # the parameters chosen on the data
        member = NullOutcome(row["pvalue"], row["null"], out.exact, out.n_resamples,
                             row["count"])
        results.append(_result(problem, s, engine, method, part,
                               float(np.asarray(observed.stat).reshape(-1)[j]), params,
                               member))
    return results


def _result(problem: Any, statistic: Statistic, engine: Any, method: NullMethod,
            prepared: Any, observed: float, obs_params: dict[str, Any], out: Any
            ) -> KernelTestResult:
    """The result object: what ran, and the p-value with how it was obtained."""
    t_obs = observed if out.statistic is None else float(out.statistic)
    params = {**prepared.params, **{k: reportable(v) for k, v in obs_params.items()}}
    notes = (list(getattr(problem, "notes", ()))  # what the input conventions did
             + engine.notes(statistic.label(), problem.n, method.name == "permutation")
             + list(prepared.notes))
    restricted = getattr(getattr(problem, "scheme", None), "restriction", None) is not None
    if statistic.unbiased and prepared.combination is None and t_obs < 0 and not restricted:
        # (with strata or blocks the statistic's null mean need not be zero: paired
        # observations enter its cross terms)
        notes.append("the unbiased statistic is negative; it estimates a non-negative "
                     "quantity without bias, so it is negative about half the time when the "
                     "null hypothesis holds")
    for role, p in params.items():
        if p.get("converged") is False:
            notes.append(f"the estimator's optimiser did not converge on the {role} data "
                         f"({p.get('n_iter', '?')} iterations); its parameters are the best "
                         "found")
    notes += out.notes
    notes += hints(problem, prepared.kernels, params)  # likely set-up mistakes (issue 32)
    from ._rng import seed_of

    common: dict[str, Any] = dict(
        statistic=t_obs, pvalue=out.pvalue, null_distribution=out.null_distribution,
        method=method, exact=out.exact, n_resamples=out.n_resamples, count=out.count,
        statistic_name=statistic.label(), family=statistic.family(),
        statistic_description=statistic.describe(prepared),
        estimator=statistic.estimator, params=params,
        kernels=prepared.kernels, sizes={**problem.sizes, **prepared.sizes},
        seed=seed_of(method.source_of_randomness), tuning=prepared.tuning,
        data_name=problem.data_name, details={**prepared.report, **out.details},
        columns=dict(getattr(problem, "columns", {})),
        labels=tuple(getattr(problem, "labels", ("x", "y"))),
        notes=tuple(notes),
        kernel_notes={k: v for k, v in prepared.kernel_notes.items() if v},
        engine=engine.name, engine_info=prepared.engine_info, _witness=prepared.witness)
    aggregated = out.members is not None
    cls = result_class(problem.kind, aggregated)
    if aggregated:
        comb = prepared.combination
        common.update(members=out.members, combination=comb.name, alpha=comb.alpha,
                      threshold=out.threshold)
    return cls(**common)
