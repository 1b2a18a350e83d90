r"""MMDAggInc and HSICAggInc: aggregated tests of incomplete U-statistics.

Schrab, Kim, Guedj & Gretton (2022) make MMDAgg and HSICAgg run in time linear in the
sample size: each member's statistic is an *incomplete* U-statistic, the mean of its
kernel ``h`` over a fixed design of ``L`` pairs instead of all ``N (N - 1) / 2``, and
its null is drawn by Rademacher multipliers on the same pairs.

The design
    The pairs ``(i, i + r)`` for ``r = 1, ..., R`` (the paper's ``D_R``: the first ``R``
    superdiagonals; ``R = 200`` by default, `diagonals`), ``L = R N - R (R + 1) / 2``
    pairs; ``R >= N - 1`` gives the complete U-statistic.
Two samples (MMDAggInc)
    ``N = min(n_x, n_y)``: the first ``N`` points of each sample (the paper's choice;
    the points past ``N`` of the larger sample are not used, and the report says so), and
    ``h(i, j) = k(x_i, x_j) + k(y_i, y_j) - k(x_i, y_j) - k(x_j, y_i)``.
Two variables (HSICAggInc)
    ``N = floor(n / 2)``: the pair ``i`` is the observations ``i`` and ``N + i``, and
    ``h = h_k h_l`` with ``h_k(i, j) = k(x_i, x_j) + k(x'_i, x'_j) - k(x_i, x'_j) -
    k(x'_i, x_j)`` (``x'_i = x_{N + i}``) and ``h_l`` the same in ``y``: the U-statistic
    of order 2 whose mean is ``4 HSIC`` (the paper's Sec. 3).
The null
    ``T_b = sum_{(i, j)} e_i e_j h(i, j) / L`` with Rademacher ``e``. A sign ``e_i = -1``
    is a swap: of ``x_i`` and ``y_i`` (MMD), of ``y_i`` and ``y_{N + i}`` (HSIC), which
    turns ``h(i, j)`` into ``-h(i, j)`` for every ``j != i``. The draws are therefore
    uniform draws of a group of rearrangements that keeps the null — a permutation test
    over the ``2^N`` swaps, of exact level (the wild bootstrap's report says
    "approximate"; here it is exact, and the result's notes say so).
The aggregation
    The bandwidth collection's members are computed on the same multipliers and combined
    by MMDAgg's weighted min-p with its exact level correction
    (:class:`kmtests.null.combine.MinP`, one stream of draws instead of the authors' two
    and their bisection; the same as :mod:`kmtests.statistics.ksdagg`).

The collection: `grid` (the bandwidths themselves); else ``2^l h`` for ``l`` in
`levels` (``h`` the kernel's bandwidth, the median heuristic unless given); else, for
two samples with a median-heuristic kernel, 10 bandwidths on a geometric grid from half
the 5% quantile to twice the 95% quantile of the pooled distances (as
:func:`kmtests.aggregated.bandwidth_grid`; the paper takes its range from the
distances between the samples, which the swaps do not keep), and ``levels = (-2, 2)``
otherwise (for two variables the paper's 5 x 5 collection). Everything chosen before
the draws is a function of what the swaps leave unchanged (the pooled pairs, each
variable's points), so the level stays exact.

Cost: the kernel on ``4 L`` pairs per bandwidth, and ``M L`` multiply-adds per draw
(``M`` members) as small matrix products over windows of the multipliers — no ``L x B``
product of signs is formed. Memory ``8 N M R`` bytes for the ``h`` values.

Examples
--------
>>> import numpy as np
>>> from kmtests.statistics.agginc import design_pairs
>>> ii, jj = design_pairs(5, 2)
>>> print(ii, jj)
[0 1 2 3 0 1 2] [1 2 3 4 2 3 4]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .._guards import format_bytes
from .._validation import check_positive_int, positive_grid
from ..engines import Engine, Requirements, Values
from ..engines._threads import map_row_blocks
from ..estimators import KME, KernelMeanEstimator
from ..kernels import MEDIAN_MAX_POINTS, Kernel, _BandwidthKernel, _canonical_subsample
from ._base import Prepared, Statistic
from .forms import WILD_DRAW, FormInfo, KernelForm
from .ksdagg import _check_levels, _check_weights, weighted_minp
from .null_laws import multipliers

__all__ = ["DEFAULT_DIAGONALS", "HSICAggInc", "IncompleteForm", "MMDAggInc",
           "design_pairs", "distance_grid", "h_values"]

#: the paper's default number of superdiagonals ``R`` of the design
DEFAULT_DIAGONALS = 200
#: the exponents of ``2^l h`` when the bandwidth is given, and for two variables
DEFAULT_LEVELS = (-2, 2)
#: rows ``i`` of the design per block (bounds the temporaries to a few MB)
_ROWS = 256


def design_pairs(n: int, diagonals: int) -> tuple[np.ndarray, np.ndarray]:
    """The design ``D_R``: the pairs ``(i, i + r)``, ``r = 1..R``, ``i = 0..n-r-1``, in the
    paper's order (``r`` slowest). ``R`` is capped at ``n - 1`` (the complete design)."""
    R = min(int(diagonals), n - 1)
    r = np.arange(1, R + 1)
    lens = n - r
    ii = np.concatenate([np.arange(m) for m in lens]) if R > 0 else np.zeros(0, np.int64)
    return ii, ii + np.repeat(r, lens)


