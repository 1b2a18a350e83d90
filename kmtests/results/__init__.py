"""Result objects of the kernel tests.

Frozen dataclasses with the scipy attribute names (``statistic``, ``pvalue``,
``null_distribution``) and statsmodels-style methods (``summary()``,
``summary_frame()``, ``pvalue_interval()``); ``print(result)`` gives an R
``htest``-style block (:mod:`kmtests.results._base`). The aggregated tests'
results add their members and the combination (:mod:`kmtests.results.aggregated`).
"""

from __future__ import annotations

from ._base import IndependenceResult as IndependenceResult
from ._base import KernelTestResult as KernelTestResult
from ._base import TwoSampleResult as TwoSampleResult
from .aggregated import AggregatedIndependenceResult as AggregatedIndependenceResult
from .aggregated import AggregatedTwoSampleResult as AggregatedTwoSampleResult
from .conditional import ConditionalIndependenceResult as ConditionalIndependenceResult
from .joint import JointIndependenceResult as JointIndependenceResult
from .ksample import KSampleResult as KSampleResult

__all__ = ["AggregatedIndependenceResult", "AggregatedTwoSampleResult",
           "ConditionalIndependenceResult", "IndependenceResult", "JointIndependenceResult",
           "KSampleResult", "KernelTestResult", "RESULTS", "TwoSampleResult", "result_class"]

#: the result class of each problem kind, for a single statistic and for an aggregate
RESULTS: dict[tuple[str, bool], type[KernelTestResult]] = {
    ("two_sample", False): TwoSampleResult,
    ("independence", False): IndependenceResult,
    ("two_sample", True): AggregatedTwoSampleResult,
    ("independence", True): AggregatedIndependenceResult,
    ("k_sample", False): KSampleResult,
    ("conditional", False): ConditionalIndependenceResult,
    ("joint", False): JointIndependenceResult,
}


def result_class(kind: str, aggregated: bool = False) -> type[KernelTestResult]:
    """The result class of a problem kind (:data:`RESULTS`)."""
    try:
        return RESULTS[(kind, aggregated)]
    except KeyError:
        raise ValueError(f"no result class for a {'n aggregated ' if aggregated else ''}"
                         f"{kind} test (register one in kmtests.results.RESULTS).") from None
