"""Input validation shared by every public entry point.

One place for the rules and their messages, so that the two tests, the
statistic-only functions and the CLI reject bad input in the same words.
"""

from __future__ import annotations

import numbers
import operator
from typing import Any, overload

import numpy as np

from ._typing import ArrayLike, SeedLike


#: dtype kinds refused, and what to say about them
_REFUSED_KINDS = {
    "U": "text (strings)",
    "S": "bytes",
    "M": "dates/times (datetime64)",
    "m": "time differences (timedelta64)",
    "V": "raw records",
}
_CONVERT_HINT = {
    "U": "convert them explicitly, e.g. with float() or pandas.to_numeric",
    "S": "decode and convert them explicitly",
    "M": ("convert them to numbers with an origin and unit of your choice, e.g. "
          "(t - t.min()) / numpy.timedelta64(1, 's')"),
    "m": "convert them to numbers in a unit of your choice, e.g. t / numpy.timedelta64(1, 's')",
    "V": "pass a plain numeric array",
}


def _refuse(name: str, what: str, hint: str) -> TypeError:
    return TypeError(f"`{name}` must contain real numbers; it holds {what}: {hint}.")


def shown(value: Any) -> str:
    """``repr`` of a value for a message, NumPy scalars as the Python values they hold
    (``2992``, not ``np.int64(2992)``; ``'a'``, not ``np.str_('a')``), also in lists and
    tuples.

    Examples
    --------
    >>> import numpy as np
    >>> print(shown(np.int64(2992)), shown([np.str_("a"), np.float64(0.5)]))
    2992 ['a', 0.5]
    """
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, (list, tuple)):
        inner = ", ".join(shown(v) for v in value)
        if isinstance(value, tuple):
            return f"({inner}{',' if len(value) == 1 else ''})"
        return f"[{inner}]"
    return repr(value)


def _pandas_to_numpy(data: Any, name: str) -> np.ndarray:
    """A pandas Series/DataFrame as a float array, refusing non-numeric columns."""
    import pandas as pd

    frame = data.to_frame() if isinstance(data, pd.Series) else data
    for col, dtype in frame.dtypes.items():
        if pd.api.types.is_bool_dtype(dtype) or (pd.api.types.is_numeric_dtype(dtype)
                                                 and not pd.api.types.is_complex_dtype(dtype)):
            continue
        label = f"column {shown(col)} of `{name}`" if isinstance(data, pd.DataFrame) else f"`{name}`"
        if pd.api.types.is_datetime64_any_dtype(dtype) or isinstance(dtype, pd.PeriodDtype):
            kind = "M"
        elif pd.api.types.is_timedelta64_dtype(dtype):
            kind = "m"
        elif pd.api.types.is_complex_dtype(dtype):
            raise TypeError(f"{label} must contain real numbers, not complex ones.")
        else:
            raise TypeError(f"{label} must hold real numbers; it has dtype {dtype} (text, "
                            "categories or mixed objects): convert it explicitly, e.g. with "
                            "pandas.to_numeric, or leave it out.")
        raise TypeError(f"{label} must hold real numbers; it has dtype {dtype}, "
                        f"{_REFUSED_KINDS[kind]}: {_CONVERT_HINT[kind]}.")
    return frame.to_numpy(dtype=np.float64, na_value=np.nan)


def as_sample(data: ArrayLike, name: str, *, min_size: int = 2,
              allow_nan: bool = False) -> np.ndarray:
    """Return `data` as a float64, C-contiguous ``(n, d)`` array.

    The rule: data are real numbers — numpy numeric or boolean arrays, lists
    and tuples of numbers, pandas Series/DataFrames with numeric or boolean
    columns; a 1-D input of length n is n observations of one variable.
    Refused with a ``TypeError`` that says how to convert them: strings (also
    numeric strings), bytes, dates and times (``datetime64``, ``timedelta64``,
    pandas datetime columns with or without a time zone: their origin and
    unit are modelling choices to make explicitly), categorical or mixed
    columns, complex numbers and masked arrays (a mask would be ignored).
    Missing values (NaN, None, ``pd.NA``) and infinities raise ``ValueError``
    naming the first row and column that hold one (with ``allow_nan=True``
    missing values are kept as NaN, for :mod:`kmtests.problems.conventions`;
    infinities still raise: they are not missing values).
    """
    arr = _real_array(data, name)
    if arr.ndim == 0:
        raise ValueError(f"`{name}` must be 1-D or 2-D; got a scalar.")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"`{name}` must be 1-D or 2-D; got {arr.ndim} dimensions.")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.shape[1] == 0:
        raise ValueError(f"`{name}` must have at least one column.")
    if arr.shape[0] < min_size:
        raise ValueError(
            f"`{name}` must contain at least {min_size} observations; "
            f"got {arr.shape[0]}."
        )
    _check_finite(data, arr, name, allow_nan)
    return arr


