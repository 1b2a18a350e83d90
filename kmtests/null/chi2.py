r"""The weighted chi-square null of a degenerate V-statistic (spectral approximation).

Under the null hypothesis, ``n^2`` times the KCI statistic (and ``HSIC_b``) is
asymptotically distributed as ``sum_k lambda_k chi^2_1`` with ``lambda_k`` the
eigenvalues of ``M = Kc o Lc`` (the product of the two centred — for KCI,
residual — Gram matrices; Zhang et al., 2011, Theorem 3; causal-learn's
``null_sample_spectral``). This method computes the eigenvalues (O(n^3)) and
draws ``n_resamples`` values of the weighted sum from `rng`:
``p = (1 + #{T_b >= T}) / (1 + B)``, an approximate (asymptotic) p-value with
the Monte Carlo error of ``B`` draws. The gamma method fits two moments of the
same law (O(n^2)); this one uses all of them.

Examples
--------
>>> import numpy as np
>>> from kmtests import conditional_independence_test
>>> gen = np.random.default_rng(0)
>>> z = gen.normal(size=200); x = z + 0.5 * gen.normal(size=200)
>>> y = z + 0.5 * gen.normal(size=200)
>>> res = conditional_independence_test(x, y, z, method="chi2", n_resamples=999, rng=1)
>>> print(f"{res.pvalue:.3f}")
0.288
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import numpy as np

from .._summary import Annotated
from .._validation import check_rng
from ._base import NullMethod, NullOutcome, ResultLike, RunContext
from ..statistics.null_laws import lowrank_products as lowrank_products
from ..statistics.null_laws import null_eigenvalues as null_eigenvalues
from .permutation import ResamplingMethod, check_finite_statistic, pvalue_upper

__all__ = ["AsymptoticChiSquare", "WeightedChiSquare", "lowrank_products", "null_eigenvalues"]

#: chi-square draws per step (rows of B x r); fixed so that `batch` does not change them
_DRAW = 256


@dataclass(frozen=True)
class WeightedChiSquare(ResamplingMethod):
    """The weighted chi-square null (approximate; see the module docs)."""

    name: ClassVar[str] = "chi2"
    draws: ClassVar[str] = "law"
    needs: ClassVar[str] = "kernel_form"
    own_statistic: ClassVar[Mapping[str, str]] = {"independence": "biased"}
    requires: ClassVar[str] = ("the Gram matrices in memory (engine='exact') and an HSIC-type "
                               "V-statistic")

    def form_refusal(self, info: Any, statistic: Any, problem: Any) -> str | None:
        return info.form.chi2_refusal(info, statistic.default_method)


    def run(self, prepared: Any, problem: Any, observed: Any, ctx: RunContext) -> NullOutcome:
        from ..engines._loop import linalg_threads

        kf = prepared.kernel_form()
        with linalg_threads(self.n_jobs, kf.Kc.shape[0]):
            lam = kf.chi2_weights()
        gen = check_rng(self.rng)
        B = self.n_resamples
        null = np.empty(B)
        shift = kf.chi2_shift()  # 0 but for a U-statistic's centred law (FSSD)
        for start in range(0, B, _DRAW):
            b = min(_DRAW, B - start)
            null[start:start + b] = gen.chisquare(1.0, size=(b, lam.size)) @ lam
            if shift:
                null[start:start + b] -= shift
        t = float(np.asarray(observed.stat).reshape(-1)[0])
        check_finite_statistic(t, null, prepared.what)
        p, count = pvalue_upper(t, null, False, 0.0)
        return NullOutcome(p, null, False, B, count,
                           details={"chi2_terms": int(lam.size),
                                    "null_mean": float(lam.sum()),
                                    "null_var": float(2.0 * np.sum(lam * lam))})

    def describe(self, res: ResultLike) -> str:
        return (f"weighted chi-square approximation to the null ({res.n_resamples} draws; "
                "approximate p-value)")

    def info_rows(self, res: ResultLike) -> list[tuple[str, Any]]:
        return [("method", Annotated("chi2", "(approx.)")), ("n_resamples", res.n_resamples),
                ("chi2_terms", res.details.get("chi2_terms", "-")),
                ("seed", "-" if res.seed is None else res.seed)]

    def notes(self, res: ResultLike, alpha: float) -> list[str]:
        return ["Weighted chi-square approximation to the asymptotic null (the eigenvalues "
                "of the product of the two (residual) Gram matrices; Zhang et al., 2011): "
                "approximate p-value = (1 + #{T_b >= T}) / (1 + B); its Monte Carlo "
                "interval is the Clopper-Pearson interval of that p-value."]


@dataclass(frozen=True)
class AsymptoticChiSquare(NullMethod):
    """The chi-square null of a Hotelling-type statistic with learned features.

    The ME, SCF and NFSIC statistics (:mod:`kmtests.statistics.interpretable`)
    are ``n W' S^{-1} W`` of ``n`` i.i.d. feature vectors; under the null
    hypothesis they are asymptotically chi-square with as many degrees of
    freedom as features (``J``; ``2J`` for SCF; fewer when the features'
    covariance is singular). The p-value ``P(chi^2_df >= T)`` costs nothing
    beyond the statistic (linear time); it is approximate and liberal at
    moderate sizes (measured in :doc:`/user_guide/where`): the tests' default
    null is ``method="permutation"``, exact given the training split.
    """

    name: ClassVar[str] = "asymptotic"
    needs: ClassVar[str] = "chi2_df"
    requires: ClassVar[str] = ("the asymptotic chi-square law of the interpretable tests "
                               "(statistic='me', 'scf' or 'fsic')")

    def run(self, prepared: Any, problem: Any, observed: Any, ctx: RunContext) -> NullOutcome:
        from scipy import stats

        t = float(np.asarray(observed.stat).reshape(-1)[0])
        check_finite_statistic(t, None, prepared.what)
        df = int(prepared.details["df"])
        return NullOutcome(float(stats.chi2.sf(t, df)), details={"df": df})

    def describe(self, res: ResultLike) -> str:
        return (f"asymptotic chi-square null with {res.details.get('df', '?')} degrees of "
                "freedom (approximate p-value)")

    def info_rows(self, res: ResultLike) -> list[tuple[str, Any]]:
        return [("Null", f"chi2, {res.details.get('df', '?')} df (approx.)")]

    def notes(self, res: ResultLike, alpha: float) -> list[str]:
        return ["Asymptotic chi-square null of the statistic n W' S^-1 W of the features on "
                "the test pairs (Jitkrittum et al., 2016, 2017): approximate p-value; "
                "method='permutation' permutes the test pairs (exact given the training "
                "split)."]

    def null_density(self, res: ResultLike) -> tuple[str, Any] | None:
        from scipy import stats

        df = int(res.details.get("df", 0))
        return (f"chi-square ({df} df)", stats.chi2(df)) if df > 0 else None
