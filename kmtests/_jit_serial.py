r"""numba kernel for the sums of the automatic block length (:func:`kmtests._serial.auto_length`).

``rule_sums(series, lag1_rows, vol, edges, far, near)`` computes, in one compiled
call over every series of every role (the rows of `series` and `vol`: the columns of
:mod:`kmtests._serial`'s matrices, transposed), what :mod:`kmtests._serial` computes
with NumPy column by column:

* the largest Politis-White lengths ``(b_sb, b_cb)`` over the series
  (:func:`kmtests._serial.politis_white_columns`, the same steps column by column);
* the largest lag-1 autocorrelation of the series ``lag1_rows`` (the
  data's own columns, :func:`kmtests._serial._lag1_of`), clipped to ``[0, 0.999]``;
* the persistence z-score (:func:`kmtests._serial.persistence`): the largest sum of
  autocorrelations at the lags ``far = (lo, hi)`` of `series` and ``near`` of the
  volatility series of `vol` (the distances of each series of `vol` to its median
  within each window ``edges[w]:edges[w + 1]``, centred over all rows:
  :func:`kmtests._serial.volatility_series`), over its standard error
  ``sqrt(lags / n)``; 0 when ``far`` is ``(0, -1)`` (a series too short).

The numbers are NumPy's up to rounding (plain left-to-right sums instead of
NumPy's pairwise ones): ``tests/test_jit_serial.py`` checks them against the NumPy
functions on random series, and that the lengths chosen are the same.

:func:`kernel_features` and :func:`median_distance` are steps of
:func:`kmtests._serial.feature_series` (the random Fourier features, centred; the
median heuristic's distance), NumPy's numbers bit for bit: their sums run in NumPy's
order (over the rows of a C-contiguous matrix, one row after the other) and the
median is an order statistic.

Why: at n = 200 the rule's NumPy code spent most of its time in the overhead of a few
hundred small array calls: 1.6 ms of CPU, more than half of a whole wild-bootstrap test
with 199 draws (2.8 ms; ``benchmarks/README.md``, "Cost of the automatic length").
Compiled once per install (about 3 s; numba's on-disk cache,
:mod:`kmtests.engines._numba_cache`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .engines._numba_cache import enable_caching

__all__ = ["kernel_features", "median_distance", "politis_white_column", "rule_sums"]


@njit(fastmath=False, nogil=True, error_model="numpy", cache=False)
def politis_white_column(x: np.ndarray) -> tuple[float, float]:  # pragma: no cover - compiled
    """:func:`kmtests._serial.politis_white_columns` of one series (at least 8 points)."""
    n = x.shape[0]
    mean = 0.0
    for t in range(n):
        mean += x[t]
    mean /= n
    eps = np.empty(n)
    for t in range(n):
        eps[t] = x[t] - mean
    b_max = float(math.ceil(min(3.0 * math.sqrt(n), n / 3.0)))
    kn = max(5, int(math.log10(n)))
    m_max = min(int(math.ceil(math.sqrt(n))) + kn, n - 1)
    band = 2.0 * math.sqrt(math.log10(n) / n)
    cross = np.zeros(m_max + 1)
    for i in range(m_max + 1):
        s = 0.0
        for t in range(n - i):
            s += eps[t + i] * eps[t]
        cross[i] = s
    if cross[0] <= 0.0:  # a constant series
        return 1.0, 1.0
    sq = np.zeros(n + 1)
    for t in range(n):
        sq[t + 1] = sq[t] + eps[t] * eps[t]
    # the first run of kn consecutive insignificant lags (lag 0 included, as NumPy's)
    run = 0
    opt = -1
    for i in range(m_max + 1):
        v1 = sq[n] - sq[i + 1]
        v2 = sq[n - i - 1]
        acorr = abs(cross[i]) / math.sqrt(v1 * v2)
        if acorr < band:
            run += 1
            if run >= kn:
                opt = i - kn + 1
                break
        else:
            run = 0
    m = min(2 * max(opt, 1), m_max) if opt >= 0 else m_max
    g = 0.0
    lr = cross[0] / n
    for k in range(1, m + 1):
        kk = k / m
        lam = 1.0 if kk <= 0.5 else 2.0 * (1.0 - kk)
        acv = cross[k] / n
        g += 2.0 * lam * k * acv
        lr += 2.0 * lam * acv
    if lr == 0.0:  # a negative estimate (strong dependence in a short series)
        edge = b_max if g != 0.0 else 1.0
        return edge, edge
    b_sb = (2.0 * g * g / (2.0 * lr * lr)) ** (1 / 3) * n ** (1 / 3)
    b_cb = (2.0 * g * g / (4 / 3 * lr * lr)) ** (1 / 3) * n ** (1 / 3)
    return min(b_sb, b_max), min(b_cb, b_max)


@njit(fastmath=False, nogil=True, error_model="numpy", cache=False)
def _acf_sum_z(a: np.ndarray, lo: int, hi: int) -> float:  # pragma: no cover - compiled
    """:func:`kmtests._serial._acf_sum_z` of one centred column."""
    n = a.shape[0]
    den = 0.0
    for t in range(n):
        den += a[t] * a[t]
    if not den > 0.0:
        return 0.0
    csum = np.zeros(n + 1)
    for t in range(n):
        csum[t + 1] = csum[t] + a[t]
    num = 0.0
    for t in range(n):
        num += a[t] * (csum[min(t + hi, n - 1) + 1] - csum[min(t + lo, n)])
    return num / den / math.sqrt((hi - lo + 1) / n)


@njit(fastmath=False, nogil=True, error_model="numpy", cache=False)
def rule_sums(series: np.ndarray, lag1_rows: np.ndarray, vol: np.ndarray,
              edges: np.ndarray, far: tuple[int, int], near: tuple[int, int]
              ) -> tuple[float, float, float, float]:  # pragma: no cover - compiled
    """``(b_sb, b_cb, z, r1)``: see the module docs (the series as rows)."""
    b_sb, b_cb, z = 1.0, 1.0, 0.0
    for j in range(series.shape[0]):
        sb, cb = politis_white_column(series[j])
        b_sb = max(b_sb, sb)
        b_cb = max(b_cb, cb)
        if far[1] >= far[0]:
            z = max(z, _acf_sum_z(series[j], far[0], far[1]))
    if near[1] >= near[0]:
        col = np.empty(series.shape[1])
        for j in range(vol.shape[0]):
            _volatility(vol[j], edges, col)
            z = max(z, _acf_sum_z(col, near[0], near[1]))
    return b_sb, b_cb, z, _lag1_max(series, lag1_rows)


@njit(fastmath=False, nogil=True, error_model="numpy", cache=False)
def _volatility(v: np.ndarray, edges: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    """:func:`kmtests._serial.volatility_series` of the column `v`, written to `out`."""
    n = v.shape[0]
    for w in range(edges.shape[0] - 1):
        lo, hi = edges[w], edges[w + 1]
        if hi <= lo:  # (an empty window has no median, and no rows)
            continue
        part = v[lo:hi].copy()
        k = (hi - lo) // 2
        med = _select(part, k)
        if (hi - lo) % 2 == 0:  # np.median's mean of the two middle values
            med = (part[:k].max() + med) / 2.0
        for t in range(lo, hi):
            out[t] = abs(v[t] - med)
    mean = 0.0
    for t in range(n):
        mean += out[t]
    mean /= n
    for t in range(n):
        out[t] -= mean


@njit(fastmath=False, nogil=True, error_model="numpy", cache=False)
def _lag1_max(series: np.ndarray, rows: np.ndarray) -> float:  # pragma: no cover - compiled
    """:func:`kmtests._serial._lag1_of` of the series ``series[rows]``."""
    r1 = 0.0
    for j in rows:
        a = series[j]
        den = 0.0
        num = 0.0
        for t in range(a.shape[0]):
            den += a[t] * a[t]
        for t in range(1, a.shape[0]):
            num += a[t] * a[t - 1]
        if den > 0.0:
            r1 = max(r1, num / den)
    return min(max(r1, 0.0), 0.999)


@njit(fastmath=False, nogil=True, error_model="numpy", cache=False)
def median_distance(sq: np.ndarray, twice: np.ndarray) -> float:  # pragma: no cover - compiled
    """The median of the distances between the rows of a matrix ``s`` from NumPy's
    ``sq = np.sum(s * s, axis=1)`` and ``twice = (2 s) @ s.T``: the squared distances
    ``sq_i + sq_j - twice_ij`` of the strict upper triangle as NumPy's broadcast computes
    them (clipped at 0), their middle order statistics and the mean of their roots (the
    root is monotone): the number of ``np.median`` of the roots, bit for bit."""
    m = sq.shape[0]
    v = np.empty(m * (m - 1) // 2)
    p = 0
    for i in range(m):
        for j in range(i + 1, m):
            dij = sq[i] + sq[j] - twice[i, j]
            v[p] = dij if dij > 0.0 else 0.0
            p += 1
    if p == 0:
        return 1.0
    k = p // 2
    upper = _select(v, k)
    if p % 2:
        return math.sqrt(upper)
    return (math.sqrt(v[:k].max()) + math.sqrt(upper)) / 2.0


@njit(fastmath=False, nogil=True, error_model="numpy", cache=False)
def _select(v: np.ndarray, k: int) -> float:  # pragma: no cover - compiled
    """The `k`-th smallest value of `v` (from 0), rearranging `v` so that the values
    before position `k` are at most it (quickselect: Hoare's partition about the median
    of three; numba's ``np.partition`` took three times as long on 4 950 values)."""
    lo, hi = 0, v.shape[0] - 1
    while hi > lo:
        a, b, c = v[lo], v[(lo + hi) // 2], v[hi]
        pivot = max(min(a, b), min(max(a, b), c))
        i, j = lo, hi
        while i <= j:
            while v[i] < pivot:
                i += 1
            while v[j] > pivot:
                j -= 1
            if i <= j:
                v[i], v[j] = v[j], v[i]
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:  # between the two parts: equal to the pivot
            break
    return v[k]


@njit(fastmath=False, nogil=True, error_model="numpy", cache=False)
def kernel_features(proj: np.ndarray, phase: np.ndarray, edges: np.ndarray
                    ) -> np.ndarray:  # pragma: no cover - compiled
    """The random Fourier features ``cos(proj + phase)`` of
    :func:`kmtests._serial.feature_series`, centred within the windows
    ``edges[w]:edges[w + 1]`` (if there are two or more), then centred, a column constant
    up to rounding (relative to the features' sums of squares before the centring) set
    to zeros: the steps of :func:`kmtests._serial._principal`'s start, written over
    `proj`. Column sums run row after row, as NumPy's sums over the rows of a
    C-contiguous array do: the same numbers bit for bit."""
    n, c = proj.shape
    for t in range(n):
        for j in range(c):
            proj[t, j] = math.cos(proj[t, j] + phase[j])
    raw = _squares(proj)
    if edges.shape[0] > 2:
        for w in range(edges.shape[0] - 1):
            _centre(proj, edges[w], edges[w + 1])
    _centre(proj, 0, n)
    spread = _squares(proj)
    tol = (n * np.finfo(np.float64).eps) ** 2
    for j in range(c):
        if spread[j] <= tol * raw[j]:
            proj[:, j] = 0.0
    return proj


@njit(fastmath=False, nogil=True, error_model="numpy", cache=False)
def _squares(a: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """The sums of squares of the columns of `a`, row after row."""
    out = np.zeros(a.shape[1])
    for t in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[j] += a[t, j] * a[t, j]
    return out


@njit(fastmath=False, nogil=True, error_model="numpy", cache=False)
def _centre(a: np.ndarray, lo: int, hi: int) -> None:  # pragma: no cover - compiled
    """Rows ``lo:hi`` of `a` minus their column means (summed row after row)."""
    mean = np.zeros(a.shape[1])
    for t in range(lo, hi):
        for j in range(a.shape[1]):
            mean[j] += a[t, j]
    for j in range(a.shape[1]):
        mean[j] /= hi - lo
    for t in range(lo, hi):
        for j in range(a.shape[1]):
            a[t, j] -= mean[j]


for _f in (politis_white_column, _acf_sum_z, rule_sums, _volatility, _lag1_max,
           median_distance, _select, kernel_features, _squares, _centre):
    enable_caching(_f)
