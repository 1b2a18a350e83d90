"""Type-I error of the approximate null methods, inside a binomial 99% band.

As in ``tests/test_calibration.py``: each configuration draws R null data sets from a
fixed seed and counts rejections at alpha = 0.05; a count outside the two-sided
binomial 99% interval of Bin(R, 0.05) is a finding. The seeds are fixed, so the
outcome is deterministic.

* the wild bootstrap (:class:`kmtests.null.WildBootstrap`, Rademacher multipliers) on
  i.i.d. nulls: MMD^2_b and MMD^2_u (equal and unequal sizes), HSIC_b;
* dependent data: two independent AR(1) series. Permutations break the serial
  dependence, so the permutation HSIC test over-rejects; the wild bootstrap with an
  autoregressive multiplier process (``process="ar"``) is the method meant for it;
* the linear-time tests (``engine="block"``, ``"linear"``) at 4-10 points per sample,
  whose default null is now Student's t (0.2 used the normal reference, which
  over-rejects with few blocks or pairs).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import kmtests
from kmtests.null import NormalMethod, PermutationMethod, WildBootstrap

ALPHA = 0.05
B = 199  # draws: (1 + #{T_b >= T}) / 200 <= 0.05 needs at most 9 draws at or above T


def _band(reps):
    return stats.binom.ppf(0.005, reps, ALPHA), stats.binom.ppf(0.995, reps, ALPHA)


# -- the wild bootstrap on i.i.d. nulls -----------------------------------------------------------
def _wild_two_sample_rejections(statistic, n_x, n_y, reps, seed):
    gen = np.random.default_rng(seed)
    rej = 0
    for _ in range(reps):
        x, y = gen.normal(size=(n_x, 2)), gen.normal(size=(n_y, 2))
        res = kmtests.two_sample_test(x, y, statistic=statistic,
                                      method=WildBootstrap(n_resamples=B, rng=gen))
        rej += res.pvalue <= ALPHA
    return rej


@pytest.mark.slow
@pytest.mark.parametrize("n_x, n_y", [(50, 50), (30, 70)])
def test_wild_bootstrap_mmd_b_keeps_its_level(n_x, n_y):
    """Measured: 42/1000 at (50, 50), 59/1000 at (30, 70) (band [33, 69])."""
    reps = 1000
    lo, hi = _band(reps)
    rej = _wild_two_sample_rejections("biased", n_x, n_y, reps, seed=100 + n_x)
    assert lo <= rej <= hi, f"rejections {rej}/{reps} outside [{lo}, {hi}]"


@pytest.mark.slow
@pytest.mark.parametrize("n_x, n_y", [(50, 50), (30, 70)])
def test_wild_bootstrap_mmd_u_keeps_its_level(n_x, n_y):
    reps = 300
    lo, hi = _band(reps)
    rej = _wild_two_sample_rejections("unbiased", n_x, n_y, reps, seed=200 + n_x)
    assert lo <= rej <= hi, f"rejections {rej}/{reps} outside [{lo}, {hi}]"


@pytest.mark.slow
def test_wild_bootstrap_hsic_b_keeps_its_level():
    """Measured: 51/1000 at n = 60 (band [33, 69]); at n = 20 the asymptotic method is
    anti-conservative (92/1000, not asserted)."""
    reps = 1000
    lo, hi = _band(reps)
    gen = np.random.default_rng(300)
    rej = 0
    for _ in range(reps):
        x, y = gen.normal(size=(60, 1)), gen.normal(size=(60, 2))
        res = kmtests.independence_test(x, y, method=WildBootstrap(n_resamples=B, rng=gen))
        rej += res.pvalue <= ALPHA
    assert lo <= rej <= hi, f"rejections {rej}/{reps} outside [{lo}, {hi}]"


# -- dependent data: two independent AR(1) series ------------------------------------------------
def ar1(gen, n, phi):
    """A stationary AR(1) series x_t = phi x_{t-1} + e_t, e_t ~ N(0, 1)."""
    e = gen.normal(size=n)
    x = np.empty(n)
    x[0] = e[0] / np.sqrt(1.0 - phi * phi)
    for t in range(1, n):
        x[t] = phi * x[t - 1] + e[t]
    return x


def ar_length(phi):
    """The memory of the multiplier process for two AR(phi) series.

    The HSIC terms of two independent AR(1) series are dependent through the product
    of the two series' autocorrelations, ``phi^(2k)`` at lag k; their integrated
    autocorrelation time is ``tau = (1 + phi^2) / (1 - phi^2)`` (1.7 for phi = 0.5, 9.5
    for phi = 0.9). The multipliers must stay correlated across that range, and a
    longer memory costs variance (the multipliers are centred over the series, a
    relative loss of about 2 l / n), so l = 3 tau rounded up: 5 for phi = 0.5 and 29
    for phi = 0.9. (Measured over 2000 pairs at phi = 0.5, n = 250: l = 2, 3, 5, 10 give
    7.4%, 7.5%, 6.7%, 6.9%. At phi = 0.9 no length keeps the level at n = 250: l = 5,
    10, 20, 80 give 20%, 17%, 16%, 28%.)
    """
    tau = (1.0 + phi * phi) / (1.0 - phi * phi)
    return float(np.ceil(3.0 * tau - 1e-9))


def _ar_rejections(method, phi, n, reps, seed):
    gen = np.random.default_rng(seed)
    rej = 0
    for _ in range(reps):
        x, y = ar1(gen, n, phi), ar1(gen, n, phi)
        with warnings.catch_warnings():  # the plain permutations warn on series (issue 30)
            warnings.simplefilter("ignore", kmtests.SerialDependenceWarning)
            rej += kmtests.independence_test(x, y, method=method(gen)).pvalue <= ALPHA
    return rej


def _perm(gen):
    return PermutationMethod(n_resamples=B, rng=gen)


def _wild_ar(phi):
    return lambda gen: WildBootstrap(process="ar", length=ar_length(phi), n_resamples=B,
                                     rng=gen)


@pytest.mark.slow
def test_ar_wild_bootstrap_removes_most_of_the_permutation_excess_on_strong_dependence():
    """phi = 0.9, n = 250, 200 series pairs: permutations reject 156/200 (78%) at a
    nominal 5%; WildBootstrap(process="ar", length=29) rejects 29/200 (14.5%): a fifth of
    the permutation rate, but not the level (see the xfail below)."""
    reps = 200
    perm = _ar_rejections(_perm, 0.9, 250, reps, 9)
    wild = _ar_rejections(_wild_ar(0.9), 0.9, 250, reps, 11)
    assert perm >= reps // 2, f"permutation rejections {perm}/{reps}"
    assert 4 * wild <= perm, f"wild (ar) {wild}/{reps} against permutation {perm}/{reps}"


@pytest.mark.slow
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "WildBootstrap(process='ar') over-rejects for strongly dependent series at n = 250: two "
    "independent AR(1) series with phi = 0.9, HSIC_b, 5%: 29/200 with length 29 (this "
    "test), 50/300 and 49/300 with length 10 and 20, 20% with 5, 28% with 80; 11-14% at "
    "n = 500 and 7-10% at n = 1000 (200 pairs each). Not a coding error: a NumPy "
    "transcription of the authors' wildHSIC/bootstrap_null (ln = 20) rejects 50/400 "
    "against kmtests' 54/400 on the same 400 pairs; the asymptotics need "
    "n >> l >> the dependence time (9.5)"))
def test_ar_wild_bootstrap_keeps_its_level_on_strongly_dependent_series():
    reps = 200
    lo, hi = _band(reps)
    rej = _ar_rejections(_wild_ar(0.9), 0.9, 250, reps, 11)
    assert lo <= rej <= hi, f"rejections {rej}/{reps} outside [{lo}, {hi}]"


@pytest.mark.slow
def test_ar_wild_bootstrap_is_near_the_level_on_moderate_dependence():
    """phi = 0.5, n = 250, 400 series pairs: permutations 54/400 (13.5%, above the band
    [10, 32]); WildBootstrap(process="ar", length=5) 34/400 (8.5%). Its level is close to,
    not at, 5%: 6.7-7.5% over 2000 pairs for lengths 2-10 (band [79, 122]: 134-149), 6.6%
    at n = 500, 5.5% at n = 1000; with i.i.d. series (phi = 0) 5.9%. Asserted: at most
    twice the level, and below the permutation rate."""
    phi, n, reps = 0.5, 250, 400
    lo, hi = _band(reps)
    perm = _ar_rejections(_perm, phi, n, reps, 7)
    wild = _ar_rejections(_wild_ar(phi), phi, n, reps, 7)
    assert perm > hi, f"permutation rejections {perm}/{reps} not above the band [{lo}, {hi}]"
    assert lo <= wild <= 2 * ALPHA * reps and wild < perm, (wild, perm)


# -- the linear-time tests at small n -------------------------------------------------------------
def _linear_time_rejections(engine, n, reps, seed, method=None):
    gen = np.random.default_rng(seed)
    rej = 0
    for _ in range(reps):
        x, y = gen.normal(size=(n, 2)), gen.normal(size=(n, 2))
        kw = {} if method is None else {"method": method}
        rej += kmtests.two_sample_test(x, y, engine=engine, **kw).pvalue <= ALPHA
    return rej


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["block", "linear"])
@pytest.mark.parametrize("n", [4, 6, 10])
def test_linear_time_default_null_is_not_anti_conservative_at_small_n(engine, n):
    """The default (Student-t) null at 4-10 points per sample: at most the upper end of
    the band (it may be conservative). Measured per 1000: block 43, 20, 16 and linear
    47, 42, 37 at n = 4, 6, 10 (band [33, 69])."""
    reps = 1000
    _, hi = _band(reps)
    rej = _linear_time_rejections(engine, n, reps, seed=400 + n)
    assert rej <= hi, f"rejections {rej}/{reps} above {hi}"


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["block", "linear"])
def test_normal_reference_over_rejects_at_n_4(engine):
    """The 0.2 null (``reference="normal"``) at n = 4 (2 blocks of 2, or 2 pairs):
    measured 145/1000 (block) and 192/1000 (linear), band [33, 69]."""
    reps = 1000
    _, hi = _band(reps)
    rej = _linear_time_rejections(engine, 4, reps, seed=404,
                                  method=NormalMethod(reference="normal"))
    assert rej > hi, f"rejections {rej}/{reps} not above {hi}"
    res = kmtests.two_sample_test(np.zeros((4, 1)) + [[0], [1], [2], [3]],
                                  np.ones((4, 1)) + [[0], [2], [1], [3]], engine=engine)
    assert res.method == NormalMethod(reference="t")  # the default is the t reference
