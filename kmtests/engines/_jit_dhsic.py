r"""numba kernel for permuted dHSIC statistics (:mod:`kmtests.statistics.dhsic`).

``joint_sums(W, u, g, e0, rows, out)`` writes, for each row ``b`` of `rows`
(the permutations of variables ``2..d`` one after another),

.. math::

    \mathrm{out}_b = \frac{1}{n^2} \sum_{ij} E^{(d)}_{ij}
        - \frac{2}{n} \sum_i F^{(d)}_i,

the parts of the products over the variables with at least two ``W`` (or ``u``)
factors, by the recursion of :func:`kmtests.statistics.dhsic._chunk_values`,
entry by entry: starting from ``e1 = W^1_ij``, ``e2 = 0``, for ``k = 2..d`` with
``w = W^k_{p_k(i) p_k(j)}``

    e2 <- e2 (w + g_k) + e1 w,     e1 <- e1 g_k + e0_k w,

``e0_k = g_1 ... g_{k-1}``; the same for ``u`` with one index. Every entry's
``e2`` is the one NumPy's array recursion computes, bit for bit; the sums run
over the upper triangle (``W`` is symmetric, and so is every permuted ``W``),
doubled, plus the diagonal, row after row.

Speed: as :mod:`kmtests.engines._jit_hsic`, the permutations are processed in
groups of four (one pass over ``W^1`` serves the group; four independent
accumulation chains) with unsigned 32-bit indices, and the last group is padded
with copies of its last permutation. One permutation costs ``n (n + 1) / 2``
entries of ``d - 1`` gathers and ``2`` (``d = 2``: a multiply and the sum, as the
HSIC loop), ``9`` (``d = 3``) or ``9 + 7 (d - 3)`` floating-point operations each
(the first step's ``e2`` is a product, the last one's ``e1`` is not needed). The
NumPy recursion streamed ``(c, n, n)`` work arrays through memory for every step.

Threads: the kernel is serial and releases the GIL; the caller runs blocks of rows on
threads (:func:`kmtests.engines._threads.map_row_blocks`), which compiles in a fraction
of the time of numba's ``parallel=True`` (no parfor passes: about 6 s against 15 s on
the loaded benchmark machine).

Determinism: compiled without fastmath, so every lane is a plain left-to-right
sum in source order; a permutation's value depends neither on the thread, nor
on its lane, nor on its batch.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._numba_cache import enable_caching

#: permutations per pass over the rows of ``W^1`` (the kernel below is written for 4)
_GROUP = 4


@njit(inline="always", fastmath=False, nogil=True)
def _lane(W: np.ndarray, g: np.ndarray, e0: np.ndarray, R: np.ndarray, P: np.ndarray,
          lane: int, j: int, w1: float, d: int) -> float:  # pragma: no cover - compiled
    """``e2`` of entry ``(i, j)`` of one lane (``R[lane]``: its rows ``p_k(i)``)."""
    w = W[1, R[lane, 1], P[lane, 1, j]]
    e2 = w1 * w  # the first permuted variable: e2 was 0
    if d == 2:
        return e2
    e1 = w1 * g[1] + e0[1] * w
    for k in range(2, d - 1):
        w = W[k, R[lane, k], P[lane, k, j]]
        e2 = e2 * (w + g[k]) + e1 * w
        e1 = e1 * g[k] + e0[k] * w
    w = W[d - 1, R[lane, d - 1], P[lane, d - 1, j]]
    return e2 * (w + g[d - 1]) + e1 * w  # the last: e1 is not needed any more


@njit(inline="always", fastmath=False, nogil=True)
def _group(rows: np.ndarray, b0: int, d: int, n: int) -> np.ndarray:  # pragma: no cover
    """``P[lane, k, i]``: observation ``i`` of variable ``k`` in the arrangement of each
    lane of the group starting at row `b0` (the last group padded with its last row)."""
    n_perm = rows.shape[0]
    P = np.empty((_GROUP, d, n), dtype=np.uint32)
    for lane in range(_GROUP):
        bb = min(b0 + lane, n_perm - 1)
        for i in range(n):
            P[lane, 0, i] = i
        for k in range(1, d):
            for i in range(n):
                P[lane, k, i] = rows[bb, (k - 1) * n + i]
    return P


@njit(inline="always", fastmath=False, nogil=True)
def _one_index(u: np.ndarray, g: np.ndarray, e0: np.ndarray, P: np.ndarray, lane: int
               ) -> float:  # pragma: no cover - compiled
    """``sum_i F_i`` of one lane: the parts of ``prod_k u^k`` with at least two ``u``."""
    d, n = u.shape
    acc = 0.0
    for i in range(n):
        e1 = u[0, i]
        e2 = 0.0
        for k in range(1, d):
            w = u[k, P[lane, k, i]]
            e2 = e2 * (w + g[k]) + e1 * w
            e1 = e1 * g[k] + e0[k] * w
        acc += e2
    return acc


@njit(fastmath=False, nogil=True)
def joint_sums(W: np.ndarray, u: np.ndarray, g: np.ndarray, e0: np.ndarray,
               rows: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    d, n = u.shape
    n_perm = rows.shape[0]
    nn = float(n) * float(n)
    for grp in range((n_perm + _GROUP - 1) // _GROUP):
        b0 = grp * _GROUP
        P = _group(rows, b0, d, n)
        R = np.empty((_GROUP, d), dtype=np.uint32)  # the rows p_k(i) of the current i
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for i in range(n):
            for lane in range(_GROUP):
                for k in range(d):
                    R[lane, k] = P[lane, k, i]
            W0 = W[0, i]
            w1 = W0[i]  # the diagonal entry, then the upper triangle
            s0 += _lane(W, g, e0, R, P, 0, i, w1, d)
            s1 += _lane(W, g, e0, R, P, 1, i, w1, d)
            s2 += _lane(W, g, e0, R, P, 2, i, w1, d)
            s3 += _lane(W, g, e0, R, P, 3, i, w1, d)
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for j in range(i + 1, n):
                w1 = W0[j]
                a0 += _lane(W, g, e0, R, P, 0, j, w1, d)
                a1 += _lane(W, g, e0, R, P, 1, j, w1, d)
                a2 += _lane(W, g, e0, R, P, 2, j, w1, d)
                a3 += _lane(W, g, e0, R, P, 3, j, w1, d)
            s0 += 2.0 * a0
            s1 += 2.0 * a1
            s2 += 2.0 * a2
            s3 += 2.0 * a3
        out[b0] = s0 / nn - 2.0 * _one_index(u, g, e0, P, 0) / n
        if b0 + 1 < n_perm:
            out[b0 + 1] = s1 / nn - 2.0 * _one_index(u, g, e0, P, 1) / n
        if b0 + 2 < n_perm:
            out[b0 + 2] = s2 / nn - 2.0 * _one_index(u, g, e0, P, 2) / n
        if b0 + 3 < n_perm:
            out[b0 + 3] = s3 / nn - 2.0 * _one_index(u, g, e0, P, 3) / n


enable_caching(joint_sums)
