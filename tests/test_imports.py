"""Import time: module-level imports are the rule in kmtests, and the heavy dependencies
load on first use. `import kmtests` (and the command line's parser) load none of them."""

import subprocess
import sys

import pytest

#: loaded on first use only: the numerical stack beyond numpy, and the optional extras
HEAVY = ["numba", "scipy", "pandas", "statsmodels", "matplotlib", "joblib", "tqdm", "dask",
         "sklearn", "causallearn", "pgmpy"]


@pytest.mark.parametrize("module", ["kmtests", "kmtests.cli"])
def test_importing_loads_no_heavy_dependency(module):
    code = (f"import sys, {module}; "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == [], f"`import {module}` loads {out.stdout.strip()}"


def test_the_heavy_dependencies_load_on_first_use():
    """The check above can fail: a test with the gamma null loads SciPy."""
    code = ("import sys, numpy as np, kmtests; "
            "kmtests.two_sample_test(np.arange(10.0), np.arange(10.0) + 0.5, method='gamma'); "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert "scipy" in out.stdout.split(), out.stdout + out.stderr
