"""Reference values from hyppo's FSSD (Jitkrittum et al., 2017; hyppo.kgof, not part of
kmtests), for ``tests/test_fssd.py``.

Runs in an environment with hyppo (0.5.2) and no kmtests: for fixed samples, a Gaussian
model and given test locations and kernel, hyppo's statistic ``n FSSD^2`` (the
U-statistic), the eigenvalues of the features' covariance (its null law
``sum_k omega_k (Z_k^2 - 1)``) and its simulated p-value (3000 draws). Only the numbers
are stored, in ``hyppo_fssd_reference.json``.

Run (from the repository root)::

    /work/peers-venv/bin/python tests/reference/gen_hyppo_fssd.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def main() -> None:
    import hyppo
    from hyppo.kgof.density import IsotropicNormal
    from hyppo.kgof.fssd import FSSD, FSSDH0SimCovObs, list_simulate_spectral
    from hyppo.kgof.kernel import KGauss

    cases = []
    for seed, n, d, J, shift, sigma2 in [(1, 80, 2, 3, 0.0, 1.5), (2, 120, 3, 2, 0.5, 2.0),
                                         (3, 60, 1, 4, 0.0, 0.7)]:
        gen = np.random.default_rng(seed)
        x = gen.normal(size=(n, d)) + np.r_[shift, np.zeros(d - 1)]
        V = gen.normal(size=(J, d))
        p = IsotropicNormal(np.zeros(d), 1.0)
        test = FSSD(p, KGauss(sigma2), V, null_sim=FSSDH0SimCovObs(n_simulate=3000, seed=10),
                    alpha=0.05)
        stat, Xi = test.statistic(x, return_feature_tensor=True)
        Tau = Xi.reshape(n, -1)
        _, eigs = list_simulate_spectral(np.cov(Tau.T), J, 10, seed=1)
        out = test.test(x)
        cases.append({"x": x.tolist(), "V": V.tolist(), "sigma2": sigma2,
                      "model": "IsotropicNormal(zeros(d), 1.0)",
                      "call": (f"FSSD(IsotropicNormal(np.zeros({d}), 1.0), KGauss({sigma2}), V, "
                               "null_sim=FSSDH0SimCovObs(n_simulate=3000, seed=10))"),
                      "n_fssd": float(stat), "eigenvalues": np.asarray(eigs).tolist(),
                      "pvalue": float(out["pvalue"])})
        print(seed, stat, out["pvalue"])
    ref = {"versions": {"hyppo": hyppo.__version__, "numpy": np.__version__,
                        "python": sys.version.split()[0]}, "cases": cases}
    (HERE / "hyppo_fssd_reference.json").write_text(json.dumps(ref, indent=1) + "\n")


if __name__ == "__main__":
    main()
