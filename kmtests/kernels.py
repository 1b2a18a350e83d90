"""Kernels, Gram matrices and the median-heuristic bandwidth.

Every kernel is a small frozen configuration object. ``kernel.gram(x, y)``
returns the Gram matrix, and ``kernel.fitted_to(z)`` returns a copy whose
data-driven bandwidth (``"median"``) has been resolved on ``z`` — nothing is
ever mutated, so a kernel object can be reused across tests.

========================  ===================================================
name                      k(x, y)
========================  ===================================================
``"gaussian"``            exp(-||x - y||^2 / (2 bandwidth^2))
``"laplacian"``           exp(-||x - y|| / bandwidth)
``"ard"``                 exp(-sum_j (x_j - y_j)^2 / (2 bandwidth_j^2))
``"linear"``              <x, y>
``"polynomial"``          (<x, y> + coef0)^degree
``"distance"``            (||x|| + ||y|| - ||x - y||) / 2   (energy kernel)
``"precomputed"``         the Gram matrix is given instead of the data
callable ``f(X, Y)``      a user function returning the Gram matrix
========================  ===================================================

The median heuristic sets ``bandwidth^2`` to the median of the squared
Euclidean distances ``||x_i - x_j||^2`` over pairs ``i < j`` (for ``"ard"``,
per coordinate). Above ``MEDIAN_MAX_POINTS`` points it is computed on a
subsample of that many points drawn with a fixed seed from the rows sorted
lexicographically, so the value depends only on the *set* of points (it is
invariant to their order, which keeps permutation tests exact) and is the
same on every run.
"""

from __future__ import annotations

import abc
import contextlib
import contextvars
import dataclasses
import sys
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterator, Union

import numpy as np

from ._gram import CentredGram, centre_in_place, check_finite_gram, check_psd, check_symmetric
from ._typing import ArrayLike
from ._validation import as_sample, shown

__all__ = [
    "KERNELS",
    "MEDIAN_MAX_POINTS",
    "ARDGaussian",
    "CallableKernel",
    "Distance",
    "Gaussian",
    "IMQ",
    "Kernel",
    "Laplacian",
    "Linear",
    "Matern32",
    "Matern52",
    "Polynomial",
    "Precomputed",
    "dhsic_bandwidth",
    "median_bandwidth",
    "resolve_kernel",
    "sq_distances",
]

#: Above this many points the median heuristic uses a seeded subsample.
MEDIAN_MAX_POINTS = 1000
_MEDIAN_SEED = 20140621  # fixed: the subsample is a deterministic function of the point set
#: a bandwidth may differ from the data's spread by at most this factor (either way)
BANDWIDTH_RANGE = 1e100
#: rows per block of the in-place Gram updates (bounds temporaries to _ROWS x N)
_ROWS = 256

BandwidthLike = Union[str, float, np.ndarray, None]


# -- accurate squared distances -----------------------------------------------------------
def _pow2_scale(maxabs: float) -> float:
    """A power of two ``>= maxabs`` (1 for 0): dividing by it is exact."""
    if not maxabs > 0:
        return 1.0
    return float(np.ldexp(1.0, int(np.frexp(maxabs)[1])))


