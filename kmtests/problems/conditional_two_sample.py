"""Two groups of (covariate, outcome) pairs: the problem of
:func:`kmtests.conditional_two_sample.conditional_two_sample_test`.

The null hypothesis is that the conditional law of the outcome ``y`` given the covariates
``x`` is the same in both groups, ``P_1(Y | X) = P_2(Y | X)``, while the covariates' own laws
``P_1(X)`` and ``P_2(X)`` may differ (covariate shift). No permutation of the pooled pairs
keeps this null (it would also equalise the covariates' laws); what keeps it is a
*conditional* permutation of the group labels: given the pooled pairs, the labels are drawn
with the odds of the propensity ``e(x_i) = P(group 2 | x_i)``, whatever the outcomes, and
the groups' sizes kept (:class:`Relabelling`) — under the null the outcome carries no
information about the group once ``x`` is known (Rosenbaum, 1984; Berrett et al., 2020). The propensity is estimated (the
statistic's design: :mod:`kmtests.statistics.propensity`), so the level is approximate, as
that of every conditional test is.

An arrangement (:class:`Relabelling`) is a vector of ``n`` group labels (0: group 1,
1: group 2), not a permutation of rows.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator, Mapping

import numpy as np

from .._validation import as_sample
from ..kernels import Kernel
from ._base import Problem
from .conventions import prepare_data
from .data import data_label
from .schemes import Scheme

__all__ = ["ConditionalTwoSampleProblem", "Relabelling"]


def _tilted(propensity: np.ndarray, n2: int) -> np.ndarray:
    """The probabilities ``c o_i / (1 + c o_i)`` (``o_i = e_i / (1 - e_i)``, the odds) whose
    sum is `n2`: the same law given the sum as the propensities themselves, drawn at the
    most likely sum."""
    from scipy.optimize import brentq

    logit = np.log(propensity) - np.log1p(-propensity)

    def excess(log_c: float) -> float:
        return float(np.sum(1.0 / (1.0 + np.exp(-(logit + log_c))))) - n2

    lo, hi = -50.0, 50.0
    return 1.0 / (1.0 + np.exp(-(logit + brentq(excess, lo, hi, xtol=1e-12))))


@dataclass(frozen=True, eq=False)
class Relabelling(Scheme):
    """Group labels drawn from the propensities given the groups' sizes: the conditional
    permutations of the labels given the covariates.

    Given the pooled covariates, the observed assignment of two samples of fixed sizes
    ``n1`` and ``n2`` has probability proportional to the product of the odds
    ``e_i / (1 - e_i)`` of the pairs put in group 2 (the density ratio of the covariates):
    independent Bernoulli(``e_i``) labels *conditioned on* ``n2`` of them being 1. A row is
    drawn by rejection: Bernoulli labels at the tilted probabilities of the same odds whose
    sum is ``n2`` on average, kept when their sum is ``n2`` (one candidate in about
    ``2.5 sd`` of the sum; ``n`` uniforms each, drawn one candidate after the other, so a
    seed gives the same rows whatever the batch size). Unconditioned Bernoulli labels
    (kcd's and alibi-detect's null) change the groups' sizes, which the observed labels
    never do, and rejected 5 of 60 null data sets at 5% with the propensity known
    (``benchmarks/README.md``). The draws are not equally likely, so none are enumerated
    (``count`` is None).

    Examples
    --------
    >>> import numpy as np
    >>> s = Relabelling(np.array([0, 1, 1]), np.array([0.1, 0.5, 0.9]), "given")
    >>> s.count(10**6) is None, s.random(np.random.default_rng(0), 2).sum(axis=1).tolist()
    (True, [2, 2])
    >>> s.identity().tolist()
    [[0, 1, 1]]
    """

    labels: np.ndarray
    propensity: np.ndarray
    how: str
    #: the estimate the propensities come from (for the report), if any
    estimate: Any = None
    kind: ClassVar[str] = "relabelling"
    #: not the permutation group: the null approximations of permutations do not apply
    full: ClassVar[bool] = False

    @property
    def n(self) -> int:
        return int(self.labels.size)

    @property
    def n2(self) -> int:
        return int(np.count_nonzero(self.labels))

    def count(self, cap: int) -> int | None:
        return None

    def random(self, rng: np.random.Generator, size: int) -> np.ndarray:
        p = _tilted(self.propensity, self.n2)
        out = np.empty((size, self.n), dtype=np.int64)
        b = 0
        while b < size:
            z = rng.random(self.n) < p
            if int(np.count_nonzero(z)) == self.n2:
                out[b] = z
                b += 1
        return out

    def enumerate(self) -> Iterator[np.ndarray]:
        raise ValueError("the draws of group labels from a propensity are not equally "
                         "likely: they are sampled, never enumerated.")

    def identity(self) -> np.ndarray:
        """The observed labels as a (1, n) batch."""
        return self.labels.astype(np.int64)[None, :]

    @property
    def restriction(self) -> str:
        return (f"of the group labels, drawn from the propensity given the groups' sizes "
                f"({self.how})")


@dataclass(frozen=True, eq=False)
class ConditionalTwoSampleProblem(Problem):
    """Pooled covariates and outcomes of two groups, with their labels (module docs).

    ``covariates`` (``n x d_x``) and ``outcomes`` (``n x d_y``) hold group 1's pairs first,
    then group 2's; ``labels`` is 0 for group 1, 1 for group 2. ``scheme`` is None until
    the statistic's design has estimated the propensity.
    """

    covariates: np.ndarray
    outcomes: np.ndarray
    labels: np.ndarray
    data_name: str = "x1, y1 and x2, y2"
    notes: tuple[str, ...] = ()
    scheme: Relabelling | None = None
    kind: ClassVar[str] = "conditional_two_sample"
    kernel_keywords: ClassVar[Mapping[str, tuple[str, str]]] = {
        "x": ("kernel_x", "bandwidth_x"), "y": ("kernel_y", "bandwidth_y")}
    null_methods: ClassVar[tuple[str, ...] | None] = ("permutation",)
    draws_kept: ClassVar[frozenset[str]] = frozenset({"arrangements"})
    precomputed: ClassVar[bool] = False

    @classmethod
    def from_data(cls, data: tuple[Any, ...], kernels: Mapping[str, Kernel], *,
                  data_name: str | None, axis: Any, nan_policy: Any
                  ) -> "ConditionalTwoSampleProblem":
        x1, y1, x2, y2 = data
        notes: list[str] = []
        pairs = []
        for g, (x, y) in enumerate(((x1, y1), (x2, y2)), start=1):
            (xg, yg), note = prepare_data([x, y], [f"x{g}", f"y{g}"], axis=axis,
                                          nan_policy=nan_policy, paired=True)
            xa, ya = as_sample(xg, f"x{g}"), as_sample(yg, f"y{g}")
            if xa.shape[0] != ya.shape[0]:
                raise ValueError(f"`x{g}` and `y{g}` are the covariates and outcomes of the "
                                 f"same {'first' if g == 1 else 'second'} group, one pair "
                                 f"per row: they need the same number of rows; got "
                                 f"{xa.shape[0]} and {ya.shape[0]}.")
            if xa.shape[0] < 4:
                raise ValueError(f"group {g} must have at least 4 pairs; got {xa.shape[0]}.")
            notes += note
            pairs.append((xa, ya))
        (xa1, ya1), (xa2, ya2) = pairs
        for what, a, b in (("covariates", xa1, xa2), ("outcomes", ya1, ya2)):
            if a.shape[1] != b.shape[1]:
                raise ValueError(f"the {what} of the two groups must have the same number "
                                 f"of columns; got {a.shape[1]} and {b.shape[1]}.")
        labels = np.repeat(np.array([0, 1], dtype=np.int64), [xa1.shape[0], xa2.shape[0]])
        name = data_name or (f"{data_label(x1, 'x1')}, {data_label(y1, 'y1')} and "
                             f"{data_label(x2, 'x2')}, {data_label(y2, 'y2')}")
        return cls(np.vstack([xa1, xa2]), np.vstack([ya1, ya2]), labels, name, tuple(notes))

    @classmethod
    def default_statistic(cls, estimator: Any) -> str:
        return "cmmd"

    def with_propensity(self, estimate: Any) -> "ConditionalTwoSampleProblem":
        """The problem whose arrangements are labels drawn from the propensities of
        `estimate` (its ``values``, described by its ``describe()``)."""
        return dataclasses.replace(self, scheme=Relabelling(
            self.labels, estimate.values, estimate.describe(), estimate))

    def refuses(self, method: Any) -> str | None:
        if method.draws != "arrangements":
            return (f"method={method.name!r} does not draw group labels from the "
                    "propensity; only method='permutation' (conditional permutations of "
                    "the labels) keeps the null of equal conditional laws.")
        return None

    @property
    def n(self) -> int:
        return int(self.labels.size)

    @property
    def n1(self) -> int:
        return int(np.count_nonzero(self.labels == 0))

    @property
    def sizes(self) -> dict[str, int]:
        return {"n1": self.n1, "n2": self.n - self.n1}

    @property
    def dims(self) -> dict[str, int]:
        return {"x": int(self.covariates.shape[1]), "y": int(self.outcomes.shape[1])}
