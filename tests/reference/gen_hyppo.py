"""Generate tests/reference/hyppo_reference.json from hyppo (independent implementation).

Run from the repository root with the project's venv:

    .venv/bin/python tests/reference/gen_hyppo.py

The inputs are drawn here with a fixed seed and stored in the JSON next to
hyppo's statistics, so tests/test_reference.py needs neither hyppo nor this
script.  Every value is produced by a *public* hyppo call, written verbatim
into the JSON ("call") so that the test docstrings can quote it:

    hyppo.ksample.MMD(compute_kernel="gaussian", gamma=g, bias=b).statistic(x, y)
    hyppo.ksample.MMD(bias=b).statistic(x, y)                  # hyppo's median heuristic
    hyppo.ksample.Energy(bias=b).statistic(x, y)
    hyppo.independence.Hsic(compute_kernel="gaussian", gamma=g, bias=b).statistic(x, y)
    hyppo.independence.Hsic(bias=b).statistic(x, y)            # hyppo's median heuristic
    hyppo.independence.Dcorr(bias=b).statistic(x, y)

hyppo's Gaussian kernel is sklearn's rbf, exp(-gamma ||x - y||^2), so
gamma = 1 / (2 bandwidth^2) for kmtests' exp(-||x - y||^2 / (2 bandwidth^2)).
See README.md for how each statistic relates to kmtests' MMD^2 / HSIC.
"""

from __future__ import annotations

import json
import platform
import sys
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np

warnings.simplefilter("ignore")  # hyppo/numba import-time deprecation noise

from hyppo.independence import Dcorr, Hsic  # noqa: E402
from hyppo.ksample import MMD, Energy  # noqa: E402

SEED = 20240607
OUT = Path(__file__).with_name("hyppo_reference.json")


def gamma_of(bandwidth: float) -> float:
    return 1.0 / (2.0 * bandwidth * bandwidth)


def two_sample_case(name, x, y, bandwidth, median):
    g = gamma_of(bandwidth)
    stats, calls = {}, {}
    for bias in (True, False):
        tag = "biased" if bias else "unbiased"
        calls[f"MMD_{tag}"] = (f'hyppo.ksample.MMD(compute_kernel="gaussian", gamma={g!r}, '
                               f"bias={bias}).statistic(x, y)")
        stats[f"MMD_{tag}"] = float(
            MMD(compute_kernel="gaussian", gamma=g, bias=bias).statistic(x, y))
        if median:
            calls[f"MMD_median_{tag}"] = f"hyppo.ksample.MMD(bias={bias}).statistic(x, y)"
            stats[f"MMD_median_{tag}"] = float(MMD(bias=bias).statistic(x, y))
        calls[f"Energy_{tag}"] = f"hyppo.ksample.Energy(bias={bias}).statistic(x, y)"
        stats[f"Energy_{tag}"] = float(Energy(bias=bias).statistic(x, y))
    return {"name": name, "x": x.tolist(), "y": y.tolist(), "bandwidth": bandwidth,
            "gamma": g, "n_pairs_pooled": (len(x) + len(y)) * (len(x) + len(y) - 1) // 2,
            "hyppo": stats, "call": calls}


def independence_case(name, x, y, bandwidth, median):
    g = gamma_of(bandwidth)
    stats, calls = {}, {}
    for bias in (True, False):
        tag = "biased" if bias else "unbiased"
        calls[f"Hsic_{tag}"] = (f'hyppo.independence.Hsic(compute_kernel="gaussian", '
                                f"gamma={g!r}, bias={bias}).statistic(x, y)")
        stats[f"Hsic_{tag}"] = float(
            Hsic(compute_kernel="gaussian", gamma=g, bias=bias).statistic(x, y))
        if median:
            calls[f"Hsic_median_{tag}"] = f"hyppo.independence.Hsic(bias={bias}).statistic(x, y)"
            stats[f"Hsic_median_{tag}"] = float(Hsic(bias=bias).statistic(x, y))
        calls[f"Dcorr_{tag}"] = f"hyppo.independence.Dcorr(bias={bias}).statistic(x, y)"
        stats[f"Dcorr_{tag}"] = float(Dcorr(bias=bias).statistic(x, y))
    return {"name": name, "x": x.tolist(), "y": y.tolist(), "bandwidth": bandwidth,
            "gamma": g, "n_pairs": len(x) * (len(x) - 1) // 2,
            "hyppo": stats, "call": calls}


def main() -> None:
    gen = np.random.default_rng(SEED)
    two = []
    # N = 22 and N = 23 pooled points: N(N-1)/2 = 231, 253 pairs (odd), where hyppo's
    # median heuristic (median of distances) equals kmtests' sqrt(median of d^2).
    x = gen.normal(size=(11, 2))
    y = gen.normal(0.8, 1.3, size=(11, 2))
    two.append(two_sample_case("balanced_2d", x, y, 1.3, median=True))
    x = gen.normal(size=(10, 3))
    y = gen.standard_t(5, size=(13, 3)) + np.array([0.9, 0.0, -0.5])
    two.append(two_sample_case("unbalanced_3d", x, y, 0.9, median=True))
    # N = 24: 276 pairs (even) -- fixed bandwidth only (the medians differ, see README).
    x = gen.normal(size=(9, 1))
    y = gen.exponential(1.0, size=(15, 1)) - 1.0
    two.append(two_sample_case("unbalanced_1d", x, y, 0.6, median=False))

    ind = []
    # n = 15 (105 pairs) and n = 22 (231 pairs): odd, so the median heuristic agrees.
    x = gen.normal(size=(15, 2))
    y = (x[:, :1] ** 2 + 0.5 * gen.normal(size=(15, 1)))
    ind.append(independence_case("n15_2d_1d", x, y, 1.0, median=True))
    x = gen.uniform(-2, 2, size=(22, 1))
    y = np.sin(2 * x) + 0.3 * gen.normal(size=(22, 1))
    ind.append(independence_case("n22_1d_1d", x, y, 0.7, median=True))
    x = gen.normal(size=(12, 3))
    y = gen.normal(size=(12, 2))
    ind.append(independence_case("n12_3d_2d_indep", x, y, 1.5, median=False))

    out = {
        "generator": "tests/reference/gen_hyppo.py",
        "seed": SEED,
        "rng": "numpy.random.default_rng(seed), draws in the order of gen_hyppo.py",
        "versions": {p: version(p) for p in ("hyppo", "numpy", "scipy", "scikit-learn",
                                             "numba")} | {"python": platform.python_version()},
        "two_sample": two,
        "independence": ind,
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
