"""Null distributions of the kernel tests, as configuration objects.

Both tests take ``method="permutation"`` (default) or ``method="gamma"``, or one
of these objects, as scipy's hypothesis tests take ``PermutationMethod``:

* :class:`PermutationMethod` — the permutation null (exact level): all
  arrangements when there are at most `n_resamples` of them, otherwise
  `n_resamples` random ones;
* :class:`GammaMethod` — the moment-matched gamma approximation of the null
  of the biased KME statistics (approximate; checked against the exact
  permutation moments, see :doc:`/user_guide/gamma`).

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

import abc
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Union

import numpy as np

from ._typing import SeedLike
from ._validation import check_positive_int, check_rng

if TYPE_CHECKING:
    from .results import KernelTestResult

__all__ = ["DEFAULT_N_RESAMPLES", "GammaMethod", "NullMethod", "PermutationMethod",
           "resolve_method"]

#: default number of Monte Carlo permutations (as scipy.stats.permutation_test)
DEFAULT_N_RESAMPLES = 9999


@dataclass(frozen=True)
class NullMethod(abc.ABC):
    """Base class of the null-distribution methods."""

    name: ClassVar[str] = "null"

    @abc.abstractmethod
    def describe(self, res: KernelTestResult) -> str:
        """How the p-value was obtained, for the report's method line."""

    def conf_int(self, res: KernelTestResult, alpha: float) -> np.ndarray | None:
        """Interval of the p-value's Monte Carlo error (None: there is none)."""
        return None

    @abc.abstractmethod
    def info_rows(self, res: KernelTestResult) -> list[tuple[str, Any]]:
        """Rows of the settings table of ``summary()``: (key, value) pairs, in reading order."""

    @abc.abstractmethod
    def notes(self, res: KernelTestResult, alpha: float) -> list[str]:
        """Notes of ``summary()`` about the p-value."""

    def pvalue_floor(self, res: KernelTestResult) -> float | None:
        """The smallest p-value the method can give (None: no floor)."""
        return None


@dataclass(frozen=True)
class PermutationMethod(NullMethod):
    """The permutation null distribution (exact level).

    Parameters
    ----------
    n_resamples : int
        Number of random permutations (default 9999). When the number of
        distinct arrangements is not larger, all of them are enumerated and
        the p-value is exact.
    batch : int, optional
        Permutations processed per step; memory is ``O(N^2 + batch N)``.
        Default: as many as fit in about 16 MB.
    rng : None, int, SeedSequence or Generator
        Source of the permutations. A fixed value gives bit-identical
        p-values whatever `batch` and `n_jobs` are.
    n_jobs : int, optional
        Threads (None or -1: all CPUs; otherwise 1 to the number of CPUs).
    progress : bool, optional
        Show a progress bar (tqdm). None (default): only for tests expected
        to take more than a few seconds, when tqdm is installed.

    Notes
    -----
    The Monte Carlo p-value is ``(1 + #{T_b >= T}) / (1 + B)`` (Phipson &
    Smyth, 2010): never zero, and the test has exact level for any ``B``.
    """

    n_resamples: int = DEFAULT_N_RESAMPLES
    batch: int | None = None
    rng: SeedLike = None
    n_jobs: int | None = None
    progress: bool | None = None

    name: ClassVar[str] = "permutation"

    def __post_init__(self) -> None:
        check_positive_int(self.n_resamples, "n_resamples")
        check_positive_int(self.batch, "batch", allow_none=True)
        check_n_jobs(self.n_jobs)
        if self.progress is not None and not isinstance(self.progress, (bool, np.bool_)):
            raise TypeError(f"`progress` must be True, False or None; got {self.progress!r}.")
        if not isinstance(self.rng, np.random.Generator):
            check_rng(self.rng)  # validates; a Generator is used as given (not copied)

    def describe(self, res: KernelTestResult) -> str:
        if res.exact:
            return f"exact permutation p-value (all {res.n_resamples} arrangements)"
        return f"permutation p-value (based on {res.n_resamples} random permutations)"

    def conf_int(self, res: KernelTestResult, alpha: float) -> np.ndarray | None:
        if res.exact:
            return np.array([res.pvalue, res.pvalue])
        from statsmodels.stats.proportion import proportion_confint

        lo, hi = proportion_confint(res.count, res.n_resamples, alpha=alpha, method="beta")
        return np.array([float(lo), float(hi)])

    def info_rows(self, res: KernelTestResult) -> list[tuple[str, Any]]:
        if res.exact:
            return [("Null", "exact permutation"), ("Arrangements", res.n_resamples)]
        return [("Null", "permutation"), ("Resamples", res.n_resamples),
                ("Seed", "-" if res.seed is None else res.seed)]

    def notes(self, res: KernelTestResult, alpha: float) -> list[str]:
        if res.exact:
            return ["Exact p-value: every arrangement of the data was enumerated (no Monte "
                    "Carlo error)."]
        conf = f"{100 * (1 - alpha):.4g}%"
        return [f"p {conf} MC low/high: the Clopper-Pearson {conf} interval of the exact "
                "permutation p-value, i.e. the Monte Carlo error of the p-value (not an "
                "interval for the statistic); p-value = (1 + #{T_b >= T}) / (1 + B)."]

    def pvalue_floor(self, res: KernelTestResult) -> float | None:
        if res.exact or res.n_resamples is None:
            return None
        return 1.0 / (res.n_resamples + 1)


