"""Exact two-sample tests at large N: the in-memory and the streamed engine.

Each configuration runs in a fresh process (``engine``, pooled ``N``, ``B``
permutations, d = 10, Gaussian kernel with the median bandwidth, KME): wall
seconds, the process's peak resident memory (``ru_maxrss``), and the ratio of
the time to the BLAS bound ``2 B N^2 / (dgemm rate)`` — the flops of the block
sums of all permutations; the streamed engine also evaluates the ``N^2``
kernel values once per pass. The DGEMM rate is measured in the same run, on
all cores. Where both engines run, their p-values (same seed) are compared.

Run: python benchmarks/bench_scale.py [--sizes 10000:1000,20000:200,100000:20]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from _benchutil import dgemm_gflops, foreign_load, machine_summary, print_machine, save_json

CHILD = r"""
import json, resource, sys, time
import numpy as np
import kmtests
N, B, engine = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
gen = np.random.default_rng(0)
x = gen.normal(size=(N // 2, 10))
y = gen.normal(size=(N - N // 2, 10)) + 0.02
t0 = time.perf_counter()
res = kmtests.two_sample_test(x, y, n_resamples=B, rng=1, engine=engine)
t = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": t, "peak": peak, "pvalue": res.pvalue,
                  "statistic": res.statistic}))
"""


def run(N: int, B: int, engine: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(N), str(B), engine],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1][:120]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000:1000,20000:200,100000:20",
                    help="comma-separated N:B pairs")
    ap.add_argument("--engines", default="exact,streamed")
    args = ap.parse_args()
    info = machine_summary()
    print_machine(info)
    gflops = dgemm_gflops()
    print(f"DGEMM rate (all cores): {gflops:.1f} GFLOP/s; foreign load "
          f"{foreign_load() or 0.0:.2f} cores\n")
    rows = []
    print("| engine | N | B | seconds | peak RSS GB | BLAS bound s | ratio | p-value |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for item in args.sizes.split(","):
        N, B = (int(v) for v in item.split(":"))
        for engine in args.engines.split(","):
            if engine == "exact" and 8.0 * N * N > 8e9:
                print(f"| {engine} | {N} | {B} | not run: the Gram matrix takes "
                      f"{8.0 * N * N / 1e9:.0f} GB |")
                continue
            r = run(N, B, engine)
            bound = 2.0 * B * N * N / (gflops * 1e9)
            r.update(engine=engine, N=N, B=B, bound=bound)
            rows.append(r)
            if "error" in r:
                print(f"| {engine} | {N} | {B} | error: {r['error']} |")
                continue
            print(f"| {engine} | {N} | {B} | {r['seconds']:.1f} | {r['peak'] / 1e9:.2f} | "
                  f"{bound:.1f} | {r['seconds'] / bound:.1f} | {r['pvalue']:.4g} |", flush=True)
    save_json("bench_scale.json", {"machine": info, "gflops": gflops, "rows": rows})


if __name__ == "__main__":
    main()
