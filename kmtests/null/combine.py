r"""Combining the columns of a statistic into one permutation test, with exact level.

A collection of statistics — bandwidths, kernel mean estimators, U/V forms,
spectral-regularised statistics over a grid of lambdas — is computed on the
*same* arrangements (:mod:`kmtests.null.permutation`) and combined:

:class:`MinP` (MMDAgg; Schrab et al., 2023; Albert et al., 2022)
    Each member ``j`` gets its permutation p-value ``p_j`` (its rank among the
    ``B + 1`` arrangements: the data and the ``B`` permutations, or all
    arrangements when they are enumerated). The aggregated statistic is the
    weighted minimum ``S = min_j p_j / w_j`` (weights ``w_j`` summing to 1), and
    its p-value is the rank of the observed ``S`` among the ``S`` of all
    arrangements (ties of ``S`` broken by the next smallest ``p_j / w_j``, see
    :func:`minp_combination`). Every arrangement's ``S`` is the same symmetric
    function of the ``B + 1`` statistic vectors, so under the null they are
    exchangeable and the p-value is exactly valid — the level correction of
    MMDAgg (its bisection for the largest ``u`` with
    ``P(exists j: p_j <= u w_j) <= alpha``) without splitting the permutations
    into two sets (the authors' code uses two sets; the two calibrations differ;
    on the authors' perturbed-uniform grid the two reject 78 and 77 of 200 data
    sets, B = 499/500, see ``benchmarks/README.md``). At level ``alpha`` the member ``j`` "rejects"
    when ``p_j <= u_alpha w_j``, with ``u_alpha`` that correction (reported), or
    when it attains ``S`` and the test rejects through the tie-break: some
    member rejects exactly when the test does.
:class:`Fuse` (MMD-FUSE; Biggs, Schrab & Gretton, 2023)
    The statistic is the soft maximum of the normalised members,
    ``FUSE = log sum_j w_j exp(nu T_j / N_j)`` with a normaliser ``N_j`` that is a
    function of what the permutations leave unchanged (the pooled sample, or
    the marginals), and the temperature ``nu = sqrt(n (n - 1))`` (``n`` the
    smaller sample, or the number of pairs), calibrated by the usual
    permutation p-value. A member whose normaliser is 0 (its statistic is 0 for
    every arrangement, e.g. a spectral cut-off above the spectrum) is dropped,
    and the report names it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from .._validation import check_choice, shown
from .._warnings import DegenerateStatisticWarning
from ._base import NullOutcome
from .permutation import (
    TIE_RTOL,
    check_finite_statistic,
    pvalue_upper,
    tie_tolerance,
    warn_if_constant,
)

__all__ = ["COMBINATIONS", "Fuse", "MinP", "Separate", "Sum", "fuse_statistic",
           "member_rejections", "minp_combination", "resolve_combination", "weights"]

_WEIGHTS = ("uniform", "increasing", "decreasing", "centred")


def weights(kind: str | Sequence[float], m: int) -> np.ndarray:
    """Weights of MMDAgg (Schrab et al., Sec. 5.1) over `m` members, summing to 1.

    ``"centred"`` puts the largest weight in the middle: ``1 / (|i - (m+1)/2| + 1)``
    for ``i = 1..m`` with an odd ``m``, ``1 / (|i - (m+1)/2| + 1/2)`` with an even
    ``m`` (the two middle members share the largest weight), as the authors'
    ``create_weights`` (checked against it for m = 1..12 in
    ``tests/test_reference_authors.py``).
    """
    if not isinstance(kind, str):
        w = np.asarray(kind, dtype=np.float64)
        if w.shape != (m,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise ValueError(f"`weights` must be 'uniform', 'increasing', 'decreasing', "
                             f"'centred' or {m} positive numbers; got {shown(kind)}.")
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
        w = 1.0 / (np.abs(i - (m + 1) / 2.0) + (1.0 if m % 2 else 0.5))
    return w / w.sum()


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
    >>> from kmtests.null.combine import minp_combination
    >>> T = np.random.default_rng(0).normal(size=(100, 3))
    >>> T[0] = [2.5, 0.0, 1.0]          # the data: large in the first member
    >>> p, pm, u, count = minp_combination(T, np.zeros_like(T), np.full(3, 1 / 3), 0.05)
    >>> print(pm, f"{p:.2f}", f"{u:.3f}")
    [0.03 0.46 0.15] 0.07 0.030
    """
    tol = TIE_RTOL * (scales + scales[0:1, :])
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
        The permutation-invariant normalisers ``N_j`` (positive).
    w : ndarray, shape (M,)
        The prior weights (summing to 1).
    nu : float
        The temperature (``sqrt(n (n - 1))`` in the tests).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.null.combine import fuse_statistic
    >>> print(fuse_statistic(np.array([[0.0, 0.0], [1.0, 0.0]]), np.ones(2),
    ...                      np.full(2, 0.5), 2.0).round(4))
    [0.     1.4338]
    """
    from scipy.special import logsumexp

    Z = nu * T / norms[None, :]
    return logsumexp(Z, axis=1, b=w[None, :])


def _arrangements(observed: Any, null: np.ndarray, scales: np.ndarray, exact: bool
                  ) -> tuple[np.ndarray, np.ndarray]:
    """All arrangements' statistics and scales, row 0 the data (exact: the identity is the
    first enumerated arrangement)."""
    if exact:
        return null, scales
    width = null.shape[1]
    T0 = np.asarray(observed.stat, dtype=np.float64).reshape(1, width)
    S0 = np.asarray(observed.scale, dtype=np.float64).reshape(1, width)
    return np.vstack([T0, null]), np.vstack([S0, scales])


def _rows(prepared: Any, T: np.ndarray, pvalues: np.ndarray, w: np.ndarray,
          **columns: np.ndarray) -> tuple[dict[str, Any], ...]:
    """One row per member for the report: label, attributes, statistic on the data,
    p-value, weight, and the combination's own columns."""
    out = []
    for j, (label, attrs) in enumerate(prepared.columns):
        row = {"member": label, **attrs, "statistic": float(T[0, j]),
               "pvalue": float(pvalues[j]), "weight": float(w[j])}
        for key, values in columns.items():
            v = values[j]
            row[key] = bool(v) if isinstance(v, (bool, np.bool_)) else float(v)
        out.append(row)
    return tuple(out)