@dataclass(frozen=True)
class GammaMethod(NullMethod):
    """The moment-matched gamma approximation to the null (approximate p-value).

    For the biased KME statistics ``MMD^2_b`` and ``HSIC_b`` (Gretton et al.,
    2008, 2009); see :doc:`/user_guide/gamma`.

    Parameters
    ----------
    moments : {"permutation", "asymptotic"}
        The mean and variance the gamma is fitted to: the exact moments of
        the statistic over the permutations of the data (default; O(n^2)), or
        the published estimates of the asymptotic null moments. The latter
        are compared with the exact ones and the test refuses
        (``ValueError``) or warns (:class:`~kmtests.ApproximationWarning`)
        where they disagree; measured, they make the test reject up to 50% at
        a nominal 5% on heavy-tailed or high-dimensional data, where the
        permutation moments stay within 4.7-6.5%.
    """

    moments: str = "permutation"

    name: ClassVar[str] = "gamma"

    def __post_init__(self) -> None:
        if self.moments not in ("permutation", "asymptotic"):
            raise ValueError(f"`moments` must be 'permutation' or 'asymptotic'; got "
                             f"{self.moments!r}.")

    def describe(self, res: KernelTestResult) -> str:
        which = "permutation" if self.moments == "permutation" else "asymptotic"
        return f"gamma approximation to the null, {which} moments (approximate p-value)"

    def info_rows(self, res: KernelTestResult) -> list[tuple[str, Any]]:
        rows: list[tuple[str, Any]] = [("Null", "gamma (approx.)"), ("Moments", self.moments)]
        if "gamma_shape" in res.details:
            rows += [("Gamma shape", float(res.details["gamma_shape"])),
                     ("Gamma scale", float(res.details["gamma_scale"]))]
        return rows

    def notes(self, res: KernelTestResult, alpha: float) -> list[str]:
        d = res.details
        if self.moments == "permutation":
            return ["Gamma approximation to the null distribution, fitted to the exact mean "
                    "and variance of the statistic over the permutations of the data: "
                    "approximate p-value (see the documentation)."]
        text = ("Gamma approximation to the null distribution with the asymptotic moments: "
                "approximate p-value")
        if "permutation_var" in d and d.get("null_var"):
            ratio = d["null_var"] / d["permutation_var"]
            shift = (d["null_mean"] - d["permutation_mean"]) / np.sqrt(d["permutation_var"])
            shift = round(float(shift), 2) + 0.0  # no "-0.00"
            text += (f"; against the exact permutation moments its mean is off by "
                     f"{shift:+.2f} sd and its variance by a factor {ratio:.2f}")
        return [text + " (see the documentation)."]


Method = Union[str, NullMethod]


def check_n_jobs(n_jobs: Any) -> int | None:
    """None, -1 (all CPUs) or 1..cpu_count; anything else raises."""
    import os

    if n_jobs is None:
        return None
    n_cpu = os.cpu_count() or 1
    msg = (f"`n_jobs` must be None, -1 (all CPUs) or an integer from 1 to {n_cpu} (the "
           f"number of CPUs); got {n_jobs!r}.")
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(msg)
    if int(n_jobs) == -1:
        return n_cpu
    if not 1 <= int(n_jobs) <= n_cpu:
        raise ValueError(msg)
    return int(n_jobs)


def resolve_method(method: Any, *, n_resamples: Any = None, batch: Any = None,
                   rng: SeedLike = None, n_jobs: Any = None,
                   progress: Any = None) -> NullMethod:
    """A method name or object plus the tests' own keyword options -> a method object.

    With a name, the keyword options configure it (``n_resamples`` defaults
    to 9999). With an object, giving one of them as well is an error (give it
    in one place); `n_jobs` may still be given to set the threads.
    """
    given = {"n_resamples": n_resamples, "batch": batch, "rng": rng, "progress": progress}
    if isinstance(method, NullMethod):
        clash = [k for k, v in given.items() if v is not None]
        if isinstance(method, PermutationMethod) and clash:
            raise ValueError(f"give {', '.join(f'`{k}`' for k in clash)} either in `method` "
                             "(PermutationMethod) or as an argument of the test, not both.")
        if n_jobs is not None and isinstance(method, PermutationMethod):
            if method.n_jobs is not None and method.n_jobs != n_jobs:
                raise ValueError("give `n_jobs` either in `method` or as an argument of the "
                                 "test, not both.")
            from dataclasses import replace

            return replace(method, n_jobs=n_jobs)
        check_n_jobs(n_jobs)
        return method
    if not isinstance(method, str) or method.lower() not in ("permutation", "gamma"):
        raise ValueError("`method` must be one of 'gamma', 'permutation', or a "
                         f"PermutationMethod/GammaMethod object; got {method!r}.")
    if method.lower() == "gamma":
        check_n_jobs(n_jobs)
        if n_resamples is not None:
            check_positive_int(n_resamples, "n_resamples")
        if batch is not None:
            check_positive_int(batch, "batch", allow_none=True)
        if rng is not None:
            check_rng(rng)
        return GammaMethod()
    return PermutationMethod(
        n_resamples=DEFAULT_N_RESAMPLES if n_resamples is None else n_resamples,
        batch=batch, rng=rng, n_jobs=n_jobs, progress=progress)
