"""The low-rank engines (engine="nystrom" and "rff"): cost and power.

1. Seconds and peak RSS of ``two_sample_test`` (pooled N, N/2 per sample) and
   ``independence_test`` (n pairs) at N = n = 10^5 and 10^6, d = 10 (each
   variable), r = 200 features, each row in a fresh process (``ru_maxrss``;
   the baseline is the process after a warm-up test and drawing the data).
   Every row then times the engine's statistics of B random permutations
   alone (seconds per permutation), and the B = 1000 column is a *linear
   extrapolation* ``t(B) + (1000 - B) x (seconds per permutation)``, not a
   measurement. The permutations' cost is compared with the flop bound,
   ``2 B N r`` (MMD: one product of the membership rows with the features)
   or ``2 B n r^2`` (HSIC: ``Phi_x' Phi_y[p]`` per permutation), at the DGEMM
   rate measured in the same run (4000 x 4000, all cores).
2. Power at alpha = 0.05 on a Gaussian mean shift
   (:func:`kmtests.datasets.gaussian_mean_shift`, d = 10) at N = 2000 (1000
   per sample), B = 99, 100 seeded data sets: exact, Nyström and RFF (r =
   200, and r = 50); Clopper-Pearson 95% intervals.

Run: python benchmarks/bench_lowrank.py [--sizes 100000,1000000] [--reps 100]
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
from kmtests._rng import child

def feature_rng(seed):
    return child(np.random.default_rng(seed), "features")
from kmtests.engines.lowrank import (FeaturePooled, feature_map, lowrank_hsic_values,
                                     lowrank_mmd_values)
from kmtests.estimators._rules import Uniform
from kmtests.kernels import Gaussian
test, engine, N, d, r, B = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7])
gen = np.random.default_rng(0)

def run(x, y, b):
    if test == "mmd":
        return kmtests.two_sample_test(x, y, engine=engine, n_features=r, n_resamples=b, rng=1)
    return kmtests.independence_test(x, y, engine=engine, n_features=r, n_resamples=b, rng=1)

w = gen.normal(size=(40, d))
run(w[:20], w[20:], 9)  # warm-up: the lazy imports
if test == "mmd":
    x, y = gen.normal(size=(N // 2, d)), gen.normal(size=(N // 2, d)) + 0.01
else:
    x = gen.normal(size=(N, d)); y = 0.01 * x + gen.normal(size=(N, d))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
t0 = time.perf_counter(); res = run(x, y, B); t = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
# the permutations alone: the engine's statistics of B random permutations
perms = np.array([gen.permutation(N) for _ in range(B)])
kern = Gaussian(1.0)
if test == "mmd":
    fp = FeaturePooled(feature_map(engine, kern, np.vstack([x, y]), r, feature_rng(1)))
    t0 = time.perf_counter()
    lowrank_mmd_values(fp, perms, N // 2, Uniform(fixed=1.0), True)
else:
    g = feature_rng(1)
    fx, fy = feature_map(engine, kern, x, r, g), feature_map(engine, kern, y, r, g)
    t0 = time.perf_counter()
    lowrank_hsic_values(fx, fy, perms, Uniform(fixed=1.0), False)
tp = time.perf_counter() - t0
print(json.dumps({"base": base, "peak": peak, "seconds": t, "perm_seconds": tp,
                  "pvalue": res.pvalue, "info": res.engine_info, "file": kmtests.__file__}))
"""


def measure(test: str, engine: str, n: int, d: int, r: int, b: int) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT)
    with tempfile.TemporaryDirectory() as cwd:  # so that PYTHONPATH's kmtests is imported
        out = subprocess.run([sys.executable, "-c", CHILD, test, engine, str(n), str(d),
                              str(r), str(b)],
                             capture_output=True, text=True, env=env, check=True, cwd=cwd)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["file"].startswith(ROOT), res["file"]
    return res


