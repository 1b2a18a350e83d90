r"""AR-sieve prewhitening of two windows of one series, for the drift-test variants of
``dependent_variants.py`` (issue 30, third session). Not in the package: the
prewhitened test did not keep the level as well as ``blocks="auto"`` and had less
power at n >= 500 (``benchmarks/README.md``, "Prewhitening").

1. an AR(p) model is fitted by Yule-Walker (the Levinson-Durbin recursion of
   :func:`statsmodels.tsa.stattools.levinson_durbin`) to autocovariances pooled over
   the two windows, each window centred on its own mean (a shift between the windows
   is not taken for persistence); the order ``p <= min(10 log10 n, n/10, m/4)`` (``m``
   the shorter window) is the one of smallest AIC, ``n log sigma_p^2 + 2p`` (or BIC,
   ``+ p log n``);
2. the residuals ``e_t = x_t - sum_k phi_k x_{t-k}`` are computed within each window
   (its first ``p`` points dropped; the raw series, not centred: a shift ``delta``
   of the mean shows in the residuals as ``delta (1 - sum_k phi_k)``).

A multivariate series is prewhitened column by column (an AR model of each column
on its own past, no cross terms); every column's residuals then drop the first
``max p`` points of each window, so the rows stay aligned.

The block length of the test on the residuals is the one ``blocks="auto"`` chooses
on the *raw* windows (:func:`kmtests._serial.auto_length`), at most the residuals'
rows / 8: on the residuals the rule sees little dependence and chooses blocks too
short to keep the level where the AR fit is poor (the lead's pilot: 36/300 and
48/300 at phi = 0.95 and ARFIMA, n = 200).

The rows ``pw drift_test`` of the tables ran the package prototype of commit
2710c2d (``drift_test(prewhiten="ar")``, removed in the next commit): the same
residuals and length through ``two_sample_test`` (``MMD^2_u``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kmtests._serial import AutoLength

__all__ = ["ARFit", "fit_ar", "max_order", "prewhiten_windows", "residual_length",
           "residuals", "window_autocovariances"]


def max_order(n: int, shortest: int) -> int:
    """The largest AR order tried: ``min(10 log10 n, n/10, shortest/4)``."""
    return max(0, min(int(10 * math.log10(n)), n // 10, shortest // 4))


def window_autocovariances(x: np.ndarray, cuts: tuple[int, ...], max_lag: int) -> np.ndarray:
    """Autocovariances at lags ``0..max_lag`` pooled over the windows
    ``x[cuts[i]:cuts[i+1]]``, each centred on its own mean, divided by the number of
    points (the biased form, whose Toeplitz matrix is positive semi-definite)."""
    g = np.zeros(max_lag + 1)
    total = 0
    for a, b in zip(cuts[:-1], cuts[1:]):
        w = x[a:b] - x[a:b].mean()
        for k in range(min(max_lag, len(w) - 1) + 1):
            g[k] += w[k:] @ w[:len(w) - k]
        total += len(w)
    return g / total


def fit_ar(x: np.ndarray, cuts: tuple[int, ...], order_cap: int,
           criterion: str = "aic") -> np.ndarray:
    """The Yule-Walker AR coefficients ``phi_1..phi_p`` of the one-dimensional `x` from
    the windows' pooled autocovariances, ``p <= order_cap`` chosen by AIC
    (``n log sigma_p^2 + 2p``; `criterion` ``"bic"``: ``+ p log n``); an empty array
    for ``p = 0``."""
    from statsmodels.tsa.stattools import levinson_durbin

    g = window_autocovariances(x, cuts, order_cap)
    if not g[0] > 0:
        raise ValueError("prewhitening needs a series that varies within its windows; a "
                         "column is constant within each window (test it with "
                         "prewhiten=None).")
    n = int(cuts[-1] - cuts[0])
    penalty = 2.0 if criterion == "aic" else math.log(n)
    best, coefs = n * math.log(g[0]), np.zeros(0)
    if order_cap == 0:
        return coefs
    with np.errstate(invalid="ignore", divide="ignore"):
        fit = levinson_durbin(g, nlags=order_cap, isacov=True)
    sigma, phi = np.asarray(fit[3]), np.asarray(fit[4])
    for k in range(1, order_cap + 1):
        if not sigma[k] > 0 or not np.isfinite(phi[1:k + 1, k]).all():
            break                       # an exact fit: no higher order is defined
        aic = n * math.log(sigma[k]) + penalty * k
        if aic < best:
            best, coefs = aic, phi[1:k + 1, k].copy()
    return coefs


def residuals(x: np.ndarray, start: int, coefs: np.ndarray, drop: int) -> np.ndarray:
    """``e_t = x_t - sum_k coefs[k-1] x_{t-k}`` for ``t = start..len(x)-1`` (one window,
    one column; ``drop >= len(coefs)`` the points dropped at its start)."""
    e = x[start:].astype(np.float64, copy=True)
    for k, c in enumerate(coefs, start=1):
        e -= c * x[start - k:len(x) - k]
    return e[drop - start:] if drop > start else e


@dataclass(frozen=True)
class ARFit:
    """The AR models of the columns of a series (Yule-Walker, order by AIC)."""

    #: the coefficients ``phi_1..phi_p`` of each column
    coefs: tuple[np.ndarray, ...]
    #: the largest order tried
    order_cap: int

    @property
    def orders(self) -> tuple[int, ...]:
        return tuple(len(c) for c in self.coefs)

    @property
    def order(self) -> int:
        """The largest order over the columns (the points dropped from each window)."""
        return max(self.orders, default=0)


def prewhiten_windows(series: np.ndarray, split: int, criterion: str = "aic"
                      ) -> tuple[np.ndarray, np.ndarray, ARFit]:
    """The AR residuals of the windows ``series[:split]`` and ``series[split:]`` (rows
    in time order, shape (n, d)), and the fit. Each window loses its first ``p`` rows,
    ``p`` the largest order over the columns."""
    a = np.asarray(series, dtype=np.float64)
    if a.ndim == 1:
        a = a[:, None]
    n = a.shape[0]
    cuts = (0, split, n)
    cap = max_order(n, min(split, n - split))
    coefs = tuple(fit_ar(a[:, j], cuts, cap, criterion) for j in range(a.shape[1]))
    fit = ARFit(coefs, cap)
    p = fit.order                       # at most a quarter of the shorter window
    parts = []
    for a_w in (a[:split], a[split:]):
        cols = [residuals(a_w[:, j], len(c), c, p) for j, c in enumerate(coefs)]
        parts.append(np.column_stack(cols))
    return parts[0], parts[1], fit


def residual_length(raw: AutoLength, rows: int) -> int:
    """`raw`'s block length (``blocks="auto"`` on the raw windows) for residual windows
    of `rows` rows in all: the same length, at most ``rows / fewest``."""
    return max(1, min(raw.block, rows // raw.fewest))
