"""The jitted dHSIC arrangement loop (kmtests.engines._jit_dhsic) against NumPy's recursion.

Every arrangement's statistic equals the array recursion of
``kmtests.statistics.dhsic._chunk_values`` (the same entries, summed in another order)
and the literal formula; it does not depend on the batch, the lane of a group of four,
or the number of threads; the seeded p-values of the test are those of the NumPy loop.
"""

from __future__ import annotations

import numpy as np
import pytest

import kmtests
from kmtests.kernels import Gaussian
from kmtests.statistics import dhsic as D


def _grams(gen, n, d):
    return [D.JointGram.from_gram(Gaussian(bandwidth=1.0).gram(gen.normal(size=(n, 2))))
            for _ in range(d)]


def _rows(gen, n, d, B):
    return np.stack([np.concatenate([gen.permutation(n) for _ in range(d - 1)])
                     for _ in range(B)])


@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_the_loop_equals_the_numpy_recursion(d):
    gen = np.random.default_rng(d)
    n = 23
    grams = _grams(gen, n, d)
    rows = _rows(gen, n, d, 11)
    got = D.JointStack.of(grams).values(rows)
    want = D._chunk_values(grams, rows, False)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-17)


@pytest.mark.parametrize("d", [2, 3])
def test_the_loop_does_not_depend_on_batch_lane_or_threads(d):
    gen = np.random.default_rng(10 + d)
    n = 31
    stack = D.JointStack.of(_grams(gen, n, d))
    rows = _rows(gen, n, d, 9)
    whole = stack.values(rows)
    # each row alone (lane 0 of a padded group), in threes, and on two threads
    assert np.array_equal(whole, np.concatenate([stack.values(rows[b:b + 1])
                                                 for b in range(9)]))
    assert np.array_equal(whole, np.concatenate([stack.values(rows[b:b + 3])
                                                 for b in range(0, 9, 3)]))
    assert np.array_equal(whole, stack.values(rows, n_jobs=2))
    # the rows in reverse order: the same values, reversed (another lane for each)
    assert np.array_equal(whole[::-1], stack.values(rows[::-1].copy()))


def test_the_seeded_p_values_are_the_numpy_loops(monkeypatch):
    gen = np.random.default_rng(3)
    xs = [gen.normal(size=(30, 1)) for _ in range(3)]
    xs[2] = xs[2] + 0.4 * xs[0]
    new = [kmtests.joint_independence_test(*xs[:d], n_resamples=199, rng=s).pvalue
           for d in (2, 3) for s in (0, 1)]

    def numpy_loop(self, rows, n_jobs=None):
        grams = [D.JointGram(self.W[k], self.u[k], float(self.g[k]), 0.0)
                 for k in range(len(self.g))]
        return D._chunk_values(grams, rows, False)

    monkeypatch.setattr(D.JointStack, "values", numpy_loop)
    old = [kmtests.joint_independence_test(*xs[:d], n_resamples=199, rng=s).pvalue
           for d in (2, 3) for s in (0, 1)]
    assert new == old
