r"""Linear-time MMD statistics: the linear statistic and the block (B-test) statistic.

Both compare two samples of the same size ``n`` in their given order, with
memory ``O(n d + b^2)`` and time ``O(n b d)``; both are means of independent,
identically distributed terms, so their null distribution is asymptotically
normal with a variance estimated from the terms themselves.

Linear statistic (Gretton et al., 2012, Sec. 6, ``MMD^2_l``)
    With ``m = floor(n / 2)`` disjoint consecutive pairs
    ``(x_{2i-1}, y_{2i-1}), (x_{2i}, y_{2i})``,
    ``h_i = k(x_{2i-1}, x_{2i}) + k(y_{2i-1}, y_{2i}) - k(x_{2i-1}, y_{2i})
    - k(x_{2i}, y_{2i-1})`` and ``MMD^2_l = mean(h)``; its standard error is
    ``sd(h) / sqrt(m)``. Time ``O(n d)``.
Block statistic (Zaremba, Gretton & Blaschko, 2013, the B-test)
    The samples are cut into ``K = floor(n / b)`` consecutive blocks of ``b``
    points; ``eta_k`` is the unbiased ``MMD^2_u`` (Gretton et al., 2012,
    eq. 3, the same statistic as ``kmtests.mmd(statistic="unbiased")``) of
    block ``k`` of `x` against block ``k`` of `y`, and
    ``MMD^2_block = mean(eta)``, with standard error ``sd(eta) / sqrt(K)``.
    Default ``b = floor(sqrt(n))`` as in the paper. Time ``O(n b d)``.

The points past the last pair (``n`` odd) or the last whole block are not
used. The kernel values come from :class:`kmtests.engines.streamed.TileSource`
(the Gaussian family as ``k - 1``, ``expm1``, which keeps the digits of the
kernel differences; the offset cancels in both statistics).

Examples
--------
>>> import numpy as np
>>> from kmtests.engines.linear_time import block_statistics, linear_statistics
>>> from kmtests.engines.streamed import TileSource
>>> from kmtests.kernels import Gaussian
>>> gen = np.random.default_rng(0)
>>> x, y = gen.normal(size=(400, 2)), gen.normal(size=(400, 2)) + 0.5
>>> src = TileSource(Gaussian(bandwidth=1.0), np.vstack([x, y]))
>>> h = linear_statistics(src, 400)
>>> eta = block_statistics(src, 400, 20)
>>> h.shape, eta.shape
((200,), (20,))
>>> print(f"{h.mean():.4f} {eta.mean():.4f}")
0.1345 0.0660
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["default_block_size", "block_statistics", "linear_statistics", "normal_pvalue",
           "paired_values"]

#: pairs per chunk of the linear statistic (bounds its temporaries to a few MB)
_PAIRS = 1 << 16
#: kernel values per batch of blocks (a few 8 MB buffers)
_BATCH_ENTRIES = 1 << 20
#: pairs per small Gram matrix for kernels without a radial form (its diagonal is used)
_GENERIC_PAIRS = 64


def default_block_size(n: int) -> int:
    """``floor(sqrt(n))`` (Zaremba et al., 2013), at least 2.

    Examples
    --------
    >>> default_block_size(2000), default_block_size(10**6)
    (44, 1000)
    """
    return max(2, int(np.floor(np.sqrt(n))))


def paired_values(src: Any, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``k(z_i, z_j) - offset`` for each pair ``(i[p], j[p])`` of rows of the pooled data.

    `src` is a :class:`kmtests.engines.streamed.TileSource`. Radial kernels
    are evaluated row by row (``O(len(i) d)``); other kernels as the diagonal
    of small Gram matrices of ``_GENERIC_PAIRS`` pairs.
    """
    z = src.z
    if src._radial:
        diff = z[i] - z[j]
        D = np.einsum("ij,ij->i", diff, diff)
        D *= src.top2
        t = src.kernel._exponent(D)
        return np.expm1(t, out=t)
    out = np.empty(len(i))
    for s in range(0, len(i), _GENERIC_PAIRS):
        a, b = z[i[s:s + _GENERIC_PAIRS]], z[j[s:s + _GENERIC_PAIRS]]
        out[s:s + _GENERIC_PAIRS] = np.diagonal(np.asarray(src.kernel.gram(a, b),
                                                           dtype=np.float64))
    return out


