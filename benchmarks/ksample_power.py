"""Power and level of the k-sample tests, kmtests against dcor, hyppo and classical tests.

Every test is applied to the same data sets in each repetition (k = 3 samples); the
wall-clock seconds of each test call are recorded side by side in the same run.

Scenarios (``effect = 0`` is the null, the level):

* ``shift``: :func:`kmtests.datasets.k_sample_shift` (``k_sample_shift_k3``): three
  samples of N(0, I_d) of n points each, the last shifted by ``effect`` along the
  first axis (equal sizes);
* ``scale``: sizes (n/2, n, 3n/2); the first (smallest) sample is N(0, (1 + effect)^2
  I_d), the others N(0, I_d);
* ``mixture``: sizes (n/2, n, 3n/2); in the last (largest) sample the first
  coordinate is the mixture 0.5 N(-effect, 1) + 0.5 N(effect, 1) (the same mean,
  variance 1 + effect^2, bimodal for effect > 1), the other coordinates N(0, 1); the
  other samples N(0, I_d). (A mixture with the same mean *and* variance,
  0.5 N(-e, 1 - e^2) + 0.5 N(e, 1 - e^2), was tried first: at these sizes every test
  stays near its level with it, e.g. kmtests 0.10-0.38 at e = 0.97, n = 60, d = 1, and
  at the level in d = 5.)

Tests (alpha = 0.05, B = 199 permutations where the test permutes):

* ``kmtests gauss``: ``k_sample_test(*xs, n_resamples=B)`` (Gaussian kernel, median
  bandwidth of the pooled sample, U-form); ``kmtests dist``: ``kernel="distance"``;
  ``... V``: the same with ``statistic="biased"`` (V-form; with the distance kernel
  this is the DISCO between-sample statistic times N/W); ``kmtests gauss gamma``:
  ``method="gamma", statistic="biased"`` (no permutations);
* ``dcor energy``: ``dcor.homogeneity.energy_test(*xs, num_resamples=B)`` (the sum
  of the pairwise two-sample energy statistics, V-form);
* ``hyppo Dcorr``, ``hyppo Hsic``: ``hyppo.ksample.KSample("Dcorr" | "Hsic")
  .test(*xs)`` with hyppo's defaults (``auto=True``: chi-square approximation for
  N > 20; Hsic: Gaussian kernel, hyppo's median bandwidth of the pooled sample used
  for the labels too); ``hyppo Dcorr perm``, ``hyppo Hsic perm``: the same with
  ``auto=False, reps=B`` (permutations; hyppo's Hsic ignores ``random_state`` there,
  so numpy's global state is seeded first);
* classical: d = 1: ``scipy.stats.kruskal`` (Kruskal-Wallis), ``scipy.stats.f_oneway``
  (ANOVA F), ``scipy.stats.levene`` (Brown-Forsythe, median-centred; a scale test);
  d > 1: one-way MANOVA, Pillai's trace with its F approximation.

Raw p-values and seconds go to ``benchmarks/results/ksample_power_raw.csv``
(git-ignored), the table (power, Clopper-Pearson 95% interval, the 99% binomial band
of the level, mean seconds per test) to ``benchmarks/results/ksample_power.csv``.

Run from the repository root, in an environment with dcor and hyppo (neither is a
dependency of kmtests)::

    python -m venv /tmp/peers && /tmp/peers/bin/pip install -e . dcor hyppo
    /tmp/peers/bin/python benchmarks/ksample_power.py                  # ~15 min, 2 processes
    /tmp/peers/bin/python benchmarks/ksample_power.py --reps 20       # smoke run
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
ALPHA = 0.05
BASE_SEED = 20250101

#: (scenario, d) -> effect of the alternative (chosen from a 30-repetition pilot so that
#: the power at the smaller n is neither near 0 nor near 1)
EFFECTS: dict[tuple[str, int], float] = {
    ("shift", 1): 0.5, ("shift", 5): 0.6,
    ("scale", 1): 0.6, ("scale", 5): 0.5,
    ("mixture", 1): 1.0, ("mixture", 5): 1.5,
}
SCENARIOS = ("shift", "scale", "mixture")


def sizes_of(scenario: str, n: int) -> tuple[int, ...]:
    return (n, n, n) if scenario == "shift" else (n // 2, n, n + n // 2)


def draw(scenario: str, d: int, n: int, effect: float,
         gen: np.random.Generator) -> list[np.ndarray]:
    sizes = sizes_of(scenario, n)
    if scenario == "shift":
        from kmtests.datasets import k_sample_shift

        return list(k_sample_shift(3, d).sampler(n, effect, gen))
    xs = [gen.normal(size=(m, d)) for m in sizes]
    if scenario == "scale":
        xs[0] *= 1.0 + effect
    elif scenario == "mixture":
        m = sizes[-1]
        xs[-1][:, 0] += np.where(gen.random(m) < 0.5, -effect, effect)
    else:
        raise ValueError(scenario)
    return xs


def pillai(xs: list[np.ndarray]) -> float:
    """One-way MANOVA, Pillai's trace with its F approximation: the p-value."""
    z = np.vstack(xs)
    N, p, k = z.shape[0], z.shape[1], len(xs)
    mean = z.mean(axis=0)
    H = sum(len(x) * np.outer(x.mean(axis=0) - mean, x.mean(axis=0) - mean) for x in xs)
    E = sum((x - x.mean(axis=0)).T @ (x - x.mean(axis=0)) for x in xs)
    V = float(np.trace(np.linalg.solve(H + E, H)))
    s, m = min(p, k - 1), (abs(p - k + 1) - 1) / 2
    nn = (N - k - p - 1) / 2
    F = (2 * nn + s + 1) / (2 * m + s + 1) * V / (s - V)
    return float(stats.f.sf(F, s * (2 * m + s + 1), s * (2 * nn + s + 1)))


