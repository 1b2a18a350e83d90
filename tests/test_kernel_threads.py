"""The jitted kernels run serial on Python threads: the same bits for any split.

``kmtests.engines._threads.map_row_blocks`` cuts the rows of a batch into blocks taken by
threads; the HSIC pair sums (and dHSIC's arrangement loop, ``test_jit_dhsic.py``) must
not depend on how many threads or blocks there are, and the numba thread count is no
longer touched (no threading layer is started).
"""

from __future__ import annotations

import numpy as np
import pytest

import kmtests
from kmtests.engines import _threads
from kmtests.engines.hsic import PairedGrams
from kmtests.engines._jit_hsic import pair_sums_reference


def test_map_row_blocks_covers_every_row_once():
    seen = []
    _threads.map_row_blocks(lambda a, b: seen.append((a, b)), 103, 2)
    rows = sorted(r for a, b in seen for r in range(a, b))
    assert rows == list(range(103))
    assert all(a % 4 == 0 for a, _ in seen) and len(seen) > 2


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_hsic_pair_sums_do_not_depend_on_threads(n_jobs):
    gen = np.random.default_rng(4)
    n = 130  # B n^2 above the serial threshold: the blocks run on threads
    A = gen.normal(size=(n, n))
    A = A + A.T
    B = gen.normal(size=(n, n))
    B = B + B.T
    perms = np.stack([gen.permutation(n) for _ in range(70)])
    pg = PairedGrams(A, B)
    S1, D1 = pg.pair_sums(perms, n_jobs=1)
    S, D = pg.pair_sums(perms, n_jobs=n_jobs)
    assert np.array_equal(S, S1) and np.array_equal(D, D1)
    # each row alone: another block, another lane of its group of four
    alone = np.concatenate([pg.pair_sums(perms[b:b + 1], n_jobs=1)[0] for b in range(70)])
    assert np.array_equal(alone, S1)
    np.testing.assert_allclose(S1, pair_sums_reference(A, B, perms), rtol=1e-12)


def test_the_seeded_hsic_p_value_does_not_depend_on_n_jobs():
    gen = np.random.default_rng(6)
    x = gen.normal(size=(150, 2))
    y = x[:, :1] * 0.2 + gen.normal(size=(150, 1))
    res = [kmtests.independence_test(x, y, n_resamples=299, rng=2, n_jobs=j)
           for j in (1, 2, None)]
    assert len({(r.pvalue, r.statistic) for r in res}) == 1
