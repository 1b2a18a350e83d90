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
    the ARD bandwidths."""
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
    return score, zs


def test_ard_is_the_test_with_the_bandwidths_of_the_greedy_sweep():
    x, y, z = _data(n=80, d=2)
    res = ci(x, y, z, bandwidth_z="ard", cache=False)
    bw = np.array(res.params["x"]["bandwidth_z"])
    assert bw.shape == (2,) and res.params["y"]["bandwidth_z"] == list(bw)
    fixed = ci(x, y, z, kernel_z=ARDGaussian(bandwidth=bw), cache=False)
    assert fixed.pvalue == res.pvalue and fixed.statistic == res.statistic
    # the sweep written out: the best isotropic start, then each coordinate's moves
    score, zs = _scorer(x, y, z)
    iso = float(median_bandwidth(zs))
    starts = [np.full(2, iso * f) for f in (0.125, 0.25, 0.5, 1.0, 2.0)]
    scores = [score(b) for b in starts]
    cur, cur_s = starts[int(np.argmin(scores))], min(scores)
    for j in range(2):
        for m in (1e4, 0.5, 2.0):
            trial = cur.copy()
            trial[j] *= m
            s = score(trial)
            if s < cur_s:
                cur, cur_s = trial, s
    np.testing.assert_array_equal(bw, cur)
    assert any("ARD" in note for note in res.notes)


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
