"""Power studies: rejection rates of the kernel tests by scenario, estimator and size.

:func:`power_curve` runs a scenario many times, applies the test with each
estimator to the *same* data and the *same* permutations (common random
numbers), and returns a :class:`PowerCurveResult` with a tidy table (power,
Clopper-Pearson interval, mean p-value), an R-style ``summary()`` and
``plot()``.

Reproducibility: every repetition gets its own seed, spawned from `rng` by
its position in the design, so results are identical whatever `n_jobs` or
backend (joblib, or dask through joblib's ``"dask"`` backend) and whether a
study is run at once or resumed from its checkpoint file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from ._summary import Summary, result_table
from ._typing import SeedLike
from ._validation import check_positive_int
from .datasets._scenarios import Scenario, get_scenario

__all__ = ["PowerCurveResult", "power_curve"]

_RAW_COLUMNS = ["scenario", "test", "n", "effect", "repetition", "estimator", "pvalue"]


def _task_seed(root: np.random.SeedSequence, i_point: int, rep: int) -> np.random.SeedSequence:
    # A child keyed by (design point, repetition): independent of execution order.
    return np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, i_point, rep))


@dataclass(frozen=True)
class _Config:
    """One compared configuration: a test function's keyword arguments, or a callable."""

    name: str
    kwargs: dict[str, Any]
    aggregated: bool = False
    function: Any = None   # callable(x, y, *, n_resamples, rng) -> result

    def run(self, x: np.ndarray, y: np.ndarray, kind: str, n_resamples: int,
            perm_seed: np.random.SeedSequence) -> float:
        if self.function is not None:
            fn = self.function
        elif self.aggregated:
            from .aggregated import aggregated_independence_test, aggregated_two_sample_test

            fn = aggregated_two_sample_test if kind == "two_sample" else \
                aggregated_independence_test
        else:
            from . import independence_test, two_sample_test

            fn = two_sample_test if kind == "two_sample" else independence_test
        # the same permutation stream for every configuration: common random numbers
        res = fn(x, y, n_resamples=n_resamples, rng=np.random.default_rng(perm_seed),
                 **self.kwargs)
        return float(res.pvalue)


def _configs(estimators: Iterable[Any], tests: Any, test_kwargs: dict[str, Any]
             ) -> list[_Config]:
    """The compared configurations: one per estimator, or one per entry of `tests`."""
    out: list[_Config] = []
    if tests is None:
        for est in estimators:
            out.append(_Config(_est_name(est), {**test_kwargs, "estimator": est}))
    else:
        if not hasattr(tests, "items"):
            raise TypeError("`tests` must map labels to keyword-argument dicts or callables.")
        for label, spec in tests.items():
            if callable(spec):
                out.append(_Config(str(label), dict(test_kwargs), function=spec))
                continue
            if not hasattr(spec, "items"):
                raise TypeError(f"`tests[{label!r}]` must be a dict of keyword arguments or a "
                                f"callable; got {type(spec).__name__}.")
            kw = {**test_kwargs, **dict(spec)}
            agg = bool(kw.pop("aggregated", False))
            for bad in ("n_resamples", "rng"):
                if bad in kw:
                    raise ValueError(f"`tests[{label!r}]` must not contain {bad!r}; it is set "
                                     "by power_curve.")
            out.append(_Config(str(label), kw, aggregated=agg))
    if not out:
        raise ValueError("`estimators` must name at least one estimator.")
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise ValueError(f"`estimators` must have distinct names; got {names}.")
    return out


def _run_task(scenario: Scenario, n: int, effect: float, rep: int, seed: np.random.SeedSequence,
              configs: Sequence[_Config], n_resamples: int) -> list[dict[str, Any]]:
    data_seed, perm_seed = seed.spawn(2)
    x, y = scenario.sample(n, effect, np.random.default_rng(data_seed))
    rows = []
    for cfg in configs:
        rows.append({"scenario": scenario.name, "test": scenario.kind, "n": n, "effect": effect,
                     "repetition": rep, "estimator": cfg.name,
                     "pvalue": cfg.run(x, y, scenario.kind, n_resamples, perm_seed)})
    return rows


