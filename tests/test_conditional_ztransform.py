"""The conditional test's options for a multivariate z (issue 29, items 1-2):
``z_transform=`` (normal scores / ranks of each coordinate of z), ``undersmooth=`` (the
searched ``lam`` divided by a factor) and ``bandwidth_z="ard_each"`` (one ARD search per
regression).

Fast: the transform against a brute-force numpy reference (ranks by counting, ties
averaged; the normal quantile from the standard library), the test with the transform
equal to the test on the transformed z, the p-value unchanged by an increasing map of a
coordinate when the transform is on (and changed when it is off); the undersmoothed
statistic against kernel ridge residuals computed with numpy; the ARD searches against
the sweep written out; the refusals and the time guard. Slow: the level of the advice
(``"ard_each"``, ``undersmooth=10``) on a multivariate heavy-tailed null (binomial band).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats

from kmtests import conditional_independence_test as ci
from kmtests.problems.marginal import marginal_transform


def _ranks(col: np.ndarray) -> np.ndarray:
    """Average ranks by counting: 1 + #(smaller) + (#(equal) - 1) / 2."""
    return np.array([1.0 + np.sum(col < v) + (np.sum(col == v) - 1) / 2.0 for v in col])


def _reference(z: np.ndarray, kind: str) -> np.ndarray:
    n = z.shape[0]
    u = np.column_stack([_ranks(z[:, j]) for j in range(z.shape[1])]) / (n + 1.0)
    if kind == "rank":
        return u
    inv = NormalDist().inv_cdf
    return np.vectorize(inv)(u)


def _data(n: int = 80, d: int = 3, seed: int = 0) -> tuple[np.ndarray, ...]:
    gen = np.random.default_rng(seed)
    z = gen.standard_t(3, size=(n, d))
    u = z[:, :2].sum(axis=1) / np.sqrt(2.0)
    return np.sin(u) + 0.4 * gen.normal(size=n), np.cos(u) + 0.4 * gen.normal(size=n), z


@pytest.mark.parametrize("kind", ["normal_scores", "rank"])
def test_transform_matches_the_brute_force_reference_with_ties(kind):
    gen = np.random.default_rng(1)
    z = gen.standard_t(2, size=(40, 3))
    z[5:9, 1] = z[0, 1]          # a run of ties
    z[:, 2] = np.round(z[:, 2])  # a discrete coordinate
    got = marginal_transform(z, kind)
    np.testing.assert_allclose(got, _reference(z, kind), rtol=0, atol=1e-12)
    assert got.shape == z.shape and np.all(np.isfinite(got))
    np.testing.assert_array_equal(marginal_transform(z, "none"), z)


def test_refusals():
    x, y, z = _data()
    np.testing.assert_array_equal(marginal_transform(z, "Rank"), marginal_transform(z, "rank"))
    with pytest.raises(ValueError, match="z_transform"):
        ci(x, y, z, z_transform="quantile")
    with pytest.raises(ValueError, match="z_transform"):
        marginal_transform(z, "auto")


@pytest.mark.parametrize("kind", ["normal_scores", "rank"])
def test_the_option_is_the_test_on_the_transformed_z(kind):
    x, y, z = _data(seed=2)
    on = ci(x, y, z, z_transform=kind, cache=False)
    given = ci(x, y, _reference(z, kind), cache=False)
    assert on.pvalue == pytest.approx(given.pvalue, rel=1e-9, abs=1e-12)
    assert on.statistic == pytest.approx(given.statistic, rel=1e-9)
    assert any("z_transform" in note for note in on.notes)
    assert on.details["z_transform"] == kind and given.details["z_transform"] == "none"


@pytest.mark.parametrize("bandwidth_z", ["auto", "ard"])
def test_p_value_unchanged_by_an_increasing_map_of_a_coordinate(bandwidth_z):
    x, y, z = _data(seed=3)
    z2 = z.copy()
    z2[:, 0] = np.exp(z2[:, 0])          # increasing
    z2[:, 2] = z2[:, 2] ** 3 + 5.0       # increasing
    kw = {"bandwidth_z": bandwidth_z, "cache": False}
    on = ci(x, y, z, z_transform="normal_scores", **kw)
    on2 = ci(x, y, z2, z_transform="normal_scores", **kw)
    assert on2.pvalue == on.pvalue and on2.statistic == on.statistic
    # without the transform the map changes the test (the check can fail)
    off, off2 = ci(x, y, z, **kw), ci(x, y, z2, **kw)
    assert abs(off2.pvalue - off.pvalue) > 1e-6


