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

from dependent_streams import windows_series  # noqa: E402

from kmtests import SerialDependenceWarning  # noqa: E402
from kmtests._longmemory import ArfimaFit, is_long_memory  # noqa: E402
from kmtests.timeseries import _arfima_of, drift_test  # noqa: E402

warnings.simplefilter("ignore", SerialDependenceWarning)

ALPHA, DRAWS = 0.05, 499
RESULTS = Path(__file__).resolve().parent / "results"
FOLDER = RESULTS / "dependent_memory"


def _cell_of(path: Path) -> tuple[str, ...]:
    """A kept cell's data set tag, process, n and shift (strings), from its file name."""
    match = re.fullmatch(r"both_(\w+?)_(.+)_n(\d+)_shift([\d.]+)", path.stem)
    assert match is not None, path
    return match.groups()


def cell(proc: str, n: int, shift: float, reps: int, tag: str) -> pd.DataFrame:
    """Every data set's fit and the p-values of both paths, with their CPU seconds."""
    rows = []
    for i, z in windows_series(tag, proc, n, shift, reps):
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


def refresh_short(path: Path) -> pd.DataFrame:
    """Recompute the block path's p-values (``memory="short"``) of a kept cell on its own
    data sets, the fits and the self-normalised p-values kept. The first time, the
    p-values before are kept as ``p_short_plain``: block permutations without the random
    rotations of the ninth session (``Blocks(offsets=False)``)."""
    tag, proc, n, shift = _cell_of(path)
    frame = pd.read_csv(path)
    if "p_short_plain" not in frame:
        frame["p_short_plain"] = frame.p_short
    for i, z in windows_series(tag, proc, int(n), float(shift), len(frame)):
        c0 = time.process_time()
        frame.loc[i, "p_short"] = drift_test(z, int(n) // 2, n_resamples=DRAWS, rng=i,
                                             memory="short").pvalue
        frame.loc[i, "cpu_short"] = time.process_time() - c0
    frame.to_csv(path, index=False, float_format="%.5g")
    return frame


def summary(frame: pd.DataFrame, n: int) -> dict[str, Any]:
    """The default's rejections (the rule applied to each data set), and each path's."""
    switch = np.array([is_long_memory(ArfimaFit(p, d), n) for p, d in zip(frame.phi, frame.d)])
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


def _long(f: pd.DataFrame) -> pd.Series:
    return (f.d > 0.15) & (f.phi < 0.3)


#: the rules compared when the default was chosen (``--rules``): which data sets take the
#: self-normalised test, from the fit and n; the block path's p-values are those of the
#: package (``p_short``: with its random rotations unless the persistence check fired),
#: but for the last column, the eighth session's default on the plain blocks
#: (``p_short_plain``, kept by ``--refresh``)
RULES: dict[str, Any] = {
    "never (memory='short')": lambda f, n: np.zeros(len(f), dtype=bool),
    "always (memory='long')": lambda f, n: np.ones(len(f), dtype=bool),
    "phi > 0.9": lambda f, n: _long(f) | (f.phi > 0.9),
    "phi > 0.85, d > -0.2": lambda f, n: _long(f) | ((f.phi > 0.85) & (f.d > -0.2)),
    "phi > 0.8, d > -0.2": lambda f, n: _long(f) | ((f.phi > 0.8) & (f.d > -0.2)),
    "effective < 25, d > -0.2": lambda f, n: _long(f) | (
        (n * (1 - f.phi) < 25 * (1 + f.phi)) & (f.d > -0.2)),
    "effective < 22, d > -0.2 (default)": lambda f, n: np.array(
        [is_long_memory(ArfimaFit(p, d), n) for p, d in zip(f.phi, f.d)]),
}
PLAIN = "phi > 0.85, d > -0.2, plain blocks (eighth session)"


def rules() -> str:
    """Every kept cell's rejections under each rule of :data:`RULES` (the long-memory
    part, ``d > 0.15`` with ``phi < 0.3``, is in every rule but the first two)."""
    cells, cols = [], list(RULES) + [PLAIN]
    for path in sorted(FOLDER.glob("both_*.csv")):
        tag, proc, n, shift = _cell_of(path)
        f = pd.read_csv(path)
        row = [tag, proc, n, shift]
        choices = [np.where(rule(f, int(n)), f.p_long, f.p_short) for rule in RULES.values()]
        if "p_short_plain" in f:
            choices.append(np.where(RULES["phi > 0.85, d > -0.2"](f, int(n)), f.p_long,
                                    f.p_short_plain))
        for p in choices:
            k = int(np.sum(p <= ALPHA))
            bad = float(shift) == 0 and not 6 <= k <= 25
            row.append(f"{k}{' *' if bad else ''}")
        if "p_short_plain" not in f:
            row.append("-")
        cells.append(row)
    head = "| data | process | n | shift | " + " | ".join(cols) + " |"
    rule = "|---|---|---:|---:|" + "---:|" * len(cols)
    return "\n".join([head, rule] + ["| " + " | ".join(r) + " |" for r in cells])


