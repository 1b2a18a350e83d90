"""Level and power of the kernel goodness-of-fit test (issue 27, first part).

Level: 300 samples of N(0, 1) at n = 100 tested against N(0, 1), B = 99, alpha = 0.05,
for the wild bootstrap (i.i.d. Rademacher multipliers) and the Monte Carlo null (fresh
samples of the model), U- and V-statistics; the binomial 99% band. Power: samples of a
Student t with 3 degrees of freedom tested against N(0, 1), 100 samples, B = 199.

    python benchmarks/goodness_level.py
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from kmtests import goodness_of_fit_test


def main() -> None:
    warnings.simplefilter("ignore")
    lo, hi = stats.binom.ppf([0.005, 0.995], 300, 0.05)
    print(f"| null | statistic | rejected at 5% (300) | band [{lo:.0f}, {hi:.0f}] |")
    print("|---|---|---|---|")
    for method in ("wild", "monte_carlo"):
        for stat in ("unbiased", "biased"):
            rej = sum(goodness_of_fit_test(np.random.default_rng(100 + i).normal(size=100),
                                           model=stats.norm(), method=method, statistic=stat,
                                           n_resamples=99, rng=i).pvalue <= 0.05
                      for i in range(300))
            print(f"| {method} | {stat} | {rej} | {'inside' if lo <= rej <= hi else 'OUT'} |")
    print("\n| t(3) against N(0, 1), wild, U | n = 100 | n = 200 |\n|---|---|---|")
    power = [sum(goodness_of_fit_test(np.random.default_rng(5000 + i).standard_t(3, size=n),
                                      model=stats.norm(), n_resamples=199, rng=i).pvalue
                 <= 0.05 for i in range(100)) for n in (100, 200)]
    print(f"| rejected of 100 | {power[0]} | {power[1]} |")


if __name__ == "__main__":
    main()