def tests_for(d: int, B: int) -> dict[str, Callable[[list[np.ndarray], int], float]]:
    import dcor
    from hyppo.ksample import KSample

    import kmtests

    def hyppo_perm(name: str) -> Callable[[list[np.ndarray], int], float]:
        def run(xs: list[np.ndarray], seed: int) -> float:
            np.random.seed(seed % 2**32)  # hyppo's Hsic draws from numpy's global state
            return KSample(name).test(*xs, reps=B, auto=False, random_state=seed).pvalue
        return run

    out: dict[str, Callable[[list[np.ndarray], int], float]] = {
        "kmtests gauss": lambda xs, s: kmtests.k_sample_test(
            *xs, n_resamples=B, rng=s, n_jobs=1).pvalue,
        "kmtests gauss V": lambda xs, s: kmtests.k_sample_test(
            *xs, statistic="biased", n_resamples=B, rng=s, n_jobs=1).pvalue,
        "kmtests dist": lambda xs, s: kmtests.k_sample_test(
            *xs, kernel="distance", n_resamples=B, rng=s, n_jobs=1).pvalue,
        "kmtests dist V": lambda xs, s: kmtests.k_sample_test(
            *xs, kernel="distance", statistic="biased", n_resamples=B, rng=s,
            n_jobs=1).pvalue,
        "kmtests gauss gamma": lambda xs, s: kmtests.k_sample_test(
            *xs, method="gamma", statistic="biased").pvalue,
        "dcor energy": lambda xs, s: dcor.homogeneity.energy_test(
            *xs, num_resamples=B, random_state=s).pvalue,
        "hyppo Dcorr": lambda xs, s: KSample("Dcorr").test(*xs).pvalue,
        "hyppo Hsic": lambda xs, s: KSample("Hsic").test(*xs).pvalue,
        "hyppo Dcorr perm": hyppo_perm("Dcorr"),
        "hyppo Hsic perm": hyppo_perm("Hsic"),
    }
    if d == 1:
        out["Kruskal-Wallis"] = lambda xs, s: stats.kruskal(*[x[:, 0] for x in xs]).pvalue
        out["ANOVA F"] = lambda xs, s: stats.f_oneway(*[x[:, 0] for x in xs]).pvalue
        out["Levene (median)"] = lambda xs, s: stats.levene(*[x[:, 0] for x in xs]).pvalue
    else:
        out["MANOVA Pillai"] = lambda xs, s: pillai(xs)
    return out


