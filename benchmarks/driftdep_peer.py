"""driftdep's drift tests on the windows cells of ``dependent_level.py --studies auto``.

driftdep (PyPI, 0.1.0; with arch for its automatic Politis-White block length) lives in
its own environment, without kmtests; this script needs numpy, scipy, pandas and driftdep
only, and draws the same data sets as ``dependent_level.py`` (``dependent_streams.py``:
one series of length n, its two halves, the second shifted by ``--shift``). It runs
``driftdep.drift_test(x, y, statistic="mmd", n_resamples=199, rng=i)`` (block
permutations, its automatic length: the stationary-bootstrap Politis-White length of the
pooled windows, rounded) and adds the row ``driftdep mmd (auto blocks)`` to the cell's
CSV under ``benchmarks/results/dependent_auto`` (or ``dependent_auto_power``).
``--statistic energy`` runs driftdep's energy-distance test instead (the row
``driftdep energy (auto blocks)``; it needs dcor in driftdep's environment).
``--pvalues`` also writes every data set's p-value and block length to
``benchmarks/results/dependent_pvalues/`` (``--resamples`` draws), for the comparison
at equal level of ``dependent_size_adjusted.py``; ``--tag heldout`` draws another set
of data sets (the seed's first key; ``auto`` is the level tables').

Run from the repository root, with driftdep's interpreter::

    python3 -m venv /tmp/driftdep-venv && /tmp/driftdep-venv/bin/pip install driftdep arch dcor
    nice -n 10 /tmp/driftdep-venv/bin/python benchmarks/driftdep_peer.py \\
        --process ar0.8 --n 500 --reps 200 [--shift 0.75] [--statistic energy] \\
        [--pvalues --resamples 999]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from dependent_streams import merge_rows, process, pvalue_path, seed_of  # noqa: E402

HERE = Path(__file__).resolve().parent
ALPHA = 0.05


def null_name(statistic: str) -> str:
    """The row of driftdep's test with `statistic` in the cells' CSVs."""
    return f"driftdep {statistic} (auto blocks)"


def cell(proc: str, n: int, reps: int, shift: float, statistic: str = "mmd",
         resamples: int = 199, keep: bool = False, tag: str = "auto") -> dict[str, Any]:
    import driftdep

    gen = np.random.default_rng(seed_of(tag, proc, n, "windows", shift))
    h = n // 2
    hits, wall, cpu, lengths, pvalues = 0, 0.0, 0.0, [], []
    for i in range(reps):
        z = process(proc, gen, n)
        z[h:] += shift
        t0, c0 = time.perf_counter(), time.process_time()
        res = driftdep.drift_test(z[:h], z[h:], statistic=statistic, n_resamples=resamples,
                                  rng=i)
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        hits += float(res.pvalue) <= ALPHA
        lengths.append(res.block_length)
        pvalues.append(float(res.pvalue))
    if keep:
        rows = [{"dataset": i, "method": null_name(statistic), "pvalue": p, "block": b}
                for i, (p, b) in enumerate(zip(pvalues, lengths))]
        merge_rows(pvalue_path(proc, n, shift, resamples, tag), rows,
                   key=("dataset", "method"))
    lo = stats.beta.ppf(0.025, hits, reps - hits + 1) if hits else 0.0
    hi = stats.beta.ppf(0.975, hits + 1, reps - hits) if hits < reps else 1.0
    study = f"auto windows {proc}" + (f" shift={shift:g}" if shift else "")
    print(f"{study} n={n}: {hits}/{reps}, block lengths (median) {np.median(lengths):g}",
          flush=True)
    return {"study": study, "n": n, "null": null_name(statistic), "alpha": ALPHA, "repetitions": reps,
            "rejections": hits, "level": hits / reps, "ci_low": lo, "ci_high": hi,
            "seconds_per_test": wall / reps, "cpu_per_test": cpu / reps}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--process", default="ar0.8")
    ap.add_argument("--n", default="200")
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--shift", type=float, default=0.0)
    ap.add_argument("--statistic", default="mmd", choices=("mmd", "energy"))
    ap.add_argument("--resamples", type=int, default=199)
    ap.add_argument("--tag", default="auto",
                    help="the data sets' seed key: auto (the level tables') or another set")
    ap.add_argument("--pvalues", action="store_true",
                    help="keep every data set's p-value (results/dependent_pvalues)")
    args = ap.parse_args()
    out = HERE / "results" / ("dependent_auto_power" if args.shift else "dependent_auto")
    for proc in args.process.split(","):
        for n in map(int, args.n.split(",")):
            row = cell(proc, n, args.reps, args.shift, args.statistic, args.resamples,
                       args.pvalues, args.tag)
            if args.resamples == 199 and args.tag == "auto":  # the cells' tables are at 199 draws
                tail = f"_shift{args.shift:g}" if args.shift else ""
                merge_rows(out / f"windows_{proc}_n{n}{tail}.csv", [row])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
