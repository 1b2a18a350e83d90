"""Trustworthy p-values on the paths added after 0.1 (issue 16): each test failed on 0.2.

The engine contract suite (offsets, user kernels: tests/test_engine_contract.py), the
exactness checks by enumeration (tests/test_exactness.py) and the level studies
(tests/test_calibration.py) hold the rest.
"""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

import kmtests


def _null(seed, n=30, d=2):
    gen = np.random.default_rng(seed)
    return gen.normal(size=(n, d)), gen.normal(size=(n + 3, d))


# -- 1. FUSE with a zero normaliser ---------------------------------------------------------------
def test_fuse_with_a_cutoff_above_the_spectrum_is_finite_and_names_the_dropped_members():
    """0.2: `FUSE = nan, p-value < 2.2e-16` on every data set (50 of 50 null data sets
    rejected): the cut-off members above the spectrum have normaliser 0."""
    rejections = 0
    for seed in range(12):
        x, y = _null(seed)
        res = kmtests.aggregated_two_sample_test(
            x, y, estimators=(), filters="cutoff", lams=[1e-4, 1e-2, 10.0, 100.0],
            bandwidths=[1.0], combination="fuse", n_resamples=99, rng=seed)
        assert np.isfinite(res.statistic)
        assert np.all(np.isfinite(res.null_distribution))
        dropped = [m for m in res.members if m["normalizer"] == 0.0]
        assert dropped and all(m["weight"] == 0.0 for m in dropped)
        assert any("dropped" in n and dropped[0]["member"] in n for n in res.notes)
        rejections += res.pvalue <= 0.05
    assert rejections <= 3


def test_fuse_with_every_member_degenerate_is_an_error():
    x, y = _null(1)
    with pytest.raises(ValueError, match="every member's normaliser is 0"):
        kmtests.aggregated_two_sample_test(x, y, estimators=(), filters="cutoff",
                                           lams=[50.0, 100.0], bandwidths=[1.0],
                                           combination="fuse", n_resamples=19, rng=0)


# -- 2. HSIC-FUSE's normaliser is a function of the marginals --------------------------------------
def test_hsic_fuse_normalisers_do_not_depend_on_the_pairing():
    """0.2 normalised by ||Kc o Lc||_F, which changes when y is paired differently with x:
    the observed arrangement was not exchangeable with the permuted ones."""
    gen = np.random.default_rng(3)
    x, y = gen.normal(size=(25, 1)), gen.normal(size=(25, 1))
    kw = dict(bandwidths_x=2, bandwidths_y=2, filters="tikhonov", lams=[1e-2],
              combination="fuse", n_resamples=49, rng=1)
    a = kmtests.aggregated_independence_test(x, y, **kw)
    b = kmtests.aggregated_independence_test(x, y[gen.permutation(25)], **kw)
    np.testing.assert_allclose([m["normalizer"] for m in a.members],
                               [m["normalizer"] for m in b.members], rtol=1e-12)
    from kmtests.engines.hsic import PairedGrams
    from kmtests.kernels import Gaussian

    m = a.members[0]
    Kc = Gaussian(m["bandwidth_x"]).centred_gram(x).Kc
    Lc = Gaussian(m["bandwidth_y"]).centred_gram(y).Kc
    want = PairedGrams(Kc, Lc).norm() / (25 * 24)
    assert m["normalizer"] == pytest.approx(want, rel=1e-12)


# -- 11. pandas inputs matched by name ------------------------------------------------------------
def test_dataframes_are_compared_column_by_name():
    """0.2 compared column 1 with column 1 (MMD^2 1.71 instead of 0.61, no warning)."""
    gen = np.random.default_rng(4)
    a = pd.DataFrame({"u": gen.normal(size=40), "v": 10 * gen.normal(size=40)})
    b = pd.DataFrame({"u": gen.normal(size=35), "v": 10 * gen.normal(size=35)})
    kw = dict(n_resamples=99, rng=2, bandwidth=3.0)
    same = kmtests.two_sample_test(a, b, **kw)
    swapped = kmtests.two_sample_test(a, b[["v", "u"]], **kw)
    assert swapped.statistic == same.statistic and swapped.pvalue == same.pvalue
    with pytest.raises(ValueError, match=r"different columns \(only in x: \['v'\]; only in y: "
                                         r"\['w'\]\)"):
        kmtests.two_sample_test(a, b.rename(columns={"v": "w"}), **kw)


def test_paired_pandas_variables_are_paired_by_index():
    """0.2: `independence_test(x, y_shuffled)` with equal index labels in another order gave
    p = 0.73 instead of 0.005."""
    gen = np.random.default_rng(5)
    t = pd.Series(gen.normal(size=60), name="temp")
    p = pd.Series(0.8 * t.to_numpy() + 0.3 * gen.normal(size=60), name="pres")
    kw = dict(n_resamples=199, rng=3)
    aligned = kmtests.independence_test(t, p, **kw)
    shuffled = kmtests.independence_test(t, p.sample(frac=1.0, random_state=0), **kw)
    assert aligned.pvalue <= 0.01
    assert shuffled.statistic == pytest.approx(aligned.statistic, rel=1e-12)
    assert shuffled.pvalue == aligned.pvalue
    assert shuffled.data_name == "temp and pres"
    with pytest.raises(ValueError, match="different index labels"):
        kmtests.independence_test(t, p.set_axis(range(100, 160)), **kw)
    # arrays (no labels) are paired by position
    np.testing.assert_equal(
        kmtests.independence_test(t.to_numpy(), p.to_numpy(), **kw).pvalue, aligned.pvalue)


