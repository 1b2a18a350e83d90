r"""Aggregated kernel tests: several statistics, one permutation null, exact level.

A collection of statistics — bandwidths, kernel mean estimators, U/V forms,
spectral-regularised statistics over a grid of lambdas — is computed on the
*same* permutations, and combined into one test whose level is exact:

``method="mmdagg"`` (Schrab et al., 2023; Albert et al., 2022)
    Each member ``j`` gets its permutation p-value ``p_j`` (its rank among
    the ``B + 1`` arrangements: the data and the ``B`` permutations, or all
    arrangements when they are enumerated). The aggregated statistic is the
    weighted minimum ``S = min_j p_j / w_j`` (weights ``w_j`` summing to 1), and
    its p-value is the rank of the observed ``S`` among the ``S`` of all
    arrangements (ties of ``S`` broken by the next smallest ``p_j / w_j``, see
    :func:`minp_combination`). Every arrangement's ``S`` is the same symmetric function of
    the ``B + 1`` statistic vectors, so under the null they are exchangeable
    and the p-value is exactly valid — the level correction of MMDAgg (its
    bisection for the largest ``u`` with ``P(exists j: p_j <= u w_j) <= alpha``)
    without splitting the permutations into two sets. At level ``alpha`` the
    member ``j`` "rejects" when ``p_j <= u_alpha w_j``, with ``u_alpha`` that
    correction (reported), or when it attains ``S`` and the test rejects
    through the tie-break: some member rejects exactly when the test does.
``method="fuse"`` (Biggs, Schrab & Gretton, 2023)
    The statistic is the soft maximum of the normalised members,
    ``FUSE = log sum_j w_j exp(nu T_j / N_j)`` with a permutation-invariant
    normaliser ``N_j`` and the temperature ``nu = sqrt(n (n - 1))``
    (``n`` the smaller sample, or the number of pairs), calibrated by the
    usual permutation p-value.

Costs: the members are computed one after another on the same permutation
stream (regenerated from the seed), so memory is one Gram matrix at a time, and
an aggregated test over ``M`` members costs about ``M`` single tests' engine
time; the lambdas of a spectral-regularised grid share one eigendecomposition
and one projection per permutation, so a whole grid costs about one test.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Literal, Sequence

import numpy as np

from . import _resampling
from ._typing import ArrayLike, SeedLike
from ._validation import as_sample, check_choice, check_positive_int, check_same_dim
from .engines import Values
from .estimators import KernelMeanEstimator, resolve_estimator
from .kernels import Kernel, resolve_kernel
from .null import NullMethod, PermutationMethod, resolve_method
from .results import IndependenceResult, KernelTestResult, TwoSampleResult

__all__ = ["AggregatedIndependenceResult", "AggregatedTwoSampleResult", "Member",
           "aggregated_independence_test", "aggregated_two_sample_test", "bandwidth_grid",
           "fuse_statistic", "lambda_grid", "member_rejections", "minp_combination"]

_METHODS = ("mmdagg", "fuse")
_WEIGHTS = ("uniform", "increasing", "decreasing", "centred")


# -- collections ------------------------------------------------------------------------------
def bandwidth_grid(z: np.ndarray, count: int = 10) -> np.ndarray:
    """A geometric grid of bandwidths from the pooled (or one variable's) distances.

    From half the 5% quantile to twice the 95% quantile of the non-zero
    pairwise Euclidean distances of `z` (on the seeded, order-invariant
    subsample of :func:`kmtests.kernels.median_bandwidth` above 1000 points): a
    function of the set of points, so the permutation tests stay exact. (MMDAgg
    takes its range from the distances *between* the two observed samples,
    which is not permutation-invariant; MMD-FUSE uses these quantiles with a
    linear grid.)

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.aggregated import bandwidth_grid
    >>> g = bandwidth_grid(np.random.default_rng(0).normal(size=(50, 2)), 5)
    >>> print(np.round(g, 3))
    [0.243 0.553 1.258 2.861 6.506]
    """
    from scipy.spatial.distance import pdist

    from .kernels import MEDIAN_MAX_POINTS, _canonical_subsample

    count = check_positive_int(count, "bandwidths")
    d = pdist(_canonical_subsample(np.asarray(z, dtype=np.float64), MEDIAN_MAX_POINTS))
    d = d[d > 0]
    if d.size == 0:
        raise ValueError("every pair of points ties (constant data): no bandwidth grid can be "
                         "derived; pass explicit `bandwidths`.")
    lo, hi = float(np.quantile(d, 0.05)) / 2.0, float(np.quantile(d, 0.95)) * 2.0
    return np.geomspace(lo, hi, count) if count > 1 else np.array([float(np.median(d))])


def lambda_grid(trace: float, count: int = 10) -> np.ndarray:
    """The default grid of regularisation parameters, ``trace x 10^[-6, 1]``.

    `trace` is the trace of the estimated covariance operator (``tr(Kc)/N``):
    for kernels bounded by 1 it is below 1 and the grid is close to the
    ``10^seq(-6, 1, 0.75)`` of Hagrass et al.'s code.
    """
    return float(trace) * np.logspace(-6.0, 1.0, check_positive_int(count, "lam"))


def _weights(kind: str | Sequence[float], m: int) -> np.ndarray:
    """Weights of MMDAgg (Schrab et al., Sec. 5.1) over `m` members, summing to 1."""
    if not isinstance(kind, str):
        w = np.asarray(kind, dtype=np.float64)
        if w.shape != (m,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise ValueError(f"`weights` must be 'uniform', 'increasing', 'decreasing', "
                             f"'centred' or {m} positive numbers; got {kind!r}.")
        return w / w.sum()
    kind = check_choice(kind, "weights", _WEIGHTS)
    i = np.arange(1, m + 1, dtype=np.float64)
    if kind == "uniform":
        w = np.ones(m)
    elif kind == "decreasing":
        w = 1.0 / i
    elif kind == "increasing":
        w = 1.0 / i[::-1]
    else:  # centred: largest in the middle
        w = 1.0 / (np.abs(i - (m + 1) / 2.0) + 1.0)
    return w / w.sum()


@dataclass(frozen=True)
class Member:
    """One statistic of a collection.

    Attributes
    ----------
    label : str
        How the report names it.
    kernel : Kernel
        The kernel, with its bandwidth fixed.
    estimator : KernelMeanEstimator
    statistic : str
        ``"unbiased"``, ``"biased"`` or ``"regularized"``.
    filter, lam : str and float, or None
        The spectral filter and its parameter (regularised members).
    attrs : dict
        What distinguishes it, for the members table (bandwidth(s),
        estimator, form, filter, lam).
    """

    label: str
    kernel: Kernel
    estimator: KernelMeanEstimator
    statistic: str
    filter: str | None = None
    lam: float | None = None
    attrs: dict[str, Any] = field(default_factory=dict)


# -- combinations -------------------------------------------------------------------------------
def _rank_pvalues(T: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """``p[b, j] = #{c: T[c, j] >= T[b, j] - tol[b, j]} / A`` for A arrangements (rows)."""
    A = T.shape[0]
    P = np.empty_like(T)
    for j in range(T.shape[1]):
        col = T[:, j]
        order = np.sort(col)
        # count of values >= threshold: A - (number strictly below threshold)
        below = np.searchsorted(order, col - tol[:, j], side="left")
        P[:, j] = (A - below) / A
    return P


def _lex_count(R: np.ndarray) -> int:
    """Rows ``b`` whose ascending-sorted vector ``R_b`` is lexicographically ``<=`` row 0's.

    Entries are compared with a relative tolerance (they are ratios of counts
    by weights, equal up to the rounding of the division).
    """
    Rs = np.sort(R, axis=1)
    diff = Rs - Rs[0:1, :]
    diff[np.abs(diff) <= 1e-12 * np.maximum(np.abs(Rs[0:1, :]), 1e-300)] = 0.0
    nz = diff != 0
    first = np.argmax(nz, axis=1)                    # first differing entry
    equal = ~nz.any(axis=1)
    less = ~equal & (diff[np.arange(R.shape[0]), first] < 0)
    return int(np.count_nonzero(less | equal))


def minp_combination(T: np.ndarray, scales: np.ndarray, w: np.ndarray, alpha: float
                     ) -> tuple[float, np.ndarray, float, int]:
    """The MMDAgg combination on the statistics of all arrangements (row 0: the data).

    Each arrangement ``b`` gets the vector of its members' normalised p-values
    ``p_j(b)/w_j``; arrangements are ordered by the smallest of them,
    ``S_b = min_j p_j(b)/w_j``, ties broken by the next smallest and so on
    (lexicographically on the sorted vectors: a symmetric function of the
    arrangements, so the level stays exact, and ties of ``S`` — frequent,
    because ``p_j`` are ranks — no longer make the test conservative). The
    p-value is the rank of the data's vector among all ``A`` arrangements.

    Parameters
    ----------
    T : ndarray, shape (A, M)
        The members' statistics (columns) on every arrangement (rows; row 0
        is the data, the others the permutations or the enumerated
        arrangements).
    scales : ndarray, shape (A, M)
        Rounding scales of the statistics (ties within ``1e-12`` of them
        count as equal); zeros for exact comparisons.
    w : ndarray, shape (M,)
        Positive weights summing to 1.
    alpha : float
        The level of the reported threshold.

    Returns
    -------
    pvalue : float
        The rank of the data among the ``A`` arrangements, over ``A``.
    member_pvalues : ndarray, shape (M,)
        Each member's permutation p-value on the data.
    u_alpha : float
        The largest ``u`` with ``#{b: S_b <= u} <= alpha A``: a member with
        ``p_j <= u_alpha w_j`` makes the test reject at ``alpha``.
    count : int
        ``pvalue * A``.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.aggregated import minp_combination
    >>> T = np.random.default_rng(0).normal(size=(100, 3))
    >>> T[0] = [2.5, 0.0, 1.0]          # the data: large in the first member
    >>> p, pm, u, count = minp_combination(T, np.zeros_like(T), np.full(3, 1 / 3), 0.05)
    >>> print(pm, f"{p:.2f}", f"{u:.3f}")
    [0.03 0.46 0.15] 0.07 0.030
    """
    tol = _resampling.TIE_RTOL * (scales + scales[0:1, :])
    P = _rank_pvalues(T, tol)
    R = P / w[None, :]
    S = np.min(R, axis=1)
    A = T.shape[0]
    count = _lex_count(R)
    pvalue = count / A
    # u_alpha: the largest u with #{b: S_b <= u}/A <= alpha (the level-corrected threshold)
    Ss = np.sort(S)
    k = int(np.floor(alpha * A + 1e-9))
    u = float(Ss[k - 1]) if k >= 1 else 0.0
    if k < A and k >= 1 and Ss[k] == Ss[k - 1]:  # ties at the cut: stay at or below alpha
        below = Ss[Ss < Ss[k - 1]]
        u = float(below[-1]) if below.size else 0.0
    return pvalue, P[0], u, count


def member_rejections(pm: np.ndarray, w: np.ndarray, u: float, pvalue: float, alpha: float
                      ) -> np.ndarray:
    """Which members reject at `alpha`: ``p_j <= u_alpha w_j``, or ``p_j / w_j = S`` (the
    data's minimum) when the test rejects through the tie-break at the cut. Some member
    rejects exactly when the test does."""
    s = float(np.min(pm / w))
    return (pm <= u * w) | ((pvalue <= alpha) & (pm / w <= s * (1 + 1e-12)))


def fuse_statistic(T: np.ndarray, norms: np.ndarray, w: np.ndarray, nu: float) -> np.ndarray:
    """``log sum_j w_j exp(nu T_j / N_j)`` for every row (stable log-sum-exp).

    Parameters
    ----------
    T : ndarray, shape (A, M)
        The members' statistics on every arrangement.
    norms : ndarray, shape (M,)
        The permutation-invariant normalisers ``N_j``.
    w : ndarray, shape (M,)
        The prior weights (summing to 1).
    nu : float
        The temperature (``sqrt(n (n - 1))`` in the tests).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.aggregated import fuse_statistic
    >>> print(fuse_statistic(np.array([[0.0, 0.0], [1.0, 0.0]]), np.ones(2),
    ...                      np.full(2, 0.5), 2.0).round(4))
    [0.     1.4338]
    """
    from scipy.special import logsumexp

    Z = nu * T / norms[None, :]
    return logsumexp(Z, axis=1, b=w[None, :])


# -- results ------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False, eq=False)
class _AggregatedFields:
    """The members of an aggregated test and how they were combined."""

    members: tuple[dict[str, Any], ...] = ()
    combination: str = "mmdagg"
    alpha: float = 0.05
    threshold: float | None = None


_NUMBERS = ("statistic", "pvalue", "weight", "threshold", "rejects", "normalizer")


@dataclass(frozen=True, repr=False, eq=False)
class _AggregatedReport:
    """What aggregated results add to a test result (first base, so its report methods
    come first): the members, the combination and its threshold, the members table."""

    members: tuple[dict[str, Any], ...] = ()
    combination: str = "mmdagg"
    alpha: float = 0.05
    threshold: float | None = None

    def _settings_lines(self) -> list[tuple[Any, ...]]:
        return _settings_lines(self)

    def summary(self, alpha: float = 0.05) -> Any:
        return _summary_with_members(self, alpha)

    def members_frame(self) -> Any:
        """The members as a pandas DataFrame: what distinguishes each member (bandwidth(s),
        estimator, form, filter, lam), its statistic, p-value and weight, and for MMDAgg
        its threshold ``u_alpha w_j`` and whether it rejects at `alpha`."""
        import pandas as pd

        frame = pd.DataFrame([{k: v for k, v in m.items() if k != "member"}
                              for m in self.members],
                             index=pd.Index([m["member"] for m in self.members], name="member"))
        return frame

    def _varying(self) -> tuple[list[str], dict[str, Any]]:
        """Descriptive columns that differ between members, and those that do not."""
        keys = [k for k in self.members[0] if k not in _NUMBERS and k != "member"]
        varying, constant = [], {}
        for k in keys:
            vals = {repr(m.get(k)) for m in self.members}
            if len(vals) > 1:
                varying.append(k)
            else:
                constant[k] = self.members[0].get(k)
        return varying, constant

    def members_table(self) -> Any:
        """The members as a statsmodels SimpleTable (the columns that vary, and results)."""
        from statsmodels.iolib.table import SimpleTable
        from statsmodels.iolib.tableformatting import fmt_params

        from ._summary import format_number

        varying, _ = self._varying()
        uniform = len({round(m["weight"], 12) for m in self.members}) == 1
        cols = varying + ["statistic", "pvalue"] + ([] if uniform else ["weight"])
        if self.combination == "mmdagg":
            cols.append("rejects")
        head = {"pvalue": "p-value", "bandwidth_x": "bw x", "bandwidth_y": "bw y",
                "bandwidth": "bandwidth"}

        def cell(k: str, v: Any) -> str:
            if k == "rejects":
                return "yes" if v else "no"
            if isinstance(v, float):
                return format_number(v) if k != "pvalue" else f"{v:.4g}"
            return "-" if v is None else str(v)

        data = [[cell(k, m.get(k)) for k in cols] for m in self.members]
        fmt = copy.deepcopy(fmt_params)
        return SimpleTable(data, headers=[head.get(k, k) for k in cols],
                           stubs=[str(i + 1) for i in range(len(self.members))],
                           title="Members", txt_fmt=fmt)


_NAMES = {"bandwidth": "Bandwidth", "bandwidth_x": "Bandwidth (x)",
          "bandwidth_y": "Bandwidth (y)", "estimator": "Estimator", "form": "Form",
          "filter": "Filter", "lam": "Lambda"}


def _settings_lines(res: Any) -> list[tuple[Any, ...]]:
    """The settings table of an aggregated result: the combination, what all members
    share, the ranges of what varies, the sizes and the null."""
    from .results import _flow

    varying, constant = res._varying()
    general: list[tuple[str, Any]] = [
        ("Combination", "MMDAgg (min p)" if res.combination == "mmdagg" else "MMD-FUSE"),
        ("Members", len(res.members))]
    for role, kern in res.kernels.items():
        general.append(("Kernel" if role == "kernel" else f"Kernel ({role})",
                        kern.describe().split(" (")[0]))
    for k, v in constant.items():
        if v is not None:
            general.append((_NAMES.get(k, k), v))
    for k in varying:
        vals = [m[k] for m in res.members if m.get(k) is not None]
        if vals and all(isinstance(v, float) for v in vals):
            general.append((_NAMES.get(k, k), f"{min(vals):.4g} to {max(vals):.4g}"))
        elif vals:
            general.append((_NAMES.get(k, k), ", ".join(dict.fromkeys(str(v) for v in vals))))
    lines = _flow(general)
    sizes = list(res.sizes.items())
    lines += [(sizes[0], sizes[1])] if len(sizes) == 2 else _flow(sizes)
    if res.data_name != "x and y":
        lines.append((("Data", res.data_name),))
    lines += _flow(res.method.info_rows(res))
    return lines


def _summary_with_members(res: Any, alpha: float) -> Any:
    from .results import KernelTestResult

    summ = KernelTestResult.summary(res, alpha)
    members = res.members_table()
    summ.tables.append(members)
    if summ._html_tables is not None:
        summ._html_tables.append(members)
    if res.combination == "mmdagg":
        summ.notes = [n.replace("p-value = (1 + #{T_b >= T}) / (1 + B)",
                                "p-value = #{S_b <= S} / (1 + B), small S being evidence")
                      for n in summ.notes]
        notes = ["The statistic S = min_j p_j/w_j is the weighted minimum of the members' "
                 "permutation p-values (MMDAgg); its p-value is its rank among the same "
                 "minimum over all arrangements (ties broken by the next smallest p_j/w_j): "
                 "exact level, the members computed on the same permutations."]
        if res.threshold is not None:
            notes.append(f"At level {res.alpha:g} a member rejects when p_j <= u w_j, with "
                         f"the level-corrected u = {res.threshold:.4g} (or when it attains "
                         "the minimum and the tie-break rejects); the test rejects exactly "
                         "when a member does.")
    else:
        notes = ["The statistic is the soft maximum log sum_j w_j exp(nu T_j / N_j) of the "
                 "normalised members (MMD-FUSE), nu = sqrt(n (n - 1)); every member is "
                 "computed on the same permutations: exact level."]
    summ.notes[1:1] = notes
    return summ


@dataclass(frozen=True, repr=False, eq=False)
class AggregatedTwoSampleResult(_AggregatedReport, TwoSampleResult):
    """Result of :func:`aggregated_two_sample_test` (the members in ``members``)."""

    title: ClassVar[str] = "Aggregated kernel two-sample test (MMD)"


@dataclass(frozen=True, repr=False, eq=False)
class AggregatedIndependenceResult(_AggregatedReport, IndependenceResult):
    """Result of :func:`aggregated_independence_test` (the members in ``members``)."""

    title: ClassVar[str] = "Aggregated kernel independence test (HSIC)"


# -- the shared null computation -----------------------------------------------------------------
@dataclass
class _Group:
    """Members computed together: a callable giving their statistics for a batch."""

    members: list[Member]
    values: Callable[[np.ndarray], Values]      # perms -> stat (B, len(members))
    norms: np.ndarray                            # FUSE normalisers, one per member


#: a member's FUSE normaliser when none is needed (method='mmdagg' does not use them, and
#: each would cost one more Gram matrix)
_NO_NORM = np.array([np.nan])


def _run_groups(groups: list[_Group], plan: _resampling.PermutationPlan,
                gen: np.random.Generator, n: int, kind: str, n_x: int,
                progress: bool | None) -> tuple[np.ndarray, np.ndarray]:
    """Statistics and scales of the data (row 0) and of every arrangement of the plan.

    Every group sees the same permutations: the stream is regenerated from a copy
    of the generator's state for each group.
    """
    M = sum(len(g.members) for g in groups)
    rows = plan.n_resamples + (0 if plan.exact else 1)
    T = np.empty((rows, M))
    S = np.empty((rows, M))
    ident = np.arange(n, dtype=np.int64)[None, :]
    state = copy.deepcopy(gen)
    bar = _resampling._progress_bar(progress, plan.n_resamples * len(groups), None)
    col = 0
    try:
        for g in groups:
            k = len(g.members)
            r0 = 0
            if not plan.exact:
                v = g.values(ident)
                T[0, col:col + k], S[0, col:col + k] = v.stat.reshape(-1), v.scale.reshape(-1)
                r0 = 1
            for perms in _resampling.permutation_batches(plan, copy.deepcopy(state), n, kind,
                                                         n_x):
                v = g.values(perms)
                b = perms.shape[0]
                T[r0:r0 + b, col:col + k] = v.stat.reshape(b, k)
                S[r0:r0 + b, col:col + k] = v.scale.reshape(b, k)
                r0 += b
                if bar is not None:
                    bar.update(b)
            col += k
    finally:
        if bar is not None:
            bar.close()
    if plan.exact:  # the data are the first enumerated arrangement (identity)
        pass
    return T, S


def _combine(T: np.ndarray, S: np.ndarray, groups: list[_Group], w: np.ndarray,
             method: str, alpha: float, nu: float, exact: bool, what: str
             ) -> tuple[float, float, int, list[dict[str, Any]], float | None, np.ndarray]:
    """(aggregated statistic, p-value, count, member rows, threshold, null of the aggregate)."""
    for j in range(T.shape[1]):
        _resampling.check_finite_statistic(float(T[0, j]), T[1:, j], f"{what} (member {j + 1})")
    members = [m for g in groups for m in g.members]
    if method == "mmdagg":
        p, pm, u, count = minp_combination(T, S, w, alpha)
        agg = float(np.min(pm / w))
        rejects = member_rejections(pm, w, u, p, alpha)
        rows = [{"member": m.label, **m.attrs, "statistic": float(T[0, j]),
                 "pvalue": float(pm[j]), "weight": float(w[j]), "threshold": u * float(w[j]),
                 "rejects": bool(rejects[j])} for j, m in enumerate(members)]
        null = np.min(_rank_pvalues(T, _resampling.TIE_RTOL * (S + S[0:1, :])) / w[None, :],
                      axis=1)[0 if exact else 1:]
        return agg, p, count, rows, u, null
    norms = np.concatenate([g.norms for g in groups])
    F = fuse_statistic(T, norms, w, nu)
    tol = _resampling.TIE_RTOL * np.maximum(np.abs(F), 1.0)
    count = int(np.count_nonzero(F >= F[0] - (tol + tol[0])))
    A = T.shape[0]
    p = count / A
    member_p = _rank_pvalues(T, _resampling.TIE_RTOL * (S + S[0:1, :]))[0]
    rows = [{"member": m.label, **m.attrs, "statistic": float(T[0, j]),
             "pvalue": float(member_p[j]),
             "weight": float(w[j]), "normalizer": float(norms[j])}
            for j, m in enumerate(members)]
    return float(F[0]), p, count, rows, None, F[0 if exact else 1:]


# -- the two-sample collection -------------------------------------------------------------------
def _kernels_for(kernel: Any, bandwidths: Any, data: np.ndarray, name: str
                 ) -> list[Kernel]:
    """The kernels of a collection: one per bandwidth, or the kernel itself."""
    kern = resolve_kernel(kernel, "median", name=f"kernel{name}")
    if not kern.has_bandwidth:
        if not _is_auto(bandwidths):
            raise ValueError(f"`bandwidths{name}` does not apply to the {kern.name} kernel.")
        return [kern]
    if kern.is_fitted:
        return [kern]
    if _is_auto(bandwidths):
        grid = bandwidth_grid(data, 10)
    elif isinstance(bandwidths, (int, np.integer)) and not isinstance(bandwidths, bool):
        grid = bandwidth_grid(data, int(bandwidths))
    else:
        grid = np.atleast_1d(np.asarray(bandwidths, dtype=np.float64))
        if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) \
                or np.any(grid <= 0):
            raise ValueError(f"`bandwidths{name}` must be 'auto', a number of bandwidths or "
                             f"positive numbers; got {bandwidths!r}.")
    import dataclasses

    from .kernels import _BandwidthKernel

    assert isinstance(kern, _BandwidthKernel)  # has_bandwidth
    return [dataclasses.replace(kern, bandwidth=float(b)) for b in grid]


