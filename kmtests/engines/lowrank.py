r"""Low-rank statistics: the MMD and HSIC of an approximate kernel ``Phi Phi'``.

A feature map ``Phi`` (``N x r``) is computed once, from the test's random
generator, on the *pooled* sample (two-sample test) or on each variable
(independence test) — never from the labels or the pairing — so permuting
them leaves it unchanged and the permutation test of the approximate
statistic is exact. Two maps:

* **Nyström** (:func:`nystrom_features`): ``m`` landmarks drawn without
  replacement, ``Phi = K_nm U diag(s^-1/2)`` from the eigendecomposition
  ``K_mm = U diag(s) U'``, eigenvalues below ``_RTOL`` times the largest
  dropped (the rank used is reported); any kernel. With every point as a
  landmark, ``Phi Phi' = K`` up to the dropped eigenvalues.
* **Random Fourier features** (:func:`rff_features`):
  ``Phi = sqrt(2/r) cos(X W + b)`` with ``b ~ U[0, 2 pi)`` and the columns of
  ``W`` drawn from the kernel's spectral density at its fitted bandwidth:
  normal for the Gaussian (and ARD Gaussian) kernel, multivariate Cauchy for
  the Laplacian kernel ``exp(-||x - y||/bandwidth)``.

``Phi`` is centred over its points (``Phi_c = H Phi``, so ``Phi_c Phi_c' =
H Phi Phi' H``, the centred Gram matrix the exact engines use); the mean
row ``m`` gives the offsets ``r_i = phi_c,i' m + |m|^2`` and ``g = |m|^2`` of
the uncentred approximate kernel, which the shrinkage estimators need.

Statistics, for a batch of splits with 0/1 membership rows ``A`` (``B x N``):
``S = A Phi_c`` (BLAS products over row blocks of the features, each read
once per chunk of 64 splits; ``2 B N r`` flops) gives the within-sample
sums ``s = a'Kc a = ||S_b||^2`` of the in-memory engine
(:mod:`kmtests.engines.mmd`), whose formulas then give ``MMD^2_b``,
``MMD^2_u`` (the diagonal terms ``||phi_c,i||^2`` removed within each sample)
and the uniform-weight estimators. For HSIC and a permutation ``p`` of the
pairing, ``S_p = ||Phi_x' Phi_y[p]||_F^2`` (``2 n r_x r_y`` flops) and
``D_p = sum_i ||phi_x,i||^2 ||phi_y,p_i||^2`` are the two sums of
:mod:`kmtests.engines.hsic`. Both are computed in fixed-shape chunks whose
boundaries depend on ``N`` only, so a statistic's bits do not depend on the
batch of permutations it came in. The products run on single-threaded BLAS,
spread over `n_jobs` threads (row blocks for the MMD, permutations for
HSIC): the values do not depend on `n_jobs` either.

Examples
--------
>>> import numpy as np
>>> from kmtests.kernels import Gaussian
>>> z = np.random.default_rng(0).normal(size=(50, 2))
>>> f = nystrom_features(Gaussian(1.0), z, 50, np.random.default_rng(1))
>>> K = Gaussian(1.0).gram(z)
>>> Kc = K - K.mean(0) - K.mean(1)[:, None] + K.mean()
>>> bool(np.allclose(f.phi @ f.phi.T, Kc, atol=1e-8))
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np

from .. import _guards
from .._guards import format_bytes
from .._rng import child
from .._validation import check_positive_int
from ..estimators._rules import General, Rule, Uniform
from ..kernels import _centred
from ..problems.data import content_key
from ._base import Engine, Requirements
from ._loop import map_items, map_rows_multi
from ._values import Values
from .hsic import hsic_uniform
from .mmd import general_pieces, mmd_uniform, split_sums
from .tiles import KernelTiles

__all__ = ["AUTO_TRACE_SHARE", "DEFAULT_FEATURES", "Features", "FeaturePooled", "LowRankPair", "Nystrom", "RFF",
           "RFF_KERNELS", "check_rff_kernel", "feature_map",
           "lowrank_hsic_values", "lowrank_mmd_general", "lowrank_mmd_values", "nystrom_features", "oriented",
           "rff_features", "rff_frequencies", "rff_rows"]

#: eigenvalues of K_mm below this share of the largest are dropped (Nystrom)
_RTOL = 1e-12
#: rows per chunk of the feature computations and of the HSIC products
_ROWS = 8192
#: splits per chunk of the MMD products (fixed: the call shapes must not depend on `batch`)
_CHUNK = 64
#: the kernels with random Fourier features here
RFF_KERNELS: tuple[str, ...] = ("gaussian", "ard", "laplacian")


@dataclass(frozen=True, eq=False)
class Features:
    """A feature map on a set of points, centred over them.

    Attributes
    ----------
    phi : ndarray, shape (N, rank)
        The centred features ``H Phi``.
    mean : ndarray, shape (rank,)
        The mean feature vector that was removed.
    method : str
        ``"nystrom"`` or ``"rff"``.
    n_features : int
        The number of features drawn (landmarks or frequencies).
    rank : int
        The number of columns kept (Nyström: the eigenvalues above the tolerance).
    a, c : ndarray or None, float
        The offsets ``K = P + a 1' + 1 a' + c`` of the kernel relative to the
        positive semi-definite ``P`` the features approximate (linear and distance
        kernels: ``P`` is computed from the centred data; see
        :mod:`kmtests.engines.tiles`). They vanish from every KME statistic.
    trace_share : float or None
        Nyström with a rank read off the spectrum: the share of the trace of the
        landmarks' Gram matrix that the kept eigenvalues hold at least (None: every
        eigenvalue above the tolerance kept).
    """

    phi: np.ndarray
    mean: np.ndarray
    method: str
    n_features: int
    rank: int
    a: np.ndarray | None = None
    c: float = 0.0
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)
    trace_share: float | None = None

    @classmethod
    def centred(cls, phi: np.ndarray, method: str, n_features: int,
                a: np.ndarray | None = None, c: float = 0.0,
                trace_share: float | None = None) -> "Features":
        """From uncentred features (centred in place); `a`, `c` the offsets of the kernel
        relative to the one the features approximate (``K = P + a1' + 1a' + c``,
        :mod:`kmtests.engines.tiles`)."""
        mean = phi.mean(axis=0)
        phi -= mean
        return cls(phi, mean, method, n_features, phi.shape[1], a, c,
                   trace_share=trace_share)

    @property
    def n(self) -> int:
        return self.phi.shape[0]

    @property
    def sqnorms(self) -> np.ndarray:
        """``||phi_c,i||^2``: the diagonal of the centred approximate Gram matrix."""
        if "sq" not in self._cache:
            self._cache["sq"] = np.einsum("ij,ij->i", self.phi, self.phi)
        out: np.ndarray = self._cache["sq"]
        return out

    @property
    def kc_max(self) -> float:
        """``max |Kc|`` of the centred Gram matrix: its largest diagonal entry (PSD)."""
        return float(self.sqnorms.max()) if self.n else 0.0

    def gram(self) -> np.ndarray:
        """The approximate Gram matrix ``Phi Phi'`` (N x N; for checks)."""
        full = self.phi + self.mean
        return full @ full.T


