"""The default thread use against one and two threads, on an idle machine and with a busy core.

For each test the default call (``n_jobs=None``) is timed next to the same call on
exactly one and exactly two threads; the goal (issue 21) is a default within 1.2x of
the better of the two in both machine states. "One/two threads" means ``n_jobs=1`` /
``n_jobs=2`` where the test takes `n_jobs`; for tests without permutations (gamma
nulls), which take no `n_jobs`, it means kmtests' own thread choice forced to that
count (``_threads.idle_cpus`` and the small-size thresholds patched), BLAS included.

States: ``quiet`` (nothing else running — check the load before trusting it) and
``busy`` (one other process spinning on one core, as on a laptop or shared server).
Wall-clock seconds, the median of `--repeats` calls after a warm-up call.

Run::

    .venv/bin/python benchmarks/bench_threads.py                 # both states
    .venv/bin/python benchmarks/bench_threads.py --states busy --repeats 3
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent



@contextlib.contextmanager
def forced(threads: int | None) -> Iterator[None]:
    """kmtests' default thread choice forced to `threads` (None: left alone)."""
    from kmtests.engines import _loop, _threads, mmd

    if threads is None:
        yield
        return
    saved = (_threads.idle_cpus, _loop.BLAS_SINGLE_BELOW, mmd._SMALL_N)
    _threads.idle_cpus = lambda: threads  # type: ignore[assignment]
    _loop.BLAS_SINGLE_BELOW, mmd._SMALL_N = 0, 0
    try:
        yield
    finally:
        _threads.idle_cpus, _loop.BLAS_SINGLE_BELOW, mmd._SMALL_N = saved


def cases() -> dict[str, tuple[Callable[..., Any], bool]]:
    """name -> (call(n_jobs), takes n_jobs)."""
    import kmtests

    g = np.random.default_rng(0)
    x1, y1 = g.normal(size=(1000, 5)), g.normal(size=(1000, 5))
    x2, y2 = g.normal(size=(200, 5)), g.normal(size=(200, 5))
    xh = g.normal(size=(1000, 2))
    yh = xh[:, :1] + g.normal(size=(1000, 1))
    xa, ya = g.normal(size=(500, 5)), g.normal(size=(500, 5))
    z = g.normal(size=(1000, 1))
    xc, yc = np.sin(z) + g.normal(size=(1000, 1)), np.cos(z) + g.normal(size=(1000, 1))
    xf, yf = g.normal(size=(100, 2)), g.normal(size=(100, 2))
    return {
        "MMD n=1000+1000 B=1000": (lambda j: kmtests.two_sample_test(
            x1, y1, n_resamples=1000, rng=0, n_jobs=j), True),
        "HSIC perm n=1000 B=1000": (lambda j: kmtests.independence_test(
            xh, yh, n_resamples=1000, rng=0, n_jobs=j), True),
        "HSIC gamma n=1000": (lambda j: kmtests.independence_test(
            xh, yh, method="gamma"), False),
        "regularized MMD n=200+200 B=1000": (lambda j: kmtests.two_sample_test(
            x2, y2, statistic="regularized", n_resamples=1000, rng=0, n_jobs=j), True),
        "MMDAgg n=500+500 B=1000": (lambda j: kmtests.aggregated_two_sample_test(
            xa, ya, n_resamples=1000, rng=0, n_jobs=j), True),
        "KCI tuned n=1000": (lambda j: kmtests.conditional_independence_test(
            xc, yc, z, cache=False), False),
        "fkmse n=100+100 B=199": (lambda j: kmtests.two_sample_test(
            xf, yf, estimator="fkmse", n_resamples=199, rng=0, n_jobs=j), True),
    }


def run(states: list[str], repeats: int, only: list[str] | None) -> pd.DataFrame:
    from _benchutil import machine_state

    rows = []
    tests = cases()
    for state in states:
        with machine_state(state):
            time.sleep(0.5)
            for name, (call, takes_jobs) in tests.items():
                if only and not any(o in name for o in only):
                    continue
                for mode in ("default", "1 thread", "2 threads"):
                    threads = None if mode == "default" else int(mode[0])
                    jobs = threads if takes_jobs else None
                    ctx = (forced(None) if takes_jobs or threads is None
                           else forced(threads))
                    with ctx:
                        call(jobs)  # warm-up
                        times = []
                        for _ in range(repeats):
                            t0 = time.perf_counter()
                            call(jobs)
                            times.append(time.perf_counter() - t0)
                    sec = float(np.median(times))
                    rows.append({"state": state, "test": name, "mode": mode,
                                 "seconds": sec, "repeats": repeats,
                                 "load": os.getloadavg()[0]})
                    print(f"{state:5s} {name:34s} {mode:9s} {sec:8.3f} s", flush=True)
    return pd.DataFrame(rows)


def markdown(tab: pd.DataFrame) -> str:
    lines = ["| state | test | default | 1 thread | 2 threads | default / best |",
             "|---|---|---:|---:|---:|---:|"]
    for (state, test), g in tab.groupby(["state", "test"], sort=False):
        s = g.set_index("mode")["seconds"]
        ratio = s["default"] / min(s["1 thread"], s["2 threads"])
        lines.append(f"| {state} | {test} | {s['default']:.3g} | {s['1 thread']:.3g} | "
                     f"{s['2 threads']:.3g} | {ratio:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--states", default="quiet,busy")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated substrings of test names")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_threads.csv"))
    args = ap.parse_args(argv)
    tab = run(args.states.split(","), args.repeats,
              [o for o in args.only.split(",") if o] or None)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    tab.to_csv(args.out, index=False, float_format="%.4g")
    print(markdown(tab))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
