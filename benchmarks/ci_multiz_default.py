"""The conditional test's default on a z of three or more coordinates (issue 29, third
session): per-regression ARD bandwidths with ``lam`` undersmoothed by 10 up to
``undersmooth_max_df = 0.35`` of ``n - 1`` degrees of freedom, against one searched
bandwidth (``bandwidth_z="isotropic"``, the former default) and against undersmoothing
up to the search's own bound (``undersmooth_max_df=0.5``: the default as first made, in
this session's commit 7510ed9), on the null and alternative designs of
``ci_level.py`` (``index3``, ``index5``, ``pnl3``, ``pnl5``: seeded as there) and
``ci_power.py --scenarios multi`` (``inter*``, ``tz*``: seeded as there, alternatives at
``dep = 0.1``). ``--first`` starts at another data set (``--first 300``: data sets no
configuration was chosen on).

Writes ``benchmarks/results/ci_multiz_default.csv`` (one row per cell, configuration and
range of data sets; rows of a repeated key replaced) and prints the rows. Run from the
repository root::

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/ci_multiz_default.py \\
        --cells index3,pnl3 --reps 300 --configs default,isotropic
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import ci_level as lv
from dependent_streams import merge_rows
import kmtests
from kmtests.estimators import ConditionalMeanEmbedding

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "ci_multiz_default.csv"


def config(name: str) -> dict[str, Any]:
    if name == "default":
        return {}
    if name == "isotropic":
        return {"bandwidth_z": "isotropic"}
    if name == "search-bound":   # undersmoothing up to the search's bound, 0.5 (n - 1)
        return {"statistic": _kci_with(ConditionalMeanEmbedding(undersmooth=10.0,
                                                                 undersmooth_max_df=0.5))}
    raise SystemExit(f"unknown configuration {name!r}")


def _kci_with(regression: ConditionalMeanEmbedding) -> Any:
    from kmtests.kernels import Gaussian
    from kmtests.statistics.kci import KCI

    return KCI(Gaussian(), Gaussian(), Gaussian(), bandwidth_z="ard_each",
               regression=regression)


def cell(scenario: str, dep: float, first: int, reps: int, name: str) -> dict[str, Any]:
    battery = scenario.startswith(("index", "pnl"))
    hits, cpu = 0, 0.0
    for rep in range(first, first + reps):
        seed = (lv.seed_of(scenario, 200, dep, rep) if battery
                else lv.seed_of("power", scenario, 200, dep, rep))
        x, y, z = lv.draw(scenario, np.random.default_rng(seed), 200, dep)
        c0 = time.process_time()
        hits += kmtests.conditional_independence_test(x, y, z, **config(name)).pvalue <= 0.05
        cpu += time.process_time() - c0
    return {"scenario": scenario, "dep": dep, "config": name, "first": first, "reps": reps,
            "rejections": hits, "rate": hits / reps, "cpu_per_test": cpu / reps}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cells", required=True, help="comma-separated scenarios")
    ap.add_argument("--dep", type=float, default=0.0, help="0: the null; 0.1: power")
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--configs", default="default")
    ap.add_argument("--out", type=Path, default=OUT, help="the CSV (one per process when "
                    "several run at once; concatenate them afterwards)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    rows = []
    for scenario in args.cells.split(","):
        for name in args.configs.split(","):
            row = cell(scenario, args.dep, args.first, args.reps, name)
            print(row, flush=True)
            rows.append(row)
    merge_rows(args.out, rows, ("scenario", "dep", "config", "first", "reps"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
