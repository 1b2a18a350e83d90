"""Formatting helpers and the report container (statsmodels ``SimpleTable`` tables plus notes).

Every text a report prints fits in :data:`WIDTH` columns (78, as statsmodels'
summaries): values are formatted to 4 significant digits, long lists are
summarised (:func:`format_value`), and what does not fit goes to a note.
"""

from __future__ import annotations

import copy
import html
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple

import numpy as np

if TYPE_CHECKING:  # statsmodels is imported when a report is built
    from statsmodels.iolib.table import SimpleTable

__all__ = ["Annotated", "Summary", "WIDTH", "fill_widths", "flow", "format_bound",
           "format_number",
           "format_pvalue", "format_value", "html_settings_table", "result_table",
           "settings_table"]

#: width of every table and wrapped line of a report
WIDTH = 78

#: one entry of a settings table: a key and a value, or None (an empty cell pair)
Pair = Optional[Tuple[str, Any]]


def format_number(v: float | None, digits: int = 4) -> str:
    """A number to `digits` significant digits, as R prints it.

    Examples
    --------
    >>> print(format_number(0.0360213), format_number(123456.7), format_number(1.27e-5))
    0.03602 1.235e+05 1.270e-05
    """
    if v is None:
        return "-"
    if v == 0:
        return "0"
    if not np.isfinite(v):
        return str(v)
    av = abs(v)
    if av >= 1e5 or av < 1e-4:
        return f"{v:.{digits}g}" if av >= 1e5 else f"{v:.{digits - 1}e}"
    return f"{v:.{digits}g}"


def format_pvalue(p: float, *, floor: float | None = None, sign: bool = True) -> str:
    """R ``format.pval``-like: 4 significant digits; ``< 2.2e-16`` below machine precision.

    A p-value below 2.2e-16 (also 0, an underflow of the gamma approximation)
    prints as ``< 2.2e-16`` unless `floor` (the smallest p-value the method
    can give) says it is exact. With ``sign=True`` the relation is included as
    R's ``print.htest`` writes it after ``p-value``: ``"= 0.0312"`` or
    ``"< 2.2e-16"``, never ``"= < 2.2e-16"``.

    Examples
    --------
    >>> print("p-value", format_pvalue(0.031234), "| p-value", format_pvalue(3e-20))
    p-value = 0.03123 | p-value < 2.2e-16
    >>> print(format_pvalue(3e-20, sign=False), format_pvalue(0.5, sign=False))
    < 2.2e-16 0.5
    """
    if p < 2.2e-16 and not (floor is not None and p >= floor):
        return "< 2.2e-16"
    text = f"{p:.4g}"
    return f"= {text}" if sign else text


def format_bound(p: float) -> str:
    """An end of a p-value's interval: 4 significant digits, ``0`` printed as such."""
    return "0" if p == 0 else f"{p:.4g}"


@dataclass(frozen=True)
class Annotated:
    """A setting's value followed by a remark, e.g. ``1.8 (median)``.

    `short` is the remark used when the value with `remark` does not fit;
    `lossless` says that it says the same (otherwise the value counts as
    shortened, and the report adds the full text in a note).
    """

    value: Any
    remark: str = ""
    short: str = ""
    lossless: bool = False

    def __str__(self) -> str:
        text = format_value(self.value)[0]
        return f"{text} {self.remark}" if self.remark else text


def _fits(text: str, width: int | None) -> bool:
    return width is None or len(text) <= width


def format_value(v: Any, width: int | None = None) -> tuple[str, bool]:
    """A setting's value as text of at most `width` characters.

    Floats get 4 significant digits; a list that does not fit is summarised
    (``"30 values in [0.04, 0.11]"``, shorter forms if that does not fit;
    booleans: ``"2 of 30"``, the number that are true); a string that does
    not fit is cut with ``"..."``.

    Returns
    -------
    text : str
    shortened : bool
        Whether information was left out (the caller may add a note).

    Examples
    --------
    >>> format_value([0.5, 0.25], 20)
    ('[0.5, 0.25]', False)
    >>> format_value(np.linspace(0.04, 0.11, 30), 26)
    ('30 values in [0.04, 0.11]', True)
    >>> format_value([True, False, False], 20)
    ('1 of 3', False)
    >>> format_value(Annotated(1.80123, "(median)"), 20)
    ('1.801 (median)', False)
    >>> format_value(Annotated("Polynomial", "(degree = 2, coef0 = 1)", "(...)"), 20)
    ('Polynomial (...)', True)
    """
    if isinstance(v, Annotated):
        return _format_annotated(v, width)
    if isinstance(v, (list, tuple, np.ndarray)):
        return _format_list(v, width)
    if isinstance(v, (bool, np.bool_)):
        return _cut(str(bool(v)), width)
    if isinstance(v, (float, np.floating)):
        return _cut(format_number(float(v)), width)
    return _cut(str(v), width)


