"""Gram matrices held in centred form, built accurately and checked.

Every test statistic of kmtests is computed from a Gram matrix ``K`` held as

    K = Kc + r 1' + 1 r' - g 11',     Kc = H K H,  H = I - 11'/N,

where ``r`` are the row means of ``K`` and ``g`` its grand mean (``Kc`` has
zero row sums). The KME statistics (MMD, HSIC) depend on ``Kc`` alone, so
they are computed from numbers of the size of the *differences* between
kernel values rather than of the values themselves: adding a constant to
the data (linear and distance kernels), or a huge bandwidth (Gaussian
family: ``K = 1 + expm1(...)``), no longer cancels the digits of the
statistic, and permutation ties are judged against the size of what is
actually summed (``max |Kc|``). Estimators that shrink toward the RKHS
origin depend on the offsets ``r`` and ``g`` too; they enter the
statistics explicitly (see the engines).

The centring is a fixed function of the set of points (pooled sample, or one
variable), so it commutes with permutations and keeps the tests exact.

This module also holds the checks every Gram matrix goes through: finite
values (naming the kernel and its bandwidth), symmetry of user kernels, and
positive semi-definiteness (a warning).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._warnings import IndefiniteKernelWarning

__all__ = ["CentredGram", "centre_in_place", "centred_spectrum", "check_finite_gram", "check_psd",
           "psd_factor",
           "check_symmetric"]

#: rows per block of the in-place updates (bounds the temporaries to ROWS x N)
_ROWS = 256
#: the positive semi-definiteness check runs up to this many points (O(N^3))
PSD_CHECK_MAX = 4000


def centre_in_place(K: np.ndarray, offset: float = 0.0) -> "CentredGram":
    """Turn ``K - offset`` (held in `K`) into its centred form, in place.

    `K` must be symmetric; the result is exactly symmetric. ``offset`` is a
    constant already removed from every entry (``K = offset + stored``): the
    Gaussian family stores ``expm1(.) = k - 1`` for accuracy.
    """
    n = K.shape[0]
    r = K.mean(axis=1)  # pairwise summation per row: the same bits whatever else is done
    g = float(r.mean())
    diag = K.diagonal().copy()
    for start in range(0, n, _ROWS):
        rows = K[start:start + _ROWS]
        rows -= r[start:start + _ROWS, None] + r[None, :]  # r_i + r_j: symmetric bits
        rows += g
    return CentredGram(K, r + offset, g + offset, diag + offset)


@dataclass(frozen=True, eq=False)
class CentredGram:
    """A symmetric Gram matrix ``K = Kc + r 1' + 1 r' - g 11'`` (see module docs).

    Attributes
    ----------
    Kc : ndarray, shape (N, N)
        ``H K H``: the Gram matrix centred in feature space (zero row sums).
    r : ndarray, shape (N,)
        Row means of ``K``.
    g : float
        Mean of all entries of ``K``.
    diag : ndarray, shape (N,)
        ``K_ii``.
    """

    Kc: np.ndarray
    r: np.ndarray
    g: float
    diag: np.ndarray
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return self.Kc.shape[0]

    @property
    def kc_extremes(self) -> tuple[float, float]:
        """``(min Kc, max Kc)`` (NaN if any entry is NaN); two passes, no temporaries."""
        if "extremes" not in self._cache:
            self._cache["extremes"] = ((float(self.Kc.min()), float(self.Kc.max()))
                                       if self.n else (0.0, 0.0))
        return self._cache["extremes"]

    @property
    def kc_max(self) -> float:
        """``max |Kc|``: the magnitude the centred statistics are summed from."""
        lo, hi = self.kc_extremes
        return max(abs(lo), abs(hi))

    @property
    def r_max(self) -> float:
        return float(np.max(np.abs(self.r))) if self.n else 0.0

    @property
    def trace_c(self) -> float:
        if "trace_c" not in self._cache:
            self._cache["trace_c"] = float(np.trace(self.Kc))
        return self._cache["trace_c"]

    def block(self, ia: np.ndarray, ib: np.ndarray | None = None) -> np.ndarray:
        """The block ``K[ia][:, ib]`` of the uncentred Gram matrix."""
        ib = ia if ib is None else ib
        return self.Kc[np.ix_(ia, ib)] + (self.r[ia, None] + self.r[None, ib]) - self.g

    def scaled(self, c: float) -> "CentredGram":
        """The Gram matrix of ``c k`` (the N x N array is scaled in place and shared)."""
        np.multiply(self.Kc, c, out=self.Kc)
        self._cache.clear()
        return CentredGram(self.Kc, self.r * c, self.g * c, self.diag * c)

    def full(self) -> np.ndarray:
        """The uncentred Gram matrix ``K`` (a new N x N array)."""
        idx = np.arange(self.n)
        return self.block(idx)

    @classmethod
    def from_gram(cls, K: np.ndarray) -> "CentredGram":
        """Centred form of a (copied) symmetric Gram matrix."""
        return centre_in_place(np.array(K, dtype=np.float64, copy=True))


def check_finite_gram(cg: CentredGram, kernel: Any, data: np.ndarray | None,
                      name: str) -> None:
    """Raise if the Gram matrix (or its centred form) has NaN or infinite values."""
    # min and max are NaN if any entry is NaN, infinite if any is: no N x N temporary
    ok = (np.isfinite(cg.g) and bool(np.all(np.isfinite(cg.r)))
          and bool(np.all(np.isfinite(cg.diag))) and bool(np.all(np.isfinite(cg.kc_extremes))))
    if ok:
        return
    mag = ""
    if data is not None and data.size:
        mag = f" (the data reach |value| = {float(np.max(np.abs(data))):.3g})"
    raise ValueError(
        f"{kernel.phrase()} gives NaN or infinite Gram values on {name}{mag}: the values "
        "overflow the floating-point range. Rescale the data, or choose a kernel whose "
        "values stay bounded (e.g. 'gaussian').")


def check_symmetric(K: np.ndarray, what: str) -> np.ndarray:
    """Raise unless `K` is symmetric to rounding; return it exactly symmetrised."""
    scale = float(np.max(np.abs(K))) if K.size else 0.0
    asym = float(np.max(np.abs(K - K.T))) if K.size else 0.0
    if asym > 1e-10 * scale + 1e-300:
        raise ValueError(
            f"{what} is not symmetric: max |K - K'| = {asym:.3g} (max |K| = {scale:.3g}). "
            "A kernel must satisfy k(x, y) = k(y, x); the tests' formulas are undefined "
            "otherwise.")
    return 0.5 * (K + K.T)


def check_psd(K: np.ndarray, what: str) -> None:
    """Warn (:class:`IndefiniteKernelWarning`) if `K` is not positive semi-definite.

    A Cholesky factorisation of ``K + delta I`` (``delta`` a rounding-level
    jitter) decides; the extreme eigenvalues are computed only for the
    message. Skipped above :data:`PSD_CHECK_MAX` points (cost O(N^3)).
    """
    n = K.shape[0]
    if n == 0 or n > PSD_CHECK_MAX:
        return
    from scipy import linalg

    top = float(np.max(np.abs(np.diag(K)))) if n else 0.0
    top = max(top, float(np.max(np.abs(K))))
    if top == 0.0:
        return
    delta = 1e-10 * top
    try:
        linalg.cholesky(K + delta * np.eye(n), lower=True, check_finite=False)
        return
    except linalg.LinAlgError:
        pass
    ev = linalg.eigvalsh(K, check_finite=False)
    warnings.warn(
        f"{what} is not positive semi-definite: smallest eigenvalue {ev[0]:.3g}, largest "
        f"{ev[-1]:.3g}. The statistics are still computed and the permutation test keeps "
        "its level for them, but MMD/HSIC are then not metrics (MMD^2 can be negative for "
        "different distributions). Spectral estimators clip negative eigenvalues at 0; "
        "uniform shrinkage clips its shrinkage to [0, 1].",
        IndefiniteKernelWarning, stacklevel=4)


def centred_spectrum(Kc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenpairs of a centred Gram matrix with eigenvalue above rounding, descending.

    The eigenvectors are projected off the constant vector, which is exactly in
    the null space of a centred matrix but only up to ``eps ||Kc|| / gap`` in
    the computed eigenvectors: without the projection ``U U'`` differs from the
    centring projection by up to 1e-12 on small samples, and a filter that
    keeps every direction (a spectral cut-off below the spectrum) turns that
    into statistics that depend on the order of the rows.
    """
    kappa, U = np.linalg.eigh(Kc)
    kappa, U = kappa[::-1], U[:, ::-1]
    top = float(kappa[0]) if kappa.size else 0.0
    keep = kappa > max(top, 0.0) * Kc.shape[0] * np.finfo(np.float64).eps * 10
    U = U[:, keep]
    U -= U.mean(axis=0)
    return np.ascontiguousarray(kappa[keep]), np.ascontiguousarray(U)


