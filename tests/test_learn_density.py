"""Kernel mean matching density estimation: objective, gradient, fit, sklearn API."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from scipy.optimize import check_grad  # noqa: E402
from scipy.special import logsumexp  # noqa: E402
from scipy.stats import multivariate_normal  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from kmtests.estimators import FKMSE, KME, MKME, SKMSE  # noqa: E402
from kmtests.estimators.marginalized import marginalized_gram  # noqa: E402
from kmtests.kernels import Gaussian, Laplacian, Linear, Polynomial  # noqa: E402
from kmtests.learn import KernelMeanMatchingDensity  # noqa: E402
from kmtests.learn._kmm import KMMProblem  # noqa: E402
from kmtests.learn.density import kmm_objective  # noqa: E402


def _k(kern, a, b):
    return float(kern.gram(np.atleast_2d(a), np.atleast_2d(b))[0, 0])


def _rowwise(kern, a, b):
    """k(a_i, b_i) for paired rows, from the kernels' formulas."""
    if isinstance(kern, Gaussian):
        return np.exp(-np.sum((a - b) ** 2, axis=1) / (2 * kern.bandwidth**2))
    ip = np.sum(a * b, axis=1)
    if isinstance(kern, Linear):
        return ip
    return (ip + kern.coef0) ** kern.degree


def _literal_objective(emb, pi, theta, s, kern, mc, gen):
    """||mu_hat - mu_Q||^2 as literal sums, the mixture expectations by Monte Carlo.

    Returns the estimate and its standard error (the Monte Carlo parts only).
    """
    const = 0.0
    for p, bp in zip(emb.points, emb.weights):
        for q, bq in zip(emb.points, emb.weights):
            const += bp * bq * _k(kern, p, q)
    d = theta.shape[1]
    cross = np.zeros(mc)
    rr = np.zeros(mc)
    for j in range(len(pi)):
        xj = theta[j] + np.sqrt(s[j]) * gen.standard_normal((mc, d))
        cross += pi[j] * (kern.gram(xj, emb.points) @ emb.weights)
        for q in range(len(pi)):
            xq = theta[q] + np.sqrt(s[q]) * gen.standard_normal((mc, d))
            rr += pi[j] * pi[q] * _rowwise(kern, xj, xq)
    val = const - 2.0 * cross.mean() + rr.mean()
    se = np.sqrt(np.var(rr - 2.0 * cross, ddof=1) / mc)
    return val, se


@pytest.mark.parametrize("kern", [Gaussian(bandwidth=1.5), Linear(), Polynomial(degree=2),
                                  Polynomial(degree=3, coef0=0.5)],
                         ids=["rbf", "lin", "poly2", "poly3"])
def test_objective_matches_literal_sums_and_monte_carlo(kern, rng):
    x = rng.normal(size=(6, 2))
    emb = SKMSE().fit(x, kernel=kern)
    pi = np.array([0.2, 0.5, 0.3])
    theta = rng.normal(size=(3, 2))
    s = np.array([0.3, 0.8, 0.5])
    closed = kmm_objective(emb, pi, theta, s)
    val, se = _literal_objective(emb, pi, theta, s, kern, 40_000, rng)
    assert abs(closed - val) < 4.5 * se + 1e-12


def test_objective_literal_double_sum_rbf(rng):
    """Exact literal double sums of the closed-form pieces (no vectorisation)."""
    h = 1.3
    kern = Gaussian(bandwidth=h)
    x = rng.normal(size=(5, 3))
    emb = FKMSE().fit(x, kernel=kern)
    pi, theta, s = np.array([0.6, 0.4]), rng.normal(size=(2, 3)), np.array([0.2, 0.7])
    d = 3
    total = 0.0
    for p in range(5):
        for q in range(5):
            total += emb.weights[p] * emb.weights[q] * np.exp(
                -np.sum((x[p] - x[q]) ** 2) / (2 * h * h))
    for j in range(2):
        for p in range(5):
            v = h * h + s[j]
            total -= 2 * pi[j] * emb.weights[p] * (h * h / v) ** (d / 2) * np.exp(
                -np.sum((x[p] - theta[j]) ** 2) / (2 * v))
        for q in range(2):
            v = h * h + s[j] + s[q]
            total += pi[j] * pi[q] * (h * h / v) ** (d / 2) * np.exp(
                -np.sum((theta[j] - theta[q]) ** 2) / (2 * v))
    assert kmm_objective(emb, pi, theta, s) == pytest.approx(total, rel=1e-12)


