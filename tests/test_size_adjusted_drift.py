"""The comparison at equal level of ``benchmarks/dependent_size_adjusted.py`` (issue 30,
seventh session): the numbers of its table rest on these helpers.

* the size-adjusted power is that of the randomised test rejecting exactly alpha of the
  nulls (a brute-force search over the cuts; the null share it gives is alpha), and a
  monotone change of a test's p-values leaves it unchanged;
* the interval is Clopper-Pearson's (statsmodels' ``proportion_confint(method="beta")``);
* the long-memory study's forced length reaches the package's test (the same p-value as
  ``blocks=b`` where ``b`` divides both windows).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from dependent_long_memory import pvalue_with_length  # noqa: E402
from dependent_size_adjusted import interval, size_adjusted  # noqa: E402

from kmtests import two_sample_test  # noqa: E402


def _brute(p0: np.ndarray, p1: np.ndarray, alpha: float) -> tuple[float, float, float]:
    """Try every cut t: reject p < t, and p == t with probability g; keep the cut whose
    null shares below and at it straddle alpha (``below <= alpha < below + at``)."""
    for t in sorted(set(p0.tolist())):
        below = sum(p < t for p in p0) / len(p0)
        at = sum(p == t for p in p0) / len(p0)
        g = (alpha - below) / at
        if below <= alpha < below + at:
            power = (sum(p < t for p in p1) + g * sum(p == t for p in p1)) / len(p1)
            return t, g, power
    raise AssertionError("no cut")


@pytest.mark.parametrize("seed", range(6))
def test_size_adjusted_power_is_the_randomised_test_at_exactly_alpha(seed):
    gen = np.random.default_rng(seed)
    grid = np.arange(1, 36) / 35  # p-values of 70 splits: a coarse grid with ties
    p0 = gen.choice(grid, size=120)
    p1 = gen.choice(grid[:12], size=90)
    t, g, power = size_adjusted(p0, p1, 0.05)
    assert (t, g, power) == pytest.approx(_brute(p0, p1, 0.05))
    # the randomised test rejects exactly alpha of the nulls
    assert np.mean(p0 < t) + g * np.mean(p0 == t) == pytest.approx(0.05)
    # a monotone change of the p-values (a test whose nulls reject more at 5%) changes
    # nothing at equal level
    assert size_adjusted(p0 ** 2, p1 ** 2, 0.05)[2] == pytest.approx(power)


def test_size_adjusted_with_few_distinct_null_pvalues():
    t, g, power = size_adjusted(np.array([0.5, 0.6]), np.array([0.9, 0.5]), 0.05)
    assert (t, power) == (0.5, pytest.approx(0.1 * 0.5)) and g == pytest.approx(0.1)
    # every null p-value tied: the randomised test rejects alpha of them
    assert size_adjusted(np.array([0.5, 0.5]), np.array([0.5, 0.1]), 0.05)[2] == \
        pytest.approx(0.5 + 0.05 * 0.5)


@pytest.mark.parametrize("k,n", [(0, 300), (11, 300), (70, 300), (300, 300)])
def test_interval_is_clopper_pearson(k, n):
    assert interval(k, n) == pytest.approx(proportion_confint(k, n, 0.05, method="beta"))


def test_forced_length_reaches_the_package_test():
    gen = np.random.default_rng(4)
    z = np.cumsum(gen.normal(size=200)) * 0.05 + gen.normal(size=200)
    ref = two_sample_test(z[:100], z[100:], blocks=20, n_resamples=199, rng=3).pvalue
    assert pvalue_with_length(z, 3, 20) == ref
