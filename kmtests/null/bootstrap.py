r"""The bootstrap null of the joint independence test (Pfister et al., 2018).

Under joint independence the law of the data is the product of its marginals.
The bootstrap draws each variable but the first *with replacement* from its own
observations, independently across variables (the first keeps its
observations: dHSIC is unchanged when all variables are rearranged alike), and
recomputes dHSIC on every such data set; the p-value
``(1 + #{T_b >= T}) / (1 + B)`` is approximate (pointwise asymptotic level),
where the permutation null (:class:`~kmtests.null.PermutationMethod`) is exact.

This is what ``dHSIC::dhsic.test(method = "bootstrap")`` does in version 2.1 of
the R package. Version 2.2 draws the indices as ``sample(0:(len-1),
replace=TRUE)`` and subsets an R matrix with them (1-based): the index 0 drops a
row and column, and the test stops with "non-conformable arrays" whenever 0 is
drawn (nearly always); kmtests resamples all ``n`` observations, as 2.1 did.

A row of draws holds the indices of variables 2, ..., d one after another (the
layout of :class:`~kmtests.problems.schemes.Independent`). The draws come from
`rng`'s stream in fixed-shape chunks, so a seed gives the same p-value whatever
`batch` is.

Examples
--------
>>> import numpy as np
>>> from kmtests import joint_independence_test
>>> gen = np.random.default_rng(0)
>>> x, y = gen.normal(size=(2, 60))
>>> z = x * y + 0.5 * gen.normal(size=60)
>>> res = joint_independence_test(x, y, z, method="bootstrap", n_resamples=499, rng=1)
>>> print(f"{res.pvalue:.3f}")
0.002
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._summary import Annotated
from ._base import NullOutcome, ResultLike, RunContext
from .permutation import (ResamplingMethod)

__all__ = ["BootstrapMethod"]

#: rows of indices drawn per step (fixed: the draws must not depend on `batch`)
_DRAW = 128


@dataclass(frozen=True)
class BootstrapMethod(ResamplingMethod):
    """The bootstrap null of dHSIC (approximate; see the module docs).

    References
    ----------
    .. [1] Pfister, Bühlmann, Schölkopf, Peters (2018). Kernel-based tests for
       joint independence. JRSS-B 80(1), 5-31.
    """

    name: ClassVar[str] = "bootstrap"
    draws: ClassVar[str] = "resamples"
    needs: ClassVar[str] = "resampled"
    requires: ClassVar[str] = ("a statistic of resampled data (it resamples each variable but "
                               "the first with replacement: the dHSIC bootstrap of "
                               "joint_independence_test)")

    def run(self, prepared: Any, problem: Any, observed: Any, ctx: RunContext) -> NullOutcome:
        n, width = problem.n, problem.scheme.n

        def draw(gen: np.random.Generator, b: int) -> np.ndarray:
            rows = np.concatenate([
                gen.integers(0, n, size=(min(_DRAW, b - i), width), dtype=np.int64)
                for i in range(0, b, _DRAW)])
            return np.asarray(prepared.resampled(rows, ctx.n_jobs).stat)

        null = self.draw_null(draw, _DRAW, 8 * _DRAW)
        return self.upper_outcome(prepared, observed, null)

    # -- the report ---------------------------------------------------------------------------
    def describe(self, res: ResultLike) -> str:
        return (f"bootstrap p-value ({res.n_resamples} resamples with replacement; "
                "approximate)")

    def info_rows(self, res: ResultLike) -> list[tuple[str, Any]]:
        return [("method", Annotated("bootstrap", "(approx.)")),
                ("n_resamples", res.n_resamples),
                ("seed", "-" if res.seed is None else res.seed)]

    def notes(self, res: ResultLike, alpha: float) -> list[str]:
        return ["Bootstrap null (Pfister et al., 2018): every variable but the first "
                "resampled with replacement, independently; approximate p-value = "
                "(1 + #{T_b >= T}) / (1 + B) (pointwise asymptotic level; the permutation "
                "null is exact). Its Monte Carlo interval is the Clopper-Pearson interval "
                "of the bootstrap p-value."]
