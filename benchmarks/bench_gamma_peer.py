"""Gamma HSIC per call against causal-learn's unconditional KCI, median widths (issue 31).

Side by side in one process, every BLAS library on one thread (``threadpoolctl``):

* ``kmtests``: ``independence_test(x, y, method="gamma")`` with its default
  median-heuristic bandwidths;
* ``causal-learn``: ``KCI_UInd(est_width="median").compute_pvalue(x, y)`` (its
  gamma approximation, its median rule ``sqrt(2) x`` the median distance).

Each contender is timed over `--calls` consecutive calls (after a warm-up), in
alternating rounds (``--rounds``), CPU seconds of the process
(``time.process_time``) beside wall seconds (``time.perf_counter``); the table
gives the best round's per-call milliseconds, and the load average before and
after. causal-learn is loaded from ``--causallearn`` (a site-packages directory
of a separate environment, appended to ``sys.path``; NumPy and SciPy stay this
environment's).

Run::

    .venv/bin/python benchmarks/bench_gamma_peer.py \
        --causallearn /work/cl-venv/lib/python3.11/site-packages
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent


def _data(n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(n)
    x = g.normal(size=(n, d))
    return x, 0.3 * x[:, :1] + g.normal(size=(n, 1))


def _round(fn: Callable[[], Any], k: int) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(k):
        fn()
    return (time.perf_counter() - t0) / k, (time.process_time() - c0) / k


def run(ns: list[int], d: int, calls: int, rounds: int) -> pd.DataFrame:
    from causallearn.utils.KCI.KCI import KCI_UInd
    from threadpoolctl import threadpool_limits

    import kmtests

    rows = []
    with threadpool_limits(1):
        for n in ns:
            x, y = _data(n, d)
            contenders: dict[str, Callable[[], Any]] = {
                "kmtests": lambda: kmtests.independence_test(x, y, method="gamma").pvalue,
                "causal-learn": lambda: KCI_UInd(est_width="median").compute_pvalue(x, y)[0],
            }
            # calls per round: `calls` up to n = 200, fewer above (the cost grows as n^2)
            k = calls if n <= 200 else max(3, calls * 200**2 // n**2)
            best: dict[str, tuple[float, float]] = {}
            for fn in contenders.values():
                fn()  # warm-up
            for _ in range(rounds):
                for name, fn in contenders.items():
                    wall, cpu = _round(fn, k)
                    if name not in best or cpu < best[name][1]:
                        best[name] = (wall, cpu)
            p = {name: float(fn()) for name, fn in contenders.items()}
            for name, (wall, cpu) in best.items():
                rows.append({"n": n, "test": name, "wall_ms": wall * 1e3, "cpu_ms": cpu * 1e3,
                             "calls": k, "pvalue": p[name]})
                print(f"n={n:5d} {name:13s} wall {wall * 1e3:8.3f} ms  cpu {cpu * 1e3:8.3f} ms"
                      f"  p={p[name]:.4g}", flush=True)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", default="50,100,200,500,1000")
    ap.add_argument("--d", type=int, default=1, help="columns of x (y has one)")
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--causallearn", default=None,
                    help="site-packages holding causal-learn (appended to sys.path)")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_gamma_peer.csv"))
    args = ap.parse_args(argv)
    if args.causallearn:
        sys.path.append(args.causallearn)
    print(f"load before: {os.getloadavg()}", flush=True)
    tab = run([int(v) for v in args.n.split(",")], args.d, args.calls, args.rounds)
    print(f"load after: {os.getloadavg()}", flush=True)
    tab.to_csv(args.out, index=False, float_format="%.4g")
    piv = tab.pivot(index="n", columns="test", values="cpu_ms")
    piv["km / cl (CPU)"] = piv["kmtests"] / piv["causal-learn"]
    print(piv.round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
