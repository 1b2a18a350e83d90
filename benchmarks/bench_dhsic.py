"""dHSIC's permutation test against the HSIC test and against its flop bound (issue 31).

Run from the repository root::

    .venv/bin/python benchmarks/bench_dhsic.py            # ~1 min
    .venv/bin/python benchmarks/bench_dhsic.py --busy     # with one other core spinning

One process, the same data (n = 569, three columns per variable, Gaussian kernels with
the median heuristic, ``n_resamples`` permutations, one thread for numba and BLAS), each
call timed after one warm-up call (compilation excluded), best of `--repeats`, wall and
CPU seconds, the machine's load before and after.

* ``d = 2``: :func:`kmtests.joint_independence_test` against
  :func:`kmtests.independence_test` on the same two variables (the goal: within 2x).
* ``d = 3..5``: against the scalar flop bound of the arrangement loop
  (:mod:`kmtests.engines._jit_dhsic`): ``B n (n + 1) / 2`` entries of
  ``flops(d) = 9 + 7 (d - 3)`` floating-point operations, at two double-precision
  operations per cycle (two FP ports, no fused multiply-add: the kernel is compiled
  without fastmath, so that every permutation's sum is in a fixed order) at the clock
  of ``/proc/cpuinfo``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _benchutil as bu  # noqa: E402


def _clock_hz() -> float:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("cpu MHz"):
            return float(line.split(":")[1]) * 1e6
    return 2.6e9  # pragma: no cover


def flops(d: int) -> int:
    """Floating-point operations per entry and arrangement (see the module docs)."""
    return 2 if d == 2 else 9 + 7 * (d - 3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=569)
    ap.add_argument("--B", type=int, default=9999)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--busy", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import numpy as np
    from threadpoolctl import threadpool_limits

    import kmtests

    n, B = args.n, args.B
    gen = np.random.default_rng(0)
    xs = [gen.normal(size=(n, 3)) for _ in range(5)]
    xs[1] = xs[1] + 0.2 * xs[0]
    kmtests.independence_test(xs[0][:40], xs[1][:40], n_resamples=19, rng=0)
    for d in range(2, 6):
        kmtests.joint_independence_test(*(x[:40] for x in xs[:d]), n_resamples=19, rng=0)

    def timed(fn):
        best = (float("inf"), float("inf"))
        for _ in range(args.repeats):
            w, c = time.perf_counter(), time.process_time()
            res = fn()
            best = min(best, (time.perf_counter() - w, time.process_time() - c))
        return best, res

    rows = []
    load0 = os.getloadavg()[0]
    hz = _clock_hz()
    with bu.machine_state("busy" if args.busy else "idle"), threadpool_limits(1):
        (hw, hc), hres = timed(lambda: kmtests.independence_test(
            xs[0], xs[1], n_resamples=B, rng=1, n_jobs=1))
        rows.append(("HSIC test (d = 2)", hw, hc, None, hres.pvalue))
        for d in range(2, 6):
            (w, c), res = timed(lambda d=d: kmtests.joint_independence_test(
                *xs[:d], n_resamples=B, rng=1, n_jobs=1))
            bound = B * n * (n + 1) / 2 * flops(d) / (2.0 * hz)
            rows.append((f"dHSIC test d = {d}", w, c, bound, res.pvalue))
    load1 = os.getloadavg()[0]
    print(f"n = {n}, B = {B}, one thread (numba n_jobs=1, BLAS 1), "
          f"{'one core busy' if args.busy else 'as the machine is'}; "
          f"load {load0:.2f} -> {load1:.2f}; clock {hz / 1e9:.2f} GHz")
    print("| test | wall s | CPU s | CPU / HSIC | scalar flop bound s | CPU / bound | p |")
    print("|---|---|---|---|---|---|---|")
    for label, w, c, bound, p in rows:
        b = "-" if bound is None else f"{bound:.2f}"
        r = "-" if bound is None else f"{c / bound:.2f}"
        print(f"| {label} | {w:.2f} | {c:.2f} | {c / hc:.2f} | {b} | {r} | {p:.4g} |")


if __name__ == "__main__":
    main()