def _real_array(data: ArrayLike, name: str) -> np.ndarray:
    """`data` as a numpy array of real numbers (any shape), or the refusal of :func:`as_sample`."""
    if isinstance(data, np.ma.MaskedArray):
        raise TypeError(
            f"`{name}` is a masked array; kmtests does not apply masks (they would be "
            "ignored silently). Remove the masked observations, from paired data too, "
            "or fill them, and pass a plain array (e.g. `np.ma.compress_rows(a)`).")
    if type(data).__module__.split(".")[0] == "pandas" and hasattr(data, "to_numpy"):
        arr = _pandas_to_numpy(data, name)
    else:
        try:
            arr = np.asarray(data)
        except (TypeError, ValueError) as exc:  # ragged lists and the like
            raise TypeError(f"`{name}` must be array-like of numbers.") from exc
        kind = arr.dtype.kind
        if kind in _REFUSED_KINDS:
            raise _refuse(name, f"{_REFUSED_KINDS[kind]} (dtype {arr.dtype})",
                          _CONVERT_HINT[kind])
        if kind == "c":
            raise TypeError(f"`{name}` must contain real numbers, not complex ones.")
        if kind == "O":
            arr = _object_to_float(arr, name)
    return arr


def _check_finite(data: Any, arr: np.ndarray, name: str, allow_nan: bool) -> None:
    """Refuse infinities, and missing values unless `allow_nan` (:func:`as_sample`)."""
    if not np.all(np.isfinite(arr)):
        inf = np.isinf(arr)
        if inf.any():
            raise ValueError(f"`{name}` must not contain NaN or infinite values: "
                             f"{locate(data, arr, inf, name)} is infinite. An infinity is not "
                             "a missing value: remove or transform it.")
        if not allow_nan:
            raise ValueError(f"`{name}` must not contain NaN or infinite values (missing values "
                             f"included): {locate(data, arr, np.isnan(arr), name)} is missing "
                             "(NaN). Remove or fill it.")


def locate(data: Any, arr: np.ndarray, bad: np.ndarray, name: str) -> str:
    """The first flagged entry of `arr` (rows of `data`) in words: ``"row 3, column 1"``,
    with the index label and column name of a pandas input (``"row 3 (index 'b'), column
    'temp'"``); rows and columns count from 0."""
    i, j = (int(v) for v in np.argwhere(bad)[0])
    where = f"row {i}"
    index = getattr(data, "index", None)
    if index is not None and type(data).__module__.split(".")[0] == "pandas":
        label = index[i]
        if not (isinstance(label, (int, np.integer)) and label == i):
            where += f" (index {shown(label)})"
    columns = getattr(data, "columns", None)
    if columns is not None and type(data).__module__.split(".")[0] == "pandas":
        where += f", column {shown(columns[j])}"
    elif arr.shape[1] > 1:
        where += f", column {j}"
    return f"{where} of `{name}`"


def _refuse_element(v: Any, name: str) -> bool:
    """Raise the conversion hint for one element that is text, bytes or a date/time (the
    refused kinds of an object array); return False for anything else."""
    if isinstance(v, (str, np.str_)):
        raise _refuse(name, f"text (e.g. {shown(v)})", _CONVERT_HINT["U"])
    if isinstance(v, (bytes, np.bytes_)):
        raise _refuse(name, f"bytes (e.g. {shown(v)})", _CONVERT_HINT["S"])
    if isinstance(v, (np.datetime64, np.timedelta64)) or hasattr(v, "timestamp") \
            or type(v).__name__ in ("timedelta", "Timedelta", "date", "time"):
        raise _refuse(name, f"dates or times (e.g. {shown(v)})", _CONVERT_HINT["M"])
    return False


def _object_to_float(arr: np.ndarray, name: str) -> np.ndarray:
    """An object array of real numbers (None/NA = missing) as floats; anything else refused."""
    out = np.empty(arr.shape, dtype=np.float64)
    flat_in, flat_out = arr.reshape(-1), out.reshape(-1)
    for i, v in enumerate(flat_in):
        if isinstance(v, (bool, np.bool_, numbers.Real)):
            flat_out[i] = float(v)
        elif v is None or (type(v).__name__ in ("NAType", "NaTType")):
            flat_out[i] = np.nan
        elif _refuse_element(v, name):  # pragma: no cover - it raises
            pass
        elif isinstance(v, complex):
            raise TypeError(f"`{name}` must contain real numbers, not complex ones.")
        else:
            raise TypeError(f"`{name}` must be array-like of numbers; it holds a "
                            f"{type(v).__name__} ({shown(v)}).")
    return out


def check_same_dim(x: np.ndarray, y: np.ndarray, names: tuple[str, str] = ("x", "y")) -> None:
    if x.shape[1] != y.shape[1]:
        raise ValueError(
            f"`{names[0]}` and `{names[1]}` must have the same number of columns; "
            f"got {x.shape[1]} and {y.shape[1]}."
        )


