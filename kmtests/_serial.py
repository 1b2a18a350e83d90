r"""Serial dependence: automatic block lengths and the check for autocorrelated data.

* :func:`politis_white` — the Politis & White (2004) optimal block lengths of a
  series, with the correction of Patton, Politis & White (2009), for the
  stationary bootstrap (``b_sb``) and the circular block bootstrap (``b_cb``);
  the tuning (the band ``2 sqrt(log10(n) / n)``, ``K_n = max(5, log10 n)``
  consecutive insignificant autocorrelations, the cap
  ``ceil(min(3 sqrt(n), n / 3))``) is that of Patton's MATLAB program and of
  ``arch.bootstrap.optimal_block_length``, whose numbers it reproduces
  (``tests/test_timeseries.py`` against ``benchmarks/reference/arch_block_lengths.json``,
  made by ``benchmarks/reference/arch_block_lengths.py``); :func:`politis_white_columns`
  computes it for every column of a matrix at once;
* :func:`feature_series` — the series whose dependence matters for a kernel
  statistic: the data's columns (their first 5 principal components if there are
  more) and the first 3 principal components of 64 random Fourier features of the
  Gaussian kernel (median-heuristic bandwidth): the kernel's feature map in a
  few coordinates, which sees the dependence of nonlinear features (e.g. the
  volatility clustering of GARCH returns, uncorrelated in the data themselves);
* :func:`volatility_series` and :func:`persistence` — dependence that the
  Politis-White truncation misses: the distances of the data to their (window's)
  median, whose autocorrelations are small but long-lived for GARCH returns, and
  the far lags ``M+1..2M`` (``M = ceil(sqrt(n))``) of every series (long memory,
  phi near 1), each judged by the z-score of a sum of autocorrelations;
* :func:`auto_length` — the rule of ``blocks="auto"`` and of the wild
  bootstrap's ``length="auto"``: from the largest Politis-White length over those
  series; for block permutations 3 times the circular-block length, rounded up (see
  ``_SCALE``), at least ``3M`` if :func:`persistence` exceeds 2 (``_PERSIST_Z``), at
  most ``n / 8`` for two windows (8 blocks) and ``n / 6`` for paired series (6
  blocks, 720 orders); for the AR(1) multipliers the stationary-bootstrap length
  (their covariance ``exp(-|s - t| / l)`` is the stationary bootstrap's
  ``(1 - 1/b)^|s - t|`` with ``b = l``), at most ``n / 4``. It warns
  (:class:`~kmtests.SerialDependenceWarning`) when the data hold fewer than 10
  effective observations (``_MIN_EFFECTIVE``): no automatic null keeps the level
  there; its sums over the series, and the median distance and the centred features
  of :func:`feature_series`, are compiled (:mod:`kmtests._jit_serial`);
* :func:`serial_check` — a cheap check (the lag-1 autocorrelation of the data's
  columns and of their squares, after the best single shift in mean is removed:
  concatenated groups are not a series; ``O(n d)``) that warns
  (:class:`~kmtests.SerialDependenceWarning`) when a null for i.i.d. data meets
  series whose dependence inflates its level.

Examples
--------
>>> import numpy as np
>>> gen = np.random.default_rng(0)
>>> e = gen.normal(size=500)
>>> x = np.empty(500); x[0] = e[0]
>>> for t in range(1, 500):
...     x[t] = 0.8 * x[t - 1] + e[t]
>>> b_sb, b_cb = politis_white(x)
>>> print(f"{b_sb:.1f} {b_cb:.1f}")
15.6 17.8
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._warnings import SerialDependenceWarning

__all__ = ["AutoLength", "auto_length", "feature_series", "persistence", "politis_white",
           "politis_white_columns", "serial_check", "volatility_series"]

#: the block length is this multiple of the largest Politis-White circular-block length,
#: at most n / 8 (at least 8 blocks, so that the test can reject): the Politis-White
#: length is MSE-optimal for a variance, and too short for the level of a test
#: (measured, HSIC on two AR(1) series with phi = 0.95, n = 200, 100 pairs: 13, 8, 7
#: rejections at 5% with 1, 2, 3 times it; MMD between the halves of one series: 24, 14,
#: 6; benchmarks/README.md). The multipliers of the wild bootstrap take the
#: stationary-bootstrap length itself: longer ones made its level worse (27, 32, 34).
_SCALE = 3.0

#: random Fourier features drawn for the kernel feature series, and their components kept
_N_FEATURES, _N_COMPONENTS, _MAX_COLUMNS = 64, 3, 5


def politis_white(x: Any) -> tuple[float, float]:
    """The optimal block lengths ``(b_sb, b_cb)`` of a 1-d series (see the module docs).

    Parameters
    ----------
    x : array_like, 1-d
        The series (at least 8 observations).

    Returns
    -------
    tuple of float
        The stationary-bootstrap and the circular-block-bootstrap lengths, at most
        ``ceil(min(3 sqrt(n), n / 3))``; 1 for a constant series.
    """
    eps = np.asarray(x, dtype=np.float64).ravel()
    b_sb, b_cb = politis_white_columns(eps[:, None])
    return float(b_sb[0]), float(b_cb[0])


def politis_white_columns(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`politis_white` of each column of the 2-d `a` at once: the arrays of the
    stationary-bootstrap and the circular-block-bootstrap lengths."""
    eps = np.asarray(a, dtype=np.float64)
    n, d = eps.shape
    if n < 8:
        raise ValueError(f"an automatic block length needs at least 8 observations; got {n}.")
    eps = eps - eps.mean(axis=0)
    b_max = float(math.ceil(min(3.0 * math.sqrt(n), n / 3.0)))
    kn = max(5, int(math.log10(n)))
    # (at most n - 1 lags: a series of 8 has no lag 8)
    m_max = min(int(math.ceil(math.sqrt(n))) + kn, n - 1)
    band = 2.0 * math.sqrt(math.log10(n) / n)
    lags = np.arange(m_max + 1)
    # the lagged cross-products of every column: one pass over the lags (m_max ~ sqrt n)
    cross = np.empty((m_max + 1, d))
    for i in range(m_max + 1):
        np.einsum("tc,tc->c", eps[i:], eps[:n - i], out=cross[i])
    acv = cross / n
    # the autocorrelations as Patton's program and arch normalise them
    sq = np.vstack([np.zeros((1, d)), np.cumsum(eps * eps, axis=0)])
    v1 = sq[n] - sq[lags + 1]            # sums of eps[i + 1:] ** 2
    v2 = sq[n - lags - 1]                # sums of eps[:n - i - 1] ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        acorr = np.abs(cross) / np.sqrt(v1 * v2)
    small = (acorr < band).astype(np.int64)
    # the first run of kn insignificant lags among 1..m_max: the window sums of `small`
    run = np.cumsum(np.vstack([np.zeros((1, d), np.int64), small]), axis=0)
    full = (run[kn:m_max + 1] - run[:m_max + 1 - kn]) == kn   # row j: lags j..j+kn-1
    found = full.any(axis=0)
    opt_m = np.argmax(full, axis=0)
    m = np.where(found, np.minimum(2 * np.maximum(opt_m, 1), m_max), m_max)
    k = np.arange(1, m_max + 1)[:, None]
    kk = k / m[None, :]
    lam = np.where(kk <= 0.5, 1.0, 2.0 * (1.0 - kk)) * (k <= m[None, :])
    g = np.sum(2.0 * lam * k * acv[1:], axis=0)
    lr = acv[0] + np.sum(2.0 * lam * acv[1:], axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        b_sb = (2.0 * g * g / (2.0 * lr * lr)) ** (1 / 3) * n ** (1 / 3)
        b_cb = (2.0 * g * g / (4 / 3 * lr * lr)) ** (1 / 3) * n ** (1 / 3)
    # a negative estimate (strong dependence in a short series): long blocks
    zero_lr = lr == 0.0
    edge = np.where(g != 0.0, b_max, 1.0)
    b_sb = np.where(zero_lr, edge, np.minimum(b_sb, b_max))
    b_cb = np.where(zero_lr, edge, np.minimum(b_cb, b_max))
    flat = cross[0] <= 0.0               # a constant column
    return np.where(flat, 1.0, b_sb), np.where(flat, 1.0, b_cb)


def _principal(a: np.ndarray, k: int, raw: np.ndarray | None = None) -> np.ndarray:
    """The first `k` principal component scores of the columns of `a` (centred; a
    column constant up to rounding is a column of zeros, not rounding noise: constant
    relative to `raw`, the sums of squares of the columns before a centring within
    windows, by default those of `a`)."""
    if raw is None:
        raw = np.einsum("ij,ij->j", a, a)
    a = a - a.mean(axis=0)
    # constant up to rounding: a spread of at most n machine epsilons of the values (a
    # constant column minus its computed mean keeps a few)
    tol = (a.shape[0] * np.finfo(np.float64).eps) ** 2
    a[:, np.einsum("ij,ij->j", a, a) <= tol * raw] = 0.0
    if a.shape[1] <= k:
        return a
    # the top k eigenvectors of the columns x columns matrix (cheap for n >> columns)
    return a @ _top_eigenvectors(a.T @ a, k)


def _top_eigenvectors(g: np.ndarray, k: int) -> np.ndarray:
    """The eigenvectors of the `k` largest eigenvalues of the symmetric `g`, largest first.

    LAPACK's steps of ``dsyevr`` with the tridiagonal eigenvectors by ``dstemr`` (MRRR,
    which ``dsyevr`` runs only for all of them): the reduction ``dsytrd``, ``dstemr`` for
    the `k`, their back-transformation ``dormqr`` (``dormtr``'s work for a lower
    reduction). At 64 columns half of ``dsyevr``'s time (its bisection ``dstebz`` took as
    long as the reduction); the same vectors up to rounding and sign. ``dsyevr`` if MRRR
    fails."""
    from scipy.linalg import lapack  # (not at import: the problems import this module)

    m = g.shape[0]
    c, d, e, tau, info = lapack.dsytrd(g, lower=1)
    if info == 0:
        found, _, z, info = lapack.dstemr(d, np.append(e, 0.0), 2, 0.0, 0.0, m - k + 1, m)
        if info == 0 and found == k:
            v = z[:, :k].copy()
            v[1:], _, info = lapack.dormqr(b"L", b"N", c[1:, :-1], tau, v[1:], k)
            if info == 0:
                return v[:, ::-1]
    _, vecs, _, _, info = lapack.dsyevr(g, compute_v=1, range="I", il=m - k + 1, iu=m)
    if info != 0:  # pragma: no cover - LAPACK's failure to converge
        raise np.linalg.LinAlgError("the principal components did not converge")
    return vecs[:, :k][:, ::-1]


@functools.lru_cache(maxsize=8)
def _evenly(n: int, m: int) -> np.ndarray:
    """At most `m` evenly spaced row indices of `n` rows (read-only)."""
    out = np.linspace(0, n - 1, min(n, m)).astype(np.int64)
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=8)
def _draws(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The random Fourier features' frequencies (at bandwidth 1) and phases for `d`
    columns: a fixed seed, so the feature series are a function of the data (read-only)."""
    gen = np.random.default_rng(20040101)
    w = gen.standard_normal((d, _N_FEATURES))
    b = gen.uniform(0.0, 2.0 * np.pi, _N_FEATURES)
    w.flags.writeable = False
    b.flags.writeable = False
    return w, b


def feature_series(data: np.ndarray, windows: tuple[int, ...] = ()) -> np.ndarray:
    """The series whose dependence matters for a kernel statistic of `data` (rows in
    time order), as columns: the data's columns (or their first 5 principal
    components) and the first 3 principal components of random Fourier features of
    the Gaussian kernel with the median-heuristic bandwidth (a fixed seed: the series
    are a function of the data). `windows` (sizes) centres each window of rows on its
    own mean first (two samples: a shift between the windows is the alternative, not
    dependence)."""
    z = np.asarray(data, dtype=np.float64)
    if z.ndim == 1:
        z = z[:, None]
    n, d = z.shape
    top = np.max(np.abs(z), axis=0)
    z = z / np.where(top > 0, top, 1.0)      # (huge data must not overflow)
    z = z - z.mean(axis=0)
    sd = np.sqrt(np.einsum("ij,ij->j", z, z) / n)    # (np.std, in one pass)
    z /= np.where(sd > 0, sd, 1.0)
    # the median heuristic on at most 100 evenly spaced rows; the features' columns
    # centred (within the windows) by one compiled pass (:mod:`kmtests._jit_serial`)
    from ._jit_serial import kernel_features, median_distance  # numba loads on first use

    sub = z[_evenly(n, 100)]
    med = median_distance(np.sum(sub * sub, axis=1), (2.0 * sub) @ sub.T)
    width = med if med > 0 else 1.0
    w, b = _draws(d)
    edges = np.cumsum((0,) + tuple(windows)).astype(np.int64)
    feats = kernel_features(z @ (w / width), b, edges)
    if windows:
        # (a column constant within each window is then zeros, not rounding noise)
        raw = np.einsum("ij,ij->j", z, z)
        z = z.copy()
        for lo, hi in zip(edges[:-1], edges[1:]):
            z[lo:hi] -= z[lo:hi].mean(axis=0)
        zs = _principal(z, _MAX_COLUMNS, raw)
    else:
        zs = _principal(z, _MAX_COLUMNS)
    return np.hstack([zs, feats @ _top_eigenvectors(feats.T @ feats, _N_COMPONENTS)])


#: the persistence check (see :func:`persistence`): the lags it sums are ``1..M`` (the
#: volatility series) and ``M+1..2M`` (every series), ``M = ceil(sqrt(n))``; a sum of
#: autocorrelations more than this many standard errors (``sqrt(lags / n)``) above zero
#: is persistent dependence that the Politis-White truncation does not see, and the
#: block length is then at least ``_FLOOR * M``
_PERSIST_Z = 2.0

#: the length is then at least ``_FLOOR * M``: GARCH(1,1) windows at n = 500 (200 series
#: each, two sets) rejected 17/200 and 20/200 at 5% with ``2M``, 11/200 and 14/200 with
#: ``3M``; AR(1) windows with phi = 0.5 17/200 with either
_FLOOR = 3

#: the lags of short dependence (the Politis-White rule's own ``K_n`` at these sizes),
#: left out of the volatility series' sum: an AR or MA series has autocorrelated
#: absolute values at the first few lags, which its own rule already covers
_SHORT = 4

#: the fewest blocks the automatic length leaves: two windows 8 (70 splits of 4 + 4
#: blocks), paired series 6 (720 orders; measured, HSIC on two AR(1) with phi = 0.95 at
#: n = 200: 39/300 rejections at 5% with 8 blocks of 25, 18/300 with 6 of 34)
_MIN_BLOCKS_WINDOWS, _MIN_BLOCKS_PAIRED = 8, 6

#: warn when the data hold fewer effective observations than this, ``n (1 - r) / (1 + r)``
#: with ``r`` the largest lag-1 autocorrelation of the data's columns (the AR(1) rule):
#: no automatic null held the level there (AR(1) with phi = 0.95 at n = 200, effective
#: size about 8: HSIC with 6 blocks of 33 rejected 18/300, 23/300 and 31/300 on three
#: sets of 300 pairs at 5%, the AR wild bootstrap 68/300). Measured rates of the warning
#: (300 series each): AR(1) phi = 0.95 at n = 200 77%, at n = 500 7%; phi = 0.9 at
#: n = 200 23%; phi <= 0.8, MA(2), ARFIMA(0, 0.3, 0), GARCH(1,1) at n >= 200: 0%
_MIN_EFFECTIVE = 10.0


def volatility_series(data: np.ndarray, windows: tuple[int, ...] = ()) -> np.ndarray:
    """The distances of the data's standardised columns (their first 5 principal
    components if there are more) to their medians, centred (within `windows`): the
    series in which volatility clustering (GARCH returns) is autocorrelated, weakly at
    every lag but for long."""
    z = _volatility_data(data)
    a = np.empty_like(z)
    edges = np.cumsum((0,) + (tuple(windows) or (z.shape[0],)))
    for lo, hi in zip(edges[:-1], edges[1:]):
        a[lo:hi] = np.abs(z[lo:hi] - np.median(z[lo:hi], axis=0))
    return a - a.mean(axis=0)


def _volatility_data(data: np.ndarray) -> np.ndarray:
    """The columns whose distances to their medians are :func:`volatility_series`: the
    data scaled by their largest absolute values (their first 5 principal components)."""
    z = np.asarray(data, dtype=np.float64)
    if z.ndim == 1:
        z = z[:, None]
    top = np.max(np.abs(z), axis=0)
    return _principal(z / np.where(top > 0, top, 1.0), _MAX_COLUMNS)


def _acf_sum_z(a: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """For each (centred) column of `a`: the sum of its autocorrelations at lags
    ``lo..hi`` over its standard error under independence, ``sqrt((hi - lo + 1) / n)``."""
    n = a.shape[0]
    den = np.sum(a * a, axis=0)
    # sum_k sum_t a[t] a[t + k] = sum_t a[t] (a[t + lo] + ... + a[t + hi]), the inner sum
    # a difference of cumulative sums (O(n) per column)
    csum = np.vstack([np.zeros((1, a.shape[1])), np.cumsum(a, axis=0)])
    t = np.arange(n)
    ahead = csum[np.minimum(t + hi, n - 1) + 1] - csum[np.minimum(t + lo, n)]
    num = np.sum(a * ahead, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    return r / math.sqrt((hi - lo + 1) / n)


def _lag1_of(a: np.ndarray) -> float:
    """The largest lag-1 autocorrelation of the (centred) columns of `a` (NumPy's; the
    rule runs the compiled one, :mod:`kmtests._jit_serial`, checked against this)."""
    den = np.sum(a * a, axis=0)
    num = np.sum(a[1:] * a[:-1], axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    return float(np.clip(r.max(initial=0.0), 0.0, 0.999))


def persistence(series: np.ndarray, volatility: np.ndarray) -> float:
    """The evidence of persistent dependence that the Politis-White rule misses: the
    largest z-score of a sum of autocorrelations, at the far lags ``M+1..2M`` of every
    series (long memory, phi near 1) and at the lags ``1..M`` of the volatility series
    (GARCH: autocorrelations of a few hundredths, each below the Politis-White band,
    for a hundred lags), ``M = ceil(sqrt(n))``. (NumPy's; the rule runs the compiled one,
    :mod:`kmtests._jit_serial`, checked against this.)"""
    n = series.shape[0]
    m = int(math.ceil(math.sqrt(n)))
    if n < 4 * m:
        return 0.0
    far = _acf_sum_z(series, m + 1, 2 * m)
    near = _acf_sum_z(volatility, _SHORT + 1, _SHORT + m)
    return float(max(far.max(initial=0.0), near.max(initial=0.0)))


@dataclass(frozen=True)
class AutoLength:
    """An automatic block (or multiplier) length and how it was chosen."""

    #: the block length of the block permutations
    block: int
    #: the memory of the AR(1) multipliers of the wild bootstrap (stationary-bootstrap rule)
    multiplier: float
    #: the number of series the lengths are the largest over
    n_series: int
    #: the length the rule asked for before the cap (at least ``3 ceil(sqrt(n))`` if the
    #: dependence was persistent), and the cap (``n`` over the fewest blocks)
    wanted: int = 0
    cap: int = 0
    #: the z-score of persistent dependence (see :func:`persistence`)
    persistent: float = 0.0
    #: the fewest blocks the cap leaves (8 for two windows, 6 for paired series)
    fewest: int = _MIN_BLOCKS_WINDOWS
    #: the effective number of observations, ``n (1 - r) / (1 + r)`` (see
    #: ``_MIN_EFFECTIVE``)
    effective: float = math.inf

    def _rule(self, which: str) -> str:
        return (f"the Politis-White rule ({which}; the largest over {self.n_series} data and "
                "kernel-feature series)")

    @property
    def capped(self) -> bool:
        """Whether the cap cut the length the rule asked for."""
        return self.wanted > self.block

    @property
    def rotations(self) -> bool:
        """Whether two windows' block permutations take random rotations of the series
        (:class:`kmtests.problems.schemes.Blocks` with `offsets`): not when the
        persistence check fired. There the dependence outlasts what the rule sees, the
        blocks are at their floor or cap, and the plain blocks' coarser null (70 splits
        of 8 blocks: a level of at most 2.9% at 5%) is the margin that held GARCH
        windows at n = 200 (23-25/300 against 29-35/300 with rotations;
        ``benchmarks/README.md``)."""
        return not self.persistent > _PERSIST_Z

    @property
    def block_rule(self) -> str:
        """The block-length rule, for reports."""
        few = f"n/{self.fewest}"
        text = "3 x " + self._rule("circular-block")
        if self.persistent > _PERSIST_Z:
            text += (f", at least {_FLOOR} ceil(sqrt(n)) for persistent dependence (z = "
                     f"{self.persistent:.1f})")
        text += f", at most {few}"
        if self.capped:
            text += f" (the rule asked for {self.wanted})"
        return text

    @property
    def rule(self) -> str:
        """How the block length was chosen, for reports."""
        return self._rule("circular-block")

    @property
    def why(self) -> str:
        """Why the block length, for reports."""
        return f"by {self.block_rule}"

    @property
    def why_multiplier(self) -> str:
        """Why the multiplier length, for reports."""
        return f"by {self._rule('stationary-bootstrap')}"


def auto_length(arrays: list[np.ndarray], windows: tuple[int, ...] = ()) -> AutoLength:
    """The automatic lengths for `arrays` (the data of each role, rows in time order;
    see the module docs). `windows` as for :func:`feature_series` (one array): two
    windows of one series (at least 8 blocks), else paired series (at least 6).

    The sums over the series (:func:`politis_white_columns`, :func:`persistence`, the
    lag-1 autocorrelations) run in one compiled call (:mod:`kmtests._jit_serial`), the
    same numbers up to rounding."""
    from ._jit_serial import rule_sums  # numba loads on first use

    series: list[np.ndarray] = []
    vol: list[np.ndarray] = []
    lag1_cols: list[int] = []
    count = 0
    for arr in arrays:
        series.append(feature_series(arr, windows))
        vol.append(_volatility_data(arr))
        # the lag-1 autocorrelations of the data's own columns (the first of the series)
        k = min(np.asarray(arr).reshape(arr.shape[0], -1).shape[1], _MAX_COLUMNS)
        lag1_cols.extend(range(count, count + k))
        count += series[-1].shape[1]
    n = arrays[0].shape[0]
    if n < 8:
        raise ValueError(f"an automatic block length needs at least 8 observations; got {n}.")
    m = int(math.ceil(math.sqrt(n)))
    far, near = ((m + 1, 2 * m), (_SHORT + 1, _SHORT + m)) if n >= 4 * m else ((0, -1), (0, -1))
    edges = np.cumsum((0,) + (tuple(windows) or (n,))).astype(np.int64)
    b_sb, b_cb, z, r1 = rule_sums(np.vstack([s.T for s in series]),
                                  np.asarray(lag1_cols, dtype=np.int64),
                                  np.vstack([v.T for v in vol]), edges, far, near)
    effective = n * (1.0 - r1) / (1.0 + r1)
    fewest = _MIN_BLOCKS_WINDOWS if windows else _MIN_BLOCKS_PAIRED
    cap = max(1, n // fewest)
    wanted = int(math.ceil(_SCALE * b_cb))
    if z > _PERSIST_Z:
        wanted = max(wanted, _FLOOR * int(math.ceil(math.sqrt(n))))
    out = AutoLength(max(1, min(wanted, cap)), float(max(1.0, min(b_sb, n / 4.0))), count,
                     wanted, cap, z, fewest, effective)
    if effective < _MIN_EFFECTIVE:
        warnings.warn(
            f"The series hold about {effective:.0f} effective observations (n = {n}, lag-1 "
            f"autocorrelation {r1:.2f}): too few for an automatic null (block permutations "
            "or AR multipliers) to keep the level; it may reject too often (measured: two "
            "AR(1) series with phi = 0.95 at n = 200, 6-10% at alpha = 5%). A longer "
            "series is the fix.", SerialDependenceWarning, stacklevel=2)
    return out


#: below this many rows, centred ranks (half-integers) have sums of at most 2^52 in
#: absolute value: every partial sum is exact, whatever the order of the additions
_EXACT_RANK_ROWS = 2**25


def _unshift(c: np.ndarray, exact_sums: bool = False) -> np.ndarray:
    """Centred columns minus their best single shift in mean (the split that explains
    most of the variance): a sample made by concatenating two groups (e.g. the two
    components of a mixture) is not a time series, and a shift is not autocorrelation.

    `exact_sums` says that every sum of entries of a column is exact in floating point
    (centred ranks, fewer than :data:`_EXACT_RANK_ROWS` rows): the two segment sums are
    then read off the running sums (the second is minus the first: the columns sum to 0)
    in one pass for all columns, the same numbers as the column-by-column sums."""
    m = c.shape[0]
    if m < 4:
        return c
    csum = np.cumsum(c, axis=0)[:-1]                    # sums of the first k rows
    k = np.arange(1, m)[:, None]
    gain = csum * csum * m / (k * (m - k))              # between-segment sum of squares
    cut = np.argmax(gain, axis=0) + 1
    if exact_sums and m < _EXACT_RANK_ROWS:
        first = csum[cut - 1, np.arange(c.shape[1])]
        # (0 - first: +0.0 when the sums are 0, as the column-by-column sum gives)
        means = np.where(np.arange(m)[:, None] < cut, first / cut, (0.0 - first) / (m - cut))
        return c - means
    out = c.copy()
    add = np.add.reduce  # np.mean's sum and division, without its per-call overhead
    for j, kj in enumerate(cut.tolist()):
        out[:kj, j] -= add(out[:kj, j]) / kj
        out[kj:, j] -= add(out[kj:, j]) / (m - kj)
    return out


def _ranks(a: np.ndarray) -> np.ndarray:
    """The ranks of each column, ties given their average rank."""
    return np.ascontiguousarray(_row_ranks(np.ascontiguousarray(a.T))[0].T)


def _row_ranks(at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ranks of each row of the C-contiguous `at` (ties averaged), and the rows sorted.

    One stable ``argsort`` of all rows (without ties the ranks are ``1, ..., m``); a
    run of ``c`` tied values from sorted position ``p`` gets ``p + (c + 1) / 2``, the
    numbers of ``np.unique``'s counts (half-integers: exact).
    """
    rows, m = at.shape
    order = np.argsort(at, axis=1, kind="stable")
    flat = order + (np.arange(rows) * m)[:, None]  # positions in the flattened rows
    srt = at.ravel()[flat]
    out = np.empty(rows * m)
    out[flat] = np.arange(1, m + 1, dtype=np.float64)
    out = out.reshape(rows, m)
    for j in np.flatnonzero(np.any(srt[:, 1:] == srt[:, :-1], axis=1)):
        first = np.ones(m, dtype=bool)
        np.not_equal(srt[j, 1:], srt[j, :-1], out=first[1:])
        starts = np.flatnonzero(first)
        counts = np.diff(np.append(starts, m))
        out[j, order[j]] = np.repeat(starts + (counts + 1) / 2.0, counts)
    return out, srt


