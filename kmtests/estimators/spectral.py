r"""Spectral-filter kernel mean estimators: F-KMSE (Tikhonov) and its family.

With ``K/n = U diag(gamma) U'`` (the uncentred empirical covariance operator
in the sample basis, JMLR Prop 11), a filter with shrink factor
``h(gamma) = gamma g(gamma)`` gives

.. math:: \beta = U \,\mathrm{diag}(h(\gamma))\, U^\top 1_n, \qquad 1_n = (1/n, \dots, 1/n)^\top .

=======================  ========================  =================================
registry name            estimator                 h(gamma), parameter
=======================  ========================  =================================
``"fkmse"``              Tikhonov: ICML F-KMSE,    gamma / (gamma + lam)
                         JMLR S-KMSE
``"iterated_tikhonov"``  iterated Tikhonov         1 - (lam / (gamma + lam))^order
``"landweber"``          Landweber                 1 - (1 - step gamma)^n_iter
``"nu_method"``          nu-method                 1 - r_t(gamma), t = n_iter
``"tsvd"``               spectral cut-off          1 on the top ``rank`` eigenvalues
=======================  ========================  =================================

``lam`` is in the JMLR *operator* convention: ``fkmse`` weights are
``(K + n lam I)^{-1} K 1_n``; the ICML (Gram) ridge is ``lam_gram = n lam``.
Each parameter is chosen by leave-one-out cross-validation, where the
left-out fit is the same filter, with the same parameter, recomputed on the
other ``n - 1`` points (JMLR Prop 15 for Tikhonov). All scores are exact and
cost O(n^2) per parameter value after one eigendecomposition of ``K``
(``tsvd``: n eigendecompositions); see :mod:`kmtests.estimators._loocv` and
``docs/estimators_shrinkage.rst``.
"""

from __future__ import annotations

import abc
import dataclasses
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from .._validation import shown
from . import _loocv as L
from ._base import FixedTuningError, KernelMeanEstimator
from ._rules import General

__all__ = ["FKMSE", "IteratedTikhonov", "Landweber", "NuMethod", "TSVD"]


