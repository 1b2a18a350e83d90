"""The scheme contract: every permutation scheme gives the permutation loop what it needs.

``count`` equals the number of ``enumerate`` rows (None above the cap); the rows are
distinct members of the group with the identity first; ``random`` draws members of the
group, the same ones whatever the batch sizes, and uniformly (checked on a small group).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from kmtests.problems.schemes import Blocks, Independent, KWay, Pairing, Split, Swaps, Within

SCHEMES = {
    "split": Split(3, 2),
    "pairing": Pairing(4),
    "kway": KWay((2, 1, 2)),
    "within pairing": Within(np.array([0, 0, 1, 1, 1, 2])),
    "within split": Within(np.array([0, 1, 2, 0, 1, 2]), n_x=3),
    "blocks pairing": Blocks(7, 2),
    "blocks split": Blocks(8, 2, n_x=4),
    # random rotations first (two windows, blocks="auto"): C(4, 2) splits x 2 offsets,
    # and all 5! orders of the 5 blocks of 10 rows (2 does not divide 5) x 2 offsets
    "blocks split offsets": Blocks(8, 2, n_x=4, offsets=True),
    "blocks orders offsets": Blocks(10, 2, n_x=5, offsets=True),
    "independent": Independent(3, 3),
    "swaps": Swaps(np.array([2, 0, 1])),
}
EXPECTED_COUNTS = {
    "split": math.comb(5, 3), "pairing": 24, "kway": 30,
    "within pairing": 2 * 6 * 1, "within split": 2 * 2 * 2,
    "blocks pairing": 24, "blocks split": math.comb(4, 2), "independent": 36,
    "blocks split offsets": 2 * math.comb(4, 2), "blocks orders offsets": 2 * 120,
    "swaps": 2 ** 3,
}


def _in_group(name: str, s, row: np.ndarray) -> bool:
    if name == "independent":
        parts = row.reshape(s.d - 1, s.size)
        return all(sorted(p.tolist()) == list(range(s.size)) for p in parts)
    if sorted(row.tolist()) != list(range(s.n)):
        return False
    if name.startswith("within"):
        return all(s.labels[row[i]] == s.labels[i] for i in range(s.n))
    if name == "swaps":  # each pair's points stay in the pair's two slots
        slots = [{i, len(s.pairing) + int(p)} for i, p in enumerate(s.pairing)]
        return all({int(row[a]) for a in pair} == pair for pair in slots)
    if name.startswith("blocks") and s.offsets:
        # a block arrangement of the series rotated by one of the offsets
        plain = Blocks(s.size, s.length, n_x=s.n_x)
        return any(_in_group("blocks", plain, (row - u) % s.n) for u in range(s.length))
    if name.startswith("blocks"):
        # consecutive runs: each block appears whole and in order
        starts = [b[0] for b in s.blocks]
        pos = 0
        while pos < s.n:
            if row[pos] not in starts:
                return False
            block = s.blocks[starts.index(row[pos])]
            if row[pos:pos + block.size].tolist() != block.tolist():
                return False
            pos += block.size
    return True


def _key(name: str, s, row: np.ndarray) -> tuple:
    """What distinguishes two arrangements for the statistic (a split's first sample is a
    set; a k-way grouping is a sequence of sets)."""
    if name == "split":
        return (frozenset(row[:3].tolist()),)
    if name == "kway":
        return (frozenset(row[:2].tolist()), frozenset(row[2:3].tolist()))
    if name == "within split":
        return (frozenset(row[:3].tolist()),)
    if name in ("blocks split", "blocks split offsets"):
        return (frozenset(row[:4].tolist()),)
    if name == "swaps":
        return (frozenset(row[:3].tolist()),)
    return tuple(row.tolist())


@pytest.mark.parametrize("name", list(SCHEMES))
def test_count_enumerate_identity_and_distinct(name):
    s = SCHEMES[name]
    rows = list(s.enumerate())
    assert s.count(10**6) == len(rows) == EXPECTED_COUNTS[name]
    assert s.count(len(rows) - 1) is None
    np.testing.assert_array_equal(rows[0], s.identity()[0] if name != "independent"
                                  else np.tile(np.arange(s.size), s.d - 1))
    assert all(_in_group(name, s, r) for r in rows)
    assert len({_key(name, s, r) for r in rows}) == len(rows)


@pytest.mark.parametrize("name", list(SCHEMES))
def test_random_rows_are_in_the_group_and_batch_invariant(name):
    s = SCHEMES[name]
    a = s.random(np.random.default_rng(3), 10)
    g = np.random.default_rng(3)
    b = np.vstack([s.random(g, 3), s.random(g, 7)])
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.int64 and a.shape == (10, s.n)
    assert all(_in_group(name, s, r) for r in a)


@pytest.mark.parametrize("name", list(SCHEMES))
def test_random_rows_are_uniform_over_the_arrangements(name):
    """Chi-square goodness of fit of 200 draws per arrangement (alpha = 1e-4)."""
    from scipy import stats

    s = SCHEMES[name]
    keys = [_key(name, s, r) for r in s.enumerate()]
    draws = 200 * len(keys)
    counts = Counter(_key(name, s, r) for r in s.random(np.random.default_rng(7), draws))
    assert set(counts) <= set(keys)
    observed = np.array([counts.get(k, 0) for k in keys])
    assert stats.chisquare(observed).pvalue > 1e-4


@pytest.mark.parametrize("name", list(SCHEMES))
def test_identity_is_the_first_enumerated_arrangement(name):
    s = SCHEMES[name]
    np.testing.assert_array_equal(s.identity()[0], next(iter(s.enumerate())))


def test_rotated_blocks_enumerate_offset_order_pairs():
    """With a short last block a rotation can repeat a row: the enumeration lists every
    (offset, order) pair, the law of the random draws (Blocks(9, 2): the order ending
    with [0, 1], ..., [6, 7] after [8], rotated by one, is the identity)."""
    s = Blocks(9, 2, n_x=5, offsets=True)
    rows = [r.tobytes() for r in s.enumerate()]
    assert s.count(10**6) == len(rows) == 2 * math.factorial(5)
    assert Counter(rows)[np.arange(9, dtype=np.int64).tobytes()] == 2


def test_rotated_blocks_reach_the_level_with_eight_blocks():
    """Two windows of 100 in blocks of 25: the plain blocks split them 70 ways (35 values
    of a symmetric statistic: no p-value between 2/70 and 4/70), the rotations 1750."""
    plain, turned = Blocks(200, 25, n_x=100), Blocks(200, 25, n_x=100, offsets=True)
    assert plain.count(10**4) == 70 and turned.count(10**4) == 25 * 70
    firsts = {frozenset(r[:100].tolist()) for r in turned.enumerate()}
    assert len(firsts) == 25 * 70