def test_default_is_unchanged_and_none_is_the_default():
    x, y, z = _data(seed=4)
    base = ci(x, y, z, cache=False)
    assert ci(x, y, z, z_transform="none", cache=False).pvalue == base.pvalue
    assert not any("z_transform" in note for note in base.notes)


def test_transform_on_every_engine_and_statistic():
    x, y, z = _data(n=60, seed=5)
    zt = _reference(z, "normal_scores")
    for kw in ({"statistic": "split", "rng": 0}, {"engine": "nystrom", "rng": 0},
               {"method": "wild", "rng": 0, "n_resamples": 99}):
        on = ci(x, y, z, z_transform="normal_scores", cache=False, **kw)
        given = ci(x, y, zt, cache=False, **kw)
        assert on.pvalue == pytest.approx(given.pvalue, rel=1e-9, abs=1e-12), kw


def _band(reps: int, alpha: float = 0.05) -> tuple[float, float]:
    return stats.binom.ppf(0.005, reps, alpha), stats.binom.ppf(0.995, reps, alpha)


# -- undersmooth: the searched lam divided by a factor ---------------------------------------------
def test_undersmooth_divides_the_searched_lam_and_is_that_regression():
    x, y, z = _data(n=80, d=2, seed=6)
    base = ci(x, y, z, bandwidth_z="isotropic", cache=False)
    under = ci(x, y, z, bandwidth_z="isotropic", undersmooth=10.0, cache=False)
    bound = 0.35 * (80 - 1)   # undersmoothing's bound on the degrees of freedom
    for role in ("x", "y"):
        lam, lam0 = under.params[role]["lam"], base.params[role]["lam"]
        if under.params[role]["df"] < bound - 1e-3:
            assert lam == pytest.approx(lam0 / 10.0, rel=1e-12)
        else:
            assert lam0 / 10.0 < lam <= lam0
        assert under.params[role]["bandwidth_z"] == base.params[role]["bandwidth_z"]
        assert under.params[role]["df"] > base.params[role]["df"]
    # the same test as the residuals of kernel ridge regression at that lam, by numpy
    from kmtests.kernels import Gaussian
    from kmtests.problems.conditional import standardized

    xs, ys, zs = (standardized(np.asarray(v, dtype=float).reshape(80, -1)) for v in (x, y, z))
    n = 80
    H = np.eye(n) - 1.0 / n

    def resid(role, K):
        kz = Gaussian(under.params[role]["bandwidth_z"])
        Kz = H @ kz.gram(zs) @ H
        lam = under.params[role]["lam"]
        R = n * lam * np.linalg.inv(Kz + n * lam * np.eye(n))
        return R @ (H @ K @ H) @ R

    xa = np.hstack([xs, 0.5 * zs])
    Kx = Gaussian().fitted_to(xa).gram(xa)
    Ky = Gaussian().fitted_to(ys).gram(ys)
    stat = float(np.sum(resid("x", Kx) * resid("y", Ky))) / n ** 2
    assert under.statistic == pytest.approx(stat, rel=1e-8)
    assert ci(x, y, z, bandwidth_z="isotropic", undersmooth=1.0, cache=False).pvalue == base.pvalue


