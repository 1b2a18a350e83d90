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

from ..engines import ENGINES, Engine, Requirements, Values
from ..estimators import KernelMeanEstimator
from ..estimators._rules import General, Rule, Uniform
from .forms import FormInfo, KernelForm

__all__ = ["EstimatorStatistic", "features_need", "gram_need", "statistic_name", "tunes_pooled",
           "FormInfo", "KernelForm", "Prepared", "STATISTICS", "Statistic",
           "require_equal_sizes"]


def statistic_name(base: str, est: KernelMeanEstimator) -> str:
    """``MMD^2_u`` for the KME; ``MMD^2_u[skmse]`` etc. when an estimator changes it."""
    return base if est.name == "kme" else f"{base}[{est.name}]"


def tunes_pooled(est: KernelMeanEstimator, tuning: str) -> bool:
    """Whether a uniform-weight estimator is tuned once on the pooled Gram matrix (which
    must then be in memory)."""
    rule = est.rule()
    return isinstance(rule, Uniform) and tuning == "pooled" and rule.fixed is None


def gram_need(est: KernelMeanEstimator, tuning: str, features: bool = False) -> str:
    """Why an estimator needs the whole Gram matrix in memory ('' when it does not).

    With `features` (a statistic that runs a feature form), an estimator whose rule
    has one needs the Gram matrix *or* features: see :func:`features_need`.
    """
    rule = est.rule()
    if not isinstance(rule, Uniform):
        if features and rule.features is not None:
            return ""
        return (f"the estimator {est.name!r} needs (it re-weights every point; only the "
                "estimators with uniform weights - kme, skmse, bkmse, ... - run without it)")
    if tunes_pooled(est, tuning):
        return ("tuning='pooled' needs (it tunes the estimator once on the pooled Gram "
                "matrix)")
    return ""


def features_need(est: KernelMeanEstimator) -> str:
    """Why an estimator with a feature form needs the Gram matrix or features ('' when
    it needs neither, or has no feature form)."""
    rule = est.rule()
    if isinstance(rule, General) and rule.features is not None:
        return (f"the estimator {est.name!r} needs (it re-weights every point; only the "
                "estimators with uniform weights - kme, skmse, bkmse, ... - run on sums)")
    return ""


def require_equal_sizes(problem: Any, who: str, instead: str, why: str = "") -> None:
    """Refuse two samples of different sizes for a statistic that pairs ``x_i`` with
    ``y_i`` (`who` names it, `why` is said after "x and y", `instead` what to use)."""
    if problem.n_x != problem.n_y:
        m = min(problem.n_x, problem.n_y)
        raise ValueError(
            f"{who} pairs the points of x and y{why}, so it needs samples of the same size; got "
            f"n_x = {problem.n_x} and n_y = {problem.n_y}. Test x[:{m}] and y[:{m}] (if the "
            f"data are in random order), or use {instead}.")


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
    #: ``swap_values(rows, n_jobs) -> Values``: `values` of a batch of pair swaps (a
    #: :class:`~kmtests.problems.schemes.SwapRows`), computed faster from the pairs; None:
    #: `values` of ``rows.perms`` serves them
    swap_values: Callable[[Any, int | None], Values] | None = None
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
    #: ``on_sample(data, n_jobs) -> Values``: the statistic of another sample of the
    #: problem's data (fresh draws from its model: the Monte Carlo null); the driver
    #: gives every statistic one (the statistic prepared again on the new data)
    on_sample: Callable[[Any, int | None], Values] | None = None
    #: why the null hypothesis holds by construction of the data (a sentence; e.g. x a
    #: function of z in a conditional test), or None: the driver then reports p = 1
    #: without a null distribution, with this note and a DegenerateStatisticWarning
    holds: str | None = None
    #: what makes its permutation loop faster, naming only options of the tests that run
    #: it (the :class:`~kmtests.SlowTestWarning`'s advice); the driver fills it from
    #: :meth:`Statistic.slow_advice` when the statistic leaves it None
    slow_advice: str | None = None

    @property
    def width(self) -> int:
        """The number of columns (1 for a single statistic)."""
        return max(1, len(self.columns))


