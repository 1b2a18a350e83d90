"""Degenerate conditional nulls (issue 29, item 3): when x or y is a function of z, x and
y are independent given z trivially; the test says so (p = 1, a note and a
DegenerateStatisticWarning) instead of a p-value computed from the regression's rounding,
on every engine, statistic and null method."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from kmtests import DegenerateStatisticWarning
from kmtests import conditional_independence_test as ci
from kmtests.statistics.kci import DEGENERATE_BELOW, DEGENERATE_BELOW_COARSE

CONFIGS = [
    {},
    {"method": "chi2", "n_resamples": 500, "rng": 0},
    {"method": "wild", "n_resamples": 500, "rng": 0},
    {"statistic": "split", "rng": 0},
    {"engine": "nystrom", "rng": 0},
    {"engine": "rff", "rng": 0},
]


def _z(n=200, seed=0, d=1):
    z = np.random.default_rng(seed).normal(size=(n, d))
    return z[:, 0] if d == 1 else z


@pytest.mark.parametrize("kw", CONFIGS, ids=lambda kw: "-".join(map(str, kw.values()))
                         or "default")
@pytest.mark.parametrize("case", ["z,z,z", "sin,cos", "z2d"])
def test_a_function_of_z_gives_p_one_with_a_warning(case, kw):
    if case == "z,z,z":
        z = _z()
        x, y = z, z
    elif case == "sin,cos":
        z = _z(seed=1)
        x, y = np.sin(3 * z), np.cos(3 * z)
    else:
        z = _z(seed=2, d=2)
        x, y = z, z[:, ::-1]
    with pytest.warns(DegenerateStatisticWarning, match="functions? of z"):
        res = ci(x, y, z, **kw)
    assert res.pvalue == 1.0
    assert res.details["holds_trivially"] is True
    assert min(res.details["unexplained"].values()) < DEGENERATE_BELOW_COARSE
    assert any("independent given z trivially" in note for note in res.notes)


def test_one_variable_a_function_of_z_is_enough():
    gen = np.random.default_rng(3)
    z = gen.normal(size=150)
    y = np.cos(z) + 0.3 * gen.normal(size=150)
    with pytest.warns(DegenerateStatisticWarning, match="x is a function of z"):
        res = ci(np.exp(z), y, z)
    assert res.pvalue == 1.0
    assert res.details["unexplained"]["y"] > 0.1


def test_within_strata_permutations_report_it_too():
    gen = np.random.default_rng(4)
    z = gen.integers(0, 3, size=90).astype(float)
    y = z + gen.normal(size=90)
    with pytest.warns(DegenerateStatisticWarning, match="functions? of z"):
        res = ci(z ** 2, y, z, method="permutation", strata=z, n_resamples=200, rng=0)
    assert res.pvalue == 1.0


def test_a_constant_variable_is_trivially_independent():
    z = _z(n=60, seed=5)
    y = np.sin(z) + np.random.default_rng(6).normal(size=60)
    with pytest.warns(DegenerateStatisticWarning):
        res = ci(np.ones(60), y, z)
    assert res.pvalue == 1.0
    # (augmented by z / 2, the constant x is a function of z)
    assert res.details["unexplained"]["x"] < DEGENERATE_BELOW


def test_a_small_real_part_beyond_z_is_still_tested():
    """x = sin(3z) + 0.01 e leaves 2e-4 of its features unexplained: far above the
    threshold, so its dependence on y through e is tested (and found), without a
    warning; and an ordinary null is not flagged."""
    gen = np.random.default_rng(7)
    z, e, e2 = gen.normal(size=(3, 200))
    x = np.sin(3 * z) + 0.01 * e
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateStatisticWarning)
        dep = ci(x, e + 0.1 * e2, z)
        null = ci(np.sin(2 * z) + 0.3 * e, np.cos(2 * z) + 0.3 * e2, z)
    assert dep.pvalue < 1e-3
    assert dep.details["unexplained"]["x"] > 10 * DEGENERATE_BELOW
    assert "holds_trivially" not in dep.details
    assert 0.0 < null.pvalue < 1.0