def seed_of(scenario: str, d: int, n: int, effect_index: int, rep: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([BASE_SEED, SCENARIOS.index(scenario), d, n, effect_index,
                                   rep])


def run_chunk(job: tuple[str, int, int, int, float, int, int, int]) -> list[dict[str, Any]]:
    """Repetitions ``[r0, r1)`` of one (scenario, d, n, effect): every test on each data set."""
    from threadpoolctl import threadpool_limits

    scenario, d, n, ei, effect, r0, r1, B = job
    warnings.simplefilter("ignore")
    rows = []
    with threadpool_limits(1):
        tests = tests_for(d, B)
        for rep in range(r0, r1):
            ss = seed_of(scenario, d, n, ei, rep)
            data_ss, test_ss = ss.spawn(2)
            xs = draw(scenario, d, n, effect, np.random.default_rng(data_ss))
            seed = int(test_ss.generate_state(1)[0])
            for name, fn in tests.items():
                t0 = time.perf_counter()
                p = float(fn(xs, seed))
                rows.append({"scenario": scenario, "d": d, "n": n,
                             "sizes": "/".join(str(len(x)) for x in xs), "effect": effect,
                             "rep": rep, "test": name, "pvalue": p,
                             "seconds": time.perf_counter() - t0})
    return rows


def warm_up(B: int) -> None:
    """Compile numba code (kmtests, hyppo) once per process before anything is timed."""
    warnings.simplefilter("ignore")
    gen = np.random.default_rng(0)
    for d in (1, 5):
        xs = [gen.normal(size=(12, d)) for _ in range(3)]
        for fn in tests_for(d, 19).values():
            fn(xs, 0)


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    a = (1 - level) / 2
    lo = stats.beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - a, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def level_band(reps: int, level: float = 0.99) -> tuple[int, int]:
    """Rejection counts inside the central `level` binomial band at alpha."""
    a = (1 - level) / 2
    return int(stats.binom.ppf(a, reps, ALPHA)), int(stats.binom.isf(a, reps, ALPHA))


def summarise(raw: pd.DataFrame) -> pd.DataFrame:
    rows = []
    keys = ["scenario", "d", "n", "sizes", "effect", "test"]
    for key, g in raw.groupby(keys, sort=False):
        reps, rej = len(g), int((g["pvalue"] <= ALPHA).sum())
        lo, hi = clopper_pearson(rej, reps)
        row = dict(zip(keys, key), reps=reps, rejections=rej, power=rej / reps,
                   ci_low=lo, ci_high=hi, mean_seconds=g["seconds"].mean(),
                   median_seconds=g["seconds"].median())
        if key[4] == 0.0:
            blo, bhi = level_band(reps)
            row.update(band99_low=blo / reps, band99_high=bhi / reps,
                       level_ok=bool(blo <= rej <= bhi))
        rows.append(row)
    return pd.DataFrame(rows)


def markdown(summary: pd.DataFrame) -> str:
    """Tables for the README: one per scenario and d; rows = tests, columns = (n, effect)."""
    out = []
    for (scenario, d), g in summary.groupby(["scenario", "d"], sort=False):
        cols = sorted(dict.fromkeys(zip(g["n"], g["sizes"], g["effect"])))
        head = " | ".join(f"{sz}, {'level' if e == 0 else f'e = {e:g}'}" for _, sz, e in cols)
        out.append(f"\n**{scenario}, d = {d}** (cells: rejection rate at 5%; "
                   "level cells outside the 99% band marked !)\n")
        out.append(f"| test | {head} | s / test (largest n) |")
        out.append("|---|" + "---:|" * (len(cols) + 1))
        big = max(g["n"])
        for test, t in g.groupby("test", sort=False):
            cells = []
            for n, _, e in cols:
                r = t[(t["n"] == n) & (t["effect"] == e)].iloc[0]
                mark = "" if e != 0 or r["level_ok"] else " !"
                cells.append(f"{r['power']:.3f}{mark}")
            sec = t[t["n"] == big]["mean_seconds"].mean()
            out.append(f"| {test} | " + " | ".join(cells) + f" | {sec:.4f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--sizes", default="20,60", help="n (per sample for 'shift'; the "
                    "middle sample for the unequal designs)")
    ap.add_argument("--dims", default="1,5")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--B", type=int, default=199)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=25)
    ap.add_argument("--tag", default="ksample_power")
    args = ap.parse_args(argv)
    # one thread per worker process: the workers import numba (kmtests, hyppo) after
    # this, and run_chunk limits BLAS with threadpoolctl
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "NUMBA_NUM_THREADS"):
        os.environ.setdefault(v, "1")

    sizes = [int(v) for v in args.sizes.split(",")]
    dims = [int(v) for v in args.dims.split(",")]
    jobs = []
    for scenario in args.scenarios.split(","):
        for d in dims:
            for ei, effect in enumerate((0.0, EFFECTS[(scenario, d)])):
                for n in sizes:
                    for r0 in range(0, args.reps, args.chunk):
                        jobs.append((scenario, d, n, ei, effect, r0,
                                     min(r0 + args.chunk, args.reps), args.B))
    jobs.sort(key=lambda j: -j[2])  # large n first: better load balance
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(args.workers, initializer=warm_up, initargs=(args.B,)) as ex:
        for i, chunk in enumerate(ex.map(run_chunk, jobs)):
            rows += chunk
            if (i + 1) % 20 == 0:
                print(f"  {i + 1}/{len(jobs)} chunks, {time.perf_counter() - t0:.0f} s",
                      flush=True)
    raw = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    raw.to_csv(RESULTS / f"{args.tag}_raw.csv", index=False)
    summary = summarise(raw)
    summary.to_csv(RESULTS / f"{args.tag}.csv", index=False, float_format="%.6g")
    print(markdown(summary))
    blo, bhi = level_band(args.reps)
    print(f"\n{args.reps} repetitions; 99% band of the level: {blo}-{bhi} rejections "
          f"({blo / args.reps:.3f}-{bhi / args.reps:.3f}); wall time "
          f"{time.perf_counter() - t0:.0f} s with {args.workers} processes")


if __name__ == "__main__":
    main()
