"""The result of the cross-dependence test: an aggregated result whose members are lags."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .aggregated import AggregatedIndependenceResult

__all__ = ["CrossDependenceResult"]


@dataclass(frozen=True, repr=False, eq=False)
class CrossDependenceResult(AggregatedIndependenceResult):
    """Result of :func:`kmtests.timeseries.cross_dependence_test`: one member per lag
    (``members_frame()``), and the lags' statistics and p-values as arrays."""

    test_name: ClassVar[str] = "Kernel cross-dependence test"
    result_of: ClassVar[tuple[str, bool] | None] = ("cross_dependence", True)

    @property
    def statistics(self) -> np.ndarray:
        """``HSIC_b`` of ``x_t`` and ``y_{t - j}`` at the lags ``j = 0, ..., max_lag``."""
        return np.array([m["statistic"] for m in self.members])

    @property
    def pvalues(self) -> np.ndarray:
        """The per-lag permutation p-values (the same arrangements for every lag)."""
        return np.array([m["pvalue"] for m in self.members])

    @property
    def lag(self) -> int:
        """The lag with the smallest per-lag p-value (the largest statistic among ties)."""
        return int(np.lexsort((-self.statistics, self.pvalues))[0])

    @property
    def combine(self) -> str:
        """How the lags were combined: ``"sum"`` or ``"max"`` (MinP)."""
        return "sum" if self.combination == "sum" else "max"

    @property
    def block_length(self) -> int:
        """The length of the permuted blocks of ``y``."""
        return int(self.details["block_length"])

    @property
    def rule(self) -> str:
        """How the block length was chosen (``"given"``, or the automatic rule)."""
        return str(self.details["block_rule"])

    def __str__(self) -> str:
        lags = ", ".join(f"{j}: {p:.3g}" for j, p in enumerate(self.pvalues))
        return (super().__str__().rstrip("\n")
                + f"\nstrongest at lag {self.lag}; per-lag p-values: {lags}\n")
