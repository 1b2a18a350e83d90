"""Cold-start cost: importing the package and the first (JIT-compiling) call.

Run from the repository root::

    .venv/bin/python benchmarks/bench_cold_start.py          # ~2-3 min (hyppo compiles ~45 s)
    .venv/bin/python benchmarks/bench_cold_start.py --no-hyppo

Every measurement is a fresh Python subprocess. numba's on-disk cache is pointed
at a temporary directory with ``NUMBA_CACHE_DIR``:

* cold  : a new, empty directory (everything jitted is compiled in that process);
* warm  : the directory a previous cold run filled (compiled code is loaded).

The child reports, with ``time.perf_counter``:

* ``import``      : ``import kmtests`` (resp. ``from hyppo.independence import Hsic``);
  kmtests' public names load on first use (PEP 562), so this is the package alone;
* ``faces``       : kmtests only: the first use of ``kmtests.independence_test`` (the
  faces, the plan, the statistics, engines and null methods);
* ``jit import``  : kmtests only: ``import kmtests.engines._jit_hsic`` (numba and the module
  of the jitted kernel, which ``import kmtests`` defers to the first HSIC call);
  timed separately so that the first call below is compile/cache-load + run;
* ``first call``  : the first ``kmtests.independence_test(x, y, n_resamples=B)``
  (resp. ``Hsic().test(x, y, reps=B, workers=1, auto=False)``), compile included;
* ``second call`` : the same call again in the same process (steady state);
* ``process``     : wall time of the whole subprocess seen by the parent
  (interpreter start-up + import + both calls).

``first - second`` is the one-off cost of compiling/loading the jitted code and
initialising the thread pools. kmtests' numba code is the permutation kernel
of the HSIC test (``kmtests.engines._jit_hsic.pair_sums``) and dHSIC's arrangement loop
(``kmtests.engines._jit_dhsic.joint_sums``; the joint test's first and second calls, d =
3, are timed after the HSIC test's); the MMD test uses no JIT (its first call is timed
too, for completeness).
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _benchutil as bu  # noqa: E402

CHILD = r"""
import json, sys, time, warnings
warnings.filterwarnings("ignore")
lib, n, d, B = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
out = {}
t = time.perf_counter()
if lib == "kmtests":
    import kmtests
else:
    from hyppo.independence import Hsic
out["import"] = time.perf_counter() - t
t = time.perf_counter()
if lib == "kmtests":
    kmtests.independence_test  # the names load on first use (the faces, plan, statistics)
out["face_import"] = time.perf_counter() - t
import numpy as np
gen = np.random.default_rng([7, n, d])
x = gen.normal(size=(n, d)); y = gen.normal(size=(n, d))
t = time.perf_counter()
if lib == "kmtests":
    import kmtests.engines._jit_hsic  # numba + the jitted kernel's module (kmtests imports it lazily)
out["jit_import"] = time.perf_counter() - t
if lib == "kmtests":
    call = lambda: kmtests.independence_test(x, y, n_resamples=B, rng=1)
else:
    call = lambda: Hsic().test(x, y, reps=B, workers=1, auto=False)
t = time.perf_counter(); call(); out["first"] = time.perf_counter() - t
t = time.perf_counter(); call(); out["second"] = time.perf_counter() - t
if lib == "kmtests":
    z = gen.normal(size=(n, d))
    t = time.perf_counter(); kmtests.two_sample_test(x, z, n_resamples=B, rng=1)
    out["mmd_first"] = time.perf_counter() - t
    t = time.perf_counter(); kmtests.two_sample_test(x, z, n_resamples=B, rng=1)
    out["mmd_second"] = time.perf_counter() - t
    xs = [gen.normal(size=(n, d)) for _ in range(3)]
    t = time.perf_counter(); kmtests.joint_independence_test(*xs, n_resamples=B, rng=1)
    out["joint_first"] = time.perf_counter() - t
    t = time.perf_counter(); kmtests.joint_independence_test(*xs, n_resamples=B, rng=1)
    out["joint_second"] = time.perf_counter() - t
    import numba
    try:
        out["numba_threading_layer"] = numba.threading_layer()
    except ValueError:  # the kernels are serial, run on Python threads: never started
        out["numba_threading_layer"] = "not started"
