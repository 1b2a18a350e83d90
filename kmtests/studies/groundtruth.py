"""Closed-form ground truth for Gaussian mixtures: true kernel means and exact losses.

For ``P = sum_c pi_c N(a_c, C_c)`` and the kernels of the papers' synthetic
experiments, the true kernel mean ``mu_P(t) = E_{x~P} k(x, t)``, its squared
RKHS norm ``||mu_P||^2 = E k(x, x')`` (x' an independent copy) and
``E k(x, x)`` have closed forms (PAPERS.md §4.2-4.3). They give the *exact*
loss ``||mu_hat - mu_P||^2`` of any embedding, hence exact risk studies.

=========================  ==================================================
kernel object              closed forms
=========================  ==================================================
``Gaussian(bandwidth=s)``  Gaussian convolutions (log-determinants via slogdet)
``ARDGaussian``            the same with ``s^2 I`` replaced by ``diag(s_j^2)``
``Linear()``               first moments
``Polynomial(degree, c)``  degree 1, 2 or 3, any ``coef0 = c >= 0``
=========================  ==================================================

Any other kernel raises a ``TypeError``: there is no closed form to offer.

Marginalized (MKME/MMKME) embeddings ``sum_i w_i E_{N(x_i, diag(e))} k(x~, .)``,
flagged by an attribute ``smoothing`` (the per-dimension corruption variances
``e``), get their exact loss too (PAPERS.md §4.5), for the Gaussian kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._typing import ArrayLike, SeedLike
from .._validation import as_sample, check_positive_int, check_rng, check_variances
from ..kernels import ARDGaussian, Gaussian, Kernel, Linear, Polynomial

__all__ = ["GaussianMixture", "loss"]


# -- kernel identification ---------------------------------------------------
def _kernel_spec(kernel: Any, d: int) -> tuple[str, Any, Any]:
    """``("rbf", bandwidth^2 vector, None)`` or ``("poly", degree, coef0)``."""
    if not isinstance(kernel, Kernel):
        raise TypeError("`kernel` must be a kmtests.kernels.Kernel object (Gaussian, ARDGaussian, "
                        f"Linear or Polynomial); got {type(kernel).__name__}.")
    if isinstance(kernel, (Gaussian, ARDGaussian)):
        if not kernel.is_fitted:
            raise ValueError("`kernel` has the data-driven bandwidth 'median', which has no "
                             "ground truth; resolve it first with `kernel.fitted_to(x)`.")
        b2 = np.atleast_1d(np.asarray(kernel.bandwidth, dtype=np.float64)) ** 2
        if b2.size == 1:
            b2 = np.full(d, b2[0])
        if b2.size != d:
            raise ValueError(f"`kernel` has {b2.size} bandwidths but the mixture has "
                             f"dimension {d}.")
        return "rbf", b2, None
    if isinstance(kernel, Linear):
        return "poly", 1, 0.0
    if isinstance(kernel, Polynomial) and kernel.degree <= 3:
        return "poly", kernel.degree, kernel.coef0
    raise TypeError("closed-form ground truth exists for the Gaussian, ARD Gaussian, linear and "
                    f"polynomial (degree <= 3) kernels only; got {kernel!r}.")


def _gauss_conv(t: np.ndarray, weights: np.ndarray, means: np.ndarray, covs: np.ndarray,
                b2: np.ndarray) -> np.ndarray:
    """``sum_c w_c |I + C_c B^{-1}|^{-1/2} exp(-(t - a_c)'(C_c + B)^{-1}(t - a_c)/2)``,
    ``B = diag(b2)``, at the rows of `t`; the components are stacked (one
    batched ``slogdet`` and ``solve``). The determinant itself is never formed:
    it over- or underflows at d = 100."""
    M = covs + np.diag(b2)  # (C, d, d), positive definite
    _, logdet = np.linalg.slogdet(M)
    logdet = logdet - float(np.sum(np.log(b2)))  # log|I + C_c B^{-1}|
    diff = t[None, :, :] - means[:, None, :]  # (C, m, d)
    sol = np.linalg.solve(M, diff.transpose(0, 2, 1))  # (C, d, m)
    quad = np.einsum("cmd,cdm->cm", diff, sol)
    return weights @ np.exp(-0.5 * (logdet[:, None] + quad))


# -- the mixture ---------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class GaussianMixture:
    """A Gaussian mixture ``P = sum_c weights_c N(means_c, covs_c)`` with its
    closed-form kernel mean.

    Parameters
    ----------
    weights : array_like, shape (C,)
        Non-negative mixing weights summing to one (to 1e-8; renormalised).
    means : array_like, shape (C, d)
    covs : array_like, shape (C, d, d)
        Symmetric positive semi-definite covariance matrices.

    Notes
    -----
    With ``t_c = a_c't``, ``v_c = t'C_c t`` and a polynomial kernel
    ``(<x, y> + c0)^p`` (PAPERS.md §4.2; the linear kernel is p = 1, c0 = 0):

    * p = 2: ``mu_P(t) = sum_c pi_c [(t_c + c0)^2 + v_c]``;
    * p = 3: ``mu_P(t) = sum_c pi_c [(t_c + c0)^3 + 3 (t_c + c0) v_c]``;
    * ``||mu_P||^2`` sums ``pi_c pi_e [(s + c0)^3 + 3 (s + c0) S +
      6 a_c'C_e C_c a_e]`` over pairs (c, e), with ``s = a_c'a_e``, ``S =
      tr(C_c C_e) + a_c'C_e a_c + a_e'C_c a_e`` (the SMM paper prints
      ``a_c'C_c C_e a_e``, wrong unless the covariances commute); for p = 2
      the summand is ``(s + c0)^2 + S``.

    For the Gaussian kernel of bandwidth s, ``mu_P(t) = sum_c pi_c
    |I + C_c/s^2|^{-1/2} exp(-(t - a_c)'(C_c + s^2 I)^{-1}(t - a_c)/2)`` and
    ``||mu_P||^2`` is the same with ``C_c -> C_c + C_e`` and ``t -> a_e``.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.groundtruth import GaussianMixture
    >>> from kmtests.kernels import Gaussian
    >>> P = GaussianMixture([0.5, 0.5], [[-1.0], [1.0]], [[[1.0]], [[0.5]]])
    >>> k = Gaussian(bandwidth=1.0)
    >>> print(f"{P.kernel_mean([[0.0]], k)[0]:.4f} {P.kernel_mean_norm2(k):.4f}")
    0.5679 0.4632
    >>> print(f"{P.kme_risk(k, n=10):.4f}")
    0.0537
    """

    weights: np.ndarray
    means: np.ndarray
    covs: np.ndarray

    def __post_init__(self) -> None:
        w = np.asarray(self.weights, dtype=np.float64)
        if w.ndim != 1 or w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("`weights` must be a non-empty 1-D array of non-negative numbers.")
        if abs(w.sum() - 1.0) > 1e-8:
            raise ValueError(f"`weights` must sum to 1; they sum to {w.sum():.10g}.")
        w = w / w.sum()
        a = np.asarray(self.means, dtype=np.float64)
        if a.ndim != 2 or a.shape[0] != w.size or a.shape[1] == 0 or not np.all(np.isfinite(a)):
            raise ValueError(f"`means` must be a finite array of shape ({w.size}, d).")
        d = a.shape[1]
        C = np.asarray(self.covs, dtype=np.float64)
        if C.shape != (w.size, d, d) or not np.all(np.isfinite(C)):
            raise ValueError(f"`covs` must be a finite array of shape ({w.size}, {d}, {d}); "
                             f"got {C.shape}.")
        scale = max(1.0, float(np.abs(C).max()))
        if np.abs(C - C.transpose(0, 2, 1)).max() > 1e-10 * scale:
            raise ValueError("`covs` must be symmetric matrices.")
        C = 0.5 * (C + C.transpose(0, 2, 1))
        evals, evecs = np.linalg.eigh(C)
        if evals.min() < -1e-10 * scale:
            raise ValueError("`covs` must be positive semi-definite; the smallest eigenvalue is "
                             f"{evals.min():.3g}.")
        factor = evecs * np.sqrt(np.maximum(evals, 0.0))[:, None, :]  # C = F F'
        for name, arr in (("weights", w), ("means", a), ("covs", C)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        factor.setflags(write=False)
        object.__setattr__(self, "_factor", factor)

    # -- basic facts -------------------------------------------------------------
    @property
    def dim(self) -> int:
        """The dimension d."""
        return self.means.shape[1]

    @property
    def n_components(self) -> int:
        """The number of components C."""
        return self.weights.size

    def mean(self) -> np.ndarray:
        """``E x = sum_c pi_c a_c``."""
        return self.weights @ self.means

    def second_moment(self) -> np.ndarray:
        """``E xx' = sum_c pi_c (C_c + a_c a_c')``."""
        return np.einsum("c,cij->ij", self.weights,
                         self.covs + self.means[:, :, None] * self.means[:, None, :])

    def sample(self, n: int, rng: SeedLike = None) -> np.ndarray:
        """Draw `n` points (rows): component labels first, then one standard
        normal ``(n, d)`` block.

        Examples
        --------
        >>> from kmtests.groundtruth import GaussianMixture
        >>> P = GaussianMixture([1.0], [[0.0, 0.0]], [[[1.0, 0.0], [0.0, 1.0]]])
        >>> P.sample(3, rng=0).shape
        (3, 2)
        """
        n = check_positive_int(n, "n")
        gen = check_rng(rng)
        labels = gen.choice(self.n_components, size=n, p=self.weights)
        z = gen.standard_normal((n, self.dim))
        factor = self._factor  # type: ignore[attr-defined]
        return self.means[labels] + np.einsum("nij,nj->ni", factor[labels], z)

    # -- closed forms --------------------------------------------------------------
    def kernel_mean(self, t: ArrayLike, kernel: Kernel, *, smoothing: Any = None) -> np.ndarray:
        """The true kernel mean ``mu_P(t) = E_{x~P} k(x, t)`` at the rows of `t`.

        With ``smoothing = e`` (Gaussian kernels only), the smoothed mean
        ``E_{x~P, t~ ~N(t, diag(e))} k(x, t~)``: the cross term ``m~`` of the
        marginalized estimators (PAPERS.md §4.5), i.e. ``C_c -> C_c + diag(e)``.

        Raises
        ------
        TypeError
            If `kernel` has no closed form (see the module table).
        ValueError
            If its bandwidth is still ``"median"``.
        """
        t = as_sample(t, "t", min_size=1)
        if t.shape[1] != self.dim:
            raise ValueError(f"`t` must have {self.dim} columns; got {t.shape[1]}.")
        kind, p, c = _kernel_spec(kernel, self.dim)
        if kind == "rbf":
            covs = self.covs
            if smoothing is not None:
                covs = covs + np.diag(check_variances(smoothing, self.dim, "smoothing"))
            return _gauss_conv(t, self.weights, self.means, covs, p)
        if smoothing is not None:
            raise ValueError("`smoothing` (marginalized embeddings) is supported for the "
                             "Gaussian kernels only.")
        tc = t @ self.means.T + c  # (m, C): a_c't + c
        if p == 1:
            return tc @ self.weights
        v = np.einsum("mi,cij,mj->mc", t, self.covs, t)  # t'C_c t
        if p == 2:
            return (tc ** 2 + v) @ self.weights
        return (tc ** 3 + 3.0 * tc * v) @ self.weights

    def kernel_mean_norm2(self, kernel: Kernel) -> float:
        """``||mu_P||^2 = E k(x, x')`` with x, x' independent draws from P."""
        kind, p, c = _kernel_spec(kernel, self.dim)
        w, a, C = self.weights, self.means, self.covs
        if kind == "rbf":
            # for each c, all e at once: t = a_c, mean a_e, covariance C_c + C_e
            nc = self.n_components
            pair = (C[:, None] + C[None, :]).reshape(nc * nc, self.dim, self.dim)
            vals = [_gauss_conv(a[i][None], w, a, pair[i * nc:(i + 1) * nc], p)[0]
                    for i in range(nc)]
            return float(w @ np.asarray(vals))
        s = a @ a.T + c  # (C, C): a_c'a_e + c
        if p == 1:
            return float(w @ s @ w)
        aCa = np.einsum("ei,cij,ej->ce", a, C, a)  # [c, e] = a_e' C_c a_e
        S = np.einsum("cij,eji->ce", C, C) + aCa.T + aCa  # tr(C_c C_e) + a_c'C_e a_c + a_e'C_c a_e
        if p == 2:
            return float(w @ (s ** 2 + S) @ w)
        Ca = np.einsum("eij,cj->eci", C, a)  # [e, c] = C_e a_c
        cross = np.einsum("eci,cei->ce", Ca, Ca)  # a_c' C_e C_c a_e = (C_e a_c)'(C_c a_e)
        return float(w @ (s ** 3 + 3.0 * s * S + 6.0 * cross) @ w)

    def expected_diagonal(self, kernel: Kernel) -> float:
        """``E k(x, x)`` (1 for the Gaussian kernels; PAPERS.md §4.3 otherwise)."""
        kind, p, c = _kernel_spec(kernel, self.dim)
        if kind == "rbf":
            return 1.0
        a, C = self.means, self.covs
        # cumulants of ||x||^2 under each component
        k1 = np.einsum("cii->c", C) + np.einsum("ci,ci->c", a, a)
        C2 = C @ C
        k2 = 2.0 * (np.einsum("cii->c", C2) + 2.0 * np.einsum("ci,cij,cj->c", a, C, a))
        k3 = 8.0 * (np.einsum("cij,cji->c", C2, C) + 3.0 * np.einsum("ci,cij,cj->c", a, C2, a))
        m = [np.ones_like(k1), k1, k2 + k1 ** 2, k3 + 3.0 * k2 * k1 + k1 ** 3]  # E||x||^{2j}
        binom = {1: (1, 1), 2: (1, 2, 1), 3: (1, 3, 3, 1)}[p]
        comp = sum(binom[j] * c ** (p - j) * m[j] for j in range(p + 1))  # E(||x||^2 + c)^p
        return float(self.weights @ comp)

    def kme_risk(self, kernel: Kernel, n: int) -> float:
        """The oracle risk of the empirical mean, ``Delta = E||mu_hat - mu_P||^2 =
        (E k(x, x) - ||mu_P||^2) / n`` (JMLR (7))."""
        n = check_positive_int(n, "n")
        return (self.expected_diagonal(kernel) - self.kernel_mean_norm2(kernel)) / n


# -- exact loss of an embedding ---------------------------------------------------------
def loss(embedding: Any, P: GaussianMixture) -> float:
    """Exact squared RKHS distance ``||mu_hat - mu_P||^2`` of an embedding to the
    true kernel mean of the mixture `P`.

    Parameters
    ----------
    embedding : Embedding
        Anything with ``points`` (n, d), ``weights`` (n,) and a fitted ``kernel``
        (see :class:`GaussianMixture` for the supported kernels), e.g. the
        result of ``estimator.fit(x, ...)``. If it has a ``smoothing`` attribute
        that is not None nor all zeros (marginalized embeddings, Gaussian
        kernels only), the embedding is
        ``sum_i w_i E_{x~ ~N(x_i, diag(smoothing))} k(x~, .)``.
    P : GaussianMixture

    Returns
    -------
    float
        ``w'Kw - 2 w'm + ||mu_P||^2`` with ``m_i = mu_P(x_i)``; for a
        smoothed embedding ``K -> Q`` (the marginalized Gram matrix, diagonal
        included: ``Q_ij = prod_j (s_j^2/(s_j^2 + 2e_j))^{1/2}
        exp(-sum_j (x_i - x_j)_j^2 / (2(s_j^2 + 2e_j)))``) and ``m -> m~``
        (:meth:`GaussianMixture.kernel_mean` with `smoothing`).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators import KME
    >>> from kmtests.groundtruth import GaussianMixture, loss
    >>> P = GaussianMixture([1.0], [[0.0]], [[[1.0]]])
    >>> x = P.sample(20, rng=np.random.default_rng(0))
    >>> emb = KME().fit(x, kernel="linear")
    >>> print(f"{loss(emb, P):.6f} {float(x.mean()) ** 2:.6f}")
    0.003880 0.003880
    """
    if not isinstance(P, GaussianMixture):
        raise TypeError(f"`P` must be a GaussianMixture; got {type(P).__name__}.")
    try:
        pts, w, kern = embedding.points, embedding.weights, embedding.kernel
    except AttributeError as exc:
        raise TypeError("`embedding` must have `points`, `weights` and `kernel` attributes "
                        "(e.g. an Embedding from `estimator.fit`).") from exc
    pts = as_sample(pts, "embedding.points", min_size=1)
    w = np.asarray(w, dtype=np.float64).reshape(-1)
    if w.size != pts.shape[0]:
        raise ValueError("`embedding.weights` and `embedding.points` have different lengths.")
    if pts.shape[1] != P.dim:
        raise ValueError(f"the embedding lives in dimension {pts.shape[1]}, `P` in {P.dim}.")
    smoothing = getattr(embedding, "smoothing", None)
    if smoothing is not None and not np.any(check_variances(smoothing, P.dim, "smoothing") > 0):
        smoothing = None  # all-zero smoothing: a plain embedding, for any kernel
    norm2 = P.kernel_mean_norm2(kern)
    if smoothing is None:
        m = P.kernel_mean(pts, kern)
        G = kern.gram(pts)
    else:
        kind, b2, _ = _kernel_spec(kern, P.dim)
        if kind != "rbf":
            raise ValueError("`embedding.smoothing` (marginalized embeddings) is supported for "
                             "the Gaussian kernels only.")
        e = check_variances(smoothing, P.dim, "smoothing")
        m = P.kernel_mean(pts, kern, smoothing=e)
        wide = b2 + 2.0 * e  # two independent corruptions: Q_ii < 1
        xs = pts / np.sqrt(wide)
        sq = np.einsum("ij,ij->i", xs, xs)
        d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * xs @ xs.T, 0.0)
        np.fill_diagonal(d2, 0.0)
        G = np.exp(0.5 * float(np.sum(np.log(b2 / wide))) - 0.5 * d2)
    return float(w @ G @ w - 2.0 * w @ m + norm2)
