"""The result of the goodness-of-fit test (:func:`kmtests.goodness_of_fit_test`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ._base import KernelTestResult

__all__ = ["GoodnessOfFitResult"]


@dataclass(frozen=True, repr=False, eq=False)
class GoodnessOfFitResult(KernelTestResult):
    """Result of :func:`kmtests.goodness_of_fit_test` (see
    :class:`~kmtests.results.KernelTestResult` for the attributes and methods)."""

    test_name: ClassVar[str] = "Kernel goodness-of-fit test"
    alternative_text: ClassVar[str] = "the sample does not come from the model"
    result_of: ClassVar[tuple[str, bool] | None] = ("one_sample", False)
