"""The estimator seam: what every kernel mean estimator provides.

An estimator is a frozen configuration object. It turns one sample's Gram
matrix ``K`` (n x n) into embedding weights ``beta`` — the embedding is
``mu = sum_i beta_i k(x_i, .)`` — together with the data-driven parameters it
chose. The tests call it on *every permuted data set* (so a parameter tuned on
the data is re-tuned on each permutation and the permutation test stays exact);
anything an estimator wants to precompute once must be a permutation-invariant
function of the pooled sample (two-sample) or of the marginals (independence).

What the permutation engines see is the estimator's :meth:`~KernelMeanEstimator.rule`
(:mod:`kmtests.estimators._rules`): a :class:`~kmtests.estimators._rules.Uniform`
rule (weights ``c/n`` with ``c`` from two block statistics, vectorised over
permutations: the KME and the uniform shrinkage family cost what the KME
costs) or a :class:`~kmtests.estimators._rules.General` one (``weights(K)``
per permuted sample).
"""

from __future__ import annotations

import abc
import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._typing import ArrayLike
from .._validation import as_sample
from ..kernels import ARDGaussian, Gaussian, Kernel, resolve_kernel, sq_distances
from ._rules import General, Rule, Uniform


class FixedTuningError(ValueError):
    """The estimator's data-driven parameters cannot be held fixed across samples."""


