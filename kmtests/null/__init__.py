"""Null distributions of the kernel tests, as configuration objects.

The tests take ``method="permutation"``, ``"gamma"``, ``"normal"``,
``"wild"`` or ``"chi2"``, or one of these objects, as scipy's hypothesis tests take
``PermutationMethod`` (the registry :data:`METHODS`):

* :class:`PermutationMethod` — the permutation null (exact level): all
  arrangements when there are at most `n_resamples` of them, otherwise
  `n_resamples` random ones (:mod:`kmtests.null.permutation`, the one
  permutation loop; :mod:`kmtests.null.combine` combines the columns of an
  aggregated statistic);
* :class:`GammaMethod` — the moment-matched gamma approximation of the null
  of the biased KME statistics (approximate; checked against the exact
  permutation moments, see :doc:`/user_guide/gamma`);
* :class:`NormalMethod` — the null of the linear-time two-sample statistics
  (``engine="block"`` or ``"linear"``, where it is the default; approximate,
  see :doc:`/user_guide/scale`);
* :class:`BootstrapMethod` (``"bootstrap"``) and :class:`JointGammaMethod`
  (``method="gamma"`` of :func:`~kmtests.joint_independence_test`) — the
  bootstrap and the gamma approximation of the joint independence test's
  dHSIC (approximate; :mod:`kmtests.null.bootstrap`,
  :mod:`kmtests.null.joint_gamma`);
* :class:`WildBootstrap` — the wild bootstrap of the degenerate kernel
  statistics (Chwialkowski et al., 2014; approximate), with i.i.d. Rademacher
  multipliers or an autoregressive process for dependent data;
* :class:`WeightedChiSquare` — the weighted chi-square approximation of the
  null of the V-statistics HSIC_b and KCI from the eigenvalues of the product of
  their Gram matrices (:mod:`kmtests.null.chi2`; approximate);
* :class:`AsymptoticChiSquare` (``"asymptotic"``) — the chi-square null of the
  interpretable tests with learned features (ME, SCF, NFSIC; approximate);
* :class:`SwapMethod` (``"swap"``) — two samples of equal size: the points matched in
  random pairs, the arrangements exchanging them (a subgroup of the permutations: exact
  level, a quarter of a permutation's flops for the MMD; MMDAgg's null for equal sizes;
  :mod:`kmtests.null.swap`);
* :class:`MonteCarloMethod` (``"monte_carlo"``) — the statistic of fresh samples drawn
  from the model of a one-sample problem (exact level; :mod:`kmtests.null.monte_carlo`).

The result of a test keeps the method object (``res.method``), and the
method decides how the result describes its p-value: the method line, the
Monte Carlo interval of a permutation p-value, the settings rows and the notes
of ``summary()``.

Examples
--------
>>> import numpy as np
>>> from kmtests import PermutationMethod, two_sample_test
>>> gen = np.random.default_rng(0)
>>> x, y = gen.normal(size=(30, 2)), gen.normal(0.5, size=(30, 2))
>>> res = two_sample_test(x, y, method=PermutationMethod(n_resamples=499, rng=1))
>>> res.method
PermutationMethod(n_resamples=499, batch=None, rng=1, n_jobs=None, progress=None)
>>> print(f"{res.pvalue:.3f}")
0.012
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .._typing import SeedLike
from .._validation import check_choice
from ..engines._threads import check_n_jobs as check_n_jobs
from ._base import NullMethod as NullMethod
from ._base import NullOutcome as NullOutcome
from ._base import RunContext as RunContext
from .bootstrap import BootstrapMethod as BootstrapMethod
from .chi2 import AsymptoticChiSquare as AsymptoticChiSquare
from .chi2 import WeightedChiSquare as WeightedChiSquare
from .gamma import GammaMethod as GammaMethod
from .joint_gamma import JointGammaMethod as JointGammaMethod
from .monte_carlo import MonteCarloMethod as MonteCarloMethod
from .normal import NormalMethod as NormalMethod
from .permutation import DEFAULT_N_RESAMPLES as DEFAULT_N_RESAMPLES
from .permutation import PermutationMethod as PermutationMethod
from .swap import SwapMethod as SwapMethod
from .wild import WildBootstrap as WildBootstrap

__all__ = ["AsymptoticChiSquare", "BootstrapMethod", "DEFAULT_N_RESAMPLES", "GammaMethod", "JointGammaMethod",
           "METHODS", "MonteCarloMethod", "VARIANTS", "NormalMethod", "method_class", "NullMethod", "PermutationMethod", "SwapMethod",
           "WeightedChiSquare",
           "WildBootstrap", "check_n_jobs", "method_statistic", "resolve_method"]

#: the null methods by name
METHODS: dict[str, type[NullMethod]] = {"permutation": PermutationMethod, "gamma": GammaMethod,
                                        "normal": NormalMethod, "wild": WildBootstrap,
                                        "chi2": WeightedChiSquare,
                                        "asymptotic": AsymptoticChiSquare,
                                        "bootstrap": BootstrapMethod,
                                        "monte_carlo": MonteCarloMethod,
                                        "swap": SwapMethod}


#: a method name that configures another method for a problem, by (problem kind, name):
#: ``method="gamma"`` of a conditional problem fits Zhang et al.'s asymptotic moments, of
#: a joint problem it is dHSIC's gamma; ``method="wild"`` of a conditional problem draws
#: Gaussian multipliers (the weighted chi-square null itself; Rademacher ones are liberal)
VARIANTS: dict[tuple[str, str], tuple[type[NullMethod], dict[str, Any]]] = {
    ("conditional", "gamma"): (GammaMethod, {"moments": "asymptotic"}),
    ("conditional", "wild"): (WildBootstrap, {"process": "gaussian"}),
    ("joint", "gamma"): (JointGammaMethod, {}),
}


def method_class(method: Any, kind: str | None = None, default: str = "permutation"
                 ) -> tuple[type[NullMethod], dict[str, Any]] | None:
    """The class (and fixed options) `method` names for a problem of `kind` (None: not a
    known name; an object: its own class)."""
    if isinstance(method, NullMethod):
        return type(method), {}
    name = default if method is None else method
    if not isinstance(name, str) or name.lower() not in METHODS:
        return None
    name = name.lower()
    return VARIANTS.get((kind or "", name), (METHODS[name], {}))


def method_statistic(method: Any, kind: str) -> str | None:
    """The statistic `method` (a name or a method object) approximates the null of in a
    test of `kind` (``NullMethod.own_statistic``): what ``statistic=None`` stands for when
    a method is named, e.g. the biased statistic for ``method="gamma"``. None: the test's
    default statistic (the method has none of its own, or `method` is not a method; the
    method's own checks then speak)."""
    if isinstance(method, NullMethod):
        cls: Any = type(method)
    elif isinstance(method, str) and method.lower() in METHODS:
        cls = METHODS[method.lower()]
    else:
        return None
    return cls.own_statistic.get(kind)


def resolve_method(method: Any, *, n_resamples: Any = None, batch: Any = None,
                   rng: SeedLike = None, n_jobs: Any = None, progress: Any = None,
                   default: str = "permutation", problem: Any = None) -> NullMethod:
    """A method name or object plus the tests' own keyword options -> a method object.

    ``method=None`` stands for `default` (the statistic's own null). A name means
    what it means for `problem` (:data:`VARIANTS`; a problem that lists its
    ``null_methods`` takes only those). With a name, the keyword options configure
    it (``n_resamples`` defaults to 9999); an option the method does not take is an
    error, but `rng` (a seed given to every test of a script) is dropped when the
    method draws nothing (the plan says so in the result). With an object, giving one
    of them as well is an error (give it in one place); `n_jobs` may still be given to
    set its threads.
    """
    given = {"n_resamples": n_resamples, "batch": batch, "rng": rng, "progress": progress,
             "n_jobs": n_jobs}
    if isinstance(method, NullMethod):
        if rng is not None and "rng" not in method.test_options:
            given["rng"] = None
        return _with_options(method, given)
    name = default if method is None else method
    allowed = getattr(problem, "null_methods", None)
    if allowed is not None:
        name = check_choice(name, "method", allowed)
    if not isinstance(name, str) or name.lower() not in METHODS:
        names = ", ".join(repr(k) for k in sorted(METHODS))
        raise ValueError(f"`method` must be one of {names}, or a method object of "
                         f"kmtests.null; got {method!r}.")
    found = method_class(name, getattr(problem, "kind", None))
    assert found is not None
    cls, fixed = found
    if rng is not None and "rng" not in cls.test_options:
        given["rng"] = None
    clash = [k for k, v in given.items() if v is not None and k not in cls.test_options]
    if clash:
        which = (f"the statistic's null (method={name.lower()!r}, its default)"
                 if method is None else f"method={name.lower()!r}")
        raise ValueError(f"{which} has no permutations: "
                         f"{', '.join(f'`{k}`' for k in clash)} do(es) not apply."
                         + (" Drop them, or run a permutation test with engine='exact' or "
                            "'streamed'." if method is None else ""))
    opts = {**fixed, **{k: v for k, v in given.items() if v is not None}}
    if "n_resamples" in cls.test_options and "n_resamples" not in opts:
        opts["n_resamples"] = DEFAULT_N_RESAMPLES
    return cls(**opts)


def _with_options(method: NullMethod, given: dict[str, Any]) -> NullMethod:
    """A method object with the tests' keyword options: `n_jobs` may set its threads; the
    others belong in the object (giving them twice is an error)."""
    n_jobs = given["n_jobs"]
    clash = [k for k, v in given.items() if v is not None and k != "n_jobs"]
    if not method.test_options:
        clash += ["n_jobs"] * (n_jobs is not None)
        if clash:
            raise ValueError(f"{type(method).__name__} has no permutations: "
                             f"{', '.join(f'`{k}`' for k in clash)} do(es) not apply.")
        return method
    if clash:
        raise ValueError(f"give {', '.join(f'`{k}`' for k in clash)} either in `method` "
                         f"({type(method).__name__}) or as an argument of the test, not "
                         "both.")
    if n_jobs is not None:
        current = getattr(method, "n_jobs", None)
        if current is not None and current != n_jobs:
            raise ValueError("give `n_jobs` either in `method` or as an argument of the "
                             "test, not both.")
        return replace(method, n_jobs=n_jobs)  # type: ignore[call-arg]
    return method
