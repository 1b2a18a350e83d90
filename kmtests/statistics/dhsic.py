r"""The d-variable Hilbert-Schmidt independence criterion dHSIC (Pfister et al., 2018).

For ``d`` variables with Gram matrices ``K^1, ..., K^d`` (``n x n``),

.. math::

    \mathrm{dHSIC}_n = \frac{1}{n^2} \sum_{ij} \prod_k K^k_{ij}
        + \frac{1}{n^{2d}} \prod_k \sum_{ij} K^k_{ij}
        - \frac{2}{n^{d+1}} \sum_i \prod_k \sum_j K^k_{ij},

the squared RKHS distance between the empirical embedding of the joint law and
the tensor product of the empirical marginal embeddings (a V-statistic; R's
``dHSIC::dhsic``). For ``d = 2`` it is ``HSIC_b`` (:func:`kmtests.hsic`).

**Accuracy.** The three terms are of the size of the kernel values and cancel to
a number of order ``1/n`` of it. Each Gram matrix is held as ``K = g + W``
(``g`` its grand mean, ``W = Kc + u 1' + 1 u'`` from the accurately centred
Gram matrix, ``u`` the row means minus ``g``); expanding the products over the
subsets ``S`` of variables that contribute ``W`` rather than ``g``, the terms
with ``|S| <= 1`` cancel exactly (``W`` and ``u`` sum to zero), so

.. math::

    \mathrm{dHSIC}_n = \sum_{|S| \ge 2} \prod_{k \notin S} g_k
        \Bigl[\frac{1}{n^2} \sum_{ij} \prod_{k \in S} W^k_{ij}
        - \frac{2}{n} \sum_i \prod_{k \in S} u^k_i\Bigr],

which is what is computed (the sum over ``S`` by a recursion over the
variables that keeps the parts with no, one and at least two ``W`` factors:
``O(d n^2)`` per arrangement). Its rounding is relative to the ``W`` (the
differences between kernel values), not to the kernel values: at a bandwidth
far above the data's spread the literal formula loses its digits, this one
keeps them. Unlike ``HSIC_b``, dHSIC for ``d >= 3`` is *not* invariant to adding
a constant to a kernel (the constant brings in the dependence of the other
variables among themselves), so the offsets ``g`` enter explicitly.

**Arrangements.** A row of the :class:`~kmtests.problems.schemes.Independent`
scheme holds a permutation of each variable but the first; the permuted
statistic gathers ``W^k`` and ``u^k`` at it (``g`` does not change), entry by
entry in the jitted loop of :mod:`kmtests.engines._jit_dhsic` (no ``n x n``
work array; groups of four arrangements, on `n_jobs` threads, with bits that
depend on neither). The
statistic's rounding scale is the ``|S| >= 2`` part of
``prod_k (|g_k| + max(|W^k|, |u^k|))``, the same for every arrangement. Rows
drawn *with replacement* (the bootstrap null, :mod:`kmtests.null.bootstrap`)
re-centre each resampled Gram matrix (its grand mean and row means change).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np

from .._gram import CentredGram
from .._guards import format_bytes
from ..engines import Engine, Requirements, Values
from ..engines._threads import map_row_blocks
from ..estimators import KME, KernelMeanEstimator
from ..kernels import Kernel, Precomputed
from ._base import Prepared, Statistic
from .mmd import describe_kernel

__all__ = ["DHSIC", "JointGram", "JointPrepared", "JointStack", "dhsic_rows"]

#: entries of one (rows x n x n) work array of the resampling loop
_CHUNK_ENTRIES = 1 << 19
#: below this many gathers (arrangements x n^2 x (d - 1)) the loop runs on one thread
_SERIAL_WORK = 1 << 20


@dataclass(frozen=True, eq=False)
class JointGram:
    """One variable's Gram matrix as dHSIC uses it: ``K = g + W``.

    Attributes
    ----------
    W : ndarray, shape (n, n)
        ``K - g`` (zero grand sum), ``Kc + u 1' + 1 u'``.
    u : ndarray, shape (n,)
        Row means of ``K`` minus ``g`` (zero sum).
    g : float
        Grand mean of ``K``.
    diag_mean : float
        Mean of ``K_ii``.
    """

    W: np.ndarray
    u: np.ndarray
    g: float
    diag_mean: float

    @classmethod
    def from_centred(cls, cg: Any) -> "JointGram":
        """From a :class:`~kmtests._gram.CentredGram` (its ``Kc`` array becomes ``W``)."""
        u = np.asarray(cg.r - cg.g, dtype=np.float64)
        W = cg.Kc
        W += u[:, None]
        W += u[None, :]
        return cls(W, u, float(cg.g), float(np.mean(cg.diag)))

    @classmethod
    def from_gram(cls, K: np.ndarray) -> "JointGram":
        """From a symmetric Gram matrix (copied)."""
        return cls.from_centred(CentredGram.from_gram(K))

    @property
    def n(self) -> int:
        return int(self.W.shape[0])

    @property
    def magnitude(self) -> float:
        """``max(|W|, |u|)``: the size of the parts the statistic is summed from."""
        return max(float(np.max(np.abs(self.W))), float(np.max(np.abs(self.u))))


def _scale(grams: Sequence[JointGram], resampled: bool) -> float:
    """The ``|S| >= 2`` part of ``prod_k (|g_k| + w_k)``: bounds every term summed.

    Resampled Gram matrices are re-centred by at most ``w_k``: their ``W`` and ``u``
    are bounded by ``2 w_k`` and their ``|g|`` by ``|g_k| + w_k``.
    """
    first = grams[0]
    s0, s1, s2 = abs(first.g), first.magnitude, 0.0
    for G in grams[1:]:
        w, a = G.magnitude, abs(G.g)
        if resampled:
            w, a = 2.0 * w, a + w
        s0, s1, s2 = s0 * a, s1 * a + s0 * w, s2 * (a + w) + s1 * w
    return s2


def _gather(G: JointGram, idx: np.ndarray, resampled: bool
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray | float]:
    """``W``, ``u`` and ``g`` of variable `G` arranged by each row of `idx` ``(c, n)``."""
    W = G.W[idx[:, :, None], idx[:, None, :]]
    if not resampled:
        return W, G.u[idx], G.g
    c = idx.shape[0]
    rows = W.mean(axis=2)
    m = W.reshape(c, -1).mean(axis=1)
    W -= m[:, None, None]
    return W, rows - m[:, None], G.g + m


def _chunk_values(grams: Sequence[JointGram], rows: np.ndarray, resampled: bool
                  ) -> np.ndarray:
    """dHSIC of every row of `rows` ``(c, (d - 1) n)`` (see the module docs)."""
    first, n, c = grams[0], grams[0].n, rows.shape[0]
    # the parts with no (e0, f0), one (E1, F1) and at least two (E2, F2) W factors
    e0: Any = first.g
    E1: Any = first.W
    F1: Any = first.u
    E2: Any = 0.0
    F2: Any = 0.0
    for k, G in enumerate(grams[1:]):
        W, u, g = _gather(G, rows[:, k * n:(k + 1) * n], resampled)
        g3 = np.reshape(g, (-1, 1, 1)) if np.ndim(g) else g
        g2 = np.reshape(g, (-1, 1)) if np.ndim(g) else g
        e03 = np.reshape(e0, (-1, 1, 1)) if np.ndim(e0) else e0
        e02 = np.reshape(e0, (-1, 1)) if np.ndim(e0) else e0
        E2 = E1 * W if k == 0 else E2 * (W + g3) + E1 * W
        F2 = F1 * u if k == 0 else F2 * (u + g2) + F1 * u
        E1 = E1 * g3 + e03 * W
        F1 = F1 * g2 + e02 * u
        e0 = e0 * g
    E2 = np.ascontiguousarray(np.broadcast_to(E2, (c, n, n)))
    F2 = np.ascontiguousarray(np.broadcast_to(F2, (c, n)))
    # one contiguous row per arrangement: the same sums whatever the chunk
    return E2.reshape(c, -1).sum(axis=1) / (n * n) - 2.0 * F2.sum(axis=1) / n


def dhsic_rows(grams: Sequence[JointGram], rows: np.ndarray, resampled: bool = False,
               n_jobs: int | None = None) -> Values:
    """dHSIC of the arrangements (or resamples) `rows` of variables 2..d.

    Parameters
    ----------
    grams : sequence of JointGram
        The ``d`` variables' Gram matrices.
    rows : ndarray, shape (B, (d - 1) n)
        Row ``b`` holds the indices of variables 2, ..., d one after another
        (:class:`~kmtests.problems.schemes.Independent`); permutations, or indices
        drawn with replacement when `resampled`.
    resampled : bool
        Re-centre each gathered Gram matrix (rows that are not permutations).
    n_jobs : int, optional
        Threads of the arrangement loop (permutations; the resamples are summed by
        NumPy).

    Returns
    -------
    Values
        ``stat`` ``(B,)`` and the rounding scale of each.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.statistics.dhsic import JointGram, dhsic_rows
    >>> K = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, 0.4], [0.2, 0.4, 1.0]])
    >>> grams = [JointGram.from_gram(K)] * 3
    >>> ident = np.tile(np.arange(3), 2)[None, :]
    >>> print(f"{dhsic_rows(grams, ident).stat[0]:.6f}")
    0.178187
    """
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    n = grams[0].n
    B = rows.shape[0]
    if not resampled:
        return Values(JointStack.of(grams).values(rows, n_jobs),
                      np.full(B, _scale(grams, False)))
    out = np.empty(B)
    step = max(1, _CHUNK_ENTRIES // (n * n))
    for start in range(0, B, step):
        out[start:start + step] = _chunk_values(grams, rows[start:start + step], resampled)
    return Values(out, np.full(B, _scale(grams, resampled)))


@dataclass(frozen=True, eq=False)
class JointStack:
    """The variables' Gram matrices stacked for the jitted arrangement loop.

    :mod:`kmtests.engines._jit_dhsic` reads ``W`` ``(d, n, n)``, ``u`` ``(d, n)``, ``g``
    ``(d,)`` and the prefix products ``e0`` ``(d,)``, with ``e0[k]`` the product of
    ``g[0]`` to ``g[k - 1]`` (``e0[0] = 1``)."""

    W: np.ndarray
    u: np.ndarray
    g: np.ndarray
    e0: np.ndarray

    @classmethod
    def of(cls, grams: Sequence[JointGram]) -> "JointStack":
        """From the variables' Gram matrices (their ``W`` copied into one array)."""
        W = np.empty((len(grams), grams[0].n, grams[0].n))
        for k, G in enumerate(grams):
            W[k] = G.W
        return cls.stacked(W, grams)

    @classmethod
    def stacked(cls, W: np.ndarray, grams: Sequence[JointGram]) -> "JointStack":
        """From `W` already holding the variables' ``W`` (``grams[k].W`` may be ``W[k]``)."""
        g = np.array([G.g for G in grams])
        e0 = np.empty_like(g)
        e0[0] = 1.0
        acc: Any = grams[0].g
        for k in range(1, len(grams)):
            e0[k] = acc  # the same products, in the same order, as _chunk_values's e0
            acc = acc * grams[k].g
        return cls(W, np.stack([G.u for G in grams]), g, e0)

    def values(self, rows: np.ndarray, n_jobs: int | None = None) -> np.ndarray:
        """dHSIC of every arrangement (row of `rows`), on `n_jobs` threads; the bits do
        not depend on the threads or on how the rows are batched."""
        from ..engines._jit_dhsic import joint_sums  # numba loads on first use

        n = self.u.shape[1]
        out = np.empty(rows.shape[0])
        small = rows.shape[0] * n * n * (self.u.shape[0] - 1) < _SERIAL_WORK

        def block(a: int, b: int) -> None:
            joint_sums(self.W, self.u, self.g, self.e0, rows[a:b], out[a:b])

        map_row_blocks(block, rows.shape[0], 1 if small else n_jobs)
        return out


