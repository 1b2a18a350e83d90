"""The level on a multivariate z: marginal transforms of z, per-regression ARD and
undersmoothing, against the table of ``ci_power.py --scenarios multi`` (issue 29, items 1-2).

The variants (:func:`variants`) are measured on the *same* data sets as
``benchmarks/ci_power.py`` (its seeding: ``seed_of("power", scenario, n, dep, rep)``),
so they compare row by row with the "Multivariate z" table of ``benchmarks/README.md``:

* ``z_transform="normal_scores"`` / ``"rank"`` ("ns", "rank"): each coordinate of z
  replaced by its normal scores ``Phi^-1(rank / (n + 1))`` or ``rank / (n + 1)``
  (conditional independence is invariant under an invertible map of z);
* ``bandwidth_z="ard"`` (one ARD bandwidth per coordinate shared by x's and y's
  regressions) and ``"ard_each"`` ("per-target": one set per regression, scored on its
  own target); "3 passes": a longer ARD search (``ard_bandwidths(..., passes=3)``);
* ``undersmooth=10`` / ``100`` ("lam/10", "lam/100"): the searched ``lam`` divided by 10
  or 100 (less bias in the residuals);
* ``criterion="marglik"``; the default (``km default``) and ``bandwidth_z="ard"``
  rerun on the same data sets for paired comparisons.

Each raw row (``--raw``, the format of :mod:`ci_level`) has the wall seconds of the call;
``--cpu CALLS`` times calls (wall and CPU seconds of the process, one BLAS thread) at
d_z = 1, 2, 3, 5, 10. ``--summarize`` prints the null table (with the pooled count and
its 99 % band), the power table and writes the summary CSV.

Run from the repository root, under ``nice``, in pieces (``--only``, ``--scenarios``,
``--first``, ``--null-only`` / ``--alt-only``)::

    nice -n 10 .venv/bin/python benchmarks/multiz_transform.py --scenarios tz3,tz5 \\
        --reps 100 --only "km default,km ard per-target lam/10" --raw /tmp/multiz_raw.csv
    .venv/bin/python benchmarks/multiz_transform.py --summarize /tmp/multiz_raw.csv
    nice -n 10 .venv/bin/python benchmarks/multiz_transform.py --cpu 10
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ci_level as lv  # noqa: E402
import ci_power as cp  # noqa: E402

HERE = Path(__file__).resolve().parent


def _longer_ard(z_transform: str, passes: int) -> Any:
    """KCI with ``bandwidth_z="ard_each"`` whose searches run up to `passes` sweeps
    (:func:`kmtests.statistics.kci.ard_bandwidths` with `passes`) instead of the
    library's one, a benchmark-side variant."""
    from kmtests.estimators.conditional import z_spectrum
    from kmtests.kernels import ARDGaussian, Gaussian
    from kmtests.statistics.kci import KCI, ard_bandwidths

    class LongerARD(KCI):
        def _fit(self, z: np.ndarray, *targets: np.ndarray, spectra: Any = None) -> Any:
            reg = self.regression
            out = []
            for K in targets:
                k = ARDGaussian(bandwidth=ard_bandwidths(z, [K], reg, passes))
                out.append(reg.fit([k], z, K, spectra=[z_spectrum(k, z, cache=False)]))
            return out

    g = Gaussian()
    return LongerARD(g, g, g, bandwidth_z="ard_each", cache=False, z_transform=z_transform)