def linear_statistics(src: Any, n: int) -> np.ndarray:
    """The ``floor(n / 2)`` terms ``h_i`` of the linear statistic.

    The pooled data of `src` are ``x`` (rows ``0 .. n-1``) then ``y`` (rows
    ``n .. 2n-1``); the pairs are ``(2i, 2i + 1)``.
    """
    m = n // 2
    h = np.empty(m)
    for s in range(0, m, _PAIRS):
        p = np.arange(s, min(s + _PAIRS, m))
        a, b = 2 * p, 2 * p + 1           # x_a, x_b; y_a = n + a, y_b = n + b
        hp = paired_values(src, a, b)
        hp += paired_values(src, n + a, n + b)
        hp -= paired_values(src, a, n + b)
        hp -= paired_values(src, b, n + a)
        h[s:s + len(p)] = hp
    return h


def _offdiag_sums_radial(src: Any, A: np.ndarray, B: np.ndarray | None) -> np.ndarray:
    """Per block ``g``: the sum of ``k(A_g, B_g) - offset`` (``B = A``: off the diagonal).

    `A`, `B` have shape ``(G, b, d)`` (prescaled points).
    """
    sym = B is None
    Bm = A if B is None else B
    aa = np.einsum("gij,gij->gi", A, A)
    bb = aa if sym else np.einsum("gij,gij->gi", Bm, Bm)
    D = np.matmul(A, Bm.transpose(0, 2, 1))
    D *= -2.0
    D += aa[:, :, None]
    D += bb[:, None, :]
    np.maximum(D, 0.0, out=D)
    from ..kernels import CANCEL_RTOL

    g, i, j = np.nonzero(D <= CANCEL_RTOL * (aa[:, :, None] + bb[:, None, :]))
    if g.size:  # close points: from the differences (identical points at distance 0)
        diff = A[g, i] - Bm[g, j]
        D[g, i, j] = np.einsum("ij,ij->i", diff, diff)
    if sym:
        idx = np.arange(A.shape[1])
        D[:, idx, idx] = 0.0
    D *= src.top2
    t = src.kernel._exponent(D)
    np.expm1(t, out=t)
    return t.sum(axis=(1, 2))  # the diagonal is expm1(0) = 0


def block_statistics(src: Any, n: int, b: int) -> np.ndarray:
    """The ``floor(n / b)`` block statistics ``eta_k`` (``MMD^2_u`` of each block pair).

    The pooled data of `src` are ``x`` (rows ``0 .. n-1``) then ``y``.
    """
    K = n // b
    eta = np.empty(K)
    within = 1.0 / (b * (b - 1))
    cross = 2.0 / (b * b)
    z = src.z
    if src._radial:
        per = max(1, _BATCH_ENTRIES // (b * b))
        d = z.shape[1]
        for g0 in range(0, K, per):
            g1 = min(g0 + per, K)
            X = z[g0 * b:g1 * b].reshape(g1 - g0, b, d)
            Y = z[n + g0 * b:n + g1 * b].reshape(g1 - g0, b, d)
            eta[g0:g1] = (within * (_offdiag_sums_radial(src, X, None)
                                    + _offdiag_sums_radial(src, Y, None))
                          - cross * _offdiag_sums_radial(src, X, Y))
        return eta
    for k in range(K):
        x0, x1, y0, y1 = k * b, (k + 1) * b, n + k * b, n + (k + 1) * b
        Kxx, Kyy = src.tile(x0, x1, x0, x1), src.tile(y0, y1, y0, y1)
        sxx = Kxx.sum() - np.trace(Kxx)
        syy = Kyy.sum() - np.trace(Kyy)
        eta[k] = within * (sxx + syy) - cross * src.tile(x0, x1, y0, y1).sum()
    return eta


def normal_pvalue(terms: np.ndarray) -> tuple[float, float, float]:
    """``(statistic, standard error, p-value)`` of a mean of i.i.d. terms.

    The statistic is ``mean(terms)``, its standard error
    ``sd(terms, ddof=1) / sqrt(len(terms))`` and the one-sided p-value
    ``1 - Phi(statistic / se)`` (``scipy.stats.norm.sf``). A zero standard
    error (every term equal) gives the p-value 1 for a statistic ``<= 0``,
    else 0.

    Examples
    --------
    >>> stat, se, p = normal_pvalue(np.array([0.1, 0.3, 0.2, 0.4]))
    >>> print(f"{stat:.3f} {se:.4f} {p:.4f}")
    0.250 0.0645 0.0001
    """
    from scipy.stats import norm

    k = terms.size
    stat = float(np.mean(terms))
    se = float(np.std(terms, ddof=1) / np.sqrt(k))
    if not np.isfinite(se):
        return stat, se, float("nan")
    if se == 0:
        return stat, se, 1.0 if stat <= 0 else 0.0
    return stat, se, float(norm.sf(stat / se))
