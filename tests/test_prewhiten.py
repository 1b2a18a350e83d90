"""AR-sieve prewhitening of drift windows (issue 30, third session): ``drift_test(...,
prewhiten="ar")`` and :mod:`kmtests._prewhiten`.

* the pooled autocovariances and the residuals equal brute-force loops;
* the AR coefficients equal statsmodels' Yule-Walker (one window) and the order is the
  smallest AIC of a brute-force search;
* the test is the two-sample test of the residual windows with the raw series' block
  length; seeds, ``batch`` and ``n_jobs`` give the same p-value; bad inputs raise;
* its level: benchmarks/README.md ("Prewhitening"), not a test: it is outside the
  99% band at phi = 0.9 and 0.95, n = 200.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import kmtests
from kmtests._prewhiten import (
    fit_ar,
    max_order,
    prewhiten_windows,
    residual_length,
    window_autocovariances,
)
from kmtests._serial import auto_length
from kmtests.timeseries import drift_test



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


def test_drift_test_prewhitened_is_the_two_sample_test_of_the_residuals():
    gen = np.random.default_rng(4)
    z = _ar(gen, 240, [0.8])
    z[120:] += 0.5
    res = drift_test(z, prewhiten="ar", n_resamples=199, rng=5)
    first, second, fit = prewhiten_windows(z, 120)
    raw = auto_length([z[:, None]], (120, 120))
    length = residual_length(raw, first.shape[0] + second.shape[0])
    assert length.block == min(raw.block, (240 - 2 * fit.order) // 8)
    ref = kmtests.two_sample_test(first, second, blocks=length, n_resamples=199, rng=5)
    assert (res.pvalue, res.statistic) == (ref.pvalue, ref.statistic)
    p = fit.order
    assert res.details["ar_order"] == p >= 1 and first.shape[0] == second.shape[0] == 120 - p
    assert res.details["block_length"] == length.block
    text = " ".join(str(res.summary()).split())
    assert "Yule-Walker" in text and f"order {p} (phi = {fit.coefs[0][0]:.3f}" in text
    assert "chosen on the raw series before prewhitening" in text
    assert f"AR({p}) residuals of rows {p}-119 and {120 + p}-239" in str(res)


def test_prewhitened_drift_test_is_reproducible_across_batch_and_n_jobs():
    gen = np.random.default_rng(6)
    z = np.column_stack([_ar(gen, 200, [0.7]), _ar(gen, 200, [0.4])])
    ps = {drift_test(z, 90, prewhiten="ar", n_resamples=299, rng=11, batch=b,
                     n_jobs=j).pvalue for b, j in ((None, None), (7, 1), (64, 2))}
    assert len(ps) == 1
    assert drift_test(z, 90, prewhiten="ar", n_resamples=299, rng=11).pvalue in ps
    others = {drift_test(z, 90, prewhiten="ar", n_resamples=299, rng=s).pvalue
              for s in range(12, 20)}
    assert len(others) > 1


def test_prewhitened_drift_test_keeps_dataframe_columns_and_a_given_length():
    import pandas as pd

    gen = np.random.default_rng(7)
    df = pd.DataFrame({"a": _ar(gen, 200, [0.6]), "b": _ar(gen, 200, [0.3])})
    res = drift_test(df, prewhiten="ar", blocks=10, n_resamples=99, rng=1)
    assert res.details["block_length"] == 10 and "given (blocks=)" in str(res.summary())
    arr = drift_test(df.to_numpy(), prewhiten="ar", blocks=10, n_resamples=99, rng=1)
    assert arr.pvalue == res.pvalue


@pytest.mark.parametrize("kwargs, match", [
    ({"prewhiten": "ma"}, "`prewhiten` must be one of"),
    ({"prewhiten": "ar", "method": "wild"}, "`method` does not apply"),
    ({"prewhiten": "ar", "nan_policy": "omit"}, "needs every observation"),
    ({"prewhiten": "ar", "blocks": 0}, "blocks"),
])
def test_prewhitened_drift_test_refuses_what_it_cannot_run(kwargs, match):
    z = _ar(np.random.default_rng(8), 120, [0.5])
    with pytest.raises(ValueError, match=match):
        drift_test(z, **kwargs)


def test_prewhitened_drift_test_refuses_short_and_constant_series():
    with pytest.raises(ValueError, match="at least 16 observations"):
        drift_test(np.arange(12.0), prewhiten="ar")
    with pytest.raises(ValueError, match="varies within its windows"):
        drift_test(np.r_[np.zeros(50), np.ones(50)], prewhiten="ar")
    # a short window caps the order at a quarter of it: 5 points, order at most 1
    first, second, fit = prewhiten_windows(_ar(np.random.default_rng(9), 300, [0.9]), 5)
    assert fit.order_cap == 1 and first.shape[0] == 5 - fit.order


def test_a_series_fitted_exactly_stops_at_the_orders_it_can_fit():
    """A sinusoid is an exact AR(2): the recursion's variance reaches 0 and higher
    orders are not tried (no NaN coefficients, finite residuals)."""
    z = np.sin(np.arange(200) / 3.0) + 1e-3 * np.random.default_rng(10).normal(size=200)
    first, second, fit = prewhiten_windows(z, 100)
    assert fit.order >= 2 and np.isfinite(first).all() and np.isfinite(second).all()
