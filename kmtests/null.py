"""Null distributions of the kernel tests, as configuration objects.

Both tests take ``method="permutation"`` (default) or ``method="gamma"``, or one
of these objects, as scipy's hypothesis tests take ``PermutationMethod``:

* :class:`PermutationMethod` — the permutation null (exact level): all
  arrangements when there are at most `n_resamples` of them, otherwise
  `n_resamples` random ones;
* :class:`GammaMethod` — the moment-matched gamma approximation of the null
  of the biased KME statistics (approximate; checked against the exact
  permutation moments, see :doc:`/user_guide/gamma`);
* :class:`NormalMethod` — the asymptotic normal null of the linear-time
  two-sample statistics (``engine="block"`` or ``"linear"``, where it is the
  default; approximate, see :doc:`/user_guide/scale`).

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

__all__ = ["DEFAULT_N_RESAMPLES", "GammaMethod", "NormalMethod", "NullMethod",
           "PermutationMethod", "resolve_method"]

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


@dataclass(frozen=True)
class NormalMethod(NullMethod):
    """The asymptotic normal null of the linear-time MMD statistics (approximate p-value).

    Only the linear-time engines of :func:`kmtests.two_sample_test` take it
    (``engine="block"``, the B-test of Zaremba et al., 2013, and
    ``engine="linear"``, the linear statistic of Gretton et al., 2012,
    Sec. 6), and with them it is the default. Their statistic is the mean of
    ``K`` independent terms (block statistics, or the ``h`` values of
    disjoint pairs); the p-value is one-sided, ``1 - Phi(T / se)`` with
    ``se = sd(terms) / sqrt(K)``. There is no permutation: the result's
    `null_distribution` and `n_resamples` are None, and the standard error,
    ``z = T / se``, the block size and the number of blocks or pairs are in
    ``res.details``. See :doc:`/user_guide/scale`.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import NormalMethod, two_sample_test
    >>> gen = np.random.default_rng(0)
    >>> x, y = gen.normal(size=(5000, 3)), gen.normal(0.1, size=(5000, 3))
    >>> res = two_sample_test(x, y, engine="block", method=NormalMethod())
    >>> res.method, res.null_distribution, res.details["block_size"]
    (NormalMethod(), None, 70)
    >>> print(f"{res.statistic_name} = {res.statistic:.5f}, p = {res.pvalue:.2g}")
    MMD^2_block = 0.00272, p = 0.024
    """

    name: ClassVar[str] = "normal"

    def describe(self, res: KernelTestResult) -> str:
        d = res.details
        if "block_size" in d:
            what = f"block test (B-test, {d['n_blocks']} blocks of {d['block_size']})"
        elif "n_pairs" in d:
            what = f"linear-time test ({d['n_pairs']} pairs)"
        else:
            what = "linear-time test"
        return f"{what}, asymptotic normal null (approximate p-value)"

    def info_rows(self, res: KernelTestResult) -> list[tuple[str, Any]]:
        d = res.details
        rows: list[tuple[str, Any]] = [("Null", "normal (asympt.)")]
        if "block_size" in d:
            rows += [("Block size", int(d["block_size"])), ("Blocks", int(d["n_blocks"]))]
        elif "n_pairs" in d:
            rows += [("Pairs", int(d["n_pairs"]))]
        if "se" in d:
            rows += [("Std. error", float(d["se"])), ("z = T / se", float(d["z"]))]
        return rows

    def notes(self, res: KernelTestResult, alpha: float) -> list[str]:
        d = res.details
        if "block_size" in d:
            what = (f"the block statistic (B-test): the mean of MMD^2_u over {d['n_blocks']} "
                    f"blocks of {d['block_size']} consecutive points of each sample")
            terms = "block statistics"
        else:
            what = (f"the linear-time statistic MMD^2_l: the mean of h over {d.get('n_pairs')} "
                    "disjoint pairs of consecutive points")
            terms = "h values"
        return [f"Linear-time test on {what}. Asymptotic normal null: p-value = 1 - Phi(T / "
                f"se), se the standard error from the {terms} (approximate p-value, no "
                "permutations). Lower power than the quadratic-time test on the same data."]


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
        if isinstance(method, NormalMethod) and (clash or n_jobs is not None):
            clash += ["n_jobs"] * (n_jobs is not None)
            raise ValueError(f"NormalMethod has no permutations: "
                             f"{', '.join(f'`{k}`' for k in clash)} do(es) not apply.")
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
    if not isinstance(method, str) or method.lower() not in ("permutation", "gamma", "normal"):
        raise ValueError("`method` must be one of 'gamma', 'permutation', or a "
                         "PermutationMethod/GammaMethod object (or 'normal', a NormalMethod, "
                         f"with engine='block' or 'linear'); got {method!r}.")
    if method.lower() == "normal":
        given["n_jobs"] = n_jobs
        clash = [k for k, v in given.items() if v is not None]
        if clash:
            raise ValueError(f"method='normal' has no permutations: "
                             f"{', '.join(f'`{k}`' for k in clash)} do(es) not apply.")
        return NormalMethod()
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
