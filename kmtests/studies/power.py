"""Power studies: rejection rates of the kernel tests by scenario, estimator and size.

:func:`power_curve` runs a scenario many times, applies the test with each
estimator to the *same* data and the *same* permutations (common random
numbers), and returns a :class:`PowerCurveResult` with a tidy table (power,
Clopper-Pearson interval, mean p-value), an R-style ``summary()`` and
``plot()``.

Reproducibility: every repetition gets its own seed, a child of `rng` keyed by
the repetition's sample size, effect size and number (not by its position in
the design), so results are identical whatever `n_jobs` or backend (joblib,
or dask through joblib's ``"dask"`` backend), whatever the order of the
design, and whether a study is run at once or resumed from its checkpoint
file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import math
import os
import textwrap
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence, TypeVar

import numpy as np
import pandas as pd

from .._rng import keyed, root_sequence
from .._summary import Summary, settings_table
from .._summary import flow as _flow
from .._typing import SeedLike
from .._validation import check_positive_int
from ..datasets._scenarios import Scenario, get_scenario
from ..estimators import KernelMeanEstimator, resolve_estimator
from ..results._plot import plot_pvalue_qq
from ._checkpoint import CheckpointError, Row, canonical, open_checkpoint, write_output

__all__ = ["CheckpointError", "PowerCurveResult", "power_curve"]

_RAW_COLUMNS = ["scenario", "test", "n", "effect", "repetition", "estimator", "pvalue"]
# test options that change how fast a p-value is computed, not its value
_SPEED_ONLY = ("batch", "n_jobs", "data_name", "progress")
_TEST_NAMES = {"two_sample": "two-sample (MMD)", "independence": "independence (HSIC)",
               "k_sample": "k-sample (MMD)"}


def _task_seed(root: np.random.SeedSequence, n: int, effect: float,
               rep: int) -> np.random.SeedSequence:
    # A child keyed by the values (n, effect, repetition): independent of the
    # execution order and of the rest of the design.
    return keyed(root, n, int(np.float64(effect).view(np.uint64)), rep)


@dataclass(frozen=True)
class _Test:
    """One compared test of ``power_curve(tests=...)``: keyword arguments of the scenario's
    test (or of the aggregated test), or a callable ``f(*data, n_resamples, rng)``."""

    kwargs: dict[str, Any]
    aggregated: bool = False
    function: Any = None

    def null(self, kind: str) -> str:
        return "permutation" if self.function is not None else _null_of(self.kwargs, kind)

    def run(self, data: tuple[np.ndarray, ...], kind: str, n_resamples: int,
            rng: np.random.Generator) -> Any:
        if self.function is not None:
            return self.function(*data, n_resamples=n_resamples, rng=rng, **self.kwargs)
        return _call(_test_function(kind, self.aggregated), data, self.null(kind), n_resamples,
                     rng, self.kwargs)


#: engines of an asymptotic normal null, which take no permutation options
_NORMAL_ENGINES = ("block", "linear")
#: the null of a kind's test when `method` is not given (others: permutations)
_DEFAULT_NULL = {"conditional": "gamma", "one_sample": "wild"}
#: nulls computed without random draws: the tests take no `n_resamples` nor `rng`
_DETERMINISTIC = ("normal", "gamma")
#: the scenario kinds whose test has no `estimator=` (their rows say "kme")
_NO_ESTIMATOR = ("joint", "conditional", "one_sample")


def _null_of(kwargs: Mapping[str, Any], kind: str = "two_sample") -> str:
    """The null of a test with options `kwargs`: 'normal', 'gamma', 'wild', 'chi2',
    'bootstrap' or 'permutation'."""
    engine = kwargs.get("engine", "exact")
    if isinstance(engine, str) and engine.lower() in _NORMAL_ENGINES:
        return "normal"
    method = kwargs.get("method", _DEFAULT_NULL.get(kind, "permutation"))
    name = method.lower() if isinstance(method, str) else getattr(method, "name", "")
    return name if name in ("normal", "gamma", "wild", "chi2", "bootstrap") else "permutation"


def _call(test: Any, data: tuple[np.ndarray, ...], null: str, n_resamples: int,
          rng: np.random.Generator, kwargs: Mapping[str, Any]) -> Any:
    """`test` on the data: with the study's random stream, or none for a null computed
    without draws (the linear-time tests' normal, the gamma approximations)."""
    if null in _DETERMINISTIC:  # these refuse resampling options
        return test(*data, **kwargs)
    # the study shows its own progress; a bar per test would flood the output
    return test(*data, n_resamples=n_resamples, rng=rng, **{"progress": False, **kwargs})


def _qualname(obj: Any) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


#: the test of each scenario kind, by module and name (aggregated variants where they exist)
TESTS: dict[tuple[str, bool], tuple[str, str]] = {
    ("two_sample", False): ("twosample", "two_sample_test"),
    ("independence", False): ("independence", "independence_test"),
    ("k_sample", False): ("ksample", "k_sample_test"),
    ("joint", False): ("joint", "joint_independence_test"),
    ("conditional", False): ("conditional", "conditional_independence_test"),
    ("one_sample", False): ("goodness", "goodness_of_fit_test"),
    ("two_sample", True): ("aggregated", "aggregated_two_sample_test"),
    ("independence", True): ("aggregated", "aggregated_independence_test"),
}


def _test_function(kind: str, aggregated: bool) -> Any:
    try:
        module, name = TESTS[(kind, aggregated)]
    except KeyError:
        raise ValueError(f"no {'aggregated ' if aggregated else ''}test for scenarios of kind "
                         f"{kind!r}.") from None
    return getattr(importlib.import_module(f"kmtests.{module}"), name)


def _resolve_tests(tests: Any, kind: str, test_kwargs: dict[str, Any]
                   ) -> tuple[list[str], list[_Test]]:
    """Labels and configurations of ``power_curve(tests=...)``, validated."""
    if not isinstance(tests, Mapping) or not tests:
        raise TypeError("`tests` must be a non-empty dict {label: keyword-argument dict or "
                        "callable}.")
    labels, out = [], []
    for label, spec in tests.items():
        if not isinstance(label, str) or not label:
            raise TypeError(f"`tests` labels must be non-empty strings; got {label!r}.")
        if callable(spec):
            out.append(_Test(dict(test_kwargs), function=spec))
        elif isinstance(spec, Mapping):
            kw = {**test_kwargs, **dict(spec)}
            agg = bool(kw.pop("aggregated", False))
            for bad in ("n_resamples", "rng"):
                if bad in kw:
                    raise ValueError(f"`tests[{label!r}]` must not contain {bad!r}; it is set "
                                     "by power_curve.")
            fn = _test_function(kind, agg)
            unknown = sorted(set(kw) - set(inspect.signature(fn).parameters))
            if unknown:
                raise ValueError(f"`tests[{label!r}]` must hold options of {fn.__name__}; got "
                                 f"{unknown}.")
            out.append(_Test(kw, aggregated=agg))
        else:
            raise TypeError(f"`tests[{label!r}]` must be a dict of keyword arguments or a "
                            f"callable; got {type(spec).__name__}.")
        labels.append(label)
    return labels, out


def _run_task(scenario: Scenario, n: int, effect: float, rep: int, seed: np.random.SeedSequence,
              estimators: Sequence[Any], labels: Sequence[str], n_resamples: int,
              test_kwargs: dict[str, Any]) -> list[Row]:
    """One repetition: one data set, the given estimators (or tests), one permutation
    stream."""
    data_seed, perm_seed = seed.spawn(2)
    data = tuple(scenario.sample(n, effect, np.random.default_rng(data_seed)))
    test = _test_function(scenario.kind, False)
    rows: list[Row] = []
    for est, label in zip(estimators, labels):
        # the same permutation stream for every estimator: common random numbers
        if isinstance(est, _Test):
            if scenario.model_factory is not None and est.function is None:  # goodness of fit
                est = dataclasses.replace(est, kwargs={"model": scenario.model, **est.kwargs})
            res = est.run(data, scenario.kind, n_resamples, np.random.default_rng(perm_seed))
        else:
            kw = test_kwargs if scenario.kind in _NO_ESTIMATOR else {"estimator": est,
                                                                    **test_kwargs}
            if scenario.model_factory is not None:  # the model of a goodness-of-fit sample
                kw = {"model": scenario.model, **kw}
            res = _call(test, data, _null_of(test_kwargs, scenario.kind), n_resamples,
                        np.random.default_rng(perm_seed), kw)
        if not (hasattr(res, "statistic") and hasattr(res, "pvalue")):
            raise TypeError(f"the {label} test returned {type(res).__name__}; a test must "
                            "return a result with `statistic` and `pvalue` attributes.")
        stat, p = float(res.statistic), float(res.pvalue)
        if not (math.isfinite(stat) and 0.0 <= p <= 1.0):
            raise ValueError(
                f"the {label} test returned statistic {stat} and p-value {p} for n = {n}, "
                f"effect = {effect:g}, repetition {rep} of scenario {scenario.name!r}; a "
                "non-finite statistic makes the p-value meaningless (check the kernel and "
                "the scale of the data).")
        rows.append((scenario.name, scenario.kind, n, effect, rep, label, p))
    return rows


def _field_defaults(est: Any) -> dict[str, Any]:
    out = {}
    for f in dataclasses.fields(est):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def _short(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"array{v.shape}"
    return repr(v.item() if isinstance(v, np.generic) else v)


def _auto_label(est: Any) -> str:
    """The registry name, with the parameters that differ from their defaults."""
    defaults = _field_defaults(est)
    changed = [(k, v) for k, v in est.get_params().items()
               if k not in defaults or canonical(v, vouched=True) != canonical(
                   defaults[k], vouched=True)]
    if not changed:
        return est.name
    return f"{est.name}({', '.join(f'{k}={_short(v)}' for k, v in changed)})"


def _resolve_estimators(estimators: Any) -> tuple[list[str], list[Any]]:
    if isinstance(estimators, Mapping):
        items = [(k, v) for k, v in estimators.items()]
        for k, _ in items:
            if not isinstance(k, str) or not k:
                raise TypeError(f"`estimators` labels must be non-empty strings; got {k!r}.")
    elif isinstance(estimators, (str, KernelMeanEstimator)):
        items = [(None, estimators)]
    else:
        items = [(None, e) for e in estimators]
    if not items:
        raise ValueError("`estimators` must name at least one estimator.")
    objs = [resolve_estimator(e) for _, e in items]
    labels = [k if k is not None else _auto_label(o) for (k, _), o in zip(items, objs)]
    if len(set(labels)) != len(labels):
        raise ValueError(f"`estimators` must have distinct names; got {labels} (pass a dict "
                         "{label: estimator} to name them).")
    return labels, objs


def _seed_settings(root: np.random.SeedSequence) -> dict[str, Any]:
    return {"entropy": canonical(root.entropy), "spawn_key": [int(k) for k in root.spawn_key],
            "pool_size": int(root.pool_size)}


def _seed_from_settings(d: dict[str, Any]) -> np.random.SeedSequence:
    return np.random.SeedSequence(d["entropy"], spawn_key=tuple(d["spawn_key"]),
                                  pool_size=d["pool_size"])


def _check_n_jobs(n_jobs: Any) -> int | None:
    if n_jobs is None:
        return None
    if (isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, (int, np.integer))
            or not (n_jobs == -1 or n_jobs >= 1)):
        raise ValueError(f"`n_jobs` must be None, -1 or a positive integer; got {n_jobs!r}.")
    return int(n_jobs)


def _require(module: str, feature: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        package = module.split(".")[0]
        raise ImportError(f"{feature} needs {package}, which is not installed: "
                          "pip install 'kmtests[power]'") from exc


_H = TypeVar("_H", bound=Hashable)


def _distinct(values: list[_H], name: str) -> list[_H]:
    if not values:
        raise ValueError(f"`{name}` must contain at least one value.")
    if len(set(values)) != len(values):
        raise ValueError(f"`{name}` must not repeat a value; got {values}.")
    return values


# -- the steps of power_curve -------------------------------------------------------------
#: (n, effect, repetition, label): the key of one p-value of a study
_Key = tuple[int, float, int, str]
#: (n, effect, repetition, compared objects, their labels): one repetition to run
_Task = tuple[int, float, int, list[Any], list[str]]


@dataclass(frozen=True)
class _Study:
    """The validated design of a :func:`power_curve` call."""

    scen: Scenario
    sizes: list[int]
    effs: list[float]
    repetitions: int
    n_resamples: int
    test_kwargs: dict[str, Any]
    labels: list[str]
    objs: list[Any]


def _check_design(scenario: str | Scenario, sample_sizes: Iterable[int],
                  effects: Iterable[float] | None, repetitions: int, n_resamples: int,
                  alpha: float | Sequence[float]
                  ) -> tuple[Scenario, list[int], list[float], int, int, tuple[float, ...]]:
    """The scenario, sizes, effects, repetitions, permutations and levels, validated."""
    scen = get_scenario(scenario)
    sizes = _distinct([check_positive_int(int(n) if isinstance(n, np.integer) else n,
                                          "sample_sizes") for n in sample_sizes], "sample_sizes")
    effs = [float(scen.default_effect)] if effects is None else [float(e) + 0.0 for e in effects]
    _distinct(effs, "effects")
    if not all(math.isfinite(e) for e in effs):
        raise ValueError(f"`effects` must be finite numbers; got {effs}.")
    repetitions = check_positive_int(repetitions, "repetitions")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    alphas = tuple(_distinct([float(a) for a in np.atleast_1d(alpha)], "alpha"))
    if not all(0 < a < 1 for a in alphas):
        raise ValueError(f"`alpha` must be in (0, 1); got {alphas}.")
    return scen, sizes, effs, repetitions, n_resamples, alphas


def _check_test_kwargs(test_kwargs: dict[str, Any] | None) -> dict[str, Any]:
    out = dict(test_kwargs or {})
    for bad in ("estimator", "n_resamples", "rng"):
        if bad in out:
            raise ValueError(f"`test_kwargs` must not contain {bad!r}; it is set by power_curve.")
    return out


def _resolve_compared(estimators: Any, tests: Mapping[str, Any] | None, kind: str,
                      test_kwargs: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """Labels and objects of the compared estimators (or of `tests`)."""
    if tests is not None:
        labels, configs = _resolve_tests(tests, kind, test_kwargs)
        return labels, list(configs)
    labels, objs = _resolve_estimators(estimators)
    if kind in _NO_ESTIMATOR and any(o.name != "kme" for o in objs):
        raise ValueError(f"the {kind} test of this scenario has no kernel mean estimator "
                         "option; compare its variants with `tests` (e.g. {'tuned': {}, "
                         "'fixed': {'lam': 1e-5}}).")
    test = _test_function(kind, False)
    unknown = sorted(set(test_kwargs) - set(inspect.signature(test).parameters))
    if unknown:
        raise ValueError(f"`test_kwargs` must be options of {test.__name__}; got {unknown}.")
    return labels, objs


def _check_scenario_design(scen: Scenario, sizes: list[int], effs: list[float]) -> None:
    if scen.max_n is not None and max(sizes) > scen.max_n:
        raise ValueError(f"scenario {scen.name!r} has at most {scen.max_n} observations; "
                         f"got n = {max(sizes)}.")
    for e in effs:  # the scenario validates its effects
        scen.sample(min(sizes), e, 0)


def _describe_model(model: Any) -> dict[str, Any]:
    """A goodness-of-fit scenario's model for the checkpoint: its family and parameters."""
    dist = getattr(model, "dist", None)
    name = getattr(dist, "name", None) or type(model).__name__
    args = [np.asarray(a).tolist() for a in getattr(model, "args", ())]
    kwds = {k: np.asarray(v).tolist() for k, v in getattr(model, "kwds", {}).items()}
    for attr in ("mean", "cov"):  # multivariate_normal keeps its parameters as attributes
        value = getattr(model, attr, None)
        if isinstance(value, np.ndarray):
            kwds[attr] = value.tolist()
    return {"family": name, "args": args, "kwds": kwds}


def _checkpoint_settings(study: _Study, root: np.random.SeedSequence,
                         label: str | None) -> dict[str, Any]:
    """What gives a row of the study its meaning, as recorded in the checkpoint file.

    Callables are described by what they compute (:func:`canonical`); with a
    `label`, what cannot be described is recorded as unidentified, and the
    label stands for it.
    """
    from .. import __version__  # read when the study runs (a test changes it)

    scen, vouched = study.scen, label is not None
    settings = {
        "kmtests": __version__,
        "scenario": {"name": scen.name, "kind": scen.kind, "max_n": scen.max_n,
                     "sampler": canonical(scen.sampler, "scenario.sampler", vouched=vouched),
                     **({"model": _describe_model(scen.model)}
                        if scen.model_factory is not None else {})},
        "seed": _seed_settings(root),
        "n_resamples": study.n_resamples,
        "test_kwargs": canonical({k: v for k, v in study.test_kwargs.items()
                                  if k not in _SPEED_ONLY}, "test_kwargs", vouched=vouched),
        "estimators": {lab: _describe_compared(lab, o, vouched)
                       for lab, o in zip(study.labels, study.objs)},
    }
    if label is not None:
        settings["label"] = label
    return settings


#: the name a compared test is recorded under in checkpoint files: kmtests.power was its module
#: until 0.2 (now kmtests.studies.power); kept, so that the files written before still resume
_TEST_CLASS = "kmtests.power._Test"


def _describe_compared(label: str, obj: Any, vouched: bool) -> Any:
    if not isinstance(obj, _Test):
        return canonical(obj, f"estimators[{label!r}]", vouched=vouched)
    where = f"tests[{label!r}]"
    fields = {"aggregated": obj.aggregated, "function": obj.function, "kwargs": obj.kwargs}
    return {"class": _TEST_CLASS, "fields": {
        k: canonical(v, where, vouched=vouched) for k, v in fields.items()}}


def _check_checkpoint_label(label: Any, checkpoint: Any) -> str | None:
    if label is None:
        return None
    if not isinstance(label, str) or not label:
        raise TypeError(f"`checkpoint_label` must be a non-empty string or None; got {label!r}.")
    if checkpoint is None:
        raise ValueError("`checkpoint_label` needs `checkpoint`: it labels the settings "
                         "recorded in a checkpoint file.")
    return label


def _record(pvalues: dict[_Key, float], rows: Iterable[Row]) -> None:
    pvalues.update(((r[2], r[3], r[4], r[5]), r[6]) for r in rows)


def _pending_tasks(study: _Study, pvalues: dict[_Key, float]) -> list[_Task]:
    """The repetitions with at least one (estimator) row missing from `pvalues`."""
    tasks = []
    for n in study.sizes:
        for e in study.effs:
            for rep in range(study.repetitions):
                todo = [j for j, lab in enumerate(study.labels)
                        if (n, e, rep, lab) not in pvalues]
                if todo:
                    tasks.append((n, e, rep, [study.objs[j] for j in todo],
                                  [study.labels[j] for j in todo]))
    return tasks


def _execute(study: _Study, tasks: list[_Task], root: np.random.SeedSequence,
             record: Callable[[list[Row]], None], joblib: Any, n_jobs: int | None) -> None:
    """Run `tasks` (serially, or through joblib) and `record` each one's rows."""
    args = [(study.scen, n, e, rep, _task_seed(root, n, e, rep), objs, labs,
             study.n_resamples, study.test_kwargs) for n, e, rep, objs, labs in tasks]
    if joblib is None:
        for a in args:
            record(_run_task(*a))
        return
    calls = (joblib.delayed(_run_task)(*a) for a in args)
    parts = joblib.Parallel(n_jobs=n_jobs, return_as="generator")(calls)
    with contextlib.closing(parts):
        for part in parts:
            record(part)


def _raw_frame(study: _Study, pvalues: dict[_Key, float]) -> pd.DataFrame:
    """The raw table, in the order (n, effect, repetition, label as given)."""
    order = {lab: i for i, lab in enumerate(study.labels)}
    keys = sorted(((n, e, rep, lab) for n in study.sizes for e in study.effs
                   for rep in range(study.repetitions) for lab in study.labels),
                  key=lambda k: (k[0], k[1], k[2], order[k[3]]))
    kind = study.scen.kind
    nulls = {lab: o.null(kind) if isinstance(o, _Test) else _null_of(study.test_kwargs, kind)
             for lab, o in zip(study.labels, study.objs)}
    raw = pd.DataFrame([(study.scen.name, study.scen.kind, *k, pvalues[k], nulls[k[3]])
                        for k in keys], columns=[*_RAW_COLUMNS, "null"])
    return raw.astype({"scenario": str, "test": str, "estimator": str, "n": int,
                       "effect": float, "repetition": int, "pvalue": float, "null": str})



@dataclass(frozen=True, eq=False)
class PowerCurveResult:
    """Result of :func:`power_curve`.

    Attributes
    ----------
    raw : pandas.DataFrame
        One row per repetition and estimator: scenario, test, n, effect,
        repetition, estimator, pvalue, null. ``null`` is the test's null
        distribution: ``"permutation"`` (`n_resamples` permutations; callables
        in `tests` always receive them), ``"normal"`` (the asymptotic null of
        ``engine="block"`` and ``"linear"``, which are given no permutation
        options), ``"gamma"`` (``method="gamma"``) or ``"wild"`` (the wild
        bootstrap of ``method="wild"``, `n_resamples` draws).
    alpha : tuple of float
        Significance levels of the table.
    n_resamples : int
        Permutations per test.
    seed : int or None
        The integer seed, when `rng` was given as one.
    scenario : str
    description : str
        The scenario's model.
    estimators : tuple of str
        The estimators' labels, in the order given.
    test_kwargs : dict
        The extra test options of the study.
    root_seed : numpy.random.SeedSequence or None
        The root of every repetition's seed; ``power_curve(..., rng=root_seed)``
        repeats the study, also one run with ``rng=None``.
    """

    raw: pd.DataFrame
    alpha: tuple[float, ...]
    n_resamples: int
    seed: int | None = None
    scenario: str = ""
    description: str = ""
    _table: pd.DataFrame | None = field(default=None, repr=False)
    estimators: tuple[str, ...] = ()
    test_kwargs: dict[str, Any] = field(default_factory=dict)
    root_seed: np.random.SeedSequence | None = None

    def _estimator_order(self) -> list[str]:
        present = list(pd.unique(self.raw["estimator"]))
        return [e for e in self.estimators if e in present] + [
            e for e in present if e not in self.estimators]

    def table(self, conf_level: float = 0.95) -> pd.DataFrame:
        """Tidy table: power = mean(p <= alpha) with a Clopper-Pearson interval.

        Columns: scenario, test, estimator, n, effect, alpha, repetitions,
        rejections, power, ci_low, ci_high, mean_pvalue; one row per
        estimator, design point and level, in the order of the estimators.

        Parameters
        ----------
        conf_level : float
            Confidence level of the interval ``[ci_low, ci_high]``.

        Returns
        -------
        pandas.DataFrame

        Examples
        --------
        >>> from kmtests.power import power_curve
        >>> res = power_curve("linear", sample_sizes=[20], effects=[1.0],
        ...                   repetitions=10, n_resamples=49, rng=1)
        >>> row = res.table().iloc[0]
        >>> int(row["rejections"]), round(float(row["ci_low"]), 3)
        (9, 0.555)
        """
        from statsmodels.stats.proportion import proportion_confint

        keys = ["scenario", "test", "estimator", "n", "effect"]
        order = {e: i for i, e in enumerate(self._estimator_order())}
        rows = []
        for key, g in self.raw.groupby(keys, sort=True):
            p = g["pvalue"].to_numpy()
            for a in self.alpha:
                k = int(np.sum(p <= a))
                lo, hi = proportion_confint(k, p.size, alpha=1 - conf_level, method="beta")
                rows.append({**dict(zip(keys, key)), "alpha": a, "repetitions": p.size,
                             "rejections": k, "power": k / p.size, "ci_low": float(lo),
                             "ci_high": float(hi), "mean_pvalue": float(p.mean())})
        out = pd.DataFrame(rows)
        if len(out):
            out = out.sort_values(["estimator", "n", "effect", "alpha"], key=lambda s: (
                s.map(order) if s.name == "estimator" else s), kind="stable", ignore_index=True)
        return out

    def summary(self, alpha: float | None = None) -> Summary:
        """R-style text report: the settings, then one table per estimator.

        Each estimator's table has one line per design point (n, effect) with
        the repetitions, rejections, power, its Clopper-Pearson 95% interval
        and the mean p-value; every line fits in 80 columns.

        Parameters
        ----------
        alpha : float, optional
            The level to report (one of the study's; default: the first).

        Returns
        -------
        Summary
            Prints as text; ``as_html()`` for notebooks.

        Examples
        --------
        >>> from kmtests.power import power_curve
        >>> res = power_curve("linear", sample_sizes=[20], effects=[1.0],
        ...                   repetitions=10, n_resamples=49, rng=1)
        >>> text = str(res.summary())
        >>> print(text.splitlines()[0].strip())
        Power study: linear (alpha = 0.05)
        >>> max(len(line) for line in text.splitlines()) <= 80
        True
        """
        from statsmodels.iolib.table import SimpleTable

        a = self.alpha[0] if alpha is None else alpha
        tab = self.table()
        tab = tab[np.isclose(tab["alpha"], a)]
        if tab.empty:
            raise ValueError(f"`alpha` must be one of the study's levels {self.alpha}; got {a}.")
        test = str(self.raw["test"].iloc[0])
        reps = sorted(set(tab["repetitions"]))
        def fit(text: str, width: int) -> str:  # the full text is in the notes
            return text if len(text) <= width else text[:width - 3] + "..."

        settings = [("scenario", fit(self.scenario, 21)), ("test", _TEST_NAMES.get(test, test)),
                    ("estimators", str(tab["estimator"].nunique())),
                    ("repetitions", "-".join(str(r) for r in (reps[0], reps[-1]))
                     if len(reps) > 1 else str(reps[0])),
                    ("n_resamples", str(self.n_resamples)),
                    ("seed", "-" if self.seed is None else str(self.seed))]

        blocks, _ = settings_table(_flow(settings),
                                   fit(f"Power study: {self.scenario} (alpha = {a:g})", 78))
        tables = list(blocks)
        header = ["n", "effect", "reps", "rejected", "power", "ci_low", "ci_high", "mean_p"]
        # 8 columns of 8 and 7 gaps of 2: as wide as the settings table (78)
        fmt = {"data_fmts": ["%s"], "empty_cell": "", "colwidths": 8, "colsep": "  ",
               "row_pre": "", "row_post": "", "table_dec_above": "=",
               "table_dec_below": "=", "header_dec_below": "-", "header_fmt": "%s",
               "stub_fmt": "%s", "title_align": "l", "header_align": "r",
               "data_aligns": "r", "stubs_align": "l", "fmt": "txt"}
        for est in self._estimator_order():
            g = tab[tab["estimator"] == est]
            data = [[str(r.n), f"{r.effect:g}", str(r.repetitions), str(r.rejections),
                     f"{r.power:.3f}", f"{r.ci_low:.3f}", f"{r.ci_high:.3f}",
                     f"{r.mean_pvalue:.3f}"] for r in g.itertuples()]
            title = fit(f"estimator: {est}", 78)
            tables.append(SimpleTable(data, headers=header, title=title, txt_fmt=dict(fmt)))
        return Summary(tables, self._notes())

    def _notes(self) -> list[str]:
        """The notes of :meth:`summary`: the model, the tests' nulls, long labels, options."""
        nulls = set(self.raw["null"]) if "null" in self.raw else {"permutation"}
        drawn = sorted(nulls - set(_DETERMINISTIC))
        draws = (f"{' and '.join(drawn)} nulls with B = {self.n_resamples} draws"
                 if drawn and drawn != ["permutation"] else
                 f"permutation tests with B = {self.n_resamples}" if drawn else
                 "nulls computed without random draws")
        notes = [f"Scenario {self.scenario}: {self.description}",
                 f"{draws[0].upper()}{draws[1:]}; power = mean(p <= alpha), "
                 "ci_low and ci_high the Clopper-Pearson 95% interval; all estimators see the "
                 "same data and random draws in each repetition."]
        if "null" in self.raw:
            for null, what in (("normal", "asymptotic normal null"),
                               ("gamma", "gamma approximation of the null")):
                labels = [e for e in self._estimator_order()
                          if null in set(self.raw.loc[self.raw["estimator"] == e, "null"])]
                if labels:
                    notes.append(f"{', '.join(labels)}: {what} (no permutations).")
        long_labels = [e for e in self._estimator_order() if len(f"estimator: {e}") > 78]
        if long_labels:
            notes.append("Estimators: " + "; ".join(long_labels))
        if self.test_kwargs:
            notes.append("Test options: " + ", ".join(
                f"{k}={v!r}" for k, v in self.test_kwargs.items()))
        if self.seed is None and self.root_seed is not None:
            notes.append(f"Root seed: entropy {self.root_seed.entropy}, spawn key "
                         f"{tuple(self.root_seed.spawn_key)} (pass `root_seed` as `rng` to "
                         "repeat the study).")
        return notes

    def __str__(self) -> str:
        return str(self.summary())

    def plot_qq(self, ax: Any = None, *, effect: float = 0.0, level: float = 0.95) -> Any:
        """QQ plot of the p-values at one effect (default 0: under the null) against the
        uniform distribution, one line per estimator and sample size.

        Under the null a valid test's p-values are uniform (or stochastically
        larger): the lines should stay inside the band, the central `level`
        interval of the uniform order statistics (pointwise). Requires
        matplotlib (``pip install 'kmtests[plot]'``).

        Parameters
        ----------
        ax : matplotlib Axes, optional
        effect : float
            The effect whose p-values are drawn (a study's null is effect 0).
        level : float
            Coverage of the band.

        Returns
        -------
        matplotlib.axes.Axes

        Examples
        --------
        >>> from kmtests.power import power_curve
        >>> res = power_curve("linear", sample_sizes=[20], effects=[0.0], repetitions=20,
        ...                   n_resamples=19, rng=0)
        >>> ax = res.plot_qq()
        >>> ax.get_ylabel()
        'p-value'
        """
        if not 0 < level < 1:
            raise ValueError(f"`level` must be in (0, 1); got {level!r}.")
        raw = self.raw[np.isclose(self.raw["effect"].to_numpy(dtype=float), effect)]
        if raw.empty:
            effects = sorted(set(self.raw["effect"]))
            raise ValueError(f"the study has no repetitions at effect {effect!r}; its effects "
                             f"are {effects}.")
        several = raw["n"].nunique() > 1
        groups: dict[str, np.ndarray] = {}
        for est in self._estimator_order():
            for n, g in raw[raw["estimator"] == est].groupby("n", sort=True):
                label = f"{est}, n = {n}" if several else str(est)
                groups[label] = g["pvalue"].to_numpy(dtype=float)
        what = "under the null" if effect == 0 else f"at effect {effect:g}"
        return plot_pvalue_qq(groups, ax, level, title=f"{self.scenario}: p-values {what}")

    def plot(self, ax: Any = None, *, alpha: float | None = None, x: str | None = None,
             at: float | None = None) -> Any:
        """Power against sample size (or effect), one line per estimator.

        Every estimator has its own colour, line style and marker; its
        Clopper-Pearson 95% intervals are drawn as light vertical bars, and
        the estimators are dodged sideways by a small offset, so that
        estimators with equal power stay visible. The title is the scenario's
        name, the value of the other variable (the effect size of a curve
        against ``n``, the sample size of a curve against the effect) and the
        model. Requires matplotlib (``pip install kmtests[plot]``).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        alpha : float, optional
            The level to plot (default: the study's first).
        x : {'n', 'effect'}, optional
            The horizontal axis (default: ``'n'`` when several sizes were run).
        at : float, optional
            The value of the other variable (effect for ``x='n'``, size for
            ``x='effect'``) to plot, one of the study's (default: the
            largest); it is shown in the title.

        Returns
        -------
        matplotlib.axes.Axes

        Examples
        --------
        >>> from kmtests.power import power_curve
        >>> res = power_curve("linear", estimators=["kme", "skmse"],
        ...                   sample_sizes=[10, 20], repetitions=5, n_resamples=19, rng=0)
        >>> ax = res.plot()
        >>> [line.get_label() for line in ax.get_lines()[:2]]
        ['kme', 'skmse']
        >>> print(ax.get_title().split(":")[0])
        linear (effect = 0.3)
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("plot() needs matplotlib: pip install 'kmtests[plot]'") from exc
        from matplotlib.colors import to_rgba

        a = self.alpha[0] if alpha is None else alpha
        tab = self.table()
        tab = tab[np.isclose(tab["alpha"], a)]
        if x is None:
            x = "n" if tab["n"].nunique() > 1 else "effect"
        if x not in ("n", "effect"):
            raise ValueError(f"`x` must be 'n' or 'effect'; got {x!r}.")
        other = "effect" if x == "n" else "n"
        values = sorted(set(tab[other]))
        at = values[-1] if at is None else at
        if not any(np.isclose(at, v) for v in values):
            raise ValueError(f"`at` must be one of the study's {other} values {values}; "
                             f"got {at!r}.")
        tab = tab[np.isclose(tab[other], at)]
        fixed = f" ({other} = {at:g})"  # also when the study has one: the curve's effect
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 4.5))
        ests = self._estimator_order()
        xs = np.unique(tab[x].to_numpy(dtype=float))
        gap = float(np.min(np.diff(xs))) if xs.size > 1 else max(abs(float(xs[0])), 1.0)
        step = 0.25 * gap / max(len(ests), 1)
        colours = plt.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
        styles = ["-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3))]
        markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
        for i, est in enumerate(ests):
            g = tab[tab["estimator"] == est].sort_values(x)
            pos = g[x].to_numpy(dtype=float) + (i - (len(ests) - 1) / 2) * step
            colour = colours[i % len(colours)]
            ax.errorbar(pos, g["power"], yerr=[g["power"] - g["ci_low"], g["ci_high"] - g["power"]],
                        fmt="none", ecolor=to_rgba(colour, 0.3), elinewidth=5, capsize=0,
                        label="_nolegend_", zorder=2)
            ax.plot(pos, g["power"], color=colour, ls=styles[i % len(styles)],
                    marker=markers[i % len(markers)], lw=1.6, ms=5, label=est, zorder=3)
        ax.axhline(a, color="grey", lw=0.8, ls="--", label="_nolegend_")
        ax.set_xticks(xs)
        ax.set_xlabel("sample size n" if x == "n" else "effect size")
        ax.set_ylabel(f"power at alpha = {a:g}")
        ax.set_ylim(-0.02, 1.02)
        title = f"{self.scenario}{fixed}: {self.description}" if self.description else (
            self.scenario + fixed)
        ax.set_title(textwrap.fill(title, 70), fontsize=10)
        ax.legend(title="estimator (bars: 95% CI)", fontsize=8, title_fontsize=8)
        return ax

    def to_csv(self, path: str | os.PathLike[str]) -> None:
        """Write the raw p-values to a CSV file (atomically).

        The file is a plain table; to resume a study, use the `checkpoint`
        argument of :func:`power_curve`, whose file also records the settings.

        Parameters
        ----------
        path : str or path-like
            The file to write: a regular file is replaced through a temporary
            file renamed over it (a symbolic link is kept and its target
            replaced); a FIFO or character device (``/dev/stdout``) is written
            through; a directory, block device or socket is refused
            (``ValueError``).

        Examples
        --------
        >>> import os, tempfile
        >>> import pandas as pd
        >>> from kmtests.power import power_curve
        >>> res = power_curve("linear", sample_sizes=[8], repetitions=3,
        ...                   n_resamples=19, rng=1)
        >>> path = os.path.join(tempfile.mkdtemp(), "raw.csv")
        >>> res.to_csv(path)
        >>> list(pd.read_csv(path).columns)
        ['scenario', 'test', 'n', 'effect', 'repetition', 'estimator', 'pvalue', 'null']
        """
        write_output(path, self.raw.to_csv(index=False))


def power_curve(
    scenario: str | Scenario,
    *,
    estimators: Iterable[Any] | Mapping[str, Any] = ("kme",),
    sample_sizes: Iterable[int] = (20, 40, 80),
    effects: Iterable[float] | None = None,
    repetitions: int = 100,
    alpha: float | Sequence[float] = 0.05,
    n_resamples: int = 199,
    rng: SeedLike = None,
    n_jobs: int | None = None,
    progress: bool = False,
    checkpoint: str | os.PathLike[str] | None = None,
    test_kwargs: dict[str, Any] | None = None,
    tests: Mapping[str, Any] | None = None,
    checkpoint_label: str | None = None,
) -> PowerCurveResult:
    """Power of the kernel test of a scenario across estimators and sizes.

    Parameters
    ----------
    scenario : str or Scenario
        A name from :data:`kmtests.datasets.SCENARIOS` (``"mean_shift"``,
        ``"variance_shift"``, ``"mixture_vs_gaussian"``, ``"heavy_tails"``,
        ``"linear"``, ``"sinusoidal"``, ``"circular"``, ``"eckerle"``) or a
        :class:`~kmtests.datasets.Scenario`; its kind picks the test.
    estimators : iterable of str or estimator objects, or dict
        Compared on the same data and permutations. An estimator is labelled
        by its registry name, followed by the parameters that differ from
        their defaults (``SKMSE(shrinkage=0.3)`` is ``"skmse(shrinkage=0.3)"``);
        a dict ``{label: estimator}`` gives labels of your own.
    sample_sizes : iterable of int
        Sizes n (per sample for two-sample scenarios), distinct.
    effects : iterable of float, optional
        Effect sizes, distinct (default: the scenario's default effect). The
        design is the product sizes x effects; ``effect = 0`` measures the level.
    repetitions : int
        Data sets per design point.
    alpha : float or sequence of float
        Levels at which power is tabulated.
    n_resamples : int
        Permutations per test.
    rng : None, int, SeedSequence or Generator
        Root seed. With an int or SeedSequence, results are reproducible
        whatever `n_jobs`; a Generator is used to draw a root seed; None
        draws fresh entropy (recorded in the result's ``root_seed`` and in
        the checkpoint file, see `checkpoint`).
    n_jobs : int, optional
        Parallel workers through joblib: None (serial), -1 (all cores) or a
        positive number. Inside ``joblib.parallel_config(backend="dask")`` the
        tasks run on a dask cluster.
    progress : bool
        Show a tqdm progress bar (needs tqdm).
    checkpoint : path, optional
        File of the study's raw p-values, which makes the study resumable. Its
        header records what gives a row its meaning: the scenario, the root
        seed, `n_resamples`, `test_kwargs`, each estimator's (or test's)
        configuration and the kmtests version; a file written with other
        settings is refused (:class:`CheckpointError`, naming what differs).
        Callables (a scenario's sampler, a test or kernel given as a function,
        lambda, :func:`functools.partial` or bound method) are recorded by
        what they compute: their code, constants, defaults, closure variables
        and the globals they read, a partial's arguments, a method's
        instance. One that holds an object without a stable description (a
        ``repr`` with a memory address) is refused unless `checkpoint_label`
        is given. Rows found in the file
        are reused and only the missing (repetition, estimator) pairs are run,
        so the design can grow (more repetitions, sizes, effects or estimators)
        and an interrupted study (Ctrl-C, a killed process) continues where it
        stopped, with the same p-values as a study run at once. Each
        repetition's rows are appended as soon as it finishes. With
        ``rng=None`` a new file records the fresh entropy and later calls with
        ``rng=None`` continue that stream. Corrupt or truncated rows are
        refused (each row carries a checksum), and a file in use by another
        process is refused (POSIX file lock on ``<checkpoint>.lock``).
    test_kwargs : dict, optional
        Extra keyword arguments for the test (kernel, bandwidth, statistic...).
    tests : dict, optional
        Compare tests instead of estimators: ``{label: spec}``, where `spec` is
        a dict of keyword arguments of the scenario's test
        (:func:`~kmtests.two_sample_test`, :func:`~kmtests.independence_test`
        or :func:`~kmtests.k_sample_test`, by the scenario's kind, :data:`TESTS`;
        with ``"aggregated": True``, of :func:`~kmtests.aggregated_two_sample_test`
        or :func:`~kmtests.aggregated_independence_test`), or a callable
        ``f(*data, n_resamples, rng) -> result`` (``data`` the scenario's samples or
        variables; it receives `test_kwargs` too). Every test sees the same data and the same permutation stream in
        each repetition; the label goes in the ``estimator`` column of the
        tables. `estimators` is then ignored (put ``estimator`` in a spec).
        A test (or `test_kwargs`) with ``engine="block"`` or ``"linear"`` has
        an asymptotic normal null: it is given no permutation options, and
        its rows say ``null = "normal"`` in :attr:`PowerCurveResult.raw`.
    checkpoint_label : str, optional
        A version label of your own, recorded in the `checkpoint` file: a file
        with another label (or none) is refused. It stands for what the file
        cannot record, which is then accepted: callables that hold an object
        without a stable description (a closure over a fitted model, say),
        recorded as unidentified. Change the label whenever you change such an
        object. Everything that can be described is still compared.

    Returns
    -------
    PowerCurveResult

    Raises
    ------
    CheckpointError
        When the checkpoint file was written with other settings, is corrupt
        or truncated, or is in use by another process; when a setting cannot
        be described and no `checkpoint_label` is given.

    Examples
    --------
    >>> from kmtests.power import power_curve
    >>> res = power_curve("mean_shift", sample_sizes=[10, 30], effects=[1.0],
    ...                   repetitions=20, n_resamples=99, rng=0)
    >>> t = res.table()
    >>> print(t[["n", "power"]].to_string(index=False))
     n  power
    10   0.50
    30   0.85
    """
    scen, sizes, effs, repetitions, n_resamples, alphas = _check_design(
        scenario, sample_sizes, effects, repetitions, n_resamples, alpha)
    n_jobs = _check_n_jobs(n_jobs)
    test_kwargs = _check_test_kwargs(test_kwargs)
    labels, objs = _resolve_compared(estimators, tests, scen.kind, test_kwargs)
    _check_scenario_design(scen, sizes, effs)
    checkpoint_label = _check_checkpoint_label(checkpoint_label, checkpoint)
    tqdm = _require("tqdm.auto", "`progress=True`").tqdm if progress else None
    joblib = _require("joblib", "`n_jobs`") if n_jobs is not None else None
    root, seed_given, seed_int = root_sequence(rng)
    study = _Study(scen, sizes, effs, repetitions, n_resamples, test_kwargs, labels, objs)

    pvalues: dict[_Key, float] = {}
    ckpt = None
    try:
        if checkpoint is not None:
            ckpt = open_checkpoint(checkpoint, _checkpoint_settings(study, root,
                                                                    checkpoint_label),
                                   seed_given=seed_given)
            root = _seed_from_settings(ckpt.settings["seed"])
            _record(pvalues, ckpt.rows)
        tasks = _pending_tasks(study, pvalues)
        bar = None if tqdm is None else tqdm(total=len(tasks), desc=f"power {scen.name}",
                                             unit="rep")

        def record(rows: list[Row]) -> None:
            if ckpt is not None:
                ckpt.append(rows)
            _record(pvalues, rows)
            if bar is not None:
                bar.update(1)

        try:
            _execute(study, tasks, root, record, joblib, n_jobs)
        finally:
            if bar is not None:
                bar.close()
    finally:
        if ckpt is not None:
            ckpt.close()
    return PowerCurveResult(raw=_raw_frame(study, pvalues), alpha=alphas,
                            n_resamples=n_resamples, seed=seed_int, scenario=scen.name,
                            description=scen.description, estimators=tuple(labels),
                            test_kwargs=test_kwargs, root_seed=root)
