r"""Tests on data past one machine's memory: ``engine="dask-rff"`` (and
``"dask-nystrom"``) on dask arrays.

``two_sample_test(x, y, engine="dask-rff")`` and ``independence_test(x, y,
engine="dask-rff")`` take `x` and `y` as ``dask.array`` arrays (or NumPy arrays,
wrapped) of ``N`` rows that need never be in one process's memory: the random
Fourier features of the in-memory ``engine="rff"`` (the same frequencies and
phases from the same seed) are computed chunk by chunk where the chunks live, and
only ``r``-dimensional sums and ``r x r`` second moments travel
(:mod:`kmtests.engines.dask_lowrank`). The computations run on the current dask
scheduler: a ``dask.distributed.Client`` when one is active, else dask's default
(threads; ``dask.config.set(scheduler="synchronous")`` for one thread).

Why a path of its own, not the plan's engine axis: the plan's problems validate
the data in memory and its permutation method draws whole ``B x N`` arrangements
in one process (80 GB at ``N = 10^7``, ``B = 1000``). Here the data stay lazy and
the null distributes:

* two samples: the **exact permutation null drawn chunkwise** (``method=None`` or
  ``"permutation"``): the number of first-sample points in each chunk from the
  multivariate hypergeometric law, then each chunk's subset from the chunk's own
  seeded stream. Every split of the ``N`` points is equally likely, so the p-value
  is exact for the approximate statistic, and it is the same for a seed whatever
  the number of workers (the chunk sums are added in a tree fixed by the chunks).
  The draws are not those of the in-memory permutation method: for the same seed
  the *statistic* equals ``engine="rff"``'s (to rounding) but the p-value is an
  independent draw of the same permutation test.
* independence: the **weighted chi-square (spectral) null** of ``HSIC_b``
  (``method=None`` or ``"chi2"``): weights ``lambda_a mu_b / N`` from the
  eigenvalues of the two ``r x r`` feature covariances, ``n_resamples`` draws of
  the weighted sum from `rng`. Approximate (asymptotic), deterministic given the
  seed; a permutation of the pairing would pair every chunk with every other.

What differs from ``engine="rff"``: the median-heuristic bandwidth is computed on
:data:`~kmtests.kernels.MEDIAN_MAX_POINTS` rows drawn *by position* with a fixed
seed (the in-memory engine sorts the sample first, which does not distribute; the
permutation test stays exact, as the rows are drawn independently of the labels);
pass a number as the bandwidth to get the in-memory engine's features exactly.
``engine="dask-nystrom"`` (:class:`DaskNystrom`) uses Nyström features instead: its
``n_features`` landmarks are rows drawn *by position* from the child generator
``"features"`` (``engine="nystrom"`` draws them from the sorted sample, which does not
distribute), any kernel computed from the data; with every point a landmark its
statistic is the exact engine's.
The kernels are those with random Fourier features (``"gaussian"``, ``"ard"``,
``"laplacian"``); the estimators those with uniform weights (``kme``, ``skmse``,
``bkmse``) for two samples and the KME for independence. Any other option of the
faces is refused with a message.

Examples
--------
>>> import dask
>>> import dask.array as da
>>> from kmtests import two_sample_test
>>> from kmtests.scaleout import DaskRFF
>>> x = da.random.default_rng(0).normal(size=(20000, 3), chunks=5000)
>>> y = da.random.default_rng(1).normal(size=(20000, 3), chunks=5000) + 0.05
>>> with dask.config.set(scheduler="synchronous"):
...     res = two_sample_test(x, y, engine=DaskRFF(n_features=50, chunk_rows=8192),
...                           n_resamples=99, rng=1)
>>> res.engine, res.pvalue
('dask-rff', 0.01)
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import numpy as np

from ._guards import format_bytes
from ._rng import child, generator, seed_of
from ._validation import check_positive_int
from .engines import Engine
from .engines.dask_lowrank import (CHUNK_ROWS, FeatureMap, NystromMap, as_rows, centring,
                                   dask_array, feature_map, hsic_sums, landmarks, mmd_sums,
                                   split_counts)
from .engines.lowrank import DEFAULT_FEATURES, RFF_KERNELS, rff_frequencies
from .engines.mmd import SplitSums, mmd_uniform
from .estimators import KME, resolve_estimator
from .estimators._rules import Uniform
from .null.chi2 import WeightedChiSquare
from .null.permutation import PermutationMethod, pvalue_upper, tie_tolerance

__all__ = ["DASK_ENGINES", "DaskNystrom", "DaskRFF", "dask_engine", "run_on_dask"]

#: chi-square draws per step (as :mod:`kmtests.null.chi2`): `n_resamples` cuts the stream only
_DRAW = 256
#: chi-square weights below this share of the largest are dropped (as the in-memory null)
_RELATIVE = 1e-12


class DaskRFF(Engine):
    """``engine="dask-rff"``: random Fourier features on dask arrays (see the module docs).

    Not in :data:`kmtests.engines.ENGINES`: the faces hand a test with this engine to
    :func:`run_on_dask` before the plan (whose problems hold the data in memory).

    Parameters
    ----------
    n_features : int, optional
        The number of random Fourier features (default 200, as ``engine="rff"``).
    chunk_rows : int, optional
        Rows per chunk (default 32768). The data are rechunked to it; the chunkwise
        permutations of the two-sample test depend on it (and on N and the seed) only.
    """

    name: ClassVar[str] = "dask-rff"
    #: what the features approximate the kernel by (for the report)
    what: ClassVar[str] = "random Fourier"
    approximate: ClassVar[bool] = True
    holds_features: ClassVar[bool] = True
    options: ClassVar[tuple[str, ...]] = ("n_features", "chunk_rows")

    def __init__(self, n_features: int | None = None, chunk_rows: int = CHUNK_ROWS,
                 note: str = "") -> None:
        super().__init__(note)
        self.n_features = (None if n_features is None
                           else check_positive_int(n_features, "n_features"))
        self.chunk_rows = check_positive_int(chunk_rows, "chunk_rows")

    @property
    def r(self) -> int:
        return DEFAULT_FEATURES if self.n_features is None else int(self.n_features)

    def supports(self, req: Any) -> str | None:
        return (f"engine={self.name!r} runs two_sample_test and independence_test on dask "
                f"arrays (kmtests.scaleout); elsewhere use engine={self.name[5:]!r}.")

    def memory(self, req: Any, n: int, dims: Mapping[str, int],
               batch: int) -> tuple[float, str, str]:
        """What one task holds: a chunk's features and one block of 64 split masks."""
        rows = min(n, self.chunk_rows)
        need = 8.0 * rows * (sum(dims.values()) + 2 * (self.r + 2) + 64) + 8.0 * batch * self.r
        return (need, f"a {self.name} task on {rows} rows takes {format_bytes(need)}",
                "Use smaller chunks (`chunk_rows`) or fewer features (`n_features`).")

    def feature_map(self, kernel: Any, z: Any, centre: tuple[np.ndarray, np.ndarray],
                    gen: np.random.Generator) -> Any:
        """The features of `z` (their mean computed over it), drawn from `gen`."""
        W, b = rff_frequencies(kernel, z.shape[1], self.r, gen)
        return feature_map(z, FeatureMap(W, b, *centre))

    def info(self, fmaps: list[Any]) -> str:
        """``engine_info``: the features and the rank."""
        each = " each" if len(fmaps) > 1 else ""
        return f"{self.r} features{each}, rank {self.r}, approximate statistic"


