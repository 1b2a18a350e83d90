"""MMDAgg with swaps against permutations and kerneltests: level and power on the same data.

Each data set is drawn once (seeded by design and index) and tested by kmtests'
``aggregated_two_sample_test`` with permutations and with ``method="swap"`` (10 Gaussian
bandwidths, B draws), and by kerneltests' ``mmdagg`` (wild bootstrap, B1 = B2 = B, 10
Gaussian bandwidths) run in its own environment (``--kt-python``; the data go through
an .npz file, nothing of it is imported here). Rejections at 5% with Clopper-Pearson
intervals.

Designs (n per sample, d = 5): ``null-normal`` N(0, I) against N(0, I); ``null-t3``
Student t_3 against t_3; ``shift`` a mean shift of 0.35 in the first coordinate;
``scale`` the first coordinate's standard deviation 1.5; ``mixture`` y from a mixture
of N(0, I) and N(2 e_1, I) with weight 0.2.

Run::

    .venv/bin/python benchmarks/mmdagg_swap_power.py --reps 200 --n 100 \\
        --kt-python /work/peers-venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

HERE = Path(__file__).resolve().parent

DESIGNS = ("null-normal", "null-t3", "shift", "scale", "mixture")

_KT = """
import sys, numpy as np
from kt.mmdagg import mmdagg
d = np.load(sys.argv[1]); B = int(sys.argv[2]); out = []
for i in range(d["x"].shape[0]):
    out.append(int(mmdagg(d["x"][i], d["y"][i], kernel="gaussian", number_bandwidths=10,
                          B1=B, B2=B, seed=i)))
print(" ".join(map(str, out)))
"""


def draw(design: str, i: int, n: int, d: int = 5) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng([DESIGNS.index(design), i])
    if design == "null-t3":
        return g.standard_t(3, size=(n, d)), g.standard_t(3, size=(n, d))
    x, y = g.normal(size=(n, d)), g.normal(size=(n, d))
    if design == "shift":
        y[:, 0] += 0.35
    elif design == "scale":
        y[:, 0] *= 1.5
    elif design == "mixture":
        y[g.random(n) < 0.2, 0] += 2.0
    return x, y


def main(argv: list[str] | None = None) -> int:
    import kmtests

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--B", type=int, default=500)
    ap.add_argument("--designs", default=",".join(DESIGNS))
    ap.add_argument("--kt-python", default=None)
    ap.add_argument("--out", default=str(HERE / "results" / "mmdagg_swap_power.csv"))
    args = ap.parse_args(argv)
    rows = []
    for design in args.designs.split(","):
        data = [draw(design, i, args.n) for i in range(args.reps)]
        rej: dict[str, list[int]] = {}
        for name, method in (("kmtests permutations", "permutation"),
                             ("kmtests swaps", "swap")):
            t0 = time.process_time()
            rej[name] = [int(kmtests.aggregated_two_sample_test(
                x, y, method=method, n_resamples=args.B, rng=i, n_jobs=1).pvalue <= 0.05)
                for i, (x, y) in enumerate(data)]
            print(design, name, sum(rej[name]), f"{time.process_time() - t0:.1f} CPU s",
                  flush=True)
        if args.kt_python:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "d.npz"
                np.savez(path, x=np.stack([x for x, _ in data]),
                         y=np.stack([y for _, y in data]))
                out = subprocess.run([args.kt_python, "-c", _KT, str(path), str(args.B)],
                                     capture_output=True, text=True, check=True,
                                     env={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                                          "PATH": "/usr/bin:/bin"})
            rej["kerneltests wild bootstrap"] = [int(v) for v in out.stdout.split()]
            print(design, "kerneltests", sum(rej["kerneltests wild bootstrap"]), flush=True)
        for name, r in rej.items():
            k, R = sum(r), len(r)
            lo, hi = stats.binomtest(k, R).proportion_ci(0.95)
            rows.append({"design": design, "method": name, "rejections": k, "reps": R,
                         "rate": k / R, "ci_low": lo, "ci_high": hi})
    tab = pd.DataFrame(rows)
    tab.to_csv(args.out, index=False, float_format="%.4g")
    piv = tab.pivot(index="method", columns="design", values="rejections")
    print(piv.to_string())
    print(json.dumps({"n": args.n, "B": args.B, "reps": args.reps}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
