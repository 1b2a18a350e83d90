"""The one plan builder: a problem and a face's keywords -> (problem, statistic, engine,
null method, tuning).

Every public test is a *face*: a signature, a docstring and one call,
``_plan.run(data, locals())``, registered with the problem it tests by the decorator
``@_plan.face(ProblemClass)``. The plan reads each keyword by the axis
that declares it, validates everything before anything is computed, and hands the
five objects to the driver (:func:`kmtests._driver.run`):

========================  =====================================================
axis                      its keywords (who declares them)
========================  =====================================================
conventions               ``alternative``, ``nan_policy``, ``axis``, ``data_name``
problem                   the data; the kernel keywords of its roles
                          (``Problem.kernel_keywords``); ``strata``, ``blocks``
estimator                 ``estimator``, ``tuning``
statistic                 ``statistic``; the options statistics declare
                          (:data:`STATISTIC_OPTIONS`: ``Statistic.options``)
engine                    ``engine``; the options engines declare (``n_features``)
null method               ``method``; the options methods declare
                          (``n_resamples``, ``batch``, ``rng``, ``n_jobs``, ``progress``)
========================  =====================================================

The rules that used to live in faces live on the objects: the problem names its
default statistic and judges which null methods keep its null; a method name means
what it means for the problem (:data:`kmtests.null.VARIANTS`); a statistic refuses
the options and the estimator it does not use (:func:`kmtests.statistics.statistic_name`)
and designs the data it needs (points held out, kernels fitted:
``Statistic.design`` and ``Statistic.hold_out``); randomness goes to whatever draws:
the statistic's own draws, the null method's.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from types import CodeType
from typing import Any, Callable, Mapping, TypeVar

from . import _driver
from ._validation import check_choice
from .engines import Exact, resolve_engine
from .estimators import KME, resolve_estimator
from .null import NullMethod, method_class, method_statistic, resolve_method
from .null.combine import MinP
from .problems.conventions import check_alternative
from .results import KernelTestResult
from .scaleout import dask_engine, run_on_dask
from .statistics import STATISTICS, Statistic, resolve_statistic, statistic_class, statistic_name
from .statistics.tuning import TUNINGS

__all__ = ["Plan", "STATISTIC_OPTIONS", "build", "build_here", "engine_aliases", "face",
           "given_keywords", "plan_of", "run", "value"]

#: the face keywords that configure a statistic: the union of the registered statistics'
#: declared options
STATISTIC_OPTIONS: tuple[str, ...] = tuple(dict.fromkeys(
    opt for name, classes in STATISTICS.items() for cls in classes
    for opt in cls.keywords(name)))


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a test runs: the five objects the driver takes."""

    problem: Any
    statistic: Statistic
    engine: Any
    method: NullMethod | None
    tuning: str

    def run(self) -> KernelTestResult:
        """Run the test (:func:`kmtests._driver.run`)."""
        assert self.method is not None
        return _driver.run(self.problem, self.statistic, self.engine, self.method, self.tuning)


F = TypeVar("F", bound=Callable[..., Any])

#: the faces by their code: the problem they test and their signature
_FACES: dict[CodeType, tuple[Any, inspect.Signature]] = {}


def face(problem_cls: Any) -> Callable[[F], F]:
    """Register a function as a face of `problem_cls`: its body then calls :func:`run` (or
    :func:`value`, :func:`build_here`) with its data and ``locals()``."""
    def register(fn: F) -> F:
        _FACES[fn.__code__] = (problem_cls, inspect.signature(fn))
        return fn
    return register


def _face_of_caller() -> tuple[Any, inspect.Signature]:
    """The problem and signature of the face whose body called (two frames up)."""
    return _FACES[sys._getframe(2).f_code]


def given_keywords(face: Callable[..., Any] | inspect.Signature,
                   keywords: Mapping[str, Any]) -> dict[str, Any]:
    """The face's keywords (its ``locals()``) with the statistic options left at the face's
    default as None (not given), and the data removed."""
    sig = face if isinstance(face, inspect.Signature) else inspect.signature(face)
    params = sig.parameters
    out = {}
    for key, value in keywords.items():
        p = params.get(key)
        if p is None or p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY) or \
                p.default is inspect.Parameter.empty:
            continue
        if key in STATISTIC_OPTIONS and _is_default(value, p.default):
            value = None
        out[key] = value
    return out


def _is_default(value: Any, default: Any) -> bool:
    return value is default or (isinstance(value, str) and isinstance(default, str)
                                and value == default)


def _engine_alias(statistic: Any, engine: Any, kind: str) -> tuple[Any, Any]:
    """``engine="block" | "linear"`` names the statistic registered under that name, run on
    the statistic's own engine (as in 0.2): the statistics declare ``engine_aliases``."""
    if not isinstance(engine, str) or engine.lower() not in STATISTICS:
        return statistic, engine
    name = engine.lower()
    cls = statistic_class(name, kind) if any(kind in c.serves()
                                            for c in STATISTICS[name]) else None
    if cls is None or name not in getattr(cls, "engine_aliases", ()):
        return statistic, engine
    if statistic is not None and not (isinstance(statistic, str)
                                      and statistic.lower() in ("unbiased", name)):
        raise ValueError(f"engine={name!r} computes its own unbiased linear-time "
                         f"statistic; statistic={statistic!r} needs engine='exact' or "
                         "'streamed'.")
    return name, cls.default_engine


def engine_aliases(kind: str) -> tuple[str, ...]:
    """The statistics of a problem kind that an engine name stands for (``engine="block"``)."""
    return tuple(n for n, classes in STATISTICS.items() for c in classes
                 if kind in c.serves() and n in getattr(c, "engine_aliases", ()))


