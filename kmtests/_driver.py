"""The shared body of the kernel tests: option checks, estimator preparation, the null.

Both public tests (:func:`kmtests.two_sample_test`, :func:`kmtests.independence_test`)
follow one flow:

1. validate every option and the data (cheap; nothing is computed before);
2. check the memory the Gram matrices need;
3. build the Gram matrices once (centred form, :mod:`kmtests._gram`) and prepare
   the estimator on them (:func:`prepare_rule`): its kernel transformation,
   its weight rule, and for ``tuning="pooled"`` its parameters fixed on a
   permutation-invariant Gram matrix;
4. compute the observed statistic, then the null distribution
   (:func:`run_permutation`, or the gamma approximation);
5. build the result.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import _resampling
from ._gram import CentredGram
from ._guards import warn_if_slow
from .engines import Values
from ._typing import SeedLike
from ._validation import check_choice, check_positive_int, check_rng, seed_of
from .estimators import KernelMeanEstimator
from .estimators._base import FixedTuningError
from .estimators._rules import General, Rule, Uniform

__all__ = ["Options", "check_options", "prepare_rule", "run_permutation"]

METHODS = ("permutation", "gamma")
TUNINGS = ("permutation", "pooled")


@dataclass(frozen=True)
class Options:
    """The validated options shared by the tests."""

    method: str
    tuning: str
    n_resamples: int
    batch: int | None
    n_jobs: int | None
    seed: int | None
    gen: np.random.Generator


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
    if n_jobs == -1:
        return n_cpu
    if not 1 <= n_jobs <= n_cpu:
        raise ValueError(msg)
    return int(n_jobs)


def check_options(method: Any, tuning: Any, n_resamples: Any, batch: Any, n_jobs: Any,
                  rng: SeedLike) -> Options:
    """Validate the options shared by both tests (before any computation)."""
    method = check_choice(method, "method", METHODS)
    tuning = check_choice(tuning, "tuning", TUNINGS)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    batch = check_positive_int(batch, "batch", allow_none=True)
    check_n_jobs(n_jobs)
    gen = check_rng(rng)
    return Options(method, tuning, n_resamples, batch, n_jobs,  # type: ignore[arg-type]
                   seed_of(rng), gen)


@dataclass(frozen=True)
class PreparedRule:
    """An estimator prepared on the data: the rule the engines apply and what to report."""

    rule: Rule
    params: dict[str, Any]   # parameters tuned on the pooled/invariant Gram (pooled tuning)
    tuning: str              # the tuning that applies ("pooled" when nothing is re-tuned)
    note: str = ""           # e.g. a fallback that was taken


def prepare_rule(est: KernelMeanEstimator, tuning: str,
                 invariant_gram: Callable[[], np.ndarray], transformed: bool) -> PreparedRule:
    """The estimator's weight rule for the engines, with pooled tuning applied.

    ``invariant_gram()`` returns the permutation-invariant Gram matrix on
    which ``tuning="pooled"`` fixes the parameters (the pooled sample's for
    MMD, the permutation-averaged cross-covariance Gram for HSIC).
    `transformed` says that the estimator acts through a kernel transformation
    tuned on invariant data (nothing is re-tuned per permutation).

    A fixed uniform shrinkage that would annihilate the statistic (factor 0,
    e.g. pooled LOOCV shrinkage 1 with a linear kernel on centred data) is
    replaced by the unshrunk statistic, with a note: a fixed factor c > 0 only
    rescales every statistic, so the p-value is the limit c -> 0+, i.e. the
    KME test's.
    """
    if transformed:
        return PreparedRule(est.rule(), {}, "pooled")
    if tuning == "permutation":
        return PreparedRule(est.rule(), {}, "permutation")
    _, params = est.weights(invariant_gram())
    try:
        fixed = est.with_fixed(params)
    except FixedTuningError:
        raise
    rule = fixed.rule()
    note = ""
    if isinstance(rule, Uniform) and rule.fixed == 0.0:
        import warnings

        from ._warnings import DegenerateStatisticWarning

        note = ("the pooled shrinkage is 1: the shrunk statistic would be identically 0, so "
                "the unshrunk statistic is used (a fixed shrinkage only rescales it: the "
                "p-value is the KME test's)")
        warnings.warn(f"estimator {est.name!r}: {note}.", DegenerateStatisticWarning,
                      stacklevel=4)
        rule = Uniform(fixed=1.0)
    return PreparedRule(rule, params, "pooled", note)


def timed_observed(fn: Callable[[], tuple[Values, Any]], rule: Rule, n_resamples: int,
                   n_jobs: int | None) -> tuple[Values, Any]:
    """Compute the observed statistic; for per-permutation rules, announce a long null."""
    t0 = time.perf_counter()
    out = fn()
    if isinstance(rule, General):
        import os

        from .engines._threads import resolve_n_jobs

        threads = resolve_n_jobs(n_jobs) or os.cpu_count() or 1
        per = time.perf_counter() - t0
        warn_if_slow(per * n_resamples / threads,
                     f"{n_resamples} permutations x {per:.2g} s each on {threads} thread(s)",
                     "Use fewer permutations (`n_resamples`), tuning='pooled' where the "
                     "estimator allows it, or a cheaper estimator.")
    return out


def run_permutation(plan: _resampling.PermutationPlan, opts: Options, n: int, kind: str,
                    values: Callable[[np.ndarray], Values], observed: Values, n_x: int,
                    what: str) -> tuple[np.ndarray, float, int]:
    """The permutation null distribution and p-value (see :mod:`kmtests._resampling`)."""
    return _resampling.permutation_null(plan, opts.gen, n, kind, values, observed, n_x,
                                        what=what)


def statistic_name(base: str, est: KernelMeanEstimator) -> str:
    """``MMD^2_u`` for the KME; ``MMD^2_u[skmse]`` etc. when an estimator changes it."""
    return base if est.name == "kme" else f"{base}[{est.name}]"


def estimator_config(est: KernelMeanEstimator) -> dict[str, Any]:
    """The estimator's configuration values that were set (not None), for reports."""
    return {k: v for k, v in est.get_params().items()
            if v is not None and isinstance(v, (int, float, str, bool))
            and k not in ("target_points", "target_weights")}


def scalar_params(params: dict[str, Any], suffix: str = "") -> dict[str, Any]:
    """Reportable scalar parameters (curves and nested objects left out)."""
    out: dict[str, Any] = {}
    for k, v in params.items():
        if k in ("loocv_curve", "selection", "sigma2_bounds", "lam_bounds"):
            continue
        if isinstance(v, (bool, np.bool_)):
            continue
        if isinstance(v, (int, float, np.integer, np.floating, str)):
            out[f"{k}{suffix}"] = v.item() if isinstance(v, np.generic) else v
        elif isinstance(v, (list, tuple, np.ndarray)) and np.size(v) <= 8 and k == "diag":
            out[f"{k}{suffix}"] = [float(u) for u in np.ravel(v)]
    return out


def identity(n: int) -> np.ndarray:
    return np.arange(n, dtype=np.int64)[None, :]


def scaled_gram(kernel: Any, data: np.ndarray, c: float, name: str) -> CentredGram:
    """The centred Gram matrix of ``c * kernel`` on `data`."""
    cg = kernel.centred_gram(data, name=name)
    return cg.scaled(c) if c != 1.0 else cg
