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

import warnings
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import numpy as np

from .._gram import CentredGram
from .._summary import Annotated
from ._base import NullMethod, NullOutcome, ResultLike, RunContext

__all__ = ["GammaMethod", "hsic_gamma", "kci_gamma", "mmd_gamma", "permutation_moments"]


def _offdiag_sq_mean(M: np.ndarray) -> float:
    """The mean of ``M_ij^2`` over ``i != j`` (no temporary)."""
    n = M.shape[0]
    d = np.diagonal(M)
    return float((np.einsum("ij,ij->", M, M) - np.dot(d, d)) / (n * (n - 1)))


def _spread(Kc: np.ndarray) -> float:
    """``E k(z, z) - E k(z, z')`` estimated on the sample: ``tr(HKH)/(n - 1)``.

    (``mean_i K_ii - mean_{i != j} K_ij`` rewritten with the centred Gram matrix,
    so it keeps its digits when the kernel values carry a large offset.)
    """
    return float(np.trace(Kc)) / (Kc.shape[0] - 1)


def permutation_moments(A: np.ndarray, B: np.ndarray) -> tuple[float, float]:
    """Exact mean and variance of ``S = sum_ij A_ij B_{pi_i pi_j}`` over uniform permutations.

    `A` and `B` symmetric with zero row sums (centred Gram matrices). The
    closed forms of the RV-coefficient permutation test (Kazi-Aoual et al.,
    1995; Josse, Pages & Husson, 2008), checked by enumeration in the tests.
    """
    n = A.shape[0]
    ta, tb = float(np.trace(A)), float(np.trace(B))
    sa, sb = float(np.einsum("ij,ij->", A, A)), float(np.einsum("ij,ij->", B, B))
    ua, ub = float(np.sum(np.diagonal(A) ** 2)), float(np.sum(np.diagonal(B) ** 2))
    mean = ta * tb / (n - 1)
    v1 = (2.0 * ((n - 1) * sa - ta * ta) * ((n - 1) * sb - tb * tb)
          / ((n - 1) ** 2 * (n + 1) * (n - 2)))
    v2 = ((n * (n + 1) * ua - (n - 1) * (ta * ta + 2 * sa))
          * (n * (n + 1) * ub - (n - 1) * (tb * tb + 2 * sb))
          / ((n + 1) * n * (n - 1) * (n - 2) * (n - 3)))
    return mean, max(v1 + v2, 0.0)


def mmd_gamma(K: np.ndarray, n_x: int, observed_biased: float, moments: str = "permutation",
              *, centred: bool = False) -> tuple[float, dict[str, float]]:
    """p-value of the biased MMD^2 under the gamma approximation (pooled Gram matrix).

    ``moments="permutation"``: the gamma with the exact mean and variance of the
    statistic over the permutations of these data; ``"asymptotic"``: Gretton et
    al.'s moments (checked against the exact ones, see :func:`_check`). `centred`:
    `K` is already centred.
    """
    Kc = K if centred else CentredGram.from_gram(K).Kc
    n_y = Kc.shape[0] - n_x
    e_k2 = _offdiag_sq_mean(Kc)
    mean = (1.0 / n_x + 1.0 / n_y) * _spread(Kc)
    var = 2.0 * (1.0 / (n_x * (n_x - 1)) + 2.0 / (n_x * n_y) + 1.0 / (n_y * (n_y - 1))) * e_k2
    # MMD^2_b = (1/n_x + 1/n_y)^2 a'Kc a, a the split indicator: B = (a - abar)(a - abar)'
    a = np.r_[np.ones(n_x), np.zeros(n_y)]
    a -= a.mean()
    pm, pv = permutation_moments(Kc, np.outer(a, a))
    c = (1.0 / n_x + 1.0 / n_y) ** 2
    return _fit(observed_biased, mean, var, c * pm, c * c * pv, moments, "MMD^2_b")


