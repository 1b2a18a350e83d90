"""MKME / MMKME (marginalized kernel mean estimators) and smoothed embeddings.

References are literal: the paper's eqs. (26)-(27) with determinants and
inverses, triple loops for the LOOCV score (25), refits on n-1 points through
the Embedding API, and Monte Carlo averages with tolerances set from their
standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

import kmtests
from kmtests.estimators._rules import Uniform
from kmtests.estimators import KME, MKME, MMKME, Embedding, make
from kmtests.estimators.marginalized import (_Loocv, inflated_kernel, linearized_weights,
                                             marginalized_gram, marginalized_loocv)
from kmtests.kernels import ARDGaussian, Gaussian, Linear, median_bandwidth


# -- literal references -------------------------------------------------------
def L_lit(xi, xj, Sj, theta):
    """MKME (26): E_{x~N(x_j, S_j)} k(x, x_i), with determinant and inverse."""
    d = len(xi)
    A = Sj + theta**2 * np.eye(d)
    r = xi - xj
    return theta**d / math.sqrt(np.linalg.det(A)) * math.exp(-0.5 * r @ np.linalg.inv(A) @ r)


def Q_lit(xi, xj, Si, Sj, theta):
    """MKME (27): E k(x~_i, x~_j), independent corruptions."""
    return L_lit(xi, xj, Si + Sj, theta)


def loocv_literal(x, S, theta):
    """MKME (25) with literal loops over i, j, k (k(x_i, x_i) = 1)."""
    n = len(x)
    total = 0.0
    for i in range(n):
        others = [j for j in range(n) if j != i]
        lsum = sum(L_lit(x[i], x[j], S, theta) for j in others)
        qsum = sum(Q_lit(x[j], x[k], S, S, theta) for j in others for k in others)
        total += 1.0 - 2.0 / (n - 1) * lsum + qsum / (n - 1) ** 2
    return total / n


def loocv_refit(x, smoothing, kernel):
    """(1/n) sum_i ||k(x_i, .) - mu~^(-i)||^2 by refitting on n-1 points (Embedding API)."""
    n = len(x)
    out = []
    for i in range(n):
        rest = np.delete(x, i, axis=0)
        loo = Embedding(points=rest, weights=np.full(n - 1, 1 / (n - 1)), kernel=kernel,
                        params={}, estimator=KME(), smoothing=smoothing)
        point = Embedding(points=x[i:i + 1], weights=np.ones(1), kernel=kernel, params={},
                          estimator=KME())
        out.append(loo.distance2(point))
    return float(np.mean(out))


def smoothed(x, kernel, s):
    n = len(x)
    return Embedding(points=x, weights=np.full(n, 1 / n), kernel=kernel, params={},
                     estimator=KME(), smoothing=s)


@pytest.fixture
def sample(rng):
    return rng.normal(size=(9, 2)) * [1.0, 0.7]


# -- marginalized kernels vs the paper's formulas and Monte Carlo -------------
def test_marginalized_gram_equals_paper_formulas(rng):
    x = rng.normal(size=(5, 3))
    y = rng.normal(size=(4, 3))
    theta = 1.3
    e, f = np.array([0.2, 0.05, 0.4]), np.array([0.1, 0.3, 0.0])
    k = Gaussian(bandwidth=theta)
    Q = marginalized_gram(x, y, kernel=k, smoothing_x=e, smoothing_y=f)
    L = marginalized_gram(x, y, kernel=k, smoothing_x=e)
    Qxx = marginalized_gram(x, kernel=k, smoothing_x=e)
    for i in range(5):
        for j in range(4):
            assert Q[i, j] == pytest.approx(Q_lit(x[i], y[j], np.diag(e), np.diag(f), theta),
                                            rel=1e-12)
            assert L[i, j] == pytest.approx(L_lit(y[j], x[i], np.diag(e), theta), rel=1e-12)
        for j in range(5):  # diagonal included: two independent corruptions
            assert Qxx[i, j] == pytest.approx(Q_lit(x[i], x[j], np.diag(e), np.diag(e), theta),
                                              rel=1e-12)
    assert np.all(np.diag(Qxx) < 1.0)


def test_L_and_Q_equal_monte_carlo(rng):
    d, theta, N = 2, 0.9, 400_000
    x = rng.normal(size=(3, d))
    e = np.array([0.3, 0.1])
    k = Gaussian(bandwidth=theta)
    L = marginalized_gram(x, x, kernel=k, smoothing_x=e)   # L[i, j] = E k(x_i + eps, x_j)
    Q = marginalized_gram(x, kernel=k, smoothing_x=e)
    worst = 0.0
    for i in range(3):
        for j in range(3):
            eps1 = rng.normal(size=(N, d)) * np.sqrt(e)
            eps2 = rng.normal(size=(N, d)) * np.sqrt(e)
            vl = np.exp(-np.sum((x[i] + eps1 - x[j]) ** 2, 1) / (2 * theta**2))
            vq = np.exp(-np.sum((x[i] + eps1 - x[j] - eps2) ** 2, 1) / (2 * theta**2))
            for v, exact in ((vl, L[i, j]), (vq, Q[i, j])):
                se = v.std() / math.sqrt(N)
                z = abs(v.mean() - exact) / se
                worst = max(worst, z)
                assert z < 4.5, (i, j, v.mean(), exact, se)
    assert worst > 0  # the comparison actually ran


def test_embedding_evaluation_equals_monte_carlo(rng):
    x = rng.normal(size=(4, 2))
    emb = smoothed(x, Gaussian(bandwidth=1.0), np.array([0.5, 0.2]))
    t = rng.normal(size=(3, 2))
    N = 200_000
    vals = np.zeros((N, 3))
    for i in range(4):
        xt = x[i] + rng.normal(size=(N, 2)) * np.sqrt([0.5, 0.2])
        vals += np.exp(-((xt[:, None, :] - t[None]) ** 2).sum(-1) / 2) / 4
    se = vals.std(0) / math.sqrt(N)
    assert np.all(np.abs(vals.mean(0) - emb(t)) < 4.5 * se)


# -- the key identity: inflated bandwidths ------------------------------------
def test_Q_kernel_is_scaled_gaussian_with_inflated_bandwidth(rng):
    x = rng.normal(size=(7, 3))
    theta, s2 = 0.8, 0.15
    Q = marginalized_gram(x, kernel=Gaussian(bandwidth=theta), smoothing_x=s2)
    c = (theta**2 / (theta**2 + 2 * s2)) ** 1.5
    K2 = Gaussian(bandwidth=math.sqrt(theta**2 + 2 * s2)).gram(x)
    np.testing.assert_allclose(Q, c * K2, rtol=1e-13)
    D = np.array([0.1, 0.4, 0.02])
    QD = marginalized_gram(x, kernel=Gaussian(bandwidth=theta), smoothing_x=D)
    cD = np.prod(np.sqrt(theta**2 / (theta**2 + 2 * D)))
    KD = ARDGaussian(bandwidth=np.sqrt(theta**2 + 2 * D)).gram(x)
    np.testing.assert_allclose(QD, cD * KD, rtol=1e-13)
    c2, k2 = inflated_kernel(Gaussian(bandwidth=theta), 2 * D, 3)
    assert isinstance(k2, ARDGaussian) and c2 == pytest.approx(cD, rel=1e-14)
    c3, k3 = inflated_kernel(Gaussian(bandwidth=theta), 2 * s2, 3)
    assert isinstance(k3, Gaussian) and c3 == pytest.approx(c, rel=1e-14)


def _mmd2_u_from_blocks(Qxx, Qyy, Qxy):
    m, n = Qxx.shape[0], Qyy.shape[0]
    return ((Qxx.sum() - np.trace(Qxx)) / (m * (m - 1))
            + (Qyy.sum() - np.trace(Qyy)) / (n * (n - 1)) - 2 * Qxy.mean())


def test_marginalized_mmd_equals_scaled_mmd_with_inflated_bandwidth(rng):
    x = rng.normal(size=(12, 2))
    y = rng.normal(size=(10, 2)) + [0.5, 0.0]
    theta = median_bandwidth(np.vstack([x, y]))
    k = Gaussian(bandwidth=theta)
    for s in (0.3, np.array([0.05, 0.6])):
        Qxx = marginalized_gram(x, kernel=k, smoothing_x=s)
        Qyy = marginalized_gram(y, kernel=k, smoothing_x=s)
        Qxy = marginalized_gram(x, y, kernel=k, smoothing_x=s, smoothing_y=s)
        by_hand = _mmd2_u_from_blocks(Qxx, Qyy, Qxy)
        sv = np.broadcast_to(s, (2,))
        c = np.prod(np.sqrt(theta**2 / (theta**2 + 2 * sv)))
        kern = ARDGaussian(bandwidth=np.sqrt(theta**2 + 2 * sv))
        plain = kmtests.mmd(x, y, kernel=kern, statistic="unbiased")
        assert by_hand == pytest.approx(c * plain, rel=1e-12)
        # V-form through the exact embeddings (diagonal Q_ii included)
        ex, ey = smoothed(x, k, sv), smoothed(y, k, sv)
        plain_b = kmtests.mmd(x, y, kernel=kern, statistic="biased")
        assert ex.distance2(ey) == pytest.approx(c * plain_b, rel=1e-12)
    # isotropic: a plain Gaussian with bandwidth^2 = theta^2 + 2 sigma2
    plain_iso = kmtests.mmd(x, y, kernel=Gaussian(bandwidth=math.sqrt(theta**2 + 0.6)),
                            statistic="unbiased")
    Qxx = marginalized_gram(x, kernel=k, smoothing_x=0.3)
    Qyy = marginalized_gram(y, kernel=k, smoothing_x=0.3)
    Qxy = marginalized_gram(x, y, kernel=k, smoothing_x=0.3, smoothing_y=0.3)
    c = theta**2 / (theta**2 + 0.6)
    assert _mmd2_u_from_blocks(Qxx, Qyy, Qxy) == pytest.approx(c * plain_iso, rel=1e-12)


def test_marginalized_hsic_equals_scaled_hsic_with_inflated_bandwidths(rng):
    n = 15
    x = rng.normal(size=(n, 2))
    y = x[:, :1] ** 2 + 0.3 * rng.normal(size=(n, 1))
    tx, ty = 1.1, 0.7
    ex, ey = np.array([0.2, 0.05]), 0.1
    Kt = marginalized_gram(x, kernel=Gaussian(bandwidth=tx), smoothing_x=ex)
    Zt = marginalized_gram(y, kernel=Gaussian(bandwidth=ty), smoothing_x=ey)
    H = np.eye(n) - 1 / n
    by_hand = np.trace(H @ Kt @ H @ H @ Zt @ H) / n**2  # MKME (34), Q_ii on the diagonal
    cx = np.prod(np.sqrt(tx**2 / (tx**2 + 2 * ex)))
    cy = math.sqrt(ty**2 / (ty**2 + 2 * ey))
    plain = kmtests.hsic(x, y, kernel_x=ARDGaussian(bandwidth=np.sqrt(tx**2 + 2 * ex)),
                         kernel_y=Gaussian(bandwidth=math.sqrt(ty**2 + 2 * ey)))
    assert by_hand == pytest.approx(cx * cy * plain, rel=1e-11)


# -- smoothed Embedding contract ----------------------------------------------
def test_embedding_inner_norm_distance_exact(rng):
    x, y = rng.normal(size=(5, 2)), rng.normal(size=(4, 2))
    theta = 1.2
    k = Gaussian(bandwidth=theta)
    e, f = np.array([0.3, 0.1]), np.array([0.05, 0.2])
    wx, wy = rng.uniform(size=5), rng.uniform(size=4)
    a = Embedding(points=x, weights=wx, kernel=k, params={}, estimator=KME(), smoothing=e)
    b = Embedding(points=y, weights=wy, kernel=k, params={}, estimator=KME(), smoothing=f)
    p = Embedding(points=y, weights=wy, kernel=k, params={}, estimator=KME())  # unsmoothed
    Se, Sf, S0 = np.diag(e), np.diag(f), np.zeros((2, 2))
    lit = lambda P, Q, SP, SQ, wP, wQ: sum(wP[i] * wQ[j] * Q_lit(P[i], Q[j], SP, SQ, theta)
                                           for i in range(len(P)) for j in range(len(Q)))
    assert a.inner(b) == pytest.approx(lit(x, y, Se, Sf, wx, wy), rel=1e-12)
    assert a.inner(p) == pytest.approx(lit(x, y, Se, S0, wx, wy), rel=1e-12)
    assert p.inner(a) == pytest.approx(a.inner(p), rel=1e-14)
    assert a.norm2() == pytest.approx(lit(x, x, Se, Se, wx, wx), rel=1e-12)
    assert a.distance2(b) == pytest.approx(
        lit(x, x, Se, Se, wx, wx) + lit(y, y, Sf, Sf, wy, wy) - 2 * lit(x, y, Se, Sf, wx, wy),
        rel=1e-10)
    # evaluation uses the L-kernel
    t = rng.normal(size=(3, 2))
    np.testing.assert_allclose(a(t), [sum(wx[i] * L_lit(tt, x[i], Se, theta) for i in range(5))
                                      for tt in t], rtol=1e-12)
    # ARD base kernel: same closed form with per-coordinate bandwidths
    kard = ARDGaussian(bandwidth=np.array([0.8, 1.5]))
    ea = Embedding(points=x, weights=wx, kernel=kard, params={}, estimator=KME(), smoothing=e)
    eb = Embedding(points=y, weights=wy, kernel=ARDGaussian(bandwidth=np.array([0.8, 1.5])),
                   params={}, estimator=KME(), smoothing=f)
    scaled = lambda z: z / np.array([0.8, 1.5])
    ref = sum(wx[i] * wy[j] * Q_lit(scaled(x[i]), scaled(y[j]), np.diag(e / [0.64, 2.25]),
                                    np.diag(f / [0.64, 2.25]), 1.0)
              for i in range(5) for j in range(4))
    assert ea.inner(eb) == pytest.approx(ref, rel=1e-12)


def test_unsmoothed_embedding_unchanged_and_zero_smoothing(rng):
    x = rng.normal(size=(6, 2))
    k = Gaussian(bandwidth=0.9)
    plain = KME().fit(x, kernel=k)
    assert plain.smoothing is None
    K = k.gram(x)
    assert plain.norm2() == pytest.approx(K.mean(), rel=1e-14)
    zero = smoothed(x, k, np.zeros(2))
    assert zero.norm2() == pytest.approx(plain.norm2(), rel=1e-14)
    lin = Embedding(points=x, weights=np.full(6, 1 / 6), kernel=Linear(), params={},
                    estimator=KME(), smoothing=np.zeros(2))
    assert lin.norm2() == pytest.approx(float(np.sum(x.mean(0) ** 2)), rel=1e-12)


def test_smoothing_errors(rng):
    x = rng.normal(size=(4, 2))
    with pytest.raises(ValueError, match="Gaussian"):
        Embedding(points=x, weights=np.full(4, 0.25), kernel=Linear(), params={},
                  estimator=KME(), smoothing=np.array([0.1, 0.1]))
    with pytest.raises(ValueError, match="`smoothing` must be None or 2"):
        Embedding(points=x, weights=np.full(4, 0.25), kernel=Gaussian(bandwidth=1.0),
                  params={}, estimator=KME(), smoothing=np.array([0.1, -1.0]))
    a = smoothed(x, Gaussian(bandwidth=1.0), np.array([0.1, 0.1]))
    b = smoothed(x, Gaussian(bandwidth=2.0), np.array([0.1, 0.1]))
    with pytest.raises(ValueError, match="same RKHS"):
        a.inner(b)
    with pytest.raises(ValueError, match="`kernel` must be 'gaussian' or 'ard'"):
        MKME().fit(x, kernel="linear")
    with pytest.raises(ValueError, match="`kernel` must be 'gaussian' or 'ard'"):
        marginalized_gram(x, kernel=Linear(), smoothing_x=0.1)


# -- LOOCV: closed form vs brute force -----------------------------------------
def test_loocv_equals_literal_loops_and_refit(sample):
    x, theta = sample, 0.8
    k = Gaussian(bandwidth=theta)
    for e in (np.array([0.2, 0.2]), np.array([0.05, 0.5])):
        fast = marginalized_loocv(x, e, kernel=k)
        assert fast == pytest.approx(loocv_literal(x, np.diag(e), theta), rel=1e-12)
        assert fast == pytest.approx(loocv_refit(x, e, k), rel=1e-11)
        # the other evaluation path (no precomputed distances) agrees
        prob = _Loocv.from_data(x, np.full(2, theta**2))
        prob.pd = None
        assert prob.score(e) == pytest.approx(fast, rel=1e-12)
        assert prob.score_and_grad(np.log(e))[0] == pytest.approx(fast, rel=1e-12)


def test_loocv_at_zero_equals_kme_loo(sample):
    x = sample
    k = Gaussian(bandwidth=0.8)
    n = len(x)
    kme_loo = np.mean([KME().fit(np.delete(x, i, 0), kernel=k).distance2(
        Embedding(points=x[i:i + 1], weights=np.ones(1), kernel=k, params={}, estimator=KME()))
        for i in range(n)])
    assert marginalized_loocv(x, 0.0, kernel=k) == pytest.approx(kme_loo, rel=1e-12)
    assert marginalized_loocv(x, 1e-12, kernel=k) == pytest.approx(kme_loo, rel=1e-9)


def test_loocv_gradient_matches_finite_differences(rng):
    x = rng.normal(size=(11, 3))
    prob = _Loocv.from_data(x, np.array([0.7, 1.0, 1.6]) ** 2)
    u = np.log([0.1, 0.4, 0.02])
    f, g = prob.score_and_grad(u)
    h = 1e-6
    fd = np.array([(prob.score_and_grad(u + h * np.eye(3)[m])[0]
                    - prob.score_and_grad(u - h * np.eye(3)[m])[0]) / (2 * h) for m in range(3)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-10)
    assert np.max(np.abs(g)) > 1e-4


def test_mkme_optimum_equals_brute_force_minimum(sample):
    x, theta = sample[:7], 0.8
    k = Gaussian(bandwidth=theta)
    emb = MKME().fit(x, kernel=k)
    s2 = emb.params["sigma2"]
    assert emb.params["loocv"] == pytest.approx(loocv_literal(x, s2 * np.eye(2), theta),
                                                rel=1e-12)
    brute = minimize_scalar(lambda u: loocv_literal(x, np.exp(u) * np.eye(2), theta),
                            bounds=(np.log(1e-6 * theta**2), np.log(1e2 * theta**2)),
                            method="bounded", options={"xatol": 1e-9})
    # the optimum is rounded to 0.01% (kmtests.estimators._loocv.quantise_log), so that it
    # does not carry the rounding noise of the score
    assert s2 == pytest.approx(np.exp(brute.x), rel=1e-4)
    assert emb.params["loocv"] <= brute.fun * (1 + 1e-8)
    assert not emb.params["at_boundary"]
    curve = emb.params["loocv_curve"]
    assert len(curve["grid"]) == len(curve["score"]) == 41
    assert min(curve["score"]) >= emb.params["loocv"] - 1e-15


def test_mmkme_optimum_equals_brute_force_minimum(rng):
    x = rng.normal(size=(10, 2)) * [1.0, 0.6]
    k = Gaussian(bandwidth=1.0)
    emb = MMKME().fit(x, kernel=k)
    e = np.array(emb.params["diag"])
    assert emb.params["loocv"] == pytest.approx(loocv_refit(x, e, k), rel=1e-11)
    brute = minimize(lambda u: loocv_refit(x, np.exp(u), k), np.log([0.1, 0.1]),
                     method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-14,
                                                    "maxiter": 4000})
    assert emb.params["loocv"] <= brute.fun + 1e-12
    np.testing.assert_allclose(e, np.exp(brute.x), rtol=1e-3)
    assert emb.params["loocv"] <= emb.params["loocv_init"]
    assert emb.params["converged"]


def test_mmkme_equals_mkme_in_one_dimension(rng):
    x = rng.normal(size=(25, 1))
    a = MKME().fit(x)
    b = MMKME().fit(x)
    assert b.params["diag"][0] == pytest.approx(a.params["sigma2"], rel=1e-5)
    assert b.params["loocv"] == pytest.approx(a.params["loocv"], rel=1e-12)


def test_tune_sqdist_equals_tune(sample):
    k = Gaussian(bandwidth=0.8)
    s_a, p_a = MKME().tune(sample, k)
    D2 = ((sample[:, None] - sample[None]) ** 2).sum(-1)
    s_b, p_b = MKME().tune_sqdist(D2, bandwidth=0.8, d=2)
    np.testing.assert_allclose(s_b, s_a, rtol=1e-6)  # the optimum is flat: ~sqrt(eps)
    assert p_b["loocv"] == pytest.approx(p_a["loocv"], rel=1e-13)


# -- estimator contract -----------------------------------------------------------
def test_mkme_embedding_contract(sample):
    emb = make("mkme").fit(sample, bandwidth=0.8)
    n, d = sample.shape
    assert isinstance(emb.estimator, MKME)
    # inside the tests it is the KME (factor 1) under its marginalized kernel
    assert MKME().rule() == Uniform(fixed=1.0)
    np.testing.assert_array_equal(emb.points, sample)
    np.testing.assert_array_equal(emb.weights, np.full(n, 1 / n))
    np.testing.assert_array_equal(emb.smoothing, np.full(d, emb.params["sigma2"]))
    assert {"sigma2", "loocv", "loocv_curve"} <= set(emb.params)
    emb2 = make("mmkme").fit(sample, bandwidth=0.8)
    np.testing.assert_array_equal(emb2.smoothing, emb2.params["diag"])
    assert len(emb2.params["diag"]) == d and emb2.params["loocv"] <= emb.params["loocv"] + 1e-12


def test_fixed_parameters(sample):
    k = Gaussian(bandwidth=0.8)
    emb = MKME(sigma2=0.2).fit(sample, kernel=k)
    assert emb.params["sigma2"] == 0.2 and emb.params["loocv_curve"] is None
    assert emb.params["loocv"] == pytest.approx(marginalized_loocv(sample, 0.2, kernel=k))
    kme = MKME(sigma2=0).fit(sample, kernel=k)
    assert kme.norm2() == pytest.approx(KME().fit(sample, kernel=k).norm2(), rel=1e-14)
    emb2 = MMKME(diag=[0.1, 0.3]).fit(sample, kernel=k)
    assert emb2.params["diag"] == [0.1, 0.3]
    with pytest.raises(ValueError, match="`diag` has 3 entries"):
        MMKME(diag=[0.1, 0.3, 0.2]).fit(sample, kernel=k)


def test_weights_not_applicable(sample):
    with pytest.raises(NotImplementedError, match="marginalized estimator"):
        MKME().weights(np.eye(3))
    with pytest.raises(NotImplementedError, match="marginalized estimator"):
        MMKME().weights(np.eye(3))


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"sigma2": -1.0}, ValueError, "`sigma2` must be a non-negative"),
    ({"sigma2": "a"}, TypeError, "`sigma2` must be a non-negative number"),
    ({"sigma2_range": (1.0, 0.5)}, ValueError, "`sigma2_range` must satisfy"),
    ({"grid_size": 2}, ValueError, "`grid_size` must be at least 3"),
])
def test_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        MKME(**kwargs)


def test_validation_mmkme():
    with pytest.raises(ValueError, match="`diag` must be None or a sequence"):
        MMKME(diag=[0.1, -0.2])


# -- degenerate inputs ----------------------------------------------------------------
def test_degenerate_inputs_are_finite():
    k = Gaussian(bandwidth=1.0)
    two = np.array([[0.0, 0.0], [1.0, 0.5]])
    for est in (MKME(), MMKME()):
        emb = est.fit(two, kernel=k)
        assert np.isfinite(emb.params["loocv"]) and np.isfinite(emb.norm2())
        assert emb.params["loocv"] == pytest.approx(loocv_refit(two, emb.smoothing, k), rel=1e-11)
    same = np.ones((5, 2))
    for est in (MKME(), MMKME()):
        emb = est.fit(same, kernel=k)
        # the KME (lower end) is perfect: score = d(d+2)/4 (sigma2/theta^2)^2 = 2e-12 there
        assert emb.params["loocv"] == pytest.approx(2e-12, rel=1e-3)
        assert np.all(np.array(emb.params["at_boundary"]))
        assert np.isfinite(emb.norm2())
    dup = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 2.0], [1.0, 2.0], [3.0, 0.0]])
    emb = MMKME().fit(dup, kernel=k)
    assert np.all(np.isfinite(emb.params["diag"]))
    assert emb.params["loocv"] == pytest.approx(loocv_refit(dup, emb.smoothing, k), rel=1e-10)


# -- the corrected linearisation (approximation) ------------------------------------
def test_linearized_weights_accuracy():
    x = np.random.default_rng(0).normal(size=(10, 2))
    theta = median_bandwidth(x)
    k = Gaussian(bandwidth=theta)
    n, d = x.shape
    K = k.gram(x)
    one = np.full(n, 1 / n)
    Kp = K * ((x[:, None] - x[None]) ** 2).sum(-1)
    errs = {}
    for r in (1e-3, 1e-2, 0.05):
        s2 = r * theta**2
        exact = smoothed(x, k, np.full(d, s2))

        def err(b):
            return Embedding(points=x, weights=b, kernel=k, params={},
                             estimator=KME()).distance2(exact)

        lin = err(linearized_weights(x, s2, kernel=k))
        best = err(np.linalg.solve(K, exact(x)))                  # optimal projection
        kme = err(one)
        printed = err((theta**2 + d * s2) / (2 * theta**2) * one       # MKME Thm 1 as printed
                      - d * s2 / (2 * theta**4) * np.linalg.solve(K, Kp @ one))
        errs[r] = lin
        assert best <= lin <= (1.03 if r <= 1e-2 else 1.15) * best
        assert lin < kme / 3
        assert printed > 0.1
    assert 50 < errs[1e-2] / errs[1e-3] < 200  # O(sigma^4): x100 per decade of sigma2
    # MMKME form with a diagonal D reduces to the isotropic one when D = sigma2 I
    np.testing.assert_allclose(linearized_weights(x, [0.01, 0.01], kernel=k),
                               linearized_weights(x, 0.01, kernel=k), rtol=1e-14)


def test_ard_base_kernel_and_row_order_invariance(rng):
    x = rng.normal(size=(12, 2)) * [1.0, 0.5]
    kard = ARDGaussian(bandwidth=np.array([1.0, 0.6]))
    for est in (MKME(), MMKME()):
        emb = est.fit(x, kernel=kard)
        assert emb.params["loocv"] == pytest.approx(loocv_refit(x, emb.smoothing, kard),
                                                    rel=1e-11)
        perm = rng.permutation(len(x))
        emb_p = est.fit(x[perm], kernel=kard)
        np.testing.assert_allclose(emb_p.smoothing, emb.smoothing, rtol=1e-5)
        assert emb_p.params["loocv"] == pytest.approx(emb.params["loocv"], rel=1e-12)


def test_exact_loss_of_mkme_matches_monte_carlo(rng):
    """Integration with kmtests.groundtruth (PAPERS.md §4.5): the exact loss of the
    smoothed embedding equals ||mu~||^2 - 2 E_{y~P} mu~(y) + ||mu_P||^2 by Monte Carlo."""
    gt = pytest.importorskip("kmtests.groundtruth")
    P = gt.GaussianMixture([0.3, 0.7], [[0.0, 0.0], [2.0, 1.0]],
                           [np.eye(2), [[0.5, 0.2], [0.2, 0.8]]])
    x = P.sample(15, rng=rng)
    for est in (MKME(), MMKME()):
        emb = est.fit(x)
        plain = KME().fit(x, kernel=emb.kernel)
        exact = gt.loss(emb, P)
        y = P.sample(200_000, rng=rng)
        vals, pvals = emb(y), plain(y)
        se = 2 * vals.std() / math.sqrt(len(vals))
        mc = emb.norm2() - 2 * vals.mean() + P.kernel_mean_norm2(emb.kernel)
        assert abs(exact - mc) < 4.5 * se
        # the smoothing matters: the loss difference to the KME, with common draws
        diff = vals - pvals
        se_d = 2 * diff.std() / math.sqrt(len(diff))
        mc_d = emb.norm2() - plain.norm2() - 2 * diff.mean()
        exact_d = exact - gt.loss(plain, P)
        assert abs(exact_d - mc_d) < 4.5 * se_d
        assert abs(exact_d) > 5 * se_d  # a test that ignored smoothing would fail
