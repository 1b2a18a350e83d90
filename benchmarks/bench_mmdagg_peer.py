"""MMDAgg against the authors' numpy MMDAgg, side by side in one process, idle and busy.

kmtests: ``aggregated_two_sample_test(x, y, n_resamples=B)`` (10 Gaussian bandwidths,
min-p over the members with its exact permutation level, one permutation stream).
Authors (Schrab et al., 2023, ``mmdagg/np.py`` of antoninschrab/mmdagg, imported from
a checkout given with ``--mmdagg``; nothing of it is committed): ``mmdagg(x, y,
kernel="gaussian", number_bandwidths=10, B1=B, B2=B)``, with its wild bootstrap
(equal sample sizes, its default) and with ``permutations_same_sample_size=True``.
Both use B = 2000 (the authors draw B1 + B2 + 1 statistics a kernel: the second B for
their level correction; kmtests' min-p level is exact with one stream).

kerneltests 0.0.1 (PyPI, import name ``kt``; a port of the authors' code): ``kt.mmdagg.mmdagg(x,
y, kernel="gaussian", number_bandwidths=10, B1=B, B2=B)`` with its default ``fast=True``
(the wild bootstrap in the n x n form ``r'(Kxx + Kyy - Kxy - Kyx) r``), loaded from a
separate environment given with ``--kerneltests SITE_PACKAGES`` (appended to
``sys.path``: only ``kt`` is taken from it; nothing of it is committed).

Data: x, y ~ N(0, I_10), n points each. States: ``quiet`` and ``busy`` (one other
process spinning on one core). Wall and CPU seconds (the process's), best of `--repeats`
after a warm-up (one call above n = 1000), with the load average. Each contender with its
library's default threads, or all with one (``--threads 1``: threadpoolctl and
``n_jobs=1``).

Run::

    git --git-dir=/work/.mirror/antoninschrab+mmdagg/repo archive HEAD | tar -x -C /tmp/mmdagg
    .venv/bin/python benchmarks/bench_mmdagg_peer.py --mmdagg /tmp/mmdagg
    .venv/bin/python benchmarks/bench_mmdagg_peer.py --no-authors \
        --kerneltests /work/peers-venv/lib/python3.11/site-packages --threads 1
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent



def contenders(path: str | None, kt_path: str | None, B: int, n: int, threads: int | None
               ) -> dict[str, Callable[[Any, Any], Any]]:
    import importlib.util
    import sys

    import kmtests

    out: dict[str, Callable[[Any, Any], Any]] = {
        "kmtests MMDAgg (permutations)": lambda x, y: kmtests.aggregated_two_sample_test(
            x, y, n_resamples=B, rng=0, n_jobs=threads).pvalue,
        # equal sizes only: the swaps within random pairs (exact level; kerneltests' and
        # the authors' wild bootstrap draws the same arrangements)
        "kmtests MMDAgg (swaps)": lambda x, y: kmtests.aggregated_two_sample_test(
            x, y, n_resamples=B, rng=0, n_jobs=threads, method="swap").pvalue,
    }
    if kt_path:
        if kt_path not in sys.path:
            sys.path.append(kt_path)
        from kt.mmdagg import mmdagg as kt_mmdagg

        # kerneltests draws a wild bootstrap for equal sizes, permutations otherwise
        out["kerneltests MMDAgg"] = lambda x, y: kt_mmdagg(
            x, y, kernel="gaussian", number_bandwidths=10, B1=B, B2=B)
    if path:
        # mmdagg/__init__.py imports the JAX version; the numpy one is loaded on its own
        spec = importlib.util.spec_from_file_location("mmdagg_np",
                                                      Path(path) / "mmdagg" / "np.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        mmdagg = module.mmdagg
        out["authors wild bootstrap"] = lambda x, y: mmdagg(
            x, y, kernel="gaussian", number_bandwidths=10, B1=B, B2=B)
        if n <= 1000:
            out["authors permutations"] = lambda x, y: mmdagg(
                x, y, kernel="gaussian", number_bandwidths=10, B1=B, B2=B,
                permutations_same_sample_size=True)
    return out


def run(path: str | None, kt_path: str | None, ns: list[int], B: int, repeats: int,
        states: list[str], threads: int | None, ratio: float = 1.0) -> pd.DataFrame:
    import contextlib
    import os

    from _benchutil import machine_state
    from threadpoolctl import threadpool_limits

    rows = []
    limit = threadpool_limits(threads) if threads else contextlib.nullcontext()
    with limit:
        for state in states:
            with machine_state(state):
                for n in ns:
                    g = np.random.default_rng(n)
                    n_y = int(round(ratio * n))
                    x, y = g.normal(size=(n, 10)), g.normal(size=(n_y, 10))
                    for name, fn in contenders(path, kt_path, B, n, threads).items():
                        if n_y != n and "swaps" in name:
                            continue
                        fn(x, y)
                        reps = repeats if n <= 1000 else 1
                        best = (float("inf"), float("inf"))
                        load = os.getloadavg()[0]
                        for _ in range(reps):
                            t0, c0 = time.perf_counter(), time.process_time()
                            fn(x, y)
                            best = min(best, (time.perf_counter() - t0,
                                              time.process_time() - c0))
                        rows.append({"state": state, "n": n, "n_y": n_y, "test": name,
                                     "seconds": best[0], "cpu": best[1], "repeats": reps,
                                     "load": (load + os.getloadavg()[0]) / 2,
                                     "threads": threads or "default"})
                        print(f"{state:5s} n={n:5d} {name:32s} {best[0]:8.3f} s wall "
                              f"{best[1]:8.3f} s CPU  load {rows[-1]['load']:.1f}", flush=True)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mmdagg", help="checkout of antoninschrab/mmdagg")
    ap.add_argument("--no-authors", action="store_true")
    ap.add_argument("--kerneltests", help="site-packages holding kerneltests (kt)")
    ap.add_argument("--n", default="200,500,1000,2000")
    ap.add_argument("--B", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--states", default="quiet,busy")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--ny-ratio", type=float, default=1.0,
                    help="n_y = ratio x n (unequal sizes: no swaps; the peers permute)")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_mmdagg_peer.csv"))
    args = ap.parse_args(argv)
    path = None if args.no_authors else args.mmdagg
    tab = run(path, args.kerneltests, [int(v) for v in args.n.split(",")], args.B,
              args.repeats, args.states.split(","), args.threads, args.ny_ratio)
    tab.to_csv(args.out, index=False, float_format="%.4g")
    km = "kmtests MMDAgg (permutations)"
    for state, g in tab.groupby("state", sort=False):
        for col in ("seconds", "cpu"):
            piv = g.pivot(index="n", columns="test", values=col)
            for other in piv.columns:
                if other != km:
                    piv[f"{other.split()[0]} / kmtests"] = piv[other] / piv[km]
            print(f"\n{state} ({col}):\n{piv.round(3).to_string()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
