"""The Monte Carlo null: the statistic of fresh samples drawn from the problem's model.

For a one-sample problem (is ``x`` a sample from the model ``P``?), samples ``x*_1, ...,
x*_B`` of ``x``'s size drawn from ``P`` itself are, under the null hypothesis,
exchangeable with ``x``. The p-value ``(1 + #{T(x*_b) >= T(x)}) / (1 + B)`` then has
exact level for any ``B`` (Barnard, 1963; scipy's ``monte_carlo_test``): the problem
carries the sampler (``problem.sampler(gen, n)``), the method draws from it, and the
statistic is recomputed on every draw (``Prepared.on_sample``).

The draws come one after the other from the method's `rng`, so a seed gives the same
p-value whatever `batch` is; `n_jobs` sets the threads each recomputation may use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._validation import check_rng
from ..engines import Values
from ._base import NullOutcome, ResultLike, RunContext
from .permutation import (ResamplingMethod, _progress_bar, check_finite_statistic, pvalue_upper,
                          tie_tolerance)

__all__ = ["MonteCarloMethod"]


@dataclass(frozen=True)
class MonteCarloMethod(ResamplingMethod):
    """The Monte Carlo null of a one-sample problem (exact level).

    Notes
    -----
    The p-value is ``(1 + #{T_b >= T}) / (1 + B)``, statistics equal to the observed
    one within rounding counting as ties: never zero, and ``P(p <= alpha) <= alpha``
    for every ``alpha`` when the data are a sample from the model.
    """

    name: ClassVar[str] = "monte_carlo"
    needs: ClassVar[str] = "samples"
    draws: ClassVar[str] = "samples"

    def check(self, statistic: Any, problem: Any, engine: Any) -> None:
        """Every statistic can be recomputed on a fresh sample: only the problem decides
        (it must carry a model to draw from)."""
        why = problem.refuses(self)
        if why:
            raise ValueError(why)

    def run(self, prepared: Any, problem: Any, observed: Values, ctx: RunContext
            ) -> NullOutcome:
        gen = check_rng(self.rng)
        B = self.n_resamples
        combination = prepared.combination
        width = 1 if combination is None else prepared.width
        null = np.empty((B, width))
        scales = np.empty((B, width))
        bar = _progress_bar(self.progress, B, None)
        try:
            for b in range(B):
                vals = prepared.on_sample(problem.sampler(gen, problem.n), ctx.n_jobs)
                null[b] = np.asarray(vals.stat, dtype=np.float64).reshape(-1)[:width]
                scales[b] = np.asarray(vals.scale, dtype=np.float64).reshape(-1)[:width]
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()
        if combination is not None:  # the members on the same draws (KSDAgg): exact level
            out: NullOutcome = combination.combine(observed, null, scales, False, prepared)
            out.n_resamples = B
            return out
        null, scales = null[:, 0], scales[:, 0]
        t = float(np.asarray(observed.stat).reshape(-1)[0])
        s = float(np.asarray(observed.scale).reshape(-1)[0])
        check_finite_statistic(t, null, prepared.what)
        p, count = pvalue_upper(t, null, False, tie_tolerance(s, scales))
        return NullOutcome(p, null, False, B, count)

    # -- the report -----------------------------------------------------------------------------
    def describe(self, res: ResultLike) -> str:
        return (f"Monte Carlo p-value (based on {res.n_resamples} samples drawn from the "
                "model)")

    def info_rows(self, res: ResultLike) -> list[tuple[str, Any]]:
        return [("method", "monte_carlo"), ("n_resamples", res.n_resamples),
                ("seed", "-" if res.seed is None else res.seed)]

    def notes(self, res: ResultLike, alpha: float) -> list[str]:
        conf = f"{100 * (1 - alpha):.4g}%"
        return [f"p {conf} MC low/high: the Clopper-Pearson {conf} interval of the p-value "
                "given infinitely many draws from the model (the Monte Carlo error); "
                "p-value = (1 + #{T_b >= T}) / (1 + B), exact level for any B."]
