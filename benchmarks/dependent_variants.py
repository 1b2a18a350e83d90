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
* ``pw mmd blocks raw`` — prewhitened (issue 30, third session): ``MMD^2_b`` of the two
  windows' AR residuals (:func:`prewhiten.prewhiten_windows`: Yule-Walker on
  the windows' pooled autocovariances, each window centred on its mean, the order by
  AIC up to ``min(10 log10 n, n/10)``), the Gaussian kernel's median bandwidth and
  features on the pooled residuals, block permutations of ``blocks="auto"``'s length
  on the *raw* series (at most the residuals' rows / 8);
* ``pw mmd blocks raw bc`` — the same with the AR coefficients bias-corrected by a
  parametric bootstrap (50 series of the fitted AR model with Gaussian shocks of the
  residual variance, cut into the same windows and refitted at the same order; the
  coefficients minus the mean bias, scaled back into the stationary region);
* ``pw mmd blocks raw bic`` / ``pw mmd blocks raw bic bc`` — the order by BIC
  (``n log sigma_p^2 + p log n``) instead of AIC, without / with the bias correction;
* ``mean blocks auto`` / ``pw mean blocks raw`` — a diagnostic, not a kernel test: the
  squared difference of the windows' means (``MMD^2_b`` of the linear kernel) of the
  raw series with ``blocks="auto"``'s length, or of the AR residuals with the raw
  series' length;
* ``drift_test`` — the package's ``kmtests.timeseries.drift_test(z, n_resamples=199,
  rng=i)`` (``blocks="auto"`` as users run it: ``MMD^2_u``, all the splits of the
  blocks when there are at most 199). The CSVs' ``pw drift_test`` rows ran the
  prewhitened prototype ``drift_test(z, prewhiten="ar", ...)`` of commit 2710c2d
  (removed: see ``prewhiten.py``).

Writes one CSV per cell under ``benchmarks/results/dependent_variants/`` (with CPU
seconds) and prints the rejections; ``--table`` prints all cells. Run from the
repository root::

    nice -n 10 .venv/bin/python benchmarks/dependent_variants.py --process ar0.8 \\
        --n 200 --reps 300 [--shift 0.75] [--only "pw mmd blocks raw,pw drift_test"]

