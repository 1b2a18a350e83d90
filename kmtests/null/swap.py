r"""The swap null of two samples of equal size: a permutation test over pair exchanges.

The points of two samples of equal size ``m`` are matched in ``m`` pairs
``(x_i, y_j)`` by a pairing drawn at random from `rng`; the arrangements exchange
the two points of any of the pairs (:class:`~kmtests.problems.schemes.Swaps`, ``2^m``
of them). They are a subgroup of the permutations, so the test has exact level,
like the permutation test: under the null the ``2m`` points are i.i.d., and a pairing
drawn independently of the data keeps that true whatever the order of the rows
within each sample. The p-value is ``(1 + #{T_b >= T}) / (1 + B)`` over `B` random
swaps, or exact over all of them when ``2^m <= n_resamples``.

This is the null of MMDAgg for equal sample sizes (Schrab et al., 2023), which its
authors and kerneltests call a wild bootstrap with Rademacher multipliers: swapping
pair ``i`` flips the sign of ``h(z_i, z_j) = k(x_i, x_j) + k(y_i, y_j) - k(x_i, y_j) -
k(x_j, y_i)`` in ``sum_{i != j} e_i e_j h(z_i, z_j)``. Unlike kmtests'
:class:`~kmtests.null.WildBootstrap` of one MMD (centred multipliers on each sample;
approximate), it is an exact permutation test.

Why: with the kernel mean embedding the within-sample sums of a split need only the
``m x m`` matrix ``H = Kxx + Kyy - Kxy - Kyx`` of the pairs
(:meth:`~kmtests.engines.mmd.PooledGram.swap_sums`): a quarter of the flops of a
permutation on the ``2m x 2m`` pooled matrix. Statistics without that shortcut are
evaluated on the swapped arrangements as on any others.

Examples
--------
>>> import numpy as np
>>> from kmtests import aggregated_two_sample_test
>>> gen = np.random.default_rng(0)
>>> x, y = gen.normal(size=(60, 2)), gen.normal(size=(60, 2)) + [1.0, 0.0]
>>> res = aggregated_two_sample_test(x, y, method="swap", n_resamples=499, rng=1)
>>> print(f"{res.pvalue:.3f}")
0.002
>>> res.method.describe(res)
'swap p-value (499 random swaps within 60 random pairs (x_i, y_j))'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._validation import check_rng
from .._summary import Annotated
from ..engines import Values
from ..problems.schemes import SwapRows, Swaps
from ._base import NullOutcome, ResultLike, RunContext
from .permutation import PermutationMethod

__all__ = ["SwapMethod"]


@dataclass(frozen=True)
class SwapMethod(PermutationMethod):
    """The swap null of two samples of equal size (exact level; see the module docs).

    Notes
    -----
    Two samples of equal size, without `strata` or `blocks`. Its p-values differ from
    the permutation test's (another group of arrangements) but the level is exact, and
    with the kernel mean embedding each arrangement costs a quarter of a permutation's
    flops.

    References
    ----------
    .. [1] Schrab, Kim, Albert, Laurent, Guedj, Gretton (2023). MMD aggregated
       two-sample test. JMLR 24 (its wild bootstrap for equal sample sizes).
    """

    name: ClassVar[str] = "swap"
    draws: ClassVar[str] = "pair swaps"

    def check(self, statistic: Any, problem: Any, engine: Any) -> None:
        if problem.kind != "two_sample":
            raise ValueError(f"method='swap' exchanges the points of pairs of two samples; "
                             f"the {problem.kind} problem has none: use "
                             "method='permutation'.")
        n_x = int(problem.n_x)
        if 2 * n_x != problem.n:
            raise ValueError(f"method='swap' pairs the points of two samples of equal size; "
                             f"the samples have {n_x} and {problem.n - n_x} points: use "
                             "method='permutation'.")
        if getattr(problem.scheme, "restriction", None) is not None:
            raise ValueError("method='swap' draws its own arrangements and cannot keep "
                             "`strata` or `blocks`: use method='permutation'.")
        super().check(statistic, problem, engine)

    def run(self, prepared: Any, problem: Any, observed: Values, ctx: RunContext
            ) -> NullOutcome:
        gen = check_rng(self.rng)
        scheme = Swaps(gen.permutation(int(problem.n_x)), as_signs=True)  # pairs, then swaps
        fast = prepared.swap_values

        def values(signs: np.ndarray) -> Values:
            rows = SwapRows(signs, scheme.pairing)
            if fast is None:
                return prepared.values(rows.perms, ctx.n_jobs)
            return fast(rows, ctx.n_jobs)

        return self.run_scheme(prepared, scheme, observed, ctx, gen, values)

    # -- the report ---------------------------------------------------------------------------
    def describe(self, res: ResultLike) -> str:
        pairs = _pairs(res)
        if res.exact:
            return f"exact swap p-value (all {res.n_resamples} swaps within {pairs})"
        return f"swap p-value ({res.n_resamples} random swaps within {pairs})"

    def info_rows(self, res: ResultLike) -> list[tuple[str, Any]]:
        if res.exact:
            return [("method", Annotated("swap", "(exact)")),
                    ("n_resamples", Annotated(res.n_resamples, "(all)"))]
        return [("method", Annotated("swap", "(pairs of x and y)")),
                ("n_resamples", res.n_resamples),
                ("seed", "-" if res.seed is None else res.seed)]

    def notes(self, res: ResultLike, alpha: float) -> list[str]:
        what = ("Swap test: the points of two samples of equal size matched in random pairs, "
                "the arrangements exchanging the points of any pairs (a subgroup of the "
                "permutations: exact level).")
        return [what, *super().notes(res, alpha)]


def _pairs(res: ResultLike) -> str:
    details = getattr(res, "details", None) or {}
    what = str(details.get("permutations", "the pairs"))
    return what.removeprefix("swaps within ")
