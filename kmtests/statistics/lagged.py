r"""HSIC at lags: the statistic of the cross-dependence test of two series.

Column ``j`` (``j = 0, ..., max_lag``) is ``HSIC_b`` of the pairs ``(x_t, y_{t - j})``,
``t = j, ..., n - 1``: the Gram matrices of the whole series restricted to the lagged
pairs and centred, ``sum(Kc_j * L[:n - j, :n - j]) / (n - j)^2``. An arrangement
permutes ``y`` (blocks of it: :class:`~kmtests.problems.lagged.CrossDependenceProblem`),
the same arrangement for every lag. The columns are combined into one test by
``combine``: their sum with the weights ``(n - j) / n`` (:class:`~kmtests.null.combine.Sum`;
hyppo's ``DcorrX`` statistic with HSIC for the distance correlation), or the smallest of
the per-lag p-values (:class:`~kmtests.null.combine.MinP`, uniform weights), which also
says at which lag.
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

import numpy as np

from .._gram import centre_in_place
from .._validation import check_choice, check_positive_int
from ..engines import Engine, Requirements, Values
from ..estimators import KME, KernelMeanEstimator
from ._base import Prepared, Statistic

__all__ = ["LaggedHSIC"]

#: how the lags are combined
COMBINES = ("sum", "max")


class LaggedHSIC(Statistic):
    """``HSIC_b`` of ``x_t`` and ``y_{t - j}`` at the lags ``j = 0, ..., max_lag`` (module
    docs), one column per lag, combined by `combine` (``"sum"`` or ``"max"``)."""

    name: ClassVar[str] = "lagged"
    problem_kind: ClassVar[str] = "cross_dependence"
    options: ClassVar[tuple[str, ...]] = ("max_lag", "combine")

    def __init__(self, kernel_x: Any, kernel_y: Any, max_lag: int = 5,
                 combine: str = "sum") -> None:
        self.kernels = {"x": kernel_x, "y": kernel_y}
        self.max_lag = max_lag
        self.combine = combine
        self.estimator = KME()

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        lag = options.get("max_lag")
        if lag is None:
            lag = 5
        elif not (isinstance(lag, (int, np.integer)) and not isinstance(lag, bool)
                  and lag == 0):
            lag = check_positive_int(lag, "max_lag")
        combine = check_choice("sum" if options.get("combine") is None
                               else options["combine"], "combine", COMBINES)
        return cls(kernels["x"], kernels["y"], int(lag), combine)

    @classmethod
    def design(cls, name: str, problem: Any, kernels: dict[str, Any],
               options: dict[str, Any], rng: Any) -> tuple[Any, dict[str, Any]]:
        """The kernels fitted to the whole series (the same for every lag)."""
        return problem, {role: kernels[role].fitted_to(var.data, name=role)
                         if var.data is not None else kernels[role]
                         for role, var in (("x", problem.x), ("y", problem.y))}

    def label(self) -> str:
        return f"HSIC_b at lags 0-{self.max_lag}"

    family_name: ClassVar[str] = "HSIC at lags"

    def describe(self, prepared: Prepared) -> str:
        how = ("the (n - j)/n-weighted sum over the lags j" if self.combine == "sum"
               else "the smallest per-lag p-value (MinP)")
        return f"{self.label()}, {how}"

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        return Requirements("pairing", dict(self.kernels),
                            gram="the lagged HSIC needs (its lagged Gram matrices)")

    def check(self, problem: Any, tuning: str) -> None:
        if problem.n - self.max_lag < 8:
            raise ValueError(f"`max_lag` must leave at least 8 pairs; got {self.max_lag} "
                             f"with n = {problem.n}.")

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        n, M = problem.n, self.max_lag
        K, L = (var.K if var.data is None else self.kernels[role].gram(var.data)
                for role, var in (("x", problem.x), ("y", problem.y)))
        Kc = [centre_in_place(K[j:, j:].copy()).Kc for j in range(M + 1)]
        norm = np.array([(n - j) ** 2 for j in range(M + 1)], dtype=np.float64)
        # the size of each lag's terms (the rounding scale of its value)
        scale = np.array([np.abs(k).max() for k in Kc]) * float(np.abs(L).max())

        def lags(Lp: np.ndarray) -> np.ndarray:
            return np.array([np.vdot(Kc[j], Lp[:n - j, :n - j])
                             for j in range(M + 1)]) / norm

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            stat = np.array([lags(L[np.ix_(p, p)]) for p in perms])
            return Values(stat, np.broadcast_to(scale, stat.shape))

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return Values(lags(L)[None, :], scale[None, :]), {}

        # by name (the statistics sit below the null methods): the weighted sum, or MinP
        # with uniform weights
        comb = "sum" if self.combine == "sum" else "mmdagg"
        scheme = problem.scheme
        auto = getattr(scheme, "auto", None)
        report = {"block_length": int(getattr(scheme, "length", 1)),
                  "block_rule": "given" if auto is None else auto.block_rule,
                  "multiplier_length": None if auto is None else auto.multiplier}
        return Prepared(values, observed, dict(self.kernels), what=self.label(),
                        columns=[(f"lag {j}", {"lag": j}) for j in range(M + 1)],
                        combination=comb,
                        details={"weights": np.array([(n - j) / n for j in range(M + 1)])},
                        report=report,
                        witness="the cross-dependence test has no witness function: run "
                                "independence_test on the pairs of the lag of interest")