class DaskNystrom(DaskRFF):
    """``engine="dask-nystrom"``: Nyström features on dask arrays, any kernel computed
    from the data (see the module docs): ``n_features`` landmarks drawn by position
    (default 200)."""

    name: ClassVar[str] = "dask-nystrom"
    what: ClassVar[str] = "Nyström"

    def feature_map(self, kernel: Any, z: Any, centre: tuple[np.ndarray, np.ndarray],
                    gen: np.random.Generator) -> Any:
        return feature_map(z, NystromMap.of(kernel, landmarks(z, self.r, gen)))

    def info(self, fmaps: list[Any]) -> str:
        each = " each" if len(fmaps) > 1 else ""
        ranks = sorted({int(f.r) for f in fmaps})
        rank = "/".join(str(f.r) for f in fmaps) if len(ranks) > 1 else str(ranks[0])
        return (f"{int(fmaps[0].landmarks.shape[0])} landmarks{each}, rank {rank}, "
                "approximate statistic")


#: the dask engines by name
DASK_ENGINES: dict[str, type[DaskRFF]] = {"dask-rff": DaskRFF, "dask-nystrom": DaskNystrom}


def dask_engine(engine: Any) -> bool:
    """Whether the face's `engine` asks for the dask path."""
    return isinstance(engine, DaskRFF) or (isinstance(engine, str)
                                           and engine.lower() in DASK_ENGINES)


