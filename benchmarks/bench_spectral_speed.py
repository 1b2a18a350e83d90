"""Spectral (re-weighting) estimators against the KME, in one process (issue 21).

Part 1 (``--n``, default 100 200 per sample): the two-sample test with B = 199
permutations, d = 5, for the KME (exact engine) and for F-KMSE and the other
spectral filters on the exact engine and on the Nyström engine (``--ranks``
landmarks), re-tuned on every permutation (``tuning="permutation"``) and tuned once
on the pooled sample (``tuning="pooled"``). Wall seconds, the median of
``--repeats`` calls after a warm-up call; the ratio to the KME test of the same run.

Part 2 (``--large``, default 10000 per sample): the same on the Nyström engine
with ``--large-rank`` landmarks and ``--large-B`` permutations. A cell whose first
short call (``--probe`` permutations) predicts more than ``--budget`` seconds is
extrapolated as ``fixed + B x per-permutation`` from calls with 2 and ``--probe``
permutations (the table says so).

Run::

    .venv/bin/python benchmarks/bench_spectral_speed.py
    .venv/bin/python benchmarks/bench_spectral_speed.py --n 200 --repeats 1 --large 2000
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import kmtests
from _benchutil import markdown_table

HERE = Path(__file__).resolve().parent

FILTERS = ["fkmse", "iterated_tikhonov", "landweber", "nu_method", "tsvd"]


def _call(x: np.ndarray, y: np.ndarray, B: int, **kw: Any) -> float:
    t = time.perf_counter()
    kmtests.two_sample_test(x, y, n_resamples=B, rng=0, progress=False, **kw)
    return time.perf_counter() - t


def _median(x: np.ndarray, y: np.ndarray, B: int, repeats: int, **kw: Any) -> float:
    _call(x, y, min(B, 9), **kw)  # warm-up: compilation, caches
    return statistics.median(_call(x, y, B, **kw) for _ in range(repeats))


def _budgeted(x: np.ndarray, y: np.ndarray, B: int, budget: float, probe: int,
              **kw: Any) -> tuple[float, str]:
    """Seconds for B permutations: measured, or extrapolated from 2 and `probe`."""
    t2 = _call(x, y, 2, **kw)
    tp = _call(x, y, probe, **kw)
    per = max(tp - t2, 0.0) / (probe - 2)
    estimate = t2 + (B - 2) * per
    if estimate <= budget:
        return _call(x, y, B, **kw), "measured"
    return estimate, f"extrapolated from B' = {probe}"


def part1(ns: list[int], ranks: list[int], B: int, repeats: int,
          skip: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    rows = []
    gen = np.random.default_rng(0)
    for n in ns:
        x, y = gen.normal(size=(n, 5)), gen.normal(size=(n, 5))
        kme = _median(x, y, B, repeats)
        rows.append(dict(n=n, estimator="kme", engine="exact", tuning="-", seconds=kme))
        for est in FILTERS:
            cells = [("exact", "permutation", {}), ("exact", "pooled", {})]
            cells += [(f"nystrom r={r}", t, dict(engine="nystrom", n_features=r))
                      for r in ranks for t in ("permutation", "pooled")]
            for engine, tuning, kw in cells:
                if est == "tsvd" and tuning == "pooled":
                    continue  # a rank does not transfer between sample sizes (refused)
                if (est, engine) in skip:
                    continue
                reps = repeats if not (est in ("landweber", "tsvd") and engine == "exact") else 1
                sec = _median(x, y, B, reps, estimator=est, tuning=tuning, **kw)
                rows.append(dict(n=n, estimator=est, engine=engine, tuning=tuning,
                                 seconds=sec))
                print(f"n={n} {est} {engine} {tuning}: {sec:.3f} s ({sec / kme:.1f}x kme)",
                      flush=True)
    df = pd.DataFrame(rows)
    kme_of = df[df.estimator == "kme"].set_index("n").seconds
    df["x_kme"] = df.seconds / df.n.map(kme_of)
    return df


def part2(n: int, rank: int, B: int, budget: float, probe: int) -> pd.DataFrame:
    gen = np.random.default_rng(1)
    x, y = gen.normal(size=(n, 5)), gen.normal(size=(n, 5))
    rows = []
    kme = _call(x, y, B, engine="nystrom", n_features=rank)
    rows.append(dict(n=n, estimator="kme", tuning="-", seconds=kme, how="measured"))
    for est in FILTERS:
        for tuning in ("permutation", "pooled"):
            if est == "tsvd" and tuning == "pooled":
                continue
            sec, how = _budgeted(x, y, B, budget, probe, estimator=est, tuning=tuning,
                                 engine="nystrom", n_features=rank)
            rows.append(dict(n=n, estimator=est, tuning=tuning, seconds=sec, how=how))
            print(f"n={n} {est} nystrom r={rank} {tuning}: {sec:.1f} s ({how})", flush=True)
    df = pd.DataFrame(rows)
    df["x_kme"] = df.seconds / kme
    return df


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[100, 200])
    ap.add_argument("--ranks", type=int, nargs="+", default=[20, 50])
    ap.add_argument("--B", type=int, default=199)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--large", type=int, default=10000)
    ap.add_argument("--large-rank", type=int, default=100)
    ap.add_argument("--large-B", type=int, default=999)
    ap.add_argument("--budget", type=float, default=120.0)
    ap.add_argument("--probe", type=int, default=6)
    ap.add_argument("--skip", nargs="*", default=["tsvd:exact"],
                    help="estimator:engine cells of part 1 to leave out (tsvd on the exact "
                         "engine: n eigendecompositions a sample, minutes)")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_spectral_speed.csv"))
    args = ap.parse_args()
    from _benchutil import machine_summary, print_machine

    print_machine(machine_summary())
    frames = []
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    if args.n:
        skip = tuple(tuple(c.split(":")) for c in args.skip)
        d1 = part1(args.n, args.ranks, args.B, args.repeats, skip)  # type: ignore[arg-type]
        d1["part"] = f"B={args.B}"
        frames.append(d1)
        pd.concat(frames).to_csv(args.out, index=False)
        print(markdown_table(d1))
    if args.large:
        d2 = part2(args.large, args.large_rank, args.large_B, args.budget, args.probe)
        d2["part"] = f"B={args.large_B}, nystrom r={args.large_rank}"
        frames.append(d2)
        print(markdown_table(d2))
    pd.concat(frames).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
