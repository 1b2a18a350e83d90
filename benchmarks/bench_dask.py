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
    python benchmarks/bench_dask.py pc --n 500 --seed 1   # PC: the tests of a depth in parallel
    python benchmarks/bench_dask.py level --reps 400      # level of both nulls under H0
    python benchmarks/bench_dask.py local --n 500000      # one process: rff vs dask-rff

``level``: rejection rates at 1%, 5% and 10% under H0 with their 99% binomial bands,
on the synchronous scheduler: the chunkwise permutation null (two samples of 300 in
5 chunks of 128 rows, ``n_resamples=99``) and the chi-square null of ``HSIC_b``
(N = 2000 and 500 pairs, x normal in 2-D, y Student t_4, ``n_resamples=199``); r = 20.

``pc``: PC on ``benchmarks/pc_discovery.py``'s data (9 variables), causal-learn's
sequential ``pc`` with the kmtests test against :func:`kmtests.causal.pc` with
``n_jobs`` = 1 and 2 (loky worker processes, warmed up on other data first), BLAS on one
thread everywhere; CPU seconds of this process plus its worker processes.

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
                      memory_limit=memory_limit, dashboard_address=":0")
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


def _cpu_with_children() -> float:
    import psutil

    me = psutil.Process()
    total = sum(me.cpu_times()[:2])
    for ch in me.children(recursive=True):
        try:
            total += sum(ch.cpu_times()[:2])
        except Exception:
            pass
    return total


def bench_local(n: int, d: int, r: int, B: int, chunk_rows: int, shift: float
                ) -> list[dict[str, Any]]:
    """One process, BLAS on one thread: engine='rff' on the data in memory against
    engine='dask-rff' on the synchronous scheduler (the same data)."""
    import dask
    from threadpoolctl import threadpool_limits

    from kmtests import two_sample_test
    from kmtests.scaleout import DaskRFF

    x, y = data(n, d, chunk_rows, shift, "mmd")
    xn, yn = x.compute(), y.compute()
    out = []

    def run(label: str, fn: Callable[[], Any]) -> None:
        load0 = os.getloadavg()
        c, t = time.process_time(), time.perf_counter()
        res = fn()
        out.append({"what": "local", "run": label, "n": n, "d": d, "r": r, "B": B,
                    "wall_s": round(time.perf_counter() - t, 1),
                    "cpu_s_total": round(time.process_time() - c, 1),
                    "statistic": res.statistic, "pvalue": res.pvalue,
                    "load_before": [round(v, 2) for v in load0],
                    "load_after": [round(v, 2) for v in os.getloadavg()]})
        print(out[-1], flush=True)

    with threadpool_limits(1):
        run("engine='rff' in memory", lambda: two_sample_test(
            xn, yn, engine="rff", n_features=r, n_resamples=B, rng=7, n_jobs=1))
        with dask.config.set(scheduler="synchronous"):
            run("engine='dask-rff' synchronous", lambda: two_sample_test(
                x, y, engine=DaskRFF(n_features=r, chunk_rows=chunk_rows), n_resamples=B,
                rng=7))
    return out


def bench_level(reps: int) -> list[dict[str, Any]]:
    import dask
    from scipy import stats

    from kmtests import independence_test, two_sample_test
    from kmtests.scaleout import DaskNystrom, DaskRFF

    def rates(p: np.ndarray, label: str, t: float) -> dict[str, Any]:
        row: dict[str, Any] = {"what": "level", "null": label, "reps": reps,
                               "seconds": round(t, 1)}
        for alpha in (0.01, 0.05, 0.10):
            lo, hi = stats.binom.interval(0.99, reps, alpha)
            row[f"reject_{alpha}"] = round(float(np.mean(p <= alpha)), 4)
            row[f"band99_{alpha}"] = [lo / reps, hi / reps]
        print(row, flush=True)
        return row

    out = []
    with dask.config.set(scheduler="synchronous"):
        t0 = time.perf_counter()
        eng = DaskRFF(n_features=20, chunk_rows=128)
        pv = [two_sample_test(*np.split(np.random.default_rng(10**6 + k).normal(size=(600, 2)),
                                        2), engine=eng, n_resamples=99, rng=k).pvalue
              for k in range(reps)]
        out.append(rates(np.array(pv), "mmd chunkwise permutation, N=600, 5 chunks",
                         time.perf_counter() - t0))
        t0 = time.perf_counter()  # many small data sets: p-values uniform on {1/20, ...}
        eng = DaskRFF(n_features=10, chunk_rows=32)
        pv = []
        for k in range(3000):
            g = np.random.default_rng(7 * 10**6 + k)
            pv.append(two_sample_test(g.normal(size=(50, 1)), g.normal(size=(50, 1)),
                                      engine=eng, n_resamples=19, rng=k).pvalue)
        row = {"what": "level", "null": "mmd chunkwise permutation, N=100, 4 chunks, B=19",
               "reps": 3000, "seconds": round(time.perf_counter() - t0, 1)}
        for alpha in (0.05, 0.10, 0.25, 0.50):
            c = int(np.sum(np.array(pv) <= alpha + 1e-12))
            row[f"reject_{alpha}"] = c / 3000
            row[f"binom_p_{alpha}"] = float(stats.binomtest(c, 3000, alpha).pvalue)
        print(row, flush=True)
        out.append(row)
        t0 = time.perf_counter()
        eng = DaskNystrom(n_features=20, chunk_rows=128)
        pv = [two_sample_test(*np.split(np.random.default_rng(3 * 10**6 + k).normal(
            size=(600, 2)), 2), engine=eng, n_resamples=99, rng=k).pvalue for k in range(reps)]
        out.append(rates(np.array(pv), "mmd dask-nystrom chunkwise permutation, N=600",
                         time.perf_counter() - t0))
        for n in (2000, 500):
            t0 = time.perf_counter()
            eng = DaskRFF(n_features=20, chunk_rows=512)
            pv = []
            for k in range(reps):
                g = np.random.default_rng(2 * 10**6 + k)
                pv.append(independence_test(g.normal(size=(n, 2)), g.standard_t(4, size=(n, 1)),
                                            engine=eng, n_resamples=199, rng=k).pvalue)
            out.append(rates(np.array(pv), f"hsic chi2, N={n}", time.perf_counter() - t0))
    return out