def _sq(a: np.ndarray, b: np.ndarray, i0: int, i1: int, R: int) -> np.ndarray:
    """``||a_i - b_{i+r}||^2`` for ``i`` in ``[i0, i1)``, ``r = 1..R`` (``(c, R)``; the
    pairs past the end hold the distance to the last point, masked by the caller)."""
    n = a.shape[0]
    j = np.minimum(np.arange(i0, i1)[:, None] + np.arange(1, R + 1)[None, :], n - 1)
    diff = b[j] - a[i0:i1, None, :]
    return np.einsum("crd,crd->cr", diff, diff)


def h_values(kernels: Sequence[Kernel], a: np.ndarray, b: np.ndarray, diagonals: int
             ) -> np.ndarray:
    """``h(i, i + r) = k(a_i, a_j) + k(b_i, b_j) - k(a_i, b_j) - k(a_j, b_i)`` for every
    kernel of `kernels` (fitted, one scalar bandwidth each) on the design of `diagonals`.

    Returns an array of shape ``(N, M, R)`` (``N`` rows of `a` and `b`, ``M`` kernels,
    ``R = min(diagonals, N - 1)``), zero for the pairs past the end. The kernel values are
    computed as ``k - 1`` (``expm1``), which keeps the digits of their differences.
    """
    N = a.shape[0]
    R = min(int(diagonals), N - 1)
    out = np.zeros((N, len(kernels), R))
    inv = [1.0 / float(k.bandwidth) ** 2 for k in kernels]  # type: ignore[attr-defined]
    for i0 in range(0, N, _ROWS):
        i1 = min(i0 + _ROWS, N)
        valid = (np.arange(i0, i1)[:, None] + np.arange(1, R + 1)[None, :]) < N
        # a_i-a_j, b_i-b_j, a_i-b_j, b_i-a_j (the last: ||a_j - b_i||)
        D = (_sq(a, a, i0, i1, R), _sq(b, b, i0, i1, R), _sq(a, b, i0, i1, R),
             _sq(b, a, i0, i1, R))
        for m, (kern, s) in enumerate(zip(kernels, inv)):
            t = [np.expm1(kern._exponent(d * s)) for d in D]  # type: ignore[attr-defined]
            h = (t[0] + t[1]) - (t[2] + t[3])
            h[~valid] = 0.0
            out[i0:i1, m, :] = h
    return out


class IncompleteForm(KernelForm):
    """The kind of the incomplete U-statistics for the null methods: the wild bootstrap
    with Rademacher multipliers (which are swaps here, module docs), nothing else."""

    kind: ClassVar[str] = "incomplete"
    biased_name: ClassVar[str] = "(no V-form)"
    refusals: ClassVar[Mapping[str, str]] = {
        "gamma": "method='gamma' has no approximation of an incomplete U-statistic's null; "
                 "use method='wild' (default: Rademacher swaps, exact level).",
        "chi2": "method='chi2' has no weights for an incomplete U-statistic; use "
                "method='wild' (default: Rademacher swaps, exact level)."}

    @classmethod
    def wild_refusal(cls, info: FormInfo, process: str, statistic: Any) -> str | None:
        if process == "rademacher":
            return None
        return (f"{info.name} draws its null by Rademacher multipliers, which are swaps of "
                f"the pairs (exact level); process={process!r} is not: use method='wild' "
                "(process 'rademacher'), on i.i.d. data.")


