"""The null of a mean of i.i.d. terms: the linear-time statistics' own null.

The linear-time statistics (``engine="block"``, ``"linear"``; see
:mod:`kmtests.statistics.linear_time`) are means of ``K`` independent, identically
distributed terms. Their null distribution is asymptotically normal; at small
``K`` the standard error estimated from the terms makes the normal reference
anti-conservative (measured at a nominal 5%, 3000 data sets per cell: 14-15%
with ``K = 2`` pairs, 9.4-9.8% with 4, 6.1-6.5% with 12), while the Student-t
reference with ``K - 1`` degrees of freedom — the exact null of the studentised
mean of normal terms — stays at or near the level for every ``K`` measured
(1.4-5.7%, no interval above 5%; ``benchmarks/README.md``). The
t reference is the default; ``reference="normal"`` gives the published one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._summary import Annotated
from ._base import NullMethod, NullOutcome, ResultLike, RunContext

__all__ = ["NormalMethod", "normal_pvalue"]

_REFERENCES = ("t", "normal")


def normal_pvalue(terms: np.ndarray, reference: str = "t") -> tuple[float, float, float]:
    """``(statistic, standard error, p-value)`` of a mean of i.i.d. terms.

    The statistic is ``mean(terms)``, its standard error
    ``sd(terms, ddof=1) / sqrt(len(terms))``, and the one-sided p-value
    ``P(T_{K-1} >= statistic / se)`` (``reference="t"``, Student's t with
    ``K - 1`` degrees of freedom) or ``1 - Phi(statistic / se)``
    (``reference="normal"``). A zero standard error (every term equal) gives the
    p-value 1 for a statistic ``<= 0``, else 0.

    Examples
    --------
    >>> stat, se, p = normal_pvalue(np.array([0.1, 0.3, 0.2, 0.4]), "normal")
    >>> print(f"{stat:.3f} {se:.4f} {p:.4f}")
    0.250 0.0645 0.0001
    >>> print(f"{normal_pvalue(np.array([0.1, 0.3, 0.2, 0.4]))[2]:.4f}")
    0.0152
    """
    from scipy import stats

    k = terms.size
    stat = float(np.mean(terms))
    se = float(np.std(terms, ddof=1) / np.sqrt(k))
    if not np.isfinite(se):
        return stat, se, float("nan")
    if se == 0:
        return stat, se, 1.0 if stat <= 0 else 0.0
    if reference == "normal":
        return stat, se, float(stats.norm.sf(stat / se))
    return stat, se, float(stats.t.sf(stat / se, k - 1))


@dataclass(frozen=True)
class NormalMethod(NullMethod):
    """The null of the linear-time MMD statistics (approximate p-value).

    Only the linear-time statistics take it (``engine="block"``, the B-test
    of Zaremba et al., 2013, and ``engine="linear"``, the linear statistic of
    Gretton et al., 2012, Sec. 6), and with them it is the default. Their
    statistic is the mean of ``K`` independent terms (block statistics, or the
    ``h`` values of disjoint pairs); the p-value is one-sided,
    ``P(T_{K-1} >= T / se)`` with ``se = sd(terms) / sqrt(K)`` (Student's t; see
    the module docs for why not ``1 - Phi(T / se)``, which
    ``reference="normal"`` gives). There is no permutation: the result's
    `null_distribution` and `n_resamples` are None, and the standard error,
    ``z = T / se``, the block size and the number of blocks or pairs are in
    ``res.details``. See :doc:`/user_guide/scale`.

    Parameters
    ----------
    reference : {"t", "normal"}
        The reference distribution of ``T / se``.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import NormalMethod, two_sample_test
    >>> gen = np.random.default_rng(0)
    >>> x, y = gen.normal(size=(5000, 3)), gen.normal(0.1, size=(5000, 3))
    >>> res = two_sample_test(x, y, engine="block", method=NormalMethod())
    >>> res.method, res.null_distribution, res.details["block_size"]
    (NormalMethod(reference='t'), None, 70)
    >>> print(f"{res.statistic_name} = {res.statistic:.5f}, p = {res.pvalue:.2g}")
    MMD^2_block = 0.00272, p = 0.026
    """

    reference: str = "t"

    name: ClassVar[str] = "normal"
    needs: ClassVar[str] = "terms"

    def __post_init__(self) -> None:
        if self.reference not in _REFERENCES:
            raise ValueError(f"`reference` must be 't' or 'normal'; got {self.reference!r}.")

    def refusal(self, statistic: Any, engine: Any) -> str:
        return ("method='normal' is the null of the linear-time two-sample statistics "
                "(engine='block' or 'linear'); the other engines take method='permutation' "
                "or 'gamma'.")

    def run(self, prepared: Any, problem: Any, observed: Any, ctx: RunContext
            ) -> NullOutcome:
        t = prepared.terms()
        stat, se, p = normal_pvalue(t, self.reference)
        details: dict[str, Any] = {"se": se, "z": stat / se if se > 0 else float("nan"),
                                   **prepared.details}
        if "block_size" in details:
            details["n_blocks"] = int(t.size)
        else:
            details["n_pairs"] = int(t.size)
        return NullOutcome(p, details=details)

    def describe(self, res: ResultLike) -> str:
        d = res.details
        if "block_size" in d:
            what = f"block test (B-test, {d['n_blocks']} blocks of {d['block_size']})"
        elif "n_pairs" in d:
            what = f"linear-time test ({d['n_pairs']} pairs)"
        else:
            what = "linear-time test"
        ref = ("Student-t null" if self.reference == "t" else "asymptotic normal null")
        return f"{what}, {ref} (approximate p-value)"

    def null_density(self, res: ResultLike) -> tuple[str, Any] | None:
        d = res.details
        se = d.get("se")
        if not se or not se > 0:
            return None
        from scipy import stats

        k = int(d.get("n_blocks", d.get("n_pairs", 0)))
        if self.reference == "t" and k > 1:
            return f"se x t ({k - 1} df), se = {se:.3g}", stats.t(k - 1, scale=se)
        return f"normal (0, se = {se:.3g})", stats.norm(scale=se)

    def info_rows(self, res: ResultLike) -> list[tuple[str, Any]]:
        d = res.details
        rows: list[tuple[str, Any]] = [
            ("method", Annotated("normal", "(t, K - 1 df)" if self.reference == "t"
                                 else "(asympt.)"))]
        if "block_size" in d:
            rows += [("block_size", int(d["block_size"])), ("n_blocks", int(d["n_blocks"]))]
        elif "n_pairs" in d:
            rows += [("n_pairs", int(d["n_pairs"]))]
        if "se" in d:
            rows += [("se", float(d["se"])), ("z", Annotated(float(d["z"]), "(T / se)"))]
        return rows

    def notes(self, res: ResultLike, alpha: float) -> list[str]:
        d = res.details
        if "block_size" in d:
            what = (f"the block statistic (B-test): the mean of MMD^2_u over {d['n_blocks']} "
                    f"blocks of {d['block_size']} consecutive points of each sample")
            terms = "block statistics"
            k = d["n_blocks"]
        else:
            what = (f"the linear-time statistic MMD^2_l: the mean of h over {d.get('n_pairs')} "
                    "disjoint pairs of consecutive points")
            terms = "h values"
            k = d.get("n_pairs")
        if self.reference == "t":
            null = (f"Student-t null: p-value = P(T_{{K-1}} >= T / se) with K = {k}, se the "
                    f"standard error from the {terms} (approximate p-value, no permutations; "
                    "the t reference keeps the level at small K, where the normal one does "
                    "not).")
        else:
            null = (f"Asymptotic normal null: p-value = 1 - Phi(T / se), se the standard error "
                    f"from the {terms} (approximate p-value, no permutations).")
        return [f"Linear-time test on {what}. {null} Lower power than the quadratic-time "
                "test on the same data."]
