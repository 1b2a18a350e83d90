"""Permuted MMD statistics as block sums of the pooled, centred Gram matrix.

The pooled Gram matrix is held centred in feature space (:mod:`kmtests._gram`):
``K = Kc + r1' + 1r' - g11'`` with ``Kc`` of zero row sums. For a split of the
pooled sample into x (membership vector ``a``) and y, the centred block sums
then follow from one number, ``s = a'Kc a``: the x-y block sums to ``-s`` and
the y-y block to ``s``. ``a'Kc a`` for many splits at once is the matrix
product ``(A Kc) * A`` summed by rows. As ``Kc`` is symmetric, only its upper
block triangle is used: with ``Kc`` cut into ``_BLOCK``-wide blocks,
``a'Kc a = sum_i a_i'Kc_ii a_i + 2 sum_{i<j} a_i'Kc_ij a_j``, one BLAS product
``A[:, I_i] @ Kc[I_i, s_i:]`` per block row — about ``(1/2 + _BLOCK/2N)`` of
the ``2 B N^2`` flops of the full product. The products are done in
fixed-shape chunks of ``_CHUNK`` splits (the last chunk zero-padded), with
block boundaries that depend on ``N`` only, and each split's partial sums are
added in a fixed order, so every split's value is computed by the same call
shapes and the same operations — bit-identical whatever ``batch`` is. The data's
own split (the observed statistic) is one matrix-vector product instead
(:meth:`PooledGram.own_sum`: a chunk would be 127 zero rows); its last bits may
differ from the same split inside a chunk, within the tie tolerance.

Statistics (``c_x``, ``c_y`` the uniform factors, 1 for the KME; ``rbar`` the
mean of ``r`` over a sample)::

    MMD^2_b = c_x^2 s/n_x^2 + c_y^2 s/n_y^2 + 2 c_x c_y s/(n_x n_y) + offset
    MMD^2_u = c_x^2 (s - t_x)/(n_x(n_x-1)) + c_y^2 (s - t_y)/(n_y(n_y-1))
              + 2 c_x c_y s/(n_x n_y) + offset
    offset  = 2 (c_x - c_y)(c_x rbar_x - c_y rbar_y) - g (c_x - c_y)^2

with ``t`` the sums of ``diag(Kc)`` over a sample. The offset vanishes for the
KME: its statistics are computed from centred numbers only, exactly as the
definitions (checked against literal loops in the tests) but without the
cancellation of raw kernel values. Every statistic comes with a rounding
*scale* — a bound on the magnitude of what was summed — from which the
p-value's tie tolerance is set.

Uniform-weight rules only need these sums; general rules are evaluated split
by split (:func:`mmd_general`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._gram import CentredGram
from ..estimators._rules import General, Rule, Uniform
from ._loop import blas_threads, default_blas_threads, map_rows_multi
from ._threads import idle_cpus, thread_count
from ._values import Values

#: splits per BLAS call (fixed: the call shape must not depend on `batch`)
_CHUNK = 128
#: below this many pooled points the BLAS products use one thread (see within_sums);
#: above, the idle CPUs (idle, two threads: 6% faster at N = 400, 10% at 600, 14% at 1000
#: for one MMD; MMDAgg's ten kernels at N = 400, B = 2000: 0.154 s against 0.177 s)
_SMALL_N = 256
#: block width of the block-triangular product (fixed; boundaries depend on N only)
_BLOCK = 256
# (128, 256) was the fastest of (64|128) x (256|512) on a 2-core AMD EPYC for
# N = 400 ... 4000, and makes half as many BLAS calls as (64, 256): multithreaded
# OpenBLAS loses much time per call when other processes occupy the cores.


@dataclass(frozen=True, eq=False)
class PooledGram(CentredGram):
    """The pooled Gram matrix in centred form and its permutation-invariant summaries (what
    the uniform-rule statistics need, shared with the streamed engine: ``n``, ``r``, ``g``,
    ``kc_max``, ``r_max`` of :class:`~kmtests._gram.CentredGram`, and the sums below)."""

    @classmethod
    def of(cls, cg: CentredGram) -> "PooledGram":
        """The centred Gram matrix `cg` (not copied) as a source of the statistics."""
        return cls(cg.Kc, cg.r, cg.g, cg.diag, cg._cache)

    @classmethod
    def from_gram(cls, K: np.ndarray) -> "PooledGram":
        """From an (uncentred, symmetric) Gram matrix; `K` is copied."""
        return cls.of(CentredGram.from_gram(K))

    @property
    def cg(self) -> CentredGram:
        """Itself, as the centred Gram matrix."""
        return self

    @property
    def diag_c(self) -> np.ndarray:
        """The diagonal of ``Kc``."""
        return np.diagonal(self.Kc)

    def within_sums(self, perms: np.ndarray, n_x: int, n_jobs: int | None = None
                    ) -> np.ndarray:
        """``a'Kc a`` for every split (see :func:`within_sums`)."""
        return within_sums(self.Kc, perms, n_x, n_jobs)

    def own_sum(self, perms: np.ndarray, n_x: int, n_jobs: int | None = None) -> np.ndarray:
        """``a'Kc a`` of one split (the data's own): one matrix-vector product, not a
        chunk of :func:`within_sums`' fixed shape (128 rows, 127 of them zero). Its last
        bits may differ from the same split's value inside a chunk, which the p-value's
        tie tolerance absorbs (the scale of every value bounds its rounding)."""
        with _products_threads(n_jobs, self.n):
            a = np.zeros(self.n)
            a[perms[0, :n_x]] = 1.0
            return np.array([float(a @ (self.Kc @ a))])

    def swap_sums(self, signs: np.ndarray, pairing: np.ndarray, n_jobs: int | None = None
                  ) -> np.ndarray:
        """``a'Kc a`` of the pair swaps of two samples of equal size ``m`` (rows of
        `signs`; :class:`~kmtests.problems.schemes.Swaps`).

        With ``r`` the signs and the pairs ``(x_i, y_pairing[i])``, the split's
        membership is ``a = ((1 + r) / 2, (1 - r) / 2)`` and, as ``Kc`` has zero row
        sums, ``a'Kc a = r'H r / 4`` with the ``m x m`` matrix ``H = Kxx + Kyy - Kxy -
        Kyx`` of the paired blocks: a quarter of the flops of :func:`within_sums` on the
        ``2m x 2m`` matrix, through the same fixed-shape products (the same bits
        whatever the batch).
        """
        key = pairing.tobytes()
        held = self._cache.get("swap_matrix")
        if held is None or held[0] != key:
            m = pairing.shape[0]
            ys = np.take(self.Kc, m + pairing, axis=0)  # the rows of y, in pair order
            H = np.take(ys[:, m:], pairing, axis=1)     # Kyy[p][:, p]
            H += self.Kc[:m, :m]
            H -= ys[:, :m]                              # Kyx[p, :]
            H -= ys[:, :m].T                            # Kxy[:, p]
            held = self._cache["swap_matrix"] = (key, H)
        return 0.25 * quadratic_forms(held[1], signs, n_jobs)


