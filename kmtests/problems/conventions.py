"""The input conventions every test shares, in one place: `alternative`, `nan_policy`, `axis`.

The tests take scipy.stats' keywords where they have a meaning, and say so where
they do not (:doc:`/user_guide/conventions`):

* ``alternative="greater"`` (the default and the only value): every statistic of
  kmtests estimates a squared distance between kernel embeddings (MMD^2, HSIC,
  dHSIC, KCI ...) that is 0 under the null hypothesis and positive under the
  alternatives the kernel detects, so only large values are evidence against the
  null. ``"two-sided"`` and ``"less"`` are refused with that reason.
* ``nan_policy``: ``"raise"`` (default; the message names the argument, the row
  and the column of the first missing value) or ``"omit"`` (the observations with a
  missing value are left out: a sample's own rows for two or k samples, the whole
  row of every variable for paired data, as pandas' pairwise-complete
  ``dropna``); scipy's ``"propagate"`` is refused: a test has no NaN answer.
  Infinities are not missing values: they raise under either policy.
* ``axis``: which axis of a 2-D array holds the observations: 0 (default; rows are
  observations, columns variables) or 1 (columns are observations, as in
  genes-by-samples tables; a DataFrame is transposed). It does not batch tests as
  scipy's one-dimensional tests do: a kmtests test is multivariate. 1-D data are n
  observations of one variable whatever `axis` is.

:func:`prepare_data` applies `axis` and `nan_policy` to the data arguments of a test
before the problem is built (:mod:`kmtests.problems.data`); the problem keeps a note
of the observations left out, which the report prints.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._validation import as_sample, check_choice, locate, shown

__all__ = ["ALTERNATIVES", "NAN_POLICIES", "check_alternative", "check_axis",
           "check_nan_policy", "prepare_data"]

#: the alternatives scipy's tests name, and the one a kernel test has
ALTERNATIVES = ("greater",)
#: the missing-value policies the tests take ("propagate" is refused)
NAN_POLICIES = ("omit", "raise")


def check_alternative(alternative: Any) -> str:
    """`alternative` validated: ``"greater"``, the only alternative of a kernel test.

    Examples
    --------
    >>> check_alternative("greater")
    'greater'
    >>> check_alternative("two-sided")
    Traceback (most recent call last):
    ...
    ValueError: alternative='two-sided' has no meaning for a kernel test: ...
    """
    if isinstance(alternative, str) and alternative.lower() == "greater":
        return "greater"
    if isinstance(alternative, str) and alternative.lower() in ("two-sided", "less"):
        raise ValueError(
            f"alternative={shown(alternative)} has no meaning for a kernel test: its "
            "statistic "
            "estimates a squared distance between kernel embeddings (MMD^2, HSIC, dHSIC, "
            "KCI), which is 0 under the null hypothesis and positive under the alternatives "
            "the kernel detects, so only large values are evidence against the null (an "
            "unbiased statistic below 0 is evidence for it). The test is one-sided: use "
            "alternative='greater' (the default).")
    raise ValueError(f"`alternative` must be 'greater' (kernel tests are one-sided); got "
                     f"{shown(alternative)}.")


def check_nan_policy(nan_policy: Any) -> str:
    """`nan_policy` validated: ``"raise"`` or ``"omit"``; ``"propagate"`` is refused."""
    if isinstance(nan_policy, str) and nan_policy.lower() == "propagate":
        raise ValueError("nan_policy='propagate' would give a NaN statistic and p-value, which "
                         "mean nothing as a test result; use nan_policy='raise' (the default: "
                         "the message names the first missing value) or 'omit' (leave out the "
                         "observations with a missing value).")
    return check_choice(nan_policy, "nan_policy", NAN_POLICIES)


def check_axis(axis: Any) -> int:
    """`axis` validated: 0 (rows are observations) or 1 (columns are observations)."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)) \
            or int(axis) not in (0, 1):
        raise ValueError(f"`axis` must be 0 (the rows are the observations) or 1 (the columns "
                         f"are); got {axis!r}. A kernel test is multivariate: `axis` does not "
                         "run one test per row or column as scipy's one-dimensional tests do.")
    return int(axis)


