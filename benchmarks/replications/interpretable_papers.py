"""Power and level of kmtests' ME, SCF and NFSIC tests on the authors' benchmark settings,
against the authors' code on the same data sets.

The authors' data generators and tests are imported from checkouts of
wittawatj/interpretable-test (``freqopttest``, Jitkrittum et al., 2016) and
wittawatj/fsic-test (``fsic``, Jitkrittum et al., 2017) given on the command
line, with the stand-ins of ``tests/reference/gen_me_reference.py`` for the
imports of their optimisers (theano, autograd; not installed). Their
*optimised* tests need theano and do not run here; their heuristic tests do:

* ``authors ME-heu``: ``MeanEmbeddingTest.create_fit_gauss_heuristic(te, J,
  alpha, seed=180)`` (locations drawn from Gaussians fitted to each sample,
  the median width) on the test half, as in their ``ex1_power_vs_n.py``;
* ``authors SCF-randn``: ``SmoothCFTest.create_randn(te, J, alpha, seed=20)``;
* ``authors NFSIC-med``: their ``job_nfsicJ10_med`` (``init_locs_marginals_subset``
  locations, median widths, the whole sample, asymptotic null).

Ours: ``two_sample_test(x, y, statistic="me" | "scf", n_locations=J, rng=r,
method="asymptotic")`` and ``independence_test(x, y, statistic="fsic",
n_locations=J, rng=r, method="asymptotic")`` (the learned locations and widths
on a random half, the papers' chi-square null; the default null is permutations),
on the same data set ``r`` (their ``sample(n, seed=r)``).

Designs (the papers' settings): two-sample with ``J = 5``, ``alpha = 0.01``:
``gmd_d100`` (N(0, I) against N((1, 0, ..., 0), I), d = 100), ``gvd_d50``
(variance 2 in the first of 50 coordinates), ``blobs`` (their 2-d blobs,
stretch 2, angle pi/4) and ``sg_d50`` (the null, d = 50); independence with
``J = 10``, ``alpha = 0.05``: ``sin_w4`` (their 2-d sinusoid, frequency 4) and
``sg_d50`` (independent Gaussians, d = 50).

Run (from the repository root)::

    .venv/bin/python benchmarks/replications/interpretable_papers.py \\
        --freqopttest /path/to/interpretable-test --fsic /path/to/fsic-test \\
        --n 1000 --reps 100
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from statsmodels.stats.proportion import proportion_confint

ROOT = Path(__file__).resolve().parents[2]


def _authors(freqopttest: str, fsic: str):  # noqa: ANN202
    sys.path.insert(0, str(ROOT / "tests" / "reference"))
    from gen_me_reference import _stand_ins

    _stand_ins()
    import matplotlib

    matplotlib.use("Agg")
    sys.path.insert(0, freqopttest)
    sys.path.insert(0, fsic)
    from fsic import data as fdata
    from fsic import indtest, kernel as fkernel, util as futil
    from freqopttest import data as tdata
    from freqopttest import tst

    return tdata, tst, fdata, indtest, fkernel, futil


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--freqopttest", required=True)
    ap.add_argument("--fsic", required=True)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    tdata, tst, fdata, indtest, fkernel, futil = _authors(args.freqopttest, args.fsic)
    from kmtests import independence_test, two_sample_test

    designs = {
        "gmd_d100": ("two", tdata.SSGaussMeanDiff(d=100, my=1.0)),
        "gvd_d50": ("two", tdata.SSGaussVarDiff(d=50)),
        "blobs": ("two", tdata.SSBlobs()),
        "sg_d50": ("two", tdata.SSSameGauss(d=50)),
        "sin_w4": ("ind", fdata.PS2DSinFreq(freq=4)),
        "isg_d50": ("ind", fdata.PSIndSameGauss(dx=50, dy=50)),
    }
    rows = []
    for name, (kind, source) in designs.items():
        if args.only and name not in args.only.split(","):
            continue
        J, alpha = (5, 0.01) if kind == "two" else (10, 0.05)
        rej: dict[str, int] = {}
        secs: dict[str, float] = {}

        def record(method: str, p: float, t: float) -> None:
            rej[method] = rej.get(method, 0) + int(p <= alpha)
            secs[method] = secs.get(method, 0.0) + t

        for r in range(args.reps):
            if kind == "two":
                data = source.sample(args.n, seed=r)
                x, y = data.xy()
                for stat in ("me", "scf"):
                    t0 = time.perf_counter()
                    res = two_sample_test(x, y, statistic=stat, n_locations=J, rng=r,
                                          method="asymptotic")
                    record(f"kmtests {stat.upper()}", res.pvalue, time.perf_counter() - t0)
                tr, te = data.split_tr_te(tr_proportion=0.5, seed=r + 20)
                t0 = time.perf_counter()
                heu = tst.MeanEmbeddingTest.create_fit_gauss_heuristic(te, J, alpha, seed=180)
                record("authors ME-heu", heu.perform_test(te)["pvalue"],
                       time.perf_counter() - t0)
                t0 = time.perf_counter()
                scf = tst.SmoothCFTest.create_randn(te, J, alpha, seed=20)
                record("authors SCF-randn", scf.perform_test(te)["pvalue"],
                       time.perf_counter() - t0)
            else:
                pdata = source.sample(args.n, seed=r)
                x, y = pdata.xy()
                t0 = time.perf_counter()
                res = independence_test(x, y, statistic="fsic", n_locations=J, rng=r,
                                        method="asymptotic")
                record("kmtests NFSIC", res.pvalue, time.perf_counter() - t0)
                t0 = time.perf_counter()
                V, W = indtest.GaussNFSIC.init_locs_marginals_subset(pdata, J, seed=r + 2)
                medx = futil.meddistance(x, 1000)
                medy = futil.meddistance(y, 1000)
                k, l = fkernel.KGauss(medx ** 2), fkernel.KGauss(medy ** 2)
                out = indtest.NFSIC(k, l, V, W, alpha=alpha, reg="auto").perform_test(pdata)
                record("authors NFSIC-med", out["pvalue"], time.perf_counter() - t0)
        for method in rej:
            k = rej[method]
            lo, hi = proportion_confint(k, args.reps, alpha=0.05, method="beta")
            rows.append({"design": name, "n": args.n, "J": J, "alpha": alpha,
                         "method": method, "reps": args.reps, "rejections": k,
                         "rate": k / args.reps, "ci_low": lo, "ci_high": hi,
                         "seconds_per_test": secs[method] / args.reps})
            print(f"{name:9s} n={args.n} {method:18s} {k:4d}/{args.reps} "
                  f"[{lo:.2f}, {hi:.2f}]  {secs[method] / args.reps:.3f} s", flush=True)
    out = ROOT / "benchmarks" / "results" / f"interpretable_n{args.n}.json"
    out.write_text(json.dumps(rows, indent=1))
    print("wrote", out, math.nan if not rows else len(rows), "rows")


if __name__ == "__main__":
    main()
