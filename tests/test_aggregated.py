"""Aggregated tests (MMDAgg/HSICAgg and MMD-FUSE combinations) over collections.

The combination is checked against a literal double loop over arrangements,
the reported member thresholds against the test's decision, the members
against the single tests run with the same seed (the same permutations), and
the FUSE statistic against the published formula written out.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kmtests
from kmtests.null.combine import weights as _weights
from kmtests.aggregated import (bandwidth_grid, fuse_statistic, lambda_grid,
                                member_rejections, minp_combination)

from ._naive import k_gauss, mmd2_u


def literal_minp(T: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray]:
    """p_j(b) = #{c: T_cj >= T_bj}/A; rows ordered by their sorted p_j(b)/w_j (Python's
    lexicographic list order); p = #{b: row b <= row 0}/A."""
    A, M = T.shape
    P = np.zeros((A, M))
    for b in range(A):
        for j in range(M):
            P[b, j] = sum(1 for c in range(A) if T[c, j] >= T[b, j]) / A
    # exact rational keys (counts times the weights' common scale) avoid rounding ties
    key = [sorted(round(P[b, j] * A) / w[j] for j in range(M)) for b in range(A)]
    return sum(1 for b in range(A) if key[b] <= key[0]) / A, P[0]


@pytest.mark.parametrize("seed", range(4))
def test_minp_against_a_literal_loop(seed):
    gen = np.random.default_rng(seed)
    T = gen.normal(size=(40, 5))
    T[:, 2] = np.round(T[:, 2])  # ties in one member
    w = _weights("uniform" if seed % 2 else "decreasing", 5)
    p, pm, u, count = minp_combination(T, np.zeros_like(T), w, 0.05)
    p_ref, pm_ref = literal_minp(T, w)
    assert p == pytest.approx(p_ref, abs=1e-15)
    np.testing.assert_allclose(pm, pm_ref, atol=1e-15)
    assert count == round(p * 40)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(1, 6), a=st.integers(5, 80),
       alpha=st.sampled_from([0.01, 0.05, 0.1, 0.2]),
       kind=st.sampled_from(["uniform", "increasing", "decreasing", "centred"]),
       discrete=st.booleans())
def test_a_member_rejects_exactly_when_the_test_does(seed, m, a, alpha, kind, discrete):
    """The reported threshold u_alpha is the level correction: p_j <= u w_j makes the test
    reject, and some member rejects iff the aggregated p-value <= alpha."""
    gen = np.random.default_rng(seed)
    T = gen.normal(size=(a, m))
    if discrete:
        T = np.round(T * 2)
    w = _weights(kind, m)
    p, pm, u, _ = minp_combination(T, np.zeros_like(T), w, alpha)
    if np.any(pm <= u * w):
        assert p <= alpha
    assert bool(np.any(member_rejections(pm, w, u, p, alpha))) == (p <= alpha)


def test_minp_level_is_exact_under_exchangeability():
    """Rows exchangeable: the p-value is uniform on {1/A, ..., 1} — also with few
    arrangements, where the minima S of the members' ranks tie often (without the
    tie-break this rate is 0.038 at a nominal 0.10)."""
    gen = np.random.default_rng(1)
    A, M, reps = 20, 4, 4000
    rej = sum(minp_combination(gen.normal(size=(A, M)) @ np.triu(np.ones((M, M))),
                               np.zeros((A, M)), _weights("uniform", M), 0.1)[0] <= 0.1
              for _ in range(reps))
    assert abs(rej / reps - 0.10) < 3 * math.sqrt(0.09 / reps)


def test_fuse_statistic_is_the_published_soft_maximum():
    T = np.array([[0.1, -0.3, 0.2], [0.0, 0.5, -0.1]])
    N = np.array([0.5, 1.0, 2.0])
    w = np.array([0.2, 0.3, 0.5])
    nu = 3.0
    ref = [math.log(sum(w[j] * math.exp(nu * T[b, j] / N[j]) for j in range(3)))
           for b in range(2)]
    np.testing.assert_allclose(fuse_statistic(T, N, w, nu), ref, rtol=1e-14)


