"""Uniform shrinkage of the empirical kernel mean, optionally toward a target.

``mu_alpha = alpha f* + (1 - alpha) mu_hat`` (JMLR eq. 8) with ``f* = 0`` by
default, so the weights are ``(1 - alpha)/n`` on every sample point:

* :class:`SKMSE` (``"skmse"``): ICML 2014 "S-KMSE" = JMLR 2016 "R-KMSE",
  ``alpha`` by the closed-form leave-one-out minimiser (ICML Thm 3 = JMLR
  Prop 9), clipped to [0, 1] (positive part, JMLR Prop 4), or fixed;
* :class:`BKMSE` (``"bkmse"``): JMLR "B-KMSE", ``alpha`` from the empirical
  bound (JMLR eq. 16 and Thm 7).

Both depend on the sample only through ``rho = 1'K1/n^2`` (= ||mu_hat||^2)
and ``varrho = tr(K)/n``, so they are ``uniform`` estimators. Given
``target_points`` (and ``target_weights``) they shrink toward the embedding
``f* = sum_a w_a k(z_a, .)`` instead; such an instance is *not* uniform and
works only through :meth:`~_UniformShrinkage.fit` (the tests, which see only
a Gram matrix, reject it). Formulas and derivations:
``docs/estimators_shrinkage.rst``.
"""

from __future__ import annotations

import abc
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._typing import ArrayLike
from .._validation import as_sample
from ..kernels import resolve_kernel
from ._base import Embedding, KernelMeanEstimator
from ._loocv import check_gram
from ._rules import Uniform

__all__ = ["BKMSE", "SKMSE"]


