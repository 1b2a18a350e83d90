"""The null-method contract.

A :class:`NullMethod` is a configuration object (``PermutationMethod(n_resamples=...)``)
that

* says, before anything is computed, whether it applies to a statistic on an
  engine (:meth:`NullMethod.check` — the one place a method refuses a test): it
  needs one of the capabilities a statistic offers (``"values"``,
  ``"kernel_form"``, ``"terms"``; see :mod:`kmtests.statistics`);
* computes the p-value of a prepared statistic (:meth:`NullMethod.run`);
* describes it in the report (method line, settings rows, notes, the Monte
  Carlo interval of the p-value).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Protocol

import numpy as np

__all__ = ["NullMethod", "NullOutcome", "ResultLike", "RunContext"]


class ResultLike(Protocol):
    """What a method reads of a result to describe it."""

    @property
    def pvalue(self) -> float: ...

    @property
    def exact(self) -> bool: ...

    @property
    def n_resamples(self) -> int | None: ...

    @property
    def count(self) -> int | None: ...

    @property
    def seed(self) -> int | None: ...

    @property
    def details(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class RunContext:
    """What the driver passes to :meth:`NullMethod.run` besides the statistic."""

    n_jobs: int | None = None
    #: seconds one arrangement's statistic took (the observed one), for time estimates
    seconds_per_arrangement: float = 0.0
    #: the engine's default batch of arrangements (None: the method's)
    batch: int | None = None


@dataclass
class NullOutcome:
    """A p-value and what the result reports about how it was obtained."""

    pvalue: float
    null_distribution: np.ndarray | None = None
    exact: bool = False
    n_resamples: int | None = None
    count: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    #: the reported statistic when it is not the observed value (combinations)
    statistic: float | None = None
    #: an aggregated test's members, threshold and combination
    members: tuple[dict[str, Any], ...] | None = None
    threshold: float | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class NullMethod(abc.ABC):
    """Base class of the null-distribution methods (see the module docs)."""

    name: ClassVar[str] = "null"
    #: the capability of the statistic it needs (see :mod:`kmtests.statistics`)
    needs: ClassVar[str] = "values"
    #: the keyword options of the tests it takes (the others are an error)
    test_options: ClassVar[tuple[str, ...]] = ()
    #: the statistic it approximates the null of, by problem kind: what a test computes
    #: when the method is named and the statistic is not (``statistic=None``)
    own_statistic: ClassVar[Mapping[str, str]] = {}

    @property
    def source_of_randomness(self) -> Any:
        """The `rng` the method draws from (None: it draws nothing)."""
        return None

    @property
    def threads(self) -> int | None:
        """The `n_jobs` the method runs on (None: the default)."""
        return None

    # -- applicability ------------------------------------------------------------------------
    #: what it draws, which the problem judges (``Problem.refuses``): ``"arrangements"``
    #: of the problem's scheme (restricted ones included), ``"multipliers"`` (a wild
    #: bootstrap), ``"resamples"`` (a bootstrap), ``"samples"`` (fresh samples from the
    #: problem's model), ``"law"`` (draws from an approximating law) or ``"nothing"``
    draws: ClassVar[str] = "nothing"
    #: the statistics whose null it approximates, in words (a problem with a null method of
    #: its own refuses a method that approximates another: ``Problem.refuses``)
    approximates: ClassVar[str] = ""

    def check(self, statistic: Any, problem: Any, engine: Any) -> None:
        """Raise ``ValueError`` if the method does not apply to `statistic` on `engine`, or
        does not keep `problem`'s null (the problem says: ``problem.refuses``)."""
        why = problem.refuses(self)
        if why:
            raise ValueError(why)
        if self.needs not in statistic.offers(engine):
            raise ValueError(self.refusal(statistic, engine))
        why = self.form_refusal(statistic.form(), statistic, problem) \
            if self.needs == "kernel_form" else None
        if why:
            raise ValueError(why)
        if self.draws not in problem.draws_kept:
            raise ValueError(f"method={self.name!r} draws {self.draws}, which do not keep the "
                             f"null of the {problem.kind} problem.")

    def form_refusal(self, info: Any, statistic: Any, problem: Any) -> str | None:
        """Why the statistic's kernel form has no null law of this method (None: it has):
        the method asks the form (:mod:`kmtests.statistics.forms`)."""
        return None

    #: what it needs, in words, for its refusal ("" : the generic refusal)
    requires: ClassVar[str] = ""

    def refusal(self, statistic: Any, engine: Any) -> str:
        """Why the method does not apply (the statistic does not offer what it needs)."""
        if self.requires:
            return (f"method={self.name!r} needs {self.requires}; "
                    f"{statistic.refusal_subject()} on engine={engine.name!r} has none: use "
                    f"method={statistic.default_method!r}.")
        return (f"method={self.name!r} does not apply to {statistic.label()} on "
                f"engine={engine.name!r}; use method={statistic.default_method!r}.")

    @abc.abstractmethod
    def run(self, prepared: Any, problem: Any, observed: Any, ctx: RunContext) -> NullOutcome:
        """The p-value of the prepared statistic (`observed`: its value on the data)."""

    # -- the report -----------------------------------------------------------------------------
    @abc.abstractmethod
    def describe(self, res: ResultLike) -> str:
        """How the p-value was obtained, for the report's method line."""

    def conf_int(self, res: ResultLike, alpha: float) -> np.ndarray | None:
        """Interval of the p-value's Monte Carlo error (None: there is none)."""
        return None

    @abc.abstractmethod
    def info_rows(self, res: ResultLike) -> list[tuple[str, Any]]:
        """Rows of the settings table of ``summary()``: (key, value) pairs, in reading order."""

    @abc.abstractmethod
    def notes(self, res: ResultLike, alpha: float) -> list[str]:
        """Notes of ``summary()`` about the p-value."""

    def pvalue_floor(self, res: ResultLike) -> float | None:
        """The smallest p-value the method can give (None: no floor)."""
        return None

    def null_density(self, res: ResultLike) -> tuple[str, Any] | None:
        """The approximating null distribution of the statistic, for pictures: ``(label,
        frozen scipy.stats distribution)``, or None (the method keeps a null sample, or
        has no density)."""
        return None
