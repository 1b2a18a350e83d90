r"""A kernel bound to a set of points, evaluated accurately block by block.

Every engine that does not hold the whole Gram matrix (the streamed tiles, the
Nyström landmarks, the linear-time pair values) evaluates the kernel through a
:class:`KernelTiles`, so that all of them keep the digits the in-memory engine
keeps (:mod:`kmtests._gram`) and check a user kernel the same way.

The kernel matrix is written as

.. math:: K_{ij} = P_{ij} + a_i + a_j + c,

with :math:`P` a positive semi-definite kernel matrix computed from the data
*centred at their mean* (and scaled by a power of two), and the offsets
:math:`a, c` carrying what depends on the origin. Centring removes the offsets
(:math:`HKH = HPH`), so every KME statistic is computed from :math:`P` alone,
and a translation of the data changes nothing but :math:`a` and :math:`c`:

=====================  ======================================  =======================  ========
kernel                 :math:`P_{ij}`                          :math:`a_i`              :math:`c`
=====================  ======================================  =======================  ========
Gaussian family        :math:`k(z_i, z_j)` (translation-inv.)  0                        0
linear                 :math:`\langle z_i - m, z_j - m\rangle`   :math:`\langle z_i - m, m\rangle`  :math:`|m|^2`
distance               the distance kernel with origin ``m``    :math:`(|z_i| - |z_i - m|)/2`   0
polynomial, callable   :math:`k(z_i, z_j)`                       0                        0
=====================  ======================================  =======================  ========

(``m`` the mean of the points). Blocks are returned as ``P - offset`` with
``offset = 1`` for the Gaussian family (``expm1``: the differences between
kernel values keep their digits at large bandwidths) and 0 otherwise.

A user callable is checked once on a canonical subsample of the points (at most
:data:`kmtests._gram.PSD_CHECK_MAX`): complex or non-finite values and
asymmetry are errors, indefiniteness a warning — as on the in-memory engine;
every block is then checked finite, and diagonal blocks symmetric.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._gram import PSD_CHECK_MAX, check_psd, check_symmetric
from ..kernels import (
    Distance,
    Linear,
    _BandwidthKernel,
    _canonical_subsample,
    _centred,
    _norms,
    _sqdist_unit,
    _unit,
)

__all__ = ["KernelTiles"]


class KernelTiles:
    """``P - offset`` of a fitted kernel on the points `z`, by blocks (see the module docs).

    Parameters
    ----------
    kernel : Kernel
        A fitted kernel (its bandwidth resolved); not ``"precomputed"``.
    z : ndarray, shape (N, d)
        The points.
    name : str
        How error messages name the points.
    """

    def __init__(self, kernel: Any, z: np.ndarray, name: str = "the pooled sample") -> None:
        self.kernel = kernel
        self.name = name
        z = np.ascontiguousarray(z, dtype=np.float64)
        self.n = z.shape[0]
        self.offset = 0.0
        self.a = np.zeros(self.n)
        self.c = 0.0
        self._form = "generic"
        if isinstance(kernel, _BandwidthKernel):
            zs, _, top = kernel._prescale(z, None, name)
            self.z = np.ascontiguousarray(zs)
            self.top2 = top * top
            self.offset = 1.0  # blocks hold k - 1 (expm1): the differences keep their digits
            self._form = "radial"
        elif isinstance(kernel, (Linear, Distance)):
            with np.errstate(over="ignore", invalid="ignore"):
                zc, m = _centred(z)
                if isinstance(kernel, Linear):
                    self.z = np.ascontiguousarray(zc)
                    self.a = zc @ m
                    self.c = float(m @ m)
                    self._form = "linear"
                else:
                    zs, _, s = _unit(zc)
                    self.z = np.ascontiguousarray(zs)
                    self.s = s
                    self.norms = _norms(zs) * s  # |z_i - m|
                    self.a = 0.5 * (_norms(z) - self.norms)
                    self._form = "distance"
            if not (np.all(np.isfinite(self.a)) and np.isfinite(self.c)):
                raise ValueError(f"{kernel.phrase()} gives NaN or infinite values on {name}: "
                                 "the values overflow the floating-point range. Rescale the "
                                 "data.")
        else:
            self.z = z
            if getattr(kernel, "name", "") == "callable":
                self._check_callable()

    # -- evaluation ------------------------------------------------------------------------
    def block(self, i0: int, i1: int, j0: int, j1: int) -> np.ndarray:
        """``P[i0:i1, j0:j1] - offset`` (a new array), checked finite."""
        same = (i0, i1) == (j0, j1)
        return self._values(self.z[i0:i1], None if same else self.z[j0:j1], same)

    def rows(self, idx: np.ndarray, other: np.ndarray) -> np.ndarray:
        """``P - offset`` between the points ``z[idx]`` and the points ``z[other]``."""
        return self._values(self.z[idx], self.z[other], False)

    def psd(self, idx: np.ndarray, other: np.ndarray) -> np.ndarray:
        """``P`` itself (positive semi-definite, no offset removed) between ``z[idx]`` and
        ``z[other]``: what a Nyström approximation factorises."""
        if self._form != "radial":
            return self.rows(idx, other)

        D = _sqdist_unit(self.z[idx], self.z[other])
        D *= self.top2
        t = self.kernel._exponent(D)
        out = np.exp(t, out=t)
        if not np.all(np.isfinite(out)):  # pragma: no cover - exp of a non-positive number
            raise ValueError(f"{self.kernel.phrase()} has non-finite values on {self.name}.")
        return out

    def pairs(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """``P[i_p, j_p] - offset`` for each pair of indices (a vector)."""
        a, b = self.z[i], self.z[j]
        if self._form in ("radial", "distance"):
            diff = a - b
            D = np.einsum("ij,ij->i", diff, diff)
            if self._form == "radial":
                D *= self.top2
                t = self.kernel._exponent(D)
                return np.expm1(t, out=t)
            return 0.5 * (self.norms[i] + self.norms[j] - np.sqrt(D) * self.s)
        if self._form == "linear":
            return np.einsum("ij,ij->i", a, b)
        out = np.empty(len(i))
        for s in range(0, len(i), 64):  # the diagonal of small blocks
            out[s:s + 64] = np.diagonal(self._generic(a[s:s + 64], b[s:s + 64]))
        return out

    def _values(self, a: np.ndarray, b: np.ndarray | None, same: bool) -> np.ndarray:
        if self._form == "radial":
            D = _sqdist_unit(a) if same else _sqdist_unit(a, b)
            D *= self.top2
            t = self.kernel._exponent(D)
            out = np.expm1(t, out=t)
        elif self._form == "linear":
            out = a @ (a if same else b).T  # type: ignore[union-attr]
        elif self._form == "distance":
            D = _sqdist_unit(a) if same else _sqdist_unit(a, b)
            np.sqrt(D, out=D)
            D *= -self.s
            na = np.sqrt(np.einsum("ij,ij->i", a, a)) * self.s
            nb = na if same else np.sqrt(np.einsum("ij,ij->i", b, b)) * self.s  # type: ignore[arg-type]
            D += na[:, None]
            D += nb[None, :]
            D *= 0.5
            out = D
        else:
            out = self._generic(a, a if same else b)  # type: ignore[arg-type]
        if not np.all(np.isfinite(out)):
            raise ValueError(f"the Gram matrix of {self.name} has non-finite values with "
                             f"{self.kernel.phrase()}: the kernel overflows on these data; "
                             "rescale the data or choose another bandwidth or kernel.")
        if same and self._form == "generic":
            out = check_symmetric(out, f"the Gram matrix of {self.kernel.phrase()}")
        return out

    def _generic(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.array(self.kernel.gram(a, b), dtype=np.float64)

    def _check_callable(self) -> None:
        """A user kernel: the in-memory engine's checks, on a canonical subsample."""
        sub = _canonical_subsample(self.z, PSD_CHECK_MAX)
        what = f"the Gram matrix of {self.kernel.phrase()}"
        K = check_symmetric(self._generic(sub, sub), what)
        check_psd(K, what)

    # -- the offsets of the uncentred kernel ------------------------------------------------
    def raw_offsets(self, rP: np.ndarray, gP: float, dP: np.ndarray
                    ) -> tuple[np.ndarray, float, np.ndarray]:
        """The row means, grand mean and diagonal of ``K`` from those of ``P - offset``."""
        abar = float(self.a.mean()) if self.n else 0.0
        r = rP + self.offset + self.a + abar + self.c
        g = gP + self.offset + 2.0 * abar + self.c
        d = dP + self.offset + 2.0 * self.a + self.c
        return r, g, d
