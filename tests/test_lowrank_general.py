"""Re-weighting (spectral) estimators on the low-rank engines, and the given-lam fast path.

The feature form of every spectral filter (``rule.features(Phi)``, r x r
eigenproblems) must give the weights of the Gram form on ``K = Phi Phi'``; the
low-rank MMD of such an estimator must be the exact engine's MMD on the
approximate Gram matrix (same permutations: same p-value); pooled tuning on the
pooled features must equal pooled tuning on the pooled approximate Gram matrix.
"""

from __future__ import annotations

import numpy as np
import pytest

import kmtests
from kmtests.engines.exact import Exact
from kmtests.engines.lowrank import Nystrom, lowrank_mmd_general, nystrom_features
from kmtests.engines.mmd import mmd_general
from kmtests.estimators import FKMSE, TSVD, IteratedTikhonov, Landweber, NuMethod
from kmtests.estimators import _loocv as L
from kmtests.kernels import Gaussian, resolve_kernel

ESTIMATORS = [FKMSE(), FKMSE(criterion="icml2014"), IteratedTikhonov(order=3),
              Landweber(max_iter=60), NuMethod(), TSVD(), FKMSE(lam=0.01),
              IteratedTikhonov(lam=0.02), Landweber(n_iter=7)]
IDS = ["fkmse", "fkmse-icml", "itikh3", "landweber", "nu", "tsvd", "fkmse-lam",
       "itikh-lam", "landweber-7"]