def _lag1(a: np.ndarray, windows: tuple[int, ...]) -> np.ndarray:
    """Lag-1 autocorrelations of the ranks of the columns of `a` and of their distances to
    the median (level and volatility), within windows."""
    return _lag1_many([a], windows)[0]


def _lag1_many(arrays: list[np.ndarray], windows: tuple[int, ...]) -> list[np.ndarray]:
    """:func:`_lag1` of each array (the same rows), their columns side by side in one pass.

    Every step is column by column (ranks, medians, the best shift, the sums over the
    rows), so each array's numbers are those of its own call (checked in the tests); an
    array with a sorted column (within a window) gets zeros, as alone.
    """
    parts = []
    for a in arrays:
        a = np.asarray(a, dtype=np.float64)
        if a.ndim == 1:
            a = a[:, None]
        a = a[:, :_MAX_COLUMNS * 4]
        top = np.max(np.abs(a), axis=0)
        parts.append(a / np.where(top > 0, top, 1.0))  # (squares of huge data must not overflow)
    widths = [p.shape[1] for p in parts]
    bounds = np.cumsum([0] + widths)
    a = parts[0] if len(parts) == 1 else np.hstack(parts)
    c = a.shape[1]
    num = np.zeros(2 * c)
    den = np.zeros(2 * c)
    sorted_ = np.zeros(len(parts), dtype=bool)
    edges = np.cumsum((0,) + (windows or (a.shape[0],)))
    for lo, hi in zip(edges[:-1], edges[1:]):
        wt = np.ascontiguousarray(a[lo:hi].T)  # the columns as rows
        m = wt.shape[1]
        d = np.diff(wt, axis=1)
        mono = np.all(d >= 0, axis=1) | np.all(d <= 0, axis=1)
        sorted_ |= np.logical_or.reduceat(mono, bounds[:-1]) if c else False
        if np.all(sorted_):
            break  # a sorted column: the order is not time
        # ranks (ties averaged) of the values and of their distances to the median: a
        # few huge values of heavy-tailed i.i.d. data must not look like dependence
        rw, srt = _row_ranks(wt)
        # np.median's numbers from the sorted rows: the middle one or the mean of two
        med = srt[:, m // 2] if m % 2 else (srt[:, m // 2 - 1] + srt[:, m // 2]) / 2.0
        rv, _ = _row_ranks(np.abs(wt - med[:, None]))
        # centred ranks (the mean of ranks is (m + 1) / 2 with or without ties: exact),
        # back to rows in time order, C-contiguous for the sums below
        ranks = np.vstack([rw, rv])
        ranks -= (m + 1) / 2.0
        both = _unshift(np.ascontiguousarray(ranks.T), exact_sums=True)
        num += np.sum(both[1:] * both[:-1], axis=0)
        den += np.sum(both * both, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    out = []
    for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        out.append(np.zeros(2 * (hi - lo)) if sorted_[k]
                   else np.concatenate([r[lo:hi], r[c + lo:c + hi]]))
    return out


#: warn when the lag-1 autocorrelation (two samples) or the product of the two variables'
#: (independence) is at least this, and significant (above 4 / sqrt(n)); an AR(1) with
#: phi = 0.3 (independence: two of them) inflates the 5% level to about 7-8%
SERIAL_THRESHOLD = 0.1


def lag1_evidence(a: np.ndarray, windows: tuple[int, ...] = ()) -> tuple[bool, str]:
    """Whether the rows of `a` (within `windows`) look serially dependent, and the number
    that says so (the largest lag-1 autocorrelation of the columns and their squares)."""
    n = int(np.asarray(a).shape[0])
    r = float(np.max(_lag1(a, windows)))
    return r >= max(SERIAL_THRESHOLD, 4.0 / math.sqrt(n)), f"lag-1 autocorrelation {r:.2f}"


def paired_lag1_evidence(x: np.ndarray, y: np.ndarray) -> tuple[bool, str] | None:
    """The same for two paired series: both autocorrelated, in the same direction."""
    n = int(np.asarray(x).shape[0])
    rx, ry = _lag1_many([x, y], ())
    sig = 4.0 / math.sqrt(n)
    if not (np.max(np.abs(rx)) >= sig and np.max(np.abs(ry)) >= sig):
        return None
    r = float(max(rx.max() * ry.max(), rx.min() * ry.min()))
    return r >= SERIAL_THRESHOLD, f"product of the lag-1 autocorrelations of x and y {r:.2f}"


#: what the warning advises when the problem names no fix of its own
BLOCKS_FIX = ("If the rows are in time order, pass blocks='auto' (block permutations with a "
              "data-driven length; with method='wild', AR(1) multipliers of a data-driven "
              "length).")


def serial_check(problem: Any, method: Any) -> None:
    """Warn (:class:`~kmtests.SerialDependenceWarning`) when a null for i.i.d. data
    (unrestricted permutations, gamma, chi-square, wild bootstrap with independent
    multipliers) meets serially dependent data, naming the fix. ``O(n d)``. The problem
    gives the evidence (``Problem.serial_evidence``)."""
    scheme = getattr(problem, "scheme", None)
    if (scheme is not None and not scheme.full) or getattr(method, "process", None) == "ar":
        return
    evidence = problem.serial_evidence()
    if evidence is None:
        return
    hit, what = evidence[:2]
    fix = evidence[2] if len(evidence) > 2 else BLOCKS_FIX
    n = problem.n
    if hit:
        name = getattr(method, "name", "permutation")
        warnings.warn(
            f"The rows look serially dependent ({what}, n = {n}): method={name!r} assumes "
            f"i.i.d. observations and rejects too often on autocorrelated series. {fix} If "
            "the order means nothing (e.g. sorted data), ignore this warning.",
            SerialDependenceWarning, stacklevel=4)
