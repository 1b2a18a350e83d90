"""alibi-detect's MMDDriftOnline beside kmtests' DriftMonitor on the same streams.

alibi-detect needs numpy < 2 and numba < 0.60, so it cannot live in the
kmtests environment (numpy 2); this script runs in a separate venv::

    python3 -m venv /tmp/alibi-venv
    /tmp/alibi-venv/bin/pip install "torch==2.13.0" "alibi-detect[torch]==0.13.0"
    nice -n 10 /tmp/alibi-venv/bin/python benchmarks/sequential_alibi.py --part alibi
    nice -n 10 .venv/bin/python benchmarks/sequential_alibi.py --part kmtests

Both parts draw the same streams (numpy's PCG64 normal draws are the same in
numpy 1.26 and 2.x; each part prints a checksum of the data to confirm it):
a reference of 2000 points N(0, I_3); null streams N(0, I_3) of 10 000
observations; mean-shift streams ``N(e_1, I_3)`` (unit shift in one
coordinate) from the first observation. alibi: ``MMDDriftOnline(ref,
ert=ERT, window_size=20, backend="pytorch", n_bootstraps=10 * ERT)`` (its
docs ask for many more bootstrap simulations than the ERT), the median
heuristic it applies by default, one ``predict`` per observation, one torch
thread. kmtests: ``DriftMonitor(ref, alpha=0.05)``; its false alarms over 10 000
steps are measured by ``sequential_study.py --section null`` (a reference of
2000 watches 2000 observations only).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import zlib  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
D, N_REF, STEPS = 3, 2000, 10_000


def rng_of(*key: Any) -> np.random.Generator:
    return np.random.default_rng([zlib.crc32(repr(key).encode())])


def reference() -> np.ndarray:
    return rng_of("alibi", "ref").normal(size=(N_REF, D))


def null_stream(s: int) -> np.ndarray:
    return rng_of("alibi", "null", s).normal(size=(STEPS, D))


def shift_stream(s: int) -> np.ndarray:
    y = rng_of("alibi", "shift", s).normal(size=(N_REF, D))
    y[:, 0] += 1.0
    return y


def checksum() -> str:
    return f"{reference().sum():.10f} {null_stream(0).sum():.10f} {shift_stream(0).sum():.10f}"


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def summary(times: list[float | None], horizon: int) -> dict[str, Any]:
    hit = [t for t in times if t is not None]
    return {"streams": len(times), f"alarm within {horizon}": len(hit) / len(times),
            "mean": float(np.mean(hit)) if hit else None,
            "median": float(np.median(hit)) if hit else None}


def part_alibi(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    from alibi_detect.cd import MMDDriftOnline

    torch.set_num_threads(1)
    ref = reference().astype(np.float32)
    w0, c0 = time.perf_counter(), time.process_time()
    cd = MMDDriftOnline(ref, ert=args.ert, window_size=20, backend="pytorch",
                        n_bootstraps=10 * args.ert, verbose=False)
    config = {"wall_s": time.perf_counter() - w0, "cpu_s": time.process_time() - c0}
    print("configured", config, load(), flush=True)

    def run(stream: np.ndarray) -> tuple[int | None, int]:
        cd.reset_state()
        for i, row in enumerate(stream.astype(np.float32)):
            if cd.predict(row)["data"]["is_drift"]:
                return i + 1, i + 1
        return None, stream.shape[0]

    out: dict[str, Any] = {"config": config, "ert": args.ert, "window_size": 20,
                           "n_bootstraps": 10 * args.ert}
    for name, make in (("null", null_stream), ("mean shift", shift_stream)):
        w0, c0 = time.perf_counter(), time.process_time()
        times, steps = [], 0
        for s in range(args.streams):
            t, n = run(make(s))
            times.append(t)
            steps += n
        cpu = time.process_time() - c0
        out[name] = {**summary(times, STEPS if name == "null" else N_REF), "times": times,
                     "wall_s": time.perf_counter() - w0, "cpu_s": cpu,
                     "cpu_ms_per_step": 1e3 * cpu / steps, "load": load()}
        print(name, {k: v for k, v in out[name].items() if k != "times"}, flush=True)
    return out


def part_kmtests(args: argparse.Namespace) -> dict[str, Any]:
    from kmtests import DriftMonitor

    ref = reference()
    w0, c0 = time.perf_counter(), time.process_time()
    times, steps = [], 0
    for s in range(args.streams):
        mon = DriftMonitor(ref, alpha=0.05, rng=s)
        y = shift_stream(s)
        for lo in range(0, y.shape[0], 100):
            if mon.update(y[lo:lo + 100]):
                break
        times.append(mon.alarms[0].step if mon.alarms else None)
        steps += mon.n_seen
    cpu = time.process_time() - c0
    out = {"mean shift": {**summary(times, N_REF), "times": times,
                          "wall_s": time.perf_counter() - w0, "cpu_s": cpu,
                          "cpu_ms_per_step": 1e3 * cpu / steps, "load": load()}}
    print({k: v for k, v in out["mean shift"].items() if k != "times"})
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--part", required=True, choices=["alibi", "kmtests"])
    p.add_argument("--streams", type=int, default=100)
    p.add_argument("--ert", type=int, default=2000)
    args = p.parse_args()
    print("checksum", checksum(), "numpy", np.__version__, load(), flush=True)
    out = (part_alibi if args.part == "alibi" else part_kmtests)(args)
    out.update({"checksum": checksum(), "numpy": np.__version__, "args": vars(args)})
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"sequential_alibi_{args.part}.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
