r"""Linear-time MMD statistics: the linear statistic and the block (B-test) statistic.

Both compare two samples of the same size ``n`` in their given order, with
memory ``O(n d + b^2)`` and time ``O(n b d)``; both are means of independent,
identically distributed terms, so their null distribution is asymptotically
normal with a variance estimated from the terms themselves.

Linear statistic (Gretton et al., 2012, Sec. 6, ``MMD^2_l``)
    With ``m = floor(n / 2)`` disjoint consecutive pairs
    ``(x_{2i-1}, y_{2i-1}), (x_{2i}, y_{2i})``,
    ``h_i = k(x_{2i-1}, x_{2i}) + k(y_{2i-1}, y_{2i}) - k(x_{2i-1}, y_{2i})
    - k(x_{2i}, y_{2i-1})`` and ``MMD^2_l = mean(h)``; its standard error is
    ``sd(h) / sqrt(m)``. Time ``O(n d)``.
Block statistic (Zaremba, Gretton & Blaschko, 2013, the B-test)
    The samples are cut into ``K = floor(n / b)`` consecutive blocks of ``b``
    points; ``eta_k`` is the unbiased ``MMD^2_u`` (Gretton et al., 2012,
    eq. 3, the same statistic as ``kmtests.mmd(statistic="unbiased")``) of
    block ``k`` of `x` against block ``k`` of `y`, and
    ``MMD^2_block = mean(eta)``, with standard error ``sd(eta) / sqrt(K)``.
    Default ``b = floor(sqrt(n))`` as in the paper. Time ``O(n b d)``.

The points past the last pair (``n`` odd) or the last whole block are not
used. The kernel values come from :class:`kmtests.engines.tiles.KernelTiles`
(from the centred data; the Gaussian family as ``k - 1``, ``expm1``, which keeps
the digits of the kernel differences; the offsets cancel in both statistics).

Examples
--------
>>> import numpy as np
>>> from kmtests.statistics.linear_time import block_statistics, linear_statistics
>>> from kmtests.engines.tiles import KernelTiles
>>> from kmtests.kernels import Gaussian
>>> gen = np.random.default_rng(0)
>>> x, y = gen.normal(size=(400, 2)), gen.normal(size=(400, 2)) + 0.5
>>> src = KernelTiles(Gaussian(bandwidth=1.0), np.vstack([x, y]))
>>> h = linear_statistics(src, 400)
>>> eta = block_statistics(src, 400, 20)
>>> h.shape, eta.shape
((200,), (20,))
>>> print(f"{h.mean():.4f} {eta.mean():.4f}")
0.1345 0.0660
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

import numpy as np

from .._guards import format_bytes
from .._validation import check_positive_int
from ..engines import Engine, Requirements, Values
from ..engines.tiles import KernelTiles
from ..estimators import KME, KernelMeanEstimator
from ..estimators._rules import Uniform
from ..kernels import CANCEL_RTOL, Kernel
from ._base import Prepared, Statistic, require_equal_sizes
from .witness import MMDWitness

__all__ = ["LinearTimeMMD", "default_block_size", "block_statistics", "linear_statistics",
           "paired_values"]

#: pairs per chunk of the linear statistic (bounds its temporaries to a few MB)
_PAIRS = 1 << 16
#: kernel values per batch of blocks (a few 8 MB buffers)
_BATCH_ENTRIES = 1 << 20
#: pairs per small Gram matrix for kernels without a radial form (its diagonal is used)
_GENERIC_PAIRS = 64


def default_block_size(n: int) -> int:
    """``floor(sqrt(n))`` (Zaremba et al., 2013), at least 2.

    Examples
    --------
    >>> default_block_size(2000), default_block_size(10**6)
    (44, 1000)
    """
    return max(2, int(np.floor(np.sqrt(n))))


def paired_values(src: Any, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``k(z_i, z_j) - offsets`` for each pair ``(i[p], j[p])`` of rows of the pooled data
    (`src` a :class:`kmtests.engines.tiles.KernelTiles`; the offsets cancel)."""
    out: np.ndarray = src.pairs(i, j)
    return out


