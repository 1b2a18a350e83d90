"""Density estimation by kernel mean matching (Song et al. 2008; ICML 2014 §4.2).

A mixture ``Q = sum_j pi_j N(theta_j, s_j I)`` is fitted so that its kernel
mean matches the estimated embedding of the data, ``min ||mu_hat - mu_Q||^2``
over the simplex weights, the means and the variances (JMLR eq. 47). A better
estimate ``mu_hat`` (shrinkage, marginalised) is meant to give a better
density, measured by the test log-likelihood.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.spatial.distance import cdist
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike
from ..estimators import Embedding
from ._common import (ADVICE_APPLY, CloneMixin, check_arrays_memory, check_estimator_param,
                      check_int, check_kernel_finite, check_option, check_real,
                      embedding_arrays, fit_embedding, fit_kernel, validate_X)
from ._kmm import KMMProblem, check_kmm_kernel

__all__ = ["KernelMeanMatchingDensity", "kmm_objective"]

#: refuse a `min_variance` above 1e100 times the squared spread of the data (in the fit's
#: frame, the log of the variance floor; the variances would overflow well before 1e308)
_LOG_FLOOR_MAX = float(np.log(1e100))


def kmm_objective(embedding: Embedding, weights: ArrayLike, means: ArrayLike,
                  variances: ArrayLike) -> float:
    """Squared RKHS distance between an embedding and a Gaussian mixture's kernel mean.

    Parameters
    ----------
    embedding : Embedding
        A fitted embedding (any estimator; smoothed ones need a Gaussian kernel).
    weights : array_like, shape (m,)
        Mixture weights ``pi_j``.
    means : array_like, shape (m, d)
        Component means ``theta_j``.
    variances : array_like, shape (m,)
        Isotropic component variances ``s_j`` (covariance ``s_j I``).

    Returns
    -------
    float
        ``||mu_hat - mu_Q||^2`` for ``Q = sum_j pi_j N(theta_j, s_j I)``.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators import KME
    >>> from kmtests.learn.density import kmm_objective
    >>> x = np.array([[0.0], [1.0]])
    >>> emb = KME().fit(x, kernel="gaussian", bandwidth=1.0)
    >>> print(f"{kmm_objective(emb, [0.5, 0.5], [[0.0], [1.0]], [1e-12, 1e-12]):.6f}")
    0.000000
    """
    prob = KMMProblem(embedding)
    pi = np.asarray(weights, dtype=np.float64).reshape(-1)
    theta = np.asarray(means, dtype=np.float64).reshape(pi.size, prob.d)
    s = np.asarray(variances, dtype=np.float64).reshape(-1)
    if s.shape != pi.shape or np.any(s < 0):
        raise ValueError("`variances` must be m non-negative numbers (one per component).")
    return prob.value(pi, theta, s)


class KernelMeanMatchingDensity(CloneMixin, DensityMixin, BaseEstimator):
    """Gaussian mixture fitted by kernel mean matching to an estimated embedding.

    Fits ``Q = sum_j pi_j N(theta_j, s_j I)`` by minimising
    ``||mu_hat - mu_Q||^2_H`` (JMLR eq. 47), where ``mu_hat`` is the kernel
    mean of the training data estimated by `estimator`.

    Parameters
    ----------
    n_components : int, default=10
        Number of mixture components ``m``.
    estimator : str or KernelMeanEstimator, default="kme"
        The kernel mean estimator: a name registered in
        :data:`kmtests.estimators.ESTIMATORS` (``"kme"``, ``"skmse"``,
        ``"fkmse"``, ``"bkmse"``, ``"mkme"``, ``"mmkme"``, ...) or an
        estimator object.
    kernel : str or Kernel, default="gaussian"
        ``"gaussian"``, ``"ard"``, ``"linear"`` or ``"polynomial"`` (or such a
        kernel object; polynomial degree at most 3).
    bandwidth : "median" or float, default="median"
        Gaussian bandwidth; ``"median"`` is resolved on the training data.
    optimize : {"all", "weights"}, default="all"
        ``"all"`` fits weights, means and variances (ICML/JMLR); ``"weights"``
        keeps the k-means prototypes and fits the weights only (the MKME
        paper's reading).
    n_init : int, default=50
        Number of k-means initialisations (the best is kept), as in the papers.
    min_variance : float, default=1e-3
        Lower bound on the component variances, in the data's units squared
        (the default suits standardised data; more than 1e100 times the
        data's squared spread is refused).
    max_iter : int, default=500
        L-BFGS-B iterations.
    tol : float, default=1e-10
        L-BFGS-B tolerance on the objective (``ftol``).
    random_state : int, RandomState instance or None, default=None
        Seeds k-means (and :meth:`sample` when it is given no seed).

    Attributes
    ----------
    weights_ : ndarray, shape (n_components,)
    means_ : ndarray, shape (n_components, n_features)
    variances_ : ndarray, shape (n_components,)
        Isotropic variance ``s_j`` of each component, in the data's units
        squared: infinite (or 0) when that leaves the floating-point range,
        for data spread beyond about 1e154 (below 1e-154). :meth:`score_samples`
        and :meth:`sample` use the fit's own coordinates and stay exact.
    embedding_ : Embedding
        The estimated kernel mean of the training data.
    kernel_ : Kernel
        The fitted kernel.
    objective_ : float
        ``||mu_hat - mu_Q||^2`` at the solution.
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int

    Notes
    -----
    Initialisation: k-means (``n_init`` restarts) gives ``pi`` (cluster
    proportions), ``theta`` (centroids) and ``s_j`` (mean squared distance
    to the centroid divided by ``d``, at least `min_variance`). Then L-BFGS-B
    minimises the closed-form objective (see :func:`kmm_objective`) over
    ``softmax`` logits, means and ``log s_j`` with the analytic gradient.
    With the linear kernel only the mixture mean is matched: the variances
    do not enter the objective and keep their k-means values.

    The fit runs in the coordinates ``z = (x - m) / s`` (``m`` the mean of
    the data for the Gaussian kernels, 0 for the polynomial ones; ``s`` the
    largest remaining coordinate) with the kernel and `min_variance`
    expressed in them, and is mapped back (``means_ = m + s theta``,
    ``variances_ = s^2 s_j``). Data multiplied by any factor, or shifted by
    any offset (Gaussian kernels), give the fit of the plain data mapped back,
    to rounding: nothing overflows at 1e200 and an offset of 1e9 cancels
    before any distance is formed. A linear or polynomial kernel whose Gram
    matrix would overflow on the data is refused.

    References
    ----------
    .. [1] Song, Zhang, Smola, Gretton & Schoelkopf, "Tailoring density
       estimation via reproducing kernel moment matching", ICML 2008.
    .. [2] Muandet et al., "Kernel mean estimation and Stein effect", ICML
       2014, §4.2 and Table 1.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.learn import KernelMeanMatchingDensity
    >>> gen = np.random.default_rng(0)
    >>> x = np.vstack([gen.normal(-2, 0.5, (60, 1)), gen.normal(2, 0.5, (60, 1))])
    >>> q = KernelMeanMatchingDensity(n_components=2, estimator="skmse",
    ...                               random_state=0).fit(x)
    >>> print(np.round(np.sort(q.means_.ravel()), 1))
    [-2.  2.]
    >>> print(f"{q.score(x):.3f}")
    -1.372
    """

    def __init__(self, n_components: int = 10, *, estimator: Any = "kme",
                 kernel: Any = "gaussian", bandwidth: Any = "median",
                 optimize: str = "all", n_init: int = 50, min_variance: float = 1e-3,
                 max_iter: int = 500, tol: float = 1e-10, random_state: Any = None) -> None:
        self.n_components = n_components
        self.estimator = estimator
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.optimize = optimize
        self.n_init = n_init
        self.min_variance = min_variance
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _check_params(self) -> None:
        check_int(self.n_components, "n_components")
        check_option(self.optimize, "optimize", ("all", "weights"))
        check_int(self.n_init, "n_init")
        check_real(self.min_variance, "min_variance", low=0.0)
        check_int(self.max_iter, "max_iter")
        check_real(self.tol, "tol", low=0.0)

    def fit(self, X: ArrayLike, y: Any = None) -> "KernelMeanMatchingDensity":
        """Fit the mixture to the kernel mean of `X`, shape (n_samples, n_features) (`y`
        ignored); returns self."""
        self._check_params()
        X = validate_X(self, X, reset=True, min_samples=2)
        m = self.n_components
        if X.shape[0] < m:
            raise ValueError(f"`n_components` must be at most the number of samples; got "
                             f"n_components={m} with n_samples={X.shape[0]}.")
        est = check_estimator_param(self.estimator)
        n, d = X.shape
        # the embedding (its estimator's n x n arrays), then the n x n norm of the problem
        # and the (n, m, d) arrays of the objective
        check_arrays_memory(max(embedding_arrays(est), 1.5) + 8.0 * m * d / n, n, n,
                            f"the {est.name} embedding and the mixture")
        kern = fit_kernel(self.kernel, self.bandwidth, X)
        check_kmm_kernel(kern)  # reject kernels without a closed form early
        check_kernel_finite(kern, X)
        emb = fit_embedding(est, X, kern)
        # solved in the frame z = (x - offset) / scale (see kmtests.learn._kmm): k-means,
        # variances and the objective; the solution is mapped back to the data's units
        prob = KMMProblem(emb)
        Z, scale = prob.X, prob.frame.scale
        log_scale2 = 2.0 * np.log(scale)

        rs = check_random_state(self.random_state)
        km = KMeans(n_clusters=m, n_init=self.n_init, random_state=rs).fit(Z)
        counts = np.bincount(km.labels_, minlength=m).astype(np.float64)
        d2 = np.sum((Z - km.cluster_centers_[km.labels_]) ** 2, axis=1)
        spread = np.bincount(km.labels_, weights=d2, minlength=m) / np.maximum(counts, 1)
        s0 = spread / d
        fallback = float(np.mean(s0[counts > 1])) if np.any(counts > 1) else 1.0
        s0 = np.where(counts > 1, s0, fallback)
        # variances at least min_variance (data units): log s >= lo in the frame
        lo = float(np.log(max(self.min_variance, 1e-300)) - log_scale2)
        if lo > _LOG_FLOOR_MAX:
            raise ValueError(
                f"`min_variance` must be small next to the squared spread of `X`; got "
                f"min_variance={self.min_variance!r} for data spread over {scale:.3g}, a "
                "variance floor of more than 1e100 times the data's squared spread. "
                "`min_variance` is in the data's units (squared): pass a smaller one, or "
                "rescale the data.")
        s0 = np.maximum(s0, np.exp(max(lo, float(np.log(1e-12)))))  # and 1e-12 of the spread^2
        pi0 = np.maximum(counts, 0.5) / np.sum(np.maximum(counts, 0.5))
        w0 = prob.pack(pi0, km.cluster_centers_, s0)

        mask = np.ones_like(w0)
        if self.optimize == "weights":
            mask[m:] = 0.0
        bounds = [(None, None)] * (m + m * d) + [(lo, None)] * m
        res = minimize(prob.value_and_grad, w0, args=(m, mask), jac=True, method="L-BFGS-B",
                       bounds=bounds, options={"maxiter": self.max_iter, "ftol": self.tol,
                                               "gtol": 1e-12})
        w = res.x if res.fun <= prob.value_and_grad(w0, m)[0] else w0
        pi, theta, s = prob.unpack(w, m)
        self._frame = prob.frame
        self._means_z = theta.copy()
        self._variances_z = s
        self.weights_ = pi
        self.means_ = prob.frame.back(theta)
        with np.errstate(over="ignore"):
            self.variances_ = s * scale * scale
        self.embedding_ = emb
        self.kernel_ = kern
        self.objective_ = prob.to_units(prob.value_frame(pi, theta, s))
        self.n_iter_ = int(res.nit)
        self.converged_ = bool(res.success)
        if not res.success and res.nit >= self.max_iter:
            warnings.warn(f"kernel mean matching did not converge in max_iter={self.max_iter} "
                          "iterations; increase `max_iter`.", ConvergenceWarning, stacklevel=2)
        return self

    def score_samples(self, X: ArrayLike) -> np.ndarray:
        """Log-density ``log q(x)`` of the fitted mixture at the rows of `X`.

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_X(self, X, reset=False)
        d = X.shape[1]
        check_arrays_memory(6.0, X.shape[0], self.n_components, "the log-densities",
                            subject="this evaluation", advice=ADVICE_APPLY)
        s = self._variances_z
        # in the frame of the fit: distances from differences of numbers of the size of
        # the data's spread, whatever their offset; log q(x) = log q_z(z) - d log(scale)
        d2 = cdist(self._frame.to(X), self._means_z, "sqeuclidean")
        logp = (np.log(self.weights_)[None, :] - 0.5 * d * np.log(2.0 * np.pi * s)[None, :]
                - d2 / (2.0 * s[None, :]))
        return logsumexp(logp, axis=1) - d * np.log(self._frame.scale)

    def score(self, X: ArrayLike, y: Any = None) -> float:
        """Mean log-likelihood of `X` under the fitted mixture (higher is better).

        The papers' table reports ``-score(X_test)``, the average negative
        log-likelihood.
        """
        return float(np.mean(self.score_samples(X)))

    def sample(self, n_samples: int = 1, random_state: Any = None) -> np.ndarray:
        """Draw points from the fitted mixture.

        Parameters
        ----------
        n_samples : int, default=1
        random_state : int, RandomState instance or None
            None uses the estimator's `random_state`.

        Returns
        -------
        ndarray, shape (n_samples, n_features)
        """
        check_is_fitted(self)
        n = check_int(n_samples, "n_samples")
        rs = check_random_state(self.random_state if random_state is None else random_state)
        comp = rs.choice(self.n_components, size=n, p=self.weights_)
        z = rs.standard_normal((n, self.means_.shape[1]))
        return self._frame.back(self._means_z[comp] + np.sqrt(self._variances_z[comp])[:, None] * z)
