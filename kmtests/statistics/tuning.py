"""How an estimator's data-driven parameters enter a permutation test.

``tuning="permutation"`` re-tunes them on every arrangement; ``tuning="pooled"``
tunes them once on a permutation-invariant Gram matrix — the pooled sample's
(two-sample), or the permutation average of the cross-covariance Gram matrix
(independence, :func:`symmetric_cose_gram`) — and holds them fixed. Both keep
the test exact. :func:`prepare_rule` gives the rule the engines apply.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._warnings import DegenerateStatisticWarning
from ..estimators import KernelMeanEstimator
from ..estimators._rules import General, Rule, Uniform

__all__ = ["PreparedRule", "TUNINGS", "expected_cose_gram", "prepare_rule", "reportable",
           "symmetric_cose_gram"]

TUNINGS = ("permutation", "pooled")


@dataclass(frozen=True)
class PreparedRule:
    """An estimator prepared on the data: the rule the engines apply and what to report."""

    rule: Rule
    params: dict[str, Any]   # parameters fixed on the invariant Gram (pooled tuning)
    tuning: str              # the tuning that applies ("pooled" when nothing is re-tuned)
    note: str = ""           # e.g. a fallback that was taken


def prepare_rule(est: KernelMeanEstimator, tuning: str,
                 invariant_gram: Callable[[], np.ndarray] | None,
                 transformed: bool,
                 invariant_features: Callable[[], np.ndarray] | None = None) -> PreparedRule:
    """The estimator's weight rule for the engines, with pooled tuning applied.

    ``invariant_gram()`` returns the permutation-invariant Gram matrix on
    which ``tuning="pooled"`` fixes the parameters (None: the engine does not
    hold it, and the estimator is re-tuned on every arrangement, which its
    uniform rule does at the KME's cost). ``invariant_features()`` (a low-rank
    engine, no Gram matrix) returns the pooled sample's uncentred features, on which
    an estimator with a feature form is tuned instead. `transformed` says that the estimator
    acts through a kernel transformation tuned on invariant data (nothing is
    re-tuned per permutation).

    A fixed uniform shrinkage that would annihilate the statistic (factor 0,
    e.g. pooled LOOCV shrinkage 1 with a linear kernel on centred data) is
    replaced by the unshrunk statistic, with a note: a fixed factor c > 0 only
    rescales every statistic, so the p-value is the limit c -> 0+, i.e. the
    KME test's.
    """
    if transformed:
        return PreparedRule(est.rule(), {}, "pooled")
    base = est.rule()
    by_features = (invariant_gram is None and invariant_features is not None
                   and isinstance(base, General) and base.features is not None)
    if tuning == "permutation" or (invariant_gram is None and not by_features):
        return PreparedRule(base, {}, "permutation")
    if by_features:
        assert invariant_features is not None and isinstance(base, General)
        assert base.features is not None
        _, params = base.features(invariant_features())
    else:
        assert invariant_gram is not None
        _, params = est.weights(invariant_gram())
    rule = est.with_fixed(params).rule()
    note = ""
    if isinstance(rule, Uniform) and rule.fixed == 0.0:
        note = ("the pooled shrinkage is 1: the shrunk statistic would be identically 0, so "
                "the unshrunk statistic is used (a fixed shrinkage only rescales it: the "
                "p-value is the KME test's)")
        warnings.warn(f"estimator {est.name!r}: {note}.", DegenerateStatisticWarning,
                      stacklevel=6)
        rule = Uniform(fixed=1.0)
    return PreparedRule(rule, params, "pooled", note)


def expected_cose_gram(Kc: np.ndarray, Lc: np.ndarray) -> np.ndarray:
    """``E_pi[Kc o Lc[pi][:, pi]]`` over uniform permutations pi (marginals only).

    For centred ``Lc`` the average of ``Lc_pi`` is ``tr(Lc)/(n-1) H``, so the
    result is ``tr(Lc)/(n-1) Kc o H``.
    """
    n = Kc.shape[0]
    t = float(np.trace(Lc))
    G = Kc * (-t / (n * (n - 1)))
    G[np.diag_indices(n)] = np.diag(Kc) * (t / n)
    return G


def symmetric_cose_gram(Kc: np.ndarray, Lc: np.ndarray) -> np.ndarray:
    """The permutation-invariant Gram matrix of ``tuning="pooled"`` for HSIC.

    The average of :func:`expected_cose_gram` over the two directions
    (permuting y against x, and x against y): a function of the marginals,
    symmetric in the two variables.
    """
    return 0.5 * (expected_cose_gram(Kc, Lc) + expected_cose_gram(Lc, Kc))


def reportable(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters worth reporting: scalars and short lists (curves left out)."""
    out: dict[str, Any] = {}
    for k, v in params.items():
        if k in ("loocv_curve", "selection", "sigma2_bounds", "lam_bounds"):
            continue
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, (bool, int, float, str)):
            out[k] = v
        elif isinstance(v, (list, tuple, np.ndarray)) and np.size(v) <= 64:
            out[k] = [u.item() if isinstance(u, np.generic) else u for u in np.ravel(v)]
    return out
