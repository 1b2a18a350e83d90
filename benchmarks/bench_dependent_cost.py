"""Cost of the automatic block length (issue 30): ``blocks="auto"`` against a fixed
``blocks=`` of the same length, and the wild bootstrap's ``length="auto"`` against a
fixed length, on AR(1) series (phi = 0.8).

The fixed path is given the very length the automatic rule chose, so the two run
the same permutations: the difference is the rule (random Fourier features of the
data, the Politis-White lengths of a few series). CPU seconds (this process) and
wall seconds, best of ``--repeats``, one thread; the load average is printed beside.

Run from the repository root::

    .venv/bin/python benchmarks/bench_dependent_cost.py
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

import kmtests  # noqa: E402
from kmtests.null import WildBootstrap  # noqa: E402
from kmtests.problems.data import auto_length_of, independence_problem  # noqa: E402

warnings.simplefilter("ignore", kmtests.SerialDependenceWarning)


def ar1(gen: np.random.Generator, n: int, phi: float) -> np.ndarray:
    e = gen.normal(size=n)
    s = np.empty(n)
    s[0] = e[0]
    for t in range(1, n):
        s[t] = phi * s[t - 1] + np.sqrt(1 - phi * phi) * e[t]
    return s


def best(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds), each the best of `repeats` runs."""
    cpu, wall = [], []
    fn()
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    return min(cpu), min(wall)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"load average at start: {os.getloadavg()}")
    print("| n | B | path | fixed: CPU s (wall) | auto: CPU s (wall) | CPU ratio |")
    print("|---:|---:|---|---|---|---:|")
    gen = np.random.default_rng(0)
    for n, resamples in ((200, (199, 9999)), (500, (199, 2999)), (2000, (199,))):
        x, y = ar1(gen, n, 0.8), ar1(gen, n, 0.8)
        auto = auto_length_of(independence_problem(x, y))
        for B in resamples:
            cases = [
                ("HSIC, blocks", lambda: kmtests.independence_test(
                    x, y, blocks=auto.block, n_resamples=B, rng=1),
                 lambda: kmtests.independence_test(x, y, blocks="auto", n_resamples=B,
                                                   rng=1)),
                ("HSIC, wild AR", lambda: kmtests.independence_test(
                    x, y, method=WildBootstrap(process="ar", length=auto.multiplier,
                                               n_resamples=B, rng=1)),
                 lambda: kmtests.independence_test(x, y, blocks="auto", method="wild",
                                                   n_resamples=B, rng=1)),
            ]
            for name, fixed, automatic in cases:
                reps = args.repeats if n * B < 10**6 else 2
                cf, wf = best(fixed, reps)
                ca, wa = best(automatic, reps)
                length = auto.block if "blocks" in name else round(auto.multiplier, 1)
                print(f"| {n} | {B} | {name} (length {length}) | {cf:.4f} ({wf:.4f}) "
                      f"| {ca:.4f} ({wa:.4f}) | {ca / cf:.2f} |", flush=True)
    print(f"load average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