@dataclass(frozen=True)
class SplitSums:
    """Centred block sums of a batch of splits."""

    s: np.ndarray       # a'Kc a: the x-x block (the y-y block is s, the x-y block -s)
    t_x: np.ndarray     # sum of diag(Kc) over x
    t_y: np.ndarray
    rbar_x: np.ndarray  # mean of r over x
    rbar_y: np.ndarray


def _membership_into(A: np.ndarray, perms: np.ndarray, n_x: int) -> None:
    """Write the 0/1 membership rows of `perms` into the first rows of `A`; zero the rest."""
    A.fill(0.0)
    rows = perms.shape[0]
    flat = (np.arange(rows, dtype=np.int64)[:, None] * A.shape[1] + perms[:, :n_x]).ravel()
    A.ravel()[flat] = 1.0


def within_sums(K: np.ndarray, perms: np.ndarray, n_x: int,
                n_jobs: int | None = None) -> np.ndarray:
    """``a'Ka`` (sum of `K` over the first `n_x` points of each split) for every row.

    Uses the upper block triangle of the symmetric `K` (see the module
    docstring); every split goes through the same fixed-shape BLAS calls.
    `n_jobs` limits the BLAS threads. By default, below ``_SMALL_N`` pooled
    points the products run on one BLAS thread: multithreaded OpenBLAS gains
    little there and, when another process occupies a core, is ten times
    slower (N = 400, B = 1000: 0.23 s with 2 threads against 0.023 s with one,
    on the 2-core benchmark machine); above, the idle CPUs
    (:func:`kmtests.engines._threads.idle_cpus`), never more than an enclosing
    threadpoolctl limit.
    """
    with _products_threads(n_jobs, K.shape[0]):
        return _within_sums(K, perms, n_x)


