"""Level of the conditional independence tests on a battery of conditional nulls.

Every data set of a cell is tested by every variant of
:func:`kmtests.conditional_independence_test` — the statistic (``"kci"``, ``"split"``)
x the tuning criterion (``"gcv"``, ``"loo"``, ``"marglik"``) x the approximate null
(``"gamma"``, ``"chi2"``, ``"wild"``), two other spectral filters, the regression
with only ``lam`` tuned (``bandwidth_z="median"``), kmtests with causal-learn's fixed
settings (``bandwidth = w sqrt(d_z)`` for x, y and z, ``lam = 1e-3 / n``) and, when z
is discrete, the exact permutations within its strata — and, side by side on the
same data sets, by causal-learn 0.1.4.8: ``KCI_CInd()`` (gamma, ``approx=True``), its
spectral null (``approx=False``, 5000 draws), ``KCI_CInd(use_gp=True)`` (on the first
``--gp-reps`` data sets of a cell: it costs ~1 s per call at n = 200, ~30 s at n = 500)
and RCIT (``causallearn.utils.RCIT``, Strobl et al. 2019; default ``approx="lpd4"``).

The nulls (X independent of Y given Z; ``e``, ``e'`` independent N(0, 1) unless said):

* ``linear``: x = z + 0.5 e, y = z + 0.5 e';
* ``smooth``: x = sin(2z) + 0.3 e, y = cos(2z) + 0.3 e';
* ``sharp``: x = sin(6z) + 0.3 e, y = cos(6z) + 0.3 e' (high frequency);
* ``hetero``: x = sin(2z) + (0.1 + 0.4|z|) e, y = cos(2z) + (0.1 + 0.4|z|) e';
* ``heavy``: x = sin(2z) + 0.3 t_2, y = cos(2z) + 0.3 t_2' (Student t, 2 df);
* ``index3``, ``index5``: z in R^3, R^5 (N(0, I)), x = sin(2 u'z) + 0.3 e,
  y = cos(2 v'z) + 0.3 e', u = (1, ..., 1) / sqrt(d), v = (1, -1, 1, ...) / sqrt(d):
  every coordinate matters;
* ``pnl1``, ``pnl3``, ``pnl5``: the post-nonlinear "Case I" of Zhang et al. (2011) as
  the KCIPT and SDCIT experiments write it (Doran et al. 2014; Lee & Honavar 2017):
  x = G(0.7 (z^3/5 + z/2) + tanh(e)) with G(u) = u + u^3/3 + tanh(u/3)/2,
  y = H(e' + (z^3/4 + z)/3) with H(v) = v + tanh(v/3), each standardised; z1 alone is
  effective, ``pnl3``/``pnl5`` append 2/4 independent N(0, 1) coordinates;
* ``discrete``: z uniform on {0, 1, 2}; x = (0, 1.5, -1)[z] + (0.3, 1.0, 0.6)[z] e,
  y = (1, -1, 0.5)[z] + (0.5, 0.3, 1.0)[z] e' (a mean and a scale per level).

The alternatives of ``benchmarks/ci_power.py`` add a dependence of strength ``dep``
(see :func:`draw`). alpha = 0.05; a variant keeps the level in a cell when its
rejection count lies inside the two-sided 99% band of Bin(R, 0.05) (R data sets);
rates with Clopper-Pearson 95% intervals. Every p-value, time and warning is kept in
the raw CSV (``--raw``, git-ignored); ``--summarize`` turns raw files into the summary
CSV and the Markdown table.

Run from the repository root in an environment with both kmtests and causal-learn
(one BLAS thread per process)::

    .venv-cl/bin/python benchmarks/ci_level.py --n 200 --scenarios smooth,sharp \\
        --reps 500 --gp-reps 100 --raw benchmarks/results/ci_level_a_raw.csv
    .venv-cl/bin/python benchmarks/ci_level.py --summarize benchmarks/results/ci_level_*_raw.csv
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import csv  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
import zlib  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

HERE = Path(__file__).resolve().parent
ALPHA = 0.05
B = 999  # draws of the chi2 and wild nulls and of the permutations within strata

Data = tuple[np.ndarray, np.ndarray, np.ndarray]


# -- the scenarios --------------------------------------------------------------------------------
def _std(a: np.ndarray) -> np.ndarray:
    return (a - a.mean()) / a.std(ddof=1)


def _pnl(gen: np.random.Generator, n: int, dz: int, dep: float) -> Data:
    z = gen.normal(size=n)
    ex, ey = gen.normal(size=n), gen.normal(size=n)
    u = 0.7 * (z ** 3 / 5 + z / 2) + np.tanh(ex)
    x = _std(u + u ** 3 / 3 + np.tanh(u / 3) / 2)
    v = ey + (z ** 3 / 4 + z) / 3
    y = _std(v + np.tanh(v / 3))
    zs = _std(z)[:, None]
    if dz > 1:
        zs = np.hstack([zs, gen.normal(size=(n, dz - 1))])
    if dep:
        c = gen.normal(size=n)
        x, y = x + dep * c, y + dep * c
    return x[:, None], y[:, None], zs


def _index(gen: np.random.Generator, n: int, dz: int, dep: float) -> Data:
    z = gen.normal(size=(n, dz))
    u = np.ones(dz) / np.sqrt(dz)
    v = np.where(np.arange(dz) % 2 == 0, 1.0, -1.0) / np.sqrt(dz)
    ex, ey = gen.normal(size=n), gen.normal(size=n)
    x = np.sin(2 * z @ u) + 0.3 * ex
    y = np.cos(2 * z @ v) + 0.3 * ey + dep * ex
    return x[:, None], y[:, None], z


def _multi(gen: np.random.Generator, n: int, dz: int, dep: float, kind: str) -> Data:
    """The multivariate-z designs of issue 29 (z of dimension `dz`):

    * ``inter``: z ~ N(0, I); x = sin(z1) + 0.5 tanh(z1 z2) + 0.4 e,
      y = cos(z1) + 0.5 tanh(z1 z2) + 0.4 e' (an interaction of z1 and z2; the other
      coordinates irrelevant);
    * ``tz``: z with i.i.d. Student t_3 coordinates (heavy tails); u = the sum of the
      first min(dz, 3) coordinates / sqrt(their number); x = sin(u) + 0.4 e,
      y = cos(u) + 0.4 e' (a single index; the other coordinates irrelevant).

    The alternative adds ``dep e`` to y."""
    ex, ey = gen.normal(size=n), gen.normal(size=n)
    if kind == "inter":
        z = gen.normal(size=(n, dz))
        w = 0.5 * np.tanh(z[:, 0] * z[:, 1])
        x = np.sin(z[:, 0]) + w + 0.4 * ex
        y = np.cos(z[:, 0]) + w + 0.4 * ey
    else:
        z = gen.standard_t(3, size=(n, dz))
        k = min(dz, 3)
        u = z[:, :k].sum(axis=1) / np.sqrt(k)
        x = np.sin(u) + 0.4 * ex
        y = np.cos(u) + 0.4 * ey
    y = y + dep * ex
    return x[:, None], y[:, None], z


def draw(scenario: str, gen: np.random.Generator, n: int, dep: float = 0.0) -> Data:
    """One data set (x, y, z), each of shape (n, d). ``dep = 0``: the null.

    The alternatives: ``linear``, ``smooth``, ``sharp``, ``hetero``, ``heavy`` and
    ``index*`` add ``dep`` times x's noise to y (``y += dep e``); ``pnl*`` add one
    N(0, dep^2) term to both x and y (Zhang et al.'s alternative: dep = 0.5);
    ``discrete`` adds ``dep e`` to y.
    """
    if scenario.startswith("pnl"):
        return _pnl(gen, n, int(scenario[3:]), dep)
    if scenario.startswith("index"):
        return _index(gen, n, int(scenario[5:]), dep)
    if scenario.startswith("inter"):
        return _multi(gen, n, int(scenario[5:]), dep, "inter")
    if scenario.startswith("tz"):
        return _multi(gen, n, int(scenario[2:]), dep, "tz")
    if scenario == "discrete":
        z = gen.integers(0, 3, size=n)
        ex, ey = gen.normal(size=n), gen.normal(size=n)
        x = np.array([0.0, 1.5, -1.0])[z] + np.array([0.3, 1.0, 0.6])[z] * ex
        y = np.array([1.0, -1.0, 0.5])[z] + np.array([0.5, 0.3, 1.0])[z] * ey + dep * ex
        return x[:, None], y[:, None], z[:, None].astype(float)
    z = gen.normal(size=n)
    if scenario == "heavy":
        ex, ey = gen.standard_t(2, size=n), gen.standard_t(2, size=n)
    else:
        ex, ey = gen.normal(size=n), gen.normal(size=n)
    if scenario == "linear":
        x, y = z + 0.5 * ex, z + 0.5 * ey
    elif scenario == "smooth" or scenario == "heavy":
        x, y = np.sin(2 * z) + 0.3 * ex, np.cos(2 * z) + 0.3 * ey
    elif scenario == "sharp":
        x, y = np.sin(6 * z) + 0.3 * ex, np.cos(6 * z) + 0.3 * ey
    elif scenario == "hetero":
        s = 0.1 + 0.4 * np.abs(z)
        x, y = np.sin(2 * z) + s * ex, np.cos(2 * z) + s * ey
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    y = y + dep * ex
    return x[:, None], y[:, None], z[:, None]


SCENARIOS = ("linear", "smooth", "sharp", "hetero", "heavy", "index3", "index5", "pnl1",
             "pnl3", "pnl5", "discrete")
#: the multivariate-z designs of issue 29 (:func:`_multi`)
MULTI = tuple(f"{k}{d}" for k in ("inter", "tz") for d in (2, 3, 5, 10))


def seed_of(*key: object) -> int:
    return 20260000 + zlib.crc32("/".join(map(str, key)).encode()) % 100000


# -- the tests ------------------------------------------------------------------------------------
def cl_width(n: int) -> float:
    """causal-learn's "empirical" width (before the sqrt(d_z) factor)."""
    return 1.2 if n < 200 else (0.7 if n < 1200 else 0.4)


def kmtests_methods(n: int, dz: int, discrete: bool) -> dict[str, Callable[..., float]]:
    from kmtests import conditional_independence_test as ci

    def km(**kw: Any) -> Callable[..., float]:
        def run(x: np.ndarray, y: np.ndarray, z: np.ndarray, seed: int) -> float:
            extra = dict(kw)
            if extra.get("method") in ("chi2", "wild") or extra.get("statistic") == "split" \
                    or "strata" in extra:
                extra["rng"] = seed
            if extra.get("method") in ("chi2", "wild") or "strata" in extra:
                extra["n_resamples"] = B
            if "strata" in extra:
                extra["strata"] = z[:, 0]
            return ci(x, y, z, cache=False, **extra).pvalue
        return run

    out: dict[str, Callable[..., float]] = {}
    for stat in ("kci", "split"):
        for crit in ("gcv", "loo", "marglik"):
            for meth in ("gamma", "chi2", "wild"):
                if stat == "split" and meth == "wild":
                    continue  # refused: 11-30% rejections at 5% before (see the README)
                kw: dict[str, Any] = {"criterion": crit, "method": meth}
                if stat == "split":
                    kw["statistic"] = "split"
                out[f"km {stat} {crit} {meth}"] = km(**kw)
    out["km kci gcv gamma showalter"] = km(filter="showalter")
    out["km kci gcv gamma cutoff"] = km(filter="cutoff")
    out["km kci gcv gamma bwz=median"] = km(bandwidth_z="median")
    w = cl_width(n) * np.sqrt(dz)
    fixed = {"bandwidth_x": w, "bandwidth_y": w, "bandwidth_z": w, "lam": 1e-3 / n}
    out["km cl-fixed gamma"] = km(**fixed)
    if discrete:
        out["km kci gcv strata"] = km(strata=True)
        out["km cl-fixed strata"] = km(strata=True, **fixed)
    return out


def causallearn_methods() -> dict[str, Callable[..., float]]:
    from causallearn.utils.KCI.KCI import KCI_CInd
    from causallearn.utils.RCIT.RCIT import RCIT

    def cl(**kw: Any) -> Callable[..., float]:
        def run(x: np.ndarray, y: np.ndarray, z: np.ndarray, seed: int) -> float:
            np.random.seed(seed % 2**32)  # approx=False draws from numpy's global state
            return float(KCI_CInd(**kw).compute_pvalue(x, y, z)[0])
        return run

    def rcit(x: np.ndarray, y: np.ndarray, z: np.ndarray, seed: int) -> float:
        np.random.seed(seed % 2**32)  # the random features
        return float(RCIT().compute_pvalue(x, y, z)[0])

    return {"cl KCI gamma": cl(), "cl KCI chi2": cl(approx=False),
            "cl KCI use_gp": cl(use_gp=True), "cl RCIT": rcit}


FIELDS = ["scenario", "n", "dep", "rep", "method", "pvalue", "seconds", "warned", "error"]


def run_cell(scenario: str, n: int, reps: int, dep: float, gp_reps: int, writer: Any,
             methods: str = "all", first: int = 0, flush: Callable[[], None] | None = None
             ) -> None:
    """Test data sets ``first .. first + reps - 1`` of the cell; one raw row per test."""
    from kmtests.estimators.conditional import clear_cache

    gen0 = draw(scenario, np.random.default_rng(0), 8)
    dz = gen0[2].shape[1]
    tests: dict[str, Callable[..., float]] = {}
    if methods in ("all", "kmtests"):
        tests.update(kmtests_methods(n, dz, scenario == "discrete"))
    if methods in ("all", "causallearn"):
        tests.update(causallearn_methods())
    for rep in range(first, first + reps):
        seed = seed_of(scenario, n, dep, rep)
        x, y, z = draw(scenario, np.random.default_rng(seed), n, dep)
        clear_cache()
        for name, test in tests.items():
            if name == "cl KCI use_gp" and rep >= gp_reps:
                continue
            record(writer, (scenario, n, dep, rep, name), test, (x, y, z), seed)
        if flush is not None:
            flush()


def record(writer: Any, key: tuple[Any, ...], test: Callable[..., float],
           data: Data, seed: int) -> None:
    """Run one test on one data set and write its raw row: `key` (scenario, n, dep, rep,
    method), the p-value, seconds, warnings raised (not deprecations) and any error."""
    err = ""
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            p = test(*data, seed)
        except Exception as exc:  # recorded, not fatal
            p, err = float("nan"), f"{type(exc).__name__}: {exc}"[:200]
    sec = time.perf_counter() - t0
    warned = sum(1 for w in caught if not issubclass(w.category, DeprecationWarning))
    writer.writerow([*key, f"{p:.6g}", f"{sec:.5f}", warned, err])


def append_raw(path: str, cells: Any) -> None:
    """Append the raw rows of every cell to `path` (header first when new), one BLAS
    thread; `cells` yields ``(label, run)`` with ``run(writer, flush)`` testing one cell."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    raw = Path(path)
    raw.parent.mkdir(parents=True, exist_ok=True)
    new = not raw.exists()
    t0 = time.time()
    with raw.open("a", newline="") as fh:
        w = csv.writer(fh)
        if new:
            w.writerow(FIELDS)
        for label, run in cells:
            run(w, fh.flush)
            print(f"{label} ({time.time() - t0:.0f} s)", flush=True)


# -- the summary ----------------------------------------------------------------------------------
def band(reps: int) -> tuple[int, int]:
    return (int(stats.binom.ppf(0.005, reps, ALPHA)), int(stats.binom.ppf(0.995, reps, ALPHA)))


def clopper_pearson(k: int, m: int, level: float = 0.95) -> tuple[float, float]:
    a = 1.0 - level
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a / 2, k, m - k + 1))
    hi = 1.0 if k == m else float(stats.beta.ppf(1 - a / 2, k + 1, m - k))
    return lo, hi


def summarize(raw_files: list[str]) -> list[dict[str, Any]]:
    import pandas as pd

    raw = pd.concat([pd.read_csv(f, keep_default_na=False, na_values=["nan"])
                     for f in raw_files], ignore_index=True)
    raw = raw.drop_duplicates(["scenario", "n", "dep", "rep", "method"], keep="last")
    rows = []
    for (scen, n, dep, meth), g in raw.groupby(["scenario", "n", "dep", "method"], sort=False):
        ok = g[g["error"].astype(str) == ""]
        m = len(ok)
        k = int((ok["pvalue"] <= ALPHA).sum())
        lo, hi = clopper_pearson(k, m) if m else (float("nan"), float("nan"))
        b_lo, b_hi = band(m) if m else (0, 0)
        verdict = "inside" if b_lo <= k <= b_hi else ("above" if k > b_hi else "below")
        rows.append({"scenario": scen, "n": int(n), "dep": float(dep), "method": meth,
                     "reps": m, "rejections": k, "rate": k / m if m else float("nan"),
                     "ci_low": lo, "ci_high": hi, "band_low": b_lo, "band_high": b_hi,
                     "verdict": verdict if dep == 0 else "",
                     "mean_seconds": float(g["seconds"].mean()),
                     "warned": int((g["warned"] > 0).sum()), "errors": len(g) - m})
    return rows


def write_summary(rows: list[dict[str, Any]], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()})


def markdown(rows: list[dict[str, Any]]) -> str:
    """Methods as rows, (scenario, n) cells as columns: rejections/R, bold outside the band."""
    cells = list(dict.fromkeys((r["scenario"], r["n"]) for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    index = {(r["scenario"], r["n"], r["method"]): r for r in rows}
    head = "| method | " + " | ".join(f"{s} n={n}" for s, n in cells) + " |"
    lines = [head, "|---|" + "---:|" * len(cells)]
    for m in methods:
        out = []
        for s, n in cells:
            r = index.get((s, n, m))
            if r is None:
                out.append("")
                continue
            txt = f"{r['rejections']}/{r['reps']}"
            out.append(f"**{txt}**" if r["verdict"] == "above" else
                       (f"_{txt}_" if r["verdict"] == "below" else txt))
        lines.append(f"| {m} | " + " | ".join(out) + " |")
    return "\n".join(lines)


TIMED = ("km kci gcv gamma", "km kci marglik gamma", "km kci loo gamma", "km kci gcv chi2",
         "km split gcv gamma", "km cl-fixed gamma", "cl KCI gamma", "cl KCI chi2",
         "cl KCI use_gp", "cl RCIT")


def timing(ns: tuple[int, ...], calls: int, gp_calls: int, out: Path) -> None:
    """Seconds per call (median and best of `calls` data sets of ``pnl1``), one thread."""
    import sys

    sys.path.insert(0, str(HERE))
    from _benchutil import foreign_load

    rows = []
    for n in ns:
        tests = {**kmtests_methods(n, 1, False), **causallearn_methods()}
        busy = foreign_load(1.0)
        for name in TIMED:
            k = gp_calls if name == "cl KCI use_gp" else calls
            secs = []
            for rep in range(k):
                x, y, z = draw("pnl1", np.random.default_rng(seed_of("timing", n, rep)), n)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    tests[name](x, y, z, rep)
                    secs.append(time.perf_counter() - t0)
            rows.append({"n": n, "method": name, "calls": k, "median_s": float(np.median(secs)),
                         "best_s": float(np.min(secs)), "foreign_load": busy})
            print(f"n={n} {name:24s} median {np.median(secs):.4f} s, best {np.min(secs):.4f} s"
                  f" ({k} calls; other jobs kept {busy:.1f} cores busy)", flush=True)
    write_summary(rows, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--first", type=int, default=0, help="index of the first data set")
    ap.add_argument("--gp-reps", type=int, default=100,
                    help="data sets per cell (the first ones) tested by use_gp=True")
    ap.add_argument("--methods", choices=["all", "kmtests", "causallearn"], default="all")
    ap.add_argument("--raw", default=str(HERE / "results" / "ci_level_raw.csv"))
    ap.add_argument("--summarize", nargs="+", metavar="RAW", default=None)
    ap.add_argument("--out", default=str(HERE / "results" / "ci_level.csv"))
    ap.add_argument("--timing", action="store_true",
                    help="time one call of each test at n = 200 and 500 (pnl1 data)")
    args = ap.parse_args(argv)
    if args.timing:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
        timing((200, 500), 20, 3, HERE / "results" / "ci_timing.csv")
        return 0
    if args.summarize:
        rows = summarize(args.summarize)
        write_summary(rows, Path(args.out))
        print(markdown(rows))
        print(f"\nwrote {args.out}")
        return 0
    def cell(scen: str) -> Callable[[Any, Callable[[], None]], None]:
        return lambda w, flush: run_cell(scen, args.n, args.reps, 0.0, args.gp_reps, w,
                                         args.methods, args.first, flush)

    append_raw(args.raw, ((f"{scen} n={args.n}: {args.reps} data sets", cell(scen))
                          for scen in [s.strip() for s in args.scenarios.split(",")
                                       if s.strip()]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
