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
from functools import cached_property
from typing import Any, ClassVar, Iterator

import numpy as np

from .._rng import permuted_rows

__all__ = ["Blocks", "Independent", "KWay", "Pairing", "Scheme", "Split", "SwapRows", "Swaps",
           "Within",
           "comb_at_most", "multinomial_at_most"]


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


def multinomial_at_most(sizes: tuple[int, ...], cap: int) -> int | None:
    """``N! / prod(n_g!)`` (``N = sum(sizes)``) if it is at most `cap`, else None, without
    computing a huge number: the product of binomials ``C(n_1 + ... + n_g, n_g)``.

    Examples
    --------
    >>> multinomial_at_most((2, 2, 2), 1000), multinomial_at_most((50, 50, 50), 10**9)
    (90, None)
    """
    total, out = 0, 1
    for g in sizes:
        total += g
        c = comb_at_most(total, g, cap)
        if c is None or out * c > cap:
            return None
        out *= c
    return out


def _product_count(counts: list[int | None], cap: int) -> int | None:
    out = 1
    for c in counts:
        if c is None or out * c > cap:
            return None
        out *= c
    return out


@dataclass(frozen=True)
class Scheme(abc.ABC):
    """A group of rearrangements of ``n`` rows (see the module docs)."""

    kind: ClassVar[str] = "scheme"
    #: the whole permutation group of its kind (not restricted to strata or blocks):
    #: the null approximations fitted to uniform permutations (gamma) apply only then
    full: ClassVar[bool] = True

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
        return permuted_rows(rng, self.n, size)

    @abc.abstractmethod
    def enumerate(self) -> Iterator[np.ndarray]:
        """Every distinct arrangement once (int64 rows), the identity first."""

    def identity(self) -> np.ndarray:
        """The data's own arrangement as a (1, n) batch."""
        return np.arange(self.n, dtype=np.int64)[None, :]

    @property
    def restriction(self) -> str | None:
        """How the arrangements are restricted, for reports (None: not restricted)."""
        return None


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


