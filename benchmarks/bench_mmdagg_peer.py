"""MMDAgg against the authors' numpy MMDAgg, side by side in one process, idle and busy.

kmtests: ``aggregated_two_sample_test(x, y, n_resamples=B)`` (10 Gaussian bandwidths,
min-p over the members with its exact permutation level, one permutation stream).
Authors (Schrab et al., 2023, ``mmdagg/np.py`` of antoninschrab/mmdagg, imported from
a checkout given with ``--mmdagg``; nothing of it is committed): ``mmdagg(x, y,
kernel="gaussian", number_bandwidths=10, B1=B, B2=B)``, with its wild bootstrap
(equal sample sizes, its default) and with ``permutations_same_sample_size=True``.
Both use B = 2000 (the authors draw B1 + B2 + 1 statistics a kernel: the second B for
their level correction; kmtests' min-p level is exact with one stream).

Data: x, y ~ N(0, I_10), n points each. States: ``quiet`` and ``busy`` (one other
process spinning on one core). Wall seconds, best of `--repeats` after a warm-up
(one call above n = 1000). Each contender with its library's default threads.

Run::

    git --git-dir=/work/.mirror/antoninschrab+mmdagg/repo archive HEAD | tar -x -C /tmp/mmdagg
    .venv/bin/python benchmarks/bench_mmdagg_peer.py --mmdagg /tmp/mmdagg
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent



def contenders(path: str, B: int, n: int) -> dict[str, Callable[[Any, Any], Any]]:
    import importlib.util

    # mmdagg/__init__.py imports the JAX version; the numpy one is loaded on its own
    spec = importlib.util.spec_from_file_location("mmdagg_np", Path(path) / "mmdagg" / "np.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    mmdagg = module.mmdagg

    import kmtests

    out: dict[str, Callable[[Any, Any], Any]] = {
        "kmtests MMDAgg (permutations)": lambda x, y: kmtests.aggregated_two_sample_test(
            x, y, n_resamples=B, rng=0).pvalue,
        "authors wild bootstrap": lambda x, y: mmdagg(
            x, y, kernel="gaussian", number_bandwidths=10, B1=B, B2=B),
    }
    if n <= 1000:
        out["authors permutations"] = lambda x, y: mmdagg(
            x, y, kernel="gaussian", number_bandwidths=10, B1=B, B2=B,
            permutations_same_sample_size=True)
    return out


def run(path: str, ns: list[int], B: int, repeats: int, states: list[str]) -> pd.DataFrame:
    from _benchutil import machine_state

    rows = []
    for state in states:
        with machine_state(state):
            for n in ns:
                g = np.random.default_rng(n)
                x, y = g.normal(size=(n, 10)), g.normal(size=(n, 10))
                for name, fn in contenders(path, B, n).items():
                    fn(x, y)
                    reps = repeats if n <= 1000 else 1
                    times = []
                    for _ in range(reps):
                        t0 = time.perf_counter()
                        fn(x, y)
                        times.append(time.perf_counter() - t0)
                    rows.append({"state": state, "n": n, "test": name,
                                 "seconds": float(min(times)), "repeats": reps})
                    print(f"{state:5s} n={n:5d} {name:32s} {min(times):8.3f} s", flush=True)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mmdagg", required=True, help="checkout of antoninschrab/mmdagg")
    ap.add_argument("--n", default="200,500,1000,2000")
    ap.add_argument("--B", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--states", default="quiet,busy")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_mmdagg_peer.csv"))
    args = ap.parse_args(argv)
    tab = run(args.mmdagg, [int(v) for v in args.n.split(",")], args.B, args.repeats,
              args.states.split(","))
    tab.to_csv(args.out, index=False, float_format="%.4g")
    for state, g in tab.groupby("state", sort=False):
        piv = g.pivot(index="n", columns="test", values="seconds")
        piv["wild / kmtests"] = (piv["authors wild bootstrap"]
                                 / piv["kmtests MMDAgg (permutations)"])
        print(f"\n{state}:\n{piv.round(3).to_string()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