def _is_auto(value: Any) -> bool:
    """`value` is None or the string "auto" (comparing an array with "auto" is ambiguous)."""
    return value is None or (isinstance(value, str) and value == "auto")


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, KernelMeanEstimator)) or not isinstance(value, Iterable):
        return [value]
    return list(value)


def _attrs(kernels: dict[str, Kernel], estimator: str, form: str, lam: float | None = None
           ) -> dict[str, Any]:
    """A member's descriptive columns: bandwidth(s), estimator, form (U, V or the filter),
    lam."""
    out: dict[str, Any] = {}
    for key, k in kernels.items():
        bw = getattr(k, "bandwidth", None)
        out[key] = float(bw) if isinstance(bw, (float, int)) else None
    out.update(estimator=estimator, form=form, lam=lam)
    return out


def _describe_kernel(k: Kernel) -> str:
    bw = getattr(k, "bandwidth", None)
    return f"{k.name} bw={float(bw):.3g}" if isinstance(bw, (float, int)) else k.name


def aggregated_two_sample_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    kernel: Any = "gaussian",
    bandwidths: Any = "auto",
    estimators: Any = ("kme",),
    statistics: Any = ("unbiased",),
    filters: Any = None,
    lams: Any = "auto",
    method: Literal["mmdagg", "fuse"] = "mmdagg",
    weights: Any = "uniform",
    alpha: float = 0.05,
    null: PermutationMethod | None = None,
    n_resamples: int | None = None,
    rng: SeedLike = None,
    batch: int | None = None,
    n_jobs: int | None = None,
    progress: bool | None = None,
    data_name: str | None = None,
    _held_out: np.ndarray | None = None,
) -> AggregatedTwoSampleResult:
    r"""Aggregated kernel two-sample test over a collection of MMD statistics.

    The collection is the product of the kernels (one per bandwidth), the
    estimators and the statistic forms, plus the spectral-regularised MMDs of
    every filter in `filters` over the `lams` grid (pooled covariance
    operator; see :func:`kmtests.two_sample_test`). All members are computed on
    the same permutations and combined with exact level (module docs).

    Parameters
    ----------
    x, y : array_like
        The two samples, as for :func:`kmtests.two_sample_test`.
    kernel : str or Kernel
        ``"gaussian"`` (default), ``"laplacian"``, ... A Kernel object with a
        fixed bandwidth is used as it is.
    bandwidths : "auto", int or sequence of float
        ``"auto"``: 10 bandwidths on a geometric grid from the pooled
        distances (:func:`bandwidth_grid`); an int: that many; or the
        bandwidths themselves.
    estimators : str, KernelMeanEstimator or sequence of them
        The kernel mean estimators (default the KME).
    statistics : {"unbiased", "biased"} or a sequence of them
        The statistic forms (default the U-statistic, as in MMDAgg and
        MMD-FUSE: zero mean under the null, which the FUSE soft maximum
        needs).
    filters : str or sequence of str, optional
        Spectral filters (``"tikhonov"``, ``"showalter"``,
        ``"iterated_tikhonov"``, ``"cutoff"``) of regularised members, one per
        filter, kernel and lambda.
    lams : "auto" or sequence of float
        The regularisation parameters of the regularised members (operator
        units; ``"auto"``: :func:`lambda_grid`).
    method : {"mmdagg", "fuse"}
        The combination (module docs).
    weights : {"uniform", "increasing", "decreasing", "centred"} or sequence
        The members' weights (MMDAgg's, in the order of the collection:
        bandwidths vary fastest). For FUSE, the prior weights of the soft
        maximum.
    alpha : float
        The level at which the report says which members reject.
    null : PermutationMethod, optional
        The permutation null (otherwise `n_resamples`, `rng`, `batch`,
        `n_jobs`, `progress` configure it; default 1999 permutations).
    data_name : str, optional
        Name of the data for the report.

    Returns
    -------
    AggregatedTwoSampleResult
        ``statistic`` is the aggregated statistic (MMDAgg: the weighted
        minimum p-value; FUSE: the soft maximum), ``pvalue`` its exact
        permutation p-value, ``members`` one row per member (statistic,
        p-value, weight, and for MMDAgg its threshold and whether it rejects
        at `alpha`).

    References
    ----------
    .. [1] Schrab, Kim, Albert, Laurent, Guedj, Gretton (2023). MMD aggregated
       two-sample test. JMLR 24.
    .. [2] Biggs, Schrab, Gretton (2023). MMD-FUSE: learning and combining
       kernels for two-sample testing without data splitting. NeurIPS.
    .. [3] Hagrass, Sriperumbudur, Li (2024). Spectral regularized kernel
       two-sample tests. Ann. Statist.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import aggregated_two_sample_test
    >>> gen = np.random.default_rng(0)
    >>> x, y = gen.normal(size=(50, 2)), gen.normal(size=(50, 2)) * [1.0, 2.5]
    >>> res = aggregated_two_sample_test(x, y, bandwidths=5, n_resamples=499, rng=1)
    >>> print(f"{res.pvalue:.3f}, {sum(m['rejects'] for m in res.members)} of 5 members reject")
    0.006, 2 of 5 members reject
    >>> print(res.members_frame()[["bandwidth", "pvalue", "rejects"]].round(3))
    ... # doctest: +NORMALIZE_WHITESPACE
                               bandwidth  pvalue  rejects
    member
    gaussian bw=0.307, kme, U      0.307   0.198    False
    gaussian bw=0.737, kme, U      0.737   0.004     True
    gaussian bw=1.77, kme, U       1.770   0.002     True
    gaussian bw=4.25, kme, U       4.255   0.024    False
    gaussian bw=10.2, kme, U      10.225   0.384    False
    """
    from .twosample import _TwoSample

    meth = _null_method(null, n_resamples, batch, rng, n_jobs, progress)
    combination = check_choice(method, "method", _METHODS)
    if not 0 < alpha < 1:
        raise ValueError(f"`alpha` must be in (0, 1); got {alpha!r}.")
    xa, ya = as_sample(x, "x"), as_sample(y, "y")
    check_same_dim(xa, ya)
    z = np.vstack([xa, ya])
    n_x, n_y = xa.shape[0], ya.shape[0]
    ests = [resolve_estimator(e) for e in _as_list(estimators)]
    stats = [check_choice(s, "statistics", ("unbiased", "biased")) for s in _as_list(statistics)]
    filts = [check_choice(f, "filters", tuple(_filter_names())) for f in _as_list(filters)]
    kerns = _kernels_for(kernel, bandwidths, z, "")
    if not (ests and stats) and not filts:
        raise ValueError("the collection is empty: give `estimators` and `statistics`, or "
                         "`filters`.")
    groups: list[_Group] = []
    for est in ests:
        for stat in stats:
            for kern in kerns:
                problem = _TwoSample(kern, est, stat == "unbiased", z, None, n_x, n_y)
                prepared = problem.prepare("permutation")
                label = (f"{_describe_kernel(kern)}, {est.name}, "
                         f"{'U' if stat == 'unbiased' else 'V'}")
                groups.append(_Group(
                    [Member(label, kern, est, stat, attrs=_attrs(
                        {"bandwidth": kern}, est.name, "U" if stat == "unbiased" else "V"))],
                    _member_values(prepared, meth.n_jobs),
                    (np.array([_fuse_norm_mmd(kern, z, min(n_x, n_y))]) if combination == "fuse"
                     else _NO_NORM)))
    if _held_out is not None and groups:
        raise ValueError("covariance='split' applies to regularised members only.")
    for f in filts:
        for kern in kerns:
            groups.append(_regularized_group(kern, f, lams, z, n_x, meth.n_jobs, _held_out))
    m_total = sum(len(g.members) for g in groups)
    w = _weights(weights, m_total)
    plan = _resampling.plan_two_sample(n_x, n_y, meth.n_resamples, meth.batch)
    from ._validation import check_rng, seed_of

    T, S = _run_groups(groups, plan, check_rng(meth.rng), n_x + n_y, "split", n_x,
                       meth.progress)
    nmin = min(n_x, n_y)
    agg, p, count, rows, u, null_agg = _combine(
        T, S, groups, w, combination, alpha, float(np.sqrt(nmin * (nmin - 1))), plan.exact,
        "the MMD statistic")
    from ._driver import data_label

    return AggregatedTwoSampleResult(
        statistic=agg, pvalue=p, null_distribution=null_agg, method=meth, exact=plan.exact,
        n_resamples=plan.n_resamples, count=count,
        statistic_name="min_j p_j/w_j" if combination == "mmdagg" else "FUSE",
        estimator=ests[0] if ests else resolve_estimator("kme"), params={},
        kernels={"kernel": kerns[0]}, sizes={"n_x": n_x, "n_y": n_y},
        seed=seed_of(meth.rng), tuning="permutation",
        data_name=data_name or f"{data_label(x, 'x')} and {data_label(y, 'y')}",
        members=tuple(rows), combination=combination, alpha=alpha, threshold=u)