def _check_members(T: np.ndarray, what: str) -> None:
    for j in range(T.shape[1]):
        check_finite_statistic(float(T[0, j]), T[1:, j], f"{what} (member {j + 1})")


class _Combination:
    """What the combinations share: the arrangements' statistics, checked finite."""

    #: it needs the members' permutation-invariant normalisers (``Prepared.norms``)
    needs_norms: ClassVar[bool] = False

    def combine(self, observed: Any, null: np.ndarray, scales: np.ndarray, exact: bool,
                prepared: Any) -> NullOutcome:
        """The combined p-value of the arrangements' member statistics (`null`: one row an
        arrangement, one column a member; `exact`: enumerated, the data among them)."""
        T, S = _arrangements(observed, null, scales, exact)
        _check_members(T, prepared.what)
        return self._combine(T, S, exact, prepared)

    def _combine(self, T: np.ndarray, S: np.ndarray, exact: bool, prepared: Any
                 ) -> NullOutcome:
        """`T`: the members' statistics with the data's first, `S` their scales."""
        raise NotImplementedError

    @staticmethod
    def _warn_if_constant(T: np.ndarray, S: np.ndarray, what: str) -> None:
        """DegenerateStatisticWarning when every member is the same on every arrangement."""
        tol = TIE_RTOL * (S + S[0:1, :])
        if T.shape[0] > 1 and bool(np.all(np.abs(T - T[0:1, :]) <= tol)):
            warnings.warn(
                f"every member of {what} is the same for the data and for every "
                "permutation (to rounding): the aggregated statistic cannot vary with the "
                "arrangement of these data, so p = 1 carries no evidence either way.",
                DegenerateStatisticWarning, stacklevel=5)


@dataclass(frozen=True)
class MinP(_Combination):
    """The MMDAgg combination (module docs): weighted minimum of the members' p-values.

    Parameters
    ----------
    weights : {"uniform", "increasing", "decreasing", "centred"} or sequence
        The members' weights (normalised to sum 1).
    alpha : float
        The level at which the report says which members reject.
    """

    weights: Any = "uniform"
    alpha: float = 0.05
    label: ClassVar[str] = "min_j p_j/w_j"
    name: ClassVar[str] = "mmdagg"

    def _combine(self, T: np.ndarray, S: np.ndarray, exact: bool, prepared: Any
                 ) -> NullOutcome:
        self._warn_if_constant(T, S, prepared.what)
        w = weights(self.weights, T.shape[1])
        p, pm, u, count = minp_combination(T, S, w, self.alpha)
        rejects = member_rejections(pm, w, u, p, self.alpha)
        rows = _rows(prepared, T, pm, w, threshold=u * w, rejects=rejects)
        agg_null = np.min(_rank_pvalues(T, TIE_RTOL * (S + S[0:1, :])) / w[None, :],
                          axis=1)[0 if exact else 1:]
        return NullOutcome(p, agg_null, exact, count=count, statistic=float(np.min(pm / w)),
                           members=rows, threshold=u)


