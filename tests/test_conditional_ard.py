"""bandwidth_z="ard" (issue 29, item 1): one bandwidth per coordinate of z, chosen by the
regression's criterion summed over x's and y's targets in a greedy sweep."""

from __future__ import annotations

import numpy as np
import pytest

import kmtests.statistics.kci as kci
from kmtests import conditional_independence_test as ci
from kmtests.estimators import ConditionalMeanEmbedding
from kmtests.estimators.conditional import z_spectrum
from kmtests.kernels import ARDGaussian, Gaussian, median_bandwidth
from kmtests.problems.conditional import standardized


def _data(n=120, d=3, seed=0):
    gen = np.random.default_rng(seed)
    z = gen.normal(size=(n, d))
    w = 0.5 * np.tanh(z[:, 0] * z[:, 1])
    x = np.sin(z[:, 0]) + w + 0.4 * gen.normal(size=n)
    y = np.cos(z[:, 0]) + w + 0.4 * gen.normal(size=n)
    return x, y, z


def _scorer(x, y, z):
    """The summed GCV of the two targets (KCI's: x augmented by z / 2) as a function of
    the ARD bandwidths, and the order of the sweep (written out: by z_j' K z_j / z_j' z_j
    summed over the targets, the smallest first)."""
    xs, ys, zs = standardized(x[:, None]), standardized(y[:, None]), standardized(z)
    xa = np.hstack([xs, 0.5 * zs])
    Kx = Gaussian().fitted_to(xa).centred_gram(xa).Kc
    Ky = Gaussian().fitted_to(ys).centred_gram(ys).Kc
    reg = ConditionalMeanEmbedding()

    def score(bw):
        k = ARDGaussian(bandwidth=np.asarray(bw, dtype=float))
        spec = [z_spectrum(k, zs, cache=False)]
        return (reg.fit([k], zs, Kx, spectra=spec).score
                + reg.fit([k], zs, Ky, spectra=spec).score)

    keys = []
    for j in range(zs.shape[1]):
        c = zs[:, j] - zs[:, j].mean()
        keys.append(sum(float(c @ K @ c) for K in (Kx, Ky)) / float(c @ c))
    order = sorted(range(zs.shape[1]), key=lambda j: keys[j])
    return score, zs, order


def test_ard_is_the_test_with_the_bandwidths_of_the_greedy_sweep():
    x, y, z = _data(n=80, d=2)
    res = ci(x, y, z, bandwidth_z="ard", cache=False)
    bw = np.array(res.params["x"]["bandwidth_z"])
    assert bw.shape == (2,) and res.params["y"]["bandwidth_z"] == list(bw)
    fixed = ci(x, y, z, kernel_z=ARDGaussian(bandwidth=bw), cache=False)
    assert fixed.pvalue == res.pvalue and fixed.statistic == res.statistic
    # the sweep written out: the best isotropic start, then each coordinate's moves
    score, zs, order = _scorer(x, y, z)
    iso = float(median_bandwidth(zs))
    starts = [np.full(2, iso * f) for f in (0.125, 0.25, 0.5, 1.0, 2.0)]
    scores = [score(b) for b in starts]
    cur, cur_s = starts[int(np.argmin(scores))], min(scores)
    for j in order:
        for m in (1e4, 0.5, 2.0):
            trial = cur.copy()
            trial[j] *= m
            s = score(trial)
            if s < cur_s:
                cur, cur_s = trial, s
    np.testing.assert_array_equal(bw, cur)
    assert any("ARD" in note for note in res.notes)


@pytest.mark.parametrize("options", [{"bandwidth_z": "ard"}, {"bandwidth_z": "ard_each"},
                                     {}])
def test_ard_does_not_depend_on_the_order_of_zs_columns(options):
    """The sweep visits the coordinates in an order that moves with them: reordering z's
    columns reorders the bandwidths and leaves the test (the default on a 3-d z too)."""
    x, y, z = _data(n=80, d=3, seed=9)
    base = ci(x, y, z, cache=False, **options)
    for perm in ([2, 0, 1], [1, 0, 2]):
        other = ci(x, y, z[:, perm], cache=False, **options)
        assert other.pvalue == pytest.approx(base.pvalue, rel=1e-9)
        for role in ("x", "y"):
            np.testing.assert_allclose(other.params[role]["bandwidth_z"],
                                       np.asarray(base.params[role]["bandwidth_z"])[perm],
                                       rtol=1e-12)


def test_sweep_order_moves_with_the_columns_and_puts_unrelated_ones_first():
    gen = np.random.default_rng(3)
    z = gen.normal(size=(60, 3))
    t = np.sin(2 * z[:, 1:2])
    K = Gaussian().fitted_to(t).centred_gram(t).Kc
    order = kci.sweep_order(z, [K])
    assert order[-1] == 1                       # the related coordinate last
    perm = np.array([2, 0, 1])
    np.testing.assert_array_equal(perm[kci.sweep_order(z[:, perm], [K])], order)
    # constant or equal columns tie, in column order
    zc = np.column_stack([z[:, 1], np.ones(60), z[:, 1]])
    np.testing.assert_array_equal(kci.sweep_order(zc, [K]), [1, 0, 2])


