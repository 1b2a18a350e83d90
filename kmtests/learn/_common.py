"""Shared helpers of :mod:`kmtests.learn`: validation, kernels, estimators.

scikit-learn is imported here (and only inside :mod:`kmtests.learn`), so
``import kmtests`` stays free of it.
"""

from __future__ import annotations

import numbers
from typing import Any, Literal, overload

import numpy as np

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - older scikit-learn
    _validate_data = None

import copy

from .._guards import check_memory, format_bytes
from .._validation import refuse_non_real
from ..estimators import Embedding, KernelMeanEstimator, resolve_estimator
from ..kernels import ARDGaussian, Gaussian, Kernel, Laplacian, Linear, Polynomial, resolve_kernel

__all__ = ["CloneMixin", "check_arrays_memory", "check_estimator_param", "check_finite_values",
           "check_kernel_finite", "check_real", "embedding_arrays", "fit_kernel", "kernel_diag",
           "validate_X"]


class CloneMixin:
    """``sklearn.base.clone`` and nested ``set_params`` support for kernel mean estimator
    objects as parameters.

    :class:`~kmtests.estimators.KernelMeanEstimator` has a ``get_params()``
    without scikit-learn's ``deep`` argument, so the generic ``clone`` would
    fail on it. The estimators are frozen (immutable) configuration objects,
    so the clone shares them and deep-copies every other parameter, as
    ``clone`` does.
    """

    def set_params(self, **params: Any) -> Any:
        """scikit-learn's ``set_params``, with nested parameters of a kernel mean estimator
        (``estimator__shrinkage=0.1``) applied by replacing the (immutable) estimator
        object with a modified copy, so grid searches over them work."""
        nested: dict[str, dict[str, Any]] = {}
        rest: dict[str, Any] = {}
        for key, value in params.items():
            head, sep, sub = key.partition("__")
            current = getattr(self, head, None) if sep else None
            if head == "estimator" and isinstance(current, (str, KernelMeanEstimator)):
                nested.setdefault(head, {})[sub] = value
            else:
                rest[key] = value
        for head, sub_params in nested.items():
            if head in rest:  # a new estimator object, then its parameters
                rest[head] = check_estimator_param(rest[head]).replace(**sub_params)
            else:
                rest[head] = check_estimator_param(getattr(self, head)).replace(**sub_params)
        return super().set_params(**rest)  # type: ignore[misc]

    def __sklearn_clone__(self) -> Any:
        from sklearn.base import clone

        params = self.get_params(deep=False)  # type: ignore[attr-defined]
        new = {k: v if isinstance(v, (KernelMeanEstimator, Kernel)) else clone(v, safe=False)
               for k, v in params.items()}
        obj = type(self)(**new)
        for attr in ("_metadata_request", "_sklearn_output_config"):
            if attr in self.__dict__:
                setattr(obj, attr, copy.deepcopy(self.__dict__[attr]))
        return obj


def validate_X(est: Any, X: Any, *, reset: bool, min_samples: int = 1) -> np.ndarray:
    """``X`` as a float64, 2-D, finite array, by the package's rules and scikit-learn's.

    First the package's refusals (:func:`kmtests._validation.refuse_non_real`:
    masked arrays, strings, numeric strings included, bytes, dates and times,
    non-numeric pandas columns raise ``TypeError`` with a conversion hint),
    then scikit-learn's ``validate_data`` (``_validate_data`` before 1.6): the
    shape, NaN/infinity, complex-number and ``n_features_in_`` /
    ``feature_names_in_`` rules with the errors scikit-learn's estimator
    checks expect.
    """
    out: np.ndarray = _validate(est, refuse_non_real(X, "X"), None, reset, min_samples)
    return out