@dataclass(frozen=True, eq=False)
class IncompleteDraws:
    """The members' ``h`` values on the design, drawn with the same multipliers.

    ``block(i0, i1)`` gives ``h`` of the rows ``i0..i1`` as ``(c, M, R)``; ``T_b =
    sum_i e_i sum_r e_{i+r} h[i, :, r] / L``, computed for ``WILD_DRAW`` draws at a time
    as matrix products of ``h`` with windows of the multipliers (fixed shapes and order:
    the same bits for any `batch` and `n_jobs`)."""

    block: Callable[[int, int], np.ndarray]
    n: int
    width: int
    diagonals: int
    pairs: int

    def given(self, W: np.ndarray) -> np.ndarray:
        """The members' statistics on the multipliers ``W`` (``b x N``): ``(b, M)``."""
        b, N, R = W.shape[0], self.n, self.diagonals
        E = np.zeros((N + R, WILD_DRAW))
        E[:N, :b] = W.T
        V = sliding_window_view(E, R, axis=0)          # V[i] = E[i:i+R] (as (B, R))
        acc = np.zeros((self.width, WILD_DRAW))
        for i0 in range(0, N, _ROWS):
            i1 = min(i0 + _ROWS, N)
            G = np.matmul(self.block(i0, i1), V[i0 + 1:i1 + 1].transpose(0, 2, 1))
            G *= E[i0:i1, None, :]
            acc += G.sum(axis=0)
        out: np.ndarray = acc[:, :b].T / self.pairs
        return out

    def wild_null(self, rng: np.random.Generator, size: int, process: str, length: float,
                  n_jobs: int | None) -> np.ndarray:
        """`size` draws of every member (``(size, M)``): the multipliers read from `rng`
        ``WILD_DRAW`` rows at a time, then evaluated on `n_jobs` threads."""
        Ws = [multipliers(rng, min(WILD_DRAW, size - s), self.n, "rademacher", length,
                          centred=False) for s in range(0, size, WILD_DRAW)]
        out = np.empty((size, self.width))

        def run(a: int, b: int) -> None:
            for c in range(a, b):
                out[c * WILD_DRAW:c * WILD_DRAW + Ws[c].shape[0]] = self.given(Ws[c])

        map_row_blocks(run, len(Ws), n_jobs, multiple=1)
        return out


def _scalar_kernel(kernel: Any, who: str) -> _BandwidthKernel:
    if not isinstance(kernel, _BandwidthKernel) or kernel._vector:
        raise ValueError(f"{who} aggregates over bandwidths: it needs a kernel with one "
                         f"bandwidth ('gaussian', 'laplacian', 'imq', 'matern32', ...); got "
                         f"{getattr(kernel, 'name', kernel)!r}.")
    return kernel


def distance_grid(z: np.ndarray, count: int, fix: str) -> np.ndarray:
    """`count` bandwidths on a geometric grid from half the 5% quantile to twice the 95%
    quantile of the non-zero pairwise distances of `z` (on the seeded, order-invariant
    subsample of :func:`kmtests.kernels.median_bandwidth` above 1000 points: a function
    of the set of points); one (the median distance) for ``count = 1``. `fix`: what the
    error for constant data advises."""
    from scipy.spatial.distance import pdist

    d = pdist(_canonical_subsample(np.asarray(z, dtype=np.float64), MEDIAN_MAX_POINTS))
    d = d[d > 0]
    if d.size == 0:
        raise ValueError(f"every pair of points ties (constant data): no bandwidth grid can "
                         f"be derived; {fix}.")
    lo, hi = float(np.quantile(d, 0.05)) / 2.0, float(np.quantile(d, 0.95)) * 2.0
    return np.geomspace(lo, hi, count) if count > 1 else np.array([float(np.median(d))])


