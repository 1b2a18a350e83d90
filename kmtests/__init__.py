"""kmtests: kernel two-sample and independence tests with better kernel mean estimators.

Public API
----------
two_sample_test, mmd
    Kernel two-sample test (MMD) and its statistic.
independence_test, hsic
    Kernel independence test (HSIC) and its statistic.
k_sample_test, KSampleResult
    Kernel k-sample test (are k samples from one distribution?), with post-hoc
    pairwise tests.
by_group
    The samples of one DataFrame split by a group column (the command line's
    ``--group``): ``two_sample_test(*by_group(df, "arm"))``.
conditional_independence_test (ci_test), ConditionalIndependenceResult
    Kernel conditional independence test (KCI) with a tuned regression on z.
conditional_two_sample_test, ConditionalTwoSampleResult
    Is the law of y given x the same in two groups (covariate shift allowed)? The
    conditional MMD with a conditional permutation null through the propensity.
joint_independence_test, dhsic
    Joint independence test of d variables (dHSIC) and its statistic.
goodness_of_fit_test, GoodnessOfFitResult
    Kernel goodness-of-fit test (kernel Stein discrepancy) of a sample against a model
    known by its score.
TwoSampleResult, IndependenceResult, JointIndependenceResult
    The result objects.
PermutationMethod, GammaMethod, NormalMethod, null
    The null-distribution methods as configuration objects.
compare_estimators
    One test, several estimators, the same permutations (one table).
aggregated_two_sample_test, aggregated_independence_test
    Aggregated tests (MMDAgg/HSICAgg, MMD-FUSE) over collections of bandwidths,
    estimators, statistic forms and regularised statistics, with exact level.
kernels, estimators, datasets
    Sub-modules: kernels and bandwidths, kernel mean estimators, bundled data
    and simulation scenarios.
power
    Power studies (``power.power_curve``).
groundtruth, risk
    Closed-form true kernel means of Gaussian mixtures and risk studies of
    the estimators.
SequentialTwoSampleTest, SequentialIndependenceTest, DriftMonitor
    Anytime-valid tests by betting on a stream, and a drift monitor
    (:mod:`kmtests.sequential`).
KmtestsWarning and its subclasses
    ApproximationWarning, DegenerateStatisticWarning, IndefiniteKernelWarning,
    SerialDependenceWarning, SlowTestWarning.
timeseries
    Time series: drift between two windows of one series, and the kernel
    cross-dependence of two series at lags 0..M (``drift_test``,
    ``cross_dependence_test``), with data-driven block lengths.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from ._warnings import ApproximationWarning as ApproximationWarning
from ._warnings import DegenerateStatisticWarning as DegenerateStatisticWarning
from ._warnings import IndefiniteKernelWarning as IndefiniteKernelWarning
from ._warnings import KmtestsWarning as KmtestsWarning
from ._warnings import SerialDependenceWarning as SerialDependenceWarning
from ._warnings import SlowTestWarning as SlowTestWarning

if TYPE_CHECKING:  # the names below load on first use (PEP 562, `_ATTRIBUTES`)
    from . import datasets as datasets
    from . import estimators as estimators
    from . import kernels as kernels
    from . import null as null
    from .aggregated import aggregated_independence_test as aggregated_independence_test
    from .aggregated import aggregated_two_sample_test as aggregated_two_sample_test
    from .compare import compare_estimators as compare_estimators
    from .conditional import ci_test as ci_test
    from .goodness import goodness_of_fit_test as goodness_of_fit_test
    from .conditional import conditional_independence_test as conditional_independence_test
    from .conditional_two_sample import ConditionalTwoSampleResult as ConditionalTwoSampleResult
    from .conditional_two_sample import conditional_two_sample_test as conditional_two_sample_test
    from .independence import hsic as hsic
    from .independence import independence_test as independence_test
    from .ksample import k_sample_test as k_sample_test
    from .problems.groups import by_group as by_group
    from .joint import dhsic as dhsic
    from .joint import joint_independence_test as joint_independence_test
    from .null import GammaMethod as GammaMethod
    from .null import NormalMethod as NormalMethod
    from .null import PermutationMethod as PermutationMethod
    from .results import ConditionalIndependenceResult as ConditionalIndependenceResult
    from .results import GoodnessOfFitResult as GoodnessOfFitResult
    from .results import IndependenceResult as IndependenceResult
    from .results import KSampleResult as KSampleResult
    from .results import JointIndependenceResult as JointIndependenceResult
    from .results import TwoSampleResult as TwoSampleResult
    from .sequential import DriftMonitor as DriftMonitor
    from .sequential import SequentialIndependenceTest as SequentialIndependenceTest
    from .sequential import SequentialTwoSampleTest as SequentialTwoSampleTest
    from .twosample import mmd as mmd
    from .twosample import two_sample_test as two_sample_test

__version__ = "0.2.0.dev0"

#: the public names and the modules they load from on first use: `import kmtests` loads
#: none of the tests (and neither numba nor SciPy); the first use of a name loads its
#: module (a test's face loads the plan, the statistics, engines and null methods)
_ATTRIBUTES: dict[str, str] = {
    "aggregated_independence_test": "aggregated",
    "aggregated_two_sample_test": "aggregated",
    "compare_estimators": "compare",
    "ci_test": "conditional",
    "goodness_of_fit_test": "goodness",
    "conditional_independence_test": "conditional",
    "ConditionalTwoSampleResult": "conditional_two_sample",
    "conditional_two_sample_test": "conditional_two_sample",
    "hsic": "independence",
    "independence_test": "independence",
    "k_sample_test": "ksample",
    "by_group": "problems.groups",
    "dhsic": "joint",
    "joint_independence_test": "joint",
    "GammaMethod": "null",
    "NormalMethod": "null",
    "PermutationMethod": "null",
    "ConditionalIndependenceResult": "results",
    "GoodnessOfFitResult": "results",
    "IndependenceResult": "results",
    "KSampleResult": "results",
    "JointIndependenceResult": "results",
    "TwoSampleResult": "results",
    "DriftMonitor": "sequential",
    "SequentialIndependenceTest": "sequential",
    "SequentialTwoSampleTest": "sequential",
    "mmd": "twosample",
    "two_sample_test": "twosample",
}
#: the sub-modules that load on first use
_LAZY = ("datasets", "estimators", "kernels", "null", "groundtruth", "learn", "power", "risk",
         "timeseries")


def __getattr__(name: str) -> Any:  # PEP 562
    module = _ATTRIBUTES.get(name)
    if module is not None:
        # looked up each time (a microsecond), not cached here: a name patched in its
        # module before its first use here would otherwise stay patched
        return getattr(importlib.import_module(f"{__name__}.{module}"), name)
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}"):
        # any sub-module as an attribute (`kmtests.aggregated.AggregatedTwoSampleResult`),
        # as when `import kmtests` loaded them all
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ATTRIBUTES) | set(_LAZY))

__all__ = [
    "ApproximationWarning",
    "aggregated_independence_test",
    "aggregated_two_sample_test",
    "by_group",
    "ci_test",
    "ConditionalIndependenceResult",
    "conditional_independence_test",
    "ConditionalTwoSampleResult",
    "conditional_two_sample_test",
    "DegenerateStatisticWarning",
    "DriftMonitor",
    "GammaMethod",
    "goodness_of_fit_test",
    "GoodnessOfFitResult",
    "IndefiniteKernelWarning",
    "IndependenceResult",
    "KSampleResult",
    "JointIndependenceResult",
    "KmtestsWarning",
    "NormalMethod",
    "PermutationMethod",
    "SequentialIndependenceTest",
    "SequentialTwoSampleTest",
    "SerialDependenceWarning",
    "SlowTestWarning",
    "TwoSampleResult",
    "__version__",
    "compare_estimators",
    "datasets",
    "dhsic",
    "estimators",
    "groundtruth",
    "hsic",
    "independence_test",
    "k_sample_test",
    "joint_independence_test",
    "kernels",
    "learn",
    "mmd",
    "null",
    "power",
    "risk",
    "timeseries",
    "two_sample_test",
]