def cost_table(sizes: list[int], d: int, r: int, b_mmd: int, b_hsic: dict[int, int],
               gflops: float, tests: tuple[str, ...] = ("mmd", "hsic")) -> list[dict]:
    rows = []
    print(f"{'test':<5} {'engine':<8} {'N':>8} {'B':>4} {'seconds':>8} {'s/perm':>8} "
          f"{'B=1000*':>8} {'bound s':>8} {'ratio':>6} {'peak MB':>8} {'extra MB':>8}")
    for test in tests:
        for n in sizes:
            b = b_mmd if test == "mmd" else b_hsic.get(n, b_mmd)
            for engine in ("nystrom", "rff"):
                m = measure(test, engine, n, d, r, b)
                per = m["perm_seconds"] / b
                flops = 2.0 * n * r * (1 if test == "mmd" else r)  # per permutation
                bound = flops / (gflops * 1e9)
                row = dict(test=test, engine=engine, N=n, B=b, seconds=m["seconds"],
                           per_perm=per, extrapolated_b1000=m["seconds"] + (1000 - b) * per,
                           bound_per_perm=bound, ratio=per / bound,
                           peak_mb=m["peak"] / 1e6, extra_mb=(m["peak"] - m["base"]) / 1e6,
                           info=m["info"])
                rows.append(row)
                print(f"{test:<5} {engine:<8} {n:>8} {b:>4} {m['seconds']:>8.2f} {per:>8.4f} "
                      f"{row['extrapolated_b1000']:>8.1f} {bound:>8.4f} {row['ratio']:>6.1f} "
                      f"{row['peak_mb']:>8.0f} {row['extra_mb']:>8.0f}", flush=True)
    return rows


def power_table(reps: int, effect: float, d: int, n: int, b_perm: int) -> list[dict]:
    from statsmodels.stats.proportion import proportion_confint

    import kmtests
    from kmtests.datasets import gaussian_mean_shift

    assert kmtests.__file__.startswith(ROOT), kmtests.__file__
    scen = gaussian_mean_shift(d)
    rows = []
    print(f"\npower, {scen.description}, effect = {effect}, n = {n} per sample, "
          f"B = {b_perm}, {reps} data sets, alpha = 0.05")
    print(f"{'test':<22} {'power':>6} {'95% CI':>16} {'s/test':>7}")
    tests = [("exact", {}), ("nystrom, r = 200", dict(engine="nystrom", n_features=200)),
             ("rff, r = 200", dict(engine="rff", n_features=200)),
             ("nystrom, r = 50", dict(engine="nystrom", n_features=50)),
             ("rff, r = 50", dict(engine="rff", n_features=50))]
    for label, kw in tests:
        rej, t0 = 0, time.perf_counter()
        root = np.random.SeedSequence(2026)
        for ss in root.spawn(reps):
            gen = np.random.default_rng(ss)
            x, y = scen.sample(n, effect, rng=gen)
            rej += kmtests.two_sample_test(x, y, n_resamples=b_perm, rng=gen,
                                           **kw).pvalue <= 0.05
        secs = (time.perf_counter() - t0) / reps
        lo, hi = proportion_confint(rej, reps, alpha=0.05, method="beta")
        rows.append(dict(test=label, n=n, power=rej / reps, lo=lo, hi=hi, seconds=secs))
        print(f"{label:<22} {rej / reps:>6.3f} [{lo:.3f}, {hi:.3f}] {secs:>7.3f}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100000,1000000", help="pooled sizes N / pairs n")
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--r", type=int, default=200)
    ap.add_argument("--b", type=int, default=100, help="permutations of the cost rows")
    ap.add_argument("--b-hsic-large", type=int, default=10,
                    help="permutations of the HSIC rows at N = 10^6 (2 B n r^2 flops)")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--effect", type=float, default=0.06)
    ap.add_argument("--power-n", type=int, default=1000, help="points per sample")
    ap.add_argument("--b-power", type=int, default=99)
    ap.add_argument("--tests", default="mmd,hsic", help="the cost rows to run")
    ap.add_argument("--skip-cost", action="store_true")
    ap.add_argument("--skip-power", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results",
                                                  "lowrank.json"))
    args = ap.parse_args()
    from _benchutil import cpu_model, dgemm_gflops

    gflops = dgemm_gflops()
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; DGEMM {gflops:.1f} GFLOP/s")
    sizes = [int(v) for v in args.sizes.split(",")]
    cost = [] if args.skip_cost else cost_table(
        sizes, args.d, args.r, args.b, {1000000: args.b_hsic_large}, gflops,
        tuple(args.tests.split(",")))
    power = [] if args.skip_power else power_table(args.reps, args.effect, args.d,
                                                   args.power_n, args.b_power)
    with open(args.out, "w") as fh:
        json.dump({"machine": cpu_model(), "cores": os.cpu_count(), "dgemm_gflops": gflops,
                   "cost": cost, "power": power, "effect": args.effect, "reps": args.reps},
                  fh, indent=1)


if __name__ == "__main__":
    main()
