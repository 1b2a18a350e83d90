"""Cost of the aggregated tests against the sum of their members' single tests.

Same data, same B, one BLAS and numba thread. For each collection:

* ``10 bw``: ``aggregated_two_sample_test`` over 10 Gaussian bandwidths (KME
  U-statistics) against 10 calls of ``two_sample_test(bandwidth=b_i)``;
* ``10 bw x 10 lam``: the spectral-regularised members (Showalter, pooled
  operator) over 10 bandwidths x 10 lambdas against 100 calls of
  ``two_sample_test(statistic="regularized", bandwidth=b_i, lam=l_j)``;
* ``HSIC 5 x 5``: ``aggregated_independence_test`` over 5 x 5 bandwidth pairs
  against 25 calls of ``independence_test(bandwidth_x=..., bandwidth_y=...,
  statistic="unbiased")``.

And the per-permutation cost of the spectral-regularised MMD (one lambda, and a
grid of 10 lambdas through ``lam=[...]``) against the KME MMD, from the time
difference between B = 1999 and B = 199 (so the setup — Gram matrix,
eigendecomposition — cancels).

Run from the repository root::

    .venv/bin/python benchmarks/bench_aggregated.py [--sizes 200 500] [--B 499] [--repeats 3]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchutil import check_quiet, machine_summary, print_machine  # noqa: E402

from kmtests import (aggregated_independence_test, aggregated_two_sample_test,  # noqa: E402
                     independence_test, two_sample_test)
from kmtests.aggregated import bandwidth_grid  # noqa: E402


def best(fn, repeats: int) -> float:
    out = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out


def rows_for(n: int, B: int, repeats: int, d: int = 10) -> list[tuple[str, int, float, float]]:
    gen = np.random.default_rng(n)
    x, y = gen.normal(size=(n, d)), gen.normal(0.05, size=(n, d))
    z = np.vstack([x, y])
    bws = bandwidth_grid(z, 10)
    lams = np.logspace(-6, 1, 10)
    out = []
    # warm-up (imports, JIT)
    two_sample_test(x[:20], y[:20], n_resamples=9, rng=0, n_jobs=1)
    independence_test(x[:20, :1], y[:20, :1], n_resamples=9, rng=0, n_jobs=1)

    agg = best(lambda: aggregated_two_sample_test(x, y, bandwidths=bws, n_resamples=B, rng=1,
                                                  n_jobs=1), repeats)
    singles = sum(best(lambda b=b: two_sample_test(x, y, bandwidth=float(b), n_resamples=B,
                                                   rng=1, n_jobs=1), repeats) for b in bws)
    out.append(("MMD, 10 bw", n, agg, singles))

    agg = best(lambda: aggregated_two_sample_test(
        x, y, bandwidths=bws, estimators=(), filters=("showalter",), lams=lams,
        n_resamples=B, rng=1, n_jobs=1), repeats)
    singles = sum(best(lambda b=b, lam=lam: two_sample_test(
        x, y, bandwidth=float(b), statistic="regularized", filter="showalter", lam=float(lam),
        n_resamples=B, rng=1, n_jobs=1), 1) for b in bws for lam in lams)
    out.append(("SR-MMD, 10 bw x 10 lam", n, agg, singles))

    u = gen.uniform(-np.pi, np.pi, size=(n, 1))
    v = np.sin(2 * u) + gen.normal(size=(n, 1))
    bx, by = bandwidth_grid(u, 5), bandwidth_grid(v, 5)
    agg = best(lambda: aggregated_independence_test(u, v, bandwidths_x=bx, bandwidths_y=by,
                                                    n_resamples=B, rng=1, n_jobs=1), repeats)
    singles = sum(best(lambda a=a, b=b: independence_test(
        u, v, bandwidth_x=float(a), bandwidth_y=float(b), statistic="unbiased",
        n_resamples=B, rng=1, n_jobs=1), repeats) for a in bx for b in by)
    out.append(("HSIC_u, 5 x 5 pairs", n, agg, singles))
    return out


def per_permutation(n: int, repeats: int, d: int = 10) -> list[tuple[str, float]]:
    gen = np.random.default_rng(n + 1)
    x, y = gen.normal(size=(n, d)), gen.normal(0.05, size=(n, d))
    lams = list(np.logspace(-6, 1, 10))
    cases = {
        "MMD_u (KME)": {},
        "SR-MMD, one lambda": {"statistic": "regularized", "filter": "showalter", "lam": 1e-3},
        "SR-MMD, 10 lambdas (min-p)": {"statistic": "regularized", "filter": "showalter",
                                       "lam": lams},
    }
    B1, B2 = 199, 1999
    res = []
    for label, kw in cases.items():
        t1 = best(lambda: two_sample_test(x, y, n_resamples=B1, rng=1, n_jobs=1, **kw), repeats)
        t2 = best(lambda: two_sample_test(x, y, n_resamples=B2, rng=1, n_jobs=1, **kw), repeats)
        res.append((label, (t2 - t1) / (B2 - B1), t1))
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[200, 500])
    ap.add_argument("--B", type=int, default=499)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    print_machine(machine_summary())
    check_quiet("start")
    print(f"\nB = {args.B}, d = 10 (two-sample; n per sample), best of {args.repeats} "
          "(the 100 regularised singles: one run each)\n")
    print("| collection | n | aggregated s | sum of members s | members / aggregated |")
    print("|---|---:|---:|---:|---:|")
    for n in args.sizes:
        for label, nn, agg, singles in rows_for(n, args.B, args.repeats):
            print(f"| {label} | {nn} | {agg:.3f} | {singles:.3f} | {singles / agg:.1f} |",
                  flush=True)
    check_quiet("after the collections")
    print("\nPer-permutation cost (from B = 1999 minus B = 199):\n")
    print("| test | n | us per permutation | ratio to MMD_u | whole test at B = 199, s |")
    print("|---|---:|---:|---:|---:|")
    for n in args.sizes:
        rows = per_permutation(n, args.repeats)
        base = rows[0][1]
        for label, per, t1 in rows:
            print(f"| {label} | {n} | {per * 1e6:.1f} | {per / base:.2f} | {t1:.3f} |",
                  flush=True)
    check_quiet("end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