def test_fuse_member_normaliser_is_the_authors():
    """nu T/N = n (n-1) sqrt(n (n-1)) MMD^2_u / ||K - diag K||_F (MMD-FUSE code, m = n)."""
    gen = np.random.default_rng(2)
    x, y = gen.normal(size=(8, 2)), gen.normal(size=(8, 2)) + 0.5
    bw = 1.2
    res = kmtests.aggregated_two_sample_test(x, y, bandwidths=[bw], combination="fuse",
                                             n_resamples=99, rng=0)
    z = np.vstack([x, y])
    k = k_gauss(bw)
    K = np.array([[k(a, b) for b in z] for a in z])
    np.fill_diagonal(K, 0.0)
    n = 8
    m = n * (n - 1) * math.sqrt(n * (n - 1)) * mmd2_u(x, y, k) / math.sqrt((K**2).sum())
    assert res.statistic == pytest.approx(m, rel=1e-10)  # one member, weight 1: log exp(m)


@pytest.mark.parametrize("method", ["mmdagg", "fuse"])
def test_members_are_the_single_tests_on_the_same_permutations(method):
    gen = np.random.default_rng(3)
    x, y = gen.normal(size=(15, 2)), gen.normal(size=(12, 2)) * 1.5
    bws = [0.5, 1.0, 2.0]
    res = kmtests.aggregated_two_sample_test(x, y, bandwidths=bws, combination=method,
                                             estimators=["kme", "skmse"],
                                             statistics=["unbiased", "biased"],
                                             n_resamples=199, rng=7)
    assert len(res.members) == 12
    i = 0
    for est in ["kme", "skmse"]:
        for stat in ["unbiased", "biased"]:
            for bw in bws:
                single = kmtests.two_sample_test(x, y, bandwidth=bw, estimator=est,
                                                 statistic=stat, n_resamples=199, rng=7)
                m = res.members[i]
                assert m["statistic"] == pytest.approx(single.statistic, rel=1e-12)
                assert m["pvalue"] == single.pvalue, m["member"]
                i += 1


def test_independence_members_are_the_single_tests():
    """Each member's statistic is the single test's; its p-value is the single test's
    with the variable permuted fixed to the collection's one (every member permutes the
    same variable: one pairing per arrangement, which the exact level needs; in 0.2 each
    member chose its own, and member 2 below permuted the other one)."""
    from kmtests.kernels import Gaussian
    from kmtests.statistics import NOCCO, KernelHSIC

    gen = np.random.default_rng(4)
    x = gen.normal(size=(20, 1))
    y = np.cos(3 * x) + gen.normal(size=(20, 1))
    res = kmtests.aggregated_independence_test(x, y, bandwidths_x=[0.5, 2.0],
                                               bandwidths_y=[1.0], statistics=["unbiased"],
                                               filters=["tikhonov"], lams=[0.01],
                                               n_resamples=199, rng=8)
    assert len(res.members) == 4

    def singles(orientation):
        out = []
        for bx in (0.5, 2.0):
            st = KernelHSIC(Gaussian(bx), Gaussian(1.0), unbiased=True, orientation=orientation)
            out.append(kmtests.independence_test(x, y, statistic=st, n_resamples=199, rng=8))
        for bx in (0.5, 2.0):
            st = NOCCO(Gaussian(bx), Gaussian(1.0), lams=[0.01], orientation=orientation)
            out.append(kmtests.independence_test(x, y, statistic=st, n_resamples=199, rng=8))
        return out

    matches = []
    for orientation in (False, True):
        single = singles(orientation)
        for m, s in zip(res.members, single):
            assert m["statistic"] == pytest.approx(s.statistic, rel=1e-12)
        matches.append([m["pvalue"] == s.pvalue for m, s in zip(res.members, single)])
    assert [all(m) for m in matches].count(True) == 1  # one orientation for every member
    free = [kmtests.independence_test(x, y, bandwidth_x=bx, bandwidth_y=1.0,
                                      statistic="unbiased", n_resamples=199, rng=8).pvalue
            for bx in (0.5, 2.0)]
    assert free[0] == res.members[0]["pvalue"]  # the first member decides, as alone


