"""Reference values of kerneltests' MMDAggInc and HSICAggInc (not part of kmtests).

kerneltests 0.0.1 (PyPI, import name ``kt``; ``kt/agginc.py`` re-implements the
authors' ``agginc/np.py``, Schrab, Kim, Guedj & Gretton, NeurIPS 2022, MIT licence, with
"the same random-number protocol ... results agree exactly for a given seed") is run in
its own environment (``/work/peers-venv``, whose kmtests is an old checkout: this script
imports no kmtests). For each case it stores the inputs, the design size, the bandwidths
(kerneltests' Gaussian is ``exp(-||x - y||^2 / b^2)``: kmtests' bandwidth is
``b / sqrt(2)``), every member's statistic, the first ``B1`` wild-bootstrap draws of
every member (kerneltests' ``_bootstrap`` with its multipliers
``RandomState(seed).choice([1., -1.], size=(N, B1 + B2))``, which
``tests/test_agginc.py`` draws again with numpy), the members' p-values, the
level-corrected thresholds and the decision of ``kt.agginc.agginc(..., bandwidths=...,
return_details=True)``. Only numbers are stored (``agginc_reference.json``); nothing of
kerneltests is copied.

With ``--authors DIR`` (a checkout of github.com/antoninschrab/agginc, MIT licence;
``agginc/np.py`` is loaded from it, nothing of it is copied) the authors' own
``compute_h_MMD_values`` / ``compute_h_HSIC_values`` and ``compute_bootstrap_values``
(``batch_size=None``, the paper's experiments' setting) run on the same cases too, and
their statistics and draws are stored beside kerneltests' (``authors_statistic``,
``authors_boot``).

Run (from the repository root)::

    git --git-dir=/work/.mirror/antoninschrab+agginc/repo archive HEAD | tar -x -C /tmp/agginc
    /work/peers-venv/bin/python benchmarks/reference/gen_agginc.py --authors /tmp/agginc
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
B1, B2, B3, SEED = 60, 60, 50, 42


def cases() -> list[dict]:
    gen = np.random.default_rng(20261127)
    x = gen.normal(size=(70, 2))
    y = gen.normal(size=(60, 2)) * [1.0, 1.6] + [0.3, 0.0]
    u = gen.normal(size=(81, 2))
    v = u[:, :1] ** 2 + 0.7 * gen.normal(size=(81, 1))
    return [
        {"name": "mmd_R12", "type": "mmd", "X": x[:60], "Y": y, "R": 12,
         "bandwidths": [0.4, 1.0, 2.5]},
        {"name": "mmd_unequal_R30", "type": "mmd", "X": x, "Y": y, "R": 30,
         "bandwidths": [0.7, 1.9]},
        {"name": "mmd_complete", "type": "mmd", "X": x[:60], "Y": y, "R": 200,
         "bandwidths": [1.0, 3.0]},
        {"name": "hsic_R9_odd", "type": "hsic", "X": u, "Y": v, "R": 9,
         "bandwidths": [[0.8, 1.6, 3.2], [0.5, 1.5]]},
        {"name": "hsic_complete", "type": "hsic", "X": u[:80], "Y": v[:80], "R": 100,
         "bandwidths": [[1.2], [0.9, 2.7]]},
    ]


def authors_module(path: str):
    import importlib.util
    import types

    # np.py imports psutil for batch_size="auto" only (not installed in the peers'
    # environment; batch_size=None is used here): an empty module stands in for it
    sys.modules.setdefault("psutil", types.ModuleType("psutil"))
    spec = importlib.util.spec_from_file_location("agginc_np", Path(path) / "agginc" / "np.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    import argparse

    import kt
    from kt import agginc as A

    ap = argparse.ArgumentParser()
    ap.add_argument("--authors", help="checkout of antoninschrab/agginc")
    args = ap.parse_args()
    au = authors_module(args.authors) if args.authors else None

    out = {"kerneltests": getattr(kt, "__version__", "0.0.1"), "numpy": np.__version__,
           "python": sys.version.split()[0], "B1": B1, "B2": B2, "B3": B3, "seed": SEED,
           "cases": []}
    for c in cases():
        X, Y = np.asarray(c["X"]), np.asarray(c["Y"])
        bws = c["bandwidths"]
        h, ii, jj, N = A._H[c["type"]](X, Y, c["R"], bws)
        boot, stat = A._bootstrap(h, ii, jj, N, B1 + B2, SEED, None)
        res, det = A.agginc(c["type"], X, Y, R=c["R"], B1=B1, B2=B2, B3=B3, seed=SEED,
                            bandwidths=bws, return_details=True)
        assert np.allclose(det["statistic"], stat, rtol=0, atol=1e-15)
        extra = {}
        if au is not None:
            fn = au.compute_h_MMD_values if c["type"] == "mmd" else au.compute_h_HSIC_values
            ha, ia, ja, Na = fn(X, Y, c["R"], np.asarray(bws) if c["type"] == "mmd" else bws,
                                return_indices_N=True)
            ba, sa = au.compute_bootstrap_values(ha, ia, ja, Na, B1 + B2, SEED,
                                                 batch_size=None, return_original=True)
            extra = {"authors_statistic": np.asarray(sa).tolist(),
                     "authors_boot": np.asarray(ba)[:, :B1].tolist()}
        out["cases"].append({**extra,
            "name": c["name"], "type": c["type"], "X": X.tolist(), "Y": Y.tolist(),
            "R": c["R"], "bandwidths": bws, "N": int(N), "pairs": int(len(ii)),
            "statistic": stat.tolist(), "boot": boot[:, :B1].tolist(),
            "p_value": det["p_value"].tolist(), "threshold": det["threshold"].tolist(),
            "reject": det["reject"].tolist(), "decision": int(res),
            "call": (f"kt.agginc.agginc({c['type']!r}, X, Y, R={c['R']}, B1={B1}, B2={B2}, "
                     f"B3={B3}, seed={SEED}, bandwidths={bws!r}, return_details=True)")})
    (HERE / "agginc_reference.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
