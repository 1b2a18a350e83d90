"""Reference values from the authors' code of the ME, SCF and NFSIC tests (not part of
kmtests).

Runs the published numpy functions of

* ``freqopttest/tst.py`` (Jitkrittum, Szabó, Chwialkowski & Gretton, 2016,
  github.com/wittawatj/interpretable-test, MIT licence, commit b04d5da):
  ``MeanEmbeddingTest(test_locs, gaussian_width).perform_test`` (the ME statistic
  and its chi-square p-value; ``gaussian_width`` is the squared width ``s^2`` of
  ``exp(-d^2 / (2 s^2))``) and ``SmoothCFTest(test_freqs, gaussian_width)
  .perform_test`` (the SCF statistic; here the width ``s`` itself);
* ``fsic/indtest.py`` (Jitkrittum, Szabó & Gretton, 2017,
  github.com/wittawatj/fsic-test, MIT licence, commit 1bc6318):
  ``GaussNFSIC(gwidthx, gwidthy, V, W).perform_test`` (asymptotic null; the widths
  are squared widths) and ``nfsic(X, Y, k, l, V, W, reg=1e-5)`` (the training
  criterion with the regulariser of the optimiser),

on fixed data, locations and widths. Those modules import theano, autograd
and python-future at the top, for their optimisers; the functions called
here are plain numpy, so the script installs stand-ins for those imports
(``autograd.numpy`` is numpy; theano is an empty module; ``old_div`` and
``with_metaclass`` are python-future's definitions). Nothing of the authors'
code is copied here or into kmtests; only the numbers are stored, in
``me_reference.json``, for ``tests/test_interpretable.py``.

Run::

    python tests/reference/gen_me_reference.py \\
        --freqopttest /path/to/interpretable-test --fsic /path/to/fsic-test

(checkouts of the two repositories: the directories holding ``freqopttest/``
and ``fsic/``).
"""

from __future__ import annotations

import argparse
import json
import numbers
import platform
import sys
import types
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _stand_ins() -> None:
    """Modules the authors' files import for their optimisers and Python 2 support."""
    def old_div(a, b):
        if isinstance(a, numbers.Integral) and isinstance(b, numbers.Integral):
            return a // b
        return a / b

    def with_metaclass(meta, *bases):
        return meta("_Base", bases or (object,), {})

    past = types.ModuleType("past")
    past_utils = types.ModuleType("past.utils")
    past_utils.old_div = old_div
    past.utils = past_utils
    future = types.ModuleType("future")
    future_utils = types.ModuleType("future.utils")
    future_utils.with_metaclass = with_metaclass
    future.utils = future_utils
    autograd = types.ModuleType("autograd")
    autograd.numpy = np
    theano = types.ModuleType("theano")
    tensor = types.ModuleType("theano.tensor")
    theano.tensor = tensor
    mods = {"past": past, "past.utils": past_utils, "future": future,
            "future.utils": future_utils, "autograd": autograd, "autograd.numpy": np,
            "theano": theano, "theano.tensor": tensor,
            "theano.tensor.nlinalg": types.ModuleType("theano.tensor.nlinalg"),
            "theano.tensor.slinalg": types.ModuleType("theano.tensor.slinalg")}
    sys.modules.update(mods)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--freqopttest", required=True)
    ap.add_argument("--fsic", required=True)
    args = ap.parse_args()
    _stand_ins()
    import matplotlib

    matplotlib.use("Agg")
    sys.path.insert(0, args.freqopttest)
    sys.path.insert(0, args.fsic)
    from freqopttest import data as tdata
    from freqopttest import tst
    from fsic import data as fdata
    from fsic import indtest
    from fsic import kernel as fkernel

    gen = np.random.default_rng(20261124)
    cases = []
    for n, d, J in [(60, 3, 4), (200, 1, 2), (150, 5, 3)]:
        x = gen.normal(size=(n, d))
        y = gen.normal(size=(n, d)) + np.r_[0.6, np.zeros(d - 1)]
        y[:, -1] *= 1.3
        locs = gen.normal(size=(J, d))
        s2 = float(gen.uniform(0.5, 3.0))
        s = float(gen.uniform(0.5, 3.0))
        data = tdata.TSTData(x, y)
        me = tst.MeanEmbeddingTest(locs, s2, alpha=0.01).perform_test(data)
        scf = tst.SmoothCFTest(locs, s, alpha=0.01).perform_test(data)
        cases.append({"x": x.tolist(), "y": y.tolist(), "locations": locs.tolist(),
                      "me_width2": s2, "scf_width": s,
                      "me_stat": float(me["test_stat"]), "me_pvalue": float(me["pvalue"]),
                      "scf_stat": float(scf["test_stat"]),
                      "scf_pvalue": float(scf["pvalue"])})
    fsic_cases = []
    for n, dx, dy, J in [(80, 2, 1, 4), (300, 3, 2, 2)]:
        x = gen.normal(size=(n, dx))
        y = np.sin(2 * x[:, :dy]) + 0.5 * gen.normal(size=(n, dy))
        V, W = gen.normal(size=(J, dx)), gen.normal(size=(J, dy))
        sx2, sy2 = (float(v) for v in gen.uniform(0.5, 3.0, size=2))
        pdata = fdata.PairedData(x, y)
        res = indtest.GaussNFSIC(sx2, sy2, V, W, alpha=0.01).perform_test(pdata)
        crit, _, _ = indtest.nfsic(x, y, fkernel.KGauss(sx2), fkernel.KGauss(sy2), V, W,
                                   reg=1e-5)
        fsic_cases.append({"x": x.tolist(), "y": y.tolist(), "V": V.tolist(), "W": W.tolist(),
                           "width2_x": sx2, "width2_y": sy2,
                           "stat": float(res["test_stat"]), "pvalue": float(res["pvalue"]),
                           "criterion_reg1e-5": float(crit)})
    out = {
        "generator": "numpy.random.default_rng(20261124)",
        "calls": {
            "me": "tst.MeanEmbeddingTest(locations, me_width2, alpha=0.01)"
                  ".perform_test(data.TSTData(x, y))",
            "scf": "tst.SmoothCFTest(locations, scf_width, alpha=0.01)"
                   ".perform_test(data.TSTData(x, y))",
            "nfsic": "indtest.GaussNFSIC(width2_x, width2_y, V, W, alpha=0.01)"
                     ".perform_test(data.PairedData(x, y))",
            "criterion": "indtest.nfsic(x, y, KGauss(width2_x), KGauss(width2_y), V, W, "
                         "reg=1e-5)[0]",
        },
        "commits": {"interpretable-test": "b04d5dafed63bd5b5e1a652bd9322fe89d96625c",
                    "fsic-test": "1bc631815bcf4c76350a63d598f44a9b53045d55"},
        "versions": {"python": platform.python_version(), "numpy": np.__version__},
        "two_sample": cases,
        "independence": fsic_cases,
    }
    (HERE / "me_reference.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
