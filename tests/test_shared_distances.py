"""A bandwidth grid computes its squared distances once (``kernels.shared_distances``).

Inside the block the Gram matrices of Gaussian kernels of any bandwidth on the same
points are the ones computed alone, bit for bit, from one distance computation; other
points (or ARD bandwidths, which scale the coordinates) get their own; an aggregated
test gives the same p-values as its members' Gram matrices computed one by one.
"""

from __future__ import annotations

import numpy as np

import kmtests
from kmtests import kernels
from kmtests.kernels import ARDGaussian, Gaussian, shared_distances


def test_the_grid_shares_one_distance_computation(monkeypatch):
    gen = np.random.default_rng(0)
    z = gen.normal(size=(40, 5))
    w = gen.normal(size=(40, 5))
    bws = [0.3, 1.0, 2.5, 10.0]
    alone = [Gaussian(bandwidth=b).centred_gram(z).Kc for b in bws]
    calls = []
    real = kernels._sqdist_unit
    monkeypatch.setattr(kernels, "_sqdist_unit",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    with shared_distances():
        inside = [Gaussian(bandwidth=b).centred_gram(z).Kc for b in bws]
        assert len(calls) == 1  # the four bandwidths: one computation
        other = Gaussian(bandwidth=1.0).centred_gram(w).Kc
        assert len(calls) == 2  # other points: their own
        ard = ARDGaussian(bandwidth=[1.0, 2.0, 1.0, 1.0, 3.0]).centred_gram(z).Kc
    for a, b in zip(alone, inside):
        assert np.array_equal(a, b)
    assert np.array_equal(other, Gaussian(bandwidth=1.0).centred_gram(w).Kc)
    assert np.array_equal(ard, ARDGaussian(bandwidth=[1.0, 2.0, 1.0, 1.0, 3.0])
                          .centred_gram(z).Kc)
    # outside the block nothing is kept
    before = len(calls)
    Gaussian(bandwidth=1.0).centred_gram(z)
    assert len(calls) == before + 1


def test_mmdagg_is_unchanged_by_the_sharing(monkeypatch):
    gen = np.random.default_rng(1)
    x, y = gen.normal(size=(30, 3)), gen.normal(0.3, 1.0, size=(30, 3))
    shared = kmtests.aggregated_two_sample_test(x, y, n_resamples=200, rng=0)
    monkeypatch.setattr(kernels, "_shared_sqdist_unit", lambda xs: None)
    alone = kmtests.aggregated_two_sample_test(x, y, n_resamples=200, rng=0)
    assert (shared.pvalue, shared.statistic) == (alone.pvalue, alone.statistic)
