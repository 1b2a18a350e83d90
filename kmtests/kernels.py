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
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Union

import numpy as np

__all__ = [
    "KERNELS",
    "MEDIAN_MAX_POINTS",
    "ARDGaussian",
    "CallableKernel",
    "Distance",
    "Gaussian",
    "Kernel",
    "Laplacian",
    "Linear",
    "Polynomial",
    "Precomputed",
    "median_bandwidth",
    "resolve_kernel",
    "sq_distances",
]

#: Above this many points the median heuristic uses a seeded subsample.
MEDIAN_MAX_POINTS = 1000
_MEDIAN_SEED = 20140621  # fixed: the subsample is a deterministic function of the point set

BandwidthLike = Union[str, float, np.ndarray, None]


def sq_distances(x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """Squared Euclidean distances between the rows of `x` and `y`.

    Uses ``||x||^2 + ||y||^2 - 2<x, y>`` (one BLAS call), clipped at zero; when
    `y` is None the diagonal is exactly zero.
    """
    sym = y is None
    y = x if y is None else y
    xx = np.einsum("ij,ij->i", x, x)
    yy = xx if sym else np.einsum("ij,ij->i", y, y)
    d2 = xx[:, None] + yy[None, :] - 2.0 * (x @ y.T)
    np.maximum(d2, 0.0, out=d2)
    if sym:
        np.fill_diagonal(d2, 0.0)
        d2 = 0.5 * (d2 + d2.T)  # exact symmetry
    return d2


def _canonical_subsample(z: np.ndarray, max_points: int) -> np.ndarray:
    if z.shape[0] <= max_points:
        return z
    order = np.lexsort(z.T[::-1])
    idx = np.random.default_rng(_MEDIAN_SEED).choice(z.shape[0], max_points, replace=False)
    return z[order[np.sort(idx)]]


def median_bandwidth(
    z: np.ndarray, *, per_dimension: bool = False, max_points: int = MEDIAN_MAX_POINTS,
    name: str = "x",
) -> float | np.ndarray:
    """Median-heuristic bandwidth ``sqrt(median_{i<j} ||z_i - z_j||^2)``.

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

    Raises
    ------
    ValueError
        If the median distance is zero (constant data, or more than half of
        the pairs tied), where no bandwidth can be derived from the data.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.kernels import median_bandwidth
    >>> print(f"{median_bandwidth(np.array([[0.0], [1.0], [3.0]])):.4f}")
    2.0000
    """
    from scipy.spatial.distance import pdist

    z = _canonical_subsample(np.asarray(z, dtype=np.float64), max_points)
    if per_dimension:
        out = np.array([np.sqrt(np.median(pdist(z[:, [j]], "sqeuclidean")))
                        for j in range(z.shape[1])])
        if np.any(out <= 0):
            bad = np.flatnonzero(out <= 0).tolist()
            raise ValueError(
                f"the median heuristic gives a zero bandwidth for column(s) {bad} of "
                f"`{name}` (constant or mostly tied data); pass a positive `bandwidth`."
            )
        return out
    med = float(np.median(pdist(z, "sqeuclidean")))
    if not med > 0:
        raise ValueError(
            f"the median heuristic gives a zero bandwidth for `{name}` (constant or "
            "mostly tied data); pass a positive `bandwidth`."
        )
    return float(np.sqrt(med))


def _check_bandwidth(bw: Any, *, vector: bool = False) -> float | np.ndarray | str:
    if isinstance(bw, str):
        if bw.lower() != "median":
            raise ValueError(f"`bandwidth` must be 'median' or a positive number; got {bw!r}.")
        return "median"
    if vector:
        arr = np.atleast_1d(np.asarray(bw, dtype=np.float64))
        if arr.ndim != 1 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError("`bandwidth` must be 'median' or positive finite number(s).")
        return arr
    if isinstance(bw, (bool, np.bool_)) or not np.isscalar(bw):
        raise TypeError(f"`bandwidth` must be 'median' or a positive number; got {bw!r}.")
    try:
        val = float(bw)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`bandwidth` must be 'median' or a positive number; got {bw!r}.") from exc
    if not np.isfinite(val) or val <= 0:
        raise ValueError(f"`bandwidth` must be a positive finite number; got {bw!r}.")
    return val


@dataclass(frozen=True)
class Kernel(abc.ABC):
    """Base class of kernels: a frozen configuration object."""

    name: ClassVar[str] = "kernel"
    #: whether the kernel has a (possibly data-driven) bandwidth
    has_bandwidth: ClassVar[bool] = False

    @abc.abstractmethod
    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        """Gram matrix ``K[i, j] = k(x_i, y_j)`` (``y = x`` when None)."""

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
        label = self.name.capitalize() if self.name != "ard" else "ARD Gaussian"
        return label + (f" ({', '.join(parts)})" if parts else "")


@dataclass(frozen=True)
class _BandwidthKernel(Kernel):
    bandwidth: Any = "median"
    bandwidth_rule: str = dataclasses.field(default="given", repr=False, compare=False)
    has_bandwidth: ClassVar[bool] = True
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
        bw = median_bandwidth(z, per_dimension=self._vector, name=name)
        new = dataclasses.replace(self, bandwidth=bw)
        object.__setattr__(new, "bandwidth_rule", "median")
        return new

    def _bw(self) -> Any:
        if not self.is_fitted:
            raise ValueError(
                "the bandwidth is 'median' and has not been resolved; call "
                "`kernel.fitted_to(data)` first."
            )
        return self.bandwidth


@dataclass(frozen=True)
class Gaussian(_BandwidthKernel):
    """Gaussian (RBF) kernel ``exp(-||x - y||^2 / (2 bandwidth^2))``.

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

    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        s = self._bw()
        d2 = sq_distances(x, y)
        return np.exp(d2 * (-0.5 / (s * s)))


@dataclass(frozen=True)
class Laplacian(_BandwidthKernel):
    """Laplacian kernel ``exp(-||x - y|| / bandwidth)``; the median heuristic
    sets `bandwidth` to the median Euclidean distance."""

    name: ClassVar[str] = "laplacian"

    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        s = self._bw()
        return np.exp(-np.sqrt(sq_distances(x, y)) / s)


@dataclass(frozen=True)
class ARDGaussian(_BandwidthKernel):
    """Gaussian kernel with one bandwidth per coordinate (automatic relevance
    determination): ``exp(-sum_j (x_j - y_j)^2 / (2 bandwidth_j^2))``.

    ``bandwidth="median"`` applies the median heuristic to each coordinate.
    """

    name: ClassVar[str] = "ard"
    _vector: ClassVar[bool] = True

    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        s = np.asarray(self._bw(), dtype=np.float64)
        if s.size == 1:
            s = np.full(x.shape[1], float(s[0]))
        if s.size != x.shape[1]:
            raise ValueError(
                f"the ARD kernel has {s.size} bandwidths but the data have "
                f"{x.shape[1]} columns."
            )
        xs = x / s
        ys = None if y is None else y / s
        return np.exp(-0.5 * sq_distances(xs, ys))


@dataclass(frozen=True)
class Linear(Kernel):
    """Linear kernel ``<x, y>``."""

    name: ClassVar[str] = "linear"

    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        return x @ (x if y is None else y).T


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
        return (x @ (x if y is None else y).T + self.coef0) ** self.degree


@dataclass(frozen=True)
class Distance(Kernel):
    """Distance-induced (energy) kernel ``(||x|| + ||y|| - ||x - y||) / 2``.

    With this kernel the biased MMD^2 is one half of the energy distance of
    Székely and Rizzo, and HSIC_b equals the squared distance covariance
    dCov^2_n divided by 4 (Sejdinovic et al., 2013).
    """

    name: ClassVar[str] = "distance"

    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        nx = np.sqrt(np.einsum("ij,ij->i", x, x))
        ny = nx if y is None else np.sqrt(np.einsum("ij,ij->i", y, y))
        return 0.5 * (nx[:, None] + ny[None, :] - np.sqrt(sq_distances(x, y)))


@dataclass(frozen=True)
class CallableKernel(Kernel):
    """A user function ``func(X, Y) -> ndarray (len(X), len(Y))`` as a kernel.

    The function must return a symmetric positive semi-definite Gram matrix
    for ``func(X, X)``; the shape and finiteness are checked.
    """

    func: Callable[[np.ndarray, np.ndarray], np.ndarray] = None  # type: ignore[assignment]
    name: ClassVar[str] = "callable"

    def __post_init__(self) -> None:
        if not callable(self.func):
            raise TypeError("`kernel` must be a kernel name, a Kernel object or a callable.")

    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        yy = x if y is None else y
        out = np.asarray(self.func(x, yy), dtype=np.float64)
        if out.shape != (x.shape[0], yy.shape[0]):
            raise ValueError(
                f"the kernel callable returned shape {out.shape}; expected "
                f"{(x.shape[0], yy.shape[0])}."
            )
        if not np.all(np.isfinite(out)):
            raise ValueError("the kernel callable returned NaN or infinite values.")
        return np.ascontiguousarray(out)

    def params(self) -> dict[str, Any]:
        return {"func": getattr(self.func, "__name__", repr(self.func))}

    def describe(self) -> str:
        return f"user callable ({self.params()['func']})"


@dataclass(frozen=True)
class Precomputed(Kernel):
    """Marker kernel: the data arguments are already Gram matrices."""

    name: ClassVar[str] = "precomputed"

    def gram(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        if y is not None:
            raise ValueError("a precomputed kernel has no cross Gram matrix to compute.")
        return x


KERNELS: dict[str, type[Kernel]] = {
    "gaussian": Gaussian,
    "laplacian": Laplacian,
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
            raise ValueError(f"`{name}` must be one of {valid} or a callable; got {kernel!r}.")
        cls = KERNELS[key]
        if cls.has_bandwidth:
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
