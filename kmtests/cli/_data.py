"""The command line's data: CSV files (or standard input) read into float arrays.

Every problem is a ValueError whose message starts with the file's name
(``<stdin>`` for standard input, given as ``-``): a missing or unreadable
file, an empty file, a header without data rows, ragged rows, another
encoding or separator (with a hint), a header that looks like data, nameless
or repeated column names, missing, non-numeric or non-finite cells (with the
column and row), unknown columns, a group column without the groups asked for,
blank labels.
"""

from __future__ import annotations

import contextvars
import csv
import io
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..problems.groups import check_group_sizes, group_labels

if TYPE_CHECKING:  # pandas is imported lazily
    import pandas as pd

STDIN = "-"

#: missing cells are read as NaN (for ``--nan-policy omit``) instead of refused
MISSING_OK: "contextvars.ContextVar[bool]" = contextvars.ContextVar("MISSING_OK", default=False)


def shown(path: str) -> str:
    """The name of `path` in messages and reports."""
    return "<stdin>" if path == STDIN else path


@dataclass
class Table:
    """A CSV file read as strings: its name, bytes (for hints), options and frame."""

    path: str
    data: bytes
    sep: str
    encoding: str
    frame: pd.DataFrame

    @property
    def name(self) -> str:
        return shown(self.path)


def _load(path: str) -> bytes:
    if path == STDIN:
        buffer = getattr(sys.stdin, "buffer", None)
        return buffer.read() if buffer is not None else sys.stdin.read().encode("utf-8")
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None


def _sniff(data: bytes, sep: str, encoding: str) -> str | None:
    """The field separator the first lines seem to use, when it is not `sep`."""
    sample = data[:4096].decode(encoding, errors="replace")
    try:
        found = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return None
    return None if found == sep else found


def _sep_hint(data: bytes, sep: str, encoding: str) -> str:
    found = _sniff(data, sep, encoding)
    if found is None:
        return ""
    shown_sep = "\\t" if found == "\t" else found
    return f"; the file seems to be separated by '{shown_sep}': use --sep '{shown_sep}'"


def _bad_byte(data: bytes, encoding: str) -> str:
    """Where the data stop being `encoding` text: the byte and its line."""
    try:
        data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        return f"byte 0x{data[exc.start]:02x} on line {line}"
    return "a byte sequence"  # pragma: no cover - pandas and Python disagree


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_csv(path: str, sep: str = ",", encoding: str = "utf-8") -> Table:
    """The file (``-``: standard input) as strings, its header line as the column names."""
    import pandas as pd

    data = _load(path)
    name = shown(path)
    try:
        raw = pd.read_csv(io.BytesIO(data), sep=sep, encoding=encoding, header=None, dtype=str,
                          keep_default_na=False, skip_blank_lines=True)
    except UnicodeDecodeError:
        raise ValueError(f"{name}: not {encoding} text ({_bad_byte(data, encoding)}); give "
                         "the file's encoding with --encoding, e.g. --encoding latin-1") from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"{name}: the file is empty") from None
    except pd.errors.ParserError as exc:
        detail = str(exc).strip().split("C error: ")[-1]
        raise ValueError(f"{name}: rows have different numbers of fields ({detail})"
                         + _sep_hint(data, sep, encoding)) from None
    names = [str(v).strip() if isinstance(v, str) else "" for v in raw.iloc[0]]
    if len(names) == 1:  # e.g. a ';'-separated file read with ','
        found = _sniff(data, sep, encoding)
        if found is not None and found in names[0]:
            raise ValueError(f"{name}: the file has a single column {names[0]!r}"
                             + _sep_hint(data, sep, encoding))
    frame = raw.iloc[1:].reset_index(drop=True)
    frame.columns = names
    if all(_is_number(v) for v in names):
        raise ValueError(f"{name}: the first line {names} looks like data, not a header; "
                         "the file needs a header line naming its columns")
    dup = sorted({v for v in names if names.count(v) > 1 and v})
    if dup:
        raise ValueError(f"{name}: column name(s) {dup} appear more than once in the header")
    if len(frame) == 0:
        raise ValueError(f"{name}: the file has a header line but no data rows")
    return Table(path, data, sep, encoding, frame)


def unnamed_column(table: Table, option: str = "--columns") -> ValueError | None:
    if "" not in table.frame.columns:
        return None
    return ValueError(f"{table.name}: column {list(table.frame.columns).index('') + 1} has no "
                      f"name (an index written by pandas' to_csv?); choose columns with {option}")


def columns(table: Table, cols: Sequence[str] | None, option: str = "--columns",
            rows: np.ndarray | None = None) -> np.ndarray:
    """The named columns (default: all) of `table`, as floats; `rows` (a mask) selects
    rows, whose numbers in messages are those of the file."""
    available = list(table.frame.columns)
    if cols is not None:
        missing = [c for c in cols if c not in available]
        if missing:
            raise ValueError(f"{option}: unknown column(s) {missing} in {table.name}; "
                             f"available: {available}")
    else:
        error = unnamed_column(table, option)
        if error is not None:
            raise error
        cols = available
    index = np.arange(len(table.frame)) if rows is None else np.flatnonzero(rows)
    out = np.empty((index.size, len(cols)))
    bad_cols = []
    for j, c in enumerate(cols):
        values = _numeric(table, c, index)
        if values is None:
            bad_cols.append((c, table.frame[c].iloc[index[0]]))
            continue
        out[:, j] = values
    if bad_cols:
        names = [c for c, _ in bad_cols]
        hint = _sep_hint(table.data, table.sep, table.encoding) if len(available) == 1 else ""
        hint = hint or f"; choose numeric columns with {option}"
        raise ValueError(f"{table.name}: non-numeric column(s) {names} (e.g. {bad_cols[0][1]!r} "
                         f"in data row {index[0] + 1}){hint}")
    return out


