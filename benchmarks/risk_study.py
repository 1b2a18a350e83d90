"""Risk study on the papers' synthetic mixtures (PAPERS.md §4, §5.B, §5.D, §5.E).

Reproduces, qualitatively, the synthetic findings of ICML Fig. 2, JMLR Fig. 5
and MKME Fig. 2: the exact loss ``||mu_hat - mu_P||^2`` of each kernel mean
estimator, averaged over random 4-component Gaussian mixtures (a new
distribution per repetition, one sample each), against the sample size (d =
20) and the dimension (n = 20), for the LIN, POLY2, POLY3 and RBF kernels (RBF
bandwidth: median heuristic on each sample). MKME/MMKME exist for the RBF
kernel only.

Run (under a minute on 2 cores, BLAS single-threaded)::

    .venv/bin/python benchmarks/risk_study.py            # the recorded table
    .venv/bin/python benchmarks/risk_study.py --quick    # a few-second smoke run
    .venv/bin/python benchmarks/risk_study.py --markdown # tables for README.md

Estimators not registered in ``kmtests.estimators.ESTIMATORS`` are skipped and
listed. The figure scales of the papers are not reproduction targets
(PAPERS.md §4.3); the claims checked are the orderings.
"""

from __future__ import annotations

import os

# one BLAS thread per process: the study parallelises over cells with joblib,
# and threaded BLAS on tiny matrices thrashes on a shared 2-core machine
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from kmtests.estimators import ESTIMATORS  # noqa: E402
from kmtests.risk import risk_study  # noqa: E402

WANTED = ["kme", "skmse", "bkmse", "fkmse", "mkme", "mmkme"]
GAUSSIAN_ONLY = {"mkme", "mmkme"}
KERNELS = ["linear", "poly2", "poly3", "rbf"]
PAPER_NAMES = {"kme": "KME", "skmse": "S-KMSE", "bkmse": "B-KMSE", "fkmse": "F-KMSE",
               "mkme": "MKME", "mmkme": "MMKME"}


def _grid(quick: bool) -> list[tuple[list[int], list[int]]]:
    """(n values, d values) blocks: vs n at d = 20, vs d at n = 20, and the
    ICML Fig. 1 / JMLR Fig. 4 setting n = 10, d = 30."""
    if quick:
        return [([5, 20], [20]), ([20], [100])]
    return [([5, 10, 20, 50, 100], [20]), ([20], [5, 50, 100]), ([10], [30])]


def run(repetitions: int, seed: int, n_jobs: int | None,
        quick: bool) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    present = [e for e in WANTED if e in ESTIMATORS]
    missing = [e for e in WANTED if e not in ESTIMATORS]
    general = [e for e in present if e not in GAUSSIAN_ONLY]
    gaussian = [e for e in present if e in GAUSSIAN_ONLY]
    frames, raws = [], []
    for ns, ds in _grid(quick):
        # same seed for every call: the cells share distributions and samples (keyed seeding)
        calls = [(general, KERNELS)] + ([(gaussian, "rbf")] if gaussian else [])
        for ests, kernels in calls:
            summary, raw = risk_study(ests, n=ns, d=ds, kernels=kernels, repetitions=repetitions,
                                      rng=seed, n_jobs=n_jobs, return_raw=True)
            frames.append(summary)
            raws.append(raw)
    return pd.concat(frames, ignore_index=True), pd.concat(raws, ignore_index=True), missing


def _paired(raw: pd.DataFrame, e: str, b: str,
            kernel: str = "rbf") -> list[tuple[int, int, float, float]]:
    """Per cell: mean loss of `e` / mean loss of `b` on the same samples, with the
    paired (delta-method) standard error."""
    out = []
    sub = raw[raw.kernel == kernel]
    for (d, n), g in sub.groupby(["d", "n"]):
        y = g[g.estimator == e].sort_values("repetition")["loss"].to_numpy()
        x = g[g.estimator == b].sort_values("repetition")["loss"].to_numpy()
        if y.size == 0 or x.size == 0:
            continue
        r = y.mean() / x.mean()
        se = np.std(y - r * x, ddof=1) / np.sqrt(y.size) / x.mean()
        out.append((int(d), int(n), float(r), float(se)))
    return out


def _table(df: pd.DataFrame, kernel: str, markdown: bool) -> str:
    sub = df[df.kernel == kernel]
    ests = [e for e in WANTED if e in set(sub.estimator)]
    cells = sub[["d", "n"]].drop_duplicates().sort_values(["d", "n"]).itertuples(index=False)
    head = ["d", "n", "KME mean loss"] + [PAPER_NAMES[e] for e in ests if e != "kme"]
    rows = []
    for d, n in cells:
        c = sub[(sub.d == d) & (sub.n == n)].set_index("estimator")
        row = [str(d), str(n), f"{c.loc['kme', 'mean_loss']:.3g}"]
        for e in ests:
            if e == "kme":
                continue
            r, se = c.loc[e, "ratio"], c.loc[e, "se_ratio"]
            mark = "*" if r + 2 * se < 1 else ("!" if r - 2 * se > 1 else "")
            row.append(f"{r:.3f}±{se:.3f}{mark}")
        rows.append(row)
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    return "\n".join([fmt.format(*head)] + [fmt.format(*r) for r in rows])


