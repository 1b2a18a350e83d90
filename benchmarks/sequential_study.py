"""The sequential tests by betting: false alarms, detection delay, optional stopping, cost.

Sections (``--section``, each sized to run in well under 15 minutes here):

* ``null``: the fraction of i.i.d. null streams that *ever* reject within
  ``--steps`` (default 10 000) pairs, ``--streams`` (default 200) streams,
  alpha = 0.05, budget ``max_points = 100``: the two-sample test with the KME
  and the S-KMSE witness, and the independence test (KME). Ville's inequality
  bounds the fraction by alpha over an unbounded horizon; the binomial band is
  the one-sided 99% quantile of Binomial(streams, alpha).
* every section but ``cost`` also runs ``payoff_scale="adaptive"`` (the payoff over
  the running maximum of the earlier ones, clipped) beside the published payoff.
* ``delay``: stopping times (mean, median, fraction not rejected within 5000
  pairs) with alpha = 0.05 on Shekhar & Ramdas' Gaussian streams, d = 3:
  ``x ~ N(0, I)``, ``y ~ N(e_1, I)`` (unit mean shift in one coordinate),
  ``y ~ N(0, 2 I)`` (variance change) and ``y ~ N(0, R)`` with correlation
  0.7 between the first two coordinates; the witness with each estimator
  (KME, S-KMSE, B-KMSE; ONS bets) and the KME with aGRAPA bets.
* ``budget``: the mean shift with ``max_points`` = 25, 50, 100, 500: what the
  budget costs in detection delay.
* ``batch``: the batch MMD permutation test (``kmtests.two_sample_test``, 999
  permutations, median heuristic on the pooled sample) re-run on all pairs so far
  every k = 25 pairs up to 500 pairs (20 looks), with and without a Bonferroni
  correction (alpha / 20 at each look), on null streams (false alarms) and on
  the mean-shift streams (first look that rejects), beside the betting test on
  the same streams.
* ``monitor``: the DriftMonitor with a reference of 20 000 points, a mean
  shift of 0.5 in one coordinate (d = 3) from stream observation 1001: the
  delay after the change, and false alarms before it.
* ``peer``: the ``KernelMMD`` of bchugg/testing-by-betting (commit d026484, a
  checkout outside this repository, ``--peer-path``) on the same mean-shift
  streams as ``delay`` (and 50 null streams of 500 pairs), beside kmtests.
* ``cost``: CPU and wall microseconds per pair over 10^5 pairs (untraced), and
  the memory of a second, traced run (tracemalloc: the peak above the start
  and what the test holds at the end; the kept window; the pickled state),
  ``max_points`` = 100, 500, 1000 (two-sample) and 500 (independence).

Results go to ``benchmarks/results/sequential_<section>.json``; each section
prints a Markdown table. Run from the repository root, niced::

    nice -n 10 .venv/bin/python benchmarks/sequential_study.py --section null
    nice -n 10 .venv/bin/python benchmarks/sequential_study.py --section delay --streams 200
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import pickle  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import zlib  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchutil import save_json  # noqa: E402

import kmtests  # noqa: E402
from kmtests import DriftMonitor, SequentialIndependenceTest, SequentialTwoSampleTest  # noqa: E402

ALPHA = 0.05
D = 3


def rng_of(*key: Any) -> np.random.Generator:
    return np.random.default_rng([zlib.crc32(repr(key).encode())])


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


# -- streams -------------------------------------------------------------------------------
def alternative(kind: str, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(size=(n, D))
    y = rng.normal(size=(n, D))
    if kind == "null":
        pass
    elif kind == "mean shift":
        y[:, 0] += 1.0
    elif kind == "variance x2":
        y *= np.sqrt(2.0)
    elif kind == "correlation 0.7":
        r = 0.7
        y[:, 1] = r * y[:, 0] + np.sqrt(1 - r * r) * y[:, 1]
    else:
        raise ValueError(kind)
    return x, y


def run_until(test: Any, x: np.ndarray, y: np.ndarray, chunk: int = 250) -> Any:
    """Feed the stream in chunks, stop after the chunk in which the test rejected."""
    for lo in range(0, x.shape[0], chunk):
        test.update(x[lo:lo + chunk], y[lo:lo + chunk])
        if test.reject:
            break
    return test


def band(streams: int) -> float:
    return float(stats.binom.ppf(0.99, streams, ALPHA)) / streams


def table(rows: list[dict[str, Any]], cols: list[str]) -> str:
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
    return "\n".join(out)


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


# -- sections ---------------------------------------------------------------------------------
def section_null(args: argparse.Namespace) -> dict[str, Any]:
    configs = [("two-sample", "kme", "norm"), ("two-sample", "skmse", "norm"),
               ("independence", "kme", "norm"), ("two-sample", "kme", "adaptive"),
               ("independence", "kme", "adaptive")]
    if args.only:  # test:witness (norm payoffs) or test:witness:scale
        wanted = [w if w.count(":") == 2 else w + ":norm" for w in args.only.split(",")]
        configs = [c for c in configs if ":".join(c) in wanted]
    rows = []
    for kind, est, scale in configs:
        def one() -> tuple[int, list[int]]:
            hits, times = 0, []
            for s in range(args.streams):
                rng = rng_of("null", kind, s)
                x = rng.normal(size=(args.steps, D))
                y = rng.normal(size=(args.steps, D))
                test = (SequentialTwoSampleTest(alpha=ALPHA, estimator=est, max_points=100,
                                                payoff_scale=scale)
                        if kind == "two-sample" else
                        SequentialIndependenceTest(alpha=ALPHA, max_points=100,
                                                   payoff_scale=scale))
                run_until(test, x, y, chunk=1000)
                if test.reject:
                    hits += 1
                    times.append(int(test.stopping_time))
                if (s + 1) % 25 == 0:
                    print(f"  {kind} {est}: {s + 1} streams, {hits} rejected, "
                          f"CPU {time.process_time():.0f} s, {load()}", flush=True)
            return hits, times

        (hits, times), wall, cpu = timed(one)
        rows.append({"test": kind, "witness": est, "payoff": scale, "streams": args.streams,
                     "steps": args.steps,
                     "ever rejected": hits, "fraction": f"{hits / args.streams:.3f}",
                     "band (99%)": f"<= {band(args.streams):.3f}",
                     "stopping times": ", ".join(map(str, sorted(times))) or "-",
                     "wall s": f"{wall:.0f}", "CPU s": f"{cpu:.0f}", "load": load()})
        print(rows[-1], flush=True)
    print(table(rows, ["test", "witness", "payoff", "streams", "steps", "ever rejected", "fraction",
                       "band (99%)", "stopping times", "wall s", "CPU s"]))
    return {"rows": rows}


def delays(kind: str, make: Callable[[], Any], streams: int, horizon: int,
           tag: str) -> dict[str, Any]:
    st = []
    for s in range(streams):
        x, y = alternative(kind, rng_of("delay", kind, s), horizon)
        test = run_until(make(), x, y)
        st.append(test.stopping_time if test.reject else np.nan)
    a = np.array(st, dtype=float)
    ok = a[~np.isnan(a)]
    return {"alternative": kind, "witness / bets": tag, "streams": streams,
            "mean": f"{ok.mean():.0f}" if ok.size else "-",
            "median": f"{np.median(ok):.0f}" if ok.size else "-",
            "q10-q90": (f"{np.quantile(ok, 0.1):.0f}-{np.quantile(ok, 0.9):.0f}"
                        if ok.size else "-"),
            f"not rejected by {horizon}": f"{np.isnan(a).mean():.3f}"}


def section_delay(args: argparse.Namespace) -> dict[str, Any]:
    rows = []
    configs = [("kme", "ons", "norm"), ("skmse", "ons", "norm"), ("bkmse", "ons", "norm"),
               ("kme", "agrapa", "norm"), ("kme", "ons", "adaptive"),
               ("skmse", "ons", "adaptive"), ("kme", "agrapa", "adaptive")]
    if args.only:
        configs = [c for c in configs if c[2] in args.only.split(",")]
    for kind in ("mean shift", "variance x2", "correlation 0.7"):
        for est, bet, scale in configs:
            def make(est: str = est, bet: str = bet, scale: str = scale) -> Any:
                return SequentialTwoSampleTest(alpha=ALPHA, estimator=est, betting=bet,
                                               payoff_scale=scale)
            row, wall, cpu = timed(lambda: delays(kind, make, args.streams, 5000,
                                                  f"{est} / {bet} / {scale}"))
            row.update({"wall s": f"{wall:.0f}", "CPU s": f"{cpu:.0f}"})
            rows.append(row)
            print(row, load(), flush=True)
    print(table(rows, list(rows[0])))
    return {"rows": rows, "load": load()}


def section_budget(args: argparse.Namespace) -> dict[str, Any]:
    rows = []
    for kind in ("mean shift", "variance x2"):
        for m in (25, 50, 100, 500):
            def make(m: int = m) -> Any:
                return SequentialTwoSampleTest(alpha=ALPHA, max_points=m)
            row, wall, cpu = timed(lambda: delays(kind, make, args.streams, 5000,
                                                  f"kme, max_points={m}"))
            row.update({"wall s": f"{wall:.0f}", "CPU s": f"{cpu:.0f}"})
            rows.append(row)
            print(row, load(), flush=True)
    print(table(rows, list(rows[0])))
    return {"rows": rows, "load": load()}


def section_batch(args: argparse.Namespace) -> dict[str, Any]:
    k, looks = 25, 20
    horizon = k * looks
    rows = []
    for kind in ("null", "mean shift"):
        first_raw, first_bonf, betting, adaptive = [], [], [], []
        w0, c0 = time.perf_counter(), time.process_time()
        for s in range(args.streams):
            x, y = alternative(kind, rng_of("batch", kind, s), horizon)
            raw = bonf = None
            for j in range(1, looks + 1):
                n = j * k
                p = kmtests.two_sample_test(x[:n], y[:n], n_resamples=999,
                                            rng=int(zlib.crc32(f"{kind}{s}{j}".encode()))).pvalue
                if raw is None and p <= ALPHA:
                    raw = n
                if bonf is None and p <= ALPHA / looks:
                    bonf = n
                if kind != "null" and bonf is not None:
                    break
            first_raw.append(raw)
            first_bonf.append(bonf)
            test = SequentialTwoSampleTest(alpha=ALPHA).update(x, y)
            betting.append(test.stopping_time)
            test = SequentialTwoSampleTest(alpha=ALPHA, payoff_scale="adaptive").update(x, y)
            adaptive.append(test.stopping_time)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        for name, vals in (("batch MMD every 25, uncorrected", first_raw),
                           ("batch MMD every 25, Bonferroni alpha/20", first_bonf),
                           ("betting (KME, ONS)", betting),
                           ("betting (KME, ONS, adaptive payoff)", adaptive)):
            hit = np.array([v is not None for v in vals])
            t = np.array([v for v in vals if v is not None], dtype=float)
            rows.append({"streams": f"{kind} ({args.streams})", "procedure": name,
                         f"rejected within {horizon}": f"{hit.mean():.3f}",
                         "mean stopping time": f"{t.mean():.0f}" if t.size else "-",
                         "median": f"{np.median(t):.0f}" if t.size else "-",
                         "wall s (all three)": f"{wall:.0f}", "CPU s": f"{cpu:.0f}"})
        print(rows[-4:], load(), flush=True)
    print(table(rows, list(rows[0])))
    return {"rows": rows, "load": load()}


def section_monitor(args: argparse.Namespace) -> dict[str, Any]:
    change, after = 1000, 4000
    rows = []
    for est, scale in (("kme", "norm"), ("skmse", "norm"), ("kme", "adaptive")):
        delays_, early = [], 0
        w0, c0 = time.perf_counter(), time.process_time()
        for s in range(args.streams):
            rng = rng_of("monitor", s)
            ref = rng.normal(size=(20000, D))
            stream = rng.normal(size=(change + after, D))
            stream[change:, 1] += 0.5
            mon = DriftMonitor(ref, alpha=ALPHA, estimator=est, rng=s, payoff_scale=scale)
            for lo in range(0, stream.shape[0], 500):
                if mon.update(stream[lo:lo + 500]):
                    break
            if mon.alarms:
                step = mon.alarms[0].step
                if step <= change:
                    early += 1
                else:
                    delays_.append(step - change)
        d = np.array(delays_, dtype=float)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        rows.append({"witness": est, "payoff": scale, "streams": args.streams,
                     "false alarm before the change": f"{early / args.streams:.3f}",
                     "detected (of the rest)": f"{d.size / max(args.streams - early, 1):.3f}",
                     "mean delay": f"{d.mean():.0f}", "median delay": f"{np.median(d):.0f}",
                     "wall s": f"{wall:.0f}", "CPU s": f"{cpu:.0f}"})
        print(rows[-1], load(), flush=True)
    print(table(rows, list(rows[0])))
    return {"rows": rows, "load": load()}


def section_cost(args: argparse.Namespace) -> dict[str, Any]:
    n = args.cost_steps
    rows = []
    rng = rng_of("cost")
    x = rng.normal(size=(n, D))
    y = rng.normal(size=(n, D))
    for kind, m in (("two-sample", 100), ("two-sample", 500), ("two-sample", 1000),
                    ("independence", 500)):
        def make(kind: str = kind, m: int = m) -> Any:
            return (SequentialTwoSampleTest(alpha=1e-12, max_points=m) if kind == "two-sample"
                    else SequentialIndependenceTest(alpha=1e-12, max_points=m))

        test = make()
        _, wall, cpu = timed(lambda: test.update(x, y))  # timed without tracing
        traced = make()
        tracemalloc.start()  # the memory of a second run: allocations traced, not timed
        base, _ = tracemalloc.get_traced_memory()
        traced.update(x, y)
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert traced.log_wealth == test.log_wealth
        w = test._window
        rows.append({"test": kind, "max_points": m, "pairs": n,
                     "CPU us / pair": f"{cpu / n * 1e6:.0f}",
                     "wall us / pair": f"{wall / n * 1e6:.0f}",
                     "window MB": f"{w.state()['bytes'] / 2**20:.1f}",
                     "traced peak MB": f"{(peak - base) / 2**20:.1f}",
                     "held after MB": f"{(current - base) / 2**20:.1f}",
                     "pickled state MB": f"{len(pickle.dumps(test)) / 2**20:.1f}",
                     "load": load()})
        print(rows[-1], flush=True)
    print(table(rows, list(rows[0])))
    return {"rows": rows}


def section_peer(args: argparse.Namespace) -> dict[str, Any]:
    """The KernelMMD of bchugg/testing-by-betting (the README with the "150-200 samples")
    on the delay section's mean-shift streams; a checkout outside the repository is put on
    the path (``--peer-path``), none of its code is kept here."""
    sys.path.insert(0, args.peer_path)
    from testing_by_betting.twosample import KernelMMD  # type: ignore[import-not-found]

    rows = []
    for kind, horizon in (("mean shift", 2000), ("null", 500)):
        peer, ours = [], []
        w0, c0 = time.perf_counter(), time.process_time()
        n_streams = args.streams if kind != "null" else min(args.streams, 50)
        for s in range(n_streams):
            x, y = alternative(kind, rng_of("delay", kind, s), horizon)
            bettor = KernelMMD(alpha=ALPHA, verbose=False)
            t_peer = None
            for t in range(horizon):
                bettor.step(x[t], y[t])
                if bettor.reject_null:
                    t_peer = t + 1
                    break
            peer.append(t_peer)
            test = SequentialTwoSampleTest(alpha=ALPHA).update(x, y)
            ours.append(test.stopping_time)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        for name, vals in (("testing-by-betting KernelMMD", peer), ("kmtests (KME, ONS)", ours)):
            t = np.array([v for v in vals if v is not None], dtype=float)
            rows.append({"streams": f"{kind} ({n_streams} of {horizon} pairs)", "test": name,
                         "rejected": f"{t.size / n_streams:.3f}",
                         "mean": f"{t.mean():.0f}" if t.size else "-",
                         "median": f"{np.median(t):.0f}" if t.size else "-",
                         "wall s (both)": f"{wall:.0f}", "CPU s": f"{cpu:.0f}"})
        print(rows[-2:], load(), flush=True)
    print(table(rows, list(rows[0])))
    return {"rows": rows, "load": load()}


SECTIONS = {"peer": section_peer, "null": section_null, "delay": section_delay, "budget": section_budget,
            "batch": section_batch, "monitor": section_monitor, "cost": section_cost}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--section", required=True, choices=sorted(SECTIONS))
    p.add_argument("--streams", type=int, default=200)
    p.add_argument("--steps", type=int, default=10_000)
    p.add_argument("--cost-steps", type=int, default=100_000)
    p.add_argument("--only", default=None, help="null: comma-separated test:witness")
    p.add_argument("--peer-path", default="/tmp/tbb",
                   help="peer: a checkout of bchugg/testing-by-betting")
    args = p.parse_args()
    print(f"kmtests {kmtests.__version__}, numpy {np.__version__}, {load()}", flush=True)
    w0, c0 = time.perf_counter(), time.process_time()
    out = SECTIONS[args.section](args)
    out.update({"args": vars(args), "wall_s": time.perf_counter() - w0,
                "cpu_s": time.process_time() - c0, "load_end": load()})
    tag = args.section + (f"_{args.only.replace(':', '-').replace(',', '_')}" if args.only
                          else "")
    save_json(f"sequential_{tag}.json", out)
    print(f"total wall {out['wall_s']:.0f} s, CPU {out['cpu_s']:.0f} s, {load()}")


if __name__ == "__main__":
    main()
