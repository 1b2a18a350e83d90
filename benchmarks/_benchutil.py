"""Shared helpers for the kmtests benchmarks (machine description, timing, peaks).

Not part of the package; imported by the scripts in this directory.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import os
import platform
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


# --------------------------------------------------------------------------- machine


def _spin(stop: Any) -> None:  # pragma: no cover - a busy core
    x = 0
    while not stop.is_set():
        x += 1


@contextlib.contextmanager
def machine_state(state: str) -> Iterator[None]:
    """Run the block as the machine is (any `state` but ``"busy"``), or ``"busy"``: with
    one other process spinning on one core, as on a laptop or shared server."""
    stop = mp.Event()
    procs = [mp.Process(target=_spin, args=(stop,))] if state == "busy" else []
    for p in procs:
        p.start()
    try:
        yield
    finally:
        stop.set()
        for p in procs:
            p.join()

def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def blas_info() -> str:
    """BLAS library as numpy reports it (numpy.show_config) plus its thread count."""
    desc = "unknown"
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        desc = f"{blas.get('name')} {blas.get('version')}"
        conf = blas.get("openblas configuration")
        if conf:
            desc += f" ({conf})"
    except Exception:  # pragma: no cover - older numpy
        pass
    try:
        import threadpoolctl

        info = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
        if info:
            desc += f"; {info[0].get('num_threads')} threads, arch {info[0].get('architecture')}"
    except Exception:
        pass
    return desc


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for mod in ("numpy", "scipy", "numba", "kmtests", "hyppo", "sklearn", "joblib"):
        try:
            m = __import__(mod)
            out[mod] = getattr(m, "__version__", "?")
        except Exception:
            out[mod] = "not installed"
    return out


def machine_summary() -> dict[str, Any]:
    mem_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gib = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    import numba

    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "mem_gib": mem_gib,
        "blas": blas_info(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "numba_threading_layer": _numba_layer(),
        "versions": versions(),
        "platform": platform.platform(),
    }


def _numba_layer() -> str:
    try:
        import numba

        return str(numba.config.THREADING_LAYER)
    except Exception:
        return "?"


def print_machine(info: dict[str, Any]) -> None:
    print(f"CPU      : {info['cpu']}  ({info['cores']} logical cores, {info['mem_gib']} GiB)")
    print(f"BLAS     : {info['blas']}")
    print(f"numba    : {info['numba_threads']} threads, layer setting "
          f"{info['numba_threading_layer']!r}")
    print("versions : " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()))


# --------------------------------------------------------------------------- load

def _cpu_times() -> tuple[int, int]:
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    vals = [int(v) for v in fields]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
    return sum(vals), idle


def foreign_load(seconds: float = 1.0) -> float | None:
    """Busy cores (averaged over `seconds`) while this process sleeps: other jobs' load."""
    try:
        t0, i0 = _cpu_times()
        time.sleep(seconds)
        t1, i1 = _cpu_times()
    except OSError:
        return None
    total = t1 - t0
    if total <= 0:
        return None
    return (1.0 - (i1 - i0) / total) * (os.cpu_count() or 1)


def check_quiet(label: str, seconds: float = 1.0, threshold: float = 0.15) -> float | None:
    busy = foreign_load(seconds)
    if busy is not None:
        msg = f"[load] {label}: other processes keep {busy:.2f} cores busy"
        if busy > threshold:
            msg += "  ** WARNING: machine not idle, timings are pessimistic/noisy **"
        print(msg, flush=True)
    return busy


def wait_quiet(label: str, max_wait: float, threshold: float = 0.25) -> float | None:
    """Wait (up to `max_wait` s) until other processes use < `threshold` cores; report."""
    t0 = time.perf_counter()
    busy = foreign_load(0.5)
    while busy is not None and busy > threshold and time.perf_counter() - t0 < max_wait:
        busy = foreign_load(1.0)
    waited = time.perf_counter() - t0
    if busy is not None:
        msg = f"[load] {label}: other processes use {busy:.2f} cores"
        if waited > 1.0:
            msg += f" (waited {waited:.0f} s)"
        if busy > threshold:
            msg += "  ** WARNING: machine not idle, timings are pessimistic/noisy **"
        print(msg, flush=True)
    return busy


# --------------------------------------------------------------------------- timing

def best_of(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(max(1, repeats)):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def markdown_table(df: Any) -> str:
    """A pandas frame as a markdown table (floats to 3 significant digits), without the
    optional `tabulate` that ``DataFrame.to_markdown`` needs."""
    def cell(v: Any) -> str:
        return f"{v:.3g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in df.itertuples(False)]
    return "\n".join(lines)


# --------------------------------------------------------------------------- peaks

def dgemm_gflops(n: int = 4000, repeats: int = 3, threads: int | None = None) -> float:
    """Achievable DGEMM rate: best of `repeats` square n x n float64 products.

    `threads=None` uses the BLAS library's default thread count (what kmtests
    runs with); otherwise the count is limited with threadpoolctl.
    """
    gen = np.random.default_rng(0)
    a = gen.random((n, n))
    b = gen.random((n, n))
    c = np.empty((n, n))

    def run() -> float:
        np.matmul(a, b, out=c)  # warm-up
        t, _ = best_of(lambda: np.matmul(a, b, out=c), repeats)
        return 2.0 * n**3 / t / 1e9

    if threads is None:
        return run()
    import threadpoolctl

    with threadpoolctl.threadpool_limits(limits=threads, user_api="blas"):
        return run()


def read_bandwidth(nbytes: int, threads: int, repeats: int = 5, inner: int | None = None) -> float:
    """Achievable read bandwidth (GB/s) of numpy summing a float64 array of `nbytes`.

    The array is split into `threads` contiguous parts summed concurrently
    (numpy releases the GIL in the reduction). Best of `repeats` passes, each
    summing the array `inner` times. With `nbytes` far above the last-level
    cache this is the DRAM read bandwidth; with a small array it is the
    cache-resident rate.
    """
    a = np.ones(nbytes // 8)
    parts = np.array_split(a, threads)
    if inner is None:
        inner = max(1, int(2e9 // nbytes))
    ex = ThreadPoolExecutor(threads) if threads > 1 else None

    def one_pass() -> None:
        for _ in range(inner):
            if ex is None:
                a.sum()
            else:
                list(ex.map(np.sum, parts))

    one_pass()
    t, _ = best_of(one_pass, repeats)
    if ex is not None:
        ex.shutdown()
    return a.nbytes * inner / t / 1e9


def save_json(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / name
    path.write_text(json.dumps(payload, indent=2, default=str))
    return path
