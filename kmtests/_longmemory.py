r"""Long memory: an ARFIMA(1, d, 0) model of a series, and the self-normalised drift test
whose null it calibrates.

Block permutations keep the level when the dependence is shorter than the blocks. A
long-memory series (autocorrelations decaying as ``k^(2d - 1)``) has none shorter, and
within windows of a few hundred points its far autocorrelations do not show: the
block-length rules give it short blocks (two windows of an ARFIMA(0, 0.3, 0) series
rejected 32/300 at 5% with ``blocks="auto"`` at n = 200, 32/200 at n = 500; see
``benchmarks/README.md``). This module is the alternative :func:`kmtests.timeseries.drift_test`
takes there:

* :func:`whittle_arfima` — ARFIMA(1, d, 0) fitted by the Whittle likelihood on the
  periodograms of the windows, each centred on its own mean (a shift between the windows
  does not enter the fit). It tells an AR(1) series with phi = 0.8 (fitted d near 0) from
  an ARFIMA(0, 0.3, 0) one (fitted phi near 0), which the windows' autocorrelations do not;
* :func:`arfima_paths` — exact Gaussian ARFIMA(1, d, 0) paths: fractional noise by the
  circulant embedding of its autocovariance (Davies & Harte 1987), then the AR(1) filter
  after a burn-in;
* :func:`model_arrangements` — the null's rearrangements: position ``t`` gets the
  observation whose rank (in the ranking series) is the rank of a simulated path at ``t``.
  The rearranged series has the data's values and the fitted model's Gaussian-copula
  dependence (the permutations of an i.i.d. sample when ``d = phi = 0``);
* :func:`selfnormalized` — the statistic: the difference of the windows' means of the
  kernel feature series (:func:`kmtests._serial.feature_series`) over its
  self-normalising matrix, the windows' sums of outer products of their centred partial
  sums (Shao & Zhang 2010 at a known split; Shao 2010 for vectors). Its scale grows with
  the long-run variance as the difference does, so a fitted model that is somewhat off
  moves its law less than that of a raw MMD (measured: the MMD with the same
  rearrangements rejected 31/300 ARFIMA and 49/300 AR(1) phi = 0.95 nulls at n = 200,
  the self-normalised statistic 21/300 and 18/300).

References: Davies & Harte (1987), Biometrika 74; Shao (2010), JRSS-B 72; Shao & Zhang
(2010), JASA 105; Fox & Taqqu (1986), Ann. Statist. 14 (Whittle estimation of ARFIMA).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ArfimaFit", "arfima_autocovariance", "arfima_paths", "is_long_memory",
           "model_arrangements", "near_unit_root", "selfnormalized", "whittle_arfima"]

#: the longest burn-in of the AR(1) filter (phi <= 0.99: its start is forgotten to
#: 0.99^600 < 0.3%)
_BURN = 600

#: the bounds of the fit: |d| < 1/2 (stationary, invertible), phi in [-0.9, 0.99]
_PHI_BOUNDS, _D_BOUNDS = (-0.9, 0.99), (-0.45, 0.45)

#: long memory, for ``memory="auto"``: fitted d above this with fitted phi below
#: ``_SHORT_PHI`` (the ridge: a strong AR(1) series fits phi near its own with d near 0,
#: or a smaller phi with a larger d). Measured on windows of 300 series each at n = 200
#: (500): ARFIMA(0, 0.3, 0) 79% (96%); AR(1) phi = 0.8 5% (1%); phi = 0.5 11%; GARCH(1,1)
#: 8% (1%); i.i.d. 4%; MA(2) 1%
_LONG_D, _SHORT_PHI = 0.15, 0.3

#: a root near one: fewer effective observations ``n (1 - phi) / (1 + phi)`` of the fitted
#: phi than this also take the self-normalised test (phi > 0.80 at n = 200, 0.92 at
#: n = 500, 0.98 at n = 2000). Block permutations (with their random rotations,
#: :class:`kmtests.problems.schemes.Blocks`) rejected 26-29/300 two-window AR(1) nulls
#: with phi = 0.9 at n = 200 on five sets (band 6-25), 16-22/300 at phi = 0.9-0.95 at
#: n = 2000. The fixed threshold before (phi > 0.85) left phi = 0.9 at n = 200 at 27 and
#: 29/300 on two sets; phi > 0.8 sent too many series of 500 (83-103 of 300 shifts found
#: at phi = 0.8, against 102-121 with this rule). Chosen among seven rules on four sets
#: of series (``benchmarks/dependent_memory.py --rules``), checked on a fifth
#: (``benchmarks/README.md``, "Rotated blocks")
_FEW_EFFECTIVE = 22.0

#: ... with fitted d above this: the likelihood's ridge also fits some AR(1) series with
#: phi = 0.5-0.6 as phi near 0.86 with d near -0.4 (anti-persistent, no root near one;
#: 20 of 300 phi = 0.5 series at n = 200). Measured on four sets of series
#: (``benchmarks/README.md``): with -0.2 every null cell but GARCH at n = 200 stayed in
#: the band and block permutations kept these series; with -0.1 AR(1) series with
#: phi = 0.95 at n = 200 whose fitted d was in (-0.2, -0.1) went to block
#: permutations, and one set rejected 29/300
_NEAR_UNIT_D = -0.2


@dataclass(frozen=True)
class ArfimaFit:
    """An ARFIMA(1, d, 0) model fitted to a series (see :func:`whittle_arfima`)."""

    #: the AR(1) coefficient
    phi: float
    #: the fractional difference (long memory when positive)
    d: float

    def __str__(self) -> str:
        return f"ARFIMA(1, d, 0) with phi = {self.phi:.2f}, d = {self.d:.2f}"


def near_unit_root(fit: ArfimaFit, n: int) -> bool:
    """Whether `fit`'s AR root leaves fewer than 22 effective observations in `n`,
    ``n (1 - phi) / (1 + phi) < 22``, with ``d > -0.2`` (see :data:`_FEW_EFFECTIVE`)."""
    return bool(n * (1.0 - fit.phi) < _FEW_EFFECTIVE * (1.0 + fit.phi)
                and fit.d > _NEAR_UNIT_D)


def is_long_memory(fit: ArfimaFit, n: int) -> bool:
    """Whether `fit` (of a series of `n` observations) calls for the self-normalised test
    with ``memory="auto"``: long memory (``d > 0.15`` with ``phi < 0.3``) or a root near
    one (:func:`near_unit_root`).

    Examples
    --------
    >>> is_long_memory(ArfimaFit(0.85, 0.0), 200), is_long_memory(ArfimaFit(0.85, 0.0), 500)
    (True, False)
    """
    return bool((fit.d > _LONG_D and fit.phi < _SHORT_PHI) or near_unit_root(fit, n))


def _periodogram(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Fourier frequencies ``2 pi j / m`` (``0 < j < m / 2``) of a window and its
    periodogram, the window centred on its own mean."""
    m = w.shape[0]
    j = np.arange(1, (m + 1) // 2)
    per = np.abs(np.fft.rfft(w - w.mean())[j]) ** 2 / (2.0 * np.pi * m)
    return 2.0 * np.pi * j / m, per


def _whittle_parts(series: np.ndarray, windows: tuple[int, ...] = ()
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The windows' pooled periodogram ordinates and, at their frequencies,
    ``log |2 sin(l / 2)|`` and ``cos l`` (see :func:`whittle_arfima`)."""
    x = np.asarray(series, dtype=np.float64)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise ValueError("the ARFIMA fit needs one finite series.")
    sizes = tuple(windows) or (x.shape[0],)
    edges = np.cumsum((0,) + sizes)
    parts = [_periodogram(x[lo:hi]) for lo, hi in zip(edges[:-1], edges[1:])]
    lam = np.concatenate([p[0] for p in parts])
    per = np.concatenate([p[1] for p in parts])
    if lam.size < 8 or not np.any(per > 0):
        raise ValueError("the ARFIMA fit needs windows of at least 9 observations that "
                         "are not constant.")
    return per, np.log(np.abs(2.0 * np.sin(lam / 2.0))), np.cos(lam)


def _whittle_objective(series: np.ndarray, windows: tuple[int, ...] = ()) -> Any:
    """The profile Whittle objective of ARFIMA(1, d, 0) on the windows' periodograms and
    its gradient, as a function of ``(phi, d)`` (see :func:`whittle_arfima`)."""
    per, log_sin, cos = _whittle_parts(series, windows)
    return _objective(per, log_sin, cos)


def _objective(per: np.ndarray, log_sin: np.ndarray, cos: np.ndarray) -> Any:
    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        # with L the log of the spectral shape, f = log mean(I e^-L) + mean(L)
        phi, d = theta
        q = 1.0 - 2.0 * phi * cos + phi * phi
        log_shape = -2.0 * d * log_sin - np.log(q)
        w = per * np.exp(-log_shape)
        mw = np.mean(w)
        grads = ((2.0 * cos - 2.0 * phi) / q, -2.0 * log_sin)   # dL/dphi, dL/dd
        jac = np.array([np.mean(g) - np.mean(w * g) / mw for g in grads])
        return float(np.log(mw) + np.mean(log_shape)), jac

    return objective


#: the grid the fit starts from (its best point; the likelihood has a ridge along
#: phi ~ d, and a start on the wrong side of it can end in the other local minimum)
_GRID_PHI = np.linspace(_PHI_BOUNDS[0], _PHI_BOUNDS[1], 20)
_GRID_D = np.linspace(_D_BOUNDS[0], _D_BOUNDS[1], 19)


def _grid_start(per: np.ndarray, log_sin: np.ndarray, cos: np.ndarray) -> np.ndarray:
    """The best ``(phi, d)`` of the grid, the objective evaluated at all its points at
    once: ``log shape = -2 d log_sin - log q(phi)``, so its exponential factorises."""
    log_q = np.log(1.0 - 2.0 * _GRID_PHI[:, None] * cos + _GRID_PHI[:, None] ** 2)
    # mean_l I_l q_l(phi) |2 sin|^(2d): (phi, l) x (l, d)
    mw = (per * np.exp(log_q)) @ np.exp(2.0 * _GRID_D[None, :] * log_sin[:, None]) / per.size
    f = np.log(mw) - 2.0 * _GRID_D[None, :] * log_sin.mean() - log_q.mean(axis=1)[:, None]
    i, j = np.unravel_index(np.argmin(f), f.shape)
    return np.array([_GRID_PHI[i], _GRID_D[j]])


def whittle_arfima(series: np.ndarray, windows: tuple[int, ...] = ()) -> ArfimaFit:
    """ARFIMA(1, d, 0) fitted to a series by the Whittle likelihood.

    The periodograms of the `windows` (sizes, in order; default the whole series), each
    centred on its own mean, are pooled; the innovation variance is profiled out. L-BFGS-B
    (analytic gradient) starts from the best point of a 20 x 19 grid of ``(phi, d)``.

    Parameters
    ----------
    series : ndarray, shape (n,)
        The series in time order.
    windows : tuple of int, optional
        The sizes of consecutive windows (summing to ``n``).

    Returns
    -------
    ArfimaFit

    Examples
    --------
    >>> import numpy as np
    >>> gen = np.random.default_rng(0)
    >>> e, x = gen.normal(size=4000), np.zeros(4000)
    >>> for t in range(1, 4000):
    ...     x[t] = 0.6 * x[t - 1] + e[t]
    >>> fit = whittle_arfima(x)
    >>> print(f"{fit.phi:.1f} {abs(fit.d) < 0.1}")
    0.6 True
    """
    from scipy.optimize import minimize

    parts = _whittle_parts(series, windows)
    best = minimize(_objective(*parts), _grid_start(*parts), method="L-BFGS-B", jac=True,
                    bounds=[_PHI_BOUNDS, _D_BOUNDS])
    return ArfimaFit(float(best.x[0]), float(best.x[1]))


def arfima_autocovariance(d: float, n: int) -> np.ndarray:
    """The autocovariances at lags ``0..n-1`` of ARFIMA(0, d, 0) with unit innovations:
    ``gamma_0 = Gamma(1 - 2d) / Gamma(1 - d)^2`` and
    ``rho_k = prod_{j=1..k} (j - 1 + d) / (j - d)``.

    Examples
    --------
    >>> arfima_autocovariance(0.0, 3).tolist()
    [1.0, 0.0, 0.0]
    >>> print(f"{arfima_autocovariance(0.3, 2)[1] / arfima_autocovariance(0.3, 2)[0]:.4f}")
    0.4286
    """
    from scipy.special import gammaln

    k = np.arange(n, dtype=np.float64)
    if d == 0.0:
        return (k == 0).astype(np.float64)
    g0 = math.exp(gammaln(1.0 - 2.0 * d) - 2.0 * gammaln(1.0 - d))
    rho = np.concatenate([[1.0], np.cumprod((k[1:] - 1.0 + d) / (k[1:] - d))])
    return g0 * rho


def arfima_paths(fit: ArfimaFit, n: int, rng: np.random.Generator, size: int) -> np.ndarray:
    """`size` exact Gaussian ARFIMA(1, d, 0) paths of length `n` (rows).

    Fractional noise by Davies & Harte's circulant embedding, then the AR(1) filter after
    a burn-in that forgets its start to ``|phi|^burn <= 1e-3`` (at most 600). Row ``b`` takes the ``b``-th block of `rng`'s normals, so drawing in
    batches of any size gives the same rows.
    """
    from scipy.signal import lfilter

    # the AR(1) filter's start from 0 forgotten to |phi|^burn <= 1e-3 (at most 600)
    burn = 0 if fit.phi == 0.0 else min(_BURN, math.ceil(math.log(1e-3)
                                                          / math.log(abs(fit.phi))))
    length = n + burn
    g = arfima_autocovariance(fit.d, length + 1)
    c = np.concatenate([g, g[-2:0:-1]])
    # nonnegative for |d| < 1/2, up to rounding
    lam = np.sqrt(np.maximum(np.fft.fft(c).real, 0.0) / c.size)
    w = rng.standard_normal((size, 2, c.size))
    u = np.fft.fft(lam * (w[:, 0] + 1j * w[:, 1]), axis=1).real[:, :length]
    if fit.phi == 0.0:
        return u
    return lfilter([1.0], [1.0, -fit.phi], u, axis=1)[:, length - n:]


def model_arrangements(order: np.ndarray, fit: ArfimaFit, rng: np.random.Generator,
                       size: int) -> np.ndarray:
    """`size` rearrangements (int64 rows) of the observations by the ranks of simulated
    paths: position ``t`` of row ``b`` holds observation ``order[rank of path_b[t]]``.

    `order` lists the observations from the smallest to the largest value of the ranking
    series (``np.argsort``). Row ``b`` is the ``b``-th draw of `rng`'s stream.

    Examples
    --------
    >>> import numpy as np
    >>> rows = model_arrangements(np.array([2, 0, 1]), ArfimaFit(0.0, 0.0),
    ...                           np.random.default_rng(0), 4)
    >>> rows.shape, sorted(rows[0].tolist())
    ((4, 3), [0, 1, 2])
    """
    paths = arfima_paths(fit, order.shape[0], rng, size)
    ranks = np.argsort(np.argsort(paths, axis=1, kind="stable"), axis=1, kind="stable")
    return np.ascontiguousarray(order[ranks], dtype=np.int64)


def selfnormalized(features: np.ndarray, n_x: int) -> np.ndarray:
    """The self-normalised statistic of drift at row `n_x` for each stack of `features`.

    ``T = D' V^+ D`` with ``D`` the difference of the windows' mean rows and
    ``V = sum_t S_t S_t' / n_x^3 + sum_t R_t R_t' / n_y^3``: ``S_t`` the partial sums of
    the first window's centred rows (forward), ``R_t`` those of the second's (backward).

    Parameters
    ----------
    features : ndarray, shape (n, k) or (b, n, k)
        The feature rows in time order (a stack: one rearrangement per entry).
    n_x : int
        The size of the first window.

    Returns
    -------
    ndarray, shape (b,)

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.0, 1.0, 0.0, 3.0, 2.0, 3.0])
    >>> print(f"{selfnormalized(x[:, None], 3)[0]:.2f}")   # D = -7/3, V = 2/243 + 2/243
    330.75
    """
    f = np.asarray(features, dtype=np.float64)
    if f.ndim == 2:
        f = f[None]
    a, b = f[:, :n_x], f[:, n_x:]
    ma, mb = a.mean(axis=1), b.mean(axis=1)
    s = np.cumsum(a - ma[:, None], axis=1)
    r = np.cumsum((b - mb[:, None])[:, ::-1], axis=1)
    v = (np.einsum("bti,btj->bij", s, s) / n_x ** 3
         + np.einsum("bti,btj->bij", r, r) / b.shape[1] ** 3)
    dv = ma - mb
    # V^+ by the symmetric eigendecomposition: directions of V below 1e-10 of its
    # largest eigenvalue (a column constant within both windows) are left out
    vals, vecs = np.linalg.eigh(v)
    top = vals[:, -1:]
    keep = vals > 1e-10 * np.where(top > 0, top, 1.0)
    proj = np.einsum("bij,bi->bj", vecs, dv)
    inv = np.where(keep, 1.0 / np.where(keep, vals, 1.0), 0.0)
    return np.einsum("bj,bj->b", proj * proj, inv)
