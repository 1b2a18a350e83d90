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

The bound of the loop is ``max(min(gather, chain), n^2/8 * 8 B / bandwidth)`` per
permutation (the faster of the two gather kernels, or streaming ``A``), in CPU seconds of
the process: the machine is shared, so the wall seconds, also recorded, include the time
other processes ran. The loop is the jitted kernel called directly (one thread) on centred
Gram matrices; ``lanes8`` is a candidate loop with eight permutations per pass instead of
four (every lane the same sum: the same bits, asserted). dcor 0.7
(``dcor.independence.distance_covariance_test``, ``num_resamples=B``; installed in the
benchmark environment only) and the whole kmtests test (``independence_test(x, y,
n_resamples=B, n_jobs=1)``) are timed on the same data, wall and CPU seconds, with the
load average.

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


@njit(nogil=True, fastmath=False)
def pair_sums8(A: np.ndarray, B: np.ndarray, perms: np.ndarray,
               out: np.ndarray) -> None:  # pragma: no cover - compiled
    """A candidate for the loop: eight permutations per pass over ``A`` (the loop has
    four), every lane the same left-to-right sum as the loop's, so the same bits (checked
    in :func:`main`); no row copy (it is measured below n = 1024 only)."""
    n_perm, n = perms.shape
    G = 8
    for g in range((n_perm + G - 1) // G):
        b0 = g * G
        P = np.empty((G, n), dtype=np.uint32)
        for k in range(G):
            bb = min(b0 + k, n_perm - 1)
            for j in range(n):
                P[k, j] = perms[bb, j]
        p0, p1, p2, p3 = P[0], P[1], P[2], P[3]
        p4, p5, p6, p7 = P[4], P[5], P[6], P[7]
        s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
        for i in range(n):
            Ai = A[i]
            B0, B1, B2, B3 = B[p0[i]], B[p1[i]], B[p2[i]], B[p3[i]]
            B4, B5, B6, B7 = B[p4[i]], B[p5[i]], B[p6[i]], B[p7[i]]
            a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
            for j in range(i + 1, n):
                a = Ai[j]
                a0 += a * B0[p0[j]]
                a1 += a * B1[p1[j]]
                a2 += a * B2[p2[j]]
                a3 += a * B3[p3[j]]
                a4 += a * B4[p4[j]]
                a5 += a * B5[p5[j]]
                a6 += a * B6[p6[j]]
                a7 += a * B7[p7[j]]
            d = Ai[i]
            s0 += 2.0 * a0 + d * B0[p0[i]]
            s1 += 2.0 * a1 + d * B1[p1[i]]
            s2 += 2.0 * a2 + d * B2[p2[i]]
            s3 += 2.0 * a3 + d * B3[p3[i]]
            s4 += 2.0 * a4 + d * B4[p4[i]]
            s5 += 2.0 * a5 + d * B5[p5[i]]
            s6 += 2.0 * a6 + d * B6[p6[i]]
            s7 += 2.0 * a7 + d * B7[p7[i]]
        ss = (s0, s1, s2, s3, s4, s5, s6, s7)
        for k in range(G):
            if b0 + k < n_perm:
                out[b0 + k] = ss[k]


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
    big = np.random.default_rng(0).random(32 * 2 ** 20)  # 256 MB
    stream_sum(big[:64])
    t, c = best_of(lambda: stream_sum(big), args.repeats)
    bw = big.nbytes / c
    print(f"stream: {bw / 1e9:.2f} GB/s ({t:.3f} s wall, {c:.3f} s CPU), load "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    big = big[:0]  # the memory back
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
            out8 = np.empty(args.B)
            pair_sums8(Kc, Lc, P[:8], out8[:8])
            lanes8 = best_of(lambda: pair_sums8(Kc, Lc, P, out8), args.repeats)
            assert np.array_equal(out, out8), "8 lanes must give the loop's bits"
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
                   "lanes8_cpu": lanes8[1], "lanes8_over_bound": lanes8[1] / bound,
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