def _check_int(value: Any, name: str, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be a positive integer{' or None' if allow_none else ''}.")
    if value < 1:
        raise ValueError(f"`{name}` must be a positive integer; got {value}.")


def _check_pos(value: Any, name: str, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a positive number{' or None' if allow_none else ''}.")
    if not (np.isfinite(float(value)) and float(value) > 0):
        raise ValueError(f"`{name}` must be a positive finite number; got {shown(value)}.")


def _curve(grid: np.ndarray, score: np.ndarray) -> dict[str, np.ndarray]:
    return {"grid": np.asarray(grid, dtype=np.float64), "score": np.asarray(score)}


@dataclass(frozen=True, kw_only=True)
class _SpectralFilter(KernelMeanEstimator):
    """Weights ``U diag(h) U' 1_n`` from one eigendecomposition of ``K``.

    With features ``Phi`` (n x r, ``K = Phi Phi'``, r < n) the same weights come
    from the r x r eigenproblem of ``Phi'Phi`` (:meth:`weights_features`): every
    filter is 0 on the null space of ``K``, and the leave-one-out scores have a
    low-rank form (:func:`kmtests.estimators._loocv.lowrank_spectrum`).
    """

    def weights(self, K: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        return self._weights_from(L.spectrum(K))

    def weights_features(self, phi: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        """The weights of ``weights(phi @ phi.T)`` from the n x r features `phi`, in
        O(n r^2) when r < n (else through the n x n Gram matrix)."""
        return self._weights_from(L.feature_spectrum(phi))

    def rule(self) -> General:
        """``General`` with the Gram and the feature form of the weights."""
        return General(self.weights, features=self.weights_features)

    def _weights_from(self, spec: L.Spectrum, score: bool = True
                      ) -> tuple[np.ndarray, dict[str, Any]]:
        if not spec.top > 0:  # K = 0: every filter gives the zero embedding
            return np.zeros(spec.n), self._zero_params(spec)
        h, params = self._filter(spec, score)
        return spec.U @ (h * spec.q) / spec.n, params

    @abc.abstractmethod
    def _filter(self, spec: L.Spectrum, score: bool = True
                ) -> tuple[np.ndarray, dict[str, Any]]:
        """Shrink factors ``h`` (eigenvalue order of ``spec``) and the params (filters
        with a given parameter may take ``score=False``: no leave-one-out score)."""

    @abc.abstractmethod
    def _zero_params(self, spec: L.Spectrum) -> dict[str, Any]:
        """Params reported when ``K = 0``."""


# ---------------------------------------------------------------------------
# Tikhonov and iterated Tikhonov
# ---------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class _RidgeFilter(_SpectralFilter):
    lam: float | None = None
    lam_convention: Literal["gram", "operator"] = "operator"
    lam_bounds: tuple[float, float] = (1e-10, 1e2)
    grid_size: int = 45

    def __post_init__(self) -> None:
        _check_pos(self.lam, "lam", allow_none=True)
        if self.lam_convention not in ("gram", "operator"):
            raise ValueError("`lam_convention` must be one of 'gram', 'operator'; "
                             f"got {self.lam_convention!r}.")
        lo_hi = tuple(self.lam_bounds) if isinstance(self.lam_bounds, (tuple, list)) else ()
        if (len(lo_hi) != 2 or not all(isinstance(b, numbers.Real) for b in lo_hi)
                or not 0 < lo_hi[0] < lo_hi[1] < np.inf):
            raise ValueError("`lam_bounds` must be two numbers 0 < low < high (relative to "
                             f"the largest eigenvalue of K/n); got {self.lam_bounds!r}.")
        object.__setattr__(self, "lam_bounds", (float(lo_hi[0]), float(lo_hi[1])))
        _check_int(self.grid_size, "grid_size")
        if self.grid_size < 3:
            raise ValueError(f"`grid_size` must be at least 3; got {self.grid_size}.")

    @property
    def _order(self) -> int:
        return 1

    def with_fixed(self, params: dict[str, Any]) -> "_RidgeFilter":
        """The same filter with ``lam`` held at ``params["lam"]`` (operator convention)."""
        return dataclasses.replace(self, lam=float(params["lam"]), lam_convention="operator")

    # -- a given lam: Cholesky solves, no eigendecomposition ------------------------------
    def rule(self) -> General:
        """With a given ``lam`` the weights come from Cholesky solves of ``K/n + lam I``
        (or of ``Phi'Phi/n + lam I``): no eigendecomposition and no leave-one-out score
        (the rule's params are ``lam``, ``lam_convention`` and ``lam_gram``)."""
        if self.lam is None:
            return super().rule()
        return General(self._given_weights, features=self._given_weights_features)

    def _given(self, n: int) -> tuple[float, dict[str, Any]]:
        lam = float(self.lam) / (n if self.lam_convention == "gram" else 1)  # type: ignore[arg-type]
        return lam, {"lam": lam, "lam_convention": "operator", "lam_gram": n * lam}

    def _ridge_solves(self, A: np.ndarray, b: np.ndarray, lam: float) -> np.ndarray | None:
        """``x_order`` of ``A x_j = b + lam x_{j-1}``, ``x_0 = 0`` (None: A is not
        numerically positive definite)."""
        # LAPACK's potrf/potrs, as scipy.linalg.cho_factor/cho_solve call them (the same
        # numbers) without their wrappers' checks: this runs twice per permutation
        from scipy.linalg.lapack import dpotrf, dpotrs

        c, info = dpotrf(A, lower=1, clean=0, overwrite_a=1)  # A is ours: overwritten
        if info != 0:
            return None
        x, info = dpotrs(c, b, lower=1)
        for _ in range(self._order - 1):
            x, info = dpotrs(c, b + lam * x, lower=1)
        return np.asarray(x)

    def _given_weights(self, K: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        """``(K/n + lam I) beta_j = (K/n) 1_n + lam beta_{j-1}`` by one Cholesky factor."""
        K = L.check_gram(K)
        n = K.shape[0]
        lam, params = self._given(n)
        A = K / n
        A[np.diag_indices(n)] += lam
        beta = self._ridge_solves(A, K.sum(axis=1) / n**2, lam)
        if beta is None:  # rounding made K + n lam I indefinite: the eigenvalues clip it
            beta, full = self.weights(K)
            return beta, {k: full[k] for k in params}
        return beta, params

    def _given_weights_features(self, phi: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        """The same from features: ``beta = Phi gamma`` with
        ``(Phi'Phi/n + lam I) gamma_j = Phi'1_n/n + lam gamma_{j-1}`` (r x r)."""
        phi = np.asarray(phi, dtype=np.float64)
        n, r = phi.shape
        if r >= n:
            return self._given_weights(phi @ phi.T)
        lam, params = self._given(n)
        A = phi.T @ phi / n
        A = 0.5 * (A + A.T)
        A[np.diag_indices(r)] += lam
        gamma = self._ridge_solves(A, phi.sum(axis=0) / n**2, lam)
        if gamma is None:
            beta, full = self.weights_features(phi)
            return beta, {k: full[k] for k in params}
        return phi @ gamma, params

    def _loo(self, spec: L.Spectrum, lam: np.ndarray) -> np.ndarray:
        if self._order == 1:
            return L.tikhonov_loo(spec, lam)
        return np.array([L.iterated_tikhonov_loo(spec, float(v), self._order) for v in lam])

    def _filter(self, spec: L.Spectrum, score: bool = True
                ) -> tuple[np.ndarray, dict[str, Any]]:
        n = spec.n
        params: dict[str, Any] = {}
        if self.lam is None:
            top = spec.top / n
            lam, loo, grid, vals = L.search_log_lambda(
                lambda v: self._loo(spec, v), self.lam_bounds[0] * top,
                self.lam_bounds[1] * top, self.grid_size)
            params["loocv_curve"] = _curve(grid, vals)
        else:
            lam = float(self.lam) / (n if self.lam_convention == "gram" else 1)
            loo = float(self._loo(spec, np.array([lam]))[0])
        t = n * lam / (spec.kappa + n * lam)
        s = spec.kappa / (spec.kappa + n * lam)
        h = s * sum(t**j for j in range(self._order))  # 1 - t^order, no cancellation
        return h, {"lam": lam, "lam_convention": "operator", "lam_gram": n * lam,
                   "loocv": loo, **params}

    def _zero_params(self, spec: L.Spectrum) -> dict[str, Any]:
        return {"lam": 0.0, "lam_convention": "operator", "lam_gram": 0.0, "loocv": 0.0}


@dataclass(frozen=True, kw_only=True)
class FKMSE(_RidgeFilter):
    r"""Spectral (Tikhonov) shrinkage: ICML "F-KMSE" = JMLR "S-KMSE".

    Weights ``beta = (K + n lam I)^{-1} K 1_n`` (JMLR Prop 12, operator
    convention ``lam``); equivalently ``beta = (K + lam_gram I)^{-1} K 1_n``
    with the ICML (Gram) ridge ``lam_gram = n lam``.

    Parameters
    ----------
    lam : float or None
        Fixed regularisation; None (default) chooses it by leave-one-out
        cross-validation.
    lam_convention : {'gram', 'operator'}
        How a fixed `lam` is read: ``'operator'`` (JMLR, default) or
        ``'gram'`` (ICML, ``lam_gram = n lam``). Reported values are always
        given in both conventions.
    criterion : {'icml2014', 'jmlr2016'}
        ``'jmlr2016'`` (default): the proper LOOCV of JMLR Prop 15, where the
        left-out fit is the estimator recomputed on ``n - 1`` points with the
        same ``lam``. ``'icml2014'``: the ICML Thm 4 score, kept only to
        reproduce the ICML experiments; it lets ``x_i`` leak into its own
        left-out fit and is biased toward large ``lam`` (JMLR Sec. 4).
    lam_bounds : (float, float)
        Search interval for ``lam`` relative to the largest eigenvalue of
        ``K/n``.
    grid_size : int
        Points of the log-spaced grid refined by bounded Brent.

    Notes
    -----
    The LOOCV score is evaluated in O(n^2) per ``lam`` from one
    eigendecomposition of ``K`` (a Schur-complement form of JMLR Prop 15,
    derived in the docs and checked against literal refits); it is
    minimised over log ``lam`` on a grid, then by bounded Brent around the
    best grid point. ``params``: ``lam`` (operator), ``lam_convention``
    (``'operator'``), ``lam_gram``, ``loocv`` and, when chosen,
    ``loocv_curve`` (``{"grid": lam values, "score": scores}``). The weights
    may exceed ``1/n`` (ICML's claim that they are all below ``1/n`` holds
    for uniform shrinkage only). ``K = 0`` gives zero weights with
    ``lam = 0``.

    References
    ----------
    .. [1] Muandet et al., "Kernel mean estimation and Stein effect", ICML
       2014, Sec. 3 and Thm 4.
    .. [2] Muandet et al., "Kernel mean shrinkage estimators", JMLR 17
       (2016), Props 12 and 15.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators import FKMSE
    >>> x = np.random.default_rng(0).normal(size=(30, 2))
    >>> emb = FKMSE().fit(x, kernel="gaussian", bandwidth=1.0)
    >>> p = emb.params
    >>> print(f"{p['lam']:.3e} {p['lam_gram']:.3e} {p['loocv']:.5f}")
    1.740e-02 5.219e-01 0.62946
    """

    name: ClassVar[str] = "fkmse"
    label: ClassVar[str] = "F-KMSE (spectral/Tikhonov shrinkage, LOOCV)"

    criterion: Literal["icml2014", "jmlr2016"] = "jmlr2016"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.criterion not in ("icml2014", "jmlr2016"):
            raise ValueError("`criterion` must be one of 'icml2014', 'jmlr2016'; "
                             f"got {self.criterion!r}.")

    def _loo(self, spec: L.Spectrum, lam: np.ndarray) -> np.ndarray:
        if self.criterion == "icml2014":
            return L.icml2014_loo(spec, lam)
        return L.tikhonov_loo(spec, lam)


@dataclass(frozen=True, kw_only=True)
class IteratedTikhonov(_RidgeFilter):
    r"""Iterated Tikhonov filter of a given order, ``lam`` by LOOCV.

    ``h(gamma) = 1 - (lam/(gamma + lam))^order``: ``order`` Tikhonov steps
    ``(K/n + lam I) beta_j = (K/n) 1_n + lam beta_{j-1}``, ``beta_0 = 0``.
    ``order = 1`` is :class:`FKMSE` (same weights, same LOOCV score).

    Parameters
    ----------
    order : int
        Number of Tikhonov steps (default 2).
    lam, lam_convention, lam_bounds, grid_size
        As for :class:`FKMSE`.

    Notes
    -----
    The left-out fit iterates ``r_j = lam_n (K_{-i} + lam_n I)^{-1} r_{j-1}``
    (``lam_n = (n-1) lam``) on the residual ``r = 1_{-i}/(n-1) - beta``; in
    the eigenbasis of ``K`` each step is diagonal plus rank one, so the
    score costs O(order n^2) per ``lam``. ``params`` as for :class:`FKMSE`.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators import IteratedTikhonov
    >>> x = np.random.default_rng(0).normal(size=(30, 2))
    >>> emb = IteratedTikhonov(order=3).fit(x, kernel="gaussian", bandwidth=1.0)
    >>> print(f"{emb.params['lam']:.3e}")
    1.177e-01
    """

    name: ClassVar[str] = "iterated_tikhonov"
    label: ClassVar[str] = "Iterated Tikhonov spectral shrinkage (LOOCV)"

    order: int = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_int(self.order, "order")

    @property
    def _order(self) -> int:
        return int(self.order)


# ---------------------------------------------------------------------------
# iterative filters: Landweber and the nu-method
# ---------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class _IterativeFilter(_SpectralFilter):
    n_iter: int | None = None
    max_iter: int = 200
    step: float | None = None

    _step_limit: ClassVar[float] = 2.0

    def __post_init__(self) -> None:
        _check_int(self.n_iter, "n_iter", allow_none=True)
        _check_int(self.max_iter, "max_iter")
        _check_pos(self.step, "step", allow_none=True)

    def with_fixed(self, params: dict[str, Any]) -> "_IterativeFilter":
        """The same filter with ``n_iter`` held fixed (the step stays a per-sample
        normalisation, ``(n-1)/kappa_max``, unless it was given)."""
        return dataclasses.replace(self, n_iter=int(params["n_iter"]))

    def _step(self, spec: L.Spectrum) -> float:
        """Step in K/n units; default ``(n-1)/kappa_max`` bounds every LOO spectrum by 1.

        A given step is checked against the fit's own spectrum (``kappa_max/n``,
        the largest eigenvalue of ``K/n``): the iteration on the sample must be
        stable. The default also bounds the left-out spectra ``K_{-i}/(n-1)``
        (``kappa_max/(n-1)``), so its leave-one-out iterations are stable too.
        """
        if self.step is None:
            # kappa_max/(n-1) bounds the largest eigenvalue of K/n and of every K_{-i}/(n-1)
            return (spec.n - 1) / spec.top
        bound = spec.top / spec.n
        if self.step * bound > self._step_limit:
            raise ValueError(
                f"`step` must be at most {self._step_limit:g} / (kappa_max/n) = "
                f"{self._step_limit / bound:.6g} for this Gram matrix (kappa_max its largest "
                f"eigenvalue); got {self.step!r}.")
        return float(self.step)

    @abc.abstractmethod
    def _residual(self, gamma: np.ndarray, step: float, n_iter: int) -> np.ndarray:
        """Residual polynomial ``1 - h`` after `n_iter` steps, at `gamma`."""

    @abc.abstractmethod
    def _loo_curve(self, spec: L.Spectrum, step: float, n_iter: int) -> np.ndarray:
        """LOOCV scores after 1..n_iter steps."""

    @abc.abstractmethod
    def _effective_lam(self, step: float, n_iter: int) -> float:
        """Regularisation comparable with Tikhonov's ``lam`` (operator convention)."""

    def rule(self) -> General:
        """With a given ``n_iter`` the rule skips the leave-one-out scores (which only
        report ``loocv``): one eigendecomposition and the residual polynomial."""
        if self.n_iter is None:
            return super().rule()
        return General(lambda K: self._unscored(L.spectrum(K)),
                       features=lambda phi: self._unscored(L.feature_spectrum(phi)))

    def _unscored(self, spec: L.Spectrum) -> tuple[np.ndarray, dict[str, Any]]:
        beta, params = self._weights_from(spec, score=False)
        params.pop("loocv", None)
        return beta, params


    def _filter(self, spec: L.Spectrum, score: bool = True
                ) -> tuple[np.ndarray, dict[str, Any]]:
        step = self._step(spec)
        params: dict[str, Any] = {}
        if self.n_iter is None:
            scores = self._loo_curve(spec, step, self.max_iter)
            t = L.stable_argmin(scores) + 1  # first minimum: fewest steps
            params["loocv_curve"] = _curve(np.arange(1, self.max_iter + 1), scores)
            params["loocv"] = float(scores[t - 1])
        else:
            t = int(self.n_iter)
            if score:
                params["loocv"] = float(self._loo_curve(spec, step, t)[t - 1])
        h = 1.0 - self._residual(spec.kappa / spec.n, step, t)
        return h, {"n_iter": t, "step": step, "lam": self._effective_lam(step, t),
                   "lam_convention": "operator", **params}

    def _zero_params(self, spec: L.Spectrum) -> dict[str, Any]:
        t = 1 if self.n_iter is None else int(self.n_iter)
        step = 1.0 if self.step is None else float(self.step)
        return {"n_iter": t, "step": step, "lam": self._effective_lam(step, t),
                "lam_convention": "operator", "loocv": 0.0}


@dataclass(frozen=True, kw_only=True)
class Landweber(_IterativeFilter):
    r"""Landweber iteration (L2 boosting) filter, number of steps by LOOCV.

    ``beta_t = beta_{t-1} + step (K/n)(1_n - beta_{t-1})``, ``beta_0 = 0``, so
    ``h(gamma) = 1 - (1 - step gamma)^t``.

    Parameters
    ----------
    n_iter : int or None
        Fixed number of steps; None (default) chooses ``t`` in
        ``1..max_iter`` minimising the leave-one-out score (first minimum).
    max_iter : int
        Largest number of steps searched (default 200).
    step : float or None
        Step size in ``K/n`` units. Default ``(n - 1)/kappa_max`` with
        ``kappa_max`` the largest eigenvalue of ``K``: one over a bound on the
        spectrum of ``K/n`` and of every left-out ``K_{-i}/(n-1)``. A given
        step must satisfy ``step kappa_max/n <= 2`` (a stable iteration on the
        sample; its leave-one-out scores may then be those of slightly unstable
        left-out iterations).

    Notes
    -----
    The left-out fit runs the same ``t`` steps with the same ``step`` on the
    other ``n - 1`` points; the score of every ``t <= max_iter`` costs
    O(n^2) per step (diagonal-plus-rank-one iteration in the eigenbasis of
    ``K``). ``params``: ``n_iter``, ``step``, ``lam = 1/(step n_iter)`` (the
    effective Tikhonov-like regularisation, operator convention),
    ``lam_convention``, ``loocv`` and ``loocv_curve`` (grid = steps).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators import Landweber
    >>> x = np.random.default_rng(0).normal(size=(30, 2))
    >>> emb = Landweber().fit(x, kernel="gaussian", bandwidth=1.0)
    >>> print(emb.params["n_iter"])
    12
    """

    name: ClassVar[str] = "landweber"
    label: ClassVar[str] = "Landweber spectral shrinkage (LOOCV steps)"

    def _residual(self, gamma: np.ndarray, step: float, n_iter: int) -> np.ndarray:
        return (1.0 - step * gamma) ** n_iter

    def _loo_curve(self, spec: L.Spectrum, step: float, n_iter: int) -> np.ndarray:
        return L.landweber_loo(spec, step, n_iter)

    def _effective_lam(self, step: float, n_iter: int) -> float:
        return 1.0 / (step * n_iter)


@dataclass(frozen=True, kw_only=True)
class NuMethod(_IterativeFilter):
    r"""The nu-method (accelerated Landweber) filter, number of steps by LOOCV.

    ``beta_t = beta_{t-1} + u_t (beta_{t-1} - beta_{t-2}) + omega_t step (K/n)(1_n - beta_{t-1})``
    with the coefficients of Engl, Hanke & Neubauer (1996, Sec. 6.3)
    (``u_1 = 0``, ``omega_1 = (4 nu + 2)/(4 nu + 1)``).

    Parameters
    ----------
    nu : float
        Qualification of the method (default 1).
    n_iter, max_iter, step
        As for :class:`Landweber` (default ``max_iter`` 60); the scaled
        spectrum must lie in [0, 1], so a given step must satisfy
        ``step kappa_max/n <= 1``.

    Notes
    -----
    Exact leave-one-out scores as for :class:`Landweber`.
    ``lam = 1/(step n_iter^2)`` is reported as the effective regularisation.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators import NuMethod
    >>> x = np.random.default_rng(0).normal(size=(30, 2))
    >>> emb = NuMethod().fit(x, kernel="gaussian", bandwidth=1.0)
    >>> print(emb.params["n_iter"])
    2
    """

    name: ClassVar[str] = "nu_method"
    label: ClassVar[str] = "nu-method spectral shrinkage (LOOCV steps)"

    nu: float = 1.0
    max_iter: int = 60

    _step_limit: ClassVar[float] = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_pos(self.nu, "nu")

    def _residual(self, gamma: np.ndarray, step: float, n_iter: int) -> np.ndarray:
        r_prev = r = np.ones_like(gamma)
        for it in range(1, n_iter + 1):
            u, w = L.nu_coefficients(it, self.nu)
            r_prev, r = r, r + u * (r - r_prev) - w * step * gamma * r
        return r

    def _loo_curve(self, spec: L.Spectrum, step: float, n_iter: int) -> np.ndarray:
        return L.nu_method_loo(spec, step, float(self.nu), n_iter)

    def _effective_lam(self, step: float, n_iter: int) -> float:
        return 1.0 / (step * n_iter**2)


# ---------------------------------------------------------------------------
# truncated SVD
# ---------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class TSVD(_SpectralFilter):
    r"""Spectral cut-off (truncated SVD) filter, rank by LOOCV.

    ``beta = U_r U_r' 1_n`` with ``U_r`` the eigenvectors of the ``r``
    largest eigenvalues of ``K``, i.e. ``h(gamma) = 1`` on the top ``r``
    eigenvalues of ``K/n`` and 0 elsewhere.

    Parameters
    ----------
    rank : int or None
        Fixed rank (at most n); None (default) chooses ``r`` in ``1..n-1``
        minimising the leave-one-out score (smallest minimiser).

    Notes
    -----
    The filter is parametrised by the rank rather than by a threshold on
    ``gamma``: with a threshold, the left-out score is piecewise constant
    while the full fit changes inside each piece, so the threshold would be
    undetermined. The left-out fit keeps the top ``r`` eigenvectors of
    ``K_{-i}``; its score is additive over eigenpairs, so one eigendecomposition
    per left-out point gives the score of every rank (O(n^4) overall — the
    cut-off has no low-rank update like the other filters). ``params``:
    ``rank``, ``lam`` (the r-th largest eigenvalue of ``K/n``, the effective
    threshold, operator convention), ``lam_convention`` and, when the rank is
    chosen, ``loocv`` and ``loocv_curve`` (grid = ranks; a fixed rank skips
    the O(n^4) scores).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators import TSVD
    >>> x = np.random.default_rng(0).normal(size=(30, 2))
    >>> emb = TSVD().fit(x, kernel="gaussian", bandwidth=1.0)
    >>> print(emb.params["rank"])
    4
    """

    name: ClassVar[str] = "tsvd"
    label: ClassVar[str] = "Truncated-SVD spectral shrinkage (LOOCV rank)"

    rank: int | None = None

    def __post_init__(self) -> None:
        _check_int(self.rank, "rank", allow_none=True)

    def with_fixed(self, params: dict[str, Any]) -> "TSVD":
        raise FixedTuningError(
            f"estimator {self.name!r}: a rank chosen on the pooled sample does not transfer "
            "to samples of other sizes; use tuning='permutation'.")

    def _filter(self, spec: L.Spectrum, score: bool = True
                ) -> tuple[np.ndarray, dict[str, Any]]:
        n, kept = spec.n, spec.kappa.size  # kept < n: a low-rank spectrum (features)
        params: dict[str, Any] = {}
        if self.rank is None:
            scores = L.tsvd_loo(spec.K) if spec.K is not None else L.lowrank_tsvd_loo(spec)
            r = L.stable_argmin(scores) + 1
            params = {"loocv": float(scores[r - 1]),
                      "loocv_curve": _curve(np.arange(1, scores.size + 1), scores)}
        else:
            r = int(self.rank)
            if r > n:
                raise ValueError(f"`rank` must be at most the sample size {n}; got {r}.")
        h = np.zeros(kept)
        h[max(kept - r, 0):] = 1.0  # ranks above a low-rank spectrum's: its zero eigenvalues
        return h, {"rank": r, "lam": float(spec.kappa[kept - r] / n) if r <= kept else 0.0,
                   "lam_convention": "operator", **params}

    def _zero_params(self, spec: L.Spectrum) -> dict[str, Any]:
        r = 1 if self.rank is None else min(int(self.rank), spec.n)
        out: dict[str, Any] = {"rank": r, "lam": 0.0, "lam_convention": "operator"}
        return out if self.rank is not None else {**out, "loocv": 0.0}
