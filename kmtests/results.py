"""Result objects of the kernel tests.

Frozen dataclasses with the scipy attribute names (``statistic``, ``pvalue``,
``null_distribution``) and statsmodels-style methods (``summary()``,
``summary_frame()``, ``conf_int()``). ``print(result)`` gives an R
``htest``-style block. ``statistic, pvalue = result`` unpacks as scipy's
results do.

The result keeps the objects that produced it — the null method
(:mod:`kmtests.null`), the estimator, the fitted kernels — and the estimator's
data-driven parameters structured by role (``params["x"]``, ``params["pooled"]``
...). Everything that depends on how the null distribution was obtained
(method line, Monte Carlo interval, notes) is asked of the method object.
"""

from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterator, Mapping

import numpy as np

from ._summary import Summary, format_number, format_pvalue, info_table, result_table

if TYPE_CHECKING:
    import pandas as pd

    from .estimators import KernelMeanEstimator
    from .kernels import Kernel
    from .null import NullMethod

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
    method : PermutationMethod or GammaMethod
        How the null distribution was obtained (:mod:`kmtests.null`).
    exact : bool
        True when every arrangement was enumerated (exact p-value).
    n_resamples : int or None
        Number of null statistics computed (None for the gamma approximation).
    count : int or None
        Number of null statistics ``>= statistic`` (up to rounding).
    statistic_name : str
        e.g. ``'MMD^2_u'``, ``'HSIC_b[fkmse]'``.
    estimator : KernelMeanEstimator
        The kernel mean estimator (its configuration; ``estimator.name`` is
        the registry name).
    params : dict of dict
        The estimator's data-driven parameters by role: ``"x"`` and ``"y"``
        (chosen on each observed sample, two-sample test), ``"observed"``
        (chosen on the observed cross-covariance, independence test),
        ``"pooled"`` (tuned once on a permutation-invariant function of the
        data and held fixed), or ``"x"``/``"y"``/``"pooled"`` for the
        marginalized estimators' corruption variances.
    kernels : dict of Kernel
        The fitted kernels by role (``"kernel"``, or ``"x"`` and ``"y"``).
    sizes : dict
        Sample sizes.
    seed : int or None
        The integer seed, when `rng` was given as one.
    tuning : str
        How data-driven estimator parameters were set for the permutations.
    data_name : str
        Names of the data, as in R's ``data:`` line.
    details : dict
        Extra method details (gamma shape/scale, null and exact permutation
        moments).
    notes : tuple of str
        Notes about this result (fallbacks taken, optimisers that did not
        converge, a negative unbiased statistic ...).
    kernel_notes : dict of str
        How a kernel was transformed by the estimator (marginalized
        estimators), by role.
    """

    statistic: float
    pvalue: float
    null_distribution: np.ndarray | None
    method: NullMethod
    exact: bool
    n_resamples: int | None
    count: int | None
    statistic_name: str
    estimator: KernelMeanEstimator
    params: Mapping[str, Mapping[str, Any]]
    kernels: Mapping[str, Kernel]
    sizes: Mapping[str, int]
    seed: int | None = None
    tuning: str = "permutation"
    data_name: str = "x and y"
    details: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    kernel_notes: Mapping[str, str] = field(default_factory=dict)

    title: ClassVar[str] = "Kernel test"
    alternative_text: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if self.null_distribution is not None:
            self.null_distribution.setflags(write=False)

    # -- scipy-style unpacking ----------------------------------------------------------------
    def __iter__(self) -> Iterator[float]:
        """``statistic, pvalue = result``, as with scipy's test results."""
        return iter((self.statistic, self.pvalue))

    # -- conveniences -------------------------------------------------------------------------
    @property
    def bandwidths(self) -> dict[str, Any]:
        """The bandwidth of each kernel by role (None for kernels without one)."""
        out: dict[str, Any] = {}
        for role, k in self.kernels.items():
            b = getattr(k, "bandwidth", None)
            out[role] = b.tolist() if isinstance(b, np.ndarray) else b
        return out

    # -- p-value uncertainty -----------------------------------------------------------------
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

        Raises
        ------
        NotImplementedError
            For a method without Monte Carlo error (the gamma approximation).
        """
        if not 0 < alpha < 1:
            raise ValueError(f"`alpha` must be in (0, 1); got {alpha!r}.")
        ci = self.method.conf_int(self, alpha)
        if ci is None:
            raise NotImplementedError(f"a Monte Carlo interval exists only for permutation "
                                      f"p-values; the {self.method.name} p-value has no "
                                      "Monte Carlo error.")
        return ci

    # -- text ---------------------------------------------------------------------------------
    @property
    def method_line(self) -> str:
        return f"{self.title}, {self.estimator.label} estimator, {self.method.describe(self)}"

    def __str__(self) -> str:
        lines = [
            "",
            textwrap.fill(self.method_line, width=76, initial_indent="\t",
                          subsequent_indent="\t"),
            "",
            f"data:  {self.data_name}",
            f"{self.statistic_name} = {format_number(self.statistic)}, "
            f"p-value {format_pvalue(self.pvalue, floor=self.method.pvalue_floor(self))}",
            f"alternative hypothesis: {self.alternative_text}",
        ]
        ci = self.method.conf_int(self, 0.05)
        if ci is not None and not self.exact:
            lines.append(f"95 percent Monte Carlo interval of the p-value: "
                         f"[{format_pvalue(ci[0], sign=False)}, "
                         f"{format_pvalue(ci[1], sign=False)}]")
        for note in self.notes:
            lines.append(textwrap.fill(f"note: {note}", width=78, subsequent_indent="      "))
        if self.method.name == "gamma":
            lines.append("note: approximate p-value (gamma approximation to the null)")
        lines.append("")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(statistic={self.statistic!r}, pvalue={self.pvalue!r}, "
                f"method={self.method.name!r}, estimator={self.estimator.name!r})")

    def _param_rows(self) -> list[tuple[str, str]]:
        rows = []
        for role, params in self.params.items():
            for k, v in params.items():
                rows.append((f"{k} ({role})", _format_value(v)))
        return rows

    def _info_rows(self) -> list[tuple[str, str]]:
        rows: list[tuple[str, str]] = [("Estimator", self.estimator.name)]
        rows += self._param_rows()
        for role, kern in self.kernels.items():
            rows.append(("Kernel" if role == "kernel" else f"Kernel ({role})",
                         kern.describe().split(" (")[0]))
            bw = self.bandwidths.get(role)
            if bw is not None:
                rows.append(("Bandwidth" if role == "kernel" else f"Bandwidth ({role})",
                             _format_value(bw)))
        for k, v in self.sizes.items():
            rows.append((k, str(v)))
        rows += self.method.info_rows(self)
        if self.estimator.name != "kme":
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
        ci = self.method.conf_int(self, alpha)
        if ci is not None:
            conf = 100 * (1 - alpha)
            tables.append(result_table(
                self.statistic_name,
                ["statistic", "p-value", f"p {conf:g}% MC low", f"p {conf:g}% MC high"],
                [format_number(self.statistic), format_pvalue(self.pvalue, sign=False),
                 format_pvalue(ci[0], sign=False), format_pvalue(ci[1], sign=False)]))
        else:
            tables.append(result_table(self.statistic_name, ["statistic", "p-value"],
                                       [format_number(self.statistic),
                                        format_pvalue(self.pvalue, sign=False)]))
        notes = [f"Alternative hypothesis: {self.alternative_text}."]
        notes += self.method.notes(self, alpha)
        notes += [n[0].upper() + n[1:] if n else n for n in self.notes]
        return Summary(tables, notes)

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """One-row DataFrame with the statistic, p-value, its interval and settings."""
        import pandas as pd

        row: dict[str, Any] = {"statistic": self.statistic, "pvalue": self.pvalue}
        ci = self.method.conf_int(self, alpha)
        lo, hi = (np.nan, np.nan) if ci is None else (ci[0], ci[1])
        row.update(pvalue_lower=lo, pvalue_upper=hi, method=self.method.name,
                   exact=self.exact, n_resamples=self.n_resamples,
                   estimator=self.estimator.name)
        for role, bw in self.bandwidths.items():
            row[f"bandwidth_{role}" if role != "kernel" else "bandwidth"] = bw
        row.update(self.sizes)
        row["seed"] = self.seed
        return pd.DataFrame([row], index=pd.Index([self.statistic_name], name="statistic_name"))

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python dict (JSON-serialisable) of the result, without the null sample."""
        out: dict[str, Any] = {
            "test": self.title,
            "statistic": self.statistic,
            "statistic_name": self.statistic_name,
            "pvalue": self.pvalue,
            "alternative": self.alternative_text,
            "method": {"name": self.method.name,
                       **{f.name: getattr(self.method, f.name)
                          for f in dataclasses.fields(self.method) if f.name != "rng"}},
            "exact": self.exact,
            "n_resamples": self.n_resamples,
            "count": self.count,
            "estimator": {"name": self.estimator.name, "label": self.estimator.label,
                          "config": _config(self.estimator)},
            "params": self.params,
            "tuning": self.tuning,
            "kernels": {role: k.describe() + (f"; {self.kernel_notes[role]}"
                                              if self.kernel_notes.get(role) else "")
                        for role, k in self.kernels.items()},
            "bandwidths": self.bandwidths,
            "sizes": self.sizes,
            "seed": self.seed,
            "data_name": self.data_name,
            "details": self.details,
            "notes": list(self.notes),
        }
        ci = self.method.conf_int(self, 0.05)
        if ci is not None:
            out["pvalue_interval_95"] = ci.tolist()
        return _jsonable(out)


def _config(est: Any) -> dict[str, Any]:
    return {k: v for k, v in est.get_params().items() if v is not None}


def _format_value(v: Any) -> str:
    if isinstance(v, (list, tuple, np.ndarray)):
        vals = list(np.ravel(v))
        if len(vals) > 4:
            return f"[{format_number(float(vals[0]))}, ... ({len(vals)} values)]"
        return "[" + ", ".join(format_number(float(u)) for u in vals) + "]"
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (float, np.floating)):
        return format_number(float(v))
    return str(v)


def _jsonable(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _jsonable(u) for k, u in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(u) for u in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, np.generic):
        return _jsonable(v.item())
    if isinstance(v, float) and not np.isfinite(v):
        return None  # JSON has no NaN/inf
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return repr(v)


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
