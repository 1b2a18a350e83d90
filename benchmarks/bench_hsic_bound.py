"""A measured bound for the HSIC permutation loop (issue 31, goal 5), and dcor beside it.

The loop (``kmtests.engines._jit_hsic.pair_sums``) computes, for every permutation ``p``,
``sum_ij A[i, j] B[p_i, p_j]`` over the upper triangle, four permutations per pass over
``A``: per element ``(i, j > i)`` of a pass it reads ``A[i, j]`` once (sequentially) and
gathers ``B[p_k[i], p_k[j]]`` for ``k = 0..3`` (plus the four indices ``p_k[j]``), then
adds four products into four running sums. Its memory work per permutation is therefore
``n^2 / 2`` gathers from one row of ``B`` (in L1/L2 for n <= 2 000: 16 KB) and
``n^2 / 8`` streamed values of ``A`` (8 bytes each).

This script measures, on this machine and one thread, with numba kernels written for the
purpose (no kmtests code in them):

* ``stream``: the read bandwidth of a sequential sum of a 256 MB array (8 independent
  partial sums: the load units, not the adds, are the limit) — STREAM's "sum";
* ``gather``: the rate of the loop's own gathers — for each ``i``, four rows
  ``B[q_k[i]]`` and ``s += row_k[q_k[j]]`` over ``j > i`` with two partial sums per
  permutation (8 independent chains: no latency limit) — the memory-side work of the loop
  and nothing else;
* ``chain``: the same gathers with one running sum per permutation, as the loop has (it
  is compiled without fastmath so that every permutation is a left-to-right sum in a fixed
  order: the bits of every seeded p-value): the latency of the dependent additions.

The bound of the loop is ``max(n^2/2 / gather rate, n^2/8 * 8 B / bandwidth)`` seconds per
permutation (CPU seconds of the process: the machine is shared, so the wall seconds,
also recorded, include the time other processes ran); the loop's time is measured with the jitted kernel called directly (one
thread) on centred Gram matrices. dcor 0.7 (``dcor.independence.distance_covariance_test``,
``num_resamples=B``; installed in the benchmark environment only) and the whole kmtests
test (``independence_test(x, y, n_resamples=B, n_jobs=1)``) are timed on the same data,
wall and CPU seconds, with the load average.

Run::

    .venv/bin/python benchmarks/bench_hsic_bound.py --n 200,500,1000,2000 --B 200
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
from numba import njit

HERE = Path(__file__).resolve().parent


@njit(nogil=True, fastmath=False)
def stream_sum(x: np.ndarray) -> float:  # pragma: no cover - compiled
    s = np.zeros(8)
    m = x.size // 8
    for t in range(m):
        for u in range(8):
            s[u] += x[8 * t + u]
    return float(s.sum())


@njit(nogil=True, fastmath=False)
def gather(B: np.ndarray, P: np.ndarray) -> float:  # pragma: no cover - compiled
    """The loop's gathers without its dependency chains (two partial sums per
    permutation, in scalars: 8 independent chains)."""
    n = B.shape[0]
    tot = 0.0
    for g in range(P.shape[0] // 4):
        p0, p1, p2, p3 = P[4 * g], P[4 * g + 1], P[4 * g + 2], P[4 * g + 3]
        for i in range(n):
            r0, r1, r2, r3 = B[p0[i]], B[p1[i]], B[p2[i]], B[p3[i]]
            a0 = a1 = a2 = a3 = b0 = b1 = b2 = b3 = 0.0
            j = i + 1
            while j + 2 <= n:
                a0 += r0[p0[j]]
                a1 += r1[p1[j]]
                a2 += r2[p2[j]]
                a3 += r3[p3[j]]
                b0 += r0[p0[j + 1]]
                b1 += r1[p1[j + 1]]
                b2 += r2[p2[j + 1]]
                b3 += r3[p3[j + 1]]
                j += 2
            if j < n:
                a0 += r0[p0[j]] + r1[p1[j]] + r2[p2[j]] + r3[p3[j]]
            tot += a0 + a1 + a2 + a3 + b0 + b1 + b2 + b3
    return tot


@njit(nogil=True, fastmath=False)
def chain(B: np.ndarray, P: np.ndarray) -> float:  # pragma: no cover - compiled
    """The same gathers with one running sum per permutation (the loop's chains)."""
    n = B.shape[0]
    tot = 0.0
    for g in range(P.shape[0] // 4):
        p0, p1, p2, p3 = P[4 * g], P[4 * g + 1], P[4 * g + 2], P[4 * g + 3]
        for i in range(n):
            r0, r1, r2, r3 = B[p0[i]], B[p1[i]], B[p2[i]], B[p3[i]]
            a0 = a1 = a2 = a3 = 0.0
            for j in range(i + 1, n):
                a0 += r0[p0[j]]
                a1 += r1[p1[j]]
                a2 += r2[p2[j]]
                a3 += r3[p3[j]]
            tot += a0 + a1 + a2 + a3
    return tot


def best_of(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    best = (float("inf"), float("inf"))
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        best = min(best, (time.perf_counter() - t0, time.process_time() - c0))
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", default="200,500,1000,2000")
    ap.add_argument("--B", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "results" / "bench_hsic_bound.json"))
    args = ap.parse_args(argv)

    import dcor
    from threadpoolctl import threadpool_limits

    import kmtests
    from kmtests.engines._jit_hsic import pair_sums
    from kmtests.kernels import Gaussian

    rows: list[dict[str, Any]] = []
    x = np.random.default_rng(0).random(32 * 2 ** 20)  # 256 MB
    stream_sum(x[:64])
    t, c = best_of(lambda: stream_sum(x), args.repeats)
    bw = x.nbytes / c
    print(f"stream: {bw / 1e9:.2f} GB/s ({t:.3f} s wall, {c:.3f} s CPU), load "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    del x
    with threadpool_limits(1):
        for n in (int(v) for v in args.n.split(",")):
            gen = np.random.default_rng(n)
            u = gen.normal(size=(n, 2))
            v = u[:, :1] * 0.1 + gen.normal(size=(n, 1))
            Kc = np.ascontiguousarray(Gaussian(bandwidth=1.0).centred_gram(u).Kc)
            Lc = np.ascontiguousarray(Gaussian(bandwidth=1.0).centred_gram(v).Kc)
            P = np.vstack([gen.permutation(n) for _ in range(args.B)]).astype(np.int64)
            Pu = P.astype(np.uint32)
            out = np.empty(args.B)
            pair_sums(Kc, Lc, P[:4], out[:4])
            gather(Lc, Pu[:4])
            chain(Lc, Pu[:4])
            loop = best_of(lambda: pair_sums(Kc, Lc, P, out), args.repeats)
            g = best_of(lambda: gather(Lc, Pu), args.repeats)
            ch = best_of(lambda: chain(Lc, Pu), args.repeats)
            pairs = args.B * n * (n - 1) / 2
            rate = pairs / g[1]  # CPU seconds: the machine is shared (wall/CPU in the rows)
            stream_bytes = (args.B / 4) * (n * n / 2) * 8
            bound = max(min(g[1], ch[1]), stream_bytes / bw)  # the faster gather kernel
            dc = best_of(lambda: dcor.independence.distance_covariance_test(
                u, v, num_resamples=args.B), 1)
            km = best_of(lambda: kmtests.independence_test(u, v, n_resamples=args.B, rng=0,
                                                           n_jobs=1), 1)
            row = {"n": n, "B": args.B, "loop_s": loop[0], "loop_cpu": loop[1],
                   "gather_s": g[0], "gather_cpu": g[1], "chain_s": ch[0],
                   "chain_cpu": ch[1], "gathers_per_s": rate,
                   "bandwidth_GBs": bw / 1e9, "stream_bound_s": stream_bytes / bw,
                   "bound_cpu_s": bound,
                   "loop_over_bound": loop[1] / bound, "chain_over_bound": ch[1] / bound,
                   "kmtests_test_s": km[0], "kmtests_test_cpu": km[1],
                   "dcor_s": dc[0], "dcor_cpu": dc[1], "kmtests_over_dcor": km[0] / dc[0],
                   "load": os.getloadavg()[0]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    Path(args.out).write_text(json.dumps({"stream_GBs": bw / 1e9, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    raise SystemExit(main())
