"""Closed-form ground truth (kmtests.groundtruth) and the papers' generator.

Every closed form is compared with a seeded Monte Carlo estimate, within
``Z_TOL`` Monte Carlo standard errors, and the polynomial ones also with
explicit feature-space moment tensors (exact).
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from scipy import integrate

from kmtests.datasets import PAPERS_MIXTURE_WEIGHTS, synthetic_mixture
from kmtests.estimators import KME
from kmtests.groundtruth import GaussianMixture, loss
from kmtests.kernels import ARDGaussian, Gaussian, Laplacian, Linear, Polynomial

Z_TOL = 5.0  # |closed form - MC| <= Z_TOL * MC standard error (two-sided p ~ 6e-7)
N_MC = 400_000

KERNELS = [
    pytest.param(Gaussian(bandwidth=1.3), id="rbf"),
    pytest.param(ARDGaussian(bandwidth=[0.6, 1.0, 2.5]), id="ard"),
    pytest.param(Linear(), id="lin"),
    pytest.param(Polynomial(degree=2, coef0=1.0), id="poly2"),
    pytest.param(Polynomial(degree=3, coef0=1.0), id="poly3"),
    pytest.param(Polynomial(degree=3, coef0=0.4), id="poly3-c0.4"),
    pytest.param(Polynomial(degree=2, coef0=0.0), id="poly2-c0"),
    pytest.param(Polynomial(degree=1, coef0=2.0), id="poly1"),
]


def _mixture() -> GaussianMixture:
    """A 3-component mixture in d = 3 with non-commuting covariances (which the
    POLY3 cross term a_c'C_e C_c a_e needs to be tested at all)."""
    g = np.random.default_rng(np.random.SeedSequence(3141))
    covs = []
    for _ in range(3):
        A = g.normal(size=(3, 3)) * 0.5
        covs.append(A @ A.T + 0.1 * np.eye(3))
    means = g.uniform(-1.0, 1.0, size=(3, 3))
    return GaussianMixture([0.2, 0.5, 0.3], means, np.array(covs))


def _k_rows(kern, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """k(x_r, y_r) row by row, written out (no Gram matrix)."""
    if isinstance(kern, (Gaussian, ARDGaussian)):
        s = np.asarray(kern.bandwidth, dtype=float)
        return np.exp(-0.5 * np.sum(((x - y) / s) ** 2, axis=-1))
    if isinstance(kern, Linear):
        return np.sum(x * y, axis=-1)
    return (np.sum(x * y, axis=-1) + kern.coef0) ** kern.degree


def _assert_mc(closed: np.ndarray | float, draws: np.ndarray) -> None:
    """`draws` has the Monte Carlo replicates along axis 0."""
    est = draws.mean(axis=0)
    se = draws.std(axis=0, ddof=1) / np.sqrt(draws.shape[0])
    err = np.abs(np.asarray(closed) - est)
    assert np.all(err <= Z_TOL * se + 1e-12 * np.abs(est)), (closed, est, se)
    # and the test can fail: the tolerance is small on the scale of the kernel values
    assert np.all(Z_TOL * se < 0.02 * np.sqrt(np.mean(draws ** 2, axis=0)))


# -- the three closed forms against Monte Carlo -----------------------------------------
@pytest.mark.parametrize("kern", KERNELS)
def test_kernel_mean_matches_monte_carlo(kern):
    P = _mixture()
    t = np.array([[0.3, -0.5, 1.0], [-1.2, 0.4, 0.0], [0.8, 0.9, -0.7]])
    x = P.sample(N_MC, rng=np.random.SeedSequence(1))
    draws = np.stack([_k_rows(kern, x, tj[None, :]) for tj in t], axis=1)
    _assert_mc(P.kernel_mean(t, kern), draws)


@pytest.mark.parametrize("kern", KERNELS)
def test_kernel_mean_norm2_matches_monte_carlo(kern):
    P = _mixture()
    x = P.sample(N_MC, rng=np.random.SeedSequence(2))
    x2 = P.sample(N_MC, rng=np.random.SeedSequence(3))
    _assert_mc(P.kernel_mean_norm2(kern), _k_rows(kern, x, x2))


@pytest.mark.parametrize("kern", KERNELS)
def test_expected_diagonal_matches_monte_carlo(kern):
    P = _mixture()
    x = P.sample(N_MC, rng=np.random.SeedSequence(4))
    draws = _k_rows(kern, x, x)
    if isinstance(kern, (Gaussian, ARDGaussian)):
        assert P.expected_diagonal(kern) == 1.0
    else:
        _assert_mc(P.expected_diagonal(kern), draws)


def test_poly3_cross_term_order_matters():
    """The SMM paper's a_c'C_c C_e a_e differs from the right a_c'C_e C_c a_e here,
    and Monte Carlo separates the two (PAPERS.md §4.2)."""
    rot = np.array([[1.0, -1.0], [1.0, 1.0]]) / np.sqrt(2.0)
    C1 = np.diag([1.0, 0.05])
    P = GaussianMixture([0.5, 0.5], [[0.7, 0.7], [0.7, -0.7]], [C1, rot @ C1 @ rot.T])
    kern = Polynomial(degree=3, coef0=1.0)
    w, a, C = P.weights, P.means, P.covs
    right = np.einsum("ci,eij,cjk,ek->ce", a, C, C, a)
    smm = np.einsum("ci,cij,ejk,ek->ce", a, C, C, a)
    shift = 6.0 * float(w @ (smm - right) @ w)
    x = P.sample(N_MC, rng=np.random.SeedSequence(5))
    x2 = P.sample(N_MC, rng=np.random.SeedSequence(6))
    draws = _k_rows(kern, x, x2)
    se = draws.std(ddof=1) / np.sqrt(N_MC)
    assert abs(shift) > 2 * Z_TOL * se  # the wrong order would be detected
    assert abs(P.kernel_mean_norm2(kern) - draws.mean()) <= Z_TOL * se


# -- exact references ------------------------------------------------------------------
def _poly_features(x: np.ndarray, p: int, c: float) -> np.ndarray:
    """Explicit feature map of (<x, y> + c)^p, p <= 3."""
    parts = [np.full((x.shape[0], 1), c ** (p / 2))]
    coefs = {1: [1.0], 2: [2.0 * c, 1.0], 3: [3.0 * c * c, 3.0 * c, 1.0]}[p]
    t = np.ones((x.shape[0], 1))
    for coef in coefs:
        t = np.einsum("ni,nj->nij", t, x).reshape(x.shape[0], -1)
        parts.append(np.sqrt(coef) * t)
    return np.concatenate(parts, axis=1)


def _poly_mean_features(P: GaussianMixture, p: int, c: float) -> np.ndarray:
    """E phi(x) from the Gaussian moments E x, E xx', E x(x)x(x)x."""
    a, C, w = P.means, P.covs, P.weights
    m1 = w @ a
    m2 = np.einsum("c,cij->ij", w, C + a[:, :, None] * a[:, None, :])
    m3 = np.einsum("c,cijk->ijk", w,
                   np.einsum("ci,cj,ck->cijk", a, a, a) + np.einsum("ci,cjk->cijk", a, C)
                   + np.einsum("cj,cik->cijk", a, C) + np.einsum("ck,cij->cijk", a, C))
    moments = [m1, m2.ravel(), m3.ravel()]
    coefs = {1: [1.0], 2: [2.0 * c, 1.0], 3: [3.0 * c * c, 3.0 * c, 1.0]}[p]
    return np.concatenate([[c ** (p / 2)]] + [np.sqrt(k) * moments[j] for j, k in enumerate(coefs)])


@pytest.mark.parametrize("p,c", [(1, 0.0), (1, 1.5), (2, 1.0), (2, 0.0), (3, 1.0), (3, 0.3)])
def test_polynomial_ground_truth_equals_feature_space(p, c):
    P = _mixture()
    kern = Linear() if (p, c) == (1, 0.0) else Polynomial(degree=p, coef0=c)
    Ephi = _poly_mean_features(P, p, c)
    g = np.random.default_rng(7)
    t = g.normal(size=(5, 3))
    np.testing.assert_allclose(P.kernel_mean(t, kern), _poly_features(t, p, c) @ Ephi, rtol=1e-11)
    np.testing.assert_allclose(P.kernel_mean_norm2(kern), Ephi @ Ephi, rtol=1e-11)
    emb = types.SimpleNamespace(points=t, weights=g.normal(size=5), kernel=kern)
    direct = np.sum((emb.weights @ _poly_features(t, p, c) - Ephi) ** 2)
    np.testing.assert_allclose(loss(emb, P), direct, rtol=1e-9)


def test_rbf_one_dimensional_quadrature():
    P = GaussianMixture([0.3, 0.7], [[-1.0], [2.0]], [[[0.5]], [[1.5]]])
    kern = Gaussian(bandwidth=0.8)

    def dens(x):
        return sum(w * np.exp(-0.5 * (x - a[0]) ** 2 / C[0, 0]) / np.sqrt(2 * np.pi * C[0, 0])
                   for w, a, C in zip(P.weights, P.means, P.covs))

    for t in (-2.0, 0.1, 3.0):
        want = integrate.quad(lambda x: dens(x) * np.exp(-0.5 * (x - t) ** 2 / 0.64),
                              -np.inf, np.inf, epsabs=1e-13)[0]
        np.testing.assert_allclose(P.kernel_mean([[t]], kern)[0], want, rtol=1e-9)
    want = integrate.quad(lambda x: dens(x) * P.kernel_mean([[x]], kern)[0],
                          -np.inf, np.inf, epsabs=1e-13)[0]
    np.testing.assert_allclose(P.kernel_mean_norm2(kern), want, rtol=1e-9)


def test_rbf_is_stable_in_high_dimension():
    """|I + (C_c + C_e)/s^2| overflows at d = 100 for a small bandwidth; the
    log-determinant does not, and ||mu_P||^2 stays positive (a determinant-based
    implementation would return 0)."""
    P = synthetic_mixture(100, rng=11)
    x = P.sample(20, rng=12)
    s = 0.01
    kern = Gaussian(bandwidth=s)
    with np.errstate(over="ignore"):
        assert np.isinf(np.linalg.det(np.eye(100) + 2.0 * P.covs[0] / s**2))
    nrm = P.kernel_mean_norm2(kern)
    # the components are far apart on this scale: only the c = e terms count
    logdets = [np.sum(np.log1p(2.0 * np.linalg.eigvalsh(C) / s**2)) for C in P.covs]
    want = float(np.sum(P.weights**2 * np.exp(-0.5 * np.array(logdets))))
    assert 0.0 < want < 1e-100
    np.testing.assert_allclose(nrm, want, rtol=1e-8)
    for k in (kern, Gaussian(bandwidth=500.0)):
        m = P.kernel_mean(x, k)
        assert np.all(np.isfinite(m)) and np.all(m >= 0.0)
        assert 0.0 <= P.kernel_mean_norm2(k) <= 1.0
        assert P.kme_risk(k, 20) >= 0.0


# -- smoothed (marginalized) embeddings ------------------------------------------------
def _stand_in(points, weights, kernel, smoothing):
    return types.SimpleNamespace(points=points, weights=weights, kernel=kernel,
                                 smoothing=smoothing)


@pytest.mark.parametrize("kern", [Gaussian(bandwidth=1.1), ARDGaussian(bandwidth=[0.7, 1.2, 2.0])],
                         ids=["rbf", "ard"])
def test_smoothed_cross_term_matches_monte_carlo(kern):
    """m~(t) = E_{x~P, t~ ~ N(t, diag(e))} k(x, t~) (PAPERS.md §4.5)."""
    P = _mixture()
    e = np.array([0.3, 0.05, 0.8])
    t = np.array([[0.3, -0.5, 1.0], [-1.2, 0.4, 0.0]])
    g = np.random.default_rng(8)
    x = P.sample(N_MC, rng=g)
    draws = np.stack([_k_rows(kern, x, tj + np.sqrt(e) * g.standard_normal((N_MC, 3)))
                      for tj in t], axis=1)
    _assert_mc(P.kernel_mean(t, kern, smoothing=e), draws)


@pytest.mark.parametrize("smoothing", [np.array([0.3, 0.05, 0.8]), 0.4], ids=["diag", "iso"])
def test_smoothed_loss_matches_monte_carlo(smoothing):
    """||mu~ - mu_P||^2 = E[w'K(X~1, X~2)w - 2 w'k(X~1, x1) + k(x1, x2)] with
    independent corruptions X~1, X~2 (so Q_ii < 1) and x1, x2 ~ P."""
    P = _mixture()
    kern = Gaussian(bandwidth=1.1)
    g = np.random.default_rng(9)
    pts = g.normal(size=(4, 3))
    w = np.array([0.1, 0.4, 0.2, 0.3])
    e = np.broadcast_to(np.asarray(smoothing, dtype=float), (3,))
    N = 200_000
    xt1 = pts + np.sqrt(e) * g.standard_normal((N, 4, 3))
    xt2 = pts + np.sqrt(e) * g.standard_normal((N, 4, 3))
    x1, x2 = P.sample(N, rng=g), P.sample(N, rng=g)
    Kt = _k_rows(kern, xt1[:, :, None, :], xt2[:, None, :, :])  # (N, 4, 4)
    draws = (np.einsum("i,nij,j->n", w, Kt, w)
             - 2.0 * _k_rows(kern, xt1, x1[:, None, :]) @ w + _k_rows(kern, x1, x2))
    est, se = draws.mean(), draws.std(ddof=1) / np.sqrt(N)
    got = loss(_stand_in(pts, w, kern, smoothing), P)
    assert abs(got - est) <= Z_TOL * se
    assert Z_TOL * se < 0.05 * est
    # the smoothing matters at this scale: the plain loss is far away
    assert abs(loss(_stand_in(pts, w, kern, None), P) - est) > 10 * se


def test_zero_smoothing_equals_plain_loss():
    P = _mixture()
    kern = Gaussian(bandwidth=0.9)
    pts = np.random.default_rng(10).normal(size=(6, 3))
    w = np.full(6, 1 / 6)
    plain = loss(_stand_in(pts, w, kern, None), P)
    np.testing.assert_allclose(loss(_stand_in(pts, w, kern, np.zeros(3)), P), plain, rtol=1e-12)
    # zero smoothing is no smoothing, for any kernel
    lin = Linear()
    np.testing.assert_array_equal(loss(_stand_in(pts, w, lin, np.zeros(3)), P),
                                  loss(_stand_in(pts, w, lin, None), P))
    # no smoothing attribute at all: a plain embedding
    np.testing.assert_allclose(loss(types.SimpleNamespace(points=pts, weights=w, kernel=kern), P),
                               plain, rtol=0)


def test_isotropic_smoothing_is_an_inflated_bandwidth():
    """With e = sigma^2 I the smoothed embedding's norm is c * (KME norm with
    bandwidth^2 = s^2 + 2 sigma^2) (PAPERS.md §1.9), an independent check of Q."""
    P = _mixture()
    s, sig2 = 0.9, 0.25
    pts = np.random.default_rng(13).normal(size=(5, 3))
    w = np.full(5, 0.2)
    # ||mu~||^2 = loss(mu~, P) + 2<mu~, mu_P> - ||mu_P||^2
    kern = Gaussian(bandwidth=s)
    emb = _stand_in(pts, w, kern, sig2)
    cross = w @ P.kernel_mean(pts, kern, smoothing=np.full(3, sig2))
    norm_tilde = loss(emb, P) + 2.0 * cross - P.kernel_mean_norm2(kern)
    wide = Gaussian(bandwidth=np.sqrt(s * s + 2 * sig2))
    c = (s * s / (s * s + 2 * sig2)) ** 1.5
    np.testing.assert_allclose(norm_tilde, c * (w @ wide.gram(pts) @ w), rtol=1e-10)


# -- the oracle risk -------------------------------------------------------------------
@pytest.mark.parametrize("kern", [Gaussian(bandwidth=1.0), Linear(), Polynomial(degree=2)],
                         ids=["rbf", "lin", "poly2"])
def test_kme_loss_averages_to_delta(kern):
    """E loss(KME) = Delta = (E k(x,x) - ||mu_P||^2) / n (JMLR (7))."""
    P = _mixture()
    n, R = 5, 3000
    g = np.random.default_rng(np.random.SeedSequence(14))
    losses = np.array([loss(KME().fit(P.sample(n, rng=g), kernel=kern), P) for _ in range(R)])
    delta = P.kme_risk(kern, n)
    se = losses.std(ddof=1) / np.sqrt(R)
    assert abs(losses.mean() - delta) <= Z_TOL * se
    assert Z_TOL * se < 0.2 * delta
    assert np.all(losses >= 0)


# -- sampling and the generator ------------------------------------------------------------
def test_sample_moments_and_reproducibility():
    P = _mixture()
    x = P.sample(N_MC, rng=15)
    np.testing.assert_array_equal(x, P.sample(N_MC, rng=15))
    se = x.std(axis=0) / np.sqrt(N_MC)
    assert np.all(np.abs(x.mean(axis=0) - P.mean()) <= Z_TOL * se)
    np.testing.assert_allclose(x.T @ x / N_MC, P.second_moment(), atol=0.02)


def test_synthetic_mixture_follows_the_papers():
    P = synthetic_mixture(12, rng=16)
    assert P.n_components == 4 and P.dim == 12
    np.testing.assert_array_equal(P.weights, PAPERS_MIXTURE_WEIGHTS)
    assert np.all(np.abs(P.means) <= 10.0)
    for C in P.covs:
        wish = C - 0.2 * np.eye(12)
        assert np.linalg.matrix_rank(wish, tol=1e-8) == 7  # df = 7 < d: singular Wishart
        assert np.linalg.eigvalsh(C).min() > 0.2 - 1e-9  # the noise makes C non-singular
    same = synthetic_mixture(12, rng=16)
    np.testing.assert_array_equal(same.covs, P.covs)
    np.testing.assert_array_equal(same.means, P.means)
    assert not np.array_equal(synthetic_mixture(12, rng=17).means, P.means)


def test_synthetic_mixture_wishart_scale():
    """E Sigma_c = 2 * 7 * I, so E tr(C_c) = (14 + 0.2) d."""
    d = 4
    tr = np.array([np.trace(C) for r in range(500) for C in synthetic_mixture(d, rng=r).covs])
    se = tr.std(ddof=1) / np.sqrt(tr.size)
    assert abs(tr.mean() - 14.2 * d) <= Z_TOL * se
    # variance of tr(2 Z'Z) = 4 * var(chi2_{7d}) = 8 * 7d
    np.testing.assert_allclose(tr.var(ddof=1), 8 * 7 * d, rtol=0.2)


# -- validation --------------------------------------------------------------------------
def test_mixture_is_frozen():
    P = _mixture()
    with pytest.raises(ValueError):
        P.means[0, 0] = 1.0
    with pytest.raises(AttributeError):
        P.weights = np.ones(3) / 3


@pytest.mark.parametrize("args,match", [
    (([0.5, 0.6], [[0.0], [1.0]], [[[1.0]], [[1.0]]]), "`weights` must sum to 1"),
    (([-0.5, 1.5], [[0.0], [1.0]], [[[1.0]], [[1.0]]]), "`weights` must be a non-empty"),
    (([1.0], [0.0, 1.0], [[[1.0]]]), r"`means` must be a finite array of shape \(1, d\)"),
    (([1.0], [[0.0, 1.0]], [[[1.0]]]), r"`covs` must be a finite array of shape \(1, 2, 2\)"),
    (([1.0], [[0.0, 1.0]], [[[1.0, 0.5], [0.0, 1.0]]]), "`covs` must be symmetric"),
    (([1.0], [[0.0, 1.0]], [[[1.0, 2.0], [2.0, 1.0]]]), "`covs` must be positive semi-definite"),
])
def test_mixture_validation(args, match):
    with pytest.raises(ValueError, match=match):
        GaussianMixture(*args)


def test_kernel_validation():
    P = _mixture()
    t = np.zeros((1, 3))
    with pytest.raises(TypeError, match="closed-form ground truth exists for the Gaussian"):
        P.kernel_mean(t, Laplacian(bandwidth=1.0))
    with pytest.raises(TypeError, match="closed-form ground truth exists"):
        P.kernel_mean_norm2(Polynomial(degree=4))
    with pytest.raises(TypeError, match="`kernel` must be a kmtests.kernels.Kernel"):
        P.kernel_mean_norm2("gaussian")
    with pytest.raises(ValueError, match="bandwidth 'median'"):
        P.kernel_mean(t, Gaussian())
    with pytest.raises(ValueError, match="`kernel` has 2 bandwidths"):
        P.kernel_mean(t, ARDGaussian(bandwidth=[1.0, 2.0]))
    with pytest.raises(ValueError, match="`t` must have 3 columns"):
        P.kernel_mean(np.zeros((1, 2)), Linear())
    with pytest.raises(ValueError, match="`smoothing` .* Gaussian kernels only"):
        P.kernel_mean(t, Linear(), smoothing=0.1)
    with pytest.raises(ValueError, match="`smoothing` must be a non-negative finite number or 3"):
        P.kernel_mean(t, Gaussian(bandwidth=1.0), smoothing=[0.1, -0.2, 0.3])


def test_loss_validation():
    P = _mixture()
    pts = np.zeros((2, 3))
    with pytest.raises(TypeError, match="`P` must be a GaussianMixture"):
        loss(_stand_in(pts, [0.5, 0.5], Linear(), None), "P")
    with pytest.raises(TypeError, match="`embedding` must have `points`"):
        loss(object(), P)
    with pytest.raises(ValueError, match="different lengths"):
        loss(_stand_in(pts, [1.0], Linear(), None), P)
    with pytest.raises(ValueError, match="dimension 2, `P` in 3"):
        loss(_stand_in(np.zeros((2, 2)), [0.5, 0.5], Linear(), None), P)
    with pytest.raises(ValueError, match="`embedding.smoothing`"):
        loss(_stand_in(pts, [0.5, 0.5], Linear(), 0.1), P)


def test_generator_validation():
    with pytest.raises(TypeError, match="`d` must be a positive integer"):
        synthetic_mixture(2.5)
    with pytest.raises(ValueError, match="`noise_var` must be a non-negative"):
        synthetic_mixture(3, noise_var=-1.0)
    with pytest.raises(ValueError, match="`weights` must be a non-empty"):
        synthetic_mixture(3, weights=[])
    with pytest.raises(ValueError, match="`weights` must sum to 1"):
        synthetic_mixture(3, weights=[0.5, 0.6])


def test_loss_agrees_with_smoothed_embedding_objects():
    """Cross-check with kmtests.estimators.Embedding(smoothing=...), written
    independently: loss = ||mu~||^2 - 2 <mu~, mu_P> + ||mu_P||^2, where
    <mu~, mu_P> = E_{x~P} mu~(x) is estimated by Monte Carlo on emb(x)."""
    import dataclasses

    from kmtests.estimators import Embedding

    if "smoothing" not in {f.name for f in dataclasses.fields(Embedding)}:
        pytest.skip("Embedding has no `smoothing` field yet")
    P = _mixture()
    kern = Gaussian(bandwidth=1.1)
    pts = np.random.default_rng(17).normal(size=(5, 3))
    w = np.full(5, 0.2)
    e = np.array([0.3, 0.05, 0.8])
    emb = Embedding(points=pts, weights=w, kernel=kern, params={}, estimator=KME(), smoothing=e)
    got = loss(emb, P)
    # the norm part, exactly
    cross = float(w @ P.kernel_mean(pts, kern, smoothing=e))
    np.testing.assert_allclose(got, emb.norm2() - 2.0 * cross + P.kernel_mean_norm2(kern),
                               rtol=1e-12)
    # the cross part, by Monte Carlo through the embedding's own evaluation
    vals = emb(P.sample(100_000, rng=18))
    se = vals.std(ddof=1) / np.sqrt(vals.size)
    assert abs(vals.mean() - cross) <= Z_TOL * se
    assert Z_TOL * se < 0.02 * cross
