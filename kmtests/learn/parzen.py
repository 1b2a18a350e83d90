"""Parzen-window classifier with estimated class kernel means (JMLR 2016 §6.2.1).

Each class ``c`` is represented by its estimated kernel mean ``mu_c``. JMLR
eq. 46 assigns a point to the nearer class mean in the RKHS,

    f(z) = sgn(mu_1(z) - mu_2(z) + b),   b = (||mu_2||^2 - ||mu_1||^2)/2,

i.e. ``argmin_c ||phi(z) - mu_c||^2``; with more classes, the papers' pairwise
coupling with majority vote picks the same class (the nearest mean wins all
its pairwise contests).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike
from ._common import (ADVICE_APPLY, CloneMixin, check_arrays_memory, check_estimator_param,
                      check_kernel_finite, check_option, embedding_arrays, fit_embedding,
                      fit_kernel, validate_X, validate_Xy)

__all__ = ["ParzenClassifier"]


class ParzenClassifier(CloneMixin, ClassifierMixin, BaseEstimator):
    """Nearest kernel mean (Parzen window) classifier with any kernel mean estimator.

    Parameters
    ----------
    estimator : str or KernelMeanEstimator, default="kme"
        Estimator of each class mean (registered name or object); its data-
        driven parameters are chosen on each class separately.
    kernel : str or Kernel, default="gaussian"
    bandwidth : "median" or float, default="median"
        One kernel for all classes; ``"median"`` is resolved on all training
        points. The papers cross-validate it over a grid in [0.1, 2].
    rule : {"distance", "embedding"}, default="distance"
        ``"distance"``: JMLR eq. 46, score ``mu_c(z) - ||mu_c||^2/2`` (the
        nearest mean in the RKHS). ``"embedding"``: score ``mu_c(z)``, the
        estimated class embedding at ``z`` (equal-prior Parzen window rule).

    Attributes
    ----------
    classes_ : ndarray, shape (n_classes,)
    embeddings_ : list of Embedding
        Estimated kernel mean of each class.
    kernel_ : Kernel
    n_features_in_ : int

    Notes
    -----
    :meth:`predict_proba` is the softmax of the scores: it orders the classes
    as :meth:`predict` does but is not calibrated (wrap the classifier in
    :class:`sklearn.calibration.CalibratedClassifierCV` for probabilities).
    Every class needs at least two training points (the estimators tune on
    the class sample).

    References
    ----------
    .. [1] Muandet et al., "Kernel mean shrinkage estimators", JMLR 17
       (2016), §6.2.1, eq. 46 and Table 1.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.learn import ParzenClassifier
    >>> gen = np.random.default_rng(0)
    >>> X = np.vstack([gen.normal(0, 1, (30, 2)), gen.normal(2, 1, (30, 2))])
    >>> y = np.repeat([0, 1], 30)
    >>> clf = ParzenClassifier(estimator="skmse", bandwidth=1.0).fit(X, y)
    >>> print(clf.predict([[0.0, 0.0], [2.0, 2.0]]))
    [0 1]
    >>> print(f"{clf.score(X, y):.3f}")
    0.917
    """

    def __init__(self, *, estimator: Any = "kme", kernel: Any = "gaussian",
                 bandwidth: Any = "median", rule: str = "distance") -> None:
        self.estimator = estimator
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.rule = rule

    def fit(self, X: ArrayLike, y: ArrayLike) -> "ParzenClassifier":
        """Estimate the kernel mean of every class.

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
        y : array_like, shape (n_samples,)

        Returns
        -------
        self
        """
        check_option(self.rule, "rule", ("distance", "embedding"))
        if y is None:
            raise ValueError("ParzenClassifier requires y to be passed, but the target y is "
                             "None.")
        X, y = validate_Xy(self, X, y, reset=True, min_samples=2)
        check_classification_targets(y)
        classes, yi = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(f"`y` must contain at least 2 classes; got 1 class ({classes[0]!r}).")
        counts = np.bincount(yi)
        if np.any(counts < 2):
            bad = classes[counts < 2].tolist()
            raise ValueError(f"every class in `y` needs at least 2 samples; classes {bad} "
                             "have 1.")
        est = check_estimator_param(self.estimator)
        big = int(counts.max())  # one class at a time
        check_arrays_memory(max(embedding_arrays(est), 1.5), big, big,
                            f"the {est.name} embedding of the largest class")
        kern = fit_kernel(self.kernel, self.bandwidth, X)
        check_kernel_finite(kern, X)
        self.embeddings_ = [fit_embedding(est, X[yi == c], kern) for c in range(classes.size)]
        self._half_norm2 = np.array([0.5 * e.norm2() for e in self.embeddings_])
        self.classes_ = classes
        self.kernel_ = kern
        return self

    def _scores(self, X: ArrayLike) -> np.ndarray:
        check_is_fitted(self)
        Z = validate_X(self, X, reset=False)
        check_kernel_finite(self.kernel_, Z)
        big = max(e.points.shape[0] for e in self.embeddings_)
        check_arrays_memory(3.5, Z.shape[0], big, "the cross Gram matrix with a class",
                            subject="this prediction", advice=ADVICE_APPLY)
        S = np.column_stack([e(Z) for e in self.embeddings_])
        if self.rule == "distance":
            S = S - self._half_norm2[None, :]
        return S

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Class scores; for two classes the difference ``score_1 - score_0``.

        With ``rule="distance"`` and two classes this is JMLR's
        ``mu_1(z) - mu_0(z) + b`` (positive: the second class).

        Returns
        -------
        ndarray, shape (n_samples,) or (n_samples, n_classes)
        """
        S = self._scores(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Class with the highest score (the nearest mean for ``rule="distance"``)."""
        check_is_fitted(self)
        return self.classes_[np.argmax(self._scores(X), axis=1)]

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Softmax of the class scores (same order as :meth:`predict`; not calibrated).

        Returns
        -------
        ndarray, shape (n_samples, n_classes)
        """
        return softmax(self._scores(X), axis=1)
