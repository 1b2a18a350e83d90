"""Thread-count control for the jitted permutation loops."""

from __future__ import annotations

import contextlib
import numbers
from typing import Iterator


def resolve_n_jobs(n_jobs: int | None) -> int | None:
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"`n_jobs` must be None, -1 or a positive integer; got {n_jobs!r}.")
    import numba

    n_max = numba.config.NUMBA_NUM_THREADS
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
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(old)
