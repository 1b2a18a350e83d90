"""Reference values from the authors' KSDAgg code (not part of kmtests).

Runs ``ksdagg_wild`` of ``ksd_aggregated.py`` (Schrab, Guedj & Gretton, 2022,
github.com/antoninschrab/ksdagg-paper, MIT licence) — the function of the paper's
experiments: IMQ kernel (beta = 1/2), bandwidths ``2^l`` times the median distance,
uniform weights, Rademacher wild bootstrap with B1 draws for the quantiles, B2 for
the level correction and B3 bisection steps — in an environment with numpy and
scipy only (no kmtests). Its local variables are read when ``ksdagg_wild_custom``
returns (``sys.settrace``): the matrix ``M`` of every member's statistic on every
multiplier vector (only its first columns and its row sums are stored), the
original statistics, ``u`` and the decision; and ``compute_median_bandwidth``'s
value. The multipliers are ``np.random.RandomState(seed).choice([1.0, -1.0],
size=(B1 + B2 + 1, n))`` with row ``B1`` set to ones (the original statistic):
``tests/test_ksdagg.py`` draws the same matrix with numpy. Nothing of the authors'
code is copied here or into kmtests; only the numbers are stored, in
``ksdagg_reference.json``.

Run (from the repository root)::

    git --git-dir=<mirror of antoninschrab/ksdagg-paper> archive HEAD | tar -x -C /tmp/ksdagg-paper
    /work/peers-venv/bin/python tests/reference/gen_ksdagg.py --ksdagg /tmp/ksdagg-paper
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from gen_authors import capture_in  # the same directory: the scripts run from it

HERE = Path(__file__).resolve().parent
B1, B2, B3, SEED = 500, 500, 50, 42


def cases() -> list[dict]:
    """The data sets: n = 51 points (an odd number of pairs, so that the median distance
    is one of them, whichever way the median is taken)."""
    out = []
    for shift in (0.0, 3.0):   # the Gamma shape shift of the paper's Figure 1, model Gamma(5, 5)
        rs = np.random.RandomState(int(10 + 10 * shift))
        x = rs.gamma(5.0 + shift, 5.0, (51, 1))
        out.append({"name": f"gamma_shift{shift:g}", "x": x, "score": (5.0 - 1.0) / x - 1 / 5.0,
                    "levels": (0, 10), "model": "gamma(a=5, scale=5)"})
    for shift in (0.0, 0.6):   # a standard normal model in 3 dimensions
        rs = np.random.RandomState(int(20 + 10 * shift))
        x = rs.standard_normal((51, 3)) + np.r_[shift, 0.0, 0.0]
        out.append({"name": f"normal3_shift{shift:g}", "x": x, "score": -x,
                    "levels": (-20, 0), "model": "multivariate_normal(zeros(3), eye(3))"})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ksdagg", required=True, help="a checkout of ksdagg-paper")
    args = ap.parse_args()
    sys.path.insert(0, args.ksdagg)
    import scipy
    from kernel import compute_median_bandwidth
    from ksd_aggregated import ksdagg_wild

    ref: dict = {"versions": {"numpy": np.__version__, "scipy": scipy.__version__,
                              "python": sys.version.split()[0]},
                 "B1": B1, "B2": B2, "B3": B3, "seed": SEED, "alpha": 0.05, "cases": []}
    for case in cases():
        x, s = case["x"], case["score"]
        lo, hi = case["levels"]
        out, loc = capture_in("ksdagg_wild_custom", ksdagg_wild, SEED, x, s, 0.05, 0.5, "imq",
                           "uniform", lo, hi, B1, B2, B3)
        M = np.asarray(loc["M"])
        ref["cases"].append({
            "name": case["name"], "model": case["model"], "x": x.tolist(),
            "score": s.tolist(), "levels": [lo, hi],
            "call": (f"ksdagg_wild(seed={SEED}, X, score_X, alpha=0.05, beta_imq=0.5, "
                     f"kernel_type='imq', weights_type='uniform', l_minus={lo}, "
                     f"l_plus={hi}, B1={B1}, B2={B2}, B3={B3})"),
            "median_bandwidth": float(compute_median_bandwidth(SEED, x)),
            "ksd": np.asarray(loc["KSD_original"]).tolist(),
            "M_first_columns": M[:, :4].tolist(),
            "M_row_sums": M.sum(axis=1).tolist(),
            "u": float(loc["u"]),
            "reject": int(out),
        })
        print(case["name"], "reject", out, "u", loc["u"])
    (HERE / "ksdagg_reference.json").write_text(json.dumps(ref, indent=1) + "\n")


if __name__ == "__main__":
    main()
