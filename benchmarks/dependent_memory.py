"""The level and power of ``drift_test``'s default, ``memory="auto"`` (issue 30, eighth
session): block permutations of the automatic length, or the self-normalised kernel drift
test with an ARFIMA(1, d, 0) null where the Whittle fit within the windows finds long
memory or a root near one (:mod:`kmtests._longmemory`).

For every data set of a cell it keeps the fit and the p-values of both paths,
``memory="short"`` and ``memory="long"`` (499 draws, ``rng`` = the data set's index), in
``results/dependent_memory/``. The default's p-value is the one of the path the fit
chooses (:func:`kmtests._longmemory.is_long_memory`), the very p-value
``drift_test(series, split, n_resamples=499, rng=i)`` returns; ``--table`` applies the
rule to every kept cell and writes ``results/dependent_memory.csv`` with the 99% binomial
band of 5%. The series are those of the level tables (``dependent_streams.py``;
``--tag heldout`` draws another set). Run from the repository root::

    nice -n 10 .venv/bin/python benchmarks/dependent_memory.py --n 200 \\
        --cell arfima,0,300 --cell ar0.95,0,300 --cell ar0.8,0.75,300
    .venv/bin/python benchmarks/dependent_memory.py --table
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

from dependent_streams import process, seed_of  # noqa: E402

from kmtests import SerialDependenceWarning  # noqa: E402
from kmtests._longmemory import ArfimaFit, is_long_memory  # noqa: E402
from kmtests.timeseries import _arfima_of, drift_test  # noqa: E402

warnings.simplefilter("ignore", SerialDependenceWarning)

ALPHA, DRAWS = 0.05, 499
RESULTS = Path(__file__).resolve().parent / "results"
FOLDER = RESULTS / "dependent_memory"


def cell(proc: str, n: int, shift: float, reps: int, tag: str) -> pd.DataFrame:
    """Every data set's fit and the p-values of both paths, with their CPU seconds."""
    gen = np.random.default_rng(seed_of(tag, proc, n, "windows", shift))
    rows = []
    for i in range(reps):
        z = process(proc, gen, n)
        z[n // 2:] += shift
        c0 = time.process_time()
        fit = _arfima_of(z, n // 2)[2]     # the fit drift_test makes
        c1 = time.process_time()
        short = drift_test(z, n // 2, n_resamples=DRAWS, rng=i, memory="short").pvalue
        c2 = time.process_time()
        long = drift_test(z, n // 2, n_resamples=DRAWS, rng=i, memory="long").pvalue
        c3 = time.process_time()
        rows.append({"phi": fit.phi, "d": fit.d, "p_short": short, "p_long": long,
                     "cpu_fit": c1 - c0, "cpu_short": c2 - c1, "cpu_long": c3 - c2})
    frame = pd.DataFrame(rows)
    FOLDER.mkdir(parents=True, exist_ok=True)
    frame.to_csv(FOLDER / f"both_{tag}_{proc}_n{n}_shift{shift:g}.csv", index=False,
                 float_format="%.5g")
    return frame


def summary(frame: pd.DataFrame) -> dict[str, Any]:
    """The default's rejections (the rule applied to each data set), and each path's."""
    switch = np.array([is_long_memory(ArfimaFit(p, d)) for p, d in zip(frame.phi, frame.d)])
    p = np.where(switch, frame.p_long, frame.p_short)
    reps = len(frame)
    lo, hi = stats.binom.ppf(0.005, reps, ALPHA), stats.binom.ppf(0.995, reps, ALPHA)
    cpu = frame.cpu_fit + np.where(switch, frame.cpu_long, frame.cpu_short)
    return {"datasets": reps, "default": int(np.sum(p <= ALPHA)),
            "short": int(np.sum(frame.p_short <= ALPHA)),
            "long": int(np.sum(frame.p_long <= ALPHA)),
            "switched": int(switch.sum()), "band_lo": int(lo), "band_hi": int(hi),
            "cpu_s_default": round(float(cpu.mean()), 4),
            "cpu_s_short": round(float(frame.cpu_short.mean()), 4)}


#: the rules compared when the default was chosen (``--rules``): which data sets take the
#: self-normalised test, from the fit
RULES = {
    "never (memory='short')": lambda f: np.zeros(len(f), dtype=bool),
    "always (memory='long')": lambda f: np.ones(len(f), dtype=bool),
    "phi > 0.9": lambda f: ((f.d > 0.15) & (f.phi < 0.3)) | (f.phi > 0.9),
    "phi > 0.85": lambda f: ((f.d > 0.15) & (f.phi < 0.3)) | (f.phi > 0.85),
    "phi > 0.85, d > -0.1": lambda f: ((f.d > 0.15) & (f.phi < 0.3))
    | ((f.phi > 0.85) & (f.d > -0.1)),
    "phi > 0.85, d > -0.2 (default)": lambda f: ((f.d > 0.15) & (f.phi < 0.3))
    | ((f.phi > 0.85) & (f.d > -0.2)),
    "phi > 0.8, d > -0.2": lambda f: ((f.d > 0.15) & (f.phi < 0.3))
    | ((f.phi > 0.8) & (f.d > -0.2)),
}


def rules() -> str:
    """Every kept cell's rejections under each rule of :data:`RULES` (the long-memory
    part, ``d > 0.15`` with ``phi < 0.3``, is in every rule but the first two)."""
    cells, cols = [], list(RULES)
    for path in sorted(FOLDER.glob("both_*.csv")):
        tag, proc, n, shift = re.fullmatch(r"both_(\w+?)_(.+)_n(\d+)_shift([\d.]+)",
                                           path.stem).groups()
        f = pd.read_csv(path)
        row = [tag, proc, n, shift]
        for rule in RULES.values():
            p = np.where(rule(f), f.p_long, f.p_short)
            k = int(np.sum(p <= ALPHA))
            bad = float(shift) == 0 and not 6 <= k <= 25
            row.append(f"{k}{' *' if bad else ''}")
        cells.append(row)
    head = "| data | process | n | shift | " + " | ".join(cols) + " |"
    rule = "|---|---|---:|---:|" + "---:|" * len(cols)
    return "\n".join([head, rule] + ["| " + " | ".join(r) + " |" for r in cells])


def table() -> pd.DataFrame:
    rows = []
    for path in sorted(FOLDER.glob("both_*.csv")):
        tag, proc, n, shift = re.fullmatch(r"both_(\w+?)_(.+)_n(\d+)_shift([\d.]+)",
                                           path.stem).groups()
        rows.append({"data": tag, "process": proc, "n": int(n), "shift": float(shift),
                     **summary(pd.read_csv(path))})
    out = pd.DataFrame(rows).sort_values(["data", "shift", "n", "process"])
    out.to_csv(RESULTS / "dependent_memory.csv", index=False)
    return out


def markdown(frame: pd.DataFrame) -> str:
    """The table for ``benchmarks/README.md``: ``*`` marks a null count outside the band."""
    lines = ["| data | process | n | shift | default (`memory=\"auto\"`) | `memory=\"short\"` "
             "| `memory=\"long\"` | self-normalised | CPU s a test, default (short) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in frame.itertuples():
        def cnt(k: int) -> str:
            out = f"{k}/{r.datasets}"
            return out + (" *" if r.shift == 0 and not r.band_lo <= k <= r.band_hi else "")
        lines.append(f"| {r.data} | {r.process} | {r.n} | {r.shift:g} | {cnt(r.default)} "
                     f"| {cnt(r.short)} | {cnt(r.long)} | {r.switched}/{r.datasets} "
                     f"| {r.cpu_s_default:.3f} ({r.cpu_s_short:.3f}) |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--cell", action="append", default=[],
                    help="process,shift,datasets (repeatable)")
    ap.add_argument("--tag", default="auto")
    ap.add_argument("--table", action="store_true",
                    help="the default's rejections on every kept cell")
    ap.add_argument("--rules", action="store_true",
                    help="every kept cell's rejections under each rule compared")
    args = ap.parse_args()
    for spec in args.cell:
        proc, shift, reps = spec.split(",")
        s = summary(cell(proc, args.n, float(shift), int(reps), args.tag))
        print(f"{args.tag} {proc} n={args.n} shift={shift}: {s}", flush=True)
    if args.table:
        print(markdown(table()))
    if args.rules:
        print(rules())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
