"""The AR-sieve prewhitening of drift windows measured in ``benchmarks/prewhiten.py``
(issue 30, third session; not in the package, see benchmarks/README.md,
"Prewhitening"): the numbers of its table rest on these helpers.

* the pooled autocovariances and the residuals equal brute-force loops;
* the AR coefficients equal statsmodels' Yule-Walker (one window) and the order is the
  smallest AIC of a brute-force search;
* a shift between the windows is not fitted as persistence; exact fits, short windows
  and constant windows; the residuals' block length.
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from kmtests._serial import auto_length

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from prewhiten import (  # noqa: E402
    fit_ar,
    max_order,
    prewhiten_windows,
    residual_length,
    window_autocovariances,
)


def _ar(gen, n, coefs, scale=1.0):
    p = len(coefs)
    e = gen.normal(scale=scale, size=n + 200)
    out = np.zeros(n + 200)
    for t in range(p, n + 200):
        out[t] = sum(c * out[t - k] for k, c in enumerate(coefs, start=1)) + e[t]
    return out[200:]


def test_window_autocovariances_equal_a_loop_over_the_windows():
    gen = np.random.default_rng(0)
    x = gen.normal(size=90).cumsum()
    cuts = (0, 35, 90)
    ref = np.zeros(6)
    for a, b in zip(cuts[:-1], cuts[1:]):
        w = [v - np.mean(x[a:b]) for v in x[a:b]]
        for k in range(6):
            ref[k] += sum(w[t] * w[t - k] for t in range(k, len(w)))
    np.testing.assert_allclose(window_autocovariances(x, cuts, 5), ref / 90, rtol=1e-12)


def test_residuals_equal_a_brute_force_loop_per_window_and_column():
    gen = np.random.default_rng(1)
    z = np.column_stack([_ar(gen, 160, [0.7]), _ar(gen, 160, [0.5, 0.3]),
                         gen.normal(size=160)])
    z[90:] += 1.0
    first, second, fit = prewhiten_windows(z, 90)
    p = fit.order
    assert fit.orders[2] <= 1 and p >= 2 and p == max(fit.orders)
    for window, got in ((z[:90], first), (z[90:], second)):
        ref = np.empty((len(window) - p, 3))
        for j, c in enumerate(fit.coefs):
            for r, t in enumerate(range(p, len(window))):
                ref[r, j] = window[t, j] - sum(c[k - 1] * window[t - k, j]
                                               for k in range(1, len(c) + 1))
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def _yule_walker(x, order):
    """statsmodels' Yule-Walker (the biased autocovariances, centred): coefficients and
    the innovations' standard deviation (its FutureWarning on the returned tuple
    silenced)."""
    from statsmodels.regression.linear_model import yule_walker

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        coefs, sigma = yule_walker(x, order=order, method="mle", demean=True)[:2]
    return coefs, sigma


def test_ar_fit_is_statsmodels_yule_walker_and_the_aic_order():
    gen = np.random.default_rng(2)
    x = _ar(gen, 300, [0.6, -0.3, 0.2])
    cap = max_order(300, 300)
    coefs = fit_ar(x, (0, 300), cap)
    p = len(coefs)
    ref, _ = _yule_walker(x, p)
    np.testing.assert_allclose(coefs, ref, rtol=1e-10, atol=1e-12)
    # the order: the smallest n log sigma_k^2 + 2k over k = 0..cap, sigma_k^2 from
    # statsmodels' Yule-Walker of each order
    aic = [300 * math.log(np.var(x))]
    for k in range(1, cap + 1):
        _, sigma = _yule_walker(x, k)
        aic.append(300 * math.log(sigma ** 2) + 2 * k)
    assert p == int(np.argmin(aic)) and p >= 3


def test_two_windows_are_fitted_on_their_own_means():
    """A shift between the windows is not persistence: white noise with a jump of 3
    gets order 0 (the raw series' autocorrelation would ask for a high order)."""
    gen = np.random.default_rng(3)
    z = gen.normal(size=200)
    z[100:] += 3.0
    first, second, fit = prewhiten_windows(z, 100)
    assert fit.order == 0
    np.testing.assert_array_equal(np.concatenate([first, second])[:, 0], z)
    assert fit_ar(z, (0, 200), 20).size > 0


def test_a_series_fitted_exactly_stops_at_the_orders_it_can_fit():
    """A sinusoid is an exact AR(2): the recursion's variance reaches 0 and higher
    orders are not tried (no NaN coefficients, finite residuals)."""
    z = np.sin(np.arange(200) / 3.0) + 1e-3 * np.random.default_rng(10).normal(size=200)
    first, second, fit = prewhiten_windows(z, 100)
    assert fit.order >= 2 and np.isfinite(first).all() and np.isfinite(second).all()


def test_constant_windows_are_refused_and_short_windows_cap_the_order():
    with pytest.raises(ValueError, match="varies within its windows"):
        prewhiten_windows(np.r_[np.zeros(50), np.ones(50)], 50)
    # a short window caps the order at a quarter of it: 5 points, order at most 1
    first, second, fit = prewhiten_windows(_ar(np.random.default_rng(9), 300, [0.9]), 5)
    assert fit.order_cap == 1 and first.shape[0] == 5 - fit.order


def test_the_residual_blocks_are_the_raw_series_length_within_the_residuals_cap():
    gen = np.random.default_rng(4)
    z = _ar(gen, 240, [0.8])
    first, second, fit = prewhiten_windows(z, 120)
    raw = auto_length([z[:, None]], (120, 120))
    rows = first.shape[0] + second.shape[0]
    assert rows == 240 - 2 * fit.order
    assert residual_length(raw, rows) == min(raw.block, rows // 8)
    assert residual_length(raw, 40) == 5
