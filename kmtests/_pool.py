"""Per-permutation loops for estimators without a vectorised path.

Estimators such as F-KMSE re-tune on every permuted data set with one small
eigendecomposition each. Multithreaded BLAS is slow on many small matrices (on
2 cores a 30 x 30 ``eigh`` took 1 ms with 2 BLAS threads and 0.09 ms with
one), so the loop runs with BLAS limited to one thread and spreads the
permutations over a thread pool instead. Each permutation is computed
independently and results are returned in order: the values do not depend on
the number of threads.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np
from ._parallel import resolve_n_jobs

_CONTROLLER = None


def single_blas_thread():
    """Context manager limiting BLAS to one thread (controller built once: the
    first scan of the loaded libraries costs milliseconds)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def map_rows(fn: Callable[[np.ndarray], float], perms: np.ndarray,
             n_jobs: int | None = None) -> np.ndarray:
    """``out[b] = fn(perms[b])`` with single-threaded BLAS, over `n_jobs` threads."""
    n_threads = resolve_n_jobs(n_jobs) or os.cpu_count() or 1
    n_threads = max(1, min(n_threads, perms.shape[0]))
    with single_blas_thread():
        if n_threads == 1:
            return np.array([fn(p) for p in perms], dtype=np.float64)
        with ThreadPoolExecutor(max_workers=n_threads) as ex:
            return np.fromiter(ex.map(fn, perms), dtype=np.float64, count=perms.shape[0])
