"""Power at equal level against driftdep: the drift cells of ``dependent_level.py``.

A test that rejects more of its true nulls also finds more shifts; comparing power at
the nominal 5% rewards the test that does not keep its level. Here every method's
power is also taken at exactly 5% of its own null p-values on the same cell
(size-adjusted power): the test that rejects the p-values below a cut ``t`` and those
equal to it with a probability ``gamma``, both set so that it rejects 5% of the cell's
nulls (randomised at the cut: ``blocks="auto"`` with 8 blocks has 70 splits, its
p-values lie on a grid of 1/35, and a cut on the grid alone compared it at 1.7% on
the held-out AR(1) phi = 0.8 nulls, the next point rejecting more than 5%, against a
peer at 5%), and its expected share of the alternatives rejected
(Clopper-Pearson 95% interval of that share, rounded to a count).

Cells (``dependent_streams.py``, the data sets of ``dependent_level.py --studies auto
--problem windows``): the halves of one series of length n, the second shifted by
``--shift`` marginal standard deviations; the nulls are the cell's unshifted series. The
methods, every one on the same series with ``--resamples`` draws (499; ``blocks=auto``
enumerates all its splits when there are at most that many):

* ``blocks=auto``, ``blocks=10``, ``blocks=25``, ``wild (blocks=auto)``,
  ``selfnormalized (blocks=auto)`` — kmtests' drift test as in ``dependent_level.py``;
* ``driftdep mmd (auto blocks)``, ``driftdep energy (auto blocks)`` — driftdep 0.1.0's
  ``drift_test`` (block permutations of its Politis-White stationary-bootstrap length of
  the pooled windows), read from the p-values that ``driftdep_peer.py --pvalues`` wrote
  from driftdep's own environment (same series, same number of draws).

Every data set's p-value is kept in ``benchmarks/results/dependent_pvalues/`` (one CSV
per cell and number of draws); the table goes to
``benchmarks/results/dependent_size_adjusted.csv``. Run from the repository root, after
``driftdep_peer.py --pvalues --resamples 499`` on the same cells::

    nice -n 10 .venv/bin/python benchmarks/dependent_size_adjusted.py \\
        --cell ar0.8,200,0.75,300 --cell ar0.5,200,0.75,300 --cell ar0.8,500,0.5,200

``--tag heldout`` runs another set of data sets (with ``driftdep_peer.py --tag
heldout``).
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
from scipy import stats  # noqa: E402

from dependent_streams import merge_rows, process, pvalue_path, seed_of  # noqa: E402

from kmtests import SerialDependenceWarning, two_sample_test  # noqa: E402

HERE = Path(__file__).resolve().parent
ALPHA = 0.05
PEERS = ("driftdep mmd (auto blocks)", "driftdep energy (auto blocks)")


def methods(h: int, draws: int) -> dict[str, Callable[[np.ndarray, int], float]]:
    """kmtests' drift tests of the halves of a series (split at `h`)."""

    def run(**kw: Any) -> Callable[[np.ndarray, int], float]:
        return lambda z, i: float(two_sample_test(z[:h], z[h:], n_resamples=draws, rng=i,
                                                  **kw).pvalue)

    return {"blocks=auto": run(blocks="auto"), "blocks=10": run(blocks=10),
            "blocks=25": run(blocks=25), "wild (blocks=auto)": run(blocks="auto",
                                                                   method="wild"),
            "selfnormalized (blocks=auto)": run(blocks="auto", statistic="selfnormalized")}


def pvalues(proc: str, n: int, shift: float, reps: int, draws: int, fresh: bool = False,
            tag: str = "auto") -> dict[str, np.ndarray]:
    """kmtests' p-values on the cell's `reps` series (kept in the p-value CSV; those
    already there are read unless `fresh`), and the peers' read from it."""
    import pandas as pd

    gen = np.random.default_rng(seed_of(tag, proc, n, "windows", shift))
    h = n // 2
    tests = methods(h, draws)
    path = pvalue_path(proc, n, shift, draws, tag)
    if path.exists() and not fresh:
        kept = pd.read_csv(path)
        tests = {k: v for k, v in tests.items()
                 if int(np.sum(kept["method"] == k)) < reps}
    out: dict[str, list[float]] = {name: [] for name in tests}
    cpu = dict.fromkeys(tests, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SerialDependenceWarning)
        for i in range(reps if tests else 0):
            z = process(proc, gen, n)
            z[h:] += shift
            for name, test in tests.items():
                c0 = time.process_time()
                out[name].append(test(z, i))
                cpu[name] += time.process_time() - c0
    if tests:
        merge_rows(path, [{"dataset": i, "method": name, "pvalue": p, "block": np.nan}
                          for name, ps in out.items() for i, p in enumerate(ps)],
                   key=("dataset", "method"))
    table = pd.read_csv(path)
    got = {}
    for name in (*methods(h, draws), *PEERS):
        rows = table[table["method"] == name].sort_values("dataset")
        if len(rows) >= reps:
            got[name] = rows["pvalue"].to_numpy()[:reps]
    if tests:
        print(f"  {proc} n={n} shift={shift:g}: CPU s per test "
              + ", ".join(f"{k} {v / reps:.4f}" for k, v in cpu.items()), flush=True)
    return got


