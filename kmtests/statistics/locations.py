r"""Interpretable features: test locations and frequencies learned on a training split.

The numerics of the ME and SCF two-sample tests (Chwialkowski et al., 2015;
Jitkrittum et al., 2016) and of the NFSIC independence test (Jitkrittum et
al., 2017). Each is a Hotelling-type statistic of ``n`` i.i.d. feature
vectors ``Z_i`` in ``R^J``,

    lambda = n  W' (S + gamma I)^{-1} W,    W = mean_i Z_i,   S = cov(Z),

with

* ME: ``Z_ij = k(x_i, v_j) - k(y_i, v_j)`` (the witness of the Gaussian kernel
  at the test locations ``v_j``, the pairs ``(x_i, y_i)`` of equal-size
  samples), ``S`` with ``n - 1``; ``J`` degrees of freedom;
* SCF: ``Z_i = [sin(x_i' t_j / s) f(x_i) , cos(x_i' t_j / s) f(x_i)]_j - (same of
  y_i)``, ``f(x) = exp(-||x||^2 / (2 s^2))`` (the smooth characteristic
  function at frequencies ``t_j``), ``S`` with ``n - 1``; ``2J`` degrees of
  freedom;
* NFSIC: ``Z_ij = (k(x_i, v_j) - mean_k k(x_k, v_j)) (l(y_i, w_j) - mean_k
  l(y_k, w_j))`` (the HSIC witness at the paired locations ``(v_j, w_j)``),
  ``S`` with ``n`` (the authors' convention); ``J`` degrees of freedom.

Under the null hypothesis ``lambda`` is asymptotically ``chi^2`` with those
degrees of freedom. The locations (frequencies) and Gaussian widths are chosen
on a training split by maximising ``lambda`` itself with ``gamma > 0`` (the
papers' power criterion: ``lambda_n`` is the non-centrality of the statistic
under the alternative), here with analytic gradients and scipy's L-BFGS-B,
and the test is run on the held-out part. :func:`hotelling` computes the
statistic with ``gamma = 0`` (the authors' ``reg='auto'``) through the
eigendecomposition of ``S``: directions with zero variance (a location far
from every point) are dropped and the degrees of freedom reduced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..kernels import median_bandwidth, sq_distances

__all__ = [
    "TRAIN_REG",
    "Learned",
    "fsic_criterion",
    "fsic_features",
    "gauss_rows",
    "hotelling",
    "learn_fsic",
    "learn_me",
    "learn_scf",
    "me_criterion",
    "me_features",
    "scf_criterion",
    "scf_features",
    "scf_rows",
    "standard_frame",
]

#: the regulariser of the training criterion (the authors' ``reg=1e-5``)
TRAIN_REG = 1e-5
#: eigenvalues of S below this fraction of the largest are treated as zero
_RANK_TOL = 1e-10
#: the width bounds, as factors of the squared median distance: the authors' NFSIC bounds,
#: and for ME and SCF (whose authors' optimisers have none) wide ones that only keep the
#: exponentials finite
_WIDTH_BOUNDS = (5e-2, 5e3)
_WIDE_BOUNDS = (1e-4, 1e4)


# -- the statistic ---------------------------------------------------------------------------
def hotelling(Z: np.ndarray, ddof: int = 1, reg: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``(lambda, rank)`` of feature arrays ``Z`` of shape ``(..., n, J)``.

    ``lambda = n W' (S + reg I)^+ W`` with ``S`` the covariance with `ddof`;
    with ``reg = 0`` the pseudo-inverse drops the directions whose variance is
    below ``1e-10`` of the largest, and `rank` counts the others.
    """
    Z = np.asarray(Z, dtype=np.float64)
    n = Z.shape[-2]
    W = Z.mean(axis=-2)
    C = Z - W[..., None, :]
    S = np.einsum("...ij,...ik->...jk", C, C) / (n - ddof)
    J = S.shape[-1]
    if reg > 0:
        S = S + reg * np.eye(J)
    ev, U = np.linalg.eigh(0.5 * (S + np.swapaxes(S, -1, -2)))
    top = np.max(ev, axis=-1, keepdims=True)
    keep = ev > np.maximum(top, 0.0) * _RANK_TOL
    proj = np.einsum("...jk,...j->...k", U, W)
    inv = np.where(keep, 1.0 / np.where(keep, ev, 1.0), 0.0)
    lam = n * np.sum(proj * proj * inv, axis=-1)
    return lam, np.sum(keep, axis=-1)