def linear_statistics(src: Any, n: int) -> np.ndarray:
    """The ``floor(n / 2)`` terms ``h_i`` of the linear statistic.

    The pooled data of `src` are ``x`` (rows ``0 .. n-1``) then ``y`` (rows
    ``n .. 2n-1``); the pairs are ``(2i, 2i + 1)``.
    """
    m = n // 2
    h = np.empty(m)
    for s in range(0, m, _PAIRS):
        p = np.arange(s, min(s + _PAIRS, m))
        a, b = 2 * p, 2 * p + 1           # x_a, x_b; y_a = n + a, y_b = n + b
        hp = paired_values(src, a, b)
        hp += paired_values(src, n + a, n + b)
        hp -= paired_values(src, a, n + b)
        hp -= paired_values(src, b, n + a)
        h[s:s + len(p)] = hp
    return h


def _offdiag_sums_radial(src: Any, A: np.ndarray, B: np.ndarray | None) -> np.ndarray:
    """Per block ``g``: the sum of ``k(A_g, B_g) - offset`` (``B = A``: off the diagonal).

    `A`, `B` have shape ``(G, b, d)`` (prescaled points).
    """
    sym = B is None
    Bm = A if B is None else B
    aa = np.einsum("gij,gij->gi", A, A)
    bb = aa if sym else np.einsum("gij,gij->gi", Bm, Bm)
    D = np.matmul(A, Bm.transpose(0, 2, 1))
    D *= -2.0
    D += aa[:, :, None]
    D += bb[:, None, :]
    np.maximum(D, 0.0, out=D)

    g, i, j = np.nonzero(D <= CANCEL_RTOL * (aa[:, :, None] + bb[:, None, :]))
    if g.size:  # close points: from the differences (identical points at distance 0)
        diff = A[g, i] - Bm[g, j]
        D[g, i, j] = np.einsum("ij,ij->i", diff, diff)
    if sym:
        idx = np.arange(A.shape[1])
        D[:, idx, idx] = 0.0
    D *= src.top2
    t = src.kernel._exponent(D)
    np.expm1(t, out=t)
    return t.sum(axis=(1, 2))  # the diagonal is expm1(0) = 0


