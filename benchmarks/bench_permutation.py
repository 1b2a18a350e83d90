"""Permutation-test speed: kmtests vs hyppo, and vs the machine's hardware bounds.

Run from the repository root::

    .venv/bin/python benchmarks/bench_permutation.py            # ~3-5 min
    .venv/bin/python benchmarks/bench_permutation.py --full     # + hyppo MMD with all B
                                                                #   permutations at n=1000 (~5 more min)

What is timed (whole public calls, best of ``--repeats``, JIT warmed up first):

* ``mmd``   : ``kmtests.two_sample_test(x, y, n_resamples=B, rng=seed)`` (Gaussian
  kernel, median heuristic on the pooled sample, MMD^2_u) vs
  ``hyppo.ksample.MMD().test(x, y, reps=B, workers=1, auto=False)`` (Gaussian
  kernel, median heuristic on the pooled sample, unbiased). x and y have n rows
  each (pooled N = 2n) and d columns.
* ``hsic``  : ``kmtests.independence_test(x, y, n_resamples=B, rng=seed)`` (HSIC_b,
  its default) vs ``hyppo.independence.Hsic().test(x, y, reps=B, workers=1,
  auto=False)`` (median heuristic on each variable; hyppo's default statistic is
  the unbiased one).
* ``hsic_u``: the same with ``statistic="unbiased"`` in kmtests (the statistic
  closest to hyppo's default); the hyppo column repeats the ``hsic`` measurement.

``auto=False`` matters: with hyppo's default ``auto=True`` and n > 20, hyppo
skips the permutations and uses a chi-square approximation.

Both sides include everything their call does (kernel matrices, bandwidth,
drawing permutations, p-value). The "engine" column is kmtests' permutation
engine alone on pre-drawn permutations (what the hardware bound is about).

Bounds (peaks measured in the same run, at its start and at its end; the better
of the two is used, so a busy moment cannot make the bounds look loose):

* MMD : ``2 B N^2`` flops (one ``(B x N) @ (N x N)`` product) / DGEMM GFLOP/s of
  numpy on 4000 x 4000 matrices with the default BLAS threads.
* HSIC: reading the two n x n float64 centred Gram matrices once per
  permutation, ``B * 2 * 8 n^2`` bytes / DRAM read bandwidth (numpy summing a
  1 GiB array, all cores). The cache-resident variant of that bound (array of
  the same size as the two matrices) is reported too.

hyppo at large n is slow; when a full run would exceed ``--hyppo-budget``
seconds, its time is *extrapolated* from two short runs (r1 and r2
permutations: ``t(B) = t(r2) + (B - r2) * (t(r2) - t(r1)) / (r2 - r1)``) and marked
``~`` in the table.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
import _benchutil as bu  # noqa: E402

import kmtests  # noqa: E402
from kmtests import _resampling  # noqa: E402
from kmtests.engines.hsic import PairedGrams, hsic_statistics  # noqa: E402
from kmtests.engines.mmd import PooledGram, mmd_statistics  # noqa: E402
from kmtests.estimators import resolve_estimator  # noqa: E402
from kmtests.kernels import resolve_kernel  # noqa: E402

SEED = 20240601


@dataclass
class Row:
    test: str
    n: int
    B: int
    kmtests_s: float
    engine_s: float
    hyppo_s: float | None
    hyppo_note: str
    bound_s: float
    bound_cache_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        return None if self.hyppo_s is None else self.hyppo_s / self.kmtests_s


# --------------------------------------------------------------------------- data

def make_data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng([seed, n, d])
    x = gen.normal(size=(n, d))
    y = gen.normal(size=(n, d))
    return x, y


# --------------------------------------------------------------------------- kmtests

def km_call(test: str, x: np.ndarray, y: np.ndarray, B: int) -> Callable[[], Any]:
    if test == "mmd":
        return lambda: kmtests.two_sample_test(x, y, n_resamples=B, rng=SEED)
    stat = "unbiased" if test == "hsic_u" else "biased"
    return lambda: kmtests.independence_test(x, y, n_resamples=B, rng=SEED, statistic=stat)


def km_engine(test: str, x: np.ndarray, y: np.ndarray, B: int, repeats: int) -> tuple[float, dict]:
    """Time the permutation engine alone, and the pieces around it, on the same input."""
    est = resolve_estimator("kme")
    parts: dict[str, float] = {}
    gen = np.random.default_rng(SEED)
    if test == "mmd":
        z = np.vstack([x, y])
        parts["bandwidth"], kern = bu.best_of(
            lambda: resolve_kernel("gaussian", "median").fitted_to(z), repeats)
        parts["gram"], K = bu.best_of(lambda: kern.gram(z), repeats)
        pg = PooledGram.from_gram(K)
        n_x, N = x.shape[0], z.shape[0]
        plan = _resampling.plan_two_sample(n_x, y.shape[0], B, None)
        parts["draw_perms"], batches = bu.best_of(
            lambda: list(_resampling.permutation_batches(
                plan, np.random.default_rng(SEED), N, "split", n_x)), repeats)
        ident = np.arange(N, dtype=np.int64)[None, :]
        parts["observed"], _ = bu.best_of(
            lambda: mmd_statistics(pg, ident, n_x, est, True), repeats)
        engine, _ = bu.best_of(
            lambda: [mmd_statistics(pg, p, n_x, est, True) for p in batches], repeats)
    else:
        unbiased = test == "hsic_u"
        kx = resolve_kernel("gaussian", "median")

        def grams():
            return (kx.fitted_to(x).gram(x), kx.fitted_to(y).gram(y))

        parts["bandwidth+gram"], (K, L) = bu.best_of(grams, repeats)
        parts["centre"], pg = bu.best_of(lambda: PairedGrams.from_grams(K, L), repeats)
        n = x.shape[0]
        plan = _resampling.plan_independence(n, B, None)
        parts["draw_perms"], batches = bu.best_of(
            lambda: list(_resampling.permutation_batches(
                plan, np.random.default_rng(SEED), n, "perm")), repeats)
        engine, _ = bu.best_of(
            lambda: [hsic_statistics(pg, p, est, unbiased) for p in batches], repeats)
    del gen
    return engine, parts


# --------------------------------------------------------------------------- hyppo

def hyppo_call(test: str, x: np.ndarray, y: np.ndarray, reps: int,
               workers: int) -> Callable[[], Any]:
    from hyppo.independence import Hsic
    from hyppo.ksample import MMD

    if test == "mmd":
        return lambda: MMD().test(x, y, reps=reps, workers=workers, auto=False)
    return lambda: Hsic().test(x, y, reps=reps, workers=workers, auto=False)


def hyppo_time(test: str, x: np.ndarray, y: np.ndarray, B: int, workers: int,
               budget: float, force_full: bool, repeats: int) -> tuple[float, str]:
    """hyppo seconds for B permutations: measured, or extrapolated from 2 short runs."""
    r1 = 2
    t1, _ = bu.best_of(hyppo_call(test, x, y, r1, workers), 1)
    # a second point about 1.5 s later (at least 8 permutations)
    per_guess = max(t1 / (r1 + 1), 1e-4)
    r2 = int(min(B, max(r1 + 8, 1.5 / per_guess)))
    t2, _ = bu.best_of(hyppo_call(test, x, y, r2, workers), 1)
    slope = max((t2 - t1) / (r2 - r1), 0.0)
    est = t2 + (B - r2) * slope
    if r2 == B:
        return t2, "full (1 run)"
    if force_full or est <= budget:
        reps = repeats if est * repeats <= budget else 1
        t, _ = bu.best_of(hyppo_call(test, x, y, B, workers), reps)
        return t, f"full ({reps} run{'s' if reps > 1 else ''})"
    return est, f"~ est. from {r1},{r2} perms"


def warm_hyppo() -> None:
    x, y = make_data(30, 2, 0)
    for test in ("mmd", "hsic"):
        hyppo_call(test, x, y, 3, 1)()


# --------------------------------------------------------------------------- report

def fmt(v: float | None, spec: str = ".3f") -> str:
    return "-" if v is None else format(v, spec)


def print_table(rows: list[Row]) -> None:
    head = (f"{'test':7s} {'n':>5s} {'B':>5s} {'kmtests s':>10s} {'hyppo s':>9s} "
            f"{'ratio':>7s} {'bound s':>8s} {'km/bound':>8s} {'engine s':>9s} "
            f"{'eng/bound':>9s}  hyppo timing")
    print(head)
    print("-" * len(head))
    for r in rows:
        h = fmt(r.hyppo_s, ".2f")
        if r.hyppo_note.startswith("~"):
            h = "~" + h
        print(f"{r.test:7s} {r.n:5d} {r.B:5d} {r.kmtests_s:10.4f} {h:>9s} "
              f"{fmt(r.ratio, '.0f'):>7s} {r.bound_s:8.4f} {r.kmtests_s / r.bound_s:8.2f} "
              f"{r.engine_s:9.4f} {r.engine_s / r.bound_s:9.2f}  {r.hyppo_note}")


def measure_peaks(sizes: list[int], cores: int, label: str) -> dict[str, Any]:
    print(f"\nmeasuring machine peaks ({label}) ...", flush=True)
    out: dict[str, Any] = {
        "gf": bu.dgemm_gflops(), "gf1": bu.dgemm_gflops(threads=1),
        "bw_dram": bu.read_bandwidth(1 << 30, threads=cores),
        "bw_dram1": bu.read_bandwidth(1 << 30, threads=1), "bw_cache": {},
        "foreign_load": bu.foreign_load(0.5),
    }
    for n in sizes:
        nbytes = 2 * 8 * n * n
        # thread start-up dominates for small arrays: keep the better of 1 and all threads
        out["bw_cache"][n] = max(bu.read_bandwidth(nbytes, threads=cores),
                                 bu.read_bandwidth(nbytes, threads=1))
    print(f"DGEMM (4000^2, default BLAS threads): {out['gf']:.1f} GFLOP/s   "
          f"(1 thread: {out['gf1']:.1f})")
    print(f"read bandwidth, 1 GiB array, {cores} threads: {out['bw_dram']:.1f} GB/s   "
          f"(1 thread: {out['bw_dram1']:.1f})")
    print("read bandwidth, array of the size of the 2 HSIC matrices (cache-resident if "
          "it fits in L3): " + ", ".join(f"n={n}: {bw:.1f} GB/s"
                                         for n, bw in out["bw_cache"].items()))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[200, 500, 1000, 2000],
                    help="n per sample (default: 200 500 1000 2000)")
    ap.add_argument("--headline", type=int, default=1000, help="n of the target checks")
    ap.add_argument("--B", type=int, default=1000, help="permutations (default 1000)")
    ap.add_argument("--d", type=int, default=5, help="dimension (default 5)")
    ap.add_argument("--repeats", type=int, default=5, help="kmtests repeats (best of)")
    ap.add_argument("--tests", nargs="+", default=["mmd", "hsic", "hsic_u"],
                    choices=["mmd", "hsic", "hsic_u"])
    ap.add_argument("--hyppo-budget", type=float, default=60.0,
                    help="max seconds for one full hyppo measurement, else extrapolate")
    ap.add_argument("--full", action="store_true",
                    help="always run hyppo with all B permutations at the headline n")
    ap.add_argument("--no-hyppo", action="store_true")
    ap.add_argument("--no-parallel-hyppo", action="store_true",
                    help="skip hyppo workers=-1 at the headline n")
    ap.add_argument("--max-wait", type=float, default=120.0,
                    help="seconds to wait for other processes to go idle before each cell")
    ap.add_argument("--json", default="bench_permutation.json",
                    help="file name under benchmarks/results/ ('' to skip)")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")  # hyppo warns about few reps in the short runs

    info = bu.machine_summary()
    bu.print_machine(info)
    loads0 = bu.wait_quiet("start", args.max_wait)

    # ---- machine peaks (measured again at the end; the better of the two is used,
    # so that a busy moment at one end does not make the bounds look loose)
    cores = info["cores"] or 1
    peaks = [measure_peaks(sorted(set(args.sizes)), cores, "start")]

    # ---- warm-up (JIT compile, thread pools) excluded from the timings
    print("\nwarming up ...", flush=True)
    xs, ys = make_data(60, args.d, 1)
    for test in args.tests:
        km_call(test, xs, ys, 50)()
    if not args.no_hyppo:
        t = time.perf_counter()
        warm_hyppo()
        print(f"hyppo warm-up (numba compile or cache load): {time.perf_counter() - t:.1f} s")

    rows: list[Row] = []
    loads: list[float | None] = []
    hyppo_cache: dict[tuple[str, int], tuple[float, str]] = {}
    for n in args.sizes:
        x, y = make_data(n, args.d, SEED)
        for test in args.tests:
            loads.append(bu.wait_quiet(f"{test} n={n}", args.max_wait))
            km_call(test, x, y, min(args.B, 50))()  # warm caches at this size
            t_km, res = bu.best_of(km_call(test, x, y, args.B), args.repeats)
            t_eng, parts = km_engine(test, x, y, args.B, args.repeats)
            h, note = None, "skipped"
            if not args.no_hyppo:
                key = ("mmd" if test == "mmd" else "hsic", n)
                if key in hyppo_cache:
                    h, note = hyppo_cache[key]
                    note = "same hyppo run as the hsic row"
                else:
                    h, note = hyppo_cache[key] = hyppo_time(
                        key[0], x, y, args.B, 1, args.hyppo_budget,
                        args.full and n == args.headline, 3)
            row = Row(test, n, args.B, t_km, t_eng, h, note, math.nan, None,
                      extra={"parts": parts, "pvalue": float(res.pvalue)})
            rows.append(row)
            print(f"  {test:7s} n={n:5d}: kmtests {t_km:.4f} s (engine {t_eng:.4f} s, "
                  + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in parts.items())
                  + f"); hyppo {fmt(h, '.2f')} s [{note}]", flush=True)

    # ---- hyppo with all cores at the headline size
    par: dict[str, tuple[float, str]] = {}
    if not args.no_hyppo and not args.no_parallel_hyppo and args.headline in args.sizes:
        x, y = make_data(args.headline, args.d, SEED)
        hyppo_call("hsic", *make_data(30, 2, 0), 4, -1)()  # start the worker pool
        for test in sorted({("mmd" if t == "mmd" else "hsic") for t in args.tests}):
            par[test] = hyppo_time(test, x, y, args.B, -1, args.hyppo_budget,
                                   args.full, 1)

    # ---- bounds from the better of the start/end peak measurements
    peaks.append(measure_peaks(sorted(set(args.sizes)), cores, "end"))
    gf = max(p["gf"] for p in peaks)
    gf1 = max(p["gf1"] for p in peaks)
    bw_dram = max(p["bw_dram"] for p in peaks)
    bw_dram1 = max(p["bw_dram1"] for p in peaks)
    bw_cache = {n: max(p["bw_cache"][n] for p in peaks) for n in peaks[0]["bw_cache"]}
    for r in rows:
        if r.test == "mmd":
            r.bound_s = 2.0 * r.B * (2 * r.n) ** 2 / (gf * 1e9)
        else:
            nbytes = 2 * 8 * r.n * r.n
            r.bound_s = r.B * nbytes / (bw_dram * 1e9)
            r.bound_cache_s = r.B * nbytes / (bw_cache[r.n] * 1e9)

    # ---- report
    print(f"\n=== permutation tests, d = {args.d}, B = {args.B}; seconds (best of "
          f"{args.repeats} for kmtests) ===")
    print(f"bounds: MMD 2*B*N^2 flops / {gf:.1f} GFLOP/s (N = 2n); HSIC B * 16 n^2 bytes "
          f"(2 n x n float64 matrices) / {bw_dram:.1f} GB/s DRAM read (better of the start "
          f"and end measurements)")
    print_table(rows)
    print("\nHSIC bound with the cache-resident read rate instead of DRAM:")
    for r in rows:
        if r.bound_cache_s is not None:
            print(f"  {r.test:7s} n={r.n:5d}: {r.bound_cache_s:.4f} s  "
                  f"(kmtests/bound {r.kmtests_s / r.bound_cache_s:.2f}, engine/bound "
                  f"{r.engine_s / r.bound_cache_s:.2f})")
    if par:
        print("\nhyppo with workers=-1 (all cores) at n =", args.headline)
        for test, (t, note) in par.items():
            r1 = next((r for r in rows if r.test == test and r.n == args.headline), None)
            ratio = "" if r1 is None else f", ratio vs kmtests {t / r1.kmtests_s:.0f}x"
            print(f"  {test:5s}: {t:.2f} s [{note}]{ratio}")

    print("\ntargets at n =", args.headline)
    for r in rows:
        if r.n != args.headline:
            continue
        if r.test == "mmd":
            goal_ratio, goal_bound = 100, 2
        else:
            goal_ratio, goal_bound = 20, 3
        ok_r = r.ratio is not None and r.ratio >= goal_ratio
        ok_b = r.kmtests_s / r.bound_s <= goal_bound
        print(f"  {r.test:7s}: vs hyppo {fmt(r.ratio, '.0f')}x (goal >= {goal_ratio}x) "
              f"{'MET' if ok_r else 'NOT MET'}; kmtests/bound {r.kmtests_s / r.bound_s:.2f} "
              f"(goal <= {goal_bound}) {'MET' if ok_b else 'NOT MET'} "
              f"[engine alone {r.engine_s / r.bound_s:.2f}]")
    bu.check_quiet("end")

    if args.json:
        path = bu.save_json(args.json, {
            "machine": info, "dgemm_gflops": gf, "dgemm_gflops_1thread": gf1,
            "read_gbs_dram": bw_dram, "read_gbs_dram_1thread": bw_dram1,
            "read_gbs_cache": bw_cache, "peak_measurements": peaks, "args": vars(args),
            "rows": [asdict(r) | {"ratio": r.ratio} for r in rows],
            "hyppo_parallel": par, "foreign_load": [loads0, *loads],
            "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        })
        print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
