r"""Low-rank MMD and HSIC on dask arrays: features chunk by chunk, only small sums travel.

The random Fourier features of :mod:`kmtests.engines.lowrank` (the same
frequencies and phases, drawn from the same child generator ``"features"`` of the
test's `rng`; :class:`FeatureMap`), or Nyström features of landmarks drawn by position
(:class:`NystromMap`), are computed on each row chunk of the data where the chunk lives
(a dask worker), and each chunk returns sums of dimension ``r`` (the number of
features) or ``r x r``; the ``N x r`` feature matrix never exists in one place,
and neither do the data. The passes over the data (each recomputes what it needs
from the chunk):

1. the column sums of the data (and a finiteness check), then the sums of the
   residuals: the two-pass centring of :func:`kmtests.kernels._centred`;
2. the column sums of the features: their mean ``m``, so that each chunk
   centres its features itself (``phi_c = phi - m``);
3. the statistic and its null distribution:

   * **MMD, exact chunkwise permutation null.** A uniformly random split of
     ``N`` points into ``n_x`` and ``n_y`` is drawn in two stages: the number of
     points of the first sample in each chunk, ``k_c``, from the multivariate
     hypergeometric law (``Generator.multivariate_hypergeometric``, drawn
     centrally from the test's `rng`), then, in each chunk, which ``k_c`` of its
     rows, uniformly (``Generator.choice`` without replacement) from the chunk's
     own stream (``SeedSequence`` keyed by ``("chunks", c)``). The two stages give
     every subset of size ``n_x`` the probability ``1 / C(N, n_x)``: this *is*
     the permutation distribution of the split, and the p-value
     ``(1 + #{T_b >= T}) / (1 + B)`` is exact for the approximate statistic. Each
     chunk returns, for the observed split and the ``B`` drawn ones, the sums of
     ``[phi_c, ||phi_c||^2, r]`` over its rows in the first sample (one BLAS
     product per 64 splits): a ``(B + 1) x (r + 2)`` array. The partial sums are
     added in a binary tree fixed by the chunk indices, so the p-value is the
     same bits whatever the number of workers, and whatever the scheduler.
   * **HSIC, spectral (weighted chi-square) null.** Each chunk returns
     ``Phi_x,c' Phi_y,c`` (``r_x x r_y``) and the two second moments
     ``Phi_x,c' Phi_x,c``, ``Phi_y,c' Phi_y,c``. ``HSIC_b = ||Phi_x' Phi_y||_F^2 /
     N^2``; under independence ``N HSIC_b`` tends to ``sum_ab lambda_a mu_b
     chi^2_1`` with ``lambda``, ``mu`` the eigenvalues of the two feature
     covariances (the low-rank form of the eigenvalues of ``Kc o Lc / N^2`` that
     ``method="chi2"`` uses in memory): an approximate, asymptotic null. A
     permutation of the pairing does not distribute: it pairs every chunk's
     ``x`` with ``y`` of every other chunk.

Nothing here imports dask at module level; the functions take dask arrays and
run on the current scheduler (a ``distributed.Client`` when one is active).

Examples
--------
>>> import numpy as np
>>> from kmtests.engines.dask_lowrank import split_counts
>>> split_counts([3, 3, 2], 4, 2, np.random.default_rng(0)).sum(axis=1)
array([4, 4])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .._rng import keyed, role_key
from ._loop import blas_threads
from .lowrank import rff_rows

__all__ = ["CHUNK_ROWS", "FeatureMap", "HSICSums", "MMDSums", "NystromMap", "as_rows",
           "centring", "dask_array", "landmarks",
           "chunk_subsets", "feature_map", "hsic_sums", "mmd_sums", "split_counts", "tree_sum"]

#: rows per chunk (the default): the chunkwise permutations depend on the chunks, which
#: are fixed by N and this number only
CHUNK_ROWS = 1 << 15
#: splits per BLAS product of a chunk (fixed shape)
_SPLITS = 64
#: rows per kernel evaluation against the Nyström landmarks
_KERNEL_ROWS = 2048


def _dask() -> Any:
    """The dask module (untyped here: imported when a test runs on dask)."""
    import importlib

    return importlib.import_module("dask")


def dask_array() -> Any:
    """The ``dask.array`` module (untyped here)."""
    import importlib

    return importlib.import_module("dask.array")


def as_rows(a: Any, name: str, chunk_rows: int) -> Any:
    """`a` (a dask or NumPy array, 1-D or 2-D) as a 2-D float64 dask array with row chunks
    of `chunk_rows` (the last one shorter) and one column chunk."""
    da = dask_array()

    arr = a if isinstance(a, da.Array) else da.from_array(np.asarray(a), chunks=chunk_rows)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"`{name}` must be 1-D or 2-D; got {arr.ndim} dimensions.")
    if arr.dtype != np.float64:
        arr = arr.astype(np.float64)
    return arr.rechunk((chunk_rows, arr.shape[1]))


def tree_sum(parts: Sequence[Any], combine: Callable[[Any, Any], Any]) -> Any:
    """The delayed sum of `parts` in a binary tree fixed by their order (pairs ``(0, 1),
    (2, 3), ...`` then their sums): the same additions whatever runs them."""
    dask = _dask()

    level = list(parts)
    while len(level) > 1:
        level = [dask.delayed(combine)(level[i], level[i + 1]) if i + 1 < len(level)
                 else level[i] for i in range(0, len(level), 2)]
    return level[0]


def _blocks(z: Any) -> list[Any]:
    return list(z.to_delayed().ravel())


# -- pass 1: centring ---------------------------------------------------------------------------
def _column_sums(block: np.ndarray) -> tuple[np.ndarray, bool]:
    return np.add.reduce(block, axis=0), bool(np.all(np.isfinite(block)))


def _residual_sums(block: np.ndarray, m: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.add.reduce(block - m, axis=0)
    return out


def centring(z: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(m, corr)`` of :func:`kmtests.kernels._centred` (rows centred as ``(z - m) - corr``),
    from the chunks' sums added in chunk order; non-finite data raise."""
    dask = _dask()

    n = z.shape[0]
    firsts = dask.compute(*[dask.delayed(_column_sums)(b) for b in _blocks(z)])
    if not all(ok for _, ok in firsts):
        raise ValueError(f"`{name}` contains NaN or infinite values; engine='dask-rff' "
                         "reads the data chunk by chunk and cannot leave them out "
                         "(nan_policy='raise').")
    m = _ordered_sum([s for s, _ in firsts]) / n
    corr = _ordered_sum(dask.compute(*[dask.delayed(_residual_sums)(b, m)
                                       for b in _blocks(z)])) / n
    return m, corr