#: the face keywords the dask path reads (the rest must be left at their defaults)
_READS: dict[str, tuple[str, ...]] = {
    "two_sample": ("kernel", "bandwidth", "estimator", "statistic", "method", "n_resamples",
                   "rng", "engine", "n_features", "data_name"),
    "independence": ("kernel_x", "kernel_y", "bandwidth_x", "bandwidth_y", "estimator",
                     "statistic", "method", "n_resamples", "rng", "engine", "n_features",
                     "data_name"),
}


def _refuse_others(kind: str, keywords: Mapping[str, Any], sig: inspect.Signature) -> None:
    for key, value in keywords.items():
        p = sig.parameters.get(key)
        if key in _READS[kind] or p is None or value is None:
            continue
        default = p.default
        if value is default or (isinstance(value, str) and value == default):
            continue
        raise ValueError(f"the dask engines do not take `{key}`: they run the low-rank "
                         "statistic on dask arrays with its own null (see "
                         "kmtests.scaleout); leave `{key}` at its default or use "
                         "engine='rff' on data in memory.".replace("{key}", key))


def _fitted(kernel: Any, z: Any, name: str, notes: list[str], engine: DaskRFF) -> Any:
    """`kernel` with its bandwidth resolved on rows of `z` drawn by position (fixed seed)."""
    from .kernels import _MEDIAN_SEED, MEDIAN_MAX_POINTS

    if not isinstance(engine, DaskNystrom) and getattr(kernel, "name", "") not in RFF_KERNELS:
        raise ValueError("engine='dask-rff' draws random Fourier features of the Gaussian, "
                         "ARD Gaussian and Laplacian kernels; the "
                         f"{getattr(kernel, 'name', type(kernel).__name__)} kernel has none "
                         "here. Use engine='dask-nystrom', which approximates any kernel.")
    if kernel.is_fitted:
        return kernel
    n = z.shape[0]
    if n > MEDIAN_MAX_POINTS:
        idx = np.sort(np.random.default_rng(_MEDIAN_SEED).choice(n, MEDIAN_MAX_POINTS,
                                                                  replace=False))
        sub = np.asarray(z[idx].compute())
        notes.append(f"the median-heuristic bandwidth of {name} was computed on "
                     f"{MEDIAN_MAX_POINTS} rows drawn by position (fixed seed), not on "
                     "the in-memory engines' sorted subsample")
    else:
        sub = np.asarray(z.compute())
    return kernel.fitted_to(sub, name=name)


@dataclass(frozen=True)
class _Pooled:
    """What :func:`kmtests.engines.mmd.mmd_uniform` reads of the pooled source."""

    n: int
    g: float
    kc_max: float
    r_max: float


def _check_method(method: Any, allowed: str) -> None:
    if method is None or (isinstance(method, str) and method == allowed):
        return
    raise ValueError(f"the dask engines run method={allowed!r} here (their null that "
                     f"distributes); got method={method!r}.")


def _statistic(kind: str, name: Any, kernels: Mapping[str, Any], est: Any) -> Any:
    from .statistics import resolve_statistic

    return resolve_statistic(name, kind, kernels=kernels, estimator=est, options={})


def run_on_dask(problem_cls: Any, data: tuple[Any, ...], keywords: Mapping[str, Any],
                sig: inspect.Signature) -> Any:
    """Run the face's test on dask arrays (see the module docs)."""
    kind = problem_cls.kind
    _refuse_others(kind, keywords, sig)
    engine = keywords["engine"]
    given = keywords.get("n_features")
    if isinstance(engine, DaskRFF):
        if given is not None:
            raise ValueError("give `n_features` to the engine object, not to the test "
                             f"(engine={engine!r}).")
    else:
        engine = DASK_ENGINES[engine.lower()](n_features=given)
    for kern in problem_cls.kernels(keywords, data).values():
        if getattr(kern, "name", "") == "precomputed":
            raise ValueError(f"engine={engine.name!r} computes features from the data; with a "
                             "precomputed Gram matrix use engine='exact'.")
    if kind == "two_sample":
        return _two_sample(problem_cls, data, keywords, engine)
    return _independence(problem_cls, data, keywords, engine)


