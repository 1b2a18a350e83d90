"""The statistic contract: what a null method and the driver ask of a statistic.

A :class:`Statistic` is a configuration (kernels, estimator, form, filter ...)
that knows, before anything is computed,

* its name in the report (:meth:`Statistic.label`);
* what it needs of an engine (:meth:`Statistic.requirements`; the engine says
  whether it runs it) and what it refuses itself (:meth:`Statistic.check`);
* what it offers the null methods (:meth:`Statistic.offers`): ``"values"`` (its
  value on any batch of arrangements: permutation nulls), ``"kernel_form"`` (the
  centred Gram matrices it is a quadratic form of: the gamma approximation, the
  wild bootstrap), ``"terms"`` (i.i.d. terms whose mean it is: normal nulls);
* its memory on an engine;

and :meth:`Statistic.prepare` computes what it needs once (Gram matrices,
decompositions, tuned parameters) and returns a :class:`Prepared` statistic.
A prepared statistic has one or more *columns* (a grid of lambdas, the members
of an aggregated test): ``values(perms)`` is ``(B,)`` for one column, ``(B, M)``
for ``M``.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from ..engines import Engine, Requirements, Values
from ..estimators import KME, KernelMeanEstimator
from ..estimators._rules import Rule

__all__ = ["FormInfo", "KernelForm", "Prepared", "Statistic", "require_equal_sizes"]


def require_equal_sizes(problem: Any, who: str, instead: str, why: str = "") -> None:
    """Refuse two samples of different sizes for a statistic that pairs ``x_i`` with
    ``y_i`` (`who` names it, `why` is said after "x and y", `instead` what to use)."""
    if problem.n_x != problem.n_y:
        m = min(problem.n_x, problem.n_y)
        raise ValueError(
            f"{who} pairs the points of x and y{why}, so it needs samples of the same size; got "
            f"n_x = {problem.n_x} and n_y = {problem.n_y}. Test x[:{m}] and y[:{m}] (if the "
            f"data are in random order), or use {instead}.")


@dataclass(frozen=True)
class FormInfo:
    """What kind of kernel statistic a statistic is (for the methods that approximate
    its null distribution, which decide whether they apply)."""

    kind: str          # "mmd" or "hsic"
    name: str          # the report's name, e.g. "MMD^2_u[skmse]"
    unbiased: bool
    kme: bool          # uniform weights 1/n (the KME, or a marginalized kernel's KME)
    marginalized: bool = False   # the KME of a marginalized (transformed) kernel


@dataclass(frozen=True, eq=False)
class KernelForm:
    """The statistic as a quadratic form of centred Gram matrices.

    Two-sample (``kind="mmd"``): ``Kc`` the pooled centred Gram matrix, the first
    ``n_x`` rows the first sample, ``diag`` the uncentred ``K_ii``. Independence
    (``kind="hsic"``): ``Kc``, ``Lc`` the two variables' centred Gram matrices.
    k samples (``kind="kway"``): ``Kc`` and the centred label kernel ``Lc``; the
    statistic is ``scale`` times ``sum(Kc o Lc) / N^2`` (an HSIC_b form).
    """

    kind: str
    unbiased: bool
    Kc: np.ndarray
    Lc: np.ndarray | None = None
    n_x: int = 0
    diag: np.ndarray | None = None
    scale: float = 1.0


@dataclass(eq=False)
class Prepared:
    """A statistic prepared on its data: what the null methods and the report need.

    Attributes
    ----------
    values : callable
        ``values(perms, n_jobs) -> Values``: the statistic of every arrangement
        (rows of `perms`); ``stat`` is ``(B,)`` or ``(B, M)``.
    observed : callable
        ``observed(n_jobs) -> (Values, params)``: the statistic of the data and
        the estimator's parameters chosen on them, by role.
    kernels : dict
        The fitted kernels by role (for the report).
    what : str
        The statistic in words, for error messages.
    tuning : str
        How data-driven parameters entered (``"permutation"`` or ``"pooled"``).
    rule : Rule or None
        The estimator's rule (a per-permutation rule makes the null slow).
    columns : list of (label, attrs)
        One entry per column: its label and descriptive attributes (members).
    kernel_form, terms, norms : callables or None
        What the null methods may ask for (see :class:`Statistic`): the
        quadratic form, the i.i.d. terms, FUSE's normalisers (one per column).
    combination : object or None
        How the columns are combined into one test (aggregated statistics).
    """

    values: Callable[[np.ndarray, int | None], Values]
    observed: Callable[[int | None], tuple[Values, dict[str, dict[str, Any]]]]
    kernels: dict[str, Any]
    what: str
    tuning: str = "pooled"
    rule: Rule | None = None
    kernel_notes: dict[str, str] = field(default_factory=dict)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    engine_info: str = ""
    columns: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    kernel_form: Callable[[], KernelForm] | None = None
    terms: Callable[[], np.ndarray] | None = None
    norms: Callable[[], np.ndarray] | None = None
    combination: Any = None
    details: dict[str, Any] = field(default_factory=dict)
    #: details the result keeps (``res.details``), beside the null method's
    report: dict[str, Any] = field(default_factory=dict)
    #: sizes the report adds to the problem's (e.g. points held out)
    sizes: dict[str, int] = field(default_factory=dict)
    #: the witness function the result offers (:mod:`kmtests.statistics.witness`), or
    #: why there is none (a sentence)
    witness: Any = "this statistic has no witness function in kmtests"

    @property
    def width(self) -> int:
        """The number of columns (1 for a single statistic)."""
        return max(1, len(self.columns))


class Statistic(abc.ABC):
    """Base class of the statistics (see the module docs)."""

    #: the registry name
    name: ClassVar[str] = "statistic"
    #: the face keywords that configure it (e.g. ``filter``, ``lam``)
    options: ClassVar[tuple[str, ...]] = ()
    #: the null method when none is asked for
    default_method: ClassVar[str] = "permutation"
    #: the engine when none is asked for
    default_engine: ClassVar[str] = "exact"
    #: the problem it applies to ("two_sample", "independence")
    problem_kind: ClassVar[str] = "two_sample"

    estimator: KernelMeanEstimator = KME()
    #: a U-statistic (it can be negative; the report says why)
    unbiased: bool = False

    @abc.abstractmethod
    def label(self) -> str:
        """The statistic's name in the report (e.g. ``MMD^2_u[skmse]``)."""

    def family(self) -> str:
        """What kind of statistic it is, in the report's title (e.g. ``"MMD"``,
        ``"NOCCO, regularised HSIC"``, ``"MMDAgg"``)."""
        return self.label()

    def describe(self, prepared: Prepared) -> str:
        """The statistic as it ran, in words, for the report's first line: its name, what
        it is, and its regularisation (filter, lambda or grid) where it has one."""
        return self.label()

    def refusal_subject(self) -> str:
        """How a refusal names the statistic (e.g. ``statistic MMD^2_u[tikhonov]``)."""
        return f"the statistic {self.label()}"

    @abc.abstractmethod
    def requirements(self, problem: Any, tuning: str) -> Requirements:
        """What the statistic needs of an engine."""

    def check(self, problem: Any, tuning: str) -> None:
        """Raise if the statistic cannot run on `problem` (its own refusals)."""

    def offers(self, engine: Engine) -> frozenset[str]:
        """What it gives the null methods on `engine` (see the module docs)."""
        return frozenset({"values"})

    def form(self) -> FormInfo | None:
        """Its kind as a kernel quadratic form, or None."""
        return None

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        """Bytes it needs on `engine` (sources and work arrays), what, and advice."""
        req = self.requirements(problem, tuning)
        return engine.memory(req, problem.n, problem.dims, batch)

    @abc.abstractmethod
    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        """Compute what the statistic needs once (see the module docs)."""

    # -- shared by the report --------------------------------------------------------------------
    def describe_kernels(self) -> Mapping[str, Any]:
        """The kernels by role, as configured."""
        return {}
