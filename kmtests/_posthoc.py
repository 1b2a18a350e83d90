"""Post-hoc tests of a k-sample test: each pair of samples tested with the k-sample
test's own settings (its kernel, estimator, form, null method and engine), each pair
from its own keyed random stream (:func:`kmtests._rng.keyed`)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

from ._plan import Plan, build
from ._rng import keyed, root_sequence
from .problems import TwoSampleProblem
from .problems.data import data_label
from .results import KSampleResult

__all__ = ["sample_names", "with_pairwise"]


def sample_names(samples: tuple[Any, ...], given: Sequence[str] | None) -> tuple[str, ...]:
    """The samples' names: `given` (checked), or Series names when distinct, or x1..xk."""
    k = len(samples)
    if given is not None:
        if isinstance(given, str) or len(given) != k:
            raise ValueError(f"`sample_names` must give one name per sample ({k}); got "
                             f"{given!r}.")
        names = tuple(str(v) for v in given)
        if len(set(names)) != k:
            raise ValueError(f"`sample_names` must be distinct; got {list(names)}.")
        return names
    default = tuple(f"x{g + 1}" for g in range(k))
    names = tuple(data_label(s, x) if not hasattr(s, "columns") else x
                  for s, x in zip(samples, default))
    return names if len(set(names)) == k else default


def pair_runner(plan: Plan, res: KSampleResult) -> Callable[[tuple[int, int]], Any]:
    """The post-hoc test of a pair of samples ``(a, b)``, with the plan's settings."""
    problem, stat, meth = plan.problem, plan.statistic, plan.method
    assert meth is not None
    kernel = res.kernels["kernel"]
    root = root_sequence(meth.source_of_randomness)[0] \
        if meth.source_of_randomness is not None else None
    form = "unbiased" if getattr(stat, "unbiased", True) else "biased"

    def run(pair: tuple[int, int]) -> Any:
        a, b = pair
        m: Any = meth
        if "rng" in meth.test_options:  # a resampling method: its own keyed stream
            m = dataclasses.replace(meth, rng=None if root is None  # type: ignore[call-arg]
                                    else keyed(root, a, b), progress=False)
        pair_plan = build(TwoSampleProblem, (problem.sample(a), problem.sample(b)), dict(
            kernel=kernel, bandwidth="median", estimator=stat.estimator, statistic=form,
            method=m, tuning=plan.tuning, engine=plan.engine))
        return pair_plan.run()

    return run


def with_pairwise(plan: Plan, samples: tuple[Any, ...], names: Sequence[str] | None
                  ) -> KSampleResult:
    """Run the k-sample plan; its result with the samples' names and the pairwise tests."""
    res = plan.run()
    assert isinstance(res, KSampleResult)
    return dataclasses.replace(res, samples=sample_names(samples, names),
                               _pairwise=pair_runner(plan, res))