def hsic_gamma(K: np.ndarray, L: np.ndarray, observed_biased: float,
               moments: str = "permutation", *, centred: bool = False
               ) -> tuple[float, dict[str, float]]:
    """p-value of HSIC_b under the gamma approximation (`moments` as in :func:`mmd_gamma`;
    `centred`: `K` and `L` are already centred)."""
    if centred:
        Kc, Lc = K, L
    else:
        Kc, Lc = CentredGram.from_gram(K).Kc, CentredGram.from_gram(L).Kc
    n = Kc.shape[0]
    mean = _spread(Kc) * _spread(Lc) / n
    M = Kc * Lc
    var = (2.0 * (n - 4) * (n - 5) / (n * (n - 1) * (n - 2) * (n - 3))
           * _offdiag_sq_mean(M))
    pm, pv = permutation_moments(Kc, Lc)
    return _fit(observed_biased, mean, var, pm / n**2, pv / n**4, moments, "HSIC_b")


def kci_gamma(Kx: np.ndarray, Ky: np.ndarray, t: float, lowrank: bool = False
              ) -> tuple[float, dict[str, Any]]:
    """p-value of the KCI statistic ``T = sum(Kx o Ky) / n^2`` (residual Gram matrices)
    under the gamma fitted to its asymptotic null ``sum_k lambda_k chi^2_1 / n^2``,
    ``lambda`` the eigenvalues of ``M = Kx o Ky``: mean ``tr M / n^2``, variance
    ``2 ||M||_F^2 / n^4`` (Zhang et al., 2011; causal-learn's ``get_kappa``). With
    `lowrank`, `Kx` and `Ky` are residual features (``M = (Kx Kx') o (Ky Ky')``, whose
    moments come from the products of the features)."""
    n = Kx.shape[0]
    if lowrank:
        from .chi2 import lowrank_products

        tr, C = lowrank_products(Kx, Ky)
        mean = tr / n**2
        var = 2.0 * float(np.einsum("ij,ij->", C, C)) / n**4
    else:
        M = Kx * Ky
        mean = float(np.trace(M)) / n**2
        var = 2.0 * float(np.einsum("ij,ij->", M, M)) / n**4
    p, det = _gamma_sf(t, mean, var)
    return p, {**det, "kci_moments": True}


def _fit(t: float, a_mean: float, a_var: float, p_mean: float, p_var: float, moments: str,
         name: str) -> tuple[float, dict[str, float]]:
    """The gamma p-value with the chosen moments; both sets of moments in the details."""
    both = {"asymptotic_mean": float(a_mean), "asymptotic_var": float(a_var),
            "permutation_mean": float(p_mean), "permutation_var": float(p_var)}
    if moments == "asymptotic":
        _check(a_mean, a_var, p_mean, p_var, name)
        p, det = _gamma_sf(t, a_mean, a_var)
    else:
        p, det = _gamma_sf(t, p_mean, p_var)
    return p, {**det, **both}


#: mean shift (in permutation standard deviations) and variance ratio beyond which the
#: gamma approximation is refused / warned about (see the module docs)
REFUSE_SHIFT, REFUSE_RATIO = 1.0, 3.0
WARN_SHIFT, WARN_LOW, WARN_HIGH = 0.2, 0.8, 1.25


def _check(g_mean: float, g_var: float, p_mean: float, p_var: float, name: str) -> None:
    """Compare the gamma's moments with the exact permutation moments; refuse or warn."""
    if not (p_var > 0 and g_var > 0):
        return  # degenerate: _gamma_sf raises for the gamma side
    shift = (g_mean - p_mean) / np.sqrt(p_var)
    ratio = g_var / p_var
    numbers = (f"against the exact permutation distribution of {name} on these data, its "
               f"null mean is off by {shift:+.2f} standard deviations and its variance by a "
               f"factor {ratio:.2f}")
    if abs(shift) > REFUSE_SHIFT or not 1.0 / REFUSE_RATIO <= ratio <= REFUSE_RATIO:
        # a misplaced mean dominates when it is off by more than a standard deviation
        too_often = shift < 0 if abs(shift) > REFUSE_SHIFT else ratio < 1
        effect = ("would reject far more often than its level" if too_often
                  else "would almost never reject")
        raise ValueError(
            f"the gamma approximation is unusable for these data: {numbers}, so it {effect} "
            "(heavy tails or a high dimension relative to the sample size; see the "
            "documentation). Use method='permutation', which is exact.")
    if abs(shift) > WARN_SHIFT or not WARN_LOW <= ratio <= WARN_HIGH:
        from .._warnings import ApproximationWarning

        if not WARN_LOW <= ratio <= WARN_HIGH:
            side = "anti-conservative" if ratio < 1 else "conservative"
        else:
            side = "conservative" if shift > 0 else "anti-conservative"
        warnings.warn(
            f"the gamma approximation is inaccurate for these data ({side}): {numbers}. "
            "The p-value is approximate; method='permutation' is exact.",
            ApproximationWarning, stacklevel=4)


