"""The permutation machinery: exact enumeration, p-values, reproducibility."""

import itertools
import math

import numpy as np
import pytest

import kmtests
from kmtests.null import permutation as _resampling
from kmtests.engines.hsic import PairedGrams, hsic_statistics
from kmtests.engines._jit_hsic import pair_sums, pair_sums_reference
from kmtests.engines.mmd import PooledGram, mmd_statistics
from kmtests.estimators import KME
from kmtests.kernels import Gaussian

from . import _naive


def test_exact_two_sample_pvalue_equals_brute_force(rng):
    x, y = rng.normal(size=(4, 2)), rng.normal(0.7, size=(5, 2))
    z = np.vstack([x, y])
    k = _naive.k_gauss(1.0)
    obs = _naive.mmd2_u(x, y, k)
    null = [_naive.mmd2_u(z[list(c)], z[[i for i in range(9) if i not in c]], k)
            for c in itertools.combinations(range(9), 4)]
    p_ref = np.mean(np.array(null) >= obs - 1e-12)
    res = kmtests.two_sample_test(x, y, bandwidth=1.0)
    assert res.exact and res.n_resamples == math.comb(9, 4) == 126
    assert res.pvalue == pytest.approx(p_ref, abs=1e-15)
    np.testing.assert_allclose(np.sort(res.null_distribution), np.sort(null), rtol=1e-10,
                               atol=1e-13)


def test_exact_independence_pvalue_equals_brute_force(rng):
    x, y = rng.normal(size=(5, 1)), rng.normal(size=(5, 1))
    kx, ky = _naive.k_gauss(0.8), _naive.k_gauss(1.3)
    obs = _naive.hsic_b(x, y, kx, ky)
    null = [_naive.hsic_b(x, y[list(p)], kx, ky) for p in itertools.permutations(range(5))]
    res = kmtests.independence_test(x, y, bandwidth_x=0.8, bandwidth_y=1.3)
    assert res.exact and res.n_resamples == 120
    assert res.pvalue == pytest.approx(np.mean(np.array(null) >= obs - 1e-12), abs=1e-15)


def test_monte_carlo_pvalue_formula(rng):
    x, y = rng.normal(size=(20, 1)), rng.normal(size=(20, 1))
    res = kmtests.two_sample_test(x, y, n_resamples=99, rng=3)
    assert not res.exact
    count = np.count_nonzero(res.null_distribution >= res.statistic - 1e-12)
    assert res.count == count
    assert res.pvalue == (count + 1) / 100


def test_permuted_statistics_equal_naive_per_split(rng):
    x, y = rng.normal(size=(6, 2)), rng.normal(size=(4, 2))
    z = np.vstack([x, y])
    pg = PooledGram.from_gram(Gaussian(bandwidth=1.0).gram(z))
    perms = _resampling.random_permutations(rng, 10, 30)
    k = _naive.k_gauss(1.0)
    for unbiased, ref in ((True, _naive.mmd2_u), (False, _naive.mmd2_b)):
        got = mmd_statistics(pg, perms, 6, KME(), unbiased)
        want = [ref(z[p[:6]], z[p[6:]], k) for p in perms]
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)


def test_general_weight_path_equals_uniform_path(rng):
    """The split-by-split path (used by non-uniform estimators) agrees with block sums."""

    class SlowKME(KME):
        uniform = False  # force the general path

    z = rng.normal(size=(12, 2))
    pg = PooledGram.from_gram(Gaussian(bandwidth=1.0).gram(z))
    perms = _resampling.random_permutations(rng, 12, 15)
    np.testing.assert_allclose(mmd_statistics(pg, perms, 5, SlowKME(), False),
                               mmd_statistics(pg, perms, 5, KME(), False), rtol=1e-11)
    x, y = rng.normal(size=(9, 1)), rng.normal(size=(9, 1))
    pgh = PairedGrams.from_grams(Gaussian(bandwidth=1.0).gram(x), Gaussian(bandwidth=1.0).gram(y))
    perms = _resampling.random_permutations(rng, 9, 10)
    np.testing.assert_allclose(hsic_statistics(pgh, perms, SlowKME(), False),
                               hsic_statistics(pgh, perms, KME(), False), rtol=1e-11)


def test_jitted_pair_sums_equal_reference_and_py_func(rng):
    n = 13
    A = rng.normal(size=(n, n)); A = A + A.T
    B = rng.normal(size=(n, n)); B = B + B.T
    perms = _resampling.random_permutations(rng, n, 17)
    out = np.empty(17)
    pair_sums(A, B, perms, out)
    np.testing.assert_allclose(out, pair_sums_reference(A, B, perms), rtol=1e-12)
    out2 = np.empty(17)
    pair_sums.py_func(A, B, perms, out2)
    np.testing.assert_allclose(out, out2, rtol=1e-12)


def test_batches_draw_the_same_permutations():
    a = _resampling.random_permutations(np.random.default_rng(5), 11, 10)
    g = np.random.default_rng(5)
    b = np.vstack([_resampling.random_permutations(g, 11, 3),
                   _resampling.random_permutations(g, 11, 7)])
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.int64 and a.flags.c_contiguous


