"""numba kernel for permuted HSIC sums (the only jitted code of the tests).

``pair_sums(A, B, perms, out)`` writes ``out[b] = sum_ij A[i, j] B[p_i, p_j]``
for each permutation ``p = perms[b]``, with `A` and `B` symmetric (only the
upper triangle ``j >= i`` is read). Rows of `perms` are independent and each is
summed in a fixed order, so the result does not depend on the number of threads
or on how permutations are batched.

Speed: the permutations are processed in groups of ``_GROUP`` (4). One pass
over a row ``A[i]`` serves the whole group (four gathers from four rows of `B`
per element of ``A[i]``, four independent accumulation chains), and indices are
unsigned 32-bit (no negative-index wrap-around in the inner loop, half the
cache footprint). The last group of a call is padded with copies of its last
permutation, so every permutation is always computed by the same code.

For ``n >= _COPY_MIN_N`` the matrices no longer stay in the last-level cache and
the random gathers ``B[p_i][p_j]`` would miss to DRAM one cache line at a time;
the four rows ``B[p_i]`` are then first copied (sequentially, prefetcher
friendly) into a small buffer that stays in L2, and gathered from there
(n = 2000: 2.3 times faster on the 2-core benchmark machine; below the
threshold the copy costs more than it saves). The copy moves values without
arithmetic, so both paths give identical bits.

Threads: the kernel is serial and releases the GIL; :func:`kmtests.engines.hsic.pair_sums`
runs blocks of permutations on Python threads
(:func:`kmtests.engines._threads.map_row_blocks`). numba's ``parallel=True`` compiled
for 2.5-5 s in a fresh install (its parfor passes) and started its threading layer in
every new process; the serial kernel compiles in about a second.

Determinism: the kernel is compiled *without* fastmath, so every group member
(lane) is a plain left-to-right sum in source order: the compiler may not
reassociate it, whatever it vectorises. A permutation's value therefore depends
neither on the thread that runs it, nor on its lane in the group, nor on the
batch it came in.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._numba_cache import enable_caching

#: permutations per pass over the rows of `A` (the kernel below is written for 4)
_GROUP = 4
#: from this n on, the rows of `B` are copied to a buffer before the gathers (speed only)
_COPY_MIN_N = 1024


# cached on disk (numba's cache=True), but never inside an installed package: see
# kmtests.engines._numba_cache
@njit(fastmath=False, nogil=True)
def pair_sums(A: np.ndarray, B: np.ndarray, perms: np.ndarray,
              out: np.ndarray) -> None:  # pragma: no cover - compiled
    n_perm, n = perms.shape
    n_groups = (n_perm + _GROUP - 1) // _GROUP
    for g in range(n_groups):
        b0 = g * _GROUP
        P = np.empty((_GROUP, n), dtype=np.uint32)
        for k in range(_GROUP):
            bb = min(b0 + k, n_perm - 1)  # pad the last group with its last row
            for j in range(n):
                P[k, j] = perms[bb, j]
        p0 = P[0]
        p1 = P[1]
        p2 = P[2]
        p3 = P[3]
        copy_rows = n >= _COPY_MIN_N
        R = np.empty((_GROUP, n if copy_rows else 0))
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for i in range(n):
            Ai = A[i]
            B0 = B[p0[i]]
            B1 = B[p1[i]]
            B2 = B[p2[i]]
            B3 = B[p3[i]]
            if copy_rows:
                for j in range(n):
                    R[0, j] = B0[j]
                    R[1, j] = B1[j]
                    R[2, j] = B2[j]
                    R[3, j] = B3[j]
                B0 = R[0]
                B1 = R[1]
                B2 = R[2]
                B3 = R[3]
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for j in range(i + 1, n):
                a = Ai[j]
                a0 += a * B0[p0[j]]
                a1 += a * B1[p1[j]]
                a2 += a * B2[p2[j]]
                a3 += a * B3[p3[j]]
            d = Ai[i]
            s0 += 2.0 * a0 + d * B0[p0[i]]
            s1 += 2.0 * a1 + d * B1[p1[i]]
            s2 += 2.0 * a2 + d * B2[p2[i]]
            s3 += 2.0 * a3 + d * B3[p3[i]]
        out[b0] = s0
        if b0 + 1 < n_perm:
            out[b0 + 1] = s1
        if b0 + 2 < n_perm:
            out[b0 + 2] = s2
        if b0 + 3 < n_perm:
            out[b0 + 3] = s3


enable_caching(pair_sums)


def pair_sums_reference(A: np.ndarray, B: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """NumPy reference for :func:`pair_sums` (tests)."""
    return np.array([np.sum(A * B[np.ix_(p, p)]) for p in perms])
