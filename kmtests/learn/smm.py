"""Support measure machines: SVMs whose inputs are distributions (SMM, NIPS 2012).

The SMM is scikit-learn's :class:`~sklearn.svm.SVC` with a precomputed
kernel on distributions (:func:`~kmtests.learn.distribution_gram`); the
one-class SMM (Muandet & Schoelkopf, UAI 2013) is
:class:`~sklearn.svm.OneClassSVM` on the same Gram matrix, for group anomaly
detection. Inputs are lists of samples (``(n_i, d)`` arrays, any kernel mean
estimator) or lists of :class:`~kmtests.learn.Normal` distributions (closed
forms of SMM Table 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin
from sklearn.svm import SVC, OneClassSVM
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike
from ._common import CloneMixin, check_real
from .distributions import DistributionKernel

__all__ = ["OneClassSupportMeasureMachine", "SupportMeasureMachine"]

_KERNEL_PARAMS = ("kernel", "bandwidth", "estimator", "level2", "level2_bandwidth", "degree",
                  "coef0", "linear_trace")


class _DistributionKernelMixin:
    """Shared parameters and the fitted kernel on distributions."""

    def _keep_kernel_params(self, params: dict[str, Any]) -> None:
        """Store the distribution kernel's constructor arguments (`params`: the
        constructor's ``locals()``) unchanged: scikit-learn's rule, no checks in
        ``__init__``."""
        for name in _KERNEL_PARAMS:
            setattr(self, name, params[name])

    def _fit_kernel(self, X: Any) -> np.ndarray:
        dk = DistributionKernel(**{p: getattr(self, p) for p in _KERNEL_PARAMS}).fit(X)
        self.distribution_kernel_ = dk
        self.n_features_in_ = dk.d
        self.level2_bandwidth_ = dk.level2_bandwidth_
        self.kernel_ = dk.kernel_
        return dk.gram()

    def _gram(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        return self.distribution_kernel_.gram(X)

    #: the attribute holding the fitted scikit-learn SVM on the distribution kernel
    _svm: str = ""

    def _ask(self, method: str, X: Any) -> np.ndarray:
        """The fitted SVM's `method` on the distribution kernel between `X` and the
        training distributions."""
        G = self._gram(X)
        return np.asarray(getattr(getattr(self, self._svm), method)(G))

    def decision_function(self, X: Any) -> np.ndarray:
        """The SVM's decision values ``f(P)`` for the distributions `X` (one-class: the
        signed distance to the boundary, negative for a group anomaly)."""
        return self._ask("decision_function", X)

    def predict(self, X: Any) -> np.ndarray:
        """Predicted labels of the distributions `X` (one-class: +1 for normal
        distributions, -1 for group anomalies)."""
        return self._ask("predict", X)

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        tags.input_tags.two_d_array = False
        tags.input_tags.pairwise = False
        return tags

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn < 1.6
        return {"X_types": ["list"]}


_PARAMS_DOC = """
    kernel : str or Kernel, default="gaussian"
        Embedding (level-1) kernel.
    bandwidth : "median" or float, default="median"
        Its bandwidth; ``"median"`` on the pooled training points (the means
        of Normal inputs).
    estimator : str or KernelMeanEstimator, default="kme"
        Kernel mean estimator applied to every training and test sample.
    level2 : {"linear", "polynomial", "gaussian"}, default="linear"
        Kernel on the embeddings: ``<mu_P, mu_Q>``,
        ``(<mu_P, mu_Q> + coef0)^degree`` or
        ``exp(-||mu_P - mu_Q||^2/(2 level2_bandwidth^2))``.
    level2_bandwidth : "median" or float, default="median"
    degree : int, default=2
    coef0 : float, default=1.0
    linear_trace : bool, default=False
        Normal inputs, linear kernel: SMM Table 1's ``delta_ij tr Sigma_i``
        term (paper reproduction only)."""


class SupportMeasureMachine(CloneMixin, _DistributionKernelMixin, ClassifierMixin,
                            BaseEstimator):
    __doc__ = f"""Support measure machine: an SVM on a list of distributions.

    Parameters
    ----------
    C : float, default=1.0
        SVM regularisation.{_PARAMS_DOC}
    class_weight : dict, "balanced" or None, default=None
        Passed to :class:`sklearn.svm.SVC`.

    Attributes
    ----------
    classes_ : ndarray
    svc_ : sklearn.svm.SVC
        The SVM fitted on the precomputed Gram matrix.
    kernel_ : Kernel
        The fitted embedding kernel.
    level2_bandwidth_ : float
        The resolved level-2 bandwidth (NaN unless ``level2="gaussian"``).
    distribution_kernel_ : DistributionKernel
    n_features_in_ : int
        Dimension of the points.

    Notes
    -----
    By the representer theorem of SMM (Thm 1) the solution is
    ``f(P) = sum_i alpha_i y_i K(P_i, P) + b``, exactly the SVM dual with the
    Gram matrix ``K(P_i, P_j)``.

    References
    ----------
    .. [1] Muandet, Fukumizu, Dinuzzo & Schoelkopf, "Learning from
       distributions via support measure machines", NIPS 2012.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.learn import SupportMeasureMachine
    >>> gen = np.random.default_rng(0)
    >>> bags = [gen.normal(0, s, size=(20, 2)) for s in [0.5] * 10 + [2.0] * 10]
    >>> y = np.repeat([0, 1], 10)
    >>> smm = SupportMeasureMachine(C=10.0, bandwidth=1.0, level2="gaussian").fit(bags, y)
    >>> test = [gen.normal(0, 0.5, size=(20, 2)), gen.normal(0, 2.0, size=(20, 2))]
    >>> print(smm.predict(test))
    [0 1]
    """

    def __init__(self, C: float = 1.0, *, kernel: Any = "gaussian", bandwidth: Any = "median",
                 estimator: Any = "kme", level2: str = "linear",
                 level2_bandwidth: Any = "median", degree: int = 2, coef0: float = 1.0,
                 linear_trace: bool = False, class_weight: Any = None) -> None:
        self.C = C
        self.class_weight = class_weight
        self._keep_kernel_params(locals())

    def fit(self, X: Any, y: ArrayLike) -> "SupportMeasureMachine":
        """Fit the SVM on the distributions `X` with labels `y`.

        Parameters
        ----------
        X : list of array_like (n_i, d) or list of Normal
        y : array_like, shape (len(X),)

        Returns
        -------
        self
        """
        check_real(self.C, "C", low=0.0)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != (len(X) if hasattr(X, "__len__") else -1):
            raise ValueError("`y` must be 1-D with one label per distribution in `X`.")
        check_classification_targets(y)
        G = self._fit_kernel(X)
        self.svc_ = SVC(C=self.C, kernel="precomputed", class_weight=self.class_weight).fit(G, y)
        self.classes_ = self.svc_.classes_
        return self

    _svm = "svc_"


class OneClassSupportMeasureMachine(CloneMixin, _DistributionKernelMixin, OutlierMixin,
                                    BaseEstimator):
    __doc__ = f"""One-class SMM: group anomaly detection on a list of distributions.

    Parameters
    ----------
    nu : float in (0, 1], default=0.5
        Upper bound on the fraction of training outliers (OneClassSVM).{_PARAMS_DOC}

    Attributes
    ----------
    ocsvm_ : sklearn.svm.OneClassSVM
    kernel_, level2_bandwidth_, distribution_kernel_, n_features_in_
        As in :class:`SupportMeasureMachine`.

    References
    ----------
    .. [1] Muandet & Schoelkopf, "One-class support measure machines for
       group anomaly detection", UAI 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.learn import OneClassSupportMeasureMachine
    >>> gen = np.random.default_rng(0)
    >>> bags = [gen.normal(0, 1, size=(30, 2)) for _ in range(40)]
    >>> oc = OneClassSupportMeasureMachine(nu=0.1, bandwidth=1.0,
    ...                                    level2="gaussian").fit(bags)
    >>> odd = [gen.normal(0, 1, size=(30, 2)), gen.normal(0, 0.1, size=(30, 2))]
    >>> print(oc.predict(odd))
    [ 1 -1]
    """

    def __init__(self, nu: float = 0.5, *, kernel: Any = "gaussian", bandwidth: Any = "median",
                 estimator: Any = "kme", level2: str = "linear",
                 level2_bandwidth: Any = "median", degree: int = 2, coef0: float = 1.0,
                 linear_trace: bool = False) -> None:
        self.nu = nu
        self._keep_kernel_params(locals())

    def fit(self, X: Any, y: Any = None) -> "OneClassSupportMeasureMachine":
        """Fit the one-class SVM on the distributions `X` (`y` ignored)."""
        nu = check_real(self.nu, "nu", low=0.0)
        if nu > 1.0:
            raise ValueError(f"`nu` must be in (0, 1]; got {self.nu!r}.")
        G = self._fit_kernel(X)
        self.ocsvm_ = OneClassSVM(kernel="precomputed", nu=nu).fit(G)
        return self

    _svm = "ocsvm_"

    def score_samples(self, X: Any) -> np.ndarray:
        """Unshifted scores (higher: more normal); ROC curves use these."""
        return self._ask("score_samples", X)
