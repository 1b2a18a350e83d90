"""Reference values of the Politis-White block lengths from ``arch`` (an independent
implementation).

Writes ``benchmarks/reference/arch_block_lengths.json``, which
``tests/test_timeseries.py`` compares with :func:`kmtests._serial.politis_white`.
The test needs no arch: it redraws the series from the seeds stored here and
checks them against the stored SHA-256 of their bytes.

Series (``numpy.random.default_rng(seed)``): i.i.d. normal; AR(1) with phi = 0.3,
0.5, 0.8, 0.95 (stationary start); MA(2) (``e_t + 0.6 e_{t-1} + 0.3 e_{t-2}``);
the squares of GARCH(1,1) returns; a random walk (capped length); n = 50, 200,
1000, 5000.

Run from the repository root, in an environment with arch (not a dependency of
kmtests)::

    .venv/bin/pip install arch
    .venv/bin/python benchmarks/reference/arch_block_lengths.py
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def series(kind: str, n: int, seed: int) -> np.ndarray:
    """The series of a case (the test redraws it with this function's copy)."""
    gen = np.random.default_rng(seed)
    e = gen.normal(size=n + 2)
    if kind == "iid":
        return e[2:]
    if kind.startswith("ar"):
        phi = float(kind[2:])
        s = np.empty(n)
        s[0] = e[0]
        for t in range(1, n):
            s[t] = phi * s[t - 1] + np.sqrt(1 - phi * phi) * e[t]
        return s
    if kind == "ma2":
        return e[2:] + 0.6 * e[1:-1] + 0.3 * e[:-2]
    if kind == "garch2":
        h, r = 1.0, np.empty(n)
        for t in range(n):
            r[t] = np.sqrt(h) * e[t]
            h = 0.05 + 0.1 * r[t] ** 2 + 0.85 * h
        return r * r
    if kind == "walk":
        return np.cumsum(e[2:])
    raise ValueError(kind)


KINDS = ("iid", "ar0.3", "ar0.5", "ar0.8", "ar0.95", "ma2", "garch2", "walk")


def main() -> int:
    import arch
    from arch.bootstrap import optimal_block_length

    cases = []
    for i, kind in enumerate(KINDS):
        for n in (50, 200, 1000, 5000):
            seed = 1000 + 10 * i + n % 7
            x = series(kind, n, seed)
            tab = optimal_block_length(x)
            cases.append({"kind": kind, "n": n, "seed": seed,
                          "sha256": hashlib.sha256(x.tobytes()).hexdigest(),
                          "b_sb": float(tab["stationary"].iloc[0]),
                          "b_cb": float(tab["circular"].iloc[0])})
    out = HERE / "arch_block_lengths.json"
    out.write_text(json.dumps({"arch": arch.__version__, "numpy": np.__version__,
                               "call": "arch.bootstrap.optimal_block_length(x)",
                               "cases": cases}, indent=1) + "\n")
    print(f"wrote {out} ({len(cases)} cases)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
