"""Estimators inside the tests: tuning modes, marginalized kernels, exactness."""

import itertools
import math

import numpy as np
import pytest

import kmtests
from kmtests.null import permutation as _resampling
from kmtests._gram import CentredGram
from kmtests.engines.hsic import PairedGrams, hsic_statistics
from kmtests.engines.mmd import PooledGram, mmd_statistics
from kmtests.statistics.tuning import expected_cose_gram
from kmtests.estimators import BKMSE, FKMSE, KME, MKME, MMKME, SKMSE, Landweber, make
from kmtests.estimators.marginalized import inflated_kernel
from kmtests.kernels import Gaussian


def _v_form(Kxx, Kyy, Kxy, est):
    bx, _ = est.weights(Kxx)
    by, _ = est.weights(Kyy)
    return bx @ Kxx @ bx + by @ Kyy @ by - 2 * bx @ Kxy @ by


@pytest.mark.parametrize("name", ["skmse", "bkmse", "fkmse", "nu_method"])
def test_permutation_tuning_retunes_every_split(rng, name):
    """Each permuted statistic equals the estimator re-fitted on that split."""
    est = make(name)
    z = rng.normal(size=(14, 2))
    K = Gaussian(bandwidth=1.0).gram(z)
    pg = PooledGram.from_gram(K)
    perms = _resampling.random_permutations(rng, 14, 6)
    got = mmd_statistics(pg, perms, 6, est, unbiased=False)
    for g, p in zip(got, perms):
        ix, iy = np.sort(p[:6]), np.sort(p[6:])
        want = _v_form(K[np.ix_(ix, ix)], K[np.ix_(iy, iy)], K[np.ix_(ix, iy)], est)
        # the LOOCV optimum of the spectral filters is flat: the sub-Gram rebuilt from
        # the centred form differs at rounding level, which moves lambda at ~1e-8
        assert g == pytest.approx(want, rel=1e-6, abs=1e-14)


@pytest.mark.parametrize("name", ["skmse", "fkmse"])
def test_hsic_cose_statistic_per_permutation(rng, name):
    est = make(name)
    x, y = rng.normal(size=(9, 1)), rng.normal(size=(9, 2))
    K, L = Gaussian(bandwidth=1.0).gram(x), Gaussian(bandwidth=1.5).gram(y)
    pg = PairedGrams.from_grams(K, L)
    perms = _resampling.random_permutations(rng, 9, 5)
    got = hsic_statistics(pg, perms, est, unbiased=False)
    H = np.eye(9) - 1 / 9
    Kc, Lc = H @ K @ H, H @ L @ H
    for g, p in zip(got, perms):
        G = Kc * Lc[np.ix_(p, p)]  # H P L P' H = P (HLH) P'
        # (the LOOCV optimum is flat: rounding-level changes of G move it at ~1e-8)
        beta, _ = est.weights(G)
        assert g == pytest.approx(beta @ G @ beta, rel=1e-6, abs=1e-14)


@pytest.mark.parametrize("cls", [SKMSE, BKMSE])
def test_pooled_uniform_shrinkage_is_the_kme_test(rng, cls):
    """A fixed shrinkage multiplies every statistic by (1 - alpha)^2: same p-value as KME."""
    x, y = rng.normal(size=(20, 2)), rng.normal(0.3, size=(25, 2))
    ref = kmtests.two_sample_test(x, y, n_resamples=300, rng=4)
    res = kmtests.two_sample_test(x, y, estimator=cls(), tuning="pooled", n_resamples=300, rng=4)
    alpha = res.params["pooled"]["shrinkage"]
    assert res.pvalue == ref.pvalue and res.tuning == "pooled"
    assert res.statistic == pytest.approx((1 - alpha) ** 2 * ref.statistic, rel=1e-12)
    hx = kmtests.independence_test(x[:, :1], x[:, 1:] + y[:20, :1], n_resamples=300, rng=4)
    hs = kmtests.independence_test(x[:, :1], x[:, 1:] + y[:20, :1], estimator=cls(),
                                   tuning="pooled", n_resamples=300, rng=4)
    assert hs.pvalue == hx.pvalue


def test_with_fixed_holds_tuned_parameters(rng):
    K = Gaussian(bandwidth=1.0).gram(rng.normal(size=(12, 2)))
    _, p = FKMSE().weights(K)
    frozen = FKMSE().with_fixed(p)
    assert frozen.lam == p["lam"]
    np.testing.assert_allclose(frozen.weights(K)[0], FKMSE().weights(K)[0], rtol=1e-10)
    assert BKMSE().with_fixed({"shrinkage": 0.3}) == SKMSE(shrinkage=0.3)
    lw = Landweber().with_fixed(Landweber().weights(K)[1])
    assert lw.step is None and lw.n_iter is not None  # the step is a normalisation
    assert KME().with_fixed({}) == KME()
    with pytest.raises(ValueError, match="rank chosen on the pooled sample does not transfer"):
        kmtests.two_sample_test(rng.normal(size=(8, 1)), rng.normal(size=(9, 1)),
                                estimator="tsvd", tuning="pooled")


def test_expected_cose_gram_is_the_permutation_average(rng):
    x, y = rng.normal(size=(5, 1)), rng.normal(size=(5, 1))
    Kc = CentredGram.from_gram(Gaussian(bandwidth=1.0).gram(x)).Kc
    Lc = CentredGram.from_gram(Gaussian(bandwidth=1.0).gram(y)).Kc
    avg = np.mean([Kc * Lc[np.ix_(p, p)] for p in itertools.permutations(range(5))], axis=0)
    np.testing.assert_allclose(expected_cose_gram(Kc, Lc), avg, rtol=1e-12, atol=1e-15)
    assert math.factorial(5) == 120