def _numeric(table: Table, c: str, index: np.ndarray) -> np.ndarray | None:
    """Column `c` at rows `index` as finite floats; None when no cell is a number."""
    import pandas as pd

    text = table.frame[c].iloc[index]
    values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
    stripped = text.fillna("").str.strip()
    blank = text.isna().to_numpy() | (stripped == "").to_numpy()
    unparsable = np.isnan(values) & ~blank & ~stripped.str.lower().isin(
        ["nan", "na", "n/a", "null"]).to_numpy()
    if unparsable.all():
        return None
    if unparsable.any():
        i = int(np.argmax(unparsable))
        raise ValueError(f"{table.name}: column {c!r} has a non-numeric value {text.iloc[i]!r} "
                         f"in data row {index[i] + 1}")
    nonfinite = ~np.isfinite(values)
    if MISSING_OK.get():
        nonfinite &= ~np.isnan(values)  # missing: NaN, for the test to omit
    if nonfinite.any():
        i = int(np.argmax(nonfinite))
        what = "a missing value (an empty cell or a short row)" if (
            blank[i] or np.isnan(values[i])) else f"the value {text.iloc[i]!r}"
        hint = " (or --nan-policy omit to drop its rows)" if "missing" in what else ""
        raise ValueError(f"{table.name}: column {c!r} has {what} in data row {index[i] + 1}; "
                         f"the tests need finite numbers{hint}")
    return values


def labels(table: Table, column: str, option: str, rows: np.ndarray | None = None) -> np.ndarray:
    """Column `column` of `table` as label strings (at the mask `rows`); no blank cell."""
    if column not in table.frame.columns:
        raise ValueError(f"{option}: unknown column {column!r} in {table.name}; available: "
                         f"{list(table.frame.columns)}")
    text = table.frame[column].fillna("").str.strip()
    index = np.arange(len(text)) if rows is None else np.flatnonzero(rows)
    values = text.to_numpy(dtype=object)[index]
    blank = values == ""
    if blank.any():
        i = int(np.argmax(blank))
        raise ValueError(f"{table.name}: column {column!r} ({option}) has an empty cell in data "
                         f"row {index[i] + 1}")
    return values.astype(str)


def split_by_group(table: Table, group: str, groups: Sequence[str] | None,
                   cols: Sequence[str] | None, *, k: int | None = 2,
                   exclude: Sequence[str] = ()
                   ) -> tuple[list[np.ndarray], list[np.ndarray], str, list[str]]:
    """The samples of a file with a group column: ``(samples, masks, data_name, groups)``.

    The samples are the rows of the group column's values (those of `groups`
    in their order, or all of them in order of first appearance; exactly `k`
    of them when `k` is given); the data are the other columns but `exclude`,
    or `cols`. `masks` are the samples' rows.
    """
    frame = table.frame
    if group not in frame.columns:
        raise ValueError(f"--group: unknown column {group!r} in {table.name}; available: "
                         f"{list(frame.columns)}")
    flag = f"--group {group}"
    values = group_labels(frame[group], flag, table.name, MISSING_OK.get(), "--nan-policy omit")
    present = [v for v in dict.fromkeys(values) if v != ""]
    what = "a two-sample test compares two groups" if k == 2 else \
        "a k-sample test compares at least two groups"
    if groups is None:
        if (k is not None and len(present) != k) or len(present) < 2:
            more = (f", or compare all {len(present)} with kmtests k-sample {table.path} "
                    f"--group {group}" if k == 2 and len(present) > 2 else "")
            raise ValueError(
                f"--group {group}: column {group!r} of {table.name} has {len(present)} "
                f"value(s) {present[:10]}; {what}: choose them with --groups "
                + ("A,B" if k == 2 else "A,B,C") + more)
        groups = present
    elif (k is not None and len(groups) != k) or len(groups) < 2 \
            or len(set(groups)) != len(groups):
        count = "two" if k == 2 else "at least two"
        raise ValueError(f"--groups must name {count} different values of column {group!r}; "
                         f"got {list(groups)}")
    else:
        missing = [g for g in groups if g not in present]
        if missing:
            raise ValueError(f"--groups: value(s) {missing} do not occur in column {group!r} of "
                             f"{table.name}; its values: {present[:10]}")
    if cols is not None:
        for c, option in [(group, "group"), *((e, "--strata") for e in exclude)]:
            if c in cols:
                raise ValueError(f"--columns must not contain the {option} column {c!r}")
    skip = {group, *exclude}
    data_cols = list(cols) if cols is not None else [c for c in frame.columns if c not in skip]
    if not data_cols:
        raise ValueError(f"{table.name}: no column besides the group column {group!r}")
    if cols is None and "" in data_cols:
        raise unnamed_column(table) or ValueError(table.name)
    masks = check_group_sizes(values, groups, flag, table.name)
    samples = [columns(table, data_cols, rows=m) for m in masks]
    name = f"{table.name}: {group} = " + ", ".join(str(g) for g in groups)
    if len(groups) == 2:
        name = f"{table.name}: {group} = {groups[0]} and {group} = {groups[1]}"
    return samples, masks, name, [str(g) for g in groups]
