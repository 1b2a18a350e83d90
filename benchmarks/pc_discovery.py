"""PC on a nonlinear structural causal model: kmtests' KCI against causal-learn's KCI.

The model (9 variables, 10 edges, three colliders; nonlinear functions, additive
Gaussian noise of standard deviation 0.4; root nodes N(0, 1)):

    x1 -> x3 <- x2          x3 = tanh(1.5 x1) + sin(1.5 x2)
    x3 -> x4                x4 = x3 exp(-x3^2 / 8) * 1.5
    x3 -> x5                x5 = 0.5 x3 + 0.3 x3^2
    x4 -> x6 <- x5          x6 = tanh(x4) + cos(x5)
    x2 -> x7                x7 = sin(2 x2) + 0.5 x2
    x7 -> x8                x8 = tanh(2 x7)
    x6 -> x9 <- x8          x9 = 0.6 x6 + x8^2 - 0.5 x8

(every variable is centred and scaled to unit variance before its children are
generated). For each n (500, 1000) and seed, one data set is drawn and PC runs on
it, in one process, with:

* ``cl-kci``: causal-learn's ``pc(data, 0.05, "kci")`` (its KCI with default
  settings: Gaussian kernels, empirical widths, gamma null, ``epsilon = 1e-3``);
* ``cl-kmtests``: causal-learn's ``pc`` with the kmtests adapter
  (``register_causallearn()``, default options: KCI with the tuned regression on z,
  gamma null; HSIC gamma test for an empty conditioning set), the cache of z's
  eigendecompositions on (emptied before the run);
* ``cl-kmtests-nocache``: the same with ``cache=False``;
* ``cl-kmtests-iso`` (not in the default list): the same with
  ``bandwidth_z="isotropic"`` (one bandwidth on z searched, the default before
  per-coordinate bandwidths on a multivariate z; ``--multi-z-from K`` moves where
  ``"auto"`` starts them);
* ``cl-kmtests-split`` (not in the default list; ``--methods cl-kmtests-split``):
  the same with ``statistic="split", rng=0`` (SplitKCI: the regressions on z fitted
  on half of the sample, the statistic computed on the other half);
* ``pgmpy-kmtests``: ``pgmpy.causal_discovery.PC(variant="stable",
  ci_test=PgmpyCITest(df), significance_level=0.05, max_cond_vars=7)`` (pgmpy's
  default ``max_cond_vars=5`` raised so that it does not cut the search short;
  causal-learn's has no limit), cache on.

Reported per run: the skeleton SHD (pairs whose adjacency differs from the true
DAG's: missing plus extra edges), the CPDAG SHD (pairs whose edge differs from the
true DAG's CPDAG, the pattern of its Markov equivalence class: a missing, extra,
reversed, wrongly directed or wrongly undirected edge counts 1; a bidirected edge
counts as its own kind), the missing and extra edges, the number of CI tests run
(distinct questions; answers from a p-value cache not counted), wall time and CPU
seconds of the process (``time.process_time``: with BLAS on one thread, the
computation itself, which a busy machine does not inflate), with the load average.
alpha = 0.05 everywhere. BLAS on one thread (threadpoolctl), numba on one thread, and
the process on one CPU (``--cpus 1``, the default: its affinity). The affinity is what
puts kmtests on one thread: from n = 500 its dense linear algebra takes as many BLAS
threads as the process has usable CPUs (``kmtests.engines._loop.linalg_threads``: the
bits must not follow the load), whatever threadpoolctl limit surrounds it, and on a busy
machine idle BLAS threads spin (the CPU seconds of the table before issue 29's
``--cpus``: 67-71 s per run at n = 500, load 9-11, against 11-13 s on one CPU).

Run from the repository root::

    .venv/bin/python benchmarks/pc_discovery.py                   # n = 500, 1000
    .venv/bin/python benchmarks/pc_discovery.py --n 500 --seeds 1 # smoke run

Writes ``benchmarks/results/pc_discovery.csv`` (one row per run; appended run by
run, so a partial run keeps what it did) and prints a Markdown table.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
OUT = HERE / "results" / "pc_discovery.csv"
ALPHA = 0.05
NOISE = 0.4

NAMES = [f"x{i}" for i in range(1, 10)]
#: the true DAG: child -> parents
PARENTS: dict[str, tuple[str, ...]] = {
    "x1": (), "x2": (), "x3": ("x1", "x2"), "x4": ("x3",), "x5": ("x3",),
    "x6": ("x4", "x5"), "x7": ("x2",), "x8": ("x7",), "x9": ("x6", "x8"),
}
FUNCS: dict[str, Callable[..., np.ndarray]] = {
    "x3": lambda x1, x2: np.tanh(1.5 * x1) + np.sin(1.5 * x2),
    "x4": lambda x3: 1.5 * x3 * np.exp(-x3 ** 2 / 8),
    "x5": lambda x3: 0.5 * x3 + 0.3 * x3 ** 2,
    "x6": lambda x4, x5: np.tanh(x4) + np.cos(x5),
    "x7": lambda x2: np.sin(2 * x2) + 0.5 * x2,
    "x8": lambda x7: np.tanh(2 * x7),
    "x9": lambda x6, x8: 0.6 * x6 + x8 ** 2 - 0.5 * x8,
}


def simulate(n: int, seed: int) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    cols: dict[str, np.ndarray] = {}
    for v in NAMES:  # NAMES is a topological order
        pa = PARENTS[v]
        x = gen.normal(size=n) if not pa else (FUNCS[v](*(cols[p] for p in pa))
                                              + NOISE * gen.normal(size=n))
        cols[v] = (x - x.mean()) / x.std()
    return pd.DataFrame(cols)


# ------------------------------------------------------------------------------ graphs

def true_dag() -> np.ndarray:
    """D[i, j] = 1: i -> j."""
    p = len(NAMES)
    D = np.zeros((p, p), dtype=int)
    for c, pa in PARENTS.items():
        for q in pa:
            D[NAMES.index(q), NAMES.index(c)] = 1
    return D


def cpdag_of(D: np.ndarray) -> np.ndarray:
    """The CPDAG (pattern) of a DAG: its v-structures, then Meek's rules 1-3.

    Returns ``M`` with ``M[i, j] = 1`` for a mark i -> j: a directed edge has one
    mark, an undirected edge both.
    """
    p = D.shape[0]
    A = ((D + D.T) > 0).astype(int)
    M = A.copy()  # every edge undirected
    for c in range(p):  # v-structures a -> c <- b, a and b not adjacent
        pa = np.flatnonzero(D[:, c])
        for i, a in enumerate(pa):
            for b in pa[i + 1:]:
                if not A[a, b]:
                    M[c, a] = M[c, b] = 0

    def directed(i: int, j: int) -> bool:
        return bool(M[i, j] and not M[j, i])

    def undirected(i: int, j: int) -> bool:
        return bool(M[i, j] and M[j, i])

    changed = True
    while changed:
        changed = False
        for i in range(p):
            for j in range(p):
                if not undirected(i, j):
                    continue
                # R1: k -> i - j, k and j not adjacent  =>  i -> j
                r1 = any(directed(k, i) and not A[k, j] for k in range(p) if k != j)
                # R2: i -> k -> j  =>  i -> j
                r2 = any(directed(i, k) and directed(k, j) for k in range(p))
                # R3: i - k -> j, i - l -> j, k and l not adjacent  =>  i -> j
                ks = [k for k in range(p) if undirected(i, k) and directed(k, j)]
                r3 = any(not A[k, l] for a, k in enumerate(ks) for l in ks[a + 1:])
                if r1 or r2 or r3:
                    M[j, i] = 0
                    changed = True
    return M


def edge_kind(M: np.ndarray, i: int, j: int, bidirected: np.ndarray | None = None) -> str:
    if bidirected is not None and bidirected[i, j]:
        return "<->"
    if M[i, j] and M[j, i]:
        return "---"
    if M[i, j]:
        return "-->"
    if M[j, i]:
        return "<--"
    return ""


def shd(M: np.ndarray, T: np.ndarray, bidirected: np.ndarray | None = None
        ) -> dict[str, int]:
    p = T.shape[0]
    out = {"shd_skeleton": 0, "shd_cpdag": 0, "missing": 0, "extra": 0}
    for i in range(p):
        for j in range(i + 1, p):
            e, t = edge_kind(M, i, j, bidirected), edge_kind(T, i, j)
            if bool(e) != bool(t):
                out["shd_skeleton"] += 1
                out["missing" if t else "extra"] += 1
            if e != t:
                out["shd_cpdag"] += 1
    return out


def from_causallearn(cg: Any) -> tuple[np.ndarray, np.ndarray]:
    """causal-learn's G.graph: [j, i] = 1, [i, j] = -1: i -> j; both -1: i - j; both 1: <->."""
    g = cg.G.graph
    p = g.shape[0]
    M = np.zeros((p, p), dtype=int)
    B = np.zeros((p, p), dtype=bool)
    for i in range(p):
        for j in range(p):
            if i == j:
                continue
            if g[i, j] == -1 and g[j, i] == 1:
                M[i, j] = 1
            elif g[i, j] == -1 and g[j, i] == -1:
                M[i, j] = 1
            elif g[i, j] == 1 and g[j, i] == 1:
                M[i, j] = M[j, i] = 1
                B[i, j] = B[j, i] = True
    return M, B


