"""Input validation shared by every public entry point.

One place for the rules and their messages, so that the two tests, the
statistic-only functions and the CLI reject bad input in the same words.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from ._typing import ArrayLike, SeedLike


def as_sample(data: ArrayLike, name: str, *, min_size: int = 2) -> np.ndarray:
    """Return `data` as a float64, C-contiguous ``(n, d)`` array.

    Lists, tuples, pandas Series/DataFrames and 1-D arrays are accepted; a 1-D
    input of length n is read as n observations of one variable.
    """
    if hasattr(data, "to_numpy") and not isinstance(data, np.ndarray):
        data = data.to_numpy()
    try:
        arr = np.asarray(data)
    except (TypeError, ValueError) as exc:  # ragged lists and the like
        raise TypeError(f"`{name}` must be array-like of numbers.") from exc
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_
    ):
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"`{name}` must contain real numbers; got dtype {arr.dtype}."
            ) from exc
    if np.iscomplexobj(arr):
        raise TypeError(f"`{name}` must contain real numbers, not complex ones.")
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
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must not contain NaN or infinite values.")
    return arr


def check_same_dim(x: np.ndarray, y: np.ndarray, names: tuple[str, str] = ("x", "y")) -> None:
    if x.shape[1] != y.shape[1]:
        raise ValueError(
            f"`{names[0]}` and `{names[1]}` must have the same number of columns; "
            f"got {x.shape[1]} and {y.shape[1]}."
        )


def check_paired(x: np.ndarray, y: np.ndarray) -> None:
    if x.shape[0] != y.shape[0]:
        raise ValueError(
            "`x` and `y` must have the same number of observations (paired data); "
            f"got {x.shape[0]} and {y.shape[0]}."
        )


def check_positive_int(value: object, name: str, *, allow_none: bool = False) -> int | None:
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
        raise ValueError(f"`{name}` must be one of {valid}; got {value!r}.")
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
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            "`rng` must be None, an int, a SeedSequence or a Generator; "
            f"got {type(rng).__name__}."
        ) from exc


def check_test_options(method: object, methods: tuple[str, ...], n_resamples: object,
                       batch: object, n_jobs: object, rng: SeedLike
                       ) -> tuple[str, int, int | None, int | None, np.random.Generator]:
    """Validate the options shared by the two tests.

    Returns ``(method, n_resamples, batch, seed, generator)``.
    """
    from ._parallel import resolve_n_jobs

    method = check_choice(method, "method", methods)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    batch = check_positive_int(batch, "batch", allow_none=True)
    resolve_n_jobs(n_jobs)  # type: ignore[arg-type]
    return method, n_resamples, batch, seed_of(rng), check_rng(rng)  # type: ignore[return-value]


def seed_of(rng: SeedLike) -> int | None:
    """The integer seed to report in a result, when the user gave one."""
    if isinstance(rng, (numbers.Integral,)) and not isinstance(rng, bool):
        return int(rng)
    if isinstance(rng, np.random.SeedSequence) and isinstance(rng.entropy, numbers.Integral):
        return int(rng.entropy)
    return None