def test_aggregated_pvalue_is_at_least_the_smallest_member_pvalue_times_m():
    """Bonferroni is conservative: p_agg <= M min_j p_j (uniform weights), and
    p_agg >= min_j p_j."""
    gen = np.random.default_rng(5)
    x, y = gen.normal(size=(20, 2)), gen.normal(size=(20, 2)) + [0.4, 0.0]
    res = kmtests.aggregated_two_sample_test(x, y, bandwidths=6, n_resamples=499, rng=1)
    pmin = min(m["pvalue"] for m in res.members)
    assert pmin <= res.pvalue <= 6 * pmin + 1e-12


def test_aggregated_independence_is_symmetric():
    gen = np.random.default_rng(6)
    x = gen.normal(size=(25, 2))
    y = np.abs(x[:, :1]) + gen.normal(size=(25, 1))
    kw = dict(bandwidths_x=3, bandwidths_y=3, filters="showalter", lams=[0.01, 0.1],
              n_resamples=199, rng=2)
    a = kmtests.aggregated_independence_test(x, y, **kw)
    b = kmtests.aggregated_independence_test(y, x, **kw)
    assert a.pvalue == b.pvalue
    assert a.statistic == pytest.approx(b.statistic)


def test_exact_enumeration_for_tiny_samples():
    x, y = np.array([[0.0], [0.3], [0.1]]), np.array([[2.0], [2.4], [1.9]])
    res = kmtests.aggregated_two_sample_test(x, y, bandwidths=[0.5, 1.0], n_resamples=999)
    assert res.exact and res.n_resamples == 20  # C(6, 3) splits
    assert res.pvalue == pytest.approx(2 / 20)   # the observed split and its mirror


def test_summary_lists_the_members_and_the_threshold():
    gen = np.random.default_rng(7)
    x, y = gen.normal(size=(30, 2)), gen.normal(size=(30, 2)) * [1.0, 2.0]
    res = kmtests.aggregated_two_sample_test(x, y, bandwidths=3, n_resamples=199, rng=0)
    text = str(res.summary())
    assert "Members" in text and f"u = {res.threshold:.4g}" in text
    assert "bandwidth:" in text and "combination: mmdagg" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    for i, m in enumerate(res.members):   # one row per member: number, bandwidth, p-value
        row = next(line for line in text.splitlines() if line.startswith(f"{i + 1} "))
        assert f"{m['pvalue']:.4g}" in row and f"{m['bandwidth']:.4g}" in row
        assert row.rstrip().endswith("yes" if m["rejects"] else "no")
    frame = res.members_frame()
    assert list(frame["pvalue"]) == [m["pvalue"] for m in res.members]
    assert list(frame.index) == [m["member"] for m in res.members]


def test_bandwidth_grid_is_a_function_of_the_set_of_points():
    gen = np.random.default_rng(8)
    z = gen.normal(size=(40, 3))
    g = bandwidth_grid(z, 7)
    np.testing.assert_array_equal(g, bandwidth_grid(z[gen.permutation(40)], 7))
    assert g.size == 7 and np.all(np.diff(np.log(g)) > 0)
    np.testing.assert_allclose(np.diff(np.log(g)), np.log(g[1] / g[0]))
    with pytest.raises(ValueError, match="constant data"):
        bandwidth_grid(np.ones((5, 2)), 3)


def test_lambda_grid():
    np.testing.assert_allclose(lambda_grid(2.0, 8), 2.0 * np.logspace(-6, 1, 8))


@pytest.mark.parametrize("kw, err, match", [
    (dict(method="max"), ValueError, "method"),
    (dict(alpha=1.5), ValueError, "alpha"),
    (dict(weights=[1.0, -1.0]), ValueError, "weights"),
    (dict(estimators=(), filters=None), ValueError, "collection is empty"),
    (dict(bandwidths=[0.0, 1.0]), ValueError, "bandwidths"),
    (dict(lams="big", filters="tikhonov"), ValueError, "lam"),
    (dict(null=kmtests.GammaMethod()), ValueError, "method 'gamma' needs the full kernel"),
    (dict(null="permutation"), TypeError, "`null` must be a null method object"),
    (dict(method="permutation", null=kmtests.PermutationMethod()), ValueError,
     "give the null method once"),
])
def test_argument_errors(kw, err, match):
    gen = np.random.default_rng(9)
    x, y = gen.normal(size=(10, 2)), gen.normal(size=(10, 2))
    with pytest.raises(err, match=match):
        kmtests.aggregated_two_sample_test(x, y, **kw)


