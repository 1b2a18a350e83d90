"""Permutations, exact enumeration and permutation p-values.

Permutations are drawn here, in Python, from a numpy Generator — never inside
jitted code — so a seed fixes them whatever the batch size or thread count.
Row ``b`` of every batch is the ``b``-th draw of one stream: drawing in batches
of any size yields the same sequence (tested).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np

#: default number of Monte Carlo permutations (as scipy.stats.permutation_test)
DEFAULT_N_RESAMPLES = 9999
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


def plan_two_sample(n_x: int, n_y: int, n_resamples: int, batch: int | None) -> PermutationPlan:
    n_total = n_x + n_y
    n_splits = math.comb(n_total, n_x)
    exact = n_splits <= n_resamples
    count = n_splits if exact else n_resamples
    return PermutationPlan(exact, count, batch or default_batch(n_total, count))


def plan_independence(n: int, n_resamples: int, batch: int | None) -> PermutationPlan:
    n_perm = math.factorial(n) if n <= 20 else None
    exact = n_perm is not None and n_perm <= n_resamples
    count = n_perm if exact else n_resamples
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


def permutation_null(plan: PermutationPlan, rng: np.random.Generator, n: int, kind: str,
                     statistics, observed: float, scale: float,
                     n_x: int = 0) -> tuple[np.ndarray, float, int]:
    """Null statistics of every batch, and the p-value with its count.

    ``statistics(perms) -> ndarray`` evaluates the statistic for a batch of
    permutations (rows).
    """
    null = np.empty(plan.n_resamples)
    done = 0
    for perms in permutation_batches(plan, rng, n, kind, n_x):
        null[done:done + perms.shape[0]] = statistics(perms)
        done += perms.shape[0]
    pval, count = pvalue_upper(observed, null, plan.exact, tie_tolerance(observed, scale))
    return null, pval, count


def tie_tolerance(observed: float, scale: float) -> float:
    """Tolerance for ``T_b >= T - tol``: statistics equal up to rounding count as ties.

    `scale` is the magnitude of the terms the statistic is computed from (the
    statistic is a difference of such terms, so its rounding error is relative
    to them, not to its own value).
    """
    eps = np.finfo(np.float64).eps * 100
    return eps * max(abs(observed), abs(scale))


def pvalue_upper(observed: float, null: np.ndarray, exact: bool, tol: float) -> tuple[float, int]:
    """Upper-tail permutation p-value and the count it is built from.

    Monte Carlo: ``(1 + #{T_b >= T - tol}) / (1 + B)`` (Phipson & Smyth, 2010),
    never zero and exactly valid. Exact enumeration (the observed arrangement
    is one of the enumerated ones): ``#{T_b >= T - tol} / N``.
    """
    count = int(np.count_nonzero(null >= observed - tol))
    if exact:
        return count / null.size, count
    return (count + 1) / (null.size + 1), count
