"""Result objects of the kernel tests.

Frozen dataclasses with the scipy attribute names (``statistic``, ``pvalue``,
``null_distribution``) and statsmodels-style methods (``summary()``,
``summary_frame()``, ``conf_int()``). ``print(result)`` gives an R
``htest``-style block.
"""

from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import pandas as pd

import numpy as np

from ._summary import Summary, format_number, format_pvalue, info_table, result_table

__all__ = ["IndependenceResult", "KernelTestResult", "TwoSampleResult"]


@dataclass(frozen=True, repr=False, eq=False)
class KernelTestResult:
    """Common base of :class:`TwoSampleResult` and :class:`IndependenceResult`.

    Attributes
    ----------
    statistic : float
        The observed test statistic (see `statistic_name`).
    pvalue : float
        Upper-tail p-value.
    null_distribution : ndarray or None
        The permutation statistics (all arrangements when `exact`); None for
        the gamma approximation.
    method : {'permutation', 'gamma'}
        How the null distribution was obtained.
    exact : bool
        True when every arrangement was enumerated (exact p-value).
    n_resamples : int or None
        Number of null statistics computed (None for 'gamma').
    count : int or None
        Number of null statistics ``>= statistic`` (up to rounding).
    statistic_name : str
        e.g. ``'MMD^2_u'`` or ``'HSIC_b'``.
    estimator : str
        Registry name of the kernel mean estimator.
    estimator_params : dict
        The estimator's configuration and, for data-driven estimators, the
        parameters it chose on the observed data.
    kernels : dict
        Description of the fitted kernel(s), by role.
    bandwidths : dict
        Bandwidth(s) used, by role (None for kernels without one).
    sizes : dict
        Sample sizes.
    seed : int or None
        The integer seed, when `rng` was given as one.
    tuning : str
        How data-driven estimator parameters were set for the permutations.
    data_name : str
        Names of the data, as in R's ``data:`` line.
    details : dict
        Extra method details (gamma shape/scale and null moments).
    """

    statistic: float
    pvalue: float
    null_distribution: np.ndarray | None
    method: str
    exact: bool
    n_resamples: int | None
    count: int | None
    statistic_name: str
    estimator: str
    estimator_params: dict[str, Any]
    kernels: dict[str, str]
    bandwidths: dict[str, Any]
    sizes: dict[str, int]
    seed: int | None = None
    tuning: str = "permutation"
    data_name: str = "x and y"
    details: dict[str, Any] = field(default_factory=dict)

    title: ClassVar[str] = "Kernel test"
    alternative_text: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if self.null_distribution is not None:
            self.null_distribution.setflags(write=False)

    # -- p-value uncertainty -------------------------------------------------
    def conf_int(self, alpha: float = 0.05) -> np.ndarray:
        """Monte Carlo confidence interval of the p-value.

        For a Monte Carlo permutation test the reported p-value estimates the
        exact permutation p-value ``p* = P(T_perm >= T_obs)``. The interval is
        Clopper-Pearson for ``p*`` from ``count`` successes in
        ``n_resamples`` draws (statsmodels ``proportion_confint``). For an
        exact test both ends equal the p-value.

        Returns
        -------
        ndarray, shape (2,)
            ``[lower, upper]``.
        """
        if not 0 < alpha < 1:
            raise ValueError(f"`alpha` must be in (0, 1); got {alpha!r}.")
        if self.method != "permutation":
            raise NotImplementedError("a Monte Carlo interval exists only for permutation "
                                      "p-values; the gamma p-value is deterministic.")
        if self.exact:
            return np.array([self.pvalue, self.pvalue])
        from statsmodels.stats.proportion import proportion_confint

        lo, hi = proportion_confint(self.count, self.n_resamples, alpha=alpha, method="beta")
        return np.array([float(lo), float(hi)])

    # -- text ------------------------------------------------------------------
    @property
    def method_line(self) -> str:
        est = self.estimator_params.get("label", self.estimator)
        base = f"{self.title}, {est} estimator"
        if self.method == "gamma":
            return f"{base}, gamma approximation to the null (approximate p-value)"
        if self.exact:
            return f"{base}, exact permutation p-value (all {self.n_resamples} arrangements)"
        return (f"{base}, permutation p-value (based on {self.n_resamples} "
                "random permutations)")

    def __str__(self) -> str:
        floor = None if self.exact or self.method != "permutation" else 1 / (self.n_resamples + 1)
        lines = [
            "",
            textwrap.fill(self.method_line, width=76, initial_indent="\t",
                          subsequent_indent="\t"),
            "",
            f"data:  {self.data_name}",
            f"{self.statistic_name} = {format_number(self.statistic)}, "
            f"p-value = {format_pvalue(self.pvalue, floor=floor)}",
            f"alternative hypothesis: {self.alternative_text}",
        ]
        if self.method == "permutation" and not self.exact:
            lo, hi = self.conf_int()
            lines.append(f"95 percent Monte Carlo interval of the p-value: "
                         f"[{format_pvalue(lo)}, {format_pvalue(hi)}]")
        if self.method == "gamma":
            lines.append("note: approximate p-value; anti-conservative for small samples")
        lines.append("")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(statistic={self.statistic!r}, pvalue={self.pvalue!r}, "
                f"method={self.method!r}, estimator={self.estimator!r})")

    def _info_rows(self) -> list[tuple[str, str]]:
        rows: list[tuple[str, str]] = [("Estimator", self.estimator)]
        for k, v in self.estimator_params.items():
            if k in ("label",):
                continue
            rows.append((k, format_number(v) if isinstance(v, float) else str(v)))
        for role, desc in self.kernels.items():
            rows.append(("Kernel" if role == "kernel" else f"Kernel ({role})",
                         desc.split(" (")[0]))
            bw = self.bandwidths.get(role)
            if bw is not None:
                if isinstance(bw, (list, tuple, np.ndarray)):
                    bw_s = "[" + ", ".join(format_number(float(b)) for b in bw) + "]"
                else:
                    bw_s = format_number(float(bw))
                rows.append(("Bandwidth" if role == "kernel" else f"Bandwidth ({role})", bw_s))
        for k, v in self.sizes.items():
            rows.append((k, str(v)))
        null = {"permutation": "exact permutation" if self.exact else "permutation",
                "gamma": "gamma (approx.)"}[self.method]
        rows.append(("Null", null))
        if self.n_resamples is not None:
            rows.append(("Resamples", str(self.n_resamples)))
        rows.append(("Seed", "-" if self.seed is None else str(self.seed)))
        if self.estimator != "kme":
            rows.append(("Tuning", self.tuning))
        return rows

    def summary(self, alpha: float = 0.05) -> Summary:
        """statsmodels-style summary: a settings table and a result table.

        Parameters
        ----------
        alpha : float
            Level of the Monte Carlo interval of the p-value.
        """
        tables = [info_table(self._info_rows(), self.title)]
        lo_h, hi_h = f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"
        if self.method == "permutation":
            lo, hi = self.conf_int(alpha)
            vals = [format_number(self.statistic), format_pvalue(self.pvalue),
                    format_pvalue(lo), format_pvalue(hi)]
            tables.append(result_table(self.statistic_name, ["statistic", "p-value", lo_h, hi_h],
                                       vals))
        else:
            tables.append(result_table(self.statistic_name, ["statistic", "p-value"],
                                       [format_number(self.statistic),
                                        format_pvalue(self.pvalue)]))
        notes = [f"Alternative hypothesis: {self.alternative_text}."]
        if self.method == "permutation" and not self.exact:
            notes.append(f"p-value = (1 + #{{T_b >= T}}) / (1 + B); the interval is the "
                         f"Clopper-Pearson {100 * (1 - alpha):g}% interval of the exact "
                         "permutation p-value.")
        elif self.method == "permutation":
            notes.append("Exact p-value: every arrangement of the data was enumerated.")
        else:
            notes.append("Gamma approximation to the null distribution: approximate, "
                         "anti-conservative for small samples (see the documentation).")
        return Summary(tables, notes)

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """One-row DataFrame with the statistic, p-value, its interval and settings."""
        import pandas as pd

        row: dict[str, Any] = {"statistic": self.statistic, "pvalue": self.pvalue}
        if self.method == "permutation":
            lo, hi = self.conf_int(alpha)
        else:
            lo = hi = np.nan
        row.update(pvalue_lower=lo, pvalue_upper=hi, method=self.method, exact=self.exact,
                   n_resamples=self.n_resamples, estimator=self.estimator)
        for role, bw in self.bandwidths.items():
            row[f"bandwidth_{role}" if role != "kernel" else "bandwidth"] = (
                bw if not isinstance(bw, (list, np.ndarray)) else list(bw))
        row.update(self.sizes)
        row["seed"] = self.seed
        return pd.DataFrame([row], index=pd.Index([self.statistic_name], name="statistic_name"))

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python dict (JSON-serialisable) of the result, without the null sample."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name != "null_distribution"}
        out["test"] = self.title
        out["alternative"] = self.alternative_text
        if self.method == "permutation":
            out["pvalue_interval_95"] = self.conf_int().tolist()
        return _jsonable(out)


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(u) for k, u in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(u) for u in v]
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


@dataclass(frozen=True, repr=False, eq=False)
class TwoSampleResult(KernelTestResult):
    """Result of :func:`kmtests.two_sample_test` (attributes as in the base class)."""

    title: ClassVar[str] = "Kernel two-sample test (MMD)"
    alternative_text: ClassVar[str] = "the two samples come from different distributions"


@dataclass(frozen=True, repr=False, eq=False)
class IndependenceResult(KernelTestResult):
    """Result of :func:`kmtests.independence_test` (attributes as in the base class)."""

    title: ClassVar[str] = "Kernel independence test (HSIC)"
    alternative_text: ClassVar[str] = "x and y are dependent"
