"""The ARFIMA(1, d, 0) model and the self-normalised drift test (kmtests._longmemory), and
``drift_test``'s ``memory`` option, against brute force."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats
from scipy.optimize import approx_fprime

from kmtests import TwoSampleResult
from kmtests._longmemory import (ArfimaFit, _whittle_objective, arfima_autocovariance,
                                 arfima_paths, is_long_memory, model_arrangements,
                                 near_unit_root, selfnormalized, whittle_arfima)
from kmtests.results.drift import SelfNormalizedDriftResult
from kmtests.timeseries import drift_test

from ._cli import run, run_json


def _arfima_by_weights(gen: np.random.Generator, n: int, d: float, phi: float = 0.0,
                       lags: int = 4000) -> np.ndarray:
    """ARFIMA(1, d, 0) by its truncated MA(infinity) weights, then the AR(1) recursion
    (independent of the circulant embedding under test)."""
    k = np.arange(1, lags)
    psi = np.concatenate([[1.0], np.cumprod((k - 1 + d) / k)])
    u = np.convolve(gen.normal(size=n + lags - 1 + 500), psi[::-1], mode="valid")
    x = np.empty_like(u)
    x[0] = u[0]
    for t in range(1, u.size):
        x[t] = phi * x[t - 1] + u[t]
    return x[500:]


def _spectral_autocovariance(phi: float, d: float, lag: int) -> float:
    """``int_{-pi}^{pi} f(l) cos(lag l) dl`` for the ARFIMA(1, d, 0) spectral density with
    unit innovations, ``f = |2 sin(l/2)|^(-2d) / |1 - phi e^(-il)|^2 / (2 pi)``."""
    def f(lam: float) -> float:
        return (abs(2 * math.sin(lam / 2)) ** (-2 * d) * math.cos(lag * lam)
                / (1 - 2 * phi * math.cos(lam) + phi * phi) / (2 * math.pi))
    # the integrand is singular at 0 for d > 0: integrate (0, pi] with the singularity
    # at the end point, doubled (f is even)
    val, _ = integrate.quad(f, 0.0, math.pi, limit=400, points=[1e-6, 1e-3, 0.1])
    return 2 * val


# -- the model -----------------------------------------------------------------------------
@pytest.mark.parametrize("d", [-0.3, -0.1, 0.1, 0.3, 0.45])
def test_autocovariance_matches_the_closed_form_and_the_spectrum(d):
    g = arfima_autocovariance(d, 30)
    # rho_k = Gamma(k + d) Gamma(1 - d) / (Gamma(k - d + 1) Gamma(d)) (Hosking 1981)
    rho = np.array([math.gamma(k + d) * math.gamma(1 - d) / (math.gamma(k - d + 1)
                                                             * math.gamma(d))
                    for k in range(30)])
    assert g[0] == pytest.approx(math.gamma(1 - 2 * d) / math.gamma(1 - d) ** 2, rel=1e-12)
    np.testing.assert_allclose(g / g[0], rho, rtol=1e-10, atol=1e-14)
    if d < 0.45:
        for lag in (0, 1, 7):
            assert g[lag] == pytest.approx(_spectral_autocovariance(0.0, d, lag), rel=2e-3)


def test_paths_have_the_model_autocovariance():
    fit = ArfimaFit(0.5, 0.2)
    x = arfima_paths(fit, 64, np.random.default_rng(11), 6000)
    for lag in (0, 1, 5, 20):
        want = _spectral_autocovariance(fit.phi, fit.d, lag)
        got = np.mean(x[:, : 64 - lag] * x[:, lag:])
        se = np.std(x[:, : 64 - lag] * x[:, lag:]) / math.sqrt(x.shape[0] * 4)
        assert abs(got - want) < max(4 * se, 0.02 * want), (lag, got, want)


def test_paths_are_the_same_in_batches_of_any_size():
    fit = ArfimaFit(0.7, 0.1)
    whole = arfima_paths(fit, 50, np.random.default_rng(3), 7)
    gen = np.random.default_rng(3)
    parts = np.vstack([arfima_paths(fit, 50, gen, 3), arfima_paths(fit, 50, gen, 4)])
    np.testing.assert_array_equal(whole, parts)


def test_arrangements_are_uniform_permutations_without_dependence():
    rows = model_arrangements(np.array([2, 0, 1]), ArfimaFit(0.0, 0.0),
                              np.random.default_rng(5), 6000)
    assert np.all(np.sort(rows, axis=1) == np.arange(3))
    _, counts = np.unique(rows @ np.array([9, 3, 1]), return_counts=True)
    assert counts.size == 6
    assert stats.chisquare(counts).pvalue > 1e-3


def test_arrangements_put_the_ranked_observations_where_the_path_ranks():
    gen = np.random.default_rng(8)
    order = gen.permutation(40)
    fit = ArfimaFit(0.6, 0.2)
    rows = model_arrangements(order, fit, np.random.default_rng(1), 5)
    paths = arfima_paths(fit, 40, np.random.default_rng(1), 5)
    for row, path in zip(rows, paths):
        # the observation at the path's k-th smallest point is order[k]
        np.testing.assert_array_equal(row[np.argsort(path, kind="stable")], order)


def test_whittle_gradient_is_the_objective_derivative():
    x = _arfima_by_weights(np.random.default_rng(2), 300, 0.2, 0.4)
    f = _whittle_objective(x, (150, 150))
    for theta in ([0.3, 0.1], [-0.5, -0.2], [0.9, 0.3]):
        num = approx_fprime(np.array(theta), lambda t: f(t)[0], 1e-7)
        np.testing.assert_allclose(f(np.array(theta))[1], num, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("d, phi", [(0.3, 0.0), (0.0, 0.6), (0.2, 0.4)])
def test_whittle_recovers_the_model(d, phi):
    x = _arfima_by_weights(np.random.default_rng(4), 6000, d, phi)
    fit = whittle_arfima(x, (3000, 3000))
    assert fit.d == pytest.approx(d, abs=0.06)
    assert fit.phi == pytest.approx(phi, abs=0.07)


def test_whittle_ignores_a_shift_between_the_windows():
    x = _arfima_by_weights(np.random.default_rng(6), 400, 0.0, 0.5)
    shifted = x.copy()
    shifted[200:] += 5.0
    a, b = whittle_arfima(x, (200, 200)), whittle_arfima(shifted, (200, 200))
    assert (a.phi, a.d) == pytest.approx((b.phi, b.d), abs=1e-6)


def test_long_memory_rule():
    assert is_long_memory(ArfimaFit(0.0, 0.3), 200)
    assert is_long_memory(ArfimaFit(0.95, 0.0), 200)
    # a root near one: fewer than 22 effective observations n (1 - phi) / (1 + phi)
    assert is_long_memory(ArfimaFit(0.81, 0.0), 200)       # 20.99
    assert not is_long_memory(ArfimaFit(0.80, 0.0), 200)   # 22.2
    assert not is_long_memory(ArfimaFit(0.9, 0.0), 500)    # 26.3
    assert is_long_memory(ArfimaFit(0.92, 0.0), 500)       # 20.8
    assert not is_long_memory(ArfimaFit(0.95, 0.0), 2000)  # 51.3
    # the ridge's other side: an AR(1) series with phi = 0.6 fitted as phi = 0.86 with
    # d = -0.41 (tests/test_timeseries.py's series) is anti-persistent, not near a root
    assert not is_long_memory(ArfimaFit(0.86, -0.41), 200)
    assert is_long_memory(ArfimaFit(0.86, -0.15), 200)
    assert not is_long_memory(ArfimaFit(0.7, 0.2), 200)     # the phi-d ridge of an AR series
    assert not is_long_memory(ArfimaFit(0.0, 0.1), 200)


@pytest.mark.parametrize("phi", [0.79, 0.8, 0.8018, 0.81, 0.9, 0.95])
@pytest.mark.parametrize("n", [100, 200, 500, 2000])
def test_near_unit_root_counts_effective_observations(phi, n):
    assert near_unit_root(ArfimaFit(phi, 0.0), n) == (n * (1 - phi) / (1 + phi) < 22)


def test_whittle_refuses_constant_or_short_windows():
    with pytest.raises(ValueError, match="not constant"):
        whittle_arfima(np.ones(100), (50, 50))
    with pytest.raises(ValueError, match="finite"):
        whittle_arfima(np.array([1.0, np.nan] * 20))


# -- the statistic -------------------------------------------------------------------------
def _selfnormalized_loops(f: np.ndarray, n_x: int) -> float:
    n, k = f.shape
    a, b = f[:n_x], f[n_x:]
    d = a.mean(axis=0) - b.mean(axis=0)
    v = np.zeros((k, k))
    s = np.zeros(k)
    for t in range(n_x):
        s = s + (a[t] - a.mean(axis=0))
        v += np.outer(s, s) / n_x ** 3
    r = np.zeros(k)
    for t in range(b.shape[0] - 1, -1, -1):
        r = r + (b[t] - b.mean(axis=0))
        v += np.outer(r, r) / b.shape[0] ** 3
    return float(d @ np.linalg.pinv(v) @ d)


@pytest.mark.parametrize("n_x", [13, 20, 31])
def test_selfnormalized_matches_loops(n_x):
    gen = np.random.default_rng(n_x)
    f = gen.normal(size=(3, 45, 3)) + np.linspace(0, 1, 45)[:, None]
    got = selfnormalized(f, n_x)
    want = [_selfnormalized_loops(x, n_x) for x in f]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    np.testing.assert_allclose(selfnormalized(f[1], n_x), want[1:2], rtol=1e-12)


def test_selfnormalized_is_affine_invariant_and_skips_constant_columns():
    gen = np.random.default_rng(1)
    f = gen.normal(size=(60, 2))
    a = np.array([[2.0, 0.5], [-1.0, 3.0]])
    base = selfnormalized(f, 25)
    np.testing.assert_allclose(selfnormalized(f @ a + 7.0, 25), base, rtol=1e-9)
    with_const = np.hstack([f, np.full((60, 1), 3.0)])
    np.testing.assert_allclose(selfnormalized(with_const, 25), base, rtol=1e-9)


# -- drift_test(memory=...) ------------------------------------------------------------------
@pytest.fixture(scope="module")
def long_series() -> np.ndarray:
    return _arfima_by_weights(np.random.default_rng(12), 400, 0.35)


def test_auto_takes_the_selfnormalized_test_on_long_memory(long_series):
    res = drift_test(long_series, n_resamples=99, rng=1)
    assert isinstance(res, SelfNormalizedDriftResult)
    assert "long memory" in res.reason and res.d > 0.15
    assert res.null_distribution.shape == (99,)
    assert res.pvalue == (1 + res.count) / 100
    assert np.all(np.isfinite(res.null_distribution))
    statistic, pvalue = res
    assert (statistic, pvalue) == (res.statistic, res.pvalue)
    assert "Self-normalised kernel drift test" in str(res)
    assert "arfima ranks" in str(res.summary())
    assert all(len(line) <= 80 for line in str(res).splitlines())
    assert all(len(line) <= 78 for line in str(res.summary()).splitlines())


def test_auto_keeps_the_block_test_on_short_memory():
    gen = np.random.default_rng(3)
    x = _arfima_by_weights(gen, 300, 0.0, 0.5)
    res = drift_test(x, n_resamples=99, rng=1)
    assert isinstance(res, TwoSampleResult)
    short = drift_test(x, n_resamples=99, rng=1, memory="short")
    assert (res.statistic, res.pvalue) == (short.statistic, short.pvalue)


def test_given_block_length_is_never_switched(long_series):
    res = drift_test(long_series, blocks=25, n_resamples=99, rng=1)
    assert isinstance(res, TwoSampleResult)


def test_long_is_reproducible_and_equals_the_rearrangements(long_series):
    a = drift_test(long_series, memory="long", n_resamples=199, rng=5)
    b = drift_test(pd.Series(long_series), memory="long", n_resamples=199, rng=5)
    assert (a.statistic, a.pvalue) == (b.statistic, b.pvalue)
    np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
    assert a.seed == 5 and a.sizes == {"n_x": 200, "n_y": 200}


@settings(max_examples=15, deadline=None)
@given(shift=st.floats(-1e3, 1e3), scale=st.floats(1e-3, 1e3))
def test_long_is_invariant_to_translation_and_scaling(shift, scale):
    x = _arfima_by_weights(np.random.default_rng(9), 120, 0.3)
    base = drift_test(x, memory="long", n_resamples=49, rng=2)
    moved = drift_test(scale * x + shift, memory="long", n_resamples=49, rng=2)
    assert moved.statistic == pytest.approx(base.statistic, rel=1e-6)
    assert moved.pvalue == base.pvalue


def test_switch_refuses_options_it_does_not_take(long_series):
    with pytest.raises(ValueError, match="memory='short'"):
        drift_test(long_series, method="wild", n_resamples=99)
    with pytest.raises(ValueError, match="estimator"):
        drift_test(long_series, memory="long", estimator="skme", n_resamples=99)
    res = drift_test(long_series, memory="short", method="wild", n_resamples=99, rng=1)
    assert isinstance(res, TwoSampleResult)


def test_bad_memory_and_small_windows():
    x = np.random.default_rng(0).normal(size=100)
    with pytest.raises(ValueError, match="`memory` must be one of"):
        drift_test(x, memory="longer")
    with pytest.raises(ValueError, match="at least 20 observations"):
        drift_test(x, 15, memory="long")
    with pytest.raises(ValueError, match="missing values"):
        drift_test(np.r_[x[:50], np.nan, x[51:]], memory="long")


def test_auto_leaves_short_constant_or_missing_series_to_the_block_test():
    gen = np.random.default_rng(0)
    assert isinstance(drift_test(gen.normal(size=30), n_resamples=19, rng=1),
                      TwoSampleResult)
    x = gen.normal(size=100)
    x[5] = np.nan
    with pytest.raises(ValueError, match="nan_policy"):   # the two-sample test's message
        drift_test(x, n_resamples=19)
    with pytest.raises(ValueError, match="not constant"):
        drift_test(np.ones(100), memory="long", n_resamples=19)


def test_multivariate_series():
    gen = np.random.default_rng(4)
    x = np.column_stack([_arfima_by_weights(gen, 300, 0.3),
                         _arfima_by_weights(gen, 300, 0.3)])
    res = drift_test(x, memory="long", n_resamples=99, rng=1)
    assert res.n_features == 2 + 3
    shifted = x.copy()
    shifted[150:] += 3.0
    assert drift_test(shifted, memory="long", n_resamples=99, rng=1).pvalue == 0.01


# -- the command line --------------------------------------------------------------------------
def test_cli_drift_equals_the_api(capsys, tmp_path, long_series):
    short = _arfima_by_weights(np.random.default_rng(3), 300, 0.0, 0.5)
    pd.DataFrame({"s": short, "l": long_series[:300]}).to_csv(tmp_path / "s.csv",
                                                              index=False)
    base = ["drift", tmp_path / "s.csv", "--n-resamples", 99, "--seed", 2]
    got = run_json(capsys, *base, "--columns", "s", "--split", 120)
    want = drift_test(short, 120, n_resamples=99, rng=2)
    assert isinstance(want, TwoSampleResult)
    assert (got["statistic"], got["pvalue"]) == (want.statistic, want.pvalue)
    assert got["data_name"] == f"rows 0-119 and 120-299 of {tmp_path / 's.csv'}"
    got = run_json(capsys, *base, "--columns", "l")
    want = drift_test(long_series[:300], n_resamples=99, rng=2)
    assert isinstance(want, SelfNormalizedDriftResult)
    assert (got["statistic"], got["pvalue"], got["phi"]) == (want.statistic, want.pvalue,
                                                             want.phi)
    assert "long memory" in got["reason"]
    got = run_json(capsys, *base, "--columns", "l", "--memory", "short")
    assert got["pvalue"] == drift_test(long_series[:300], memory="short", n_resamples=99,
                                       rng=2).pvalue
    rc, out, err = run(capsys, *base, "--columns", "l")
    assert rc == 0 and "Self-normalised kernel drift test" in out and "Notes:" in out


def test_cli_drift_names_memory_short_when_options_do_not_apply(capsys, tmp_path,
                                                                long_series):
    pd.DataFrame({"l": long_series}).to_csv(tmp_path / "l.csv", index=False)
    rc, out, err = run(capsys, "drift", tmp_path / "l.csv", "--estimator", "skme",
                       "--n-resamples", 19)
    assert rc == 2, err
    assert "not --estimator: leave them out, or pass --memory short" in err, err


# -- the level (slow) -----------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("d, phi", [(0.3, 0.0), (0.0, 0.95), (0.0, 0.0)])
def test_selfnormalized_level(d, phi):
    """Two windows of 200 series at n = 200, 199 rearrangements: the rejections at 5%
    inside the 99.9% binomial band."""
    gen = np.random.default_rng(int(100 * (d + phi)))
    reps, hits = 200, 0
    for i in range(reps):
        x = _arfima_by_weights(gen, 200, d, phi) if phi < 0.9 else None
        if x is None:   # AR(1) phi = 0.95, stationary start
            e = gen.normal(size=200)
            x = np.empty(200)
            x[0] = e[0] / math.sqrt(1 - phi * phi)
            for t in range(1, 200):
                x[t] = phi * x[t - 1] + e[t]
        hits += drift_test(x, memory="long", n_resamples=199, rng=i).pvalue <= 0.05
    lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, 0.05)
    assert lo <= hits <= hi, hits


@pytest.mark.slow
def test_default_drift_level_on_long_memory():
    """``drift_test``'s default on two windows of ARFIMA(0, 0.3, 0) series at n = 300
    (200 series, 199 draws): inside the 99.9% band (block permutations alone reject
    31-50/300 at n = 200-2000: benchmarks/README.md), most series taking the
    self-normalised test."""
    gen = np.random.default_rng(2030)
    reps, hits, switched = 200, 0, 0
    for i in range(reps):
        res = drift_test(_arfima_by_weights(gen, 300, 0.3), n_resamples=199, rng=i)
        switched += isinstance(res, SelfNormalizedDriftResult)
        hits += res.pvalue <= 0.05
    lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, 0.05)
    assert lo <= hits <= hi, hits
    assert switched > reps // 2, switched
