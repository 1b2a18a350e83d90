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
  bandwidth learned on half the points, the other half tested, weighted chi-square null;
* ``hyppo FSSD`` (Gamma setting only, when hyppo is importable): ``hyppo.kgof.FSSD``
  (hyppo 0.5.2) with a Gaussian kernel, the Gamma model as a ``UnnormalizedDensity``,
  5 locations and the width learned on the same half as kmtests' (the split kmtests
  draws from ``rng``), its ``FSSDH0SimCovObs`` null (3000 draws) on the other half.
  hyppo 0.5.2 ships the power criterion but not kgof's optimiser
  (``GaussFSSD.optimize_locs_widths``) and its kernel is not autograd-traceable, so
  :func:`hyppo_fssd` runs kgof's recipe on hyppo's parts: locations drawn from a
  Gaussian fitted to the training half (``fit_gaussian_draw``), the width by hyppo's
  grid search over ``2^(-3..3)`` times the squared median distance, then L-BFGS-B on the
  square-root width and the locations (kgof's bounds and tolerances) with
  finite-difference gradients instead of autograd's.

Settings (Schrab et al., 2022, Section 4):

* ``gamma``: ``n = 500`` points of Gamma(5 + s, scale 5) tested against Gamma(5, 5),
  ``s = 0, 0.1, 0.2, 0.3, 0.4``, bandwidths ``2^l`` median for ``l = 0..10``;
* ``rbm``: the Gaussian-Bernoulli RBM (``d_x = 50``, ``d_h = 40``; Liu et al., 2016),
  ``n = 1000`` points of the RBM whose weights are perturbed by ``N(0, sigma^2)`` noise,
  ``sigma = 0, 0.01, 0.02, 0.03``, each data set ``n`` independent Gibbs chains after
  2000 sweeps (written here: :func:`rbm_model`, :func:`rbm_gibbs`), bandwidths ``2^l``
  median for ``l = -20..0``;
* ``timing``: seconds per test at ``n = 500`` and ``1000`` (Gamma data, the ``gamma``
  grid), wall and CPU, with the machine load (the FSSD rows: the learning included).

Run (the peers' environment: kmtests installed there too, with kerneltests)::

    git --git-dir=<mirror of antoninschrab/ksdagg-paper> archive HEAD | tar -x -C /tmp/ksdagg-paper
    /work/peers-venv/bin/python benchmarks/ksdagg_paper.py gamma --ksdagg /tmp/ksdagg-paper
    /work/peers-venv/bin/python benchmarks/ksdagg_paper.py rbm --ksdagg /tmp/ksdagg-paper
    /work/peers-venv/bin/python benchmarks/ksdagg_paper.py timing --ksdagg /tmp/ksdagg-paper
    /work/peers-venv/bin/python benchmarks/ksdagg_paper.py gamma --only FSSD  # the FSSDs only
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
def hyppo_fssd(J: int = 5, n_simulate: int = 3000, ftol: float = 1e-5
               ) -> Callable[[np.ndarray, np.ndarray, int], bool] | None:
    """hyppo's FSSD test of Gamma(5, scale 5) (module docs), or None without hyppo.

    The data set ``x`` is split as kmtests' FSSD splits it for ``rng=r`` (a permutation
    by the child generator ``"split"`` of ``r``, the first half to learn); the score
    argument is unused: hyppo computes it from the model. `ftol` is L-BFGS-B's
    relative-reduction tolerance (kgof's default 1e-5; scipy compares it with
    ``max(|f|, 1)``, so at this data scale, where the criterion is about 1e-3, kgof's
    default stops after one iteration: ``ftol=1e-12`` is the diagnostic row that runs
    the same optimiser to convergence)."""
    try:
        from hyppo.kgof._utils import fit_gaussian_draw, meddistance
        from hyppo.kgof.density import UnnormalizedDensity
        from hyppo.kgof.fssd import (FSSD, FSSDH0SimCovObs, fssd_grid_search_kernel,
                                     power_criterion)
        from hyppo.kgof.kernel import KGauss
    except ImportError:
        return None
    from scipy.optimize import minimize

    from kmtests._rng import child

    class GammaDensity(UnnormalizedDensity):  # type: ignore[misc]
        """Gamma(shape, scale) up to its constant, for the (positive) data only."""

        def __init__(self, shape: float, scale: float) -> None:
            self.shape, self.scale = shape, scale

        def log_den(self, X: np.ndarray) -> np.ndarray:
            return (self.shape - 1.0) * np.log(X[:, 0]) - X[:, 0] / self.scale

        def grad_log(self, X: np.ndarray) -> np.ndarray:
            return (self.shape - 1.0) / X - 1.0 / self.scale

        def dim(self) -> int:
            return 1

    model = GammaDensity(5.0, 5.0)
    iterations: list[int] = []  # L-BFGS-B iterations per data set, printed by `table`

    def learn(X: np.ndarray, seed: int) -> tuple[np.ndarray, float]:
        """kgof's ``GaussFSSD.optimize_auto_init`` recipe with its defaults (reg 1e-2,
        100 iterations, tolerance 1e-5, locations within the data's range +- 100 sd,
        squared width within [1e-2, 1e2] times the squared median distance)."""
        d = X.shape[1]
        med2 = meddistance(X, subsample=1000) ** 2
        V0 = fit_gaussian_draw(X, J, seed=seed, reg=1e-6)
        widths = med2 * 2.0 ** np.linspace(-3, 3, 5)
        best, _ = fssd_grid_search_kernel(model, X, V0, [KGauss(w) for w in widths])
        lo, hi = max(1e-2 * med2, 1e-3), min(1e2 * med2, 1e5)  # squared width
        vlo, vhi = X.min(0) - 100 * X.std(0), X.max(0) + 100 * X.std(0)
        bounds = [(np.sqrt(lo), np.sqrt(hi))] + list(zip(np.tile(vlo, J), np.tile(vhi, J)))

        def objective(th: np.ndarray) -> float:
            return -float(power_criterion(model, X, KGauss(th[0] ** 2),
                                          th[1:].reshape(J, d), reg=1e-2))

        th0 = np.r_[np.sqrt(widths[best]), V0.ravel()]
        out = minimize(objective, th0, method="L-BFGS-B", bounds=bounds, tol=ftol,
                       options={"maxiter": 100, "ftol": ftol, "gtol": 1e-7})
        iterations.append(int(out.nit))
        return out.x[1:].reshape(J, d), float(out.x[0] ** 2)

    def test(x: np.ndarray, s: np.ndarray, r: int) -> bool:
        n = x.shape[0]
        order = child(r, "split").permutation(n)
        train, rest = x[order[:n // 2]], x[np.sort(order[n // 2:])]
        V, width = learn(train, seed=r + 1)
        fssd = FSSD(model, KGauss(width), V,
                    null_sim=FSSDH0SimCovObs(n_simulate=n_simulate, seed=r), alpha=ALPHA)
        return bool(fssd.test(rest)["h0_rejected"])

    test.iterations = iterations  # type: ignore[attr-defined]
    return test


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
        # the kernel hyppo has (kmtests' FSSD defaults to the IMQ kernel)
        out["kmtests FSSD, Gaussian kernel"] = lambda x, s, r: goodness_of_fit_test(
            x, score=s, statistic="fssd", kernel="gaussian", n_resamples=2 * B, rng=r
        ).pvalue <= ALPHA
        hyppo, hyppo_converged = hyppo_fssd(), hyppo_fssd(ftol=1e-12)
        if hyppo is not None and hyppo_converged is not None:
            out["hyppo FSSD (J = 5, half to learn)"] = hyppo
            out["hyppo FSSD, optimiser to convergence (ftol 1e-12)"] = hyppo_converged
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
        for k, f in funcs.items():
            its = getattr(f, "iterations", None)
            if its:
                print(f"{k}: L-BFGS-B iterations per data set: median {np.median(its):g}; "
                      f"{sum(i <= 1 for i in its)} of {len(its)} stopped after at most one")
                its.clear()
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
            cells += [f"{best[0]:.3f}", f"{best[1]:.3f}", f"{load:.2f}"]
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
    ap.add_argument("--only", type=str, default=None,
                    help="run only the contenders whose name contains this text (e.g. FSSD)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print(f"numpy {np.__version__}, scipy {stats.__name__ and __import__('scipy').__version__}"
          f", {os.cpu_count()} CPUs, B = {args.B}")
    pick = (lambda cells: cells if args.cells is None
            else [cells[int(i)] for i in args.cells.split(",")])
    only = (lambda funcs: funcs if args.only is None
            else {k: f for k, f in funcs.items() if args.only in k})
    if args.setting == "gamma":
        table("Gamma shape shift (n = 500, l = 0..10)", pick(gamma_cells()),
              only(contenders(args.ksdagg, args.B, (0, 10), fssd=True)), args.reps)
    elif args.setting == "rbm":
        table(f"Gaussian-Bernoulli RBM (d = 50, n = 1000, {args.sweeps} Gibbs sweeps, "
              "l = -20..0)", pick(rbm_cells(sweeps=args.sweeps)),
              only(contenders(args.ksdagg, args.B, (-20, 0))), args.reps)
    else:
        timing(only(contenders(args.ksdagg, args.B, (0, 10), fssd=True)), args.repeats)


if __name__ == "__main__":
    main()
