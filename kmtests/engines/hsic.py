"""Permuted HSIC statistics (permuting the rows of y against x).

Permuting the pairing applies ``L -> L[p][:, p]``; centring commutes with it
(``H P L P' H = P (HLH) P'``), so the centred Gram matrices ``Kc = HKH`` and
``Lc = HLH`` are computed once (:mod:`kmtests._gram`, accurately, from the
centred data). Every statistic follows from two sums per permutation ``p``:

    S_p = sum_ij Kc_ij Lc_{p_i p_j}      (the jitted pair_sums loop)
    D_p = sum_i  Kc_ii Lc_{p_i p_i}

``HSIC_b = S_p / n^2``; the unbiased ``HSIC_u`` of Song et al. (2012), which
is invariant to centring (checked in the tests), is evaluated on ``Kc`` and
``Lc`` with zero diagonals, whose row sums are ``-diag``, giving

    HSIC_u = (S_p - n D_p/(n-2) + tr(Kc) tr(Lc)/((n-1)(n-2))) / (n(n-3)).

Uniform-weight estimators scale ``HSIC_b`` (or ``HSIC_u``) by ``c^2`` with ``c``
from ``rho = S_p/n^2`` and ``v = D_p/n - rho`` (the embedding of the centred
cross-covariance, COSE); general ones compute weights ``beta`` of
``G = Kc o Lc_p`` per permutation, with the V-form ``beta'G beta`` or the
U-form

    n/(n-3) (beta'G beta - n/(n-2) sum_i beta_i^2 G_ii)
        + (sum beta)^2 tr(Kc) tr(Lc) / (n(n-1)(n-2)(n-3)),

which drops the diagonal terms with the factors that make it ``c^2 HSIC_u``
for uniform weights ``c/n`` (so ``HSIC_u`` itself at ``c = 1``). Every statistic comes with a rounding scale (see
:class:`kmtests.engines.Values`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._gram import CentredGram
from ..estimators._rules import General, Rule, Uniform
from ._loop import map_rows_multi
from ._threads import kernel_threads, map_row_blocks, numba_threads
from ._values import Values

#: below this many products (permutations x n^2) a batch of pair sums runs on one thread
_SERIAL_WORK = 1 << 20


def _key(M: np.ndarray) -> tuple[float, float, float]:
    return (float(np.einsum("ij,ij->", M, M)), float(np.trace(M)), float(M.max()))


@dataclass(frozen=True, eq=False)
class PairedGrams:
    """Permutation-invariant quantities of the two centred Gram matrices."""

    Kc: np.ndarray
    Lc: np.ndarray
    #: True when ``Kc`` is the second variable's (the first one is permuted)
    swapped: bool = False
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_grams(cls, K: np.ndarray, L: np.ndarray) -> "PairedGrams":
        """From two uncentred Gram matrices (copied)."""
        return cls(CentredGram.from_gram(K).Kc, CentredGram.from_gram(L).Kc)

    @classmethod
    def from_centred(cls, cgK: CentredGram, cgL: CentredGram) -> "PairedGrams":
        return cls(cgK.Kc, cgL.Kc)

    @classmethod
    def oriented(cls, Kc: np.ndarray, Lc: np.ndarray) -> "PairedGrams":
        """The pair in a canonical order, so a test does not depend on argument order.

        The statistics are symmetric in the two matrices, and permuting the
        rows of one variable or of the other gives the same null distribution;
        putting the pair in an order fixed by the matrices themselves makes the
        Monte Carlo p-value, for a given seed, identical too.
        """
        return cls(Lc, Kc, True) if _key(Lc) < _key(Kc) else cls(Kc, Lc)

    @property
    def n(self) -> int:
        return self.Kc.shape[0]

    def _get(self, key: str, fn: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    @property
    def dK(self) -> np.ndarray:
        return self._get("dK", lambda: np.ascontiguousarray(np.diagonal(self.Kc)))

    @property
    def dL(self) -> np.ndarray:
        return self._get("dL", lambda: np.ascontiguousarray(np.diagonal(self.Lc)))

    @property
    def scale(self) -> float:
        """``max|Kc| max|Lc|``: the magnitude of the summed products."""
        def absmax(M: np.ndarray) -> float:  # two passes, no N x N temporary
            return max(abs(float(M.min())), abs(float(M.max())))

        return self._get("scale", lambda: absmax(self.Kc) * absmax(self.Lc))

    @property
    def trK(self) -> float:
        """``tr Kc`` (of the matrix that is not permuted)."""
        return float(self.dK.sum())

    @property
    def trL(self) -> float:
        """``tr Lc`` (of the permuted one)."""
        return float(self.dL.sum())

    def pair_sums(self, perms: np.ndarray, n_jobs: int | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
        """``(S_p, D_p)`` for every permutation (:func:`pair_sums`), on `n_jobs` threads."""
        with numba_threads(n_jobs):
            return pair_sums(self, perms)

    def norm(self) -> float:
        """``||Kc||_F ||Lc||_F``: a function of the marginals only (FUSE's normaliser)."""
        return float(np.sqrt(np.einsum("ij,ij->", self.Kc, self.Kc))
                     * np.sqrt(np.einsum("ij,ij->", self.Lc, self.Lc)))


def pair_sums(pg: PairedGrams, perms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(S_p, D_p)`` for every permutation (see the module docs)."""
    from ._jit_hsic import pair_sums as jit_pair_sums  # numba loads on first use

    S = np.empty(perms.shape[0])

    def block(a: int, b: int) -> None:
        jit_pair_sums(pg.Kc, pg.Lc, perms[a:b], S[a:b])

    # small work: one thread (a parallel launch costs more than the sums, and up to 100x
    # more when another process holds a core); the bits do not depend on the threads
    small = perms.shape[0] * pg.n * pg.n < _SERIAL_WORK
    map_row_blocks(block, perms.shape[0], 1 if small else kernel_threads())
    D = (pg.dL[perms] * pg.dK).sum(axis=1)  # row-wise: the same bits for any batch size
    return S, D


def hsic_values(pg: PairedGrams, perms: np.ndarray, rule: Rule, unbiased: bool,
                n_jobs: int | None = None) -> Values:
    """HSIC statistics and rounding scales of every permutation of the pairing."""
    n = pg.n
    if isinstance(rule, General):
        return _hsic_general(pg, perms, rule, n_jobs, unbiased)
    S, D = pair_sums(pg, perms)
    return hsic_uniform(S, D, n, float(pg.dK.sum()), float(pg.dL.sum()), pg.scale, rule,
                        unbiased)


def hsic_uniform(S: np.ndarray, D: np.ndarray, n: int, trK: float, trL: float, scale: float,
                 rule: Uniform, unbiased: bool) -> Values:
    """HSIC of a uniform rule from the sums ``S_p``, ``D_p`` (see the module docs);
    `trK`, `trL` the traces of the centred Gram matrices, `scale` ``max|Kc| max|Lc|``."""
    rho = S / n**2
    if rule.fixed is not None:
        c = np.full(S.shape, float(rule.fixed))
    else:
        c = rule(rho, D / n - rho, n)
    if unbiased:
        stat = (S - D * (n / (n - 2)) + trK * trL / ((n - 1) * (n - 2))) / (n * (n - 3))
        return Values(c * c * stat, c * c * 2.0 * scale)
    return Values(c * c * rho, c * c * scale)


def _hsic_general(pg: PairedGrams, perms: np.ndarray, rule: General, n_jobs: int | None,
                  unbiased: bool = False) -> Values:
    return hsic_general(pg, perms, rule, n_jobs, unbiased)[0]


def hsic_general(pg: PairedGrams, perms: np.ndarray, rule: General, n_jobs: int | None = None,
                 unbiased: bool = False) -> tuple[Values, list[dict[str, Any]]]:
    """HSIC with weights of ``G = Kc o Lc_p`` per permutation (V- or U-form), and the
    parameters the estimator chose on each."""
    n = pg.n
    const = float(pg.dK.sum()) * float(pg.dL.sum()) / (n * (n - 1) * (n - 2) * (n - 3))

    def one(p: np.ndarray) -> tuple[float, float, dict[str, Any]]:
        G = pg.Kc * pg.Lc[np.ix_(p, p)]
        beta, params = rule.weights(G)
        l1 = float(np.abs(beta).sum())
        q = float(beta @ G @ beta)
        if unbiased:
            s = float(beta.sum())
            q = n / (n - 3) * (q - n / (n - 2) * float((beta * beta) @ np.diagonal(G))) \
                + s * s * const
            return q, 2.0 * l1 * l1 * pg.scale, params
        return q, l1 * l1 * pg.scale, params

    rows = map_rows_multi(one, perms, n_jobs)
    return (Values(np.array([u[0] for u in rows]), np.array([u[1] for u in rows])),
            [u[2] for u in rows])


def hsic_statistics(pg: PairedGrams, perms: np.ndarray, est: Any, unbiased: bool,
                    n_jobs: int | None = None) -> np.ndarray:
    """The HSIC statistic of every permutation of the pairing (values only).

    For a weight estimator the statistic is ``beta' G beta`` with
    ``G = Kc o Lc[p][:, p]`` (covariance-operator shrinkage); the KME gives
    ``HSIC_b = tr(Kc Lc) / n^2``.
    """
    return hsic_values(pg, perms, est.rule(), unbiased, n_jobs).stat