def _est_name(est: Any) -> str:
    return est if isinstance(est, str) else getattr(est, "name", type(est).__name__)


@dataclass(frozen=True, eq=False)
class PowerCurveResult:
    """Result of :func:`power_curve`.

    Attributes
    ----------
    raw : pandas.DataFrame
        One row per repetition and estimator: scenario, test, n, effect,
        repetition, estimator, pvalue.
    alpha : tuple of float
        Significance levels of the table.
    n_resamples : int
        Permutations per test.
    seed : int or None
    """

    raw: pd.DataFrame
    alpha: tuple[float, ...]
    n_resamples: int
    seed: int | None = None
    scenario: str = ""
    description: str = ""
    _table: pd.DataFrame | None = field(default=None, repr=False)

    def table(self, conf_level: float = 0.95) -> pd.DataFrame:
        """Tidy table: power = mean(p <= alpha) with a Clopper-Pearson interval.

        Columns: scenario, test, estimator, n, effect, alpha, repetitions,
        rejections, power, ci_low, ci_high, mean_pvalue.
        """
        from statsmodels.stats.proportion import proportion_confint

        keys = ["scenario", "test", "estimator", "n", "effect"]
        rows = []
        for key, g in self.raw.groupby(keys, sort=True):
            p = g["pvalue"].to_numpy()
            for a in self.alpha:
                k = int(np.sum(p <= a))
                lo, hi = proportion_confint(k, p.size, alpha=1 - conf_level, method="beta")
                rows.append({**dict(zip(keys, key)), "alpha": a, "repetitions": p.size,
                             "rejections": k, "power": k / p.size, "ci_low": float(lo),
                             "ci_high": float(hi), "mean_pvalue": float(p.mean())})
        return pd.DataFrame(rows)

    def summary(self, alpha: float | None = None) -> Summary:
        """R-style text report: one table per estimator of power by size/effect."""
        a = self.alpha[0] if alpha is None else alpha
        tab = self.table()
        tab = tab[np.isclose(tab["alpha"], a)]
        tables = []
        for est, g in tab.groupby("estimator", sort=False):
            for _, r in g.iterrows():
                tables.append(result_table(
                    f"{est} n={r['n']} eff={r['effect']:g}",
                    ["power", "[95% CI", "]", "mean p", "reps"],
                    [f"{r['power']:.3f}", f"{r['ci_low']:.3f}", f"{r['ci_high']:.3f}",
                     f"{r['mean_pvalue']:.3f}", str(r["repetitions"])]))
        merged = tables[0]
        for t in tables[1:]:
            merged.extend(t[1:] if len(t) > 1 else t)
        merged.title = f"Power study: {self.scenario} (alpha = {a:g})"
        notes = [self.description,
                 f"Permutation tests with B = {self.n_resamples}; power = mean(p <= alpha); "
                 "Clopper-Pearson 95% intervals; all estimators see the same data and "
                 "permutations in each repetition."]
        return Summary([merged], notes)

    def __str__(self) -> str:
        return str(self.summary())

    def plot(self, ax: Any = None, *, alpha: float | None = None, x: str | None = None) -> Any:
        """Power against sample size (or effect) with Clopper-Pearson bands.

        Requires matplotlib (``pip install kmtests[plot]``). Returns the Axes.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("plot() needs matplotlib: pip install 'kmtests[plot]'") from exc
        a = self.alpha[0] if alpha is None else alpha
        tab = self.table()
        tab = tab[np.isclose(tab["alpha"], a)]
        if x is None:
            x = "n" if tab["n"].nunique() > 1 else "effect"
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        for est, g in tab.groupby("estimator", sort=False):
            g = g.sort_values(x)
            line, = ax.plot(g[x], g["power"], marker="o", label=est)
            ax.fill_between(g[x], g["ci_low"], g["ci_high"], color=line.get_color(), alpha=0.2)
        ax.axhline(a, color="grey", lw=0.8, ls="--")
        ax.set_xlabel("sample size n" if x == "n" else "effect size")
        ax.set_ylabel(f"power at alpha = {a:g}")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(self.scenario)
        ax.legend(title="estimator")
        return ax

    def to_csv(self, path: str | os.PathLike) -> None:
        """Write the raw p-values (the study can be resumed from this file)."""
        self.raw.to_csv(path, index=False)


def power_curve(
    scenario: str | Scenario,
    *,
    estimators: Iterable[Any] = ("kme",),
    sample_sizes: Iterable[int] = (20, 40, 80),
    effects: Iterable[float] | None = None,
    repetitions: int = 100,
    alpha: float | Sequence[float] = 0.05,
    n_resamples: int = 199,
    rng: SeedLike = None,
    n_jobs: int | None = None,
    progress: bool = False,
    checkpoint: str | os.PathLike | None = None,
    test_kwargs: dict[str, Any] | None = None,
    tests: dict[str, Any] | None = None,
) -> PowerCurveResult:
    """Power of the kernel test of a scenario across estimators and sizes.

    Parameters
    ----------
    scenario : str or Scenario
        A name from :data:`kmtests.datasets.SCENARIOS` (``"mean_shift"``,
        ``"variance_shift"``, ``"mixture_vs_gaussian"``, ``"heavy_tails"``,
        ``"linear"``, ``"sinusoidal"``, ``"circular"``, ``"eckerle"``) or a
        :class:`~kmtests.datasets.Scenario`; its kind picks the test.
    estimators : iterable of str or estimator objects
        Compared on the same data and permutations.
    sample_sizes : iterable of int
        Sizes n (per sample for two-sample scenarios).
    effects : iterable of float, optional
        Effect sizes (default: the scenario's default effect). The design is
        the product sizes x effects; ``effect = 0`` measures the level.
    repetitions : int
        Data sets per design point.
    alpha : float or sequence of float
        Levels at which power is tabulated.
    n_resamples : int
        Permutations per test.
    rng : None, int, SeedSequence or Generator
        Root seed. With an int or SeedSequence, results are reproducible
        whatever `n_jobs`; a Generator is used to draw a root seed.
    n_jobs : int, optional
        Parallel workers through joblib (None: serial). Inside
        ``joblib.parallel_config(backend="dask")`` the tasks run on a dask
        cluster.
    progress : bool
        Show a tqdm progress bar (needs tqdm).
    checkpoint : path, optional
        CSV file of raw p-values. Existing rows are reused (only the missing
        repetitions are run) and the file is rewritten at the end with every
        row computed so far, so an interrupted study can be resumed with the
        same call and sub-designs can be read back from it. Rows must come
        from the same `rng`, `n_resamples` and test settings.
    test_kwargs : dict, optional
        Extra keyword arguments for the test (kernel, bandwidth, statistic...).
    tests : dict, optional
        Compare tests instead of estimators: ``{label: spec}``, where `spec` is
        a dict of keyword arguments of the scenario's test
        (:func:`~kmtests.two_sample_test` or :func:`~kmtests.independence_test`;
        with ``"aggregated": True``, of :func:`~kmtests.aggregated_two_sample_test`
        or :func:`~kmtests.aggregated_independence_test`), or a callable
        ``f(x, y, *, n_resamples, rng) -> result``. Every test sees the same
        data and the same permutation stream in each repetition. The label
        goes in the ``estimator`` column of the tables. `estimators` is then
        ignored (put ``estimator`` in a spec).

    Returns
    -------
    PowerCurveResult

    Examples
    --------
    >>> from kmtests.power import power_curve
    >>> res = power_curve("mean_shift", sample_sizes=[10, 30], effects=[1.0],
    ...                   repetitions=20, n_resamples=99, rng=0)
    >>> t = res.table()
    >>> print(t[["n", "power"]].to_string(index=False))
     n  power
    10    0.5
    30    1.0
    """
    scen = get_scenario(scenario)
    sizes = [check_positive_int(int(n) if isinstance(n, np.integer) else n, "sample_sizes")
             for n in sample_sizes]
    effs = [float(scen.default_effect)] if effects is None else [float(e) for e in effects]
    repetitions = check_positive_int(repetitions, "repetitions")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    alphas = tuple(float(a) for a in np.atleast_1d(alpha))
    if not all(0 < a < 1 for a in alphas):
        raise ValueError(f"`alpha` must be in (0, 1); got {alphas}.")
    test_kwargs = dict(test_kwargs or {})
    for bad in ("estimator", "n_resamples", "rng"):
        if bad in test_kwargs:
            raise ValueError(f"`test_kwargs` must not contain {bad!r}; it is set by power_curve.")
    configs = _configs(estimators, tests, test_kwargs)
    est_names = [c.name for c in configs]
    seed_int = None
    if isinstance(rng, np.random.Generator):
        root = np.random.SeedSequence(int(rng.integers(2**63)))
    elif isinstance(rng, np.random.SeedSequence):
        root = rng
    else:
        root = np.random.SeedSequence(rng)
        seed_int = int(root.entropy) if rng is not None else None
    points = [(n, e) for n in sizes for e in effs]
    for n, _ in points:
        scen.sample(n, effs[0], 0) if scen.max_n is not None else None  # validates n early

    done = pd.DataFrame(columns=_RAW_COLUMNS)
    if checkpoint is not None and os.path.exists(checkpoint):
        done = pd.read_csv(checkpoint)
        done = done[done["scenario"] == scen.name]
    have = {(int(r.n), float(r.effect), int(r.repetition)) for r in done.itertuples()
            if r.estimator in est_names}
    tasks = [(i, n, e, rep) for i, (n, e) in enumerate(points) for rep in range(repetitions)
             if (n, e, rep) not in have]

    def calls():
        from joblib import delayed

        for i, n, e, rep in tasks:
            yield delayed(_run_task)(scen, n, e, rep, _task_seed(root, i, rep), configs,
                                     n_resamples)

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(tasks), desc=f"power {scen.name}", unit="rep")
    rows: list[dict[str, Any]] = []
    if n_jobs is None:
        for i, n, e, rep in tasks:
            rows.extend(_run_task(scen, n, e, rep, _task_seed(root, i, rep), configs,
                                  n_resamples))
            if bar is not None:
                bar.update(1)
    else:
        from joblib import Parallel

        for part in Parallel(n_jobs=n_jobs, return_as="generator")(calls()):
            rows.extend(part)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    new = pd.DataFrame(rows, columns=_RAW_COLUMNS)
    everything = pd.concat([done, new], ignore_index=True) if len(done) else new
    everything = everything.astype({"scenario": str, "test": str, "estimator": str, "n": int,
                                    "effect": float, "repetition": int, "pvalue": float})
    everything = everything.sort_values(["n", "effect", "repetition", "estimator"],
                                        kind="stable", ignore_index=True)
    in_design = (everything["estimator"].isin(est_names) & everything["n"].isin(sizes)
                 & everything["effect"].isin(effs) & (everything["repetition"] < repetitions))
    raw = everything[in_design].reset_index(drop=True)
    result = PowerCurveResult(raw=raw, alpha=alphas, n_resamples=n_resamples, seed=seed_int,
                              scenario=scen.name, description=scen.description)
    if checkpoint is not None:  # keep every row ever computed, for later resumes
        if os.path.exists(checkpoint):
            other = pd.read_csv(checkpoint)
            everything = pd.concat([other[other["scenario"] != scen.name], everything],
                                   ignore_index=True)
        everything.to_csv(checkpoint, index=False)
    return result
