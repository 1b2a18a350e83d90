"""Spectral-filter estimators: fkmse (Tikhonov) and the filter family.

References are written in the sample space, independently of the
eigenbasis code: weights by the filters' own recursions, and leave-one-out
scores by literally refitting on the n - 1 remaining points with the same
parameter.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from kmtests.estimators._rules import General
from kmtests.estimators import (FKMSE, TSVD, Embedding, IteratedTikhonov, Landweber,
                                NuMethod, make)
from kmtests.estimators import _loocv as L

BW = 1.5
SPECTRAL = ["fkmse", "iterated_tikhonov", "landweber", "nu_method", "tsvd"]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20160101)


def rbf(x: np.ndarray) -> np.ndarray:
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * BW**2))


def grams(rng: np.random.Generator) -> dict[str, np.ndarray]:
    x = rng.normal(size=(9, 2))
    xl = rng.normal(loc=1.0, size=(10, 3))
    return {
        "rbf": rbf(x),
        "linear_singular": xl @ xl.T,                     # rank 3 < n = 10
        "duplicates": rbf(np.vstack([x[:5], x[:4]])),     # singular
        "poly2": (xl @ xl.T / 3 + 1) ** 2,
    }


# --------------------------------------------------------------------------
# sample-space references
# --------------------------------------------------------------------------
def ridge_fit(K: np.ndarray, lam: float, order: int = 1) -> np.ndarray:
    """(Iterated) Tikhonov: (K/m + lam I) b_j = (K/m) 1/m + lam b_{j-1}."""
    m = K.shape[0]
    A, one, b = K / m, np.ones(m) / m, np.zeros(m)
    for _ in range(order):
        b = np.linalg.solve(A + lam * np.eye(m), A @ one + lam * b)
    return b


def nu_coef(t: int, nu: float) -> tuple[float, float]:
    """Engl, Hanke & Neubauer (1996), Sec. 6.3 (mu_t - 1, omega_t)."""
    if t == 1:
        return 0.0, (4 * nu + 2) / (4 * nu + 1)
    u = ((t - 1) * (2 * t - 3) * (2 * t + 2 * nu - 1)
         / ((t + 2 * nu - 1) * (2 * t + 4 * nu - 1) * (2 * t + 2 * nu - 3)))
    return u, 4 * (2 * t + 2 * nu - 1) * (t + nu - 1) / ((t + 2 * nu - 1) * (2 * t + 4 * nu - 1))


def iterative_fit(K: np.ndarray, step: float, t: int, nu: float | None = None) -> np.ndarray:
    """Landweber (nu None) or nu-method: b_t = b + u (b - b_prev) + w step (K/m)(1/m - b)."""
    m = K.shape[0]
    A, one = K / m, np.ones(m) / m
    b_prev = b = np.zeros(m)
    for it in range(1, t + 1):
        u, w = (0.0, 1.0) if nu is None else nu_coef(it, nu)
        b_prev, b = b, b + u * (b - b_prev) + w * step * A @ (one - b)
    return b


def tsvd_fit(K: np.ndarray, r: int) -> np.ndarray:
    m = K.shape[0]
    _, V = np.linalg.eigh(K)
    Vr = V[:, m - r:]
    return Vr @ (Vr.T @ np.ones(m)) / m


def brute_loo(K: np.ndarray, fitter) -> float:
    """(1/n) sum_i ||k(., x_i) - sum_{j != i} b_j k(., x_j)||^2, b refitted on n - 1 points."""
    n = K.shape[0]
    total = 0.0
    for i in range(n):
        keep = np.delete(np.arange(n), i)
        Ki = K[np.ix_(keep, keep)]
        b = fitter(Ki)
        total += K[i, i] - 2.0 * K[i, keep] @ b + b @ Ki @ b
    return total / n


def prop15_literal(K: np.ndarray, lam: float) -> float:
    """JMLR Prop 15 exactly as printed (O(n^3) per lambda)."""
    n = K.shape[0]
    one = np.ones(n)
    G = np.linalg.inv(K + (n - 1) * lam * np.eye(n))
    A = np.zeros((n, n))
    B = np.zeros((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = 1.0
        k = K[:, i]
        d = k @ G @ e
        c = (K @ one - k - e * (k @ one) + e * K[i, i]
             + e * (k @ G @ K @ one) / (1 - d) - e * (k @ G @ k) / (1 - d)
             - e * (k @ G @ e) * (k @ one) / (1 - d) + e * (k @ G @ e) * K[i, i] / (1 - d))
        A += np.outer(c, c) / (n - 1) ** 2
        B += np.outer(c, k) / (n - 1)
    return np.trace(G @ K @ G @ A) / n - 2 * np.trace(G @ B) / n + np.trace(K) / n


# --------------------------------------------------------------------------
# fkmse: weights and Prop 15
# --------------------------------------------------------------------------
def test_fkmse_weights_and_lambda_conventions(rng):
    K = grams(rng)["rbf"]
    n = K.shape[0]
    lam = 0.03
    beta, p = FKMSE(lam=lam).weights(K)
    np.testing.assert_allclose(beta, np.linalg.solve(K + n * lam * np.eye(n), K @ np.ones(n)) / n,
                               rtol=1e-12)
    assert p["lam"] == lam and p["lam_gram"] == pytest.approx(n * lam) \
        and p["lam_convention"] == "operator"
    beta_g, p_g = FKMSE(lam=n * lam, lam_convention="gram").weights(K)
    np.testing.assert_allclose(beta_g, beta, rtol=1e-14)
    assert p_g["lam"] == pytest.approx(lam, rel=1e-15)
    np.testing.assert_allclose(beta, ridge_fit(K, lam), rtol=1e-12)


@pytest.mark.parametrize("case", ["rbf", "linear_singular", "duplicates", "poly2"])
def test_prop15_fast_form_equals_bruteforce(rng, case):
    K = grams(rng)[case]
    n = K.shape[0]
    spec = L.spectrum(K)
    top = spec.kappa[-1] / n
    lams = top * np.logspace(-4, 1, 11)
    fast = L.tikhonov_loo(spec, lams)
    brute = np.array([brute_loo(K, lambda Ki, lam=lam: ridge_fit(Ki, lam)) for lam in lams])
    literal = np.array([prop15_literal(K, lam) for lam in lams])
    scale = np.trace(K) / n
    assert np.max(np.abs(fast - brute)) <= 1e-10 * scale
    assert np.max(np.abs(literal - brute)) <= 1e-8 * scale   # printed formula (inverts K + lam_n I)
    # scalar calls (Brent) agree with the vectorised grid
    assert L.tikhonov_loo(spec, lams[3])[0] == pytest.approx(fast[3], rel=1e-13)


def test_fkmse_choice_equals_bruteforce_minimiser(rng):
    K = rbf(rng.normal(size=(12, 2)))
    n = K.shape[0]
    beta, p = FKMSE().weights(K)
    top = np.linalg.eigvalsh(K)[-1] / n

    def bf(z: float) -> float:
        return brute_loo(K, lambda Ki: ridge_fit(Ki, np.exp(z)))

    zs = np.log(top * np.geomspace(1e-10, 1e2, 121))
    j = int(np.argmin([bf(z) for z in zs]))
    res = minimize_scalar(bf, bounds=(zs[j - 1], zs[j + 1]), method="bounded",
                          options={"xatol": 1e-10})
    # lambda is rounded to 0.01% (quantise_log): its score is within 1e-8 of the minimum
    assert p["loocv"] == pytest.approx(res.fun, rel=1e-9)
    assert p["loocv"] <= res.fun * (1 + 1e-8)
    assert np.log(p["lam"]) == pytest.approx(res.x, abs=1e-3)
    assert p["loocv"] == pytest.approx(bf(np.log(p["lam"])), rel=1e-12)
    curve = p["loocv_curve"]
    np.testing.assert_allclose(curve["grid"][[0, -1]], top * np.array([1e-10, 1e2]), rtol=1e-12)
    assert curve["score"].shape == curve["grid"].shape == (45,)


def test_fkmse_weights_can_exceed_one_over_n(rng):
    # ICML claims all weights < 1/n; false for F-KMSE (PAPERS.md Sec. 1.5)
    x = rng.normal(size=(30, 2))
    beta, _ = FKMSE(lam=0.1, lam_convention="gram").weights(rbf(x))
    assert beta.max() > 1.0 / 30


def test_icml2014_criterion_is_the_leaky_loo(rng):
    """ICML Thm 4 = LOO of a fit that keeps x_i in its expansion (robust form)."""
    for K in (grams(rng)["rbf"], grams(rng)["linear_singular"]):
        n = K.shape[0]
        spec = L.spectrum(K)
        for lam in (1e-3, 0.1, 1.0):
            lg = n * lam
            leaky = 0.0
            for i in range(n):
                e = np.eye(n)[i]
                b = np.linalg.solve((n - 1) / n * K + lg * np.eye(n), K @ (1 - e) / n)
                leaky += (b - e) @ K @ (b - e) / n
            assert L.icml2014_loo(spec, lam)[0] == pytest.approx(leaky, rel=1e-10)
            proper = L.tikhonov_loo(spec, lam)[0]
            assert abs(proper - leaky) > 1e-4 * proper  # a different criterion
    # ICML Thm 4 as printed (needs K invertible) agrees on an RBF Gram
    K = grams(rng)["rbf"]
    n, lam = K.shape[0], 0.1
    A = np.linalg.inv(K + n * lam * np.eye(n))
    beta = A @ K @ np.ones(n) / n
    Mi = np.linalg.inv(K - K @ A @ K / n)
    C = Mi @ K @ Mi
    printed = np.mean([(K @ beta - K[:, i]) @ C @ (K @ beta - K[:, i]) for i in range(n)])
    assert L.icml2014_loo(L.spectrum(K), lam)[0] == pytest.approx(printed, rel=1e-8)
    est = FKMSE(criterion="icml2014")
    assert est.weights(K)[1]["loocv"] == pytest.approx(
        L.icml2014_loo(L.spectrum(K), est.weights(K)[1]["lam"])[0], rel=1e-12)


# --------------------------------------------------------------------------
# the filter family: weights and exact LOO
# --------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["rbf", "linear_singular", "duplicates"])
def test_filter_weights_equal_sample_space_recursions(rng, case):
    K = grams(rng)[case]
    n = K.shape[0]
    step = (n - 1) / np.linalg.eigvalsh(K)[-1]
    lam = 0.05 * np.trace(K) / n
    tol = dict(rtol=1e-9, atol=1e-12 * np.abs(ridge_fit(K, lam)).max())
    np.testing.assert_allclose(IteratedTikhonov(order=3, lam=lam).weights(K)[0],
                               ridge_fit(K, lam, 3), **tol)
    np.testing.assert_allclose(Landweber(n_iter=7).weights(K)[0], iterative_fit(K, step, 7), **tol)
    np.testing.assert_allclose(NuMethod(n_iter=6, nu=1.5).weights(K)[0],
                               iterative_fit(K, step, 6, nu=1.5), **tol)
    np.testing.assert_allclose(TSVD(rank=3).weights(K)[0], tsvd_fit(K, 3), **tol)
    # full rank: the projection of 1_n on range(K)
    np.testing.assert_allclose(TSVD(rank=n).weights(K)[0], np.ones(n) / n, rtol=1e-12)


@pytest.mark.parametrize("case", ["rbf", "linear_singular", "duplicates"])
def test_landweber_and_nu_loo_equal_bruteforce(rng, case):
    K = grams(rng)[case]
    n = K.shape[0]
    step = (n - 1) / np.linalg.eigvalsh(K)[-1]
    scale = np.trace(K) / n
    lw = Landweber(max_iter=25).weights(K)[1]
    assert lw["step"] == pytest.approx(step, rel=1e-12)
    bf = [brute_loo(K, lambda Ki, t=t: iterative_fit(Ki, step, t)) for t in range(1, 26)]
    assert np.max(np.abs(lw["loocv_curve"]["score"] - bf)) <= 1e-10 * scale
    assert lw["n_iter"] == int(np.argmin(bf)) + 1
    for nu in (0.5, 1.0, 2.0):
        p = NuMethod(nu=nu, max_iter=15).weights(K)[1]
        bf = [brute_loo(K, lambda Ki, t=t: iterative_fit(Ki, step, t, nu)) for t in range(1, 16)]
        assert np.max(np.abs(p["loocv_curve"]["score"] - bf)) <= 1e-10 * scale


@pytest.mark.parametrize("case", ["rbf", "linear_singular", "duplicates"])
def test_iterated_tikhonov_and_tsvd_loo_equal_bruteforce(rng, case):
    K = grams(rng)[case]
    n = K.shape[0]
    scale = np.trace(K) / n
    top = np.linalg.eigvalsh(K)[-1] / n
    for order in (2, 3):
        for lam in top * np.array([1e-3, 0.05, 2.0]):
            got = IteratedTikhonov(order=order, lam=lam).weights(K)[1]["loocv"]
            bf = brute_loo(K, lambda Ki, lam=lam: ridge_fit(Ki, lam, order))
            assert abs(got - bf) <= 1e-10 * scale
    p = TSVD().weights(K)[1]
    bf = [brute_loo(K, lambda Ki, r=r: tsvd_fit(Ki, r)) for r in range(1, n)]
    assert np.max(np.abs(p["loocv_curve"]["score"] - bf)) <= 1e-10 * scale
    assert p["rank"] == int(np.argmin(bf)) + 1


def test_iterated_tikhonov_order1_reproduces_fkmse(rng):
    K = rbf(rng.normal(size=(20, 3)))
    b1, p1 = FKMSE().weights(K)
    b2, p2 = IteratedTikhonov(order=1).weights(K)
    np.testing.assert_array_equal(b1, b2)
    assert p1["lam"] == p2["lam"] and p1["loocv"] == p2["loocv"]
    # the generic iterated-Tikhonov LOO at order 1 is Prop 15
    spec = L.spectrum(K)
    for lam in (1e-4, 1e-2, 1.0):
        assert L.iterated_tikhonov_loo(spec, lam, 1) == pytest.approx(
            L.tikhonov_loo(spec, lam)[0], rel=1e-12)


def test_nu_method_residual_polynomials_bounded():
    gamma = np.linspace(0.0, 1.0, 5001)
    for nu in (0.5, 1.0, 2.0):
        est = NuMethod(nu=nu)
        for t in (1, 2, 5, 30):
            r = est._residual(gamma, 1.0, t)
            assert np.max(np.abs(r)) <= 1.0 + 1e-12 and r[0] == 1.0


# --------------------------------------------------------------------------
# invariances and degenerate inputs
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", SPECTRAL)
def test_permutation_equivariance_and_scale_invariance(rng, name):
    K = rbf(rng.normal(size=(14, 2)))
    est = make(name)
    beta, p = est.weights(K)
    perm = rng.permutation(14)
    beta_p, p_p = est.weights(K[np.ix_(perm, perm)])
    np.testing.assert_allclose(beta_p, beta[perm], rtol=1e-6, atol=1e-10)
    beta_s, p_s = est.weights(7.5 * K)
    np.testing.assert_allclose(beta_s, beta, rtol=1e-6, atol=1e-10)
    assert p_s["lam"] == pytest.approx(7.5 * p["lam"], rel=1e-5)


@pytest.mark.parametrize("name", SPECTRAL)
@pytest.mark.parametrize("case", ["n2", "n3", "identical", "zero", "linear_singular",
                                  "duplicates", "hsic_centred"])
def test_degenerate_inputs_are_finite(rng, name, case):
    x = rng.normal(size=(8, 2))
    H = np.eye(8) - 1 / 8
    K = {
        "n2": rbf(x[:2]),
        "n3": rbf(x[:3]),
        "identical": rbf(np.repeat(x[:1], 5, axis=0)),
        "zero": np.zeros((4, 4)),
        "linear_singular": x @ x.T,
        "duplicates": rbf(np.vstack([x[:3], x[:3]])),
        "hsic_centred": (H @ rbf(x) @ H) * (H @ rbf(x[::-1]) @ H),
    }[case]
    beta, params = make(name).weights(K)
    assert beta.shape == (K.shape[0],) and np.all(np.isfinite(beta))
    for key, value in params.items():
        if key == "loocv_curve":
            assert np.all(np.isfinite(value["score"])) and np.all(np.isfinite(value["grid"]))
        elif key != "lam_convention":
            assert np.isfinite(value), key
    if case == "zero":
        np.testing.assert_array_equal(beta, 0.0)


def test_n2_loo_equals_bruteforce(rng):
    K = rbf(rng.normal(size=(2, 2)))
    spec = L.spectrum(K)
    for lam in (1e-3, 0.1, 3.0):
        assert L.tikhonov_loo(spec, lam)[0] == pytest.approx(
            brute_loo(K, lambda Ki: ridge_fit(Ki, lam)), rel=1e-12)
    p = Landweber(max_iter=5).weights(K)[1]
    bf = [brute_loo(K, lambda Ki, t=t: iterative_fit(Ki, p["step"], t)) for t in range(1, 6)]
    np.testing.assert_allclose(p["loocv_curve"]["score"], bf, rtol=1e-12)


# --------------------------------------------------------------------------
# validation, registry, fit, integration
# --------------------------------------------------------------------------
def test_validation(rng):
    K = rbf(rng.normal(size=(5, 2)))
    with pytest.raises(ValueError, match="`lam` must be a positive finite number"):
        FKMSE(lam=-1.0)
    with pytest.raises(ValueError, match="`lam_convention` must be one of 'gram', 'operator'"):
        FKMSE(lam_convention="icml")
    with pytest.raises(ValueError, match="`criterion` must be one of 'icml2014', 'jmlr2016'"):
        FKMSE(criterion="loo")
    with pytest.raises(ValueError, match="`lam_bounds` must be two numbers"):
        IteratedTikhonov(lam_bounds=(1.0, 0.1))
    with pytest.raises(ValueError, match="`grid_size` must be at least 3"):
        FKMSE(grid_size=2)
    with pytest.raises(TypeError, match="`order` must be a positive integer"):
        IteratedTikhonov(order=1.5)
    with pytest.raises(ValueError, match="`max_iter` must be a positive integer"):
        Landweber(max_iter=0)
    with pytest.raises(ValueError, match="`nu` must be a positive finite number"):
        NuMethod(nu=0.0)
    with pytest.raises(ValueError, match="`step` must be at most 1"):
        NuMethod(step=1e6).weights(K)
    with pytest.raises(ValueError, match="`rank` must be at most the sample size 5"):
        TSVD(rank=6).weights(K)
    with pytest.raises(ValueError, match="`K` must be a square Gram matrix"):
        FKMSE().weights(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="`K` must be at least 2 x 2"):
        FKMSE().weights(np.ones((1, 1)))


def test_registry_fit_and_uniform_flag(rng):
    x = rng.normal(size=(12, 2))
    for name in SPECTRAL:
        est = make(name)
        assert est.name == name and not est.uniform
        emb = est.fit(x, kernel="gaussian", bandwidth=BW)
        assert isinstance(emb, Embedding) and emb.points is not None
        np.testing.assert_array_equal(emb.points, x)
        assert emb.params["lam_convention"] == "operator" and emb.params["lam"] > 0
    assert make("fkmse", lam=0.1) == FKMSE(lam=0.1)
    rule = FKMSE().rule()
    assert isinstance(rule, General) and rule.weights.__self__ == FKMSE()


def test_permutation_tests_accept_spectral_estimators(rng):
    from kmtests import independence_test, two_sample_test
    x, y = rng.normal(size=(10, 2)), rng.normal(loc=1.0, size=(10, 2))
    res = two_sample_test(x, y, estimator="fkmse", n_resamples=19, rng=3)
    assert 0 < res.pvalue <= 1 and np.isfinite(res.statistic)
    res = independence_test(x, x + 0.1 * y, estimator="landweber", n_resamples=19, rng=3)
    assert 0 < res.pvalue <= 1 and np.isfinite(res.statistic)