def variants() -> dict[str, Callable[..., float]]:
    """The configurations measured (see the module docs); each ``f(x, y, z, seed) -> p``.
    ("per-target" is ``bandwidth_z="ard_each"``, "lam/10" ``undersmooth=10``, "ns"
    ``z_transform="normal_scores"``; the per-target rows were first measured with a
    benchmark-side subclass, bit-identical to the library's ``"ard_each"``, checked.)"""
    from kmtests import conditional_independence_test as ci

    def km(**kw: Any) -> Callable[..., float]:
        def run(x: np.ndarray, y: np.ndarray, z: np.ndarray, seed: int) -> float:
            return float(ci(x, y, z, cache=False, **kw).pvalue)
        return run

    def longer(transform: str) -> Callable[..., float]:
        def run(x: np.ndarray, y: np.ndarray, z: np.ndarray, seed: int) -> float:
            return float(ci(x, y, z, statistic=_longer_ard(transform, 3)).pvalue)
        return run

    ns = "normal_scores"
    return {"km default": km(), "km ard": km(bandwidth_z="ard"),
            "km lam/10": km(undersmooth=10.0), "km lam/100": km(undersmooth=100.0),
            "km ard lam/10": km(bandwidth_z="ard", undersmooth=10.0),
            "km ard lam/100": km(bandwidth_z="ard", undersmooth=100.0),
            "km ard per-target lam/10": km(bandwidth_z="ard_each", undersmooth=10.0),
            "km ard per-target": km(bandwidth_z="ard_each"),
            "km ard per-target 3 passes": longer("none"),
            "km ns auto": km(z_transform=ns),
            "km ns ard": km(z_transform=ns, bandwidth_z="ard"),
            "km ns ard marglik": km(z_transform=ns, bandwidth_z="ard", criterion="marglik"),
            "km rank ard": km(z_transform="rank", bandwidth_z="ard"),
            "km ns ard per-target": km(z_transform=ns, bandwidth_z="ard_each"),
            "km ns ard per-target marglik": km(z_transform=ns, bandwidth_z="ard_each",
                                               criterion="marglik"),
            "km ns ard per-target 3 passes": longer(ns),
            "km ns lam/10": km(z_transform=ns, undersmooth=10.0),
            "km ns ard lam/10": km(z_transform=ns, bandwidth_z="ard", undersmooth=10.0)}


def run_cell(scenario: str, n: int, reps: int, first: int, writer: Any,
             deps: tuple[float, ...], only: tuple[str, ...],
             flush: Callable[[], None] | None = None) -> None:
    todo = variants()
    if only:
        todo = {k: v for k, v in todo.items() if k in only}
    for dep in deps:
        for rep in range(first, first + reps):
            seed = lv.seed_of("power", scenario, n, dep, rep)
            x, y, z = lv.draw(scenario, np.random.default_rng(seed), n, dep)
            for name, test in todo.items():
                lv.record(writer, (scenario, n, dep, rep, name), test, (x, y, z), seed)
            if flush is not None:
                flush()


def cpu_times(calls: int, only: tuple[str, ...]) -> None:
    """Wall and CPU seconds per call (median of `calls` data sets of the ``inter`` design
    at d_z = 1, 2, 3, 5, 10; one BLAS thread; the process's CPU time)."""
    from threadpoolctl import threadpool_limits

    from kmtests import conditional_independence_test as ci

    threadpool_limits(1)
    configs = {"default": {}, "lam/10": {"undersmooth": 10.0},
               "ns": {"z_transform": "normal_scores"},
               "ard": {"bandwidth_z": "ard"},
               "ard lam/10": {"bandwidth_z": "ard", "undersmooth": 10.0},
               "ard_each lam/10": {"bandwidth_z": "ard_each", "undersmooth": 10.0}}
    if only:
        configs = {k: v for k, v in configs.items() if k in only}
    print(f"load before: {os.getloadavg()}")
    for dz in (1, 2, 3, 5, 10):
        for name, kw in configs.items():
            wall, cpu = [], []
            for rep in range(calls):
                gen = np.random.default_rng(lv.seed_of("cpu", dz, rep))
                if dz == 1:
                    z = gen.normal(size=(200, 1))
                    x = np.sin(z) + 0.4 * gen.normal(size=(200, 1))
                    y = np.cos(z) + 0.4 * gen.normal(size=(200, 1))
                else:
                    x, y, z = lv.draw(f"inter{dz}", gen, 200)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    c0, t0 = time.process_time(), time.perf_counter()
                    ci(x, y, z, cache=False, **kw)
                    wall.append(time.perf_counter() - t0)
                    cpu.append(time.process_time() - c0)
            print(f"d_z={dz:2d} {name:18s} wall {np.median(wall):.3f} s  CPU "
                  f"{np.median(cpu):.3f} s  (median of {calls})", flush=True)
    print(f"load after: {os.getloadavg()}")


