"""KSDAgg's paper settings, side by side in one process (issue 27).

Contenders, on the same data sets:

* ``kmtests KSDAgg``: ``goodness_of_fit_test(x, score=s, statistic="ksdagg",
  levels=LEVELS, n_resamples=2B)`` — the wild bootstrap, every member on the same
  multipliers, min-p combined with MMDAgg's level correction on one stream;
* ``kmtests KSD (median)``: the single U-statistic KSD with the median bandwidth, wild
  bootstrap, ``2B`` draws (as many as the authors B1 + B2);
* ``authors ksdagg_wild``: ``ksdagg_wild`` of ``ksd_aggregated.py`` (Schrab, Guedj &
  Gretton, 2022; from a checkout given with ``--ksdagg``, nothing of it committed), the
  same ``2^l`` times median grid, B1 = B2 = B, B3 = 50;
* ``kerneltests ksdagg``: ``kt.ksdagg.ksdagg`` (PyPI ``kerneltests`` 0.0.1, a port of the
  authors' packaged ``ksdagg``) with the same bandwidths (``2^l`` times the authors'
  median), B1 = B2 = B;
* ``kmtests FSSD`` (Gamma setting only): ``statistic="fssd"``, 5 locations and the
  bandwidth learned on half the points, the other half tested, weighted chi-square null.

Settings (Schrab et al., 2022, Section 4):

* ``gamma``: ``n = 500`` points of Gamma(5 + s, scale 5) tested against Gamma(5, 5),
  ``s = 0, 0.1, 0.2, 0.3, 0.4``, bandwidths ``2^l`` median for ``l = 0..10``;
* ``rbm``: the Gaussian-Bernoulli RBM (``d_x = 50``, ``d_h = 40``; Liu et al., 2016),
  ``n = 1000`` points of the RBM whose weights are perturbed by ``N(0, sigma^2)`` noise,
  ``sigma = 0, 0.01, 0.02, 0.03``, each data set ``n`` independent Gibbs chains after
  2000 sweeps (written here: :func:`rbm_model`, :func:`rbm_gibbs`), bandwidths ``2^l``
  median for ``l = -20..0``;
* ``timing``: seconds per test at ``n = 500`` and ``1000`` (Gamma data, the ``gamma``
  grid), wall and CPU, with the machine load.

Run (the peers' environment: kmtests installed there too, with kerneltests)::

    git --git-dir=<mirror of antoninschrab/ksdagg-paper> archive HEAD | tar -x -C /tmp/ksdagg-paper
    /work/peers-venv/bin/python benchmarks/ksdagg_paper.py gamma --ksdagg /tmp/ksdagg-paper
    /work/peers-venv/bin/python benchmarks/ksdagg_paper.py rbm --ksdagg /tmp/ksdagg-paper
    /work/peers-venv/bin/python benchmarks/ksdagg_paper.py timing --ksdagg /tmp/ksdagg-paper
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from typing import Any, Callable

import numpy as np
from scipy import stats

ALPHA = 0.05


# -- the Gaussian-Bernoulli RBM ---------------------------------------------------------------------
def rbm_model(sigma: float, dx: int = 50, dh: int = 40) -> tuple[np.ndarray, ...]:
    """The model's parameters ``(B, b, c)`` and the sampled RBM's weights ``B + sigma E``
    (``B`` of +-1 entries, ``b``, ``c``, ``E`` standard normal; one fixed draw, seed 0,
    as the paper's experiment)."""
    rs = np.random.RandomState(0)
    B = rs.randint(0, 2, (dx, dh)) * 2 - 1.0
    b = rs.randn(dx)
    c = rs.randn(dh)
    return B, b, c, B + rs.randn(dx, dh) * sigma


def rbm_score(x: np.ndarray, B: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``grad log p(x) = b - x + B tanh(B' x + c)``: the RBM
    ``p(x, h) ∝ exp(x' B h + b' x + c' h - ||x||^2 / 2)``, ``h`` in ``{-1, 1}^dh``, with
    ``h`` summed out."""
    return b - x + np.tanh(x @ B + c) @ B.T


def rbm_gibbs(gen: np.random.Generator, n: int, B: np.ndarray, b: np.ndarray, c: np.ndarray,
              sweeps: int = 2000) -> np.ndarray:
    """``n`` independent Gibbs chains of the RBM, their states after `sweeps` sweeps:
    ``h_j = +-1`` with ``P(h_j = 1 | x) = sigmoid(2 (B' x + c)_j)``, then
    ``x | h ~ N(B h + b, I)``."""
    dx, dh = B.shape
    x = gen.standard_normal((n, dx))
    for _ in range(sweeps):
        p = 1.0 / (1.0 + np.exp(-2.0 * (x @ B + c)))
        h = np.where(gen.random((n, dh)) < p, 1.0, -1.0)
        x = h @ B.T + b + gen.standard_normal((n, dx))
    return x


# -- the contenders -----------------------------------------------------------------------------
def contenders(path: str | None, B: int, levels: tuple[int, int], fssd: bool = False
               ) -> dict[str, Callable[[np.ndarray, np.ndarray, int], bool]]:
    from kmtests import goodness_of_fit_test

    out: dict[str, Callable[[np.ndarray, np.ndarray, int], bool]] = {
        "kmtests KSDAgg": lambda x, s, r: goodness_of_fit_test(
            x, score=s, statistic="ksdagg", levels=levels, n_resamples=2 * B, rng=r
        ).pvalue <= ALPHA,
        "kmtests KSD (median)": lambda x, s, r: goodness_of_fit_test(
            x, score=s, n_resamples=2 * B, rng=r).pvalue <= ALPHA,
    }
    if fssd:  # linear time, J = 5 locations learned on half the points (one dimension)
        out["kmtests FSSD (J = 5, half to learn)"] = lambda x, s, r: goodness_of_fit_test(
            x, score=s, statistic="fssd", n_resamples=2 * B, rng=r).pvalue <= ALPHA
    if path is not None:
        sys.path.insert(0, path)
        from kernel import compute_median_bandwidth
        from ksd_aggregated import ksdagg_wild

        out["authors ksdagg_wild"] = lambda x, s, r: bool(ksdagg_wild(
            r, x, s, ALPHA, 0.5, "imq", "uniform", levels[0], levels[1], B, B, 50))
        try:
            from kt.ksdagg import ksdagg as kt_ksdagg
        except ImportError:
            return out

        def kerneltests(x: np.ndarray, s: np.ndarray, r: int) -> bool:
            h = compute_median_bandwidth(r, x)
            bws = np.array([2.0 ** ell * h for ell in range(levels[0], levels[1] + 1)])
            return bool(kt_ksdagg(x, s, alpha=ALPHA, bandwidths=bws, B1=B, B2=B, B3=50,
                                  seed=r))

        out["kerneltests ksdagg"] = kerneltests
    return out


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95% Wilson interval of a proportion."""
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def table(name: str, cells: list[tuple[str, Callable[[int], tuple[np.ndarray, np.ndarray]]]],
          funcs: dict[str, Callable[..., bool]], reps: int) -> None:
    """One block per cell (printed when the cell is done): each contender's rejection rate
    with its 95% Wilson interval, and the cell's wall and CPU seconds."""
    print(f"\n{name}: rejections at 5% of {reps} data sets (95% Wilson interval)")
    for label, data in cells:
        t0, c0 = time.perf_counter(), time.process_time()
        hits = {k: 0 for k in funcs}
        for r in range(reps):
            x, s = data(r)
            for k, f in funcs.items():
                hits[k] += bool(f(x, s, r))
        print(f"\n{label} ({time.perf_counter() - t0:.0f} s wall, "
              f"{time.process_time() - c0:.0f} s CPU, load {os.getloadavg()[0]:.2f} at the end)")
        for k in funcs:
            lo, hi = wilson(hits[k], reps)
            print(f"| {k} | {hits[k]}/{reps} = {hits[k] / reps:.2f} [{lo:.2f}, {hi:.2f}] |")
        sys.stdout.flush()


def gamma_cells(n: int = 500) -> list[tuple[str, Callable[[int], Any]]]:
    def cell(s: float, i: int) -> Callable[[int], Any]:
        def data(r: int) -> tuple[np.ndarray, np.ndarray]:
            x = np.random.RandomState(1000 * i + r).gamma(5.0 + s, 5.0, (n, 1))
            return x, (5.0 - 1.0) / x - 1.0 / 5.0
        return data
    return [(f"s = {s:g}", cell(s, i)) for i, s in enumerate((0.0, 0.1, 0.2, 0.3, 0.4))]


def rbm_cells(n: int = 1000, sweeps: int = 2000) -> list[tuple[str, Callable[[int], Any]]]:
    def cell(sigma: float, i: int) -> Callable[[int], Any]:
        Bm, b, c, Bq = rbm_model(sigma)

        def data(r: int) -> tuple[np.ndarray, np.ndarray]:
            x = rbm_gibbs(np.random.default_rng(1000 * i + r), n, Bq, b, c, sweeps)
            return x, rbm_score(x, Bm, b, c)
        return data
    return [(f"sigma = {s:g}", cell(s, i)) for i, s in enumerate((0.0, 0.01, 0.02, 0.03))]


def timing(funcs: dict[str, Callable[..., bool]], repeats: int) -> None:
    print("\nseconds per test, Gamma(5.2, 5) data against Gamma(5, 5), l = 0..10 "
          f"(best of {repeats}; wall / CPU; load before each)\n")
    print("| contender | n = 500 wall | CPU | load | n = 1000 wall | CPU | load |")
    print("|---|---|---|---|---|---|---|")
    for k, f in funcs.items():
        cells = []
        for n in (500, 1000):
            x = np.random.RandomState(n).gamma(5.2, 5.0, (n, 1))
            s = 4.0 / x - 0.2
            f(x, s, 0)  # warm-up
            load = os.getloadavg()[0]
            best = (np.inf, np.inf)
            for r in range(repeats):
                t0, c0 = time.perf_counter(), time.process_time()
                f(x, s, r)
                best = min(best, (time.perf_counter() - t0, time.process_time() - c0))
            cells += [f"{best[0]:.2f}", f"{best[1]:.2f}", f"{load:.2f}"]
        print(f"| {k} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("setting", choices=["gamma", "rbm", "timing"])
    ap.add_argument("--ksdagg", default=None, help="a checkout of antoninschrab/ksdagg-paper")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--B", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sweeps", type=int, default=2000)
    ap.add_argument("--cells", type=str, default=None,
                    help="the cells to run, by index (e.g. 0,2), default all")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print(f"numpy {np.__version__}, scipy {stats.__name__ and __import__('scipy').__version__}"
          f", {os.cpu_count()} CPUs, B = {args.B}")
    pick = (lambda cells: cells if args.cells is None
            else [cells[int(i)] for i in args.cells.split(",")])
    if args.setting == "gamma":
        table("Gamma shape shift (n = 500, l = 0..10)", pick(gamma_cells()),
              contenders(args.ksdagg, args.B, (0, 10), fssd=True), args.reps)
    elif args.setting == "rbm":
        table(f"Gaussian-Bernoulli RBM (d = 50, n = 1000, {args.sweeps} Gibbs sweeps, "
              "l = -20..0)", pick(rbm_cells(sweeps=args.sweeps)),
              contenders(args.ksdagg, args.B, (-20, 0)), args.reps)
    else:
        timing(contenders(args.ksdagg, args.B, (0, 10)), args.repeats)


if __name__ == "__main__":
    main()
