"""The linear-time MMD tests (engine="block" and "linear"): cost and power.

1. Seconds and peak RSS of ``two_sample_test(x, y, engine=...)`` at pooled
   sizes N = 10^4, 10^5, 10^6 (N/2 points per sample, d = 10), each size and
   engine in a fresh process (``resource.getrusage`` ru_maxrss; the baseline
   is the process after a warm-up test on 20 points, which does the lazy
   imports, and drawing the data).
2. Power at alpha = 0.05 on a fixed Gaussian mean shift
   (:func:`kmtests.datasets.gaussian_mean_shift`, d = 10) over 200 data sets:
   block and linear tests against the exact quadratic-time permutation test
   (B = 199) at n = 1000 per sample, and the linear-time tests alone at
   larger n; Clopper-Pearson 95% intervals (statsmodels ``proportion_confint``).

Run: python benchmarks/bench_linear_time.py [--sizes 10000,100000,1000000] [--reps 200]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # this checkout's kmtests, not an installed one

CHILD = r"""
import json, resource, sys, time
import numpy as np
import kmtests
N, d, engine = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
gen = np.random.default_rng(0)
w = gen.normal(size=(40, d))
kmtests.two_sample_test(w[:20], w[20:], engine=engine)  # warm-up: the lazy imports
x, y = gen.normal(size=(N // 2, d)), gen.normal(size=(N // 2, d)) + 0.01
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
t0 = time.perf_counter()
res = kmtests.two_sample_test(x, y, engine=engine)
t = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"base": base, "peak": peak, "seconds": t, "pvalue": res.pvalue,
                  "details": res.details, "file": kmtests.__file__}))
"""


def measure(n: int, d: int, engine: str) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT)
    with tempfile.TemporaryDirectory() as cwd:  # so that PYTHONPATH's kmtests is imported
        out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(d), engine],
                             capture_output=True, text=True, env=env, check=True, cwd=cwd)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["file"].startswith(ROOT), r["file"]
    return r


def cost_table(sizes: list[int], d: int) -> list[dict]:
    rows = []
    print(f"{'engine':<7} {'N':>9} {'n/sample':>9} {'b':>5} {'terms':>7} {'seconds':>8} "
          f"{'peak MB':>8} {'extra MB':>9} {'data MB':>8}")
    for n in sizes:
        for engine in ("block", "linear"):
            r = measure(n, d, engine)
            det = r["details"]
            terms = det.get("n_blocks", det.get("n_pairs"))
            row = dict(engine=engine, N=n, n=n // 2, b=det.get("block_size", 2), terms=terms,
                       seconds=r["seconds"], peak_mb=r["peak"] / 1e6,
                       extra_mb=(r["peak"] - r["base"]) / 1e6, data_mb=8.0 * n * d / 1e6)
            rows.append(row)
            print(f"{engine:<7} {n:>9} {n // 2:>9} {row['b']:>5} {terms:>7} "
                  f"{row['seconds']:>8.2f} {row['peak_mb']:>8.0f} {row['extra_mb']:>9.0f} "
                  f"{row['data_mb']:>8.0f}", flush=True)
    return rows


def power_table(reps: int, effect: float, d: int, sizes: list[int], b_perm: int) -> list[dict]:
    from statsmodels.stats.proportion import proportion_confint

    import kmtests
    from kmtests.datasets import gaussian_mean_shift

    assert kmtests.__file__.startswith(ROOT), kmtests.__file__
    scen = gaussian_mean_shift(d)
    rows = []
    print(f"\npower, {scen.description}, effect = {effect}, {reps} data sets, alpha = 0.05")
    print(f"{'test':<28} {'n/sample':>8} {'power':>6} {'95% CI':>16} {'s/test':>7}")
    for n in sizes:
        tests = [("block", dict(engine="block")), ("linear", dict(engine="linear"))]
        if n <= 1000:
            tests.append((f"exact (B = {b_perm})", dict(n_resamples=b_perm)))
        for label, kw in tests:
            rej, t0 = 0, time.perf_counter()
            root = np.random.SeedSequence(2013)
            for ss in root.spawn(reps):
                gen = np.random.default_rng(ss)
                x, y = scen.sample(n, effect, rng=gen)
                extra = {"rng": gen} if "n_resamples" in kw else {}
                rej += kmtests.two_sample_test(x, y, **kw, **extra).pvalue <= 0.05
            secs = (time.perf_counter() - t0) / reps
            lo, hi = proportion_confint(rej, reps, alpha=0.05, method="beta")
            rows.append(dict(test=label, n=n, power=rej / reps, lo=lo, hi=hi, seconds=secs))
            print(f"{label:<28} {n:>8} {rej / reps:>6.3f} [{lo:.3f}, {hi:.3f}]".ljust(62)
                  + f"{secs:>7.3f}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000", help="pooled sizes N")
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--effect", type=float, default=0.06)
    ap.add_argument("--power-n", default="1000,10000", help="sizes per sample for power")
    ap.add_argument("--b", type=int, default=199, help="permutations of the exact test")
    ap.add_argument("--skip-cost", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results",
                                                  "linear_time.json"))
    args = ap.parse_args()
    from _benchutil import cpu_model

    print(f"machine: {cpu_model()}, {os.cpu_count()} cores")
    cost = [] if args.skip_cost else cost_table([int(v) for v in args.sizes.split(",")],
                                                args.d)
    power = power_table(args.reps, args.effect, args.d,
                        [int(v) for v in args.power_n.split(",")], args.b)
    with open(args.out, "w") as fh:
        json.dump({"machine": cpu_model(), "cores": os.cpu_count(), "cost": cost,
                   "power": power, "effect": args.effect, "reps": args.reps}, fh, indent=1)


if __name__ == "__main__":
    main()
