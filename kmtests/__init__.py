"""kmtests: kernel two-sample and independence tests with better kernel mean estimators.

Public API
----------
two_sample_test, mmd
    Kernel two-sample test (MMD) and its statistic.
independence_test, hsic
    Kernel independence test (HSIC) and its statistic.
TwoSampleResult, IndependenceResult
    The result objects.
compare_estimators
    One test, several estimators, the same permutations (one table).
kernels, estimators, datasets
    Sub-modules: kernels and bandwidths, kernel mean estimators, bundled data
    and simulation scenarios.
power
    Power studies (``power.power_curve``).
groundtruth, risk
    Closed-form true kernel means of Gaussian mixtures and risk studies of
    the estimators.
"""

from __future__ import annotations

from . import datasets as datasets
from . import estimators as estimators
from . import kernels as kernels
from .compare import compare_estimators as compare_estimators
from .independence import hsic as hsic
from .independence import independence_test as independence_test
from .results import IndependenceResult as IndependenceResult
from .results import TwoSampleResult as TwoSampleResult
from .twosample import mmd as mmd
from .twosample import two_sample_test as two_sample_test

__version__ = "0.1.0.dev0"

_LAZY = ("groundtruth", "learn", "power", "risk")


def __getattr__(name: str):  # PEP 562: heavier sub-modules load on first use
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

__all__ = [
    "IndependenceResult",
    "TwoSampleResult",
    "__version__",
    "compare_estimators",
    "datasets",
    "estimators",
    "groundtruth",
    "hsic",
    "independence_test",
    "kernels",
    "learn",
    "mmd",
    "power",
    "risk",
    "two_sample_test",
]