def _collection(kernel: _BandwidthKernel, data: np.ndarray, levels: tuple[int, int] | None,
                grid: np.ndarray | None, quantile_default: bool, name: str
                ) -> tuple[_BandwidthKernel, np.ndarray, str]:
    """The reference kernel (fitted on `data`), the bandwidths, and their rule in words."""
    given = kernel.is_fitted
    ref: Any = kernel.fitted_to(data, name=name)
    if grid is not None:
        return ref, grid, "given"
    if levels is None and quantile_default and not given:
        return ref, distance_grid(data, 10, "give `grid`"), \
            "10 from the pooled distances' 5%-95% range"
    lo_l, hi_l = DEFAULT_LEVELS if levels is None else levels
    h = float(ref.bandwidth)
    return ref, np.array([2.0 ** ell * h for ell in range(lo_l, hi_l + 1)]), \
        f"2^l h for l = {lo_l}..{hi_l}, h = {h:.4g}"


class _AggInc(Statistic):
    """What MMDAggInc and HSICAggInc share (module docs)."""

    options: ClassVar[tuple[str, ...]] = ("diagonals", "levels", "grid", "weights")
    default_method: ClassVar[str] = "wild"
    symbol: ClassVar[str] = "min_j p_j/w_j"
    unbiased = True

    @property
    def permutation_refusal(self) -> str:
        """Why a PermutationMethod does not apply (its refusal)."""
        return (f"method='permutation' would recompute {self.family_name}'s kernels on every "
                "arrangement; its null is drawn by swaps of the pairs of its design: use "
                "method='wild' (its default; exact level).")

    def __init__(self, kernels: Mapping[str, Any], combination: Any,
                 diagonals: Any = None, levels: Any = None, grid: Any = None) -> None:
        self.estimator: KernelMeanEstimator = KME()  # the members' embeddings: the KME
        self.kernels = {role: _scalar_kernel(k, self.family_name) for role, k in kernels.items()}
        self.diagonals = (DEFAULT_DIAGONALS if diagonals is None
                          else check_positive_int(diagonals, "diagonals"))
        if levels is not None and grid is not None:
            raise ValueError(f"give {self.family_name}'s collection once: `grid` (the bandwidths) "
                             "or `levels` (the exponents of 2^l h).")
        self.levels = None if levels is None else _check_levels(levels)
        self.grid, self.combination = grid, combination

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        return cls(kernels, weighted_minp(options), options.get("diagonals"),
                   options.get("levels"), options.get("grid"))

    def refusal_subject(self) -> str:
        return self.family_name

    def check(self, problem: Any, tuning: str) -> None:
        if not problem.scheme.full:
            raise ValueError(f"{self.family_name} draws swaps of the pairs of its design, which do "
                             "not keep strata or blocks: use statistic='unbiased' with "
                             "`strata` or `blocks`.")
        if getattr(problem, "precomputed", False):
            raise ValueError(f"{self.family_name} evaluates its kernels on pairs of points: it "
                             "needs the data, not a precomputed Gram matrix.")

    def offers(self, engine: Engine) -> frozenset[str]:
        # the kernel on the design's pairs, computed here: the in-memory engine only (the
        # others would be ignored)
        return frozenset({"kernel_form"}) if engine.name == "exact" else frozenset()

    def form(self) -> FormInfo:
        return FormInfo(IncompleteForm, self.family_name, True, True)

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        return Requirements(self.scheme_name, dict(self.kernels))

    def _pairs_of(self, problem: Any) -> tuple[int, int]:
        N = self._n(problem)
        if N < 2:
            raise ValueError(f"{self.family_name} needs at least 2 pairs (N = {N}).")
        R = min(self.diagonals, N - 1)
        return N, R

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        N = max(self._n(problem), 2)
        R = min(self.diagonals, N - 1)
        stored, m = self._sizes()
        # the stored h values, one block of every member's h and its products, the signs
        need = 8.0 * N * R * stored + 8.0 * _ROWS * R * m * 2 + 8.0 * (N + R) * WILD_DRAW * 2
        return (need, f"the h values of {self.family_name} ({N} x {stored} x {R}: "
                      f"{format_bytes(need)})", "Use fewer bandwidths or `diagonals`.")

    def _prepared(self, blocks: Callable[[int, int], np.ndarray], N: int, R: int,
                  columns: list[tuple[str, dict[str, Any]]], kernels: dict[str, Any],
                  notes: list[str], what: str) -> Prepared:
        M = len(columns)
        L = R * N - R * (R + 1) // 2
        stats, scales = np.zeros(M), np.zeros(M)
        for i0 in range(0, N, _ROWS):   # the observed statistic: every sign +1
            H = blocks(i0, min(i0 + _ROWS, N))
            stats += H.sum(axis=(0, 2))
            scales += np.abs(H).sum(axis=(0, 2))
        stats /= L
        scales /= L
        draws = IncompleteDraws(blocks, N, M, R, L)

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return Values(stats[None, :], scales[None, :]), {}

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:  # pragma: no cover
            raise AssertionError("the incomplete U-statistics are drawn by swaps (wild)")

        notes = notes + [
            f"{self.family_name}: incomplete U-statistics on the design of the first {R} "
            f"superdiagonals ({L} of the {N * (N - 1) // 2} pairs of N = {N}); the "
            "Rademacher multipliers are swaps of the pairs, so the wild-bootstrap p-value "
            "is that of a permutation test over the swaps: exact level"]
        return Prepared(values, observed, kernels, what=what, columns=columns,
                        combination=self.combination, notes=notes,
                        kernel_form=lambda: draws,  # type: ignore[arg-type,return-value]
                        witness=(f"{self.family_name} combines the statistics of several "
                                 "bandwidths: run the test of the member of interest and ask "
                                 "its result"),
                        details={"diagonals": R, "pairs": L, "N": N},
                        report={"diagonals": R, "pairs": L, "N": N})

    # the subclasses
    scheme_name: ClassVar[str] = "split"

    def _n(self, problem: Any) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def _sizes(self) -> tuple[int, int]:
        """The bandwidths whose h values are stored (of each variable), and the members."""
        g = self.grid
        if g is None:
            lo, hi = DEFAULT_LEVELS if self.levels is None else self.levels
            per = [hi - lo + 1 if self.levels is not None else 10] * len(self.kernels)
            if len(self.kernels) > 1:
                per = [hi - lo + 1] * 2
        elif len(self.kernels) > 1:
            per = [int(np.size(v)) for v in g] if _is_pair(g) else [int(np.size(g))] * 2
        else:
            per = [int(np.size(g))]
        return sum(per), int(np.prod(per))