def quadratic_forms(K: np.ndarray, A: np.ndarray, n_jobs: int | None = None) -> np.ndarray:
    """``a_b' K a_b`` for every row ``a_b`` of `A` (real-valued rows), with the
    block-triangular, fixed-shape products of :func:`within_sums`: a row's value does not
    depend on the other rows, nor on how the rows are batched."""
    def fill(buf: np.ndarray, start: int, stop: int) -> None:
        buf.fill(0.0)
        buf[: stop - start] = A[start:stop]

    with _products_threads(n_jobs, K.shape[0]):
        return _quad_forms(K, A.shape[0], fill)


def _products_threads(n_jobs: int | None, n: int) -> Any:
    """The BLAS threads of the products on an ``n x n`` matrix: `n_jobs` when given, else
    one below ``_SMALL_N`` and the idle CPUs above, within the limit in effect."""
    if n_jobs is not None:
        return blas_threads(thread_count(n_jobs))
    return blas_threads(1) if n < _SMALL_N else default_blas_threads(idle_cpus())


def _within_sums(K: np.ndarray, perms: np.ndarray, n_x: int) -> np.ndarray:
    def fill(buf: np.ndarray, start: int, stop: int) -> None:
        _membership_into(buf, perms[start:stop], n_x)

    return _quad_forms(K, perms.shape[0], fill)


def _quad_forms(K: np.ndarray, n_rows: int, fill: Any) -> np.ndarray:
    """``a'Ka`` for `n_rows` rows, written chunk by chunk into a ``_CHUNK x N`` buffer by
    ``fill(buffer, start, stop)`` (unused rows zero)."""
    n_total = K.shape[0]
    starts = range(0, n_total, _BLOCK)
    work = np.empty(_CHUNK * n_total)  # one buffer; block i uses its first rows x (N - s_i)
    bufs = [work[: _CHUNK * (n_total - s)].reshape(_CHUNK, n_total - s) for s in starts]
    A = np.empty((_CHUNK, n_total))
    acc = np.empty(_CHUNK)
    out = np.empty(n_rows)
    for start in range(0, n_rows, _CHUNK):
        stop = min(start + _CHUNK, n_rows)
        fill(A, start, stop)
        acc.fill(0.0)
        for s, buf in zip(starts, bufs):
            e = min(s + _BLOCK, n_total)
            np.matmul(A[:, s:e], K[s:e, s:], out=buf)
            acc += np.einsum("ij,ij->i", buf[:, : e - s], A[:, s:e])
            if e < n_total:
                acc += 2.0 * np.einsum("ij,ij->i", buf[:, e - s:], A[:, e:])
        out[start:stop] = acc[: stop - start]
    return out


def swap_split_sums(pg: Any, rows: Any, n_jobs: int | None = None) -> SplitSums:
    """The centred block sums of a batch of pair swaps (`rows`: a
    :class:`~kmtests.problems.schemes.SwapRows`), from the pairs where the source has
    ``swap_sums``, else from the arrangements."""
    m = rows.pairing.shape[0]
    if hasattr(pg, "swap_sums"):
        s = pg.swap_sums(rows.signs, rows.pairing, n_jobs)
    else:
        s = pg.within_sums(rows.perms, m, n_jobs)
    t_x, t_y = rows.halves(pg.diag_c)
    r_x, r_y = rows.halves(pg.r)
    return SplitSums(s, t_x, t_y, r_x / m, r_y / m)


