"""The permutation null: the one permutation loop of kmtests, and its p-values.

:class:`PermutationMethod` draws the arrangements of the problem's scheme
(:mod:`kmtests.problems.schemes`) — all of them when there are at most
`n_resamples` (exact test), otherwise `n_resamples` random ones — in Python,
from one Generator stream, never inside jitted code: row ``b`` of every batch
is the ``b``-th draw of the stream, so a seed fixes the arrangements whatever
the batch size or thread count. The prepared statistic evaluates each batch
(:func:`collect`); a statistic with several columns (a lambda grid, the members
of an aggregated test) is evaluated on the same arrangements for all columns,
and its combination (:mod:`kmtests.null.combine`) turns them into one p-value.

The p-value of one statistic is ``(1 + #{T_b >= T - tol}) / (1 + B)``
(Phipson & Smyth, 2010), or ``#{T_b >= T - tol} / N`` when all ``N``
arrangements are enumerated; ``tol`` absorbs the rounding of statistics that are
equal in exact arithmetic (:func:`tie_tolerance`).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterator

import numpy as np

from .._docs import with_block
from .._rng import permuted_rows
from .._summary import Annotated
from .._typing import SeedLike
from .._validation import check_positive_int, check_rng
from .._warnings import DegenerateStatisticWarning
from ..engines import Values
from ..engines._threads import check_n_jobs
from ._base import NullMethod, NullOutcome, ResultLike, RunContext

__all__ = ["DEFAULT_N_RESAMPLES", "PermutationMethod", "ResamplingMethod", "PermutationPlan", "check_finite_statistic",
           "collect", "default_batch", "make_plan", "permutation_batches", "pvalue_upper",
           "random_permutations", "tie_tolerance"]

#: default number of Monte Carlo permutations (as scipy.stats.permutation_test)
DEFAULT_N_RESAMPLES = 9999
#: memory budget (float64 entries) for one batch of ``batch x N`` work arrays
_BATCH_ENTRIES = 1 << 21
#: show a progress bar (progress=None) when the null is expected to take longer (seconds)
PROGRESS_SECONDS = 5.0
#: relative tolerance of ties: 100 eps of the magnitude the statistics are summed from
TIE_RTOL = float(np.finfo(np.float64).eps * 100)


@dataclass(frozen=True)
class PermutationPlan:
    """How the null distribution is built: exact enumeration or Monte Carlo."""

    exact: bool
    n_resamples: int  # number of null statistics (all arrangements when exact)
    batch: int


def default_batch(n_total: int, n_resamples: int) -> int:
    return int(max(1, min(n_resamples, _BATCH_ENTRIES // max(n_total, 1))))


def make_plan(scheme: Any, n_resamples: int, batch: int | None) -> PermutationPlan:
    """Exact when the scheme has at most `n_resamples` arrangements, else Monte Carlo."""
    count = scheme.count(n_resamples)
    exact = count is not None
    total = count if count is not None else n_resamples
    return PermutationPlan(exact, total, batch or default_batch(scheme.n, total))


def random_permutations(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """`size` random permutations of ``range(n)``, int64, C-contiguous
    (:func:`kmtests._rng.permuted_rows`)."""
    return permuted_rows(rng, n, size)


def permutation_batches(plan: PermutationPlan, scheme: Any,
                        rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Batches of arrangements (rows): random ones, or all of them (the identity first)."""
    if not plan.exact:
        # two short batches first, timed to announce a long loop early (collect); the
        # arrangements and their values do not depend on how they are batched
        first = max(1, -(-plan.batch // 8))
        done = 0
        k = 0
        while done < plan.n_resamples:
            b = min(first if k < 2 else plan.batch, plan.n_resamples - done)
            yield scheme.random(rng, b)
            done += b
            k += 1
        return
    gen = scheme.enumerate()
    while True:
        rows = []
        for _ in range(plan.batch):
            row = next(gen, None)
            if row is None:
                break
            rows.append(row)
        if not rows:
            return
        yield np.ascontiguousarray(np.stack(rows))


def _interactive() -> bool:
    """Whether a progress bar would be seen: standard error is a terminal, or IPython runs."""
    import sys

    try:
        if sys.stderr is not None and sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):  # closed or replaced stream
        return False
    return "ipykernel" in sys.modules


def _progress_bar(progress: bool | None, total: int, expected: float | None,
                  initial: int = 0) -> Any:
    """A tqdm bar, or None. ``progress=None``: only when `expected` > PROGRESS_SECONDS and
    standard error is a terminal or a notebook (a log file gets no bar)."""
    if progress is False or (progress is None and not (
            (expected or 0) > PROGRESS_SECONDS and _interactive())):
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if progress:
            raise ImportError("progress=True needs tqdm: pip install tqdm (or "
                              "'kmtests[power]').") from None
        return None
    return tqdm(total=total, initial=initial, desc="permutations", unit="perm", leave=False)


#: the advice of the :class:`~kmtests.SlowTestWarning` of a long permutation loop
SLOW_ADVICE = ("To make it faster: fewer permutations (`n_resamples=999` resolves a 5% "
               "test to about +-0.014), engine='nystrom' or 'rff' (`n_features`) for large "
               "samples, tuning='pooled' where the estimator allows it, or the KME.")


def collect(plan: PermutationPlan, scheme: Any, rng: np.random.Generator,
            values: Callable[[np.ndarray], Values], width: int = 1,
            progress: bool | None = None, expected_seconds: float | None = None,
            slow_advice: str | None = SLOW_ADVICE) -> tuple[np.ndarray, np.ndarray]:
    """The statistics ``(B, width)`` and their rounding scales of every arrangement of
    the plan.

    `progress`: True shows a tqdm progress bar, False never; None shows one when
    the null is expected to take more than :data:`PROGRESS_SECONDS`
    (`expected_seconds`, or the first batch's time times the number of batches).
    Without `expected_seconds`, a loop whose second batch projects more than
    :data:`kmtests._guards.SLOW_SECONDS` in all is announced then by a
    :class:`~kmtests.SlowTestWarning` with `slow_advice` (the second: the first may
    include compilation).
    """
    from .._guards import warn_if_slow

    null = np.empty((plan.n_resamples, width))
    scales = np.empty((plan.n_resamples, width))
    done = 0
    bar = _progress_bar(progress, plan.n_resamples, expected_seconds)
    decided = bar is not None or progress is False
    announce = expected_seconds is None and slow_advice is not None
    t0 = time.perf_counter()
    batches = 0
    try:
        for perms in permutation_batches(plan, scheme, rng):
            t_batch = time.perf_counter()
            v = values(perms)
            b = perms.shape[0]
            null[done:done + b] = np.asarray(v.stat).reshape(b, width)
            scales[done:done + b] = np.asarray(v.scale).reshape(b, width)
            done += b
            batches += 1
            now = time.perf_counter()
            if announce and batches == 2 and done < plan.n_resamples:
                announce = False
                total = (now - t0) + (now - t_batch) * (plan.n_resamples - done) / b
                warn_if_slow(total, f"{plan.n_resamples} permutations, measured on the "
                             f"first {done}", slow_advice or "", stacklevel=5)
            if bar is not None:
                bar.update(b)
            elif not decided:
                decided = True
                rest = (now - t0) * (plan.n_resamples - done) / done
                bar = _progress_bar(progress, plan.n_resamples, rest, initial=done)
    finally:
        if bar is not None:
            bar.close()
    return null, scales


def check_finite_statistic(observed: float, null: np.ndarray | None, what: str) -> None:
    """Raise ``ValueError`` if the observed or any permuted statistic is NaN or infinite.

    ``NaN >= T`` is false, so a NaN would otherwise be counted as "not as large"
    and report the smallest p-value.
    """
    bad_obs = not np.isfinite(observed)
    n_bad = 0 if null is None else int(np.count_nonzero(~np.isfinite(null)))
    if not (bad_obs or n_bad):
        return
    where = []
    if bad_obs:
        where.append(f"the data ({observed!r})")
    if n_bad:
        where.append(f"{n_bad} of {null.size} permutations")  # type: ignore[union-attr]
    raise ValueError(
        f"{what} is not finite for {' and '.join(where)}: no p-value can be computed. "
        "This happens when kernel values or estimator weights overflow or are undefined; "
        "rescale the data or choose another kernel, bandwidth or estimator.")


def tie_tolerance(observed_scale: float, null_scales: np.ndarray | float) -> np.ndarray:
    """Tolerance for ``T_b >= T - tol``: statistics equal up to rounding count as ties.

    A statistic is a sum of terms of magnitude up to its *scale* (e.g.
    ``max |Kc|`` of the centred Gram matrix for the KME MMD), so its rounding
    error is relative to that scale, not to the statistic's own (possibly
    much smaller) value, and not to the raw kernel values (which can be
    huge and cancel): ``tol_b = TIE_RTOL (scale(T) + scale(T_b))``.
    """
    return TIE_RTOL * (abs(observed_scale) + np.abs(np.asarray(null_scales, dtype=np.float64)))


def pvalue_upper(observed: float, null: np.ndarray, exact: bool,
                 tol: np.ndarray | float) -> tuple[float, int]:
    """Upper-tail permutation p-value and the count it is built from.

    Monte Carlo: ``(1 + #{T_b >= T - tol}) / (1 + B)`` (Phipson & Smyth, 2010),
    never zero and exactly valid. Exact enumeration (the observed arrangement
    is one of the enumerated ones): ``#{T_b >= T - tol} / N``. Non-finite
    values raise (see :func:`check_finite_statistic`).
    """
    check_finite_statistic(observed, null, "the statistic")
    count = int(np.count_nonzero(null >= observed - tol))
    if exact:
        return count / null.size, count
    return (count + 1) / (null.size + 1), count


def warn_if_constant(t_obs: float, null: np.ndarray, tol: np.ndarray, what: str) -> None:
    """:class:`DegenerateStatisticWarning` when every arrangement gives the data's statistic
    (to rounding): the p-value is then 1 whatever the data say."""
    if null.size and bool(np.all(np.abs(null - t_obs) <= tol)):
        warnings.warn(
            f"{what} is {'0' if t_obs == 0.0 else 'the same'} for the data and for every "
            "permutation (to rounding): the statistic cannot vary with the arrangement of "
            "these data (constant data, or a kernel or estimator that maps every sample to "
            "the same embedding), so p = 1 carries no evidence either way.",
            DegenerateStatisticWarning, stacklevel=4)


def check_resampling_options(method: Any) -> None:
    """Validate the options every resampling method shares (`n_resamples`, `batch`,
    `n_jobs`, `progress`, `rng`); a Generator is used as given (not copied)."""
    check_positive_int(method.n_resamples, "n_resamples")
    check_positive_int(method.batch, "batch", allow_none=True)
    check_n_jobs(method.n_jobs)
    if method.progress is not None and not isinstance(method.progress, (bool, np.bool_)):
        raise TypeError(f"`progress` must be True, False or None; got {method.progress!r}.")
    if not isinstance(method.rng, np.random.Generator):
        check_rng(method.rng)


def monte_carlo_interval(res: ResultLike, alpha: float) -> np.ndarray:
    """The Clopper-Pearson interval of the p-value a Monte Carlo p-value estimates (both ends
    the p-value itself for an exact test)."""
    if res.exact:
        return np.array([res.pvalue, res.pvalue])
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(res.count, res.n_resamples, alpha=alpha, method="beta")
    return np.array([float(lo), float(hi)])


@dataclass(frozen=True)
class ResamplingMethod(NullMethod):
    """Base of the null methods that draw `n_resamples` arrangements or multipliers from
    `rng` (as scipy's ``ResamplingMethod``): the options every one of them takes, their
    Monte Carlo interval and p-value floor."""

    n_resamples: int = DEFAULT_N_RESAMPLES
    batch: int | None = None
    rng: SeedLike = None
    n_jobs: int | None = None
    progress: bool | None = None

    test_options: ClassVar[tuple[str, ...]] = ("n_resamples", "batch", "rng", "n_jobs",
                                               "progress")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.__doc__ = with_block(cls.__doc__, "resampling")  # the options documented once

    def __post_init__(self) -> None:
        check_resampling_options(self)

    @property
    def source_of_randomness(self) -> Any:
        return self.rng

    @property
    def threads(self) -> int | None:
        return self.n_jobs

    def conf_int(self, res: ResultLike, alpha: float) -> np.ndarray | None:
        return monte_carlo_interval(res, alpha)

    def pvalue_floor(self, res: ResultLike) -> float | None:
        if res.exact or res.n_resamples is None:
            return None
        return 1.0 / (res.n_resamples + 1)

    def draw_null(self, draw: Callable[[np.random.Generator, int], np.ndarray], chunk: int,
                  default_step: int, width: int | None = None) -> np.ndarray:
        """`n_resamples` draws of the null from `rng`, `draw(gen, b)` giving ``b`` of them
        per call: steps of `batch` rounded down to a multiple of `chunk` (at least one;
        `default_step` without `batch`), with the progress bar. The stream is read in
        chunks of fixed shape, so a seed gives the same draws whatever `batch`. With a
        `width` (the members of an aggregated statistic) a draw is a row of `width`
        values."""
        gen = check_rng(self.rng)
        B = self.n_resamples
        step = max(chunk, (self.batch or 0) // chunk * chunk) if self.batch else default_step
        null = np.empty(B) if width is None else np.empty((B, width))
        bar = _progress_bar(self.progress, B, None)
        try:
            for start in range(0, B, step):
                b = min(step, B - start)
                null[start:start + b] = draw(gen, b)
                if bar is not None:
                    bar.update(b)
        finally:
            if bar is not None:
                bar.close()
        return null

    def upper_outcome(self, prepared: Any, observed: Any, null: np.ndarray,
                      details: dict[str, Any] | None = None) -> NullOutcome:
        """The upper-tail p-value of the observed statistic among approximate draws (ties
        within the statistic's rounding tolerance count), after the finiteness check."""
        t = float(np.asarray(observed.stat).reshape(-1)[0])
        s = float(np.asarray(observed.scale).reshape(-1)[0])
        check_finite_statistic(t, null, prepared.what)
        p, count = pvalue_upper(t, null, False, tie_tolerance(s, s))
        return NullOutcome(p, null, False, null.size, count, details=details or {})


@dataclass(frozen=True)
class PermutationMethod(ResamplingMethod):
    """The permutation null distribution (exact level).

    Notes
    -----
    The Monte Carlo p-value is ``(1 + #{T_b >= T}) / (1 + B)`` (Phipson &
    Smyth, 2010): never zero, and the test has exact level for any ``B``.
    """

    name: ClassVar[str] = "permutation"
    needs: ClassVar[str] = "values"
    draws: ClassVar[str] = "arrangements"

    def refusal(self, statistic: Any, engine: Any) -> str:
        own = getattr(statistic, "permutation_refusal", "")  # a statistic's own reason
        if own:
            return str(own)
        return (f"{statistic.refusal_subject()} has an asymptotic null "
                f"(method={statistic.default_method!r}, its default), no permutations: a "
                "PermutationMethod does not apply. Run a permutation test with "
                "engine='exact' or 'streamed'.")

    def plan(self, scheme: Any, batch: int | None = None) -> PermutationPlan:
        """The plan for `scheme` (`batch`: the engine's default when none is given)."""
        return make_plan(scheme, self.n_resamples, self.batch or batch)

    def run(self, prepared: Any, problem: Any, observed: Values, ctx: RunContext
            ) -> NullOutcome:
        return self.run_scheme(prepared, problem.scheme, observed, ctx, check_rng(self.rng),
                               lambda perms: prepared.values(perms, ctx.n_jobs))

    def run_scheme(self, prepared: Any, scheme: Any, observed: Values, ctx: RunContext,
                   gen: np.random.Generator, values: Callable[[np.ndarray], Values]
                   ) -> NullOutcome:
        """The p-value among the arrangements of `scheme` (drawn from `gen`), `values`
        giving the statistic of a batch of them."""
        from ..estimators._rules import General

        plan = self.plan(scheme, ctx.batch)
        expected = None
        if isinstance(prepared.rule, General):
            from .._guards import warn_if_slow
            from ..engines._threads import thread_count

            threads = thread_count(ctx.n_jobs)
            expected = ctx.seconds_per_arrangement * plan.n_resamples / threads
            warn_if_slow(expected, f"{plan.n_resamples} permutations x "
                         f"{ctx.seconds_per_arrangement:.2g} s each on {threads} thread(s)",
                         prepared.slow_advice or SLOW_ADVICE)
        null, scales = collect(plan, scheme, gen, values, prepared.width, self.progress,
                               expected, prepared.slow_advice or SLOW_ADVICE)
        if prepared.combination is not None:
            out: NullOutcome = prepared.combination.combine(observed, null, scales, plan.exact,
                                                            prepared)
            out.n_resamples, out.exact = plan.n_resamples, plan.exact
            out.details = {**(out.details or {}), **_restriction(scheme)}
            return out
        t_obs = float(np.asarray(observed.stat).reshape(-1)[0])
        s_obs = float(np.asarray(observed.scale).reshape(-1)[0])
        null1, scales1 = null[:, 0], scales[:, 0]
        check_finite_statistic(t_obs, null1, prepared.what)
        tol = tie_tolerance(s_obs, scales1)
        warn_if_constant(t_obs, null1, tol, prepared.what)
        pval, count = pvalue_upper(t_obs, null1, plan.exact, tol)
        return NullOutcome(pval, null1, plan.exact, plan.n_resamples, count,
                           details=_restriction(scheme))

    # -- the report ---------------------------------------------------------------------------
    def describe(self, res: ResultLike) -> str:
        within = _restricted(res)
        within = f" {within}" if within else ""
        if res.exact:
            return f"exact permutation p-value (all {res.n_resamples} arrangements{within})"
        return (f"permutation p-value (based on {res.n_resamples} random permutations"
                f"{within})")

    def info_rows(self, res: ResultLike) -> list[tuple[str, Any]]:
        within = _restricted(res)
        extra = [("permutations", within)] if within else []
        if res.exact:
            return [("method", Annotated("permutation", "(exact)")),
                    ("n_resamples", Annotated(res.n_resamples, "(all)")), *extra]
        return [("method", "permutation"), ("n_resamples", res.n_resamples), *extra,
                ("seed", "-" if res.seed is None else res.seed)]

    def notes(self, res: ResultLike, alpha: float) -> list[str]:
        if res.exact:
            return ["Exact p-value: every arrangement of the data was enumerated (no Monte "
                    "Carlo error)."]
        conf = f"{100 * (1 - alpha):.4g}%"
        return [f"p {conf} MC low/high: the Clopper-Pearson {conf} interval of the exact "
                "permutation p-value, i.e. the Monte Carlo error of the p-value (not an "
                "interval for the statistic); p-value = (1 + #{T_b >= T}) / (1 + B)."]


def _restriction(scheme: Any) -> dict[str, Any]:
    """The result's record of a restricted scheme (strata, blocks), or nothing."""
    what = getattr(scheme, "restriction", None)
    return {} if what is None else {"permutations": what}


def _restricted(res: Any) -> str | None:
    details = getattr(res, "details", None) or {}
    return details.get("permutations")
