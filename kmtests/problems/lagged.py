"""Two series and their cross-dependence at lags: the problem of
:func:`kmtests.timeseries.cross_dependence_test`.

The data are two paired series (row ``t`` of each at time ``t``); the null, that they are
independent, is kept by rearranging blocks of ``y`` against ``x`` (``blocks``: a length,
or ``"auto"``, the Politis-White rule of the independence problem). Its statistic is HSIC
at every lag (:class:`~kmtests.statistics.lagged.LaggedHSIC`); only arrangements of blocks
keep its null.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from ..estimators import KernelMeanEstimator
from .data import IndependenceProblem

__all__ = ["CrossDependenceProblem"]


@dataclass(frozen=True, eq=False)
class CrossDependenceProblem(IndependenceProblem):
    """Two paired series; the null permutes blocks of ``y`` against ``x``."""

    kind: ClassVar[str] = "cross_dependence"
    null_methods: ClassVar[tuple[str, ...] | None] = ("permutation",)

    @classmethod
    def from_data(cls, data: tuple[Any, ...], kernels: Mapping[str, Any], *,
                  data_name: str | None, axis: Any, nan_policy: Any) -> "CrossDependenceProblem":
        pair = IndependenceProblem.from_data(data, kernels, data_name=data_name, axis=axis,
                                             nan_policy=nan_policy)
        return cls(**{f.name: getattr(pair, f.name) for f in dataclasses.fields(pair)})

    @classmethod
    def default_statistic(cls, estimator: KernelMeanEstimator) -> str:
        return "lagged"

    def restricted(self, strata: Any = None, blocks: Any = None) -> "CrossDependenceProblem":
        if blocks is None:
            raise ValueError("the cross-dependence test permutes blocks of y: give `blocks` "
                             "(a length, or 'auto').")
        return super().restricted(strata, blocks)