print("RESULT " + json.dumps(out))
"""


def run_child(lib: str, cache_dir: str, n: int, d: int, B: int, max_wait: float) -> dict:
    bu.wait_quiet(f"{lib} child", max_wait)
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONDONTWRITEBYTECODE="1")
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, lib, str(n), str(d), str(B)],
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{lib} child failed:\n{proc.stderr[-3000:]}")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    res = json.loads(line[len("RESULT "):])
    res["process"] = wall
    return res


def python_startup() -> float:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        best = min(best, time.perf_counter() - t)
    return best


def import_breakdown(top: int = 10) -> list[tuple[str, float]]:
    """Slowest (sub)packages imported by `import kmtests` (python -X importtime).

    Cumulative times (a package's own imports included, so entries can nest,
    e.g. scipy inside statsmodels); a warm-cache, fresh process.
    """
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import kmtests"],
                          capture_output=True, text=True)
    best: dict[str, float] = {}
    for ln in proc.stderr.splitlines():
        if not ln.startswith("import time:") or "cumulative" in ln:
            continue
        _self_us, cum_us, name = ln[len("import time:"):].split("|")
        key = ".".join(name.strip().split(".")[:2])  # e.g. scipy.stats, kmtests.datasets
        best[key] = max(best.get(key, 0.0), int(cum_us.strip()) / 1e6)
    return sorted(best.items(), key=lambda r: -r[1])[:top]


def summarise(label: str, runs: list[dict]) -> dict:
    keys = [k for k in runs[0] if isinstance(runs[0][k], float)]
    best = {k: min(r[k] for r in runs) for k in keys}
    best["runs"] = len(runs)
    best["label"] = label
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="sample size of the first call")
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--B", type=int, default=1000, help="permutations of the kmtests call")
    ap.add_argument("--hyppo-n", type=int, default=200, help="n of hyppo's call")
    ap.add_argument("--hyppo-B", type=int, default=100, help="reps of hyppo's call")
    ap.add_argument("--repeats", type=int, default=3, help="cold/warm runs of kmtests")
    ap.add_argument("--no-hyppo", action="store_true")
    ap.add_argument("--max-wait", type=float, default=20.0,
                    help="seconds to wait for other processes to go idle before each run")
    ap.add_argument("--json", default="bench_cold_start.json")
    args = ap.parse_args(argv)

    info = bu.machine_summary()
    bu.print_machine(info)
    bu.wait_quiet("start", args.max_wait)
    startup = python_startup()
    print(f"\npython start-up (python -c pass): {startup:.3f} s")

    results = []
    with tempfile.TemporaryDirectory(prefix="kmtests-bench-numba-") as root:
        cold, warm = [], []
        for i in range(args.repeats):
            cache = os.path.join(root, f"km{i}")
            os.mkdir(cache)
            cold.append(run_child("kmtests", cache, args.n, args.d, args.B, args.max_wait))
            warm.append(run_child("kmtests", cache, args.n, args.d, args.B, args.max_wait))
        results.append(summarise("kmtests, cold numba cache", cold))
        results.append(summarise("kmtests, warm numba cache", warm))
        layer = cold[0].get("numba_threading_layer")
        if not args.no_hyppo:
            hcache = os.path.join(root, "hyppo")
            os.mkdir(hcache)
            hc = run_child("hyppo", hcache, args.hyppo_n, args.d, args.hyppo_B,
                           args.max_wait)
            hw = [run_child("hyppo", hcache, args.hyppo_n, args.d, args.hyppo_B,
                            args.max_wait)
                  for _ in range(2)]
            results.append(summarise("hyppo, cold numba cache", [hc]))
            results.append(summarise("hyppo, warm numba cache", hw))

    print(f"\n=== cold start: independence test (kmtests n={args.n}, B={args.B}; hyppo "
          f"n={args.hyppo_n}, reps={args.hyppo_B}; d={args.d}); seconds, best of runs ===")
    head = (f"{'case':28s} {'runs':>4s} {'import':>7s} {'faces':>6s} {'jit imp':>7s} "
            f"{'1st call':>9s} "
            f"{'2nd call':>9s} {'1st-2nd':>8s} {'process':>8s}")
    print(head)
    print("-" * len(head))
    for r in results:
        print(f"{r['label']:28s} {r['runs']:4d} {r['import']:7.2f} "
              f"{r.get('face_import', 0.0):6.2f} {r['jit_import']:7.2f} "
              f"{r['first']:9.3f} "
              f"{r['second']:9.3f} {r['first'] - r['second']:8.3f} {r['process']:8.2f}")
    km = [r for r in results if r["label"].startswith("kmtests")]
    print(f"\nkmtests MMD test (no JIT), first/second call in the cold process: "
          f"{km[0]['mmd_first']:.3f} / {km[0]['mmd_second']:.3f} s")
    print(f"kmtests joint test (dHSIC, d = 3, jitted), first/second call: cold cache "
          f"{km[0]['joint_first']:.3f} / {km[0]['joint_second']:.3f} s, warm cache "
          f"{km[1]['joint_first']:.3f} / {km[1]['joint_second']:.3f} s")
    print(f"numba threading layer used: {layer}")
    print("\nslowest (sub)packages under `import kmtests` (cumulative; they nest):")
    brk = import_breakdown()
    for name, sec in brk:
        print(f"  {name:32s} {sec:6.3f} s")
    bu.check_quiet("end")
    if args.json:
        path = bu.save_json(args.json, {"machine": info, "args": vars(args),
                                        "python_startup": startup, "results": results,
                                        "import_breakdown": brk,
                                        "time": time.strftime("%Y-%m-%d %H:%M:%S")})
        print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
