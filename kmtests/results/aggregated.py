"""Results of the aggregated tests: the members, their combination and its report."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar

from .._summary import Annotated, fill_widths, format_number
from .._summary import flow as _flow
from ._base import IndependenceResult, KernelTestResult, TwoSampleResult, role_key

__all__ = ["AggregatedIndependenceResult", "AggregatedTwoSampleResult"]


_NUMBERS = ("statistic", "pvalue", "weight", "threshold", "rejects", "normalizer")
#: each combination's statistic, in words
_WHAT = {"mmdagg": "the weighted minimum of the members' p-values",
         "fuse": "the soft maximum of the normalised members",
         "sum": "the weighted sum of the members"}


@dataclass(frozen=True, repr=False, eq=False)
class _AggregatedReport:
    """What aggregated results add to a test result (first base, so its report methods
    come first): the members, the combination and its threshold, the members table."""

    members: tuple[dict[str, Any], ...] = ()
    combination: str = "mmdagg"
    alpha: float = 0.05
    threshold: float | None = None

    def _settings_lines(self) -> list[tuple[Any, ...]]:
        return _settings_lines(self)

    def _estimator_phrase(self) -> str:
        names = list(dict.fromkeys(str(m.get("estimator")) for m in self.members))
        if len(names) > 1:
            return f"estimators {', '.join(names)}"
        return super()._estimator_phrase()  # type: ignore[misc]

    def summary(self, alpha: float = 0.05, relevance: bool = False) -> Any:
        return _summary_with_members(self, alpha, relevance)

    def members_frame(self) -> Any:
        """The members as a pandas DataFrame: what distinguishes each member (bandwidth(s),
        estimator, form, filter, lam), its statistic, p-value and weight, and for MMDAgg
        its threshold ``u_alpha w_j`` and whether it rejects at `alpha`."""
        import pandas as pd

        frame = pd.DataFrame([{k: v for k, v in m.items() if k != "member"}
                              for m in self.members],
                             index=pd.Index([m["member"] for m in self.members], name="member"))
        return frame

    def _varying(self) -> tuple[list[str], dict[str, Any]]:
        """Descriptive columns that differ between members, and those that do not."""
        keys = [k for k in self.members[0] if k not in _NUMBERS and k != "member"]
        varying, constant = [], {}
        for k in keys:
            vals = {repr(m.get(k)) for m in self.members}
            if len(vals) > 1:
                varying.append(k)
            else:
                constant[k] = self.members[0].get(k)
        return varying, constant

    def members_table(self) -> Any:
        """The members as a statsmodels SimpleTable (the columns that vary, and results),
        as wide as the report's other tables."""
        from statsmodels.iolib.table import SimpleTable
        from statsmodels.iolib.tableformatting import fmt_params

        varying, _ = self._varying()
        uniform = len({round(m["weight"], 12) for m in self.members}) == 1
        cols = varying + ["statistic", "pvalue"] + ([] if uniform else ["weight"])
        if self.combination == "mmdagg":
            cols.append("rejects")
        head = {"pvalue": "p-value"}

        def cell(k: str, v: Any) -> str:
            if k == "rejects":
                return "yes" if v else "no"
            if isinstance(v, float):
                return format_number(v) if k != "pvalue" else f"{v:.4g}"
            return "-" if v is None else str(v)

        data = [[cell(k, m.get(k)) for k in cols] for m in self.members]
        headers = [head.get(k, k) for k in cols]
        stubs = [str(i + 1) for i in range(len(self.members))]
        need = [max([len(h)] + [len(row[j]) for row in data]) for j, h in enumerate(headers)]
        stub_w, widths = fill_widths(max(len(s) for s in stubs), need)
        fmt = copy.deepcopy(fmt_params)
        fmt.update(data_fmts=["%s"] * len(cols), colwidths=[stub_w, *widths])
        return SimpleTable(data, headers=headers, stubs=stubs, title="Members", txt_fmt=fmt)

    def _frame_kernels(self) -> dict[str, Any]:
        """The combination, the number of members, what they share and the range of what
        varies (``bandwidth_min``, ``bandwidth_max``), as columns of ``summary_frame``;
        the members themselves are in :meth:`members_frame`."""
        varying, constant = self._varying()
        out: dict[str, Any] = {"combination": self.combination,
                               "members": len(self.members)}
        out.update({k: v for k, v in constant.items() if k != "estimator" and v is not None})
        for k in varying:
            vals = [m[k] for m in self.members if m.get(k) is not None]
            if vals and all(isinstance(v, float) for v in vals):
                out[f"{k}_min"], out[f"{k}_max"] = min(vals), max(vals)
            elif vals:
                out[k] = ", ".join(dict.fromkeys(str(v) for v in vals))
        return out


