"""Speed of the k-sample test: kmtests against dcor and hyppo, the same permutations.

k = 3 samples of N(0, I_d) (d = 5; sizes N/3, the last takes the remainder), N total
points, B permutations in every permuting test, one core (BLAS and numba limited to
one thread, ``n_jobs=1`` / ``workers=1``). Each (N, test) runs in a fresh process,
which first runs the test once on 12 points (numba compilation, imports) and then
reports the best of ``--repeats`` timed calls (one call when a call takes over 10 s):
wall-clock seconds and the process's CPU seconds (``time.process_time``; on one
thread, the run time the call would have on an idle core: the ratios use these,
since on a machine shared with other jobs the wall time of a long call is inflated
by the time it waits for a core).

Permutation tests (B = 999 by default):

* ``kmtests gauss``: ``k_sample_test(*xs, n_resamples=B, n_jobs=1)`` (Gaussian kernel,
  median bandwidth, U-form); ``kmtests dist``: ``kernel="distance"``;
* ``dcor energy``: ``dcor.homogeneity.energy_test(*xs, num_resamples=B, n_jobs=1)``;
* ``hyppo Dcorr``, ``hyppo Hsic``: ``KSample("Dcorr" | "Hsic").test(*xs, reps=B,
  auto=False, workers=1)``.

Approximate nulls (no permutations): ``kmtests gamma`` (``method="gamma",
statistic="biased"``), ``hyppo Dcorr chi2`` and ``hyppo Hsic chi2`` (hyppo's default
``auto=True``).

Run (an environment with dcor and hyppo; a few minutes)::

    /tmp/peers/bin/python benchmarks/bench_ksample_speed.py [--sizes 100,300,1000] [--B 999]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from _benchutil import machine_summary, print_machine, save_json, wait_quiet

CHILD = r"""
import json, os, sys, time, warnings
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[v] = "1"
warnings.simplefilter("ignore")
import numpy as np
from threadpoolctl import threadpool_limits
who, N, B, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

def data(N, seed=0):
    gen = np.random.default_rng(seed)
    m = N // 3
    return [gen.normal(size=(s, 5)) for s in (m, m, N - 2 * m)]

def run(xs, B):
    if who.startswith("kmtests"):
        import kmtests
        if who == "kmtests gamma":
            return kmtests.k_sample_test(*xs, method="gamma", statistic="biased").pvalue
        kernel = "distance" if who == "kmtests dist" else "gaussian"
        return kmtests.k_sample_test(*xs, kernel=kernel, n_resamples=B, rng=0,
                                     n_jobs=1).pvalue
    if who == "dcor energy":
        import dcor
        return dcor.homogeneity.energy_test(*xs, num_resamples=B, random_state=0,
                                            n_jobs=1).pvalue
    from hyppo.ksample import KSample
    name = who.split()[1]
    if who.endswith("chi2"):
        return KSample(name).test(*xs).pvalue
    return KSample(name).test(*xs, reps=B, auto=False, workers=1, random_state=0).pvalue

with threadpool_limits(1):
    run(data(12, 1), 19)  # imports, numba compilation
    xs = data(N)
    best, cpu, p = float("inf"), float("inf"), None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        p = run(xs, B)
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
        if best > 10:
            break
print(json.dumps({"seconds": best, "cpu_seconds": cpu, "pvalue": float(p)}))
"""

PERMUTING = ["kmtests dist", "kmtests gauss", "dcor energy", "hyppo Dcorr", "hyppo Hsic"]
APPROX = ["kmtests gamma", "hyppo Dcorr chi2", "hyppo Hsic chi2"]


def run(who: str, N: int, B: int, repeats: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, who, str(N), str(B), str(repeats)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1][:100]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100,300,1000")
    ap.add_argument("--B", type=int, default=999)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    info = machine_summary()
    print_machine(info)
    busy = wait_quiet("before the runs", 120)
    rows = []
    for title, tests in ((f"Permutation tests, B = {args.B}", PERMUTING),
                         ("Approximate nulls (no permutations)", APPROX)):
        print(f"\n{title}, k = 3, d = 5, one core\n")
        print(f"| N | test | wall s | CPU s | p-value | CPU x {tests[0]} |")
        print("|---:|---|---:|---:|---:|---:|")
        for N in (int(v) for v in args.sizes.split(",") if v):
            ref = None
            for who in tests:
                r = run(who, N, args.B, args.repeats)
                r.update(who=who, N=N, B=args.B if who in PERMUTING else 0)
                rows.append(r)
                if "error" in r:
                    print(f"| {N} | {who} | error: {r['error']} | | | |", flush=True)
                    continue
                if who == tests[0]:
                    ref = r["cpu_seconds"]
                ratio = "" if ref is None else f"{r['cpu_seconds'] / ref:.3g}"
                print(f"| {N} | {who} | {r['seconds']:.4g} | {r['cpu_seconds']:.4g} | "
                      f"{r['pvalue']:.3g} | {ratio} |", flush=True)
    save_json("bench_ksample_speed.json", {"machine": info, "foreign_load": busy,
                                           "rows": rows})


if __name__ == "__main__":
    main()
