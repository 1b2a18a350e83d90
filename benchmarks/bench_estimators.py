"""Cost of each estimator inside the permutation tests, relative to the KME.

For every registered estimator, times ``two_sample_test`` (n_x = n_y = n,
d = 5) and ``independence_test`` (n pairs, d = 5) with B permutations,
default tuning ("permutation": data-driven parameters re-tuned on every
permuted data set). Estimators too slow for B permutations within
the time budget are timed at 2 and at B' < B permutations and extrapolated
with cost = fixed + B x per-permutation (the table says so).

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
    ap.add_argument("--estimators", nargs="+", default=list(ESTIMATORS))
    args = ap.parse_args()
    if print_machine is not None:
        print_machine(machine_summary())
    gen = np.random.default_rng(0)
    rows = []
    for n in args.n:
        x, y = gen.normal(size=(n, 5)), gen.normal(size=(n, 5))
        for test in ("two-sample (MMD)", "independence (HSIC)"):
            kme_time = None
            for name in ["kme"] + [e for e in args.estimators if e != "kme"]:
                if test.startswith("two"):
                    def run(b, name=name):
                        return kmtests.two_sample_test(x, y, estimator=name, n_resamples=b, rng=1)
                else:
                    def run(b, name=name):
                        return kmtests.independence_test(x, y, estimator=name, n_resamples=b,
                                                         rng=1)
                if name == "tsvd" and n > 300:
                    # its exact leave-one-out is O(n^4) per permuted sample: not run
                    rows.append((test, n, name, float("nan"), float("nan"), 0))
                    print(f"{test:21s} n={n:5d} {name:18s} not run (O(n^4) LOO)", flush=True)
                    continue
                run(2)  # warm-up (JIT, caches)
                # Time = fixed (Gram, tuning on the pooled sample/marginals) + B x per
                # permutation: fit both from two runs, so that a large fixed cost is not
                # multiplied when extrapolating from few permutations.
                t_small = _time(run, 2)
                per_guess = max(t_small / 2, 1e-6)
                B_meas = int(min(args.B, max(4, args.budget / per_guess)))
                t_big = _time(run, B_meas)
                if B_meas == args.B:
                    secs = t_big
                else:
                    per = max((t_big - t_small) / (B_meas - 2), 0.0)
                    secs = max(t_small - 2 * per, 0.0) + args.B * per
                if name == "kme":
                    kme_time = secs
                rows.append((test, n, name, secs, secs / kme_time, B_meas))
                print(f"{test:21s} n={n:5d} {name:18s} {secs:10.3f} s  x{secs / kme_time:9.1f}"
                      f"  (timed {B_meas} of {args.B})", flush=True)
    print()
    print(f"| test | n | estimator | seconds (B = {args.B}) | / KME | permutations timed |")
    print("|---|---:|---|---:|---:|---:|")
    for test, n, name, secs, ratio, bm in rows:
        note = "not run (O(n^4) LOO per sample)" if bm == 0 else (
            str(bm) if bm == args.B else f"2 and {bm} (extrapolated)")
        print(f"| {test} | {n} | {name} | {secs:.3g} | {ratio:.3g} | {note} |")


if __name__ == "__main__":
    main()