def _is_pair(grid: Any) -> bool:
    return (isinstance(grid, (tuple, list)) and len(grid) == 2
            and all(np.ndim(g) == 1 for g in grid))


class MMDAggInc(_AggInc):
    """MMDAggInc (module docs): two samples, the first ``min(n_x, n_y)`` points of each.

    Parameters
    ----------
    kernels : mapping
        ``{"kernel": Kernel}``, a kernel with one bandwidth (``"median"``: fitted on the
        pooled pairs).
    combination : MinP
        The min-p combination (its weights and level).
    diagonals : int, optional
        ``R``, the superdiagonals of the design (default 200).
    levels : (int, int), optional
        The collection ``2^l h``.
    grid : sequence of float, optional
        The collection itself.
    """

    name: ClassVar[str] = "mmdagginc"
    problem_kind: ClassVar[str] = "two_sample"
    family_name: ClassVar[str] = "MMDAggInc"

    def _n(self, problem: Any) -> int:
        return int(min(problem.n_x, problem.n_y))

    def describe(self, prepared: Prepared) -> str:
        bws = [a["bandwidth"] for _, a in prepared.columns]
        return (f"{self.label()}, the weighted minimum of the p-values of {len(bws)} "
                f"incomplete MMD^2_u members: {self.kernels['kernel'].name} kernel with "
                f"bandwidths {prepared.details['rule']} ({min(bws):.4g} to {max(bws):.4g}), "
                f"{prepared.details['pairs']} pairs (MMDAggInc)")

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        N, R = self._pairs_of(problem)
        z = problem.z
        a, b = z[:N], z[problem.n_x:problem.n_x + N]
        grid = None if self.grid is None else positive_grid(
            self.grid, f"`grid` must be distinct positive numbers (MMDAggInc's bandwidths); "
                       f"got {self.grid!r}.")
        ref, bws, rule = _collection(self.kernels["kernel"], np.vstack([a, b]), self.levels,
                                     grid, True, "the pooled pairs")
        _check_weights(getattr(self.combination, "weights", "uniform"), bws.size)
        kernels = [dataclasses.replace(ref, bandwidth=float(w)) for w in bws]
        h = h_values(kernels, a, b, R)
        notes = []
        if problem.n_x != problem.n_y:
            notes.append(f"MMDAggInc pairs x_i with y_i: the first N = {N} points of each "
                         f"sample are used, the last {max(problem.n_x, problem.n_y) - N} of "
                         "the larger sample are not")
        columns = [(f"{ref.name} bw={w:.3g}", {"bandwidth": float(w)}) for w in bws]
        prep = self._prepared(lambda i0, i1: h[i0:i1], N, R, columns, {"kernel": ref}, notes,
                              "MMDAggInc's incomplete MMD^2_u")
        prep.details["rule"] = rule
        return prep


