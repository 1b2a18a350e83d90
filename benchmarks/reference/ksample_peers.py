"""Reference values of the k-sample test from dcor and hyppo (independent implementations).

Writes ``benchmarks/reference/ksample_peers.json``, which
``tests/test_reference_ksample.py`` compares with :func:`kmtests.k_sample_test`
through exact algebraic relations (derived in the module docstring of that test
and in ``benchmarks/README.md``, section "k-sample test: power and speed against
dcor and hyppo"). The test needs neither dcor nor hyppo: it redraws the samples
from the seeds stored here (``numpy.random.default_rng(seed)``, one
``gen.normal(loc, scale, size=(n, d))`` per sample, in order) and checks the
data against the stored SHA-256 of their bytes.

Run from the repository root, in an environment with dcor and hyppo (neither is a
dependency of kmtests)::

    python -m venv /tmp/peers && /tmp/peers/bin/pip install -e . dcor hyppo
    /tmp/peers/bin/python benchmarks/reference/ksample_peers.py      # about 5 minutes

What is pinned, per case (``call`` strings in the JSON are verbatim):

* dcor: ``dcor.energy_distance(x_a, x_b, estimation_stat=s)`` for every pair,
  ``dcor.homogeneity.energy_test(*samples, estimation_stat=s).statistic`` (the
  k-sample statistic, no resampling), s = "V" and "U".
* hyppo: ``KSample("Dcorr", bias=b).statistic``, ``KSample("Hsic", gamma=g,
  bias=b).statistic`` (g = 1 / (2 bandwidth^2), the fixed Gaussian bandwidth of
  the case), ``DISCO(bias=b).statistic`` (equal sizes only), and for k = 2
  ``MMD(compute_kernel="gaussian", gamma=g, bias=b)`` and ``Energy(bias=b)``.
* p-values from the peers' own permutations, B = 20000 each, where the peer's
  statistic is a permutation-equivalent of kmtests' (k = 2, or equal sizes):
  ``dcor.homogeneity.energy_test(..., num_resamples=B, random_state=seed)`` (V and
  U), ``KSample("Dcorr").test(..., reps=B, auto=False, random_state=seed)`` and
  ``KSample("Hsic", gamma=g).test(..., reps=B, auto=False)`` (hyppo's Hsic ignores
  its ``random_state`` in the permutation branch and draws from numpy's global
  state, so the script calls ``numpy.random.seed(seed)`` first). For unequal sizes
  with k >= 3 the peers' statistics weight the samples differently from kmtests';
  their p-values are recorded under ``pvalues_other`` (not compared).
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
import time
import warnings
from importlib.metadata import version
from pathlib import Path

import dcor
import numpy as np
from hyppo.ksample import DISCO, MMD, Energy, KSample

OUT = Path(__file__).with_name("ksample_peers.json")
B = 20000  # permutations of every peer p-value

#: name, seed, sizes, d, per-sample location (added to every coordinate) and scale,
#: the fixed Gaussian bandwidth
CASES = [
    ("k2_equal_d1", 101, (20, 20), 1, (0.0, 0.45), (1.0, 1.0), 1.0),
    ("k2_unequal_d3", 102, (15, 24), 3, (0.0, 0.3), (1.0, 1.2), 1.5),
    ("k3_equal_d3", 103, (18, 18, 18), 3, (0.0, 0.15, 0.35), (1.0, 1.0, 1.0), 1.5),
    ("k3_unequal_d1", 104, (12, 20, 29), 1, (0.0, 0.3, 0.1), (1.0, 1.0, 1.3), 1.0),
    ("k5_equal_d1", 105, (10, 10, 10, 10, 10), 1, (0.0, 0.0, 0.3, 0.3, 0.5),
     (1.0, 1.0, 1.0, 1.0, 1.0), 1.0),
    ("k5_unequal_d3", 106, (8, 11, 14, 17, 20), 3, (0.0, 0.2, 0.0, 0.2, 0.4),
     (1.0, 1.0, 1.2, 1.0, 1.0), 1.5),
]


def draw(seed: int, sizes, d: int, locs, scales) -> list[np.ndarray]:
    """The samples of a case (tests/test_reference_ksample.py repeats this)."""
    gen = np.random.default_rng(seed)
    return [gen.normal(loc, scale, size=(n, d)) for n, loc, scale in zip(sizes, locs, scales)]


def digest(samples: list[np.ndarray]) -> str:
    return hashlib.sha256(b"".join(np.ascontiguousarray(s, dtype="<f8").tobytes()
                                   for s in samples)).hexdigest()


def case_values(name, seed, sizes, d, locs, scales, bw) -> dict:
    xs = draw(seed, sizes, d, locs, scales)
    k, g = len(xs), 1.0 / (2.0 * bw * bw)
    equal = len(set(sizes)) == 1
    equivalent = k == 2 or equal  # the peers' statistics are functions of kmtests'
    stats, calls = {}, {}

    def put(key, call, fn):
        calls[key] = call
        stats[key] = float(fn())

    for s in ("V", "U"):
        for a in range(k):
            for b in range(a + 1, k):
                put(f"dcor_energy_distance_{s}_{a}_{b}",
                    f'dcor.energy_distance(x{a}, x{b}, estimation_stat="{s}")',
                    lambda a=a, b=b, s=s: dcor.energy_distance(xs[a], xs[b], estimation_stat=s))
        put(f"dcor_energy_test_{s}",
            f'dcor.homogeneity.energy_test(*samples, estimation_stat="{s}").statistic',
            lambda s=s: dcor.homogeneity.energy_test(*xs, estimation_stat=s).statistic)
    for bias in (True, False):
        tag = "biased" if bias else "unbiased"
        put(f"hyppo_KSample_Dcorr_{tag}", f'hyppo.ksample.KSample("Dcorr", bias={bias})'
            ".statistic(*samples)", lambda b=bias: KSample("Dcorr", bias=b).statistic(*xs))
        put(f"hyppo_KSample_Hsic_{tag}", f'hyppo.ksample.KSample("Hsic", gamma={g!r}, '
            f"bias={bias}).statistic(*samples)",
            lambda b=bias: KSample("Hsic", gamma=g, bias=b).statistic(*xs))
        if equal:
            put(f"hyppo_DISCO_{tag}", f"hyppo.ksample.DISCO(bias={bias}).statistic(*samples)",
                lambda b=bias: DISCO(bias=b).statistic(*xs))
        if k == 2:
            put(f"hyppo_MMD_{tag}", f'hyppo.ksample.MMD(compute_kernel="gaussian", '
                f"gamma={g!r}, bias={bias}).statistic(x0, x1)",
                lambda b=bias: MMD(compute_kernel="gaussian", gamma=g, bias=b).statistic(*xs))
            put(f"hyppo_Energy_{tag}", f"hyppo.ksample.Energy(bias={bias}).statistic(x0, x1)",
                lambda b=bias: Energy(bias=b).statistic(*xs))

    pvalues, pcalls = {}, {}
    t0 = time.perf_counter()
    for s in ("V", "U"):
        pcalls[f"dcor_energy_test_{s}"] = (
            f'dcor.homogeneity.energy_test(*samples, estimation_stat="{s}", '
            f"num_resamples={B}, random_state={seed})")
        pvalues[f"dcor_energy_test_{s}"] = float(dcor.homogeneity.energy_test(
            *xs, estimation_stat=s, num_resamples=B, random_state=seed).pvalue)
    pcalls["hyppo_KSample_Dcorr_unbiased"] = (
        f'hyppo.ksample.KSample("Dcorr").test(*samples, reps={B}, auto=False, '
        f"random_state={seed})")
    pvalues["hyppo_KSample_Dcorr_unbiased"] = float(KSample("Dcorr").test(
        *xs, reps=B, auto=False, random_state=seed).pvalue)
    pcalls["hyppo_KSample_Hsic_unbiased"] = (
        f"numpy.random.seed({seed}); hyppo.ksample.KSample(\"Hsic\", gamma={g!r})"
        f".test(*samples, reps={B}, auto=False)")
    np.random.seed(seed)
    pvalues["hyppo_KSample_Hsic_unbiased"] = float(KSample("Hsic", gamma=g).test(
        *xs, reps=B, auto=False).pvalue)
    print(f"{name}: p-values in {time.perf_counter() - t0:.0f} s: "
          + ", ".join(f"{key} {v:.4f}" for key, v in pvalues.items()), file=sys.stderr)

    return {"name": name, "seed": seed, "sizes": list(sizes), "d": d, "locs": list(locs),
            "scales": list(scales), "bandwidth": bw, "gamma": g,
            "data_sha256": digest(xs), "data_sum": float(sum(x.sum() for x in xs)),
            "peers": stats, "call": calls,
            "B": B, "pvalues" if equivalent else "pvalues_other": pvalues,
            "pvalue_call": pcalls}


def main() -> None:
    warnings.simplefilter("ignore")  # hyppo/numba deprecation noise
    cases = [case_values(*c) for c in CASES]
    out = {
        "generator": "benchmarks/reference/ksample_peers.py",
        "rng": "numpy.random.default_rng(seed); samples drawn in order, "
               "gen.normal(loc, scale, size=(n, d)) each",
        "versions": {p: version(p) for p in ("dcor", "hyppo", "numpy", "scipy",
                                             "scikit-learn", "numba", "joblib")}
        | {"python": platform.python_version()},
        "cases": cases,
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    for c in cases:
        print(json.dumps({"name": c["name"], **c["peers"]}, indent=None)[:400])
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
