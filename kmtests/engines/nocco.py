r"""The normalised cross-covariance statistic (HSNIC / NOCCO) and its filter family.

Fukumizu, Gretton, Sun & Schölkopf (2008) normalise the cross-covariance by
the covariances: with the centred Gram matrices ``Kc``, ``Lc`` of n pairs,

.. math:: \hat I = \mathrm{tr}(R_X R_Y), \qquad R = K_c (K_c + n\varepsilon I)^{-1},

and in the eigenbasis ``Kc = U diag(kappa) U'``, ``R = U diag(h(kappa/n)) U'``
with the filter ``h(x) = x g_eps(x) = x/(x + eps)`` (Tikhonov). Any spectral
filter of :data:`kmtests.engines.spectral.FILTERS` gives a member of the
family: ``h = x g(x)`` (Showalter ``1 - exp(-x/eps)``, spectral cut-off
``1[x >= eps]``, iterated Tikhonov). The ``R`` are centred (zero row sums), so
the statistic of a permutation of the pairing is the HSIC pair sum
``sum_ij R_X,ij R_Y,p_i p_j`` of :mod:`kmtests.engines.hsic`, on the same
parallel numba loop.
"""

from __future__ import annotations

import numpy as np

from ._values import Values
from .hsic import PairedGrams, pair_sums
from .spectral import _positive_spectrum, filter_function

__all__ = ["nocco_values", "normalized_operators"]


def _operators(Kc: np.ndarray, filt: str, lams: np.ndarray) -> list[np.ndarray]:
    n = Kc.shape[0]
    kappa, U = _positive_spectrum(Kc, n)
    g = filter_function(filt)
    out = []
    for lam in lams:
        x = kappa / n
        h = x * g(x, float(lam))
        R = (U * h) @ U.T
        out.append(np.ascontiguousarray(0.5 * (R + R.T)))
    return out


def normalized_operators(Kc: np.ndarray, Lc: np.ndarray, filt: str, lams: np.ndarray
                         ) -> list[PairedGrams]:
    """``(R_X, R_Y)`` for every lambda of the grid (the same lambda for both variables),
    each pair in the canonical order of :meth:`PairedGrams.oriented` (the statistic
    is symmetric in the pair), so a seeded p-value does not depend on which variable
    is called x."""
    lams = np.asarray(lams, dtype=np.float64)
    return [PairedGrams.oriented(rx, ry)
            for rx, ry in zip(_operators(Kc, filt, lams), _operators(Lc, filt, lams))]


def nocco_values(ops: list[PairedGrams], perms: np.ndarray, n_jobs: int | None = None
                 ) -> Values:
    """``tr(R_X P R_Y P')`` for every permutation (rows) and every operator pair (columns)."""
    from ._threads import numba_threads

    B = perms.shape[0]
    stat = np.empty((B, len(ops)))
    scale = np.empty((B, len(ops)))
    with numba_threads(n_jobs):
        for j, pg in enumerate(ops):
            stat[:, j] = pair_sums(pg, perms)[0]
            scale[:, j] = pg.n * pg.n * pg.scale
    return Values(stat, scale)
