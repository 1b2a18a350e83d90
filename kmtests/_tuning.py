"""How data-driven estimator parameters enter a permutation test.

A permutation test is exact for any statistic computed by the *same function*
on every permuted data set. Two ways keep that true (PAPERS.md §2.3):

* ``tuning="permutation"`` (default): the estimator re-tunes its parameters
  on every permuted data set (the engines call it split by split);
* ``tuning="pooled"``: the parameters are tuned once on a permutation-invariant
  function of the data — the pooled sample for MMD; for HSIC the
  permutation-averaged cross-covariance Gram ``E_pi[Kc o Lc_pi]``, which depends
  on the marginals only — and then held fixed.

Parameters fitted on the observed split are never reused for the
permutations. Marginalized estimators (MKME/MMKME) act through a marginalized
kernel whose corruption variance is tuned on the pooled sample (MMD) or on
each marginal (HSIC): permutation-invariant, so both tunings coincide.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ._validation import check_choice
from .estimators import SKMSE, KernelMeanEstimator
from .estimators.marginalized import MarginalizedEstimator, inflated_kernel
from .kernels import Kernel

TUNINGS = ("permutation", "pooled")
#: deterministic per-sample normalisations, not tuned parameters: never frozen
_NORMALISATIONS = frozenset({"step"})


def check_tuning(tuning: Any) -> str:
    return check_choice(tuning, "tuning", TUNINGS)


def freeze(est: KernelMeanEstimator, params: dict[str, Any]) -> KernelMeanEstimator:
    """The estimator with its data-driven parameters fixed to `params`.

    Configuration fields named like reported parameters (``shrinkage``,
    ``lam`` with ``lam_convention``, ``n_iter``, ``rank``, ``sigma2``) are set
    (the Landweber/nu-method ``step`` is a per-sample normalisation and stays
    data-driven);
    B-KMSE, which has no fixed-shrinkage field, becomes S-KMSE with the chosen
    shrinkage (the same weights).
    """
    if "rank" in params:
        raise ValueError(f"estimator {est.name!r}: a rank chosen on the pooled sample does not "
                         "transfer to samples of other sizes; use tuning='permutation'.")
    names = {f.name for f in dataclasses.fields(est)} - _NORMALISATIONS
    fixed = {k: v for k, v in params.items() if k in names}
    if fixed:
        return est.replace(**fixed)
    if getattr(est, "uniform", False) and "shrinkage" in params:
        return SKMSE(shrinkage=float(params["shrinkage"]))
    if not params:
        return est
    raise ValueError(f"estimator {est.name!r} cannot hold its parameters fixed; use "
                     "tuning='permutation'.")


def expected_cose_gram(Kc: np.ndarray, Lc: np.ndarray) -> np.ndarray:
    """``E_pi[Kc o Lc[pi][:, pi]]`` over uniform permutations pi (marginals only).

    For centred ``Lc`` the off-diagonal entries of ``Lc_pi`` average to
    ``-tr(Lc)/(n(n-1))`` and the diagonal ones to ``tr(Lc)/n``.
    """
    n = Kc.shape[0]
    t = float(np.trace(Lc))
    G = Kc * (-t / (n * (n - 1)))
    G[np.diag_indices(n)] = np.diag(Kc) * (t / n)
    return G


def scalar_params(params: dict[str, Any], suffix: str = "") -> dict[str, Any]:
    """Reportable scalar parameters (curves and nested objects left out)."""
    out = {}
    for k, v in params.items():
        if k in ("loocv_curve", "selection", "sigma2_bounds", "lam_bounds"):
            continue
        if isinstance(v, (bool, np.bool_)):
            continue
        if isinstance(v, (int, float, np.integer, np.floating, str)):
            out[f"{k}{suffix}"] = v.item() if isinstance(v, np.generic) else v
        elif isinstance(v, (list, tuple, np.ndarray)) and np.size(v) <= 8 and k == "diag":
            out[f"{k}{suffix}"] = [float(u) for u in np.ravel(v)]
    return out


def marginalize(est: MarginalizedEstimator, data: np.ndarray, kernel: Kernel
                ) -> tuple[float, Kernel, dict[str, Any]]:
    """Tune the corruption on `data`; return ``(c, inflated kernel, params)``.

    The Q-kernel of two corrupted points equals ``c * kernel'`` with squared
    bandwidths ``theta^2 + 2 sigma2`` (``+ 2 e_j`` for MMKME).
    """
    smoothing, params = est.tune(data, kernel)
    c, infl = inflated_kernel(kernel, 2.0 * np.asarray(smoothing), data.shape[1])
    return c, infl, params