def _div0(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with 0 where ``den <= 0`` (0/0 cases: nothing to shrink)."""
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.float64),
                                   np.asarray(den, dtype=np.float64))
    out = np.zeros(num.shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def loocv_shrinkage(v: np.ndarray, dist2: np.ndarray, n: np.ndarray) -> np.ndarray:
    """LOOCV-optimal ``alpha`` in [0, 1] (vectorised).

    ``v = varrho - rho``, ``dist2 = ||f* - mu_hat||^2`` (``= rho`` for
    ``f* = 0``). The LOO score is quadratic in alpha with minimiser
    ``n v / ((n-1)^2 dist2 + v)``; for ``f* = 0`` this is JMLR (26)
    ``(varrho - rho)/((n-2) rho + varrho/n)``. Clipped to [0, 1].
    """
    v = np.maximum(v, 0.0)
    return np.clip(_div0(n * v, (n - 1) ** 2 * np.maximum(dist2, 0.0) + v), 0.0, 1.0)


def bound_shrinkage(v: np.ndarray, dist2: np.ndarray, n: np.ndarray) -> np.ndarray:
    """B-KMSE ``alpha = Delta_hat / (Delta_hat + ||f* - mu_hat||^2)`` (vectorised).

    ``Delta_hat = v/(n-1)`` (JMLR Thm 7); for ``f* = 0`` this is
    ``(varrho - rho)/(varrho + (n-2) rho)`` (below JMLR eq. 26).
    """
    v = np.maximum(v, 0.0)
    return np.clip(_div0(v, v + (n - 1) * np.maximum(dist2, 0.0)), 0.0, 1.0)


def loocv_score(alpha: Any, v: Any, dist2: Any, n: Any) -> Any:
    """LOOCV score ``(1/n) sum_i ||k(., x_i) - mu_alpha^(-i)||^2`` (vectorised).

    ``[n^2 v - 2 alpha n v]/(n-1)^2 + alpha^2 (dist2 + v/(n-1)^2)``; for
    ``f* = 0`` it equals JMLR's ``F(alpha)/(n-1)^2`` (Sec. 5.3).
    """
    return ((n * n * v - 2.0 * alpha * n * v) / (n - 1) ** 2
            + alpha**2 * (dist2 + v / (n - 1) ** 2))


@dataclass(frozen=True, kw_only=True)
class _UniformShrinkage(KernelMeanEstimator):
    """Shared machinery of :class:`SKMSE` and :class:`BKMSE`."""

    target_points: Any = None
    target_weights: Any = None

    def __post_init__(self) -> None:
        if self.target_points is None:
            if self.target_weights is not None:
                raise ValueError("`target_weights` needs `target_points`.")
            return
        z = as_sample(self.target_points, "target_points", min_size=1)
        if self.target_weights is None:
            w = np.full(z.shape[0], 1.0 / z.shape[0])
        else:
            w = np.atleast_1d(np.asarray(self.target_weights, dtype=np.float64))
            if w.ndim != 1 or w.shape[0] != z.shape[0] or not np.all(np.isfinite(w)):
                raise ValueError("`target_weights` must be finite numbers, one per row of "
                                 f"`target_points` ({z.shape[0]}).")
        # stored as tuples: the configuration stays hashable and comparable
        object.__setattr__(self, "target_points", tuple(map(tuple, z.tolist())))
        object.__setattr__(self, "target_weights", tuple(w.tolist()))

    # -- the rule ----------------------------------------------------------
    @abc.abstractmethod
    def _alpha(self, v: np.ndarray, dist2: np.ndarray, n: np.ndarray) -> np.ndarray:
        """Shrinkage toward f* from ``v = varrho - rho`` and ``||f* - mu_hat||^2``."""

    def _no_target(self, what: str) -> None:
        if self.target_points is not None:
            raise ValueError(
                f"`target_points`: shrinkage toward a target is for estimation with "
                f"fit(x, ...); {what} sees only the Gram matrix of the sample, so a "
                f"target-shrinkage {self.name!r} cannot be used in the two-sample or "
                "independence tests. Drop `target_points` there.")

    # -- the contract ------------------------------------------------------
    def _scale(self, rho: np.ndarray, v: np.ndarray, n: Any) -> np.ndarray:
        return 1.0 - self._alpha(v, rho, np.asarray(n, dtype=np.float64))

    def rule(self) -> Uniform:
        """``Uniform``: ``c = 1 - alpha(rho, v, n)`` (see :mod:`kmtests.estimators._rules`)."""
        self._no_target("rule()")
        return Uniform(scale=self._scale)

    @property
    def uniform(self) -> bool:
        return self.target_points is None

    def with_fixed(self, params: dict[str, Any]) -> "SKMSE":
        """``SKMSE(shrinkage=params["shrinkage"])``: the same weights, alpha held fixed."""
        self._no_target("with_fixed()")
        return SKMSE(shrinkage=float(params["shrinkage"]))

    def weights(self, K: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        self._no_target("weights(K)")
        K = check_gram(K)
        n = K.shape[0]
        rho = K.sum() / n**2
        v = max(np.trace(K) / n - rho, 0.0)
        c = float(self.rule()(rho, v, n))
        alpha = 1.0 - c
        score = float(loocv_score(alpha, v, rho, n))
        return np.full(n, c / n), {"shrinkage": alpha, "loocv": score}

    def target_alpha(self, K: np.ndarray, target_values: ArrayLike,
                     target_norm2: float) -> tuple[float, dict[str, Any]]:
        """Shrinkage toward a target from Gram quantities.

        Parameters
        ----------
        K : ndarray, shape (n, n)
            Gram matrix of the sample.
        target_values : array_like, shape (n,)
            ``f*(x_i)``, the target evaluated at the sample points.
        target_norm2 : float
            ``||f*||^2``.

        Returns
        -------
        alpha : float
            The weight of ``f*``; the sample points get ``(1 - alpha)/n``.
        params : dict
            ``shrinkage`` (alpha), ``loocv`` (LOO score at alpha) and
            ``target_distance2`` (``||f* - mu_hat||^2``).
        """
        K = check_gram(K)
        n = K.shape[0]
        f = np.asarray(target_values, dtype=np.float64).reshape(-1)
        if f.shape[0] != n:
            raise ValueError(f"`target_values` must have one value per point ({n}).")
        rho, varrho = K.sum() / n**2, np.trace(K) / n
        dist2 = max(float(target_norm2) - 2.0 * f.mean() + rho, 0.0)
        alpha = float(self._alpha(np.asarray(varrho - rho), np.asarray(dist2),
                                  np.asarray(float(n))))
        score = float(loocv_score(alpha, varrho - rho, dist2, n))
        return alpha, {"shrinkage": alpha, "loocv": score, "target_distance2": dist2}

    def fit(self, x: ArrayLike, *, kernel: Any = "gaussian",
            bandwidth: Any = "median") -> Embedding:
        """Estimate the kernel mean of `x` (see :meth:`KernelMeanEstimator.fit`).

        With a target, the embedding's points are the sample followed by the
        target atoms, with weights ``(1 - alpha)/n`` and ``alpha w_a``; a
        ``"median"`` bandwidth is resolved on the sample only.
        """
        if self.target_points is None:
            return super().fit(x, kernel=kernel, bandwidth=bandwidth)
        x = as_sample(x, "x", min_size=2)
        z = np.asarray(self.target_points, dtype=np.float64)
        w = np.asarray(self.target_weights, dtype=np.float64)
        if z.shape[1] != x.shape[1]:
            raise ValueError(f"`target_points` must have the columns of `x` ({x.shape[1]}); "
                             f"got {z.shape[1]}.")
        kern = resolve_kernel(kernel, bandwidth).fitted_to(x, name="x")
        K = kern.gram(x)
        alpha, params = self.target_alpha(K, kern.gram(x, z) @ w,
                                          float(w @ kern.gram(z) @ w))
        n = x.shape[0]
        beta = np.concatenate([np.full(n, (1.0 - alpha) / n), alpha * w])
        return Embedding(points=np.vstack([x, z]), weights=beta, kernel=kern,
                         params=params, estimator=self)


@dataclass(frozen=True, kw_only=True)
class SKMSE(_UniformShrinkage):
    r"""Uniform shrinkage with the leave-one-out shrinkage (ICML S-KMSE = JMLR R-KMSE).

    ``mu = alpha f* + (1 - alpha) mu_hat`` with ``f* = 0`` unless a target
    is given, i.e. weights ``(1 - alpha)/n``.

    Parameters
    ----------
    shrinkage : float in [0, 1] or None
        Fixed ``alpha``; None (default) chooses it by leave-one-out
        cross-validation in closed form.
    target_points : array_like, shape (m, d), optional
        Atoms ``z_a`` of a target embedding ``f* = sum_a w_a k(z_a, .)``
        (chosen independently of the sample).
    target_weights : array_like, shape (m,), optional
        Its weights ``w_a`` (default ``1/m``).

    Notes
    -----
    With ``rho = 1'K1/n^2`` and ``varrho = tr(K)/n``, the LOOCV score
    ``(1/n) sum_i ||k(., x_i) - mu_alpha^(-i)||^2`` (the estimator refitted
    on the other ``n - 1`` points with the same alpha) is minimised by

    .. math:: \alpha_r = \frac{\varrho - \rho}{(n-2)\rho + \varrho/n}

    (ICML Thm 3 = JMLR Prop 9, eq. 26); ``lambda_r = alpha_r/(1 - alpha_r)``
    in the JMLR parametrisation ``beta = 1_n/(1 + lambda)``. ``alpha_r >= 0``
    always, and ``alpha_r >= 1`` iff ``n rho <= varrho`` (then JMLR's
    ``lambda_r`` does not exist); alpha is clipped to [0, 1] (positive-part
    estimator, JMLR Prop 4), so the embedding is 0 when ``n rho <= varrho``.
    Toward a target the minimiser is
    ``n (varrho - rho) / ((n-1)^2 ||f* - mu_hat||^2 + varrho - rho)``, clipped.
    If ``rho = varrho = 0`` there is nothing to shrink: alpha = 0.

    ``weights`` returns ``params`` with ``shrinkage`` (alpha) and ``loocv``
    (the score at alpha).

    References
    ----------
    .. [1] Muandet, Fukumizu, Sriperumbudur, Gretton & Schoelkopf, "Kernel
       mean estimation and Stein effect", ICML 2014, Thm 3.
    .. [2] Muandet, Sriperumbudur, Fukumizu, Gretton & Schoelkopf, "Kernel
       mean shrinkage estimators", JMLR 17 (2016), Prop 9.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators import SKMSE
    >>> x = np.random.default_rng(0).normal(size=(20, 3))
    >>> emb = SKMSE().fit(x, kernel="gaussian", bandwidth=1.0)
    >>> print(f"{emb.params['shrinkage']:.4f} {emb.weights[0] * 20:.4f}")
    0.1440 0.8560
    """

    name: ClassVar[str] = "skmse"
    label: ClassVar[str] = "S-KMSE (uniform shrinkage, LOOCV)"

    shrinkage: float | None = None

    def __post_init__(self) -> None:
        if self.shrinkage is not None:
            if isinstance(self.shrinkage, (bool, np.bool_)) or not isinstance(self.shrinkage,
                                                                               numbers.Real):
                raise TypeError("`shrinkage` must be a number in [0, 1] or None.")
            if not 0.0 <= float(self.shrinkage) <= 1.0:
                raise ValueError(f"`shrinkage` must be in [0, 1]; got {self.shrinkage!r}.")
        super().__post_init__()

    def rule(self) -> Uniform:
        if self.shrinkage is not None and self.target_points is None:
            return Uniform(fixed=1.0 - float(self.shrinkage))
        return super().rule()

    def _alpha(self, v: np.ndarray, dist2: np.ndarray, n: np.ndarray) -> np.ndarray:
        if self.shrinkage is not None:
            return np.full(np.broadcast(v, dist2, n).shape, float(self.shrinkage))
        return loocv_shrinkage(v, dist2, n)


@dataclass(frozen=True, kw_only=True)
class BKMSE(_UniformShrinkage):
    r"""Uniform shrinkage with the empirical-bound shrinkage (JMLR B-KMSE).

    Parameters
    ----------
    target_points, target_weights : optional
        A target embedding ``f*``, as for :class:`SKMSE`.

    Notes
    -----
    ``alpha = Delta_hat / (Delta_hat + ||f* - mu_hat||^2)`` (JMLR eq. 16)
    with ``Delta_hat = (varrho - U)/n`` where ``U = (n rho - varrho)/(n - 1)``
    is the U-statistic of ``E k(x, x')`` while ``||mu_hat||^2 = rho`` is the
    V-statistic — the JMLR mix, kept as published. For ``f* = 0``

    .. math:: \tilde\alpha = \frac{\varrho - \rho}{\varrho + (n-2)\rho} \in [0, 1],

    never larger than the LOOCV ``alpha_r`` of :class:`SKMSE`. If
    ``rho = varrho = 0``, alpha = 0. ``params``: ``shrinkage`` and ``loocv``
    (the leave-one-out score at alpha, for comparison; not used to choose it).

    References
    ----------
    .. [1] Muandet, Sriperumbudur, Fukumizu, Gretton & Schoelkopf, "Kernel
       mean shrinkage estimators", JMLR 17 (2016), Thm 7.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators import BKMSE
    >>> x = np.random.default_rng(0).normal(size=(20, 3))
    >>> emb = BKMSE().fit(x, kernel="gaussian", bandwidth=1.0)
    >>> print(f"{emb.params['shrinkage']:.4f}")
    0.1211
    """

    name: ClassVar[str] = "bkmse"
    label: ClassVar[str] = "B-KMSE (uniform shrinkage, empirical bound)"

    def _alpha(self, v: np.ndarray, dist2: np.ndarray, n: np.ndarray) -> np.ndarray:
        return bound_shrinkage(v, dist2, n)
