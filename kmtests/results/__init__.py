"""Result objects of the kernel tests.

Frozen dataclasses with the scipy attribute names (``statistic``, ``pvalue``,
``null_distribution``) and statsmodels-style methods (``summary()``,
``summary_frame()``, ``conf_int()``); ``print(result)`` gives an R
``htest``-style block (:mod:`kmtests.results._base`). The aggregated tests'
results add their members and the combination (:mod:`kmtests.results.aggregated`).
"""

from __future__ import annotations

from ._base import IndependenceResult as IndependenceResult
from ._base import KernelTestResult as KernelTestResult
from ._base import TwoSampleResult as TwoSampleResult
from .aggregated import AggregatedIndependenceResult as AggregatedIndependenceResult
from .aggregated import AggregatedTwoSampleResult as AggregatedTwoSampleResult

__all__ = ["AggregatedIndependenceResult", "AggregatedTwoSampleResult", "IndependenceResult",
           "KernelTestResult", "TwoSampleResult"]
