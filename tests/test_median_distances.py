"""The median heuristic's pairwise squared distances without SciPy: pdist's bits.

``kmtests.kernels._pair_sqdist`` sums the squared coordinate differences by NumPy when
SciPy's spatial module is not loaded (a new process's first test then does not import
SciPy); the numbers must be ``pdist(z, "sqeuclidean")``'s, bit for bit and in its order,
or the bandwidths (and every seeded p-value) would depend on what was imported before.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from kmtests import kernels


@pytest.mark.parametrize("n, d", [(2, 1), (3, 2), (129, 1), (300, 3), (257, 8)])
def test_the_numpy_loop_gives_pdists_bits(n, d, monkeypatch):
    gen = np.random.default_rng(n * 10 + d)
    z = gen.normal(size=(n, d)) * gen.uniform(0.01, 100.0, size=d) + gen.normal(size=d)
    monkeypatch.delitem(sys.modules, "scipy.spatial.distance")  # force the NumPy loop
    got = kernels._pair_sqdist(z)
    assert np.array_equal(got, pdist(z, "sqeuclidean"))


def test_ties_and_the_zero_fallback_are_unchanged(monkeypatch):
    z = np.array([0, 0, 0, 0, 0, 1.0])[:, None]
    monkeypatch.delitem(sys.modules, "scipy.spatial.distance")
    assert np.array_equal(kernels._pair_sqdist(z), pdist(z, "sqeuclidean"))
    bw, rule = kernels.median_bandwidth(z, return_rule=True)
    assert rule == "median (non-zero pairs)" and bw == pytest.approx(1.0)


def test_a_first_hsic_test_imports_no_scipy_spatial():
    code = ("import sys, numpy as np, kmtests; g = np.random.default_rng(0); "
            "kmtests.independence_test(g.normal(size=(50, 3)), g.normal(size=(50, 3)), "
            "n_resamples=99, rng=1); print('scipy.spatial' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False"], out.stdout + out.stderr
