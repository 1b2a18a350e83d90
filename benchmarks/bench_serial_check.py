"""Cost of the serial-dependence check on the i.i.d. path (issue 30): the time of
:func:`kmtests._serial.serial_check` against the whole test it runs in.

i.i.d. N(0, 1) data, the default two-sample and independence tests (permutations,
``n_resamples`` as given); CPU seconds (this process, best of ``--repeats``) of the
check alone and of the test; the load average is printed beside.

Run from the repository root::

    .venv/bin/python benchmarks/bench_serial_check.py
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import time  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

import kmtests  # noqa: E402
from kmtests._serial import serial_check  # noqa: E402
from kmtests.null import PermutationMethod  # noqa: E402
from kmtests.problems.data import independence_problem, two_sample_problem  # noqa: E402


def cpu_best(fn: Callable[[], Any], repeats: int, inner: int = 1) -> float:
    fn()
    out = []
    for _ in range(repeats):
        c0 = time.process_time()
        for _ in range(inner):
            fn()
        out.append((time.process_time() - c0) / inner)
    return min(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"load average at start: {os.getloadavg()}")
    print("| test | n per sample, d | B | check: CPU ms | test: CPU ms | share |")
    print("|---|---|---:|---:|---:|---:|")
    gen = np.random.default_rng(0)
    method = PermutationMethod()
    for n, d in ((50, 1), (200, 1), (1000, 5)):
        x, y = gen.normal(size=(n, d)), gen.normal(size=(n, d))
        cases = [("two-sample", two_sample_problem(x, y),
                  lambda B: kmtests.two_sample_test(x, y, n_resamples=B, rng=1)),
                 ("independence", independence_problem(x, y),
                  lambda B: kmtests.independence_test(x, y, n_resamples=B, rng=1))]
        for name, problem, test in cases:
            check = cpu_best(lambda: serial_check(problem, method), args.repeats, inner=200)
            for B in (199, 9999) if n <= 200 else (199,):
                full = cpu_best(lambda: test(B), args.repeats if n * B < 10**6 else 2)
                print(f"| {name} | {n}, {d} | {B} | {1e3 * check:.3f} | {1e3 * full:.1f} "
                      f"| {100 * check / full:.2f}% |", flush=True)
    print(f"load average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