def _format_annotated(v: Annotated, width: int | None) -> tuple[str, bool]:
    """A value with its remark (the short remark, or the value summarised, if needed)."""
    if not v.remark:
        return format_value(v.value, width)
    room = width
    for remark in dict.fromkeys((v.remark, v.short or v.remark)):
        room = None if width is None else max(width - len(remark) - 1, 1)
        text, short = format_value(v.value, room)
        if _fits(f"{text} {remark}", width) and not short:
            return f"{text} {remark}", remark != v.remark and not v.lossless
    text, short = format_value(v.value, room)   # the value alone, summarised to fit
    out = f"{text} {remark}"
    return (out, short or remark != v.remark and not v.lossless) if _fits(out, width) \
        else _cut(out, width)


def _format_list(v: Any, width: int | None) -> tuple[str, bool]:
    """A list in full, or summarised as its size and range (booleans: how many are true)."""
    vals = list(np.ravel(np.asarray(v, dtype=object)))
    if vals and all(isinstance(u, (bool, np.bool_)) for u in vals):
        return _cut(f"{sum(bool(u) for u in vals)} of {len(vals)}", width)
    try:
        nums = [float(u) for u in vals]
    except (TypeError, ValueError):
        return _cut("[" + ", ".join(str(u) for u in vals) + "]", width)
    full = "[" + ", ".join(format_number(u) for u in nums) + "]"
    if _fits(full, width) or not nums:
        return full, False
    n = len(nums)
    for digits in (4, 3, 2, 1):
        lo, hi = format_number(min(nums), digits), format_number(max(nums), digits)
        for text in (f"{n} values in [{lo}, {hi}]", f"{n} in [{lo}, {hi}]"):
            if _fits(text, width):
                return text, True
    return _cut(full, width)


def _cut(text: str, width: int | None) -> tuple[str, bool]:
    if _fits(text, width):
        return text, False
    assert width is not None
    return text[:max(width - 3, 0)].rstrip() + "...", True


