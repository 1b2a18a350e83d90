"""Time series (issue 30): automatic block lengths, the wild bootstrap on a declared
series, the warning for i.i.d. nulls on autocorrelated rows, kmtests.timeseries and
the CLI flags.

* the Politis-White lengths equal arch's (``benchmarks/reference/arch_block_lengths.json``,
  written by ``benchmarks/reference/arch_block_lengths.py``; arch is not needed here);
* the per-lag statistics of the cross-dependence test equal a loop over the pairs;
* the level of the automatic paths (slow tests) on AR(1) series.
"""

from __future__ import annotations

import hashlib
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import kmtests
from kmtests._serial import (auto_length, feature_series, politis_white,
                              politis_white_columns)
from kmtests.null import WildBootstrap
from kmtests.problems.schemes import Blocks
from kmtests.timeseries import cross_dependence_test, drift_test, optimal_block_length

from ._cli import run, run_json

ROOT = Path(__file__).resolve().parents[1]
ALPHA = 0.05


def _ar1(gen, n, phi):
    e = gen.normal(size=n)
    out = np.empty(n)
    out[0] = e[0]
    c = np.sqrt(1 - phi * phi)
    for t in range(1, n):
        out[t] = phi * out[t - 1] + c * e[t]
    return out


# -- the block-length rule -------------------------------------------------------------------
def test_politis_white_equals_arch_on_the_pinned_series():
    sys.path.insert(0, str(ROOT / "benchmarks" / "reference"))
    try:
        from arch_block_lengths import series
    finally:
        sys.path.pop(0)
    ref = json.loads((ROOT / "benchmarks" / "reference" / "arch_block_lengths.json")
                     .read_text())
    assert len(ref["cases"]) == 32
    for case in ref["cases"]:
        x = series(case["kind"], case["n"], case["seed"])
        assert hashlib.sha256(x.tobytes()).hexdigest() == case["sha256"], case
        b_sb, b_cb = politis_white(x)
        assert b_sb == pytest.approx(case["b_sb"], rel=1e-10), case
        assert b_cb == pytest.approx(case["b_cb"], rel=1e-10), case


def test_optimal_block_length_is_per_column_and_grows_with_the_dependence():
    gen = np.random.default_rng(0)
    x = np.column_stack([gen.normal(size=400), _ar1(gen, 400, 0.9)])
    out = optimal_block_length(x)
    assert out.shape == (2, 2)
    assert out[1, 0] > 3 * out[0, 0]
    with pytest.raises(ValueError, match="at least 8"):
        politis_white(np.arange(5.0))
    assert politis_white(np.ones(50)) == (1.0, 1.0)


def test_politis_white_columns_is_each_column_on_its_own():
    """The rule on all columns at once (the automatic length's path) gives each column
    the lengths it gets alone: the truncation lag and the insignificance run are per
    column, whatever the neighbours (a constant, a near-periodic, an i.i.d. column)."""
    gen = np.random.default_rng(3)
    n = 300
    cols = [_ar1(gen, n, 0.9), np.full(n, 2.0), np.sin(np.arange(n) / 5.0),
            gen.normal(size=n), _ar1(gen, n, -0.5), _ar1(gen, n, 0.5)]
    sb, cb = politis_white_columns(np.column_stack(cols))
    for j, c in enumerate(cols):
        assert (sb[j], cb[j]) == pytest.approx(politis_white(c), rel=1e-12), j
        one = politis_white_columns(c[:, None])
        assert abs(sb[j] - one[0][0]) <= 1e-12 * sb[j] and abs(cb[j] - one[1][0]) <= 1e-12 * cb[j]
    assert (sb[1], cb[1]) == (1.0, 1.0)


def test_politis_white_takes_its_smallest_series():
    """Eight observations (the documented minimum): at most n - 1 lags (an
    IndexError before)."""
    b = politis_white(np.random.default_rng(4).normal(size=8))
    assert all(np.isfinite(b)) and 1.0 <= min(b)