@dataclass(eq=False)
class JointPrepared(Prepared):
    """A prepared dHSIC: :class:`~kmtests.statistics.Prepared` plus what the joint
    null methods read.

    Attributes
    ----------
    resampled : callable
        ``resampled(rows, n_jobs) -> Values``: the statistic of rows drawn with
        replacement (the bootstrap null).
    joint_grams : callable
        ``joint_grams() -> tuple of JointGram`` (the gamma approximation).
    """

    resampled: Callable[[np.ndarray, int | None], Values] | None = None
    joint_grams: Callable[[], tuple[JointGram, ...]] | None = None


class DHSIC(Statistic):
    """dHSIC of ``d`` variables (see the module docs).

    Parameters
    ----------
    kernels : sequence of Kernel
        One kernel per variable (bandwidths may be ``"median"``: fitted on each
        variable, which the permutations leave unchanged). ``Precomputed()`` for a
        variable given as its Gram matrix.
    """

    name: ClassVar[str] = "dhsic"
    problem_kind: ClassVar[str] = "joint"

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        return cls(tuple(kernels.values()))

    def __init__(self, kernels: Sequence[Kernel]) -> None:
        self.kernels = tuple(kernels)
        self.estimator = KME()
        if len(self.kernels) < 2:
            raise ValueError(f"dHSIC needs a kernel for each of at least 2 variables; got "
                             f"{len(self.kernels)}.")

    def __repr__(self) -> str:
        return f"DHSIC(kernels={self.kernels!r})"

    symbol: ClassVar[str] = "dHSIC"
    family_name: ClassVar[str] = "dHSIC"

    def describe(self, prepared: Prepared) -> str:
        return f"dHSIC of {len(self.kernels)} variables (V-statistic)"

    def _roles(self) -> tuple[str, ...]:
        return tuple(f"x{i + 1}" for i in range(len(self.kernels)))

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        # one Gram matrix per variable in memory, as for paired variables
        return Requirements("pairing", dict(zip(self._roles(), self.kernels)),
                            gram="dHSIC needs (it multiplies the variables' Gram matrices "
                                 "entry by entry)")

    def check(self, problem: Any, tuning: str) -> None:
        if getattr(problem, "kind", None) != "joint":
            raise ValueError("the statistic dHSIC tests the joint independence of d "
                             "variables: use kmtests.joint_independence_test.")
        if problem.d != len(self.kernels):
            raise ValueError(f"the statistic has {len(self.kernels)} kernels for "
                             f"{problem.d} variables: give one kernel per variable.")
        for role, v, k in zip(self._roles(), problem.variables, self.kernels):
            if (v.data is None) != isinstance(k, Precomputed):
                raise ValueError(f"`{role}` is {'a Gram matrix' if v.data is None else 'data'}"
                                 f" but its kernel is {k.name!r}: the kernel 'precomputed' "
                                 "goes with (and only with) a variable given as its Gram "
                                 "matrix.")

    def slow_advice(self, problem: Any, engine: Engine, tuning: str) -> str:
        return ("To make it faster: fewer permutations (`n_resamples=999` resolves a 5% test "
                "to about +-0.014), or method='gamma' (approximate; Pfister et al.'s moment "
                "fit, no resampling).")

    def offers(self, engine: Engine) -> frozenset[str]:
        return frozenset({"values", "resampled", "joint_grams"} if engine.holds_gram
                         else set())

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        n, d = problem.n, problem.d
        grams = 8.0 * d * n * n
        work = 8.0 * 6 * max(n * n, _CHUNK_ENTRIES)
        return (grams + work, f"{d} Gram matrices of {n} x {n} take {format_bytes(grams)}",
                "Test a random subsample of the observations, or use a machine with more "
                "memory.")

    def columns(self) -> list[tuple[str, dict[str, Any]]]:
        label = ", ".join(f"{r}: {describe_kernel(k)}" for r, k in zip(self._roles(),
                                                                         self.kernels))
        return [(label, {"form": "V", "estimator": "kme"})]

    def fitted(self, problem: Any) -> tuple[Kernel, ...]:
        """The kernels with their bandwidths fitted on each variable (median heuristic)."""
        return tuple(k if v.data is None else k.fitted_to(v.data, name=role)
                     for role, v, k in zip(self._roles(), problem.variables, self.kernels))

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        kernels = self.fitted(problem)
        n, d = problem.n, problem.d
        W = np.empty((d, n, n))  # every variable's W, one array for the jitted loop
        parts = []
        for k, (role, v, kern) in enumerate(zip(self._roles(), problem.variables, kernels)):
            G = JointGram.from_centred(kern.centred_gram(v.values, name=role))
            W[k] = G.W
            parts.append(JointGram(W[k], G.u, G.g, G.diag_mean))
            del G
        grams = tuple(parts)
        stack = JointStack.stacked(W, grams)
        scale = _scale(grams, False)
        ident = np.tile(np.arange(n, dtype=np.int64), d - 1)[None, :]

        def values(rows: np.ndarray, n_jobs: int | None) -> Values:
            rows = np.ascontiguousarray(rows, dtype=np.int64)
            return Values(stack.values(rows, n_jobs), np.full(rows.shape[0], scale))

        def resampled(rows: np.ndarray, n_jobs: int | None) -> Values:
            return dhsic_rows(grams, rows, resampled=True)

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return values(ident, n_jobs), {}

        phrase = "; ".join(f"{k.phrase()} on {r}" for r, k in zip(self._roles(), kernels))
        return JointPrepared(
            values=values, observed=observed, kernels=dict(zip(self._roles(), kernels)),
            what=f"dHSIC with {phrase}", tuning="pooled", columns=self.columns(),
            resampled=resampled, joint_grams=lambda: grams)