def nystrom_features(kernel: Any, z: np.ndarray, n_features: int,
                     rng: np.random.Generator, trace_share: float | None = None) -> Features:
    """Nyström features of `z` with `n_features` landmarks drawn from `z` by `rng`.

    `kernel` must be fitted (its bandwidth resolved). The landmarks are drawn
    from the points in lexicographic order, so they are a function of the *set*
    of points and of `rng` (a permutation test that rearranges the points keeps
    the same features: exact). The kernel is evaluated through
    :class:`~kmtests.engines.tiles.KernelTiles` (the linear and distance kernels
    from the centred data). Eigenvalues of the landmarks' Gram matrix below
    ``_RTOL`` times the largest are dropped: ``Features.rank`` may be smaller
    than `n_features`. With `trace_share` (the default engine's
    :data:`AUTO_TRACE_SHARE`), only the top eigenpairs whose eigenvalues sum to at
    least that share of the trace of the landmarks' Gram matrix are kept: the best
    approximation of that rank of the landmarks' Nyström kernel, whose dropped
    eigenvalues sum to at most ``1 - trace_share`` of its trace.
    """
    z = np.ascontiguousarray(z, dtype=np.float64)
    n = z.shape[0]
    m = min(int(n_features), n)
    tiles = KernelTiles(kernel, z)
    order = np.lexsort(tiles.z.T[::-1]) if z.shape[1] else np.arange(n)
    # landmarks in lexicographic order of their values: canonical, whatever the rows' order
    idx = order[np.sort(rng.choice(n, size=m, replace=False))]
    Kmm = tiles.psd(idx, idx)
    Kmm = 0.5 * (Kmm + Kmm.T)
    s, U = np.linalg.eigh(Kmm)
    top = float(s[-1]) if s.size else 0.0
    if not top > 0.0:
        raise ValueError(f"the Nyström landmarks' Gram matrix of {kernel.phrase()} has no "
                         "positive eigenvalue; the approximate kernel would be 0.")
    keep = s > _RTOL * top
    if trace_share is not None:
        # eigenvalues ascending: keep the shortest top run with share >= trace_share
        tail = np.cumsum(np.where(keep, s, 0.0)[::-1])
        rank = int(np.searchsorted(tail, trace_share * tail[-1]) + 1)
        keep &= np.arange(s.size) >= s.size - rank
    T = U[:, keep] / np.sqrt(s[keep])
    phi = np.empty((n, T.shape[1]))
    for a in range(0, n, _ROWS):
        b = min(a + _ROWS, n)
        np.matmul(tiles.psd(np.arange(a, b), idx), T, out=phi[a:b])
    # the landmarks' rows from K_mm itself: a cross Gram matrix may put a rounding
    # distance between a point and itself
    phi[idx] = Kmm @ T
    if not np.all(np.isfinite(phi)):
        raise ValueError(f"{kernel.phrase()} has non-finite values between the points and "
                         "the Nyström landmarks.")
    return Features.centred(phi, "nystrom", m, tiles.a, tiles.c, trace_share=trace_share)