def _is_pandas(data: Any) -> bool:
    return type(data).__module__.split(".")[0] == "pandas" and hasattr(data, "to_numpy")


def _oriented(data: Any, axis: int) -> Any:
    """`data` with its observations along axis 0 (2-D data transposed when ``axis=1``)."""
    if axis == 0 or np.ndim(data) != 2:
        return data
    if _is_pandas(data):
        return data.T
    if isinstance(data, np.ma.MaskedArray):
        return data  # refused as it is by as_sample (masks are not applied)
    try:
        return np.asarray(data).T
    except (TypeError, ValueError):  # ragged: as_sample says what is wrong
        return data


def _rows(flags: np.ndarray, limit: int = 8) -> str:
    """Row numbers in words: ``"rows 2, 7 and 9"`` (at most `limit`, then a count)."""
    idx = [str(int(i)) for i in np.flatnonzero(flags)]
    if len(idx) > limit:
        return f"rows {', '.join(idx[:limit])} and {len(idx) - limit} more"
    if len(idx) == 1:
        return f"row {idx[0]}"
    return f"rows {', '.join(idx[:-1])} and {idx[-1]}"


def _take(data: Any, arr: np.ndarray, keep: np.ndarray, gram: bool) -> Any:
    if gram:
        return arr[np.ix_(keep, keep)]
    if _is_pandas(data):
        return data.iloc[np.flatnonzero(keep)]
    return arr[keep]


def prepare_data(data: Sequence[Any], names: Sequence[str], *, axis: Any = 0,
                 nan_policy: Any = "raise", paired: bool, gram: Sequence[bool] | None = None,
                 align: Any = None) -> tuple[list[Any], list[str]]:
    """The data arguments of a test with `axis` and `nan_policy` applied.

    Parameters
    ----------
    data : sequence of array_like
        The data arguments (samples, or paired variables).
    names : sequence of str
        Their argument names, for messages and notes.
    axis, nan_policy
        As the tests take them (module docs).
    paired : bool
        Whether row i of every argument is one observation (independence, joint,
        conditional): then ``"omit"`` leaves out the rows with a missing value in any
        argument. Otherwise (two or k samples) each argument loses its own.
    gram : sequence of bool, optional
        Which arguments are Gram matrices (``kernel="precomputed"``): not oriented, and
        a missing value in one is an error under either policy; the rows left out of
        paired data are left out of its rows and columns.
    align : callable, optional
        ``align(first, other, (name_first, name_other))``: puts paired pandas inputs in
        the first one's row order before rows are left out (pairs are matched by
        index label, :func:`kmtests.problems.data.align_index`).

    Returns
    -------
    data : list
        The arguments, observations along axis 0, rows with a missing value left
        out (pandas objects stay pandas objects: their names and labels are kept).
    notes : list of str
        What was left out, for the report (empty when nothing was).

    Raises
    ------
    ValueError
        A missing value with ``nan_policy="raise"`` (naming the argument, row and
        column), a missing value in a Gram matrix, an infinite value, fewer than 2
        observations left, an invalid `axis` or `nan_policy`.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, 2.0], [np.nan, 0.5], [3.0, 1.0], [0.0, 0.0]])
    >>> y = np.array([4.0, 5.0, np.nan, 6.0])
    >>> (xo, yo), notes = prepare_data([x, y], ["x", "y"], nan_policy="omit", paired=True)
    >>> xo.tolist(), yo.ravel().tolist()
    ([[1.0, 2.0], [0.0, 0.0]], [4.0, 6.0])
    >>> print(notes[0])
    nan_policy='omit': 2 of the 4 paired observations had a missing value and were left out (x: row 1; y: row 2)
    >>> (t,), _ = prepare_data([np.arange(6.0).reshape(2, 3)], ["x"], axis=1, paired=False)
    >>> t.shape
    (3, 2)
    """
    axis_ = check_axis(axis)
    policy = check_nan_policy(nan_policy)
    flags = [False] * len(data) if gram is None else [bool(g) for g in gram]
    out = [d if g else _oriented(d, axis_) for d, g in zip(data, flags)]
    if paired and align is not None and not any(flags):
        out = [out[0]] + [align(out[0], d, (names[0], n)) for d, n in zip(out[1:], names[1:])]
    arrays = [as_sample(d, n, min_size=0, allow_nan=True) for d, n in zip(out, names)]
    missing = [np.isnan(a).any(axis=1) for a in arrays]
    if paired and len({a.shape[0] for a in arrays}) > 1:
        return out, []  # different numbers of observations: the problem says so
    _refuse_missing(out, arrays, names, flags, missing, policy)
    if not any(m.any() for m in missing):
        return out, []
    if paired:
        return _omit_paired(out, arrays, names, flags, missing)
    return _omit_each(out, arrays, names, missing)