@pytest.mark.parametrize("cls", [MKME, MMKME])
def test_marginalized_mmd_is_kme_with_inflated_bandwidth(rng, cls):
    x, y = rng.normal(size=(15, 2)), rng.normal(0.5, size=(12, 2))
    res = kmtests.two_sample_test(x, y, estimator=cls(), n_resamples=200, rng=3)
    z = np.vstack([x, y])
    kern = Gaussian().fitted_to(z)
    smoothing, _ = cls().tune(z, kern)
    c, infl = inflated_kernel(kern, 2 * smoothing, 2)
    ref = kmtests.two_sample_test(x, y, kernel=infl, n_resamples=200, rng=3)
    assert res.statistic == pytest.approx(c * ref.statistic, rel=1e-12)
    assert res.pvalue == ref.pvalue
    assert res.statistic_name == f"MMD^2_u[{cls.name}]"
    assert "marginalized" in res.kernel_notes["kernel"]
    # both tunings are the same test: the corruption is tuned on the pooled sample
    assert kmtests.two_sample_test(x, y, estimator=cls(), tuning="pooled", n_resamples=200,
                                   rng=3).pvalue == res.pvalue


def test_marginalized_hsic_per_variable(rng):
    x, y = rng.normal(size=(20, 1)), rng.normal(size=(20, 2))
    res = kmtests.independence_test(x, y, estimator="mkme", n_resamples=200, rng=5)
    kx, ky = Gaussian().fitted_to(x), Gaussian().fitted_to(y)
    sx, _ = MKME().tune(x, kx)
    sy, _ = MKME().tune(y, ky)
    cx, ix = inflated_kernel(kx, 2 * sx, 1)
    cy, iy = inflated_kernel(ky, 2 * sy, 2)
    ref = kmtests.independence_test(x, y, kernel_x=ix, kernel_y=iy, n_resamples=200, rng=5)
    assert res.statistic == pytest.approx(cx * cy * ref.statistic, rel=1e-11)
    assert res.pvalue == ref.pvalue
    assert res.params["x"]["sigma2"] == pytest.approx(float(sx[0]))


def test_tuning_validation(rng):
    x, y = rng.normal(size=(10, 2)), rng.normal(size=(10, 2))
    with pytest.raises(ValueError, match="`tuning` must be one of 'permutation', 'pooled'"):
        kmtests.two_sample_test(x, y, tuning="observed")
    K = Gaussian(bandwidth=1.0).gram(np.vstack([x, y]))
    with pytest.raises(ValueError, match="needs the data and a Gaussian kernel"):
        kmtests.two_sample_test(K, 10, kernel="precomputed", estimator="mkme")
    with pytest.raises(ValueError, match="kernel_x='precomputed'"):
        kmtests.independence_test(K[:10, :10], y, kernel_x="precomputed", estimator="mmkme")
    # the U-form exists for every estimator (dropped diagonal terms)
    res = kmtests.two_sample_test(x, y, estimator="fkmse", statistic="unbiased",
                                  n_resamples=19, rng=0)
    assert res.statistic_name == "MMD^2_u[fkmse]"
    with pytest.raises(ValueError, match="'gaussian' or 'ard'"):
        kmtests.two_sample_test(x, y, estimator="mkme", kernel="laplacian")
    with pytest.raises(ValueError, match="target-shrinkage .skmse. cannot be used in the two-sample"):
        kmtests.two_sample_test(x, y, estimator=SKMSE(target_points=[[0.0, 0.0]]))


def test_reports_name_estimator_and_tuning(rng):
    x, y = rng.normal(size=(12, 1)), rng.normal(size=(12, 1))
    res = kmtests.two_sample_test(x, y, estimator="skmse", n_resamples=99, rng=1)
    text = str(res.summary())
    assert "MMD^2_u[skmse]" in text and "tuning: permutation" in text
    assert "shrinkage" in res.params["x"] and "S-KMSE" in str(res)
    res = kmtests.independence_test(x, y, estimator="fkmse", tuning="pooled", n_resamples=99,
                                    rng=1)
    assert res.tuning == "pooled" and "lam" in res.params["pooled"]


def test_compare_estimators_uses_common_permutations(rng):
    x, y = rng.normal(size=(15, 2)), rng.normal(0.4, size=(15, 2))
    t = kmtests.compare_estimators(x, y, estimators=["kme", "skmse", "mkme"], n_resamples=199,
                                   rng=8)
    assert list(t["estimator"]) == ["kme", "skmse", "mkme"]
    for _, row in t.iterrows():
        res = kmtests.two_sample_test(x, y, estimator=row["estimator"], n_resamples=199, rng=8)
        assert row["pvalue"] == res.pvalue and row["statistic"] == res.statistic
    assert t.loc[1, "shrinkage_x"] >= 0 and t["shrinkage_x"].dtype == np.float64
    h = kmtests.compare_estimators(x[:, :1], x[:, 1:], test="independence",
                                   estimators=["kme", "fkmse"], n_resamples=99, rng=2)
    assert set(h["statistic_name"]) == {"HSIC_b", "HSIC_b[fkmse]"}
    with pytest.raises(ValueError, match="`test` must be one of"):
        kmtests.compare_estimators(x, y, test="anova")
