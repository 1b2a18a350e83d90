"""Thread counts: the one home of `n_jobs` (validation, resolution, numba threads).

**The default** (``n_jobs=None``) is the number of CPUs that are idle when the test
starts (:func:`idle_cpus`): the CPUs this process may use less the tasks of *other*
processes running at that moment (Linux ``/proc/loadavg`` counts the running tasks;
this process's own running threads, e.g. BLAS threads still spinning after a product,
are subtracted). On the 2-core benchmark machine two BLAS threads against one other
busy process made a plain MMD test 4x slower than one thread (1.43-1.58 s against
0.36-0.39 s, n = 1000 + 1000), while on an idle machine two threads are up to twice as
fast as one: BLAS products take one thread when a core is busy and both when none is.
Numba's parallel loops (work split across threads without BLAS's spin-waiting) take
every usable CPU: two threads beat one there in both states
(``benchmarks/bench_threads.py``). Dense decompositions (eigendecompositions,
Cholesky factorisations) are not given a load-dependent count: their bits depend on
the number of BLAS threads, so they run one BLAS thread each, side by side
(:func:`kmtests.engines._loop.map_items`), or on a count fixed by the size alone
(:func:`kmtests.engines._loop.linalg_threads`). Where the count cannot be read (not
Linux), every usable CPU. Small work runs on one thread whatever the count (each
engine's threshold). The count is read at most every :data:`IDLE_TTL` seconds (60
microseconds a read).

Values never depend on the thread count: every parallel loop computes each
permutation's statistic with the same single-threaded calls.
"""

from __future__ import annotations

import contextlib
import contextvars
import numbers
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator

import numpy as np

from .._validation import shown


def check_n_jobs(n_jobs: Any) -> int | None:
    """None, -1 (all CPUs) or 1..cpu_count; anything else raises."""
    if n_jobs is None:
        return None
    n_cpu = os.cpu_count() or 1
    msg = (f"`n_jobs` must be None, -1 (all CPUs) or an integer from 1 to {n_cpu} (the "
           f"number of CPUs); got {shown(n_jobs)}.")
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(msg)
    if int(n_jobs) == -1:
        return n_cpu
    if not 1 <= int(n_jobs) <= n_cpu:
        raise ValueError(msg)
    return int(n_jobs)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask; else ``os.cpu_count()``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


#: seconds for which a reading of :func:`idle_cpus` is reused
IDLE_TTL = 1.0
_IDLE: list[float] = []  # [time, count] of the last reading


def _running_tasks() -> int | None:
    """The tasks running or runnable on the machine now (``/proc/loadavg``), or None."""
    try:
        with open("/proc/loadavg", "rb") as fh:
            return int(fh.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):  # pragma: no cover - not Linux
        return None


def _own_running() -> int:
    """This process's threads in state R (running or runnable) now."""
    count = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:  # pragma: no cover - not Linux
        return 1
    for t in tasks:
        try:
            with open(f"/proc/self/task/{t}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:  # the thread ended
            continue
        if stat[stat.rindex(b")") + 2:stat.rindex(b")") + 3] == b"R":
            count += 1
    return max(count, 1)


def idle_cpus() -> int:
    """The usable CPUs not running another process's task now (at least 1; see the
    module docs). Every usable CPU where ``/proc/loadavg`` cannot be read."""
    now = time.monotonic()
    if _IDLE and now - _IDLE[0] < IDLE_TTL:
        return int(_IDLE[1])
    usable = usable_cpus()
    running = _running_tasks()
    if running is None:  # pragma: no cover - not Linux
        return usable
    others = max(running - _own_running(), 0)
    count = max(1, min(usable, usable - others))
    _IDLE[:] = [now, float(count)]
    return count


def thread_count(n_jobs: int | None) -> int:
    """The number of threads `n_jobs` stands for (None: the idle CPUs, :func:`idle_cpus`)."""
    return resolve_n_jobs(n_jobs) or idle_cpus()


def resolve_n_jobs(n_jobs: int | None) -> int | None:
    """The number of threads `n_jobs` stands for (None stays None: the default).

    `n_jobs` was validated by :func:`kmtests.null.check_n_jobs` (None, -1 or
    1 to the number of CPUs).
    """
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"`n_jobs` must be None, -1 or a positive integer; got {shown(n_jobs)}.")
    n_max = os.cpu_count() or 1
    if n_jobs < 0:
        return max(1, n_max + 1 + int(n_jobs))
    return min(int(n_jobs), n_max)


#: the threads of the jitted kernels in the current block (:func:`numba_threads`)
_KERNEL_THREADS: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "kmtests_kernel_threads", default=None)


@contextlib.contextmanager
def numba_threads(n_jobs: int | None) -> Iterator[None]:
    """Run the block's jitted kernels on `n_jobs` threads (None: every usable CPU — the
    kernels' loops, unlike BLAS, measured faster on two threads than on one also with
    the other core busy: HSIC, n = 1000, B = 1000, 0.33 s against 0.42 s).

    The kernels are serial numba functions that release the GIL, run on Python threads
    by :func:`map_row_blocks` (:func:`kernel_threads` reads the count set here); setting
    it neither imports numba nor starts numba's threading layer."""
    token = _KERNEL_THREADS.set(resolve_n_jobs(n_jobs) or usable_cpus())
    try:
        yield
    finally:
        _KERNEL_THREADS.reset(token)


def kernel_threads() -> int:
    """The threads of the jitted kernels: :func:`numba_threads`'s count, else every usable
    CPU."""
    return _KERNEL_THREADS.get() or usable_cpus()

def map_row_blocks(fn: Callable[[int, int], None], n_rows: int, n_jobs: int | None,
                   multiple: int = 4) -> None:
    """``fn(start, stop)`` for contiguous blocks of rows covering ``0..n_rows``, on
    `n_jobs` threads (None: every usable CPU, as numba's parallel loops); `fn` must
    release the GIL (a ``nogil`` numba kernel). Blocks are multiples of `multiple` rows,
    about four per thread (the threads take them as they finish: a busy core takes
    fewer). A kernel whose rows are independent gives the same bits for any split.

    A serial kernel run on Python threads compiles in a fraction of the time of numba's
    ``parallel=True`` (no parfor passes), and loads without numba's threading layer.
    """
    threads = min(resolve_n_jobs(n_jobs) or usable_cpus(), max(1, n_rows // multiple))
    if threads <= 1:
        fn(0, n_rows)
        return
    size = -(-n_rows // (4 * threads))
    size = -(-size // multiple) * multiple
    with ThreadPoolExecutor(max_workers=threads) as ex:
        for done in [ex.submit(fn, a, min(a + size, n_rows)) for a in range(0, n_rows, size)]:
            done.result()