def from_pgmpy(pdag: Any) -> np.ndarray:
    p = len(NAMES)
    M = np.zeros((p, p), dtype=int)
    for u, v in pdag.directed_edges:
        M[NAMES.index(u), NAMES.index(v)] = 1
    for u, v in pdag.undirected_edges:
        M[NAMES.index(u), NAMES.index(v)] = M[NAMES.index(v), NAMES.index(u)] = 1
    return M


def describe(M: np.ndarray, B: np.ndarray | None = None) -> str:
    p = M.shape[0]
    return " ".join(f"{NAMES[i]}{edge_kind(M, i, j, B)}{NAMES[j]}"
                    for i in range(p) for j in range(i + 1, p) if edge_kind(M, i, j, B))


# -------------------------------------------------------------------------------- runs

def run_causallearn(df: pd.DataFrame, test: str, **options: Any
                    ) -> tuple[np.ndarray, np.ndarray, int, float, float]:
    from causallearn.search.ConstraintBased.PC import pc

    t, c = time.perf_counter(), time.process_time()
    cg = pc(df.to_numpy(), ALPHA, test, show_progress=False, **options)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    M, B = from_causallearn(cg)
    n_tests = getattr(cg.test, "n_tests", None)
    if n_tests is None:  # causal-learn's own tests: the p-value cache, less its 3 keys
        n_tests = sum(1 for k in cg.test.pvalue_cache
                      if k not in ("data_hash", "method_name", "parameters_hash"))
    return M, B, int(n_tests), wall, cpu