def test_objective_smoothed_embedding_uses_marginalized_kernel(rng):
    kern = Gaussian(bandwidth=1.0)
    x = rng.normal(size=(8, 2))
    emb = MKME(sigma2=0.3).fit(x, kernel=kern)
    pi, theta, s = np.array([0.3, 0.7]), rng.normal(size=(2, 2)), np.array([0.4, 0.1])
    const = emb.norm2()
    cross = sum(pi[j] * emb.weights @ marginalized_gram(x, theta[j:j + 1], kernel=kern,
                                                        smoothing_x=0.3,
                                                        smoothing_y=s[j])[:, 0]
                for j in range(2))
    rr = sum(pi[j] * pi[q] * marginalized_gram(theta[j:j + 1], theta[q:q + 1], kernel=kern,
                                               smoothing_x=s[j], smoothing_y=s[q])[0, 0]
             for j in range(2) for q in range(2))
    assert kmm_objective(emb, pi, theta, s) == pytest.approx(const - 2 * cross + rr, rel=1e-12)


def test_objective_is_zero_when_mixture_is_the_embedding(rng):
    x = rng.normal(size=(4, 2))
    emb = KME().fit(x, kernel=Gaussian(bandwidth=1.0))
    assert kmm_objective(emb, np.full(4, 0.25), x, np.full(4, 1e-14)) == pytest.approx(
        0.0, abs=1e-12)


@pytest.mark.parametrize("est,kern", [(KME(), Gaussian(bandwidth=1.2)),
                                      (MKME(sigma2=0.2), Gaussian(bandwidth=1.2)),
                                      (KME(), Linear()), (SKMSE(), Polynomial(degree=2)),
                                      (FKMSE(), Polynomial(degree=3, coef0=0.7))],
                         ids=["rbf", "rbf-mkme", "lin", "poly2", "poly3"])
def test_gradient_matches_finite_differences(est, kern, rng):
    x = rng.normal(size=(25, 3))
    prob = KMMProblem(est.fit(x, kernel=kern))
    m = 4
    w = 0.5 * rng.normal(size=m + 3 * m + m)
    f = lambda v: prob.value_and_grad(v, m)[0]  # noqa: E731
    g = lambda v: prob.value_and_grad(v, m)[1]  # noqa: E731
    assert check_grad(f, g, w, epsilon=1e-6) < 1e-5 * max(1.0, np.linalg.norm(g(w)))


def _two_blobs(rng, n=80):
    return np.vstack([rng.normal(-2, 0.5, (n, 1)), rng.normal(2, 0.5, (n, 1))])


def test_fit_recovers_two_components_and_lowers_objective(rng):
    x = _two_blobs(rng)
    q = KernelMeanMatchingDensity(n_components=2, random_state=0).fit(x)
    assert np.allclose(np.sort(q.means_.ravel()), [-2, 2], atol=0.2)
    assert np.allclose(q.weights_, 0.5, atol=0.08)
    init = KernelMeanMatchingDensity(n_components=2, random_state=0, max_iter=1)
    with pytest.warns(Warning, match="did not converge"):
        init.fit(x)
    assert q.objective_ < init.objective_
    assert q.objective_ == pytest.approx(kmm_objective(q.embedding_, q.weights_, q.means_,
                                                       q.variances_))


