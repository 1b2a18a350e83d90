"""Permutations, exact enumeration and permutation p-values.

Permutations are drawn here, in Python, from a numpy Generator — never inside
jitted code — so a seed fixes them whatever the batch size or thread count.
Row ``b`` of every batch is the ``b``-th draw of one stream: drawing in batches
of any size yields the same sequence (tested).
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from ._warnings import DegenerateStatisticWarning
from .null import DEFAULT_N_RESAMPLES as DEFAULT_N_RESAMPLES  # re-exported

#: memory budget (float64 entries) for one batch of ``batch x N`` work arrays
_BATCH_ENTRIES = 1 << 21


@dataclass(frozen=True)
class PermutationPlan:
    """How the null distribution is built: exact enumeration or Monte Carlo."""

    exact: bool
    n_resamples: int  # number of null statistics (all arrangements when exact)
    batch: int


def default_batch(n_total: int, n_resamples: int) -> int:
    return int(max(1, min(n_resamples, _BATCH_ENTRIES // max(n_total, 1))))


def comb_at_most(n: int, k: int, cap: int) -> int | None:
    """``C(n, k)`` if it is at most `cap`, else None, without computing a huge binomial
    (``math.comb(10**6, 5 * 10**5)`` takes minutes): the partial products
    ``C(n - k + i, i)`` are exact integers increasing in ``i``."""
    k = min(k, n - k)
    c = 1
    for i in range(1, k + 1):
        c = c * (n - k + i) // i
        if c > cap:
            return None
    return c


def plan_two_sample(n_x: int, n_y: int, n_resamples: int, batch: int | None) -> PermutationPlan:
    n_total = n_x + n_y
    n_splits = comb_at_most(n_total, n_x, n_resamples)
    exact = n_splits is not None
    count = n_splits if n_splits is not None else n_resamples
    return PermutationPlan(exact, count, batch or default_batch(n_total, count))


def plan_independence(n: int, n_resamples: int, batch: int | None) -> PermutationPlan:
    n_perm = math.factorial(n) if n <= 20 else None
    exact = n_perm is not None and n_perm <= n_resamples
    count = n_perm if (exact and n_perm is not None) else n_resamples
    return PermutationPlan(exact, count, batch or default_batch(n, count))


def random_permutations(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """`size` random permutations of ``range(n)``, int64, C-contiguous."""
    return rng.permuted(np.tile(np.arange(n, dtype=np.int64), (size, 1)), axis=1)


def permutation_batches(plan: PermutationPlan, rng: np.random.Generator, n: int,
                        kind: str, n_x: int = 0) -> Iterator[np.ndarray]:
    """Yield batches of permutations (rows), random or all of them.

    For ``kind="split"`` in exact mode the rows enumerate every subset of
    size `n_x` (first `n_x` entries) followed by its complement.
    """
    if not plan.exact:
        done = 0
        while done < plan.n_resamples:
            b = min(plan.batch, plan.n_resamples - done)
            yield random_permutations(rng, n, b)
            done += b
        return
    if kind == "split":
        full = np.arange(n, dtype=np.int64)
        gen = (np.concatenate([np.array(c, dtype=np.int64),
                               np.setdiff1d(full, c, assume_unique=True)])
               for c in itertools.combinations(range(n), n_x))
    else:
        gen = (np.array(p, dtype=np.int64) for p in itertools.permutations(range(n)))
    while True:
        rows = list(itertools.islice(gen, plan.batch))
        if not rows:
            return
        yield np.ascontiguousarray(np.stack(rows))


#: show a progress bar (progress=None) when the null is expected to take longer (seconds)
PROGRESS_SECONDS = 5.0


def _progress_bar(progress: bool | None, total: int, expected: float | None,
                  initial: int = 0) -> Any:
    """A tqdm bar, or None. ``progress=None``: only when `expected` > PROGRESS_SECONDS."""
    if progress is False or (progress is None and not (expected or 0) > PROGRESS_SECONDS):
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if progress:
            raise ImportError("progress=True needs tqdm: pip install tqdm (or "
                              "'kmtests[power]').") from None
        return None
    return tqdm(total=total, initial=initial, desc="permutations", unit="perm", leave=False)


def permutation_null(plan: PermutationPlan, rng: np.random.Generator, n: int, kind: str,
                     values: Callable[[np.ndarray], Any], observed: Any, n_x: int = 0,
                     what: str = "the statistic", progress: bool | None = None,
                     expected_seconds: float | None = None) -> tuple[np.ndarray, float, int]:
    """Null statistics of every batch, and the p-value with its count.

    ``values(perms)`` evaluates the statistic for a batch of permutations
    (rows) and returns an object with arrays ``stat`` and ``scale`` (see
    :class:`kmtests.engines.Values`); `observed` is the same for the data.
    A non-finite statistic raises (naming `what`) instead of being counted:
    ``NaN >= T`` is false, which would report the smallest p-value.

    `progress`: True shows a tqdm progress bar, False never; None shows one
    when the null is expected to take more than :data:`PROGRESS_SECONDS`
    (`expected_seconds`, or the first batch's time times the number of
    batches).
    """
    import time

    null = np.empty(plan.n_resamples)
    scales = np.empty(plan.n_resamples)
    done = 0
    bar = _progress_bar(progress, plan.n_resamples, expected_seconds)
    decided = bar is not None or progress is False
    t0 = time.perf_counter()
    try:
        for perms in permutation_batches(plan, rng, n, kind, n_x):
            v = values(perms)
            null[done:done + perms.shape[0]] = v.stat
            scales[done:done + perms.shape[0]] = v.scale
            done += perms.shape[0]
            if bar is not None:
                bar.update(perms.shape[0])
            elif not decided:
                decided = True
                rest = (time.perf_counter() - t0) * (plan.n_resamples - done) / done
                bar = _progress_bar(progress, plan.n_resamples, rest, initial=done)
    finally:
        if bar is not None:
            bar.close()
    t_obs = float(np.asarray(observed.stat).reshape(-1)[0])
    s_obs = float(np.asarray(observed.scale).reshape(-1)[0])
    check_finite_statistic(t_obs, null, what)
    tol = tie_tolerance(s_obs, scales)
    if t_obs == 0.0 and not np.any(null):
        warnings.warn(
            f"{what} is 0 for the data and for every permutation: the statistic cannot "
            "vary with the arrangement of these data (constant data, or a kernel or "
            "estimator that maps every sample to the same embedding), so p = 1 carries no "
            "evidence either way.", DegenerateStatisticWarning, stacklevel=3)
    pval, count = pvalue_upper(t_obs, null, plan.exact, tol)
    return null, pval, count


def check_finite_statistic(observed: float, null: np.ndarray | None, what: str) -> None:
    """Raise ``ValueError`` if the observed or any permuted statistic is NaN or infinite."""
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


#: relative tolerance of ties: 100 eps of the magnitude the statistics are summed from
TIE_RTOL = float(np.finfo(np.float64).eps * 100)


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