def _claims(df: pd.DataFrame, raw: pd.DataFrame) -> list[str]:
    """The papers' qualitative claims, evaluated on the table."""
    out = []
    shrink = [e for e in ("skmse", "bkmse", "fkmse") if e in set(df.estimator)]
    for e in shrink:
        for k in KERNELS:
            s = df[(df.estimator == e) & (df.kernel == k)]
            better = int(np.sum(s.ratio + 2 * s.se_ratio < 1))
            worse = int(np.sum(s.ratio - 2 * s.se_ratio > 1))
            below = int(np.sum(s.ratio < 1))
            out.append(f"{PAPER_NAMES[e]:7s} {k:6s}: ratio < 1 in {below}/{len(s)} "
                       f"cells (significantly better {better}, significantly worse {worse}); "
                       f"median ratio {s.ratio.median():.3f}")
    for e in shrink:
        for k in KERNELS:
            s = df[(df.estimator == e) & (df.kernel == k)].set_index(["d", "n"]).ratio
            if (100, 20) in s.index and (5, 20) in s.index and (20, 5) in s.index \
                    and (20, 100) in s.index:
                out.append(f"{PAPER_NAMES[e]:7s} {k:6s}: ratio d=5 -> d=100 (n=20): "
                           f"{s[(5, 20)]:.3f} -> {s[(100, 20)]:.3f}; n=5 -> n=100 (d=20): "
                           f"{s[(20, 5)]:.3f} -> {s[(20, 100)]:.3f}")
    for e in ("mkme", "mmkme"):
        for b in ("kme", "skmse", "bkmse", "fkmse", "mkme"):
            if e == b or not set([e, b]) <= set(raw.estimator):
                continue
            cells = _paired(raw, e, b)
            r = np.array([c[2] for c in cells])
            se = np.array([c[3] for c in cells])
            out.append(f"{PAPER_NAMES[e]:7s} vs {PAPER_NAMES[b]:7s} (rbf, paired): loss ratio "
                       f"{r.min():.4f}..{r.max():.4f}; lower in {int(np.sum(r < 1))}/{r.size} "
                       "cells, "
                       f"significantly lower in {int(np.sum(r + 2 * se < 1))}, significantly "
                       f"higher in {int(np.sum(r - 2 * se > 1))}")
    for e, b in (("skmse", "fkmse"), ("skmse", "bkmse"), ("fkmse", "bkmse")):
        if not set([e, b]) <= set(raw.estimator):
            continue
        for k in KERNELS:
            cells = _paired(raw, e, b, k)
            r = np.array([c[2] for c in cells])
            se = np.array([c[3] for c in cells])
            out.append(f"{PAPER_NAMES[e]:7s} vs {PAPER_NAMES[b]:7s} ({k}, paired): lower in "
                       f"{int(np.sum(r < 1))}/{r.size} cells, significantly lower in "
                       f"{int(np.sum(r + 2 * se < 1))}, significantly higher in "
                       f"{int(np.sum(r - 2 * se > 1))}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repetitions", type=int, default=100)
    ap.add_argument("--seed", type=int, default=20140621)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="small grid, 5 repetitions")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--csv", help="also write the summary frame to this CSV file")
    args = ap.parse_args(argv)
    reps = 5 if args.quick else args.repetitions
    t0 = time.perf_counter()
    df, raw, missing = run(reps, args.seed, args.n_jobs, args.quick)
    elapsed = time.perf_counter() - t0
    print(f"risk study: {reps} distributions per cell, seed {args.seed}, "
          f"{elapsed:.0f} s with n_jobs={args.n_jobs}")
    print("estimators:", ", ".join(e for e in WANTED if e not in missing),
          "| not registered (skipped):", ", ".join(missing) or "none")
    print("cells: mean loss of KME; other columns: mean loss / KME mean loss on the same "
          "samples ± paired s.e.; * = below 1 by > 2 s.e., ! = above 1 by > 2 s.e.\n")
    for k in KERNELS:
        print(f"### {k.upper()}\n" if args.markdown else f"== {k.upper()} ==")
        print(_table(df, k, args.markdown))
        print()
    print("claims:")
    for line in _claims(df, raw):
        print("  " + line)
    if args.csv:
        df.to_csv(args.csv, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