def size_adjusted(p0: np.ndarray, p1: np.ndarray, alpha: float = ALPHA
                  ) -> tuple[float, float, float]:
    """The power of the test that rejects exactly `alpha` of the nulls `p0`: it rejects
    every p-value below the cut ``t`` (the smallest p-value whose null share at or below
    it exceeds `alpha`) and a p-value equal to ``t`` with the probability ``gamma`` that
    makes the null share `alpha` (a randomised test: tests with few arrangements have
    p-values on a coarse grid, and a cut among them alone would compare them at a lower
    level). Returns ``t``, ``gamma`` and the expected share of `p1` rejected."""
    p0, p1 = np.asarray(p0, dtype=float), np.asarray(p1, dtype=float)
    for t in np.unique(p0):
        if np.mean(p0 <= t) > alpha:
            below, at = float(np.mean(p0 < t)), float(np.mean(p0 == t))
            gamma = (alpha - below) / at
            return float(t), gamma, float(np.mean(p1 < t) + gamma * np.mean(p1 == t))
    raise ValueError("no null p-values")


def interval(k: int, n: int) -> tuple[float, float]:
    """Clopper-Pearson 95% interval of k successes in n."""
    lo = stats.beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = stats.beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def cell(proc: str, n: int, shift: float, reps: int, draws: int, fresh: bool = False,
         tag: str = "auto") -> list[dict[str, Any]]:
    """The comparison at equal level of one cell (its nulls and its shifted series)."""
    null = pvalues(proc, n, 0.0, reps, draws, fresh, tag)
    alt = pvalues(proc, n, shift, reps, draws, fresh, tag)
    rows = []
    for name in null:
        if name not in alt:
            continue
        p0, p1 = null[name], alt[name]
        t, gamma, pw = size_adjusted(p0, p1)
        lo, hi = interval(int(round(pw * reps)), reps)
        rows.append({"data": tag, "process": proc, "n": n, "shift": shift, "datasets": reps,
                     "draws": draws, "method": name,
                     "null_rejections": int(np.sum(p0 <= ALPHA)),
                     "power_nominal": float(np.mean(p1 <= ALPHA)), "cut": t,
                     "gamma_at_cut": gamma, "power_size_adjusted": pw,
                     "ci_low": lo, "ci_high": hi})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| data | cell | method | null rejections at 5% | power at 5% | cut (gamma) "
             "| power at equal level, 5% (95% interval) |", "|---|---|---|---:|---:|---|---|"]
    for r in sorted(rows, key=lambda r: (r.get("data", "auto") != "auto", r["n"])):
        lines.append(
            f"| {r.get('data', 'auto')} | AR(1) {r['process'][2:]}, n = {r['n']}, "
            f"shift {r['shift']:g} | {r['method']} "
            f"| {r['null_rejections']}/{r['datasets']} | {r['power_nominal']:.3f} "
            f"| {r['cut']:.3f} ({r['gamma_at_cut']:.2f}) "
            f"| {r['power_size_adjusted']:.3f} ({r['ci_low']:.3f}-{r['ci_high']:.3f}) |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cell", action="append", default=None,
                    help="process,n,shift,datasets (repeatable)")
    ap.add_argument("--resamples", type=int, default=499)
    ap.add_argument("--table", action="store_true", help="print the kept table only")
    ap.add_argument("--tag", default="auto",
                    help="the data sets' seed key: auto (the level tables') or another set")
    ap.add_argument("--fresh", action="store_true",
                    help="recompute kmtests' p-values even if kept")
    args = ap.parse_args()
    out = HERE / "results" / "dependent_size_adjusted.csv"
    if not args.table:
        for spec in args.cell or ["ar0.8,200,0.75,300"]:
            proc, n, shift, reps = spec.split(",")
            rows = cell(proc, int(n), float(shift), int(reps), args.resamples, args.fresh,
                        args.tag)
            merge_rows(out, rows, key=("data", "process", "n", "shift", "draws", "method"))
    import pandas as pd

    print(table(pd.read_csv(out).to_dict("records")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
