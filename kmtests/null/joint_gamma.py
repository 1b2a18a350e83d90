r"""The gamma approximation to the null distribution of dHSIC (Pfister et al., 2018).

``dHSIC_n`` is matched by a gamma law with the estimates of its null mean and
variance of ``dHSIC::dhsic.test(method = "gamma")``. With, for each variable
``k``, ``a_k = mean_ij K^k_ij``, ``b_k = mean_ij (K^k_ij)^2``,
``c_k = mean_i (mean_j K^k_ij)^2`` and ``e_k = mean_i K^k_ii``:

    E   = (prod_k e_k - sum_k e_k prod_{l != k} a_l + (d - 1) prod_k a_k) / n

    Var = 2 (n - 2d)_{(2d-2)} / n_{(2d)} * [ prod b + (d-1)^2 prod a^2 + 2(d-1) prod c
          + sum_r b_r prod_{k != r} a_k^2 - 2 sum_r b_r prod_{k != r} c_k
          - 2(d-1) sum_r c_r prod_{k != r} a_k^2
          + 2 sum_{r < s} c_r c_s prod_{k != r, s} a_k^2 ]

(``m_{(j)} = m (m - 1) ... (m - j + 1)``). The R package writes the mean with
``1`` for ``prod e`` and ``e_k``, the values of a kernel with ``k(x, x) = 1``
(Gaussian, discrete); kmtests keeps the diagonal means (the same numbers for
such kernels), so that the mean is also right for a kernel or Gram matrix whose
diagonal is not 1. For ``d = 2`` these are Gretton et al.'s (2008) HSIC
moments.

The gamma law of R's ``statistic`` (``n dHSIC_n``) has the same shape and ``n``
times the scale. The variance needs ``n >= 4d - 2`` observations (its factor
``(n - 2d) ... (n - 4d + 3)`` is positive then). The p-value is approximate:
these are estimates of the asymptotic null moments, not the moments of the
permutation distribution of the data; use the permutation null for an exact
test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from .._summary import Annotated
from ._base import NullMethod, NullOutcome, ResultLike, RunContext
from ..statistics.null_laws import _gamma_sf

__all__ = ["JointGammaMethod", "dhsic_gamma", "dhsic_moments"]


def _prod(values: Sequence[float]) -> float:
    return float(math.prod(values))


def dhsic_moments(a: Sequence[float], b: Sequence[float], c: Sequence[float],
                  e: Sequence[float], n: int) -> tuple[float, float]:
    """Null mean and variance of ``dHSIC_n`` from the per-variable means (module docs).

    Examples
    --------
    >>> m, v = dhsic_moments([0.5, 0.5], [0.3, 0.3], [0.26, 0.26], [1.0, 1.0], 20)
    >>> print(f"{m:.5f} {v:.3e}")
    0.01250 3.715e-06
    """
    d = len(a)
    a2 = [x * x for x in a]

    def out(v: Sequence[float], *ks: int) -> list[float]:
        """`v` without the entries `ks`."""
        return [v[k] for k in range(d) if k not in ks]

    mean = (_prod(e) - sum(e[k] * _prod(out(a, k)) for k in range(d)) + (d - 1) * _prod(a)) / n
    total = (_prod(b) + (d - 1) ** 2 * _prod(a2) + 2 * (d - 1) * _prod(c)
             + sum(b[r] * _prod(out(a2, r)) for r in range(d))
             - 2 * sum(b[r] * _prod(out(c, r)) for r in range(d))
             - 2 * (d - 1) * sum(c[r] * _prod(out(a2, r)) for r in range(d))
             + 2 * sum(c[r] * c[s] * _prod(out(a2, r, s))
                       for r in range(d) for s in range(r + 1, d)))
    factor1 = _prod([float(n - 2 * d - j) for j in range(2 * d - 2)])
    factor2 = _prod([float(n - j) for j in range(2 * d)])
    return float(mean), float(2.0 * factor1 / factor2 * total)


def dhsic_gamma(grams: Sequence[Any], observed: float) -> tuple[float, dict[str, float]]:
    """p-value of ``dHSIC_n`` under the gamma approximation, and its details.

    `grams` are the variables' :class:`~kmtests.statistics.dhsic.JointGram`
    (``K = g + W``).
    """
    a, b, c, e = [], [], [], []
    for G in grams:
        a.append(G.g)
        b.append(float(np.mean(np.square(G.W + G.g))))
        c.append(float(np.mean(np.square(G.u + G.g))))
        e.append(G.diag_mean)
    mean, var = dhsic_moments(a, b, c, e, grams[0].n)
    return _gamma_sf(observed, mean, var)


@dataclass(frozen=True)
class JointGammaMethod(NullMethod):
    """The gamma approximation to the null of dHSIC (approximate p-value).

    ``method="gamma"`` of :func:`kmtests.joint_independence_test`; the moments
    are those of the R package dHSIC (see the module docs).
    """

    name: ClassVar[str] = "gamma"
    approximates: ClassVar[str] = "dHSIC"
    needs: ClassVar[str] = "joint_grams"

    def check(self, statistic: Any, problem: Any, engine: Any) -> None:
        super().check(statistic, problem, engine)
        d, n = problem.d, problem.n
        if n < 4 * d - 2:
            raise ValueError(f"method='gamma' needs at least 4d - 2 = {4 * d - 2} "
                             f"observations for {d} variables (its variance estimate has the "
                             f"factor (n - 2d) ... (n - 4d + 3)); got {n}. Use "
                             "method='permutation'.")

    def refusal(self, statistic: Any, engine: Any) -> str:
        return ("method='gamma' of the joint independence test approximates the null of "
                f"dHSIC; {statistic.refusal_subject()} on engine={engine.name!r} is not "
                f"dHSIC: use method={statistic.default_method!r} (or kmtests.GammaMethod).")

    def run(self, prepared: Any, problem: Any, observed: Any, ctx: RunContext
            ) -> NullOutcome:
        t = float(np.asarray(observed.stat).reshape(-1)[0])
        p, details = dhsic_gamma(prepared.joint_grams(), t)
        return NullOutcome(p, details=details)

    # -- the report ---------------------------------------------------------------------------
    def describe(self, res: ResultLike) -> str:
        return "gamma approximation to the null, asymptotic moments (approximate p-value)"

    def info_rows(self, res: ResultLike) -> list[tuple[str, Any]]:
        rows: list[tuple[str, Any]] = [("method", Annotated("gamma", "(approx.)")),
                                       ("moments", "asymptotic")]
        if "gamma_shape" in res.details:
            rows += [("gamma_shape", float(res.details["gamma_shape"])),
                     ("gamma_scale", float(res.details["gamma_scale"]))]
        return rows

    def notes(self, res: ResultLike, alpha: float) -> list[str]:
        return ["Gamma approximation to the null distribution of dHSIC with the estimates "
                "of its asymptotic null mean and variance of Pfister et al. (2018) (R package "
                "dHSIC): approximate p-value; the gamma scale is that of dHSIC (R reports n "
                "dHSIC, whose scale is n times larger)."]
