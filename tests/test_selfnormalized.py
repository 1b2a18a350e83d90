"""The self-normalised MMD of two windows of a series (kmtests.statistics.selfnormalized):
its value against a brute-force computation of the partial sums, its values on
arrangements against the statistic of the rearranged data, reproducibility, refusals,
and (slow) its level with ``blocks="auto"`` on autocorrelated windows."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from kmtests import SerialDependenceWarning, two_sample_test
from kmtests.kernels import Gaussian
from kmtests.problems.schemes import Blocks
from kmtests.statistics.selfnormalized import SelfNormalizedMMD, normaliser_matrix


def _ar1(gen: np.random.Generator, n: int, phi: float) -> np.ndarray:
    e = gen.normal(size=n)
    s = np.empty(n)
    s[0] = e[0]
    for t in range(1, n):
        s[t] = phi * s[t - 1] + np.sqrt(1 - phi * phi) * e[t]
    return s


def _brute_features(f: np.ndarray, m: int) -> float:
    """``||mean_x - mean_y||^2 / V`` from explicit features `f` (rows), by loops."""
    fx, fy = f[:m], f[m:]
    k = fy.shape[0]
    num = float(np.sum((fx.mean(axis=0) - fy.mean(axis=0)) ** 2))
    cx, cy = fx - fx.mean(axis=0), fy - fy.mean(axis=0)
    vx = sum(float(np.sum(cx[:j].sum(axis=0) ** 2)) for j in range(1, m + 1)) / m ** 3
    vy = sum(float(np.sum(cy[j:].sum(axis=0) ** 2)) for j in range(k)) / k ** 3
    return num / (vx + vy)


def _brute_gram(K: np.ndarray, m: int) -> float:
    """The same from a Gram matrix: squared norms of partial sums as sums of K's entries."""
    n = K.shape[0]
    k = n - m
    c = np.r_[np.full(m, 1.0 / m), np.full(k, -1.0 / k)]
    v = 0.0
    for lo, size, forward in ((0, m, True), (m, k, False)):
        idx = np.arange(lo, lo + size)
        Kw = K[np.ix_(idx, idx)]
        Kc = Kw - Kw.mean(axis=0) - Kw.mean(axis=1)[:, None] + Kw.mean()
        for j in range(1, size + 1):
            part = np.arange(j) if forward else np.arange(size - j, size)
            v += float(Kc[np.ix_(part, part)].sum()) / size ** 3
    return float(c @ K @ c) / v


def test_linear_kernel_matches_explicit_partial_sums():
    gen = np.random.default_rng(0)
    z = gen.normal(size=(23, 2)).cumsum(axis=0) * 0.3 + gen.normal(size=(23, 2))
    res = two_sample_test(z[:10], z[10:], kernel="linear", statistic="selfnormalized",
                          n_resamples=19, rng=0)
    assert res.statistic == pytest.approx(_brute_features(z, 10), rel=1e-10)


def test_gaussian_kernel_matches_the_gram_matrix_brute_force():
    gen = np.random.default_rng(1)
    z = _ar1(gen, 31, 0.6)
    res = two_sample_test(z[:17], z[17:], statistic="selfnormalized", bandwidth=0.8,
                          n_resamples=19, rng=0)
    K = Gaussian(bandwidth=0.8).gram(z[:, None])
    assert res.statistic == pytest.approx(_brute_gram(K, 17), rel=1e-10)


def test_normaliser_matrix_is_the_partial_sums():
    gen = np.random.default_rng(2)
    f = gen.normal(size=(9, 3))
    K = f @ f.T
    om = normaliser_matrix(5, 4)
    c = np.r_[np.full(5, 0.2), np.full(4, -0.25)]
    assert float(c @ K @ c) / float(np.vdot(K, om)) == pytest.approx(
        _brute_features(f, 5), rel=1e-12)


def test_values_of_arrangements_are_the_statistic_of_the_rearranged_series():
    gen = np.random.default_rng(3)
    z = _ar1(gen, 60, 0.7)
    stat = SelfNormalizedMMD(Gaussian(bandwidth=1.0))
    from kmtests.problems.data import two_sample_problem

    problem = two_sample_problem(z[:30], z[30:])
    prep = stat.prepare(problem, None, "pooled", None)  # type: ignore[arg-type]
    perms = Blocks(60, 6, n_x=30).random(np.random.default_rng(0), 5)
    got = prep.values(perms, None).stat
    K = Gaussian(bandwidth=1.0).gram(z[:, None])
    want = [_brute_gram(K[np.ix_(p, p)], 30) for p in perms]
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_same_pvalue_whatever_the_batch_and_an_exact_enumeration():
    gen = np.random.default_rng(4)
    z = _ar1(gen, 120, 0.5)
    z[60:] += 0.8
    p = [two_sample_test(z[:60], z[60:], statistic="selfnormalized", blocks=10,
                         n_resamples=299, rng=7, batch=b).pvalue for b in (None, 17, 64)]
    assert p[0] == p[1] == p[2]
    # 8 blocks of 15: all 70 splits, the p-value a multiple of 1/70
    res = two_sample_test(z[:60], z[60:], statistic="selfnormalized", blocks=15,
                          n_resamples=999, rng=7)
    assert round(res.pvalue * 70, 9) == round(res.pvalue * 70)
    assert res.pvalue <= 0.05


def test_refusals_are_clear():
    gen = np.random.default_rng(5)
    z = gen.normal(size=40)
    with pytest.raises(ValueError, match="estimator"):
        two_sample_test(z[:20], z[20:], statistic="selfnormalized", estimator="skmse")
    with pytest.raises(ValueError, match="no gamma approximation"):
        two_sample_test(z[:20], z[20:], statistic="selfnormalized", method="gamma")
    with pytest.raises(ValueError, match="method='permutation'"):  # not kept (module docs)
        two_sample_test(z[:20], z[20:], statistic="selfnormalized", blocks=5,
                        method="wild")
    flat = np.r_[np.zeros(20), np.ones(20)]
    with pytest.raises(ValueError, match="vary within each window"):
        two_sample_test(flat[:20], flat[20:], statistic="selfnormalized", kernel="linear",
                        n_resamples=19, rng=0)


@pytest.mark.slow
@pytest.mark.parametrize("phi", [0.5, 0.8])
def test_level_on_ar1_windows_with_automatic_blocks(phi):
    """Two windows of one stationary AR(1) series (n = 200): the rejections at 5% inside
    the 99% binomial band of 300 data sets (benchmarks/README.md: 10/300 and 15/300 on
    the benchmark's data sets; at phi = 0.95, 31/300, it is not)."""
    gen = np.random.default_rng(20261127)
    reps, hits = 300, 0
    for i in range(reps):
        z = _ar1(gen, 200, phi)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SerialDependenceWarning)
            p = two_sample_test(z[:100], z[100:], statistic="selfnormalized",
                                blocks="auto", n_resamples=199, rng=i).pvalue
        hits += p <= 0.05
    lo, hi = stats.binom.ppf(0.005, reps, 0.05), stats.binom.ppf(0.995, reps, 0.05)
    assert lo <= hits <= hi, hits