def _centred(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(z - m, m)`` with ``m`` the column means, refined by a second pass.

    One correction step (the mean of the residuals) brings the residuals'
    mean from ``eps * |offset|`` to ``eps * spread``: after it, a large offset
    of the data leaves no trace in the centred values.
    """
    n = z.shape[0]
    add = np.add.reduce  # ndarray.mean's sum and division, without its per-call overhead
    m = add(z, axis=0) / n if n else z.mean(axis=0)
    zc = z - m
    corr = add(zc, axis=0) / n if n else zc.mean(axis=0)
    zc -= corr
    return zc, m + corr


def _unit(x: np.ndarray, y: np.ndarray | None = None
          ) -> tuple[np.ndarray, np.ndarray | None, float]:
    """``(x - m)/s`` (and the same map of `y`) with entries in [-1, 1]; returns ``s``.

    ``m`` is the mean of the points (of `x` and `y` together) and ``s`` a power
    of two, so distances are computed from numbers of the size of the data's
    spread, not of its offset: the translation of the data cancels exactly
    (up to the rounding of ``x - m``) and nothing overflows or underflows.
    """
    if y is None:
        xs, _ = _centred(x)
        ys = None
    else:
        _, m = _centred(np.vstack([x, y]))
        xs, ys = x - m, y - m
    top = float(np.max(np.abs(xs))) if xs.size else 0.0
    if ys is not None and ys.size:
        top = max(top, float(np.max(np.abs(ys))))
    s = _pow2_scale(top)
    xs /= s
    if ys is not None:
        ys /= s
    return xs, ys, s


#: entries of the norms-minus-products form below this share of ``|x|^2 + |y|^2`` have
#: lost more than ~16 bits to cancellation; they are recomputed from the differences
CANCEL_RTOL = 2.0**-16


def recompute_cancelled(D: np.ndarray, xs: np.ndarray, ys: np.ndarray, xx: np.ndarray,
                        yy: np.ndarray) -> None:
    """Recompute in place, as ``sum_k (x_k - y_k)^2``, the squared distances ``D`` (rows:
    `xs`, columns: `ys`) that ``|x|^2 + |y|^2 - 2<x, y>`` computed with heavy cancellation.

    Identical rows then give exactly 0, and close rows their distance to full relative
    precision (the norms form leaves an absolute error of a few ``eps (|x|^2 + |y|^2)``,
    whose square root, about ``1e-8`` of the data's spread, is what a Laplacian or distance
    kernel would see). Entries above ``CANCEL_RTOL (|x|^2 + |y|^2)`` keep at least 36 bits
    and are left as they are.
    """
    i, j = np.nonzero(D <= CANCEL_RTOL * (xx[:, None] + yy[None, :]))
    if i.size:
        diff = xs[i] - ys[j]
        D[i, j] = np.einsum("ij,ij->i", diff, diff)


#: up to this many coordinates the squared distances are summed from the differences
#: (exact to rounding, symmetric, zero diagonal; cheaper than the product form there)
DIFF_DIMS = 3


def _sqdist_diff(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """``sum_k (x_k - y_k)^2`` by row blocks (few coordinates: :data:`DIFF_DIMS`)."""
    n, m, d = xs.shape[0], ys.shape[0], xs.shape[1]
    if d == 0:
        return np.zeros((n, m))
    D = np.empty((n, m))
    tmp = np.empty((min(_ROWS, n), m)) if d > 1 else None
    yt = np.ascontiguousarray(ys.T)
    for start in range(0, n, _ROWS):
        stop = min(start + _ROWS, n)
        rows = D[start:stop]
        np.subtract(xs[start:stop, 0:1], yt[0:1], out=rows)
        np.multiply(rows, rows, out=rows)
        for k in range(1, d):
            assert tmp is not None
            t = tmp[:stop - start]
            np.subtract(xs[start:stop, k:k + 1], yt[k:k + 1], out=t)
            np.multiply(t, t, out=t)
            rows += t
    return D


def _sqdist_unit(xs: np.ndarray, ys: np.ndarray | None = None) -> np.ndarray:
    """Squared distances of unit-scaled points: one N x M buffer, no N x M temporaries.

    With at most :data:`DIFF_DIMS` coordinates they are summed from the differences
    (:func:`_sqdist_diff`). Otherwise they are computed by row blocks of ``_ROWS``
    (one BLAS product each). With ``ys=None`` only the upper block triangle is
    computed and each block is mirrored (half the flops; cache-friendly block
    transposes), so the result is exactly symmetric with a zero diagonal. Entries that the norms form computes
    with heavy cancellation (close or identical points) are recomputed from the
    differences (:func:`recompute_cancelled`): identical points are at distance 0.
    """
    sym = ys is None
    yy_pts: np.ndarray = xs if ys is None else ys
    if xs.shape[1] <= DIFF_DIMS:
        return _sqdist_diff(xs, yy_pts)
    n, m = xs.shape[0], yy_pts.shape[0]
    D = np.empty((n, m))
    if sym:
        D.fill(0.0)  # first touch in order: the block mirror below would fault pages randomly
    xx = np.einsum("ij,ij->i", xs, xs)
    yy = xx if sym else np.einsum("ij,ij->i", yy_pts, yy_pts)
    for start in range(0, n, _ROWS):
        stop = min(start + _ROWS, n)
        c0 = start if sym else 0
        rows = D[start:stop, c0:]
        np.matmul(xs[start:stop], yy_pts[c0:].T, out=rows)
        rows *= -2.0
        rows += xx[start:stop, None]
        rows += yy[None, c0:]
        np.maximum(rows, 0.0, out=rows)
        recompute_cancelled(rows, xs[start:stop], yy_pts[c0:], xx[start:stop], yy[c0:])
        if sym:
            diag = D[start:stop, start:stop]  # its upper triangle into its lower one
            low = np.tril_indices(stop - start, -1)
            diag[low] = diag.T[low]
            for c in range(stop, n, _ROWS):  # mirror the blocks right of the diagonal
                D[c:c + _ROWS, start:stop] = D[start:stop, c:c + _ROWS].T
    if sym:
        np.fill_diagonal(D, 0.0)
    return D


#: the unit-scaled squared distances computed inside :func:`shared_distances`, by points
_SHARED: contextvars.ContextVar[list[tuple[np.ndarray, np.ndarray]] | None] = \
    contextvars.ContextVar("kmtests_shared_distances", default=None)


@contextlib.contextmanager
def shared_distances() -> Iterator[None]:
    """Inside the block, the squared distances of one set of points are computed once.

    A bandwidth kernel with one bandwidth sees the points scaled by a power of two only
    (the bandwidth enters as a factor afterwards), so the kernels of a bandwidth grid
    (MMDAgg's ten Gaussian kernels) share the same ``N x N`` distances: the first kernel
    computes them, the others copy them (the same bits; one more ``N x N`` array held
    during the block). An aggregated test prepares its members inside this block.
    """
    token = _SHARED.set([])
    try:
        yield
    finally:
        _SHARED.reset(token)


def _shared_sqdist_unit(xs: np.ndarray) -> np.ndarray | None:
    """Inside :func:`shared_distances`, :func:`_sqdist_unit` of `xs` with itself (not to be
    written to): from the block's store when the same points were seen (compared entry by
    entry), else computed and stored. None outside the block."""
    store = _SHARED.get()
    if store is None:
        return None
    for pts, D in store:
        if pts.shape == xs.shape and np.array_equal(pts, xs):
            return D
    D = _sqdist_unit(xs)
    store.append((xs.copy(), D))
    return D


def sq_distances(x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """Squared Euclidean distances between the rows of `x` and `y`.

    The points are first centred at their mean and divided by a power of two,
    so the result does not lose digits when the data carry a large offset
    (``||x||^2 + ||y||^2 - 2<x, y>`` on the raw data would cancel them), and
    then scaled back; it is clipped at zero, and when `y` is None exactly
    symmetric with a zero diagonal. Distances beyond ``1.8e308`` are ``inf``.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.kernels import sq_distances
    >>> z = np.array([[1e9], [1e9 + 1.0], [1e9 + 3.0]])
    >>> print(sq_distances(z)[0])
    [0. 1. 9.]
    """
    x = np.asarray(x, dtype=np.float64)
    y = None if y is None else np.asarray(y, dtype=np.float64)
    xs, ys, s = _unit(x, y)
    D = _sqdist_unit(xs, ys)
    with np.errstate(over="ignore"):
        D *= s * s
    return D


def _canonical_subsample(z: np.ndarray, max_points: int) -> np.ndarray:
    if z.shape[0] <= max_points:
        return z
    order = np.lexsort(z.T[::-1])
    idx = np.random.default_rng(_MEDIAN_SEED).choice(z.shape[0], max_points, replace=False)
    return z[order[np.sort(idx)]]


#: up to this many columns the pairwise squared distances of the median heuristic are
#: summed by NumPy (the same bits as SciPy's ``pdist``, without importing SciPy: a third
#: of a second of a new process's first test); above, by ``pdist`` (faster there)
_PAIR_SQDIST_NUMPY_COLUMNS = 8
#: rows of a block of :func:`_pair_sqdist`'s NumPy loop
_PAIR_SQDIST_ROWS = 128


def _pair_sqdist(z: np.ndarray) -> np.ndarray:
    """``||z_i - z_j||^2`` for ``i < j``, in ``pdist``'s order and with its bits.

    ``scipy.spatial.distance.pdist(z, "sqeuclidean")`` sums ``(z_ik - z_jk)^2`` over the
    columns ``k`` left to right; so does the NumPy loop here (one column at a time over a
    block of rows), which is used when SciPy's spatial module is not loaded yet and `z`
    has at most :data:`_PAIR_SQDIST_NUMPY_COLUMNS` columns. Either gives the same numbers
    (checked in the tests), so the choice is one of speed only.
    """
    n, d = z.shape
    if d > _PAIR_SQDIST_NUMPY_COLUMNS or "scipy.spatial.distance" in sys.modules:
        from scipy.spatial.distance import pdist

        return np.asarray(pdist(z, "sqeuclidean"))
    cols = [np.ascontiguousarray(z[:, k]) for k in range(d)]
    out = np.empty(n * (n - 1) // 2)
    pos = 0
    for a in range(0, n - 1, _PAIR_SQDIST_ROWS):
        b = min(a + _PAIR_SQDIST_ROWS, n - 1)
        acc = np.empty((b - a, n - a - 1))
        tmp = np.empty_like(acc)
        for k, c in enumerate(cols):
            np.subtract(c[a:b, None], c[None, a + 1:], out=tmp)
            np.multiply(tmp, tmp, out=tmp)
            if k == 0:
                acc[...] = tmp
            else:
                np.add(acc, tmp, out=acc)
        upper = acc[np.arange(a, b)[:, None] < np.arange(a + 1, n)[None, :]]
        out[pos:pos + upper.size] = upper
        pos += upper.size
    return out


def _median_of_pairs(z: np.ndarray) -> tuple[float, bool]:
    """:func:`_median_sq` of ``_pair_sqdist(z)``: the same number, found faster.

    For up to :data:`_PAIR_SQDIST_NUMPY_COLUMNS` columns the ``n x n`` squared distances
    are summed from the differences (:func:`_sqdist_diff`: each pair's number is
    ``pdist``'s, both triangles, a zero diagonal) and the median is read off two order
    statistics of all ``n^2`` entries: the ``n`` zeros of the diagonal come first and
    every pair appears twice, so the pairs' ``k``-th smallest is the entries'
    ``(n + 2k)``-th. One partition of a contiguous array, no extraction of the triangle
    (about 3x faster at n = 200). A median of 0 (ties) takes the pairs' path.
    """
    n, d = z.shape
    m = n * (n - 1) // 2
    if d > _PAIR_SQDIST_NUMPY_COLUMNS or m < 2:
        return _median_sq(_pair_sqdist(z))
    flat = _sqdist_diff(z, z).ravel()
    hi = n + 2 * (m // 2)
    flat.partition(hi)  # one k: NumPy's partition at two k is several times slower
    # np.median's numbers: the middle pair, or the mean of the two middle ones; the lower
    # one's twin sits just below `hi`, so it is the largest entry before `hi`
    med = float(flat[hi]) if m % 2 else float((flat[:hi].max() + flat[hi]) / 2.0)
    if med > 0:
        return med, False
    return _median_sq(_pair_sqdist(z))


def _median_sq(d2: np.ndarray) -> tuple[float, bool]:
    """Median of squared distances; if zero, the median of the non-zero ones.

    Returns ``(median, fallback_used)``; the median is 0 only if every pair ties.
    """
    med = float(np.median(d2)) if d2.size else 0.0
    if med > 0:
        return med, False
    pos = d2[d2 > 0]
    return (float(np.median(pos)), True) if pos.size else (0.0, True)


def median_bandwidth(
    z: np.ndarray, *, per_dimension: bool = False, max_points: int = MEDIAN_MAX_POINTS,
    name: str = "x", return_rule: bool = False,
) -> Any:
    """Median-heuristic bandwidth ``sqrt(median_{i<j} ||z_i - z_j||^2)``.

    When more than half of the pairs tie (binary or heavily tied variables)
    the median is 0; the bandwidth is then the median over the pairs at
    non-zero distance — still a function of the *set* of points, so the
    permutation tests stay exact — and the rule is reported as
    ``"median (non-zero pairs)"``.

    Parameters
    ----------
    z : ndarray, shape (n, d)
        The points (for a two-sample test, the pooled sample).
    per_dimension : bool
        Return one bandwidth per coordinate (for the ARD Gaussian kernel).
    max_points : int
        Subsample size above which a seeded, order-invariant subsample is used.
    name : str
        Argument name used in the error message.
    return_rule : bool
        Also return the rule used: ``"median"`` or ``"median (non-zero pairs)"``.

    Raises
    ------
    ValueError
        If every pair of points ties (constant data): no bandwidth can be
        derived from the data.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.kernels import median_bandwidth
    >>> print(f"{median_bandwidth(np.array([[0.0], [1.0], [3.0]])):.4f}")
    2.0000
    >>> bw, rule = median_bandwidth(np.array([0, 0, 0, 0, 1.0])[:, None], return_rule=True)
    >>> print(f"{bw:.1f} ({rule})")
    1.0 (median (non-zero pairs))
    """
    z = _canonical_subsample(np.asarray(z, dtype=np.float64), max_points)
    cols = [z[:, [j]] for j in range(z.shape[1])] if per_dimension else [z]
    out, fallback = [], False
    for c in cols:
        cs, _, s = _unit(c)
        med, fb = _median_of_pairs(cs)
        fallback |= fb
        out.append(s * np.sqrt(med))
    bw = np.array(out)
    rule = "median (non-zero pairs)" if fallback else "median"
    if np.any(bw <= 0):
        where = (f" for column(s) {np.flatnonzero(bw <= 0).tolist()} of `{name}`"
                 if per_dimension else f" for `{name}`")
        raise ValueError(
            f"the median heuristic has no bandwidth{where}: every pair of points ties "
            "(constant data); pass a positive `bandwidth`.")
    value: Any = bw if per_dimension else float(bw[0])
    return (value, rule) if return_rule else value


def dhsic_bandwidth(x: ArrayLike) -> float:
    """The Gaussian bandwidth of the R package dHSIC's median heuristic.

    ``sqrt(m / 2)``, ``m`` the upper median of the squared distances between the
    pairs of points (the element ``floor(N / 2)`` of the ``N = n (n - 1) / 2``
    sorted values, counted from 0); 0.001 if that is 0. The Gaussian kernel
    ``exp(-||x - y||^2 / (2 bw^2))`` is then ``exp(-||x - y||^2 / m)``.

    kmtests' own rule (``bandwidth="median"``) is ``sqrt(med)``, ``med`` the
    median of the squared distances (the mean of the two middle values for an
    even number of pairs), and takes the median of the non-zero distances when
    more than half of them are zero: its bandwidth is about ``sqrt(2)`` times
    R's. Above 1000 points R uses a random subsample of 1000 (from R's random
    stream); here the seeded, order-free subsample of kmtests' median
    heuristic, so the value is a function of the set of points (and the tests
    stay exact), but not R's.

    Parameters
    ----------
    x : array_like, shape (n,) or (n, p)

    Returns
    -------
    float

    Examples
    --------
    R's rule gives ``sqrt(2) = 1.414`` on three points whose median distance is 2,
    kmtests' gives 2:

    >>> import numpy as np
    >>> from kmtests.kernels import dhsic_bandwidth, median_bandwidth
    >>> x = np.array([[0.0], [1.0], [3.0]])
    >>> print(f"{dhsic_bandwidth(x):.6f} {median_bandwidth(x):.6f}")
    1.414214 2.000000
    """
    from scipy.spatial.distance import pdist

    z = _canonical_subsample(as_sample(x, "x"), 1000)
    d2 = pdist(z, "sqeuclidean")
    mid = d2.size // 2
    m = float(np.partition(d2, mid)[mid])
    bw = float(np.sqrt(0.5 * m))
    return bw if bw > 0 else 0.001


def _check_bandwidth(bw: Any, *, vector: bool = False) -> float | np.ndarray | str:
    if isinstance(bw, str):
        if bw.lower() != "median":
            raise ValueError(f"`bandwidth` must be 'median' or a positive number; "
                             f"got {shown(bw)}.")
        return "median"
    if vector:
        arr = np.atleast_1d(np.asarray(bw, dtype=np.float64))
        if arr.ndim != 1 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError("`bandwidth` must be 'median' or positive finite number(s).")
        return arr
    if isinstance(bw, (bool, np.bool_)) or not np.isscalar(bw):
        raise TypeError(f"`bandwidth` must be 'median' or a positive number; got {shown(bw)}.")
    try:
        val = float(bw)  # type: ignore[arg-type]  # a scalar (checked), maybe not a number
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`bandwidth` must be 'median' or a positive number; "
                        f"got {shown(bw)}.") from exc
    if not np.isfinite(val) or val <= 0:
        raise ValueError(f"`bandwidth` must be a positive finite number; got {shown(bw)}.")
    return val


@dataclass(frozen=True)
class Kernel(abc.ABC):
    """Base class of kernels: a frozen configuration object."""

    name: ClassVar[str] = "kernel"
    #: whether the kernel has a (possibly data-driven) bandwidth
    has_bandwidth: ClassVar[bool] = False
    #: k(x + c, y + c) = k(x, y) for every shift c
    translation_invariant: ClassVar[bool] = False

    @abc.abstractmethod
    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        """Gram matrix ``K[i, j] = k(x_i, y_j)`` (``y = x`` when None)."""

    def centred_gram(self, z: np.ndarray, *, name: str = "x") -> Any:
        """The Gram matrix of `z` in centred form (:class:`kmtests._gram.CentredGram`).

        Checked: finite values (an error names the kernel), and for user
        kernels symmetry (an error) and positive semi-definiteness (a warning).
        """
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported just below
            label = name if name.startswith("the ") else f"`{name}`"
            cg = self._centred_gram(np.ascontiguousarray(z, dtype=np.float64), label)
        check_finite_gram(cg, self, z, label)
        return cg

    def _centred_gram(self, z: np.ndarray, name: str = "the data") -> Any:
        return centre_in_place(np.array(self.gram(z), dtype=np.float64, copy=True))

    def fitted_to(self, z: np.ndarray, *, name: str = "x") -> "Kernel":
        """Copy with data-driven parameters resolved on `z` (here: none)."""
        return self

    @property
    def is_fitted(self) -> bool:
        return True

    def params(self) -> dict[str, Any]:
        """The kernel's parameters (for reports and JSON output)."""
        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                v = v.tolist()
            if f.name == "bandwidth_rule":
                continue
            out[f.name] = v
        return out

    def describe(self) -> str:
        """One-line human description, e.g. ``Gaussian (bandwidth = 1.2, median heuristic)``."""
        parts = []
        for k, v in self.params().items():
            if k in ("func",):
                continue
            if isinstance(v, float):
                parts.append(f"{k} = {v:.4g}")
            elif isinstance(v, list):
                parts.append(f"{k} = [" + ", ".join(f"{u:.4g}" for u in v) + "]")
            else:
                parts.append(f"{k} = {v}")
        rule = getattr(self, "bandwidth_rule", None)
        if rule == "median":
            parts.append("median heuristic")
        elif rule == "median (non-zero pairs)":
            parts.append("median heuristic over the non-zero distances")
        label = {"ard": "ARD Gaussian", "imq": "IMQ"}.get(self.name, self.name.capitalize())
        return label + (f" ({', '.join(parts)})" if parts else "")

    def phrase(self) -> str:
        """The kernel named in a sentence: ``the Gaussian kernel (bandwidth = 1.2)``."""
        desc = self.describe()
        head, sep, tail = desc.partition(" (")
        if head in ("Linear", "Polynomial", "Distance"):
            head = head.lower()
        return f"the {head} kernel" + (f" ({tail}" if sep else "")


@dataclass(frozen=True)
class _BandwidthKernel(Kernel):
    bandwidth: Any = "median"
    bandwidth_rule: str = dataclasses.field(default="given", repr=False, compare=False)
    has_bandwidth: ClassVar[bool] = True
    translation_invariant: ClassVar[bool] = True
    _vector: ClassVar[bool] = False

    def __post_init__(self) -> None:
        bw = _check_bandwidth(self.bandwidth, vector=self._vector)
        object.__setattr__(self, "bandwidth", bw)
        if isinstance(bw, str):
            object.__setattr__(self, "bandwidth_rule", "median")

    @property
    def is_fitted(self) -> bool:
        return not isinstance(self.bandwidth, str)

    def fitted_to(self, z: np.ndarray, *, name: str = "x") -> "Kernel":
        if self.is_fitted:
            return self
        bw, rule = median_bandwidth(z, per_dimension=self._vector, name=name, return_rule=True)
        new = dataclasses.replace(self, bandwidth=bw)
        object.__setattr__(new, "bandwidth_rule", rule)
        return new

    def _bw(self) -> Any:
        if not self.is_fitted:
            raise ValueError(
                "the bandwidth is 'median' and has not been resolved; call "
                "`kernel.fitted_to(data)` first."
            )
        return self.bandwidth

    def bandwidth_values(self, d: int) -> np.ndarray:
        """The fitted bandwidth as one positive value per coordinate (length `d`)."""
        bw = np.atleast_1d(np.asarray(self._bw(), dtype=np.float64))
        if bw.size == 1:
            bw = np.full(d, float(bw[0]))
        if bw.size != d:
            raise ValueError(f"the {self.name} kernel has {bw.size} bandwidths but the data "
                             f"have {d} columns.")
        return bw

    # -- k(x, y) = exp(exponent(scaled squared distance)) --------------------------------
    @abc.abstractmethod
    def _exponent(self, d2: np.ndarray) -> np.ndarray:
        """``log k`` from the squared distances in bandwidth units, in place."""

    def _scaled_sqdist(self, x: np.ndarray, y: np.ndarray | None,
                       name: str = "the data") -> np.ndarray:
        """Squared distances in bandwidth units, ``sum_j ((x_j - y_j)/bw_j)^2``."""
        xs, ys, top = self._prescale(np.asarray(x, dtype=np.float64),
                                     None if y is None else np.asarray(y, dtype=np.float64),
                                     name)
        if ys is None:
            shared = _shared_sqdist_unit(xs)
            if shared is not None:  # another kernel's distances: scaled into a new array
                return np.multiply(shared, top * top)
        D = _sqdist_unit(xs, ys)
        D *= top * top
        return D

    def _prescale(self, x: np.ndarray, y: np.ndarray | None, name: str = "the data"
                  ) -> tuple[np.ndarray, np.ndarray | None, float]:
        """The points centred, divided by a power of two and by the bandwidths, over ``top``.

        ``top**2 * ||xs_i - ys_j||^2`` is the squared distance in bandwidth
        units; the entries of `xs` are in [-1, 1]. Raises if the bandwidth is out
        of range for the data's spread.
        """
        xs, ys, s = _unit(x, y)
        q = s / self.bandwidth_values(xs.shape[1])  # spread over bandwidth, per coordinate
        top = float(np.max(q))
        spread = float(np.max(np.abs(xs))) * s if xs.size else 0.0
        if spread > 0 and not (1.0 / BANDWIDTH_RANGE <= top <= BANDWIDTH_RANGE):
            bw = self._bw()
            bw_txt = (f"{float(bw):.3g}" if np.ndim(bw) == 0
                      else "[" + ", ".join(f"{b:.3g}" for b in np.ravel(bw)) + "]")
            what = ("the identity (every distinct pair is at kernel value 0)" if top > 1
                    else "constant (every kernel value is 1)")
            raise ValueError(
                f"the bandwidth {bw_txt} of the {self.describe().partition(' (')[0]} kernel is "
                f"out of range for {name} (its spread is {spread:.3g}; ratio "
                f"{top:.3g}): the Gram matrix would be {what} to double "
                "precision and the test could detect nothing. Use a bandwidth comparable with "
                "the distances between the points (e.g. bandwidth='median').")
        w = q / top if top > 0 else q
        xs *= w
        if ys is not None:
            ys *= w
        return xs, ys, top

    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        t = self._exponent(self._scaled_sqdist(x, y))
        return np.exp(t, out=t)  # relative precision for small kernel values

    def _centred_gram(self, z: np.ndarray, name: str = "the data") -> Any:
        # k - 1 = expm1(.): absolute precision for the differences that centring keeps
        t = self._exponent(self._scaled_sqdist(z, None, name))
        return centre_in_place(np.expm1(t, out=t), offset=1.0)


@dataclass(frozen=True)
class Gaussian(_BandwidthKernel):
    """Gaussian (RBF) kernel ``exp(-||x - y||^2 / (2 bandwidth^2))``.

    Computed from the data centred at their mean and scaled by a power of two
    (translation-invariant to rounding, no overflow). Inside the tests the
    Gram matrix is held as ``1 + expm1(...)``, centred, so that the
    differences between kernel values keep their digits even at a bandwidth
    much larger than the data's spread.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.kernels import Gaussian
    >>> K = Gaussian(bandwidth=1.0).gram(np.array([[0.0], [1.0]]))
    >>> print(np.round(K, 4))
    [[1.     0.6065]
     [0.6065 1.    ]]
    """

    name: ClassVar[str] = "gaussian"

    def _exponent(self, d2: np.ndarray) -> np.ndarray:
        d2 *= -0.5
        return d2


@dataclass(frozen=True)
class Laplacian(_BandwidthKernel):
    """Laplacian kernel ``exp(-||x - y|| / bandwidth)``; the median heuristic
    sets `bandwidth` to the median Euclidean distance."""

    name: ClassVar[str] = "laplacian"

    def _exponent(self, d2: np.ndarray) -> np.ndarray:
        np.sqrt(d2, out=d2)
        d2 *= -1.0
        return d2


@dataclass(frozen=True)
class IMQ(_BandwidthKernel):
    """Inverse multiquadric kernel ``(1 + ||x - y||^2 / bandwidth^2)^(-1/2)`` (Gorham &
    Mackey, 2017; the kernel of KSDAgg): heavy tails, the default of the kernel Stein
    discrepancy (:func:`kmtests.goodness_of_fit_test`).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.kernels import IMQ
    >>> print(np.round(IMQ(bandwidth=1.0).gram(np.array([[0.0], [1.0]])), 4))
    [[1.     0.7071]
     [0.7071 1.    ]]
    """

    name: ClassVar[str] = "imq"

    def _exponent(self, d2: np.ndarray) -> np.ndarray:
        np.log1p(d2, out=d2)
        d2 *= -0.5
        return d2


@dataclass(frozen=True)
class Matern32(_BandwidthKernel):
    """Matérn kernel of smoothness 3/2, ``(1 + sqrt(3) r / bandwidth) exp(-sqrt(3) r /
    bandwidth)`` with ``r = ||x - y||``: once differentiable, so it has a Stein kernel
    (:func:`kmtests.goodness_of_fit_test`); the median heuristic sets `bandwidth` to the
    median distance.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.kernels import Matern32
    >>> print(np.round(Matern32(bandwidth=1.0).gram(np.array([[0.0], [1.0]])), 4))
    [[1.     0.4834]
     [0.4834 1.    ]]
    """

    name: ClassVar[str] = "matern32"

    def _exponent(self, d2: np.ndarray) -> np.ndarray:
        np.sqrt(d2, out=d2)
        d2 *= np.sqrt(3.0)
        return np.subtract(np.log1p(d2), d2, out=d2)


@dataclass(frozen=True)
class Matern52(_BandwidthKernel):
    """Matérn kernel of smoothness 5/2, ``(1 + a + a^2 / 3) exp(-a)`` with ``a = sqrt(5)
    ||x - y|| / bandwidth``: twice differentiable (a Stein kernel for
    :func:`kmtests.goodness_of_fit_test`).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.kernels import Matern52
    >>> print(np.round(Matern52(bandwidth=1.0).gram(np.array([[0.0], [1.0]])), 4))
    [[1.    0.524]
     [0.524 1.   ]]
    """

    name: ClassVar[str] = "matern52"

    def _exponent(self, d2: np.ndarray) -> np.ndarray:
        np.sqrt(d2, out=d2)
        d2 *= np.sqrt(5.0)
        return np.subtract(np.log1p(d2 + d2 * d2 / 3.0), d2, out=d2)


@dataclass(frozen=True)
class ARDGaussian(_BandwidthKernel):
    """Gaussian kernel with one bandwidth per coordinate (automatic relevance
    determination): ``exp(-sum_j (x_j - y_j)^2 / (2 bandwidth_j^2))``.

    ``bandwidth="median"`` applies the median heuristic to each coordinate.
    """

    name: ClassVar[str] = "ard"
    _vector: ClassVar[bool] = True

    def _exponent(self, d2: np.ndarray) -> np.ndarray:
        d2 *= -0.5
        return d2


@dataclass(frozen=True)
class Linear(Kernel):
    """Linear kernel ``<x, y>``.

    In the tests the Gram matrix is centred in feature space from the
    centred data (``Kc = (z - m)(z - m)'``), so the KME statistics, which
    depend only on differences of the data, keep their digits whatever the
    data's offset.
    """

    name: ClassVar[str] = "linear"

    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        return x @ (x if y is None else y).T

    def _centred_gram(self, z: np.ndarray, name: str = "the data") -> Any:
        with np.errstate(over="ignore", invalid="ignore"):
            zc, m = _centred(z)
            Kc = zc @ zc.T
            r = z @ m
            diag = np.einsum("ij,ij->i", z, z)
            g = float(m @ m)
        return CentredGram(Kc, r, g, diag)


@dataclass(frozen=True)
class Polynomial(Kernel):
    """Polynomial kernel ``(<x, y> + coef0)^degree`` (default: degree 2, coef0 1)."""

    degree: int = 2
    coef0: float = 1.0
    name: ClassVar[str] = "polynomial"

    def __post_init__(self) -> None:
        if isinstance(self.degree, bool) or not isinstance(self.degree, (int, np.integer)) \
                or self.degree < 1:
            raise ValueError(f"`degree` must be a positive integer; got {self.degree!r}.")
        if not np.isfinite(self.coef0) or self.coef0 < 0:
            raise ValueError(f"`coef0` must be a non-negative number; got {self.coef0!r}.")
        object.__setattr__(self, "degree", int(self.degree))
        object.__setattr__(self, "coef0", float(self.coef0))

    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            K = x @ (x if y is None else y).T
            K += self.coef0
            return np.power(K, self.degree, out=K)


def _norms(x: np.ndarray) -> np.ndarray:
    """Euclidean norms of the rows, without overflow (scaled by a power of two)."""
    s = _pow2_scale(float(np.max(np.abs(x))) if x.size else 0.0)
    xs = x / s
    with np.errstate(over="ignore"):
        return np.sqrt(np.einsum("ij,ij->i", xs, xs)) * s


@dataclass(frozen=True)
class Distance(Kernel):
    """Distance-induced (energy) kernel ``(||x|| + ||y|| - ||x - y||) / 2``.

    With this kernel the biased MMD^2 is one half of the energy distance of
    Székely and Rizzo, and HSIC_b equals the squared distance covariance
    dCov^2_n divided by 4 (Sejdinovic et al., 2013). In the tests the centred
    Gram matrix is ``-H D H / 2`` with ``D`` the distances of the centred
    data, so the statistics do not depend on the data's offset.
    """

    name: ClassVar[str] = "distance"

    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        nx = _norms(x)
        ny = nx if y is None else _norms(y)
        xs, ys, s = _unit(x, y)
        D = _sqdist_unit(xs, ys)
        np.sqrt(D, out=D)
        with np.errstate(over="ignore", invalid="ignore"):
            D *= -s
            for start in range(0, D.shape[0], _ROWS):
                D[start:start + _ROWS] += nx[start:start + _ROWS, None] + ny[None, :]
            D *= 0.5
        return D

    def _centred_gram(self, z: np.ndarray, name: str = "the data") -> Any:
        zs, _, s = _unit(z)
        D = _sqdist_unit(zs)
        np.sqrt(D, out=D)
        with np.errstate(over="ignore", invalid="ignore"):
            D *= -0.5 * s              # k = (||x|| + ||y||)/2 - D/2: the norms are an offset
            dm = D.mean(axis=1)        # row means of -D/2
            cg = centre_in_place(D)    # H(-D/2)H = Kc
            nz = _norms(z)
            r = 0.5 * (nz + nz.mean()) + dm
            g = float(r.mean())
        return CentredGram(cg.Kc, r, g, nz)


@dataclass(frozen=True)
class CallableKernel(Kernel):
    """A user function ``func(X, Y) -> ndarray (len(X), len(Y))`` as a kernel.

    The function must return a real, symmetric, positive semi-definite Gram
    matrix for ``func(X, X)``. On every engine the shape, real values and
    finiteness are checked, a non-symmetric Gram matrix is an error and one
    that is not positive semi-definite gets an
    :class:`~kmtests.IndefiniteKernelWarning` (engines that never hold the whole
    Gram matrix check symmetry and definiteness on a canonical subsample of at
    most 4000 points, and symmetry on every diagonal block).
    """

    func: Callable[[np.ndarray, np.ndarray], np.ndarray] = None  # type: ignore[assignment]
    name: ClassVar[str] = "callable"

    def __post_init__(self) -> None:
        if not callable(self.func):
            raise TypeError("`kernel` must be a kernel name, a Kernel object or a callable.")

    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        yy = x if y is None else y
        raw = np.asarray(self.func(x, yy))
        if raw.dtype.kind == "c":
            raise TypeError(f"the kernel callable {self.params()['func']} returned complex "
                            "values; a kernel must be real-valued (k(x, y) = k(y, x) real).")
        if raw.dtype.kind not in "biuf":
            raise TypeError(f"the kernel callable {self.params()['func']} returned "
                            f"{raw.dtype} values; a kernel must return real numbers.")
        out = np.asarray(raw, dtype=np.float64)
        if out.shape != (x.shape[0], yy.shape[0]):
            raise ValueError(
                f"the kernel callable returned shape {out.shape}; expected "
                f"{(x.shape[0], yy.shape[0])}."
            )
        if not np.all(np.isfinite(out)):
            raise ValueError("the kernel callable returned NaN or infinite values.")
        return np.ascontiguousarray(out)

    def _centred_gram(self, z: np.ndarray, name: str = "the data") -> Any:
        what = f"the Gram matrix of {self.phrase()}"
        K = check_symmetric(self.gram(z), what)
        check_psd(K, what)
        return centre_in_place(K)

    def params(self) -> dict[str, Any]:
        return {"func": getattr(self.func, "__name__", repr(self.func))}

    def describe(self) -> str:
        return f"user callable ({self.params()['func']})"

    def phrase(self) -> str:
        return f"the user kernel callable {self.params()['func']}"


@dataclass(frozen=True)
class Precomputed(Kernel):
    """Marker kernel: the data arguments are already Gram matrices."""

    name: ClassVar[str] = "precomputed"

    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        if y is not None:
            raise ValueError("a precomputed kernel has no cross Gram matrix to compute.")
        return x

    def _centred_gram(self, z: np.ndarray, name: str = "the data") -> Any:
        check_psd(z, "the precomputed Gram matrix")
        return centre_in_place(np.array(z, dtype=np.float64, copy=True))

    def phrase(self) -> str:
        return "the precomputed Gram matrix"


KERNELS: dict[str, type[Kernel]] = {
    "gaussian": Gaussian,
    "laplacian": Laplacian,
    "imq": IMQ,
    "matern32": Matern32,
    "matern52": Matern52,
    "ard": ARDGaussian,
    "linear": Linear,
    "polynomial": Polynomial,
    "distance": Distance,
    "precomputed": Precomputed,
}


def resolve_kernel(kernel: Any, bandwidth: BandwidthLike = "median", *,
                   name: str = "kernel", bandwidth_name: str = "bandwidth") -> Kernel:
    """Turn a kernel name, object or callable plus a bandwidth into a Kernel.

    A bandwidth other than ``"median"`` may be combined only with a kernel
    *name* that has a bandwidth; a Kernel object carries its own.
    """
    bw_given = not (bandwidth is None or (isinstance(bandwidth, str) and bandwidth == "median"))
    if isinstance(kernel, Kernel):
        if bw_given:
            raise ValueError(
                f"give the bandwidth either in the Kernel object `{name}` or as "
                f"`{bandwidth_name}`, not both."
            )
        return kernel
    if isinstance(kernel, str):
        key = kernel.lower()
        if key not in KERNELS:
            valid = ", ".join(repr(k) for k in sorted(KERNELS))
            raise ValueError(f"`{name}` must be one of {valid} or a callable; "
                             f"got {shown(kernel)}.")
        cls = KERNELS[key]
        if issubclass(cls, _BandwidthKernel):
            try:
                return cls(bandwidth="median" if bandwidth is None else bandwidth)
            except (TypeError, ValueError) as exc:
                raise type(exc)(str(exc).replace("`bandwidth`", f"`{bandwidth_name}`")) from exc
        if bw_given:
            raise ValueError(f"`{bandwidth_name}` does not apply to the {key} kernel.")
        return cls()
    if callable(kernel):
        if bw_given:
            raise ValueError(f"`{bandwidth_name}` does not apply to a callable kernel.")
        return CallableKernel(func=kernel)
    raise TypeError(f"`{name}` must be a kernel name, a Kernel object or a callable; "
                    f"got {type(kernel).__name__}.")
