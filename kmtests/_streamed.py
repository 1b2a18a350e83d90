"""``two_sample_test(engine="streamed")``: the exact test without the N x N Gram matrix.

The problem class of the driver for :mod:`kmtests.engines.streamed`. Same
statistic, same permutations, same p-value as the in-memory engine (up to the
rounding of the sums, which the tie tolerance absorbs), for the KME and every
estimator with uniform weights; memory ``O(N (d + chunk))``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _resampling
from ._driver import Prepared, identity, prepare_rule
from ._guards import available_memory, format_bytes
from .engines import Values
from .estimators._rules import Uniform
from .null import NullMethod, PermutationMethod
from .twosample import _TwoSample

__all__ = ["StreamedTwoSample", "streamed_batch"]

#: the membership chunk of one pass over the tiles is at most this share of free memory
_CHUNK_SHARE = 0.1


def streamed_batch(n: int, n_resamples: int) -> int:
    """Splits per pass over the Gram tiles: all of them if their memberships (8 N bytes
    each, plus the indices) take at most 10% of the available memory (at least 512 MB);
    every pass recomputes the kernel values."""
    free = available_memory()
    budget = max(_CHUNK_SHARE * (free if free is not None else 4e9), 512e6)
    per = 16.0 * n
    return int(max(128, min(n_resamples, budget // per)))


@dataclass
class StreamedTwoSample(_TwoSample):
    """The two-sample test on the streamed engine (uniform-weight estimators)."""

    engine: str = "streamed"
    engine_note: str = ""

    def memory(self, method: NullMethod, tuning: str) -> tuple[float, str, str]:
        from .engines.streamed import TILE

        n = self.n
        d = 0 if self.z is None else self.z.shape[1]
        need = 8.0 * n * (3 * d + 8) + 4 * 8.0 * TILE * TILE
        if isinstance(method, PermutationMethod):
            need += 16.0 * method.n_resamples + 16.0 * n * (method.batch or
                                                            streamed_batch(n, method.n_resamples))
        return (need, f"the streamed engine's buffers for {n} points take {format_bytes(need)}",
                "Use fewer permutations per pass (`batch`), or an approximate engine "
                "(engine='nystrom' or 'rff', n_features=...).")

    def check_gamma(self) -> None:
        raise ValueError("engine='streamed' computes permutation p-values; the gamma "
                         "approximation needs the moments of the in-memory Gram matrix "
                         "(engine='exact').")

    def plan(self, method: PermutationMethod) -> _resampling.PermutationPlan:
        batch = method.batch or streamed_batch(self.n, method.n_resamples)
        return _resampling.plan_two_sample(self.n_x, self.n_y, method.n_resamples, batch)

    def prepare(self, tuning: str) -> Prepared:
        from .engines.streamed import StreamedGram, streamed_mmd_values

        est = self.estimator
        assert self.z is not None
        rule0 = est.rule()
        if not isinstance(rule0, Uniform):
            raise ValueError(
                f"engine='streamed' runs the estimators with uniform weights (kme, skmse, "
                f"bkmse, ...); {est.name!r} re-weights every point and needs the Gram matrix "
                "in memory (engine='exact') or a low-rank engine ('nystrom', 'rff').")
        if est.transform_kernel(self.kernel.fitted_to(self.z), self.z) is not None:
            raise ValueError(f"engine='streamed' does not run the marginalized estimator "
                             f"{est.name!r}; use engine='exact'.")
        if tuning == "pooled" and rule0.fixed is None:
            raise ValueError("engine='streamed' tunes the estimator on every permutation "
                             "(tuning='permutation'); tuning='pooled' needs the pooled Gram "
                             "matrix in memory (engine='exact').")
        kern = self.kernel.fitted_to(self.z, name="the pooled sample")
        sg = StreamedGram.build(kern, self.z)
        prep = prepare_rule(est, "permutation", lambda: np.empty((0, 0)), transformed=False)
        rule, n_x, unbiased = prep.rule, self.n_x, self.unbiased

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            return streamed_mmd_values(sg, perms, n_x, rule, unbiased, n_jobs)

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return values(identity(self.n), n_jobs), {}

        def gamma(t: float, moments: str) -> tuple[float, dict[str, Any]]:
            raise ValueError("engine='streamed' has no gamma approximation.")

        return Prepared(values=values, observed=observed, gamma=gamma, prep=prep,
                        kernels={"kernel": kern}, params={},
                        what=f"{self.statistic_name()} with {kern.phrase()}")
