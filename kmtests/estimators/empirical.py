"""The empirical kernel mean estimator (KME)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._base import KernelMeanEstimator
from ._rules import Uniform


@dataclass(frozen=True)
class KME(KernelMeanEstimator):
    """Empirical kernel mean ``(1/n) sum_i k(x_i, .)``: weights ``1/n``.

    With it, the two-sample statistic is the classical MMD^2 and the
    independence statistic the classical HSIC (Gretton et al., 2005, 2012).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators import KME
    >>> emb = KME().fit(np.arange(4.0), kernel="linear")
    >>> print(emb.weights)
    [0.25 0.25 0.25 0.25]
    """

    name: ClassVar[str] = "kme"
    label: ClassVar[str] = "KME (empirical)"

    def weights(self, K: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        n = K.shape[0]
        return np.full(n, 1.0 / n), {}

    def rule(self) -> Uniform:
        return Uniform(fixed=1.0)

    def with_fixed(self, params: dict[str, Any]) -> "KME":
        return self