def _ordered_sum(parts: Sequence[np.ndarray]) -> np.ndarray:
    out = np.array(parts[0], dtype=np.float64, copy=True)
    for p in parts[1:]:
        out += p
    return out


# -- pass 2: the feature map and its mean -------------------------------------------------------
@dataclass(frozen=True, eq=False)
class FeatureMap:
    """Random Fourier features of centred rows, and their mean (once known).

    ``phi(z) = sqrt(2/r) cos(((z - centre) - corr) W + b) - mean``.
    """

    W: np.ndarray
    b: np.ndarray
    centre: np.ndarray
    corr: np.ndarray
    mean: np.ndarray | None = None

    @property
    def r(self) -> int:
        return int(self.W.shape[1])

    def raw(self, block: np.ndarray) -> np.ndarray:
        """The uncentred features of the rows of `block`."""
        zc = block - self.centre
        zc -= self.corr
        return rff_rows(zc, self.W, self.b, np.empty((block.shape[0], self.r)))

    def centred(self, block: np.ndarray) -> np.ndarray:
        assert self.mean is not None
        phi = self.raw(block)
        phi -= self.mean
        return phi


@dataclass(frozen=True, eq=False)
class NystromMap:
    """Nyström features ``phi(z) = k(z, L) T - mean`` with landmarks ``L`` (m x d) and
    ``T = U diag(s)^-1/2`` from ``k(L, L) = U diag(s) U'`` (eigenvalues below ``1e-12`` of
    the largest dropped, as :func:`kmtests.engines.lowrank.nystrom_features`)."""

    kernel: Any
    landmarks: np.ndarray
    T: np.ndarray
    mean: np.ndarray | None = None

    @classmethod
    def of(cls, kernel: Any, landmarks: np.ndarray) -> "NystromMap":
        from .lowrank import _RTOL

        K = np.asarray(kernel.gram(landmarks), dtype=np.float64)
        s, U = np.linalg.eigh(0.5 * (K + K.T))
        top = float(s[-1]) if s.size else 0.0
        if not top > 0.0:
            raise ValueError(f"the Nyström landmarks' Gram matrix of {kernel.phrase()} has "
                             "no positive eigenvalue; the approximate kernel would be 0.")
        keep = s > _RTOL * top
        return cls(kernel, landmarks, U[:, keep] / np.sqrt(s[keep]))

    @property
    def r(self) -> int:
        return int(self.T.shape[1])

    def raw(self, block: np.ndarray) -> np.ndarray:
        """``k(block, L) T``, :data:`_KERNEL_ROWS` rows at a time (the kernel's temporary
        arrays stay small: a worker's memory is a chunk's features, not m copies)."""
        out = np.empty((block.shape[0], self.r))
        for a in range(0, block.shape[0], _KERNEL_ROWS):
            b = min(a + _KERNEL_ROWS, block.shape[0])
            np.matmul(np.asarray(self.kernel.gram(block[a:b], self.landmarks)), self.T,
                      out=out[a:b])
        return out

    def centred(self, block: np.ndarray) -> np.ndarray:
        assert self.mean is not None
        phi = self.raw(block)
        phi -= self.mean
        return phi


