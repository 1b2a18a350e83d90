"""What was tried for the power of the drift test at a kept level (issue 30): variants of
the null and of the statistic between two windows of one series, on the data sets of
``dependent_level.py --studies auto --problem windows`` (``dependent_streams.py``).

Every variant sees the same series (the halves of one series of length n, the second
shifted by ``--shift``), the Gaussian kernel with the median heuristic on the pooled
series, features ``F`` with ``F F' = K`` (:func:`kmtests.statistics.selfnormalized.
gram_features`), and 199 draws with the p-value ``(1 + #{T_b >= T}) / 200``:

* ``mmd blocks f`` — ``MMD^2_b`` (the squared distance of the windows' mean features)
  under block permutations of length ``L = ceil(f b_sb)`` (``b_sb`` the Politis-White
  stationary-bootstrap length of ``blocks="auto"``'s series, its ``multiplier``), at
  least ``3 ceil(sqrt(n))`` when its persistence check fires, at most ``n / 8``;
  ``f = auto``: the length of ``blocks="auto"`` itself (3 times the circular-block
  length, the same floor and cap);
* ``sn blocks f`` — the self-normalised MMD (``statistic="selfnormalized"``) under the
  same block permutations;
* ``sn wild window l`` / ``sn wild pooled l`` — the self-normalised MMD under a wild
  bootstrap: one AR(1) multiplier process of memory ``l b_sb`` along the series
  (:func:`kmtests.statistics.null_laws.multipliers`) times the features centred within
  each window (``window``) or on the pooled mean (``pooled``), numerator and normaliser
  recomputed.

Writes one CSV per cell under ``benchmarks/results/dependent_variants/`` (with CPU
seconds) and prints the rejections; ``--table`` prints all cells. Run from the
repository root::

    nice -n 10 .venv/bin/python benchmarks/dependent_variants.py --process ar0.8 \\
        --n 200 --reps 300 [--shift 0.75]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402
from statsmodels.stats.proportion import proportion_confint  # noqa: E402

from dependent_streams import merge_rows, process, seed_of  # noqa: E402

from kmtests import SerialDependenceWarning  # noqa: E402
from kmtests._serial import AutoLength, auto_length  # noqa: E402
from kmtests.kernels import Gaussian  # noqa: E402
from kmtests.problems.schemes import Blocks  # noqa: E402
from kmtests.statistics.null_laws import multipliers  # noqa: E402
from kmtests.statistics.selfnormalized import gram_features, window_parts  # noqa: E402

warnings.simplefilter("ignore", SerialDependenceWarning)

HERE = Path(__file__).resolve().parent
ALPHA, B = 0.05, 199


def block_length(a: AutoLength, n: int, f: float | None) -> int:
    """``blocks="auto"``'s length (`f` None) or ``ceil(f b_sb)`` with its floor and cap."""
    if f is None:
        return a.block
    length = math.ceil(f * a.multiplier)
    if a.persistent > 2.0:
        length = max(length, 3 * math.ceil(math.sqrt(n)))
    return max(1, min(length, n // 8))


def _stat(f: np.ndarray, m: int, sn: bool) -> float:
    num, den = window_parts(f, m)
    return num / den if sn else num


def blocks_p(F: np.ndarray, m: int, length: int, sn: bool, seed: int) -> float:
    t0 = _stat(F, m, sn)
    perms = Blocks(F.shape[0], length, n_x=m, auto=True).random(np.random.default_rng(seed), B)
    tb = np.array([_stat(F[p], m, sn) for p in perms])
    return float((1 + np.sum(tb >= t0 * (1 - 1e-10))) / (B + 1))


def wild_p(F: np.ndarray, m: int, memory: float, pooled: bool, seed: int) -> float:
    t0 = _stat(F, m, True)
    psi = F - F.mean(axis=0)
    if not pooled:
        psi[:m] -= psi[:m].mean(axis=0)
        psi[m:] -= psi[m:].mean(axis=0)
    W = multipliers(np.random.default_rng(seed), B, F.shape[0], "ar", memory, centred=False)
    tb = np.array([_stat(w[:, None] * psi, m, True) for w in W])
    return float((1 + np.sum(tb >= t0)) / (B + 1))


def variants(n: int) -> dict[str, Callable[[np.ndarray, int, AutoLength, int], float]]:
    out: dict[str, Callable[[np.ndarray, int, AutoLength, int], float]] = {}
    for f in (None, 1.0, 1.5):
        tag = "auto" if f is None else f"{f:g}"
        out[f"mmd blocks {tag}"] = (lambda F, m, a, i, f=f:
                                    blocks_p(F, m, block_length(a, n, f), False, i))
    for f in (None, 1.0, 1.5, 2.0):
        tag = "auto" if f is None else f"{f:g}"
        out[f"sn blocks {tag}"] = (lambda F, m, a, i, f=f:
                                   blocks_p(F, m, block_length(a, n, f), True, i))
    for how in ("window", "pooled"):
        for lf in (1.0, 2.0, 4.0):
            out[f"sn wild {how} {lf:g}"] = (lambda F, m, a, i, lf=lf, how=how:
                                            wild_p(F, m, lf * a.multiplier, how == "pooled", i))
    return out


def cell(proc: str, n: int, reps: int, shift: float, out_dir: Path) -> list[dict[str, Any]]:
    gen = np.random.default_rng(seed_of("auto", proc, n, "windows", shift))
    h = n // 2
    tests = variants(n)
    hits, cpu = dict.fromkeys(tests, 0), dict.fromkeys(tests, 0.0)
    for i in range(reps):
        z = process(proc, gen, n)
        z[h:] += shift
        a = auto_length([z[:, None]], (h, n - h))
        K = Gaussian(bandwidth="median").fitted_to(z[:, None]).gram(z[:, None])
        F = gram_features(K)
        for name, test in tests.items():
            c0 = time.process_time()
            hits[name] += test(F, h, a, i) <= ALPHA
            cpu[name] += time.process_time() - c0
    study = f"variants windows {proc}" + (f" shift={shift:g}" if shift else "")
    rows = []
    for name, r in hits.items():
        lo, hi = proportion_confint(r, reps, alpha=0.05, method="beta")
        rows.append({"study": study, "n": n, "null": name, "alpha": ALPHA,
                     "repetitions": reps, "rejections": r, "level": r / reps,
                     "ci_low": lo, "ci_high": hi, "cpu_per_test": cpu[name] / reps})
    out_dir.mkdir(parents=True, exist_ok=True)
    merge_rows(out_dir / f"windows_{proc}_n{n}" f"{f'_shift{shift:g}' if shift else ''}.csv",
               rows)
    print(study, f"n={n}:", ", ".join(f"{k} {v}/{reps}" for k, v in hits.items()), flush=True)
    return rows


def table(out_dir: Path) -> str:
    """The variants (rows) by cell (columns) as a Markdown table, ``*`` outside the 99%
    binomial band of 5% on the null cells."""
    import pandas as pd
    from scipy import stats

    frames = [pd.read_csv(f) for f in sorted(out_dir.glob("*.csv"))]
    if not frames:
        return ""
    tab = pd.concat(frames)
    cells = list(dict.fromkeys(tab["study"].str.replace("variants windows ", "")))
    cells.sort(key=lambda c: ("shift" in c, c))
    lines = ["| variant | " + " | ".join(cells) + " |", "|---|" + "---:|" * len(cells)]
    for name in dict.fromkeys(tab["null"]):
        row = []
        for c in cells:
            hit = tab[(tab["null"] == name) & (tab["study"] == f"variants windows {c}")]
            if hit.empty:
                row.append("-")
                continue
            r, reps = int(hit["rejections"].iloc[0]), int(hit["repetitions"].iloc[0])
            lo, hi = stats.binom.ppf(0.005, reps, ALPHA), stats.binom.ppf(0.995, reps, ALPHA)
            out = "shift" in c or lo <= r <= hi
            row.append(f"{r}" + ("" if out else " *"))
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--process", default="ar0.8")
    ap.add_argument("--n", default="200")
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--shift", type=float, default=0.0)
    ap.add_argument("--table", action="store_true", help="print the table and stop")
    args = ap.parse_args()
    if args.table:
        print(table(HERE / "results" / "dependent_variants"))
        return 0
    for proc in args.process.split(","):
        for n in map(int, args.n.split(",")):
            cell(proc, n, args.reps, args.shift, HERE / "results" / "dependent_variants")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
