"""Level of the linear-time MMD tests at small n: normal vs Student-t reference.

The linear-time statistics (``engine="block"``, the B-test, and ``engine="linear"``,
``MMD^2_l``) are means of ``K`` i.i.d. terms; their p-value is ``P(R >= T / se)``
with ``se = sd(terms) / sqrt(K)`` and ``R`` either the standard normal
(``NormalMethod(reference="normal")``, the published test) or Student's t with
``K - 1`` degrees of freedom (``NormalMethod(reference="t")``, the default).
This script measures the rejection rate of both under H0, through the package
itself (``kmtests.two_sample_test(x, y, engine=..., method=NormalMethod(...))``,
Gaussian kernel with the median heuristic, default block size
``b = max(2, floor(sqrt(n)))``):

* laws: N(0, I_2), t_3 (independent coordinates) and Exp(1) (independent
  coordinates), x and y from the same law, d = 2;
* n = 4, 6, 8, 10, 16, 24, 40, 100, 400 points per sample
  (linear: K = n / 2 pairs; block: K = floor(n / b) blocks);
* ``--reps`` data sets per (law, n) (default 3000), seeded per cell
  (``seed_of(law, n)``); every data set is tested by both statistics and both
  references, so the four rates of a cell are paired;
* alpha = 0.05; rejection rates with Clopper-Pearson 95% intervals.

Writes ``benchmarks/results/linear_time_level.csv`` and prints a Markdown table.

Run from the repository root (one process, BLAS and numba on one thread)::

    .venv/bin/python benchmarks/linear_time_level.py                # 3000 data sets per cell
    .venv/bin/python benchmarks/linear_time_level.py --reps 200     # smoke run
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
import zlib  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from statsmodels.stats.proportion import proportion_confint  # noqa: E402

from kmtests import NormalMethod, two_sample_test  # noqa: E402
from kmtests.statistics.linear_time import default_block_size  # noqa: E402

HERE = Path(__file__).resolve().parent

LAWS = {
    "normal": lambda g, size: g.normal(size=size),
    "t3": lambda g, size: g.standard_t(3, size=size),
    "exp": lambda g, size: g.exponential(size=size),
}
NS = (4, 6, 8, 10, 16, 24, 40, 100, 400)
KINDS = ("linear", "block")
REFERENCES = ("normal", "t")
D = 2
ALPHA = 0.05


def seed_of(law: str, n: int) -> int:
    return 20250000 + zlib.crc32(f"{law}/{n}".encode()) % 10000


def n_terms(kind: str, n: int) -> tuple[int, int]:
    """``(b, K)``: the block size (2 for the pairs of the linear statistic) and the
    number of terms."""
    if kind == "linear":
        return 2, n // 2
    b = default_block_size(n)
    return b, n // b


def run_cell(law: str, n: int, reps: int) -> list[dict[str, object]]:
    gen = np.random.default_rng(seed_of(law, n))
    methods = {r: NormalMethod(reference=r) for r in REFERENCES}
    rej = {(k, r): 0 for k in KINDS for r in REFERENCES}
    psum = {(k, r): 0.0 for k in KINDS for r in REFERENCES}
    n_warn = {k: 0 for k in KINDS}
    for _ in range(reps):
        x, y = LAWS[law](gen, (n, D)), LAWS[law](gen, (n, D))
        for kind in KINDS:
            for ref, meth in methods.items():
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    res = two_sample_test(x, y, engine=kind, method=meth)
                if ref == "t":
                    n_warn[kind] += bool(w)
                rej[kind, ref] += bool(res.pvalue <= ALPHA)
                psum[kind, ref] += res.pvalue
                b, K = n_terms(kind, n)
                got = res.details.get("n_blocks", res.details.get("n_pairs"))
                if got != K:  # the design's K must be the package's
                    raise RuntimeError(f"{kind}, n = {n}: K = {got}, expected {K}")
    rows = []
    for kind in KINDS:
        b, K = n_terms(kind, n)
        for ref in REFERENCES:
            r = rej[kind, ref]
            lo, hi = proportion_confint(r, reps, alpha=0.05, method="beta")
            rows.append({"law": law, "statistic": kind, "n": n, "b": b, "K": K,
                         "reference": ref, "alpha": ALPHA, "repetitions": reps,
                         "rejections": r, "level": r / reps, "ci_low": lo, "ci_high": hi,
                         "mean_pvalue": psum[kind, ref] / reps,
                         "warned": n_warn[kind]})
    return rows


def markdown(tab: pd.DataFrame) -> str:
    """Rows: (statistic, n, K); columns: law x reference; cells: level [95% CI]."""
    cols = [(law, ref) for law in LAWS for ref in REFERENCES]
    lines = ["| statistic | n | K | " + " | ".join(f"{law}, {ref}" for law, ref in cols) + " |",
             "|---|---:|---:|" + "---|" * len(cols)]
    for kind in KINDS:
        for n in sorted(tab["n"].unique()):
            g = tab[(tab["statistic"] == kind) & (tab["n"] == n)].set_index(["law", "reference"])
            K = int(g["K"].iloc[0])
            cells = [f"{g.loc[c, 'level']:.3f} [{g.loc[c, 'ci_low']:.3f}, "
                     f"{g.loc[c, 'ci_high']:.3f}]" for c in cols]
            lines.append(f"| {kind} | {n} | {K} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3000, help="data sets per (law, n)")
    ap.add_argument("--laws", default=",".join(LAWS))
    ap.add_argument("--ns", default=",".join(map(str, NS)))
    ap.add_argument("--out", default=str(HERE / "results" / "linear_time_level.csv"))
    args = ap.parse_args(argv)
    laws = [s.strip() for s in args.laws.split(",") if s.strip()]
    ns = [int(s) for s in args.ns.split(",") if s.strip()]
    rows: list[dict[str, object]] = []
    t0 = time.time()
    for law in laws:
        for n in ns:
            t1 = time.time()
            rows += run_cell(law, n, args.reps)
            lv = " ".join(f"{r['statistic']}/{r['reference']}={r['level']:.3f}"
                          for r in rows[-4:])
            print(f"{law} n={n}: {lv} ({time.time() - t1:.0f} s)", flush=True)
    tab = pd.DataFrame(rows)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tab.to_csv(out, index=False, float_format="%.4g")
    print(f"\n{args.reps} data sets per cell, alpha = {ALPHA}, d = {D}, "
          f"{time.time() - t0:.0f} s\n")
    print(markdown(tab))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