def _refuse_missing(out: list[Any], arrays: list[np.ndarray], names: Sequence[str],
                    flags: list[bool], missing: list[np.ndarray], policy: str) -> None:
    """A missing value in a Gram matrix, or in data under ``nan_policy="raise"``, is an error
    (:func:`prepare_data`)."""
    for d, a, n, g, m in zip(out, arrays, names, flags, missing):
        if not m.any():
            continue
        where = locate(d, a, np.isnan(a), n)
        if g:
            raise ValueError(f"`{n}` is a precomputed Gram matrix with a missing value ({where} "
                             "is NaN): nan_policy leaves out observations of data, not entries "
                             "of a Gram matrix. Compute it from complete data.")
        if policy == "raise":
            raise ValueError(
                f"`{n}` must not contain NaN or infinite values (missing values included): "
                f"{where} is missing (NaN). Pass nan_policy='omit' to leave out the "
                "observations with a missing value (for paired data, the whole row of "
                "every variable), or remove or fill them.")


def _omit_paired(out: list[Any], arrays: list[np.ndarray], names: Sequence[str],
                 flags: list[bool], missing: list[np.ndarray]) -> tuple[list[Any], list[str]]:
    """Paired data without the rows that miss a value in any argument (:func:`prepare_data`)."""
    notes: list[str] = []
    drop = np.logical_or.reduce(missing)
    keep = ~drop
    lost = "; ".join(f"{n}: {_rows(m)}" for n, m in zip(names, missing) if m.any())
    notes.append(f"nan_policy='omit': {int(drop.sum())} of the {drop.size} paired "
                 f"observations had a missing value and were left out ({lost})")
    if keep.sum() < 2:
        raise ValueError(f"nan_policy='omit' leaves {int(keep.sum())} of the {drop.size} "
                         "paired observations (the others have a missing value); a test "
                         "needs at least 2.")
    return [_take(d, a, keep, g) for d, a, g in zip(out, arrays, flags)], notes


def _omit_each(out: list[Any], arrays: list[np.ndarray], names: Sequence[str],
               missing: list[np.ndarray]) -> tuple[list[Any], list[str]]:
    """Each sample without its own observations that miss a value (:func:`prepare_data`)."""
    notes: list[str] = []
    result = []
    for d, a, n, m in zip(out, arrays, names, missing):
        if m.any():
            notes.append(f"nan_policy='omit': {int(m.sum())} of the {m.size} observations of "
                         f"{n} had a missing value and were left out ({_rows(m)})")
            if (~m).sum() < 2:
                raise ValueError(f"nan_policy='omit' leaves {int((~m).sum())} of the {m.size} "
                                 f"observations of `{n}` (the others have a missing value); a "
                                 "test needs at least 2.")
            result.append(_take(d, a, ~m, False))
        else:
            result.append(d)
    return result, notes
