"""The per-permutation loop for estimators without a vectorised rule.

Estimators such as F-KMSE re-tune on every permuted data set with one small
eigendecomposition each. Multithreaded BLAS is slow on many small matrices (on
2 cores a 30 x 30 ``eigh`` took 1 ms with 2 BLAS threads and 0.09 ms with
one), so the loop runs with BLAS limited to one thread and spreads the
permutations over a thread pool of `n_jobs` workers instead. Each permutation
is computed independently and results are returned in order: the values do not
depend on the number of threads.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from . import _threads
from ._threads import resolve_n_jobs, thread_count

T = TypeVar("T")

_CONTROLLER: Any = None


def _controller() -> Any:
    """The threadpoolctl controller, built once (the first scan of the loaded libraries
    costs milliseconds). SciPy's LAPACK is loaded first: its BLAS is a library of its own
    (``libscipy_openblas``, besides NumPy's ``libscipy_openblas64_``), which a controller
    built before it would not limit."""
    global _CONTROLLER
    if _CONTROLLER is None:
        import scipy.linalg  # noqa: F401  (loads SciPy's BLAS)
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def blas_threads(n: int) -> Any:
    """Context manager limiting BLAS to `n` threads."""
    return _controller().limit(limits=n, user_api="blas")


def default_blas_threads(n: int) -> Any:
    """Context manager for a thread count kmtests chose itself (``n_jobs=None``): BLAS on
    `n` threads, but never more than the limit already in effect -- an enclosing
    ``threadpoolctl.threadpool_limits``, ``OPENBLAS_NUM_THREADS`` -- which a user sets to
    keep parallel processes from oversubscribing the CPUs. (An explicit `n_jobs` is
    obeyed as given.)"""
    current = blas_thread_counts()
    return blas_threads(min(n, max(current)) if current else n)


def blas_thread_counts() -> tuple[int, ...]:
    """The threads of each loaded BLAS library now (about 10 microseconds): the bits of a
    product of large matrices depend on them, so a cache of such products keys on them."""
    return tuple(int(lib.num_threads) for lib in _controller().lib_controllers
                 if lib.user_api == "blas")


#: below this many observations dense linear algebra (eigendecompositions, products of
#: n x n matrices) runs on one BLAS thread unless `n_jobs` says otherwise, above on every
#: usable CPU (:func:`linalg_threads`; on a busy 2-core machine an eigendecomposition of
#: 300 x 300 took 1.24 s with two BLAS threads and 0.035 s with one). Idle, two threads
#: gain nothing at n = 300 and 14-32% at n = 500-1000 (the tuned KCI: 0.099 / 0.085 s
#: at 500, 0.675 / 0.456 s at 1000)
BLAS_SINGLE_BELOW = 500


def linalg_threads(n_jobs: int | None, n: int, single_below: int | None = None) -> Any:
    """BLAS threads for dense linear algebra on `n` observations: `n_jobs` when given,
    else one thread below :data:`BLAS_SINGLE_BELOW` observations (or `single_below`)
    and every usable CPU above, within the limit already in effect
    (:func:`default_blas_threads`).

    Not the idle CPUs: the bits of an eigendecomposition or a Cholesky factorisation
    depend on the number of BLAS threads (LAPACK's blocked algorithms), so a count that
    followed the machine's load would make a p-value differ in its last digits from run
    to run. Independent decompositions are run side by side instead, one BLAS thread
    each (:func:`map_items`), on as many workers as there are idle CPUs."""
    if n_jobs is not None:
        return blas_threads(resolve_n_jobs(n_jobs) or 1)
    below = BLAS_SINGLE_BELOW if single_below is None else single_below
    if n < below:
        return blas_threads(1)
    return default_blas_threads(_threads.usable_cpus())  # looked up: tests patch it


def map_items(fn: Callable[[Any], T], items: Sequence[Any] | np.ndarray,
              n_jobs: int | None) -> list[T]:
    """``[fn(i) for i in items]`` over `n_jobs` threads (None: the idle CPUs), each with
    one BLAS thread: every item is computed by the same single-threaded calls whatever
    the number of threads, so the values do not depend on it."""
    n_threads = max(1, min(thread_count(n_jobs), len(items)))
    with single_blas_thread():
        if n_threads == 1:
            return [fn(i) for i in items]
        with ThreadPoolExecutor(max_workers=n_threads) as ex:
            return list(ex.map(fn, items))


def single_blas_thread() -> Any:
    """Context manager limiting BLAS to one thread."""
    return blas_threads(1)


def map_rows_multi(fn: Callable[[np.ndarray], T], perms: np.ndarray,
                   n_jobs: int | None = None) -> list[T]:
    """``[fn(perms[b]) for b]`` with single-threaded BLAS, over `n_jobs` threads
    (:func:`map_items` over the rows)."""
    return map_items(fn, perms, n_jobs)
