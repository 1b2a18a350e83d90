"""Power studies of the regularised and aggregated tests: where does each test win?

Every study is one scenario family with ``effect = 0`` (the level) and a few
effects, all tests applied to the same data sets and the same permutations in
each repetition (:func:`kmtests.power.power_curve` with ``tests=``).

Two-sample tests (n points per sample):

* ``MMD_u``: the KME U-statistic, median-heuristic Gaussian bandwidth;
* ``S-KMSE_u``, ``B-KMSE_u``: the same U-form with the shrinkage estimators
  (``statistic="unbiased"``; F-KMSE is left out: 5.4 s per test at n = 200,
  B = 199, against 0.01 s for the KME, see benchmarks/README.md);
* ``SR-Tik auto``, ``SR-Show auto``: the spectral-regularised MMD, pooled
  covariance operator, Tikhonov / Showalter filter, ``lam="auto"`` (min-p over
  10 lambdas, exact level); ``SR-Tik 1e-3``: one fixed lambda;
* ``SR-Show split``: Hagrass et al.'s design, the operator estimated on 20%
  held-out points, Showalter, ``lam="auto"``;
* ``MMDAgg``: min-p over 10 bandwidths (KME U-statistics);
* ``MMDAgg bw x lam``: min-p over 10 bandwidths x 10 lambdas (Showalter, pooled);
* ``MMD-FUSE``: the soft maximum over 10 bandwidths.

Independence tests (n pairs): ``HSIC_b``, ``HSIC_u``, ``NOCCO 1e-3`` (fixed
eps), ``NOCCO auto`` (min-p over 10 eps), ``HSICAgg`` (5 x 5 bandwidth pairs),
``HSIC-FUSE`` (the same pairs).

Raw p-values are checkpointed in ``benchmarks/results/power_<study>_raw.csv``
(git-ignored; a rerun resumes), the power tables (Clopper-Pearson 95%) go to
``benchmarks/results/power_<study>.csv`` and the plots to
``docs/_static/power/<study>.png``.

Run from the repository root (one process, BLAS and numba on one thread)::

    .venv/bin/python benchmarks/power_regularized.py                 # everything
    .venv/bin/python benchmarks/power_regularized.py --quick          # smoke run
    .venv/bin/python benchmarks/power_regularized.py --scenarios sinusoid,linear
    # level only, many data sets (effect 0; the first 100 are the study's own):
    .venv/bin/python benchmarks/power_regularized.py --scenarios sinusoid,linear \
        --effects 0 --reps 1000 --out benchmarks/results/level_check --plots ''
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import time  # noqa: E402
import zlib  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import pandas as pd  # noqa: E402

from kmtests import datasets  # noqa: E402
from kmtests.power import PowerCurveResult, power_curve  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

TWO_SAMPLE_TESTS: dict[str, dict[str, Any]] = {
    "MMD_u": {},
    "S-KMSE_u": {"estimator": "skmse", "statistic": "unbiased"},
    "B-KMSE_u": {"estimator": "bkmse", "statistic": "unbiased"},
    "SR-Tik auto": {"statistic": "regularized", "filter": "tikhonov", "lam": "auto"},
    "SR-Show auto": {"statistic": "regularized", "filter": "showalter", "lam": "auto"},
    "SR-Tik 1e-3": {"statistic": "regularized", "filter": "tikhonov", "lam": 1e-3},
    "SR-Show split": {"statistic": "regularized", "filter": "showalter", "lam": "auto",
                      "covariance": "split"},
    "MMDAgg": {"aggregated": True},
    "MMDAgg bw x lam": {"aggregated": True, "estimators": (), "filters": ("showalter",)},
    "MMD-FUSE": {"aggregated": True, "combination": "fuse"},
}

INDEPENDENCE_TESTS: dict[str, dict[str, Any]] = {
    "HSIC_b": {"statistic": "biased"},
    "HSIC_u": {"statistic": "unbiased"},
    "NOCCO 1e-3": {"statistic": "regularized", "lam": 1e-3},
    "NOCCO auto": {"statistic": "regularized", "lam": "auto"},
    "HSICAgg": {"aggregated": True},
    "HSIC-FUSE": {"aggregated": True, "combination": "fuse"},
}


@dataclass(frozen=True)
class Study:
    key: str
    scenario: Callable[[], datasets.Scenario]
    n: int
    effects: tuple[float, ...]
    what: str          # the effect's meaning, for the tables

    @property
    def kind(self) -> str:
        return self.scenario().kind


STUDIES: dict[str, Study] = {s.key: s for s in [
    Study("mean_d1", lambda: datasets.gaussian_mean_shift(1), 100, (0.0, 0.2, 0.35, 0.5),
          "shift of every coordinate"),
    Study("mean_d10", lambda: datasets.gaussian_mean_shift(10), 100, (0.0, 0.1, 0.15, 0.2),
          "shift of every coordinate"),
    Study("mean_d50", lambda: datasets.gaussian_mean_shift(50), 100, (0.0, 0.05, 0.075, 0.1),
          "shift of every coordinate"),
    Study("scale_d1", lambda: datasets.gaussian_scale_shift(1), 100, (0.0, 0.2, 0.35, 0.5),
          "sd ratio - 1"),
    Study("scale_d10", lambda: datasets.gaussian_scale_shift(10), 100, (0.0, 0.05, 0.1, 0.15),
          "sd ratio - 1"),
    Study("cauchy_d1", lambda: datasets.cauchy_shift(1), 100, (0.0, 0.25, 0.5, 0.75),
          "median shift"),
    Study("perturbed_d1", lambda: datasets.perturbed_uniform(1, 3), 200, (0.0, 2.7, 4.5, 6.0),
          "amplitude c_d (P = 3 bumps)"),
    Study("perturbed_d2", lambda: datasets.perturbed_uniform(2, 1), 200,
          (0.0, 3.0, 5.0, 7.3), "amplitude c_d (P = 1 bump per axis)"),
    Study("mixture", lambda: datasets.get_scenario("mixture_vs_gaussian"), 100,
          (0.0, 0.8, 0.85, 0.9), "mixture separation (same mean and variance)"),
    Study("sinusoid", datasets.sinusoid, 200, (0.0, 1.0, 2.0, 3.0, 4.0), "frequency l"),
    Study("linear", lambda: datasets.get_scenario("linear"), 100, (0.0, 0.15, 0.25, 0.35),
          "slope"),
]}


def seed_of(key: str) -> int:
    return 20240000 + zlib.crc32(key.encode()) % 10000


def run_study(st: Study, reps: int, B: int, out: Path, n_jobs: int | None,
              n: int | None = None, effects: tuple[float, ...] | None = None
              ) -> PowerCurveResult:
    tests = TWO_SAMPLE_TESTS if st.kind == "two_sample" else INDEPENDENCE_TESTS
    return power_curve(st.scenario(), tests=tests, sample_sizes=[n or st.n],
                       effects=list(effects or st.effects), repetitions=reps, n_resamples=B,
                       rng=seed_of(st.key), n_jobs=n_jobs, test_kwargs={"n_jobs": 1},
                       checkpoint=out / f"power_{st.key}_raw.csv", alpha=0.05)


def markdown(tab: pd.DataFrame, st: Study, labels: list[str]) -> str:
    """Rows: effects; columns: tests; cells: power [95% CI]; the best power in bold."""
    lines = ["| " + st.what + " | " + " | ".join(labels) + " |",
             "|---:|" + "---|" * len(labels)]
    for eff, g in tab.groupby("effect", sort=True):
        g = g.set_index("estimator").loc[labels]
        best = g["power"].max()
        cells = []
        for _, r in g.iterrows():
            c = f"{r['power']:.2f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}]"
            cells.append(f"**{c}**" if eff != 0 and r["power"] == best else c)
        lines.append(f"| {eff:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


PANELS = {
    "two_sample": (("single tests", ["MMD_u", "S-KMSE_u", "SR-Tik auto", "SR-Show auto",
                                     "SR-Tik 1e-3", "SR-Show split"]),
                   ("aggregated tests", ["MMD_u", "MMDAgg", "MMDAgg bw x lam", "MMD-FUSE"])),
    "independence": (("single tests", ["HSIC_b", "HSIC_u", "NOCCO 1e-3", "NOCCO auto"]),
                     ("aggregated tests", ["HSIC_u", "HSICAgg", "HSIC-FUSE"])),
}


def plot(res: PowerCurveResult, st: Study, path: Path) -> None:
    """Two panels (single / aggregated tests, with the KME test in both), each drawn by
    PowerCurveResult.plot on the rows of its tests; a small palette PNG."""
    import dataclasses

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.4), sharey=True)
    for ax, (title, labels) in zip(axes, PANELS[st.kind]):
        sub = dataclasses.replace(res, raw=res.raw[res.raw["estimator"].isin(labels)])
        sub.plot(ax=ax, x="effect")
        ax.set_xlabel(st.what, fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7, title=None, loc="upper left")
    axes[1].set_ylabel("")
    fig.suptitle(f"{res.raw['scenario'].iloc[0]}, n = {res.raw['n'].iloc[0]}, "
                 f"{res.raw['repetition'].nunique()} repetitions, B = {res.n_resamples}",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    Image.open(path).convert("RGB").quantize(colors=64).save(path, optimize=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 10 repetitions, B = 99, half the sample size, no files "
                         "in docs/")
    ap.add_argument("--reps", type=int, default=200, help="repetitions per design point")
    ap.add_argument("--B", type=int, default=199, help="permutations per test")
    ap.add_argument("--scenarios", default=",".join(STUDIES),
                    help=f"comma-separated studies among {', '.join(STUDIES)}")
    ap.add_argument("--out", default=str(HERE / "results"), help="directory of the CSV files")
    ap.add_argument("--plots", default=str(ROOT / "docs" / "_static" / "power"),
                    help="directory of the PNG plots ('' for none)")
    ap.add_argument("--effects", default="",
                    help="comma-separated effects replacing the study's own (e.g. '0' for a "
                         "level check with many repetitions; use another --out)")
    ap.add_argument("--n-jobs", type=int, default=None,
                    help="joblib workers over repetitions (default: one process)")
    args = ap.parse_args(argv)
    keys = [k.strip() for k in args.scenarios.split(",") if k.strip()]
    unknown = [k for k in keys if k not in STUDIES]
    if unknown:
        ap.error(f"unknown studies {unknown}; choose among {list(STUDIES)}")
    effects = tuple(float(e) for e in args.effects.split(",") if e.strip()) or None
    out = Path(args.out)
    reps, B = (10, 99) if args.quick else (args.reps, args.B)
    if args.quick:
        out = out / "quick"
    out.mkdir(parents=True, exist_ok=True)
    plots = Path(args.plots) if args.plots and not args.quick else None
    if plots is not None:
        plots.mkdir(parents=True, exist_ok=True)
    for key in keys:
        st = STUDIES[key]
        t0 = time.time()
        n = max(10, st.n // 2) if args.quick else st.n
        res = run_study(st, reps, B, out, args.n_jobs, n=n, effects=effects)
        tab = res.table()
        tab.to_csv(out / f"power_{key}.csv", index=False, float_format="%.4g")
        labels = list(TWO_SAMPLE_TESTS if st.kind == "two_sample" else INDEPENDENCE_TESTS)
        print(f"\n### {key}: {st.scenario().description}\n")
        print(f"n = {n}{' per sample' if st.kind == 'two_sample' else ' pairs'}, {reps} "
              f"repetitions, B = {B}, alpha = 0.05, {time.time() - t0:.0f} s\n", flush=True)
        print(markdown(tab, st, labels), flush=True)
        if plots is not None and effects is None:
            plot(res, st, plots / f"{key}.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
