"""What an estimator tells the permutation engines: its weight rule.

A closed set of two rules, owned by the engines:

* :class:`Uniform` — weights ``beta = c / n`` on every point of a sample, with
  the factor ``c = scale(rho, v, n)`` a function of two block statistics of the
  sample's Gram matrix ``K``: ``rho = 1'K1/n^2`` (``||mu_hat||^2``) and
  ``v = tr(K)/n - rho`` (the mean squared distance of the feature vectors to
  their mean, >= 0). The engines compute both for many permutations at once
  from block sums and call ``scale`` vectorised, so such estimators cost what
  the KME costs. ``v`` is passed rather than ``tr(K)/n`` because the engines
  compute it from the centred Gram matrix, without the cancellation of
  ``tr(K)/n - rho`` when the kernel values carry a large offset.
* :class:`General` — ``weights(K) -> (beta, params)`` called on every
  permuted sample; optionally also ``features(Phi) -> (beta, params)``, the same
  weights from the sample's n x r features (``K = Phi Phi'``), which lets the
  low-rank engines run the estimator with r x r eigenproblems.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Union

import numpy as np

__all__ = ["General", "Rule", "Uniform"]


@dataclass(frozen=True)
class Uniform:
    """Weights ``scale(rho, v, n) / n`` (see the module docs).

    Attributes
    ----------
    scale : callable or None
        ``scale(rho, v, n) -> c``, vectorised over arrays of ``rho`` and ``v``
        (``n`` an int or an array); None when the factor is the constant
        `fixed`.
    fixed : float or None
        The factor when it does not depend on the data (KME: 1; a fixed
        shrinkage ``alpha``: ``1 - alpha``).
    """

    scale: Callable[[np.ndarray, np.ndarray, Any], np.ndarray] | None = None
    fixed: float | None = None

    def __post_init__(self) -> None:
        if (self.scale is None) == (self.fixed is None):
            raise ValueError("a Uniform rule has either a `scale` function or a `fixed` factor.")

    def __call__(self, rho: Any, v: Any, n: Any) -> np.ndarray:
        if self.fixed is not None:
            shape = np.broadcast(np.asarray(rho), np.asarray(v)).shape
            return np.full(shape, float(self.fixed))
        assert self.scale is not None
        return np.asarray(self.scale(np.asarray(rho, dtype=np.float64),
                                     np.asarray(v, dtype=np.float64), n), dtype=np.float64)


@dataclass(frozen=True)
class General:
    """Weights from the permuted sample's Gram matrix, one call per sample.

    Attributes
    ----------
    weights : callable
        ``weights(K) -> (beta, params)``.
    features : callable or None
        ``features(Phi) -> (beta, params)``: the weights of ``weights(Phi @ Phi.T)``
        from the uncentred features ``Phi`` (n x r) of the sample, without the
        n x n matrix; None when the estimator has no such form (the low-rank
        engines then refuse it).
    """

    weights: Callable[[np.ndarray], tuple[np.ndarray, dict[str, Any]]]
    features: Callable[[np.ndarray], tuple[np.ndarray, dict[str, Any]]] | None = None


Rule = Union[Uniform, General]
