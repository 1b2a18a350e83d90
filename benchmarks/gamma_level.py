"""Level of the gamma approximations under H0 (measured, not asserted).

Under independent draws (two-sample: both samples from one law;
independence: x and y independent), by law, dimension d and sample size n
(per sample for MMD), Gaussian kernels with the median heuristic, for each
data set: whether ``method="gamma"`` refuses (its moments are too far from
the exact permutation moments), warns, or gives a p-value; the rejection
rate at alpha among the p-values given (Clopper-Pearson 95% intervals), and
the refusal and warning rates.

``--moments`` picks the gamma's moments: ``permutation`` (the default of
``GammaMethod``: the exact moments over the permutations of each data set)
or ``asymptotic`` (the published tests, with the moment check that refuses or
warns). ``--unguarded`` computes the asymptotic gamma p-value without the
check (the approximation as published), to measure where it fails.

Run: python benchmarks/gamma_level.py [--reps 1000] [--moments asymptotic] [--unguarded]
     [--out FILE.csv]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

import kmtests

LAWS = {
    "normal": lambda g, size: g.normal(size=size),
    "t3": lambda g, size: g.standard_t(3, size=size),
    "cauchy": lambda g, size: g.standard_cauchy(size=size),
}


def _unguarded(test: str, x: np.ndarray, y: np.ndarray) -> float:
    from kmtests.statistics import null_laws as _gamma
    from kmtests.kernels import Gaussian

    def gram(z: np.ndarray) -> np.ndarray:
        return Gaussian().fitted_to(z).centred_gram(z).Kc

    saved = _gamma._check
    _gamma._check = lambda *a, **k: None
    try:
        if test == "MMD^2_b":
            K = gram(np.vstack([x, y]))
            stat = kmtests.mmd(x, y, statistic="biased")
            return _gamma.mmd_gamma(K, x.shape[0], stat, "asymptotic")[0]
        return _gamma.hsic_gamma(gram(x), gram(y), kmtests.hsic(x, y), "asymptotic")[0]
    finally:
        _gamma._check = saved


def run(reps: int, ns: list[int], ds: list[int], laws: list[str],
        unguarded: bool = False, moments: str = "permutation") -> pd.DataFrame:
    method = kmtests.GammaMethod(moments=moments)
    rows = []
    for test in ("MMD^2_b", "HSIC_b"):
        for law in laws:
            draw = LAWS[law]
            for d in ds:
                for n in ns:
                    gen = np.random.default_rng([n, d, len(law), len(test)])
                    p = np.full(reps, np.nan)
                    warned = 0
                    for r in range(reps):
                        x, y = draw(gen, (n, d)), draw(gen, (n, d))
                        if unguarded:
                            p[r] = _unguarded(test, x, y)
                            continue
                        with warnings.catch_warnings(record=True) as caught:
                            warnings.simplefilter("always", kmtests.ApproximationWarning)
                            try:
                                if test == "MMD^2_b":
                                    p[r] = kmtests.two_sample_test(
                                        x, y, statistic="biased", method=method).pvalue
                                else:
                                    p[r] = kmtests.independence_test(
                                        x, y, method=method).pvalue
                            except ValueError as exc:
                                if "unusable" not in str(exc):
                                    raise
                        warned += any(issubclass(w.category, kmtests.ApproximationWarning)
                                      for w in caught)
                    given = p[~np.isnan(p)]
                    for alpha in (0.01, 0.05, 0.10):
                        k = int(np.sum(given <= alpha))
                        m = given.size
                        lo, hi = (proportion_confint(k, m, alpha=0.05, method="beta") if m
                                  else (np.nan, np.nan))
                        rows.append({"test": test, "law": law, "d": d, "n": n, "alpha": alpha,
                                     "given": m, "refused": (reps - m) / reps,
                                     "warned": warned / reps,
                                     "rate": k / m if m else np.nan, "ci_low": lo,
                                     "ci_high": hi})
                    print(test, law, d, n, [r["rate"] for r in rows[-3:]], flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--n", default="10,20,50,100,200")
    ap.add_argument("--d", default="1,5,50,500")
    ap.add_argument("--laws", default="normal,t3,cauchy")
    ap.add_argument("--out", default=None)
    ap.add_argument("--moments", choices=("permutation", "asymptotic"), default="permutation")
    ap.add_argument("--unguarded", action="store_true",
                    help="the asymptotic gamma p-value without the moment check")
    args = ap.parse_args()
    df = run(args.reps, [int(v) for v in args.n.split(",")],
             [int(v) for v in args.d.split(",")], args.laws.split(","), args.unguarded,
             args.moments)
    print(df.pivot_table(index=["test", "law", "d", "n"], columns="alpha", values="rate")
          .round(4).to_string())
    if args.out:
        df.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
