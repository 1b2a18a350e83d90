"""engine="nystrom" | "rff": permutation tests of a low-rank approximate statistic.

Checked against the in-memory engine run on the approximate Gram matrix
``Phi Phi'`` (kernel="precomputed"): the same statistics to rounding, the same
null distribution and p-value for the same seed, both forms, both tests, both
maps. Nyström with every point as a landmark gives the exact statistic; the
random Fourier features' Gram error falls with their number; the p-value does
not depend on `n_jobs` or `batch`; the level is checked under the null (slow).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import kmtests
from kmtests._rng import child
from kmtests.engines.lowrank import _variable_rngs
from kmtests.engines.lowrank import feature_map, nystrom_features, rff_features
from kmtests.kernels import Gaussian, Laplacian, resolve_kernel

METHODS = ["nystrom", "rff"]


def _data(seed=0, n_x=60, n_y=47, d=3, shift=0.3):
    gen = np.random.default_rng(seed)
    return gen.normal(size=(n_x, d)), gen.normal(size=(n_y, d)) + shift


def _features(method, kernel, z, r, rng, name):
    kern = resolve_kernel(kernel, "median").fitted_to(z, name=name)
    return feature_map(method, kern, z, r, rng)


def _close(a, b, scale):
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12 * scale)


# -- the approximate statistic is the in-memory statistic of Phi Phi' ---------------------------
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
@pytest.mark.parametrize("estimator", ["kme", "skmse"])
@pytest.mark.parametrize("statistic", ["unbiased", "biased"])
def test_mmd_equals_in_memory_on_the_approximate_gram(method, kernel, estimator, statistic):
    x, y = _data()
    kw = dict(estimator=estimator, statistic=statistic, n_resamples=199, rng=3)
    a = kmtests.two_sample_test(x, y, kernel=kernel, engine=method, n_features=25, **kw)
    f = _features(method, kernel, np.vstack([x, y]), 25, child(3, "features"), "the pooled sample")
    b = kmtests.two_sample_test(f.gram(), len(x), kernel="precomputed", **kw)
    assert a.engine == method and b.engine == "exact"
    scale = np.max(np.abs(b.null_distribution))
    _close(a.statistic, b.statistic, scale)
    _close(a.null_distribution, b.null_distribution, scale)
    assert a.pvalue == b.pvalue


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("estimator", ["kme", "skmse"])
@pytest.mark.parametrize("statistic", ["biased", "unbiased"])
def test_hsic_equals_in_memory_on_the_approximate_grams(method, estimator, statistic):
    gen = np.random.default_rng(1)
    x = gen.normal(size=(70, 2))
    y = x[:, :1] ** 2 + gen.normal(size=(70, 1))
    kw = dict(estimator=estimator, statistic=statistic, n_resamples=199, rng=4)
    a = kmtests.independence_test(x, y, engine=method, n_features=20, **kw)
    gx, gy = _variable_rngs(child(4, "features"), x, y)
    fx = _features(method, "gaussian", x, 20, gx, "x")
    fy = _features(method, "gaussian", y, 20, gy, "y")
    b = kmtests.independence_test(fx.gram(), fy.gram(), kernel_x="precomputed",
                                  kernel_y="precomputed", **kw)
    scale = np.max(np.abs(b.null_distribution))
    _close(a.statistic, b.statistic, scale)
    _close(a.null_distribution, b.null_distribution, scale)
    assert a.pvalue == b.pvalue


def test_independence_does_not_depend_on_the_argument_order():
    """Each variable's features come from a generator chosen by its data, not by its
    position: swapping x and y gives the same statistic and p-value (fewer features than
    points, where the draw matters)."""
    gen = np.random.default_rng(2)
    x = gen.normal(size=(80, 2))
    y = np.sin(2 * x[:, 0]) + 0.5 * gen.normal(size=80)
    for method in METHODS:
        a = kmtests.independence_test(x, y, engine=method, n_features=30, n_resamples=99,
                                      rng=1)
        b = kmtests.independence_test(y, x, engine=method, n_features=30, n_resamples=99,
                                      rng=1)
        np.testing.assert_allclose(a.statistic, b.statistic, rtol=1e-10)
        assert a.pvalue == b.pvalue


# -- Nystrom with every point a landmark is exact ------------------------------------------------
@pytest.mark.parametrize("statistic", ["unbiased", "biased"])
def test_nystrom_with_every_point_gives_the_exact_statistic(statistic):
    x, y = _data(seed=5, n_x=40, n_y=35)
    kw = dict(statistic=statistic, n_resamples=99, rng=2)
    a = kmtests.two_sample_test(x, y, **kw)
    b = kmtests.two_sample_test(x, y, engine="nystrom", n_features=500, **kw)
    np.testing.assert_allclose(b.statistic, a.statistic, rtol=1e-8)
    assert any("every point is a Nyström landmark" in n for n in b.notes)
    gen = np.random.default_rng(6)
    u = gen.normal(size=(50, 2))
    v = u[:, 0] + gen.normal(size=50)
    kw = dict(statistic="biased" if statistic == "biased" else "unbiased", n_resamples=99,
              rng=2)
    c = kmtests.independence_test(u, v, **kw)
    d = kmtests.independence_test(u, v, engine="nystrom", n_features=50, **kw)
    np.testing.assert_allclose(d.statistic, c.statistic, rtol=1e-8)


def test_nystrom_gram_is_the_kernel_with_every_landmark():
    z = np.random.default_rng(0).normal(size=(60, 3))
    kern = Laplacian(1.5)
    f = nystrom_features(kern, z, 60, np.random.default_rng(1))
    K = kern.gram(z)
    assert np.max(np.abs(f.gram() - K)) < 1e-8
    assert f.rank <= 60 and f.n_features == 60


# -- random Fourier features ---------------------------------------------------------------------
@pytest.mark.parametrize("kern", [Gaussian(1.3), Laplacian(2.0)])
def test_rff_gram_error_falls_with_the_number_of_features(kern):
    z = np.random.default_rng(0).normal(size=(150, 3))
    K = kern.gram(z)
    errs = []
    for r in (50, 500, 4000):
        f = rff_features(kern, z, r, np.random.default_rng(r))
        errs.append(float(np.mean(np.abs(f.gram() - K))))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.05, errs


def test_rff_features_are_translation_invariant():
    z = np.random.default_rng(0).normal(size=(50, 2))
    a = rff_features(Gaussian(1.0), z, 100, np.random.default_rng(1))
    b = rff_features(Gaussian(1.0), z + 1e6, 100, np.random.default_rng(1))
    np.testing.assert_allclose(a.phi, b.phi, atol=1e-9)


# -- reproducibility -----------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
def test_same_seed_same_pvalue_whatever_n_jobs_and_batch(method):
    x, y = _data(seed=3, n_x=300, n_y=280, shift=0.1)
    runs = [kmtests.two_sample_test(x, y, engine=method, n_resamples=299, rng=7, n_jobs=j,
                                    batch=bt)
            for j, bt in ((1, None), (2, None), (2, 37))]
    for r in runs[1:]:
        assert r.pvalue == runs[0].pvalue
        np.testing.assert_array_equal(r.null_distribution, runs[0].null_distribution)
    gen = np.random.default_rng(4)
    u = gen.normal(size=(300, 2))
    v = u[:, 1] * 0.3 + gen.normal(size=300)
    hs = [kmtests.independence_test(u, v, engine=method, n_resamples=199, rng=7, n_jobs=j,
                                    batch=bt)
          for j, bt in ((1, None), (2, None), (2, 23))]
    for r in hs[1:]:
        assert r.pvalue == hs[0].pvalue
        np.testing.assert_array_equal(r.null_distribution, hs[0].null_distribution)


def test_different_seeds_draw_different_features():
    x, y = _data()
    a = kmtests.two_sample_test(x, y, engine="rff", n_features=30, n_resamples=99, rng=1)
    b = kmtests.two_sample_test(x, y, engine="rff", n_features=30, n_resamples=99, rng=2)
    assert a.statistic != b.statistic


# -- the report ----------------------------------------------------------------------------------
def test_the_report_says_engine_features_and_approximate():
    x, y = _data()
    res = kmtests.two_sample_test(x, y, engine="nystrom", n_features=30, n_resamples=99, rng=1)
    text = str(res)
    assert "nystrom engine" in text and "30 landmarks" in text and "approximate" in text
    assert "nystrom" in str(res.summary())
    assert res.to_dict()["engine_info"].startswith("30 landmarks, rank")
    res = kmtests.independence_test(x, x[:, 0] ** 2, engine="rff", n_resamples=99, rng=1)
    assert "200 features each" in str(res)


# -- what the low-rank engines do not run --------------------------------------------------------
@pytest.mark.parametrize("kw, match", [
    (dict(engine="rff", kernel="linear"), "Gaussian, ARD Gaussian and Laplacian"),
    (dict(engine="rff", kernel="distance"), "engine='nystrom'"),
    # the spectral estimators run on features (tests/test_lowrank_general.py), except
    # for kernels whose features leave out an offset
    (dict(engine="nystrom", estimator="fkmse", kernel="linear"), "rank-two offset"),
    (dict(engine="rff", method="gamma"), "gamma"),
    (dict(engine="nystrom", n_features=0), "n_features"),
    (dict(engine="exact", n_features=10), "`n_features` applies"),
    (dict(engine="nystrom", estimator="skmse", tuning="pooled"), "tuning='pooled'"),
    (dict(engine="rff", statistic="regularized"), "engine='exact'"),
    (dict(engine="nystrom", estimator="mkme"), "marginalized"),
])
def test_what_the_low_rank_engines_do_not_run(kw, match):
    x, y = _data()
    with pytest.raises((ValueError, TypeError), match=match):
        kmtests.two_sample_test(x, y, n_resamples=19, rng=0, **kw)


@pytest.mark.parametrize("kw, match", [
    (dict(engine="rff", kernel_y="linear"), "Gaussian, ARD Gaussian and Laplacian"),
    (dict(engine="nystrom", estimator="fkmse"), "engine='exact'"),
    (dict(engine="rff", method="gamma"), "gamma"),
    (dict(engine="rff", n_features=2.5), "n_features"),
])
def test_what_the_low_rank_independence_engines_do_not_run(kw, match):
    x, y = _data(n_x=40, n_y=40)
    with pytest.raises((ValueError, TypeError), match=match):
        kmtests.independence_test(x, y, n_resamples=19, rng=0, **kw)


def test_precomputed_kernels_are_refused():
    x, y = _data()
    K = Gaussian(1.0).gram(np.vstack([x, y]))
    for engine in METHODS:
        with pytest.raises(ValueError, match="precomputed"):
            kmtests.two_sample_test(K, len(x), kernel="precomputed", engine=engine)
        with pytest.raises(ValueError, match="kernel_x='precomputed'"):
            kmtests.independence_test(K, y[:1].repeat(len(K), 0) + np.arange(len(K))[:, None],
                                      kernel_x="precomputed", engine=engine)


def test_auto_never_chooses_a_low_rank_engine(monkeypatch):
    from kmtests import _guards
    from kmtests.engines import Auto, Requirements

    monkeypatch.setattr(_guards, "available_memory", lambda: 1.0)

    monkeypatch.setattr(_guards, "UNCHECKED_BYTES", 0)
    with pytest.raises(MemoryError, match="approximate engine: engine=.nystrom. or .rff."):
        Auto().resolved(Requirements("pairing"), 1000, {})
    assert Auto().resolved(Requirements("split"), 1000, {}).name == "streamed"


# -- level -----------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("test", ["mmd", "hsic"])
def test_level_under_the_null(method, test):
    """200 null data sets, B = 99, alpha = 0.05: the rejection count is inside the binomial
    99.9% interval (the permutation test of the approximate statistic is exact)."""
    reps, alpha = 200, 0.05
    gen = np.random.default_rng(20260 + len(method) + 7 * len(test))
    rej = 0
    for i in range(reps):
        if test == "mmd":
            x, y = gen.normal(size=(150, 3)), gen.normal(size=(120, 3))
            res = kmtests.two_sample_test(x, y, engine=method, n_features=50, n_resamples=99,
                                          rng=i)
        else:
            x, y = gen.normal(size=(150, 2)), gen.standard_t(3, size=(150, 1))
            res = kmtests.independence_test(x, y, engine=method, n_features=50,
                                            n_resamples=99, rng=i)
        rej += res.pvalue <= alpha
    lo, hi = stats.binom.ppf(0.0005, reps, alpha), stats.binom.ppf(0.9995, reps, alpha)
    print(f"{test} {method}: {rej}/{reps} rejections at alpha = {alpha}, "
          f"99.9% band [{lo}, {hi}]")
    assert lo <= rej <= hi, f"{test} {method}: {rej}/{reps} outside [{lo}, {hi}]"
