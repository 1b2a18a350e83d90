"""The estimator axis of the goodness-of-fit test (issue 27): level and power of the KSD with
the KME, S-KMSE and F-KMSE embeddings of the Stein features, side by side on the same data.

Designs (model N(0, 1), IMQ kernel with the median bandwidth, alpha = 0.05, B = 99):
``null`` (N(0, 1)), ``shift`` (N(0.3, 1)), ``t5`` (Student t with 5 degrees of freedom,
scaled to unit variance), at n = 100; ``--reps`` data sets a design (default 100), the
same data sets for every contender. Contenders: the KME with the wild bootstrap and with
the Monte Carlo null; S-KMSE and F-KMSE with the Monte Carlo null (F-KMSE's default).
Prints a Markdown table of rejections with 95% Wilson intervals.

Run from the repository root::

    .venv/bin/python benchmarks/goodness_estimators.py --reps 100
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402
from statsmodels.stats.proportion import proportion_confint  # noqa: E402

import kmtests  # noqa: E402

DESIGNS = {
    "null": lambda g, n: g.normal(size=n),
    "shift": lambda g, n: g.normal(0.3, 1.0, size=n),
    "t5": lambda g, n: g.standard_t(5, size=n) / np.sqrt(5 / 3),
}
CONTENDERS = {
    "KME, wild": dict(estimator="kme", method="wild"),
    "KME, Monte Carlo": dict(estimator="kme", method="monte_carlo"),
    "S-KMSE, Monte Carlo": dict(estimator="skmse", method="monte_carlo"),
    "F-KMSE (V-form), Monte Carlo": dict(estimator="fkmse", method="monte_carlo"),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--n", type=int, default=100)
    args = ap.parse_args()
    print(f"n = {args.n}, {args.reps} data sets a design, B = 99, load "
          f"{os.getloadavg()[0]:.1f}")
    rows = {c: {} for c in CONTENDERS}
    cpu = {c: 0.0 for c in CONTENDERS}
    for design, draw in DESIGNS.items():
        gen = np.random.default_rng(11 + list(DESIGNS).index(design))
        data = [draw(gen, args.n) for _ in range(args.reps)]
        for name, kw in CONTENDERS.items():
            t0 = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rej = sum(kmtests.goodness_of_fit_test(x, model=stats.norm(), n_resamples=99,
                                                       rng=i, **kw).pvalue <= 0.05
                          for i, x in enumerate(data))
            cpu[name] += time.process_time() - t0
            lo, hi = proportion_confint(rej, args.reps, method="wilson")
            rows[name][design] = f"{rej}/{args.reps} [{lo:.2f}, {hi:.2f}]"
    print("| contender | " + " | ".join(DESIGNS) + " | CPU s per test |")
    print("|---|" + "---|" * (len(DESIGNS) + 1))
    for name in CONTENDERS:
        per = cpu[name] / (len(DESIGNS) * args.reps)
        print(f"| {name} | " + " | ".join(rows[name][d] for d in DESIGNS) + f" | {per:.3f} |")


if __name__ == "__main__":
    main()
