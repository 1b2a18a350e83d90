"""A pilot of a null that is not a block permutation, for drift between two windows
under long memory (issue 30, seventh session; not in the package).

The statistic is the self-normalised difference of the two windows' means (Shao & Zhang
2010, at a known split): ``T = (mean_1 - mean_2)^2 / V``, where ``V`` is the sum of the
squared partial sums of each window's centred values (forward in the first window,
backward in the second), over ``m^2``. Both the numerator and ``V`` grow with the
long-run variance, and under long memory both grow as ``m^(2d - 1)``. So the law of
``T`` depends on the dependence only through its shape, not its size.

Its critical value comes from a parametric model fitted to the windows:
* ARFIMA(1, d, 0), fitted by the Whittle likelihood on the periodograms of each window,
  centred on its own mean. The frequencies of the two windows are pooled; a shift
  between the windows does not enter the fit.
* Then 2000 series of the fitted model at the same n. They are exact Gaussian
  ARFIMA(0, d, 0) noise (Davies & Harte's circulant embedding of its autocovariance),
  filtered by the AR(1) part after a burn-in of 600.
* The 95% quantile of their ``T`` is the cut.

The parametric fit is what the block-length rules lack: it tells an AR(1) series with
phi = 0.8 (fitted d near 0) from an ARFIMA(0, 0.3, 0) series (fitted phi near 0).
Within windows of 100 points, the far autocorrelations of the two look alike.

It is a mean test on one series, not the package's kernel test. The measured question is
whether such a null keeps the level on the long-memory windows without giving up the power
of ``blocks="auto"``. The series are those of the level tables (``dependent_streams.py``);
``--tag heldout`` draws another set. Run from the repository root::

    nice -n 10 .venv/bin/python benchmarks/drift_sn_arfima.py --n 200 \\
        --cell arfima,0,300 --cell ar0.8,0,300 --cell ar0.8,0.75,300
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import math  # noqa: E402

import numpy as np  # noqa: E402
from scipy.optimize import minimize  # noqa: E402
from scipy.signal import lfilter  # noqa: E402
from scipy.special import gammaln  # noqa: E402

from dependent_streams import process, seed_of  # noqa: E402

ALPHA, DRAWS, BURN = 0.05, 2000, 600


def sn_statistic(z: np.ndarray) -> np.ndarray:
    """``T`` of each row of `z` (or of the series `z`), split in half."""
    z = np.atleast_2d(z)
    m = z.shape[1] // 2
    a, b = z[:, :m], z[:, m:]
    sa = np.cumsum(a - a.mean(axis=1, keepdims=True), axis=1)
    sb = np.cumsum((b - b.mean(axis=1, keepdims=True))[:, ::-1], axis=1)
    v = (np.sum(sa ** 2, axis=1) + np.sum(sb ** 2, axis=1)) / m ** 2
    return (a.mean(axis=1) - b.mean(axis=1)) ** 2 / v


def arfima_autocovariance(d: float, n: int) -> np.ndarray:
    """The autocovariances at lags ``0..n-1`` of ARFIMA(0, d, 0) with unit innovations."""
    k = np.arange(n)
    if d == 0.0:
        return (k == 0).astype(float)
    g0 = math.exp(gammaln(1 - 2 * d) - 2 * gammaln(1 - d))
    # rho_k = prod_{j=1..k} (j - 1 + d) / (j - d)
    rho = np.concatenate([[1.0], np.cumprod((k[1:] - 1 + d) / (k[1:] - d))])
    return g0 * rho


def simulate_arfima(d: float, n: int, reps: int, gen: np.random.Generator) -> np.ndarray:
    """`reps` exact Gaussian ARFIMA(0, d, 0) series of length `n` (Davies & Harte)."""
    g = arfima_autocovariance(d, n + 1)
    c = np.concatenate([g, g[-2:0:-1]])
    lam = np.maximum(np.fft.fft(c).real, 0.0)  # nonnegative for |d| < 1/2 (up to rounding)
    w = gen.normal(size=(reps, c.size)) + 1j * gen.normal(size=(reps, c.size))
    return np.fft.fft(np.sqrt(lam / c.size) * w, axis=1).real[:, :n]


def whittle_fit(z: np.ndarray) -> tuple[float, float]:
    """ARFIMA(1, d, 0) by the Whittle likelihood on the two windows' periodograms (each
    centred on its mean; Fourier frequencies ``2 pi j / m``, ``0 < j < m / 2``), the
    innovation variance profiled out; best of six starts."""
    m = len(z) // 2
    j = np.arange(1, m // 2)
    lam = np.tile(2 * np.pi * j / m, 2)
    per = np.concatenate([np.abs(np.fft.rfft(w - w.mean())[j]) ** 2 / (2 * np.pi * m)
                          for w in (z[:m], z[m:])])

    def objective(theta: np.ndarray) -> float:
        phi, d = theta
        shape = (np.abs(2 * np.sin(lam / 2)) ** (-2 * d)
                 / (1 - 2 * phi * np.cos(lam) + phi ** 2))
        return float(np.log(np.mean(per / shape)) + np.mean(np.log(shape)))

    fits = [minimize(objective, np.array(start), method="L-BFGS-B",
                     bounds=[(-0.9, 0.99), (-0.45, 0.49)])
            for start in ((0.0, 0.0), (0.0, 0.3), (0.5, 0.0), (0.5, 0.3), (0.9, 0.0),
                          (0.9, 0.3))]
    best = min(fits, key=lambda r: r.fun)
    return float(best.x[0]), float(best.x[1])


def critical_value(phi: float, d: float, n: int, gen: np.random.Generator) -> float:
    """The 95% quantile of ``T`` under the fitted ARFIMA(1, d, 0), from `DRAWS` series."""
    u = simulate_arfima(d, n + BURN, DRAWS, gen)
    x = lfilter([1.0], [1.0, -phi], u, axis=1)[:, BURN:]
    return float(np.quantile(sn_statistic(x), 1 - ALPHA))


def cell(proc: str, n: int, shift: float, reps: int, tag: str) -> str:
    gen = np.random.default_rng(seed_of(tag, proc, n, "windows", shift))
    sim = np.random.default_rng(seed_of("sn-arfima", proc, n, shift))
    h, hits, phis, ds = n // 2, 0, [], []
    for _ in range(reps):
        z = process(proc, gen, n)
        z[h:] += shift
        phi, d = whittle_fit(z)
        phis.append(phi)
        ds.append(d)
        hits += bool(sn_statistic(z)[0] > critical_value(phi, d, n, sim))
    return (f"| {tag} | {proc} | {n} | {shift:g} | {hits}/{reps} | {np.median(phis):.2f} "
            f"| {np.median(ds):.2f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--cell", action="append", required=True,
                    help="process,shift,datasets (repeatable)")
    ap.add_argument("--tag", default="auto")
    args = ap.parse_args()
    print("| data | process | n | shift | rejections at 5% | median phi | median d |\n"
          "|---|---|---:|---:|---:|---:|---:|")
    for spec in args.cell:
        proc, shift, reps = spec.split(",")
        print(cell(proc, args.n, float(shift), int(reps), args.tag), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
