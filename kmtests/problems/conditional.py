"""The conditional independence problem: x and y paired, given z.

The null hypothesis ``X independent of Y given Z`` leaves no permutation of the
whole sample unchanged: permuting ``y`` against ``(x, z)`` also breaks ``y``'s
dependence on ``z``. The arrangements that keep the null distribution are the
permutations of ``y`` *within* groups of equal ``z`` (``strata=``: exact when
``z`` is discrete); otherwise the null is approximated from the residuals of the
regression on ``z`` (:mod:`kmtests.statistics.kci`, the gamma, weighted
chi-square and wild-bootstrap nulls).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np

from .._validation import as_sample
from ..kernels import Kernel, Precomputed
from ._base import Problem
from .conventions import prepare_data
from .data import (Variable, _labels, align_index, by_label, data_label, index_of,
                   refuse_omitted)
from .schemes import Pairing, Scheme, Within

__all__ = ["ConditionalProblem", "conditional_problem"]


@dataclass(frozen=True, eq=False)
class ConditionalProblem(Problem):
    """Paired variables ``x``, ``y`` and the conditioning variable ``z`` (rows paired)."""

    x: Variable
    y: Variable
    z: Variable
    data_name: str = "x and y given z"
    _scheme: Scheme | None = field(default=None, repr=False)
    #: what the input conventions did (observations left out by nan_policy='omit')
    notes: tuple[str, ...] = ()
    #: the observations' pandas index labels (None for other input): `strata` given as a
    #: pandas object is matched to them, as y and z are to x
    index: Any = field(default=None, repr=False)
    kind: ClassVar[str] = "conditional"
    roles: ClassVar[tuple[str, ...]] = ("x", "y", "z")
    precomputed: ClassVar[bool] = False
    engine_scheme: ClassVar[str] = "pairing"
    kernel_keywords: ClassVar[Mapping[str, tuple[str, str]]] = {
        "x": ("kernel_x", "bandwidth_x"), "y": ("kernel_y", "bandwidth_y"),
        "z": ("kernel_z", "bandwidth_z")}

    @classmethod
    def kernels(cls, keywords: Mapping[str, Any], data: tuple[Any, ...]) -> dict[str, Kernel]:
        """The kernels of x and y; z's kernel with its bandwidth when one number is given
        (else the median heuristic, which the statistic's search over bandwidths starts
        from: ``bandwidth_z="auto"``)."""
        bw = keywords["bandwidth_z"]
        fixed = isinstance(bw, (int, float)) and not isinstance(bw, bool)
        ks = super().kernels({**keywords, "bandwidth_z": bw if fixed else "median"}, data)
        if any(isinstance(k, Precomputed) for k in ks.values()):
            raise ValueError("the conditional test standardises the data and computes the "
                             "kernels from them; precomputed Gram matrices are not supported.")
        return ks

    @classmethod
    def from_data(cls, data: tuple[Any, ...], kernels: Mapping[str, Any], *,
                  data_name: str | None, axis: Any, nan_policy: Any) -> "ConditionalProblem":
        return conditional_problem(*data, data_name=data_name, axis=axis,
                                   nan_policy=nan_policy)

    @classmethod
    def default_statistic(cls, estimator: Any) -> str:
        return "kci"

    def restricted(self, strata: Any = None, blocks: Any = None) -> "ConditionalProblem":
        return self if strata is None else self.within(strata)

    def refuses(self, method: Any) -> str | None:
        """Permutations of y against (x, z) keep the conditional null only within strata of
        equal z."""
        if method.draws == "arrangements" and self.scheme.full:
            return ("method='permutation' needs permutations that keep the conditional null: "
                    "permuting y against (x, z) also breaks the dependence of y on z. Give "
                    "`strata` (y permuted within groups of equal z: exact for a discrete z), "
                    "or use method='gamma', 'chi2' or 'wild' (approximate).")
        return super().refuses(method)

    @property
    def n(self) -> int:
        return self.x.n

    @property
    def scheme(self) -> Scheme:
        """Permutations of y against (x, z): within strata when given, else all pairings
        (which the null methods refuse: they do not keep the conditional null)."""
        return self._scheme if self._scheme is not None else Pairing(self.n)

    @property
    def sizes(self) -> dict[str, int]:
        return {"n": self.n}

    @property
    def dims(self) -> dict[str, int]:
        return {role: int(v.values.shape[1]) for role, v in
                (("x", self.x), ("y", self.y), ("z", self.z))}

    def within(self, strata: Any) -> "ConditionalProblem":
        """The problem with y permuted only within strata (one label per observation)."""
        refuse_omitted(self, "strata")
        labels = _labels(by_label(strata, self.index, "x, y and z"), self.n, "observation")
        return ConditionalProblem(self.x, self.y, self.z, self.data_name, Within(labels),
                                  self.notes, self.index)


def conditional_problem(x: Any, y: Any, z: Any, *, data_name: str | None = None,
                        min_size: int = 6, axis: Any = 0, nan_policy: Any = "raise"
                        ) -> ConditionalProblem:
    """Validate three paired variables into a problem (pandas objects paired by index
    label; a 1-d array is one column), with the input conventions `axis` and `nan_policy`
    (:mod:`kmtests.problems.conventions`: an observation with a missing value in x, y or z
    is left out as a whole)."""
    (x, y, z), notes = prepare_data([x, y, z], ["x", "y", "z"], axis=axis,
                                    nan_policy=nan_policy, paired=True, align=align_index)
    name = data_name or (f"{data_label(x, 'x')} and {data_label(y, 'y')} given "
                         f"{data_label(z, 'z')}")
    y = align_index(x, y)
    z = align_index(x, z, ("x", "z"))
    vx, vy, vz = (Variable(as_sample(v, role)) for v, role in ((x, "x"), (y, "y"), (z, "z")))
    sizes = {vx.n, vy.n, vz.n}
    if len(sizes) != 1:
        raise ValueError("`x`, `y` and `z` must have the same number of observations (paired "
                         f"data); got {vx.n}, {vy.n} and {vz.n}.")
    if vx.n < min_size:
        raise ValueError(f"a conditional independence test needs at least {min_size} "
                         f"observations; got {vx.n}.")
    index = next((i for i in map(index_of, (x, y, z)) if i is not None), None)
    return ConditionalProblem(vx, vy, vz, name, notes=tuple(notes), index=index)


def standardized(a: np.ndarray) -> np.ndarray:
    """Columns centred and scaled to unit standard deviation (``ddof=1``); constant
    columns become 0 (they carry no information)."""
    a = np.asarray(a, dtype=np.float64)
    centred = a - a.mean(axis=0)
    sd = centred.std(axis=0, ddof=1) if a.shape[0] > 1 else np.zeros(a.shape[1])
    out = np.zeros_like(centred)
    ok = sd > 0
    out[:, ok] = centred[:, ok] / sd[ok]
    return out
