"""Level of the nulls for dependent data: plain and block permutations, wild bootstrap.

Two studies, at alpha = 0.05, through the package itself:

* ``iid``: the wild bootstrap with Rademacher multipliers (``method="wild"``) on
  i.i.d. N(0, 1) data, for ``MMD^2_u``, ``MMD^2_b`` (two samples of n) and
  ``HSIC_b`` (n pairs), n = 20, 50, 100; the permutation null is exact there;
* ``ar1``: two independent AR(1) series (phi = 0.8, n = 200, stationary start), the
  HSIC test with plain permutations, block permutations (``blocks=10, 20``) and the
  wild bootstrap of ``HSIC_b`` with Rademacher and AR(1) multipliers
  (``process="ar"``, ``length=5, 20``); every null sees the same data sets;
* ``ar1-long``: the same series at n = 500 and 1000 (``--reps`` default 200), the
  AR wild bootstrap (``length=20, 50``) and ``blocks=25``.

* ``auto`` (issue 30): the automatic paths on the processes ``ar0.5``, ``ar0.8``,
  ``ar0.9``, ``ar0.95`` (AR(1), stationary, unit variance), ``ma2`` (``e_t + 0.6
  e_{t-1} + 0.3 e_{t-2}``), ``arfima`` (ARFIMA(0, 0.3, 0), the MA(infinity) filter
  truncated at 3000 lags), ``garch`` (GARCH(1,1) returns, omega = 0.05, alpha = 0.1,
  beta = 0.85, 500 steps of burn-in) and ``iid`` (N(0, 1)), at ``--n`` (the length of
  each series), for two problems: ``independence`` (two independent series of
  length n, HSIC) and ``windows`` (one series of length n, its two halves, MMD^2_u:
  drift). Nulls, every one on the same data sets: plain permutations,
  ``blocks="auto"``, ``method="wild"`` with ``blocks="auto"`` (AR multipliers of
  the automatic length), fixed ``blocks=10`` and ``blocks=25``, the lag-0..5
  cross-dependence test (:func:`kmtests.timeseries.cross_dependence_test`,
  independence only, n <= 200), for windows the self-normalised MMD
  (``statistic="selfnormalized"``, ``blocks="auto"``; other variants of the null in
  ``dependent_variants.py``) and driftdep's
  ``drift_test(statistic="mmd")`` (block permutations with its automatic length)
  if driftdep is installed (n <= 200; ``driftdep_peer.py`` runs it from its own
  environment on the same data sets). Adds its rows to one CSV per cell under
  ``benchmarks/results/dependent_auto/`` (the rows of nulls not run now are kept:
  ``--only`` adds or replaces nulls). The series come from ``dependent_streams.py``.

Gaussian kernels with the median heuristic, 199 resamples per test, ``--reps`` data
sets per cell (default 1000 for ``iid``, 300 for ``ar1``, 200 for ``ar1-long``), seeded
per cell.
Rejection rates with Clopper-Pearson 95% intervals; writes
``benchmarks/results/dependent_level.csv`` and prints a Markdown table.

Run from the repository root (one process, BLAS and numba on one thread)::

    .venv/bin/python benchmarks/dependent_level.py             # all three studies
    .venv/bin/python benchmarks/dependent_level.py --reps 50   # smoke run
    .venv/bin/python benchmarks/dependent_level.py --studies auto --process ar0.8 \
        --n 200 --problem independence --reps 300              # one cell of issue 30
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from statsmodels.stats.proportion import proportion_confint  # noqa: E402

from dependent_streams import ar1, merge_rows as _merge, process, seed_of  # noqa: E402, F401

from kmtests import SerialDependenceWarning, independence_test, two_sample_test  # noqa: E402
from kmtests.null import WildBootstrap  # noqa: E402
from kmtests.timeseries import cross_dependence_test  # noqa: E402

# the plain permutations on series warn (that is the point); the study counts rejections
warnings.simplefilter("ignore", SerialDependenceWarning)

HERE = Path(__file__).resolve().parent
ALPHA = 0.05
B = 199


def _wild(i: int, **kw: Any) -> WildBootstrap:
    return WildBootstrap(n_resamples=B, rng=i, **kw)


IID: dict[str, Callable[[np.ndarray, np.ndarray, int], float]] = {
    "MMD^2_u": lambda x, y, i: two_sample_test(x, y, method=_wild(i)).pvalue,
    "MMD^2_b": lambda x, y, i: two_sample_test(x, y, statistic="biased",
                                               method=_wild(i)).pvalue,
    "HSIC_b": lambda x, y, i: independence_test(x, y, method=_wild(i)).pvalue,
}
AR1: dict[str, Callable[[np.ndarray, np.ndarray, int], float]] = {
    "permutation": lambda x, y, i: independence_test(x, y, n_resamples=B, rng=i).pvalue,
    "blocks=10": lambda x, y, i: independence_test(x, y, blocks=10, n_resamples=B,
                                                   rng=i).pvalue,
    "blocks=20": lambda x, y, i: independence_test(x, y, blocks=20, n_resamples=B,
                                                   rng=i).pvalue,
    "wild, rademacher": lambda x, y, i: independence_test(x, y, method=_wild(i)).pvalue,
    "wild, ar, length=5": lambda x, y, i: independence_test(
        x, y, method=_wild(i, process="ar", length=5.0)).pvalue,
    "wild, ar, length=20": lambda x, y, i: independence_test(
        x, y, method=_wild(i, process="ar", length=20.0)).pvalue,
}


LONG: dict[str, Callable[[np.ndarray, np.ndarray, int], float]] = {
    "wild, ar, length=20": AR1["wild, ar, length=20"],
    "wild, ar, length=50": lambda x, y, i: independence_test(
        x, y, method=_wild(i, process="ar", length=50.0)).pvalue,
    "blocks=25": lambda x, y, i: independence_test(x, y, blocks=25, n_resamples=B,
                                                   rng=i).pvalue,
}


def _rows(study: str, n: int, counts: dict[str, int], reps: int) -> list[dict[str, Any]]:
    rows = []
    for null, r in counts.items():
        lo, hi = proportion_confint(r, reps, alpha=0.05, method="beta")
        rows.append({"study": study, "n": n, "null": null, "alpha": ALPHA, "repetitions": reps,
                     "rejections": r, "level": r / reps, "ci_low": lo, "ci_high": hi})
    return rows


def iid(reps: int, ns: tuple[int, ...] = (20, 50, 100)) -> list[dict[str, Any]]:
    rows = []
    for n in ns:
        gen = np.random.default_rng(seed_of("iid", n))
        counts = dict.fromkeys(IID, 0)
        for i in range(reps):
            x, y = gen.normal(size=(n, 1)), gen.normal(size=(n, 1))
            for name, test in IID.items():
                counts[name] += test(x, y, i) <= ALPHA
        rows += _rows("iid", n, counts, reps)
    return rows


def ar(reps: int, n: int = 200, phi: float = 0.8,
       nulls: dict[str, Callable[[np.ndarray, np.ndarray, int], float]] = AR1
       ) -> list[dict[str, Any]]:
    gen = np.random.default_rng(seed_of("ar1", n, phi))
    counts = dict.fromkeys(nulls, 0)
    for i in range(reps):
        x, y = ar1(gen, n, phi), ar1(gen, n, phi)
        for name, test in nulls.items():
            counts[name] += test(x, y, i) <= ALPHA
    return _rows(f"ar1 phi={phi}", n, counts, reps)


def _auto_nulls(problem: str, n: int) -> dict[str, Callable[..., float]]:
    if problem == "independence":
        nulls: dict[str, Callable[..., float]] = {
            "permutation": lambda x, y, i: independence_test(x, y, n_resamples=B,
                                                             rng=i).pvalue,
            "blocks=auto": lambda x, y, i: independence_test(x, y, blocks="auto",
                                                             n_resamples=B, rng=i).pvalue,
            "wild (blocks=auto)": lambda x, y, i: independence_test(
                x, y, blocks="auto", method="wild", n_resamples=B, rng=i).pvalue,
            "blocks=10": lambda x, y, i: independence_test(x, y, blocks=10, n_resamples=B,
                                                           rng=i).pvalue,
            "blocks=25": lambda x, y, i: independence_test(x, y, blocks=25, n_resamples=B,
                                                           rng=i).pvalue,
        }
        if n <= 200:
            nulls["cross-dependence lags 0-5"] = lambda x, y, i: cross_dependence_test(
                x, y, max_lag=5, n_resamples=B, rng=i).pvalue
        return nulls
    h = n // 2
    nulls = {
        "permutation": lambda z, i: two_sample_test(z[:h], z[h:], n_resamples=B,
                                                    rng=i).pvalue,
        "blocks=auto": lambda z, i: two_sample_test(z[:h], z[h:], blocks="auto",
                                                    n_resamples=B, rng=i).pvalue,
        "wild (blocks=auto)": lambda z, i: two_sample_test(
            z[:h], z[h:], blocks="auto", method="wild", n_resamples=B, rng=i).pvalue,
        "blocks=10": lambda z, i: two_sample_test(z[:h], z[h:], blocks=10, n_resamples=B,
                                                  rng=i).pvalue,
        "blocks=25": lambda z, i: two_sample_test(z[:h], z[h:], blocks=25, n_resamples=B,
                                                  rng=i).pvalue,
        "selfnormalized (blocks=auto)": lambda z, i: two_sample_test(
            z[:h], z[h:], statistic="selfnormalized", blocks="auto", n_resamples=B,
            rng=i).pvalue,
    }
    try:
        if n > 200:  # (its permutations cost 4-10 times kmtests' on this machine)
            raise ImportError
        import driftdep

        nulls["driftdep mmd (auto blocks)"] = lambda z, i: float(driftdep.drift_test(
            z[:h], z[h:], statistic="mmd", n_resamples=B, rng=i).pvalue)
    except ImportError:
        pass
    return nulls


def auto(reps: int, proc: str, n: int, problem: str, out_dir: Path, shift: float = 0.0,
         only: list[str] | None = None) -> list[dict[str, Any]]:
    """One cell of the ``auto`` study (every null on the same `reps` data sets). A
    `shift` makes it a power study: the second window shifted by `shift` (windows), or
    ``y + shift * x`` (independence)."""
    gen = np.random.default_rng(seed_of("auto", proc, n, problem, shift))
    nulls = _auto_nulls(problem, n)
    if only:
        nulls = {k: v for k, v in nulls.items() if k in only}
    counts = dict.fromkeys(nulls, 0)
    seconds = dict.fromkeys(nulls, 0.0)
    cpu = dict.fromkeys(nulls, 0.0)
    for i in range(reps):
        data: tuple[np.ndarray, ...]
        if problem == "independence":
            x, y = process(proc, gen, n), process(proc, gen, n)
            data = (x, y + shift * x)
        else:
            z = process(proc, gen, n)
            z[n // 2:] += shift
            data = (z,)
        for name, test in nulls.items():
            t0, c0 = time.perf_counter(), time.process_time()
            counts[name] += test(*data, i) <= ALPHA
            seconds[name] += time.perf_counter() - t0
            cpu[name] += time.process_time() - c0
        if (i + 1) % 50 == 0 or i + 1 == reps:  # a partial table survives a time limit
            study = f"auto {problem} {proc}" + (f" shift={shift:g}" if shift else "")
            rows = _rows(study, n, counts, i + 1)
            for r in rows:
                r["seconds_per_test"] = seconds[r["null"]] / (i + 1)
                r["cpu_per_test"] = cpu[r["null"]] / (i + 1)
            out_dir.mkdir(parents=True, exist_ok=True)
            tail = f"_shift{shift:g}" if shift else ""
            _merge(out_dir / f"{problem}_{proc}_n{n}{tail}.csv", rows)
    return rows


def auto_table(out_dir: Path) -> str:
    """The ``auto`` cells as one Markdown table (rejections / data sets, ``*`` outside
    the 99% binomial band of 5%)."""
    from scipy import stats

    frames = [pd.read_csv(f) for f in sorted(out_dir.glob("*.csv"))]
    if not frames:
        return ""
    tab = pd.concat(frames)
    nulls = list(dict.fromkeys(tab["null"]))
    order = ["iid", "ar0.5", "ar0.8", "ar0.9", "ar0.95", "ma2", "arfima", "garch"]
    lines = ["| problem | process | n | " + " | ".join(nulls) + " |",
             "|---|---|---:|" + "---:|" * len(nulls)]
    words = tab["study"].str.split()
    tab["problem"] = [w[1] + (f" ({w[3]})" if len(w) > 3 else "") for w in words]
    tab["process"] = tab["study"].str.split().str[2]
    tab["rank"] = tab["process"].map({p: i for i, p in enumerate(order)})
    for (problem, _, proc, n), cell in tab.groupby(["problem", "rank", "process", "n"]):
        row = []
        for name in nulls:
            hit = cell[cell["null"] == name]
            if hit.empty:
                row.append("-")
                continue
            r, reps = int(hit["rejections"].iloc[0]), int(hit["repetitions"].iloc[0])
            lo, hi = stats.binom.ppf(0.005, reps, ALPHA), stats.binom.ppf(0.995, reps, ALPHA)
            row.append(f"{r}/{reps}" + ("" if lo <= r <= hi else " *"))
        lines.append(f"| {problem} | {proc} | {n} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=None,
                    help="data sets per cell (default 1000 iid, 300 ar1, 200 ar1-long)")
    ap.add_argument("--studies", default="iid,ar1,ar1-long")
    ap.add_argument("--process", default="ar0.8", help="auto study: comma-separated processes")
    ap.add_argument("--n", default="200", help="auto study: comma-separated series lengths")
    ap.add_argument("--problem", default="independence,windows",
                    help="auto study: independence and/or windows")
    ap.add_argument("--out", default=str(HERE / "results" / "dependent_level.csv"))
    ap.add_argument("--shift", type=float, default=0.0,
                    help="auto study: a power study (see `auto`), results in "
                    "dependent_auto_power/")
    ap.add_argument("--only", default=None,
                    help="auto study: the nulls to run, separated by ';' (default: all)")
    ap.add_argument("--table", action="store_true",
                    help="print the auto study's table from its CSV files and stop")
    args = ap.parse_args(argv)
    if args.table:
        print(auto_table(HERE / "results" / "dependent_auto"))
        print()
        print(auto_table(HERE / "results" / "dependent_auto_power"))
        return 0
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    studies = [s.strip() for s in args.studies.split(",")]
    if "iid" in studies:
        rows += iid(args.reps or 1000)
        print(f"iid done ({time.time() - t0:.0f} s)", flush=True)
    if "ar1" in studies:
        rows += ar(args.reps or 300)
        print(f"ar1 done ({time.time() - t0:.0f} s)", flush=True)
    if "ar1-long" in studies:
        for n in (500, 1000):
            rows += ar(args.reps or 200, n=n, nulls=LONG)
        print(f"ar1-long done ({time.time() - t0:.0f} s)", flush=True)
    if "auto" in studies:
        for proc in args.process.split(","):
            for n in map(int, args.n.split(",")):
                for problem in args.problem.split(","):
                    rows += auto(args.reps or 300, proc, n, problem,
                                 HERE / "results" / ("dependent_auto_power" if args.shift
                                                     else "dependent_auto"), args.shift,
                                 args.only.split(";") if args.only else None)
                    print(f"auto {problem} {proc} n={n} done ({time.time() - t0:.0f} s)",
                          flush=True)
    tab = pd.DataFrame(rows)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tab.to_csv(out, index=False, float_format="%.4g")
    print("\n| study | n | null | rejections | level [95% CI] |\n|---|---:|---|---:|---|")
    for r in rows:
        print(f"| {r['study']} | {r['n']} | {r['null']} | {r['rejections']}/"
              f"{r['repetitions']} | {r['level']:.3f} [{r['ci_low']:.3f}, "
              f"{r['ci_high']:.3f}] |")
    print(f"\nwrote {out} ({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
