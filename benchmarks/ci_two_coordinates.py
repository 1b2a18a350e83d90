"""Where ``bandwidth_z="auto"`` starts per-coordinate bandwidths (issue 29): the level of
one searched bandwidth (``"isotropic"``) against per-regression ARD with undersmoothing
(``"ard_each", undersmooth=10``, what ``"auto"`` runs from three coordinates of z) on null
designs with a z of two coordinates that ``ci_power.py``'s ``inter2`` and ``tz2`` do not
cover: one relevant and one irrelevant coordinate, Gaussian (``irr2``) or Student t_3
(``irr2t``); a sharp dependence on one coordinate (``sharp2``: u = 2 z1); an oblique
index of heavy-tailed coordinates (``obl2``: u = (z1 - z2) / sqrt 2). In each,
x = sin(u) + 0.4 e and y = cos(u) + 0.4 e' (x and y independent given z), n = 200, and
both configurations test the same data sets (seeded by design and index).

Writes ``benchmarks/results/ci_two_coordinates.csv`` and prints a Markdown table with
the 99% binomial band of 5%. Run from the repository root::

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/ci_two_coordinates.py --reps 200
"""

from __future__ import annotations

import argparse
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

import kmtests

HERE = Path(__file__).resolve().parent
DESIGNS = ("irr2", "irr2t", "sharp2", "obl2")
CONFIGS = {"isotropic": {"bandwidth_z": "isotropic"},
           "ard_each, undersmooth=10": {"bandwidth_z": "ard_each", "undersmooth": 10.0}}


def design(name: str, gen: np.random.Generator, n: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    heavy = name in ("irr2t", "obl2")
    z = gen.standard_t(3, size=(n, 2)) if heavy else gen.normal(size=(n, 2))
    u = {"irr2": z[:, 0], "irr2t": z[:, 0], "sharp2": 2.0 * z[:, 0],
         "obl2": (z[:, 0] - z[:, 1]) / np.sqrt(2.0)}[name]
    x = np.sin(u) + 0.4 * gen.normal(size=n)
    y = np.cos(u) + 0.4 * gen.normal(size=n)
    return x, y, z


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    rows = []
    for name in args.designs:
        hits, cpu = dict.fromkeys(CONFIGS, 0), dict.fromkeys(CONFIGS, 0.0)
        for i in range(args.reps):
            gen = np.random.default_rng(zlib.crc32(f"{name}/{i}".encode()))
            x, y, z = design(name, gen, args.n)
            for label, kw in CONFIGS.items():
                c0 = time.process_time()
                p = kmtests.conditional_independence_test(x, y, z, **kw).pvalue
                cpu[label] += time.process_time() - c0
                hits[label] += p <= 0.05
        for label in CONFIGS:
            rows.append({"design": name, "config": label, "n": args.n, "reps": args.reps,
                         "rejections": hits[label], "cpu_per_test": cpu[label] / args.reps})
        print(name, hits, flush=True)
    out = pd.DataFrame(rows)
    out.to_csv(HERE / "results" / "ci_two_coordinates.csv", index=False, float_format="%.4g")
    lo, hi = (int(stats.binom.ppf(q, args.reps, 0.05)) for q in (0.005, 0.995))
    print(f"\n| configuration | {' | '.join(args.designs)} | CPU s per test |")
    print("|---|" + "---:|" * (len(args.designs) + 1))
    for label in CONFIGS:
        sub = out[out["config"] == label].set_index("design")
        cells = [f"{r}/{args.reps}" + ("" if lo <= r <= hi else " *")
                 for r in sub.loc[args.designs, "rejections"]]
        print(f"| {label} | {' | '.join(cells)} | {sub['cpu_per_test'].mean():.3f} |")
    print(f"\n(* outside the 99% band {lo}-{hi} of Bin({args.reps}, 0.05))")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
