"""Moment-matched gamma approximations to the null distributions.

Both are *approximations* (a gamma shape for the null law); the reports label
them so. Each call computes the *exact* mean and variance of the statistic
over all permutations of the data (closed forms, O(n^2): the statistics are
quadratic assignment forms ``sum_ij A_ij B_{pi_i pi_j}``; Kazi-Aoual et al.,
1995) and, by default (``moments="permutation"``), fits the gamma to them: a
two-moment approximation of the permutation distribution of these data.

The published tests (``moments="asymptotic"``) fit the gamma to estimates of
the asymptotic null moments (below). Measured on 500-1000 null data sets per
cell (``benchmarks/gamma_level.py``), their level follows the discrepancy
between those moments and the exact permutation ones: a gamma variance too
small (heavy tails: Cauchy data in d >= 5 give variance ratios 0.04-0.2 and
rejection rates of 11-21% at a nominal 5%), a gamma mean too high (high
dimension relative to n: shifts of 1-30 standard deviations and no rejection
at all), or a gamma variance too large (MMD, d = 500, n = 10: ratio 3.3, no
rejection). With the asymptotic moments, therefore:

* mean shift above 1 standard deviation, or variance ratio outside [1/3, 3]:
  the approximation is refused (``ValueError``; use permutations);
* mean shift above 0.2 or variance ratio outside [0.8, 1.25]: an
  :class:`~kmtests.ApproximationWarning` with the numbers.

With the permutation moments these cells stay between 4.7% and 6.5% at a
nominal 5% (``benchmarks/README.md``).

MMD (Gretton et al., 2009, 2012): the biased statistic ``MMD^2_b`` is matched
by a gamma law with the null mean and variance

    E   = (1/m + 1/n) (E k(z, z) - E k(z, z'))
    Var = 2 (1/(m(m-1)) + 2/(mn) + 1/(n(n-1))) E ktilde(z, z')^2

with ``ktilde`` the kernel centred in feature space. The moments are
estimated on the pooled sample (under H0 both samples come from one law);
for m = n the variance coincides with Gretton et al.'s ``2/(m(m-1)) E h^2``
(since ``E h^2 = 4 E ktilde^2`` under H0).

HSIC (Gretton et al., 2008): ``HSIC_b`` is matched with

    E   = (1/n) (E k(x,x) - E k(x,x')) (E l(y,y) - E l(y,y'))
    Var = 2 (n-4)(n-5) / (n(n-1)(n-2)(n-3)) * mean_{i != j} (Kc_ij Lc_ij)^2

(the expression used in the authors' ``hsicTestGamma``: the factor 72 there
multiplies squares of ``Kc Lc / 6``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import numpy as np

from .._summary import Annotated
from ..statistics.null_laws import hsic_gamma as hsic_gamma
from ..statistics.null_laws import kci_gamma as kci_gamma
from ..statistics.null_laws import mmd_gamma as mmd_gamma
from ..statistics.null_laws import permutation_moments as permutation_moments
from ._base import NullMethod, NullOutcome, ResultLike, RunContext

__all__ = ["GammaMethod", "hsic_gamma", "kci_gamma", "mmd_gamma", "permutation_moments"]


@dataclass(frozen=True)
class GammaMethod(NullMethod):
    """The moment-matched gamma approximation to the null (approximate p-value).

    For the biased KME statistics ``MMD^2_b`` and ``HSIC_b`` (Gretton et al.,
    2008, 2009); see :doc:`/user_guide/gamma`.

    Parameters
    ----------
    moments : {"permutation", "asymptotic"}
        The mean and variance the gamma is fitted to, for ``MMD^2_b`` and
        ``HSIC_b``: the exact moments of the statistic over the permutations
        of the data (``"permutation"``, the default; O(n^2)), or
        the published estimates of the asymptotic null moments. The latter
        are compared with the exact ones and the test refuses
        (``ValueError``) or warns (:class:`~kmtests.ApproximationWarning`)
        where they disagree; measured, they make the test reject up to 50% at
        a nominal 5% on heavy-tailed or high-dimensional data, where the
        permutation moments stay within 4.7-6.5%. The conditional statistic
        KCI takes the asymptotic moments of Zhang et al.
        (``moments="asymptotic"``, which ``method="gamma"`` of
        :func:`kmtests.conditional_independence_test` means): permutations do
        not keep its null.
    """

    moments: str = "permutation"

    name: ClassVar[str] = "gamma"
    approximates: ClassVar[str] = "MMD^2_b and HSIC_b"
    needs: ClassVar[str] = "kernel_form"
    own_statistic: ClassVar[Mapping[str, str]] = {
        "two_sample": "biased", "independence": "biased", "k_sample": "biased"}

    def __post_init__(self) -> None:
        if self.moments not in ("permutation", "asymptotic"):
            raise ValueError(f"`moments` must be 'permutation' or 'asymptotic'; got "
                             f"{self.moments!r}.")

    def form_refusal(self, info: Any, statistic: Any, problem: Any) -> str | None:
        return info.form.gamma_refusal(info, self.moments, problem)

    def refusal(self, statistic: Any, engine: Any) -> str:
        if statistic.form() is not None:  # a kernel statistic, but the engine has no Gram
            return (f"method='gamma' needs the moments of the in-memory Gram matrix "
                    f"(engine='exact'); engine={engine.name!r} computes permutation p-values "
                    "only.")
        return (f"method 'gamma' needs the full kernel matrix of a biased KME statistic "
                f"(MMD^2_b, HSIC_b on engine='exact'); {statistic.refusal_subject()} has no "
                f"gamma approximation: use method={statistic.default_method!r}.")

    def run(self, prepared: Any, problem: Any, observed: Any, ctx: RunContext
            ) -> NullOutcome:
        t = float(np.asarray(observed.stat).reshape(-1)[0])
        p, details = prepared.kernel_form().gamma(t, self.moments)
        return NullOutcome(p, details=details)

    def _which(self, res: ResultLike) -> str:
        return self.moments

    def describe(self, res: ResultLike) -> str:
        return (f"gamma approximation to the null, {self._which(res)} moments (approximate "
                "p-value)")

    def null_density(self, res: ResultLike) -> tuple[str, Any] | None:
        d = res.details
        if "gamma_shape" not in d:
            return None
        from scipy import stats

        shape, scale = float(d["gamma_shape"]), float(d["gamma_scale"])
        return (f"gamma (shape {shape:.3g}, scale {scale:.3g})",
                stats.gamma(shape, scale=scale))

    def info_rows(self, res: ResultLike) -> list[tuple[str, Any]]:
        rows: list[tuple[str, Any]] = [("method", Annotated("gamma", "(approx.)")),
                                       ("moments", self._which(res))]
        if "gamma_shape" in res.details:
            rows += [("gamma_shape", float(res.details["gamma_shape"])),
                     ("gamma_scale", float(res.details["gamma_scale"]))]
        return rows

    def notes(self, res: ResultLike, alpha: float) -> list[str]:
        d = res.details
        if d.get("kci_moments"):
            text = ("Gamma approximation to the asymptotic null (a weighted sum of chi-square "
                    "variables with the eigenvalues of the product of the residual Gram "
                    "matrices; Zhang et al., 2011), fitted to its mean and variance: "
                    "approximate p-value.")
            if "null_mean_factor" in d:
                text += (f" Mean and variance times {float(d['null_mean_factor']):.4g}: the "
                         "rows' correlation through the regressions on z (its noise terms, "
                         "the noise levels from nearest neighbours in z); "
                         "null_moments='zhang' for Zhang et al.'s moments (causal-learn's "
                         "p-value).")
            return [text]
        if self.moments == "permutation":
            return ["Gamma approximation to the null distribution, fitted to the exact mean "
                    "and variance of the statistic over the permutations of the data: "
                    "approximate p-value (see the documentation)."]
        text = ("Gamma approximation to the null distribution with the asymptotic moments: "
                "approximate p-value")
        if "permutation_var" in d and d.get("null_var"):
            ratio = d["null_var"] / d["permutation_var"]
            shift = (d["null_mean"] - d["permutation_mean"]) / np.sqrt(d["permutation_var"])
            shift = round(float(shift), 2) + 0.0  # no "-0.00"
            text += (f"; against the exact permutation moments its mean is off by "
                     f"{shift:+.2f} sd and its variance by a factor {ratio:.2f}")
        return [text + " (see the documentation)."]