def features(n: int, r: int, seed: int = 0) -> np.ndarray:
    """Uncentred Nyström features (n x r) of a Gaussian kernel on normal data."""
    x = np.random.default_rng(seed).normal(size=(n, 2))
    f = nystrom_features(Gaussian(1.0), x, r, np.random.default_rng(seed + 1))
    return f.phi + f.mean


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("n, r", [(70, 12), (40, 40), (30, 45)])
def test_feature_weights_equal_gram_weights(est, n, r):
    phi = features(n, r)
    K = phi @ phi.T
    b_gram, p_gram = est.weights(K)
    rule = est.rule()
    b_feat, p_feat = rule.features(phi)
    b_rule, _ = rule.weights(K)
    top = np.max(np.abs(b_gram))
    assert np.max(np.abs(b_feat - b_gram)) <= 1e-8 * top
    assert np.max(np.abs(b_rule - b_gram)) <= 1e-10 * top
    for key in ("lam", "n_iter", "rank"):
        if key in p_feat:
            assert p_feat[key] == pytest.approx(p_gram[key], rel=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lowrank_leave_one_out_scores_equal_the_full_spectrum(seed):
    """Every LOO score of the low-rank spectrum equals the full spectrum's."""
    phi = features(50, 9, seed)
    full, low = L.spectrum(phi @ phi.T), L.lowrank_spectrum(phi)
    assert low.kappa.size == 9 and low.n == 50
    lam = np.geomspace(1e-6, 1.0, 7) * full.top / 50
    np.testing.assert_allclose(L.tikhonov_loo(low, lam), L.tikhonov_loo(full, lam), rtol=1e-9)
    np.testing.assert_allclose(L.icml2014_loo(low, lam), L.icml2014_loo(full, lam), rtol=1e-9)
    for v in lam[::2]:
        assert L.iterated_tikhonov_loo(low, v, 3) == pytest.approx(
            L.iterated_tikhonov_loo(full, v, 3), rel=1e-9)
    step = 49 / full.top
    np.testing.assert_allclose(L.landweber_loo(low, step, 30), L.landweber_loo(full, step, 30),
                               rtol=1e-9)
    np.testing.assert_allclose(L.nu_method_loo(low, step, 1.0, 20),
                               L.nu_method_loo(full, step, 1.0, 20), rtol=1e-9)
    ts = L.lowrank_tsvd_loo(low)
    assert ts.size == 9
    np.testing.assert_allclose(ts, L.tsvd_loo(phi @ phi.T)[:9], rtol=1e-9)


def test_zero_features_give_zero_weights():
    beta, params = FKMSE().rule().features(np.zeros((20, 4)))
    assert np.all(beta == 0) and params["lam"] == 0.0


def test_given_lam_rule_skips_the_score_but_keeps_the_weights():
    phi = features(60, 60)
    K = phi @ phi.T
    b, p = FKMSE(lam=0.05).rule().weights(K)
    b_full, p_full = FKMSE(lam=0.05).weights(K)
    np.testing.assert_allclose(b, b_full, rtol=1e-10, atol=1e-14)
    assert set(p) == {"lam", "lam_convention", "lam_gram"} and "loocv" in p_full
    b_gram, _ = FKMSE(lam=1.5, lam_convention="gram").rule().weights(K)
    np.testing.assert_allclose(b_gram, FKMSE(lam=1.5 / 60).weights(K)[0], rtol=1e-10)


# -- the engine ---------------------------------------------------------------------------------
def _pooled_sources(n_x=30, n_y=40, r=15, seed=3):
    rng = np.random.default_rng(seed)
    z = np.vstack([rng.normal(size=(n_x, 2)), rng.normal(0.3, 1.0, size=(n_y, 2))])
    kern = resolve_kernel("gaussian", "median").fitted_to(z)
    fp = Nystrom(n_features=r).pooled(kern, z, rng=np.random.default_rng(seed))
    approx = fp.f.gram()
    pg = Exact().pooled(resolve_kernel("precomputed", None), 0.5 * (approx + approx.T))
    return fp, pg, n_x


@pytest.mark.parametrize("est", ESTIMATORS[:6], ids=IDS[:6])
@pytest.mark.parametrize("unbiased", [True, False])
def test_lowrank_mmd_equals_the_exact_engine_on_the_approximate_gram(est, unbiased):
    fp, pg, n_x = _pooled_sources()
    perms = kmtests._rng.permuted_rows(np.random.default_rng(0), fp.n, 6)
    perms = np.vstack([np.arange(fp.n), perms])
    low, params = lowrank_mmd_general(fp, perms, n_x, est.rule(), 1, unbiased)
    ref, ref_params = mmd_general(pg, perms, n_x, est.rule(), 1, unbiased)
    # a tuned lam may differ by one quantisation step of the search (1e-4 in log lam: the
    # score is flat at its minimum, so rounding at 1e-16 can cross a step boundary)
    np.testing.assert_allclose(low.stat, ref.stat, rtol=1e-5, atol=1e-9 * np.max(ref.scale))
    assert np.all(low.scale > 0)
    for a, b in zip(params, ref_params):
        for side in ("x", "y"):
            for key in ("lam", "n_iter", "rank"):
                if key in a[side]:
                    assert a[side][key] == pytest.approx(b[side][key], rel=2.01e-4)


@pytest.mark.parametrize("tuning", ["permutation", "pooled"])
@pytest.mark.parametrize("estimator", ["fkmse", "landweber"])
def test_nystrom_pvalue_is_the_exact_engines_on_the_approximate_kernel(estimator, tuning):
    """Same permutations, same statistics: the p-value of the exact engine given the
    approximate Gram matrix (kernel='precomputed'), for both tunings."""
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(20, 2)), rng.normal(0.4, 1.0, size=(25, 2))
    z = np.vstack([x, y])
    kw = dict(estimator=estimator, tuning=tuning, n_resamples=199, rng=11, progress=False)
    low = kmtests.two_sample_test(x, y, engine="nystrom", n_features=10, **kw)
    kern = resolve_kernel("gaussian", "median").fitted_to(z)
    K = Nystrom(n_features=10).pooled(kern, z, rng=11).f.gram()
    exact = kmtests.two_sample_test(0.5 * (K + K.T), 20, kernel="precomputed", **kw)
    assert low.statistic == pytest.approx(exact.statistic, rel=1e-8)
    assert low.pvalue == exact.pvalue
    assert 0 < low.pvalue < 1


def test_lowrank_pvalue_does_not_depend_on_jobs_or_batch():
    rng = np.random.default_rng(8)
    x, y = rng.normal(size=(30, 2)), rng.normal(size=(35, 2))
    kw = dict(estimator="fkmse", engine="rff", n_features=12, n_resamples=99, rng=3,
              progress=False)
    ps = {kmtests.two_sample_test(x, y, n_jobs=j, batch=b, **kw).pvalue
          for j, b in [(1, None), (2, None), (2, 7), (1, 33)]}
    assert len(ps) == 1


