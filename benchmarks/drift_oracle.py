"""The power ceilings of a mean-shift drift test between the two halves of one AR(1)
series (issue 30): two oracles that know the process, in theory (no simulation).

* ``mean difference``: the z-test of the windows' mean difference with its true
  standard deviation ``sqrt(c' S c)`` (``S`` the AR(1) covariance, unit marginal
  variance);
* ``GLS``: the z-test of the step's coefficient in the generalised least-squares fit
  of ``y = mu + delta 1{t >= n/2} + u`` with the true ``S`` (the best unbiased
  estimator of the shift: it also sees the jump at the split against the innovations,
  whose standard deviation is ``sqrt(1 - phi^2)``, not 1).

Two-sided, alpha = 0.05. Run from the repository root::

    .venv/bin/python benchmarks/drift_oracle.py
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

CELLS = ((200, 0.8, 0.75), (200, 0.5, 0.75), (500, 0.8, 0.5), (2000, 0.8, 0.25))


def ceilings(n: int, phi: float, shift: float, alpha: float = 0.05) -> dict[str, float]:
    t = np.arange(n)
    S = phi ** np.abs(t[:, None] - t[None, :])
    h = n // 2
    c = np.where(t < h, -1.0 / h, 1.0 / (n - h))
    sd_mean = float(np.sqrt(c @ S @ c))
    X = np.column_stack([np.ones(n), (t >= h).astype(float)])
    sd_gls = float(np.sqrt(np.linalg.inv(X.T @ np.linalg.solve(S, X))[1, 1]))
    q = norm.isf(alpha / 2)

    def power(sd: float) -> float:
        return float(norm.sf(q - shift / sd) + norm.cdf(-q - shift / sd))

    return {"sd_mean": sd_mean, "sd_gls": sd_gls, "power_mean": power(sd_mean),
            "power_gls": power(sd_gls)}


def main() -> int:
    print("| n | phi | shift | sd, mean difference | sd, GLS | power, mean difference "
          "| power, GLS |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n, phi, shift in CELLS:
        r = ceilings(n, phi, shift)
        print(f"| {n} | {phi} | {shift} | {r['sd_mean']:.3f} | {r['sd_gls']:.3f} | "
              f"{r['power_mean']:.3f} | {r['power_gls']:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
