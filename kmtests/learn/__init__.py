"""Applications of better kernel mean estimators (scikit-learn compatible).

Requires scikit-learn (``pip install kmtests[learn]``); it is imported only
when this sub-package is.

KernelMeanMatchingDensity
    Gaussian mixture fitted by kernel mean matching (density estimation).
ShrinkageKernelPCA
    Kernel PCA with a shrunk mean (centring) or a shrunk covariance operator.
ParzenClassifier
    Parzen-window (nearest kernel mean) classifier with estimated class means.
distribution_gram, expected_kernel, flex_gram, Normal
    Kernels between distributions (samples or Gaussians).
SupportMeasureMachine, OneClassSupportMeasureMachine
    SVMs on distributions (classification and group anomaly detection).
"""

from __future__ import annotations

from .density import KernelMeanMatchingDensity as KernelMeanMatchingDensity
from .distributions import Normal as Normal
from .distributions import distribution_gram as distribution_gram
from .distributions import expected_kernel as expected_kernel
from .distributions import flex_gram as flex_gram
from .kpca import ShrinkageKernelPCA as ShrinkageKernelPCA
from .parzen import ParzenClassifier as ParzenClassifier
from .smm import OneClassSupportMeasureMachine as OneClassSupportMeasureMachine
from .smm import SupportMeasureMachine as SupportMeasureMachine

__all__ = [
    "KernelMeanMatchingDensity",
    "Normal",
    "OneClassSupportMeasureMachine",
    "ParzenClassifier",
    "ShrinkageKernelPCA",
    "SupportMeasureMachine",
    "distribution_gram",
    "expected_kernel",
    "flex_gram",
]
