"""The estimator seam: what every kernel mean estimator provides.

An estimator is a frozen configuration object. It turns one sample's Gram
matrix ``K`` (n x n) into embedding weights ``beta`` — the embedding is
``mu = sum_i beta_i k(x_i, .)`` — together with the data-driven parameters it
chose. The tests call it on *every permuted data set* (so a parameter tuned on
the data is re-tuned on each permutation and the permutation test stays exact);
anything an estimator wants to precompute once must be a permutation-invariant
function of the pooled sample (two-sample) or of the marginals (independence).

Two speed paths are part of the contract:

* ``uniform = True`` estimators have weights ``beta = scale * 1/n`` where
  ``scale = uniform_scale(rho, varrho, n)`` depends only on the block
  statistics ``rho = 1'K1/n^2`` and ``varrho = tr(K)/n``. The permutation
  engine computes those block sums for many permutations at once (one BLAS
  call) and evaluates ``uniform_scale`` vectorised, so such estimators cost the
  same as the plain KME.
* other estimators implement ``weights(K)`` and are called once per permuted
  sample.
"""

from __future__ import annotations

import abc
import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._typing import ArrayLike
from .._validation import as_sample
from ..kernels import Kernel, resolve_kernel


@dataclass(frozen=True)
class KernelMeanEstimator(abc.ABC):
    """Base class of kernel mean estimators.

    Subclasses set ``name`` (the registry key), ``aliases`` (paper names, used
    in docs only) and implement :meth:`weights`.
    """

    name: ClassVar[str] = "base"
    label: ClassVar[str] = "base"
    #: weights are ``uniform_scale(rho, varrho, n) / n`` (see module docs)
    uniform: ClassVar[bool] = False

    # -- the contract ------------------------------------------------------
    @abc.abstractmethod
    def weights(self, K: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        """Embedding weights for the sample whose Gram matrix is `K`.

        Returns ``(beta, params)``: the weight vector (length n) and a dict of
        the data-driven parameters that were chosen (documented keys).
        """

    def uniform_scale(self, rho: np.ndarray, varrho: np.ndarray, n: int | np.ndarray) -> np.ndarray:
        """For ``uniform`` estimators: the factor ``c`` in ``beta = c / n``.

        Vectorised over arrays of block statistics ``rho = 1'K1/n^2`` and
        ``varrho = tr(K)/n``.
        """
        raise NotImplementedError(f"{type(self).__name__} is not a uniform-weight estimator.")

    # -- conveniences ------------------------------------------------------
    def get_params(self) -> dict[str, Any]:
        """The configuration parameters (not the fitted ones)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def replace(self, **params: Any) -> "KernelMeanEstimator":
        """Copy with some configuration parameters changed."""
        return dataclasses.replace(self, **params)

    def fit(self, x: ArrayLike, *, kernel: Any = "gaussian", bandwidth: Any = "median") -> "Embedding":
        """Estimate the kernel mean of the sample `x`.

        Parameters
        ----------
        x : array_like, shape (n, d) or (n,)
            The sample.
        kernel, bandwidth
            As in :func:`kmtests.two_sample_test`; ``"median"`` is resolved on `x`.

        Returns
        -------
        Embedding
            The fitted embedding ``sum_i beta_i k(x_i, .)``.
        """
        x = as_sample(x, "x", min_size=2)
        kern = resolve_kernel(kernel, bandwidth).fitted_to(x, name="x")
        beta, params = self.weights(kern.gram(x))
        return Embedding(points=x, weights=beta, kernel=kern, params=params, estimator=self)


@dataclass(frozen=True, eq=False)
class Embedding:
    """A fitted kernel mean embedding ``mu = sum_i weights_i k(points_i, .)``.

    Attributes
    ----------
    points : ndarray, shape (n, d)
    weights : ndarray, shape (n,)
    kernel : Kernel
        The fitted kernel (bandwidth resolved).
    params : dict
        The data-driven parameters the estimator chose.
    estimator : KernelMeanEstimator
    """

    points: np.ndarray
    weights: np.ndarray
    kernel: Kernel
    params: dict[str, Any]
    estimator: KernelMeanEstimator

    def __call__(self, t: ArrayLike) -> np.ndarray:
        """Evaluate ``mu(t) = sum_i weights_i k(points_i, t)`` at the rows of `t`."""
        t = as_sample(t, "t", min_size=1)
        return self.kernel.gram(t, self.points) @ self.weights

    def _check_same_kernel(self, other: "Embedding") -> None:
        if self.kernel != other.kernel:
            raise ValueError("inner products need embeddings in the same RKHS (same kernel "
                             "and bandwidth).")

    def inner(self, other: "Embedding") -> float:
        """RKHS inner product ``<self, other>``."""
        self._check_same_kernel(other)
        return float(self.weights @ self.kernel.gram(self.points, other.points) @ other.weights)

    def norm2(self) -> float:
        """Squared RKHS norm ``||mu||^2``."""
        return float(self.weights @ self.kernel.gram(self.points) @ self.weights)

    def distance2(self, other: "Embedding") -> float:
        """Squared RKHS distance ``||self - other||^2`` (an MMD^2 in V-form)."""
        return self.norm2() + other.norm2() - 2.0 * self.inner(other)
