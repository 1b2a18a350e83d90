"""Level and power of the conditional two-sample test against its peers (issue 29 part B).

Settings after Cobb & Van Looveren (ICML 2022, "Context-aware drift detection"): a
context ``c`` (our covariates ``x``) whose law changes between the reference and the test
window, and an outcome ``y`` whose law given the context stays the same (null cells) or
changes (power cells):

* ``covariate``: ``c_ref ~ N(-0.75, 1)``, ``c_test ~ N(0.75, 1)`` (a shift of the context),
  ``y = c + 0.5 sin(3c) + 0.5 e``;
* ``subpop``: the context is a mixture of two components at -1.5 and +1.5 (sd 0.5),
  weighted 0.5/0.5 in the reference and 0.8/0.2 in the test window (C&VL's changing
  subpopulation weights); ``y`` two-dimensional, ``(sin 2c, cos 2c) + 0.3 e``;
* ``none`` (a check of the peers' set-up): as ``covariate`` without the shift;
* ``covariate+shift`` (power): as ``covariate``, with ``y_test + 1`` where ``c > 0``;
* ``subpop+noise`` (power): as ``subpop``, with the test window's noise doubled in the
  component at +1.5.

Methods, on the same data sets (each reads the saved ``.npz``):

* ``kmtests``: :func:`kmtests.conditional_two_sample_test` (defaults: lam by the
  cross-group prediction error, ``criterion="shift"``; kernel logistic propensity
  cross-fitted; clip 0.01; overlap weights); ``kmtests-marglik``: the same with
  ``criterion="marglik"`` (the conditional independence test's in-sample criterion);
  ``kmtests-uniform``: with ``weights="uniform"`` (kcd's mean);
* ``mmd``: the plain two-sample MMD of the pairs ``(c, y)`` (which sees the covariate
  shift: it should reject the null cells);
* ``kcd``: pywhy-stats 0.1's ``kcd`` algorithm, **re-implemented here** from its source
  (pywhy-stats 0.1 requires Python < 3.11 and does not install here): z-scored data,
  Gaussian kernels at the median distance, centred Gram matrices, each group's ridge by
  its ``_default_regularization`` (recomputed for every relabelling, as kcd does), an
  in-sample logistic regression on the Gram rows for the propensity (C = 1 / (2 reg)), no
  clipping;
* ``alibi``: alibi-detect 0.13's ``ContextMMDDrift`` (PyTorch backend, CPU, one thread),
  run in a separate process from ``/tmp/alibi-venv`` (``--alibi-worker``; its domain
  classifier's calibration uses ``FrozenEstimator`` instead of ``cv='prefit'``, which the
  installed scikit-learn 1.9 no longer takes: the same sigmoid fit).

Every method uses ``B`` relabellings (default 199, the same for all; kcd's and alibi's
defaults are 1000). Run under ``nice``; the script prints the load, CPU and wall seconds.

    nice -n 10 python benchmarks/ctst_study.py --cell covariate --reps 200 --n 200
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

# one BLAS thread for every method (threads fight on a shared machine: a 200-point Cholesky
# ran 40 times slower with 2 threads at load 10)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

CELLS = ("covariate", "subpop", "covariate+shift", "subpop+noise", "none")
ALIBI_PYTHON = "/tmp/alibi-venv/bin/python"


def make(cell: str, seed: int, n: int) -> tuple[np.ndarray, ...]:
    """One data set of `cell`: (c_ref, y_ref, c_test, y_test), 2-d arrays."""
    gen = np.random.default_rng(seed)
    if cell.startswith("covariate") or cell == "none":
        shift = 0.0 if cell == "none" else 0.75
        c1 = gen.normal(-shift, 1.0, size=(n, 1))
        c2 = gen.normal(shift, 1.0, size=(n, 1))

        def f(c: np.ndarray) -> np.ndarray:
            return c + 0.5 * np.sin(3 * c) + 0.5 * gen.normal(size=c.shape)

        y1, y2 = f(c1), f(c2)
        if cell == "covariate+shift":
            y2 = y2 + 1.0 * (c2 > 0)
        return c1, y1, c2, y2

    def ctx(w: float) -> tuple[np.ndarray, np.ndarray]:
        comp = gen.random(n) < w
        c = np.where(comp, -1.5, 1.5)[:, None] + 0.5 * gen.normal(size=(n, 1))
        return c, comp

    (c1, _), (c2, comp2) = ctx(0.5), ctx(0.8)

    def g(c: np.ndarray, scale: np.ndarray | float = 0.3) -> np.ndarray:
        e = gen.normal(size=(c.shape[0], 2)) * np.reshape(scale, (-1, 1))
        return np.hstack([np.sin(2 * c), np.cos(2 * c)]) + e

    y1 = g(c1)
    y2 = g(c2, np.where(~comp2, 0.6, 0.3) if cell == "subpop+noise" else 0.3)
    return c1, y1, c2, y2


# -- kcd (pywhy-stats 0.1), re-implemented from its source -----------------------------------
def _kcd_gram(a: np.ndarray) -> np.ndarray:
    d = np.sqrt(np.maximum(((a[:, None, :] - a[None, :, :]) ** 2).sum(-1), 0.0))
    med = np.median(d[d > 0])
    K = np.exp(-0.5 * d ** 2 / med ** 2)
    return K - K.mean(0) - K.mean(1)[:, None] + K.mean()


def _kcd_reg(K: np.ndarray) -> float:
    from scipy.optimize import minimize_scalar

    # (kcd takes the singular values of the centred Gram matrix, which is symmetric
    # positive semi-definite: they are its eigenvalues, to rounding)
    s = np.abs(np.linalg.eigvalsh(K))
    res = minimize_scalar(lambda r: np.sum(s ** 2 / (s + r) ** 2) / K.shape[0] + r,
                          bounds=(0.0001, 1000), method="bounded")
    return float(res.x)


def _kcd_stat(K: np.ndarray, L: np.ndarray, z: np.ndarray) -> float:
    m0, m1 = z == 0, z == 1
    W = []
    for m in (m0, m1):
        Kg = K[np.ix_(m, m)]
        W.append(np.linalg.inv(Kg + _kcd_reg(Kg) * np.eye(int(m.sum()))))
    KW0, KW1 = K[:, m0] @ W[0], K[:, m1] @ W[1]
    # kcd's traces tr(A' B C) = sum((A' B) * C'), without the third product
    first = np.sum((KW0.T @ KW0) * L[np.ix_(m0, m0)].T)
    second = np.sum((KW1.T @ KW0) * L[np.ix_(m0, m1)].T)
    third = np.sum((KW1.T @ KW1) * L[np.ix_(m1, m1)].T)
    return float((first - 2 * second + third) / K.shape[0])


def kcd(c1, y1, c2, y2, B: int, seed: int) -> float:
    from scipy.stats import zscore
    from sklearn.linear_model import LogisticRegression

    X = zscore(np.vstack([c1, c2]), axis=0)
    Y = zscore(np.vstack([y1, y2]), axis=0)
    z = np.r_[np.zeros(len(c1)), np.ones(len(c2))].astype(int)
    K, L = _kcd_gram(X), _kcd_gram(Y)
    stat = _kcd_stat(K, L, z)
    clf = LogisticRegression(penalty="l2", solver="lbfgs", C=1 / (2 * _kcd_reg(K)),
                             max_iter=1000)
    e = clf.fit(K, z).predict_proba(K)[:, 1]
    rng = np.random.default_rng(seed)
    null = []
    for _ in range(B):
        zb = rng.binomial(1, e)
        if min(zb.sum(), (1 - zb).sum()) < 2:
            null.append(0.0)
            continue
        null.append(_kcd_stat(K, L, zb))
    return float((1 + np.sum(np.array(null) >= stat)) / (1 + B))


# -- alibi-detect, in its own environment ---------------------------------------------------------
def alibi_worker(path: str, out: str, B: int) -> None:
    import torch
    from alibi_detect.cd import ContextMMDDrift
    from alibi_detect.cd import _domain_clf
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.frozen import FrozenEstimator

    def calibrate(self, x: np.ndarray, y: np.ndarray) -> None:
        # alibi-detect 0.13 calibrates its fitted SVC with cv='prefit', which scikit-learn
        # 1.8 removed; FrozenEstimator is its documented replacement (the same sigmoid fit
        # on the same data)
        clf = CalibratedClassifierCV(FrozenEstimator(self.clf), method=self.cal_method)
        clf.fit(x, y)
        self.clf = clf

    _domain_clf._SVCDomainClf.calibrate = calibrate
    torch.set_num_threads(1)
    data = np.load(path)
    res = {}
    for key in sorted({k.rsplit("_", 1)[0] for k in data.files}):
        seed = int(key.split("_")[1])
        np.random.seed(seed)
        torch.manual_seed(seed)
        y1, c1 = data[f"{key}_y1"].astype(np.float32), data[f"{key}_c1"].astype(np.float32)
        y2, c2 = data[f"{key}_y2"].astype(np.float32), data[f"{key}_c2"].astype(np.float32)
        t0, p0 = time.perf_counter(), time.process_time()
        det = ContextMMDDrift(y1, c1, backend="pytorch", n_permutations=B, device="cpu")
        p = float(det.predict(y2, c2)["data"]["p_val"])
        res[key] = {"p": p, "wall": time.perf_counter() - t0, "cpu": time.process_time() - p0}
        with open(out + ".part", "a") as fh:  # progress, one line a data set
            fh.write(json.dumps({key: res[key]}) + "\n")
    with open(out, "w") as fh:
        json.dump(res, fh)


def run_cell(cell: str, reps: int, n: int, B: int, methods: list[str], out: str,
             first: int = 0) -> dict:
    import warnings

    import kmtests

    warnings.simplefilter("ignore")
    sets = {f"set_{s}": make(cell, s, n) for s in range(first, first + reps)}
    results: dict = {m: {} for m in methods}
    load0 = os.getloadavg()
    if "alibi" in methods:
        tmp = tempfile.mkdtemp()
        npz, js = os.path.join(tmp, "data.npz"), out + ".alibi.json"
        np.savez(npz, **{f"{k}_{r}": a for k, (c1, y1, c2, y2) in sets.items()
                         for r, a in zip(("c1", "y1", "c2", "y2"), (c1, y1, c2, y2))})
        proc = subprocess.Popen([ALIBI_PYTHON, __file__, "--alibi-worker",
                                 npz, js, "--B", str(B)],
                                env={**os.environ, "OMP_NUM_THREADS": "1",
                                     "MKL_NUM_THREADS": "1"})
    for key, (c1, y1, c2, y2) in sets.items():
        seed = int(key.split("_")[1])
        for m in methods:
            if m == "alibi":
                continue
            t0, p0 = time.perf_counter(), time.process_time()
            if m.startswith("kmtests"):
                opt = m.split("-")[1] if "-" in m else ""
                kw = ({"weights": opt} if opt in ("uniform", "overlap") else
                      {"criterion": opt} if opt else {})
                p = kmtests.conditional_two_sample_test(c1, y1, c2, y2, n_resamples=B,
                                                        rng=seed, **kw).pvalue
            elif m == "mmd":
                p = kmtests.two_sample_test(np.hstack([c1, y1]), np.hstack([c2, y2]),
                                            n_resamples=B, rng=seed).pvalue
            else:
                p = kcd(c1, y1, c2, y2, B, seed)
            results[m][key] = {"p": float(p), "wall": time.perf_counter() - t0,
                               "cpu": time.process_time() - p0}
            with open(out + ".part", "a") as fh:  # progress, one line a data set
                fh.write(json.dumps({"method": m, key: results[m][key]}) + "\n")
    if "alibi" in methods:
        proc.wait()
        with open(js) as fh:
            results["alibi"] = json.load(fh)
    summary = {"cell": cell, "reps": reps, "n": n, "B": B, "load_start": load0,
               "load_end": os.getloadavg(), "methods": {}}
    from scipy.stats import binomtest

    for m, rows in results.items():
        ps = np.array([r["p"] for r in rows.values()])
        k = int(np.sum(ps <= 0.05))
        ci = binomtest(k, ps.size).proportion_ci(0.95, method="exact")
        summary["methods"][m] = {
            "rejected": k, "of": int(ps.size), "rate": k / ps.size,
            "ci": [ci.low, ci.high],
            "cpu_per_set": float(np.mean([r["cpu"] for r in rows.values()])),
            "wall_per_set": float(np.mean([r["wall"] for r in rows.values()]))}
    with open(out, "w") as fh:
        json.dump({"summary": summary, "results": results}, fh, indent=1)
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", choices=CELLS)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--B", type=int, default=199)
    ap.add_argument("--first", type=int, default=0, help="the first data set's seed")
    ap.add_argument("--methods", default="kmtests,mmd,kcd,alibi")
    ap.add_argument("--out", default=None)
    ap.add_argument("--alibi-worker", nargs=2, metavar=("NPZ", "JSON"))
    args = ap.parse_args()
    if args.alibi_worker:
        alibi_worker(*args.alibi_worker, args.B)
        return
    out = args.out or f"ctst_{args.cell}_{args.n}.json"
    s = run_cell(args.cell, args.reps, args.n, args.B, args.methods.split(","), out,
                 args.first)
    print(f"cell {s['cell']}, n = {s['n']} per group, {s['reps']} data sets, B = {s['B']}, "
          f"load {s['load_start'][0]:.1f} -> {s['load_end'][0]:.1f}")
    for m, r in s["methods"].items():
        print(f"  {m:8s} {r['rejected']:4d}/{r['of']} = {r['rate']:.3f} "
              f"[{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]  cpu {r['cpu_per_set']:.2f} s/set, "
              f"wall {r['wall_per_set']:.2f} s/set")


if __name__ == "__main__":
    sys.exit(main())