def equal_level() -> str:
    """Power at equal level (``dependent_size_adjusted.size_adjusted``: each test rejects
    exactly 5% of its own nulls of the cell, randomised at the cut) of the default, of
    ``memory="short"``, of the eighth session's default (plain blocks) and, where
    ``driftdep_peer.py --pvalues`` kept its p-values of the same series, of driftdep's
    MMD and energy tests; every kept cell with a shift and its nulls."""
    from dependent_size_adjusted import size_adjusted
    from dependent_streams import pvalue_path

    lines = ["| data | process | n | shift | default | `memory=\"short\"` | default, plain "
             "blocks (eighth session) | driftdep mmd | driftdep energy |",
             "|---|---|---:|---:|---|---|---|---|---|"]
    for path in sorted(FOLDER.glob("both_*.csv")):
        tag, proc, n, shift = _cell_of(path)
        null = FOLDER / f"both_{tag}_{proc}_n{n}_shift0.csv"
        if float(shift) == 0 or not null.exists():
            continue
        f1, f0 = pd.read_csv(path), pd.read_csv(null)
        m = min(len(f0), len(f1))
        f0, f1 = f0.iloc[:m], f1.iloc[:m]

        def cell(p0: np.ndarray, p1: np.ndarray) -> str:
            nominal = int(np.sum(p1 <= ALPHA))
            return (f"{size_adjusted(p0, p1)[2]:.3f} ({nominal}/{m} at 5%, nulls "
                    f"{int(np.sum(p0 <= ALPHA))}/{m})")

        def default(f: pd.DataFrame, col: str) -> np.ndarray:
            rule = RULES["effective < 22, d > -0.2 (default)"] if col == "p_short" else \
                RULES["phi > 0.85, d > -0.2"]
            return np.where(rule(f, int(n)), f.p_long, f[col])

        row = [cell(default(f0, "p_short"), default(f1, "p_short")),
               cell(f0.p_short.to_numpy(), f1.p_short.to_numpy())]
        row.append(cell(default(f0, "p_short_plain"), default(f1, "p_short_plain"))
                   if "p_short_plain" in f0 and "p_short_plain" in f1 else "-")
        for peer in ("driftdep mmd (auto blocks)", "driftdep energy (auto blocks)"):
            k0, k1 = (pvalue_path(proc, int(n), s, DRAWS, tag) for s in (0.0, float(shift)))
            if k0.exists() and k1.exists():
                q0, q1 = pd.read_csv(k0), pd.read_csv(k1)
                q0 = q0[q0.method == peer].sort_values("dataset").pvalue.to_numpy()
                q1 = q1[q1.method == peer].sort_values("dataset").pvalue.to_numpy()
                if min(len(q0), len(q1)) >= m:
                    row.append(cell(q0[:m], q1[:m]))
                    continue
            row.append("-")
        lines.append(f"| {tag} | {proc} | {n} | {shift} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def table() -> pd.DataFrame:
    rows = []
    for path in sorted(FOLDER.glob("both_*.csv")):
        tag, proc, n, shift = _cell_of(path)
        rows.append({"data": tag, "process": proc, "n": int(n), "shift": float(shift),
                     **summary(pd.read_csv(path), int(n))})
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
    ap.add_argument("--equal-level", action="store_true",
                    help="power at equal level of the default, the paths and driftdep")
    ap.add_argument("--refresh", nargs="*", default=None, metavar="FILE",
                    help="recompute the block path of these kept cells (file names in "
                         "results/dependent_memory/)")
    args = ap.parse_args()
    for name in args.refresh or []:
        n = int(re.search(r"_n(\d+)_", name).group(1))
        s = summary(refresh_short(FOLDER / Path(name).name), n)
        print(f"{name}: {s}", flush=True)
    for spec in args.cell:
        proc, shift, reps = spec.split(",")
        s = summary(cell(proc, args.n, float(shift), int(reps), args.tag), args.n)
        print(f"{args.tag} {proc} n={args.n} shift={shift}: {s}", flush=True)
    if args.table:
        print(markdown(table()))
    if args.rules:
        print(rules())
    if args.equal_level:
        print(equal_level())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
