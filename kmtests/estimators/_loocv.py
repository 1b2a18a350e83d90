"""Leave-one-out scores of the spectral kernel mean estimators (private).

Everything here works in the eigenbasis of the full Gram matrix
``K = U diag(kappa) U'`` (one ``eigh``), with ``q = U'1`` and ``u_i = U[i]``
(row ``i`` of ``U``; a unit vector). A leave-one-out (LOO) fit on the
``n - 1`` points ``j != i`` is a coefficient vector ``b`` with ``b_i = 0``; we
carry it as ``y = U'b`` and score it with

    ||k(., x_i) - sum_j b_j k(., x_j)||^2 = K_ii - 2 (kappa o u_i)'y + sum_k kappa_k y_k^2,

which is O(n) per ``i``. The LOO Gram matrix, padded with a zero row and
column ``i``, is ``Z_i K Z_i`` with ``Z_i = I - e_i e_i'``; on vectors with
``u_i'y = 0`` it acts in the eigenbasis as the diagonal-plus-rank-one map

    y -> kappa o y - u_i ((kappa o u_i)'y),

and its regularised inverse ``lam_n (K_{-i} + lam_n I)^{-1}`` (Schur
complement of ``(K + lam_n I)^{-1}``) as

    y -> t o y - (t o u_i) (u_i'(t o y)) / (u_i'(t o u_i)),   t = lam_n / (kappa + lam_n).

So every LOO refit with the *same* filter parameter costs O(n) per point and
O(n^2) for all points, after the single O(n^3) eigendecomposition. The
derivations are written out in ``docs/estimators_shrinkage.rst``; the tests
compare each score with a literal refit on ``n - 1`` points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = [
    "Spectrum",
    "icml2014_loo",
    "feature_spectrum",
    "iterated_tikhonov_loo",
    "landweber_loo",
    "lowrank_spectrum",
    "lowrank_tsvd_loo",
    "nu_coefficients",
    "nu_method_loo",
    "search_log_lambda",
    "spectrum",
    "tikhonov_loo",
    "tsvd_loo",
]

#: Bytes of stacked sub-Gram matrices held at once by :func:`tsvd_loo`.
_TSVD_CHUNK_BYTES = 32 * 2**20


@dataclass(frozen=True, eq=False)
class Spectrum:
    """Eigendecomposition of a Gram matrix and the vectors every score needs.

    From :func:`spectrum` every eigenpair of ``K`` is kept. From
    :func:`lowrank_spectrum` (``K = Phi Phi'`` with ``r < n`` features) only the
    eigenpairs with ``kappa > 0``: the other eigenvectors span the null space of
    ``K``, where every filter is 0 and every leave-one-out map acts as the
    identity, so the scores need of them only each point's share of that space,
    ``null_lev[i] = ||P0 e_i||^2``, and ``null_q = P0 1`` (``P0`` the projector on
    the null space). Both are 0 for a full spectrum.
    """

    K: np.ndarray | None  # symmetrised Gram matrix (None: from features)
    kappa: np.ndarray    # eigenvalues of K, ascending, clipped at 0
    U: np.ndarray        # eigenvectors (columns); U[i] = u_i
    U2: np.ndarray       # U**2 (so U2 @ v gives diag(U diag(v) U'))
    q: np.ndarray        # U' 1
    diag: np.ndarray     # K_ii
    null_lev: np.ndarray | float = 0.0  # ||P0 e_i||^2 (low-rank spectra)
    null_q: np.ndarray | float = 0.0    # P0 1 (low-rank spectra)
    phi: np.ndarray | None = None       # the features (low-rank spectra)

    @property
    def n(self) -> int:
        return self.U.shape[0]

    @property
    def top(self) -> float:
        """The largest eigenvalue of ``K`` (0 when there is none)."""
        return float(self.kappa[-1]) if self.kappa.size else 0.0


def check_gram(K: object) -> np.ndarray:
    """`K` as a finite, square float64 matrix of size at least 2, symmetrised."""
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"`K` must be a square Gram matrix; got shape {K.shape}.")
    if K.shape[0] < 2:
        raise ValueError(f"`K` must be at least 2 x 2 (n >= 2 points); got {K.shape}.")
    if not np.all(np.isfinite(K)):
        raise ValueError("`K` must not contain NaN or infinite values.")
    return 0.5 * (K + K.T)


def spectrum(K: np.ndarray) -> Spectrum:
    """One ``eigh`` of the (symmetrised) Gram matrix ``K``; O(n^3)."""
    K = check_gram(K)
    kappa, U = np.linalg.eigh(K)
    kappa = np.maximum(kappa, 0.0)  # rounding can make a p.s.d. K slightly indefinite
    return Spectrum(K=K, kappa=kappa, U=U, U2=U * U, q=U.sum(axis=0), diag=np.diag(K).copy())


#: eigenvalues of ``Phi'Phi`` at most this share of the largest count as 0 (low rank)
LOWRANK_RTOL = 1e-12


def lowrank_spectrum(phi: np.ndarray) -> Spectrum:
    """The spectrum of ``K = Phi Phi'`` from the n x r features `phi` (r < n), in O(n r^2).

    One ``eigh`` of ``Phi'Phi = V diag(kappa) V'`` (r x r); the eigenvectors of
    ``K`` with ``kappa > LOWRANK_RTOL kappa_max`` are ``Phi V kappa^{-1/2}``, the
    rest of R^n is its null space (see :class:`Spectrum`).
    """
    phi = np.asarray(phi, dtype=np.float64)
    if phi.ndim != 2 or not np.all(np.isfinite(phi)):
        raise ValueError("`phi` must be a finite n x r matrix of features.")
    C = phi.T @ phi
    kappa, V = np.linalg.eigh(0.5 * (C + C.T))
    top = float(kappa[-1]) if kappa.size else 0.0
    keep = kappa > LOWRANK_RTOL * top if top > 0 else np.zeros(kappa.shape, dtype=bool)
    kappa = kappa[keep]
    U = phi @ (V[:, keep] / np.sqrt(kappa))
    U2 = U * U
    q = U.sum(axis=0)
    diag = np.einsum("ij,ij->i", phi, phi)
    return Spectrum(K=None, kappa=kappa, U=U, U2=U2, q=q, diag=diag,
                    null_lev=np.maximum(1.0 - U2.sum(axis=1), 0.0), null_q=1.0 - U @ q,
                    phi=phi)


def _col(v: np.ndarray | float) -> np.ndarray | float:
    """A per-point vector as a column (a scalar 0 stays a scalar)."""
    return v[:, None] if isinstance(v, np.ndarray) else v


def _score_coords(spec: Spectrum, Y: np.ndarray) -> float:
    """Mean LOO error of the fits whose eigen-coordinates are the columns of `Y`."""
    W = spec.U.T  # column i is u_i
    k = spec.kappa[:, None]
    err = spec.diag - 2.0 * np.einsum("ki,ki->i", k * W, Y) + np.einsum("ki,ki->i", k * Y, Y)
    return float(err.mean())


# --------------------------------------------------------------------------
# Tikhonov (fkmse): JMLR Prop. 15 in O(n^2) per lambda
# --------------------------------------------------------------------------
def tikhonov_loo(spec: Spectrum, lam: np.ndarray) -> np.ndarray:
    """LOOCV score of ``beta = (K + n lam I)^{-1} K 1/n`` (operator convention).

    The LOO fit is the same estimator recomputed on ``n - 1`` points with the
    same ``lam``, i.e. ``(K_{-i} + lam_n I)^{-1} K_{-i} 1/(n-1)``,
    ``lam_n = (n - 1) lam`` (JMLR Prop. 15). Vectorised over an array of
    ``lam``: six products of an n x n matrix with an n x len(lam) one.
    """
    n = spec.n
    lam = np.atleast_1d(np.asarray(lam, dtype=np.float64))
    lam_n = (n - 1) * lam[None, :]
    k = spec.kappa[:, None]
    q = spec.q[:, None]
    t = lam_n / (k + lam_n)          # lam_n (K + lam_n)^{-1} in the eigenbasis
    s = k / (k + lam_n)              # 1 - t without cancellation
    # g_i / G_ii, g = G 1 (the null space of K, where t = 1, adds P0 1 and ||P0 e_i||^2)
    c = ((spec.U @ (t * q)) + _col(spec.null_q)) / ((spec.U2 @ t) + _col(spec.null_lev))
    a1 = spec.U @ (k * s * q)
    a2 = spec.U @ (k * t * s * q)
    b1 = spec.U2 @ (k * t)
    b2 = spec.U2 @ (k * t * t)
    a0 = np.sum(k * (s * q) ** 2, axis=0)
    d = spec.diag[:, None]
    cross = a1 - d + c * b1                                  # (n-1) k_i'b
    quad = a0 - 2.0 * (a1 - c * a2) + d - 2.0 * c * b1 + c * c * b2   # (n-1)^2 b'Kb
    err = d - 2.0 * cross / (n - 1) + quad / (n - 1) ** 2
    return err.mean(axis=0)


def icml2014_loo(spec: Spectrum, lam: np.ndarray) -> np.ndarray:
    """The ICML 2014 Thm. 4 score (not a proper LOO; see the docs), O(n) per lam.

    Robust form of ICML Thm. 4 with ``lam`` in the operator convention (the
    ICML ridge is ``n lam``): ``xi_i = (I - A K / n)^{-1} (beta - e_i)``,
    ``A = (K + n lam I)^{-1}``, score ``(1/n) sum_i xi_i' K xi_i``.
    """
    n = spec.n
    lam = np.atleast_1d(np.asarray(lam, dtype=np.float64))
    k = spec.kappa[:, None]
    q = spec.q[:, None]
    s = k / (k + n * lam[None, :])
    p = s * q / n                    # U' beta
    dd = 1.0 - s / n                 # eigenvalues of I - A K / n, > 0
    return np.sum(k / dd**2 * (n * p * p - 2.0 * p * q + 1.0), axis=0) / n


# --------------------------------------------------------------------------
# iterated Tikhonov, Landweber, nu-method: exact LOO by LOO iterations
# --------------------------------------------------------------------------
def _loo_start(spec: Spectrum) -> np.ndarray:
    """Eigen-coordinates of ``1_{-i}/(n-1)`` (column i), ``(q - u_i)/(n-1)``."""
    return (spec.q[:, None] - spec.U.T) / (spec.n - 1)


def iterated_tikhonov_loo(spec: Spectrum, lam: float, order: int) -> float:
    """Exact LOOCV score of iterated Tikhonov of `order` at `lam` (operator convention).

    LOO residual ``r_m = R_i r_{m-1}``, ``R_i = lam_n (K_{-i} + lam_n I)^{-1}``,
    ``r_0 = 1_{-i}/(n-1)``; the LOO fit is ``r_0 - r_order``. O(order n^2).
    On a low-rank spectrum the residual's null-space part enters only through
    ``sigma_i = (P0 e_i)'r``, carried as one number per point.
    """
    n = spec.n
    lam_n = (n - 1) * float(lam)
    t = (lam_n / (spec.kappa + lam_n))[:, None]
    W = spec.U.T
    tW = t * W
    d = np.einsum("ki,ki->i", W, tW) + spec.null_lev   # u_i'(t o u_i) > 0
    R0 = _loo_start(spec)
    R = R0
    sigma = (spec.null_q - spec.null_lev) / (n - 1)     # (P0 e_i)'(P0 r_0)
    for _ in range(order):
        tR = t * R
        c = (np.einsum("ki,ki->i", W, tR) + sigma) / d
        R = tR - tW * c
        sigma = sigma - spec.null_lev * c
    return _score_coords(spec, R0 - R)


def _loo_apply(spec: Spectrum, R: np.ndarray) -> np.ndarray:
    """``(K_{-i}/(n-1)) r_i`` for every column ``i`` (eigen-coordinates)."""
    k = spec.kappa[:, None]
    W = spec.U.T
    s = np.einsum("ki,ki->i", k * W, R)
    return (k * R - W * s) / (spec.n - 1)


def landweber_loo(spec: Spectrum, step: float, max_iter: int) -> np.ndarray:
    """Exact LOOCV scores of Landweber after 1..max_iter steps (array)."""
    R0 = _loo_start(spec)
    R = R0.copy()
    out = np.empty(max_iter)
    for it in range(max_iter):
        R = R - step * _loo_apply(spec, R)
        out[it] = _score_coords(spec, R0 - R)
    return out


def nu_coefficients(t: int, nu: float) -> tuple[float, float]:
    """``(u_t, omega_t)`` of the nu-method (Engl, Hanke & Neubauer 1996, Sec. 6.3)."""
    if t == 1:
        return 0.0, (4.0 * nu + 2.0) / (4.0 * nu + 1.0)
    u = ((t - 1) * (2 * t - 3) * (2 * t + 2 * nu - 1)
         / ((t + 2 * nu - 1) * (2 * t + 4 * nu - 1) * (2 * t + 2 * nu - 3)))
    w = 4.0 * (2 * t + 2 * nu - 1) * (t + nu - 1) / ((t + 2 * nu - 1) * (2 * t + 4 * nu - 1))
    return u, w


def nu_method_loo(spec: Spectrum, step: float, nu: float, max_iter: int) -> np.ndarray:
    """Exact LOOCV scores of the nu-method after 1..max_iter steps (array)."""
    R0 = _loo_start(spec)
    R_prev, R = R0, R0
    out = np.empty(max_iter)
    for it in range(1, max_iter + 1):
        u, w = nu_coefficients(it, nu)
        R_prev, R = R, R + u * (R - R_prev) - w * step * _loo_apply(spec, R)
        out[it - 1] = _score_coords(spec, R0 - R)
    return out


# --------------------------------------------------------------------------
# truncated SVD: eigendecompositions of the n sub-Gram matrices
# --------------------------------------------------------------------------
def tsvd_loo(K: np.ndarray) -> np.ndarray:
    """Exact LOOCV scores of rank-r spectral cut-off, r = 1..n-1 (array).

    The LOO fit keeps the top r eigenvectors of ``K_{-i}``:
    ``b = V_r V_r' 1/(n-1)``. Its error is additive over eigenpairs
    ``(mu_m, v_m)`` of ``K_{-i}``: ``K_ii + sum_{m <= r} c_m`` with
    ``c_m = -2 (k_i'v_m)(v_m'1)/(n-1) + mu_m (v_m'1)^2/(n-1)^2``, so one
    ``eigh`` per point gives the score for every rank: O(n^4) in all.
    """
    K = check_gram(K)
    n = K.shape[0]
    m = n - 1
    idx = np.array([np.delete(np.arange(n), i) for i in range(n)])
    chunk = max(1, _TSVD_CHUNK_BYTES // (8 * m * m))
    total = np.zeros(m)
    for start in range(0, n, chunk):
        rows = np.arange(start, min(n, start + chunk))
        sub = K[idx[rows][:, :, None], idx[rows][:, None, :]]
        mu, V = np.linalg.eigh(sub)                     # ascending
        kvec = K[rows[:, None], idx[rows]]              # k_{i,-i}
        a = np.einsum("bj,bjm->bm", kvec, V)
        s = V.sum(axis=1)
        c = -2.0 * a * s / m + mu * s * s / m**2
        total += np.cumsum(c[:, ::-1], axis=1).sum(axis=0)
    return (np.sum(np.diag(K)) + total) / n


def feature_spectrum(phi: np.ndarray) -> Spectrum:
    """The spectrum of ``K = Phi Phi'`` from n x r features: :func:`lowrank_spectrum`
    when r < n, else :func:`spectrum` of the n x n matrix (no null space to carry)."""
    phi = np.asarray(phi, dtype=np.float64)
    if phi.ndim != 2 or phi.shape[0] < 2:
        raise ValueError(f"`phi` must be an n x r matrix with n >= 2; got {phi.shape}.")
    if phi.shape[1] >= phi.shape[0]:
        return spectrum(phi @ phi.T)
    return lowrank_spectrum(phi)


def lowrank_tsvd_loo(spec: Spectrum) -> np.ndarray:
    """:func:`tsvd_loo` for ``K = Phi Phi'`` (a low-rank spectrum), ranks 1..min(r, n-1).

    The positive eigenpairs of ``K_{-i}`` are those of the r x r matrix
    ``C_{-i} = Phi'Phi - phi_i phi_i'`` (``(mu_m, w_m)``, ``v_m = Phi_{-i} w_m /
    sqrt(mu_m)``), so ``c_m = -2 a_m s_m/(n-1) + s_m^2/(n-1)^2`` with
    ``a_m = phi_i'w_m`` and ``s_m = (Phi'1 - phi_i)'w_m``: n eigendecompositions of
    r x r matrices, O(n r^3) in all. Ranks above r add nothing (zero eigenvalues).
    """
    phi = spec.phi
    if phi is None:
        raise ValueError("lowrank_tsvd_loo needs a spectrum from features (lowrank_spectrum).")
    n, r = phi.shape
    m = n - 1
    ranks = max(1, min(spec.kappa.size, m))
    C = phi.T @ phi
    total1 = phi.sum(axis=0)
    chunk = max(1, _TSVD_CHUNK_BYTES // (8 * r * r))
    total = np.zeros(r)
    for start in range(0, n, chunk):
        rows = phi[start:min(n, start + chunk)]
        sub = C[None, :, :] - rows[:, :, None] * rows[:, None, :]
        mu, Wm = np.linalg.eigh(sub)                    # ascending
        a = np.einsum("bj,bjm->bm", rows, Wm)
        sv = np.einsum("bj,bjm->bm", total1[None, :] - rows, Wm)
        c = -2.0 * a * sv / m + sv * sv / m**2
        c[mu <= LOWRANK_RTOL * np.maximum(mu[:, -1:], 0.0)] = 0.0   # null space of K_{-i}
        total += np.cumsum(c[:, ::-1], axis=1).sum(axis=0)
    return (np.sum(spec.diag) + total[:ranks]) / n


# --------------------------------------------------------------------------
# the lambda search
# --------------------------------------------------------------------------
#: scores within this relative distance of the minimum are ties (rounding of the
#: eigendecomposition and of the sums moves a score by ~1e-13 with the row order)
SCORE_RTOL = 1e-9
#: tuned continuous parameters are rounded to this step on the log scale (0.01%)
LOG_STEP = 1e-4


def stable_argmin(scores: np.ndarray, *, last: bool = False) -> int:
    """The first (or last) index whose score is within :data:`SCORE_RTOL` of the minimum.

    A choice made by an exact test's estimator on every arrangement must not depend
    on the order of the rows (tied data give arrangements that are the same set of
    points in another order): near-ties resolved by rounding noise would make equal
    statistics differ by more than the tie tolerance.
    """
    v = np.asarray(scores, dtype=np.float64)
    finite = np.isfinite(v)
    if not finite.any():
        return 0
    best = float(np.min(v[finite]))
    near = np.flatnonzero(finite & (v <= best + SCORE_RTOL * max(abs(best), 1e-300)))
    return int(near[-1] if last else near[0])


def quantise_log(value: float) -> float:
    """`value` rounded to the grid ``exp(LOG_STEP * k)`` (relative step 0.01%), so that a
    continuous optimum does not carry the rounding noise of its objective."""
    if not (value > 0 and np.isfinite(value)):
        return value
    return float(np.exp(np.round(np.log(value) / LOG_STEP) * LOG_STEP))


def search_log_lambda(
    score: Callable[[np.ndarray], np.ndarray], lo: float, hi: float, grid_size: int,
) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Minimise ``score(lam)`` over ``[lo, hi]``: log grid, then bounded Brent.

    `score` maps an array of lambdas to an array of scores. Brent
    (``minimize_scalar(method="bounded")`` on log lambda) refines the best
    grid point within its two neighbours; the refined point is kept only if
    it is not worse. Ties go to the larger lambda (more shrinkage); the result is
    rounded by :func:`quantise_log`, so that it does not depend on the order of
    the rows (exact permutation tests on tied data).

    Returns ``(lam, score_at_lam, grid, grid_scores)``.
    """
    grid = np.geomspace(lo, hi, grid_size)
    vals = np.asarray(score(grid), dtype=np.float64)
    j = stable_argmin(vals, last=True)
    best_lam, best = float(grid[j]), float(vals[j])
    a, b = np.log(grid[max(j - 1, 0)]), np.log(grid[min(j + 1, grid_size - 1)])
    from scipy.optimize import minimize_scalar  # imported on first use (fast import)

    res = minimize_scalar(lambda z: float(score(np.array([np.exp(z)]))[0]),
                          bounds=(a, b), method="bounded", options={"xatol": 1e-7})
    if res.fun < best - SCORE_RTOL * abs(best):
        best_lam = quantise_log(float(np.exp(res.x)))
        best = float(score(np.array([best_lam]))[0])
    return best_lam, best, grid, vals
