"""Result objects of the kernel tests.

Frozen dataclasses with the scipy attribute names (``statistic``, ``pvalue``,
``null_distribution``) and statsmodels-style methods (``summary()``,
``summary_frame()``, ``pvalue_interval()``); ``print(result)`` gives an R
``htest``-style block (:mod:`kmtests.results._base`). The aggregated tests'
results add their members and the combination (:mod:`kmtests.results.aggregated`).
"""

from __future__ import annotations

from ._base import RESULTS as RESULTS
from ._base import IndependenceResult as IndependenceResult
from ._base import KernelTestResult as KernelTestResult
from ._base import TwoSampleResult as TwoSampleResult
from .aggregated import AggregatedIndependenceResult as AggregatedIndependenceResult
from .aggregated import AggregatedTwoSampleResult as AggregatedTwoSampleResult
from .conditional import ConditionalIndependenceResult as ConditionalIndependenceResult
from .goodness import AggregatedGoodnessOfFitResult as AggregatedGoodnessOfFitResult
from .goodness import GoodnessOfFitResult as GoodnessOfFitResult
from .joint import JointIndependenceResult as JointIndependenceResult
from .lagged import CrossDependenceResult as CrossDependenceResult
from .ksample import KSampleResult as KSampleResult

__all__ = ["AggregatedGoodnessOfFitResult", "AggregatedIndependenceResult", "AggregatedTwoSampleResult",
           "ConditionalIndependenceResult", "CrossDependenceResult", "GoodnessOfFitResult", "IndependenceResult", "JointIndependenceResult",
           "KSampleResult", "KernelTestResult", "RESULTS", "TwoSampleResult", "result_class"]



def result_class(kind: str, aggregated: bool = False) -> type[KernelTestResult]:
    """The result class of a problem kind (:data:`RESULTS`; a kind without one of its own
    gets the generic :class:`KernelTestResult`)."""
    if aggregated and (kind, True) not in RESULTS:
        raise ValueError(f"no result class for an aggregated {kind} test (a result class "
                         f"with result_of = ({kind!r}, True)).")
    return RESULTS.get((kind, aggregated), KernelTestResult)