@dataclass(frozen=True)
class Fuse(_Combination):
    """The MMD-FUSE combination (module docs): soft maximum of the normalised members.

    Parameters
    ----------
    weights : str or sequence
        The prior weights of the soft maximum (as :class:`MinP`'s).
    nu : float
        The temperature ``sqrt(n (n - 1))``.
    """

    weights: Any = "uniform"
    nu: float = 1.0
    alpha: float = 0.05
    label: ClassVar[str] = "FUSE"
    name: ClassVar[str] = "fuse"
    needs_norms: ClassVar[bool] = True

    def _combine(self, T: np.ndarray, S: np.ndarray, exact: bool, prepared: Any
                 ) -> NullOutcome:
        M = T.shape[1]
        w_all = weights(self.weights, M)
        norms = np.asarray(prepared.norms(), dtype=np.float64).reshape(M)
        keep = np.isfinite(norms) & (norms > 0)
        labels = [label for label, _ in prepared.columns]
        notes = []
        if not np.all(keep):
            dropped = [labels[j] for j in np.flatnonzero(~keep)]
            if not np.any(keep):
                raise ValueError(
                    "MMD-FUSE: every member's normaliser is 0 or not finite (every member's "
                    "statistic is 0 for every arrangement); no fused statistic exists. Use "
                    "combination='mmdagg', or other members.")
            notes.append(f"MMD-FUSE dropped {len(dropped)} member(s) whose normaliser is 0 "
                         "(their statistic is 0 for every arrangement): "
                         + "; ".join(dropped) + "; the prior weights of the others were "
                         "renormalised")
        self._warn_if_constant(T[:, keep], S[:, keep], prepared.what)
        w = w_all[keep] / w_all[keep].sum()
        F = fuse_statistic(T[:, keep], norms[keep], w, self.nu)
        check_finite_statistic(float(F[0]), F[1:], "the FUSE statistic")
        tol = TIE_RTOL * np.maximum(np.abs(F), 1.0)
        count = int(np.count_nonzero(F >= F[0] - (tol + tol[0])))
        p = count / T.shape[0]
        member_p = _rank_pvalues(T, TIE_RTOL * (S + S[0:1, :]))[0]
        w_rows = np.zeros(M)
        w_rows[keep] = w
        rows = _rows(prepared, T, member_p, w_rows, normalizer=norms)
        return NullOutcome(p, F[0 if exact else 1:], exact, count=count, statistic=float(F[0]),
                           members=rows, notes=notes)


@dataclass(frozen=True)
class Separate:
    """No combination: every column gets its own permutation p-value, from the same
    arrangements (common random numbers; :func:`kmtests.compare_estimators`)."""

    label: ClassVar[str] = "separate"
    name: ClassVar[str] = "separate"
    needs_norms: ClassVar[bool] = False
    alpha: float = 0.05

    def combine(self, observed: Any, null: np.ndarray, scales: np.ndarray, exact: bool,
                prepared: Any) -> NullOutcome:
        width = null.shape[1]
        t0 = np.asarray(observed.stat, dtype=np.float64).reshape(width)
        s0 = np.asarray(observed.scale, dtype=np.float64).reshape(width)
        whats = prepared.details.get("whats", [prepared.what] * width)
        rows = []
        for j in range(width):
            check_finite_statistic(float(t0[j]), null[:, j], whats[j])
            tol = tie_tolerance(float(s0[j]), scales[:, j])
            warn_if_constant(float(t0[j]), null[:, j], tol, whats[j])
            p, count = pvalue_upper(float(t0[j]), null[:, j], exact, tol)
            rows.append({"pvalue": p, "count": count, "null": null[:, j]})
        return NullOutcome(float("nan"), exact=exact, members=tuple(rows))


@dataclass(frozen=True)
class Sum(_Combination):
    """The weighted sum of the columns (the lags of a cross-dependence test: hyppo's
    ``DcorrX`` statistic with HSIC), calibrated by its own permutation p-value; the weights
    are the prepared statistic's ``details["weights"]`` (uniform when it gives none)."""

    alpha: float = 0.05
    label: ClassVar[str] = "sum_j w_j T_j"
    name: ClassVar[str] = "sum"

    def _combine(self, T: np.ndarray, S: np.ndarray, exact: bool, prepared: Any
                 ) -> NullOutcome:
        w = np.asarray(prepared.details.get("weights", np.ones(T.shape[1])), dtype=np.float64)
        total, scale = T @ w, S @ w
        tol = TIE_RTOL * (scale + scale[0])            # every row's against the data's
        warn_if_constant(float(total[0]), total[1:], tol[1:], prepared.what)
        count = int(np.count_nonzero(total[1:] >= total[0] - tol[1:]))
        # (1 + #{S_b >= S}) / (1 + B), and with enumeration #{S_a >= S} / N: the data are
        # one of the N enumerated arrangements (row 0)
        p = (count + 1) / total.size
        count += int(exact)
        member_p = _rank_pvalues(T, TIE_RTOL * (S + S[0:1, :]))[0]
        rows = _rows(prepared, T, member_p, w)
        return NullOutcome(p, total[0 if exact else 1:], exact, count=count,
                           statistic=float(total[0]), members=rows)


#: the combinations by name: a statistic names its combination (``Prepared.combination``)
#: when it cannot hold the object (the statistics sit below the null methods)
COMBINATIONS: dict[str, type] = {"mmdagg": MinP, "fuse": Fuse, "sum": Sum,
                                 "separate": Separate}


def resolve_combination(combination: Any) -> Any:
    """The combination object of a prepared statistic (a name: its default instance)."""
    return COMBINATIONS[combination]() if isinstance(combination, str) else combination
