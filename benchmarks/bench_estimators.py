"""Cost of each estimator inside the permutation tests, relative to the KME.

For every registered estimator, times ``two_sample_test`` (n_x = n_y = n,
d = 5) and ``independence_test`` (n pairs, d = 5) with B permutations,
default tuning ("permutation": data-driven parameters re-tuned on every
permuted data set). Per-permutation estimators (the spectral family) are
timed with fewer permutations and scaled linearly to B (their cost is linear
in B; the table says so).

Run: python benchmarks/bench_estimators.py [--n 200 1000] [--B 1000] [--budget 20]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import kmtests
from kmtests.estimators import ESTIMATORS

try:
    from _benchutil import machine_summary, print_machine
except ImportError:  # run from elsewhere
    machine_summary = print_machine = None


def _time(fn, B_meas):
    t = time.perf_counter()
    fn(B_meas)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[200, 1000])
    ap.add_argument("--B", type=int, default=1000)
    ap.add_argument("--budget", type=float, default=20.0,
                    help="seconds per measurement before extrapolating from fewer permutations")
    args = ap.parse_args()
    if print_machine is not None:
        print_machine(machine_summary())
    gen = np.random.default_rng(0)
    rows = []
    for n in args.n:
        x, y = gen.normal(size=(n, 5)), gen.normal(size=(n, 5))
        for test in ("two-sample (MMD)", "independence (HSIC)"):
            kme_time = None
            for name in ESTIMATORS:
                if test.startswith("two"):
                    def run(b, name=name):
                        return kmtests.two_sample_test(x, y, estimator=name, n_resamples=b, rng=1)
                else:
                    def run(b, name=name):
                        return kmtests.independence_test(x, y, estimator=name, n_resamples=b,
                                                         rng=1)
                run(2)  # warm-up (JIT, caches)
                # probe with a few permutations, then decide how many to time
                probe = max(2, min(args.B, 10))
                t_probe = _time(run, probe)
                per = t_probe / probe
                B_meas = args.B if per * args.B <= args.budget else max(probe, int(args.budget / per))
                secs = _time(run, B_meas) * (args.B / B_meas)
                if name == "kme":
                    kme_time = secs
                rows.append((test, n, name, secs, secs / kme_time, B_meas))
                print(f"{test:21s} n={n:5d} {name:18s} {secs:10.3f} s  x{secs / kme_time:9.1f}"
                      f"  (timed {B_meas} of {args.B})", flush=True)
    print()
    print(f"| test | n | estimator | seconds (B = {args.B}) | / KME | permutations timed |")
    print("|---|---:|---|---:|---:|---:|")
    for test, n, name, secs, ratio, bm in rows:
        note = str(bm) if bm == args.B else f"{bm} (scaled)"
        print(f"| {test} | {n} | {name} | {secs:.3g} | {ratio:.3g} | {note} |")


if __name__ == "__main__":
    main()