def psd_factor(K: np.ndarray, max_rank: int) -> np.ndarray | None:
    """``F`` (n x r) with ``F F' = K`` to rounding, from a pivoted Cholesky factorisation
    stopped at LAPACK's rounding tolerance (``n eps max diag K``); None when the rank
    exceeds `max_rank` or the factor does not reproduce `K` (not positive semidefinite).

    Smooth kernels on few coordinates have low numerical rank (a Gaussian Gram matrix
    of 1000 standardised points in one dimension: 21), which turns ``n^3`` products with
    ``K`` into ``n^2 r`` ones.
    """
    from scipy.linalg import lapack

    n = K.shape[0]
    c, piv, rank, info = lapack.dpstrf(K, lower=1, tol=-1.0)
    if info < 0 or rank > max_rank:
        return None
    F = np.zeros((n, rank))
    F[piv - 1] = np.tril(c[:, :rank])
    # K - F F' is positive semidefinite when K is, with trace bounding its norm; a probe
    # catches an indefinite K, for which the trace says nothing
    scale = float(np.max(np.abs(np.diagonal(K)))) if n else 0.0
    gap = float(np.trace(K)) - float(np.einsum("ij,ij->", F, F))
    v = np.random.default_rng(n).standard_normal(n)
    probe = float(np.max(np.abs(K @ v - F @ (F.T @ v)))) if n else 0.0
    tol = 1e-9 * max(scale, np.finfo(np.float64).tiny)
    if abs(gap) > tol or probe > tol * np.sqrt(n):
        return None
    return F