def test_ard_with_split_and_a_given_lam_and_its_refusals():
    x, y, z = _data(seed=1)
    split = ci(x, y, z, bandwidth_z="ard", statistic="split", rng=0)
    assert len(split.params["x"]["bandwidth_z"]) == 3 and 0 <= split.pvalue <= 1
    given = ci(x, y, z, bandwidth_z="ard", lam=1e-3)  # the search, not the Cholesky path
    assert given.params["x"]["lam"] == 1e-3 and len(given.params["x"]["bandwidth_z"]) == 3
    with pytest.raises(ValueError, match="engine='exact'"):
        ci(x, y, z, bandwidth_z="ard", engine="rff", rng=0)
    with pytest.raises(ValueError, match="Gaussian kernel on z"):
        ci(x, y, z, bandwidth_z="ard", kernel_z="laplacian")
    with pytest.raises(ValueError, match="'ard'"):
        ci(x, y, z, bandwidth_z="ardd")


def test_ard_counts_its_decompositions_in_the_time_guard():
    from kmtests import SlowTestWarning
    from kmtests.engines import Exact

    g = Gaussian(1.0)
    stat = kci.KCI(g, g, g, bandwidth_z="ard")
    # 5 + 3 d eigendecompositions: with d = 10, 35 at n = 1100 exceed 5 at n = 2000
    with pytest.warns(SlowTestWarning, match="35 eigendecompositions of 1100 x 1100"):
        stat._warn_if_slow(1100, Exact(), dz=10)


# -- bandwidth_z="auto": per-regression ARD with undersmoothing on a multivariate z ---------------
def test_auto_on_a_multivariate_z_is_ard_each_undersmoothed():
    x, y, z = _data(n=80, d=3, seed=4)
    auto = ci(x, y, z, cache=False)
    explicit = ci(x, y, z, bandwidth_z="ard_each", undersmooth=kci.MULTI_Z_UNDERSMOOTH,
                  cache=False)
    assert auto.pvalue == explicit.pvalue and auto.statistic == explicit.statistic
    assert auto.params == explicit.params
    assert len(auto.params["x"]["bandwidth_z"]) == 3
    note = " ".join(auto.notes)
    assert "bandwidth_z='auto' on a z of three or more coordinates" in note
    assert "lam divided by 10 (undersmoothed, to at most 0.35 (n - 1) degrees" in note
    # one bandwidth searched, as before this default
    iso = ci(x, y, z, bandwidth_z="isotropic", cache=False)
    assert np.ndim(iso.params["x"]["bandwidth_z"]) == 0
    assert iso.pvalue != auto.pvalue
    # a given undersmoothing is kept
    assert (ci(x, y, z, undersmooth=1.0, cache=False).pvalue
            == ci(x, y, z, bandwidth_z="ard_each", cache=False).pvalue)


@pytest.mark.parametrize("d", [1, 2])
def test_auto_below_three_coordinates_is_the_isotropic_search(d):
    x, y, z = _data(n=80, d=2, seed=5)
    z = z[:, :d]
    auto = ci(x, y, z, cache=False)
    iso = ci(x, y, z, bandwidth_z="isotropic", cache=False)
    assert auto.pvalue == iso.pvalue and auto.params == iso.params
    assert "three or more coordinates" not in " ".join(auto.notes)
    assert kci.MULTI_Z_FROM == 3


@pytest.mark.parametrize("options", [
    {"engine": "rff", "rng": 0}, {"engine": "nystrom", "rng": 0},
    {"kernel_z": "laplacian"}, {"statistic": "split", "rng": 0}])
def test_auto_stays_isotropic_where_ard_does_not_run(options):
    x, y, z = _data(n=80, d=3, seed=6)
    auto = ci(x, y, z, cache=False, **options)
    iso = ci(x, y, z, bandwidth_z="isotropic", cache=False, **options)
    assert auto.pvalue == iso.pvalue


def test_auto_with_a_given_lam_searches_bandwidths_without_undersmoothing():
    x, y, z = _data(n=80, d=3, seed=7)
    auto = ci(x, y, z, lam=1e-3, cache=False)
    assert auto.pvalue == ci(x, y, z, lam=1e-3, bandwidth_z="ard_each", cache=False).pvalue
    assert auto.params["x"]["lam"] == pytest.approx(1e-3)


def test_a_misspelt_bandwidth_z_lists_isotropic():
    x, y, z = _data(n=40, d=2, seed=8)
    with pytest.raises(ValueError, match="isotropic"):
        ci(x, y, z, bandwidth_z="isotropc")
