"""Reference values from the authors' code of MMDAgg and MMD-FUSE (not part of kmtests).

Runs, in a separate environment with numpy, scipy and jax (no kmtests):

* ``mmdagg`` of ``mmdagg/np.py`` (Schrab et al., github.com/antoninschrab/mmdagg,
  MIT licence), Gaussian kernel, 10 bandwidths, uniform weights, permutations
  (m != n), B1 = B2 = 499;
* ``mmdfuse`` of ``mmdfuse/mmdfuse.py`` (Biggs, Schrab & Gretton,
  github.com/antoninschrab/mmdfuse, MIT licence), Gaussian kernel, 10
  bandwidths, 199 permutations, float64, JIT disabled so that the local
  variables are concrete.

The functions are called as published; their local variables are read when
they return (``sys.settrace``): the permutations (``idx``), the bandwidths,
the matrix ``M`` of every member's statistic on every permutation, and the
outputs. (In ``mmdagg`` the permutation indices ``idx`` are overwritten by a
later loop variable, so the x-membership matrix ``V10`` is recorded.) Nothing of the authors' code is copied here or into kmtests; only the
numbers are stored, in ``authors_reference.json``, for
``tests/test_reference_authors.py``.

Run::

    /tmp/authors-venv/bin/python tests/reference/gen_authors.py \\
        --mmdagg /path/to/mmdagg-checkout --mmdfuse /path/to/mmdfuse-checkout

(checkouts of the two repositories; the environment needs numpy, scipy and
jax[cpu].)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def capture(fn, *args, **kwargs):
    """Call `fn` and return (its result, its local variables when it returned)."""
    return capture_in(getattr(fn, "__wrapped__", fn).__name__, fn, *args, **kwargs)


def capture_in(name, fn, *args, **kwargs):
    """Call `fn` and return (its result, the locals of the function `name` it ran, when
    that returned)."""
    seen: dict = {}

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code.co_name == name:
            def local(fr, ev, a):
                if ev == "return":
                    seen.update(fr.f_locals)
                return local
            return local
        return None

    sys.settrace(tracer)
    try:
        out = fn(*args, **kwargs)
    finally:
        sys.settrace(None)
    return out, seen


def data(seed: int, m: int, n: int, d: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(seed)
    x = gen.normal(size=(m, d))
    y = gen.normal(size=(n, d)) * np.r_[1.0 + shift, np.ones(d - 1)]
    return x, y


def run_mmdagg(path: str) -> list[dict]:
    sys.path.insert(0, path)
    from mmdagg.np import mmdagg

    cases = []
    for seed, m, n, d, shift in [(1, 30, 24, 2, 3.0), (2, 20, 26, 3, 0.0)]:
        x, y = data(seed, m, n, d, shift)
        (out, dic), loc = capture(mmdagg, x, y, kernel="gaussian", number_bandwidths=10,
                                  weights_type="uniform", B1=499, B2=499, B3=50, seed=42,
                                  return_dictionary=True)
        assert loc["approx_type"] == "permutations"
        cases.append({
            "x": x.tolist(), "y": y.tolist(), "call": (
                "mmdagg(x, y, kernel='gaussian', number_bandwidths=10, "
                "weights_type='uniform', B1=499, B2=499, B3=50, seed=42, "
                "return_dictionary=True)"),
            "B1": 499, "B2": 499,
            "bandwidths": np.asarray(loc["bandwidths_l2"]).tolist(),
            # x-membership of every point (rows) in every permutation (columns; column B1
            # is the original split): their V10 (their `idx` is reused as a loop variable)
            "in_x": (np.asarray(loc["V10"]) != 0).astype(int).tolist(),
            "M": np.asarray(loc["M"]).tolist(),
            "p_vals": np.asarray(loc["p_vals"]).tolist(),
            "u": float(loc["u"]),
            "reject": int(out),
            "single_rejects": [bool(dic[f"Single test 1.{i + 1}"]["Reject"])
                               for i in range(10)],
        })
    return cases


def run_mmdfuse(path: str) -> list[dict]:
    sys.path.insert(0, path)
    import jax

    jax.config.update("jax_enable_x64", True)
    from mmdfuse.mmdfuse import mmdfuse

    cases = []
    for seed, n, d, shift in [(3, 25, 2, 0.8), (4, 30, 4, 0.0)]:
        x, y = data(seed, n, n, d, shift)
        key = jax.random.PRNGKey(seed)
        with jax.disable_jit():
            (out, p), loc = capture(mmdfuse, jax.numpy.asarray(x), jax.numpy.asarray(y), key,
                                    0.05, ("gaussian",), 1, 10, 199, True)
        cases.append({
            "x": x.tolist(), "y": y.tolist(), "call": (
                f"mmdfuse(x, y, jax.random.PRNGKey({seed}), alpha=0.05, "
                "kernels=('gaussian',), lambda_multiplier=1, number_bandwidths=10, "
                "number_permutations=199, return_p_val=True) with jax_enable_x64 and "
                "jax.disable_jit()"),
            "bandwidths": np.asarray(loc["bandwidths"]).tolist(),
            "idx": np.asarray(loc["idx"]).tolist(),
            "M": np.asarray(loc["M"]).tolist(),
            "all_statistics": np.asarray(loc["all_statistics"]).tolist(),
            "pvalue": float(p),
            "reject": int(out),
        })
    return cases


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mmdagg", required=True)
    ap.add_argument("--mmdfuse", required=True)
    args = ap.parse_args()
    import jax
    import scipy

    ref = {
        "versions": {"numpy": np.__version__, "scipy": scipy.__version__,
                     "jax": jax.__version__, "python": sys.version.split()[0]},
        "mmdagg": run_mmdagg(args.mmdagg),
        "mmdfuse": run_mmdfuse(args.mmdfuse),
    }
    out = HERE / "authors_reference.json"
    out.write_text(json.dumps(ref, separators=(",", ":")))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
