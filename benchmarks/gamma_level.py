"""Level of the gamma approximations by sample size (measured, not asserted).

Under H0 (independent standard normals, d = 1 and 2), the fraction of p-values
<= alpha for method="gamma", with Clopper-Pearson 95% intervals.
Run: python benchmarks/gamma_level.py [--reps 2000]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

import kmtests


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    args = ap.parse_args()
    rows = []
    for test in ("MMD (biased, n_x = n_y = n)", "HSIC (biased)"):
        for n in (10, 20, 50, 100, 200):
            gen = np.random.default_rng(n)
            p = np.empty(args.reps)
            for r in range(args.reps):
                if test.startswith("MMD"):
                    x, y = gen.normal(size=(n, 2)), gen.normal(size=(n, 2))
                    p[r] = kmtests.two_sample_test(x, y, statistic="biased", method="gamma").pvalue
                else:
                    x, y = gen.normal(size=(n, 1)), gen.normal(size=(n, 1))
                    p[r] = kmtests.independence_test(x, y, method="gamma").pvalue
            for alpha in (0.01, 0.05, 0.10):
                k = int(np.sum(p <= alpha))
                lo, hi = proportion_confint(k, args.reps, alpha=0.05, method="beta")
                rows.append({"test": test, "n": n, "alpha": alpha, "rate": k / args.reps,
                             "ci_low": lo, "ci_high": hi})
    df = pd.DataFrame(rows)
    print(df.pivot_table(index=["test", "n"], columns="alpha", values="rate").round(4)
          .to_string())
    print()
    print(df.round(4).to_string(index=False))


if __name__ == "__main__":
    main()
