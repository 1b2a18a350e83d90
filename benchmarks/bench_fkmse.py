"""F-KMSE leave-one-out cost: one O(n^3) eigendecomposition, then O(n^2) per lambda.

Run from the repository root::

    .venv/bin/python benchmarks/bench_fkmse.py             # ~30 s
    .venv/bin/python benchmarks/bench_fkmse.py --markdown  # also print the README table

What is timed (best of ``--repeats``; data ``N(0, I_5)``, Gaussian kernel with
the median-heuristic bandwidth):

* ``eigh``        : ``kmtests.estimators._loocv.spectrum(K)``, the one
  eigendecomposition of the Gram matrix per sample (O(n^3)).
* ``one lambda``  : one LOOCV score (JMLR Prop 15 in the eigenbasis form,
  ``tikhonov_loo`` with a single lambda): six n x n matrix-vector products,
  O(n^2). This is what each bounded-Brent step costs.
* ``grid``        : the 45-point log grid, evaluated as n x n by n x 45
  products, per lambda.
* ``weights``     : a whole ``FKMSE().weights(K)`` (eigh + grid + Brent), and
  the number of lambda values it scored.
* ``Prop 15 as printed`` (n <= ``--literal-max``): the paper's formula, O(n^3)
  per lambda, for contrast.

BLAS is limited to ``--blas-threads`` threads (default 1). The ``ns / n^2``
column of the per-lambda time is flat for O(n^2) scaling, the ``ns / n^3``
column of the eigendecomposition flat for O(n^3).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
import _benchutil as bu  # noqa: E402

from kmtests.estimators import FKMSE  # noqa: E402
from kmtests.estimators import _loocv as L  # noqa: E402
from kmtests.kernels import Gaussian, median_bandwidth  # noqa: E402


def prop15_printed(K: np.ndarray, lam: float) -> float:
    """JMLR Prop 15 exactly as printed (matrix inverse, loop over i): O(n^3) per lambda."""
    n = K.shape[0]
    one = np.ones(n)
    G = np.linalg.inv(K + (n - 1) * lam * np.eye(n))
    k1, GK1 = K @ one, G @ (K @ one)
    A = np.zeros((n, n))
    B = np.zeros((n, n))
    for i in range(n):
        k = K[:, i]
        Gk = G @ k
        d = Gk[i]
        c = k1 - k
        c[i] += -k @ one + K[i, i] + (k @ GK1 - k @ Gk - d * (k @ one) + d * K[i, i]) / (1 - d)
        A += np.outer(c, c)
        B += np.outer(c, k)
    A /= (n - 1) ** 2
    B /= n - 1
    return float(np.trace(G @ K @ G @ A) / n - 2 * np.trace(G @ B) / n + np.trace(K) / n)


def run(sizes: list[int], d: int, evals: int, repeats: int, literal_max: int) -> list[dict]:
    rows = []
    for n in sizes:
        x = np.random.default_rng(n).normal(size=(n, d))
        K = Gaussian(bandwidth=median_bandwidth(x)).gram(x)
        t_eig, spec = bu.best_of(lambda: L.spectrum(K), repeats)
        lam = 0.01 * spec.kappa[-1] / n
        one = np.array([lam])
        t_one, _ = bu.best_of(lambda: [L.tikhonov_loo(spec, one) for _ in range(evals)], repeats)
        t_one /= evals
        grid = np.geomspace(1e-10, 1e2, 45) * spec.kappa[-1] / n
        t_grid, _ = bu.best_of(lambda: L.tikhonov_loo(spec, grid), repeats)
        count = [0]
        orig = L.tikhonov_loo

        def counting(s, lams):
            count[0] += np.size(lams)
            return orig(s, lams)

        L.tikhonov_loo = counting
        try:
            t0 = time.perf_counter()
            _, params = FKMSE().weights(K)
            t_fit = time.perf_counter() - t0
        finally:
            L.tikhonov_loo = orig
        t_lit = None
        if n <= literal_max:
            t_lit, val = bu.best_of(lambda: prop15_printed(K, lam), 1)
            assert abs(val - float(orig(spec, one)[0])) < 1e-8
        rows.append({"n": n, "d": d, "eigh_s": t_eig, "one_lambda_s": t_one,
                     "grid_per_lambda_s": t_grid / grid.size, "weights_s": t_fit,
                     "lambdas_scored": count[0], "prop15_printed_s": t_lit,
                     "lam_over_top": params["lam"] / (spec.kappa[-1] / n)})
        print(f"n={n:5d}  eigh {t_eig * 1e3:8.2f} ms  one lambda {t_one * 1e3:7.3f} ms "
              f"({t_one / n**2 * 1e9:5.2f} ns/n^2)  grid {t_grid / grid.size * 1e3:7.3f} ms/lambda"
              f"  weights {t_fit:6.3f} s ({count[0]} lambdas)"
              + (f"  printed Prop 15 {t_lit:6.3f} s/lambda" if t_lit is not None else ""),
              flush=True)
    return rows


def markdown(rows: list[dict]) -> str:
    b = rows[0]
    lines = [f"| n | eigh (ms) | ns / n^3 | ratio vs n={b['n']} | (n/{b['n']})^3 | "
             f"one lambda (ms) | ns / n^2 | ratio vs n={b['n']} | (n/{b['n']})^2 | "
             "grid, per lambda (ms) | whole `weights` (s) | lambdas scored | "
             "Prop 15 as printed, per lambda (s) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        n = r["n"]
        lit = "—" if r["prop15_printed_s"] is None else f"{r['prop15_printed_s']:.3f}"
        lines.append(
            f"| {n} | {r['eigh_s'] * 1e3:.1f} | {r['eigh_s'] / n**3 * 1e9:.2f} | "
            f"{r['eigh_s'] / b['eigh_s']:.1f} | {(n / b['n']) ** 3:.1f} | "
            f"{r['one_lambda_s'] * 1e3:.3f} | {r['one_lambda_s'] / n**2 * 1e9:.2f} | "
            f"{r['one_lambda_s'] / b['one_lambda_s']:.1f} | {(n / b['n']) ** 2:.1f} | "
            f"{r['grid_per_lambda_s'] * 1e3:.3f} | {r['weights_s']:.3f} | "
            f"{r['lambdas_scored']} | {lit} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[200, 500, 1000])
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--evals", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--literal-max", type=int, default=500,
                    help="largest n for the O(n^3)-per-lambda printed Prop 15")
    ap.add_argument("--blas-threads", type=int, default=1,
                    help="BLAS threads (default 1: single-core cost, steadier on a shared machine)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    info = bu.machine_summary()
    bu.print_machine(info)
    busy = bu.check_quiet("before F-KMSE benchmark")
    import threadpoolctl

    with threadpoolctl.threadpool_limits(limits=args.blas_threads, user_api="blas"):
        rows = run(args.sizes, args.d, args.evals, args.repeats, args.literal_max)
    busy_after = bu.check_quiet("after F-KMSE benchmark")
    path = bu.save_json("bench_fkmse.json", {"machine": info, "blas_threads": args.blas_threads,
                                             "foreign_load": [busy, busy_after], "rows": rows})
    print(f"saved {path}")
    if args.markdown:
        print()
        print(markdown(rows))


if __name__ == "__main__":
    main()