def _criterion_grad(Z: np.ndarray, ddof: int, reg: float) -> tuple[float, np.ndarray]:
    """``lambda`` (with ``reg > 0``) and its gradient with respect to ``Z`` (n x J).

    With ``a = (S + reg I)^{-1} W`` and ``c_i = a'(Z_i - W)``:
    ``d lambda / d Z_ij = a_j (2 - 2 n c_i / (n - ddof))``.
    """
    n, J = Z.shape
    W = Z.mean(axis=0)
    C = Z - W
    S = C.T @ C / (n - ddof) + reg * np.eye(J)
    a = np.linalg.solve(S, W)
    lam = float(n * W @ a)
    c = C @ a
    G = np.outer(2.0 - 2.0 * n * c / (n - ddof), a)
    return lam, G


def _gauss(X: np.ndarray, V: np.ndarray, s2: float) -> tuple[np.ndarray, np.ndarray]:
    D = sq_distances(X, V)
    return np.exp(-D / (2.0 * s2)), D


# -- features --------------------------------------------------------------------------------
def gauss_rows(v: np.ndarray, V: np.ndarray, s2: float) -> np.ndarray:
    """``k(v_i, V_j) = exp(-||v_i - V_j||^2 / (2 s2))`` (n x J)."""
    return _gauss(v, V, s2)[0]


def scf_rows(v: np.ndarray, T: np.ndarray, s: float) -> np.ndarray:
    """Sines then cosines of ``v_i' t_j / s``, times ``exp(-||v_i||^2 / (2 s^2))`` (n x 2J)."""
    u = (v / s) @ T.T
    f = np.exp(-np.sum((v / s) ** 2, axis=1) / 2.0)[:, None]
    return np.hstack([np.sin(u) * f, np.cos(u) * f])


def me_features(x: np.ndarray, y: np.ndarray, V: np.ndarray, s2: float) -> np.ndarray:
    """ME features ``k(x_i, v_j) - k(y_i, v_j)`` (Gaussian, ``exp(-d^2 / (2 s2))``)."""
    return gauss_rows(x, V, s2) - gauss_rows(y, V, s2)


def scf_features(x: np.ndarray, y: np.ndarray, T: np.ndarray, s: float) -> np.ndarray:
    """SCF features: :func:`scf_rows` of ``x_i`` minus those of ``y_i`` (n x 2J)."""
    return scf_rows(x, T, s) - scf_rows(y, T, s)


def fsic_features(x: np.ndarray, y: np.ndarray, V: np.ndarray, W: np.ndarray, sx2: float,
                  sy2: float) -> np.ndarray:
    """NFSIC features ``(k(x_i, v_j) - mean k(., v_j)) (l(y_i, w_j) - mean l(., w_j))``."""
    K = _gauss(x, V, sx2)[0]
    L = _gauss(y, W, sy2)[0]
    return (K - K.mean(axis=0)) * (L - L.mean(axis=0))


# -- learning the locations ------------------------------------------------------------------
@dataclass(frozen=True)
class Learned:
    """What was learned on the training split."""

    locations: np.ndarray            # V (ME, NFSIC's x locations) or T (SCF frequencies)
    width: float                     # s^2 (ME), s (SCF), s_x^2 (NFSIC)
    criterion: float                 # the training lambda (with TRAIN_REG)
    initial: float                   # the training lambda at the initial values
    converged: bool
    n_iter: int
    locations_y: np.ndarray | None = None   # NFSIC: W
    width_y: float | None = None            # NFSIC: s_y^2


def standard_frame(z: np.ndarray) -> tuple[np.ndarray, float]:
    """``(centre, unit)`` of the standardised coordinates ``(z - centre) / unit``: the
    mean of the rows and their median distance (1 if all rows coincide).

    The ME and SCF tests learn their locations, frequencies and widths in these
    coordinates: the optimiser's starting points, steps and tolerances are then
    relative to the data, and the test is invariant (to rounding) to a shift and a
    change of units of the data, as a Gaussian kernel with the median bandwidth is.
    The SCF's smoothing window, centred at the origin in the papers, is centred at
    ``centre``.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.statistics.locations import standard_frame
    >>> z = np.array([[0.0], [1.0], [3.0]])
    >>> centre, unit = standard_frame(1e3 * z + 5.0)
    >>> print(centre, unit)
    [1338.33333333] 2000.0
    """
    z = np.asarray(z, dtype=np.float64)
    centre = z.mean(axis=0)
    return centre, float(np.sqrt(_med2(z - centre)))


