"""Gamma approximations: moments against the permutation null, p-values close."""

import numpy as np
import pytest

import kmtests
from kmtests.null.gamma import hsic_gamma, mmd_gamma
from kmtests.kernels import Gaussian

#: the published gamma tests (asymptotic moments, checked against the exact ones)
ASYMPTOTIC = kmtests.GammaMethod(moments="asymptotic")


def test_mmd_gamma_moments_match_permutation_null(rng):
    x, y = rng.normal(size=(60, 2)), rng.normal(size=(60, 2))
    res = kmtests.two_sample_test(x, y, statistic="biased", n_resamples=4000, rng=0)
    K = Gaussian(bandwidth=res.bandwidths["kernel"]).gram(np.vstack([x, y]))
    _, det = mmd_gamma(K, 60, res.statistic)
    null = res.null_distribution
    assert det["null_mean"] == pytest.approx(null.mean(), rel=0.05)
    assert det["null_var"] == pytest.approx(null.var(), rel=0.25)


def test_hsic_gamma_moments_match_permutation_null(rng):
    x, y = rng.normal(size=(60, 1)), rng.normal(size=(60, 1))
    res = kmtests.independence_test(x, y, n_resamples=4000, rng=0)
    kx = Gaussian(bandwidth=res.bandwidths["x"]); ky = Gaussian(bandwidth=res.bandwidths["y"])
    _, det = hsic_gamma(kx.gram(x), ky.gram(y), res.statistic)
    null = res.null_distribution
    assert det["null_mean"] == pytest.approx(null.mean(), rel=0.05)
    assert det["null_var"] == pytest.approx(null.var(), rel=0.25)


def test_gamma_pvalues_close_to_permutation(rng):
    x = rng.normal(size=(150, 1))
    y = 0.25 * x + rng.normal(size=(150, 1))
    perm = kmtests.independence_test(x, y, n_resamples=2000, rng=1)
    gam = kmtests.independence_test(x, y, method="gamma")
    assert gam.pvalue == pytest.approx(perm.pvalue, abs=0.03)
    a, b = rng.normal(size=(100, 2)), rng.normal(0.15, size=(120, 2))
    perm = kmtests.two_sample_test(a, b, statistic="biased", n_resamples=2000, rng=1)
    gam = kmtests.two_sample_test(a, b, statistic="biased", method="gamma")
    assert gam.pvalue == pytest.approx(perm.pvalue, abs=0.03)


def test_gamma_degenerate_raises():
    const = np.ones((8, 1))
    with pytest.raises(ValueError, match="gamma approximation is undefined"):
        kmtests.independence_test(const, np.arange(8.0), bandwidth_x=1.0, method="gamma")


def test_exact_permutation_moments_by_enumeration(rng):
    """The closed-form permutation mean and variance of sum_ij A_ij B_pi(i)pi(j)."""
    import itertools

    from kmtests.null.gamma import permutation_moments
    from kmtests._gram import CentredGram

    for n in (5, 7):
        A = CentredGram.from_gram(Gaussian(bandwidth=1.0).gram(rng.standard_cauchy((n, 2)))).Kc
        B = CentredGram.from_gram(Gaussian(bandwidth=0.7).gram(rng.normal(size=(n, 1)))).Kc
        vals = np.array([np.sum(A * B[np.ix_(p, p)]) for p in itertools.permutations(range(n))])
        m, v = permutation_moments(A, B)
        assert m == pytest.approx(vals.mean(), rel=1e-12)
        assert v == pytest.approx(vals.var(), rel=1e-10)


def test_gamma_refused_where_useless(rng):
    """d = 50, n = 20: the gamma null mean is ~3 sd above the exact one (it never rejected,
    0 of 1000 null data sets, in benchmarks/gamma_level.py)."""
    x, y = rng.normal(size=(20, 50)), rng.normal(size=(20, 50))
    with pytest.raises(ValueError, match=r"gamma approximation is unusable.*null mean is off "
                       r"by \+\d\.\d\d standard deviations.*almost never reject.*"
                       "method='permutation'"):
        kmtests.independence_test(x, y, method=ASYMPTOTIC)
    # heavy tails: a variance far too small, anti-conservative (13.7% at 5% measured)
    u, v = rng.standard_cauchy(size=(20, 5)), rng.standard_cauchy(size=(20, 5))
    with pytest.raises(ValueError, match="far more often than its level"):
        kmtests.independence_test(u, v, method=ASYMPTOTIC)
    # MMD, d = 500, n = 10: variance 3.3 times too large (0 of 1000 rejections)
    a, b = rng.normal(size=(10, 500)), rng.normal(size=(10, 500))
    with pytest.raises(ValueError, match="variance by a factor [3-9]"):
        kmtests.two_sample_test(a, b, statistic="biased", method=ASYMPTOTIC)


