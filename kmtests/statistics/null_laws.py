"""The null laws of the kernel quadratic forms: the maths the null methods use.

* the gamma laws fitted to the null moments of ``MMD^2_b``, ``HSIC_b`` (and the k-sample
  MMD) and KCI: exact permutation moments (Kazi-Aoual et al., 1995) or the published
  asymptotic ones (Gretton et al., 2009, 2008; Zhang et al., 2011), compared with each
  other before an asymptotic gamma is used (:mod:`kmtests.null.gamma` documents the
  measured rules);
* the weights of the weighted chi-square null (the eigenvalues of ``Kc o Lc / n^2``);
* the multiplier processes of the wild bootstrap (i.i.d. Rademacher or Gaussian, or
  autoregressive for dependent data; Chwialkowski et al., 2014).

The typed kernel forms (:mod:`kmtests.statistics.forms`) call these; the null methods
call the forms.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._gram import CentredGram

__all__ = ["centred_diagonal", "hsic_gamma", "kci_gamma", "lowrank_products", "mmd_gamma",
           "multipliers", "null_eigenvalues", "permutation_moments"]

#: eigenvalues below this fraction of the largest are dropped (causal-learn: 1e-5)
_RELATIVE = 1e-12


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


def kci_gamma(Kx: np.ndarray, Ky: np.ndarray, t: float, lowrank: bool = False,
              factor: float | None = None) -> tuple[float, dict[str, Any]]:
    """p-value of the KCI statistic ``T = sum(Kx o Ky) / n^2`` (residual Gram matrices)
    under the gamma fitted to its asymptotic null ``sum_k lambda_k chi^2_1 / n^2``,
    ``lambda`` the eigenvalues of ``M = Kx o Ky``: mean ``tr M / n^2``, variance
    ``2 ||M||_F^2 / n^4`` (Zhang et al., 2011; causal-learn's ``get_kappa``), both times
    `factor` when given (the correction of the mean for rows correlated by the
    regressions: :func:`kmtests.statistics.kci.noise_mean_factor`; reported as
    ``null_mean_factor``). With `lowrank`, `Kx` and `Ky` are residual features
    (``M = (Kx Kx') o (Ky Ky')``, whose moments come from the products of the features)."""
    n = Kx.shape[0]
    if lowrank:
        tr, C = lowrank_products(Kx, Ky)
        mean = tr / n**2
        var = 2.0 * float(np.einsum("ij,ij->", C, C)) / n**4
    else:
        M = Kx * Ky
        mean = float(np.trace(M)) / n**2
        var = 2.0 * float(np.einsum("ij,ij->", M, M)) / n**4
    f = 1.0 if factor is None else float(factor)
    p, det = _gamma_sf(t, mean * f, var * f)
    out = {**det, "kci_moments": True}
    if factor is not None:
        out["null_mean_factor"] = f
    return p, out


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


def lowrank_products(Fx: np.ndarray, Fy: np.ndarray, rows: int = 2048
                     ) -> tuple[float, np.ndarray]:
    """``(tr M, W'W)`` for ``M = (Fx Fx') o (Fy Fy')`` given by features: ``W`` has the
    rows ``Fx_t (x) Fy_t`` (n x r_x r_y), so ``M = W W'`` and its nonzero eigenvalues are
    those of ``W'W``; accumulated over row blocks (no n x n matrix)."""
    n, rx = Fx.shape
    ry = Fy.shape[1]
    C = np.zeros((rx * ry, rx * ry))
    tr = 0.0
    for a in range(0, n, rows):
        W = (Fx[a:a + rows, :, None] * Fy[a:a + rows, None, :]).reshape(-1, rx * ry)
        C += W.T @ W
        tr += float(np.einsum("ij,ij->", W, W))
    return tr, 0.5 * (C + C.T)


def null_eigenvalues(Kc: np.ndarray, Lc: np.ndarray, lowrank: bool = False) -> np.ndarray:
    """The positive eigenvalues of ``Kc o Lc / n^2`` (the weights of the chi-squares),
    descending; with `lowrank`, `Kc` and `Lc` are features (``Kc Kc'``, ``Lc Lc'``)."""
    n = Kc.shape[0]
    if lowrank:
        M = lowrank_products(Kc, Lc)[1]
    else:
        M = Kc * Lc
    ev = np.linalg.eigvalsh(0.5 * (M + M.T))[::-1] / n**2
    top = float(ev[0]) if ev.size else 0.0
    return ev[ev > max(top, 0.0) * _RELATIVE] if top > 0 else ev[:0]


def multipliers(rng: np.random.Generator, size: int, n: int, process: str,
                length: float, centred: bool = True) -> np.ndarray:
    """`size` multiplier processes of length `n` (rows), centred (each minus its mean)
    unless `centred` is False."""
    if process == "rademacher":
        W = np.where(rng.random((size, n)) < 0.5, -1.0, 1.0)
    elif process == "gaussian":
        W = rng.standard_normal((size, n))
    else:
        rho = float(np.exp(-1.0 / length))
        eps = rng.standard_normal((size, n))
        W = np.empty((size, n))
        W[:, 0] = eps[:, 0]
        scale = float(np.sqrt(1.0 - rho * rho))
        for t in range(1, n):
            W[:, t] = rho * W[:, t - 1] + scale * eps[:, t]
    if centred:
        W -= W.mean(axis=1, keepdims=True)
    return W


def centred_diagonal(B: np.ndarray) -> np.ndarray:
    """The diagonal of ``H B H`` (``H`` the centring matrix of B's size)."""
    row = B.mean(axis=1)
    return np.diag(B) - row - B.mean(axis=0) + row.mean()
