"""The BLAS thread limits reach every BLAS library the package's linear algebra uses."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_blas_limit_reaches_scipys_own_blas():
    # NumPy and SciPy wheels carry separate OpenBLAS builds; a controller built before
    # SciPy's LAPACK was loaded left SciPy's (Cholesky, triangular solves) unlimited
    code = textwrap.dedent("""
        from kmtests.engines._loop import blas_threads
        with blas_threads(1):
            from scipy.linalg import lapack  # loaded inside the limit
            from threadpoolctl import threadpool_info
            blas = [i for i in threadpool_info() if i["user_api"] == "blas"]
            print(len(blas), sorted({i["num_threads"] for i in blas}))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"OPENBLAS_NUM_THREADS": "2", "PATH": ""}).stdout
    count, threads = out.split(maxsplit=1)
    assert int(count) >= 1
    assert threads.strip() == "[1]"


def test_the_default_threads_are_the_idle_cpus(monkeypatch):
    from kmtests.engines import _threads

    monkeypatch.setattr(_threads, "usable_cpus", lambda: 2)
    for running, own, expected in [(1, 1, 2),   # idle machine: both
                                   (2, 2, 2),   # our own BLAS thread still spinning
                                   (2, 1, 1),   # one other process busy: one thread
                                   (9, 1, 1)]:  # a loaded machine: never below one
        monkeypatch.setattr(_threads, "_running_tasks", lambda r=running: r)
        monkeypatch.setattr(_threads, "_own_running", lambda o=own: o)
        _threads._IDLE.clear()
        assert _threads.idle_cpus() == expected
        assert _threads.thread_count(None) == expected
        assert _threads.thread_count(1) == 1
    # read at most once per IDLE_TTL
    monkeypatch.setattr(_threads, "_running_tasks", lambda: 1)
    assert _threads.idle_cpus() == 1


def test_a_busy_process_is_seen(monkeypatch):
    import time

    from kmtests.engines import _threads

    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        _threads._IDLE.clear()
        assert _threads._running_tasks() is not None
        assert _threads.idle_cpus() <= max(_threads.usable_cpus() - 1, 1)
    finally:
        spinner.kill()
        spinner.wait()
        _threads._IDLE.clear()


def test_the_machines_load_does_not_change_a_result(monkeypatch):
    # the default thread count follows the idle CPUs; the values must not: decompositions
    # run on one BLAS thread each (side by side), products are thread-count invariant
    import numpy as np

    import kmtests
    from kmtests.engines import _threads

    g = np.random.default_rng(1)
    n = 600
    z = g.normal(size=(n, 1))
    x, y = np.sin(2 * z) + g.normal(size=(n, 1)), np.cos(z) + g.normal(size=(n, 1))
    a, b = g.normal(size=(300, 3)), g.normal(size=(300, 3))

    def run():
        return [kmtests.conditional_independence_test(x, y, z, cache=False),
                kmtests.conditional_independence_test(x, y, z, cache=False, method="chi2",
                                                      rng=0),
                kmtests.conditional_independence_test(x, y, z, bandwidth_z=0.5, lam=1e-5,
                                                      cache=False),
                kmtests.two_sample_test(a, b, n_resamples=199, rng=0),
                kmtests.two_sample_test(a, b, statistic="regularized", n_resamples=99, rng=0),
                kmtests.independence_test(x, z, n_resamples=199, rng=0)]

    results = {}
    for idle in (1, 2):
        monkeypatch.setattr(_threads, "idle_cpus", lambda v=idle: v)
        monkeypatch.setattr(_threads, "usable_cpus", lambda: 2)
        results[idle] = [(r.statistic, r.pvalue) for r in run()]
    assert results[1] == results[2]


def test_default_thread_choices_stay_within_an_enclosing_limit(monkeypatch):
    """kmtests' own thread choices (``n_jobs=None``) never raise BLAS above a limit the
    user set around the call (threadpoolctl, as joblib workers and PC runs do: two
    threads spinning on a one-CPU budget doubled the CPU seconds of a PC run); an
    explicit `n_jobs` is obeyed as given."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    from kmtests.engines import _loop, _threads, mmd

    monkeypatch.setattr(_threads, "usable_cpus", lambda: 2)
    monkeypatch.setattr(_threads, "idle_cpus", lambda: 2)
    monkeypatch.setattr(mmd, "idle_cpus", lambda: 2, raising=False)
    seen = []
    orig = mmd._quad_forms
    monkeypatch.setattr(mmd, "_quad_forms", lambda *a: (
        seen.append(max(_loop.blas_thread_counts())), orig(*a))[1])
    K = np.eye(600)
    with threadpool_limits(1):
        with _loop.linalg_threads(None, 1000):
            inside = max(_loop.blas_thread_counts())
        with _loop.linalg_threads(2, 1000):
            explicit = max(_loop.blas_thread_counts())
        mmd.within_sums(K, np.tile(np.arange(600), (2, 1)), 300)
        mmd.within_sums(K, np.tile(np.arange(600), (2, 1)), 300, n_jobs=2)
    assert inside == 1 and seen[0] == 1
    assert explicit == 2 and seen[1] == 2
