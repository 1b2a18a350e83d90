"""What every problem tells the plan (:mod:`kmtests._plan`): its data, its kernels, its
default statistic, and which null methods keep its null hypothesis.

A problem is the data by role plus the group of rearrangements (the scheme) that
leave its null distribution unchanged. The plan asks the problem's class to

* resolve the face's kernel keywords by role (:meth:`Problem.kernels`);
* validate the data into a problem (:meth:`Problem.from_data`);
* name the statistic a test computes when none is named
  (:meth:`Problem.default_statistic`);
* restrict its arrangements to strata or blocks (:meth:`Problem.restricted`);

and a null method asks the problem whether it keeps the null
(:meth:`Problem.refuses`), by what the method draws (:attr:`NullMethod.draws
<kmtests.null.NullMethod.draws>`): arrangements of the scheme, multipliers, resamples,
fresh samples from a model, or nothing. A null method never tests the problem's kind.
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

from ..estimators import KernelMeanEstimator
from ..estimators._rules import Uniform
from ..kernels import Kernel, resolve_kernel

__all__ = ["Problem", "u_form_for_uniform_weights"]


def u_form_for_uniform_weights(estimator: KernelMeanEstimator) -> str:
    """The two-sample default: the U-form for uniform weights, the V-form otherwise."""
    return "unbiased" if isinstance(estimator.rule(), Uniform) else "biased"


class Problem:
    """The plan's side of a problem (a mixin of the problem dataclasses)."""

    #: the registry name of the problem
    kind: ClassVar[str] = "problem"
    #: the scheme the engines run it as (``Engine.schemes``)
    engine_scheme: ClassVar[str] = "split"
    #: the face keywords of its kernels: role -> (kernel keyword, bandwidth keyword)
    kernel_keywords: ClassVar[Mapping[str, tuple[str, str]]] = {"kernel": ("kernel", "bandwidth")}
    #: the null methods that keep its null, by name (None: every method whose needs the
    #: statistic meets; the method checks those)
    null_methods: ClassVar[tuple[str, ...] | None] = None
    #: what a null method may draw and keep its null (``NullMethod.draws``): the
    #: arrangements of its scheme, wild-bootstrap multipliers, draws from an approximating
    #: law, nothing (moments); a bootstrap's resamples and a model's fresh samples only
    #: for the problems that say so
    draws_kept: ClassVar[frozenset[str]] = frozenset({"arrangements", "multipliers", "law",
                                                      "nothing"})

    # -- the plan's questions ---------------------------------------------------------------------
    @classmethod
    def kernels(cls, keywords: Mapping[str, Any], data: tuple[Any, ...]) -> dict[str, Kernel]:
        """The kernels by role, from the face's kernel and bandwidth keywords."""
        return {role: resolve_kernel(keywords[k], keywords[b], name=k, bandwidth_name=b)
                for role, (k, b) in cls.kernel_keywords.items()}

    @classmethod
    def from_data(cls, data: tuple[Any, ...], kernels: Mapping[str, Kernel], *,
                  data_name: str | None, axis: Any, nan_policy: Any) -> Any:
        """The validated problem (with the input conventions `axis` and `nan_policy`)."""
        raise NotImplementedError

    @classmethod
    def default_statistic(cls, estimator: KernelMeanEstimator) -> str:
        """The registered name of the statistic a test computes when none is named."""
        return "biased"

    def restricted(self, strata: Any = None, blocks: Any = None) -> Any:
        """The problem with its arrangements restricted to strata or blocks."""
        if strata is None and blocks is None:
            return self
        raise ValueError(f"the {self.kind} problem has no restricted arrangements "
                         "(`strata`, `blocks`).")

    # -- validity of a null -----------------------------------------------------------------------
    def refuses(self, method: Any) -> str | None:
        """Why `method` does not keep this problem's null (None: it does).

        Arrangements restricted to strata or blocks are drawn only by the methods that
        draw the scheme's arrangements; the approximations of the unrestricted null
        (moments, multipliers) do not apply to them.
        """
        scheme = getattr(self, "scheme", None)
        if method.draws == "samples" and getattr(self, "sampler", None) is None:
            return (f"method={method.name!r} draws fresh samples from the model of a "
                    f"one-sample problem; the {self.kind} problem has no model to draw from.")
        if scheme is None:
            if method.draws == "arrangements":
                return (f"method={method.name!r} rearranges the data, and no rearrangement "
                        f"keeps the null of the {self.kind} problem: use "
                        "method='monte_carlo' (fresh samples from the model).")
            return None
        if self.series and method.draws == "multipliers":
            return None  # dependent multipliers are a time series' null (the method's check)
        if not scheme.full and method.draws != "arrangements":
            return (f"method={method.name!r} approximates the null of unrestricted "
                    "arrangements; `strata` and `blocks` restrict the permutations: use "
                    "method='permutation'.")
        return None

    def serial_evidence(self) -> tuple[Any, ...] | None:
        """Whether its rows look serially dependent, and the number that says so (and the
        fix, when not ``blocks='auto'``): :func:`kmtests._serial.serial_check` warns when
        an i.i.d. null meets them. None: the problem has no such check."""
        return None

    @property
    def series(self) -> bool:
        """Whether its observations are declared a time series (``blocks=``)."""
        return bool(getattr(getattr(self, "scheme", None), "series", False))
