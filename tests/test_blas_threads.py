"""The BLAS thread limits reach every BLAS library the package's linear algebra uses."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_blas_limit_reaches_scipys_own_blas():
    # NumPy and SciPy wheels carry separate OpenBLAS builds; a controller built before
    # SciPy's LAPACK was loaded left SciPy's (Cholesky, triangular solves) unlimited
    code = textwrap.dedent("""
        from kmtests.engines._loop import blas_threads
        with blas_threads(1):
            from scipy.linalg import lapack  # loaded inside the limit
            from threadpoolctl import threadpool_info
            blas = [i for i in threadpool_info() if i["user_api"] == "blas"]
            print(len(blas), sorted({i["num_threads"] for i in blas}))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"OPENBLAS_NUM_THREADS": "2", "PATH": ""}).stdout
    count, threads = out.split(maxsplit=1)
    assert int(count) >= 1
    assert threads.strip() == "[1]"
