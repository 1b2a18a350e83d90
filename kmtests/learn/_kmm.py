r"""The kernel mean matching objective for isotropic Gaussian mixtures.

For an embedding ``mu_hat = sum_p beta_p E_{x ~ N(x_p, diag(e))} k(x, .)``
(``e = 0`` unless the estimator smooths, MKME/MMKME) and the mixture
``Q = sum_j pi_j N(theta_j, s_j I)`` (``s_j`` a variance),

.. math::

    J = \|\hat\mu - \mu_Q\|^2 = \|\hat\mu\|^2 - 2 \sum_j \pi_j c_j
        + \sum_{j,l} \pi_j \pi_l R_{jl},

with ``c_j = <mu_hat, mu_{N_j}>`` and ``R_jl = <mu_{N_j}, mu_{N_l}>`` in
closed form (PAPERS.md §5.A):

* Gaussian / ARD kernel, squared bandwidths ``b_m``:
  ``c_j = sum_p beta_p prod_m (b_m/v_m)^{1/2} exp(-(x_pm - theta_jm)^2/(2 v_m))``
  with ``v_m = b_m + e_m + s_j``, and ``R_jl`` the same with
  ``v_m = b_m + s_j + s_l``;
* polynomial ``(<x, y> + c)^p``, ``p <= 3`` (linear: ``p = 1, c = 0``):
  with ``t = theta_j'y + c`` and ``v = s_j ||y||^2``, ``E (x'y + c)^p`` is
  ``t``, ``t^2 + v`` or ``t^3 + 3 t v``; ``R_jl`` with ``u = theta_j'theta_l``
  and ``S = s_l ||theta_j||^2 + s_j ||theta_l||^2 + d s_j s_l`` is
  ``u + c``, ``(u + c)^2 + S`` or ``(u + c)^3 + 3 (u + c) S + 6 s_j s_l u``
  (isotropic covariances commute, so SMM Table 1's POLY3 order is harmless).

Parameters are packed as ``[a (m), theta (m*d), log s (m)]`` with
``pi = softmax(a)``; :meth:`KMMProblem.value_and_grad` returns the analytic
gradient (checked against finite differences in the tests).

The problem is solved in the coordinates ``z = (x - offset) / scale`` of a
:class:`Frame` fitted to the embedding's points (the offset is their mean for
the translation-invariant Gaussian kernels, 0 for the polynomial ones; the
scale their largest centred coordinate), with the kernel expressed in them
(bandwidths ``/ scale``, ``coef0 / scale^2``). ``J`` is unchanged for the
Gaussian kernels and divided by ``scale^(2 p)`` for the polynomial ones, so
the solution maps back exactly, while nothing overflows (data at 1e200: a
squared bandwidth would be 1e400) and a large offset cancels before any
distance is formed. The packed parameters are in the frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import softmax

from ..estimators import Embedding
from ..kernels import ARDGaussian, Gaussian, Kernel, Linear, Polynomial, _centred

__all__ = ["Frame", "KMMProblem", "check_kmm_kernel", "frame_for", "kernel_spec"]


def check_kmm_kernel(kernel: Any) -> None:
    """Raise unless the mixture embedding has a closed form for `kernel` (fitted)."""
    if isinstance(kernel, (Gaussian, ARDGaussian)):
        if not kernel.is_fitted:
            raise ValueError("`kernel` has the data-driven bandwidth 'median'; resolve it "
                             "first with `kernel.fitted_to(x)`.")
        return
    if isinstance(kernel, Linear) or (isinstance(kernel, Polynomial) and kernel.degree <= 3):
        return
    raise ValueError("`kernel` must be 'gaussian', 'ard', 'linear' or 'polynomial' with "
                     "degree <= 3 for kernel mean matching (the mixture embedding has a "
                     f"closed form only for these); got {kernel!r}.")


def kernel_spec(kernel: Any, d: int, scale: float = 1.0) -> tuple[str, Any, float]:
    """``("rbf", b (d,), 0)`` or ``("poly", degree, coef0)`` for the kernel in a frame of
    scale `scale` (``b`` the squared bandwidths ``/ scale^2``, ``coef0 / scale^2``); other
    kernels raise."""
    check_kmm_kernel(kernel)
    if isinstance(kernel, (Gaussian, ARDGaussian)):
        bw = np.atleast_1d(np.asarray(kernel.bandwidth, dtype=np.float64)) / scale
        if bw.size == 1:
            bw = np.full(d, float(bw[0]))
        return "rbf", bw * bw, 0.0
    if isinstance(kernel, Linear):
        return "poly", 1, 0.0
    return "poly", kernel.degree, float(kernel.coef0) / (scale * scale)


@dataclass(frozen=True)
class Frame:
    """The coordinates ``z = (x - offset) / scale`` the problem is solved in."""

    offset: np.ndarray
    scale: float

    def to(self, x: np.ndarray) -> np.ndarray:
        """Points (rows) in frame coordinates."""
        return (np.asarray(x, dtype=np.float64) - self.offset) / self.scale

    def back(self, z: np.ndarray) -> np.ndarray:
        """Frame coordinates back in the data's units."""
        return self.offset + self.scale * z