def _feature_sums(block: np.ndarray, fmap: Any) -> np.ndarray:
    with blas_threads(1):
        out: np.ndarray = np.add.reduce(fmap.raw(block), axis=0)
    return out


def feature_map(z: Any, fmap: Any) -> Any:
    """`fmap` (a :class:`FeatureMap` or :class:`NystromMap` without its mean) with the mean
    of its features over `z`'s rows (one pass of feature sums, added in chunk order)."""
    import dataclasses

    dask = _dask()
    sums = dask.compute(*[dask.delayed(_feature_sums)(blk, fmap) for blk in _blocks(z)])
    return dataclasses.replace(fmap, mean=_ordered_sum(sums) / z.shape[0])


def landmarks(z: Any, m: int, gen: np.random.Generator) -> np.ndarray:
    """`m` rows of `z` drawn by position without replacement (in their order)."""
    n = int(z.shape[0])
    idx = np.sort(gen.choice(n, size=min(int(m), n), replace=False))
    return np.asarray(z[idx].compute(), dtype=np.float64)


# -- pass 3, MMD: the chunkwise permutation null ------------------------------------------------
def split_counts(sizes: Sequence[int], n_x: int, size: int,
                 gen: np.random.Generator) -> np.ndarray:
    """``size`` draws of how many of `n_x` points drawn without replacement fall in each
    chunk of `sizes` rows (``size x chunks``; the multivariate hypergeometric law, by
    marginals: O(chunks) a draw)."""
    return np.asarray(gen.multivariate_hypergeometric(np.asarray(sizes, dtype=np.int64),
                                                      n_x, size=size, method="marginals"),
                      dtype=np.int64).reshape(size, len(sizes))


def chunk_subsets(n_c: int, counts: np.ndarray, seed: np.random.SeedSequence
                  ) -> Iterator[np.ndarray]:
    """The rows of a chunk of `n_c` rows in the first sample of each drawn split: for each
    count ``k`` of `counts`, ``k`` rows drawn uniformly without replacement from the
    chunk's own stream `seed` (in the order of `counts`)."""
    gen = np.random.Generator(np.random.PCG64(seed))
    for k in counts:
        yield gen.choice(n_c, size=int(k), replace=False, shuffle=False)


@dataclass(frozen=True)
class MMDSums:
    """The added chunk sums of the MMD: for each split (row 0 the observed one), the sum of
    the centred features over the first sample ``S`` (``(B + 1) x r``), of their squared
    norms ``t_x`` and of the offsets ``r`` (``rsum_x``); the totals ``T = sum ||phi_c||^2``
    and ``R = sum r_i``, and the maxima of ``||phi_c||^2`` and ``|r_i|``."""

    S: np.ndarray
    t_x: np.ndarray
    rsum_x: np.ndarray
    T: float
    R: float
    kc_max: float
    r_max: float


