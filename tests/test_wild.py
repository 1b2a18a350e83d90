"""The wild bootstrap (kmtests.null.WildBootstrap) against brute force.

Every draw is recomputed from its multipliers with explicit loops over the points;
the draws of ``MMD^2_u`` have mean zero (exactly, by enumeration of the Rademacher
signs), as the statistic has under the null; a seed gives the same p-value whatever
`batch` and `n_jobs`. Its level is measured in tests/test_calibration.py.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import kmtests
from kmtests.null import WildBootstrap
from kmtests.null.wild import multipliers


def _gauss(a, b, bw):
    d2 = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * bw * bw))


def _mmd_draw(x, y, wx, wy, bw, unbiased):
    """One draw by loops: the statistic of the multiplier-weighted, centred features."""
    nx, ny = len(x), len(y)
    cx, cy = wx - wx.mean(), wy - wy.mean()
    kxx, kyy, kxy = _gauss(x, x, bw), _gauss(y, y, bw), _gauss(x, y, bw)
    cross = sum(cx[i] * cy[j] * kxy[i, j] for i in range(nx) for j in range(ny))
    if not unbiased:
        sxx = sum(cx[i] * cx[j] * kxx[i, j] for i in range(nx) for j in range(nx))
        syy = sum(cy[i] * cy[j] * kyy[i, j] for i in range(ny) for j in range(ny))
        return sxx / nx**2 + syy / ny**2 - 2 * cross / (nx * ny)

    def within(k, w):
        n = len(w)
        kc = k - k.mean(0) - k.mean(1)[:, None] + k.mean()  # <phi_i - mu, phi_j - mu>
        return sum(w[i] * w[j] * kc[i, j] for i in range(n) for j in range(n) if i != j) \
            / (n * (n - 1))

    return within(kxx, wx) + within(kyy, wy) - 2 * cross / (nx * ny)


@pytest.mark.parametrize("statistic", ["unbiased", "biased"])
@pytest.mark.parametrize("process", ["rademacher", "ar"])
def test_two_sample_draws_equal_brute_force(statistic, process):
    gen = np.random.default_rng(0)
    x, y = gen.normal(size=(7, 2)), gen.normal(size=(9, 2)) + 0.3
    bw = 1.3
    B = 20
    res = kmtests.two_sample_test(x, y, bandwidth=bw, statistic=statistic, method=WildBootstrap(
        n_resamples=B, rng=5, process=process, length=3.0))
    draws = np.random.default_rng(5)
    Wx = multipliers(draws, B, 7, process, 3.0, centred=False)
    Wy = multipliers(draws, B, 9, process, 3.0, centred=False)
    ref = [_mmd_draw(x, y, Wx[b], Wy[b], bw, statistic == "unbiased") for b in range(B)]
    np.testing.assert_allclose(res.null_distribution, ref, rtol=1e-10, atol=1e-14)
    assert res.pvalue == (1 + np.sum(np.asarray(ref) >= res.statistic * (1 - 1e-12))) / (1 + B)


def test_independence_draws_equal_brute_force():
    gen = np.random.default_rng(1)
    x = gen.normal(size=(11, 1))
    y = x**2 + gen.normal(size=(11, 1))
    B = 15
    res = kmtests.independence_test(x, y, bandwidth_x=1.0, bandwidth_y=2.0, statistic="biased",
                                    method=WildBootstrap(n_resamples=B, rng=3))
    W = multipliers(np.random.default_rng(3), B, 11, "rademacher", 20.0)
    H = np.eye(11) - 1 / 11
    kc, lc = H @ _gauss(x, x, 1.0) @ H, H @ _gauss(y, y, 2.0) @ H
    ref = [sum(W[b, i] * W[b, j] * kc[i, j] * lc[i, j] for i in range(11) for j in range(11))
           / 121 for b in range(B)]
    np.testing.assert_allclose(res.null_distribution, ref, rtol=1e-10)


def test_unbiased_draws_have_mean_zero_by_enumeration():
    """Over all 2^(n_x + n_y) Rademacher signs the MMD^2_u draw averages to exactly zero
    (dropping the uncentred k(x_i, x_i) instead leaves a bias of order 1/n, which made
    the test reject 21% of null data sets at the 5% level)."""
    gen = np.random.default_rng(2)
    x, y = gen.normal(size=(4, 1)), gen.normal(size=(5, 1))
    total = 0.0
    for signs in itertools.product((-1.0, 1.0), repeat=9):
        s = np.asarray(signs)
        total += _mmd_draw(x, y, s[:4], s[4:], 1.0, True)
    assert abs(total / 2**9) < 1e-14
    # and the package's draws (many of them) agree in mean with zero
    res = kmtests.two_sample_test(x, y, bandwidth=1.0, method=WildBootstrap(n_resamples=4000,
                                                                            rng=0))
    d = res.null_distribution
    assert abs(d.mean()) < 4 * d.std() / np.sqrt(d.size)


def test_same_seed_same_pvalue_whatever_batch_and_jobs():
    gen = np.random.default_rng(4)
    x, y = gen.normal(size=(30, 2)), gen.normal(size=(25, 2))
    ref = kmtests.two_sample_test(x, y, method=WildBootstrap(n_resamples=999, rng=7))
    for batch, n_jobs in [(128, None), (300, 2), (5000, 1)]:
        r = kmtests.two_sample_test(x, y, method=WildBootstrap(n_resamples=999, rng=7,
                                                               batch=batch, n_jobs=n_jobs))
        np.testing.assert_array_equal(r.null_distribution, ref.null_distribution)
        assert r.pvalue == ref.pvalue


def test_refusals():
    gen = np.random.default_rng(5)
    x, y = gen.normal(size=20), gen.normal(size=20)
    with pytest.raises(ValueError, match="method='wild' bootstraps"):
        kmtests.independence_test(x, y, statistic="unbiased", method="wild")
    with pytest.raises(ValueError, match="method='wild' bootstraps"):
        kmtests.two_sample_test(x, y, estimator="skmse", method="wild")
    with pytest.raises(ValueError, match="`process` must be"):
        WildBootstrap(process="normal")
    with pytest.raises(ValueError, match="`length` must be a positive number"):
        WildBootstrap(process="ar", length=0)