@pytest.mark.parametrize("estimator", ["mkme", "mmkme"])
def test_gamma_refuses_the_marginalized_estimators(rng, estimator):
    """Issue 32: the gamma approximation is for the KME statistics (docs/user_guide/gamma);
    the marginalized estimators were accepted by the two-sample and k-sample tests."""
    x, y, w = rng.normal(size=(20, 2)), rng.normal(size=(20, 2)), rng.normal(size=(20, 2))
    with pytest.raises(ValueError, match=rf"computes kMMD\^2_b\[{estimator}\]: use "
                       "estimator='kme', or method='permutation'"):
        kmtests.k_sample_test(x, y, w, method="gamma", estimator=estimator)
    with pytest.raises(ValueError, match=rf"MMD\^2_b\[{estimator}\]: use estimator='kme'"):
        kmtests.two_sample_test(x, y, method="gamma", estimator=estimator)
    with pytest.raises(ValueError, match=rf"HSIC_b\[{estimator}\]: use estimator='kme'"):
        kmtests.independence_test(x, y, method="gamma", estimator=estimator)


def test_gamma_warns_where_inaccurate(rng):
    """n = 10, d = 1: variance ratio ~0.5, 8.2% at a nominal 5% (measured)."""
    x, y = rng.normal(size=10), rng.normal(size=10)
    with pytest.warns(kmtests.ApproximationWarning, match=r"anti-conservative.*variance by a "
                      r"factor 0\.\d\d"):
        res = kmtests.independence_test(x, y, method=ASYMPTOTIC)
    assert res.details["permutation_var"] > res.details["null_var"]


def test_default_gamma_is_fitted_to_the_exact_permutation_moments(rng):
    """Where the asymptotic moments are refused, the permutation moments give a p-value,
    from a gamma with exactly the permutation mean and variance."""
    x, y = rng.normal(size=(20, 50)), rng.normal(size=(20, 50))
    res = kmtests.independence_test(x, y, method="gamma")
    d = res.details
    assert d["null_mean"] == d["permutation_mean"] and d["null_var"] == d["permutation_var"]
    assert d["gamma_shape"] == pytest.approx(d["null_mean"] ** 2 / d["null_var"], rel=1e-12)
    assert d["asymptotic_mean"] > d["permutation_mean"] + 3 * np.sqrt(d["permutation_var"])
    assert 0 < res.pvalue < 1 and res.method.moments == "permutation"
    assert "permutation moments" in " ".join(str(res).split())
    assert "moments: permutation" in str(res.summary())
    with pytest.raises(ValueError, match="`moments`"):
        kmtests.GammaMethod(moments="exact")


@pytest.mark.parametrize("test", ["mmd", "hsic"])
def test_gamma_with_permutation_moments_is_the_moment_matched_permutation_law(rng, test):
    """The p-value is the gamma survival function at the permutation moments (checked
    against an enumeration of the permutation distribution's mean and variance)."""
    import itertools

    from scipy import stats

    n = 6
    x, y = rng.normal(size=(n, 2)), rng.standard_t(3, size=(n, 1))
    if test == "hsic":
        res = kmtests.independence_test(x, y, method="gamma", bandwidth_x=1.0, bandwidth_y=1.0)
        Kc = Gaussian(1.0).centred_gram(x).Kc
        Lc = Gaussian(1.0).centred_gram(y).Kc
        vals = [np.sum(Kc * Lc[np.ix_(p, p)]) / n**2 for p in itertools.permutations(range(n))]
    else:
        y = rng.normal(size=(n, 2))
        res = kmtests.two_sample_test(x, y, method="gamma", statistic="biased", bandwidth=1.0)
        Kc = Gaussian(1.0).centred_gram(np.vstack([x, y])).Kc
        vals = []
        for idx in itertools.combinations(range(2 * n), n):
            a = np.zeros(2 * n)
            a[list(idx)] = 1.0
            a -= a.mean()
            vals.append((2.0 / n) ** 2 * a @ Kc @ a)
    m, v = np.mean(vals), np.var(vals)
    assert res.details["null_mean"] == pytest.approx(m, rel=1e-10)
    assert res.details["null_var"] == pytest.approx(v, rel=1e-8)
    assert res.pvalue == pytest.approx(stats.gamma.sf(res.statistic, m * m / v, scale=v / m),
                                       rel=1e-8)