def run_pgmpy(df: pd.DataFrame, **options: Any) -> tuple[np.ndarray, int, int, float, float]:
    from pgmpy.causal_discovery import PC

    from kmtests.causal import PgmpyCITest

    test = PgmpyCITest(df, **options)
    t, c = time.perf_counter(), time.process_time()
    est = PC(variant="stable", ci_test=test, significance_level=ALPHA,
             max_cond_vars=len(NAMES) - 2, show_progress=False).fit(df)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    return from_pgmpy(est.causal_graph_), test.n_tests, test.n_calls, wall, cpu


def warm_up() -> None:
    """Compile and import everything once, outside the timed runs."""
    from kmtests.causal import register_causallearn

    df = simulate(60, 0).iloc[:, :4]
    run_causallearn(df, register_causallearn())
    run_causallearn(df, "kci")
    run_pgmpy(df.rename(columns=dict(zip(df.columns, NAMES))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[500, 1000])
    ap.add_argument("--seeds", type=int, default=3, help="data sets per n")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--methods", nargs="+",
                    default=["cl-kci", "cl-kmtests", "cl-kmtests-nocache", "pgmpy-kmtests"])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--multi-z-from", type=int, default=None,
                    help="set kmtests.statistics.kci.MULTI_Z_FROM (from how many columns "
                    "of z bandwidth_z='auto' searches per-coordinate bandwidths)")
    ap.add_argument("--cpus", type=int, default=1,
                    help="CPUs the process may run on (its affinity; 0: leave it)")
    args = ap.parse_args()
    if args.cpus > 0:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:args.cpus])
    print(f"CPUs of the process: {sorted(os.sched_getaffinity(0))}", flush=True)

    warnings.simplefilter("ignore", FutureWarning)
    import _benchutil

    from kmtests.causal import register_causallearn
    from kmtests.estimators.conditional import clear_cache

    if args.multi_z_from is not None:
        import kmtests.statistics.kci as kci

        kci.MULTI_Z_FROM = args.multi_z_from
    info = _benchutil.machine_summary()
    _benchutil.print_machine(info)
    name = register_causallearn()
    T = cpdag_of(true_dag())
    print("true CPDAG:", describe(T), flush=True)
    with threadpool_limits(limits=1, user_api="blas"):
        warm_up()
        for n in args.n:
            for s in range(args.first_seed, args.first_seed + args.seeds):
                df = simulate(n, 1000 * n + s)
                for method in args.methods:
                    clear_cache()
                    B = None
                    n_calls = None
                    if method == "cl-kci":
                        M, B, n_tests, wall, cpu = run_causallearn(df, "kci")
                    elif method == "cl-kmtests":
                        M, B, n_tests, wall, cpu = run_causallearn(df, name)
                    elif method == "cl-kmtests-iso":
                        M, B, n_tests, wall, cpu = run_causallearn(
                            df, name, bandwidth_z="isotropic")
                    elif method == "cl-kmtests-nocache":
                        M, B, n_tests, wall, cpu = run_causallearn(df, name, cache=False)
                    elif method == "cl-kmtests-split":
                        M, B, n_tests, wall, cpu = run_causallearn(
                            df, name, statistic="split", rng=0)
                    elif method == "pgmpy-kmtests":
                        M, n_tests, n_calls, wall, cpu = run_pgmpy(df)
                    else:
                        raise SystemExit(f"unknown method {method!r}")
                    row = {"n": n, "seed": s, "method": method, **shd(M, T, B),
                           "tests": n_tests, "calls": n_calls, "wall_s": round(wall, 2),
                           "cpu_s": round(cpu, 2), "load": round(os.getloadavg()[0], 1),
                           "s_per_test": round(wall / max(n_tests, 1), 4),
                           "graph": describe(M, B)}
                    print(row, flush=True)
                    pd.DataFrame([row]).to_csv(args.out, mode="a", index=False,
                                               header=not args.out.exists())
    table(pd.read_csv(args.out))


def table(res: pd.DataFrame) -> None:
    g = res.groupby(["n", "method"], sort=False)
    out = g.agg(runs=("seed", "size"), shd_skeleton=("shd_skeleton", "mean"),
                shd_cpdag=("shd_cpdag", "mean"), missing=("missing", "mean"),
                extra=("extra", "mean"), tests=("tests", "mean"), wall_s=("wall_s", "mean"),
                **({"cpu_s": ("cpu_s", "mean")} if "cpu_s" in res else {}),
                s_per_test=("s_per_test", "mean"))
    out = out.round(2).reset_index()
    print("| " + " | ".join(out.columns) + " |")
    print("|" + "|".join("---:" if c != "method" else "---" for c in out.columns) + "|")
    for _, r in out.iterrows():
        print("| " + " | ".join(str(v) for v in r.values) + " |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--table":
        table(pd.read_csv(OUT))
    else:
        main()