def split_sums(pg: Any, perms: np.ndarray, n_x: int,
               n_jobs: int | None = None, own: bool = False) -> SplitSums:
    """The centred block sums of every split in `perms` (rows: x = first `n_x`); `own`:
    the one row is the data's own split, summed by the source's ``own_sum`` where it has
    one (the observed statistic; the arrangements always go through ``within_sums``)."""
    if own and hasattr(pg, "own_sum"):
        s = pg.own_sum(perms, n_x, n_jobs)
    else:
        s = pg.within_sums(perms, n_x, n_jobs)
    x_idx = perms[:, :n_x]
    n_y = pg.n - n_x
    # row-wise pairwise sums of C-contiguous gathers: the same bits for any batch size
    dc = pg.diag_c
    t_x = dc[x_idx].sum(axis=1)
    y_idx = perms[:, n_x:]
    return SplitSums(s, t_x, dc[y_idx].sum(axis=1), pg.r[x_idx].sum(axis=1) / n_x,
                     pg.r[y_idx].sum(axis=1) / n_y)


def mmd_uniform(pg: Any, sums: SplitSums, n_x: int, rule: Uniform,
                unbiased: bool) -> Values:
    """MMD^2 of every split for a :class:`~kmtests.estimators._rules.Uniform` rule."""
    n_y = pg.n - n_x
    s = sums.s
    g = pg.g
    rho_cx, rho_cy = s / n_x**2, s / n_y**2
    if rule.fixed is not None:
        c_x = c_y = np.full(s.shape, float(rule.fixed))
    else:
        # the raw rho = ||mu_hat||^2 and v = tr(K)/n - rho, from centred sums and offsets
        c_x = rule(rho_cx + 2.0 * sums.rbar_x - g, sums.t_x / n_x - rho_cx, n_x)
        c_y = rule(rho_cy + 2.0 * sums.rbar_y - g, sums.t_y / n_y - rho_cy, n_y)
    if unbiased:
        w_x = (s - sums.t_x) / (n_x * (n_x - 1))
        w_y = (s - sums.t_y) / (n_y * (n_y - 1))
    else:
        w_x, w_y = rho_cx, rho_cy
    dc = c_x - c_y
    stat = (c_x**2 * w_x + c_y**2 * w_y + 2.0 * c_x * c_y * s / (n_x * n_y)
            + dc * (2.0 * (c_x * sums.rbar_x - c_y * sums.rbar_y) - g * dc))
    csum = np.abs(c_x) + np.abs(c_y)
    scale = csum**2 * pg.kc_max + np.abs(dc) * (2.0 * csum * pg.r_max + np.abs(dc) * abs(g))
    return Values(stat, scale)