(``--only``: the variants run, the other rows of the cell's CSV kept.)
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
from prewhiten import (  # noqa: E402
    prewhiten_windows,
    residual_length,
    residuals,
    window_autocovariances,
)

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


def _ar_bias_corrected(z: np.ndarray, h: int, coefs: np.ndarray, sims: int = 50
                       ) -> np.ndarray:
    """`coefs` minus their parametric-bootstrap bias: the fitted AR model simulated
    `sims` times (Gaussian shocks of the residual variance, a burn-in of 200), cut into
    the windows ``[:h]`` and ``[h:]`` and refitted at the same order by Yule-Walker on
    the windows' pooled autocovariances; scaled back into the stationary region."""
    from scipy.signal import lfilter
    from statsmodels.tsa.stattools import levinson_durbin

    p, n = len(coefs), len(z)
    if p == 0:
        return coefs
    e1, e2, _ = prewhiten_windows(z, h)   # only for the shocks' variance
    sd = float(np.concatenate([e1, e2]).std())
    gen = np.random.default_rng(12345)
    a = np.concatenate([[1.0], -coefs])
    fits = np.empty((sims, p))
    for s in range(sims):
        x = lfilter([1.0], a, gen.normal(scale=sd, size=n + 200))[200:]
        g = window_autocovariances(x, (0, h, n), p)
        fits[s] = levinson_durbin(g, nlags=p, isacov=True)[1]
    out = 2 * coefs - fits.mean(axis=0)
    for _ in range(50):                    # shrink until the AR polynomial is stable
        if np.all(np.abs(np.roots(np.concatenate([[1.0], -out]))) < 0.999):
            break
        out = out * 0.98
    return out


def pw_blocks(z: np.ndarray, h: int, a: AutoLength, i: int, corrected: bool = False,
              criterion: str = "aic") -> float:
    """``MMD^2_b`` of the windows' AR residuals, blocks of the raw series' length."""
    e1, e2, fit = prewhiten_windows(z, h, criterion)
    if corrected and fit.order:
        c = _ar_bias_corrected(z, h, fit.coefs[0])
        p = len(c)
        e1 = residuals(z[:h], p, c, p)[:, None]
        e2 = residuals(z[h:], p, c, p)[:, None]
    e = np.concatenate([e1, e2])
    length = residual_length(a, e.shape[0])
    F = gram_features(Gaussian(bandwidth="median").fitted_to(e).gram(e))
    return blocks_p(F, e1.shape[0], length, False, i)


def mean_blocks(z: np.ndarray, h: int, a: AutoLength, i: int, prewhitened: bool) -> float:
    """The squared difference of the windows' means (``MMD^2_b`` of the linear kernel)
    of the raw series (blocks of ``blocks="auto"``'s length) or of its AR residuals
    (blocks of the raw series' length): the location test inside the MMD."""
    if prewhitened:
        e1, e2, _ = prewhiten_windows(z, h)
        e = np.concatenate([e1, e2])
        return blocks_p(e, e1.shape[0], residual_length(a, e.shape[0]), False, i)
    return blocks_p(z[:, None], h, a.block, False, i)


def package_drift_test(z: np.ndarray, h: int, i: int) -> float:
    """The package's drift test (``blocks="auto"``)."""
    from kmtests.timeseries import drift_test

    return float(drift_test(z, h, n_resamples=B, rng=i).pvalue)


#: the variants on the raw series (they need the series, not its features)
SERIES_VARIANTS: dict[str, Callable[[np.ndarray, int, AutoLength, int], float]] = {
    "pw mmd blocks raw": lambda z, h, a, i: pw_blocks(z, h, a, i),
    "pw mmd blocks raw bc": lambda z, h, a, i: pw_blocks(z, h, a, i, corrected=True),
    "drift_test": lambda z, h, a, i: package_drift_test(z, h, i),
    "mean blocks auto": lambda z, h, a, i: mean_blocks(z, h, a, i, False),
    "pw mean blocks raw": lambda z, h, a, i: mean_blocks(z, h, a, i, True),
    "pw mmd blocks raw bic": lambda z, h, a, i: pw_blocks(z, h, a, i, criterion="bic"),
    "pw mmd blocks raw bic bc": lambda z, h, a, i: pw_blocks(z, h, a, i, True, "bic"),
}


def cell(proc: str, n: int, reps: int, shift: float, out_dir: Path,
         only: list[str] | None = None) -> list[dict[str, Any]]:
    gen = np.random.default_rng(seed_of("auto", proc, n, "windows", shift))
    h = n // 2
    tests = {k: v for k, v in variants(n).items() if only is None or k in only}
    series_tests = {k: v for k, v in SERIES_VARIANTS.items() if only is None or k in only}
    hits, cpu = dict.fromkeys([*tests, *series_tests], 0), dict.fromkeys(
        [*tests, *series_tests], 0.0)
    for i in range(reps):
        z = process(proc, gen, n)
        z[h:] += shift
        c0 = time.process_time()
        a = auto_length([z[:, None]], (h, n - h))
        t_auto = time.process_time() - c0
        if tests:
            K = Gaussian(bandwidth="median").fitted_to(z[:, None]).gram(z[:, None])
            F = gram_features(K)
        for name, test in tests.items():
            c0 = time.process_time()
            hits[name] += test(F, h, a, i) <= ALPHA
            cpu[name] += time.process_time() - c0
        for name, stest in series_tests.items():
            c0 = time.process_time()
            hits[name] += stest(z, h, a, i) <= ALPHA
            # the raw series' length is part of the prewhitened test's cost
            cpu[name] += time.process_time() - c0 + (t_auto if name != "drift_test"
                                                     else 0.0)
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


def table(out_dir: Path, n: int = 200, only: list[str] | None = None,
          cpu: bool = False) -> str:
    """The variants (rows; `only` those) by cell (columns) at series length `n` as a
    Markdown table of rejections, ``*`` outside the 99% binomial band of 5% on the null
    cells; `cpu`: CPU seconds per test instead."""
    import pandas as pd
    from scipy import stats

    frames = [pd.read_csv(f) for f in sorted(out_dir.glob("*.csv"))]
    if not frames:
        return ""
    tab = pd.concat(frames)
    tab = tab[tab["n"] == n]
    if only is not None:
        tab = tab[tab["null"].isin(only)]
    cells = list(dict.fromkeys(tab["study"].str.replace("variants windows ", "")))
    cells.sort(key=lambda c: ("shift" in c, c))
    lines = ["| variant | " + " | ".join(cells) + " |", "|---|" + "---:|" * len(cells)]
    for name in (only or list(dict.fromkeys(tab["null"]))):
        row = []
        for c in cells:
            hit = tab[(tab["null"] == name) & (tab["study"] == f"variants windows {c}")]
            if hit.empty:
                row.append("-")
                continue
            if cpu:
                row.append(f"{float(hit['cpu_per_test'].iloc[0]):.3f}")
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
    ap.add_argument("--only", default=None,
                    help="comma-separated variants to run (the cell's other rows kept)")
    ap.add_argument("--table", action="store_true",
                    help="print the table of the first --n (the --only rows) and stop")
    ap.add_argument("--cpu", action="store_true", help="--table: CPU seconds per test")
    args = ap.parse_args()
    only = None if args.only is None else [v.strip() for v in args.only.split(",")]
    if args.table:   # (also rows of variants no longer run: the CSVs' "pw drift_test")
        print(table(HERE / "results" / "dependent_variants", int(args.n.split(",")[0]),
                    only, args.cpu))
        return 0
    unknown = set(only or ()) - set(variants(200)) - set(SERIES_VARIANTS)
    if unknown:
        ap.error(f"--only: unknown variants {sorted(unknown)}")
    for proc in args.process.split(","):
        for n in map(int, args.n.split(",")):
            cell(proc, n, args.reps, args.shift, HERE / "results" / "dependent_variants",
                 only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
