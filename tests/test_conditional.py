"""The conditional independence test (KCI with tuned regressions on z) against brute force.

* the statistic: explicit Gram matrices, centring and the residual operator
  ``R = n lam (Kz_c + n lam I)^{-1}`` (other filters through the eigendecomposition);
* the tuning: every criterion (GCV, leave-one-out, GP marginal likelihood) computed
  by literal formulas (refits for leave-one-out, log-determinants for the evidence)
  and its minimiser;
* the nulls: the gamma's moments, the chi-square weights, the wild draws;
* the exact test within the strata of a discrete z: each permuted statistic is the
  statistic recomputed from scratch on the permuted data, and enumeration gives the
  exact level;
* SplitKCI's residuals from an explicit fit on the training part;
* invariances (translation, scaling, order of the rows) and the refusals.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import kmtests
from kmtests import conditional_independence_test as ci
from kmtests.estimators import ConditionalMeanEmbedding
from kmtests.estimators import conditional as cme
from kmtests.kernels import Gaussian


def _std(a):
    a = np.asarray(a, dtype=float).reshape(len(a), -1)
    return (a - a.mean(0)) / a.std(0, ddof=1)


def _gram(a, bw):
    d2 = ((a[:, None, :] - a[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * bw * bw))


def _centre(K):
    n = K.shape[0]
    H = np.eye(n) - 1.0 / n
    return H @ K @ H


def _data(seed=0, n=40, dz=1, dependent=False):
    gen = np.random.default_rng(seed)
    z = gen.normal(size=(n, dz))
    x = np.sin(2 * z).sum(1, keepdims=True) + 0.3 * gen.normal(size=(n, 1))
    y = np.cos(z).sum(1, keepdims=True) + 0.3 * gen.normal(size=(n, 1))
    if dependent:
        y = y + x
    return x, y, z


def _brute_kci(x, y, z, bws, lam, augment=True):
    xs, ys, zs = _std(x), _std(y), _std(z)
    xa = np.hstack([xs, 0.5 * zs]) if augment else xs
    n = xs.shape[0]
    Kx, Ky, Kz = (_centre(_gram(a, b)) for a, b in zip((xa, ys, zs), bws))
    R = n * lam * np.linalg.inv(Kz + n * lam * np.eye(n))
    Kxt, Kyt = R @ Kx @ R, R @ Ky @ R
    return np.sum(Kxt * Kyt) / n**2, Kxt, Kyt


# -- the statistic ----------------------------------------------------------------------------------
@pytest.mark.parametrize("augment", [True, False])
def test_statistic_equals_brute_force(augment):
    x, y, z = _data(1, 35, dz=2)
    bws, lam = (1.1, 0.9, 1.3), 0.01
    res = ci(x, y, z, bandwidth_x=bws[0], bandwidth_y=bws[1], bandwidth_z=bws[2], lam=lam,
             augment=augment, null_moments="zhang")
    ref, Kxt, Kyt = _brute_kci(x, y, z, bws, lam, augment)
    assert res.statistic == pytest.approx(ref, rel=1e-10)
    # the gamma of the asymptotic null: mean tr(M)/n^2, variance 2 ||M||_F^2 / n^4
    n, M = 35, Kxt * Kyt
    mean, var = np.trace(M) / n**2, 2 * np.sum(M * M) / n**4
    p = stats.gamma.sf(ref, mean**2 / var, scale=var / mean)
    assert res.pvalue == pytest.approx(p, rel=1e-8)
    assert res.params["x"]["epsilon"] == pytest.approx(n * lam)
    # the default corrects the mean (and variance) by the noise terms of the rows'
    # correlation through the regressions: a loop over the pairs
    f = _brute_noise_factor(x, y, z, bws, lam, augment)
    p = stats.gamma.sf(ref, (mean * f) ** 2 / (var * f), scale=var * f / (mean * f))
    default = ci(x, y, z, bandwidth_x=bws[0], bandwidth_y=bws[1], bandwidth_z=bws[2],
                 lam=lam, augment=augment)
    assert f != pytest.approx(1.0, abs=1e-3)
    assert default.details["null_mean_factor"] == pytest.approx(f, rel=1e-10)
    assert default.pvalue == pytest.approx(p, rel=1e-8)


def _brute_noise_factor(x, y, z, bws, lam, augment):
    """The factor of the null mean by loops: ``A = R H R``, noise levels by the nearest
    neighbour in z / bandwidth (at most ``tr K~ / tr A``), the off-diagonal sums."""
    xs, ys, zs = _std(x), _std(y), _std(z)
    xa = np.hstack([xs, 0.5 * zs]) if augment else xs
    n = xs.shape[0]
    Kx, Ky, Kz = (_centre(_gram(a, b)) for a, b in zip((xa, ys, zs), bws))
    R = n * lam * np.linalg.inv(Kz + n * lam * np.eye(n))
    H = np.eye(n) - 1.0 / n
    A = R @ H @ R
    zm = zs / bws[2]
    levels = []
    for K in (Kx, Ky):
        Kt = R @ K @ R
        total = 0.0
        for i in range(n):
            d = [np.sum((zm[i] - zm[j]) ** 2) if j != i else np.inf for j in range(n)]
            j = int(np.argmin(d))
            total += K[i, i] + K[j, j] - 2 * K[i, j]
        levels.append(min(total / (2 * n), np.trace(Kt) / np.trace(A)))
    Kxt, Kyt = R @ Kx @ R, R @ Ky @ R
    off = lambda P, Q: sum(P[i, j] * Q[i, j] for i in range(n) for j in range(n) if i != j)
    sx, sy = levels
    extra = sx * off(A, Kyt) + sy * off(A, Kxt) - sx * sy * off(A, A)
    return 1.0 + extra / sum(Kxt[i, i] * Kyt[i, i] for i in range(n))


def test_one_given_lam_uses_a_cholesky_residual_equal_to_the_spectral_one():
    # the fixed settings (one kernel on z, one lam, Tikhonov) take ridge_residual, which
    # must be the spectral regression to rounding: R, R Kc R, df
    x, y, z = _data(3, 60, dz=2)
    zs, kz = _std(z), Gaussian(0.8)
    Kx = _centre(_gram(_std(x), 1.0))
    for lam in (1e-5, 1e-2, 1.0):
        rr = cme.ridge_residual(kz, zs, lam, cache=False)
        assert isinstance(rr, cme.RidgeResidual)
        fit = ConditionalMeanEmbedding(lam=lam).fit([kz], zs, Kx, cache=False)
        assert isinstance(fit, cme.FittedRegression)
        np.testing.assert_allclose(rr.residual_operator(), fit.residual_operator(),
                                   rtol=0, atol=1e-10)
        np.testing.assert_allclose(rr.residual_gram(Kx), fit.residual_gram(Kx), rtol=0,
                                   atol=1e-10 * np.abs(Kx).max())
        assert rr.df == pytest.approx(fit.df, rel=1e-9)
        np.testing.assert_allclose(rr.residual_operator() @ np.ones(60), 1.0, atol=1e-10)
        # R H R, the residuals' covariance (the gamma null's correction), against loops
        R, H = fit.residual_operator(), np.eye(60) - 1.0 / 60
        want = np.array([[sum(R[i, k] * H[k, m] * R[m, j] for k in range(60)
                              for m in range(60)) for j in range(60)] for i in (0, 7, 59)])
        for f in (rr, fit):
            np.testing.assert_allclose(f.residual_covariance()[[0, 7, 59]], want, rtol=0,
                                       atol=1e-10)
    # a target of full numerical rank takes the products with R
    Kw = _centre(_gram(np.random.default_rng(4).normal(size=(60, 5)), 0.3))
    fit = ConditionalMeanEmbedding(lam=1e-2).fit([kz], zs, Kw, cache=False)
    np.testing.assert_allclose(cme.ridge_residual(kz, zs, 1e-2, cache=False).residual_gram(Kw),
                               fit.residual_gram(Kw), rtol=0, atol=1e-10)
    # lam at rounding level: too ill-conditioned to factorise, the caller decomposes
    assert cme.ridge_residual(kz, zs, 1e-300, cache=False) is None
    assert cme.ridge_residual(kz, zs, 1e-12, cache=False) is None
    res = ci(x, y, z, bandwidth_x=1.0, bandwidth_y=1.0, bandwidth_z=0.8, lam=1e-300)
    assert np.isfinite(res.statistic) and 0.0 <= res.pvalue <= 1.0


def test_psd_factor_reproduces_the_matrix_or_declines():
    from kmtests._gram import psd_factor

    gen = np.random.default_rng(5)
    K = _centre(_gram(gen.normal(size=(80, 1)), 1.0))
    F = psd_factor(K, 40)
    assert F is not None and F.shape[1] < 40
    np.testing.assert_allclose(F @ F.T, K, rtol=0, atol=1e-12)
    assert psd_factor(K, F.shape[1] - 1) is None  # rank above the limit
    w, V = np.linalg.eigh(K)
    indefinite = K - 2.0 * w[-1] * np.outer(V[:, -1], V[:, -1])  # eigenvalue -w[-1]
    assert psd_factor(indefinite, 80) is None


def test_the_cholesky_residual_is_cached_with_the_spectra(monkeypatch):
    from scipy.linalg import lapack

    calls = []
    real = lapack.dpotrf
    monkeypatch.setattr(lapack, "dpotrf", lambda *a, **k: calls.append(1) or real(*a, **k))
    cme.clear_cache()
    x, y, z = _data(13, 50)
    fixed = dict(bandwidth_x=1.0, bandwidth_y=1.0, bandwidth_z=0.5, lam=1e-3)
    first = ci(x, y, z, **fixed)
    assert len(calls) == 1  # one factorisation shared by x and y
    assert ci(x, y, z, **fixed).statistic == first.statistic
    ci(y, x, z, **fixed)  # other variables, the same z
    assert len(calls) == 1
    ci(x, y, z, cache=False, **fixed)
    assert len(calls) == 2
    ci(x, y, z, **{**fixed, "lam": 2e-3})  # another lam: another operator
    assert len(calls) == 3
    cme.clear_cache()


@pytest.mark.parametrize("filt", ["showalter", "cutoff", "iterated_tikhonov"])
def test_other_filters_are_the_shrink_factors_of_the_spectrum(filt):
    x, y, z = _data(2, 30)
    bw = 0.8
    res = ci(x, y, z, bandwidth_x=1.0, bandwidth_y=1.0, bandwidth_z=bw, lam=0.02, filter=filt)
    xs, ys, zs = _std(x), _std(y), _std(z)
    Kz = _centre(_gram(zs, bw))
    w, V = np.linalg.eigh(Kz)
    w = np.clip(w, 0, None)
    g = kmtests.estimators.filters.FILTERS[filt](w / 30, 0.02)
    h = np.clip(w / 30 * g, 0, 1)
    h[w < 1e-12 * w.max()] = 0.0
    R = np.eye(30) - (V * h) @ V.T
    Kx = _centre(_gram(np.hstack([xs, 0.5 * zs]), 1.0))
    Ky = _centre(_gram(ys, 1.0))
    ref = np.sum((R @ Kx @ R) * (R @ Ky @ R)) / 900
    assert res.statistic == pytest.approx(ref, rel=1e-8)


# -- the tuning -------------------------------------------------------------------------------------
def _brute_scores(criterion, zs, Kc, bw, lams):
    n = zs.shape[0]
    Kz = _centre(_gram(zs, bw))
    out = []
    for lam in lams:
        P = Kz @ np.linalg.inv(Kz + n * lam * np.eye(n))
        R = np.eye(n) - P
        if criterion == "gcv":
            out.append(n * np.trace(R @ Kc @ R) / (n - np.trace(P)) ** 2)
        elif criterion == "loo":
            errs = []
            for i in range(n):  # refit without point i, with the same kernel and n lam
                keep = np.r_[0:i, i + 1:n]
                w = np.linalg.solve(Kz[np.ix_(keep, keep)] + n * lam * np.eye(n - 1),
                                    Kz[keep, i])
                errs.append(Kc[i, i] - 2 * w @ Kc[keep, i] + w @ Kc[np.ix_(keep, keep)] @ w)
            out.append(np.mean(errs))
        else:  # GP evidence on the centred subspace, amplitude profiled out
            Q = np.linalg.qr(np.eye(n) - 1.0 / n)[0][:, : n - 1]
            A = Q.T @ Kz @ Q + n * lam * np.eye(n - 1)
            S = np.trace(np.linalg.solve(A, Q.T @ Kc @ Q))
            out.append((n - 1) * np.log(S) + np.linalg.slogdet(A)[1])
    return np.array(out)


@pytest.mark.parametrize("criterion", ["gcv", "loo", "marglik"])
def test_tuning_criteria_equal_literal_formulas(criterion):
    x, _, z = _data(3, 24)
    zs = _std(z)
    Kc = _centre(_gram(np.hstack([_std(x), 0.5 * zs]), 1.0))
    bws = [0.3, 0.9]
    lams = np.array([1e-4, 1e-3, 1e-2, 1e-1])
    fit = ConditionalMeanEmbedding(lam=lams, criterion=criterion, max_df=1.0).fit(
        [Gaussian(b) for b in bws], zs, Kc, cache=False)
    brute = np.vstack([_brute_scores(criterion, zs, Kc, b, lams) for b in bws])
    if criterion == "marglik":  # equal up to a constant
        np.testing.assert_allclose(fit.scores - fit.scores[0, 0], brute - brute[0, 0],
                                   rtol=1e-7, atol=1e-7)
    else:
        np.testing.assert_allclose(fit.scores, brute, rtol=1e-8)
    i, j = np.unravel_index(np.argmin(brute), brute.shape)
    assert fit.lam == lams[j] and fit.kernel.bandwidth == bws[i]


@pytest.mark.parametrize("criterion, filt", [("gcv", "tikhonov"), ("loo", "tikhonov"),
                                            ("marglik", "tikhonov"), ("gcv", "showalter"),
                                            ("gcv", "cutoff")])
def test_search_never_chooses_an_interpolating_regression(criterion, filt):
    """On a 3-dimensional z with narrow candidate kernels (a nearly white Gram matrix)
    GCV chose df = 198.9 of n = 200 without the bound; with it every criterion stays at
    or below max_df (n - 1), and the excluded candidates score inf."""
    gen = np.random.default_rng(31)
    n = 120
    z = gen.normal(size=(n, 3))
    x = np.sin(2 * z.sum(axis=1, keepdims=True) / np.sqrt(3)) + 0.3 * gen.normal(size=(n, 1))
    Kc = _centre(_gram(_std(x), 1.0))
    kernels = [Gaussian(b) for b in (0.2, 0.5, 1.5)]
    for max_df in (0.5, 0.25):
        reg = ConditionalMeanEmbedding(filter=filt, criterion=criterion, max_df=max_df)
        fit = reg.fit(kernels, z, Kc, cache=False)
        assert fit.df <= max_df * (n - 1) + 1e-9
        for spec, row in zip([cme.z_spectrum(k, z, cache=False) for k in kernels],
                             fit.scores):
            dfs = np.array([cme.shrink_factor(filt, spec.kappa / n, lam).sum()
                            for lam in cme.lambda_grid_cme(spec.trace, n)])
            assert np.all(np.isinf(row[dfs > max_df * (n - 1)]))
            assert np.all(np.isfinite(row[dfs <= max_df * (n - 1)]))
    # without the bound GCV interpolates here (what the bound is for)
    if criterion == "gcv" and filt == "tikhonov":
        free = ConditionalMeanEmbedding(max_df=1.0).fit(kernels, z, Kc, cache=False)
        assert free.df > 0.9 * (n - 1)


@pytest.mark.parametrize("max_df", [0.0, 1.5, True, "half"])
def test_max_df_is_checked(max_df):
    with pytest.raises(ValueError, match="`max_df` must be a number in"):
        ConditionalMeanEmbedding(max_df=max_df)


def test_each_variable_gets_its_own_regression():
    """x depends sharply on z, y smoothly: the criterion picks a narrower bandwidth on z
    for x than for y."""
    gen = np.random.default_rng(4)
    z = gen.uniform(-2, 2, size=300)
    x = np.sin(6 * z) + 0.1 * gen.normal(size=300)
    y = z + 0.3 * gen.normal(size=300)
    res = ci(x, y, z, augment=False)
    assert res.params["x"]["bandwidth_z"] < res.params["y"]["bandwidth_z"]
    assert res.params["x"]["df"] > res.params["y"]["df"]


# -- the nulls --------------------------------------------------------------------------------------
def test_chi2_weights_are_the_eigenvalues_of_the_product():
    x, y, z = _data(5, 30)
    bws, lam = (1.0, 1.0, 0.7), 0.005
    _, Kxt, Kyt = _brute_kci(x, y, z, bws, lam)
    ev = np.sort(np.linalg.eigvalsh(Kxt * Kyt))[::-1] / 900
    from kmtests.null.chi2 import null_eigenvalues

    got = null_eigenvalues(Kxt, Kyt)
    np.testing.assert_allclose(got, ev[: got.size], rtol=1e-8, atol=1e-15)
    res = ci(x, y, z, bandwidth_x=1.0, bandwidth_y=1.0, bandwidth_z=0.7, lam=lam,
             method="chi2", n_resamples=500, rng=2)
    draws = np.random.default_rng(2).chisquare(1.0, size=(500, got.size)) @ got
    np.testing.assert_allclose(res.null_distribution, draws, rtol=1e-12)
    assert res.pvalue == (1 + np.sum(draws >= res.statistic)) / 501


def test_wild_bootstrap_draws_of_the_residual_hsic():
    from kmtests.null import WildBootstrap
    from kmtests.null.wild import multipliers

    x, y, z = _data(6, 25)
    bws, lam = (1.0, 1.0, 0.7), 0.005
    _, Kxt, Kyt = _brute_kci(x, y, z, bws, lam)
    res = ci(x, y, z, bandwidth_x=1.0, bandwidth_y=1.0, bandwidth_z=0.7, lam=lam,
             method="wild", n_resamples=50, rng=4)
    assert res.method.process == "gaussian"
    W = multipliers(np.random.default_rng(4), 50, 25, "gaussian", 20.0)
    ref = np.einsum("bi,ij,bj->b", W, Kxt * Kyt, W) / 625
    np.testing.assert_allclose(res.null_distribution, ref, rtol=1e-9)
    # the same draws as the object with Gaussian multipliers; Rademacher ones are refused
    obj = ci(x, y, z, bandwidth_x=1.0, bandwidth_y=1.0, bandwidth_z=0.7, lam=lam,
             method=WildBootstrap(n_resamples=50, rng=4, process="gaussian"))
    np.testing.assert_array_equal(obj.null_distribution, res.null_distribution)
    with pytest.raises(ValueError, match="Rademacher multipliers make the wild bootstrap"):
        ci(x, y, z, method=WildBootstrap(n_resamples=50, rng=4))


def test_gaussian_wild_draws_have_the_weighted_chi2_null_moments():
    """With Gaussian multipliers W' M W / n^2 (W centred) has mean tr(C M C) / n^2 and
    variance 2 tr((C M C)^2) / n^4, C the centring matrix: the weighted chi-square null of
    the eigenvalues of C M C (a Monte Carlo check with 20000 draws)."""
    x, y, z = _data(7, 20)
    res = ci(x, y, z, bandwidth_x=1.0, bandwidth_y=1.0, bandwidth_z=0.7, lam=0.005,
             method="wild", n_resamples=20000, rng=5)
    _, Kxt, Kyt = _brute_kci(x, y, z, (1.0, 1.0, 0.7), 0.005)
    n = 20
    C = np.eye(n) - 1.0 / n
    M = C @ (Kxt * Kyt) @ C
    draws = res.null_distribution
    mean, var = np.trace(M) / n ** 2, 2 * np.trace(M @ M) / n ** 4
    assert abs(draws.mean() - mean) < 4 * np.sqrt(var / draws.size)
    assert draws.var() == pytest.approx(var, rel=0.06)


# -- the exact test within the strata of a discrete z ----------------------------------------------
def test_strata_permutations_are_the_statistic_recomputed_and_exact():
    """z takes two values; permuting y within them: every permuted statistic equals KCI
    recomputed from scratch on the permuted data (tuned regressions included), and over
    all 4! 4! = 576 arrangements the test rejects at most floor(0.05 * 576) = 28."""
    gen = np.random.default_rng(7)
    z = np.repeat([0.0, 1.0], 4)
    x = z + gen.normal(size=8)
    y = z + gen.normal(size=8)
    kw = dict(strata=z, n_resamples=10**4, bandwidth_x=1.0, bandwidth_y=1.0)
    res = ci(x, y, z, **kw)
    assert res.exact and res.n_resamples == 576
    groups = [np.flatnonzero(z == v) for v in (0.0, 1.0)]
    arrangements = []
    for p0 in itertools.permutations(groups[0]):
        for p1 in itertools.permutations(groups[1]):
            perm = np.empty(8, dtype=int)
            perm[groups[0]], perm[groups[1]] = p0, p1
            arrangements.append(perm)
    recomputed = np.sort([ci(x, y[p], z, bandwidth_x=1.0, bandwidth_y=1.0).statistic
                          for p in arrangements[:60]])
    null = np.sort(res.null_distribution)
    # the first 60 arrangements' recomputed statistics are among the null's values
    assert all(np.min(np.abs(null - v)) <= 1e-12 * max(abs(v), 1e-300) + 1e-16
               for v in recomputed)
    pvals = [ci(x, y[p], z, **kw).pvalue for p in arrangements]
    assert sum(p <= 0.05 for p in pvals) <= math.floor(0.05 * 576)


# -- SplitKCI -------------------------------------------------------------------------------------
def test_split_residuals_are_an_explicit_fit_on_the_training_part():
    x, y, z = _data(8, 40)
    lam = 0.01
    res = ci(x, y, z, statistic="split", bandwidth_x=1.0, bandwidth_y=1.0, bandwidth_z=0.8,
             lam=lam, rng=3)
    from kmtests._rng import child

    order = child(3, "split").permutation(40)
    A, B = np.sort(order[:20]), np.sort(order[20:])
    xs, ys, zs = _std(x), _std(y), _std(z)

    def residual_gram(feat, bw):
        K = _gram(feat, bw)
        Kz = _gram(zs, 0.8)
        Kaa = _centre(Kz[np.ix_(A, A)])
        # kernel on z centred at the training mean embedding
        kc = (Kz[np.ix_(B, A)] - Kz[np.ix_(B, A)].mean(1, keepdims=True)
              - Kz[np.ix_(A, A)].mean(0)[None, :] + Kz[np.ix_(A, A)].mean())
        alpha = kc @ np.linalg.pinv(Kaa + 20 * lam * np.eye(20), hermitian=True)
        # features centred at the training mean: r_b = phi_b - mean_A - alpha (phi_A - mean)
        W = alpha + (1 - alpha.sum(1, keepdims=True)) / 20
        Rg = (K[np.ix_(B, B)] - W @ K[np.ix_(A, B)] - K[np.ix_(B, A)] @ W.T
              + W @ K[np.ix_(A, A)] @ W.T)
        return _centre(Rg)

    Kxt = residual_gram(np.hstack([xs, 0.5 * zs]), 1.0)
    Kyt = residual_gram(ys, 1.0)
    assert res.statistic == pytest.approx(np.sum(Kxt * Kyt) / 400, rel=1e-7)
    assert res.sizes["n_train"] == 20 and res.sizes["n_test"] == 20
    again = ci(x, y, z, statistic="split", rng=3, bandwidth_x=1.0, bandwidth_y=1.0,
               bandwidth_z=0.8, lam=lam)
    assert again.statistic == res.statistic


# -- invariances, level and power on easy cases -------------------------------------------------
def test_translation_scaling_and_row_order_do_not_change_the_test():
    x, y, z = _data(9, 60, dz=2)
    ref = ci(x, y, z)
    order = np.random.default_rng(1).permutation(60)
    moved = ci(3.0 * x[order] + 1e6, -2.0 * y[order] + 5.0, z[order] * [4.0, 0.5] - 7.0)
    assert moved.pvalue == pytest.approx(ref.pvalue, rel=1e-6)
    assert moved.statistic == pytest.approx(ref.statistic, rel=1e-6)


def test_detects_conditional_dependence_and_not_common_causes():
    gen = np.random.default_rng(10)
    z = gen.normal(size=200)
    x, y = z + 0.5 * gen.normal(size=200), z ** 2 + 0.5 * gen.normal(size=200) + z
    assert ci(x, y, z).pvalue > 0.01
    assert kmtests.independence_test(x, y, n_resamples=199, rng=1).pvalue <= 0.01
    x, y, z = _data(11, 200, dependent=True)
    assert ci(x, y, z).pvalue < 1e-4


def test_cache_reuses_the_decompositions_of_z(monkeypatch):
    calls = []
    real = cme.centred_spectrum  # the decomposition of z, as the estimator calls it
    monkeypatch.setattr(cme, "centred_spectrum", lambda K: calls.append(1) or real(K))
    cme.clear_cache()
    x, y, z = _data(12, 50)
    ci(x, y, z)
    first = len(calls)
    assert first == 5  # one per candidate bandwidth on z, shared by x and y
    ci(y, x + 1.0, z)  # other variables, the same z: no new decomposition
    assert len(calls) == first
    ci(x, y, z, cache=False)  # decomposed again (once for both variables), not kept
    assert len(calls) == 2 * first
    ci(x, y, z)
    assert len(calls) == 2 * first
    cme.clear_cache()


def test_pandas_inputs_are_paired_by_index_and_named():
    pd = pytest.importorskip("pandas")
    x, y, z = _data(13, 30)
    idx = np.arange(30)[::-1]
    X = pd.Series(x.ravel(), name="a")
    Y = pd.Series(y.ravel(), name="b").iloc[idx]
    Z = pd.DataFrame({"c": z.ravel()})
    res = ci(X, Y, Z)
    assert res.statistic == pytest.approx(ci(x, y, z).statistic, rel=1e-12)
    assert res.data_name == "a and b given z[c]"


# -- refusals -------------------------------------------------------------------------------------
def test_seed_without_draws_is_accepted():
    """A script that seeds every test may seed this one too (issue 32): the gamma null draws
    nothing, so the seed changes nothing and the result says so (0.2 refused it)."""
    x, y, z = _data(14, 30)
    res = ci(x, y, z, rng=1)
    assert res.pvalue == ci(x, y, z).pvalue
    assert any("nothing was drawn" in n for n in res.notes)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(method="permutation"), ValueError, "needs permutations that keep the conditional"),
    (dict(statistic="split", strata=np.zeros(30)), ValueError, "permutations within strata"),
    (dict(kernel_x="precomputed"), ValueError, "precomputed Gram matrices are not supported"),
    (dict(lam=-1.0), ValueError, "`lam` must be a positive number"),
    (dict(lam="gcv"), ValueError, "`lam` must be a positive number"),
    (dict(criterion="loo", filter="cutoff"), ValueError, "criterion='loo' is the exact"),
    (dict(criterion="aic"), ValueError, "`criterion` must be one of"),
    (dict(bandwidth_z=[1.0, 1.0]), ValueError, "distinct positive numbers"),
    (dict(bandwidth_z="wide"), ValueError, "`bandwidth_z` must be"),
    # issue 32: an empty grid is refused (it was read as "auto"), as `lam=[]` is
    (dict(bandwidth_z=[]), ValueError, "`bandwidth_z` must be"),
    (dict(bandwidth_z=np.array([])), ValueError, "`bandwidth_z` must be"),
    (dict(split_size=0.5), ValueError, "`split_size` configures statistic='split'"),
    (dict(statistic="split", split_size=1.5), ValueError, "`split` must be a fraction"),
    (dict(method="gamma", n_resamples=99), ValueError, "`n_resamples` do(es) not apply"),
    (dict(statistic="split", method="wild"), ValueError, "does not keep the level of SplitKCI"),
])
def test_refusals(kwargs, error, match):
    x, y, z = _data(14, 30)
    with pytest.raises(error, match=match.replace("(", r"\(").replace(")", r"\)")):
        ci(x, y, z, **kwargs)


def test_a_seed_is_accepted_where_nothing_is_drawn():
    """Issue 32: a seed with the gamma null (which draws nothing) was refused ("`rng`
    do(es) not apply"); it is accepted, and the result says nothing was drawn."""
    x, y, z = _data(14, 30)
    seeded, plain = ci(x, y, z, rng=0), ci(x, y, z)
    assert seeded.pvalue == plain.pvalue and seeded.statistic == plain.statistic
    note = "a seed (`rng`) was given, but method='gamma' draws nothing"
    assert any(n.startswith(note) for n in seeded.notes)
    assert note in str(seeded) and not any("draws nothing" in n for n in plain.notes)
    with pytest.raises(ValueError, match="`n_resamples` do"):
        ci(x, y, z, rng=0, n_resamples=99)


@pytest.mark.parametrize("method", ["gamma", "normal"])
def test_a_seed_is_accepted_by_the_other_nulls_that_draw_nothing(method):
    gen = np.random.default_rng(3)
    x, y = gen.normal(size=(40, 1)), gen.normal(size=(40, 1))
    stat = "block" if method == "normal" else None
    seeded = kmtests.two_sample_test(x, y, method=method, statistic=stat, rng=5)
    assert seeded.pvalue == kmtests.two_sample_test(x, y, method=method,
                                                    statistic=stat).pvalue
    assert any("draws nothing" in n for n in seeded.notes)


def test_a_bandwidth_z_grid_as_an_array_is_the_list():
    x, y, z = _data(14, 30)
    a = ci(x, y, z, bandwidth_z=np.array([0.5, 1.0]))
    assert a.pvalue == ci(x, y, z, bandwidth_z=[0.5, 1.0]).pvalue


def test_sizes_are_checked():
    x, y, z = _data(15, 30)
    with pytest.raises(ValueError, match="same number of observations"):
        ci(x, y[:29], z)
    with pytest.raises(ValueError, match="at least 6 observations"):
        ci(x[:5], y[:5], z[:5])


def test_report_names_the_regression_and_the_null():
    x, y, z = _data(16, 80)
    res = ci(x, y, z)
    line = " ".join(str(res).split())
    assert "Kernel conditional independence test (KCI): KCI (V-statistic of the regression " \
           "residuals), kernel ridge regression on z, tuned by gcv, exact engine, gamma " \
           "approximation to the null, asymptotic moments" in line
    text = res.summary().as_text()
    for key in ("filter: tikhonov", "criterion: gcv", "lam_x", "lam_y",
                "bandwidth_z_x", "moments: asymptotic"):
        assert key in text
    assert res.to_dict()["details"]["regression"]["x"]["lam"] == res.params["x"]["lam"]


def test_nearest_neighbours_are_kept_per_metric_and_equal_loops():
    """The corrected gamma's nearest neighbours in z (the store PC reuses): every other row
    at the smallest distance, weighted by one over their number, read-only, dropped by
    ``clear_cache``."""
    from kmtests.statistics import kci as kci_mod

    gen = np.random.default_rng(11)
    zm = np.vstack([gen.normal(size=(30, 2)), [[0.0, 0.0]] * 3])   # three tied rows
    want = set()
    for i in range(33):
        d = [float(np.sum((zm[i] - zm[j]) ** 2)) if j != i else np.inf for j in range(33)]
        ties = [j for j in range(33) if d[j] <= min(d) * (1 + 1e-9)]
        want |= {(i, j, 1.0 / len(ties)) for j in ties}
    rows, cols, w = kci_mod._nearest(zm)
    assert set(zip(rows.tolist(), cols.tolist(), w.tolist())) == want
    assert len(rows) == 30 + 3 * 2 and not rows.flags.writeable
    assert kci_mod._nearest(zm.copy())[0] is rows          # the same bytes: from the store
    assert kci_mod._nearest(zm * 2.0)[0] is not rows
    cme.clear_cache()
    assert kci_mod._nearest(zm)[0] is not rows


def test_corrected_pvalue_does_not_depend_on_the_order_of_the_rows_with_tied_z():
    """A rounded (or discrete) z ties neighbours: the noise level averages over the tied
    ones, so that reordering the rows leaves the p-value (failed when the first tied row
    was taken: 0.27402 against 0.27389)."""
    gen = np.random.default_rng(4)
    n = 120
    z = np.round(gen.normal(size=(n, 2)), 1)
    x, y = z[:, 0] + gen.normal(size=n), z[:, 1] + gen.normal(size=n)
    p = gen.permutation(n)
    a, b = ci(x, y, z), ci(x[p], y[p], z[p])
    assert a.details["null_mean_factor"] == pytest.approx(b.details["null_mean_factor"],
                                                          rel=1e-12)
    assert a.pvalue == pytest.approx(b.pvalue, rel=1e-10)


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian", "imq", "matern32", "matern52",
                                    "ard", "linear"])
