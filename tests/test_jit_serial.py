"""The jitted sums of the automatic length (kmtests._jit_serial) against the NumPy functions
of kmtests._serial, on random series: the same numbers up to rounding, the same lengths."""

import math

import numpy as np
import pytest

import kmtests._serial as serial
from kmtests._jit_serial import (kernel_features, median_distance, politis_white_column,
                                 rule_sums)


def _ar1(gen, n, phi, d=1):
    e = gen.normal(size=(n, d))
    x = np.empty_like(e)
    x[0] = e[0]
    for t in range(1, n):
        x[t] = phi * x[t - 1] + e[t]
    return x


def _columns(gen):
    """Series of every kind the rule meets: i.i.d., AR(1) up to phi = 0.99, a sine, a
    constant, ties, the shortest allowed (8), and a short strongly dependent one."""
    yield gen.normal(size=500)
    for phi in (-0.5, 0.3, 0.8, 0.95, 0.99):
        for n in (8, 9, 30, 200, 2000):
            yield _ar1(gen, n, phi)[:, 0]
    yield np.sin(np.arange(200) / 5.0)
    yield np.full(50, 3.0)
    yield np.round(gen.normal(size=300))
    yield np.cumsum(gen.normal(size=40))


def test_politis_white_column_is_the_numpy_rule():
    gen = np.random.default_rng(0)
    for x in _columns(gen):
        want = serial.politis_white(x)
        got = politis_white_column(np.ascontiguousarray(x, dtype=np.float64))
        assert got == pytest.approx(want, rel=1e-10), (len(x), want, got)
    assert politis_white_column(np.full(50, 3.0)) == (1.0, 1.0)


def _numpy_sums(series, lag1_cols, arrays, windows):
    """The NumPy functions' numbers, as auto_length composed them before the jitted call."""
    sb, cb = serial.politis_white_columns(series)
    r1 = serial._lag1_of(series[:, lag1_cols])
    vol = np.hstack([serial.volatility_series(a, windows) for a in arrays])
    return max(1.0, sb.max()), max(1.0, cb.max()), serial.persistence(series, vol), r1