def frame_for(x: np.ndarray, kernel: Kernel) -> Frame:
    """The frame of the points `x`: centred for the translation-invariant (Gaussian)
    kernels, scaled by the largest remaining coordinate.

    The scale is that coordinate itself, not a power of two, so that data multiplied
    by any ``c`` have the same frame coordinates (to rounding) and the same fit.
    """
    if isinstance(kernel, (Gaussian, ARDGaussian)):
        zc, offset = _centred(x)
    else:
        zc, offset = x, np.zeros(x.shape[1])
    top = float(np.max(np.abs(zc))) if zc.size else 0.0
    return Frame(offset, top if top > 0 else 1.0)


def gaussian_gram(A: np.ndarray, B: np.ndarray, v: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``prod_m (b_m / v_m)^{1/2} exp(-sum_m (a_m - b_m)^2 / (2 v_m))`` for the rows of `A`
    and `B` (the Gaussian kernel of squared bandwidths `b` between Gaussians whose
    variances add up to ``v - b``), from differences, not norms."""
    from scipy.spatial.distance import cdist

    r = 1.0 / np.sqrt(v)
    G = cdist(A * r, B * r, "sqeuclidean")
    G += float(np.sum(np.log(v / b)))
    G *= -0.5
    return np.exp(G, out=G)  # in place: one len(A) x len(B) array


class KMMProblem:
    """``J(pi, theta, s) = ||mu_hat - mu_Q||^2`` and its gradient for one embedding."""

    def __init__(self, embedding: Embedding) -> None:
        points = np.asarray(embedding.points, dtype=np.float64)
        self.beta = np.asarray(embedding.weights, dtype=np.float64)
        n, self.d = points.shape
        check_kmm_kernel(embedding.kernel)
        self.frame = frame_for(points, embedding.kernel)
        scale = self.frame.scale
        self.X = self.frame.to(points)
        sm = embedding.smoothing
        self.e = (np.zeros(self.d) if sm is None
                  else np.asarray(sm, dtype=np.float64) / scale / scale)
        self.kind, self.p, self.c = kernel_spec(embedding.kernel, self.d, scale)
        #: J in the data's units is J in the frame times scale ** units_power
        self.units_power = 0 if self.kind == "rbf" else 2 * int(self.p)
        if self.kind == "poly":
            self.sq = np.einsum("ij,ij->i", self.X, self.X)
            K = (self.X @ self.X.T + self.c) ** self.p
        else:
            b = self.p
            K = gaussian_gram(self.X, self.X, b + 2.0 * self.e, b)
        self.const = float(self.beta @ K @ self.beta)

    # -- packing -------------------------------------------------------------
    def unpack(self, w: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        d = self.d
        a = w[:m]
        theta = w[m:m + m * d].reshape(m, d)
        s = np.exp(w[m + m * d:])
        return softmax(a), theta, s

    @staticmethod
    def pack(pi: np.ndarray, theta: np.ndarray, s: np.ndarray) -> np.ndarray:
        a = np.log(np.maximum(pi, 1e-300))
        return np.concatenate([a - a.max(), theta.ravel(), np.log(s)])

    # -- the pieces ------------------------------------------------------------
    def value(self, pi: np.ndarray, theta: np.ndarray, s: np.ndarray) -> float:
        """``J`` at weights `pi`, means `theta` and variances `s` in the data's units."""
        scale = self.frame.scale
        J = self.value_frame(pi, self.frame.to(theta),
                             np.asarray(s, dtype=np.float64) / scale / scale)
        return self.to_units(J)

    def to_units(self, J: float) -> float:
        """``J`` of the frame in the data's units (infinite if it overflows)."""
        if not self.units_power:
            return J
        with np.errstate(over="ignore"):
            return float(J * np.float64(self.frame.scale) ** self.units_power)

    def value_frame(self, pi: np.ndarray, theta: np.ndarray, s: np.ndarray) -> float:
        """``J`` in the frame (means and variances in frame units, ``J`` divided by
        ``scale^(2 p)`` for the polynomial kernels)."""
        c, R = self._c_R(theta, s)[:2]
        return float(self.const - 2.0 * pi @ c + pi @ R @ pi)

    def _c_R(self, theta: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
        if self.kind == "rbf":
            return self._rbf(theta, s)
        return self._poly(theta, s)

    def _rbf(self, theta: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
        b = self.p
        V = b[None, :] + self.e[None, :] + s[:, None]  # (m, d)
        diff = self.X[:, None, :] - theta[None, :, :]  # (n, m, d)
        logC = -0.5 * (np.sum(np.log(V / b[None, :]), axis=1)[None, :]
                       + np.sum(diff * diff / V[None, :, :], axis=2))
        C = np.exp(logC)  # (n, m)
        W = b[None, None, :] + s[:, None, None] + s[None, :, None]  # (m, m, d)
        dth = theta[:, None, :] - theta[None, :, :]
        R = np.exp(-0.5 * (np.sum(np.log(W / b), axis=2) + np.sum(dth * dth / W, axis=2)))
        return self.beta @ C, R, (C, V, diff, W, dth)

    def _poly(self, theta: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
        p, c, d = self.p, self.c, self.d
        T = self.X @ theta.T + c  # (n, m)
        Vv = self.sq[:, None] * s[None, :]
        if p == 1:
            F = T
        elif p == 2:
            F = T * T + Vv
        else:
            F = T**3 + 3.0 * T * Vv
        U = theta @ theta.T
        A = np.einsum("ij,ij->i", theta, theta)
        S = s[None, :] * A[:, None] + s[:, None] * A[None, :] + d * np.outer(s, s)
        if p == 1:
            R = U + c
        elif p == 2:
            R = (U + c) ** 2 + S
        else:
            R = (U + c) ** 3 + 3.0 * (U + c) * S + 6.0 * np.outer(s, s) * U
        return self.beta @ F, R, (T, Vv, U, A, S)

    # -- value and gradient ------------------------------------------------------
    def value_and_grad(self, w: np.ndarray, m: int,
                       mask: np.ndarray | None = None) -> tuple[float, np.ndarray]:
        """Objective and gradient at the packed parameters `w` (`m` components, frame
        units: ``J`` as :meth:`value_frame`).

        `mask` (same length as `w`, 0/1) zeroes the gradient of fixed parameters.
        """
        pi, theta, s = self.unpack(w, m)
        c, R, aux = self._c_R(theta, s)
        Rpi = R @ pi
        J = float(self.const - 2.0 * pi @ c + pi @ Rpi)
        g_pi = -2.0 * c + 2.0 * Rpi
        g_a = pi * (g_pi - pi @ g_pi)
        if self.kind == "rbf":
            g_theta, g_s = self._rbf_grad(pi, theta, s, R, aux)
        else:
            g_theta, g_s = self._poly_grad(pi, theta, s, R, aux)
        g = np.concatenate([g_a, g_theta.ravel(), g_s * s])  # d/dlog s = s d/ds
        if mask is not None:
            g = g * mask
        return J, g

    def _rbf_grad(self, pi: np.ndarray, theta: np.ndarray, s: np.ndarray, R: np.ndarray,
                  aux: Any) -> tuple[np.ndarray, np.ndarray]:
        C, V, diff, W, dth = aux
        BC = self.beta[:, None] * C  # (n, m)
        # -2 pi_j c_j
        g_theta = -2.0 * pi[:, None] * np.einsum("nm,nmd->md", BC, diff) / V
        dC_ds = np.einsum("nm,nmd->m", BC, diff * diff / (2.0 * V[None] ** 2)) \
            - np.sum(1.0 / (2.0 * V), axis=1) * BC.sum(axis=0)
        g_s = -2.0 * pi * dC_ds
        # pi' R pi: first-argument partials, times 2 (R symmetric)
        PR = np.outer(pi, pi) * R  # (m, m)
        g_theta -= 2.0 * np.einsum("jk,jkd->jd", PR, dth / W)
        g_s += 2.0 * np.sum(PR * (np.sum(dth * dth / (2.0 * W * W), axis=2)
                                  - np.sum(1.0 / (2.0 * W), axis=2)), axis=1)
        return g_theta, g_s

    def _poly_grad(self, pi: np.ndarray, theta: np.ndarray, s: np.ndarray, R: np.ndarray,
                   aux: Any) -> tuple[np.ndarray, np.ndarray]:
        T, Vv, U, A, S = aux
        p, c, d = self.p, self.c, self.d
        if p == 1:
            Ft, Fv = np.ones_like(T), np.zeros_like(T)
        elif p == 2:
            Ft, Fv = 2.0 * T, np.ones_like(T)
        else:
            Ft, Fv = 3.0 * T * T + 3.0 * Vv, 3.0 * T
        B = self.beta[:, None]
        g_theta = -2.0 * pi[:, None] * ((B * Ft).T @ self.X)
        g_s = -2.0 * pi * ((B * Fv).T @ self.sq)
        # first-argument partials of R_jk
        uc = U + c
        ss = s[None, :]  # s_k along columns
        if p == 1:
            dth_coef_k = np.ones_like(U)  # coefficient of theta_k
            dth_coef_j = np.zeros_like(U)  # coefficient of theta_j
            ds = np.zeros_like(U)
        elif p == 2:
            dth_coef_k = 2.0 * uc
            dth_coef_j = 2.0 * np.broadcast_to(ss, U.shape)
            ds = A[None, :] + d * ss
        else:
            dth_coef_k = 3.0 * uc**2 + 3.0 * S + 6.0 * np.outer(s, s)
            dth_coef_j = 6.0 * uc * ss
            ds = 3.0 * uc * (A[None, :] + d * ss) + 6.0 * ss * U
        P2 = 2.0 * np.outer(pi, pi)
        g_theta += (P2 * dth_coef_k) @ theta + np.sum(P2 * dth_coef_j, axis=1)[:, None] * theta
        g_s += np.sum(P2 * ds, axis=1)
        return g_theta, g_s
