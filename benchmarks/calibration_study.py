"""Calibration study: type-I error of every configuration under several nulls.

For every estimator x {MMD, HSIC} x tuning x null method, the rejection rate
at alpha in {0.01, 0.05, 0.10} over R null data sets, with Clopper-Pearson
95% intervals and a flag when the rate is outside the two-sided binomial 99%
band of an exact level-alpha test (B = 99 permutations, so the permutation
p-value is exactly uniform on {1/100, ..., 1}: the three levels are exact).

Null distributions: two-sample — both samples N(0, I_2), t_3 (heavy tails),
Exp(1) (skewed); independence — x, y independent with the same laws
(y two-dimensional).

Run: python benchmarks/calibration_study.py [--reps 300] [--n-jobs 2] [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import kmtests

ALPHAS = (0.01, 0.05, 0.10)
B = 99
NULLS = ("normal", "t3", "exp")


def _draw(kind, gen, n, d):
    if kind == "normal":
        return gen.normal(size=(n, d))
    if kind == "t3":
        return gen.standard_t(3, size=(n, d))
    return gen.exponential(size=(n, d))


def _one_config(test, estimator, tuning, method, kind, reps, n, seed):
    gen = np.random.default_rng(seed)
    p = np.empty(reps)
    for r in range(reps):
        if test == "MMD":
            x, y = _draw(kind, gen, n, 2), _draw(kind, gen, n, 2)
            kw = {"statistic": "biased"} if method == "gamma" else {}
            res = kmtests.two_sample_test(x, y, estimator=estimator, tuning=tuning,
                                          method=method, n_resamples=B, rng=gen, **kw)
        else:
            x, y = _draw(kind, gen, n, 1), _draw(kind, gen, n, 2)
            res = kmtests.independence_test(x, y, estimator=estimator, tuning=tuning,
                                            method=method, n_resamples=B, rng=gen)
        p[r] = res.pvalue
    rows = []
    for a in ALPHAS:
        k = int(np.sum(p <= a))
        lo, hi = proportion_confint(k, reps, alpha=0.05, method="beta")
        band = (stats.binom.ppf(0.005, reps, a), stats.binom.ppf(0.995, reps, a))
        rows.append({"reps": reps, "test": test, "estimator": estimator, "tuning": tuning,
                     "method": method,
                     "null": kind, "n": n, "alpha": a, "rate": k / reps, "ci_low": lo,
                     "ci_high": hi, "in_99_band": bool(band[0] <= k <= band[1])})
    return rows


def configurations(quick: bool):
    ests = list(kmtests.estimators.ESTIMATORS)
    for test in ("MMD", "HSIC"):
        for est in ests:
            tunings = ["permutation"] if est in ("kme", "mkme", "mmkme") else ["permutation",
                                                                                 "pooled"]
            if est == "tsvd":
                tunings = ["permutation"]  # a pooled rank does not transfer across sizes
            for tuning in tunings:
                yield test, est, tuning, "permutation"
        yield test, "kme", "permutation", "gamma"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="one null distribution only")
    ap.add_argument("--nulls", nargs="+", choices=NULLS, default=None,
                    help="null distributions to run (default: all, or normal with --quick)")
    ap.add_argument("--out", default="benchmarks/results/calibration_study.csv")
    ap.add_argument("--heavy-reps", type=int, default=None,
                    help="data sets for the per-permutation spectral filters (default: --reps)")
    args = ap.parse_args()
    nulls = args.nulls or (NULLS[:1] if args.quick else NULLS)
    jobs = [(c, kind) for c in configurations(args.quick) for kind in nulls]
    t0 = time.time()
    heavy = {"iterated_tikhonov", "landweber", "nu_method", "tsvd"}

    def reps_for(c):
        return args.heavy_reps if (args.heavy_reps and c[1] in heavy) else args.reps

    out = Parallel(n_jobs=args.n_jobs, verbose=0)(
        delayed(_one_config)(*c, kind, reps_for(c), args.n, 1000 + i)
        for i, (c, kind) in enumerate(jobs))
    df = pd.DataFrame([r for rows in out for r in rows])
    pd.set_option("display.width", 200)
    wide = df.pivot_table(index=["test", "estimator", "tuning", "method", "null"],
                          columns="alpha", values="rate")
    print(wide.round(3).to_string())
    bad = df[~df["in_99_band"]]
    print(f"\n{len(df)} rates ({args.reps} data sets each, {args.heavy_reps or args.reps} for "
          f"the per-permutation filters; n = {args.n}, B = {B}); "
          f"{len(bad)} outside the binomial 99% band; {time.time() - t0:.0f} s")
    if len(bad):
        print(bad.to_string(index=False))
    df.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