def _two_sample(problem_cls: Any, data: tuple[Any, ...], kw: Mapping[str, Any],
                engine: DaskRFF) -> Any:
    da = dask_array()
    _check_method(kw.get("method"), "permutation")
    est = resolve_estimator(kw.get("estimator", "kme"))
    rule = est.rule()
    if not isinstance(rule, Uniform):
        raise ValueError(f"engine={engine.name!r} runs the estimators with uniform weights (kme, "
                         "skmse, bkmse, ...); per-point weights need engine='rff' or "
                         "'exact'.")
    x, y = (as_rows(a, n, engine.chunk_rows) for a, n in zip(data, ("x", "y")))
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"`x` and `y` must have the same number of columns; got "
                         f"{x.shape[1]} and {y.shape[1]}.")
    n_x, n_y = int(x.shape[0]), int(y.shape[0])
    if n_x < 2 or n_y < 2:
        raise ValueError(f"each sample must have at least 2 observations; got {n_x} and "
                         f"{n_y}.")
    z = da.concatenate([x, y]).rechunk((engine.chunk_rows, x.shape[1]))
    notes: list[str] = []
    centre = centring(z, "the pooled sample")  # first: it checks the data are finite
    kernels = problem_cls.kernels(kw, data)
    kernels = {"kernel": _fitted(kernels["kernel"], z, "the pooled sample", notes, engine)}
    stat = _statistic("two_sample", kw.get("statistic") or problem_cls.default_statistic(est),
                      kernels, est)
    unbiased = bool(stat.unbiased)
    B = int(kw.get("n_resamples") or 9999)
    rng = kw.get("rng")
    gen = generator(rng)
    fmap = engine.feature_map(kernels["kernel"], z, centre, child(gen, "features"))
    sizes = [int(c) for c in z.chunks[0]]
    counts = split_counts(sizes, n_x, B, gen)
    seq = gen.bit_generator.seed_seq
    if not isinstance(seq, np.random.SeedSequence):  # a bit generator seeded without one
        seq = np.random.SeedSequence(int(gen.integers(2**63)))
    sums = mmd_sums(z, fmap, n_x, counts, seq)
    s = np.einsum("ij,ij->i", sums.S, sums.S)
    split = SplitSums(s, sums.t_x, sums.T - sums.t_x, sums.rsum_x / n_x,
                      (sums.R - sums.rsum_x) / n_y)
    g = float(fmap.mean @ fmap.mean)
    vals = mmd_uniform(_Pooled(n_x + n_y, g, sums.kc_max, sums.r_max), split, n_x, rule,
                       unbiased)
    t_obs = float(vals.stat[0])
    null = np.asarray(vals.stat[1:])
    tol = tie_tolerance(float(vals.scale[0]), vals.scale[1:])
    p, count = pvalue_upper(t_obs, null, False, tol)
    method = PermutationMethod(n_resamples=B, rng=rng)
    notes.append(f"approximate statistic: {stat.label()} of the {engine.what} "
                 "approximation of the kernel; the permutation p-value is exact for this "
                 f"statistic, not for the kernel's own; the {B} permutations were drawn "
                 f"chunkwise ({len(sizes)} chunks of {engine.chunk_rows} rows)")
    return _result(problem_cls, kw, stat, method, kernels, t_obs, p, null, B, count,
                   {"n_x": n_x, "n_y": n_y}, notes, engine, engine.info([fmap]),
                   {"chunks": len(sizes), "chunk_rows": engine.chunk_rows})


