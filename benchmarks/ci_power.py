"""Power of the conditional independence tests, each next to its level on the matching null.

For every (scenario, n) cell, ``--reps`` data sets of the null (``dep = 0``) and of the
alternative (``dep`` below) are tested by kmtests' default (``criterion="gcv"``,
``method="gamma"``), ``criterion="marglik"`` and ``"loo"``, the weighted chi-square
null, kmtests with causal-learn's fixed settings, and causal-learn 0.1.4.8's
``KCI_CInd()`` (gamma), ``KCI_CInd(use_gp=True)`` (on the first ``--gp-reps`` data sets
of each cell) and RCIT. The scenarios and their alternatives
(:func:`ci_level.draw`):

* ``pnl1``: Zhang et al.'s (2011) post-nonlinear Case I; the alternative adds one
  common N(0, 0.5^2) term to x and y (their choice, ``dep = 0.5``);
* ``pnl3``: the same with two irrelevant coordinates of z;
* ``linear``: x = z + 0.5 e, y = z + 0.5 e' + dep e (a linear-Gaussian conditional
  dependence; partial correlation ``dep / sqrt(0.25 + dep^2)``);
* ``sharp``: x = sin(6z) + 0.3 e, y = cos(6z) + 0.3 e' + dep e (a weak dependence
  under a high-frequency dependence on z).

alpha = 0.05, Clopper-Pearson 95% intervals. A test's power is compared only where its
rejection count on the matching null lies inside the 99% band of Bin(R, 0.05)
(``level_ok`` in the CSV). Raw p-values go to ``--raw`` (git-ignored); ``--summarize``
writes ``benchmarks/results/ci_power.csv`` and the Markdown tables.

Run from the repository root in an environment with kmtests and causal-learn::

    .venv-cl/bin/python benchmarks/ci_power.py --n 200 --scenarios pnl1,linear \\
        --raw benchmarks/results/ci_power_n200_raw.csv
    .venv-cl/bin/python benchmarks/ci_power.py --summarize benchmarks/results/ci_power_*_raw.csv
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ci_level as lv  # noqa: E402

HERE = Path(__file__).resolve().parent
ALPHA = lv.ALPHA

#: the alternatives' strength (see the module docs)
DEP = {"pnl1": 0.5, "pnl3": 0.5, "linear": 0.15, "sharp": 0.08,
       **{s: 0.1 for s in lv.MULTI}}

#: the tests compared
KMTESTS = ("km kci gcv gamma", "km kci marglik gamma", "km kci loo gamma", "km kci gcv chi2",
           "km split gcv gamma", "km cl-fixed gamma")
CAUSALLEARN = ("cl KCI gamma", "cl KCI use_gp", "cl RCIT")


def ard_bandwidths(x: np.ndarray, y: np.ndarray, z: np.ndarray, target: str = "both"
                   ) -> np.ndarray:
    """Per-coordinate (ARD) bandwidths on z for the conditional test: the library's
    search (:func:`kmtests.statistics.kci.ard_bandwidths`, what ``bandwidth_z="ard"``
    runs) scored on the sum of x's (augmented, as KCI) and y's regressions (``"both"``)
    or, a variant, on y's alone (``"y"``). About 2 d + 5 eigendecompositions of the
    n x n Gram matrix of z."""
    from kmtests.estimators import ConditionalMeanEmbedding
    from kmtests.kernels import Gaussian
    from kmtests.problems.conditional import standardized
    from kmtests.statistics.kci import ard_bandwidths as search

    xs, ys, zs = standardized(x), standardized(y), standardized(z)
    xa = np.hstack([xs, 0.5 * zs])
    Kx = Gaussian().fitted_to(xa).centred_gram(xa).Kc
    Ky = Gaussian().fitted_to(ys).centred_gram(ys).Kc
    return search(zs, [Ky] if target == "y" else [Kx, Ky], ConditionalMeanEmbedding())

def multi_variants() -> dict[str, Callable[..., float]]:
    """The ideas of issue 29 for a multivariate z, measured on the ``lv.MULTI`` designs:
    a tighter bound on the regression's degrees of freedom (``max_df``, default 0.5),
    a looser one (1.0), Zhang's augmentation of x by z switched off, the ARD
    prototype (:func:`ard_bandwidths`, its kernel shared by x and y, ``lam`` tuned), and
    the default with Zhang et al.'s gamma moments (``null_moments="zhang"``, the default
    until the sixth session)."""
    from kmtests import conditional_independence_test as ci
    from kmtests.estimators import ConditionalMeanEmbedding
    from kmtests.kernels import ARDGaussian, Gaussian
    from kmtests.statistics.kci import KCI

    def ard(target: str) -> Callable[..., float]:
        def run(x: np.ndarray, y: np.ndarray, z: np.ndarray, seed: int) -> float:
            kz = ARDGaussian(bandwidth=ard_bandwidths(x, y, z, target))
            return float(ci(x, y, z, kernel_z=kz, cache=False).pvalue)
        return run

    def no_augment(x: np.ndarray, y: np.ndarray, z: np.ndarray, seed: int) -> float:
        return float(ci(x, y, z, augment=False, cache=False).pvalue)

    def zhang(x: np.ndarray, y: np.ndarray, z: np.ndarray, seed: int) -> float:
        return float(ci(x, y, z, null_moments="zhang").pvalue)

    def max_df(frac: float) -> Callable[..., float]:
        def run(x: np.ndarray, y: np.ndarray, z: np.ndarray, seed: int) -> float:
            g = Gaussian()
            stat = KCI(g, g, g, regression=ConditionalMeanEmbedding(max_df=frac), cache=False)
            return float(ci(x, y, z, statistic=stat).pvalue)
        return run

    return {"km kci gcv gamma max_df=0.25": max_df(0.25),
            "km kci gcv gamma max_df=1": max_df(1.0),
            "km kci gcv gamma augment=False": no_augment,
            "km kci gcv gamma zhang": zhang,
            "km kci gcv gamma ARD (both)": ard("both"),
            "km kci gcv gamma ARD (y)": ard("y")}


def tests(n: int, dz: int, methods: str = "all", multi: bool = False
          ) -> dict[str, Callable[..., float]]:
    out: dict[str, Callable[..., float]] = {}
    if methods in ("all", "kmtests"):
        km = lv.kmtests_methods(n, dz, False)
        out.update({k: km[k] for k in KMTESTS})
        if multi:
            out.update(multi_variants())
    if methods in ("all", "causallearn"):
        cl = lv.causallearn_methods()
        out.update({k: cl[k] for k in CAUSALLEARN})
    return out


def run_cell(scenario: str, n: int, reps: int, gp_reps: int, writer: Any,
             deps: tuple[float, ...], flush: Callable[[], None] | None = None,
             methods: str = "all", only: tuple[str, ...] = (), first: int = 0) -> None:
    from kmtests.estimators.conditional import clear_cache

    dz = lv.draw(scenario, np.random.default_rng(0), 8)[2].shape[1]
    todo = tests(n, dz, methods, multi=scenario in lv.MULTI)
    if only:
        todo = {k: v for k, v in todo.items() if k in only}
    for dep in deps:
        for rep in range(first, first + reps):
            seed = lv.seed_of("power", scenario, n, dep, rep)
            x, y, z = lv.draw(scenario, np.random.default_rng(seed), n, dep)
            clear_cache()
            for name, test in todo.items():
                if name == "cl KCI use_gp" and rep >= first + gp_reps:
                    continue
                lv.record(writer, (scenario, n, dep, rep, name), test, (x, y, z), seed)
            if flush is not None:
                flush()


def summarize(raw_files: list[str]) -> list[dict[str, Any]]:
    """One row per (scenario, n, method): the level on the null and the power."""
    rows = lv.summarize(raw_files)
    out = []
    index = {(r["scenario"], r["n"], r["method"], r["dep"] == 0): r for r in rows}
    for (scen, n, meth, null), r in index.items():
        if null:
            continue
        z = index.get((scen, n, meth, True))
        ok = z is not None and z["verdict"] == "inside"
        out.append({"scenario": scen, "n": n, "method": meth, "dep": r["dep"],
                    "null_reps": z["reps"] if z else 0,
                    "null_rejections": z["rejections"] if z else "",
                    "level": z["rate"] if z else float("nan"),
                    "level_verdict": z["verdict"] if z else "not measured",
                    "level_ok": bool(ok), "alt_reps": r["reps"], "alt_rejections": r["rejections"],
                    "power": r["rate"], "power_ci_low": r["ci_low"], "power_ci_high": r["ci_high"],
                    "mean_seconds": 0.5 * (r["mean_seconds"] + (z["mean_seconds"] if z
                                                                else r["mean_seconds"]))})
    return out


def size_adjusted(raw_files: list[str], alpha: float = 0.05) -> list[dict[str, Any]]:
    """Power at equal level: for each (scenario, n, method), the share of the alternative's
    p-values at or below the `alpha`-quantile of the method's own null p-values (the
    same data sets for every method), beside the rejections at `alpha`; and, for each
    pair of methods, the data sets of the alternative only one of them rejects (the
    exact McNemar test of their difference is ``scipy.stats.binomtest``)."""
    import pandas as pd

    d = pd.concat([pd.read_csv(f) for f in raw_files], ignore_index=True)
    d = d[np.isfinite(d["pvalue"])]
    out = []
    for (scen, n, meth), g in d.groupby(["scenario", "n", "method"], sort=False):
        p0 = g.loc[g["dep"] == 0, "pvalue"].to_numpy()
        p1 = g.loc[g["dep"] > 0, "pvalue"].to_numpy()
        if p0.size == 0 or p1.size == 0:
            continue
        thr = float(np.quantile(p0, alpha))
        out.append({"scenario": scen, "n": int(n), "method": meth,
                    "null_rejections": int((p0 <= alpha).sum()), "null_reps": int(p0.size),
                    "alt_rejections": int((p1 <= alpha).sum()), "alt_reps": int(p1.size),
                    "threshold": thr, "size_adjusted_power": float(np.mean(p1 <= thr))})
    return out


def markdown(rows: list[dict[str, Any]]) -> str:
    cells = list(dict.fromkeys((r["scenario"], r["n"]) for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    index = {(r["scenario"], r["n"], r["method"]): r for r in rows}
    lines = ["| method | " + " | ".join(f"{s} n={n}" for s, n in cells) + " |",
             "|---|" + "---|" * len(cells)]
    for m in methods:
        out = []
        for c in cells:
            r = index.get((*c, m))
            if r is None:
                out.append("")
                continue
            txt = (f"{r['power']:.2f} [{r['power_ci_low']:.2f}, {r['power_ci_high']:.2f}] "
                   f"({r['null_rejections']}/{r['null_reps']})")
            out.append(txt if r["level_ok"] else f"~~{txt}~~")
        lines.append(f"| {m} | " + " | ".join(out) + " |")
    return "\n".join(lines)


def _scenarios(text: str) -> list[str]:
    out: list[str] = []
    for s in (t.strip() for t in text.split(",")):
        out.extend(lv.MULTI if s == "multi" else ([s] if s else []))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenarios", default=",".join(DEP),
                    help="comma-separated; 'multi' = the multivariate-z designs of issue 29")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--first", type=int, default=0,
                    help="the first data set (another range: data sets no choice was made on)")
    ap.add_argument("--gp-reps", type=int, default=100)
    ap.add_argument("--dep", type=float, default=None, help="override the alternative's dep")
    ap.add_argument("--alt-only", action="store_true", help="skip the null data sets")
    ap.add_argument("--methods", choices=["all", "kmtests", "causallearn"], default="all")
    ap.add_argument("--only", default="", help="comma-separated method names to run")
    ap.add_argument("--raw", default=str(HERE / "results" / "ci_power_raw.csv"))
    ap.add_argument("--summarize", nargs="+", metavar="RAW", default=None)
    ap.add_argument("--size-adjusted", nargs="+", metavar="RAW", default=None,
                    help="print the power at equal level (each method's own null quantile)")
    ap.add_argument("--out", default=str(HERE / "results" / "ci_power.csv"))
    args = ap.parse_args(argv)
    if args.size_adjusted:
        for r in size_adjusted(args.size_adjusted):
            print(f"| {r['scenario']} | {r['method']} | {r['null_rejections']}/{r['null_reps']} "
                  f"| {r['alt_rejections']}/{r['alt_reps']} | {r['threshold']:.4f} "
                  f"| {r['size_adjusted_power']:.3f} |")
        return 0
    if args.summarize:
        rows = summarize(args.summarize)
        lv.write_summary(rows, Path(args.out))
        print(markdown(rows))
        print(f"\nwrote {args.out}")
        return 0
    def cell(scen: str) -> Callable[[Any, Callable[[], None]], None]:
        dep = DEP[scen] if args.dep is None else args.dep
        deps = (dep,) if args.alt_only else (0.0, dep)
        only = tuple(m.strip() for m in args.only.split(",") if m.strip())
        return lambda w, flush: run_cell(scen, args.n, args.reps, args.gp_reps, w, deps,
                                         flush, args.methods, only, args.first)

    lv.append_raw(args.raw, ((f"{scen} n={args.n}: {args.reps} data sets per hypothesis",
                              cell(scen))
                             for scen in _scenarios(args.scenarios)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
