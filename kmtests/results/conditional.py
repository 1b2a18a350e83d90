"""The result of the conditional independence test."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ._base import KernelTestResult

__all__ = ["ConditionalIndependenceResult"]


@dataclass(frozen=True, repr=False, eq=False)
class ConditionalIndependenceResult(KernelTestResult):
    """Result of :func:`kmtests.conditional_independence_test` (attributes as in the base
    class).

    ``params`` holds each regression on z, by variable (``"x"``, ``"y"``): ``lam``,
    KCI's ``epsilon = n lam``, the bandwidth on z, the regression's degrees of freedom
    and the tuning criterion; ``details["regression"]`` the filter and criterion.
    """

    test_name: ClassVar[str] = "Kernel conditional independence test"
    result_of: ClassVar[tuple[str, bool] | None] = ("conditional", False)
    alternative_text: ClassVar[str] = "x and y are dependent given z"

    def _regression(self) -> dict[str, Any]:
        return dict(self.details.get("regression_config", {}))

    def _estimator_phrase(self) -> str:
        reg = self._regression()
        kind = "kernel ridge" if reg.get("filter") == "tikhonov" else \
            f"{reg.get('filter', 'spectral')}-filter"
        tuned = f", tuned by {reg['criterion']}" if reg.get("tuned") else ""
        return f"{kind} regression on z{tuned}"

    def _general_rows(self) -> list[tuple[str, Any]]:
        reg = self._regression()
        rows: list[tuple[str, Any]] = [("filter", reg.get("filter", "-"))]
        if reg.get("tuned"):
            rows.append(("criterion", reg["criterion"]))
        return rows + self._engine_rows()

    def _bandwidth_value(self, role: str) -> Any:
        if role == "z":  # chosen per variable: the rows "bandwidth_z_x", "bandwidth_z_y"
            return None
        return super()._bandwidth_value(role)

    def _param_note(self) -> str | None:
        return None  # the regression's note says how its parameters were set