def test_a_constant_column_adds_no_dependence_to_the_automatic_length():
    """A constant series has feature series of exact zeros, not of rounding noise (which
    made the persistence check fire, z = 48, and the blocks the longest allowed)."""
    gen = np.random.default_rng(5)
    y = _ar1(gen, 200, 0.5)[:, None]
    const = np.full((200, 1), 1.0)
    assert not np.any(feature_series(const))
    for c, n in ((3.7, 16), (-2.5e-7, 200), (np.pi, 5001)):
        assert not np.any(feature_series(np.full((n, 2), c))), (c, n)
    # a large offset with a unit spread is not constant
    assert np.abs(feature_series(1e10 + gen.normal(size=200))).max() > 0.1
    both, alone = auto_length([const, y]), auto_length([y])
    assert (both.block, both.multiplier, both.persistent) == (
        alone.block, alone.multiplier, alone.persistent)
    assert both.persistent < 2.0


def test_a_series_constant_in_each_window_adds_no_dependence_to_the_automatic_length():
    """Two windows of a constant series (or of one constant in each window): the feature
    series are exact zeros, not the rounding noise of the centring within the windows
    (whose persistence z reached 50-240 and took the longest blocks allowed)."""
    for n, cut in ((309, 150), (1183, 700), (40, 20)):
        for const in (np.full((n, 1), 2.3), np.r_[np.full(cut, 0.7), np.full(n - cut, -1.9)]):
            wins = (cut, n - cut)
            assert not np.any(feature_series(const, wins)), (n, cut)
            auto = auto_length([const], wins)
            assert auto.persistent == 0.0 and auto.multiplier == 1.0, (n, cut)
            assert auto.block == min(3, n // 8), (n, cut)


def test_auto_length_sees_volatility_clustering_through_the_kernel_features():
    """GARCH-like returns: uncorrelated, but their squares are not; the kernel features
    (first principal components of random Fourier features) see it, the data alone not."""
    gen = np.random.default_rng(1)
    n = 2000
    vol = np.exp(_ar1(gen, n, 0.98))            # slowly varying volatility
    r = vol * gen.normal(size=n)
    data_only = max(politis_white(r)[1], 1.0)
    auto = auto_length([r])
    assert auto.block >= 3 * data_only
    assert auto.n_series == 4                    # the column and 3 kernel components


def test_blocks_auto_gives_a_blocked_scheme_and_says_why():
    gen = np.random.default_rng(2)
    x, y = _ar1(gen, 300, 0.8), _ar1(gen, 300, 0.8)
    res = kmtests.independence_test(x, y, blocks="auto", n_resamples=99, rng=1)
    text = " ".join(str(res).split())
    assert "blocks of" in text and "Politis-White rule" in text and "at most n/6" in text
    b = int(text.split("blocks of ")[1].split()[0])
    assert 5 <= b <= 300 // 6
    assert res.details["permutations"].startswith(f"of {-(-300 // b)} blocks of {b}")


def _garch(gen, n, burn=500):
    """GARCH(1,1) returns, omega = 0.05, alpha = 0.1, beta = 0.85 (as the benchmark's)."""
    e = gen.normal(size=n + burn)
    h, r = 1.0, np.empty(n + burn)
    for t in range(n + burn):
        r[t] = np.sqrt(h) * e[t]
        h = 0.05 + 0.1 * r[t] ** 2 + 0.85 * h
    return r[burn:]


def test_auto_length_takes_long_blocks_for_persistent_volatility(monkeypatch):
    """GARCH(1,1) returns: every autocorrelation of |r| is a few hundredths (below the
    Politis-White band), but they last; their sum over the lags 5..4+M (M = ceil(sqrt(n)))
    is many standard errors above 0, and the rule then takes blocks of at least 3M, here
    cut to n/8 (it took 8 before, and the windows test rejected 26/200 at 5% at n = 500
    and 56/300 at n = 200).
    i.i.d. data: no persistence, the length is the Politis-White one."""
    import kmtests._serial as serial

    gen = np.random.default_rng(41)
    n = 500
    r = _garch(gen, n)
    wins = (n // 2, n - n // 2)
    auto = auto_length([r], wins)
    assert auto.persistent > serial._PERSIST_Z
    assert auto.wanted == 3 * 23 and auto.block == auto.cap == n // 8 == 62 and auto.capped
    assert "at least 3 ceil(sqrt(n)) for persistent dependence" in auto.block_rule
    with monkeypatch.context() as m:
        m.setattr(serial, "_PERSIST_Z", np.inf)
        assert auto_length([r], wins).block < auto.block / 4
    iid = auto_length([gen.normal(size=n)], wins)
    assert iid.persistent < serial._PERSIST_Z and iid.block < 20
    assert "persistent" not in iid.block_rule
    # the volatility series: distances to each window's median (of the data scaled by
    # their largest absolute value), centred over the whole series
    h = n // 2
    a = np.concatenate([np.abs(r[:h] - np.median(r[:h])), np.abs(r[h:] - np.median(r[h:]))])
    v = serial.volatility_series(r, wins)
    assert v.shape == (n, 1)
    assert np.allclose(v[:, 0], (a - a.mean()) / np.abs(r).max(), atol=1e-12)


def test_sums_of_autocorrelations_equal_the_loop_over_the_lags():
    """The persistence z-scores (a difference of cumulative sums) against the loop over
    the lags: sum_k sum_t a_t a_(t+k) / sum_t a_t^2 / sqrt(lags / n)."""
    import kmtests._serial as serial

    gen = np.random.default_rng(44)
    a = gen.normal(size=(120, 3)) + np.linspace(0, 2, 120)[:, None]
    a -= a.mean(axis=0)
    n = a.shape[0]
    for lo, hi in [(1, 11), (12, 22), (5, 15), (1, 1), (100, 119)]:
        num = sum(np.sum(a[k:] * a[:n - k], axis=0) for k in range(lo, hi + 1))
        ref = num / np.sum(a * a, axis=0) / np.sqrt((hi - lo + 1) / n)
        assert np.allclose(serial._acf_sum_z(a, lo, hi), ref, rtol=1e-12, atol=1e-14)


def test_blocks_auto_leaves_six_blocks_of_paired_series_and_eight_of_two_windows():
    """Strong dependence (AR(1), phi = 0.95, n = 200): the rule asks for more than the cap;
    paired series keep 6 blocks (720 orders; with 8 blocks of 25 the HSIC test rejected
    39/300 at 5%), two windows 8 (70 splits), and the report says the cap cut the rule."""
    gen = np.random.default_rng(41)
    x, y = _ar1(gen, 200, 0.95), _ar1(gen, 200, 0.95)
    with warnings.catch_warnings():  # (the series are short for phi = 0.95: see below)
        warnings.simplefilter("ignore", kmtests.SerialDependenceWarning)
        res = kmtests.independence_test(x, y, blocks="auto", n_resamples=99, rng=1)
        win = kmtests.two_sample_test(x[:100], x[100:], blocks="auto", n_resamples=99,
                                      rng=1)
    text = " ".join(res.details["permutations"].split())
    assert text.startswith("of 7 blocks of 33 consecutive rows")
    assert "at most n/6 (the rule asked for" in text
    text = " ".join(win.details["permutations"].split())
    assert text.startswith("of 8 blocks of 25 consecutive rows") and "at most n/8 (" in text


def test_blocks_auto_warns_only_where_the_series_is_short_for_its_dependence():
    """The warning comes when the data hold fewer than 10 effective observations
    (``n (1 - r1) / (1 + r1)``: AR(1) with phi = 0.95 at n = 200, where no automatic null
    held the level: 18, 23 and 31 of 300 at 5%), not at phi = 0.8 (level held), nor at
    phi = 0.95 with n = 2000, nor on i.i.d. data."""
    gen = np.random.default_rng(43)
    for phi, n, warns in [(0.95, 200, True), (0.8, 200, False), (0.95, 2000, False),
                          (0.0, 200, False)]:
        x = _ar1(gen, n, phi)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            auto = auto_length([x[:, None]])
        hit = [w for w in seen if issubclass(w.category, kmtests.SerialDependenceWarning)]
        assert bool(hit) == warns == (auto.effective < 10), (phi, n, auto)
        if warns:
            assert "effective observations" in str(hit[0].message)
            c = x - x.mean()
            r1 = (c[1:] @ c[:-1]) / (c @ c)
            assert auto.effective == pytest.approx(n * (1 - r1) / (1 + r1), rel=1e-9)


def test_blocks_auto_on_two_windows_need_not_divide_them():
    gen = np.random.default_rng(3)
    z = _ar1(gen, 301, 0.7)
    res = kmtests.two_sample_test(z[:150], z[150:], blocks="auto", n_resamples=99, rng=1)
    assert 0 < res.pvalue <= 1 and "Politis-White" in res.details["permutations"]
    # an integer length must still divide both sizes (its scheme is a group of splits)
    with pytest.raises(ValueError, match="must divide both sample sizes"):
        kmtests.two_sample_test(z[:150], z[150:], blocks=7)
    with pytest.raises(ValueError, match="at least 16 observations"):
        kmtests.independence_test(z[:10], z[10:20], blocks="auto")


def test_block_orders_of_unequal_windows_are_enumerated_and_keep_the_sizes():
    s = Blocks(10, 3, n_x=4)            # blocks 0-2, 3-5, 6-8, 9: 4 does not divide
    rows = list(s.enumerate())
    assert s.count(10**6) == 24 == len(rows)
    assert rows[0].tolist() == list(range(10))
    assert all(sorted(r.tolist()) == list(range(10)) for r in rows)
    drawn = s.random(np.random.default_rng(0), 50)
    assert {tuple(r) for r in drawn} <= {tuple(r) for r in rows}


def test_vectorised_block_rows_equal_the_block_concatenation():
    from kmtests._rng import permuted_rows

    for n, length, n_x in [(200, 7, None), (205, 10, 100), (50, 5, 25)]:
        s = Blocks(n, length, n_x)
        got = s.random(np.random.default_rng(3), 20)
        orders = permuted_rows(np.random.default_rng(3), len(s.blocks), 20)
        assert np.array_equal(got, np.stack([s._row(o) for o in orders]))


# -- the wild bootstrap on a declared time series ------------------------------------------------
def test_wild_on_a_declared_series_takes_ar_multipliers_of_the_automatic_length():
    gen = np.random.default_rng(4)
    x, y = _ar1(gen, 200, 0.8), _ar1(gen, 200, 0.8)
    res = kmtests.independence_test(x, y, blocks="auto", method="wild", n_resamples=199,
                                    rng=1)
    assert res.details["process"] == "ar"
    auto = auto_length([x[:, None], y[:, None]])
    assert res.details["length"] == pytest.approx(round(auto.multiplier, 2))
    assert "stationary-bootstrap" in res.details["length_rule"]
    notes = " ".join(res.summary().as_text().split())
    assert "AR(1) multiplier process of length" in notes and "Politis-White" in notes
    assert "AR(1) multipliers, length" in " ".join(str(res).split())
    # blocks given as a number: the AR length is the block length
    res10 = kmtests.independence_test(x, y, blocks=10, method="wild", n_resamples=199, rng=1)
    assert res10.details["length"] == 10.0
    same = kmtests.independence_test(
        x, y, method=WildBootstrap(process="ar", length=10, n_resamples=199, rng=1))
    assert same.pvalue == res10.pvalue


def test_wild_defaults_are_rademacher_on_iid_problems_and_auto_length_for_ar():
    gen = np.random.default_rng(5)
    x, y = gen.normal(size=60), gen.normal(size=60)
    a = kmtests.independence_test(x, y, method="wild", n_resamples=199, rng=3)
    b = kmtests.independence_test(x, y, method=WildBootstrap(process="rademacher",
                                                             n_resamples=199, rng=3))
    assert a.pvalue == b.pvalue and a.details["process"] == "rademacher"
    c = kmtests.independence_test(x, y, method=WildBootstrap(process="ar", n_resamples=199,
                                                             rng=3))
    assert c.details["length"] >= 1.0 and "Politis-White" in c.details["length_rule"]
    with pytest.raises(ValueError, match="positive number or 'auto'"):
        WildBootstrap(length="long")


# -- the warning ---------------------------------------------------------------------------------
def _caught(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return [w for w in rec if issubclass(w.category, kmtests.SerialDependenceWarning)]


def test_iid_nulls_on_autocorrelated_series_warn_and_name_the_fix():
    gen = np.random.default_rng(6)
    x, y = _ar1(gen, 300, 0.8), _ar1(gen, 300, 0.8)
    for fn in (lambda: kmtests.independence_test(x, y, n_resamples=99, rng=1),
               lambda: kmtests.independence_test(x, y, method="gamma"),
               lambda: kmtests.independence_test(x, y, method="wild", n_resamples=99, rng=1),
               lambda: kmtests.two_sample_test(x[:150], x[150:], n_resamples=99, rng=1)):
        got = _caught(fn)
        assert len(got) == 1 and "blocks='auto'" in str(got[0].message)
    # the fixes, i.i.d. data, sorted data and one autocorrelated variable do not warn
    u, v = gen.normal(size=300), gen.normal(size=300)
    for fn in (lambda: kmtests.independence_test(x, y, blocks="auto", n_resamples=99, rng=1),
               lambda: kmtests.independence_test(
                   x, y, method=WildBootstrap(process="ar", n_resamples=99, rng=1)),
               lambda: kmtests.independence_test(u, v, n_resamples=99, rng=1),
               lambda: kmtests.independence_test(x, v, n_resamples=99, rng=1),
               lambda: kmtests.independence_test(np.sort(u), np.sort(v) + 0.1 * u,
                                                 n_resamples=99, rng=1),
               lambda: kmtests.two_sample_test(u[:150], u[150:], n_resamples=99, rng=1)):
        assert _caught(fn) == []


# -- kmtests.timeseries --------------------------------------------------------------------------
def _gauss(a, bw):
    return np.exp(-((a[:, None] - a[None, :]) ** 2) / (2 * bw * bw))


def test_cross_dependence_statistics_equal_a_loop_over_the_lagged_pairs():
    gen = np.random.default_rng(7)
    n, M = 40, 3
    x, y = gen.normal(size=n), gen.normal(size=n)
    res = cross_dependence_test(x, y, max_lag=M, bandwidth_x=1.0, bandwidth_y=1.5,
                                blocks=4, n_resamples=19, rng=0)
    K, L = _gauss(x, 1.0), _gauss(y, 1.5)
    for j in range(M + 1):
        m = n - j
        idx_x, idx_y = np.arange(j, n), np.arange(0, n - j)   # x_t with y_{t - j}
        k, l_ = K[np.ix_(idx_x, idx_x)], L[np.ix_(idx_y, idx_y)]
        h = np.eye(m) - 1.0 / m
        want = np.trace(k @ h @ l_ @ h) / m**2
        assert res.statistics[j] == pytest.approx(want, rel=1e-10)
    assert res.statistic == pytest.approx(sum((n - j) / n * res.statistics[j]
                                              for j in range(M + 1)), rel=1e-12)
    # lag 0 alone: the HSIC_b of independence_test
    ind = kmtests.hsic(x, y, bandwidth_x=1.0, bandwidth_y=1.5, statistic="biased")
    assert res.statistics[0] == pytest.approx(ind, rel=1e-10)


def test_cross_dependence_finds_a_lagged_nonlinear_dependence_and_is_reproducible():
    gen = np.random.default_rng(8)
    n = 200
    e = gen.normal(size=(n, 2))
    x, y = np.zeros(n), np.zeros(n)
    for t in range(3, n):
        y[t] = 0.6 * y[t - 1] + e[t, 1]
        x[t] = 0.4 * x[t - 1] + 1.5 * np.cos(2 * y[t - 3]) + 0.3 * e[t, 0]
    for combine in ("sum", "max"):
        res = cross_dependence_test(x, y, max_lag=4, combine=combine, n_resamples=99,
                                    rng=2)
        assert res.pvalue <= (0.02 if combine == "sum" else 0.05) and res.lag == 3, res
        again = cross_dependence_test(x, y, max_lag=4, combine=combine, n_resamples=99,
                                      rng=2)
        assert again.pvalue == res.pvalue
    assert "strongest at lag 3" in str(res)
    with pytest.raises(ValueError, match="leave at least 8 pairs"):
        cross_dependence_test(x[:12], y[:12], max_lag=6, blocks=2)


def test_drift_test_is_the_two_sample_test_of_the_windows():
    gen = np.random.default_rng(9)
    z = _ar1(gen, 240, 0.6)
    # (memory="auto" fits phi = 0.86 with d = -0.41 here, and keeps the block test)
    res = drift_test(z, 100, n_resamples=199, rng=4)
    ref = kmtests.two_sample_test(z[:100], z[100:], blocks="auto", n_resamples=199, rng=4)
    assert res.pvalue == ref.pvalue and res.statistic == ref.statistic
    assert "rows 0-99 and 100-239" in str(res)
    with pytest.raises(ValueError, match="at least 2 observations in each window"):
        drift_test(z, 239)


def _mmd_u_linear(a, b):
    """MMD^2_u of the linear kernel by its definition (off-diagonal means)."""
    ka, kb = np.outer(a, a), np.outer(b, b)
    m, n = a.size, b.size
    return ((ka.sum() - np.trace(ka)) / (m * (m - 1)) + (kb.sum() - np.trace(kb)) / (n * (n - 1))
            - 2 * np.outer(a, b).mean())


def test_two_windows_rotate_the_blocks_unless_the_dependence_is_persistent():
    """blocks="auto" between two windows: random rotations of the series before the
    blocks (Blocks(offsets=True)), so that 8 blocks of 25 give 1750 arrangements, not 70
    (35 values: no p-value between 2/70 and 4/70, a level of 2.9% at 5%); the plain
    blocks where the persistence check fired (GARCH returns; AutoLength.rotations)."""
    z = _ar1(np.random.default_rng(3), 200, 0.9)
    auto = auto_length([z[:, None]], (100, 100))
    assert auto.block == 25 and auto.rotations
    res = kmtests.two_sample_test(z[:100], z[100:], blocks="auto", kernel="linear",
                                  n_resamples=9999, rng=0)
    text = " ".join(str(res).split())
    assert "all 1750 arrangements" in text and "rotated by an offset of 0-24" in text
    # the p-value by brute force: the share of the 1750 arrangements at least as large
    t = np.array([_mmd_u_linear(z[r[:100]], z[r[100:]])
                  for r in Blocks(200, 25, n_x=100, offsets=True).enumerate()])
    assert res.statistic == pytest.approx(t[0], rel=1e-9)
    assert res.pvalue == pytest.approx(np.mean(t >= t[0] - 1e-9 * abs(t[0])), abs=1e-12)
    assert len(np.unique(np.round(t, 9))) > 800        # 70 splits alone: 35 values
    # GARCH returns whose volatility the persistence check sees: the plain blocks
    r = _garch(np.random.default_rng(5), 200)
    auto = auto_length([r[:, None]], (100, 100))
    assert auto.persistent > 2 and not auto.rotations
    res = kmtests.two_sample_test(r[:100], r[100:], blocks="auto", n_resamples=9999, rng=0)
    text = " ".join(str(res).split())
    assert "all 70 arrangements" in text and "rotated" not in text


def test_rotated_blocks_give_the_same_pvalue_whatever_batch_and_n_jobs():
    z = _ar1(np.random.default_rng(3), 300, 0.7)
    ps = {kmtests.two_sample_test(z[:150], z[150:], blocks="auto", n_resamples=999, rng=5,
                                  **kw).pvalue
          for kw in ({}, {"batch": 7}, {"batch": 100, "n_jobs": 2})}
    assert len(ps) == 1


# -- the command line ------------------------------------------------------------------------
def test_cli_blocks_auto_process_and_length_equal_the_api(capsys, tmp_path):
    import pandas as pd

    gen = np.random.default_rng(10)
    x, y = _ar1(gen, 200, 0.7), _ar1(gen, 200, 0.7)
    pd.DataFrame({"u": x, "v": y}).to_csv(tmp_path / "s.csv", index=False)
    base = ["independence", tmp_path / "s.csv", "--x", "u", "--y", "v", "--n-resamples", 199,
            "--seed", 3]
    got = run_json(capsys, *base, "--blocks", "auto")
    assert got["pvalue"] == kmtests.independence_test(x, y, blocks="auto", n_resamples=199,
                                                      rng=3).pvalue
    got = run_json(capsys, *base, "--blocks", "auto", "--method", "wild")
    assert got["pvalue"] == kmtests.independence_test(x, y, blocks="auto", method="wild",
                                                      n_resamples=199, rng=3).pvalue
    got = run_json(capsys, *base, "--method", "wild", "--process", "ar", "--length", 7)
    assert got["pvalue"] == kmtests.independence_test(
        x, y, method=WildBootstrap(process="ar", length=7.0, n_resamples=199, rng=3)).pvalue
    rc, _, err = run(capsys, *base, "--process", "ar")
    assert rc != 0 and "--method wild" in err
    rc, _, err = run(capsys, *base, "--blocks", "often")
    assert rc != 0 and "--blocks" in err


# -- level (slow) ------------------------------------------------------------------------------
def _band(reps):
    return (int(stats.binom.ppf(0.005, reps, ALPHA)), int(stats.binom.ppf(0.995, reps, ALPHA)))


@pytest.mark.slow
def test_blocks_auto_keeps_the_level_of_hsic_on_two_ar1_series():
    """Two independent AR(1) series, phi = 0.8, n = 200, 300 pairs: blocks='auto' inside
    the 99% binomial band (plain permutations reject about 45%)."""
    reps = 300
    lo, hi = _band(reps)
    gen = np.random.default_rng(30)
    rej = 0
    for i in range(reps):
        x, y = _ar1(gen, 200, 0.8), _ar1(gen, 200, 0.8)
        rej += kmtests.independence_test(x, y, blocks="auto", n_resamples=99,
                                         rng=i).pvalue <= ALPHA
    assert lo <= rej <= hi, f"{rej}/{reps} outside [{lo}, {hi}]"


@pytest.mark.slow
@pytest.mark.parametrize("phi", [0.5, 0.8])
def test_drift_test_keeps_the_level_between_two_windows_of_an_ar1_series(phi):
    """One AR(1) series, n = 200 (two windows of 100), 300 series: drift_test's default
    inside the 99% binomial band. At phi = 0.8 most series take 8 blocks of 25 with their
    random rotations (1750 arrangements; 499 of them drawn), the others the
    self-normalised test (fewer than 22 effective observations)."""
    reps = 300
    lo, hi = _band(reps)
    gen = np.random.default_rng(31)
    rej = 0
    for i in range(reps):
        z = _ar1(gen, 200, phi)
        rej += drift_test(z, n_resamples=99 if phi == 0.5 else 499,
                          rng=i).pvalue <= ALPHA
    assert lo <= rej <= hi, f"{rej}/{reps} outside [{lo}, {hi}]"


@pytest.mark.slow
def test_blocks_auto_between_two_windows_of_garch_returns_is_within_twice_the_level():
    """GARCH(1,1) returns, n = 200 (two windows of 100), 300 series: the persistence of
    the volatility lengthens the blocks (to n/8 where it is seen, in about half of the
    series at this n). Measured on these data sets: 28/300 (47/300 with the Politis-White
    rule alone, i.e. ``_PERSIST_Z = inf``); on the benchmark's: 24/300 (56/300 before).
    The level is not inside the 99% band on every set of data sets at this n (the
    volatility's memory is invisible in half of the series of 200); asserted: not below
    the band, at most twice the level."""
    reps = 300
    lo, _ = _band(reps)
    gen = np.random.default_rng(34)
    rej = 0
    for i in range(reps):
        z = _garch(gen, 200)
        rej += kmtests.two_sample_test(z[:100], z[100:], blocks="auto", n_resamples=99,
                                       rng=i).pvalue <= ALPHA
    assert lo <= rej <= 2 * ALPHA * reps, f"{rej}/{reps}"


def _arfima(gen, n, d=0.3, lags=3000):
    """ARFIMA(0, d, 0): the MA(infinity) filter truncated at `lags` (as the benchmark's)."""
    psi = np.empty(lags)
    psi[0] = 1.0
    for k in range(1, lags):
        psi[k] = psi[k - 1] * (k - 1 + d) / k
    return np.convolve(gen.normal(size=n + lags - 1), psi[::-1], mode="valid")


@pytest.mark.slow
def test_blocks_auto_keeps_the_level_of_hsic_on_two_arfima_series():
    """Two independent ARFIMA(0, 0.3, 0) series, n = 200, 300 pairs: 6 blocks (n/6) keep
    HSIC inside the 99% binomial band (8 blocks of 25: 26/300 on the benchmark's pairs)."""
    reps = 300
    lo, hi = _band(reps)
    gen = np.random.default_rng(38)
    rej = 0
    for i in range(reps):
        x, y = _arfima(gen, 200), _arfima(gen, 200)
        rej += kmtests.independence_test(x, y, blocks="auto", n_resamples=99,
                                         rng=i).pvalue <= ALPHA
    assert lo <= rej <= hi, f"{rej}/{reps} outside [{lo}, {hi}]"


@pytest.mark.slow
def test_wild_bootstrap_on_a_declared_series_is_within_twice_the_level():
    """The AR wild bootstrap with the automatic length (method='wild', blocks='auto'),
    HSIC of two AR(1) series, phi = 0.5, n = 200, 300 pairs: benchmarks/README.md
    measured 21/300 on other data sets (and 27/300 at phi = 0.8: it over-rejects as the
    dependence grows). Asserted: not below the band, at most twice the level."""
    reps = 300
    lo, _ = _band(reps)
    gen = np.random.default_rng(32)
    rej = 0
    for i in range(reps):
        x, y = _ar1(gen, 200, 0.5), _ar1(gen, 200, 0.5)
        rej += kmtests.independence_test(x, y, blocks="auto", method="wild", n_resamples=99,
                                         rng=i).pvalue <= ALPHA
    assert lo <= rej <= 2 * ALPHA * reps, f"{rej}/{reps}"


def test_cross_dependence_enumerates_every_order_of_the_blocks_when_they_are_few():
    """4 blocks of 5: the 24 orders are enumerated and the p-value is the exact rank of the
    weighted sum among them (brute force over itertools.permutations)."""
    import itertools

    gen = np.random.default_rng(11)
    n, M, bw = 20, 2, 1.0
    x, y = gen.normal(size=n), gen.normal(size=n)
    res = cross_dependence_test(x, y, max_lag=M, blocks=5, bandwidth_x=bw, bandwidth_y=bw,
                                n_resamples=999)
    assert res.exact and res.block_length == 5 and res.rule == "given"
    K, L = _gauss(x, bw), _gauss(y, bw)

    def total(p):
        out = 0.0
        for j in range(M + 1):
            m = n - j
            k = K[j:, j:]
            lp = L[np.ix_(p, p)][:m, :m]
            h = np.eye(m) - 1.0 / m
            out += (n - j) / n * np.trace(k @ h @ lp @ h) / m**2
        return out

    blocks = [np.arange(5 * b, 5 * b + 5) for b in range(4)]
    sums = np.array([total(np.concatenate([blocks[i] for i in order]))
                     for order in itertools.permutations(range(4))])
    assert res.statistic == pytest.approx(sums[0], rel=1e-12)
    assert res.pvalue == pytest.approx(np.mean(sums >= sums[0] - 1e-12))
    # combine="max": the smallest per-lag p-value among the same 24 orders
    mx = cross_dependence_test(x, y, max_lag=M, blocks=5, bandwidth_x=bw, bandwidth_y=bw,
                               combine="max", n_resamples=999)
    assert mx.exact and np.array_equal(mx.statistics, res.statistics)
    assert np.allclose(mx.pvalues, res.pvalues)


def test_cross_dependence_is_a_plan_with_its_refusals():
    gen = np.random.default_rng(12)
    x, y = gen.normal(size=60), gen.normal(size=60)
    base = dict(max_lag=1, blocks=6, n_resamples=49, rng=0)
    assert cross_dependence_test(x, y, **base).pvalue == \
        cross_dependence_test(x, y, batch=7, **base).pvalue
    assert cross_dependence_test(x, y, max_lag=0, blocks=6, n_resamples=49, rng=0).statistics.size == 1
    with pytest.raises(ValueError, match="combine"):
        cross_dependence_test(x, y, combine="mean", **base)
    with pytest.raises(ValueError, match="blocks"):
        cross_dependence_test(x, y, max_lag=1, blocks=None)
    frame = cross_dependence_test(x, y, **base).members_frame()
    assert list(frame["lag"]) == [0, 1]
