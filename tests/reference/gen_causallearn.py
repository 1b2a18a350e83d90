"""Reference values of the KCI test from causal-learn (not part of kmtests).

Runs causal-learn's ``KCI_CInd`` (causallearn.utils.KCI.KCI, MIT licence) on fixed
data made by numpy's ``default_rng`` and records, for each case, the data, the
kernel widths causal-learn used (its ``"empirical"`` rule: for n < 200 width 1.2,
for n < 1200 width 0.7; the Gaussian ``exp(-0.5 ||a - b||^2 / (width^2 d_z))`` on
z-scored data, x augmented by ``0.5 z``), its statistic ``Vstat`` (the sum of the
products of the residual Gram matrices, ridge ``epsilon = 1e-3``), its gamma
p-value (``approx=True``) and the eigenvalues of its null (``get_uuprod`` +
``eigvalsh``, as ``null_sample_spectral`` uses them), in ``causallearn_reference.json``
for ``tests/test_reference_conditional.py``. Nothing of causal-learn is copied;
only the numbers are stored.

Run in an environment with causal-learn (``pip install causal-learn``)::

    python tests/reference/gen_causallearn.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

CASES = [  # (seed, n, d_x, d_y, d_z, dependent)
    (1, 60, 1, 1, 1, False),
    (2, 150, 1, 1, 2, True),
    (3, 250, 2, 1, 1, False),
    (4, 120, 1, 2, 3, False),
]


def data(seed: int, n: int, dx: int, dy: int, dz: int, dependent: bool):
    gen = np.random.default_rng(seed)
    z = gen.normal(size=(n, dz))
    s = np.sin(2.0 * z).sum(axis=1, keepdims=True)
    x = s + 0.4 * gen.normal(size=(n, dx))
    y = np.cos(z).sum(axis=1, keepdims=True) + 0.4 * gen.normal(size=(n, dy))
    if dependent:
        y = y + 0.8 * x[:, :1]
    return x, y, z


def main() -> None:
    import causallearn
    from causallearn.utils.KCI.KCI import KCI_CInd
    from numpy.linalg import eigvalsh

    out = {"versions": {"causal-learn": getattr(causallearn, "__version__", "0.1.4.8"),
                        "numpy": np.__version__},
           "cases": []}
    for seed, n, dx, dy, dz, dep in CASES:
        x, y, z = data(seed, n, dx, dy, dz, dep)
        test = KCI_CInd(approx=True)
        p, stat = test.compute_pvalue(x, y, z)
        Kx, Ky, Kzx, Kzy = test.kernel_matrix(x, y, z)
        v, KxR, KyR = test.KCI_V_statistic(Kx, Ky, Kzx, Kzy)
        uu, size_u = test.get_uuprod(KxR, KyR)
        eig = np.sort(eigvalsh(uu))[::-1][:min(n, size_u)]
        width = 1.2 if n < 200 else 0.7
        out["cases"].append({
            "seed": seed, "n": n, "d_x": dx, "d_y": dy, "d_z": dz, "dependent": dep,
            "x": x.tolist(), "y": y.tolist(), "z": z.tolist(),
            "bandwidth": width * np.sqrt(dz), "epsilon": 1e-3,
            "statistic": float(stat), "pvalue_gamma": float(p),
            "null_eigenvalues": eig[eig > eig.max() * 1e-5].tolist(),
        })
        print(f"seed {seed}: n = {n}, Vstat = {stat:.6g}, p = {p:.4g}")
    (HERE / "causallearn_reference.json").write_text(json.dumps(out))


if __name__ == "__main__":
    main()