def _filter_names() -> list[str]:
    from .engines.spectral import FILTERS

    return list(FILTERS)


def _null_method(null: Any, n_resamples: Any, batch: Any, rng: Any, n_jobs: Any,
                 progress: Any) -> PermutationMethod:
    if null is None:
        meth = resolve_method("permutation", n_resamples=1999 if n_resamples is None
                              else n_resamples, batch=batch, rng=rng, n_jobs=n_jobs,
                              progress=progress)
    else:
        if not isinstance(null, PermutationMethod):
            raise TypeError("`null` must be a PermutationMethod (aggregated tests are "
                            "calibrated by permutations).")
        meth = resolve_method(null, n_resamples=n_resamples, batch=batch, rng=rng,
                              n_jobs=n_jobs, progress=progress)
    assert isinstance(meth, PermutationMethod)
    return meth


def _member_values(prepared: Any, n_jobs: int | None) -> Callable[[np.ndarray], Values]:
    """The statistics of a single test's prepared problem, as a one-column matrix."""
    def values(perms: np.ndarray) -> Values:
        return _as_matrix(prepared.values(perms, n_jobs))

    return values


def _as_matrix(v: Values) -> Values:
    stat = np.asarray(v.stat)
    return Values(stat.reshape(stat.shape[0], -1), np.asarray(v.scale).reshape(stat.shape[0], -1))


