"""Kernels on distributions: SMM Table 1 closed forms and empirical Grams vs brute force."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from kmtests.estimators import KME, SKMSE, make  # noqa: E402
from kmtests.kernels import Gaussian, Linear, Polynomial  # noqa: E402
from kmtests.learn import Normal, distribution_gram, expected_kernel, flex_gram  # noqa: E402
from kmtests.learn.distributions import embedding_gram  # noqa: E402


def _rand_cov(rng, d, scale=1.0):
    A = rng.normal(size=(d, d))
    return scale * (A @ A.T / d + 0.1 * np.eye(d))


def _mc_kernel(kern, P, Q, n, rng):
    """Mean and standard error of k(x, z), x ~ P, z ~ Q independent."""
    x = rng.multivariate_normal(P.mean, P.cov, size=n)
    z = rng.multivariate_normal(Q.mean, Q.cov, size=n)
    if isinstance(kern, Gaussian):
        v = np.exp(-np.sum((x - z) ** 2, axis=1) / (2 * kern.bandwidth**2))
    else:
        ip = np.sum(x * z, axis=1)
        v = ip if isinstance(kern, Linear) else (ip + kern.coef0) ** kern.degree
    return v.mean(), v.std(ddof=1) / np.sqrt(n)


@pytest.mark.parametrize("kern", [Gaussian(bandwidth=1.2), Linear(), Polynomial(degree=2),
                                  Polynomial(degree=3), Polynomial(degree=3, coef0=0.3)],
                         ids=["rbf", "lin", "poly2", "poly3", "poly3-c0.3"])
def test_expected_kernel_matches_monte_carlo(kern, rng):
    d = 3
    P = [Normal(rng.normal(size=d), _rand_cov(rng, d, 0.5)) for _ in range(2)]
    Q = [Normal(rng.normal(size=d), _rand_cov(rng, d, 0.5))]
    K = expected_kernel(P, Q, kernel=kern)
    Kpp = expected_kernel(P, kernel=kern)
    for i in range(2):
        m, se = _mc_kernel(kern, P[i], Q[0], 400_000, rng)
        assert abs(K[i, 0] - m) < 4.5 * se
        m, se = _mc_kernel(kern, P[i], P[1 - i], 400_000, rng)
        assert abs(Kpp[i, 1 - i] - m) < 4.5 * se
        m, se = _mc_kernel(kern, P[i], P[i], 400_000, rng)  # independent copies
        assert abs(Kpp[i, i] - m) < 4.5 * se


def test_poly3_as_printed_in_smm_table1_is_wrong(rng):
    """SMM Table 1 prints 6 m_i' S_i S_j m_j; Monte Carlo needs 6 m_i' S_j S_i m_j."""
    d = 3
    Si = np.array([[2.0, 1.2, 0.0], [1.2, 1.0, 0.0], [0.0, 0.0, 0.3]])
    Sj = np.array([[0.3, 0.0, 0.0], [0.0, 1.5, -1.0], [0.0, -1.0, 1.5]])
    mi, mj = np.array([1.0, -0.5, 0.8]), np.array([0.4, 1.0, -1.2])
    P, Q = Normal(mi, Si), Normal(mj, Sj)
    kern = Polynomial(degree=3)
    ours = expected_kernel([P], [Q], kernel=kern)[0, 0]
    printed = ours - 6 * mi @ Sj @ Si @ mj + 6 * mi @ Si @ Sj @ mj
    m, se = _mc_kernel(kern, P, Q, 1_000_000, rng)
    assert abs(ours - m) < 4.5 * se
    assert abs(printed - m) > 10 * se
    assert d == 3


def test_linear_trace_as_printed(rng):
    P = [Normal(rng.normal(size=2), _rand_cov(rng, 2)) for _ in range(3)]
    K = expected_kernel(P, kernel="linear")
    Kt = expected_kernel(P, kernel="linear", linear_trace=True)
    assert np.allclose(Kt - K, np.diag([np.trace(p.cov) for p in P]))
    assert np.allclose(K, np.array([[a.mean @ b.mean for b in P] for a in P]))


def test_flex_gram_is_the_linear_kernel_of_isotropic_gaussians(rng):
    x = rng.normal(size=(5, 2))
    v = rng.uniform(0.0, 0.8, size=5)
    s = 0.9
    F = flex_gram(x, v, bandwidth=s)
    E = expected_kernel([Normal(a, b) for a, b in zip(x, v)], kernel="gaussian", bandwidth=s)
    assert np.allclose(F, E, rtol=1e-12)
    # SMM's "k_{s^2 + 2 v}" holds for equal variances, up to (s^2/(s^2 + 2v))^{d/2}
    Fe = flex_gram(x, np.full(5, 0.3), bandwidth=s)
    w2 = s * s + 0.6
    ref = (s * s / w2) * Gaussian(bandwidth=np.sqrt(w2)).gram(x)
    assert np.allclose(Fe, ref)


@pytest.mark.parametrize("est", ["kme", "skmse", "fkmse"])
def test_distribution_gram_matches_literal_double_sums(est, rng):
    bags = [rng.normal(m, 1.0, size=(n, 2)) for m, n in [(0, 6), (1, 4), (2, 7)]]
    h = 1.1
    K = distribution_gram(bags, kernel="gaussian", bandwidth=h, estimator=est)
    k = lambda a, b: np.exp(-np.sum((a - b) ** 2) / (2 * h * h))  # noqa: E731
    betas = [make(est).weights(Gaussian(bandwidth=h).gram(b))[0] for b in bags]
    ref = np.array([[sum(ba[p] * bb[q] * k(A[p], B[q]) for p in range(len(A))
                         for q in range(len(B))) for B, bb in zip(bags, betas)]
                    for A, ba in zip(bags, betas)])
    assert np.allclose(K, ref, rtol=1e-12)


def test_blocked_gram_equals_pairwise_inner_products(rng):
    bags = [rng.normal(size=(rng.integers(1, 9), 3)) for _ in range(12)]
    embs = [KME().fit(b, kernel=Gaussian(bandwidth=1.0)) if len(b) > 1 else None for b in bags]
    embs = [e for e in embs if e is not None]
    ref = np.array([[a.inner(b) for b in embs] for a in embs])
    assert np.allclose(embedding_gram(embs, block=5), ref, rtol=1e-12)
    assert np.allclose(embedding_gram(embs[:4], embs, block=1), ref[:4], rtol=1e-12)


def test_marginalized_embeddings_pair_through_inner(rng):
    bags = [rng.normal(m, 1.0, size=(15, 2)) for m in (0.0, 0.5, 2.0)]
    K = distribution_gram(bags, bandwidth=1.0, estimator="mkme")
    embs = [make("mkme").fit(b, kernel=Gaussian(bandwidth=1.0)) for b in bags]
    assert np.allclose(K, [[a.inner(b) for b in embs] for a in embs], rtol=1e-12)


def test_empirical_linear_kernel_is_unbiased_for_the_expected_kernel(rng):
    """Monte Carlo: the KME inner product of independent samples is unbiased."""
    d, n, reps = 2, 10, 3000
    P = Normal([0.0, 0.5], _rand_cov(rng, d, 0.6))
    Q = Normal([0.8, -0.2], _rand_cov(rng, d, 0.9))
    kern = Gaussian(bandwidth=1.0)
    target = expected_kernel([P], [Q], kernel=kern)[0, 0]
    vals = np.array([distribution_gram([rng.multivariate_normal(P.mean, P.cov, n)],
                                       [rng.multivariate_normal(Q.mean, Q.cov, n)],
                                       kernel=kern)[0, 0] for _ in range(reps)])
    assert abs(vals.mean() - target) < 4.5 * vals.std(ddof=1) / np.sqrt(reps)


def test_level2_kernels(rng):
    bags = [rng.normal(m, 1.0, size=(20, 2)) for m in (0.0, 1.0, 3.0)]
    G = distribution_gram(bags, bandwidth=1.0, estimator=SKMSE(shrinkage=0.2))
    D2 = np.diag(G)[:, None] + np.diag(G)[None, :] - 2 * G
    K = distribution_gram(bags, bandwidth=1.0, estimator=SKMSE(shrinkage=0.2),
                          level2="gaussian", level2_bandwidth=0.5)
    assert np.allclose(K, np.exp(-D2 / (2 * 0.25)))
    Km = distribution_gram(bags, bandwidth=1.0, estimator=SKMSE(shrinkage=0.2),
                           level2="gaussian")
    sig2 = np.median(D2[np.triu_indices(3, 1)])
    assert np.allclose(Km, np.exp(-D2 / (2 * sig2)))
    Kp = distribution_gram(bags, bandwidth=1.0, estimator=SKMSE(shrinkage=0.2),
                           level2="polynomial", degree=3, coef0=0.5)
    assert np.allclose(Kp, (G + 0.5) ** 3)
    cross = distribution_gram(bags[:2], bags, bandwidth=1.0, estimator=SKMSE(shrinkage=0.2),
                              level2="gaussian", level2_bandwidth=0.5)
    assert np.allclose(cross, K[:2])


def test_validation_messages(rng):
    bags = [rng.normal(size=(5, 2)) for _ in range(3)]
    with pytest.raises(TypeError, match="`X` must be a non-empty list"):
        distribution_gram(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="same number of columns"):
        distribution_gram(bags + [rng.normal(size=(5, 3))])
    with pytest.raises(TypeError, match="mixes samples and Normal"):
        distribution_gram(bags + [Normal([0.0, 0.0], 1.0)])
    with pytest.raises(ValueError, match="`level2` must be one of"):
        distribution_gram(bags, level2="rbf")
    with pytest.raises(ValueError, match="`cov` must be a symmetric"):
        Normal([0.0, 1.0], [[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="`variances` must be non-negative"):
        flex_gram(bags[0], -np.ones(5), bandwidth=1.0)


def test_embedding_gram_rejects_mixed_kernels(rng):
    x = rng.normal(size=(5, 2))
    a = KME().fit(x, kernel=Gaussian(bandwidth=1.0))
    b = KME().fit(x, kernel=Gaussian(bandwidth=2.0))
    with pytest.raises(ValueError, match="share one kernel"):
        embedding_gram([a, b])
    with pytest.raises(ValueError, match="`bandwidth` must be a positive number for Gaussian"):
        expected_kernel([Normal([0.0], 1.0)], kernel=Gaussian())