def test_undersmooth_stays_within_the_degrees_of_freedom_bound():
    """Dividing lam by 10 would give the regressions of a sharp index of a 5-d z about 140
    degrees of freedom of 200 (an interpolating regression, which the search's bound
    ``max_df (n - 1)`` excludes; the test then rejected 18/100 nulls of ``index5`` in
    benchmarks/ci_level.py, the default 9/100): the undersmoothed lam stops at
    undersmoothing's bound ``undersmooth_max_df (n - 1)`` (0.35: with the search's 0.5,
    ``index5`` rejected 58/600, with 0.35 47/600), or is the searched lam when that has
    more degrees of freedom already."""
    from kmtests.estimators.filters import shrink_factor

    gen = np.random.default_rng(10)
    n = 200
    z = gen.normal(size=(n, 5))
    u = z.sum(axis=1) / np.sqrt(5.0)
    x = np.sin(2 * u) + 0.3 * gen.normal(size=n)
    y = np.cos(2 * u) + 0.3 * gen.normal(size=n)
    base = ci(x, y, z, bandwidth_z="isotropic", cache=False)
    under = ci(x, y, z, bandwidth_z="isotropic", undersmooth=10.0, cache=False)
    bound = 0.35 * (n - 1)
    capped = 0
    for role in ("x", "y"):
        lam, lam0 = under.params[role]["lam"], base.params[role]["lam"]
        assert lam0 / 10.0 <= lam <= lam0
        if base.params[role]["df"] >= bound:   # already beyond the bound: not undersmoothed
            assert lam == lam0
            capped += 1
            continue
        assert under.params[role]["df"] <= bound + 1e-6
        if lam > lam0 / 10.0 * (1 + 1e-9):   # capped: the bound is reached, not passed
            capped += 1
            assert under.params[role]["df"] == pytest.approx(bound, abs=1e-3)
    assert capped >= 1
    with pytest.raises(AssertionError):   # uncapped, the bound would be exceeded
        from kmtests.kernels import Gaussian
        from kmtests.problems.conditional import standardized

        zs = standardized(z)
        kz = Gaussian(under.params["y"]["bandwidth_z"])
        H = np.eye(n) - 1.0 / n
        kappa = np.clip(np.linalg.eigvalsh(H @ kz.gram(zs) @ H), 0, None)
        df = float(shrink_factor("tikhonov", kappa / n, base.params["y"]["lam"] / 10).sum())
        assert df <= bound


@pytest.mark.parametrize("bad", [0.5, 0, True, float("inf"), "10"])
def test_undersmooth_refusals(bad):
    x, y, z = _data(n=40, d=2, seed=7)
    with pytest.raises((ValueError, TypeError), match="undersmooth"):
        ci(x, y, z, undersmooth=bad)


# -- bandwidth_z="ard_each": one ARD search per regression ----------------------------------------
def _sweep(score, d, iso, zs, K):
    """The greedy ARD sweep written out: the best isotropic start, then each coordinate's
    bandwidth tried times 1e4, 1/2 and 2, a move kept when the score decreases; the
    coordinates by z_j' K z_j / z_j' z_j, the smallest first."""
    starts = [np.full(d, iso * f) for f in (0.125, 0.25, 0.5, 1.0, 2.0)]
    scores = [score(b) for b in starts]
    cur, cur_s = starts[int(np.argmin(scores))], min(scores)
    keys = []
    for j in range(d):
        c = zs[:, j] - zs[:, j].mean()
        keys.append(float(c @ K @ c) / float(c @ c))
    for j in sorted(range(d), key=lambda j: keys[j]):
        for m in (1e4, 0.5, 2.0):
            trial = cur.copy()
            trial[j] *= m
            s = score(trial)
            if s < cur_s:
                cur, cur_s = trial, s
    return cur


def test_ard_each_searches_each_regression_on_its_own_target():
    from kmtests.estimators import ConditionalMeanEmbedding
    from kmtests.estimators.conditional import z_spectrum
    from kmtests.kernels import ARDGaussian, Gaussian, median_bandwidth
    from kmtests.problems.conditional import standardized

    gen = np.random.default_rng(8)
    n = 80
    z = gen.normal(size=(n, 3))
    x = np.sin(z[:, 0]) + 0.3 * gen.normal(size=n)
    y = np.cos(z[:, 1]) + 0.3 * gen.normal(size=n)
    res = ci(x, y, z, bandwidth_z="ard_each", cache=False)
    xs, ys, zs = standardized(x[:, None]), standardized(y[:, None]), standardized(z)
    xa = np.hstack([xs, 0.5 * zs])
    targets = {"x": Gaussian().fitted_to(xa).centred_gram(xa).Kc,
               "y": Gaussian().fitted_to(ys).centred_gram(ys).Kc}
    reg = ConditionalMeanEmbedding()
    iso = float(median_bandwidth(zs))
    for role, K in targets.items():
        def score(bw, K=K):
            k = ARDGaussian(bandwidth=np.asarray(bw, dtype=float))
            return reg.fit([k], zs, K, spectra=[z_spectrum(k, zs, cache=False)]).score
        np.testing.assert_array_equal(res.params[role]["bandwidth_z"],
                                      _sweep(score, 3, iso, zs, K))
    # y depends on z2 only: its own search drops z1 and z3 (x's keeps them: x is augmented
    # by z / 2), which the shared search of "ard" cannot do for both
    bw_y = np.array(res.params["y"]["bandwidth_z"])
    assert bw_y[0] > 100 * bw_y[1] and bw_y[2] > 100 * bw_y[1]
    assert res.params["x"]["bandwidth_z"] != res.params["y"]["bandwidth_z"]
    assert any("for each variable" in note for note in res.notes)


