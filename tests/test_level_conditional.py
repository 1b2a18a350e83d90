"""Type-I error of the conditional independence test on conditional nulls (99% binomial band).

As in ``tests/test_calibration.py``: each configuration draws R null data sets from a
fixed seed and counts rejections at alpha = 0.05; a count outside the two-sided binomial
99% interval of Bin(R, 0.05) is a finding. Every variant sees the same data sets (the
eigendecompositions of z are shared through the cache). The whole battery, side by side
with causal-learn, is ``benchmarks/ci_level.py`` (table in ``benchmarks/README.md``).

* ``sharp``: x = sin(6z) + 0.3 e, y = cos(6z) + 0.3 e' (high frequency in z);
* ``hetero``: x = sin(2z) + (0.1 + 0.4|z|) e, y = cos(2z) + (0.1 + 0.4|z|) e';
* ``discrete``: z uniform on {0, 1, 2}, a mean and a scale per level; the exact test
  permutes y within the strata of z;
* causal-learn's fixed settings (widths ``0.7 sqrt(d_z)`` at n = 200, ``lam = 1e-3 / n``)
  on the sharp null: the over-rejection that the tuned regression removes;
* the post-nonlinear null of Zhang et al. (2011) with two irrelevant coordinates of z
  (``pnl3``) and a single-index null on a 3-dimensional z (``index3``), where GCV chose
  an interpolating regression before the search was bounded by ``max_df`` (31 of 300
  and 19 of 200 rejections at n = 200).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from kmtests import conditional_independence_test as ci
from kmtests.estimators.conditional import clear_cache

ALPHA = 0.05
B = 199  # draws of chi2 / wild / permutations: (1 + #) / 200 <= 0.05 is an exact 5%


def _band(reps):
    return stats.binom.ppf(0.005, reps, ALPHA), stats.binom.ppf(0.995, reps, ALPHA)


# -- the nulls ------------------------------------------------------------------------------------
def _sharp(gen, n):
    z = gen.normal(size=n)
    return (np.sin(6 * z) + 0.3 * gen.normal(size=n), np.cos(6 * z) + 0.3 * gen.normal(size=n),
            z)


def _hetero(gen, n):
    z = gen.normal(size=n)
    s = 0.1 + 0.4 * np.abs(z)
    return (np.sin(2 * z) + s * gen.normal(size=n), np.cos(2 * z) + s * gen.normal(size=n), z)


def _discrete(gen, n):
    z = gen.integers(0, 3, size=n)
    x = np.array([0.0, 1.5, -1.0])[z] + np.array([0.3, 1.0, 0.6])[z] * gen.normal(size=n)
    y = np.array([1.0, -1.0, 0.5])[z] + np.array([0.5, 0.3, 1.0])[z] * gen.normal(size=n)
    return x, y, z.astype(float)


def _pnl(gen, n, dz):
    """Zhang et al.'s post-nonlinear Case I: z1 effective, dz - 1 irrelevant coordinates."""
    def std(a):
        return (a - a.mean()) / a.std(ddof=1)

    z = gen.normal(size=n)
    u = 0.7 * (z ** 3 / 5 + z / 2) + np.tanh(gen.normal(size=n))
    x = std(u + u ** 3 / 3 + np.tanh(u / 3) / 2)
    v = gen.normal(size=n) + (z ** 3 / 4 + z) / 3
    y = std(v + np.tanh(v / 3))
    return x, y, np.column_stack([std(z), gen.normal(size=(n, dz - 1))])


def _index3(gen, n):
    z = gen.normal(size=(n, 3))
    u = z.sum(axis=1) / np.sqrt(3)
    v = (z[:, 0] - z[:, 1] + z[:, 2]) / np.sqrt(3)
    return np.sin(2 * u) + 0.3 * gen.normal(size=n), np.cos(2 * v) + 0.3 * gen.normal(size=n), z


NULLS = {"sharp": _sharp, "hetero": _hetero, "discrete": _discrete,
         "pnl3": lambda gen, n: _pnl(gen, n, 3), "index3": _index3}


def _variants(seed):
    """The shipped choices: the default (gcv, gamma) and one change each."""
    return {
        "gcv-gamma": {},
        "gcv-chi2": {"method": "chi2", "n_resamples": B, "rng": seed},
        "gcv-wild": {"method": "wild", "n_resamples": B, "rng": seed},
        "marglik-gamma": {"criterion": "marglik"},
        "loo-gamma": {"criterion": "loo"},
        "split-gamma": {"statistic": "split", "rng": seed},
        "zhang-gamma": {"null_moments": "zhang"},
    }


@functools.lru_cache(maxsize=None)
def _counts(null, n, reps, seed):
    """Rejections of every variant over the same `reps` data sets."""
    gen = np.random.default_rng(seed)
    counts = dict.fromkeys(_variants(0), 0)
    for i in range(reps):
        x, y, z = NULLS[null](gen, n)
        for name, kw in _variants(seed + i).items():
            counts[name] += ci(x, y, z, **kw).pvalue <= ALPHA
        clear_cache()
    return counts


# measured (R = 300, n = 100; band [7, 25])
_SPLIT_SHARP = ("SplitKCI over-rejects when z acts at high frequency: its regressions see "
                "half the sample (benchmarks/ci_level.py, sharp null)")


_WILD_SHARP = ("the Gaussian wild bootstrap rejects 28/300 (9.3%) on the sharp null at n = 100 "
               "(the gamma null 22/300); 23/300 at n = 200 (benchmarks/ci_level.py)")


