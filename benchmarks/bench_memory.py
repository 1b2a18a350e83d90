"""Peak memory of a two-sample test against the size of its Gram matrix.

Each configuration runs in a fresh process; the peak resident memory is the
process's max RSS (``resource.getrusage``), reported next to the N x N Gram
matrix it must hold (8 N^2 bytes) and the baseline of a process that only
imported kmtests and drew the data. ``--source DIR`` runs another checkout of
kmtests (e.g. a release) in the same way, for a side-by-side table.

Run: python benchmarks/bench_memory.py [--n 2500,5000,10000] [--source DIR ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, sys, time
import numpy as np
import kmtests
N, d, B, mode = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
gen = np.random.default_rng(0)
x, y = gen.normal(size=(N // 2, d)), gen.normal(size=(N - N // 2, d))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
t0 = time.perf_counter()
if mode == "mmd":
    kmtests.two_sample_test(x, y, n_resamples=B, rng=1)
else:
    kmtests.independence_test(x, y, n_resamples=B, rng=1)
t = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"base": base, "peak": peak, "seconds": t, "file": kmtests.__file__}))
"""


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(source: str | None, n: int, d: int, b: int, mode: str) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=source or ROOT)
    # run from a neutral directory: `python -c` puts the working directory first on
    # sys.path, which would shadow PYTHONPATH with the checkout we are standing in
    with tempfile.TemporaryDirectory() as cwd:
        out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(d), str(b), mode],
                             capture_output=True, text=True, env=env, check=True, cwd=cwd)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="2500,5000,10000", help="pooled sizes N (MMD) / n (HSIC)")
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--b", type=int, default=19, help="permutations")
    ap.add_argument("--mode", default="mmd", choices=["mmd", "hsic"])
    ap.add_argument("--source", action="append", default=[None],
                    help="another checkout to measure the same way (repeatable)")
    args = ap.parse_args()
    print(f"{'source':<28} {'N':>6} {'Gram GB':>8} {'peak GB':>8} {'extra GB':>9} "
          f"{'peak/Gram':>9} {'seconds':>8}")
    for src in args.source:
        for n in (int(v) for v in args.n.split(",")):
            r = measure(src, n, args.d, args.b, args.mode)
            gram = 8.0 * n * n * (1 if args.mode == "mmd" else 2)
            extra = r["peak"] - r["base"]
            label = src or "this checkout"
            assert r["file"].startswith(os.path.abspath(src or ROOT)), r["file"]
            print(f"{label:<28} {n:>6} {gram / 1e9:>8.2f} "
                  f"{r['peak'] / 1e9:>8.2f} {extra / 1e9:>9.2f} {extra / gram:>9.2f} "
                  f"{r['seconds']:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
