"""Permuted HSIC statistics (permuting the rows of y against x).

Permuting the pairing applies ``L -> L[p][:, p]``; centring commutes with it
(``H P L P' H = P (HLH) P'``), so the centred Gram matrices are computed once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ._pool import map_rows
from .estimators import KernelMeanEstimator


def centre(K: np.ndarray) -> np.ndarray:
    """``HKH`` with ``H = I - 11'/n``."""
    r = K.mean(axis=0)
    return np.ascontiguousarray(K - r[None, :] - r[:, None] + r.mean())


@dataclass(frozen=True)
class PairedGrams:
    """Permutation-invariant quantities of the two Gram matrices (computed once)."""

    K: np.ndarray
    L: np.ndarray
    Kc: np.ndarray
    Lc: np.ndarray

    @classmethod
    def from_grams(cls, K: np.ndarray, L: np.ndarray) -> "PairedGrams":
        return cls(K, L, centre(K), centre(L))

    @property
    def n(self) -> int:
        return self.K.shape[0]

    @cached_property
    def zero_diag(self) -> tuple[np.ndarray, np.ndarray]:
        """``K`` and ``L`` with zeroed diagonals (for HSIC_u), computed once."""
        Kt, Lt = self.K.copy(), self.L.copy()
        np.fill_diagonal(Kt, 0.0)
        np.fill_diagonal(Lt, 0.0)
        return Kt, Lt

    @property
    def scale(self) -> float:
        return float(np.max(np.abs(self.K)) * np.max(np.abs(self.L)))


def hsic_biased_sums(pg: PairedGrams, perms: np.ndarray) -> np.ndarray:
    """``sum_ij Kc_ij Lc_{p_i p_j}`` for each permutation (= n^2 HSIC_b)."""
    from ._jit_hsic import pair_sums  # numba loads on first use (fast import)

    out = np.empty(perms.shape[0])
    pair_sums(pg.Kc, pg.Lc, perms, out)
    return out


def hsic_unbiased(pg: PairedGrams, perms: np.ndarray) -> np.ndarray:
    """Unbiased HSIC_u of Song et al. (2012) for each permutation."""
    n = pg.n
    Kt, Lt = pg.zero_diag
    from ._jit_hsic import pair_sums

    tr = np.empty(perms.shape[0])
    pair_sums(Kt, Lt, perms, tr)
    rK, rL = Kt.sum(axis=1), Lt.sum(axis=1)
    cross = rL[perms] @ rK
    sK, sL = rK.sum(), rL.sum()
    return (tr + sK * sL / ((n - 1) * (n - 2)) - 2.0 * cross / (n - 2)) / (n * (n - 3))


def hsic_statistics(pg: PairedGrams, perms: np.ndarray, est: KernelMeanEstimator,
                    unbiased: bool, n_jobs: int | None = None) -> np.ndarray:
    """The HSIC statistic of every permutation of the pairing in `perms`.

    For a weight estimator the statistic is ``beta' G beta`` with
    ``G = Kc o Lc[p][:, p]`` (covariance-operator shrinkage); the KME gives
    ``HSIC_b = tr(Kc Lc) / n^2``.
    """
    n = pg.n
    if unbiased:
        return hsic_unbiased(pg, perms)
    if est.uniform:
        rho = hsic_biased_sums(pg, perms) / n**2
        varrho = pg.Lc.diagonal()[perms] @ pg.Kc.diagonal() / n
        c = est.uniform_scale(rho, varrho, n)
        return c**2 * rho
    def one(p: np.ndarray) -> float:
        G = pg.Kc * pg.Lc[np.ix_(p, p)]
        beta, _ = est.weights(G)
        return float(beta @ G @ beta)

    return map_rows(one, perms, n_jobs)