@pytest.mark.slow
@pytest.mark.parametrize("variant", [
    "gcv-gamma", "gcv-chi2",
    pytest.param("gcv-wild", marks=pytest.mark.xfail(strict=True, reason=_WILD_SHARP)),
    "marglik-gamma", "loo-gamma",
    pytest.param("split-gamma", marks=pytest.mark.xfail(strict=True, reason=_SPLIT_SHARP)),
])
def test_level_on_the_sharp_null(variant):
    reps = 300
    lo, hi = _band(reps)
    rej = _counts("sharp", 100, reps, 5101)[variant]
    assert lo <= rej <= hi, f"{variant}: rejections {rej}/{reps} outside [{lo}, {hi}]"


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["gcv-gamma", "gcv-chi2", "gcv-wild", "marglik-gamma",
                                     "loo-gamma", "split-gamma"])
def test_level_on_the_heteroscedastic_null(variant):
    reps = 300
    lo, hi = _band(reps)
    rej = _counts("hetero", 100, reps, 5202)[variant]
    assert lo <= rej <= hi, f"{variant}: rejections {rej}/{reps} outside [{lo}, {hi}]"


_PNL3_CONSERVATIVE = (
    "the corrected gamma null (the default) rejects 3-5 of 300 pnl3 nulls at n = 100 (Zhang "
    "et al.'s moments 7-9): its mean is right there (T over it 0.97 +- 0.03) but its "
    "variance, Zhang et al.'s times the factor, is 46-73% above the statistic's "
    "(benchmarks/ci_small_n.py; 16-38% at n = 200, where it rejects 11-15 of 300)")


@pytest.mark.slow
@pytest.mark.parametrize("null", ["pnl3", "index3"])
@pytest.mark.parametrize("variant", ["gcv-gamma", "marglik-gamma", "loo-gamma", "zhang-gamma"])
def test_level_on_a_multivariate_z(null, variant):
    """The nulls where an unbounded search interpolated (see the module docs); the
    corrected gamma's conservative side on pnl3 is the strict xfail below."""
    reps = 300
    lo, hi = _band(reps)
    rej = _counts(null, 100, reps, 5606)[variant]
    assert rej <= hi, f"{null}, {variant}: rejections {rej}/{reps} above {hi}"
    if null != "pnl3" or variant == "zhang-gamma":
        assert lo <= rej, f"{null}, {variant}: rejections {rej}/{reps} below {lo}"


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=_PNL3_CONSERVATIVE)
@pytest.mark.parametrize("variant", ["gcv-gamma", "marglik-gamma", "loo-gamma"])
def test_not_conservative_on_pnl3_at_n_100(variant):
    lo, _ = _band(300)
    rej = _counts("pnl3", 100, 300, 5606)[variant]
    assert rej >= lo, f"pnl3, {variant}: rejections {rej}/300 below {lo}"


# -- a discrete z: the exact test within strata ---------------------------------------------------
@pytest.mark.slow
def test_permutations_within_strata_keep_the_level_on_a_discrete_z():
    reps, n = 300, 60
    lo, hi = _band(reps)
    gen = np.random.default_rng(5303)
    rej = 0
    for i in range(reps):
        x, y, z = _discrete(gen, n)
        res = ci(x, y, z, strata=z, n_resamples=B, rng=i)
        assert res.method.name == "permutation"
        rej += res.pvalue <= ALPHA
        clear_cache()
    assert lo <= rej <= hi, f"rejections {rej}/{reps} outside [{lo}, {hi}]"


def test_strata_test_never_rejects_more_than_alpha_over_all_arrangements():
    """Three strata of three points: all 6^3 = 216 arrangements of y within them are
    enumerated by the test itself (n_resamples above 216), and over the arrangements of
    one data set the test rejects at most floor(0.05 * 216) = 10 of them (exactness)."""
    gen = np.random.default_rng(5404)
    z = np.repeat([0.0, 1.0, 2.0], 3)
    x = z + gen.normal(size=9)
    y = 2 * z + gen.normal(size=9)
    groups = [np.flatnonzero(z == v) for v in (0.0, 1.0, 2.0)]
    count = 0
    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        perm = np.empty(9, dtype=int)
        for g, p in zip(groups, parts):
            perm[g] = p
        res = ci(x, y[perm], z, strata=z, n_resamples=10**4, bandwidth_x=1.0,
                 bandwidth_y=1.0)
        assert res.exact and res.n_resamples == 216
        count += res.pvalue <= ALPHA
    assert count <= math.floor(ALPHA * 216), count


# -- causal-learn's fixed settings fail on the sharp null -----------------------------------------
@pytest.mark.slow
def test_causal_learn_settings_over_reject_on_the_sharp_null():
    """kmtests with causal-learn's KCI settings (empirical widths 0.7 sqrt(d_z) at
    n = 200, ridge epsilon = 1e-3, i.e. lam = 1e-3 / n; equal to causal-learn's statistic
    and p-value, tests/test_reference_conditional.py) rejects most sharp null data sets;
    the tuned default does not (the level test above)."""
    reps, n = 40, 200
    gen = np.random.default_rng(5505)
    rej = 0
    for _ in range(reps):
        x, y, z = _sharp(gen, n)
        rej += ci(x, y, z, bandwidth_x=0.7, bandwidth_y=0.7, bandwidth_z=0.7,
                  lam=1e-3 / n).pvalue <= ALPHA
    assert rej > reps // 2, f"rejections {rej}/{reps}"
