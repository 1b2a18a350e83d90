"""Issue 31: the default Nyström rank from the spectrum, and the per-call helpers of the
gamma test (the serial check's ranks, the median heuristic's order statistics) against
their NumPy references, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import kmtests
from kmtests import _serial, kernels
from kmtests.engines.lowrank import AUTO_TRACE_SHARE, DEFAULT_FEATURES, nystrom_features
from kmtests.kernels import Gaussian


def test_auto_rank_is_the_smallest_keeping_the_trace_share_every_point_a_landmark():
    z = np.random.default_rng(3).normal(size=(150, 3))
    k = Gaussian(bandwidth=1.5)
    f = nystrom_features(k, z, DEFAULT_FEATURES, np.random.default_rng(1), AUTO_TRACE_SHARE)
    # brute force: every point a landmark, so the Nyström kernel is K and the kept part
    # is its best approximation of the smallest rank holding the share of the trace
    K = k.gram(z)
    s, U = np.linalg.eigh(0.5 * (K + K.T))
    s, U = s[::-1], U[:, ::-1]
    r = int(np.argmax(np.cumsum(s) >= AUTO_TRACE_SHARE * s.sum()) + 1)
    assert f.rank == r < 150
    best = (U[:, :r] * s[:r]) @ U[:, :r].T
    assert np.allclose(f.gram(), best, atol=1e-8 * s[0])
    dropped = np.trace(K) - np.trace(f.gram())
    assert 0 < dropped <= (1 - AUTO_TRACE_SHARE) * np.trace(K) * (1 + 1e-9)


def test_the_default_nystrom_engine_states_its_rank_and_n_features_keeps_the_old_one():
    gen = np.random.default_rng(0)
    x, y = gen.normal(size=(200, 5)), gen.normal(size=(200, 5))
    auto = kmtests.two_sample_test(x, y, engine="nystrom", n_resamples=19, rng=0)
    rank = int(auto.engine_info.split("rank ")[1].split(" ")[0])
    assert rank < DEFAULT_FEATURES  # was 200: every landmark's eigenvalue kept
    assert "holding 99.9% of the trace" in auto.engine_info
    full = kmtests.two_sample_test(x, y, engine="nystrom", n_features=200, n_resamples=19,
                                   rng=0)
    assert "rank 200," in full.engine_info and "of the trace" not in full.engine_info


def _ranks_reference(a: np.ndarray) -> np.ndarray:
    out = np.empty(a.shape)
    for j in range(a.shape[1]):
        _, inverse, counts = np.unique(a[:, j], return_inverse=True, return_counts=True)
        out[:, j] = (np.cumsum(counts) - (counts - 1) / 2.0)[inverse]
    return out


@pytest.mark.parametrize("seed", range(6))
def test_ranks_and_paired_lag1_are_those_of_the_column_by_column_reference(seed):
    gen = np.random.default_rng(seed)
    n = int(gen.integers(5, 120))
    x = gen.normal(size=(n, 3))
    y = np.round(gen.standard_t(2, size=(n, 2)))  # ties
    for a in (x, y, np.round(x, 1)):
        assert np.array_equal(_serial._ranks(a), _ranks_reference(a))
    rx, ry = _serial._lag1_many([x, y], ())
    assert np.array_equal(rx, _serial._lag1(x, ())) and np.array_equal(ry, _serial._lag1(y, ()))
    xs = x.copy()
    xs[:, 1] = np.sort(xs[:, 1])  # a sorted column: zeros for x only
    rx, ry = _serial._lag1_many([xs, y], ())
    assert not rx.any() and np.array_equal(ry, _serial._lag1(y, ()))


@pytest.mark.parametrize("n, d", [(2, 1), (3, 1), (50, 1), (201, 2), (200, 8), (60, 9)])
def test_median_of_pairs_is_np_median_of_the_pairs(n, d):
    gen = np.random.default_rng(n + d)
    for z in (gen.normal(size=(n, d)), np.round(gen.normal(size=(n, d))),
              (gen.random((n, d)) < 0.2).astype(float)):
        want = kernels._median_sq(kernels._pair_sqdist(z))
        assert kernels._median_of_pairs(z) == want


@pytest.mark.parametrize("m", [4, 5, 50, 201])
def test_unshift_of_centred_ranks_reads_the_loop_s_numbers(m):
    gen = np.random.default_rng(m)
    cols = np.column_stack([gen.normal(size=m), np.round(gen.normal(size=m)),
                            np.r_[np.zeros(m // 2), np.ones(m - m // 2)],  # a shift
                            np.zeros(m)])  # all ties: sums of 0
    ranks = _serial._ranks(cols) - (m + 1) / 2.0
    fast = _serial._unshift(ranks, exact_sums=True)
    loop = _serial._unshift(ranks)
    assert np.array_equal(fast, loop)
    assert np.array_equal(np.signbit(fast), np.signbit(loop))


@pytest.mark.slow
def test_level_of_the_default_nystrom_rank():
    # the rank read off the landmarks' spectrum is a function of the pooled sample (and of
    # `rng`): the permutation test of the approximate statistic keeps its level
    from scipy import stats

    reps, rej = 300, 0
    for r in range(reps):
        g = np.random.default_rng(2000 + r)
        x, y = g.normal(size=(40, 4)), g.normal(size=(40, 4))
        rej += kmtests.two_sample_test(x, y, engine="nystrom", n_resamples=99,
                                       rng=r).pvalue <= 0.05
    lo, hi = stats.binom.ppf([0.005, 0.995], reps, 0.05)
    assert lo <= rej <= hi, rej