def _gamma_sf(t: float, mean: float, var: float) -> tuple[float, dict[str, float]]:
    if not (mean > 0 and var > 0):
        raise ValueError("the gamma approximation is undefined for these data (zero null "
                         "mean or variance, e.g. constant or too few data); use "
                         "method='permutation'.")
    from scipy import special

    shape = mean * mean / var
    scale = var / mean
    # the gamma survival function Q(shape, t / scale) (scipy.stats.gamma.sf without its
    # argument handling: 80 microseconds of a 0.5 ms test)
    p = float(special.gammaincc(shape, t / scale)) if t > 0 else 1.0
    return p, {
        "null_mean": float(mean), "null_var": float(var),
        "gamma_shape": float(shape), "gamma_scale": float(scale)}


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
    needs: ClassVar[str] = "kernel_form"
    own_statistic: ClassVar[Mapping[str, str]] = {
        "two_sample": "biased", "independence": "biased", "k_sample": "biased"}

    def __post_init__(self) -> None:
        if self.moments not in ("permutation", "asymptotic"):
            raise ValueError(f"`moments` must be 'permutation' or 'asymptotic'; got "
                             f"{self.moments!r}.")

    def check(self, statistic: Any, problem: Any, engine: Any) -> None:
        super().check(statistic, problem, engine)
        form = statistic.form()
        if form.kind in ("kci", "kci_lowrank"):
            if self.moments == "permutation":
                raise ValueError("the gamma approximation of a conditional statistic is fitted "
                                 "to the asymptotic moments of Zhang et al. (permutations do "
                                 "not keep the conditional null): use method='gamma' or "
                                 "GammaMethod(moments='asymptotic').")
            return
        if form.unbiased or not form.kme or form.marginalized:
            base = {"mmd": "MMD^2_b", "hsic": "HSIC_b", "kway": "kMMD^2_b"}.get(
                form.kind, "(V-form)")
            fix = ("estimator='kme'" if not form.unbiased
                   else "statistic='biased' with estimator='kme'")
            raise ValueError(f"method='gamma' approximates the null of the biased KME "
                             f"statistic {base}; the test computes {form.name}: use {fix}, "
                             "or method='permutation'.")
        if form.kind == "hsic" and problem.n < 6:
            raise ValueError(f"method='gamma' needs at least 6 observations; got {problem.n}.")

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
        kf = prepared.kernel_form()
        t = float(np.asarray(observed.stat).reshape(-1)[0])
        if kf.kind in ("kci", "kci_lowrank"):
            p, details = kci_gamma(kf.Kc, kf.Lc, t, lowrank=kf.kind == "kci_lowrank")
            return NullOutcome(p, details=details)
        if kf.kind == "mmd":
            p, details = mmd_gamma(kf.Kc, kf.n_x, t, self.moments, centred=True)
        else:  # an HSIC_b form, `scale` times it (k samples: the label kernel)
            p, details = hsic_gamma(kf.Kc, kf.Lc, t / kf.scale, self.moments, centred=True)
            if kf.scale != 1.0:
                details = {k: (v * kf.scale if k in ("gamma_scale", "null_mean",
                                                      "asymptotic_mean", "permutation_mean")
                               else v * kf.scale ** 2 if k.endswith("_var") else v)
                           for k, v in details.items()}
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
            return ["Gamma approximation to the asymptotic null (a weighted sum of chi-square "
                    "variables with the eigenvalues of the product of the residual Gram "
                    "matrices; Zhang et al., 2011), fitted to its mean and variance: "
                    "approximate p-value."]
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
