"""Issue 29, fourth session: does the regression's residual-maker explain the
conditional test's excess rejections on a multivariate z?

KCI's null law (Zhang et al., 2011; the gamma of ``kmtests.statistics.null_laws.kci_gamma``)
takes the rows of the residual features as independent: its mean is
``sum_t Kx~_tt Ky~_tt / n^2``. But the residuals are ``R_x`` and ``R_y`` (``I`` minus
the regressions' smoothers) applied to independent rows, and the smoothers correlate
neighbouring rows. In a homoscedastic model of the residual features (rows independent,
``E[e_i e_i'] = S``) the null mean of ``T = sum(Kx~ o Ky~) / n^2`` is
``s_x s_y sum_ts A_x o A_y / n^2`` with ``A = R H R`` (``H`` the centring), against
``s_x s_y sum_t A_x,tt A_y,tt / n^2`` for the diagonal approximation: larger by the factor

    c = sum_ts (A_x o A_y) / sum_t A_x,tt A_y,tt  (>= 1 when the smoothers are alike).

The script measures, on the same data sets as ``ci_multiz_default.py`` and
``ci_level.py``, the rejections at 5% of

* ``kci``: Zhang et al.'s gamma (checked equal to ``conditional_independence_test``'s with
  ``null_moments="zhang"``, the package's default until the sixth session);
* ``scaled``: the gamma law of ``T / c`` (mean times c, variance times c^2: in the
  model above the variance ratio on ``index3`` is c^2 to 0.1%);
* ``mean-var-c``: mean and variance times c;
* ``model``: the gamma law with the model's own mean and variance (the feature spectra's
  first two moments estimated from ``tr Kx~`` and ``||Kx~||_F``; Gaussian features);
* ``noise-nn``: only the terms of the null mean that involve the noise corrected, with
  ``E Kx~ = s_x A_x + B_x`` (``B`` the regression's bias): KCI's mean plus
  ``[s_x off(A_x, Ky~) + s_y off(A_y, Kx~) - s_x s_y off(A_x, A_y)] / n^2``, ``off`` the
  sum of the products of the off-diagonal entries, the noise levels ``s`` estimated by
  half the mean squared feature distance to the nearest neighbour in z (in the metric
  of the regression's bandwidths; at most ``tr Kx~ / tr A_x``); mean and variance
  scaled by the ratio of the two means: the package's default since the sixth session
  (``null_moments="corrected"``; checked equal);
* ``noise-nn-vu``, ``noise-nn-vx``: that mean with the variance estimated without the
  bias of the diagonal terms (``vu``: ``2 U / n^2``, ``U`` the U-statistic of ``tr C^2``;
  ``vx``: the V-statistic's variance for independent rows), both times the ratio;

and, as a check of the model on the null data sets, the mean over the data sets of ``T``
over KCI's null mean (``t_over_mean``, with its standard error): under the model its
expectation is about the mean of c (``c_mean``).

Writes ``benchmarks/results/ci_row_correlation.csv`` (one row per design, dep and range
of data sets); ``--check-model`` checks the model's moments by Monte Carlo;
``--decompose 3`` says which part of the residuals the model fits (see
:func:`decompose`). Run from the
repository root::

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/ci_row_correlation.py \\
        --cells index3,pnl3 --reps 300 --first 300
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import numpy as np

import ci_level as lv
from dependent_streams import merge_rows
import kmtests
from kmtests.estimators import KME
from kmtests.kernels import Gaussian
from kmtests.problems.conditional import standardized
from kmtests.statistics.kci import KCI
from kmtests.statistics.null_laws import _gamma_sf, kci_gamma
from kmtests.statistics.residual_cache import fitted_kernel

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "ci_row_correlation.csv"
VARIANTS = ("kci", "scaled", "mean-var-c", "model", "noise-nn", "noise-nn-vu", "noise-nn-vx")


def nn_noise(K: np.ndarray, zm: np.ndarray) -> float:
    """Half the mean squared feature distance (Gram matrix `K`) of each row to its nearest
    neighbours in `zm` (the mean over the rows tied at the smallest distance, to a
    relative 1e-9, as the package has it since the sixth session; the first of them
    before): the noise level when the conditional mean varies little between neighbours
    (a difference-based estimator)."""
    n = zm.shape[0]
    d2 = np.zeros((n, n))
    for col in zm.T:
        d2 += (col[:, None] - col[None, :]) ** 2
    np.fill_diagonal(d2, np.inf)
    tied = d2 <= d2.min(axis=1)[:, None] * (1.0 + 1e-9)
    gaps = np.diag(K)[:, None] + np.diag(K)[None, :] - 2.0 * K
    return float(0.5 * np.mean(np.sum(gaps * tied, axis=1) / np.sum(tied, axis=1)))


def _metric(fit: Any, zs: np.ndarray) -> np.ndarray:
    bw = getattr(fit.kernel, "bandwidth", None)
    return zs / (np.asarray(bw, dtype=float) if bw is not None else 1.0)


def pvalues(x: np.ndarray, y: np.ndarray, z: np.ndarray, criterion: str = "gcv",
            moments: dict[str, float] | None = None
            ) -> tuple[dict[str, float], float, float, float]:
    """The p-values of the variants on one data set (the regressions' `criterion`), c,
    and ``T`` over KCI's null mean and over the noise-nn variant's; `moments`, if given,
    receives ``T`` over the noise-nn mean and the gamma's variance of that ratio under
    Zhang et al.'s and the ``vu`` variance (each times the factor)."""
    n = x.shape[0]
    dz = z.shape[1]
    kernels = {"x": Gaussian(), "y": Gaussian(), "z": Gaussian()}
    stat = cast(KCI, KCI.build("kci", kernels, KME(), {"criterion": criterion})
                ).resolved(dz, SimpleNamespace(name="exact"))
    stat.cache = False
    xs, ys, zs = standardized(x), standardized(y), standardized(z)
    xa = np.hstack([xs, 0.5 * zs])
    kx = fitted_kernel(stat.kernel_x, xa, "x", cache=False)
    ky = fitted_kernel(stat.kernel_y, ys, "y", cache=False)
    rx, ry = stat._residuals(zs, (kx, xa, "x"), (ky, ys, "y"))
    Kx, Ky = rx.gram, ry.gram
    T = float(np.sum(Kx * Ky)) / n**2
    p_kci, _ = kci_gamma(Kx, Ky, T)
    M = Kx * Ky
    mean, var = float(np.trace(M)) / n**2, 2.0 * float(np.sum(M * M)) / n**4
    H = np.eye(n) - 1.0 / n
    Rx, Ry = rx.fit.residual_operator(), ry.fit.residual_operator()
    Ax, Ay = Rx @ H @ Rx, Ry @ H @ Ry
    c = float(np.sum(Ax * Ay) / np.sum(np.diag(Ax) * np.diag(Ay)))
    out = {"kci": p_kci,
           "scaled": _gamma_sf(T / c, mean, var)[0],
           "mean-var-c": _gamma_sf(T, mean * c, var * c)[0]}
    # the homoscedastic Gaussian-feature model's own moments
    trA, trB, fA, fB = np.trace(Ax), np.trace(Ay), np.sum(Ax * Ax), np.sum(Ay * Ay)
    s1x, s1y = np.trace(Kx) / trA, np.trace(Ky) / trB
    s2x = min(max((np.sum(Kx * Kx) - s1x**2 * fA) / (trA**2 + fA), 0.0), s1x**2)
    s2y = min(max((np.sum(Ky * Ky) - s1y**2 * fB) / (trB**2 + fB), 0.0), s1y**2)
    mm = model_moments(Ax, Ay, s1x, s2x, s1y, s2y)
    out["model"] = _gamma_sf(T, mm["mean"] / n**2, mm["var"] / n**4)[0]
    # only the noise terms corrected, the noise levels by nearest neighbours in z
    Kcx = kx.centred_gram(xa, name="x").Kc
    Kcy = ky.centred_gram(ys, name="y").Kc
    nx = min(nn_noise(Kcx, _metric(rx.fit, zs)), s1x)
    ny = min(nn_noise(Kcy, _metric(ry.fit, zs)), s1y)

    def off(P: np.ndarray, Q: np.ndarray) -> float:
        return float(np.sum(P * Q) - np.sum(np.diag(P) * np.diag(Q)))

    f = 1.0 + (nx * off(Ax, Ky) + ny * off(Ay, Kx) - nx * ny * off(Ax, Ay)) / (n**2 * mean)
    out["noise-nn"] = _gamma_sf(T, mean * f, var * f)[0] if f > 0 else float("nan")
    # the variance without the diagonal's share: 2 ||M||_F^2 / n^4 estimates
    # 2 tr C^2 / n^2 (C the covariance of the rows of the product features) with the bias
    # 2 sum_t M_tt^2 / n^4; "vu" drops it (U-statistic of tr C^2), "vx" is the V-statistic's
    # variance for independent rows, 2 (n - 1) U / n^3 + var_t(M_tt) / n^3
    d = np.diag(M)
    u_tr = (float(np.sum(M * M)) - float(d @ d)) / (n * (n - 1))
    var_u = 2.0 * u_tr / n**2
    var_x = (2.0 * (n - 1) * u_tr + float(np.var(d, ddof=1))) / n**3
    out["noise-nn-vu"] = _gamma_sf(T, mean * f, var_u * f)[0] if f > 0 else float("nan")
    out["noise-nn-vx"] = _gamma_sf(T, mean * f, var_x * f)[0] if f > 0 else float("nan")
    if moments is not None:
        moments.update(u=T / (mean * f), var_zhang=var * f / (mean * f) ** 2,
                       var_vu=var_u * f / (mean * f) ** 2)
    return out, c, T / mean, T / (mean * f)


def model_moments(Ax: np.ndarray, Ay: np.ndarray, s1x: float, s2x: float, s1y: float,
                  s2y: float) -> dict[str, float]:
    """The model's mean and variance of ``n^2 T`` and its trace and Frobenius moments of
    ``Kx~`` (feature spectra with sums `s1` and sums of squares `s2`)."""
    B = Ax @ Ay
    trS, S2 = float(np.trace(B)), float(np.sum(B * B.T))
    fA = float(np.sum(Ax * Ax))
    return {"mean": s1x * s1y * trS,
            "var": 2 * (s2x * s1y**2 * S2 + s1x**2 * s2y * S2 + s2x * s2y * (trS**2 + S2)),
            "trace": s1x * float(np.trace(Ax)),
            "frobenius": s2x * (float(np.trace(Ax)) ** 2 + fA) + s1x**2 * fA}


def check_model(sims: int = 100_000) -> None:
    """Monte Carlo of the model's moments on random operators ``P`` (``A = P P'``):
    Gaussian features with spectra (1, 0.5, 0.2) and (0.7, 0.3), n = 30."""
    gen = np.random.default_rng(1)
    n = 30
    Px = gen.standard_normal((n, n)) * 0.2 + np.eye(n)
    Py = gen.standard_normal((n, n)) * 0.2 + np.eye(n)
    lam, mu = np.array([1.0, 0.5, 0.2]), np.array([0.7, 0.3])
    got: dict[str, list[float]] = {"T": [], "trace": [], "frobenius": []}
    for _ in range(sims):
        Ex = gen.standard_normal((n, lam.size)) * np.sqrt(lam)
        Ey = gen.standard_normal((n, mu.size)) * np.sqrt(mu)
        Kx, Ky = Px @ Ex @ Ex.T @ Px.T, Py @ Ey @ Ey.T @ Py.T
        got["T"].append(float(np.sum(Kx * Ky)))
        got["trace"].append(float(np.trace(Kx)))
        got["frobenius"].append(float(np.sum(Kx * Kx)))
    want = model_moments(Px @ Px.T, Py @ Py.T, lam.sum(), (lam**2).sum(), mu.sum(),
                         (mu**2).sum())
    T = np.array(got["T"])
    for name, mc, model in (("mean", T.mean(), want["mean"]), ("var", T.var(), want["var"]),
                            ("trace", np.mean(got["trace"]), want["trace"]),
                            ("frobenius", np.mean(got["frobenius"]), want["frobenius"])):
        print(f"{name}: Monte Carlo {mc:.6g}, model {model:.6g}, ratio {mc / model:.4f}")


def decompose(dz: int, reps: int) -> dict[str, Any]:
    """Which part of the residuals the model fits: on the ``index`` null design (x =
    sin(2 u'z) + 0.3 e, y = cos(2 v'z) + 0.3 e'; seeds 5000 + i), the package's
    regressions (fitted on the data) applied to the Gram matrices of (a) the data (x
    augmented by z / 2), (b) the noises e, e' alone, (c) e augmented by z / 2, (d) x
    without the augmentation; the mean of ``T`` over KCI's null mean for each, against
    the mean of c."""
    stat = KCI(Gaussian(), Gaussian(), Gaussian()).resolved(dz, SimpleNamespace(name="exact"))
    stat.cache = False
    u = np.ones(dz) / np.sqrt(dz)
    v = np.where(np.arange(dz) % 2 == 0, 1.0, -1.0) / np.sqrt(dz)
    n = 200
    H = np.eye(n) - 1.0 / n
    keys = ("data", "noise", "noise augmented", "data not augmented")
    ratios: dict[str, list[float]] = {k: [] for k in keys}
    cs = []

    def centred(a: np.ndarray) -> np.ndarray:
        return fitted_kernel(Gaussian(), a, "x", cache=False).centred_gram(a, name="x").Kc

    for rep in range(reps):
        gen = np.random.default_rng(5000 + rep)
        z = gen.normal(size=(n, dz))
        ex, ey = gen.normal(size=(n, 1)), gen.normal(size=(n, 1))
        x = np.sin(2 * z @ u)[:, None] + 0.3 * ex
        y = np.cos(2 * z @ v)[:, None] + 0.3 * ey
        xs, ys, zs = standardized(x), standardized(y), standardized(z)
        es, fs = standardized(ex), standardized(ey)
        xa = np.hstack([xs, 0.5 * zs])
        kx = fitted_kernel(stat.kernel_x, xa, "x", cache=False)
        ky = fitted_kernel(stat.kernel_y, ys, "y", cache=False)
        rx, ry = stat._residuals(zs, (kx, xa, "x"), (ky, ys, "y"))
        Rx, Ry = rx.fit.residual_operator(), ry.fit.residual_operator()
        Ax, Ay = Rx @ H @ Rx, Ry @ H @ Ry
        cs.append(float(np.sum(Ax * Ay) / np.sum(np.diag(Ax) * np.diag(Ay))))
        grams = {"data": (centred(xa), centred(ys)), "noise": (centred(es), centred(fs)),
                 "noise augmented": (centred(np.hstack([es, 0.5 * zs])), centred(fs)),
                 "data not augmented": (centred(xs), centred(ys))}
        for k, (Kx0, Ky0) in grams.items():
            Kx, Ky = rx.fit.residual_gram(Kx0), ry.fit.residual_gram(Ky0)
            ratios[k].append(float(np.sum(Kx * Ky) / np.sum(np.diag(Kx) * np.diag(Ky))))
    out: dict[str, Any] = {"design": f"index{dz}", "reps": reps, "c_mean": float(np.mean(cs))}
    for k in keys:
        a = np.array(ratios[k])
        out[k] = f"{a.mean():.3f} +- {a.std() / np.sqrt(reps):.3f}"
    return out


def cell(scenario: str, dep: float, first: int, reps: int, check: int) -> dict[str, Any]:
    multi = scenario.startswith(("inter", "tz"))
    hits = dict.fromkeys(VARIANTS, 0)
    cs, ratios, noise_ratios, cpu = [], [], [], 0.0
    for rep in range(first, first + reps):
        seed = (lv.seed_of("power", scenario, 200, dep, rep) if multi
                else lv.seed_of(scenario, 200, dep, rep))
        x, y, z = (np.asarray(a, dtype=float) for a in
                   lv.draw(scenario, np.random.default_rng(seed), 200, dep))
        c0 = time.process_time()
        ps, c, ratio, noise_ratio = pvalues(x, y, z)
        cpu += time.process_time() - c0
        if rep < first + check:   # the same p-values as the package's
            ref = kmtests.conditional_independence_test(x, y, z, null_moments="zhang").pvalue
            assert abs(ref - ps["kci"]) <= 1e-9, (scenario, rep, ref, ps["kci"])
            ref = kmtests.conditional_independence_test(x, y, z).pvalue
            assert abs(ref - ps["noise-nn"]) <= 1e-9, (scenario, rep, ref, ps["noise-nn"])
        cs.append(c)
        ratios.append(ratio)
        noise_ratios.append(noise_ratio)
        for k in VARIANTS:
            hits[k] += ps[k] <= 0.05
    return {"scenario": scenario, "dep": dep, "first": first, "reps": reps,
            **{k: hits[k] for k in VARIANTS}, "c_median": float(np.median(cs)),
            "c_min": float(np.min(cs)), "c_max": float(np.max(cs)), "c_mean": float(np.mean(cs)),
            "t_over_mean": float(np.mean(ratios)),
            "t_over_noise_mean": float(np.mean(noise_ratios)),
            "t_over_mean_se": float(np.std(ratios) / np.sqrt(len(ratios))),
            "cpu_per_set": cpu / reps}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cells", default="", help="comma-separated scenarios")
    ap.add_argument("--check-model", action="store_true",
                    help="only the Monte Carlo check of the model's moments")
    ap.add_argument("--decompose", type=int, default=0, metavar="DZ",
                    help="only the decomposition of the index design with DZ coordinates")
    ap.add_argument("--dep", type=float, default=0.0, help="0: the null; 0.1: power")
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--check", type=int, default=3,
                    help="data sets on which the kci p-value is checked against the API")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.check_model:
        check_model()
        return 0
    if args.decompose:
        print(decompose(args.decompose, args.reps), flush=True)
        return 0
    rows = []
    for scenario in args.cells.split(","):
        row = cell(scenario, args.dep, args.first, args.reps, args.check)
        print(row, flush=True)
        rows.append(row)
    merge_rows(args.out, rows, ("scenario", "dep", "first", "reps"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
