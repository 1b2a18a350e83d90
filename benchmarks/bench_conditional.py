"""Speed of the conditional independence test per call, against causal-learn's KCI.

Side by side in one process, on the same data (x, y, z one-dimensional, x and y
dependent on z only), n = 200, 500, 1000, 2000:

* ``causal-learn KCI_CInd()`` (fixed widths and ridge, gamma null) and
  ``KCI_CInd(use_gp=True)`` (its tuned variant: Gaussian-process marginal likelihood
  for the widths and the ridge; n <= 1000, it takes minutes above);
* ``kmtests fixed``: ``conditional_independence_test`` with causal-learn's settings
  (its widths, ``lam = 1e-3 / n``; the same statistic and gamma p-value);
* ``kmtests tuned``: the default (lam and the bandwidth on z tuned by GCV among 5
  candidate bandwidths, gamma null), cache off (every call decomposes z's Gram
  matrices), and ``cached``: the same call again (the decompositions of z reused, as
  in a causal-discovery run that conditions many tests on z);
* ``kmtests rff``: ``engine="rff"`` (features), tuned.

Three machine states: ``quiet`` and ``busy`` (one other process spinning on one core,
as on a laptop or shared server), with the default BLAS threads (each library
decides; kmtests limits its own dense algebra to one thread below n = 2000),
wall-clock seconds; and ``cpu1``: every BLAS library limited to one thread for both
contenders and the CPU seconds of the calling process (``time.process_time``: the
time on an idle core, little affected by what else the machine runs — the state to
compare on a shared machine). The median of `--repeats` calls. Needs causal-learn (``pip
install causal-learn``).

Run::

    .venv/bin/python benchmarks/bench_conditional.py            # all sizes, both states
    .venv/bin/python benchmarks/bench_conditional.py --n 200,500 --repeats 3
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent



def data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gen = np.random.default_rng(seed)
    z = gen.normal(size=(n, 1))
    x = np.sin(2 * z) + 0.3 * gen.normal(size=(n, 1))
    y = np.cos(2 * z) + 0.3 * gen.normal(size=(n, 1))
    return x, y, z


def width(n: int) -> float:
    """causal-learn's empirical width (d_z = 1)."""
    return 1.2 if n < 200 else 0.7 if n < 1200 else 0.4


def contenders(n: int) -> dict[str, Callable[[Any, Any, Any], float]]:
    from causallearn.utils.KCI.KCI import KCI_CInd

    from kmtests import conditional_independence_test as ci
    from kmtests.estimators.conditional import clear_cache

    w = width(n)
    out: dict[str, Callable[[Any, Any, Any], float]] = {
        "causal-learn KCI": lambda x, y, z: KCI_CInd().compute_pvalue(x, y, z)[0],
        "kmtests fixed": lambda x, y, z: ci(x, y, z, bandwidth_x=w, bandwidth_y=w,
                                           bandwidth_z=w, lam=1e-3 / n, cache=False).pvalue,
        "kmtests tuned": lambda x, y, z: ci(x, y, z, cache=False).pvalue,
        "kmtests tuned, cached": lambda x, y, z: ci(x, y, z).pvalue,
        "kmtests rff": lambda x, y, z: ci(x, y, z, engine="rff", rng=0).pvalue,
    }
    if n <= 1000:
        out["causal-learn KCI use_gp"] = (
            lambda x, y, z: KCI_CInd(use_gp=True).compute_pvalue(x, y, z)[0])
    clear_cache()
    return out


def run(ns: list[int], repeats: int, states: list[str]) -> pd.DataFrame:
    from threadpoolctl import threadpool_limits

    from _benchutil import machine_state
    from kmtests.engines import _loop

    rows = []
    single_below = _loop.BLAS_SINGLE_BELOW
    for state in states:
        clock = time.process_time if state == "cpu1" else time.perf_counter
        limit = threadpool_limits(1) if state == "cpu1" else None
        if state == "cpu1":  # kmtests' own choice of threads off too
            _loop.BLAS_SINGLE_BELOW = 10**9
        try:
            with machine_state(state):
                for n in ns:
                    x, y, z = data(n)
                    tests = contenders(n)
                    tests["kmtests tuned, cached"](x, y, z)  # fills the cache for "cached"
                    for name, fn in tests.items():
                        fn(x, y, z)  # warm-up (imports, compilation)
                        times = []
                        for _ in range(repeats):
                            t0 = clock()
                            p = fn(x, y, z)
                            times.append(clock() - t0)
                        rows.append({"state": state, "n": n, "test": name, "pvalue": float(p),
                                     "seconds": float(np.median(times)), "repeats": repeats})
                        print(f"{state:5s} n={n:5d} {name:28s} {np.median(times):8.3f} s  "
                              f"p = {p:.3f}", flush=True)
        finally:
            if limit is not None:
                limit.restore_original_limits()
            _loop.BLAS_SINGLE_BELOW = single_below
    return pd.DataFrame(rows)


def markdown(tab: pd.DataFrame) -> str:
    lines = []
    for state, g in tab.groupby("state", sort=False):
        piv = g.pivot(index="n", columns="test", values="seconds")
        cols = list(piv.columns)
        lines.append(f"\n{state}:\n")
        lines.append("| n | " + " | ".join(cols) + " | KCI / kmtests fixed | "
                     "use_gp / kmtests tuned |")
        lines.append("|---:|" + "---:|" * (len(cols) + 2))
        for n, r in piv.iterrows():
            fixed = r["causal-learn KCI"] / r["kmtests fixed"]
            gp = (r["causal-learn KCI use_gp"] / r["kmtests tuned"]
                  if "causal-learn KCI use_gp" in r and np.isfinite(r["causal-learn KCI use_gp"])
                  else float("nan"))
            lines.append(f"| {n} | " + " | ".join(f"{r[c]:.3g}" for c in cols)
                         + f" | {fixed:.1f}x | {gp:.1f}x |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", default="200,500,1000,2000")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--states", default="quiet,busy")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_conditional.csv"))
    args = ap.parse_args(argv)
    tab = run([int(v) for v in args.n.split(",")], args.repeats, args.states.split(","))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    tab.to_csv(args.out, index=False, float_format="%.4g")
    print(markdown(tab))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