def _fuse_norm_mmd(kern: Kernel, z: np.ndarray, nmin: int) -> float:
    """MMD-FUSE's normaliser: the Frobenius norm of the pooled Gram matrix with zero
    diagonal, over ``n (n - 1)`` (``n`` the smaller sample), so that ``nu MMD^2_u / N`` is
    the published ``n (n - 1) sqrt(n (n - 1)) MMD^2_u / ||K||_F``."""
    K = kern.gram(z)
    np.fill_diagonal(K, 0.0)
    return float(np.sqrt(np.einsum("ij,ij->", K, K))) / (nmin * (nmin - 1))


def _regularized_group(kern: Kernel, filt: str, lams: Any, z: np.ndarray, n_x: int,
                       n_jobs: int | None, held_out: np.ndarray | None = None) -> _Group:
    """The spectral-regularised MMDs of one kernel over a lambda grid (pooled operator, or
    the operator of `held_out` points)."""
    from .engines.spectral import (filter_function, held_out_spectral, pooled_spectral,
                                   spectral_mmd_values)

    kern = kern.fitted_to(z, name="the pooled sample")
    cg = kern.centred_gram(z, name="the pooled sample")
    if held_out is None:
        grid = _lams(lams, cg.trace_c / cg.n)
        sg = pooled_spectral(cg, filter_function(filt), grid)
    else:
        K_z = kern.gram(held_out)
        s = held_out.shape[0]
        grid = _lams(lams, float(np.trace(K_z) - K_z.sum() / s) / (s - 1))
        sg, _ = held_out_spectral(cg, kern.gram(z, held_out), K_z, filter_function(filt), grid)
    members = [Member(f"{_describe_kernel(kern)}, {filt} lam={lam:.3g}", kern,
                      resolve_estimator("kme"), "regularized", filt, float(lam),
                      attrs=_attrs({"bandwidth": kern}, "kme", filt, float(lam)))
               for lam in grid]
    # Frobenius norm of Kc_lambda without its diagonal (from the eigenvalues), as for MMD
    nmin = min(n_x, z.shape[0] - n_x)
    norms = np.sqrt(np.maximum(np.sum(sg.coef**2, axis=0) - np.sum(sg.diag**2, axis=0), 0.0))
    norms = norms / (nmin * (nmin - 1))
    return _Group(members, lambda perms: spectral_mmd_values(sg, perms, n_x, True, n_jobs),
                  norms)