def check_paired(x: np.ndarray, y: np.ndarray) -> None:
    """Refuse paired data of different lengths."""
    if x.shape[0] != y.shape[0]:
        raise ValueError(
            "`x` and `y` must have the same number of observations (paired data); "
            f"got {x.shape[0]} and {y.shape[0]}."
        )


@overload
def check_positive_int(value: object, name: str) -> int: ...


@overload
def check_positive_int(value: object, name: str, *, allow_none: bool) -> int | None: ...


def check_positive_int(value: object, name: str, *, allow_none: bool = False) -> int | None:
    """`value` as a positive int (None passes with ``allow_none``); else a clear error."""
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        suffix = " or None" if allow_none else ""
        raise TypeError(f"`{name}` must be a positive integer{suffix}.")
    value = operator.index(value)
    if value < 1:
        suffix = " or None" if allow_none else ""
        raise ValueError(f"`{name}` must be a positive integer{suffix}; got {value}.")
    return value


def check_choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value.lower() not in choices:
        valid = ", ".join(repr(c) for c in sorted(choices))
        raise ValueError(f"`{name}` must be one of {valid}; got {shown(value)}.")
    return value.lower()


def check_rng(rng: SeedLike) -> np.random.Generator:
    """Normalise `rng` to a Generator (scipy's SPEC-7 convention)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.RandomState):
        raise TypeError(
            "`rng` must be None, an int, a SeedSequence or a Generator; "
            "the legacy RandomState is not accepted."
        )
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)) and rng < 0:
        raise ValueError(f"`rng` must be None, a non-negative int, a SeedSequence or a "
                         f"Generator; got the negative int {rng}.")
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            "`rng` must be None, a non-negative int, a SeedSequence or a Generator; "
            f"got {type(rng).__name__}."
        ) from exc


def seed_of(rng: SeedLike) -> int | None:
    """The integer seed to report in a result, when the user gave one."""
    if isinstance(rng, (numbers.Integral,)) and not isinstance(rng, bool):
        return int(rng)
    if isinstance(rng, np.random.SeedSequence) and isinstance(rng.entropy, numbers.Integral):
        return int(rng.entropy)
    return None


def refuse_non_real(data: Any, name: str) -> Any:
    """Refuse, as :func:`as_sample` does, data that are not real numbers; no other checks.

    For callers that check shapes, finiteness and the number of features
    themselves (the scikit-learn estimators of :mod:`kmtests.learn`, whose
    conventions fix the errors for those): masked arrays, strings (numeric
    strings too), bytes, dates and times (``datetime64``, ``timedelta64``,
    date/time objects), raw records, and pandas columns that are not numeric
    or boolean raise the ``TypeError`` of :func:`as_sample`, which says how to
    convert them. Complex numbers, sparse matrices, ragged lists and other
    objects are left to the caller.

    Returns
    -------
    object
        `data` itself for pandas objects, sparse matrices and what numpy
        cannot convert; otherwise ``numpy.asarray(data)`` (so it is not
        converted twice).
    """
    if isinstance(data, np.ma.MaskedArray):
        raise TypeError(
            f"`{name}` is a masked array; kmtests does not apply masks (they would be "
            "ignored silently). Remove the masked observations, and their labels, or fill "
            "them, and pass a plain array (e.g. `np.ma.compress_rows(a)`).")
    module = type(data).__module__.split(".")[0]
    if module == "pandas" and hasattr(data, "to_numpy"):
        _pandas_to_numpy(data, name)
        return data
    if module == "scipy" and hasattr(data, "tocsr"):  # sparse: not a sample of numbers here
        return data
    try:
        arr = np.asarray(data)
    except (TypeError, ValueError):  # ragged lists and the like: the caller's error
        return data
    kind = arr.dtype.kind
    if kind in _REFUSED_KINDS:
        raise _refuse(name, f"{_REFUSED_KINDS[kind]} (dtype {arr.dtype})", _CONVERT_HINT[kind])
    if kind == "O":
        for v in arr.reshape(-1):
            _refuse_element(v, name)
    return arr


def check_variances(value: Any, d: int, name: str) -> np.ndarray:
    """A scalar (isotropic) or a d-vector of non-negative finite variances."""
    try:
        v = np.atleast_1d(np.asarray(value, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be a non-negative number or {d} of them.") from exc
    if v.size == 1:
        v = np.full(d, float(v[0]))
    if v.shape != (d,) or not np.all(np.isfinite(v)) or np.any(v < 0):
        raise ValueError(f"`{name}` must be a non-negative finite number or {d} of them "
                         f"(one per column); got {shown(value)}.")
    return v


def positive_grid(values: Any, message: str) -> np.ndarray:
    """Distinct positive finite numbers as a 1-d array (a grid of bandwidths or
    parameters), else a ValueError with `message`."""
    if isinstance(values, (str, bool)):
        raise ValueError(message)
    try:
        grid = np.atleast_1d(np.asarray(values, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise ValueError(message) from exc
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) \
            or np.any(grid <= 0) or np.unique(grid).size != grid.size:
        raise ValueError(message)
    return grid
