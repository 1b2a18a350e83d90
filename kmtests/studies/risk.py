"""Risk studies: exact losses of kernel mean estimators on random Gaussian mixtures.

The papers' synthetic experiments (ICML §4.1, JMLR §6.1.2, MKME §5.1.1;
PAPERS.md §4) draw a random mixture of Gaussians, one sample from it, fit each
estimator and compute the loss ``||mu_hat - mu_P||^2`` against the true kernel
mean, known in closed form (:mod:`kmtests.groundtruth`). :func:`risk_study`
runs that grid and summarises it.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .._rng import keyed, root_sequence
from .._typing import SeedLike
from .._validation import check_positive_int
from ..datasets import synthetic_mixture
from ..estimators import KME, KernelMeanEstimator, resolve_estimator
from ..kernels import ARDGaussian, Gaussian, Kernel, Linear, Polynomial
from .groundtruth import GaussianMixture, _kernel_spec, loss

__all__ = ["risk_study"]

#: kernel names understood by :func:`risk_study` (paper names in brackets)
KERNEL_NAMES: dict[str, Callable[[], Kernel]] = {
    "rbf": lambda: Gaussian(bandwidth="median"),  # [RBF], median heuristic on each sample
    "gaussian": lambda: Gaussian(bandwidth="median"),
    "linear": Linear,  # [LIN]
    "poly2": lambda: Polynomial(degree=2, coef0=1.0),  # [POLY2]
    "poly3": lambda: Polynomial(degree=3, coef0=1.0),  # [POLY3]
}

SUMMARY_COLUMNS = ["estimator", "kernel", "d", "n", "repetitions", "mean_loss", "se_loss",
                   "ratio", "se_ratio", "mean_ratio", "se_mean_ratio", "p_improve", "kme_risk"]


# -- argument handling ---------------------------------------------------------------------
def _as_int_list(value: Any, name: str) -> list[int]:
    vals = [value] if isinstance(value, numbers.Integral) else value
    try:
        out = [check_positive_int(v, name) for v in vals]
    except TypeError as exc:
        raise TypeError(f"`{name}` must be a positive integer or a sequence of them.") from exc
    if not out or len(set(out)) != len(out):
        raise ValueError(f"`{name}` must be non-empty and without repeated values; got {value!r}.")
    return out


def _estimator_label(est: KernelMeanEstimator) -> str:
    try:
        default = type(est)()
    except TypeError:
        return repr(est)
    return est.name if default.get_params() == est.get_params() else repr(est)


def _resolve_estimators(estimators: Any) -> list[tuple[str, KernelMeanEstimator]]:
    if isinstance(estimators, (str, KernelMeanEstimator)):
        estimators = [estimators]
    if isinstance(estimators, Mapping):
        pairs = [(str(k), resolve_estimator(v)) for k, v in estimators.items()]
    else:
        pairs = []
        for e in estimators:
            est = resolve_estimator(e)
            pairs.append((e.lower() if isinstance(e, str) else _estimator_label(est), est))
    labels = [p[0] for p in pairs]
    if not pairs or len(set(labels)) != len(labels):
        raise ValueError(f"`estimators` must be non-empty with distinct labels; got {labels}. "
                         "Pass a dict {label: estimator} to name variants.")
    return pairs


def _resolve_kernels(kernels: Any) -> list[tuple[str, Kernel]]:
    if isinstance(kernels, (str, Kernel)):
        kernels = [kernels]
    out = []
    for k in kernels:
        if isinstance(k, str):
            if k.lower() not in KERNEL_NAMES:
                valid = ", ".join(repr(v) for v in sorted(KERNEL_NAMES))
                raise ValueError(f"`kernels` entries must be one of {valid} or Kernel objects; "
                                 f"got {k!r}.")
            key = "rbf" if k.lower() == "gaussian" else k.lower()
            out.append((key, KERNEL_NAMES[key]()))
        elif isinstance(k, Kernel):
            if not (isinstance(k, (Gaussian, ARDGaussian)) and not k.is_fitted):
                _kernel_spec(k, 1 if not isinstance(k, ARDGaussian) else np.size(k.bandwidth))
            out.append((k.describe(), k))
        else:
            raise TypeError("`kernels` must be kernel names or Kernel objects; "
                            f"got {type(k).__name__}.")
    labels = [p[0] for p in out]
    if not out or len(set(labels)) != len(labels):
        raise ValueError(f"`kernels` must be non-empty and distinct; got {labels}.")
    return out


def _root_seed(rng: SeedLike) -> np.random.SeedSequence:
    return root_sequence(rng, words=4)[0]


_child = keyed


# -- one cell: one distribution, one sample, every kernel and estimator ---------------------
def _run_cell(root: np.random.SeedSequence, rep: int, d: int, n: int,
              estimators: list[tuple[str, KernelMeanEstimator]],
              kernels: list[tuple[str, Kernel]],
              generator: Callable[..., GaussianMixture]) -> list[dict[str, Any]]:
    rep_seed = _child(root, rep)  # = root.spawn(repetitions)[rep]
    P = generator(d, rng=np.random.default_rng(_child(rep_seed, 0, d)))
    if not isinstance(P, GaussianMixture) or P.dim != d:
        raise TypeError(f"`generator(d, rng=...)` must return a GaussianMixture of dimension {d}.")
    x = P.sample(n, rng=np.random.default_rng(_child(rep_seed, 1, d, n)))
    records = []
    for klabel, kern in kernels:
        kf = kern.fitted_to(x, name="x")  # median heuristic on this sample (RBF)
        delta = P.kme_risk(kf, n)
        loss_kme = loss(KME().fit(x, kernel=kf), P)
        bw = float(np.mean(kf.bandwidth)) if isinstance(kf, (Gaussian, ARDGaussian)) else np.nan
        for elabel, est in estimators:
            emb = est.fit(x, kernel=kf)
            rec: dict[str, Any] = {
                "estimator": elabel, "kernel": klabel, "d": d, "n": n, "repetition": rep,
                "loss": loss(emb, P), "loss_kme": loss_kme, "kme_risk": delta, "bandwidth": bw,
            }
            for key, val in (emb.params or {}).items():
                if isinstance(val, numbers.Real) and not isinstance(val, bool):
                    rec[f"param_{key}"] = float(val)
            records.append(rec)
    return records


def _summarise(raw: pd.DataFrame, estimators: list[str], kernels: list[str], ds: list[int],
               ns: list[int]) -> pd.DataFrame:
    rows = []
    groups = {key: g for key, g in raw.groupby(["estimator", "kernel", "d", "n"], sort=False)}
    for e in estimators:
        for k in kernels:
            for d in ds:
                for n in ns:
                    g = groups[(e, k, d, n)].sort_values("repetition")
                    y, x = g["loss"].to_numpy(), g["loss_kme"].to_numpy()
                    m = y.size
                    with np.errstate(divide="ignore", invalid="ignore"):
                        ratio = y.mean() / x.mean()
                        r = y / x
                    def se(v: np.ndarray, m: int = m) -> float:
                        return float(np.std(v, ddof=1) / np.sqrt(m)) if m > 1 else np.nan
                    rows.append({
                        "estimator": e, "kernel": k, "d": d, "n": n, "repetitions": m,
                        "mean_loss": float(y.mean()), "se_loss": se(y),
                        "ratio": float(ratio),
                        "se_ratio": se(y - ratio * x) / float(x.mean()) if m > 1 else np.nan,
                        "mean_ratio": float(r.mean()), "se_mean_ratio": se(r),
                        "p_improve": float(np.mean(y < x)),
                        "kme_risk": float(g["kme_risk"].mean()),
                    })
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def risk_study(
    estimators: Sequence[str | KernelMeanEstimator] | Mapping[str, str | KernelMeanEstimator],
    *,
    n: int | Sequence[int] = (10, 20, 50),
    d: int | Sequence[int] = (20,),
    kernels: str | Kernel | Sequence[str | Kernel] = ("rbf",),
    repetitions: int = 30,
    rng: SeedLike = None,
    n_jobs: int | None = None,
    progress: bool = False,
    generator: Callable[..., GaussianMixture] | None = None,
    return_raw: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
    """Exact risk of kernel mean estimators on the papers' random Gaussian mixtures.

    For every repetition r and dimension d a new random distribution
    ``P = generator(d, rng)`` is drawn; for every sample size n one sample of
    size n is drawn from it; every kernel and every estimator is fitted to that
    same sample (common random numbers) and its exact loss
    ``||mu_hat - mu_P||^2`` computed (:func:`kmtests.groundtruth.loss`).

    Parameters
    ----------
    estimators : sequence of names or estimator objects, or dict
        E.g. ``["kme", "skmse", "fkmse"]`` (see :data:`kmtests.estimators.ESTIMATORS`).
        Objects are labelled by their registry name, or by their ``repr`` when
        their parameters differ from the defaults; a dict ``{label: estimator}``
        sets the labels.
    n, d : int or sequence of int
        Sample sizes and dimensions.
    kernels : name, Kernel or sequence of them
        ``"rbf"`` (alias ``"gaussian"``: bandwidth by the median heuristic on
        each sample, as in the papers; the true kernel mean uses the same
        bandwidth), ``"linear"``, ``"poly2"`` = ``(<x, y> + 1)^2``, ``"poly3"``,
        or Kernel objects with a closed-form ground truth.
    repetitions : int
        Distributions per (d, n) cell (the papers use 30).
    rng : None, int, SeedSequence or Generator
        One seed for the whole study. Repetition r uses the child
        ``SeedSequence.spawn`` would give at key r; inside it the distribution
        for d and the sample for (d, n) have their own keyed children, so a
        cell's result does not depend on which other n, d or kernels are in
        the grid, nor on `n_jobs`.
    n_jobs : int or None
        None: run in this process. Otherwise the number of joblib workers
        (-1: all cores); the results are identical.
    progress : bool
        Show a tqdm progress bar (only if tqdm is installed).
    generator : callable, optional
        ``generator(d, rng=Generator) -> GaussianMixture``; default
        :func:`kmtests.datasets.synthetic_mixture` (the papers' generator).
    return_raw : bool
        Also return the per-repetition frame.

    Returns
    -------
    summary : pandas.DataFrame
        One row per (estimator, kernel, d, n) with columns ``repetitions``,
        ``mean_loss`` and ``se_loss`` (mean and standard error of the loss over
        the repetitions), ``ratio`` = mean loss / mean KME loss on the same
        samples and ``se_ratio`` (paired, delta method), ``mean_ratio`` and
        ``se_mean_ratio`` (the mean of the per-sample ratios),
        ``p_improve`` (the fraction of samples where the estimator's loss is
        strictly below the KME's, JMLR's "probability of improvement") and
        ``kme_risk`` (the closed-form expected KME loss Delta, averaged over
        the distributions).
        Standard errors are NaN when ``repetitions == 1``.
    raw : pandas.DataFrame
        With ``return_raw=True``: one row per (estimator, kernel, d, n,
        repetition) with ``loss``, ``loss_kme``, ``kme_risk``, ``bandwidth``
        and the estimator's scalar chosen parameters as ``param_<key>``.

    Notes
    -----
    The KME loss used in the ratios is always computed, whether or not
    ``"kme"`` is among `estimators`. The frame's ``attrs`` record the seed
    entropy and the settings.

    Examples
    --------
    >>> from kmtests.risk import risk_study
    >>> df = risk_study(["kme", "bkmse"], n=10, d=20, kernels="rbf", repetitions=5, rng=0)
    >>> for row in df.itertuples():
    ...     print(f"{row.estimator:6s} {row.mean_loss:.4f} {row.ratio:.3f}")
    kme    0.0389 1.000
    bkmse  0.0371 0.955
    """
    ests = _resolve_estimators(estimators)
    kerns = _resolve_kernels(kernels)
    ns, ds = _as_int_list(n, "n"), _as_int_list(d, "d")
    if min(ns) < 2:
        raise ValueError(f"`n` must be at least 2 (estimators need two points); got {ns}.")
    repetitions = check_positive_int(repetitions, "repetitions")
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral)
                               or n_jobs == 0):
        raise ValueError(f"`n_jobs` must be None, -1 or a positive integer; got {n_jobs!r}.")
    gen_fn = _generator(generator)
    root = _root_seed(rng)
    tasks = [(r, dd, nn) for dd in ds for nn in ns for r in range(repetitions)]
    chunks = _execute(root, tasks, (ests, kerns, gen_fn), n_jobs, progress)
    raw = _ordered(pd.DataFrame([rec for chunk in chunks for rec in chunk]),
                   [e for e, _ in ests], [k for k, _ in kerns], ds, ns)
    summary = _summarise(raw, [e for e, _ in ests], [k for k, _ in kerns], ds, ns)
    attrs = {"seed_entropy": root.entropy, "seed_spawn_key": root.spawn_key,
             "repetitions": repetitions,
             "generator": getattr(generator, "__qualname__", repr(generator))}
    summary.attrs.update(attrs)
    raw.attrs.update(attrs)
    return (summary, raw) if return_raw else summary


def _generator(generator: Any) -> Callable[..., GaussianMixture]:
    if generator is None:
        return synthetic_mixture
    if not callable(generator):
        raise TypeError("`generator` must be callable as generator(d, rng=...).")
    out: Callable[..., GaussianMixture] = generator
    return out


def _execute(root: np.random.SeedSequence, tasks: list[tuple[int, int, int]],
             args: tuple[Any, ...], n_jobs: int | None, progress: bool
             ) -> list[list[dict[str, Any]]]:
    """Every cell's records, in task order (serial or on joblib workers)."""
    bar = None
    if progress:
        try:
            from tqdm.auto import tqdm
            bar = tqdm(total=len(tasks), desc="risk study")
        except ImportError:
            bar = None
    chunks: list[list[dict[str, Any]]] = []
    if n_jobs is None:
        for r, dd, nn in tasks:
            chunks.append(_run_cell(root, r, dd, nn, *args))
            if bar is not None:
                bar.update()
    else:
        from joblib import Parallel, delayed

        out = Parallel(n_jobs=int(n_jobs), return_as="generator")(
            delayed(_run_cell)(root, r, dd, nn, *args) for r, dd, nn in tasks)
        for res in out:  # returned in task order
            chunks.append(res)
            if bar is not None:
                bar.update()
    if bar is not None:
        bar.close()
    return chunks


def _ordered(raw: pd.DataFrame, est_order: list[str], kern_order: list[str], ds: list[int],
             ns: list[int]) -> pd.DataFrame:
    """The records in the order of the estimators, kernels, dimensions and sizes given."""
    raw["_e"] = raw["estimator"].map({e: i for i, e in enumerate(est_order)})
    raw["_k"] = raw["kernel"].map({k: i for i, k in enumerate(kern_order)})
    raw["_d"] = raw["d"].map({v: i for i, v in enumerate(ds)})
    raw["_n"] = raw["n"].map({v: i for i, v in enumerate(ns)})
    return (raw.sort_values(["_e", "_k", "_d", "_n", "repetition"], kind="stable")
            .drop(columns=["_e", "_k", "_d", "_n"]).reset_index(drop=True))
