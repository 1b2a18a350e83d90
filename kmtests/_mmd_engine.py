"""Permuted MMD statistics as block sums of the pooled Gram matrix.

For a split of the pooled sample into x (membership vector ``a``) and y, the
within- and between-sample sums are ``S_xx = a'Ka``, ``S_xy = a'r - S_xx`` and
``S_yy = 1'K1 - 2a'r + S_xx`` with ``r = K1``. ``a'Ka`` for many splits at once
is the matrix product ``(A K) * A`` summed by rows. As `K` is symmetric, only its
upper block triangle is used: with `K` cut into ``_BLOCK``-wide blocks,
``a'Ka = sum_i a_i'K_ii a_i + 2 sum_{i<j} a_i'K_ij a_j``, one BLAS product
``A[:, I_i] @ K[I_i, s_i:]`` per block row — about ``(1/2 + _BLOCK/2N)`` of the
``2 B N^2`` flops of the full product. The products are done in fixed-shape
chunks of ``_CHUNK`` splits (the last chunk zero-padded), with block boundaries
that depend on ``N`` only, and each split's partial sums are added in a fixed
order, so every split's value is computed by the same call shapes and the same
operations — bit-identical whatever ``batch`` is.

Uniform-weight estimators (KME and the uniform shrinkage family) only need
these sums; other estimators are evaluated split by split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .estimators import KernelMeanEstimator

#: splits per BLAS call (fixed: the call shape must not depend on `batch`)
_CHUNK = 128
#: below this many pooled points the BLAS products use one thread (see within_sums)
_SMALL_N = 1024
#: block width of the block-triangular product (fixed; boundaries depend on N only)
_BLOCK = 256
# (128, 256) was the fastest of (64|128) x (256|512) on a 2-core AMD EPYC for
# N = 400 ... 4000, and makes half as many BLAS calls as (64, 256): multithreaded
# OpenBLAS loses much time per call when other processes occupy the cores.


@dataclass(frozen=True)
class PooledGram:
    """Permutation-invariant quantities of the pooled Gram matrix (computed once)."""

    K: np.ndarray
    rowsum: np.ndarray
    total: float
    diag: np.ndarray
    trace: float

    @classmethod
    def from_gram(cls, K: np.ndarray) -> "PooledGram":
        K = np.ascontiguousarray(K, dtype=np.float64)
        r = K.sum(axis=1)
        d = np.ascontiguousarray(np.diag(K))
        return cls(K, r, float(r.sum()), d, float(d.sum()))

    @property
    def scale(self) -> float:
        """Magnitude of the terms (for the tie tolerance)."""
        return float(np.max(np.abs(self.diag))) if self.diag.size else 0.0


@dataclass(frozen=True)
class BlockStats:
    s_xx: np.ndarray
    s_xy: np.ndarray
    s_yy: np.ndarray
    t_x: np.ndarray
    t_y: np.ndarray


def membership(perms: np.ndarray, n_x: int, n_total: int) -> np.ndarray:
    """0/1 float matrix: row b marks the points that split b assigns to x."""
    A = np.zeros((perms.shape[0], n_total))
    A[np.arange(perms.shape[0])[:, None], perms[:, :n_x]] = 1.0
    return A


def _membership_into(A: np.ndarray, perms: np.ndarray, n_x: int) -> None:
    """Write the 0/1 membership rows of `perms` into the first rows of `A`; zero the rest."""
    A.fill(0.0)
    rows = perms.shape[0]
    flat = (np.arange(rows, dtype=np.int64)[:, None] * A.shape[1] + perms[:, :n_x]).ravel()
    A.ravel()[flat] = 1.0


def within_sums(K: np.ndarray, perms: np.ndarray, n_x: int) -> np.ndarray:
    """``a'Ka`` (sum of `K` over the first `n_x` points of each split) for every row.

    Uses the upper block triangle of the symmetric `K` (see the module
    docstring); every split goes through the same fixed-shape BLAS calls.
    Below ``_SMALL_N`` pooled points the products run on one BLAS thread:
    multithreaded OpenBLAS gains little there and, when another process
    occupies a core, is ten times slower (N = 400, B = 1000: 0.23 s with 2
    threads against 0.023 s with one, on the 2-core benchmark machine).
    """
    if K.shape[0] < _SMALL_N:
        from ._pool import single_blas_thread

        with single_blas_thread():
            return _within_sums(K, perms, n_x)
    return _within_sums(K, perms, n_x)


def _within_sums(K: np.ndarray, perms: np.ndarray, n_x: int) -> np.ndarray:
    n_total = K.shape[0]
    n_rows = perms.shape[0]
    starts = range(0, n_total, _BLOCK)
    work = np.empty(_CHUNK * n_total)  # one buffer; block i uses its first rows x (N - s_i)
    bufs = [work[: _CHUNK * (n_total - s)].reshape(_CHUNK, n_total - s) for s in starts]
    A = np.empty((_CHUNK, n_total))
    acc = np.empty(_CHUNK)
    out = np.empty(n_rows)
    for start in range(0, n_rows, _CHUNK):
        stop = min(start + _CHUNK, n_rows)
        _membership_into(A, perms[start:stop], n_x)
        acc.fill(0.0)
        for s, buf in zip(starts, bufs):
            e = min(s + _BLOCK, n_total)
            np.matmul(A[:, s:e], K[s:e, s:], out=buf)
            acc += np.einsum("ij,ij->i", buf[:, : e - s], A[:, s:e])
            if e < n_total:
                acc += 2.0 * np.einsum("ij,ij->i", buf[:, e - s:], A[:, e:])
        out[start:stop] = acc[: stop - start]
    return out


def block_stats(pg: PooledGram, perms: np.ndarray, n_x: int) -> BlockStats:
    s_xx = within_sums(pg.K, perms, n_x)
    x_idx = perms[:, :n_x]
    a_r = pg.rowsum[x_idx].sum(axis=1)
    t_x = pg.diag[x_idx].sum(axis=1)
    s_xy = a_r - s_xx
    s_yy = pg.total - 2.0 * a_r + s_xx
    return BlockStats(s_xx, s_xy, s_yy, t_x, pg.trace - t_x)


def mmd_from_stats(st: BlockStats, n_x: int, n_y: int, est: KernelMeanEstimator,
                   unbiased: bool) -> np.ndarray:
    """MMD^2 for a uniform-weight estimator from block sums (vectorised)."""
    rho_x, rho_y = st.s_xx / n_x**2, st.s_yy / n_y**2
    c_x = est.uniform_scale(rho_x, st.t_x / n_x, n_x)
    c_y = est.uniform_scale(rho_y, st.t_y / n_y, n_y)
    cross = 2.0 * c_x * c_y * st.s_xy / (n_x * n_y)
    if unbiased:
        u_x = (st.s_xx - st.t_x) / (n_x * (n_x - 1))
        u_y = (st.s_yy - st.t_y) / (n_y * (n_y - 1))
        return c_x**2 * u_x + c_y**2 * u_y - cross
    return c_x**2 * rho_x + c_y**2 * rho_y - cross


def mmd_general(pg: PooledGram, perms: np.ndarray, n_x: int,
                est: KernelMeanEstimator) -> tuple[np.ndarray, list[dict]]:
    """V-form MMD^2 ``bx'Kxx bx + by'Kyy by - 2 bx'Kxy by`` split by split.

    The weights are recomputed on every split (data-driven parameters are
    re-tuned on each permuted data set). Indices are sorted within each
    sample so the value does not depend on the order inside a split.
    """
    K = pg.K
    out = np.empty(perms.shape[0])
    params = []
    for b, p in enumerate(perms):
        ix, iy = np.sort(p[:n_x]), np.sort(p[n_x:])
        Kxx, Kyy, Kxy = K[np.ix_(ix, ix)], K[np.ix_(iy, iy)], K[np.ix_(ix, iy)]
        bx, px = est.weights(Kxx)
        by, py = est.weights(Kyy)
        out[b] = bx @ Kxx @ bx + by @ Kyy @ by - 2.0 * (bx @ Kxy @ by)
        params.append({"x": px, "y": py})
    return out, params


def mmd_statistics(pg: PooledGram, perms: np.ndarray, n_x: int, est: KernelMeanEstimator,
                   unbiased: bool) -> np.ndarray:
    """MMD^2 of every split in `perms` (rows: first `n_x` entries form x)."""
    n_y = pg.K.shape[0] - n_x
    if est.uniform:
        return mmd_from_stats(block_stats(pg, perms, n_x), n_x, n_y, est, unbiased)
    return mmd_general(pg, perms, n_x, est)[0]