def markdown(rows: list[dict[str, Any]]) -> str:
    """Two tables from :func:`ci_level.summarize`'s rows: null rejections / data sets (bold
    above, italic below the 99 % band) with the pooled count and its band, and power at
    the alternative (struck through where the level is outside the band)."""
    cells = list(dict.fromkeys(r["scenario"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    null = {(r["scenario"], r["method"]): r for r in rows if r["dep"] == 0}
    alt = {(r["scenario"], r["method"]): r for r in rows if r["dep"] != 0}
    head = "| method | " + " | ".join(cells)
    t_null = [head + " | pooled |", "|---|" + "---:|" * (len(cells) + 1)]
    t_alt = [head + " |", "|---|" + "---:|" * len(cells)]
    for m in methods:
        a, b = [], []
        k_all = r_all = 0
        for c in cells:
            r0, r1 = null.get((c, m)), alt.get((c, m))
            if r0 is None:
                a.append("")
            else:
                k, reps = int(r0["rejections"]), int(r0["reps"])
                k_all, r_all = k_all + k, r_all + reps
                txt = f"{k}/{reps}"
                a.append(f"**{txt}**" if r0["verdict"] == "above" else
                         (f"_{txt}_" if r0["verdict"] == "below" else txt))
            if r1 is None:
                b.append("")
            else:
                txt = f"{r1['rate']:.2f} [{r1['ci_low']:.2f}, {r1['ci_high']:.2f}] ({r1['reps']})"
                b.append(txt if r0 is not None and r0["verdict"] == "inside" else f"~~{txt}~~")
        if r_all:
            lo, hi = lv.band(r_all)
            clo, chi = lv.clopper_pearson(k_all, r_all)
            a.append(f"{k_all}/{r_all} = {k_all / r_all:.3f} [{clo:.3f}, {chi:.3f}] "
                     f"(band {lo}-{hi})")
        else:
            a.append("")
        t_null.append(f"| {m} | " + " | ".join(a) + " |")
        t_alt.append(f"| {m} | " + " | ".join(b) + " |")
    secs = {m: [r["mean_seconds"] for r in rows if r["method"] == m] for m in methods}
    timing = "\n".join(f"* {m}: mean wall seconds per call {min(v):.2f}-{max(v):.2f} "
                        f"over the cells" for m, v in secs.items())
    return "\n".join(t_null) + "\n\n" + "\n".join(t_alt) + "\n\n" + timing


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenarios", default="multi")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--null-only", action="store_true")
    ap.add_argument("--alt-only", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated variant names")
    ap.add_argument("--raw", default=str(HERE / "results" / "multiz_raw.csv"))
    ap.add_argument("--summarize", nargs="+", metavar="RAW", default=None)
    ap.add_argument("--out", default=str(HERE / "results" / "multiz_transform.csv"))
    ap.add_argument("--cpu", type=int, default=0, metavar="CALLS",
                    help="time CALLS calls per configuration at d_z = 1, 2, 3, 5, 10")
    args = ap.parse_args(argv)
    only = tuple(m.strip() for m in args.only.split(",") if m.strip())
    if args.cpu:
        cpu_times(args.cpu, only)
        return 0
    if args.summarize:
        rows = lv.summarize(args.summarize)
        lv.write_summary(rows, Path(args.out))
        print(markdown(rows))
        print(f"\nwrote {args.out}")
        return 0

    def cell(scen: str) -> Callable[[Any, Callable[[], None]], None]:
        dep = cp.DEP[scen]
        deps = (0.0,) if args.null_only else ((dep,) if args.alt_only else (0.0, dep))
        return lambda w, flush: run_cell(scen, args.n, args.reps, args.first, w, deps, only,
                                         flush)

    lv.append_raw(args.raw, ((f"{scen} n={args.n}: data sets {args.first}.."
                              f"{args.first + args.reps - 1}", cell(scen))
                             for scen in cp._scenarios(args.scenarios)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
