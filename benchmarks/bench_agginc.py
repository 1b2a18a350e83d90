"""MMDAggInc and HSICAggInc: kmtests against kerneltests' agginc, time and power.

kmtests: ``two_sample_test(x, y, statistic="mmdagginc", n_resamples=999)`` /
``independence_test(x, y, statistic="hsicagginc", n_resamples=999)`` (R = 200
superdiagonals, 999 Rademacher swaps, min-p with its exact level correction; MMD: 10
bandwidths from the pooled distances, HSIC: 5 x 5 bandwidths 2^l h, l = -2..2) with
``n_jobs=1`` and one BLAS thread (threadpoolctl).

kerneltests 0.0.1 (``kt.agginc.agginc("mmd" | "hsic", X, Y)`` at its defaults: R = 200,
B1 = B2 = 500 wild-bootstrap draws, B3 = 50 bisection steps, its own bandwidth
collections) runs in its own environment (``--peers-python``, default
``/work/peers-venv/bin/python``; that environment's kmtests is an old checkout, so it is
never imported there) in a separate process on the same data, passed as ``.npz``; the
worker times its own call (wall and CPU seconds of that process) with
``OPENBLAS_NUM_THREADS=1`` (and the OMP/MKL equivalents).

Modes:

* ``time``: N = 1 000 - 20 000 (per sample for MMD; the number of pairs of
  observations for HSIC, i.e. n = 2N), x, y ~ N(0, I_d) for MMD, independent for HSIC.
  Best of `--repeats` (one call above N = 5 000) after a warm-up, idle and with one busy
  core, with the load average.
* ``power``: rejections at alpha = 0.05 over `--sets` data sets of each size, kmtests and
  kerneltests on the same data. MMD: x ~ N(0, I_2), y ~ N((delta, 0), I_2); HSIC:
  y = sin(2 x_1) + noise. The same draws under the null (delta = 0, independent y) give
  the level (``--null``; kmtests' level is in ``tests/test_agginc.py``).

Run::

    .venv/bin/python benchmarks/bench_agginc.py time --n 1000,2000,5000,10000,20000
    .venv/bin/python benchmarks/bench_agginc.py power --n 1000,4000 --sets 100
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
PEERS = "/work/peers-venv/bin/python"
ONE_THREAD = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                               "MKL_NUM_THREADS")}

#: the worker run in kerneltests' environment: it reads the data sets of an .npz and
#: writes each call's decision, wall and CPU seconds (no kmtests import there)
WORKER = r"""
import json, sys, time
import numpy as np
from kt.agginc import agginc
kind, path, out, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
data = np.load(path)
rows = []
for k in range(len(data.files) // 2):
    X, Y = data[f"x{k}"], data[f"y{k}"]
    if repeats > 1:
        agginc(kind, X, Y)
    best = (float("inf"), float("inf"))
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        dec = agginc(kind, X, Y)
        best = min(best, (time.perf_counter() - t0, time.process_time() - c0))
    rows.append({"decision": int(dec), "seconds": best[0], "cpu": best[1]})
json.dump(rows, open(out, "w"))
"""


def kerneltests(kind: str, sets: list[tuple[np.ndarray, np.ndarray]], repeats: int,
                python: str) -> list[dict[str, Any]]:
    """kerneltests' agginc on each data set, in its own process (one BLAS thread)."""
    with tempfile.TemporaryDirectory() as tmp:
        path, out = Path(tmp) / "data.npz", Path(tmp) / "out.json"
        np.savez(path, **{f"{v}{k}": a for k, (x, y) in enumerate(sets)
                          for v, a in (("x", x), ("y", y))})
        script = Path(tmp) / "worker.py"
        script.write_text(WORKER)
        subprocess.run([python, str(script), kind, str(path), str(out), str(repeats)],
                       check=True, env={**os.environ, **ONE_THREAD}, cwd=tmp)
        rows: list[dict[str, Any]] = json.loads(out.read_text())
        return rows


def kmtests_run(kind: str, x: np.ndarray, y: np.ndarray, seed: int) -> float:
    import kmtests

    face, name = ((kmtests.two_sample_test, "mmdagginc") if kind == "mmd"
                  else (kmtests.independence_test, "hsicagginc"))
    return float(face(x, y, statistic=name, n_resamples=999, rng=seed, n_jobs=1).pvalue)


def data(kind: str, N: int, gen: np.random.Generator, effect: float, d: int
         ) -> tuple[np.ndarray, np.ndarray]:
    if kind == "mmd":
        x, y = gen.normal(size=(N, d)), gen.normal(size=(N, d))
        y[:, 0] += effect
        return x, y
    x = gen.normal(size=(2 * N, d))
    return x, effect * np.sin(2 * x[:, :1]) + gen.normal(size=(2 * N, 1))


def time_mode(args: argparse.Namespace) -> list[dict[str, Any]]:
    from _benchutil import machine_state
    from threadpoolctl import threadpool_limits

    rows = []
    for state in args.states.split(","):
        with machine_state(state), threadpool_limits(1):
            for kind in args.kinds.split(","):
                for N in (int(v) for v in args.n.split(",")):
                    gen = np.random.default_rng(N)
                    x, y = data(kind, N, gen, 0.0, args.d)
                    reps = args.repeats if N <= 5000 else 1
                    load0 = os.getloadavg()[0]
                    kmtests_run(kind, x, y, 0)  # warm-up
                    best = (float("inf"), float("inf"))
                    for _ in range(reps):
                        t0, c0 = time.perf_counter(), time.process_time()
                        kmtests_run(kind, x, y, 0)
                        best = min(best, (time.perf_counter() - t0,
                                          time.process_time() - c0))
                    kt = kerneltests(kind, [(x, y)], reps if N <= 5000 else 1,
                                     args.peers_python)[0]
                    load = (load0 + os.getloadavg()[0]) / 2
                    rows.append({"mode": "time", "state": state, "kind": kind, "N": N,
                                 "kmtests_s": best[0], "kmtests_cpu": best[1],
                                 "kt_s": kt["seconds"], "kt_cpu": kt["cpu"],
                                 "ratio_wall": kt["seconds"] / best[0], "load": load})
                    print(json.dumps(rows[-1]), flush=True)
    return rows


def power_mode(args: argparse.Namespace) -> list[dict[str, Any]]:
    from threadpoolctl import threadpool_limits

    effects = {"mmd": (args.delta,), "hsic": (args.dep,)}
    if args.null:
        effects = {k: (0.0,) + v for k, v in effects.items()}
    rows = []
    with threadpool_limits(1):
        for kind in args.kinds.split(","):
            for N in (int(v) for v in args.n.split(",")):
                for effect in effects[kind]:
                    e = effect * (1000 / N) ** 0.5 if effect else 0.0  # power mid-range
                    gen = np.random.default_rng(100 + N)
                    sets = [data(kind, N, gen, e, args.d) for _ in range(args.sets)]
                    t0, c0 = time.perf_counter(), time.process_time()
                    km = [kmtests_run(kind, x, y, s) <= 0.05 for s, (x, y) in enumerate(sets)]
                    km_t, km_c = time.perf_counter() - t0, time.process_time() - c0
                    kt = kerneltests(kind, sets, 1, args.peers_python)
                    ktd = [r["decision"] == 1 for r in kt]
                    both = sum(a and b for a, b in zip(km, ktd))
                    rows.append({"mode": "power", "kind": kind, "N": N, "effect": e,
                                 "sets": args.sets, "kmtests_rejections": int(sum(km)),
                                 "kt_rejections": int(sum(ktd)), "both": both,
                                 "kmtests_s": km_t / args.sets, "kmtests_cpu": km_c / args.sets,
                                 "kt_s": float(np.mean([r["seconds"] for r in kt])),
                                 "kt_cpu": float(np.mean([r["cpu"] for r in kt])),
                                 "load": os.getloadavg()[0]})
                    print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=("time", "power"))
    ap.add_argument("--kinds", default="mmd,hsic")
    ap.add_argument("--n", default="1000,2000,5000,10000,20000")
    ap.add_argument("--d", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--states", default="quiet,busy")
    ap.add_argument("--sets", type=int, default=100)
    ap.add_argument("--delta", type=float, default=0.12)
    ap.add_argument("--dep", type=float, default=0.12)
    ap.add_argument("--null", action="store_true", help="also the null (effect 0)")
    ap.add_argument("--peers-python", default=PEERS)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    rows = time_mode(args) if args.mode == "time" else power_mode(args)
    out = Path(args.out or HERE / "results" / f"bench_agginc_{args.mode}.json")
    out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    raise SystemExit(main())