@pytest.mark.parametrize("test", ["two_sample", "independence"])
def test_bit_identical_across_batch_and_n_jobs(rng, test):
    x, y = rng.normal(size=(40, 2)), rng.normal(size=(40, 2))
    fn = kmtests.two_sample_test if test == "two_sample" else kmtests.independence_test
    ref = fn(x, y, n_resamples=500, rng=11)
    for kw in ({"batch": 1}, {"batch": 7}, {"batch": 64}, {"batch": 1000},
               {"n_jobs": 1}, {"n_jobs": 2}, {"n_jobs": -1, "batch": 33}):
        res = fn(x, y, n_resamples=500, rng=11, **kw)
        assert res.pvalue == ref.pvalue
        assert res.statistic == ref.statistic
        np.testing.assert_array_equal(res.null_distribution, ref.null_distribution)


def test_rng_types_reproducible(rng):
    x, y = rng.normal(size=(15, 1)), rng.normal(size=(18, 1))
    a = kmtests.two_sample_test(x, y, n_resamples=200, rng=7)
    b = kmtests.two_sample_test(x, y, n_resamples=200, rng=np.random.SeedSequence(7))
    c = kmtests.two_sample_test(x, y, n_resamples=200, rng=np.random.default_rng(7))
    assert a.pvalue == b.pvalue == c.pvalue
    assert a.seed == 7 and b.seed == 7 and c.seed is None
    d = kmtests.two_sample_test(x, y, n_resamples=200, rng=8)
    assert not np.array_equal(a.null_distribution, d.null_distribution)


def test_ties_are_counted(rng):
    """Identical samples: every split of a constant-by-block Gram gives ties."""
    x = np.array([[0.0], [1.0], [0.0], [1.0]])
    y = np.array([[1.0], [0.0], [1.0], [0.0]])
    res = kmtests.two_sample_test(x, y, bandwidth=1.0)
    # the observed split is balanced: MMD is at its minimum, so every split ties or exceeds
    assert res.exact and res.pvalue == 1.0


def test_exact_switch_is_reported_not_silent(rng):
    x, y = rng.normal(size=(3, 1)), rng.normal(size=(3, 1))
    res = kmtests.two_sample_test(x, y, n_resamples=20)
    assert res.exact and res.n_resamples == 20  # C(6,3) = 20 <= 20
    res = kmtests.two_sample_test(x, y, n_resamples=19, rng=0)
    assert not res.exact and res.n_resamples == 19
    text = str(kmtests.two_sample_test(x, y, n_resamples=20)).replace("\n\t", " ")  # unwrap
    assert "exact permutation p-value (all 20 arrangements)" in text


def test_a_long_permutation_loop_is_announced_early(monkeypatch):
    # the second batch's time projects the whole loop; a projection above SLOW_SECONDS
    # warns with the faster alternatives, before most of the loop has run
    import warnings

    import kmtests
    from kmtests import _guards

    monkeypatch.setattr(_guards, "SLOW_SECONDS", 0.0)
    gen = np.random.default_rng(0)
    x, y = gen.normal(size=(300, 2)), gen.normal(size=(300, 2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = kmtests.two_sample_test(x, y, n_resamples=4000, rng=1)
    slow = [w for w in caught if issubclass(w.category, kmtests.SlowTestWarning)]
    assert len(slow) == 1
    assert "4000 permutations, measured on the first" in str(slow[0].message)
    assert "n_resamples=999" in str(slow[0].message) and "nystrom" in str(slow[0].message)
    # the warning does not change the test
    monkeypatch.setattr(_guards, "SLOW_SECONDS", 1e9)
    assert kmtests.two_sample_test(x, y, n_resamples=4000, rng=1).pvalue == res.pvalue


def test_short_first_batches_do_not_change_the_p_value():
    import kmtests

    gen = np.random.default_rng(2)
    x, y = gen.normal(size=(40, 1)), gen.normal(0.4, 1.0, size=(45, 1))
    ref = kmtests.two_sample_test(x, y, n_resamples=999, rng=3, batch=999).pvalue
    for batch in (7, 64, 500):
        assert kmtests.two_sample_test(x, y, n_resamples=999, rng=3, batch=batch).pvalue == ref


@pytest.mark.parametrize("n", [5, 999, 1000, 4001])
def test_rowwise_shuffles_are_numpys_permuted_draws(n):
    # permuted_rows shuffles long rows one by one (faster); the draws must be exactly
    # those of Generator.permuted along the rows, and leave the stream where it left it
    from kmtests._rng import permuted_rows

    a_gen, b_gen = np.random.default_rng(11), np.random.default_rng(11)
    a = permuted_rows(a_gen, n, 7)
    b = b_gen.permuted(np.tile(np.arange(n, dtype=np.int64), (7, 1)), axis=1)
    assert a.dtype == np.int64 and a.flags.c_contiguous
    np.testing.assert_array_equal(a, b)
    assert a_gen.integers(2**62) == b_gen.integers(2**62)
