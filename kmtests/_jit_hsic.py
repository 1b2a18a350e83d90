"""numba kernel for permuted HSIC sums (the only jitted code of the tests).

``pair_sums(A, B, perms, out)`` writes ``out[b] = sum_ij A[i, j] B[p_i, p_j]``
for each permutation ``p = perms[b]``, with `A` and `B` symmetric. Rows of
`perms` are independent and each is summed in a fixed order, so the result does
not depend on the number of threads or on how permutations are batched.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True, fastmath=True, nogil=True)
def pair_sums(A, B, perms, out):  # pragma: no cover - compiled
    n_perm, n = perms.shape
    for b in prange(n_perm):
        p = perms[b]
        s = 0.0
        for i in range(n):
            Ai = A[i]
            Bi = B[p[i]]
            acc = 0.0
            for j in range(i + 1, n):
                acc += Ai[j] * Bi[p[j]]
            s += 2.0 * acc + Ai[i] * Bi[p[i]]
        out[b] = s


def pair_sums_reference(A: np.ndarray, B: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """NumPy reference for :func:`pair_sums` (tests)."""
    return np.array([np.sum(A * B[np.ix_(p, p)]) for p in perms])