def test_feature_gaps_from_pairs_equal_the_centred_gram(kernel):
    """The noise level reads ``K_ii + K_jj - 2 K_ij`` of the nearest neighbours; for the
    kernels of a scaled distance it comes from the pairs alone, equal to the Gram's."""
    from kmtests import kernels as kk
    from kmtests.statistics import kci as kci_mod

    gen = np.random.default_rng(12)
    data = gen.normal(size=(40, 2)) * [1.0, 3.0]
    k = {"gaussian": kk.Gaussian(), "laplacian": kk.Laplacian(), "imq": kk.IMQ(),
         "matern32": kk.Matern32(), "matern52": kk.Matern52(),
         "ard": kk.ARDGaussian(bandwidth=[0.7, 2.5]), "linear": kk.Linear()}[kernel]
    k = k.fitted_to(data)
    i, j = np.arange(40), gen.permutation(40)
    Kc = k.centred_gram(data, name="x").Kc
    want = np.diagonal(Kc) + Kc[j, j] - 2.0 * Kc[i, j]
    gaps = kci_mod._feature_gaps(k, data, "x")
    got = gaps(i, j) if callable(gaps) else (np.diagonal(gaps) + gaps[j, j]
                                             - 2.0 * gaps[i, j])
    assert callable(gaps) == (kernel != "linear")
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