def test_reproducible_across_batch_and_n_jobs():
    gen = np.random.default_rng(10)
    x, y = gen.normal(size=(20, 2)), gen.normal(size=(25, 2)) + 0.3
    kw = dict(bandwidths=3, filters="tikhonov", lams=[0.01, 0.1], n_resamples=299, rng=5)
    a = kmtests.aggregated_two_sample_test(x, y, **kw)
    b = kmtests.aggregated_two_sample_test(x, y, batch=7, n_jobs=2, **kw)
    assert a.pvalue == b.pvalue
    np.testing.assert_array_equal(a.null_distribution, b.null_distribution)


def test_bandwidths_as_numpy_arrays():
    # `bandwidths` documented as a sequence of floats: a numpy array (what bandwidth_grid
    # returns) used to raise "truth value of an array ... is ambiguous" from `== "auto"`.
    gen = np.random.default_rng(3)
    x, y = gen.normal(size=(15, 2)), gen.normal(0.5, size=(15, 2))
    bws = bandwidth_grid(np.vstack([x, y]), 3)
    a = kmtests.aggregated_two_sample_test(x, y, bandwidths=bws, n_resamples=49, rng=1)
    b = kmtests.aggregated_two_sample_test(x, y, bandwidths=list(bws), n_resamples=49, rng=1)
    assert a.pvalue == b.pvalue and len(a.members) == 3
    u, v = x[:, :1], y[:, :1]
    c = kmtests.aggregated_independence_test(u, v, bandwidths_x=np.array([0.5, 1.0]),
                                             bandwidths_y=np.array([1.0]), n_resamples=49,
                                             rng=1)
    assert len(c.members) == 2
    with pytest.raises(ValueError, match="does not apply"):
        kmtests.aggregated_two_sample_test(x, y, kernel="linear", bandwidths=bws)


def test_aggregated_tests_run_on_every_engine_that_applies():
    """`engine=` (new): the streamed engine gives the exact engine's members and p-value;
    the low-rank ones run their approximate members on the same permutations; FUSE needs
    the Gram matrices (its normalisers), and says so."""
    gen = np.random.default_rng(11)
    x, y = gen.normal(size=(40, 2)), gen.normal(size=(35, 2)) + 0.4
    kw = dict(bandwidths=3, n_resamples=199, rng=4)
    exact = kmtests.aggregated_two_sample_test(x, y, **kw)
    streamed = kmtests.aggregated_two_sample_test(x, y, engine="streamed", **kw)
    assert streamed.engine == "streamed" and streamed.pvalue == exact.pvalue
    for a, b in zip(exact.members, streamed.members):
        assert b["statistic"] == pytest.approx(a["statistic"], rel=1e-10)
        assert b["pvalue"] == a["pvalue"]
    ny = kmtests.aggregated_two_sample_test(x, y, engine="nystrom", n_features=30, **kw)
    assert ny.engine == "nystrom" and "approximate statistic" in " ".join(ny.notes)
    with pytest.raises(ValueError, match="engine='streamed'.*MMD-FUSE's normalisers"):
        kmtests.aggregated_two_sample_test(x, y, engine="streamed", combination="fuse", **kw)
    ind = kmtests.aggregated_independence_test(x[:35], y, engine="rff", n_features=20,
                                               bandwidths_x=2, bandwidths_y=2,
                                               n_resamples=99, rng=1)
    assert ind.engine == "rff" and len(ind.members) == 4


def test_aggregated_tests_take_the_tuning():
    """`tuning=` (new): each member is the single test with that tuning."""
    gen = np.random.default_rng(12)
    x, y = gen.normal(size=(25, 1)), gen.normal(size=(25, 1)) + 0.5
    res = kmtests.aggregated_two_sample_test(x, y, bandwidths=[0.7, 1.5], estimators="fkmse",
                                             statistics="biased", tuning="pooled",
                                             n_resamples=99, rng=3)
    for m, bw in zip(res.members, (0.7, 1.5)):
        single = kmtests.two_sample_test(x, y, bandwidth=bw, estimator="fkmse",
                                         statistic="biased", tuning="pooled",
                                         n_resamples=99, rng=3)
        assert m["statistic"] == pytest.approx(single.statistic, rel=1e-12)
        assert m["pvalue"] == single.pvalue
    assert res.tuning == "pooled"
