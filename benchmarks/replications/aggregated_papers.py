"""Replications: MMDAgg (Schrab et al., 2023), MMD-FUSE (Biggs et al., 2023) and the
spectral-regularised MMD (Hagrass et al., 2024) against ours, on the same data sets.

The papers' figures give no numbers in their text, so each comparison runs the
authors' own code on the *same* data sets as ours (steps ``data`` -> ``ours``
and ``authors`` -> ``report``). The authors' code is never part of kmtests:
``authors`` runs in a separate virtual environment with numpy, scipy and jax
(no kmtests), importing ``mmdagg/np.py`` and ``mmdfuse/mmdfuse.py`` from
checkouts given on the command line.

Designs
-------
perturbed (MMDAgg Fig. / MMD-FUSE): x ~ U[0, 1], y ~ the perturbed uniform
    density of Schrab et al. Sec. 5.4 with P = 1..6 bumps, c_1 = 2.7, n = m =
    500, alpha = 0.05. Ours: ``aggregated_two_sample_test`` (10 Gaussian
    bandwidths, uniform weights, min-p with exact level) with our default
    bandwidth grid and with the authors' grid; ``combination="fuse"`` with
    MMD-FUSE's linear grid (our default geometric grid is in the power study). Authors': ``mmdagg(X, Y,
    kernel="gaussian", number_bandwidths=10, weights_type="uniform")`` (wild
    bootstrap, as their code does for n = m) and ``mmdfuse(X, Y, key,
    kernels=("gaussian",))``.
hagrass (SR-MMD): x ~ N(0, I_10), y ~ N(shift 1, I_10), n = m = 200, the
    paper's code's grids: Showalter filter, Lambda = 10^seq(-6, 1, 0.75)
    (10 values), Gaussian kernel exp(-d^2 / (2 h)) with h = median^2 x
    10^seq(-2, 2, 0.5) (9 bandwidths), s = 20 held-out pairs. Ours: the
    90-member test with the held-out operator (their design, our min-p
    calibration) and with the pooled operator; plus the one-kernel
    ``two_sample_test(statistic="regularized", covariance="split"|"pooled")``.
    Their R test (Bonferroni over the 90 members with 60 permutations) runs on
    the same data sets with ``hagrass_export`` and ``srmmd_authors.R``.

Run (from the repository root)::

    .venv/bin/python benchmarks/replications/aggregated_papers.py data --reps 40
    .venv/bin/python benchmarks/replications/aggregated_papers.py ours
    AUTH=/tmp/authors-venv/bin/python
    $AUTH benchmarks/replications/aggregated_papers.py authors \\
        --mmdagg /path/to/mmdagg-checkout --mmdfuse /path/to/mmdfuse-checkout
    .venv/bin/python benchmarks/replications/aggregated_papers.py hagrass --reps 40
    .venv/bin/python benchmarks/replications/aggregated_papers.py hagrass_export --reps 40
    Rscript benchmarks/replications/srmmd_authors.R \\
        "/path/to/checkout/2 sample codes/spectral_test.R" /tmp/hagrass-data \\
        benchmarks/results/replication_hagrass_authors.csv
    .venv/bin/python benchmarks/replications/aggregated_papers.py report
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
           "XLA_FLAGS"):
    os.environ.setdefault(_v, "1" if _v != "XLA_FLAGS" else
                          "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"
DATA = Path("/tmp/kmtests-replication-perturbed.npz")
SEED = 20230611
N = 500
PERTURBATIONS = (1, 2, 3, 4, 5, 6)
C1 = 2.7


# -- data --------------------------------------------------------------------------------------
def make_data(reps: int, path: Path) -> None:
    from kmtests.datasets import perturbed_uniform

    out = {}
    for P in PERTURBATIONS:
        sc = perturbed_uniform(1, P)
        xs, ys = [], []
        for r in range(reps):
            x, y = sc.sample(N, C1, np.random.default_rng([SEED, P, r]))
            xs.append(x)
            ys.append(y)
        out[f"x{P}"], out[f"y{P}"] = np.stack(xs), np.stack(ys)
    np.savez_compressed(path, **out)
    print(f"wrote {path}: {reps} data sets for each P in {PERTURBATIONS}, n = m = {N}")


def mmdagg_bandwidths(x: np.ndarray, y: np.ndarray, count: int = 10) -> np.ndarray:
    """The Gaussian bandwidths of the authors' mmdagg/np.py (``compute_bandwidths`` on the
    x-y distances), converted to our parameterisation: theirs is exp(-d^2/l^2), ours
    exp(-d^2/(2 bw^2)), so bw = l / sqrt(2)."""
    from scipy.spatial.distance import cdist

    d = cdist(x[:500], y[:500]).reshape(-1)
    if d.min() < 0.1:
        lo = max(np.sort(d)[int(np.floor(d.size * 0.05))], 0.1)
    else:
        lo = d.min()
    lo, hi = lo / 2, max(d.max(), 0.3) * 2
    lams = lo * (hi / lo) ** (np.arange(count) / (count - 1))
    return lams / np.sqrt(2.0)


def mmdfuse_bandwidths(x: np.ndarray, y: np.ndarray, count: int = 10) -> np.ndarray:
    """MMD-FUSE's Gaussian bandwidths (same kernel parameterisation as ours): a linear grid
    from half the 5% quantile to twice the 95% quantile of the pooled distances (upper
    triangle with the diagonal, zeros replaced by the median)."""
    from scipy.spatial.distance import cdist

    z = np.vstack([x, y])
    D = cdist(z, z)
    d = D[np.triu_indices(D.shape[0])]
    d = d + (d == 0) * np.median(d)
    dd = np.sort(d)
    lo, hi = dd[int(np.floor(dd.size * 0.05))] / 2, dd[int(np.floor(dd.size * 0.95))] * 2
    return np.linspace(lo, hi, count)


def run_ours(path: Path, B: int, out: Path, reps: int) -> None:
    import pandas as pd
    from threadpoolctl import threadpool_limits

    from kmtests import aggregated_two_sample_test

    data = np.load(path)
    rows = pd.read_csv(out).to_dict("records") if out.exists() else []
    done = {(int(r["P"]), int(r["rep"])) for r in rows}
    t0 = time.time()
    with threadpool_limits(1):
        for P in PERTURBATIONS:
            X, Y = data[f"x{P}"][:reps], data[f"y{P}"][:reps]
            for r in range(X.shape[0]):
                if (P, r) in done:  # resume: rows already in `out`
                    continue
                x, y = X[r], Y[r]
                seed = [SEED, 7, P, r]
                tests = {
                    "MMDAgg (ours, our grid)": dict(),
                    "MMDAgg (ours, authors' grid)": dict(bandwidths=mmdagg_bandwidths(x, y)),
                    "FUSE (ours, MMD-FUSE grid)": dict(combination="fuse",
                                                       bandwidths=mmdfuse_bandwidths(x, y)),
                }
                for label, kw in tests.items():
                    res = aggregated_two_sample_test(x, y, n_resamples=B, rng=seed, n_jobs=1,
                                                     **kw)
                    rows.append({"P": P, "rep": r, "test": label, "pvalue": res.pvalue,
                                 "reject": int(res.pvalue <= 0.05)})
            print(f"P = {P}: {time.time() - t0:.0f} s", flush=True)
    pd.DataFrame(rows).to_csv(out, index=False)
    print(f"wrote {out}")


# -- the authors' code (separate environment: numpy, scipy, jax; no kmtests) --------------------
def run_authors(path: Path, mmdagg_dir: str, mmdfuse_dir: str, B: int, out: Path,
                reps: int) -> None:
    import csv

    sys.path[:0] = [mmdagg_dir, mmdfuse_dir]
    from mmdagg.np import mmdagg  # type: ignore[import-not-found]

    fuse = None
    if mmdfuse_dir:
        import jax  # noqa: F401
        from jax import random  # type: ignore[import-not-found]
        from mmdfuse import mmdfuse  # type: ignore[import-not-found]

        fuse = mmdfuse
    data = np.load(path)
    t0 = time.time()
    done = set()
    if out.exists():  # resume: append the data sets not yet in `out`
        with open(out, newline="") as fh:
            done = {(int(r["P"]), int(r["rep"])) for r in csv.DictReader(fh)}
    with open(out, "a", newline="") as fh:
        w = csv.writer(fh)
        if not done:
            w.writerow(["P", "rep", "test", "pvalue", "reject"])
        for P in PERTURBATIONS:
            X, Y = data[f"x{P}"][:reps], data[f"y{P}"][:reps]
            for r in range(X.shape[0]):
                if (P, r) in done:
                    continue
                x, y = X[r], Y[r]
                seed = 1000 * P + r
                rej = mmdagg(x, y, alpha=0.05, kernel="gaussian", number_bandwidths=10,
                             weights_type="uniform", B1=B, B2=B, B3=50, seed=seed)
                w.writerow([P, r, "MMDAgg (authors' mmdagg/np.py)", "", int(rej)])
                if fuse is not None:
                    o, p = fuse(x, y, random.PRNGKey(seed), 0.05, ("gaussian",), 1, 10, B,
                                True)
                    w.writerow([P, r, "MMD-FUSE (authors' mmdfuse, JAX)", float(p), int(o)])
            fh.flush()
            print(f"P = {P}: {time.time() - t0:.0f} s", flush=True)
    print(f"wrote {out}")


# -- Hagrass et al. -----------------------------------------------------------------------------
HAGRASS_LAMBDA = 10.0 ** np.arange(-6.0, 1.0 + 1e-9, 0.75)   # 10 values, as in their code
HAGRASS_HMULT = 10.0 ** np.arange(-2.0, 2.0 + 1e-9, 0.5)     # 9 bandwidth multipliers
HAGRASS_SHIFTS = (0.0, 0.05, 0.1, 0.15)


def run_hagrass(reps: int, B: int, out: Path, n: int = 200, d: int = 10, s: int = 20) -> None:
    import pandas as pd
    from scipy.spatial.distance import pdist
    from threadpoolctl import threadpool_limits

    from kmtests import aggregated_two_sample_test, two_sample_test
    from kmtests._regularized import split_held_out
    from kmtests.datasets import gaussian_mean_shift

    sc = gaussian_mean_shift(d)
    rows = []
    t0 = time.time()
    with threadpool_limits(1):
        for shift in HAGRASS_SHIFTS:
            for r in range(reps):
                x, y = sc.sample(n, shift, np.random.default_rng([SEED, 11, int(shift * 1e4), r]))
                # their bandwidth: h = median(pooled distances)^2 x multiplier, kernel
                # exp(-d^2/(2h)); ours exp(-d^2/(2 bw^2)): bw = median x sqrt(multiplier)
                med = float(np.median(pdist(np.vstack([x, y]))))
                bws = med * np.sqrt(HAGRASS_HMULT)
                zx, zy, rx, ry = split_held_out(n, n, s, np.random.default_rng([SEED, 12, r]))
                held = np.vstack([x[zx], y[zy]])
                seed = [SEED, 13, r]
                common = dict(bandwidths=bws, estimators=(), filters=("showalter",),
                              lams=HAGRASS_LAMBDA, n_resamples=B, n_jobs=1)
                tests = {
                    "90 members, held-out operator (their design)": lambda: (
                        aggregated_two_sample_test(x[rx], y[ry], rng=seed, _held_out=held,
                                                   **common)),
                    "90 members, pooled operator": lambda: aggregated_two_sample_test(
                        x, y, rng=seed, **common),
                    "SR-Show split (median bw, lam auto)": lambda: two_sample_test(
                        x, y, statistic="regularized", filter="showalter", lam="auto",
                        covariance="split", split_size=s, n_resamples=B, rng=seed, n_jobs=1),
                    "SR-Show pooled (median bw, lam auto)": lambda: two_sample_test(
                        x, y, statistic="regularized", filter="showalter", lam="auto",
                        n_resamples=B, rng=seed, n_jobs=1),
                    "MMD_u (median bw)": lambda: two_sample_test(x, y, n_resamples=B, rng=seed,
                                                                 n_jobs=1),
                    "MMDAgg (10 bw)": lambda: aggregated_two_sample_test(
                        x, y, n_resamples=B, rng=seed, n_jobs=1),
                }
                for label, fn in tests.items():
                    p = fn().pvalue
                    rows.append({"shift": shift, "rep": r, "test": label, "pvalue": p,
                                 "reject": int(p <= 0.05)})
            print(f"shift = {shift}: {time.time() - t0:.0f} s", flush=True)
    pd.DataFrame(rows).to_csv(out, index=False)
    print(f"wrote {out}")


def export_hagrass(reps: int, out_dir: Path, n: int = 200, d: int = 10) -> None:
    """The data sets of `run_hagrass` as CSV files (and an index) for the authors' R code
    (`srmmd_authors.R`)."""
    from kmtests.datasets import gaussian_mean_shift

    sc = gaussian_mean_shift(d)
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = ["shift,rep,x,y"]
    for shift in HAGRASS_SHIFTS:
        for r in range(reps):
            x, y = sc.sample(n, shift, np.random.default_rng([SEED, 11, int(shift * 1e4), r]))
            fx, fy = f"x_{shift:g}_{r}.csv", f"y_{shift:g}_{r}.csv"
            np.savetxt(out_dir / fx, x, delimiter=",", fmt="%.17g")
            np.savetxt(out_dir / fy, y, delimiter=",", fmt="%.17g")
            lines.append(f"{shift:g},{r},{fx},{fy}")
    (out_dir / "index.csv").write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines) - 1} data sets to {out_dir}")


# -- report ------------------------------------------------------------------------------------
def _cell(k: int, m: int) -> str:
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, m, alpha=0.05, method="beta")
    return f"{k / m:.2f} [{lo:.2f}, {hi:.2f}]"


def report(files: list[Path], key: str) -> None:
    import pandas as pd

    df = pd.concat([pd.read_csv(f) for f in files if f.exists()], ignore_index=True)
    tests = list(dict.fromkeys(df["test"]))
    print("| " + key + " | " + " | ".join(tests) + " |")
    print("|---:|" + "---|" * len(tests))
    for v, g in df.groupby(key, sort=True):
        cells = []
        for t in tests:
            h = g[g["test"] == t]["reject"]
            cells.append(_cell(int(h.sum()), int(h.size)) if h.size else "-")
        print(f"| {v:g} | " + " | ".join(cells) + " |")
    print(f"\n(repetitions per cell: {int(df.groupby([key, 'test']).size().min())})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("step", choices=["data", "ours", "authors", "hagrass", "hagrass_export",
                                     "report"])
    ap.add_argument("--out-dir", default="/tmp/hagrass-data",
                    help="hagrass_export: where the CSV files go")
    ap.add_argument("--reps", type=int, default=40,
                    help="data sets per design point (data: generated; ours/authors: the "
                         "first `reps` of the data file)")
    ap.add_argument("--B", type=int, default=None,
                    help="permutations (ours 499, the authors' B1 = B2 = 500 and 500 "
                         "permutations for MMD-FUSE; hagrass 199)")
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--mmdagg", default="", help="checkout of the authors' mmdagg")
    ap.add_argument("--mmdfuse", default="", help="checkout of the authors' mmdfuse")
    args = ap.parse_args(argv)
    data = Path(args.data)
    if args.step == "data":
        make_data(args.reps, data)
    elif args.step == "ours":
        run_ours(data, args.B or 499, RESULTS / "replication_perturbed_ours.csv", args.reps)
    elif args.step == "authors":
        run_authors(data, args.mmdagg, args.mmdfuse, args.B or 500,
                    RESULTS / "replication_perturbed_authors.csv", args.reps)
    elif args.step == "hagrass_export":
        export_hagrass(args.reps, Path(args.out_dir))
    elif args.step == "hagrass":
        run_hagrass(args.reps, args.B or 199, RESULTS / "replication_hagrass.csv")
    else:
        report([RESULTS / "replication_perturbed_ours.csv",
                RESULTS / "replication_perturbed_authors.csv"], "P")
        print()
        report([RESULTS / "replication_hagrass.csv",
                RESULTS / "replication_hagrass_authors.csv"], "shift")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