def _settings_lines(res: Any) -> list[tuple[Any, ...]]:
    """The settings table of an aggregated result: what the statistic is, the
    combination, what all members share, the ranges of what varies, the sizes and the
    null."""
    varying, constant = res._varying()
    what = _WHAT[res.combination]
    general: list[tuple[str, Any]] = [("combination", res.combination),
                                      ("members", len(res.members))]
    for role, kern in res.kernels.items():
        general.append((role_key("kernel", role), kern.describe().split(" (")[0]))
    for k, v in constant.items():
        if v is not None:
            general.append((k, v))
    for k in varying:
        vals = [m[k] for m in res.members if m.get(k) is not None]
        if vals and all(isinstance(v, float) for v in vals):
            general.append((k, f"{min(vals):.4g} to {max(vals):.4g}"))
        elif vals:
            general.append((k, ", ".join(dict.fromkeys(str(v) for v in vals))))
    general += res._engine_rows()
    lines: list[tuple[Any, ...]] = [(("statistic", Annotated(res.statistic_name,
                                                             f"({what})")),)]
    lines += _flow(general)
    sizes = list(res.sizes.items())
    lines += [(sizes[0], sizes[1])] if len(sizes) == 2 else _flow(sizes)
    if res.data_name != "x and y":
        lines.append((("data_name", res.data_name),))
    lines += _flow(res.method.info_rows(res))
    return lines


def _summary_with_members(res: Any, alpha: float, relevance: bool = False) -> Any:
    summ = KernelTestResult.summary(res, alpha, relevance)
    members = res.members_table()
    summ.tables.append(members)
    if summ._html_tables is not None:
        summ._html_tables.append(members)
    if res.combination == "mmdagg":
        summ.notes = [n.replace("p-value = (1 + #{T_b >= T}) / (1 + B)",
                                "p-value = #{S_b <= S} / (1 + B), small S being evidence")
                      for n in summ.notes]
        notes = ["The statistic S = min_j p_j/w_j is the weighted minimum of the members' "
                 "permutation p-values (MMDAgg); its p-value is its rank among the same "
                 "minimum over all arrangements (ties broken by the next smallest p_j/w_j): "
                 "exact level, the members computed on the same permutations."]
        if res.threshold is not None:
            notes.append(f"At level {res.alpha:g} a member rejects when p_j <= u w_j, with "
                         f"the level-corrected u = {res.threshold:.4g} (or when it attains "
                         "the minimum and the tie-break rejects); the test rejects exactly "
                         "when a member does.")
    elif res.combination == "sum":
        notes = ["The statistic is the weighted sum sum_j w_j T_j of the members, computed "
                 "on the same permutations; the members' p-values are their own ranks."]
    else:
        notes = ["The statistic is the soft maximum log sum_j w_j exp(nu T_j / N_j) of the "
                 "normalised members (MMD-FUSE), nu = sqrt(n (n - 1)); every member is "
                 "computed on the same permutations: exact level."]
    summ.notes[1:1] = notes
    return summ


@dataclass(frozen=True, repr=False, eq=False)
class AggregatedTwoSampleResult(_AggregatedReport, TwoSampleResult):
    """Result of :func:`aggregated_two_sample_test` (the members in ``members``)."""

    test_name: ClassVar[str] = "Kernel two-sample test"
    result_of: ClassVar[tuple[str, bool] | None] = ("two_sample", True)


@dataclass(frozen=True, repr=False, eq=False)
class AggregatedIndependenceResult(_AggregatedReport, IndependenceResult):
    """Result of :func:`aggregated_independence_test` (the members in ``members``)."""

    test_name: ClassVar[str] = "Kernel independence test"
    result_of: ClassVar[tuple[str, bool] | None] = ("independence", True)
