"""Issue 31 goal 7: the low-rank tests on dask arrays past one machine's memory.

Runs ``two_sample_test`` / ``independence_test`` with ``engine="dask-rff"`` on a
``LocalCluster`` (``--workers`` processes x 1 thread, ``--memory-limit`` each), the data
generated chunk by chunk on the workers (``dask.array.random``, seeded), and records wall
seconds, the CPU seconds of the client and of every worker process (psutil over their
pids), the peak resident memory of each worker (sampled every 0.2 s), and the machine
load (``os.getloadavg``) before and after.

    nice -n 10 python benchmarks/bench_dask.py mmd --n 10000000 --d 5 --r 200 --B 199
    nice -n 10 python benchmarks/bench_dask.py hsic --n 10000000 --d 5 --r 100
    python benchmarks/bench_dask.py repro --n 200000      # p-value vs worker counts

Each run appends one JSON line to ``benchmarks/results/bench_dask.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "bench_dask.jsonl"


class Sampler:
    """CPU seconds and peak RSS of a set of processes (the workers), sampled in a thread."""

    def __init__(self, pids: list[int]) -> None:
        import psutil

        self.procs = [psutil.Process(p) for p in pids]
        self.peak = {p.pid: 0 for p in self.procs}
        self.cpu0 = {p.pid: sum(p.cpu_times()[:2]) for p in self.procs}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for p in self.procs:
                try:
                    self.peak[p.pid] = max(self.peak[p.pid], p.memory_info().rss)
                except Exception:  # a worker restarted
                    pass
            time.sleep(0.2)

    def __enter__(self) -> "Sampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.cpu = {p.pid: sum(p.cpu_times()[:2]) - self.cpu0[p.pid] for p in self.procs}


def timed(fn: Callable[[], Any], pids: list[int]) -> tuple[Any, dict[str, Any]]:
    load0 = os.getloadavg()
    c0, t0 = time.process_time(), time.perf_counter()
    with Sampler(pids) as s:
        out = fn()
    wall = time.perf_counter() - t0
    client_cpu = time.process_time() - c0
    return out, {"wall_s": round(wall, 2), "client_cpu_s": round(client_cpu, 2),
                 "worker_cpu_s": [round(v, 2) for v in s.cpu.values()],
                 "cpu_s_total": round(client_cpu + sum(s.cpu.values()), 2),
                 "worker_peak_rss_mb": [round(v / 2**20) for v in s.peak.values()],
                 "load_before": [round(v, 2) for v in load0],
                 "load_after": [round(v, 2) for v in os.getloadavg()]}


def cluster(workers: int, memory_limit: str) -> Any:
    from dask.distributed import Client, LocalCluster

    lc = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      memory_limit=memory_limit, dashboard_address=None)
    client = Client(lc)
    pids = [int(v) for v in client.run(os.getpid).values()]
    return lc, client, pids


def data(n: int, d: int, chunk_rows: int, shift: float, kind: str) -> tuple[Any, Any]:
    """Chunks generated where they are computed (seeded, never on the client)."""
    import dask.array as da

    x = da.random.default_rng(1).normal(size=(n, d), chunks=(chunk_rows, d))
    if kind == "mmd":
        y = da.random.default_rng(2).normal(size=(n, d), chunks=(chunk_rows, d)) + shift
    else:  # y depends on x's first column by `shift`
        y = (da.random.default_rng(2).normal(size=(n, d), chunks=(chunk_rows, d))
             + shift * x[:, :1] ** 2)
    return x, y


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["mmd", "hsic", "repro"])
    ap.add_argument("--n", type=int, default=10**6, help="rows of each sample / of the pairs")
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--r", type=int, default=200)
    ap.add_argument("--B", type=int, default=199)
    ap.add_argument("--shift", type=float, default=0.0)
    ap.add_argument("--chunk-rows", type=int, default=16384)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="400MB")
    ap.add_argument("--bandwidth", default="median")
    a = ap.parse_args()

    from kmtests import independence_test, two_sample_test
    from kmtests.scaleout import DaskRFF

    bw: Any = a.bandwidth if a.bandwidth == "median" else float(a.bandwidth)
    eng = DaskRFF(n_features=a.r, chunk_rows=a.chunk_rows)
    rows = []
    if a.what == "repro":
        x, y = data(a.n, a.d, a.chunk_rows, a.shift, "mmd")
        for w in (1, 2, 3):
            lc, client, pids = cluster(w, a.memory_limit)
            res, t = timed(lambda: two_sample_test(x, y, engine=eng, bandwidth=bw,
                                                   n_resamples=a.B, rng=7), pids)
            client.close()
            lc.close()
            rows.append({"what": "repro", "workers": w, "n": a.n, "d": a.d, "r": a.r,
                         "B": a.B, "statistic": res.statistic, "pvalue": res.pvalue,
                         "null_sum": float(np.sum(res.null_distribution)), **t})
            print(rows[-1], flush=True)
    else:
        lc, client, pids = cluster(a.workers, a.memory_limit)
        x, y = data(a.n, a.d, a.chunk_rows, a.shift, a.what)
        face = two_sample_test if a.what == "mmd" else independence_test
        kw = ({"bandwidth": bw} if a.what == "mmd"
              else {"bandwidth_x": bw, "bandwidth_y": bw})
        res, t = timed(lambda: face(x, y, engine=eng, n_resamples=a.B, rng=7, **kw), pids)
        client.close()
        lc.close()
        rows.append({"what": a.what, "workers": a.workers, "memory_limit": a.memory_limit,
                     "n": a.n, "d": a.d, "r": a.r, "B": a.B, "shift": a.shift,
                     "chunk_rows": a.chunk_rows, "data_gb": round(2 * a.n * a.d * 8 / 1e9, 2),
                     "statistic": res.statistic, "pvalue": res.pvalue, **t})
        print(rows[-1], flush=True)
    OUT.parent.mkdir(exist_ok=True)
    with OUT.open("a") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
