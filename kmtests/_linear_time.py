"""``two_sample_test(engine="block" | "linear")``: the linear-time MMD tests.

The problem class of the driver for :mod:`kmtests.engines.linear_time`, and
how these engines meet the options of :func:`kmtests.two_sample_test`:

* the null is the asymptotic normal one (:class:`kmtests.null.NormalMethod`),
  the default with these engines; permutation options (`n_resamples`,
  `batch`, `rng`, `progress`, `n_jobs`, a ``PermutationMethod``) and the gamma
  approximation are errors, never ignored;
* the KME only (``estimator="kme"``), the unbiased form, data (not a
  precomputed Gram matrix), two samples of the same size;
* nothing is random: pairs and blocks are consecutive points in the given
  order, as in the papers (the data must be in random order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _resampling
from ._driver import Prepared, PreparedRule
from ._guards import format_bytes
from .engines import Values
from .null import NormalMethod, NullMethod, PermutationMethod, resolve_method
from .twosample import _TwoSample

__all__ = ["LinearTimeTwoSample", "linear_time_method", "linear_time_problem"]

_NAMES = {"block": "MMD^2_block", "linear": "MMD^2_l"}


def linear_time_method(engine: str, method: Any, *, n_resamples: Any = None,
                       batch: Any = None, rng: Any = None, n_jobs: Any = None,
                       progress: Any = None) -> NormalMethod:
    """The null method of a linear-time engine: :class:`NormalMethod`, or a clear error.

    ``method="permutation"`` (the tests' default) stands for the engine's
    default, the normal null, when no permutation option is given.
    """
    given = {"n_resamples": n_resamples, "batch": batch, "rng": rng, "n_jobs": n_jobs,
             "progress": progress}
    clash = [k for k, v in given.items() if v is not None]
    is_default = isinstance(method, str) and method.lower() == "permutation"
    if is_default or isinstance(method, NormalMethod) or (
            isinstance(method, str) and method.lower() == "normal"):
        if clash:
            raise ValueError(
                f"engine={engine!r} has an asymptotic normal null (method='normal'), no "
                f"permutations: {', '.join(f'`{k}`' for k in clash)} do(es) not apply. Drop "
                "them, or run a permutation test with engine='exact' or 'streamed'.")
        return NormalMethod()
    if not isinstance(method, NullMethod) and not (
            isinstance(method, str) and method.lower() == "gamma"):
        resolve_method(method)  # raises: an unknown name or type
    what = method.lower() if isinstance(method, str) else method.name
    raise ValueError(
        f"engine={engine!r} computes a linear-time statistic with an asymptotic normal null "
        f"(method='normal', its default); method {what!r} needs the full kernel matrix: use "
        "engine='exact' or 'streamed'." if not isinstance(method, PermutationMethod) else
        f"engine={engine!r} has an asymptotic normal null (method='normal', its default), "
        "no permutations: a PermutationMethod does not apply. Run a permutation test with "
        "engine='exact' or 'streamed'.")


def linear_time_problem(problem: _TwoSample, engine: str, block_size: Any,
                        note: str = "") -> "LinearTimeTwoSample":
    """`problem` on a linear-time engine, checked (see the module docs)."""
    from ._validation import check_positive_int
    from .engines.linear_time import default_block_size

    est = problem.estimator
    if est.name != "kme":
        raise ValueError(f"engine={engine!r} runs the KME statistic only (estimator='kme'); "
                         f"for estimator {est.name!r} use engine='exact' or 'streamed'.")
    if not problem.unbiased:
        raise ValueError(f"engine={engine!r} computes its own unbiased linear-time "
                         "statistic; statistic='biased' needs engine='exact' or 'streamed'.")
    if problem.n_x != problem.n_y:
        m = min(problem.n_x, problem.n_y)
        raise ValueError(
            f"engine={engine!r} pairs the points of x and y, so it needs samples of the same "
            f"size; got n_x = {problem.n_x} and n_y = {problem.n_y}. Test x[:{m}] and "
            f"y[:{m}] (if the data are in random order), or use engine='exact' or "
            "'streamed'.")
    n = problem.n_x
    if n < 4:
        raise ValueError(f"engine={engine!r} needs at least 4 points per sample (2 pairs or "
                         f"blocks for a standard error); got {n}.")
    if engine == "linear":
        if block_size is not None:
            raise ValueError("`block_size` applies to engine='block'; engine='linear' uses "
                             "disjoint pairs.")
        b = 2
    else:
        b = (default_block_size(n) if block_size is None
             else check_positive_int(block_size, "block_size"))
        if not 2 <= b <= n // 2:
            raise ValueError(f"`block_size` must be from 2 to n // 2 = {n // 2} (at least 2 "
                             f"blocks of each sample of {n} points); got {b}.")
    return LinearTimeTwoSample(problem.kernel, est, True, problem.z, None, problem.n_x,
                               problem.n_y, engine=engine, block_size=b, engine_note=note)


@dataclass
class LinearTimeTwoSample(_TwoSample):
    """The two-sample test on a linear-time engine (the KME, equal sample sizes)."""

    engine: str = "block"
    block_size: int = 2      # b for "block"; the pair size 2 for "linear"
    engine_note: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        n, b = self.n_x, self.block_size
        unused = n - (n // b) * b
        if unused:
            what = "pair" if self.engine == "linear" else f"whole block of {b}"
            extra = (f"the last {unused} point(s) of each sample are not used (past the last "
                     f"{what})")
            self.engine_note = f"{self.engine_note}; {extra}" if self.engine_note else extra

    def statistic_name(self) -> str:
        return _NAMES[self.engine]

    def memory(self, method: NullMethod, tuning: str) -> tuple[float, str, str]:
        from .engines.linear_time import _BATCH_ENTRIES, _PAIRS

        assert self.z is not None
        n, d = self.n, self.z.shape[1]
        need = 8.0 * n * (3 * d + 1)  # the pooled data, its prescaled copy, a transient
        if self.engine == "block":
            need += 4 * 8.0 * max(_BATCH_ENTRIES, self.block_size ** 2)
        else:
            need += 8.0 * _PAIRS * (2 * d + 4)
        return (need, f"the {self.engine} engine's buffers for {n} points take "
                      f"{format_bytes(need)}",
                "Test a random subsample of each sample" +
                (", or use a smaller `block_size`." if self.engine == "block" else "."))

    def check_gamma(self) -> None:
        raise ValueError(f"engine={self.engine!r} has an asymptotic normal null "
                         "(method='normal'); the gamma approximation needs engine='exact'.")

    def plan(self, method: PermutationMethod) -> _resampling.PermutationPlan:
        raise ValueError(f"engine={self.engine!r} has no permutations (method='normal').")

    def prepare(self, tuning: str) -> Prepared:
        from .engines.linear_time import block_statistics, linear_statistics, normal_pvalue
        from .engines.streamed import TileSource

        assert self.z is not None
        kern = self.kernel.fitted_to(self.z, name="the pooled sample")
        src = TileSource(kern, self.z)
        n, b, engine = self.n_x, self.block_size, self.engine
        cache: dict[str, np.ndarray] = {}

        def terms() -> np.ndarray:
            if "t" not in cache:
                cache["t"] = (block_statistics(src, n, b) if engine == "block"
                              else linear_statistics(src, n))
            return cache["t"]

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            t = terms()
            scale = float(np.max(np.abs(t))) if t.size else 0.0
            return Values(np.array([float(np.mean(t))]), np.array([scale])), {}

        def normal() -> tuple[float, dict[str, Any]]:
            t = terms()
            stat, se, p = normal_pvalue(t)
            details: dict[str, Any] = {"se": se, "z": stat / se if se > 0 else float("nan")}
            if engine == "block":
                details.update(block_size=b, n_blocks=int(t.size))
            else:
                details.update(n_pairs=int(t.size))
            return p, details

        def no_permutations(*args: Any) -> Any:
            raise ValueError(f"engine={engine!r} has no permutations or gamma approximation.")

        return Prepared(values=no_permutations, observed=observed, gamma=no_permutations,
                        prep=PreparedRule(self.estimator.rule(), {}, tuning),
                        kernels={"kernel": kern}, params={},
                        what=f"{self.statistic_name()} with {kern.phrase()}", normal=normal)