def _mmd_chunk(block: np.ndarray, fmap: Any, k_obs: int, counts: np.ndarray,
               seed: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One chunk's part of :class:`MMDSums`: ``(sums, totals, maxima)``."""
    assert fmap.mean is not None
    n_c = block.shape[0]
    r = fmap.r
    ext = np.empty((n_c, r + 2))
    with blas_threads(1):
        phi = fmap.centred(block)
        ext[:, :r] = phi
        np.einsum("ij,ij->i", phi, phi, out=ext[:, r])
        np.matmul(phi, fmap.mean, out=ext[:, r + 1])
        ext[:, r + 1] += float(fmap.mean @ fmap.mean)
        draw = chunk_subsets(n_c, counts, seed)
        rows = counts.shape[0] + 1
        out = np.empty((rows, r + 2))
        mask = np.empty((_SPLITS, n_c))
        for start in range(0, rows, _SPLITS):
            stop = min(start + _SPLITS, rows)
            mask.fill(0.0)
            for i in range(start, stop):
                if i == 0:
                    mask[0, :k_obs] = 1.0  # the observed split: the first n_x pooled rows
                else:
                    mask[i - start, next(draw)] = 1.0
            part = mask @ ext
            out[start:stop] = part[: stop - start]
    totals = np.array([ext[:, r].sum(), ext[:, r + 1].sum()])
    maxima = np.array([ext[:, r].max(), np.abs(ext[:, r + 1]).max()])
    return out, totals, maxima


def _combine3(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return a[0] + b[0], a[1] + b[1], np.maximum(a[2], b[2])


def mmd_sums(z: Any, fmap: Any, n_x: int, counts: np.ndarray,
             root: np.random.SeedSequence) -> MMDSums:
    """The MMD sums of the observed split and of the splits whose per-chunk counts are the
    rows of `counts` (``B x chunks``), each chunk drawing its rows from the stream keyed
    ``("chunks", c)`` under `root`."""
    dask = _dask()

    key = role_key("chunks")
    parts = []
    start = 0
    for c, blk in enumerate(_blocks(z)):
        n_c = int(z.chunks[0][c])
        k_obs = int(min(max(n_x - start, 0), n_c))
        parts.append(dask.delayed(_mmd_chunk)(blk, fmap, k_obs, counts[:, c],
                                              keyed(root, key, c)))
        start += n_c
    out, totals, maxima = dask.compute(tree_sum(parts, _combine3))[0]
    r = fmap.r
    return MMDSums(out[:, :r], out[:, r], out[:, r + 1], float(totals[0]), float(totals[1]),
                   float(maxima[0]), float(maxima[1]))


# -- pass 3, HSIC: the cross-covariance sums ----------------------------------------------------
@dataclass(frozen=True)
class HSICSums:
    """``C = Phi_x' Phi_y``, ``Gx = Phi_x' Phi_x``, ``Gy = Phi_y' Phi_y`` of the centred
    features; ``trK``, ``trL`` their squared norms' sums; ``D = sum ||phi_x,i||^2
    ||phi_y,i||^2``; the largest squared norms."""

    C: np.ndarray
    Gx: np.ndarray
    Gy: np.ndarray
    trK: float
    trL: float
    D: float
    kx_max: float
    ky_max: float


def _hsic_chunk(bx: np.ndarray, by: np.ndarray, fx: Any, fy: Any
                ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray, np.ndarray]:
    with blas_threads(1):
        px, py = fx.centred(bx), fy.centred(by)
        sx, sy = np.einsum("ij,ij->i", px, px), np.einsum("ij,ij->i", py, py)
        mats = (px.T @ py, px.T @ px, py.T @ py)
    return mats, np.array([sx.sum(), sy.sum(), float(sx @ sy)]), np.array([sx.max(), sy.max()])


def _combine_hsic(a: Any, b: Any) -> Any:
    return (tuple(u + v for u, v in zip(a[0], b[0])), a[1] + b[1], np.maximum(a[2], b[2]))


def hsic_sums(x: Any, y: Any, fx: Any, fy: Any) -> HSICSums:
    """The HSIC sums of the paired chunks of `x` and `y` (the same row chunks)."""
    dask = _dask()

    parts = [dask.delayed(_hsic_chunk)(bx, by, fx, fy)
             for bx, by in zip(_blocks(x), _blocks(y))]
    (C, Gx, Gy), tot, mx = dask.compute(tree_sum(parts, _combine_hsic))[0]
    return HSICSums(C, 0.5 * (Gx + Gx.T), 0.5 * (Gy + Gy.T), float(tot[0]), float(tot[1]),
                    float(tot[2]), float(mx[0]), float(mx[1]))
