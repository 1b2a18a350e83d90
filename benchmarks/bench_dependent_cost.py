"""Cost of the automatic block length (issue 30): ``blocks="auto"`` against a fixed
``blocks=`` of the same length, and the wild bootstrap's ``length="auto"`` against a
fixed length, on AR(1) series (phi = 0.8); and ``drift_test``'s default
(``memory="auto"``: the ARFIMA fit, then block permutations of the automatic length, or
the self-normalised test on long memory) against ``memory="short"`` (``--drift``: an
AR(1) series with phi = 0.5, which keeps the blocks, and an ARFIMA(0, 0.3, 0) one, which
takes the self-normalised test).

The fixed path is given the very length the automatic rule chose, so the two run
the same permutations: the difference is the rule (random Fourier features of the
data, the Politis-White lengths of a few series). CPU seconds (this process) and
wall seconds, best of ``--repeats``, one thread; the load average is printed beside.

Run from the repository root::

    .venv/bin/python benchmarks/bench_dependent_cost.py

``--rotations`` times the random rotations of two windows' blocks (ninth session).
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


def drift(repeats: int) -> None:
    """``drift_test(series)`` (``memory="auto"``) against ``memory="short"``, which is
    ``blocks="auto"`` alone: the price of the fit and, where it switches, of the
    self-normalised test. The ARFIMA series is the first of its seeds the fit switches."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from dependent_streams import process

    from kmtests.timeseries import drift_test

    print("| n | B | series | path taken | `memory=\"short\"`: CPU s (wall) "
          "| default: CPU s (wall) | CPU ratio |")
    print("|---:|---:|---|---|---|---|---:|")
    for n, resamples in ((200, (199, 9999)), (500, (199, 2999)), (2000, (199,))):
        for proc in ("ar0.5", "arfima"):
            for seed in range(100):
                z = process(proc, np.random.default_rng(seed), n)
                taken = type(drift_test(z, n_resamples=19, rng=1)).__name__
                if (proc == "arfima") == (taken != "TwoSampleResult"):
                    break
            for B in resamples:
                reps = repeats if n * B < 10**6 else 2
                cs, ws = best(lambda: drift_test(z, memory="short", n_resamples=B, rng=1),
                              reps)
                ca, wa = best(lambda: drift_test(z, n_resamples=B, rng=1), reps)
                print(f"| {n} | {B} | {proc} | {taken} | {cs:.4f} ({ws:.4f}) "
                      f"| {ca:.4f} ({wa:.4f}) | {ca / cs:.2f} |", flush=True)


def rotations(repeats: int) -> None:
    """Two windows' block permutations with their random rotations (the package) against
    the plain blocks of the same length (``AutoLength.rotations`` patched to False), on
    AR(1) series with phi = 0.8 (``drift_test(memory="short")``). With 8 blocks the plain
    blocks have 70 arrangements and the rotated ones 70 times the length: both are
    enumerated when ``n_resamples`` is at least their number."""
    import sys
    from pathlib import Path
    from unittest import mock

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from dependent_streams import process

    from kmtests._serial import AutoLength
    from kmtests.timeseries import drift_test

    print("| n | B | blocks | plain: CPU s (wall), statistics | rotated: CPU s (wall), "
          "statistics | CPU ratio |")
    print("|---:|---:|---|---|---|---:|")
    for n, resamples in ((200, (199, 9999)), (500, (199, 2999)), (2000, (199,))):
        z = process("ar0.8", np.random.default_rng(0), n)
        for B in resamples:
            reps = repeats if n * B < 10**6 else 2
            with mock.patch.object(AutoLength, "rotations", property(lambda self: False)):
                plain = drift_test(z, memory="short", n_resamples=B, rng=1)
                cp, wp = best(lambda: drift_test(z, memory="short", n_resamples=B, rng=1),
                              reps)
            turned = drift_test(z, memory="short", n_resamples=B, rng=1)
            cr, wr = best(lambda: drift_test(z, memory="short", n_resamples=B, rng=1), reps)
            what = turned.details["permutations"].split(";")[0].split(",")[0]
            print(f"| {n} | {B} | {what} | {cp:.4f} ({wp:.4f}), {plain.n_resamples} "
                  f"| {cr:.4f} ({wr:.4f}), {turned.n_resamples} | {cr / cp:.2f} |",
                  flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--drift", action="store_true", help="the drift test's cost only")
    ap.add_argument("--rotations", action="store_true",
                    help="the rotated blocks of two windows against the plain ones")
    args = ap.parse_args(argv)
    print(f"load average at start: {os.getloadavg()}")
    if args.rotations:
        rotations(args.repeats)
        print(f"load average at end: {os.getloadavg()}")
        return 0
    if args.drift:
        drift(args.repeats)
        print(f"load average at end: {os.getloadavg()}")
        return 0
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
