"""Permutation schemes: the group of rearrangements that leaves the null distribution unchanged.

A scheme says which arrangements of the data are exchangeable under the null
hypothesis; the permutation null method (:mod:`kmtests.null.permutation`) draws
or enumerates them through three calls and nothing else:

* ``count(cap)`` — the number of distinct arrangements, or None when it is larger
  than `cap` (the test is then a Monte Carlo one);
* ``random(rng, size)`` — `size` random arrangements as rows of an int64 index
  array, drawn from `rng`'s stream (the same rows whatever the batch sizes);
* ``enumerate()`` — every distinct arrangement once, **the identity first** (the
  data are one of the arrangements of an exact test).

An arrangement is a permutation ``p`` of ``range(n)``: the statistic of the
arrangement is the statistic of the data with row ``i`` replaced by row ``p[i]``
(two-sample: the first ``n_x`` entries are the points called x; independence:
``y`` rows are paired with ``x`` rows through ``p``).

Examples
--------
>>> import numpy as np
>>> s = Split(2, 2)
>>> s.count(100), [p.tolist() for p in s.enumerate()][:2]
(6, [[0, 1, 2, 3], [0, 2, 1, 3]])
>>> Pairing(3).count(100), Pairing(30).count(10**6)
(6, None)
>>> Pairing(4).random(np.random.default_rng(0), 2).shape
(2, 4)
"""

from __future__ import annotations

import abc
import itertools
import math
from dataclasses import dataclass
from typing import ClassVar, Iterator

import numpy as np

__all__ = ["Pairing", "Scheme", "Split", "comb_at_most"]


def comb_at_most(n: int, k: int, cap: int) -> int | None:
    """``C(n, k)`` if it is at most `cap`, else None, without computing a huge binomial
    (``math.comb(10**6, 5 * 10**5)`` takes minutes): the partial products
    ``C(n - k + i, i)`` are exact integers increasing in ``i``.

    Examples
    --------
    >>> comb_at_most(10, 3, 1000), comb_at_most(10**6, 5 * 10**5, 10**4)
    (120, None)
    """
    k = min(k, n - k)
    c = 1
    for i in range(1, k + 1):
        c = c * (n - k + i) // i
        if c > cap:
            return None
    return c


@dataclass(frozen=True)
class Scheme(abc.ABC):
    """A group of rearrangements of ``n`` rows (see the module docs)."""

    kind: ClassVar[str] = "scheme"

    @property
    @abc.abstractmethod
    def n(self) -> int:
        """The number of rows rearranged."""

    @abc.abstractmethod
    def count(self, cap: int) -> int | None:
        """The number of distinct arrangements, or None if it exceeds `cap`."""

    def random(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """`size` uniformly random arrangements (rows), int64, C-contiguous.

        Row ``b`` is the ``b``-th draw of `rng`'s stream: drawing in batches of any
        size gives the same rows.
        """
        return rng.permuted(np.tile(np.arange(self.n, dtype=np.int64), (size, 1)), axis=1)

    @abc.abstractmethod
    def enumerate(self) -> Iterator[np.ndarray]:
        """Every distinct arrangement once (int64 rows), the identity first."""

    def identity(self) -> np.ndarray:
        """The data's own arrangement as a (1, n) batch."""
        return np.arange(self.n, dtype=np.int64)[None, :]


@dataclass(frozen=True)
class Split(Scheme):
    """Two samples of sizes `n_x` and `n_y` pooled: the arrangements are the ways of
    choosing which `n_x` of the pooled points form the first sample."""

    n_x: int
    n_y: int
    kind: ClassVar[str] = "split"

    @property
    def n(self) -> int:
        return self.n_x + self.n_y

    def count(self, cap: int) -> int | None:
        return comb_at_most(self.n, self.n_x, cap)

    def enumerate(self) -> Iterator[np.ndarray]:
        full = np.arange(self.n, dtype=np.int64)
        for c in itertools.combinations(range(self.n), self.n_x):
            first = np.array(c, dtype=np.int64)
            yield np.concatenate([first, np.setdiff1d(full, first, assume_unique=True)])


@dataclass(frozen=True)
class Pairing(Scheme):
    """`n` pairs: the arrangements are the permutations of the rows of one variable
    against the other."""

    size: int
    kind: ClassVar[str] = "pairing"

    @property
    def n(self) -> int:
        return self.size

    def count(self, cap: int) -> int | None:
        if self.size > 20:  # 21! > 5e19: never enumerable
            return None
        c = math.factorial(self.size)
        return c if c <= cap else None

    def enumerate(self) -> Iterator[np.ndarray]:
        for p in itertools.permutations(range(self.size)):
            yield np.array(p, dtype=np.int64)
