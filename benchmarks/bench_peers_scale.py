"""kmtests against the large-N peers, side by side in one run: frouros (MMD drift
detector with a permutation test) and causal-learn (KCI unconditional independence
test, gamma approximation).

Each row runs in a fresh process: wall seconds and peak resident memory
(``ru_maxrss``, interpreter and data included) at the sizes where the peer runs.

* MMD, d = 10, N pooled points (half per sample, y shifted by 0.05), Gaussian
  kernel with the same fixed bandwidth sqrt(d) in both, B permutations on one
  core: ``frouros.detectors.data_drift.MMD`` with
  ``PermutationTestDistanceBased(num_jobs=1)`` against
  ``two_sample_test(engine="exact" | "streamed", n_jobs=1)``.
* HSIC, x in R^5, y = x_1 + noise (n pairs): ``causallearn`` ``KCI_UInd``
  (approx=True: gamma null, its own bandwidth rule) against
  ``independence_test(method="gamma")`` (median bandwidths).

frouros 0.9 pins numpy < 2.2 and scipy < 1.15, so run this in its own
environment (both libraries and kmtests in the same one)::

    python -m venv /tmp/peers && /tmp/peers/bin/pip install . frouros causal-learn
    /tmp/peers/bin/python benchmarks/bench_peers_scale.py

Run: python benchmarks/bench_peers_scale.py [--mmd 2000,5000,10000] [--hsic 1000,2000,5000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from _benchutil import machine_summary, print_machine, save_json

CHILD = r"""
import json, os, resource, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
kind, who, n, B = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
gen = np.random.default_rng(0)
if kind == "mmd":
    d = 10
    x = gen.normal(size=(n // 2, d))
    y = gen.normal(size=(n - n // 2, d)) + 0.05
else:
    x = gen.normal(size=(n, 5))
    y = x[:, :1] + 3.0 * gen.normal(size=(n, 1))
with threadpool_limits(1):
    t0 = time.perf_counter()
    if who == "frouros":
        from functools import partial
        from frouros.callbacks.batch import PermutationTestDistanceBased
        from frouros.detectors.data_drift import MMD
        from frouros.utils.kernels import rbf_kernel
        det = MMD(kernel=partial(rbf_kernel, sigma=float(np.sqrt(d))),
                  callbacks=[PermutationTestDistanceBased(num_permutations=B, random_state=0,
                                                          num_jobs=1, name="perm")])
        det.fit(X=x)
        _, log = det.compare(X=y)
        p = float(log["perm"]["p_value"])
    elif who == "causal-learn":
        from causallearn.utils.KCI.KCI import KCI_UInd
        p = float(KCI_UInd(approx=True).compute_pvalue(x, y)[0])
    else:
        import kmtests
        if kind == "mmd":
            p = kmtests.two_sample_test(x, y, bandwidth=float(np.sqrt(d)), n_resamples=B,
                                        rng=0, n_jobs=1, engine=who).pvalue
        else:
            p = kmtests.independence_test(x, y, method="gamma").pvalue
    t = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": t, "peak": peak, "pvalue": p}))
"""


def run(kind: str, who: str, n: int, B: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, kind, who, str(n), str(B)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1][:100]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _rows(kind: str, n: int, B: int, labels: dict[str, str]) -> list[dict]:
    """Run each library (the first is the reference of the ratio) and print its row."""
    out, ref = [], None
    for who, label in labels.items():
        r = run(kind, who, n, B)
        r.update(kind=kind, who=who, n=n, B=B)
        out.append(r)
        if "error" in r:
            print(f"| {n} | {label} | error: {r['error']} | | | |", flush=True)
            continue
        ref = r["seconds"] if ref is None else ref
        print(f"| {n} | {label} | {r['seconds']:.2f} | {r['peak'] / 1e9:.2f} | "
              f"{r['pvalue']:.3g} | {r['seconds'] / ref:.3g} |", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mmd", default="2000,5000,10000")
    ap.add_argument("--hsic", default="1000,2000,5000")
    ap.add_argument("--B", type=int, default=100)
    args = ap.parse_args()
    info = machine_summary()
    print_machine(info)
    rows = []
    print(f"\nMMD, B = {args.B}, one core\n")
    print("| N | library | seconds | peak RSS GB | p-value | ratio to frouros |")
    print("|---:|---|---:|---:|---:|---:|")
    for n in (int(v) for v in args.mmd.split(",") if v):
        rows += _rows("mmd", n, args.B, {"frouros": "frouros", "exact": "kmtests (exact)",
                                         "streamed": "kmtests (streamed)"})
    print("\nHSIC, gamma approximation, one core\n")
    print("| n | library | seconds | peak RSS GB | p-value | ratio to causal-learn |")
    print("|---:|---|---:|---:|---:|---:|")
    for n in (int(v) for v in args.hsic.split(",") if v):
        rows += _rows("hsic", n, 0, {"causal-learn": "causal-learn", "kmtests": "kmtests"})
    save_json("bench_peers_scale.json", {"machine": info, "rows": rows})


if __name__ == "__main__":
    main()
