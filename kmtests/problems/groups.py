"""Samples from one table and a group column: the Python counterpart of the command
line's ``--group`` (issue 32).

:func:`by_group` splits a DataFrame's rows by the values of one column into the
samples of a two-sample or k-sample test, with the command line's rules, which
:func:`group_labels` and :func:`check_group_sizes` hold for both: labels are read
without surrounding spaces but two spellings of one label ("a " and "a") are refused,
rows without a label are refused (or left out with ``nan_policy="omit"``), and each
group needs two rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Groups", "by_group", "check_group_sizes", "group_labels"]


def group_labels(raw: "pd.Series", flag: str, where: str, omit: bool,
                 omit_flag: str) -> "pd.Series":
    """The labels of a group column without surrounding spaces ("" for a missing label),
    refusing two spellings of a label and, unless `omit`, rows without one.

    `flag` names the column in the messages (``"--group g"``, ``"group='g'"``), `where`
    the table, `omit_flag` the option that leaves unlabelled rows out.
    """
    raw = raw.astype("string").fillna("")
    values = raw.str.strip()
    spelled = raw != values
    for lab in dict.fromkeys(values[spelled]):
        alt = sorted(set(raw[values == lab]))
        if len(alt) > 1:
            raise ValueError(
                f"{flag}: the column of {where} spells the label {lab!r} in {len(alt)} ways "
                f"({', '.join(repr(a) for a in alt)}), which differ only by spaces; write "
                "them alike, or they would be taken for one group without a word")
    missing = np.flatnonzero((values == "").to_numpy())
    if missing.size and not omit:
        rows = ", ".join(str(i + 1) for i in missing[:5])
        raise ValueError(
            f"{flag}: {missing.size} row(s) of {where} have no label (data row(s) {rows}"
            f"{', ...' if missing.size > 5 else ''}); give them one, or {omit_flag} to "
            "leave them out")
    return values


def check_group_sizes(values: "pd.Series", groups: Sequence[str], flag: str,
                      where: str) -> list[np.ndarray]:
    """The rows of each group (boolean masks); a group with fewer than two rows is refused
    by its label."""
    masks = [(values == g).to_numpy() for g in groups]
    for g, m in zip(groups, masks):
        if int(m.sum()) < 2:
            raise ValueError(f"{flag}: group {g!r} of {where} has {int(m.sum())} row(s); "
                             "each group needs at least 2")
    return masks


@dataclass(frozen=True)
class Groups(Sequence[Any]):
    """The samples of :func:`by_group`, in order: unpack them into a test
    (``two_sample_test(*g)``, ``k_sample_test(*g, sample_names=g.names)``).

    Attributes
    ----------
    samples : tuple of DataFrame
        The rows of each group, the data columns only.
    names : tuple of str
        The groups' labels, in the samples' order.
    data_name : str
        ``"group = a and group = b"``: pass it as the test's `data_name`.
    """

    samples: tuple[Any, ...]
    names: tuple[str, ...]
    data_name: str

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.samples)

    def __getitem__(self, i: Any) -> Any:
        return self.samples[i]


def by_group(data: Any, group: str, *, groups: Sequence[str] | None = None,
             columns: Sequence[str] | None = None, nan_policy: str = "raise") -> Groups:
    """Split a DataFrame's rows into samples by the labels of its column `group`.

    The Python counterpart of the command line's ``--group`` (and ``--groups``,
    ``--columns``): one table with a group column instead of one array per sample.

    Parameters
    ----------
    data : pandas.DataFrame
        The table: one row per observation.
    group : str
        The column whose labels say which sample a row belongs to. Labels are
        read without surrounding spaces; two spellings of one label (``"a "`` and
        ``"a"``) are refused rather than merged.
    groups : sequence of str, optional
        The labels to compare, in this order (default: every label, in order of
        first appearance).
    columns : sequence of str, optional
        The data columns (default: every column but `group`).
    nan_policy : {"raise", "omit"}
        Rows without a label: refused (default), or left out. Missing values in
        the data columns are the test's to handle (its own `nan_policy`).

    Returns
    -------
    Groups
        The samples (DataFrames), their labels (``names``) and a ``data_name``.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from kmtests import by_group, two_sample_test
    >>> gen = np.random.default_rng(0)
    >>> trial = pd.DataFrame({"arm": ["ctl"] * 30 + ["trt"] * 30,
    ...                       "u": np.r_[gen.normal(size=30), gen.normal(1.0, size=30)]})
    >>> g = by_group(trial, "arm")
    >>> g.names, [len(s) for s in g]
    (('ctl', 'trt'), [30, 30])
    >>> res = two_sample_test(*g, data_name=g.data_name, n_resamples=199, rng=1)
    >>> print(res.data_name, res.pvalue < 0.05)
    arm = ctl and arm = trt True
    """
    import pandas as pd

    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    from .._validation import check_choice

    omit = check_choice(nan_policy, "nan_policy", ("raise", "omit")) == "omit"
    if group not in data.columns:
        raise ValueError(f"`group`: unknown column {group!r}; the columns: "
                         f"{[str(c) for c in data.columns]}.")
    flag = f"group={group!r}"
    values = group_labels(data[group], flag, "`data`", omit, "nan_policy='omit'")
    present = [str(v) for v in dict.fromkeys(values) if v != ""]
    if groups is None:
        if len(present) < 2:
            raise ValueError(f"{flag}: the column has {len(present)} label(s) {present}; a "
                             "test compares at least two groups.")
        chosen = present
    else:
        chosen = [str(g) for g in groups]
        unknown = [g for g in chosen if g not in present]
        if len(chosen) < 2 or len(set(chosen)) != len(chosen) or unknown:
            raise ValueError(f"`groups` must name at least two different labels of column "
                             f"{group!r} (its labels: {present[:10]}); got {list(groups)}.")
    cols = [c for c in data.columns if c != group] if columns is None else list(columns)
    bad = [c for c in cols if c not in data.columns or c == group]
    if bad or not cols:
        raise ValueError(f"`columns` must name data columns other than {group!r}; got "
                         f"{list(cols)}.")
    masks = check_group_sizes(values, chosen, flag, "`data`")
    samples = tuple(data.loc[m, cols] for m in masks)
    name = (f"{group} = {chosen[0]} and {group} = {chosen[1]}" if len(chosen) == 2
            else f"{group} = " + ", ".join(chosen))
    return Groups(samples, tuple(chosen), name)