@pytest.mark.parametrize("n", [9, 16, 64, 200, 1001])
@pytest.mark.parametrize("windows", [False, True])
def test_rule_sums_are_the_numpy_sums(n, windows):
    gen = np.random.default_rng(n + windows)
    x = _ar1(gen, n, 0.7, 2)
    y = np.abs(_ar1(gen, n, 0.9)) * gen.normal(size=(n, 1))   # volatility clustering
    arrays = [x] if windows else [x, y]
    wins = (n // 3, n - n // 3) if windows else ()
    series = np.hstack([serial.feature_series(a, wins) for a in arrays])
    lag1_cols = [0, 1] if windows else [0, 1, 5]
    m = math.ceil(math.sqrt(n))
    far, near = (((m + 1, 2 * m), (serial._SHORT + 1, serial._SHORT + m)) if n >= 4 * m
                 else ((0, -1), (0, -1)))
    edges = np.cumsum((0,) + (wins or (n,))).astype(np.int64)
    vol = np.hstack([serial._volatility_data(a) for a in arrays])
    got = rule_sums(np.ascontiguousarray(series.T), np.asarray(lag1_cols, dtype=np.int64),
                    np.ascontiguousarray(vol.T), edges, far, near)
    want = _numpy_sums(series, lag1_cols, arrays, wins)
    assert got == pytest.approx(want, rel=1e-10, abs=1e-12), (got, want)
    if n >= 4 * m and not windows:
        assert want[2] > 0.0   # the persistence sums ran (and can fail)


@pytest.mark.filterwarnings("ignore::kmtests.SerialDependenceWarning")
def test_auto_length_chooses_what_the_numpy_rule_chooses():
    """The lengths of the rule from the NumPy functions and from the jitted sums."""
    gen = np.random.default_rng(7)
    for i in range(40):
        n = int(gen.integers(16, 700))
        phi = gen.uniform(-0.5, 0.97)
        x, y = _ar1(gen, n, phi, int(gen.integers(1, 4))), _ar1(gen, n, phi)
        wins = (n // 2, n - n // 2) if i % 2 else ()
        arrays = [x] if wins else [x, y]
        series = [serial.feature_series(a, wins) for a in arrays]
        lag1_cols, count = [], 0
        for a, s in zip(arrays, series):
            lag1_cols += list(range(count, count + min(a.shape[1], 5)))
            count += s.shape[1]
        b_sb, b_cb, z, r1 = _numpy_sums(np.hstack(series), lag1_cols, arrays, wins)
        auto = serial.auto_length(arrays, wins)
        wanted = math.ceil(3 * b_cb)
        if z > serial._PERSIST_Z:
            wanted = max(wanted, 3 * math.ceil(math.sqrt(n)))
        assert auto.wanted == wanted and auto.block == max(1, min(wanted, auto.cap)), i
        assert auto.multiplier == pytest.approx(max(1.0, min(b_sb, n / 4)), rel=1e-12)
        assert auto.persistent == pytest.approx(z, rel=1e-10, abs=1e-12)
        assert auto.effective == pytest.approx(n * (1 - r1) / (1 + r1), rel=1e-12)
        assert auto.n_series == count


def _median_distance_numpy(sub):
    """The median heuristic's distance as NumPy computed it: the median of the roots of
    the squared distances (clipped at 0) of the strict upper triangle."""
    sq = np.sum(sub * sub, axis=1)
    dist = sq[:, None] + sq[None, :] - 2.0 * sub @ sub.T
    v = np.maximum(dist[np.triu_indices(sub.shape[0], 1)], 0.0)
    return float(np.median(np.sqrt(v))) if v.size else 1.0


@pytest.mark.parametrize("d", [1, 2, 3, 7, 12])
def test_median_distance_is_numpys_bit_for_bit(d):
    gen = np.random.default_rng(d)
    for trial in range(100):
        m = int(gen.integers(1, 101))
        sub = gen.normal(size=(m, d)) * gen.uniform(0.01, 10.0)
        if trial % 4 == 0:
            sub = np.round(sub)          # ties and zero distances
        got = median_distance(np.sum(sub * sub, axis=1), (2.0 * sub) @ sub.T)
        assert got == _median_distance_numpy(sub), (m, trial)


def _features_numpy(proj, phase, windows):
    feats = np.cos(proj + phase)
    raw = np.einsum("ij,ij->j", feats, feats)
    if windows:
        edges = np.cumsum((0,) + windows)
        for lo, hi in zip(edges[:-1], edges[1:]):
            feats[lo:hi] -= feats[lo:hi].mean(axis=0)
    feats = feats - feats.mean(axis=0)
    tol = (feats.shape[0] * np.finfo(np.float64).eps) ** 2
    feats[:, np.einsum("ij,ij->j", feats, feats) <= tol * raw] = 0.0
    return feats


@pytest.mark.parametrize("windows", [(), (60, 140), (30, 50, 120)])
def test_kernel_features_are_the_numpy_steps(windows):
    gen = np.random.default_rng(len(windows))
    z = np.r_[np.full((100, 1), 0.3), gen.normal(size=(100, 1))]
    proj = z @ gen.normal(size=(1, 64))
    proj[:, 5] = 1.25                            # a constant feature
    phase = gen.uniform(0.0, 2.0 * np.pi, 64)
    edges = np.cumsum((0,) + windows).astype(np.int64)
    got = kernel_features(proj.copy(), phase, edges)
    want = _features_numpy(proj, phase, windows)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
    assert not np.any(got[:, 5])
    if windows == (60, 140):
        # a feature constant in each window (the data are constant in the first 100 rows
        # and the window ends at row 60): zeros, not the centring's rounding noise
        step = kernel_features(np.r_[np.zeros((60, 2)), np.ones((140, 2))], phase[:2],
                               edges)
        assert not np.any(step)