def test_pooled_tuning_on_features_reports_the_pooled_lam():
    rng = np.random.default_rng(9)
    x, y = rng.normal(size=(40, 2)), rng.normal(size=(40, 2))
    res = kmtests.two_sample_test(x, y, estimator="fkmse", engine="nystrom", n_features=15,
                                  tuning="pooled", n_resamples=49, rng=0, progress=False)
    z = np.vstack([x, y])
    kern = resolve_kernel("gaussian", "median").fitted_to(z)
    f = Nystrom(n_features=15).pooled(kern, z, rng=0).f
    lam = FKMSE().weights((f.phi + f.mean) @ (f.phi + f.mean).T)[1]["lam"]
    assert res.tuning == "pooled"
    assert f"lam: {lam:.4g}" in str(res.summary())


# -- refusals -----------------------------------------------------------------------------------
def test_refusals_name_the_engines_that_run_it():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(30, 2)), rng.normal(size=(30, 2))
    with pytest.raises(ValueError, match="'exact', 'nystrom' or 'rff'"):
        kmtests.two_sample_test(x, y, estimator="fkmse", engine="streamed", n_resamples=9)
    with pytest.raises(ValueError, match="rank-two offset"):
        kmtests.two_sample_test(x, y, estimator="fkmse", engine="nystrom", kernel="linear",
                                n_resamples=9)
    with pytest.raises(ValueError, match="re-weights every point"):
        kmtests.independence_test(x, y, estimator="fkmse", engine="nystrom", n_resamples=9)


def test_lowrank_reweighting_test_has_no_witness_of_the_exact_kernel():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(30, 2)), rng.normal(size=(30, 2))
    res = kmtests.two_sample_test(x, y, estimator="fkmse", engine="nystrom", n_features=10,
                                  n_resamples=19, rng=0, progress=False)
    with pytest.raises(ValueError, match="engine='exact' for its witness"):
        res.witness(np.zeros((3, 2)))


# -- level ----------------------------------------------------------------------------------
def _rejections(reps: int, seed: int, **kw) -> int:
    from scipy import stats

    gen = np.random.default_rng(seed)
    rej = 0
    for _ in range(reps):
        x, y = gen.normal(size=(15, 2)), gen.normal(size=(18, 2))
        res = kmtests.two_sample_test(x, y, n_resamples=99, rng=gen, progress=False, **kw)
        rej += res.pvalue <= 0.05
    lo, hi = stats.binom.ppf(0.005, reps, 0.05), stats.binom.ppf(0.995, reps, 0.05)
    assert lo <= rej <= hi, f"{rej}/{reps} rejections outside [{lo}, {hi}]"
    return rej


@pytest.mark.slow  # a level study: 300 tests
def test_level_nystrom_fkmse_pooled():
    _rejections(300, 21, estimator="fkmse", engine="nystrom", n_features=8, tuning="pooled")


@pytest.mark.slow
@pytest.mark.parametrize("estimator, engine", [("fkmse", "rff")])
def test_level_lowrank_reweighting(estimator, engine):
    """Re-tuned on every permutation (about 50 s; nu_method on nystrom, 70 s, was inside
    the band too when this was written)."""
    _rejections(300, 22 + len(engine) + len(estimator), estimator=estimator, engine=engine,
                n_features=8)


def test_lowrank_reweighting_is_invariant_to_translation_and_row_order():
    """A translation keeps the statistic and the p-value (same draws); reordering the rows
    keeps the statistic (the Monte Carlo draws then pick other splits: only the null
    distribution is the same, as for every permutation test here)."""
    rng = np.random.default_rng(12)
    x, y = rng.normal(size=(25, 2)), rng.normal(0.5, 1.0, size=(30, 2))
    kw = dict(estimator="fkmse", engine="nystrom", n_features=9, n_resamples=99, rng=4,
              progress=False)
    base = kmtests.two_sample_test(x, y, **kw)
    shift = np.array([10.0, -3.0])
    moved = kmtests.two_sample_test(x + shift, y + shift, **kw)
    assert moved.statistic == pytest.approx(base.statistic, rel=1e-8)
    assert moved.pvalue == base.pvalue
    # a re-tuned lam may move by one quantisation step (see above): 3e-6 here
    np.testing.assert_allclose(moved.null_distribution, base.null_distribution, rtol=1e-5)
    shuffled = kmtests.two_sample_test(x[::-1], y[rng.permutation(30)], **kw)
    assert shuffled.statistic == pytest.approx(base.statistic, rel=1e-8)
