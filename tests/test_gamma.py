"""Gamma approximations: moments against the permutation null, p-values close."""

import numpy as np
import pytest

import kmtests
from kmtests._gamma import hsic_gamma, mmd_gamma
from kmtests.kernels import Gaussian


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
