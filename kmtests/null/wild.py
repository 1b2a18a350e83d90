r"""The wild bootstrap of the degenerate kernel statistics (Chwialkowski et al., 2014).

Under the null hypothesis ``MMD^2`` and ``HSIC`` are degenerate V- (or U-)
statistics. The wild bootstrap redraws them with random multipliers ``W`` on
the points instead of rearranging the points:

* two samples (``MMD^2_b``): ``T_b = a_b' K a_b`` with ``a_b = (W~_x / n_x,
  -W~_y / n_y)``, where ``W~`` is each sample's multiplier process minus its
  mean; ``MMD^2_u`` drops the within-sample diagonal terms as the statistic
  does (``sum_{i != j} W~_i W~_j k(x_i, x_j) / (n_x (n_x - 1))`` and the same in
  y, minus ``2 sum_ij W~_i W~_j k(x_i, y_j) / (n_x n_y)``);
* two variables (``HSIC_b``): ``T_b = W~' (Kc o Lc) W~ / n^2``, as in the
  authors' code (``Kc = HKH``); the conditional statistic KCI likewise, with the
  residual Gram matrices (:mod:`kmtests.statistics.kci`).

With independent Rademacher multipliers (``process="rademacher"``) this is
the multiplier bootstrap of i.i.d. data; with the autoregressive process
``W_t = e^{-1/l} W_{t-1} + sqrt(1 - e^{-2/l}) eps_t`` (``process="ar"``,
``length=l``; standard normal ``eps``, stationary start) it is meant for
weakly dependent (e.g. time-series) data, where permutations are not: the
multipliers keep the dependence of neighbouring points. ``process="auto"``
(the default, what ``method="wild"`` means) takes the AR process when the
problem is declared a time series (``blocks=`` given to the test) and
Rademacher multipliers otherwise. ``length="auto"`` (the default) chooses ``l``
from the data: the Politis-White stationary-bootstrap block length, the
largest over the data's columns and the first principal components of the
Gaussian kernel's features (:mod:`kmtests._serial`; the AR multipliers'
covariance ``e^{-|s - t| / l}`` is the stationary bootstrap's with mean block
``l``); with ``blocks=b`` given as a number, ``l = b``. Either way the p-value
``(1 + #{T_b >= T}) / (1 + B)`` is approximate (asymptotic).

The multipliers are drawn from `rng`'s stream in fixed-shape chunks, and the
quadratic forms use the same fixed-shape products as the MMD engine, so a seed
gives the same p-value whatever `batch` and `n_jobs` are. Cost: ``2 B N^2``
flops for ``MMD^2_b`` and ``HSIC_b`` (three times that for ``MMD^2_u``), like
``B`` permutations of the MMD.

Examples
--------
>>> import numpy as np
>>> from kmtests import independence_test
>>> from kmtests.null import WildBootstrap
>>> gen = np.random.default_rng(0)
>>> x = gen.normal(size=100); y = x + gen.normal(size=100)
>>> res = independence_test(x, y, method=WildBootstrap(n_resamples=499, rng=1))
>>> print(f"{res.pvalue:.3f}")
0.002
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._summary import Annotated
from .._validation import check_choice
from ..statistics.forms import WILD_DRAW
from ..statistics.null_laws import multipliers as multipliers
from ._base import NullOutcome, ResultLike, RunContext
from .permutation import ResamplingMethod

__all__ = ["WildBootstrap", "multipliers"]

def _fmt(length: Any) -> str:
    return f"{length:g}" if isinstance(length, (int, float)) else str(length)


@dataclass(frozen=True)
class WildBootstrap(ResamplingMethod):
    """The wild bootstrap null (approximate; see the module docs).

    Parameters
    ----------
    process : {"auto", "rademacher", "gaussian", "ar"}
        Independent Rademacher or standard normal multipliers (i.i.d. data), or
        the autoregressive process of Chwialkowski et al. (dependent data);
        ``"auto"`` (default): ``"ar"`` on a problem declared a time series (the
        test's ``blocks=``), else ``"rademacher"``. The
        conditional test (KCI) takes ``"gaussian"`` (its ``method="wild"``) or
        ``"ar"``: with Gaussian multipliers the draws of ``W' M W`` are the
        weighted chi-square null itself, while Rademacher multipliers fix the
        diagonal and have lighter tails (refused there: on the sharp conditional
        null of ``tests/test_level_conditional.py``, n = 100, 39 of 300 data sets
        rejected at 5% against 22 with Gaussian multipliers and with the gamma
        null).
    length : float or "auto"
        The memory ``l`` of the autoregressive process; ``"auto"`` (default): from
        the data (see the module docs; the result's ``details["length"]`` and
        report give the value and the rule). Before 0.2 the default was 20 (the
        authors' code).

    Notes
    -----
    Applies to ``MMD^2_u``, ``MMD^2_b`` and ``HSIC_b`` with the KME (uniform
    weights) on the in-memory engine. Measured at the 5% level
    (``benchmarks/dependent_level.py``): on i.i.d. data with Rademacher
    multipliers 6-8% at n = 20, 4.6-5.9% at n = 50-100. On time series with the
    automatic length (``blocks="auto", method="wild"``) it over-rejects at
    n = 200-500: HSIC of two AR(1) series 9% (phi = 0.8, n = 200) to 23%
    (phi = 0.95), MMD between two windows of one series 13-32%, where
    ``blocks="auto"`` (block permutations) keeps the level up to phi = 0.9
    (``benchmarks/README.md``, "Dependent data").

    References
    ----------
    .. [1] Chwialkowski, Sejdinovic, Gretton (2014). A wild bootstrap for
       degenerate kernel tests. NeurIPS.
    """

    process: str = "auto"
    length: float | str = "auto"

    name: ClassVar[str] = "wild"
    draws: ClassVar[str] = "multipliers"
    needs: ClassVar[str] = "kernel_form"
    requires: ClassVar[str] = "the kernel matrices in memory (engine='exact') and a kernel statistic"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice(self.process, "process", ("auto", "rademacher", "gaussian", "ar"))
        if isinstance(self.length, str) and self.length.lower() == "auto":
            pass
        elif isinstance(self.length, bool) or not (
                isinstance(self.length, (int, float, np.integer, np.floating))
                and np.isfinite(self.length) and self.length > 0):
            raise ValueError(f"`length` must be a positive number or 'auto'; got "
                             f"{self.length!r}.")

    def resolved_process(self, problem: Any) -> str:
        """The process on `problem`: ``"auto"`` is ``"ar"`` on a time series (a problem
        with ``blocks``), else ``"rademacher"``."""
        if self.process != "auto":
            return self.process
        return "ar" if getattr(problem, "series", False) else "rademacher"

    def resolved_length(self, problem: Any) -> tuple[float, str]:
        """The memory of the AR multipliers on `problem`, and why."""
        if not isinstance(self.length, str):
            return float(self.length), "given"
        scheme = problem.scheme
        auto = getattr(scheme, "auto", None)
        if auto is None and getattr(problem, "series", False):
            return float(scheme.length), "the block length given (blocks=)"
        if auto is None:
            from ..problems.data import auto_length_of

            auto = auto_length_of(problem)
        return round(float(auto.multiplier), 2), auto.why_multiplier

    def check(self, statistic: Any, problem: Any, engine: Any) -> None:
        super().check(statistic, problem, engine)
        if getattr(problem, "series", False) and self.resolved_process(problem) != "ar":
            raise ValueError(f"process={self.process!r} draws independent multipliers "
                             "(i.i.d. data), and `blocks` declares a time series: use "
                             "method='wild' (AR multipliers on a time series) or "
                             "WildBootstrap(process='ar').")

    def form_refusal(self, info: Any, statistic: Any, problem: Any) -> str | None:
        return info.form.wild_refusal(info, self.resolved_process(problem), statistic)


    def run(self, prepared: Any, problem: Any, observed: Any, ctx: RunContext) -> NullOutcome:
        kf = prepared.kernel_form()
        process = self.resolved_process(problem)
        length, why = (self.resolved_length(problem) if process == "ar" else (20.0, ""))
        combination = prepared.combination
        null = self.draw_null(
            lambda gen, b: kf.wild_null(gen, b, process, length, self.n_jobs),
            WILD_DRAW, 16 * WILD_DRAW, None if combination is None else prepared.width)
        details: dict[str, Any] = {"process": process}
        if process == "ar":
            details["length"] = length
            details["length_rule"] = why
        if combination is not None:  # the members on the same multipliers (KSDAgg)
            scales = np.broadcast_to(np.asarray(observed.scale, dtype=np.float64)
                                     .reshape(1, -1), null.shape)
            out: NullOutcome = combination.combine(observed, null, scales, False, prepared)
            out.n_resamples = self.n_resamples
            out.details = {**(out.details or {}), **details}
            return out
        return self.upper_outcome(prepared, observed, null, details)

    # -- the report ---------------------------------------------------------------------------
    def _resolved(self, res: ResultLike) -> tuple[str, Any, str]:
        """The process, length and its rule of a result (as run)."""
        details = getattr(res, "details", None) or {}
        process = details.get("process", self.process)
        return process, details.get("length", self.length), details.get("length_rule", "")

    def describe(self, res: ResultLike) -> str:
        process, length, _ = self._resolved(res)
        what = {"rademacher": "Rademacher multipliers",
                "gaussian": "Gaussian multipliers"}.get(process) or (
                    f"AR(1) multipliers, length {_fmt(length)}")
        return f"wild bootstrap p-value ({res.n_resamples} draws, {what}; approximate)"

    def info_rows(self, res: ResultLike) -> list[tuple[str, Any]]:
        process, length, _ = self._resolved(res)
        rows: list[tuple[str, Any]] = [("method", Annotated("wild", "(approx.)")),
                                       ("n_resamples", res.n_resamples),
                                       ("process", process)]
        if process == "ar":
            rows.append(("length", length))
        rows.append(("seed", "-" if res.seed is None else res.seed))
        return rows

    def notes(self, res: ResultLike, alpha: float) -> list[str]:
        process, length, why = self._resolved(res)
        why = f", {why}" if why and why != "given" else ""
        which = {"rademacher": "independent Rademacher multipliers (i.i.d. data)",
                 "gaussian": "independent Gaussian multipliers (i.i.d. data)"}.get(
                     process) or (f"an AR(1) multiplier process of length {_fmt(length)}"
                                  f"{why} (dependent data)")
        return [f"Wild bootstrap null (Chwialkowski et al., 2014) with {which}: approximate "
                "p-value = (1 + #{T_b >= T}) / (1 + B); its Monte Carlo interval is the "
                "Clopper-Pearson interval of the bootstrap p-value."]

