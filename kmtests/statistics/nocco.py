r"""The normalised cross-covariance statistic (HSNIC / NOCCO) and its filter family.

Fukumizu, Gretton, Sun & Schölkopf (2008) normalise the cross-covariance by
the covariances: with the centred Gram matrices ``Kc``, ``Lc`` of n pairs,

.. math:: \hat I = \mathrm{tr}(R_X R_Y), \qquad R = K_c (K_c + n\varepsilon I)^{-1},

and in the eigenbasis ``Kc = U diag(kappa) U'``, ``R = U diag(h(kappa/n)) U'``
with the filter ``h(x) = x g_eps(x) = x/(x + eps)`` (Tikhonov). Any spectral
filter of :data:`kmtests.statistics.spectral.FILTERS` gives a member of the
family: ``h = x g(x)`` (Showalter ``1 - exp(-x/eps)``, spectral cut-off
``1[x >= eps]``, iterated Tikhonov). The ``R`` are centred (zero row sums), so
the statistic of a permutation of the pairing is the HSIC pair sum
``sum_ij R_X,ij R_Y,p_i p_j`` of :mod:`kmtests.engines.hsic`, on the same
parallel numba loop.
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

import numpy as np

from .._gram import centred_spectrum
from .._guards import format_bytes
from .._validation import check_choice
from ..engines import Engine, Requirements, Values
from ..engines._threads import numba_threads
from ..engines.hsic import PairedGrams, pair_sums
from ..estimators import KME, KernelMeanEstimator
from ..kernels import Kernel
from ._base import Prepared, Statistic
from .aggregate import over_grid
from .mmd import describe_kernel
from .spectral import (FILTERS, SpectralMMD, filter_function, lambda_grid, lambda_values,
                       regularised_description)

__all__ = ["NOCCO", "nocco_values", "normalized_operators"]


def _operators(Kc: np.ndarray, filt: str, lams: np.ndarray) -> list[np.ndarray]:
    n = Kc.shape[0]
    kappa, U = centred_spectrum(Kc)
    g = filter_function(filt)
    out = []
    for lam in lams:
        x = kappa / n
        h = x * g(x, float(lam))
        R = (U * h) @ U.T
        out.append(np.ascontiguousarray(0.5 * (R + R.T)))
    return out


def normalized_operators(Kc: np.ndarray, Lc: np.ndarray, filt: str, lams: np.ndarray,
                         orientation: bool | None = None) -> list[PairedGrams]:
    """``(R_X, R_Y)`` for every lambda of the grid (the same lambda for both variables).

    Every pair permutes the same variable: `orientation` (False: y, True: x), or,
    when None, the one :meth:`PairedGrams.oriented` chooses for the first lambda
    (the statistic is symmetric in the pair, so a seeded p-value does not depend
    on which variable is called x). One orientation for the whole grid keeps the
    members' statistics of an arrangement on the *same* pairing, which the exact
    level of the aggregated (min-p) test over the grid needs.
    """
    lams = np.asarray(lams, dtype=np.float64)
    pairs = list(zip(_operators(Kc, filt, lams), _operators(Lc, filt, lams)))
    if orientation is None and pairs:
        orientation = PairedGrams.oriented(*pairs[0]).swapped
    return [PairedGrams(ry, rx, True) if orientation else PairedGrams(rx, ry)
            for rx, ry in pairs]


def nocco_values(ops: list[PairedGrams], perms: np.ndarray, n_jobs: int | None = None
                 ) -> Values:
    """``tr(R_X P R_Y P')`` for every permutation (rows) and every operator pair (columns)."""
    B = perms.shape[0]
    stat = np.empty((B, len(ops)))
    scale = np.empty((B, len(ops)))
    with numba_threads(n_jobs):
        for j, pg in enumerate(ops):
            stat[:, j] = pair_sums(pg, perms)[0]
            scale[:, j] = pg.n * pg.n * pg.scale
    return Values(stat, scale)


class NOCCO(Statistic):
    """The normalised cross-covariance statistic ``tr(R_X R_Y)`` over a lambda grid.

    Parameters
    ----------
    kernel_x, kernel_y : Kernel
    filter : str
        A filter of :data:`kmtests.statistics.spectral.FILTERS`.
    lams : "auto" or array
        The regularisation (``"auto"``: :func:`~kmtests.statistics.spectral.lambda_grid`
        of the smaller of the two operators' traces); one column each.
    orientation : bool or None
        The variable permuted (see :func:`normalized_operators`).
    """

    name: ClassVar[str] = "regularized"
    options: ClassVar[tuple[str, ...]] = ("filter", "lam")
    problem_kind: ClassVar[str] = "independence"
    estimator_refusal: ClassVar[str] = SpectralMMD.estimator_refusal

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        lam = "auto" if options.get("lam") is None else options["lam"]
        return over_grid(cls(kernels["x"], kernels["y"], options.get("filter") or "tikhonov",
                             lam), options["combination"])

    def __init__(self, kernel_x: Kernel, kernel_y: Kernel, filter: str = "tikhonov",
                 lams: Any = "auto", orientation: bool | None = None) -> None:
        self.kernel_x, self.kernel_y = kernel_x, kernel_y
        self.estimator = KME()
        self.filter = check_choice(filter, "filter", tuple(FILTERS))
        self.lams = lambda_values(lams)
        self.orientation = orientation

    symbol: ClassVar[str] = "NOCCO"
    family_name: ClassVar[str] = "NOCCO, regularised HSIC"

    def describe(self, prepared: Prepared) -> str:
        return regularised_description(
            "NOCCO", self.filter, prepared.params.get("regularization"),
            "the normalised cross-covariance (regularised HSIC; {filter} filter, lam = {lam})")

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        return Requirements("pairing", {"x": self.kernel_x, "y": self.kernel_y},
                            gram="statistic='regularized' needs (it decomposes the Gram "
                                 "matrices into their eigenvectors)")

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        n = problem.n
        L = 10 if self.lams is None else self.lams.size
        need = (4 + 2 * L) * 8.0 * n * n
        return (need, f"the {n} x {n} normalised operators of the two variables take "
                      f"{format_bytes(2 * L * 8.0 * n * n)}",
                "Test a random subsample of the pairs, or use a machine with more memory.")

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        x, y, n = problem.x.data, problem.y.data, problem.n
        kx = self.kernel_x.fitted_to(x, name="x")
        ky = self.kernel_y.fitted_to(y, name="y")
        cgx, cgy = kx.centred_gram(x, name="x"), ky.centred_gram(y, name="y")
        grid = self.lams if self.lams is not None else lambda_grid(
            min(cgx.trace_c, cgy.trace_c) / n)
        orientation = self.orientation
        if orientation is None:  # chosen at the first lambda, for the whole grid
            first = normalized_operators(cgx.Kc, cgy.Kc, self.filter, grid[:1])[0]
            orientation = bool(first.swapped)
        ops = normalized_operators(cgx.Kc, cgy.Kc, self.filter, grid, orientation)
        del cgx, cgy

        def bw(k: Kernel) -> float | None:
            b = getattr(k, "bandwidth", None)
            return float(b) if isinstance(b, (float, int)) else None

        columns = [(f"x: {describe_kernel(kx)}, y: {describe_kernel(ky)}, {self.filter} "
                    f"lam={lam:.3g}", {"bandwidth_x": bw(kx), "bandwidth_y": bw(ky),
                                       "estimator": "kme", "form": None,
                                       "filter": self.filter, "lam": float(lam)})
                   for lam in grid]

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            return nocco_values(ops, perms, n_jobs)

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return values(np.arange(n, dtype=np.int64)[None, :], n_jobs), {}

        def norms() -> np.ndarray:
            # ||R_X||_F ||R_Y||_F / (n (n - 1)): the marginals only (exact level)
            return np.array([pg.norm() for pg in ops]) / (n * (n - 1))

        note = ("regularisation: each variable's centred Gram matrix Kc is normalised as "
                f"R = (Kc/n) g(Kc/n), g the {self.filter} filter (Tikhonov: R = Kc (Kc + n "
                "lam I)^-1), the same lam for both variables, in the units of the "
                "covariance operators' eigenvalues; the permutations leave R unchanged.")
        params = ({"regularization": {"filter": self.filter, "lam": float(grid[0])}}
                  if grid.size == 1 else {})
        return Prepared(values=values, observed=observed, kernels={"x": kx, "y": ky},
                        what=(f"{self.label()} with {kx.phrase()} on x and {ky.phrase()} "
                              "on y"), params=params, notes=[note], columns=columns,
                        norms=norms, details={"lams": grid, "orientation": orientation})