def _med2(v: np.ndarray) -> float:
    m = float(median_bandwidth(v)) ** 2
    return m if m > 0 else 1.0


def _maximise(f: Callable[[np.ndarray], tuple[float, np.ndarray]], p0: np.ndarray,
              bounds: list[tuple[float | None, float | None]], max_iter: int
              ) -> tuple[np.ndarray, float, bool, int]:
    from scipy.optimize import minimize

    def neg(p: np.ndarray) -> tuple[float, np.ndarray]:
        try:
            v, g = f(p)
        except np.linalg.LinAlgError:
            return 0.0, np.zeros_like(p)
        if not np.isfinite(v) or not np.all(np.isfinite(g)):
            return 0.0, np.zeros_like(p)
        return -v, -g

    res = minimize(neg, p0, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": max_iter})
    p = res.x if -res.fun >= -neg(p0)[0] else p0
    return p, -float(neg(p)[0]), bool(res.success), int(res.nit)


def _log_bounds(med2: float, bounds: tuple[float, float] = _WIDTH_BOUNDS
                ) -> tuple[float | None, float | None]:
    """The bounds of a log squared width: ``[0.05, 5000] med^2`` by default."""
    return float(np.log(med2 * bounds[0])), float(np.log(med2 * bounds[1]))


def _grid_best(values: list[float]) -> int:
    v = np.array([x if np.isfinite(x) else -np.inf for x in values])
    return int(np.argmax(v))


def _value(Z: np.ndarray, ddof: int = 0) -> float:
    """The training criterion of features `Z` (-inf where it is undefined)."""
    try:
        return _criterion_grad(Z, ddof, TRAIN_REG)[0]
    except np.linalg.LinAlgError:
        return -np.inf


def _init_2randn(x: np.ndarray, y: np.ndarray, J: int, gen: np.random.Generator
                 ) -> np.ndarray:
    """Half the locations from a Gaussian fitted to x, half from one fitted to y (the
    authors' ``init_locs_2randn``)."""
    d = x.shape[1]
    out = []
    for v, k in ((x, (J + 1) // 2), (y, J // 2)):
        if k == 0:
            continue
        cov = np.atleast_2d(np.cov(v.T)) + 1e-6 * np.eye(d)
        out.append(gen.multivariate_normal(v.mean(axis=0), cov, size=k))
    return np.vstack(out)


def me_criterion(x: np.ndarray, y: np.ndarray, V: np.ndarray, s2: float
                 ) -> tuple[float, np.ndarray, float]:
    """The ME training criterion (``reg = TRAIN_REG``) and its gradients with respect to
    the locations and ``log s2``."""
    Kx, Dx = _gauss(x, V, s2)
    Ky, Dy = _gauss(y, V, s2)
    lam, G = _criterion_grad(Kx - Ky, 0, TRAIN_REG)
    GX, GY = G * Kx, G * Ky  # n x J
    gV = (GX.T @ x - GY.T @ y - (GX.sum(0) - GY.sum(0))[:, None] * V) / s2
    return lam, gV, float(np.sum(GX * Dx - GY * Dy) / (2.0 * s2))


def scf_criterion(x: np.ndarray, y: np.ndarray, T: np.ndarray, s: float
                  ) -> tuple[float, np.ndarray, float]:
    """The SCF training criterion and its gradients with respect to the frequencies and
    ``log s``."""
    J = T.shape[0]
    lam, G = _criterion_grad(scf_features(x, y, T, s), 0, TRAIN_REG)
    Gs, Gc = G[:, :J], G[:, J:]
    gT = np.zeros_like(T)
    gs = 0.0
    for v, sign in ((x, 1.0), (y, -1.0)):
        vs = v / s
        u = vs @ T.T
        r2 = np.sum(vs * vs, axis=1)[:, None]
        fv = np.exp(-r2 / 2.0)
        su, cu = np.sin(u) * fv, np.cos(u) * fv
        # d/dT: the sine part cos(u) f v/s, the cosine part -sin(u) f v/s
        gT += sign * ((Gs * cu - Gc * su).T @ vs)
        # d/ds: du/ds = -u/s, df/ds = f r2/s
        gs += sign * float(np.sum(Gs * (-cu * u + su * r2) + Gc * (su * u + cu * r2)) / s)
    return lam, gT, gs * s


def fsic_criterion(x: np.ndarray, y: np.ndarray, V: np.ndarray, W: np.ndarray, sx2: float,
                   sy2: float) -> tuple[float, np.ndarray, np.ndarray, float, float]:
    """The NFSIC training criterion and its gradients with respect to the locations and
    the log widths."""
    K, Dx = _gauss(x, V, sx2)
    L, Dy = _gauss(y, W, sy2)
    Kt, Lt = K - K.mean(0), L - L.mean(0)
    lam, GM = _criterion_grad(Kt * Lt, 0, TRAIN_REG)
    A = GM * Lt
    HK = (A - A.mean(0)) * K          # d lambda / d K, times K
    B = GM * Kt
    HL = (B - B.mean(0)) * L
    gV = (HK.T @ x - HK.sum(0)[:, None] * V) / sx2
    gW = (HL.T @ y - HL.sum(0)[:, None] * W) / sy2
    return (lam, gV, gW, float(np.sum(HK * Dx) / (2.0 * sx2)),
            float(np.sum(HL * Dy) / (2.0 * sy2)))


def learn_me(x: np.ndarray, y: np.ndarray, J: int, gen: np.random.Generator,
             width: float | None = None, max_iter: int = 200) -> Learned:
    """ME: the locations and the Gaussian width ``s^2`` maximising the training lambda.

    Initial locations from Gaussians fitted to each sample; initial width the
    best of ``med^2 2^k``, ``k`` in 30 steps from -3 to 4 (the authors'
    grid); then L-BFGS-B on the locations and ``log s^2`` (bounded to
    ``[0.05, 5000] med^2``). A given `width` (``s^2``) is held fixed.
    """
    d = x.shape[1]
    V0 = _init_2randn(x, y, J, gen)
    med2 = _med2(np.vstack([x, y]))
    if width is None:
        grid = med2 * 2.0 ** np.linspace(-3, 4, 30)
        vals = [_value(me_features(x, y, V0, s2)) for s2 in grid]
        s20 = float(grid[_grid_best(vals)])
    else:
        s20 = float(width)
    fixed = width is not None

    def f(p: np.ndarray) -> tuple[float, np.ndarray]:
        V = p[:J * d].reshape(J, d)
        s2 = s20 if fixed else float(np.exp(p[-1]))
        lam, gV, gs = me_criterion(x, y, V, s2)
        return lam, np.concatenate([gV.ravel()] + ([] if fixed else [[gs]]))

    p0 = np.concatenate([V0.ravel(), [] if fixed else [np.log(s20)]])
    bounds: list[tuple[float | None, float | None]] = [(None, None)] * (J * d)
    if not fixed:
        bounds.append(_log_bounds(med2, _WIDE_BOUNDS))
    init = f(p0)[0]
    p, crit, ok, it = _maximise(f, p0, bounds, max_iter)
    return Learned(p[:J * d].reshape(J, d), s20 if fixed else float(np.exp(p[-1])), crit,
                   init, ok, it)


def learn_scf(x: np.ndarray, y: np.ndarray, J: int, gen: np.random.Generator,
              width: float | None = None, max_iter: int = 200) -> Learned:
    """SCF: the frequencies and the width ``s`` maximising the training lambda.

    Initial frequencies standard normal; initial width the best of the
    authors' grid (``mean sd sqrt(d) 2^k``, ``k`` in 20 steps from -4 to 3,
    and ``2^k``, ``k`` in 20 steps from -4 to 4); then L-BFGS-B on the
    frequencies and ``log s`` (bounded to ``[1e-4, 1e4]^(1/2) med``).
    """
    d = x.shape[1]
    T0 = gen.standard_normal((J, d))
    z = np.vstack([x, y])
    med = float(np.sqrt(_med2(z)))
    if width is None:
        mean_sd = float(np.mean(np.std(z, axis=0)))
        grid = np.sort(np.concatenate([mean_sd * 2.0 ** np.linspace(-4, 3, 20) * d ** 0.5,
                                       2.0 ** np.linspace(-4, 4, 20)]))
        vals = [_value(scf_features(x, y, T0, s)) for s in grid]
        s0 = float(grid[_grid_best(vals)])
    else:
        s0 = float(width)
    fixed = width is not None
    lo = np.log(med * np.sqrt(_WIDE_BOUNDS[0]))
    hi = np.log(med * np.sqrt(_WIDE_BOUNDS[1]))
    lo, hi = min(lo, np.log(s0)), max(hi, np.log(s0))

    # the optimiser's variables are the frequencies in the data's units, W = T / s, and
    # log s: for wide windows (s large, f ~ 1) the criterion depends on T / s alone, a
    # ridge along log s that the variables (T, log s) would have to follow diagonally
    def f(p: np.ndarray) -> tuple[float, np.ndarray]:
        s = s0 if fixed else float(np.exp(p[-1]))
        T = p[:J * d].reshape(J, d) * s
        lam, gT, gs = scf_criterion(x, y, T, s)
        g = [(gT * s).ravel()] + ([] if fixed else [[gs + float(np.sum(gT * T))]])
        return lam, np.concatenate(g)

    p0 = np.concatenate([(T0 / s0).ravel(), [] if fixed else [np.log(s0)]])
    bounds: list[tuple[float | None, float | None]] = [(None, None)] * (J * d)
    if not fixed:
        bounds.append((lo, hi))
    init = f(p0)[0]
    p, crit, ok, it = _maximise(f, p0, bounds, max_iter)
    s = s0 if fixed else float(np.exp(p[-1]))
    return Learned(p[:J * d].reshape(J, d) * s, s, crit, init, ok, it)


def learn_fsic(x: np.ndarray, y: np.ndarray, J: int, gen: np.random.Generator,
               widths: tuple[float | None, float | None] = (None, None), max_iter: int = 200,
               n_cand: int = 20) -> Learned:
    """NFSIC: the paired locations ``(v_j, w_j)`` and the widths ``s_x^2, s_y^2``.

    Initial locations: the best (by the training lambda, Gaussian widths
    ``2 med^2``) of `n_cand` random subsets of `J` observed pairs (the
    authors' ``init_check_subset``); initial widths the best pair of
    ``med^2 2^k``, ``k`` in -3, -1.5, 0, 1.5, 3, for each variable; then
    L-BFGS-B on the locations and the log widths, bounded to
    ``[0.05, 5000] med^2`` as the authors bound them.
    """
    n, dx = x.shape
    dy = y.shape[1]
    mx2, my2 = _med2(x), _med2(y)
    best, V0, W0 = -np.inf, x[:J], y[:J]
    for _ in range(n_cand):
        idx = gen.choice(n, size=J, replace=False)
        val = _value(fsic_features(x, y, x[idx], y[idx], 2 * mx2, 2 * my2))
        if val > best:
            best, V0, W0 = val, x[idx], y[idx]
    factors = 2.0 ** np.linspace(-3, 3, 5)
    gx = [widths[0]] if widths[0] is not None else list(mx2 * factors)
    gy = [widths[1]] if widths[1] is not None else list(my2 * factors)
    vals = [[_value(fsic_features(x, y, V0, W0, a, b)) for b in gy] for a in gx]
    i, j = np.unravel_index(_grid_best([v for row in vals for v in row]), (len(gx), len(gy)))
    sx0, sy0 = float(gx[i]), float(gy[j])
    fx, fy = widths[0] is not None, widths[1] is not None

    def f(p: np.ndarray) -> tuple[float, np.ndarray]:
        V = p[:J * dx].reshape(J, dx)
        W = p[J * dx:J * (dx + dy)].reshape(J, dy)
        rest = p[J * (dx + dy):]
        k = 0
        sx2 = sx0
        if not fx:
            sx2, k = float(np.exp(rest[0])), 1
        sy2 = sy0 if fy else float(np.exp(rest[k]))
        lam, gV, gW, gx_, gy_ = fsic_criterion(x, y, V, W, sx2, sy2)
        return lam, np.concatenate([gV.ravel(), gW.ravel()] + ([] if fx else [[gx_]])
                                   + ([] if fy else [[gy_]]))

    p0 = np.concatenate([V0.ravel(), W0.ravel()] + ([] if fx else [[np.log(sx0)]])
                        + ([] if fy else [[np.log(sy0)]]))
    bounds: list[tuple[float | None, float | None]] = [(None, None)] * (J * (dx + dy))
    if not fx:
        bounds.append(_log_bounds(mx2))
    if not fy:
        bounds.append(_log_bounds(my2))
    init = f(p0)[0]
    p, crit, ok, it = _maximise(f, p0, bounds, max_iter)
    rest = p[J * (dx + dy):]
    sx2 = sx0 if fx else float(np.exp(rest[0]))
    sy2 = sy0 if fy else float(np.exp(rest[-1]))
    return Learned(p[:J * dx].reshape(J, dx), sx2, crit, init, ok, it,
                   locations_y=p[J * dx:J * (dx + dy)].reshape(J, dy), width_y=sy2)