def build(problem_cls: Any, data: tuple[Any, ...], keywords: Mapping[str, Any],
          null: bool = True, names: tuple[str, ...] | None = None) -> Plan:
    """The plan of a test of `problem_cls` on `data` with the face's `keywords` (see the
    module docs; ``null=False``: the statistic alone, on the in-memory engine with no
    method; `names`: the statistic names accepted, default all the problem's)."""
    kw = dict(keywords)
    kind = problem_cls.kind
    check_alternative(kw.get("alternative", "greater"))
    tuning = check_choice(kw["tuning"], "tuning", TUNINGS) if "tuning" in kw else "pooled"
    statistic, engine = _engine_alias(kw.get("statistic"), kw.get("engine"), kind)
    method = kw.get("method")
    if statistic is None:  # the method's own statistic (the gamma: the biased form)
        statistic = method_statistic(method, kind)
    kernels = problem_cls.kernels(kw, data)
    est = resolve_estimator(kw["estimator"]) if "estimator" in kw else KME()
    est.rule()  # raises for estimators that cannot run inside a test
    options = {k: kw[k] for k in STATISTIC_OPTIONS if k in kw}
    name = None
    if not isinstance(statistic, Statistic):
        name = statistic_name(statistic, kind, est, options, names,
                              default=problem_cls.default_statistic(est))
    problem = problem_cls.from_data(data, kernels, data_name=kw.get("data_name"),
                                    axis=kw.get("axis", 0),
                                    nan_policy=kw.get("nan_policy", "raise"))
    problem = problem.restricted(kw.get("strata"), kw.get("blocks"))
    rng = kw.get("rng")
    # the statistic's own draws come from `rng`, or when it is None from a method object's
    source = (rng if rng is not None or not isinstance(method, NullMethod)
              else method.source_of_randomness)
    options["combination"] = MinP()  # a lambda grid: min-p with exact level
    if name is not None:
        problem, kernels = statistic_class(name, kind).design(name, problem, kernels, options,
                                                              source)
    stat = resolve_statistic(statistic if name is None else name, kind, kernels=kernels,
                             estimator=est, options=options)
    if not null:
        return Plan(problem, stat, Exact(), None, tuning)
    eng = (resolve_engine(stat.default_engine if engine is None else engine,
                          {"n_features": kw.get("n_features")},
                          scheme=problem_cls.engine_scheme, extra=engine_aliases(kind))
           if "engine" in kw else Exact())
    if stat.uses_threads:
        from .engines._threads import check_n_jobs

        stat.n_jobs = check_n_jobs(kw.get("n_jobs"))  # type: ignore[attr-defined]
    default = stat.default_method
    scheme = getattr(problem, "scheme", None)
    if scheme is not None and not scheme.full and "values" in stat.offers(eng):
        default = "permutation"  # restricted arrangements are drawn by permutations
    found = method_class(method, kind, default)
    takes_rng = found is not None and "rng" in found[0].test_options
    drawn = False
    if stat.holds_out():  # its training points
        problem = stat.hold_out(problem, source)
        drawn = True
    elif rng is not None and stat.draws(eng):
        stat.split_rng = rng  # type: ignore[attr-defined]
        drawn = True
    meth = resolve_method(method, n_resamples=kw.get("n_resamples"), batch=kw.get("batch"),
                          rng=rng if takes_rng or found is None else None,
                          n_jobs=kw.get("n_jobs"), progress=kw.get("progress"),
                          default=default, problem=problem)
    if rng is not None and not drawn and meth.source_of_randomness is None:
        problem = dataclasses.replace(problem, notes=problem.notes + (
            f"a seed (`rng`) was given, but method={meth.name!r} draws nothing: nothing was "
            "drawn, and the p-value is the same for every seed",))
    return Plan(problem, stat, eng, meth, tuning)


def run(data: tuple[Any, ...], keywords: Mapping[str, Any]) -> Any:
    """Build the plan of the calling face's call (its data and ``locals()``) and run it."""
    problem_cls, sig = _face_of_caller()
    if dask_engine(keywords.get("engine")):  # data past one machine: kmtests.scaleout
        return run_on_dask(problem_cls, data, given_keywords(sig, keywords), sig)
    return build(problem_cls, data, given_keywords(sig, keywords)).run()


def build_here(data: tuple[Any, ...], keywords: Mapping[str, Any]) -> Plan:
    """The plan of the calling face's call, not run (a face that adds to the result)."""
    problem_cls, sig = _face_of_caller()
    return build(problem_cls, data, given_keywords(sig, keywords))


def value(data: tuple[Any, ...], keywords: Mapping[str, Any],
          names: tuple[str, ...] | None = None) -> float:
    """The statistic of the calling statistic-only function (:func:`kmtests.mmd`, ...)."""
    problem_cls, sig = _face_of_caller()
    plan = build(problem_cls, data, given_keywords(sig, keywords), null=False, names=names)
    return _driver.value(plan.problem, plan.statistic, plan.tuning)


def plan_of(face: Callable[..., Any], *args: Any, **kwargs: Any) -> Plan:
    """The plan `face` would run when called with these arguments (for tools and tests that
    run a plan's pieces, e.g. a statistic's kernel form; and for several plans that share
    their draws, :func:`kmtests.compare_estimators`)."""
    problem_cls, sig = _FACES[face.__code__]
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    keywords = dict(bound.arguments)
    data = tuple(v for k, v in keywords.items()
                 if sig.parameters[k].default is inspect.Parameter.empty
                 and sig.parameters[k].kind is not inspect.Parameter.VAR_POSITIONAL)
    var = [k for k, p in sig.parameters.items() if p.kind is p.VAR_POSITIONAL]
    if var:
        data = tuple(keywords[var[0]])
    return build(problem_cls, data, given_keywords(sig, keywords))