def _lams(lams: Any, trace: float) -> np.ndarray:
    if isinstance(lams, str):
        if lams.lower() != "auto":
            raise ValueError(f"`lam` must be 'auto', a positive number or a sequence of them; "
                             f"got {lams!r}.")
        return lambda_grid(trace)
    grid = np.atleast_1d(np.asarray(lams, dtype=np.float64))
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError(f"`lam` must be 'auto', a positive number or a sequence of them; got "
                         f"{lams!r}.")
    return grid


# -- the independence collection -------------------------------------------------------------------
def aggregated_independence_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    kernel_x: Any = "gaussian",
    kernel_y: Any = "gaussian",
    bandwidths_x: Any = "auto",
    bandwidths_y: Any = "auto",
    estimators: Any = ("kme",),
    statistics: Any = ("unbiased",),
    filters: Any = None,
    lams: Any = "auto",
    method: Literal["mmdagg", "fuse"] = "mmdagg",
    weights: Any = "uniform",
    alpha: float = 0.05,
    null: PermutationMethod | None = None,
    n_resamples: int | None = None,
    rng: SeedLike = None,
    batch: int | None = None,
    n_jobs: int | None = None,
    progress: bool | None = None,
    data_name: str | None = None,
) -> AggregatedIndependenceResult:
    r"""Aggregated kernel independence test (HSICAgg / HSIC-FUSE) over a collection.

    The collection is the product of the bandwidth pairs (``bandwidths_x`` x
    ``bandwidths_y``, default 5 x 5 from each variable's distances), the
    estimators and the statistic forms, plus the regularised (normalised
    cross-covariance) statistics of every filter in `filters` over the `lams`
    grid, with the same lambda for both variables (see
    :func:`kmtests.independence_test`). Combined with exact level as in
    :func:`aggregated_two_sample_test` (HSICAgg: Albert et al., 2022; Schrab
    et al., 2022). For FUSE the normaliser of a member is the Frobenius norm of
    ``Kc o Lc`` without its diagonal.

    Parameters are as in :func:`aggregated_two_sample_test`, per variable.

    Returns
    -------
    AggregatedIndependenceResult

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import aggregated_independence_test
    >>> gen = np.random.default_rng(0)
    >>> u = gen.uniform(-np.pi, np.pi, 60)
    >>> v = np.sin(4 * u) + gen.normal(size=60)
    >>> res = aggregated_independence_test(u, v, bandwidths_x=3, bandwidths_y=3,
    ...                                    n_resamples=499, rng=1)
    >>> print(f"{res.pvalue:.3f}")
    0.004
    """
    from .independence import _Independence, _Variable

    meth = _null_method(null, n_resamples, batch, rng, n_jobs, progress)
    combination = check_choice(method, "method", _METHODS)
    if not 0 < alpha < 1:
        raise ValueError(f"`alpha` must be in (0, 1); got {alpha!r}.")
    xa, ya = as_sample(x, "x"), as_sample(y, "y")
    if xa.shape[0] != ya.shape[0]:
        raise ValueError("`x` and `y` must have the same number of observations (paired "
                         f"data); got {xa.shape[0]} and {ya.shape[0]}.")
    n = xa.shape[0]
    ests = [resolve_estimator(e) for e in _as_list(estimators)]
    stats = [check_choice(s, "statistics", ("unbiased", "biased")) for s in _as_list(statistics)]
    filts = [check_choice(f, "filters", tuple(_filter_names())) for f in _as_list(filters)]
    bx = 5 if isinstance(bandwidths_x, str) and bandwidths_x == "auto" else bandwidths_x
    by = 5 if isinstance(bandwidths_y, str) and bandwidths_y == "auto" else bandwidths_y
    kxs = _kernels_for(kernel_x, bx, xa, "_x")
    kys = _kernels_for(kernel_y, by, ya, "_y")
    if not (ests and stats) and not filts:
        raise ValueError("the collection is empty: give `estimators` and `statistics`, or "
                         "`filters`.")
    if any(s == "unbiased" for s in stats) and n < 5:
        raise ValueError(f"statistic 'unbiased' needs at least 5 observations; got {n}.")
    groups: list[_Group] = []
    for est in ests:
        for stat in stats:
            for kx, ky in itertools.product(kxs, kys):
                problem = _Independence(_Variable(kx, xa, None), _Variable(ky, ya, None), est,
                                        stat == "unbiased", n)
                prepared = problem.prepare("permutation")
                label = (f"x: {_describe_kernel(kx)}, y: {_describe_kernel(ky)}, {est.name}, "
                         f"{'U' if stat == 'unbiased' else 'V'}")
                groups.append(_Group(
                    [Member(label, kx, est, stat, attrs=_attrs(
                        {"bandwidth_x": kx, "bandwidth_y": ky}, est.name,
                        "U" if stat == "unbiased" else "V"))],
                    _member_values(prepared, meth.n_jobs),
                    (np.array([_fuse_norm_hsic(kx, ky, xa, ya)]) if combination == "fuse"
                     else _NO_NORM)))
    for f in filts:
        for kx, ky in itertools.product(kxs, kys):
            groups.append(_nocco_group(kx, ky, f, lams, xa, ya, meth.n_jobs))
    m_total = sum(len(g.members) for g in groups)
    w = _weights(weights, m_total)
    plan = _resampling.plan_independence(n, meth.n_resamples, meth.batch)
    from ._validation import check_rng, seed_of

    T, S = _run_groups(groups, plan, check_rng(meth.rng), n, "perm", 0, meth.progress)
    agg, p, count, rows, u, null_agg = _combine(
        T, S, groups, w, combination, alpha, float(np.sqrt(n * (n - 1))), plan.exact,
        "the HSIC statistic")
    from ._driver import data_label

    return AggregatedIndependenceResult(
        statistic=agg, pvalue=p, null_distribution=null_agg, method=meth, exact=plan.exact,
        n_resamples=plan.n_resamples, count=count,
        statistic_name="min_j p_j/w_j" if combination == "mmdagg" else "FUSE",
        estimator=ests[0] if ests else resolve_estimator("kme"), params={},
        kernels={"x": kxs[0], "y": kys[0]}, sizes={"n": n}, seed=seed_of(meth.rng),
        tuning="permutation",
        data_name=data_name or f"{data_label(x, 'x')} and {data_label(y, 'y')}",
        members=tuple(rows), combination=combination, alpha=alpha, threshold=u)