def _independence(problem_cls: Any, data: tuple[Any, ...], kw: Mapping[str, Any],
                  engine: DaskRFF) -> Any:
    _check_method(kw.get("method"), "chi2")
    est = resolve_estimator(kw.get("estimator", "kme"))
    if not isinstance(est, KME):
        raise ValueError(f"engine={engine.name!r} runs the KME's HSIC_b with the chi-square null "
                         "(estimator='kme').")
    name = kw.get("statistic") or "biased"
    if name != "biased":
        raise ValueError(f"engine={engine.name!r} computes HSIC_b (statistic='biased'), whose "
                         "weighted chi-square null distributes.")
    x, y = (as_rows(a, n, engine.chunk_rows) for a, n in zip(data, ("x", "y")))
    n = int(x.shape[0])
    if int(y.shape[0]) != n:
        raise ValueError(f"`x` and `y` must have the same number of observations (pairs); "
                         f"got {n} and {int(y.shape[0])}.")
    if n < 4:
        raise ValueError(f"the independence test needs at least 4 pairs; got {n}.")
    notes: list[str] = []
    centres = centring(x, "x"), centring(y, "y")  # first: they check the data are finite
    kernels = problem_cls.kernels(kw, data)
    kernels = {"x": _fitted(kernels["x"], x, "x", notes, engine),
               "y": _fitted(kernels["y"], y, "y", notes, engine)}
    stat = _statistic("independence", "biased", kernels, est)
    B = int(kw.get("n_resamples") or 9999)
    rng = kw.get("rng")
    gen = generator(rng)
    # one child generator per variable, by position (engine='rff' assigns them by the
    # content of the data: the same draws when content_key(x) <= content_key(y))
    gx, gy = child(gen, "features").spawn(2)
    fx = engine.feature_map(kernels["x"], x, centres[0], gx)
    fy = engine.feature_map(kernels["y"], y, centres[1], gy)
    sums = hsic_sums(x, y, fx, fy)
    t_obs = float(np.einsum("ij,ij->", sums.C, sums.C)) / n**2
    lam = np.clip(np.linalg.eigvalsh(sums.Gx), 0.0, None) / n
    mu = np.clip(np.linalg.eigvalsh(sums.Gy), 0.0, None) / n
    w = np.sort(np.outer(lam, mu).ravel())[::-1] / n
    w = w[w > w[0] * _RELATIVE] if w.size and w[0] > 0 else w[:0]
    null = np.empty(B)
    for start in range(0, B, _DRAW):
        k = min(_DRAW, B - start)
        null[start:start + k] = gen.chisquare(1.0, size=(k, w.size)) @ w
    p, count = pvalue_upper(t_obs, null, False, 0.0)
    method = WeightedChiSquare(n_resamples=B, rng=rng)
    notes.append(f"approximate statistic: HSIC_b of the {engine.what} approximation of "
                 "the kernels; approximate (asymptotic) p-value from the weighted "
                 "chi-square law with the eigenvalues of the two feature covariances")
    return _result(problem_cls, kw, stat, method, kernels, t_obs, p, null, B, count,
                   {"n": n}, notes, engine, engine.info([fx, fy]),
                   {"chi2_terms": int(w.size), "null_mean": float(w.sum()),
                    "null_var": float(2.0 * np.sum(w * w)), "chunks": len(x.chunks[0]),
                    "chunk_rows": engine.chunk_rows})


def _result(problem_cls: Any, kw: Mapping[str, Any], stat: Any, method: Any,
            kernels: Mapping[str, Any], t_obs: float, p: float, null: np.ndarray, B: int,
            count: int, sizes: dict[str, int], notes: list[str], engine: DaskRFF,
            info: str, details: dict[str, Any]) -> Any:
    from .results import result_class

    label = stat.label()
    form = "U" if stat.unbiased else "V"
    cls = result_class(problem_cls.kind, False)
    return cls(statistic=t_obs, pvalue=p, null_distribution=null, method=method, exact=False,
               n_resamples=B, count=count, statistic_name=label, family=stat.family(),
               statistic_description=f"{label} ({form}-statistic)", estimator=stat.estimator,
               params={}, kernels=dict(kernels), sizes=sizes, seed=seed_of(kw.get("rng")),
               tuning="permutation", data_name=kw.get("data_name") or "x and y",
               details=details, columns={}, labels=("x", "y"), notes=tuple(notes),
               kernel_notes={}, engine=engine.name,
               engine_info=info, _witness=None)
