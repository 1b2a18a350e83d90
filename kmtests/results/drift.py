"""The result of the self-normalised drift test (:func:`kmtests.timeseries.drift_test` on a
series with long memory or a root near one)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
from .._summary import (WIDTH, Summary, flow, format_bound, format_number, format_pvalue,
                        result_table, settings_table)
from ..null.permutation import monte_carlo_interval

__all__ = ["SelfNormalizedDriftResult"]


@dataclass(frozen=True, repr=False, eq=False)
class SelfNormalizedDriftResult:
    """Result of the self-normalised kernel drift test between two windows of one series.

    Attributes
    ----------
    statistic : float
        ``T = D' V^+ D``: the difference of the windows' means of the kernel feature
        series over its self-normalising matrix (:func:`kmtests._longmemory.selfnormalized`).
    pvalue : float
        ``(1 + #{T_b >= T}) / (1 + B)`` over the `n_resamples` rearrangements.
    null_distribution : ndarray
        The statistics of the rearrangements of the series by the ranks of simulated
        ARFIMA(1, d, 0) paths (:func:`kmtests._longmemory.model_arrangements`).
    n_resamples : int
    count : int
        The number of rearrangements whose statistic is at least the observed one.
    phi, d : float
        The ARFIMA(1, d, 0) model fitted by Whittle within the windows.
    n_features : int
        The number of feature series (the data's columns, at most 5 principal
        components, and 3 principal components of the Gaussian kernel's features).
    sizes : dict
        The windows' sizes (``n_x``, ``n_y``).
    seed : int or None
        The integer seed, when `rng` was given as one.
    data_name : str
    reason : str
        Why this test ran (``memory="long"``, or what ``memory="auto"`` found).
    notes : tuple of str

    Notes
    -----
    ``statistic, pvalue = result`` unpacks it; ``print(result)`` gives R's ``htest`` form
    and ``result.summary()`` the statsmodels-style report.
    """

    statistic: float
    pvalue: float
    null_distribution: np.ndarray
    n_resamples: int
    count: int
    phi: float
    d: float
    n_features: int
    sizes: dict[str, int]
    seed: int | None = None
    data_name: str = "the series"
    reason: str = ""
    notes: tuple[str, ...] = field(default=())

    #: a Monte Carlo test (what :func:`kmtests.null.permutation.monte_carlo_interval` reads)
    exact = False
    title = "Self-normalised kernel drift test"
    statistic_name = "T_sn"
    alternative_text = "the two windows come from different distributions"
    method = "arfima ranks"

    @property
    def details(self) -> dict[str, Any]:
        """The null's model, as the other results' `details`: ``{"model", "phi", "d"}``."""
        return {"model": "ARFIMA(1, d, 0)", "phi": self.phi, "d": self.d}

    def __iter__(self) -> Iterator[float]:
        """``statistic, pvalue = result``, as with scipy's test results."""
        return iter((self.statistic, self.pvalue))

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(statistic={self.statistic!r}, "
                f"pvalue={self.pvalue!r}, phi={self.phi!r}, d={self.d!r})")

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python dict (strict JSON) of the result, without the null sample.

        Examples
        --------
        >>> import numpy as np
        >>> from kmtests.timeseries import drift_test
        >>> res = drift_test(np.random.default_rng(0).normal(size=100), memory="long",
        ...                  n_resamples=99, rng=1)
        >>> sorted(res.to_dict())[:4]
        ['alternative', 'count', 'd', 'data_name']
        """
        lo, hi = self.pvalue_interval(0.05)
        return {"test": self.title, "statistic": float(self.statistic),
                "statistic_name": self.statistic_name, "pvalue": float(self.pvalue),
                "alternative": self.alternative_text, "method": self.method,
                "n_resamples": int(self.n_resamples), "count": int(self.count),
                "phi": float(self.phi), "d": float(self.d),
                "n_features": int(self.n_features), "sizes": dict(self.sizes),
                "seed": self.seed, "data_name": self.data_name, "reason": self.reason,
                "notes": list(self.notes), "pvalue_interval_95": [float(lo), float(hi)]}

    def pvalue_interval(self, alpha: float = 0.05) -> np.ndarray:
        """Monte Carlo confidence interval of the p-value: Clopper-Pearson for the
        probability, under the fitted model, of a statistic at least the observed one,
        from `count` of `n_resamples` draws (as the other results')."""
        if not 0 < alpha < 1:
            raise ValueError(f"`alpha` must be in (0, 1); got {alpha!r}.")
        return monte_carlo_interval(self, alpha)

    @property
    def _floor(self) -> float:
        return 1.0 / (self.n_resamples + 1)

    def __str__(self) -> str:
        lines = ["", "\t" + self.title, ""]
        lines += textwrap.wrap(f"data:  {self.data_name}", width=WIDTH, subsequent_indent=" " * 7,
                               break_on_hyphens=False)
        lines.append(f"{self.statistic_name} = {format_number(self.statistic)}, p-value "
                     f"{format_pvalue(self.pvalue, floor=self._floor)}")
        lines.append(f"alternative hypothesis: {self.alternative_text}")
        lo, hi = self.pvalue_interval(0.05)
        lines.append(f"95 percent Monte Carlo interval of the p-value: "
                     f"[{format_bound(lo)}, {format_bound(hi)}]")
        notes = [f"null: rank rearrangements by ARFIMA(1, d, 0) paths, phi = "
                 f"{self.phi:.2f}, d = {self.d:.2f}"]
        if self.reason:
            notes.append(f"why this test: {self.reason}")
        for note in (*notes, *self.notes):
            lines += textwrap.wrap(f"note: {note}", width=WIDTH, subsequent_indent="      ",
                                   break_on_hyphens=False)
        lines.append("")
        return "\n".join(lines)

    def summary(self, alpha: float = 0.05) -> Summary:
        """statsmodels-style summary: a settings table, a result table and notes.

        Examples
        --------
        >>> import numpy as np
        >>> from kmtests.timeseries import drift_test
        >>> gen = np.random.default_rng(0)
        >>> res = drift_test(gen.normal(size=200), memory="long", n_resamples=99, rng=1)
        >>> print(str(res.summary()).splitlines()[0].strip())
        Self-normalised kernel drift test
        """
        pairs: list[tuple[str, Any]] = [
            ("method", self.method), ("n_resamples", self.n_resamples),
            ("n_x", self.sizes["n_x"]), ("n_y", self.sizes["n_y"]),
            ("phi", f"{self.phi:.3f}"), ("d", f"{self.d:.3f}"),
            ("n_features", self.n_features), ("seed", self.seed)]
        settings, _ = settings_table(flow(pairs), self.title)
        lo, hi = self.pvalue_interval(alpha)
        conf = f"{100 * (1 - alpha):.4g}%"
        results = result_table(
            self.statistic_name, ["statistic", "p-value", f"p {conf} MC low",
                                  f"p {conf} MC high"],
            [format_number(self.statistic), format_pvalue(self.pvalue, floor=self._floor,
                                                          sign=False),
             format_bound(lo), format_bound(hi)])
        notes = [f"Alternative hypothesis: {self.alternative_text}.",
                 "The statistic is the difference of the windows' means of the data and "
                 "kernel feature series over its self-normalising matrix; the null "
                 "rearranges the observations by the ranks of simulated ARFIMA(1, d, 0) "
                 "paths of the fitted model."]
        if self.reason:
            notes.append(self.reason[:1].upper() + self.reason[1:].rstrip(".") + ".")
        notes += [n[:1].upper() + n[1:].rstrip(".") + "." for n in self.notes]
        return Summary([*settings, results], notes)
