"""The first call of every test face in a new process, cold (empty numba cache) and warm.

Each measurement is a fresh Python process with its own ``NUMBA_CACHE_DIR`` (cold: an
empty folder; warm: the folder the cold run filled), which imports kmtests and calls one
face once on n = 100 points (2 columns; B = 199 where the face permutes). The process
reports the wall and CPU seconds (``time.process_time``) of ``import kmtests`` and of the
first call (which includes loading the face's modules and compiling or loading its jitted
kernels). Best of `--repeats` cold/warm pairs; the load average beside each row.

Run::

    .venv/bin/python benchmarks/bench_first_call.py --repeats 2
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

_CHILD = r"""
import sys, time
t0, c0 = time.perf_counter(), time.process_time()
import numpy as np
import kmtests
t1, c1 = time.perf_counter(), time.process_time()
g = np.random.default_rng(0)
x, y, z = g.normal(size=(100, 2)), g.normal(size=(100, 2)), g.normal(size=(100, 2))
calls = {
    "two_sample_test": lambda: kmtests.two_sample_test(x, y, n_resamples=199, rng=0),
    "independence_test": lambda: kmtests.independence_test(x, y, n_resamples=199, rng=0),
    "conditional_independence_test": lambda: kmtests.conditional_independence_test(x, y, z),
    "k_sample_test": lambda: kmtests.k_sample_test(x, y, z, n_resamples=199, rng=0),
    "joint_independence_test": lambda: kmtests.joint_independence_test(
        x, y, z, n_resamples=199, rng=0),
    "aggregated_two_sample_test": lambda: kmtests.aggregated_two_sample_test(
        x, y, n_resamples=199, rng=0),
    "goodness_of_fit_test": lambda: kmtests.goodness_of_fit_test(
        x, score=lambda v: -v, n_resamples=199, rng=0),
    "conditional_two_sample_test": lambda: kmtests.conditional_two_sample_test(
        x[:, :1], y[:, :1], z[:, :1], x[:, 1:], n_resamples=99, rng=0),
}
calls[sys.argv[1]]()
print(json.dumps({"import_wall": t1 - t0, "import_cpu": c1 - c0,
                  "call_wall": time.perf_counter() - t1, "call_cpu": time.process_time() - c1}))
"""

FACES = ("two_sample_test", "independence_test", "conditional_independence_test",
         "k_sample_test", "joint_independence_test", "aggregated_two_sample_test",
         "goodness_of_fit_test", "conditional_two_sample_test")


def _run(face: str, cache: str) -> dict[str, float]:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, "-c", "import json\n" + _CHILD, face], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--faces", default=",".join(FACES))
    ap.add_argument("--out", default=str(HERE / "results" / "bench_first_call.csv"))
    args = ap.parse_args(argv)
    rows = []
    for face in args.faces.split(","):
        best: dict[str, dict[str, float]] = {}
        load = os.getloadavg()[0]
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as cache:
                for state in ("cold", "warm"):
                    r = _run(face, cache)
                    if state not in best or r["call_cpu"] < best[state]["call_cpu"]:
                        best[state] = r
        row = {"face": face, "load": round((load + os.getloadavg()[0]) / 2, 1),
               **{f"{s}_{k}": round(v, 3) for s, r in best.items() for k, v in r.items()}}
        rows.append(row)
        print(f"{face:30s} import {row['cold_import_cpu']:.2f} CPU; first call cold "
              f"{row['cold_call_wall']:.2f} wall / {row['cold_call_cpu']:.2f} CPU, warm "
              f"{row['warm_call_wall']:.2f} / {row['warm_call_cpu']:.2f}; load {row['load']}",
              flush=True)
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