@dataclass(eq=False)
class SwapRows:
    """A batch of pair swaps: their signs (``+1`` keep, ``-1`` swap pair ``i``) and the
    pairing ``(x_i, y_pairing[i])`` of :class:`Swaps`; the arrangements themselves
    (``perms``) are built when asked for."""

    signs: np.ndarray
    pairing: np.ndarray

    @cached_property
    def perms(self) -> np.ndarray:
        """The arrangements (rows; see :class:`Swaps`)."""
        m = self.pairing.shape[0]
        partner = m + self.pairing.astype(np.int64)
        out = np.tile(np.arange(2 * m, dtype=np.int64), (self.signs.shape[0], 1))
        rows, cols = np.nonzero(self.signs < 0)
        out[rows, cols] = partner[cols]
        out[rows, partner[cols]] = cols
        return out

    def halves(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The sums of the pooled vector `v` over each row's first and second sample:
        ``(S + r'd) / 2`` and ``(S - r'd) / 2`` with ``d_i = v[i] - v[m + pairing[i]]``
        and ``S`` the sum over the pairs (row by row, the same bits whatever the batch)."""
        m = self.pairing.shape[0]
        a, b = v[:m], v[m:][self.pairing]
        total, diff = float((a + b).sum()), np.einsum("ij,j->i", self.signs, a - b)
        return 0.5 * (total + diff), 0.5 * (total - diff)


@dataclass(frozen=True, eq=False)
class Swaps(Scheme):
    """Two samples of equal size `m`, their points matched in pairs ``(x_i, y_pairing[i])``:
    the arrangements exchange the two points of any of the pairs (``2^m`` of them, a
    subgroup of :class:`Split`'s). Row ``p`` keeps the first sample's positions in order:
    ``p[i]`` is ``i`` (kept) or ``m + pairing[i]`` (swapped), and the partner's position
    holds the other point.

    Under the null of two i.i.d. samples from one distribution the pooled points are
    exchangeable, so the swaps keep the null distribution (an exact test); a `pairing`
    drawn at random, independently of the data, makes that hold whatever the order of
    the rows within each sample (sorted samples included). The swaps are drawn and
    enumerated as sign rows, from which the arrangements follow (``as_signs=True``: the
    sign rows themselves).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.problems.schemes import Swaps
    >>> s = Swaps(np.array([1, 0]))       # pairs (x_0, y_1), (x_1, y_0)
    >>> s.count(100), [p.tolist() for p in s.enumerate()]
    (4, [[0, 1, 2, 3], [3, 1, 2, 0], [0, 2, 1, 3], [3, 2, 1, 0]])
    >>> s.signs(np.array([[3, 1, 2, 0]])).tolist()
    [[-1.0, 1.0]]
    """

    pairing: np.ndarray
    #: draw and enumerate the sign rows instead of the arrangements (the swap null's loop,
    #: which builds the arrangements only for statistics that need them)
    as_signs: bool = False
    kind: ClassVar[str] = "swaps"
    full: ClassVar[bool] = False

    @property
    def n(self) -> int:
        return 2 * len(self.pairing)

    @property
    def restriction(self) -> str:
        return f"swaps within {len(self.pairing)} random pairs (x_i, y_j)"

    def count(self, cap: int) -> int | None:
        m = len(self.pairing)
        return 2 ** m if m < 63 and 2 ** m <= cap else None

    def signs(self, perms: np.ndarray) -> np.ndarray:
        """The sign rows of its arrangements (float64, ``+-1``)."""
        m = len(self.pairing)
        return np.where(perms[:, :m] == np.arange(m), 1.0, -1.0)

    def _rows(self, signs: np.ndarray) -> np.ndarray:
        return signs if self.as_signs else SwapRows(signs, self.pairing).perms

    def random(self, rng: np.random.Generator, size: int) -> np.ndarray:
        # one uniform per pair, row after row: the same rows whatever the batch sizes
        return self._rows(np.where(rng.random((size, len(self.pairing))) < 0.5, 1.0, -1.0))

    def enumerate(self) -> Iterator[np.ndarray]:
        m = len(self.pairing)
        for k in range(2 ** m):  # all +1 (the identity) first
            yield self._rows((1.0 - 2.0 * ((k >> np.arange(m)) & 1))[None, :])[0]


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


@dataclass(frozen=True)
class KWay(Scheme):
    """``k`` samples of the given sizes pooled: the arrangements are the ways of dividing
    the pooled points into groups of those sizes (the first ``sizes[0]`` entries of a row
    form group 0, the next ``sizes[1]`` group 1, ...). ``KWay((n_x, n_y))`` is
    :class:`Split`'s group.

    Examples
    --------
    >>> from kmtests.problems.schemes import KWay
    >>> s = KWay((1, 1, 2))
    >>> s.count(100), [p.tolist() for p in s.enumerate()][:3]
    (12, [[0, 1, 2, 3], [0, 2, 1, 3], [0, 3, 1, 2]])
    """

    sizes: tuple[int, ...]
    kind: ClassVar[str] = "kway"

    @property
    def n(self) -> int:
        return int(sum(self.sizes))

    def count(self, cap: int) -> int | None:
        return multinomial_at_most(tuple(self.sizes), cap)

    def enumerate(self) -> Iterator[np.ndarray]:
        def rec(rest: tuple[int, ...], sizes: tuple[int, ...]) -> Iterator[list[int]]:
            if len(sizes) == 1:
                yield list(rest)
                return
            for c in itertools.combinations(rest, sizes[0]):
                chosen = set(c)
                for tail in rec(tuple(i for i in rest if i not in chosen), sizes[1:]):
                    yield list(c) + tail

        for row in rec(tuple(range(self.n)), tuple(self.sizes)):
            yield np.array(row, dtype=np.int64)


def _labels_groups(labels: np.ndarray) -> list[np.ndarray]:
    """The positions of each stratum (in order of first appearance)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(first)
    return [np.flatnonzero(inverse == g) for g in order]


@dataclass(frozen=True, eq=False)
class Within(Scheme):
    """Permutations within strata: row ``p`` maps every stratum to itself.

    For paired variables (``n_x=None``) the arrangements are the permutations of
    ``y`` against ``x`` within each stratum (``prod(n_s!)`` of them). For two samples
    (``n_x`` the size of the first; the first ``n_x`` entries of a row form it) they are
    the splits that keep each stratum's number of first-sample points
    (``prod C(n_s, x_s)``): the permutation test of a paired design (a stratum per
    pair) or of clustered data.

    Examples
    --------
    >>> from kmtests.problems.schemes import Within
    >>> import numpy as np
    >>> s = Within(np.array([0, 1, 0, 1]), n_x=2)   # pooled x_0, x_1, y_0, y_1; pairs 0, 1
    >>> s.count(100), [p.tolist() for p in s.enumerate()]   # swap within each pair
    (4, [[0, 1, 2, 3], [0, 3, 2, 1], [2, 1, 0, 3], [2, 3, 0, 1]])
    """

    labels: np.ndarray
    n_x: int | None = None
    kind: ClassVar[str] = "within"
    full: ClassVar[bool] = False

    @property
    def n(self) -> int:
        return int(self.labels.shape[0])

    @property
    def groups(self) -> list[np.ndarray]:
        return _labels_groups(self.labels)

    @property
    def restriction(self) -> str:
        return f"within {len(self.groups)} strata"

    def count(self, cap: int) -> int | None:
        counts: list[int | None] = []
        for g in self.groups:
            if self.n_x is None:
                counts.append(math.factorial(g.size) if g.size <= 20 else None)
            else:
                counts.append(comb_at_most(g.size, int(np.sum(g < self.n_x)), cap))
        return _product_count(counts, cap)

    def random(self, rng: np.random.Generator, size: int) -> np.ndarray:
        # one uniform permutation of all rows per arrangement (row b is the b-th draw of
        # the stream, whatever the batch); the order in which it visits a stratum's rows
        # is a uniform permutation of that stratum, independently across strata
        full = super().random(rng, size)
        out = np.empty_like(full)
        for g in self.groups:
            out[:, g] = full[np.isin(full, g)].reshape(size, g.size)
        return out

    def enumerate(self) -> Iterator[np.ndarray]:
        groups = self.groups
        if self.n_x is None:
            choices = [list(itertools.permutations(g.tolist())) for g in groups]
            for combo in itertools.product(*choices):
                row = np.arange(self.n, dtype=np.int64)
                for g, perm in zip(groups, combo):
                    row[g] = perm
                yield row
            return
        n_x = self.n_x
        per = []
        for g in groups:
            gx = [int(i) for i in g if i < n_x]
            per.append([(list(c), [int(i) for i in g if i not in c])
                        for c in itertools.combinations(g.tolist(), len(gx))])
        for combo in itertools.product(*per):
            row = np.arange(self.n, dtype=np.int64)
            for g, (xs, ys) in zip(groups, combo):
                slots_x = [int(i) for i in g if i < n_x]
                slots_y = [int(i) for i in g if i >= n_x]
                row[slots_x] = xs
                row[slots_y] = ys
            yield row


@dataclass(frozen=True)
class Blocks(Scheme):
    """Permutations of blocks of `length` consecutive rows (time series).

    The rows are cut into consecutive blocks (the last one shorter if `length` does
    not divide them); an arrangement reorders the blocks and keeps the order within
    each, so the dependence between neighbouring observations survives. For paired
    variables (``n_x=None``) the blocks of ``y`` are permuted against ``x``; for two
    samples (``n_x`` a multiple of `length`) the blocks are redistributed between the
    samples. Valid for weakly dependent data whose dependence is shorter than the
    blocks (an approximation; exact for independent blocks).

    With a length chosen from the data (``blocks="auto"``, `auto` its record:
    :func:`kmtests._serial.auto_length`) the two sizes need not be multiples of it:
    the arrangements are then the orders of the blocks of the pooled series, whose
    first ``n_x`` rows form the first sample (a block may straddle the two).

    With `offsets` (two windows with ``blocks="auto"``, unless the rule found persistent
    dependence: :attr:`kmtests._serial.AutoLength.rotations`) each arrangement first rotates
    the series by an offset ``u`` in ``0..length-1`` (row ``t`` becomes row
    ``(t + u) mod n``), then cuts and reorders the blocks: the arrangements are those of
    the ``length`` rotations, ``length`` times as many. Without them, eight blocks of
    two windows give ``C(8, 4) = 70`` splits (35 values of a symmetric statistic), and a
    p-value of at most 0.05 is reached only by the largest (a level of 1/35 = 2.9%); with
    them the p-values have a fine grid, and the test reaches its level. The arrangements
    are the (offset, order) pairs, each once in ``count`` and ``enumerate`` (the law of
    the random draws; with a shorter last block two pairs can give the same row). This
    set is not a group: like block permutations themselves, the null is an
    approximation, its level measured in ``benchmarks/README.md``.

    Examples
    --------
    >>> from kmtests.problems.schemes import Blocks
    >>> Blocks(6, 2).count(100), next(Blocks(6, 2).enumerate()).tolist()
    (6, [0, 1, 2, 3, 4, 5])
    >>> s = Blocks(8, 2, n_x=4, offsets=True)
    >>> s.count(100), [r.tolist() for r in s.enumerate()][6]   # C(4, 2) x 2 rotations
    (12, [1, 2, 3, 4, 5, 6, 7, 0])
    """

    size: int
    length: int
    n_x: int | None = None
    auto: Any = None
    offsets: bool = False
    kind: ClassVar[str] = "blocks"
    full: ClassVar[bool] = False
    #: its rows are a series (the problem is declared a time series)
    series: ClassVar[bool] = True

    @property
    def n(self) -> int:
        return self.size

    @property
    def blocks(self) -> list[np.ndarray]:
        return [np.arange(s, min(s + self.length, self.size), dtype=np.int64)
                for s in range(0, self.size, self.length)]

    @property
    def restriction(self) -> str:
        what = f"of {len(self.blocks)} blocks of {self.length} consecutive rows"
        if self.offsets and self.length > 1:
            what += f", the series rotated by an offset of 0-{self.length - 1} rows first"
        if self.auto is not None:
            what += f"; length {self.auto.why}"
        return what

    @property
    def _orders(self) -> bool:
        """The arrangements are all orders of the blocks (paired variables, or two
        samples whose sizes the length does not divide)."""
        return self.n_x is None or bool(self.n_x % self.length or
                                        (self.size - self.n_x) % self.length)

    def count(self, cap: int) -> int | None:
        turns = self._turns
        b = len(self.blocks)
        if self._orders:
            c = math.factorial(b) if b <= 20 else None
        else:
            assert self.n_x is not None
            c = comb_at_most(b, self.n_x // self.length, cap)
        return c * turns if c is not None and c * turns <= cap else None

    @property
    def _turns(self) -> int:
        """The number of rotations: `length` with `offsets`, else 1."""
        return self.length if self.offsets else 1

    def _row(self, order: np.ndarray | tuple[int, ...]) -> np.ndarray:
        blocks = self.blocks
        return np.concatenate([blocks[i] for i in order])

    def random(self, rng: np.random.Generator, size: int) -> np.ndarray:
        b = len(self.blocks)
        if self._turns > 1:
            # one row of b + 1 uniforms per arrangement (the stream read row by row, so
            # the same rows in batches of any size): the order of the blocks is the
            # ranking of the first b, the offset the last
            u = rng.random((size, b + 1))
            orders = np.argsort(u[:, :b], axis=1, kind="stable")
            turn = np.minimum((u[:, b] * self.length).astype(np.int64), self.length - 1)
            out = self._ordered(orders)
            out += turn[:, None]
            out[out >= self.size] -= self.size          # (t + u) mod n, u < n
            return out
        return self._ordered(permuted_rows(rng, b, size))

    def _ordered(self, orders: np.ndarray) -> np.ndarray:
        """The rows of the block orders `orders` (one order per row): block ``o[k]``
        placed after the blocks before it, every row at once (each row's block lengths
        sum to ``n``, so the repeated block starts fill the rows exactly)."""
        size = orders.shape[0]
        starts = np.arange(0, self.size, self.length, dtype=np.int64)
        lens = (np.minimum(starts + self.length, self.size) - starts)[orders]
        shift = starts[orders] - (np.cumsum(lens, axis=1) - lens)
        out = np.repeat(shift.ravel(), lens.ravel()).reshape(size, self.size)
        out += np.arange(self.size, dtype=np.int64)
        return out

    def enumerate(self) -> Iterator[np.ndarray]:
        for turn in range(self._turns):
            for row in self._unturned():
                yield (row + turn) % self.size if turn else row

    def _unturned(self) -> Iterator[np.ndarray]:
        b = len(self.blocks)
        if self._orders:
            for order in itertools.permutations(range(b)):
                yield self._row(order)
            return
        assert self.n_x is not None
        k = self.n_x // self.length
        for c in itertools.combinations(range(b), k):
            rest = tuple(i for i in range(b) if i not in c)
            yield self._row(c + rest)


@dataclass(frozen=True)
class Independent(Scheme):
    """``d`` variables of ``size`` observations: independent permutations of every
    variable but the first (joint independence). A row holds the ``d - 1``
    permutations one after another (length ``(d - 1) size``).

    Examples
    --------
    >>> from kmtests.problems.schemes import Independent
    >>> s = Independent(3, 3)
    >>> s.count(100), s.n, next(s.enumerate()).tolist()
    (36, 6, [0, 1, 2, 0, 1, 2])
    """

    size: int
    d: int
    kind: ClassVar[str] = "independent"

    @property
    def n(self) -> int:
        return self.size * (self.d - 1)

    def count(self, cap: int) -> int | None:
        one = Pairing(self.size).count(cap)
        return _product_count([one] * (self.d - 1), cap)

    def random(self, rng: np.random.Generator, size: int) -> np.ndarray:
        m = self.d - 1
        rows = permuted_rows(rng, self.size, size * m)
        return np.ascontiguousarray(rows.reshape(size, m * self.size))

    def enumerate(self) -> Iterator[np.ndarray]:
        perms = [np.array(p, dtype=np.int64)
                 for p in itertools.permutations(range(self.size))]
        for combo in itertools.product(perms, repeat=self.d - 1):
            yield np.concatenate(combo)

    def identity(self) -> np.ndarray:
        """The data's own arrangement: every variable in its own order, as a (1, n) batch."""
        return np.tile(np.arange(self.size, dtype=np.int64), self.d - 1)[None, :]
