"""The result of the joint independence test (:func:`kmtests.joint_independence_test`).

The base report (:mod:`kmtests.results._base`) with the variables' kernels two by
two, the sizes ``n`` and ``d``, and the level of the test said in words: exact
for the permutation null, approximate for the bootstrap and the gamma
approximation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from .._summary import Pair
from ._base import KernelTestResult

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["JointIndependenceResult"]


@dataclass(frozen=True, repr=False, eq=False)
class JointIndependenceResult(KernelTestResult):
    """Result of :func:`kmtests.joint_independence_test` (attributes as in the base
    class; `kernels` and `bandwidths` by variable, ``"x1"`` ... ``"xd"``, and `sizes`
    ``{"n": ..., "d": ...}``).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import joint_independence_test
    >>> gen = np.random.default_rng(0)
    >>> x, y, z = gen.normal(size=(3, 40))
    >>> res = joint_independence_test(x, y, z, n_resamples=199, rng=1)
    >>> res.level, res.sizes
    ('exact', {'n': 40, 'd': 3})
    >>> print(f"dHSIC = {res.statistic:.4f}, p = {res.pvalue:.3f}")
    dHSIC = 0.0113, p = 0.315
    >>> frame = res.summary_frame()
    >>> print(frame.loc["dHSIC", "level"], frame.loc["dHSIC", "d"])
    exact 3
    """

    test_name: ClassVar[str] = "Joint independence test"
    result_of: ClassVar[tuple[str, bool] | None] = ("joint", False)
    alternative_text: ClassVar[str] = "the variables are not jointly independent"

    @property
    def level(self) -> str:
        """``"exact"`` (the permutation null: the test's level is exact, also with
        random permutations) or ``"approximate"`` (bootstrap, gamma)."""
        return "exact" if self.method.name == "permutation" else "approximate"

    @property
    def method_line(self) -> str:
        """What ran: the test, the statistic, the engine and the null method (dHSIC has
        no estimator to name), and the level."""
        exact = ", exact level" if self.level == "exact" else ""
        return f"{super().method_line}{exact}"

    def _estimator_phrase(self) -> str:
        return ""

    def _general_rows(self) -> list[tuple[str, Any]]:
        return self._engine_rows()

    def _settings_lines(self) -> list[tuple[Pair, ...]]:
        return super()._settings_lines() + [(("level", self.level),)]

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """One-row DataFrame: the base columns (no estimator) plus ``level`` and ``d``."""
        frame = super().summary_frame(alpha)
        frame.insert(list(frame.columns).index("exact") + 1, "level", self.level)
        return frame

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "level": self.level}