# -- 12. covariance="split" with lam="auto" on tied data ----------------------------------------
def test_split_operator_with_tied_held_out_points_never_aborts():
    """0.2 failed at random (12 of 50 seeds on binary data) with a message about overflow:
    a held-out operator of trace 0 made the lambda grid 0."""
    notes = 0
    for seed in range(50):
        gen = np.random.default_rng(seed)
        x = (gen.random((30, 1)) < 0.1).astype(float)
        y = (gen.random((30, 1)) < 0.15).astype(float)
        res = kmtests.two_sample_test(x, y, statistic="regularized", covariance="split",
                                      lam="auto", n_resamples=19, rng=seed)
        assert 0 < res.pvalue <= 1 and np.isfinite(res.statistic)
        notes += any("held-out covariance operator is 0" in n for n in res.notes)
    assert notes > 0  # the fallback happened, and the report says so


# -- 13. the aggregated tests have the memory guard ------------------------------------------------
def test_aggregated_tests_check_memory_before_building_anything(monkeypatch):
    from kmtests import _guards
    from kmtests.kernels import Kernel

    def boom(*a, **k):
        raise AssertionError("a Gram matrix was built before the memory check")

    monkeypatch.setattr(_guards, "available_memory", lambda: 50_000)

    monkeypatch.setattr(_guards, "UNCHECKED_BYTES", 0)
    monkeypatch.setattr(Kernel, "centred_gram", boom)
    x, y = _null(6, 60)
    with pytest.raises(MemoryError, match="members' matrices"):
        kmtests.aggregated_two_sample_test(x, y, bandwidths=5, n_resamples=19, rng=0)
    with pytest.raises(MemoryError):
        kmtests.aggregated_independence_test(x[:40], y[:40], n_resamples=19, rng=0)


# -- low: options that applied nowhere, raw Python errors -------------------------------------------
def test_options_of_another_statistic_or_engine_are_errors():
    """0.2 ran the plain MMD for lam=-1.0, filter='nope', covariance='split' without a word
    (an mmkme test with filter='bogus' ran 18.5 s and returned a result)."""
    x, y = _null(7, 15)
    for kw, what in ((dict(lam=-1.0), "`lam` configures statistic='regularized'"),
                     (dict(filter="nope"), "`filter` configures statistic='regularized'"),
                     (dict(covariance="split"), "`covariance` configures"),
                     (dict(estimator="mmkme", filter="bogus"), "`filter` configures"),
                     (dict(block_size=4), "`block_size` configures statistic='block'"),
                     (dict(statistic="regularized", n_features=10), "`n_features` applies")):
        with pytest.raises(ValueError, match=what):
            kmtests.two_sample_test(x, y, n_resamples=9, **kw)
    with pytest.raises(ValueError, match="`lam` configures statistic='regularized'"):
        kmtests.independence_test(x, y[:15], lam=-3, n_resamples=9)


def test_aggregated_collections_refuse_repeated_and_orphan_options():
    x, y = _null(8, 20)
    with pytest.raises(ValueError, match="`bandwidths` must be .* distinct"):
        kmtests.aggregated_two_sample_test(x, y, bandwidths=[1.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="`lam` must not repeat a value"):
        kmtests.aggregated_two_sample_test(x, y, filters="tikhonov", lams=[0.1, 0.1])
    with pytest.raises(ValueError, match="`lams` configures the regularised members"):
        kmtests.aggregated_two_sample_test(x, y, lams=[0.1])
    with pytest.raises(ValueError, match="`estimators` must not repeat"):
        kmtests.aggregated_two_sample_test(x, y, estimators=["kme", "kme"])
    with pytest.raises(TypeError, match="`alpha` must be a number"):
        kmtests.aggregated_two_sample_test(x, y, alpha="0.05")
    with pytest.raises(ValueError, match="`bandwidths` must be 'auto', a number"):
        kmtests.aggregated_two_sample_test(x, y, bandwidths="median")


def test_aggregated_hsic_with_a_linear_kernel_runs_on_its_defaults():
    """0.2 failed with `bandwidths_x` not applying to the linear kernel, a default the
    user never gave."""
    gen = np.random.default_rng(9)
    x = gen.normal(size=(30, 2))
    y = x[:, :1] + gen.normal(size=(30, 1))
    res = kmtests.aggregated_independence_test(x, y, kernel_x="linear", n_resamples=199, rng=1)
    assert len(res.members) == 5 and res.pvalue <= 0.05


def test_a_constant_null_distribution_warns_also_when_not_exactly_zero():
    """0.2 warned only when the statistic was exactly 0; a statistic that is the same for
    every arrangement but ~1e-19 gave p = 1 without a word. A Gram matrix 1e-19 I makes
    MMD^2_b the same for every split (the points are equally far apart)."""
    K = 1e-19 * np.eye(13)
    with pytest.warns(kmtests.DegenerateStatisticWarning,
                      match="the same for the data and for every permutation"):
        res = kmtests.two_sample_test(K, 5, kernel="precomputed", statistic="biased",
                                      n_resamples=99, rng=0)
    assert res.pvalue == 1.0 and 0 < res.statistic < 1e-18
