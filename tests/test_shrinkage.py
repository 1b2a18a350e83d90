"""Uniform shrinkage estimators: skmse (ICML S-KMSE = JMLR R-KMSE) and bkmse.

Every closed form is compared with a literal leave-one-out: the estimator is
refitted on the n - 1 remaining points (through its own public API) and the
score is minimised numerically.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from kmtests.estimators._rules import Uniform
from kmtests.estimators import BKMSE, KME, SKMSE, Embedding, make
from kmtests.kernels import Gaussian, Linear

BW = 1.5


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20140621)


def gram(x: np.ndarray, kernel: str = "gaussian") -> np.ndarray:
    if kernel == "linear":
        return x @ x.T
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * BW**2))


def stats(K: np.ndarray) -> tuple[float, float]:
    n = K.shape[0]
    return K.sum() / n**2, np.trace(K) / n


# --------------------------------------------------------------------------
# brute-force references
# --------------------------------------------------------------------------
def brute_loo(K: np.ndarray, alpha: float) -> float:
    """LOO score: the shrunk mean (1 - alpha) mu_hat refitted on the n - 1 other points."""
    n = K.shape[0]
    total = 0.0
    for i in range(n):
        keep = np.delete(np.arange(n), i)
        Ki = K[np.ix_(keep, keep)]
        b = np.full(n - 1, (1.0 - alpha) / (n - 1))
        total += K[i, i] - 2.0 * K[i, keep] @ b + b @ Ki @ b
    return total / n


def brute_loo_target(x: np.ndarray, alpha: float, z: np.ndarray, w: np.ndarray) -> float:
    """LOO score toward a target: literal embeddings, refitted by fit() on n - 1 points."""
    n = x.shape[0]
    est = SKMSE(shrinkage=alpha, target_points=z, target_weights=w)
    total = 0.0
    for i in range(n):
        emb = est.fit(np.delete(x, i, axis=0), kernel="gaussian", bandwidth=BW)
        point = Embedding(points=x[i:i + 1], weights=np.ones(1), kernel=emb.kernel,
                          params={}, estimator=KME())
        total += point.distance2(emb)
    return total / n


def brute_minimise(score, lo: float = 0.0, hi: float = 1.0) -> float:
    grid = np.linspace(lo, hi, 201)
    j = int(np.argmin([score(a) for a in grid]))
    a, b = grid[max(j - 1, 0)], grid[min(j + 1, 200)]
    res = minimize_scalar(score, bounds=(a, b), method="bounded", options={"xatol": 1e-12})
    return float(res.x) if res.fun <= score(grid[j]) else float(grid[j])


# --------------------------------------------------------------------------
# skmse: closed-form LOOCV = brute force
# --------------------------------------------------------------------------
@pytest.mark.parametrize("n", [3, 8, 25])
def test_skmse_closed_form_equals_bruteforce_minimiser(rng, n):
    x = rng.normal(size=(n, 3))
    K = gram(x)
    beta, params = SKMSE().weights(K)
    alpha = params["shrinkage"]
    assert 0.0 < alpha < 1.0  # interior case
    alpha_bf = brute_minimise(lambda a: brute_loo(K, a))
    assert abs(alpha - alpha_bf) < 1e-6
    assert params["loocv"] == pytest.approx(brute_loo(K, alpha), rel=1e-12)
    np.testing.assert_allclose(beta, (1 - alpha) / n)


def test_skmse_score_function_equals_bruteforce_and_jmlr_F(rng):
    from kmtests.estimators.shrinkage import loocv_score
    n = 11
    K = gram(rng.normal(size=(n, 2)))
    rho, varrho = stats(K)
    for a in (0.0, 0.2, 0.7, 1.0):
        bf = brute_loo(K, a)
        assert loocv_score(a, varrho - rho, rho, n) == pytest.approx(bf, rel=1e-12)
        # JMLR Sec. 5.3: LOOCV = F(alpha)/(n-1)^2
        F = a**2 * (n**2 * rho - 2 * n * rho + varrho) + 2 * n * a * (rho - varrho) \
            + n**2 * (varrho - rho)
        assert F / (n - 1) ** 2 == pytest.approx(bf, rel=1e-12)


def test_skmse_matches_icml_thm3_and_jmlr_prop9(rng):
    n = 15
    K = gram(rng.normal(size=(n, 4)))
    rho, varrho = stats(K)
    assert n * rho > varrho
    alpha = SKMSE().weights(K)[1]["shrinkage"]
    lam_jmlr = n * (varrho - rho) / ((n - 1) * (n * rho - varrho))         # JMLR (25)
    lam_icml = (varrho - rho) / ((n - 1) * rho + varrho / n - varrho)      # ICML Thm 3
    assert lam_icml == pytest.approx(lam_jmlr, rel=1e-12)
    assert alpha == pytest.approx(lam_jmlr / (1 + lam_jmlr), rel=1e-12)
    assert alpha == pytest.approx((varrho - rho) / ((n - 2) * rho + varrho / n), rel=1e-12)


def test_skmse_clips_when_n_rho_le_varrho(rng):
    # centred data + linear kernel: n rho = ||sum x||^2/n = 0 <= varrho
    x = rng.normal(size=(6, 3))
    x -= x.mean(axis=0)
    K = gram(x, "linear")
    rho, varrho = stats(K)
    assert n_rho_le(K)
    beta, params = SKMSE().weights(K)
    assert params["shrinkage"] == 1.0 and np.all(beta == 0.0)
    # the brute-force LOO minimiser over [0, 1] sits at the boundary 1
    assert brute_minimise(lambda a: brute_loo(K, a)) > 1 - 1e-6
    assert np.isfinite(params["loocv"])
    # B-KMSE needs no clipping and stays in [0, 1]
    a_b = BKMSE().weights(K)[1]["shrinkage"]
    assert 0.0 <= a_b <= 1.0


def n_rho_le(K: np.ndarray) -> bool:
    rho, varrho = stats(K)
    return K.shape[0] * rho <= varrho + 1e-12


# --------------------------------------------------------------------------
# bkmse: JMLR Thm 7 definitions, literally
# --------------------------------------------------------------------------
@pytest.mark.parametrize("kernel", ["gaussian", "linear"])
def test_bkmse_equals_jmlr_thm7_definitions(rng, kernel):
    n = 12
    x = rng.normal(loc=0.5, size=(n, 3))
    K = gram(x, kernel)
    e_kxx = np.mean([K[i, i] for i in range(n)])
    e_kxy = sum(K[i, j] for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    norm2 = sum(K[i, j] for i in range(n) for j in range(n)) / n**2
    delta = (e_kxx - e_kxy) / n
    expected = delta / (delta + norm2)
    beta, params = BKMSE().weights(K)
    assert params["shrinkage"] == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(beta, (1 - expected) / n, rtol=1e-12)
    assert params["loocv"] == pytest.approx(brute_loo(K, expected), rel=1e-12)


def test_bkmse_shrinks_less_than_skmse(rng):
    for _ in range(20):
        n = int(rng.integers(2, 30))
        K = gram(rng.normal(size=(n, int(rng.integers(1, 6)))) * rng.uniform(0.1, 3))
        assert BKMSE().weights(K)[1]["shrinkage"] <= SKMSE().weights(K)[1]["shrinkage"] + 1e-15


# --------------------------------------------------------------------------
# the uniform fast path
# --------------------------------------------------------------------------
@pytest.mark.parametrize("est", [SKMSE(), BKMSE(), SKMSE(shrinkage=0.3)], ids=repr)
def test_uniform_scale_equals_weights(rng, est):
    Ks = [gram(rng.normal(size=(n, 2))) for n in (2, 5, 17)]
    x = rng.normal(size=(7, 2))
    Ks += [gram(x - x.mean(0), "linear"), gram(np.vstack([x, x])), np.zeros((4, 4)),
           np.ones((5, 5))]
    rhos, varrhos, ns, expect = [], [], [], []
    for K in Ks:
        n = K.shape[0]
        beta, _ = est.weights(K)
        rho, varrho = stats(K)
        rule = est.rule()
        c = rule(rho, max(varrho - rho, 0.0), n)  # the rule takes v = varrho - rho
        np.testing.assert_allclose(beta * n, c, rtol=1e-14, atol=0)
        rhos.append(rho), varrhos.append(varrho), ns.append(n), expect.append(beta[0] * n)
    v = np.maximum(np.array(varrhos) - np.array(rhos), 0.0)
    vec = est.rule()(np.array(rhos), v, np.array(ns))
    assert vec.shape == (len(Ks),)
    np.testing.assert_allclose(vec, expect, rtol=1e-14, atol=0)
    # broadcasting over permutations with a scalar n
    r = np.array(rhos[:1] * 3)
    assert est.rule()(r, v[:1].repeat(3), ns[0]).shape == (3,)


def test_uniform_rule():
    assert SKMSE().uniform and BKMSE().uniform
    assert isinstance(SKMSE().rule(), Uniform) and SKMSE().rule().fixed is None
    assert SKMSE(shrinkage=0.25).rule() == Uniform(fixed=0.75)
    assert not SKMSE(target_points=[[0.0]]).uniform
    assert not BKMSE(target_points=[[0.0]]).uniform


# --------------------------------------------------------------------------
# degenerate inputs
# --------------------------------------------------------------------------
@pytest.mark.parametrize("est", [SKMSE(), BKMSE()], ids=repr)
@pytest.mark.parametrize("case", ["n2", "duplicates", "identical", "zero_linear",
                                  "singular_linear", "centred_linear"])
def test_degenerate_inputs_are_finite(rng, est, case):
    x = rng.normal(size=(8, 3))
    K = {
        "n2": gram(x[:2]),
        "duplicates": gram(np.vstack([x[:4], x[:4]])),
        "identical": gram(np.repeat(x[:1], 6, axis=0)),
        "zero_linear": np.zeros((5, 5)),
        "singular_linear": gram(x, "linear"),
        "centred_linear": gram(x - x.mean(0), "linear"),
    }[case]
    beta, params = est.weights(K)
    assert np.all(np.isfinite(beta)) and np.isfinite(params["loocv"])
    a = params["shrinkage"]
    assert 0.0 <= a <= 1.0
    if case in ("identical", "zero_linear"):
        assert a == 0.0  # rho = varrho: nothing to shrink, KME weights
        np.testing.assert_array_equal(beta, np.full(K.shape[0], 1 / K.shape[0]))


def test_n2_closed_forms(rng):
    K = gram(rng.normal(size=(2, 2)))
    rho, varrho = stats(K)
    assert SKMSE().weights(K)[1]["shrinkage"] == pytest.approx(
        min(1.0, (varrho - rho) / (varrho / 2)), rel=1e-12)
    assert BKMSE().weights(K)[1]["shrinkage"] == pytest.approx((varrho - rho) / varrho, rel=1e-12)
    a = SKMSE().weights(K)[1]["shrinkage"]
    assert a == pytest.approx(brute_minimise(lambda t: brute_loo(K, t)), abs=1e-6)


# --------------------------------------------------------------------------
# shrinkage toward a target f*
# --------------------------------------------------------------------------
def test_target_skmse_equals_bruteforce_minimiser(rng):
    n = 10
    x = rng.normal(size=(n, 2))
    z = rng.uniform(0, 1, size=(2, 2))
    w = np.array([0.8, -0.3])
    est = SKMSE(target_points=z, target_weights=w)
    emb = est.fit(x, kernel="gaussian", bandwidth=BW)
    alpha = emb.params["shrinkage"]
    assert 0.0 < alpha < 1.0
    alpha_bf = brute_minimise(lambda a: brute_loo_target(x, a, z, w))
    assert abs(alpha - alpha_bf) < 1e-6
    assert emb.params["loocv"] == pytest.approx(brute_loo_target(x, alpha, z, w), rel=1e-10)


def test_target_embedding_atoms_and_bkmse(rng):
    n = 9
    x = rng.normal(size=(n, 2))
    z = np.array([[0.3, 0.1]])
    w = np.array([2.0])
    emb = BKMSE(target_points=z, target_weights=w).fit(x, kernel="gaussian", bandwidth=BW)
    a = emb.params["shrinkage"]
    # the embedding = alpha f* + (1 - alpha) mu_hat, with the target atom appended
    np.testing.assert_array_equal(emb.points, np.vstack([x, z]))
    np.testing.assert_allclose(emb.weights, np.r_[np.full(n, (1 - a) / n), a * w])
    kern = Gaussian(bandwidth=BW)
    f_star = Embedding(points=z, weights=w, kernel=kern, params={}, estimator=KME())
    mu_hat = KME().fit(x, kernel="gaussian", bandwidth=BW)
    K = kern.gram(x)
    rho, varrho = stats(K)
    delta = (varrho - (n * rho - varrho) / (n - 1)) / n           # JMLR Thm 7
    expected = delta / (delta + f_star.distance2(mu_hat))            # JMLR Sec. 6.1.2
    assert a == pytest.approx(expected, rel=1e-12)
    t = np.array([[0.0, 0.0], [1.0, -1.0]])
    np.testing.assert_allclose(emb(t), a * f_star(t) + (1 - a) * mu_hat(t), rtol=1e-12)


@pytest.mark.parametrize("cls", [SKMSE, BKMSE])
def test_zero_target_reproduces_plain_shrinkage(rng, cls):
    x = rng.normal(size=(12, 3))
    plain = cls().fit(x, kernel="gaussian", bandwidth=BW)
    targ = cls(target_points=[[5.0, 5.0, 5.0]], target_weights=[0.0]).fit(
        x, kernel="gaussian", bandwidth=BW)
    assert targ.params["shrinkage"] == pytest.approx(plain.params["shrinkage"], rel=1e-12)
    assert targ.params["loocv"] == pytest.approx(plain.params["loocv"], rel=1e-12)
    np.testing.assert_allclose(targ.weights[:12], plain.weights, rtol=1e-12)


def test_target_defaults_and_fixed_shrinkage(rng):
    x = rng.normal(size=(5, 1))
    est = SKMSE(shrinkage=0.25, target_points=[[0.0], [1.0]])
    assert est.target_weights == (0.5, 0.5)
    emb = est.fit(x, kernel="linear")
    np.testing.assert_allclose(emb.weights, np.r_[np.full(5, 0.75 / 5), 0.125, 0.125])
    assert emb(np.array([[2.0]]))[0] == pytest.approx(2.0 * (0.75 * x.mean() + 0.25 * 0.5))
    # configuration objects stay hashable and comparable
    assert est == SKMSE(shrinkage=0.25, target_points=np.array([[0.0], [1.0]]))
    assert len({est, SKMSE(shrinkage=0.25, target_points=[[0.0], [1.0]])}) == 1


def test_target_rejected_by_the_tests_seam(rng):
    est = SKMSE(target_points=[[0.0, 0.0]])
    K = gram(rng.normal(size=(4, 2)))
    with pytest.raises(ValueError, match="`target_points`: shrinkage toward a target"):
        est.weights(K)
    with pytest.raises(ValueError, match="cannot be used in the two-sample"):
        est.rule()


# --------------------------------------------------------------------------
# validation, registry, integration
# --------------------------------------------------------------------------
def test_validation():
    with pytest.raises(ValueError, match=r"`shrinkage` must be in \[0, 1\]"):
        SKMSE(shrinkage=1.5)
    with pytest.raises(TypeError, match="`shrinkage` must be a number"):
        SKMSE(shrinkage=True)
    with pytest.raises(ValueError, match="`target_weights` needs `target_points`"):
        BKMSE(target_weights=[1.0])
    with pytest.raises(ValueError, match="`target_weights` must be finite numbers, one per row"):
        SKMSE(target_points=[[0.0], [1.0]], target_weights=[1.0])
    with pytest.raises(ValueError, match="`target_points` must have the columns of `x`"):
        SKMSE(target_points=[[0.0, 1.0]]).fit(np.zeros((3, 1)) + np.arange(3)[:, None],
                                             kernel="linear")
    with pytest.raises(TypeError, match="positional argument"):
        SKMSE(0.3)  # keyword-only configuration
    with pytest.raises(ValueError, match="`K` must be a square Gram matrix"):
        SKMSE().weights(np.zeros((3, 2)))


def test_registry_and_linear_kernel_fit(rng):
    assert make("skmse") == SKMSE() and make("BKMSE") == BKMSE()
    assert make("skmse", shrinkage=0.1).shrinkage == 0.1
    x = rng.normal(size=(10, 2)) + 3.0
    emb = make("skmse").fit(x, kernel=Linear())
    rho, varrho = stats(x @ x.T)
    a = emb.params["shrinkage"]
    assert a == pytest.approx((varrho - rho) / ((10 - 2) * rho + varrho / 10), rel=1e-12)
    np.testing.assert_allclose(emb(np.eye(2)), (1 - a) * x.mean(0), rtol=1e-12)


def test_permutation_tests_accept_uniform_shrinkage(rng):
    from kmtests import independence_test, two_sample_test
    x, y = rng.normal(size=(15, 2)), rng.normal(loc=1.0, size=(15, 2))
    for est in ("skmse", "bkmse"):
        res = two_sample_test(x, y, estimator=est, n_resamples=99, rng=1)
        assert 0 < res.pvalue <= 1 and np.isfinite(res.statistic)
        res = independence_test(x, x[:, :1] + y[:, :1], estimator=est, n_resamples=99, rng=1)
        assert 0 < res.pvalue <= 1 and np.isfinite(res.statistic)
    with pytest.raises(ValueError, match="`target_points`"):
        two_sample_test(x, y, estimator=SKMSE(target_points=[[0.0, 0.0]]), n_resamples=99,
                        rng=1)