class HSICAggInc(_AggInc):
    """HSICAggInc (module docs): the pairs of observations ``i`` and ``N + i``.

    Parameters are those of :class:`MMDAggInc`, with ``{"x": Kernel, "y": Kernel}``;
    `grid` is one sequence (both variables) or a pair of them (x's, y's). The members are
    the bandwidth pairs, x's varying fastest.
    """

    name: ClassVar[str] = "hsicagginc"
    problem_kind: ClassVar[str] = "independence"
    family_name: ClassVar[str] = "HSICAggInc"
    scheme_name: ClassVar[str] = "pairing"

    def _n(self, problem: Any) -> int:
        return int(problem.x.n // 2)

    def describe(self, prepared: Prepared) -> str:
        d = prepared.details
        return (f"{self.label()}, the weighted minimum of the p-values of "
                f"{len(prepared.columns)} incomplete HSIC members: bandwidths of x "
                f"{d['rule_x']}, of y {d['rule_y']}, {d['pairs']} pairs (HSICAggInc)")

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        N, R = self._pairs_of(problem)
        x, y = problem.x.values, problem.y.values
        grids: list[np.ndarray | None] = [None, None]
        if self.grid is not None:
            pair = self.grid if _is_pair(self.grid) else (self.grid, self.grid)
            grids = [positive_grid(g, f"`grid` must be distinct positive numbers, or a pair "
                                      f"of such sequences (x's, y's: HSICAggInc's "
                                      f"bandwidths); got {self.grid!r}.") for g in pair]
        refs, hs, rules = {}, [], []
        for role, data, g in (("x", x, grids[0]), ("y", y, grids[1])):
            ref, bws, rule = _collection(self.kernels[role], data, self.levels, g, False, role)
            refs[role] = ref
            rules.append(rule)
            kernels = [dataclasses.replace(ref, bandwidth=float(w)) for w in bws]
            hs.append((bws, h_values(kernels, data[:N], data[N:2 * N], R)))
        (bx, hx), (by, hy) = hs
        _check_weights(getattr(self.combination, "weights", "uniform"), bx.size * by.size)

        def block(i0: int, i1: int) -> np.ndarray:  # y's bandwidth slowest
            H = hy[i0:i1, :, None, :] * hx[i0:i1, None, :, :]
            return H.reshape(i1 - i0, by.size * bx.size, -1)

        columns = [(f"bw_x={u:.3g}, bw_y={v:.3g}", {"bandwidth_x": float(u),
                                                    "bandwidth_y": float(v)})
                   for v in by for u in bx]
        notes = []
        if problem.x.n % 2:
            notes.append("HSICAggInc pairs observation i with N + i: the last observation "
                         "is not used (n odd)")
        prep = self._prepared(block, N, R, columns, refs, notes, "HSICAggInc's incomplete HSIC")
        prep.details["rule_x"], prep.details["rule_y"] = rules
        return prep

