"""driftdep's drift tests on the windows cells of ``dependent_level.py --studies auto``.

driftdep (PyPI, 0.1.0; with arch for its automatic Politis-White block length) lives in
its own environment, without kmtests; this script needs numpy, scipy, pandas and driftdep
only, and draws the same data sets as ``dependent_level.py`` (``dependent_streams.py``:
one series of length n, its two halves, the second shifted by ``--shift``). It runs
``driftdep.drift_test(x, y, statistic="mmd", n_resamples=199, rng=i)`` (block
permutations, its automatic length: the stationary-bootstrap Politis-White length of the
pooled windows, rounded) and adds the row ``driftdep mmd (auto blocks)`` to the cell's
CSV under ``benchmarks/results/dependent_auto`` (or ``dependent_auto_power``).

Run from the repository root, with driftdep's interpreter::

    python3 -m venv /tmp/driftdep-venv && /tmp/driftdep-venv/bin/pip install driftdep arch
    nice -n 10 /tmp/driftdep-venv/bin/python benchmarks/driftdep_peer.py \\
        --process ar0.8 --n 500 --reps 200 [--shift 0.75]
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

from dependent_streams import merge_rows, process, seed_of  # noqa: E402

HERE = Path(__file__).resolve().parent
ALPHA, B = 0.05, 199
NULL = "driftdep mmd (auto blocks)"


def cell(proc: str, n: int, reps: int, shift: float) -> dict[str, Any]:
    import driftdep

    gen = np.random.default_rng(seed_of("auto", proc, n, "windows", shift))
    h = n // 2
    hits, wall, cpu, lengths = 0, 0.0, 0.0, []
    for i in range(reps):
        z = process(proc, gen, n)
        z[h:] += shift
        t0, c0 = time.perf_counter(), time.process_time()
        res = driftdep.drift_test(z[:h], z[h:], statistic="mmd", n_resamples=B, rng=i)
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        hits += float(res.pvalue) <= ALPHA
        lengths.append(res.block_length)
    lo = stats.beta.ppf(0.025, hits, reps - hits + 1) if hits else 0.0
    hi = stats.beta.ppf(0.975, hits + 1, reps - hits) if hits < reps else 1.0
    study = f"auto windows {proc}" + (f" shift={shift:g}" if shift else "")
    print(f"{study} n={n}: {hits}/{reps}, block lengths (median) {np.median(lengths):g}",
          flush=True)
    return {"study": study, "n": n, "null": NULL, "alpha": ALPHA, "repetitions": reps,
            "rejections": hits, "level": hits / reps, "ci_low": lo, "ci_high": hi,
            "seconds_per_test": wall / reps, "cpu_per_test": cpu / reps}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--process", default="ar0.8")
    ap.add_argument("--n", default="200")
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--shift", type=float, default=0.0)
    args = ap.parse_args()
    out = HERE / "results" / ("dependent_auto_power" if args.shift else "dependent_auto")
    for proc in args.process.split(","):
        for n in map(int, args.n.split(",")):
            row = cell(proc, n, args.reps, args.shift)
            tail = f"_shift{args.shift:g}" if args.shift else ""
            merge_rows(out / f"windows_{proc}_n{n}{tail}.csv", [row])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
