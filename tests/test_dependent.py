"""Dependent and structured data: stratified and block permutations.

* ``strata=``: permutations within strata are the exact permutation test of a paired
  or clustered design (checked by enumeration, and by its power on a paired design
  where the unpaired test has none);
* ``blocks=``: block permutations keep the level on autocorrelated series where the
  plain permutation test does not (measured here; the wild bootstrap's evidence is in
  tests/test_level_new.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import kmtests


def _ar1(gen, n, phi):
    e = gen.normal(size=n)
    out = np.empty(n)
    out[0] = e[0] / np.sqrt(1 - phi * phi)
    for t in range(1, n):
        out[t] = phi * out[t - 1] + e[t]
    return out


def test_paired_design_by_strata_is_exact_and_has_the_power_the_unpaired_test_lacks():
    gen = np.random.default_rng(0)
    n = 10
    subject = 3.0 * gen.normal(size=n)
    before = subject + 0.3 * gen.normal(size=n)
    after = subject + 0.5 + 0.3 * gen.normal(size=n)
    pairs = (np.arange(n), np.arange(n))
    paired = kmtests.two_sample_test(before, after, kernel="linear", strata=pairs,
                                     n_resamples=10**5)
    assert paired.exact and paired.n_resamples == 2 ** n and paired.pvalue <= 0.01
    unpaired = kmtests.two_sample_test(before, after, kernel="linear", n_resamples=999,
                                       rng=1)
    assert unpaired.pvalue > 0.2
    # enumeration: over all 2^8 swaps within the pairs of a data set, the exact
    # stratified test rejects in at most floor(0.05 * 256) = 12 of them
    m = 8
    z = np.vstack([before[:m, None], after[:m, None]])
    pm = (np.arange(m), np.arange(m))
    rows = list(kmtests.problems.Within(np.tile(np.arange(m), 2), n_x=m).enumerate())
    p = [kmtests.two_sample_test(z[r[:m]], z[r[m:]], kernel="linear", strata=pm,
                                 n_resamples=10**5).pvalue for r in rows]
    assert len(rows) == 256 and sum(v <= 0.05 for v in p) <= 12


def test_strata_for_independence_test_within_strata():
    """y depends on x only through a discrete z: within the strata of z, x and y are
    independent. Over 40 data sets the plain test always rejects, the stratified one at
    about its level."""
    gen = np.random.default_rng(1)
    plain = within = 0
    for i in range(40):
        z = gen.integers(0, 3, size=90)
        x = z + 0.3 * gen.normal(size=90)
        y = z + 0.3 * gen.normal(size=90)
        plain += kmtests.independence_test(x, y, n_resamples=199, rng=i).pvalue <= 0.05
        within += kmtests.independence_test(x, y, strata=z, n_resamples=199,
                                            rng=i).pvalue <= 0.05
    assert plain == 40 and within <= 6  # binomial(40, 0.05): P(X > 6) < 0.01


def test_restricted_schemes_refuse_the_approximate_nulls_and_mismatched_blocks():
    gen = np.random.default_rng(2)
    x, y = gen.normal(size=40), gen.normal(size=40)
    with pytest.raises(ValueError, match="restrict the permutations"):
        kmtests.independence_test(x, y, blocks=5, method="gamma")
    with pytest.raises(ValueError, match="restrict the permutations"):
        kmtests.independence_test(x, y, strata=np.arange(40) % 4, method="wild")
    # blocks declare a time series: the wild bootstrap's own AR multipliers replace them,
    # and independent multipliers are refused there
    with pytest.raises(ValueError, match="declares a time series"):
        kmtests.independence_test(x, y, blocks=5,
                                  method=kmtests.null.WildBootstrap(process="rademacher"))
    with pytest.raises(ValueError, match="`blocks` must divide both sample sizes"):
        kmtests.two_sample_test(x, y[:35], blocks=10)
    with pytest.raises(ValueError, match="give `strata` or `blocks`, not both"):
        kmtests.independence_test(x, y, blocks=5, strata=np.zeros(40))
    with pytest.raises(ValueError, match="one label per pair"):
        kmtests.independence_test(x, y, strata=np.zeros(39))
    with pytest.raises(ValueError, match="cannot be held out"):
        kmtests.two_sample_test(x, y, statistic="regularized", covariance="split", lam=0.1,
                                blocks=5)


@pytest.mark.slow
def test_block_permutations_keep_the_level_on_autocorrelated_series():
    """Two independent AR(1) series (phi = 0.8, n = 200): the plain permutation HSIC test
    rejects far above 5%, block permutations (blocks of 20, about 10 times the series'
    e-folding time -1/log(0.8) = 4.5) stay below the upper end of the 99% binomial band
    (blocks may be conservative)."""
    reps, alpha = 200, 0.05
    gen = np.random.default_rng(3)
    plain = blocks = 0
    for i in range(reps):
        a, b = _ar1(gen, 200, 0.8), _ar1(gen, 200, 0.8)
        with pytest.warns(kmtests.SerialDependenceWarning, match="blocks='auto'"):
            plain += kmtests.independence_test(a, b, n_resamples=99, rng=i).pvalue <= alpha
        blocks += kmtests.independence_test(a, b, blocks=20, n_resamples=99,
                                            rng=i).pvalue <= alpha
    hi = stats.binom.ppf(0.995, reps, alpha)
    print(f"AR(1) phi = 0.8, n = 200: plain {plain}/{reps}, blocks of 20 {blocks}/{reps}")
    assert plain > hi
    assert blocks <= hi


def test_reports_name_the_restricted_permutations():
    gen = np.random.default_rng(6)
    x, y = gen.normal(size=40), gen.normal(size=40)
    res = kmtests.independence_test(x, y, blocks=10, n_resamples=999, rng=1)
    assert "(all 24 arrangements of 4 blocks of 10 consecutive rows)" in " ".join(
        str(res).split())
    assert res.details["permutations"] == "of 4 blocks of 10 consecutive rows"
    strata = np.repeat(np.arange(8), 5)
    res = kmtests.independence_test(x, y, strata=strata, n_resamples=999, rng=1)
    assert "999 random permutations within 8 strata)" in " ".join(str(res).split())
    assert "permutations: within 8 strata" in res.summary().as_text()
    assert res.to_dict()["details"]["permutations"] == "within 8 strata"
    plain = kmtests.independence_test(x, y, n_resamples=99, rng=1)
    assert "permutations" not in plain.details
    assert "permutations:" not in plain.summary().as_text()