def mmd_general(pg: PooledGram, perms: np.ndarray, n_x: int, rule: General,
                n_jobs: int | None = None, unbiased: bool = False
                ) -> tuple[Values, list[dict[str, Any]]]:
    """MMD^2 with per-sample weights, split by split (V- or U-form).

    The weights are recomputed on every split (data-driven parameters are
    re-tuned on each permuted data set) from the uncentred sub-Gram
    matrices; indices are sorted within each sample so the value does not
    depend on the order inside a split.

    V-form: ``bx'Kxx bx + by'Kyy by - 2 bx'Kxy by``, the squared distance of the
    estimated embeddings. U-form: the within-sample sums without their
    diagonal terms, each scaled by ``n/(n-1)``,

        a_x (bx'Kxx bx - sum_i bx_i^2 K_ii) + a_y (...) - 2 bx'Kxy by,   a = n/(n-1),

    which for uniform weights ``c/n`` is ``c_x^2 U_xx + c_y^2 U_yy -
    2 c_x c_y Kbar_xy`` (the KME's ``MMD^2_u`` at ``c = 1``). Both are
    evaluated as their centred part plus the offset terms of
    ``K = Kc + r1' + 1r' - g11'`` (``S`` the sums of the weights; the offsets
    vanish for the KME).
    """
    cg = pg.cg
    Kc, r, g = cg.Kc, cg.r, cg.g
    n_y = cg.n - n_x
    a_x, a_y = n_x / (n_x - 1), n_y / (n_y - 1)

    def one(p: np.ndarray) -> tuple[float, float, dict[str, Any]]:
        ix, iy = np.sort(p[:n_x]), np.sort(p[n_x:])
        Cxx, Cyy, Cxy = Kc[np.ix_(ix, ix)], Kc[np.ix_(iy, iy)], Kc[np.ix_(ix, iy)]
        rx, ry = r[ix], r[iy]
        bx, px = rule.weights(Cxx + (rx[:, None] + rx[None, :]) - g)
        by, py = rule.weights(Cyy + (ry[:, None] + ry[None, :]) - g)
        quad = (float(bx @ Cxx @ bx), float(by @ Cyy @ by), float(bx @ Cxy @ by))
        diag = (np.diagonal(Cxx), np.diagonal(Cyy))
        return (*general_pieces(bx, by, quad, diag, (rx, ry), g, cg.kc_max, (a_x, a_y),
                                unbiased), {"x": px, "y": py})

    rows = map_rows_multi(one, perms, n_jobs)
    return (Values(np.array([u[0] for u in rows]), np.array([u[1] for u in rows])),
            [u[2] for u in rows])


def general_pieces(bx: np.ndarray, by: np.ndarray, quad: tuple[float, float, float],
                   diag: tuple[np.ndarray, np.ndarray], offsets: tuple[np.ndarray, np.ndarray],
                   g: float, kc_max: float, a: tuple[float, float], unbiased: bool
                   ) -> tuple[float, float]:
    """MMD^2 and its rounding scale from per-point weights (see :func:`mmd_general`).

    `quad` = ``(bx'Kc_xx bx, by'Kc_yy by, bx'Kc_xy by)`` on the centred kernel,
    `diag` its within-sample diagonals, `offsets` the row offsets ``r`` of the
    points of each sample, ``g`` the grand mean, `a` = ``(n_x/(n_x-1), n_y/(n_y-1))``.
    """
    rx, ry = offsets
    qx, qy, qxy = quad
    sx, sy = float(bx.sum()), float(by.sum())
    ax, ay = float(bx @ rx), float(by @ ry)
    if unbiased:
        dx = float((bx * bx) @ diag[0])
        dy = float((by * by) @ diag[1])
        ox = 2.0 * ax * sx - g * sx * sx - float((bx * bx) @ (2.0 * rx - g))
        oy = 2.0 * ay * sy - g * sy * sy - float((by * by) @ (2.0 * ry - g))
        oxy = ax * sy + sx * ay - g * sx * sy
        pieces: tuple[float, ...] = (a[0] * (qx - dx), a[1] * (qy - dy), -2.0 * qxy,
                                     a[0] * ox, a[1] * oy, -2.0 * oxy)
    else:
        ds = sx - sy
        pieces = (qx, qy, -2.0 * qxy, ds * 2.0 * (ax - ay), -g * ds * ds)
    l1 = float(np.abs(bx).sum() + np.abs(by).sum())
    scale = l1 * l1 * kc_max + sum(abs(u) for u in pieces[3:])
    return float(sum(pieces)), scale


def mmd_values(pg: PooledGram, perms: np.ndarray, n_x: int, rule: Rule, unbiased: bool,
               n_jobs: int | None = None) -> Values:
    """MMD^2 and rounding scales of every split in `perms` (x = first `n_x` entries)."""
    if isinstance(rule, Uniform):
        return mmd_uniform(pg, split_sums(pg, perms, n_x, n_jobs), n_x, rule, unbiased)
    return mmd_general(pg, perms, n_x, rule, n_jobs, unbiased)[0]


def mmd_statistics(pg: PooledGram, perms: np.ndarray, n_x: int, est: Any,
                   unbiased: bool) -> np.ndarray:
    """MMD^2 of every split in `perms` for the estimator `est` (values only)."""
    return mmd_values(pg, perms, n_x, est.rule(), unbiased).stat