def test_score_samples_is_the_mixture_log_density(rng):
    x = rng.normal(size=(60, 2))
    q = KernelMeanMatchingDensity(n_components=3, estimator="skmse", random_state=1).fit(x)
    z = rng.normal(size=(7, 2))
    ref = [logsumexp([np.log(q.weights_[j]) + multivariate_normal(
        q.means_[j], q.variances_[j] * np.eye(2)).logpdf(t) for j in range(3)]) for t in z]
    assert np.allclose(q.score_samples(z), ref, rtol=1e-10)
    assert q.score(z) == pytest.approx(np.mean(ref))


def test_weights_only_keeps_kmeans_prototypes(rng):
    x = rng.normal(size=(50, 2))
    q = KernelMeanMatchingDensity(n_components=3, optimize="weights", random_state=3).fit(x)
    q0 = KernelMeanMatchingDensity(n_components=3, optimize="weights", random_state=3,
                                   max_iter=1)
    with pytest.warns(Warning, match="did not converge"):
        q0.fit(x)
    assert np.array_equal(q.means_, q0.means_)
    assert np.array_equal(q.variances_, q0.variances_)
    assert q.objective_ <= q0.objective_


def test_random_state_reproducible_and_sample(rng):
    x = rng.normal(size=(40, 2))
    a = KernelMeanMatchingDensity(n_components=3, random_state=7).fit(x)
    b = KernelMeanMatchingDensity(n_components=3, random_state=7).fit(x)
    assert np.array_equal(a.means_, b.means_) and np.array_equal(a.weights_, b.weights_)
    s1, s2 = a.sample(5000, random_state=0), a.sample(5000, random_state=0)
    assert np.array_equal(s1, s2) and s1.shape == (5000, 2)
    mean = a.weights_ @ a.means_
    var = a.weights_ @ (a.variances_[:, None] + a.means_**2) - mean**2
    assert np.all(np.abs(s1.mean(0) - mean) < 5 * np.sqrt(var / 5000))


def test_validation_messages(rng):
    x = rng.normal(size=(20, 2))
    with pytest.raises(ValueError, match="`n_components` must be at most"):
        KernelMeanMatchingDensity(n_components=30).fit(x)
    with pytest.raises(ValueError, match="`optimize` must be one of"):
        KernelMeanMatchingDensity(optimize="means").fit(x)
    with pytest.raises(ValueError, match="`kernel` must be 'gaussian', 'ard'"):
        KernelMeanMatchingDensity(n_components=2, kernel=Laplacian(bandwidth=1.0)).fit(x)
    with pytest.raises(ValueError, match="`estimator` must be one of"):
        KernelMeanMatchingDensity(n_components=2, estimator="nope").fit(x)
    with pytest.raises(ValueError, match="`min_variance` must be > 0"):
        KernelMeanMatchingDensity(min_variance=0).fit(x)
    with pytest.raises(TypeError, match="`n_init` must be an integer"):
        KernelMeanMatchingDensity(n_init=1.5).fit(x)


def test_pipeline_and_grid_search(rng):
    x = rng.normal(size=(60, 2)) * [1.0, 5.0]
    pipe = make_pipeline(StandardScaler(), KernelMeanMatchingDensity(n_components=2,
                                                                     n_init=3,
                                                                     random_state=0))
    gs = GridSearchCV(pipe, {"kernelmeanmatchingdensity__estimator": ["kme", "skmse"]},
                      cv=3).fit(x)
    assert gs.best_params_["kernelmeanmatchingdensity__estimator"] in ("kme", "skmse")
    assert np.isfinite(gs.score(x))
    c = clone(KernelMeanMatchingDensity(estimator=SKMSE(shrinkage=0.1)))
    assert c.get_params()["estimator"] == SKMSE(shrinkage=0.1)


@parametrize_with_checks([KernelMeanMatchingDensity(n_components=2, n_init=2)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_import_kmtests_does_not_import_sklearn():
    import subprocess
    import sys

    code = ("import sys, kmtests; assert 'sklearn' not in sys.modules; "
            "kmtests.learn.KernelMeanMatchingDensity; assert 'sklearn' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