def check_rff_kernel(kernel: Any) -> None:
    """Raise unless `kernel` has random Fourier features here (:data:`RFF_KERNELS`)."""
    name = getattr(kernel, "name", type(kernel).__name__)
    if name not in RFF_KERNELS:
        raise ValueError(
            f"engine='rff' draws random Fourier features of the Gaussian, ARD Gaussian and "
            f"Laplacian kernels (kernel='gaussian', 'ard' or 'laplacian'); the {name} kernel "
            "has none here. Use engine='nystrom', which approximates any kernel.")


def rff_frequencies(kernel: Any, d: int, n_features: int, rng: np.random.Generator
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``(W, b)`` of the random Fourier features of a fitted Gaussian, ARD Gaussian or
    Laplacian kernel on `d` columns: frequencies ``W`` (``d x r``) from the kernel's
    spectral density at its bandwidth, phases ``b ~ U[0, 2 pi)``, drawn from `rng` in
    this order (the engines on dask arrays draw the same ones)."""
    check_rff_kernel(kernel)
    r = int(n_features)
    bw = kernel.bandwidth_values(d)
    W = rng.standard_normal((d, r))
    if kernel.name == "laplacian":  # multivariate Cauchy: a normal over |N(0, 1)|
        W /= np.abs(rng.standard_normal(r))[None, :]
    W /= bw[:, None]
    b = rng.uniform(0.0, 2.0 * np.pi, size=r)
    return W, b


def rff_rows(zc: np.ndarray, W: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``sqrt(2/r) cos(zc W + b)`` of the centred rows `zc` into `out` (``rows x r``),
    ``_ROWS`` rows per product: a row's features do not depend on the rows around it."""
    c = np.sqrt(2.0 / W.shape[1])
    for a in range(0, zc.shape[0], _ROWS):
        e = min(a + _ROWS, zc.shape[0])
        blk = out[a:e]
        np.matmul(zc[a:e], W, out=blk)
        blk += b
        np.cos(blk, out=blk)
        blk *= c
    return out


def rff_features(kernel: Any, z: np.ndarray, n_features: int,
                 rng: np.random.Generator) -> Features:
    """Random Fourier features ``sqrt(2/r) cos(z W + b)`` of a fitted Gaussian, ARD
    Gaussian or Laplacian kernel (see the module docs)."""
    z = np.asarray(z, dtype=np.float64)
    W, b = rff_frequencies(kernel, z.shape[1], n_features, rng)
    zc, _ = _centred(z)  # two-pass centring: a translation of the data leaves no trace
    phi = rff_rows(zc, W, b, np.empty((z.shape[0], W.shape[1])))
    return Features.centred(phi, "rff", W.shape[1])


def feature_map(method: str, kernel: Any, z: np.ndarray, n_features: int,
                rng: np.random.Generator) -> Features:
    """The ``"nystrom"`` or ``"rff"`` features of `z` (see the module docs)."""
    if method == "nystrom":
        return nystrom_features(kernel, z, n_features, rng)
    if method == "rff":
        return rff_features(kernel, z, n_features, rng)
    raise ValueError(f"unknown low-rank method {method!r}; expected 'nystrom' or 'rff'.")


@dataclass(frozen=True, eq=False)
class FeaturePooled:
    """The pooled sample's features, in the part of :class:`kmtests.engines.mmd.PooledGram`
    that the uniform-weight statistics use (``r``, ``g``, ``kc_max``, ``r_max``,
    ``diag_c``, ``within_sums``)."""

    f: Features

    @property
    def n(self) -> int:
        return self.f.n

    @property
    def _abar(self) -> float:
        return float(self.f.a.mean()) if self.f.a is not None and self.f.n else 0.0

    @property
    def g(self) -> float:
        return float(self.f.mean @ self.f.mean) + 2.0 * self._abar + self.f.c

    @property
    def r(self) -> np.ndarray:
        if "r" not in self.f._cache:
            gp = float(self.f.mean @ self.f.mean)
            r = self.f.phi @ self.f.mean + gp
            if self.f.a is not None:
                r = r + self.f.a + self._abar + self.f.c
            self.f._cache["r"] = r
        out: np.ndarray = self.f._cache["r"]
        return out

    @property
    def info(self) -> str:
        return _info(self.f.method, [self.f])

    @property
    def r_max(self) -> float:
        return float(np.max(np.abs(self.r))) if self.n else 0.0

    @property
    def kc_max(self) -> float:
        return self.f.kc_max

    @property
    def diag_c(self) -> np.ndarray:
        return self.f.sqnorms

    def within_sums(self, perms: np.ndarray, n_x: int, n_jobs: int | None = None
                    ) -> np.ndarray:
        """``a'Kc a = ||a'Phi_c||^2`` for every split (x = the first `n_x` entries)."""
        return _within_sums(self.f.phi, perms, n_x, n_jobs)


def _within_sums(phi: np.ndarray, perms: np.ndarray, n_x: int,
                 n_jobs: int | None = None) -> np.ndarray:
    """``||a'Phi||^2`` of every split, in fixed-shape chunks of ``_CHUNK`` splits.

    A chunk's memberships are a 0/1 byte mask (``_CHUNK x N``); the product
    ``A Phi`` is summed over row blocks of ``_ROWS`` points (each block's rows
    of the mask converted to float64, one ``_CHUNK x _ROWS x r`` BLAS product,
    the blocks spread over the threads), then the partial sums are added in
    block order: the features are read once per chunk of splits, and a split's
    bits depend on ``N`` only.
    """
    n, r = phi.shape
    starts = list(range(0, n, _ROWS))
    out = np.empty(perms.shape[0])
    mask = np.empty((_CHUNK, n), dtype=np.uint8)
    for start in range(0, perms.shape[0], _CHUNK):
        stop = min(start + _CHUNK, perms.shape[0])
        mask.fill(0)
        mask[np.arange(stop - start)[:, None], perms[start:stop, :n_x]] = 1

        def block(a: int) -> np.ndarray:
            b = min(a + _ROWS, n)
            part: np.ndarray = mask[:, a:b].astype(np.float64) @ phi[a:b]
            return part

        parts = map_items(block, starts, n_jobs)
        S = parts[0]
        for part in parts[1:]:
            S += part
        out[start:stop] = np.einsum("ij,ij->i", S, S)[: stop - start]
    return out


def lowrank_mmd_values(fp: FeaturePooled, perms: np.ndarray, n_x: int, rule: Rule,
                       unbiased: bool, n_jobs: int | None = None) -> Values:
    """MMD^2 (V- or U-form) of every split in `perms` on the approximate kernel.

    Uniform rules: the formulas of :func:`kmtests.engines.mmd.mmd_uniform`, from the
    features' within-sample sums; general rules: :func:`lowrank_mmd_general`.
    """
    if isinstance(rule, General):
        return lowrank_mmd_general(fp, perms, n_x, rule, n_jobs, unbiased)[0]
    return mmd_uniform(fp, split_sums(fp, perms, n_x, n_jobs), n_x, rule, unbiased)


def lowrank_mmd_general(fp: FeaturePooled, perms: np.ndarray, n_x: int, rule: General,
                        n_jobs: int | None = None, unbiased: bool = False
                        ) -> tuple[Values, list[dict[str, Any]]]:
    """MMD^2 with per-sample weights on the approximate kernel ``Phi Phi'``, split by split.

    The formulas of :func:`kmtests.engines.mmd.mmd_general` with the features in
    place of the Gram matrix: each sample's weights from its uncentred features
    (``rule.features``, r x r eigenproblems: O(n r^2) a sample instead of O(n^3)),
    the quadratic forms from the centred embeddings ``Phi_c' b`` (O(n r)). Indices
    are sorted within each sample, so a split's value does not depend on its order;
    the features are drawn once on the pooled sample, so the test stays exact.
    """
    f = fp.f
    if rule.features is None:
        raise ValueError("this estimator has no feature form; use engine='exact'.")
    phi, m, r, g, sq = f.phi, f.mean, fp.r, fp.g, f.sqnorms
    n_y = f.n - n_x
    a = (n_x / (n_x - 1), n_y / (n_y - 1))
    weights = rule.features

    def one(p: np.ndarray) -> tuple[float, float, dict[str, Any]]:
        ix, iy = np.sort(p[:n_x]), np.sort(p[n_x:])
        px, py = phi[ix], phi[iy]
        bx, parx = weights(px + m)
        by, pary = weights(py + m)
        ex, ey = px.T @ bx, py.T @ by
        quad = (float(ex @ ex), float(ey @ ey), float(ex @ ey))
        return (*general_pieces(bx, by, quad, (sq[ix], sq[iy]), (r[ix], r[iy]), g,
                                f.kc_max, a, unbiased), {"x": parx, "y": pary})

    rows = map_rows_multi(one, perms, n_jobs)
    return (Values(np.array([u[0] for u in rows]), np.array([u[1] for u in rows])),
            [u[2] for u in rows])


def _key(f: Features) -> tuple[float, float, float]:
    """:func:`kmtests.engines.hsic._key` of ``Phi_c Phi_c'`` from the features:
    ``(||Kc||_F^2, tr Kc, max Kc)`` with ``max Kc`` on the diagonal (PSD)."""
    G = f.phi.T @ f.phi
    return (float(np.einsum("ij,ij->", G, G)), float(f.sqnorms.sum()), f.kc_max)


def oriented(fx: Features, fy: Features) -> tuple[Features, Features]:
    """The pair in the canonical order of :meth:`kmtests.engines.hsic.PairedGrams.oriented`
    (the second one is permuted), so a test does not depend on argument order."""
    return (fy, fx) if _key(fy) < _key(fx) else (fx, fy)


def _pair_sums(fx: Features, fy: Features, perms: np.ndarray,
               n_jobs: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(S_p, D_p)`` of every permutation `p` of the rows of `fy` (one thread each)."""
    n = fx.n
    px, py = fx.phi, fy.phi

    def one(k: int) -> float:
        p = perms[k]
        C = np.zeros((px.shape[1], py.shape[1]))
        for a in range(0, n, _ROWS):
            b = min(a + _ROWS, n)
            C += px[a:b].T @ py[p[a:b]]
        return float(np.einsum("ij,ij->", C, C))

    S = np.array(map_items(one, range(perms.shape[0]), n_jobs), dtype=np.float64)
    D = (fy.sqnorms[perms] * fx.sqnorms).sum(axis=1)  # row-wise: same bits for any batch
    return S, D


def lowrank_hsic_values(fx: Features, fy: Features, perms: np.ndarray, rule: Rule,
                        unbiased: bool, n_jobs: int | None = None) -> Values:
    """HSIC (V- or U-form) of every permutation of the rows of `fy` against `fx`.

    The normalisation of :func:`kmtests.engines.hsic.hsic_values` on the
    centred approximate Gram matrices; uniform-weight rules only.
    """
    if not isinstance(rule, Uniform):
        raise ValueError("the low-rank engines run the estimators with uniform weights "
                         "(kme, skmse, bkmse, ...); use engine='exact'.")
    S, D = _pair_sums(fx, fy, perms, n_jobs)
    return hsic_uniform(S, D, fx.n, float(fx.sqnorms.sum()), float(fy.sqnorms.sum()),
                        fx.kc_max * fy.kc_max, rule, unbiased)


class LowRankPair:
    """The two variables' features, as the source of the HSIC statistics.

    `fy` is the permuted one; the sums are those of :mod:`kmtests.engines.hsic` on
    the approximate centred Gram matrices.
    """

    def __init__(self, fx: Features, fy: Features, swapped: bool = False) -> None:
        self.fx, self.fy = fx, fy
        self.swapped = swapped

    @property
    def n(self) -> int:
        return self.fx.n

    @property
    def trK(self) -> float:
        return float(self.fx.sqnorms.sum())

    @property
    def trL(self) -> float:
        return float(self.fy.sqnorms.sum())

    @property
    def scale(self) -> float:
        return self.fx.kc_max * self.fy.kc_max

    def pair_sums(self, perms: np.ndarray, n_jobs: int | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
        return _pair_sums(self.fx, self.fy, perms, n_jobs)

    def norm(self) -> float:
        """``||Kc||_F ||Lc||_F`` of the approximate Gram matrices (from ``Phi'Phi``)."""
        def fro(f: Features) -> float:
            G = f.phi.T @ f.phi
            return float(np.sqrt(np.einsum("ij,ij->", G, G)))

        return fro(self.fx) * fro(self.fy)

    @property
    def info(self) -> str:
        return _info(self.fx.method, [self.fx, self.fy])


#: the default number of features (landmarks or frequencies)
DEFAULT_FEATURES = 200
#: with the default ``n_features`` the Nyström engine keeps, of its
#: :data:`DEFAULT_FEATURES` landmarks, the smallest rank whose eigenvalues hold this
#: share of the trace of the landmarks' Gram matrix (issue 31: a rank from the
#: spectrum, e.g. 59 of 200 for a Gaussian kernel at the median bandwidth on 400
#: points in 5 dimensions, 7 in one dimension)
AUTO_TRACE_SHARE = 1.0 - 1e-3

_LABEL = {"nystrom": "Nyström", "rff": "random Fourier"}


def _info(engine: str, feats: list[Features]) -> str:
    """E.g. ``200 landmarks, rank 187, approximate statistic`` (x/y for HSIC)."""
    def joined(vals: list[int]) -> str:
        return str(vals[0]) if len(set(vals)) == 1 else "/".join(map(str, vals))

    what = "landmarks" if engine == "nystrom" else "features"
    each = " each" if len(feats) > 1 else ""
    share = feats[0].trace_share
    chosen = (f" (the smallest holding {share:.1%} of the trace of the landmarks' kernel "
              "matrix; n_features sets it)" if share is not None else "")
    return (f"{joined([f.n_features for f in feats])} {what}{each}, rank "
            f"{joined([f.rank for f in feats])}{chosen}, approximate statistic")


def lowrank_batch(n: int, n_resamples: int) -> int:
    """Splits per batch of the MMD: whole chunks of the products (a smaller batch pads its
    last chunk: wasted products), as many as take at most 10% of the available memory (at
    least 512 MB) as permutation indices and byte masks."""
    free = _guards.available_memory()  # looked up: tests patch it
    budget = max(0.1 * (free if free is not None else 4e9), 512e6)
    chunks = max(1, int(budget // (17.0 * n * _CHUNK)))  # indices (2 copies) and mask
    return int(min(chunks * _CHUNK, -(-n_resamples // _CHUNK) * _CHUNK))


def _variable_rngs(gen: np.random.Generator, x: Any, y: Any
                   ) -> tuple[np.random.Generator, np.random.Generator]:
    """One generator per variable, assigned by the *set* of its points (not by the argument
    position, nor by the order of the rows), so ``independence_test(y, x)`` draws each
    variable's features as ``independence_test(x, y)`` does, and a permutation of the rows
    of either variable draws the same features (the permutation test stays exact)."""
    first, second = gen.spawn(2)
    return (first, second) if content_key(x) <= content_key(y) else (second, first)


class _LowRank(Engine):
    """Base of the low-rank engines: features drawn once, from the test's `rng`."""

    approximate: ClassVar[bool] = True
    holds_features: ClassVar[bool] = True
    options: ClassVar[tuple[str, ...]] = ("n_features",)

    def __init__(self, n_features: int | None = None, note: str = "") -> None:
        super().__init__(note)

        self.n_features = (DEFAULT_FEATURES if n_features is None
                           else check_positive_int(n_features, "n_features"))
        #: the default Nyström rank is read off the landmarks' spectrum
        self.trace_share = (AUTO_TRACE_SHARE if n_features is None and self.name == "nystrom"
                            else None)

    def supports(self, req: Requirements) -> str | None:
        for role, k in req.kernels.items():
            if getattr(k, "name", "") == "precomputed":
                arg = "kernel" if role == "kernel" else f"kernel_{role}"
                return (f"engine={self.name!r} computes features from the data; with "
                        f"{arg}='precomputed' the Gram matrix is given: use engine='exact'.")
        if req.features and req.scheme == "split":
            for k in req.kernels.values():
                if getattr(k, "name", "") in ("linear", "distance"):
                    return (f"engine={self.name!r} runs the re-weighting estimators on the "
                            f"features of a positive definite kernel; the {k.name} kernel's "
                            "features leave out a rank-two offset that the weights would "
                            "miss: use engine='exact'.")
        if req.pooled_tuning:
            return (f"engine={self.name!r} tunes the estimator on every permutation "
                    "(tuning='permutation'); tuning='pooled' needs the Gram matrix in "
                    "memory (engine='exact').")
        return super().supports(req)

    def _features(self, kernel: Any, z: np.ndarray, gen: np.random.Generator) -> Features:
        if self.trace_share is not None:
            return nystrom_features(kernel, z, self._r(z.shape[0]), gen, self.trace_share)
        return feature_map(self.name, kernel, z, self._r(z.shape[0]), gen)

    def _r(self, n: int) -> int:
        return min(self.n_features, n) if self.name == "nystrom" else self.n_features

    def clip_note(self, n: int) -> str:
        """A note when Nyström's features were clipped to the points."""
        if self.name == "nystrom" and self.n_features > n:
            return (f"n_features = {self.n_features} is more than the {n} points: every "
                    "point is a Nyström landmark")
        return ""

    def notes(self, statistic: str, n: int, permutations: bool = True) -> list[str]:
        out = super().notes(statistic, n, permutations)
        if self.clip_note(n):
            out.append(self.clip_note(n))
        out.append(f"approximate statistic: {statistic} of the {_LABEL[self.name]} "
                   "approximation of the kernel" + (
                       "; the permutation p-value is exact for this statistic, not for the "
                       "kernel's own" if permutations else ""))
        return ["; ".join(out)]

    def pooled(self, kernel: Any, z: np.ndarray, *, rng: Any = None,
               scale: float = 1.0) -> FeaturePooled:
        return FeaturePooled(self._features(kernel, z, child(rng, "features")))

    def paired(self, kx: Any, x: np.ndarray, ky: Any, y: np.ndarray, *, rng: Any = None,
               scales: tuple[float, float] = (1.0, 1.0), orientation: bool | None = None
               ) -> LowRankPair:
        gx, gy = _variable_rngs(child(rng, "features"), x, y)
        fx, fy = self._features(kx, x, gx), self._features(ky, y, gy)
        if orientation is None:
            a, b = oriented(fx, fy)
            return LowRankPair(a, b, a is fy)
        return LowRankPair(fy, fx, True) if orientation else LowRankPair(fx, fy)

    def memory(self, req: Requirements, n: int, dims: Mapping[str, int],
               batch: int) -> tuple[float, str, str]:
        r = self._r(n)
        if req.scheme == "split":
            d = dims.get("kernel", 0)
            blocks = -(-n // _ROWS)
            need = (8.0 * n * (d + 2 * r + 8) + 8.0 * r * r * 3 + _CHUNK * n
                    + 8.0 * _CHUNK * (2 * _ROWS + r * (blocks + 1)) + 9.0 * n * batch)
            what = f"the {self.name} engine's {r} features of {n} points take"
            advice = "Use fewer features (`n_features`) or test a random subsample."
        else:
            d = sum(dims.values())
            need = 8.0 * n * (d + 3 * r + 4) + 8.0 * r * r * 4 + 8.0 * 8192 * r
            what = f"the {self.name} engine's {r} features of each variable ({n} points) take"
            advice = ("Use fewer features (`n_features`) or test a random subsample of the "
                      "pairs.")

        return need, f"{what} {format_bytes(need)}", advice

    def batch(self, scheme: str, n: int, n_resamples: int) -> int | None:
        return lowrank_batch(n, n_resamples) if scheme == "split" else None


class Nystrom(_LowRank):
    """``engine="nystrom"``: Nyström features of any kernel (``n_features`` landmarks)."""

    name: ClassVar[str] = "nystrom"


class RFF(_LowRank):
    """``engine="rff"``: random Fourier features of the Gaussian, ARD Gaussian and
    Laplacian kernels (``n_features`` frequencies)."""

    name: ClassVar[str] = "rff"

    def supports(self, req: Requirements) -> str | None:
        for k in req.kernels.values():
            if getattr(k, "name", "") not in RFF_KERNELS + ("precomputed",):
                name = getattr(k, "name", type(k).__name__)
                return ("engine='rff' draws random Fourier features of the Gaussian, ARD "
                        "Gaussian and Laplacian kernels (kernel='gaussian', 'ard' or "
                        f"'laplacian'); the {name} kernel has none here. Use "
                        "engine='nystrom', which approximates any kernel.")
        return super().supports(req)
