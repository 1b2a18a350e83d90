"""MKME / MMKME leave-one-out cost: O(n^2) per evaluation.

Run from the repository root::

    .venv/bin/python benchmarks/bench_mkme.py          # ~30 s
    .venv/bin/python benchmarks/bench_mkme.py --markdown  # also print the README table

What is timed (best of ``--repeats`` blocks of ``--evals`` evaluations; data
``N(0, I_d)`` with d = 5, Gaussian kernel with the median-heuristic bandwidth):

* ``setup``      : the once-per-sample precomputation of MKME (centring and the
  condensed pairwise squared distances, ``pdist``; O(n^2 d)).
* ``MKME eval``  : one LOOCV score ``score(sigma2)`` (MKME eq. 25) given the
  distances: two exponentials over the n(n-1)/2 pairs plus sums, O(n^2).
* ``MMKME eval`` : one score *and* gradient in ``log e_j`` (what L-BFGS-B calls):
  two scaled squared-distance matrices, two n x n exponentials and two
  ``(n x n) @ (n x d)`` products, O(n^2 d) time and O(n^2) memory.
* ``MKME fit``   : a whole ``MKME().fit`` (41-point log grid + bounded Brent), and
  the number of score evaluations it used.

BLAS is limited to ``--blas-threads`` threads (default 1). The ``ns/pair`` columns divide the per-evaluation time by n^2: a flat column is
the O(n^2) scaling.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
import _benchutil as bu  # noqa: E402

from kmtests.estimators import MKME  # noqa: E402
from kmtests.estimators.marginalized import _Loocv  # noqa: E402
from kmtests.kernels import median_bandwidth  # noqa: E402


def _per_eval(fn, evals: int, repeats: int) -> float:
    best, _ = bu.best_of(lambda: [fn() for _ in range(evals)], repeats)
    return best / evals


def run(sizes: list[int], d: int, evals: int, repeats: int) -> list[dict]:
    rows = []
    for n in sizes:
        x = np.random.default_rng(n).normal(size=(n, d))
        theta = median_bandwidth(x)
        theta2 = np.full(d, theta * theta)
        t_setup, prob = bu.best_of(lambda: _Loocv.from_data(x, theta2), repeats)
        e = np.full(d, 0.1 * theta * theta)
        t_mkme = _per_eval(lambda: prob.score(e), evals, repeats)
        u = np.log(e * np.linspace(0.5, 1.5, d))
        t_mmkme = _per_eval(lambda: prob.score_and_grad(u), max(1, evals // 4), repeats)
        count = [0]
        orig = _Loocv.score

        def counting(self, ee):
            count[0] += 1
            return orig(self, ee)

        _Loocv.score = counting
        try:
            t0 = time.perf_counter()
            emb = MKME().fit(x, bandwidth=theta)
            t_fit = time.perf_counter() - t0
        finally:
            _Loocv.score = orig
        rows.append({"n": n, "d": d, "setup_s": t_setup, "mkme_eval_s": t_mkme,
                     "mmkme_eval_s": t_mmkme, "mkme_fit_s": t_fit, "fit_evals": count[0],
                     "sigma2_over_theta2": emb.params["sigma2"] / theta**2})
        print(f"n={n:5d}  setup {t_setup * 1e3:8.2f} ms  MKME eval {t_mkme * 1e3:8.3f} ms "
              f"({t_mkme / n**2 * 1e9:5.2f} ns/pair)  MMKME eval {t_mmkme * 1e3:8.2f} ms "
              f"({t_mmkme / n**2 * 1e9:5.2f} ns/pair)  fit {t_fit:6.3f} s "
              f"({count[0]} evals)", flush=True)
    return rows


def markdown(rows: list[dict]) -> str:
    base = rows[0]
    lines = ["| n | setup (ms) | MKME eval (ms) | ns / n^2 | ratio vs n=%d | (n/%d)^2 | "
             "MMKME eval, score+grad (ms) | ns / n^2 | MKME fit (s) | evals |"
             % (base["n"], base["n"]),
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        n = r["n"]
        lines.append(
            f"| {n} | {r['setup_s'] * 1e3:.2f} | {r['mkme_eval_s'] * 1e3:.3f} | "
            f"{r['mkme_eval_s'] / n**2 * 1e9:.2f} | {r['mkme_eval_s'] / base['mkme_eval_s']:.1f} | "
            f"{(n / base['n']) ** 2:.1f} | {r['mmkme_eval_s'] * 1e3:.2f} | "
            f"{r['mmkme_eval_s'] / n**2 * 1e9:.2f} | {r['mkme_fit_s']:.3f} | {r['fit_evals']} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[200, 500, 1000, 2000])
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--evals", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--blas-threads", type=int, default=1,
                    help="BLAS threads (default 1: single-core cost, steadier on a shared machine)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    info = bu.machine_summary()
    bu.print_machine(info)
    busy = bu.check_quiet("before MKME benchmark")
    import threadpoolctl

    with threadpoolctl.threadpool_limits(limits=args.blas_threads, user_api="blas"):
        rows = run(args.sizes, args.d, args.evals, args.repeats)
    busy_after = bu.check_quiet("after MKME benchmark")
    path = bu.save_json("bench_mkme.json", {"machine": info, "blas_threads": args.blas_threads,
                                            "foreign_load": [busy, busy_after], "rows": rows})
    print(f"saved {path}")
    if args.markdown:
        print()
        print(markdown(rows))


if __name__ == "__main__":
    main()
