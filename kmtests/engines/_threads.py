"""Thread counts: the one home of `n_jobs` (validation, resolution, numba threads)."""

from __future__ import annotations

import contextlib
import os
import numbers
from typing import Any, Iterator


def check_n_jobs(n_jobs: Any) -> int | None:
    """None, -1 (all CPUs) or 1..cpu_count; anything else raises."""
    import numpy as np

    if n_jobs is None:
        return None
    n_cpu = os.cpu_count() or 1
    msg = (f"`n_jobs` must be None, -1 (all CPUs) or an integer from 1 to {n_cpu} (the "
           f"number of CPUs); got {n_jobs!r}.")
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(msg)
    if int(n_jobs) == -1:
        return n_cpu
    if not 1 <= int(n_jobs) <= n_cpu:
        raise ValueError(msg)
    return int(n_jobs)


def thread_count(n_jobs: int | None) -> int:
    """The number of threads `n_jobs` stands for (None: all CPUs)."""
    return resolve_n_jobs(n_jobs) or os.cpu_count() or 1


def resolve_n_jobs(n_jobs: int | None) -> int | None:
    """The number of threads `n_jobs` stands for (None stays None: the default).

    `n_jobs` was validated by :func:`kmtests.null.check_n_jobs` (None, -1 or
    1 to the number of CPUs).
    """
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"`n_jobs` must be None, -1 or a positive integer; got {n_jobs!r}.")
    n_max = os.cpu_count() or 1
    if n_jobs < 0:
        return max(1, n_max + 1 + int(n_jobs))
    return min(int(n_jobs), n_max)


@contextlib.contextmanager
def numba_threads(n_jobs: int | None) -> Iterator[None]:
    """Run the block with `n_jobs` numba threads (None: numba's default)."""
    n = resolve_n_jobs(n_jobs)
    if n is None:
        yield
        return
    import numba

    old = numba.get_num_threads()
    numba.set_num_threads(min(n, int(numba.config.NUMBA_NUM_THREADS)))  # type: ignore[attr-defined]
    try:
        yield
    finally:
        numba.set_num_threads(old)
