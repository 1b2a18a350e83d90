"""Kernel PCA with a shrunk mean or a shrunk covariance operator (ICML 2014 §4.2).

Two ways to put a kernel mean estimator into kernel PCA:

* ``shrink="mean"``: centre the feature vectors by the estimated embedding,
  ``phi~(x) = phi(x) - mu_hat`` (ARX App. D), and diagonalise the usual
  covariance ``(1/n) sum_i phi~(x_i) (x) phi~(x_i)``;
* ``shrink="covariance"`` (COSE, ICML §3.2): centre by the empirical mean and
  diagonalise ``C = sum_i beta_i phi~(x_i) (x) phi~(x_i)``, whose weights are
  the estimator's on the Gram matrix ``K_c o K_c`` of the points
  ``phi~(x_i) (x) phi~(x_i)`` (S-COSE with ``"skmse"``, F-COSE with ``"fkmse"``).

The eigenvectors ``v = sum_i a_i phi~(x_i)`` solve
``K_c B K_c a = lambda K_c a`` with ``B = diag(beta)``, normalised to
``a' K_c a = 1`` (unit vectors in the RKHS), so the reconstruction error
``||phi~(z) - P phi~(z)||^2 = ||phi~(z)||^2 - sum_k (a_k' k~_z)^2`` is that
of an orthogonal projection and needs no pre-image.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike
from ._common import (ADVICE_APPLY, CloneMixin, check_arrays_memory, check_estimator_param,
                      check_int, check_kernel_finite, check_option, embedding_arrays,
                      fit_embedding, fit_kernel, kernel_diag, validate_X)

__all__ = ["ShrinkageKernelPCA"]


class ShrinkageKernelPCA(CloneMixin, TransformerMixin, BaseEstimator):
    """Kernel PCA whose mean or covariance operator comes from a kernel mean estimator.

    Parameters
    ----------
    n_components : int, default=20
        Number of principal components (the papers use 20).
    estimator : str or KernelMeanEstimator, default="kme"
        Registered name or estimator object. With ``"kme"`` both modes are
        standard kernel PCA.
    shrink : {"mean", "covariance"}, default="mean"
        ``"mean"``: centre by the estimated kernel mean (any estimator,
        marginalised ones included). ``"covariance"``: COSE, the estimator's
        weights on ``K_c o K_c`` weight the covariance operator (weight
        estimators only: ``kme``, ``skmse``, ``bkmse``, ``fkmse`` and the
        spectral filters).
    kernel : str or Kernel, default="gaussian"
    bandwidth : "median" or float, default="median"
        Resolved on the training data when ``"median"``.

    Attributes
    ----------
    kernel_ : Kernel
    X_fit_ : ndarray, shape (n_samples, n_features)
    alphas_ : ndarray, shape (n_samples, n_components)
        Coefficients ``a_k`` of the unit eigenvectors in the centred points;
        the largest coefficient of each column is positive (the sign of an
        eigenvector is otherwise arbitrary).
    eigenvalues_ : ndarray, shape (n_components,)
        Eigenvalues of the (shrunk) covariance operator, decreasing.
    weights_ : ndarray, shape (n_samples,)
        Operator weights ``beta`` (``1/n`` for ``shrink="mean"``).
    center_ : Embedding or None
        The centring embedding for ``shrink="mean"`` (None: empirical mean).
    estimator_params_ : dict
        Parameters chosen by the estimator (shrinkage, lambda, ...).
    n_features_in_ : int

    Notes
    -----
    Components beyond the numerical rank of ``K_c`` are zero. With a uniform
    estimator (``skmse``, ``bkmse``) in ``"covariance"`` mode the operator
    is ``(1 - alpha)`` times the KPCA one: the same eigenvectors, hence the
    *same* reconstruction error as standard kernel PCA.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.learn import ShrinkageKernelPCA
    >>> gen = np.random.default_rng(0)
    >>> x, z = gen.normal(size=(80, 5)), gen.normal(size=(20, 5))
    >>> kpca = ShrinkageKernelPCA(n_components=5, estimator="fkmse",
    ...                           shrink="covariance").fit(x)
    >>> print(kpca.transform(z).shape)
    (20, 5)
    >>> print(f"{kpca.reconstruction_error(z).mean():.4f}")
    0.1705
    """

    def __init__(self, n_components: int = 20, *, estimator: Any = "kme",
                 shrink: str = "mean", kernel: Any = "gaussian",
                 bandwidth: Any = "median") -> None:
        self.n_components = n_components
        self.estimator = estimator
        self.shrink = shrink
        self.kernel = kernel
        self.bandwidth = bandwidth

    def fit(self, X: ArrayLike, y: Any = None) -> "ShrinkageKernelPCA":
        """Fit the components on `X`, shape (n_samples, n_features) (`y` ignored); returns
        self."""
        k = check_int(self.n_components, "n_components")
        check_option(self.shrink, "shrink", ("covariance", "mean"))
        X = validate_X(self, X, reset=True, min_samples=2)
        est = check_estimator_param(self.estimator)
        n = X.shape[0]
        # measured peaks: the eigen-decompositions hold about 6 n x n arrays; the estimator
        # runs next to K (mean) or K, K_c and K_c o K_c (covariance)
        extra = 1.0 if self.shrink == "mean" else 3.0
        check_arrays_memory(max(6.5, extra + embedding_arrays(est)), n, n,
                            f"kernel PCA with the {est.name} {self.shrink}")
        kern = fit_kernel(self.kernel, self.bandwidth, X)
        check_kernel_finite(kern, X)
        K = kern.gram(X)
        if self.shrink == "mean":
            center = fit_embedding(est, X, kern)
            mx = center(X)
            nrm = center.norm2()
            beta = np.full(n, 1.0 / n)
            params = dict(center.params)
        else:
            center = None
            mx = K.mean(axis=1)
            nrm = float(K.mean())
        Kc = K - mx[:, None] - mx[None, :] + nrm
        Kc = 0.5 * (Kc + Kc.T)
        if self.shrink == "covariance":
            try:
                beta, params = est.weights(Kc * Kc)
            except NotImplementedError as exc:
                raise ValueError(
                    "`estimator` must be a weight estimator for shrink='covariance' (COSE "
                    f"needs weights on the Gram matrix K_c o K_c); {type(est).__name__} has "
                    "none. Use shrink='mean' with it.") from exc
            beta = np.asarray(beta, dtype=np.float64)
            if not np.any(beta):
                raise ValueError(
                    "`estimator` shrank the covariance operator to zero (shrinkage 1, all "
                    "weights 0 on K_c o K_c), so it has no principal components; use "
                    "shrink='mean' or another estimator.")
        lam, U = np.linalg.eigh(Kc)
        keep = lam > max(lam[-1], 0.0) * n * np.finfo(np.float64).eps * 10
        U, lam = U[:, keep], lam[keep]
        root = np.sqrt(lam)
        M = (root[:, None] * (U.T * beta) @ U) * root[None, :]
        ev, W = np.linalg.eigh(0.5 * (M + M.T))
        order = np.argsort(ev)[::-1][:k]
        alphas = (U / root[None, :]) @ W[:, order]
        eig = ev[order]
        # the sign of an eigenvector is arbitrary: fix it (scikit-learn's convention, the
        # largest coefficient positive) so that equal data give equal coordinates
        top = alphas[np.argmax(np.abs(alphas), axis=0), np.arange(alphas.shape[1])]
        alphas = alphas * np.where(top < 0, -1.0, 1.0)[None, :]
        if alphas.shape[1] < k:  # rank-deficient: zero components
            pad = k - alphas.shape[1]
            alphas = np.hstack([alphas, np.zeros((n, pad))])
            eig = np.concatenate([eig, np.zeros(pad)])
        self.kernel_ = kern
        self.X_fit_ = X
        self.alphas_ = alphas
        self.eigenvalues_ = eig
        self.weights_ = beta
        self.center_ = center
        self.estimator_params_ = params
        self._mx = mx
        self._nrm = nrm
        return self

    def _centered(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Centred cross Gram ``<phi~(x_i), phi~(z)>`` (m, n) and ``mu(z)``."""
        check_arrays_memory(4.5, Z.shape[0], self.X_fit_.shape[0],
                            "the cross Gram matrix with the training points",
                            subject="this transform", advice=ADVICE_APPLY)
        L = self.kernel_.gram(Z, self.X_fit_)
        mz = self.center_(Z) if self.center_ is not None else L.mean(axis=1)
        return L - self._mx[None, :] - mz[:, None] + self._nrm, mz

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Coordinates of the centred feature vectors on the components.

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples, n_components)
        """
        check_is_fitted(self)
        Z = validate_X(self, X, reset=False)
        check_kernel_finite(self.kernel_, Z)
        return self._centered(Z)[0] @ self.alphas_

    def reconstruction_error(self, X: ArrayLike) -> np.ndarray:
        """Feature-space reconstruction error ``||phi~(z) - P phi~(z)||^2``.

        ``P`` projects onto the fitted components; no pre-image is needed.

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples,)
        """
        check_is_fitted(self)
        Z = validate_X(self, X, reset=False)
        check_kernel_finite(self.kernel_, Z)
        Lc, mz = self._centered(Z)
        proj = Lc @ self.alphas_
        norm2 = kernel_diag(self.kernel_, Z) - 2.0 * mz + self._nrm
        return np.maximum(norm2 - np.einsum("ij,ij->i", proj, proj), 0.0)

    def score(self, X: ArrayLike, y: Any = None) -> float:
        """Minus the mean reconstruction error (higher is better, for model selection)."""
        return -float(np.mean(self.reconstruction_error(X)))
