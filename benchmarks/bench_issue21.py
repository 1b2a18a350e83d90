"""Issue 21's table, re-measured in one process with the same peers, quiet and busy.

Each row of the issue's table (``benchmarks/README.md``, "Speed on a real, busy
machine") side by side with its reference, in one process, with the machine quiet
and with one other process spinning on one core (``_benchutil.machine_state``):

* MMD test, n = 1000 + 1000, B = 1000: the default against ``n_jobs=1``;
* gamma HSIC per call (one-dimensional, given widths), n = 50 / 200 / 1000, against
  causal-learn's ``KCI_UInd`` (every BLAS on one thread; CPU ms a call);
* HSIC permutation test, n = 1000, B = 1000, against dcor's distance-covariance
  permutation test (``dcor.independence.distance_covariance_test``);
* MMDAgg, 10 Gaussian bandwidths, B = 2000, n = 500, against the authors' numpy
  MMDAgg with its wild bootstrap (``--mmdagg`` a checkout of antoninschrab/mmdagg);
* F-KMSE two-sample, n = 200 + 200, B = 199 (d = 5): re-tuned per permutation on the
  exact engine, tuned on the pooled sample on the exact and the Nyström (r = 50)
  engines, against the KME test;
* drawing B = 10 permutations of N = 10^6 points: ``kmtests._rng.permuted_rows``
  against ``Generator.permuted``;
* the time a slow default (Landweber re-tuned on each of 9 999 permutations, 130
  points) takes to announce its cost (``SlowTestWarning``) and the cost it announces.

Wall seconds, best of ``--repeats`` after a warm-up (per-call rows: CPU ms).

Run::

    .venv/bin/python benchmarks/bench_issue21.py --mmdagg /path/to/mmdagg
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from _benchutil import best_of, machine_state, machine_summary, markdown_table, print_machine

HERE = Path(__file__).resolve().parent


def _best(fn: Callable[[], Any], repeats: int) -> float:
    """Best of `repeats` calls after a warm-up call."""
    fn()
    return best_of(fn, repeats)[0]


def _cpu_ms(fn: Callable[[], Any], calls: int) -> float:
    fn()
    t = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - t) / calls * 1e3


def rows(mmdagg_path: str | None, repeats: int) -> list[dict[str, Any]]:
    import kmtests

    out: list[dict[str, Any]] = []

    def add(what: str, ours: float, ref: float, ref_name: str, unit: str = "s") -> None:
        out.append({"what": what, "kmtests": ours, "reference": ref, "reference is": ref_name,
                    "unit": unit, "reference / kmtests": ref / ours})
        print(f"  {what}: kmtests {ours:.4g} {unit}, {ref_name} {ref:.4g} {unit}", flush=True)

    g = np.random.default_rng(0)
    # MMD default vs one thread
    x, y = g.normal(size=(1000, 5)), g.normal(size=(1000, 5))
    kw = dict(n_resamples=1000, rng=0, progress=False)
    add("MMD n=1000+1000 B=1000", _best(lambda: kmtests.two_sample_test(x, y, **kw), repeats),
        _best(lambda: kmtests.two_sample_test(x, y, n_jobs=1, **kw), repeats),
        "same call, n_jobs=1")
    # gamma HSIC per call vs causal-learn
    from causallearn.utils.KCI.KCI import KCI_UInd
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        for n in (50, 200, 1000):
            u = g.normal(size=(n, 1))
            v = u + g.normal(size=(n, 1))
            calls = max(5, 40000 // n)
            add(f"gamma HSIC per call n={n}",
                _cpu_ms(lambda: kmtests.independence_test(u, v, method="gamma", bandwidth_x=1.0,
                                                          bandwidth_y=1.0), calls),
                _cpu_ms(lambda: KCI_UInd(kwidthx=1.0, kwidthy=1.0).compute_pvalue(u, v),
                        calls), "causal-learn KCI_UInd", "ms")
    # HSIC permutations vs dcor
    import dcor

    u, v = g.normal(size=(1000, 1)), g.normal(size=(1000, 1))
    add("HSIC permutation n=1000 B=1000",
        _best(lambda: kmtests.independence_test(u, v, n_resamples=1000, rng=0,
                                                progress=False), repeats),
        _best(lambda: dcor.independence.distance_covariance_test(
            u, v, num_resamples=1000, random_state=0), 1), "dcor dCov test")
    # MMDAgg vs the authors' wild bootstrap
    if mmdagg_path:
        from bench_mmdagg_peer import contenders

        c = contenders(mmdagg_path, 2000, 500)
        a, b = g.normal(size=(500, 10)), g.normal(size=(500, 10))
        add("MMDAgg n=500 B=2000", _best(lambda: c["kmtests MMDAgg (permutations)"](a, b),
                                         repeats),
            _best(lambda: c["authors wild bootstrap"](a, b), repeats), "authors' wild bootstrap")
    # F-KMSE against the KME
    x, y = g.normal(size=(200, 5)), g.normal(size=(200, 5))
    kw = dict(n_resamples=199, rng=0, progress=False)
    kme = _best(lambda: kmtests.two_sample_test(x, y, **kw), repeats)
    for label, extra in (("exact, per permutation", {}),
                         ("exact, pooled", dict(tuning="pooled")),
                         ("nystrom r=50, pooled", dict(tuning="pooled", engine="nystrom",
                                                       n_features=50))):
        add(f"fkmse n=200+200 B=199 ({label})",
            _best(lambda: kmtests.two_sample_test(x, y, estimator="fkmse", **extra, **kw),
                  1 if not extra else repeats), kme, "KME test (exact)")
    # drawing permutations at N = 10^6
    from kmtests._rng import permuted_rows

    N, B = 10**6, 10
    add("10 permutations of N=10^6",
        _best(lambda: permuted_rows(np.random.default_rng(1), N, B), repeats),
        _best(lambda: np.random.default_rng(1).permuted(np.tile(np.arange(N), (B, 1)), axis=1),
              repeats), "Generator.permuted")
    # a slow default announces itself
    from kmtests._warnings import SlowTestWarning

    a, b = g.normal(size=(65, 3)), g.normal(size=(65, 3))
    t = time.perf_counter()
    message = ""
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowTestWarning)
        try:
            kmtests.two_sample_test(a, b, estimator="landweber", rng=0, progress=False)
        except SlowTestWarning as w:
            message = str(w)
    took = time.perf_counter() - t
    est = message.split("about ")[1].split(" (")[0] if "about " in message else "?"
    out.append({"what": "landweber 65+65, default 9999 permutations: time to the warning",
                "kmtests": took, "reference": np.nan, "reference is": f"announced: {est}",
                "unit": "s", "reference / kmtests": np.nan})
    print(f"  slow default warned after {took:.2f} s: {est}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mmdagg", default=None, help="a checkout of antoninschrab/mmdagg")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--states", default="quiet,busy")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_issue21.csv"))
    args = ap.parse_args(argv)
    print_machine(machine_summary())
    frames = []
    for state in args.states.split(","):
        print(f"{state}:", flush=True)
        with machine_state(state):
            df = pd.DataFrame(rows(args.mmdagg, args.repeats))
        df.insert(0, "state", state)
        frames.append(df)
    tab = pd.concat(frames)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    tab.to_csv(args.out, index=False)
    print(markdown_table(tab))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