def validate_Xy(est: Any, X: Any, y: Any, *, reset: bool,
                min_samples: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """:func:`validate_X` with targets: ``(X, y)``."""
    Xa, ya = _validate(est, refuse_non_real(X, "X"), y, reset, min_samples)
    return np.asarray(Xa), np.asarray(ya)


def _validate(est: Any, X: Any, y: Any, reset: bool, min_samples: int) -> Any:
    kw: dict[str, Any] = {"reset": reset, "dtype": np.float64,
                          "ensure_min_samples": min_samples}
    if y is not None:
        kw["y"] = y
    if _validate_data is not None:
        return _validate_data(est, X, **kw)
    return est._validate_data(X, **kw)  # pragma: no cover


#: peak memory of ``estimator.fit`` on n points, in n x n float64 arrays: measured peaks
#: (n = 2500; tsvd at 800) rounded up: the Gram matrix, eigenvectors, LOOCV buffers
_EMBEDDING_ARRAYS = {"kme": 1.5, "skmse": 2.5, "bkmse": 2.5, "fkmse": 7.0,
                     "iterated_tikhonov": 11.0, "landweber": 9.0, "nu_method": 11.0,
                     "tsvd": 11.0, "mkme": 2.0, "mmkme": 3.0}

ADVICE_FIT = "Fit on a random subsample of the rows, or use a machine with more memory."
ADVICE_APPLY = "Pass `X` in batches of rows, or use a machine with more memory."


def embedding_arrays(estimator: KernelMeanEstimator) -> float:
    """Peak memory of fitting one embedding of n points, in n x n float64 arrays (other
    estimators: as the heaviest of their kind)."""
    known = _EMBEDDING_ARRAYS.get(estimator.name)
    if known is not None:
        return known
    return 2.5 if estimator.uniform else 11.0


def check_arrays_memory(arrays: float, rows: int, cols: int, what: str, *,
                        subject: str = "this fit", advice: str = ADVICE_FIT) -> None:
    """:func:`kmtests._guards.check_memory` for about `arrays` float64 arrays of
    `rows` x `cols` (what takes them: `what`), before any of them is allocated."""
    one = 8.0 * rows * cols
    check_memory(arrays * one, f"{what}: about {int(np.ceil(arrays))} arrays of {rows} x {cols}, "
                 f"{format_bytes(one)} each", advice, subject=subject)


def check_estimator_param(estimator: Any) -> KernelMeanEstimator:
    """The `estimator` parameter (a registered name or an estimator object)."""
    return resolve_estimator(estimator)


@overload
def check_real(value: Any, name: str, *, low: float | None = None,
               low_inclusive: bool = False, allow_none: Literal[False] = False) -> float: ...


@overload
def check_real(value: Any, name: str, *, low: float | None = None,
               low_inclusive: bool = False, allow_none: bool) -> float | None: ...


def check_real(value: Any, name: str, *, low: float | None = None,
               low_inclusive: bool = False, allow_none: bool = False) -> float | None:
    """A real number, optionally bounded below, with the house error message."""
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number{' or None' if allow_none else ''}; "
                        f"got {value!r}.")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"`{name}` must be a finite number; got {value!r}.")
    if low is not None and (v < low or (v == low and not low_inclusive)):
        rel = ">=" if low_inclusive else ">"
        raise ValueError(f"`{name}` must be {rel} {low:g}; got {value!r}.")
    return v


def check_int(value: Any, name: str, *, low: int = 1) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer >= {low}; got {value!r}.")
    if int(value) < low:
        raise ValueError(f"`{name}` must be an integer >= {low}; got {value!r}.")
    return int(value)


def check_option(value: Any, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        valid = ", ".join(repr(c) for c in sorted(choices))
        raise ValueError(f"`{name}` must be one of {valid}; got {value!r}.")
    return value


def fit_kernel(kernel: Any, bandwidth: Any, X: np.ndarray) -> Kernel:
    """Resolve `kernel` and `bandwidth` and fit a ``"median"`` bandwidth on `X`."""
    return resolve_kernel(kernel, bandwidth).fitted_to(X, name="X")


def fit_embedding(estimator: KernelMeanEstimator, x: np.ndarray, kernel: Kernel) -> Embedding:
    """``estimator.fit`` with a fitted kernel object (no bandwidth re-resolution)."""
    return estimator.fit(x, kernel=kernel)


def check_finite_values(values: np.ndarray, kernel: Kernel, X: np.ndarray,
                        name: str = "X") -> None:
    """Raise, in the words of the tests (:func:`kmtests._gram.check_finite_gram`), when a
    Gram matrix or what an estimator made of it holds NaN or infinite values: the kernel
    overflows on the data (a polynomial kernel on data at 1e200)."""
    if bool(np.all(np.isfinite(values))):
        return
    mag = f" (the data reach |value| = {float(np.max(np.abs(X))):.3g})" if X.size else ""
    raise ValueError(
        f"{kernel.phrase()} gives NaN or infinite Gram values on `{name}`{mag}: the values "
        "overflow the floating-point range. Rescale the data, or choose a kernel whose "
        "values stay bounded (e.g. 'gaussian').")


def check_kernel_finite(kernel: Kernel, X: np.ndarray, name: str = "X") -> None:
    """Refuse (:func:`check_finite_values`) data on which the Gram matrix of a linear or
    polynomial kernel overflows, before it is formed: ``|k(x, y)|^2 <= k(x, x) k(y, y)``,
    so the Gram matrix is finite exactly when its diagonal is (O(n d) to check)."""
    if isinstance(kernel, (Linear, Polynomial)):
        with np.errstate(over="ignore", invalid="ignore"):
            diag = kernel_diag(kernel, X)
        check_finite_values(diag, kernel, X, name)


def kernel_diag(kernel: Kernel, Z: np.ndarray) -> np.ndarray:
    """``k(z_i, z_i)`` for the rows of `Z` without forming the Gram matrix."""
    if isinstance(kernel, (Gaussian, ARDGaussian, Laplacian)):
        return np.ones(Z.shape[0])
    if isinstance(kernel, Linear):
        return np.einsum("ij,ij->i", Z, Z)
    if isinstance(kernel, Polynomial):
        return (np.einsum("ij,ij->i", Z, Z) + kernel.coef0) ** kernel.degree
    return np.array([float(kernel.gram(z[None, :], z[None, :])[0, 0]) for z in Z])
