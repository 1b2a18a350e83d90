"""Summary container for reports: statsmodels ``SimpleTable`` tables plus notes."""

from __future__ import annotations

import copy
import textwrap
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # statsmodels is imported when a report is built
    from statsmodels.iolib.table import SimpleTable


_WIDTH = 78


def format_number(v: float | None, digits: int = 4) -> str:
    if v is None:
        return "-"
    if v == 0:
        return "0"
    av = abs(v)
    if av >= 1e5 or av < 1e-4:
        return f"{v:.{digits}g}" if av >= 1e5 else f"{v:.{digits - 1}e}"
    return f"{v:.{digits}g}"


def format_pvalue(p: float, *, floor: float | None = None, sign: bool = True) -> str:
    """R ``format.pval``-like: 4 significant digits; ``< 2.2e-16`` below machine precision.

    With ``sign=True`` the relation is included, as R's ``print.htest`` writes
    it after ``p-value``: ``"= 0.0312"`` or ``"< 2.2e-16"`` (never ``"= < ..."``).
    """
    if p < 2.2e-16 and not (floor is not None and p <= floor) and p != 0:
        return "< 2.2e-16"
    text = "0" if p == 0 else f"{p:.4g}"
    return f"= {text}" if sign else text


def info_table(rows: Sequence[tuple[str, str]], title: str) -> SimpleTable:
    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_2cols

    """Two-column key/value header table, statsmodels ``add_table_2cols`` look."""
    half = (len(rows) + 1) // 2
    left, right = list(rows[:half]), list(rows[half:])
    right += [("", "")] * (len(left) - len(right))
    data = [[f"{lk}:" if lk else "", lv, f"{rk}:" if rk else "", rv]
            for (lk, lv), (rk, rv) in zip(left, right)]
    fmt = copy.deepcopy(fmt_2cols)
    fmt.update(data_fmts=["%s"] * 4, colwidths=[16, 22, 16, 21], data_aligns="lrlr")
    return SimpleTable(data, title=title, txt_fmt=fmt)


def result_table(stub: str, header: Sequence[str], values: Sequence[str]) -> SimpleTable:
    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_params

    fmt = copy.deepcopy(fmt_params)
    return SimpleTable([list(values)], headers=list(header), stubs=[stub], txt_fmt=fmt)


class Summary:
    """A report made of tables and notes; renders as text (``str``) and HTML.

    Attributes
    ----------
    tables : list of statsmodels SimpleTable
    notes : list of str
    """

    def __init__(self, tables: list[SimpleTable], notes: list[str] | None = None) -> None:
        self.tables = tables
        self.notes = list(notes or [])

    def as_text(self) -> str:
        parts = [t.as_text() for t in self.tables]
        if self.notes:
            parts.append("Notes:\n" + "\n".join(
                textwrap.fill(f"[{i + 1}] {n}", width=_WIDTH, subsequent_indent="    ")
                for i, n in enumerate(self.notes)))
        return "\n".join(parts)

    def as_html(self) -> str:
        parts = [t.as_html() for t in self.tables]
        if self.notes:
            parts.append("Notes:<br/>" + "<br/>".join(
                f"[{i + 1}] {n}" for i, n in enumerate(self.notes)))
        return "\n".join(parts)

    def _repr_html_(self) -> str:
        return self.as_html()

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return self.as_text()
