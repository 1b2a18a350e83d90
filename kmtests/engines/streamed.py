r"""The exact MMD permutation test without the N x N Gram matrix: tiles on the fly.

:class:`StreamedGram` plays the part of :class:`kmtests.engines.mmd.PooledGram`
for the uniform-weight statistics (the KME and every estimator whose weights
are uniform, :mod:`kmtests.engines.mmd`): what they need is, for every split
with membership vector ``a``, the centred within-sample sum ``s = a'Kc a``,
and the permutation-invariant row means ``r``, grand mean ``g`` and diagonal
of ``K``.

Two passes over the upper block triangle of the Gram matrix, in tiles of
``TILE x TILE`` computed from the data when they are needed:

1. the row means ``r`` (and ``g``, the diagonal, the extreme values, with
   the finiteness check of every tile);
2. for a chunk of splits ``A`` (rows of 0/1 memberships),
   ``s = sum_I sum_{J >= I} m_IJ rowsum((A_I Kc_IJ) * A_J)`` with ``m = 1`` on
   the diagonal and ``2`` above it, ``Kc_IJ = K_IJ - r_I - r_J + g``: the block
   form of the in-memory engine (``2 B N^2`` flops for ``B`` splits, half of
   them saved by symmetry), one tile at a time. Each tile is generated once
   per chunk of splits and multiplied by fixed-shape row groups of
   ``_CHUNK`` splits, and the partial sums are added in a fixed order (per
   row block of tiles, then over row blocks): a split's value is the same
   bits whatever the batch of splits it came in.

Memory is ``O(N d + TILE^2 + chunk N)``; the kernel values are computed
``1 + (number of chunks)`` times. The Gaussian family stores ``k - 1``
(``expm1``), as the in-memory engine does, so that centring keeps the digits
of kernel differences at large bandwidths.

Row blocks are independent tasks (:func:`row_block_sums`); inside
``joblib.parallel_config(backend="dask")`` they run on a dask cluster, and
their partial sums are added in the same order as locally (the same p-value).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from .._guards import available_memory, format_bytes
from ._base import Engine, Requirements
from ._loop import blas_threads, default_blas_threads
from ._threads import thread_count
from .mmd import _CHUNK, _membership_into
from .tiles import KernelTiles

__all__ = ["TILE", "Streamed", "StreamedGram", "row_block_sums", "streamed_batch"]

#: tile width (fixed: the tiles' shapes must depend on N only)
TILE = 2048


def _bounds(n: int) -> list[tuple[int, int]]:
    return [(s, min(s + TILE, n)) for s in range(0, n, TILE)]


@dataclass(frozen=True, eq=False)
class StreamedGram:
    """The pooled Gram matrix's permutation-invariant summaries, and its tiles.

    Attributes
    ----------
    tiles : KernelTiles
    r, g, diag : the row means, grand mean and diagonal of ``K``.
    r_stored, g_stored, diag_stored : the same of the stored tiles (``P - offset``, see
        :mod:`kmtests.engines.tiles`), which centre to the same ``Kc``.
    kc_max : float
        A bound on ``max |Kc|`` (``max|K - offset| + 2 max|r_stored| +
        |g_stored|``): the rounding scale of the statistics.
    """

    tiles: KernelTiles
    r: np.ndarray
    g: float
    diag: np.ndarray
    r_stored: np.ndarray
    g_stored: float
    kc_max: float
    diag_stored: np.ndarray

    @classmethod
    def build(cls, kernel: Any, z: np.ndarray, name: str = "the pooled sample",
              progress: Callable[[int], None] | None = None) -> "StreamedGram":
        """First pass: row means, diagonal and extremes, tile by tile (checked finite)."""
        src = KernelTiles(kernel, z, name)
        n = src.n
        rows = np.zeros(n)
        diag = np.empty(n)
        lo, hi = np.inf, -np.inf
        for bi, (i0, i1) in enumerate(_bounds(n)):
            part = np.zeros(i1 - i0)
            for (j0, j1) in _bounds(n)[bi:]:
                T = src.block(i0, i1, j0, j1)
                lo, hi = min(lo, float(T.min())), max(hi, float(T.max()))
                part += T.sum(axis=1)
                if j0 == i0:
                    diag[i0:i1] = np.diagonal(T)
                else:
                    rows[j0:j1] += T.sum(axis=0)
            rows[i0:i1] += part
            if progress is not None:
                progress(1)
        r = rows / n
        g = float(r.mean())
        kmax = max(abs(lo), abs(hi))
        bound = kmax + 2.0 * float(np.max(np.abs(r))) + abs(g)
        r_raw, g_raw, d_raw = src.raw_offsets(r, g, diag)
        return cls(src, r_raw, g_raw, d_raw, r, g, bound, diag)

    # -- the interface of PooledGram used by the uniform-rule statistics --------------------
    @property
    def n(self) -> int:
        return self.tiles.n

    @property
    def r_max(self) -> float:
        return float(np.max(np.abs(self.r))) if self.n else 0.0

    @property
    def diag_c(self) -> np.ndarray:
        return self.diag_stored - 2.0 * self.r_stored + self.g_stored

    def within_sums(self, perms: np.ndarray, n_x: int, n_jobs: int | None = None
                    ) -> np.ndarray:
        """``a'Kc a`` for every split in `perms` (x = the first `n_x` entries of a row)."""
        n_rows = perms.shape[0]
        groups = -(-n_rows // _CHUNK)
        A = np.zeros((groups * _CHUNK, self.n))
        for k in range(groups):  # fixed-shape groups, zero rows padding the last one
            _membership_into(A[k * _CHUNK:(k + 1) * _CHUNK], perms[k * _CHUNK:(k + 1) * _CHUNK],
                             n_x)
        blocks = range(len(_bounds(self.n)))
        parts = _map_blocks(self, A, blocks, thread_count(n_jobs),
                            blas_threads if n_jobs is not None else default_blas_threads)
        out = np.zeros(groups * _CHUNK)
        for part in parts:  # fixed order: the same bits locally and on a cluster
            out += part
        return out[:n_rows]


def row_block_sums(sg: StreamedGram, A: np.ndarray, bi: int) -> np.ndarray:
    """The contribution of row block `bi` (its tiles ``J >= I``) to ``a'Kc a`` for every row
    of `A` (rows: 0/1 memberships in groups of ``_CHUNK``)."""
    bounds = _bounds(sg.n)
    i0, i1 = bounds[bi]
    out = np.zeros(A.shape[0])
    P = np.empty((_CHUNK, TILE))
    for (j0, j1) in bounds[bi:]:
        T = sg.tiles.block(i0, i1, j0, j1)
        T -= sg.r_stored[i0:i1, None] + sg.r_stored[None, j0:j1]
        T += sg.g_stored
        m = 1.0 if j0 == i0 else 2.0
        w = j1 - j0
        for k in range(0, A.shape[0], _CHUNK):
            Pk = P[:, :w]
            np.matmul(A[k:k + _CHUNK, i0:i1], T, out=Pk)
            out[k:k + _CHUNK] += m * np.einsum("ij,ij->i", Pk, A[k:k + _CHUNK, j0:j1])
    return out


def _map_blocks(sg: StreamedGram, A: np.ndarray, blocks: range, n_threads: int | None,
                blas_threads: Any) -> list[np.ndarray]:
    """The row blocks' partial sums: locally in order (BLAS threads = `n_threads`), or as
    joblib tasks when a distributed joblib backend (dask) is active."""
    backend = _distributed_backend()
    if backend:
        from joblib import Parallel, delayed

        return list(Parallel(n_jobs=-1)(delayed(row_block_sums)(sg, A, bi) for bi in blocks))
    if n_threads is None:
        return [row_block_sums(sg, A, bi) for bi in blocks]
    with blas_threads(n_threads):
        return [row_block_sums(sg, A, bi) for bi in blocks]


def _distributed_backend() -> bool:
    """Whether a joblib backend that runs tasks elsewhere (dask) is active."""
    try:
        from joblib.parallel import get_active_backend
    except ImportError:  # pragma: no cover - joblib is a dependency
        return False
    backend = get_active_backend()[0]
    return "dask" in type(backend).__name__.lower()


#: the membership chunk of one pass over the tiles is at most this share of free memory
_CHUNK_SHARE = 0.1


def streamed_batch(n: int, n_resamples: int) -> int:
    """Splits per pass over the Gram tiles: all of them if their memberships (8 N bytes
    each, plus the indices) take at most 10% of the available memory (at least 512 MB);
    every pass recomputes the kernel values."""
    free = available_memory()
    budget = max(_CHUNK_SHARE * (free if free is not None else 4e9), 512e6)
    per = 16.0 * n
    return int(max(128, min(n_resamples, budget // per)))


class Streamed(Engine):
    """``engine="streamed"``: the exact two-sample statistics of the uniform-weight
    estimators without the N x N Gram matrix (tiles computed on the fly)."""

    name: ClassVar[str] = "streamed"
    schemes: ClassVar[tuple[str, ...]] = ("split",)
    pair_values: ClassVar[bool] = True

    def supports(self, req: Requirements) -> str | None:
        if req.scheme == "split" and req.pooled_tuning:
            return ("engine='streamed' tunes the estimator on every permutation "
                    "(tuning='permutation'); tuning='pooled' needs the pooled Gram matrix in "
                    "memory (engine='exact').")
        return super().supports(req)

    def pooled(self, kernel: Any, z: np.ndarray, *, rng: Any = None,
               scale: float = 1.0) -> StreamedGram:
        if scale != 1.0:  # pragma: no cover - marginalized estimators are refused
            raise ValueError("engine='streamed' computes the kernel as given.")
        return StreamedGram.build(kernel, z)

    def memory(self, req: Requirements, n: int, dims: Mapping[str, int],
               batch: int) -> tuple[float, str, str]:
        d = dims.get("kernel", 0)
        need = 8.0 * n * (3 * d + 8) + 4 * 8.0 * TILE * TILE + 8.0 * n * batch
        return (need, f"the streamed engine's buffers for {n} points take {format_bytes(need)}",
                "Use fewer permutations per pass (`batch`), or an approximate engine "
                "(engine='nystrom' or 'rff', n_features=...).")

    def batch(self, scheme: str, n: int, n_resamples: int) -> int | None:
        return streamed_batch(n, n_resamples)