@dataclass(frozen=True)
class KernelMeanEstimator(abc.ABC):
    """Base class of kernel mean estimators.

    Subclasses set ``name`` (the registry key), ``aliases`` (paper names, used
    in docs only) and implement :meth:`weights`.
    """

    name: ClassVar[str] = "base"
    label: ClassVar[str] = "base"
    #: True when the estimator acts through a transformation of the kernel
    #: (:meth:`transform_kernel`), so that an engine knows it without tuning it
    transforms_kernel: ClassVar[bool] = False

    # -- the contract ------------------------------------------------------
    @abc.abstractmethod
    def weights(self, K: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        """Embedding weights for the sample whose Gram matrix is `K`.

        Returns ``(beta, params)``: the weight vector (length n) and a dict of
        the data-driven parameters that were chosen (documented keys).
        """

    def rule(self) -> Rule:
        """How the permutation engines obtain the weights (see the module docs).

        The default is :class:`~kmtests.estimators._rules.General` with
        :meth:`weights`; estimators whose weights are ``c/n`` with ``c`` a
        function of ``rho = 1'K1/n^2`` and ``v = tr(K)/n - rho`` return a
        :class:`~kmtests.estimators._rules.Uniform` rule instead.
        """
        return General(self.weights)

    @property
    def uniform(self) -> bool:
        """Whether :meth:`rule` is a :class:`~kmtests.estimators._rules.Uniform` rule."""
        return isinstance(self.rule(), Uniform)

    def with_fixed(self, params: dict[str, Any]) -> "KernelMeanEstimator":
        """This estimator with its data-driven parameters held at `params`.

        `params` are those returned by :meth:`weights`. Used by
        ``tuning="pooled"``: the parameters are tuned once on a
        permutation-invariant function of the data and the fixed estimator
        is applied to every permuted sample. Estimators whose parameters do
        not transfer between samples raise :class:`FixedTuningError`.
        """
        raise FixedTuningError(f"estimator {self.name!r} cannot hold its parameters fixed; "
                               "use tuning='permutation'.")

    def transform_kernel(self, kernel: Kernel, data: np.ndarray | None
                         ) -> tuple[float, Kernel, dict[str, Any]] | None:
        """A kernel transformation the estimator acts through, or None.

        Estimators whose embedding of a sample is the KME under another
        kernel (the marginalized MKME/MMKME: ``c * k'``) return
        ``(c, k', params)``, tuned on `data` — a permutation-invariant set
        (pooled sample, or one variable) — and a :class:`Uniform` rule with
        factor 1. The default is None: the estimator works on the Gram matrix
        of `kernel`.
        """
        return None

    # -- conveniences ------------------------------------------------------
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The configuration parameters (not the fitted ones).

        `deep` is accepted for scikit-learn (an estimator has no nested
        parameters).
        """
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def __sklearn_clone__(self) -> "KernelMeanEstimator":
        """scikit-learn's ``clone``: an estimator is an immutable configuration, so the
        clone is the object itself (grid searches over estimator objects work)."""
        return self

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


def gaussian_bandwidths2(kernel: Kernel, d: int) -> np.ndarray:
    """Squared per-coordinate bandwidths ``theta_j^2`` of a fitted Gaussian kernel.

    A :class:`~kmtests.kernels.Gaussian` kernel gives ``theta^2`` repeated `d`
    times, an :class:`~kmtests.kernels.ARDGaussian` its own squared
    bandwidths. Any other kernel raises ``ValueError``: the Gaussian smoothing
    of an embedding (marginalized estimators) has a closed form only for these.
    """
    if not isinstance(kernel, (Gaussian, ARDGaussian)):
        raise ValueError(
            "smoothed (marginalized) embeddings need the Gaussian ('gaussian') or ARD "
            f"Gaussian ('ard') kernel; got the {kernel.name!r} kernel."
        )
    bw = np.atleast_1d(np.asarray(kernel._bw(), dtype=np.float64))
    if bw.size == 1:
        bw = np.full(d, float(bw[0]))
    if bw.size != d:
        raise ValueError(f"the ARD kernel has {bw.size} bandwidths but the data have {d} "
                         "columns.")
    return bw * bw


def smoothed_gaussian_gram(kernel: Kernel, x: np.ndarray, y: np.ndarray | None,
                           variance: np.ndarray) -> np.ndarray:
    """``E k(x_i + e, y_j)`` with ``e ~ N(0, diag(variance))``, for a Gaussian kernel.

    With per-coordinate squared bandwidths ``theta_j^2`` (see
    :func:`gaussian_bandwidths2`) the entry is

        prod_j (theta_j^2 / (theta_j^2 + v_j))^{1/2}
            * exp(-sum_j (x_ij - y_kj)^2 / (2 (theta_j^2 + v_j))),

    an ARD Gaussian with inflated bandwidths times a constant. `variance` is
    the *total* corruption variance: ``Sigma_i`` for the L-kernel (one
    corrupted argument) and ``Sigma_i + Sigma_j`` for the Q-kernel (both
    arguments corrupted independently, diagonal included). ``y=None`` means
    ``y = x``.
    """
    theta2 = gaussian_bandwidths2(kernel, x.shape[1])
    v = theta2 + variance
    log_c = -0.5 * float(np.sum(np.log1p(variance / theta2)))
    scale = 1.0 / np.sqrt(v)
    d2 = sq_distances(x * scale, None if y is None else y * scale)
    return np.exp(log_c - 0.5 * d2)


def _same_kernel(a: Kernel, b: Kernel) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    for f in dataclasses.fields(a):
        if not f.compare:
            continue
        u, v = getattr(a, f.name), getattr(b, f.name)
        if isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
            if not np.array_equal(np.asarray(u), np.asarray(v)):
                return False
        elif u != v:
            return False
    return True


@dataclass(frozen=True, eq=False)
class Embedding:
    """A fitted kernel mean embedding.

    Without smoothing it is ``mu = sum_i weights_i k(points_i, .)``. With
    ``smoothing = (e_1, ..., e_d)`` (the marginalized estimators MKME/MMKME)
    every atom is Gaussian-corrupted,

        mu = sum_i weights_i E_{x ~ N(points_i, diag(smoothing))} k(x, .),

    a sum of wider Gaussian bumps that is *not* in the span of the
    ``k(points_i, .)``; it is represented exactly, and evaluations, inner
    products and norms use the closed-form marginalized kernels (see
    :func:`smoothed_gaussian_gram`), which exist for the Gaussian and ARD
    Gaussian kernels only.

    Attributes
    ----------
    points : ndarray, shape (n, d)
    weights : ndarray, shape (n,)
    kernel : Kernel
        The fitted kernel (bandwidth resolved).
    params : dict
        The data-driven parameters the estimator chose.
    estimator : KernelMeanEstimator
    smoothing : ndarray, shape (d,), or None
        Per-coordinate variances of the Gaussian corruption applied to every
        atom; None (or all zeros) means no smoothing.
    """

    points: np.ndarray
    weights: np.ndarray
    kernel: Kernel
    params: dict[str, Any]
    estimator: KernelMeanEstimator
    smoothing: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.smoothing is None:
            return
        s = np.atleast_1d(np.asarray(self.smoothing, dtype=np.float64))
        d = self.points.shape[1]
        if s.size == 1 and d > 1:
            s = np.full(d, float(s[0]))
        if s.shape != (d,) or not np.all(np.isfinite(s)) or np.any(s < 0):
            raise ValueError(
                f"`smoothing` must be None or {d} non-negative finite variances (one per "
                f"column of `points`); got {self.smoothing!r}."
            )
        object.__setattr__(self, "smoothing", s)
        if np.any(s > 0):
            gaussian_bandwidths2(self.kernel, d)  # raises for other kernels

    def _active_smoothing(self) -> np.ndarray | None:
        s = self.smoothing
        return None if s is None or not np.any(s > 0) else s

    def __call__(self, t: ArrayLike) -> np.ndarray:
        """Evaluate the embedding at the rows of `t`.

        Unsmoothed: ``sum_i weights_i k(points_i, t)``; smoothed: the same with
        the L-kernel ``E_{x ~ N(points_i, D)} k(x, t)``.
        """
        t = as_sample(t, "t", min_size=1)
        s = self._active_smoothing()
        if s is None:
            return self.kernel.gram(t, self.points) @ self.weights
        return smoothed_gaussian_gram(self.kernel, t, self.points, s) @ self.weights

    def _check_same_kernel(self, other: "Embedding") -> None:
        if not _same_kernel(self.kernel, other.kernel):
            raise ValueError("inner products need embeddings in the same RKHS (same kernel "
                             "and bandwidth).")

    def inner(self, other: "Embedding") -> float:
        """RKHS inner product ``<self, other>``.

        When either embedding is smoothed, the atoms pair through the Q-kernel
        with the summed corruption variances (independent corruptions).
        """
        self._check_same_kernel(other)
        s1, s2 = self._active_smoothing(), other._active_smoothing()
        if s1 is None and s2 is None:
            G = self.kernel.gram(self.points, other.points)
        else:
            d = self.points.shape[1]
            total = (np.zeros(d) if s1 is None else s1) + (np.zeros(d) if s2 is None else s2)
            G = smoothed_gaussian_gram(self.kernel, self.points, other.points, total)
        return float(self.weights @ G @ other.weights)

    def norm2(self) -> float:
        """Squared RKHS norm ``||mu||^2`` (smoothed: Q-kernel, diagonal included)."""
        s = self._active_smoothing()
        if s is None:
            G = self.kernel.gram(self.points)
        else:
            G = smoothed_gaussian_gram(self.kernel, self.points, None, 2.0 * s)
        return float(self.weights @ G @ self.weights)

    def distance2(self, other: "Embedding") -> float:
        """Squared RKHS distance ``||self - other||^2`` (an MMD^2 in V-form)."""
        return self.norm2() + other.norm2() - 2.0 * self.inner(other)