def test_ard_each_refusals_and_time_guard():
    from kmtests import SlowTestWarning
    from kmtests.engines import Exact
    from kmtests.kernels import Gaussian
    from kmtests.statistics.kci import KCI

    x, y, z = _data(n=40, seed=9)
    with pytest.raises(ValueError, match="engine='exact'"):
        ci(x, y, z, bandwidth_z="ard_each", engine="rff", rng=0)
    with pytest.raises(ValueError, match="Gaussian kernel on z"):
        ci(x, y, z, bandwidth_z="ard_each", kernel_z="laplacian")
    g = Gaussian(1.0)
    # twice the 5 + 3 d eigendecompositions of "ard": 70 at d = 10 (35 at n = 900 stay
    # below five at n = 2000; 70 do not)
    with pytest.warns(SlowTestWarning, match="70 eigendecompositions of 900 x 900"):
        KCI(g, g, g, bandwidth_z="ard_each")._warn_if_slow(900, Exact(), dz=10)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowTestWarning)
        KCI(g, g, g, bandwidth_z="ard")._warn_if_slow(900, Exact(), dz=10)


# -- slow: the level on a multivariate heavy-tailed null ------------------------------------------
def _heavy_index(gen: np.random.Generator, n: int, d: int = 5) -> tuple[np.ndarray, ...]:
    """z with i.i.d. Student t_3 coordinates; x and y depend on z only through the index
    u = (z1 + z2 + z3) / sqrt(3) (the other coordinates irrelevant): the ``tz5`` design of
    benchmarks/ci_level.py, drawn here from another seed."""
    z = gen.standard_t(3, size=(n, d))
    u = z[:, :3].sum(axis=1) / np.sqrt(3.0)
    return np.sin(u) + 0.4 * gen.normal(size=n), np.cos(u) + 0.4 * gen.normal(size=n), z


@pytest.mark.slow
def test_ard_each_undersmoothed_keeps_the_level_on_a_heavy_tailed_5d_z():
    """The documented advice for a multivariate z (``bandwidth_z="ard_each"``,
    ``undersmooth=10``) inside the 99 % band of Bin(200, 0.05) on a heavy-tailed
    5-dimensional z at n = 200, where the default rejects about half the data sets
    (benchmarks/README.md, "Multivariate z": 51/100 on tz5)."""
    reps, n = 200, 200
    lo, hi = _band(reps)
    gen = np.random.default_rng(2929)
    rej = 0
    for _ in range(reps):
        x, y, z = _heavy_index(gen, n)
        rej += ci(x, y, z, bandwidth_z="ard_each", undersmooth=10.0,
                  cache=False).pvalue <= 0.05
    assert lo <= rej <= hi, f"rejections {rej}/{reps} outside [{lo}, {hi}]"


def test_undersmoothing_bound_is_checked_and_at_most_the_search_bound():
    from kmtests.estimators import ConditionalMeanEmbedding
    from kmtests.estimators.filters import shrink_factor
    from kmtests.kernels import Gaussian

    for bad in (0.0, 1.5, True, "0.3"):
        with pytest.raises(ValueError, match="undersmooth_max_df"):
            ConditionalMeanEmbedding(undersmooth_max_df=bad)
    gen = np.random.default_rng(11)
    z = gen.normal(size=(120, 1))
    x = np.sin(z) + 0.8 * gen.normal(size=(120, 1))
    Kc = Gaussian(1.0).centred_gram(x).Kc
    kz = [Gaussian(0.5)]   # the searched regression has about 5 degrees of freedom
    hits = 0
    for bound, max_df in ((0.05, 0.5), (0.9, 0.06)):
        fit = ConditionalMeanEmbedding(undersmooth=100.0, undersmooth_max_df=bound,
                                       max_df=max_df).fit(kz, z, Kc)
        searched = ConditionalMeanEmbedding(max_df=max_df).fit(kz, z, Kc)
        cap = min(bound, max_df) * 119
        df0 = float(shrink_factor("tikhonov", searched.spectrum.kappa / 120,
                                  searched.lam).sum())
        assert df0 < cap   # (the data make the bound bind)
        assert fit.lam > searched.lam / 100.0
        assert fit.df == pytest.approx(cap, abs=1e-3)
        hits += 1
    assert hits == 2