def settings_table(lines: Sequence[tuple[Pair, ...]], title: str,
                   width: int = WIDTH) -> tuple[list[SimpleTable], list[str]]:
    """Key/value settings table in two columns (statsmodels ``add_table_2cols`` look).

    Each line is a (left, right) pair of ``(key, value)`` entries (either may
    be None), or a 1-tuple: one entry whose value may use the whole width.
    The keys are right-aligned and end with ``:``, so the separators of each
    column are at the same position on every line; the values are formatted
    to fit (:func:`format_value`) and every line is exactly `width` wide.

    Returns
    -------
    tables : list of SimpleTable
        One table per run of two-column or one-column lines; their text
        stacks into one table (title on the first, rules above and below).
    shortened : list of str
        Keys whose values were shortened to fit.
    """
    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_2cols

    half = (width - 1) // 2           # the left half; the right one has the rest

    def key_width(keys: list[str]) -> int:
        return min(max((len(k) + 1 for k in keys), default=1), half // 2)

    kl = key_width([ln[0][0] for ln in lines if ln[0] is not None])
    kr = key_width([ln[1][0] for ln in lines if len(ln) == 2 and ln[1] is not None])
    shortened: list[str] = []

    def cells(entry: Pair, kw: int, vw: int) -> list[str]:
        if entry is None:
            return ["", ""]
        key, value = entry
        text, short = format_value(value, vw)
        if short:
            shortened.append(key)
        return [_cut(f"{key}:", kw)[0], text]

    blocks: list[list[tuple[Pair, ...]]] = []
    for line in lines:
        if blocks and len(blocks[-1][0]) == len(line):
            blocks[-1].append(line)
        else:
            blocks.append([line])
    tables: list[SimpleTable] = []
    for i, block in enumerate(blocks):
        fmt = copy.deepcopy(fmt_2cols)
        if len(block[0]) == 2:
            vl, vr = half - 1 - kl, width - half - 2 - kr
            data = [cells(ln[0], kl, vl) + cells(ln[1], kr, vr) for ln in block]
            fmt.update(data_fmts=["%s"] * 4, colwidths=[kl, vl, kr, vr], data_aligns="rlrl")
        else:
            data = [cells(ln[0], kl, width - 1 - kl) for ln in block]
            fmt.update(data_fmts=["%s"] * 2, colwidths=[kl, width - 1 - kl], data_aligns="rl")
        fmt.update(table_dec_above="=" if i == 0 else None,
                   table_dec_below="=" if i == len(blocks) - 1 else None)
        tables.append(SimpleTable(data, title=title if i == 0 else "", txt_fmt=fmt))
    return tables, shortened


def html_settings_table(tables: Sequence[SimpleTable]) -> SimpleTable:
    """The blocks of :func:`settings_table` as one 4-column table, for HTML.

    In HTML the columns size themselves, so the one-column lines need no
    table of their own: their value goes in the second column.
    """
    from statsmodels.iolib.table import SimpleTable

    data = [[str(c.data) for c in row] + ["", ""] * (len(row) == 2)
            for t in tables for row in t]
    return SimpleTable(data, title=tables[0].title if tables else "")


def fill_widths(stub: int, cols: Sequence[int], width: int = WIDTH) -> tuple[int, list[int]]:
    """Column widths of a stub and value columns (one space between columns) that add up
    to `width`: the stub up to 24 characters, the rest shared by the value columns.

    Every table of a report is then `width` wide, whatever its number of columns. Columns
    that do not fit as they are keep their widths (the table is then wider).

    Examples
    --------
    >>> fill_widths(7, [14, 14], 78)
    (24, [26, 26])
    >>> s, c = fill_widths(13, [9, 9, 9, 9], 78); s + sum(c) + len(c)
    78
    """
    cols = list(cols)
    room = width - sum(cols) - len(cols)
    stub_w = max(stub, min(room, 24))
    extra = width - stub_w - sum(cols) - len(cols)
    if extra > 0 and cols:
        share, rest = divmod(extra, len(cols))
        cols = [c + share + (i < rest) for i, c in enumerate(cols)]
    return stub_w, cols


def result_table(stub: str, header: Sequence[str], values: Sequence[str],
                 width: int = WIDTH) -> SimpleTable:
    """One-row table of results (statsmodels ``fmt_params`` look), `width` wide.

    The stub (the statistic's name) is left-aligned, then one column for
    each value: 14 characters or more, so that the table is `width` wide
    (less when that many do not fit; never less than its header or value).
    """
    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_params

    need = [max(len(h), len(v)) for h, v in zip(header, values)]
    for col in range(14, 0, -1):
        widths = [max(n, col) for n in need]
        if max(len(stub), 10) + sum(widths) + len(widths) <= width:
            break
    stub_w, widths = fill_widths(len(stub), widths, width)
    fmt = copy.deepcopy(fmt_params)
    fmt.update(data_fmts=["%s"] * len(values), colwidths=[stub_w, *widths])
    return SimpleTable([list(values)], headers=list(header), stubs=[stub], txt_fmt=fmt)


def _reparent(table: SimpleTable) -> None:
    """Attach every row to `table`.

    ``SimpleTable.extend`` (a ``list`` method) keeps the rows of another
    table attached to that table, so they were formatted with its column
    widths: rows appended to a table were shifted against its first row.
    """
    for row in table:
        if getattr(row, "table", table) is not table:
            row.table = table
    table._colwidths = {}  # the cached widths were computed for the old rows


class Summary:
    """A report made of tables and notes; renders as text (``str``) and HTML.

    Attributes
    ----------
    tables : list of statsmodels SimpleTable
        The tables of the text report.
    notes : list of str
    html_tables : list of statsmodels SimpleTable, optional
        The tables of the HTML report, when they differ (default: `tables`).
    """

    def __init__(self, tables: list[SimpleTable], notes: list[str] | None = None, *,
                 html_tables: list[SimpleTable] | None = None) -> None:
        self.tables = tables
        self.notes = list(notes or [])
        self._html_tables = html_tables

    def as_text(self) -> str:
        """The report as text: the tables, then the numbered notes wrapped to 78 columns.

        Tables follow each other with one rule between them: where a table ends with
        the rule another starts with, the rule is printed once.
        """
        parts: list[str] = []
        for t in self.tables:
            _reparent(t)
            text = t.as_text()
            if parts:
                last = parts[-1].rstrip("\n").rsplit("\n", 1)[-1].rstrip()
                first, _, rest = text.lstrip("\n").partition("\n")
                if last and set(last) == {"="} and first.rstrip() == last:
                    text = rest
            parts.append(text)
        if self.notes:
            parts.append("Notes:\n" + "\n".join(
                textwrap.fill(f"[{i + 1}] {n}", width=WIDTH, subsequent_indent="    ",
                              break_on_hyphens=False)
                for i, n in enumerate(self.notes)))
        return "\n".join(line.rstrip() for line in "\n".join(parts).splitlines())

    def as_html(self) -> str:
        """The report as HTML: statsmodels' tables and the notes, all text escaped."""
        parts = []
        for t in self.tables if self._html_tables is None else self._html_tables:
            _reparent(t)
            escaped = copy.deepcopy(t)
            for row in escaped:
                for cell in row:
                    cell.data = html.escape(str(cell.data), quote=False)
            if escaped.title:
                escaped.title = html.escape(escaped.title, quote=False)
            parts.append(escaped.as_html())
        if self.notes:
            parts.append("Notes:<br/>\n" + "<br/>\n".join(
                html.escape(f"[{i + 1}] {n}", quote=False) for i, n in enumerate(self.notes)))
        return "\n".join(parts)

    def as_latex(self) -> str:
        """The report as LaTeX, as statsmodels' ``Summary.as_latex``: its tables as
        ``tabular`` environments (statsmodels' ``summary_return``), then the notes.

        The tables are those of the HTML report (values in full, not wrapped);
        the text is escaped for LaTeX.
        """
        from statsmodels.iolib.summary import summary_return

        tables = [copy.deepcopy(t) for t in self._full_tables()]
        for t in tables:
            for row in t:
                for cell in row:
                    cell.data = _latex_escape(str(cell.data), _SM_ESCAPES)
            if t.title:
                t.title = _latex_escape(t.title, _SM_ESCAPES)
        out = summary_return(tables, return_fmt="latex")
        if self.notes:
            out += "\n\nNotes: \\newline\n" + " \\newline\n".join(
                _latex_escape(f"[{i + 1}] {n}") for i, n in enumerate(self.notes))
        return out

    def as_csv(self) -> str:
        """The report as comma-separated values, as statsmodels' ``Summary.as_csv``: each
        table's rows (values in full), then the notes, one per row (quoted)."""
        import csv
        import io

        from statsmodels.iolib.summary import summary_return

        out = summary_return(self._full_tables(), return_fmt="csv")
        if self.notes:
            buf = io.StringIO()
            writer = csv.writer(buf, lineterminator="\n")
            writer.writerow(["Notes"])
            for i, n in enumerate(self.notes):
                writer.writerow([f"[{i + 1}] {n}"])
            out += "\n\n" + buf.getvalue().rstrip("\n")
        return out

    def _full_tables(self) -> list[SimpleTable]:
        tables = self.tables if self._html_tables is None else self._html_tables
        for t in tables:
            _reparent(t)
        return tables

    def _repr_html_(self) -> str:
        return self.as_html()

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return self.as_text()


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
          "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
          "^": r"\textasciicircum{}"}


_LATEX.update({">": r"\textgreater{}", "<": r"\textless{}", "|": r"\textbar{}"})
#: the characters statsmodels' LaTeX table format escapes itself (``fmt_latex``)
_SM_ESCAPES = frozenset("#$%&>_|")


def _latex_escape(text: str, skip: frozenset[str] = frozenset()) -> str:
    """`text` with LaTeX's special characters escaped (but those in `skip`)."""
    return "".join(c if c in skip else _LATEX.get(c, c) for c in text)


def flow(pairs: list[tuple[str, Any]]) -> list[tuple[Pair, ...]]:
    """Key/value pairs filling the two columns in reading order."""
    out: list[tuple[Pair, ...]] = []
    for i in range(0, len(pairs), 2):
        out.append((pairs[i], pairs[i + 1] if i + 1 < len(pairs) else None))
    return out