#: the statistics by registered name (``statistic=`` of the tests): each name stands for
#: one class per problem it serves (``"unbiased"``: the MMD of two samples, HSIC of two
#: variables, the k-sample MMD). A class registers itself by its ``registered_as``.
STATISTICS: dict[str, tuple[type["Statistic"], ...]] = {}


class Statistic(abc.ABC):
    """Base class of the statistics (see the module docs)."""

    #: the names it is registered under in :data:`STATISTICS`; None (default): its own
    #: :attr:`name` when its class body sets one (a base class that names itself but is
    #: not a statistic of its own sets ``()``)
    registered_as: ClassVar[tuple[str, ...] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = cls.__dict__.get("registered_as")
        if names is None:
            names = (cls.__dict__["name"],) if "name" in cls.__dict__ else ()
        for name in names:
            STATISTICS[name] = STATISTICS.get(name, ()) + (cls,)

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
    #: the problems whose data it takes (:data:`kmtests.statistics.STATISTICS` serves a
    #: registered name to a problem through them); default: ``(problem_kind,)``
    problems: ClassVar[tuple[str, ...]] = ()
    #: it weights its kernel means with the test's estimator (``estimator=``); a
    #: statistic that does not refuses any estimator but the KME, saying why
    uses_estimator: ClassVar[bool] = False
    #: why an estimator other than the KME does not apply (``{name}``: the statistic's
    #: registered name, ``{est}``: the estimator's)
    estimator_refusal: ClassVar[str] = (
        "statistic={name!r} compares plain kernel means; estimator={est!r} does not apply "
        "(use estimator='kme').")

    #: it takes the test's ``n_jobs`` for linear algebra of its own (``self.n_jobs``)
    uses_threads: ClassVar[bool] = False

    #: the kernel mean estimator it uses (set by every statistic: there is no default)
    estimator: KernelMeanEstimator
    #: a U-statistic (it can be negative; the report says why)
    unbiased: bool = False

    # -- the registry's side ---------------------------------------------------------------------
    @classmethod
    def serves(cls) -> tuple[str, ...]:
        """The problem kinds it serves."""
        return cls.problems or (cls.problem_kind,)

    @classmethod
    def keywords(cls, name: str) -> tuple[str, ...]:
        """The face keywords that configure it under the registered `name` (beyond its
        kernels and the estimator): a keyword given to another statistic is refused."""
        return cls.options

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> "Statistic":
        """The statistic registered as `name`, from the test's kernels (by role), its
        estimator (already checked: the KME unless :attr:`uses_estimator`) and the
        keywords that configure it (None: not given)."""
        raise NotImplementedError(f"{cls.__name__} is not built from keywords")

    @classmethod
    def design(cls, name: str, problem: Any, kernels: dict[str, Any],
               options: dict[str, Any], rng: Any) -> tuple[Any, dict[str, Any]]:
        """The data design it needs before it is built (points held out, kernels fitted):
        the problem and the kernels, by default unchanged. `options` may be completed."""
        return problem, kernels

    def draws(self, engine: Any) -> bool:
        """Whether it draws random numbers of its own on `engine` (a split, features)."""
        return False

    def holds_out(self) -> bool:
        """Whether it learns on training points held out of the problem (see
        :meth:`hold_out`)."""
        return False

    def hold_out(self, problem: Any, rng: Any) -> Any:  # pragma: no cover - holds_out()
        """The problem on the test points; the training points stay with the statistic."""
        return problem

    #: its name in the report and its family in the report's title, where they are fixed
    #: (a statistic whose name depends on its settings overrides :meth:`label`)
    symbol: ClassVar[str] = ""
    family_name: ClassVar[str] = ""

    def label(self) -> str:
        """The statistic's name in the report (e.g. ``MMD^2_u[skmse]``)."""
        if not self.symbol:
            raise NotImplementedError(f"{type(self).__name__} sets no `symbol` and does not "
                                      "override label()")
        return self.symbol

    def family(self) -> str:
        """What kind of statistic it is, in the report's title (e.g. ``"MMD"``,
        ``"NOCCO, regularised HSIC"``, ``"MMDAgg"``; default :attr:`family_name`, else the
        label)."""
        return self.family_name or self.label()

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

    def check(self, problem: Any, tuning: str) -> None:  # noqa: B027 - no refusal by default
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

    def slow_advice(self, problem: Any, engine: Engine, tuning: str) -> str:
        """What makes its permutation test faster (the :class:`~kmtests.SlowTestWarning`'s
        advice), naming only the options that apply to it on `problem`: fewer permutations;
        a low-rank engine where one runs it (and its face takes ``engine``: the problem's
        engine scheme); pooled tuning or the KME where it uses an estimator."""
        parts = ["fewer permutations (`n_resamples=999` resolves a 5% test to about "
                 "+-0.014)"]
        low_rank = [name for name, cls in ENGINES.items()
                    if cls.approximate and engine.holds_gram
                    and problem.engine_scheme in cls.schemes
                    and "values" in self.offers(cls())
                    and cls().supports(self.requirements(problem, tuning)) is None]
        if low_rank:
            parts.append(f"engine={' or '.join(repr(n) for n in low_rank)} (`n_features`) "
                         "for large samples")
        parts.extend(self.estimator_advice(tuning))
        return "To make it faster: " + ", ".join(parts) + "."

    def estimator_advice(self, tuning: str) -> list[str]:
        """The part of :meth:`slow_advice` about the estimator (none unless it uses one)."""
        if not self.uses_estimator or self.estimator.name == "kme":
            return []
        return [("tuning='pooled' where the estimator allows it, " if tuning != "pooled"
                 else "") + "or estimator='kme'"]



class EstimatorStatistic(Statistic):
    """Base of the statistics of estimated kernel means in U or V form (the MMD, HSIC, the
    k-sample MMD): registered as ``"unbiased"`` and ``"biased"`` (each subclass lists
    them), built from the kernels of its :attr:`roles`, the test's estimator and the
    form. One kernel (``roles = ("kernel",)``) unless a subclass says otherwise."""

    uses_estimator: ClassVar[bool] = True
    #: the kernels it takes, by role, in the order of its constructor
    roles: ClassVar[tuple[str, ...]] = ("kernel",)

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> "Statistic":
        return cls(*(kernels[r] for r in cls.roles), estimator, name == "unbiased")  # type: ignore[call-arg]

    def __init__(self, kernel: Any, estimator: KernelMeanEstimator, unbiased: bool = True
                 ) -> None:
        self.kernel = kernel
        self.estimator = estimator
        self.unbiased = unbiased
        estimator.rule()  # raises for estimators that cannot run inside a test

    #: the scheme the engines run it as; it runs a feature form on the low-rank engines
    scheme: ClassVar[str] = "split"
    feature_form: ClassVar[bool] = False

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        est = self.estimator
        kernels = {r: getattr(self, "kernel" if r == "kernel" else f"kernel_{r}")
                   for r in self.roles}
        return Requirements(self.scheme, kernels,
                            gram=gram_need(est, tuning, features=self.feature_form),
                            marginalized=est.name if est.transforms_kernel else "",
                            features=features_need(est) if self.feature_form else "",
                            pooled_tuning=tunes_pooled(est, tuning))

    #: its symbol in U-form and in V-form (``("MMD^2_u", "MMD^2_b")``), its family in the
    #: report's title, and what it is in words (after its name in the report's first line)
    symbols: ClassVar[tuple[str, str]] = ("T_u", "T_b")
    what: ClassVar[str] = ""
    #: its typed kernel form on the engines that hold the Gram matrix (None: values only)
    form_class: ClassVar[type[KernelForm] | None] = None

    def label(self) -> str:
        return statistic_name(self.symbols[0 if self.unbiased else 1], self.estimator)

    def offers(self, engine: Engine) -> frozenset[str]:
        kernel_form = self.form_class is not None and engine.holds_gram
        return frozenset({"values", "kernel_form"} if kernel_form else {"values"})

    def form(self) -> FormInfo | None:
        if self.form_class is None:
            return None
        rule = self.estimator.rule()
        return FormInfo(self.form_class, self.label(), self.unbiased,
                        isinstance(rule, Uniform) and rule.fixed == 1.0,
                        self.estimator.transforms_kernel)

    def describe(self, prepared: Prepared) -> str:
        form = f"{'U' if self.unbiased else 'V'}-statistic"
        return f"{self.label()}, {self.what} ({form})" if self.what else \
            f"{self.label()} ({form})"
