"""Per-call cost of a gamma HSIC test against causal-learn's unconditional KCI.

Causal discovery makes thousands of small independence tests, so the fixed cost
of a call matters. Side by side in one process, every BLAS library on one thread,
CPU seconds of the calling process (``time.process_time``: the time on an idle
core, little affected by other load), the mean of `--calls` calls after a warm-up:

* ``kmtests``: ``independence_test(x, y, method="gamma")`` with given bandwidths
  (``given``) and with its default median-heuristic bandwidths (``median``);
* ``causal-learn``: ``KCI_UInd(kwidthx=w, kwidthy=w)`` (``given``) and
  ``KCI_UInd()`` (its default widths, a rule of n, no median: ``default``);
  both use the gamma approximation.

Run::

    .venv/bin/python benchmarks/bench_percall.py
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent


def run(ns: list[int], calls: int) -> pd.DataFrame:
    from causallearn.utils.KCI.KCI import KCI_UInd
    from threadpoolctl import threadpool_limits

    import kmtests

    rows = []
    with threadpool_limits(1):
        for n in ns:
            g = np.random.default_rng(n)
            x = g.normal(size=(n, 1))
            y = x + g.normal(size=(n, 1))
            w = 1.0
            contenders = {
                "kmtests given": lambda: kmtests.independence_test(
                    x, y, method="gamma", bandwidth_x=w, bandwidth_y=w).pvalue,
                "kmtests median": lambda: kmtests.independence_test(
                    x, y, method="gamma").pvalue,
                "causal-learn given": lambda: KCI_UInd(kwidthx=w, kwidthy=w).compute_pvalue(
                    x, y)[0],
                "causal-learn default": lambda: KCI_UInd().compute_pvalue(x, y)[0],
            }
            k = max(3, calls * 200 // max(n, 200))
            for name, fn in contenders.items():
                fn()
                t0 = time.process_time()
                for _ in range(k):
                    fn()
                ms = (time.process_time() - t0) / k * 1e3
                rows.append({"n": n, "test": name, "ms": ms, "calls": k})
                print(f"n={n:5d} {name:22s} {ms:8.3f} ms", flush=True)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", default="50,100,200,1000")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--out", default=str(HERE / "results" / "bench_percall.csv"))
    args = ap.parse_args(argv)
    tab = run([int(v) for v in args.n.split(",")], args.calls)
    tab.to_csv(args.out, index=False, float_format="%.4g")
    piv = tab.pivot(index="n", columns="test", values="ms")
    piv["given: km / cl"] = piv["kmtests given"] / piv["causal-learn given"]
    print(piv.round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