def _fuse_norm_hsic(kx: Kernel, ky: Kernel, x: np.ndarray, y: np.ndarray) -> float:
    """Frobenius norm of ``Kc o Lc`` without its diagonal, over ``n (n - 1)`` pairs scaled as
    the HSIC U-statistic's: ``n (n - 1) HSIC / N`` is then O(1) under the null."""
    Kc = kx.fitted_to(x).centred_gram(x).Kc
    Lc = ky.fitted_to(y).centred_gram(y).Kc
    G = Kc * Lc
    np.fill_diagonal(G, 0.0)
    n = x.shape[0]
    return float(np.sqrt(np.einsum("ij,ij->", G, G))) / (n * (n - 1))


def _nocco_group(kx: Kernel, ky: Kernel, filt: str, lams: Any, x: np.ndarray, y: np.ndarray,
                 n_jobs: int | None) -> _Group:
    from .engines.nocco import normalized_operators, nocco_values

    kx, ky = kx.fitted_to(x, name="x"), ky.fitted_to(y, name="y")
    cgx, cgy = kx.centred_gram(x, name="x"), ky.centred_gram(y, name="y")
    n = x.shape[0]
    grid = _lams(lams, min(cgx.trace_c, cgy.trace_c) / n)
    ops = normalized_operators(cgx.Kc, cgy.Kc, filt, grid)
    members = [Member(f"x: {_describe_kernel(kx)}, y: {_describe_kernel(ky)}, {filt} "
                      f"eps={lam:.3g}", kx, resolve_estimator("kme"), "regularized", filt,
                      float(lam), attrs=_attrs({"bandwidth_x": kx, "bandwidth_y": ky}, "kme",
                                               filt, float(lam)))
               for lam in grid]
    norms = np.array([float(np.sqrt(np.einsum("ij,ij->", pg.Kc * pg.Lc, pg.Kc * pg.Lc)
                                    - np.sum((pg.dK * pg.dL) ** 2)))
                      / (n * (n - 1)) for pg in ops])
    return _Group(members, lambda perms: nocco_values(ops, perms, n_jobs), norms)