def block_statistics(src: Any, n: int, b: int) -> np.ndarray:
    """The ``floor(n / b)`` block statistics ``eta_k`` (``MMD^2_u`` of each block pair).

    The pooled data of `src` are ``x`` (rows ``0 .. n-1``) then ``y``.
    """
    K = n // b
    eta = np.empty(K)
    within = 1.0 / (b * (b - 1))
    cross = 2.0 / (b * b)
    z = src.z
    if src._form == "radial":
        per = max(1, _BATCH_ENTRIES // (b * b))
        d = z.shape[1]
        for g0 in range(0, K, per):
            g1 = min(g0 + per, K)
            X = z[g0 * b:g1 * b].reshape(g1 - g0, b, d)
            Y = z[n + g0 * b:n + g1 * b].reshape(g1 - g0, b, d)
            eta[g0:g1] = (within * (_offdiag_sums_radial(src, X, None)
                                    + _offdiag_sums_radial(src, Y, None))
                          - cross * _offdiag_sums_radial(src, X, Y))
        return eta
    for k in range(K):
        x0, x1, y0, y1 = k * b, (k + 1) * b, n + k * b, n + (k + 1) * b
        Kxx, Kyy = src.block(x0, x1, x0, x1), src.block(y0, y1, y0, y1)
        sxx = Kxx.sum() - np.trace(Kxx)
        syy = Kyy.sum() - np.trace(Kyy)
        eta[k] = within * (sxx + syy) - cross * src.block(x0, x1, y0, y1).sum()
    return eta


_NAMES = {"block": "MMD^2_block", "linear": "MMD^2_l"}


class LinearTimeMMD(Statistic):
    """A linear-time MMD statistic: the block statistic (B-test) or ``MMD^2_l``.

    Its null is the asymptotic normal one of a mean of i.i.d. terms
    (:class:`kmtests.null.NormalMethod`, its default); it evaluates the kernel on
    pairs of points of the data in their given order (``engine="streamed"``, its
    default): memory ``O(N d + b^2)``. The KME only, samples of the same size.

    Parameters
    ----------
    kernel : Kernel
    kind : {"block", "linear"}
    block_size : int, optional
        ``b`` of the block statistic (default ``floor(sqrt(n))``).
    """

    options: ClassVar[tuple[str, ...]] = ("block_size",)
    registered_as: ClassVar[tuple[str, ...]] = ("block", "linear")
    default_method: ClassVar[str] = "normal"
    default_engine: ClassVar[str] = "streamed"
    problem_kind: ClassVar[str] = "two_sample"
    estimator_refusal: ClassVar[str] = (
        "engine={name!r} runs the KME statistic only (estimator='kme'); for estimator {est!r} "
        "use engine='exact' or 'streamed'.")
    #: the engine names that stand for it (``engine="block"``: the B-test, as in 0.2)
    engine_aliases: ClassVar[tuple[str, ...]] = ("block", "linear")

    @classmethod
    def keywords(cls, name: str) -> tuple[str, ...]:
        return cls.options if name == "block" else ()

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        return cls(kernels["kernel"], name, options.get("block_size"))

    def __init__(self, kernel: Kernel, kind: str = "block", block_size: int | None = None
                 ) -> None:
        self.kernel = kernel
        self.estimator = KME()
        self.kind = kind
        self.name = kind  # type: ignore[misc]
        self.unbiased = True
        self.block_size = (None if block_size is None
                           else check_positive_int(block_size, "block_size"))

    def label(self) -> str:
        return _NAMES[self.kind]

    def family(self) -> str:
        return "B-test" if self.kind == "block" else "linear-time MMD"

    def describe(self, prepared: Prepared) -> str:
        if self.kind == "block":
            return "MMD^2_block (the mean of MMD^2_u over blocks)"
        return "MMD^2_l (the linear-time MMD^2 over disjoint pairs)"

    def refusal_subject(self) -> str:
        return f"engine={self.kind!r} computes a linear-time statistic that"

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        return Requirements("split", {"kernel": self.kernel}, pair_values=True)

    def offers(self, engine: Engine) -> frozenset[str]:
        return frozenset({"terms"})

    def _b(self, n: int) -> int:
        if self.kind == "linear":
            return 2
        return default_block_size(n) if self.block_size is None else self.block_size

    def check(self, problem: Any, tuning: str) -> None:
        engine = self.kind
        if problem.precomputed:
            return  # the engine refuses a given Gram matrix
        require_equal_sizes(problem, f"engine={engine!r}", "engine='exact' or 'streamed'")
        n = problem.n_x
        if n < 4:
            raise ValueError(f"engine={engine!r} needs at least 4 points per sample (2 pairs "
                             f"or blocks for a standard error); got {n}.")
        b = self._b(n)
        if self.kind == "block" and not 2 <= b <= n // 2:
            raise ValueError(f"`block_size` must be from 2 to n // 2 = {n // 2} (at least 2 "
                             f"blocks of each sample of {n} points); got {b}.")

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        n, d = problem.n, problem.dims["kernel"]
        need = 8.0 * n * (3 * d + 1)  # the pooled data, its prescaled copy, a transient
        if self.kind == "block":
            need += 4 * 8.0 * max(_BATCH_ENTRIES, self._b(problem.n_x) ** 2)
        else:
            need += 8.0 * _PAIRS * (2 * d + 4)
        return (need, f"the {self.kind} statistic's buffers for {n} points take "
                      f"{format_bytes(need)}",
                "Test a random subsample of each sample" +
                (", or use a smaller `block_size`." if self.kind == "block" else "."))

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        kern = self.kernel.fitted_to(problem.z, name="the pooled sample")
        src = KernelTiles(kern, problem.z)
        n, b, kind = problem.n_x, self._b(problem.n_x), self.kind
        cache: dict[str, np.ndarray] = {}

        def terms() -> np.ndarray:
            if "t" not in cache:
                cache["t"] = (block_statistics(src, n, b) if kind == "block"
                              else linear_statistics(src, n))
            return cache["t"]

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            t = terms()
            scale = float(np.max(np.abs(t))) if t.size else 0.0
            return Values(np.array([float(np.mean(t))]), np.array([scale])), {}

        def no_values(perms: np.ndarray, n_jobs: int | None) -> Values:  # pragma: no cover
            raise ValueError(f"engine={kind!r} has no permutations (method='normal').")

        notes = []
        unused = n - (n // b) * b
        if unused:
            what = "pair" if kind == "linear" else f"whole block of {b}"
            notes.append(f"the last {unused} point(s) of each sample are not used (past the "
                         f"last {what})")
        return Prepared(values=no_values, observed=observed, kernels={"kernel": kern},
                        what=f"{self.label()} with {kern.phrase()}", notes=notes,
                        terms=terms,
                        details={"block_size": b} if kind == "block" else {},
                        witness=MMDWitness(kern, problem.z, n, Uniform(fixed=1.0),
                                           what=self.label()))