def bench_pc(n: int, seed: int) -> list[dict[str, Any]]:
    import sys

    from threadpoolctl import threadpool_limits

    sys.path.insert(0, str(HERE))
    from pc_discovery import simulate  # noqa: E402

    from causallearn.search.ConstraintBased.PC import pc as causallearn_pc
    from kmtests.causal import pc, register_causallearn
    from kmtests.estimators.conditional import clear_cache

    data = simulate(n, seed).to_numpy()
    out = []

    def one(label: str, fn: Callable[[], Any]) -> Any:
        clear_cache()
        load0 = os.getloadavg()
        c0, t0 = _cpu_with_children(), time.perf_counter()
        cg = fn()
        wall, cpu = time.perf_counter() - t0, _cpu_with_children() - c0
        pv = {k: v for k, v in cg.test.pvalue_cache.items()
              if k not in ("data_hash", "method_name", "parameters_hash")}
        out.append({"what": "pc", "run": label, "n": n, "seed": seed, "wall_s": round(wall, 2),
                    "cpu_s_total": round(cpu, 2), "questions": len(pv),
                    "tests_in_causallearn": int(cg.test.n_tests),
                    "load_before": [round(v, 2) for v in load0],
                    "load_after": [round(v, 2) for v in os.getloadavg()]})
        print(out[-1], flush=True)
        return cg, pv

    with threadpool_limits(1):
        ref, ref_p = one("causal-learn pc, sequential",
                         lambda: causallearn_pc(data, 0.05, register_causallearn(),
                                                show_progress=False))
        cg1, p1 = one("kmtests.causal.pc n_jobs=1", lambda: pc(data, 0.05, n_jobs=1))
    pc(simulate(100, seed + 100).to_numpy(), 0.05, n_jobs=2)  # start and warm the workers
    cg2, p2 = one("kmtests.causal.pc n_jobs=2", lambda: pc(data, 0.05, n_jobs=2))
    for row, cg, pv in ((out[1], cg1, p1), (out[2], cg2, p2)):
        row["same_graph"] = bool(np.array_equal(cg.G.graph, ref.G.graph))
        row["same_pvalues"] = all(pv[k] == v for k, v in ref_p.items())
        row["extra_questions"] = len(set(pv) - set(ref_p))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["mmd", "hsic", "repro", "pc", "level", "local"])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--n", type=int, default=10**6, help="rows of each sample / of the pairs")
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--r", type=int, default=200)
    ap.add_argument("--B", type=int, default=199)
    ap.add_argument("--shift", type=float, default=0.0)
    ap.add_argument("--chunk-rows", type=int, default=16384)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="400MB")
    ap.add_argument("--bandwidth", default="median")
    ap.add_argument("--engine", default="dask-rff", choices=["dask-rff", "dask-nystrom"])
    a = ap.parse_args()

    from kmtests import independence_test, two_sample_test
    from kmtests.scaleout import DASK_ENGINES

    bw: Any = a.bandwidth if a.bandwidth == "median" else float(a.bandwidth)
    eng = DASK_ENGINES[a.engine](n_features=a.r, chunk_rows=a.chunk_rows)
    rows = []
    if a.what == "local":
        rows = bench_local(a.n, a.d, a.r, a.B, a.chunk_rows, a.shift or 0.01)
    elif a.what == "level":
        rows = bench_level(a.reps)
    elif a.what == "pc":
        rows = bench_pc(a.n, a.seed)
    elif a.what == "repro":
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
        rows.append({"what": a.what, "engine": a.engine, "workers": a.workers,
                     "memory_limit": a.memory_limit,
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
