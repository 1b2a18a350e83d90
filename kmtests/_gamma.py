"""Moment-matched gamma approximations to the null distributions.

Both are *approximations* (asymptotic moments, gamma shape), known to be
anti-conservative for small samples; the reports label them so.

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

import numpy as np


def _offdiag_mean(M: np.ndarray) -> float:
    n = M.shape[0]
    return float((M.sum() - np.trace(M)) / (n * (n - 1)))


def _centre(K: np.ndarray) -> np.ndarray:
    r = K.mean(axis=0)
    return K - r[None, :] - r[:, None] + r.mean()


def mmd_gamma(K: np.ndarray, n_x: int, observed_biased: float) -> tuple[float, dict]:
    """p-value of the biased MMD^2 under the gamma approximation."""
    n_y = K.shape[0] - n_x
    mean_diag = float(np.mean(np.diag(K)))
    mean_off = _offdiag_mean(K)
    Kc = _centre(K)
    e_k2 = _offdiag_mean(Kc * Kc)
    mean = (1.0 / n_x + 1.0 / n_y) * (mean_diag - mean_off)
    var = 2.0 * (1.0 / (n_x * (n_x - 1)) + 2.0 / (n_x * n_y) + 1.0 / (n_y * (n_y - 1))) * e_k2
    return _gamma_sf(observed_biased, mean, var)


def hsic_gamma(K: np.ndarray, L: np.ndarray, observed_biased: float) -> tuple[float, dict]:
    """p-value of HSIC_b under the gamma approximation."""
    n = K.shape[0]
    Kc, Lc = _centre(K), _centre(L)
    mu_x = np.mean(np.diag(K)) - _offdiag_mean(K)
    mu_y = np.mean(np.diag(L)) - _offdiag_mean(L)
    mean = mu_x * mu_y / n
    var = (2.0 * (n - 4) * (n - 5) / (n * (n - 1) * (n - 2) * (n - 3))
           * _offdiag_mean((Kc * Lc) ** 2))
    return _gamma_sf(observed_biased, mean, var)


def _gamma_sf(t: float, mean: float, var: float) -> tuple[float, dict]:
    if not (mean > 0 and var > 0):
        raise ValueError("the gamma approximation is undefined for these data (zero null "
                         "mean or variance, e.g. constant or too few data); use "
                         "method='permutation'.")
    from scipy import stats

    shape = mean * mean / var
    scale = var / mean
    return float(stats.gamma.sf(t, shape, scale=scale)), {
        "null_mean": float(mean), "null_var": float(var),
        "gamma_shape": float(shape), "gamma_scale": float(scale)}
