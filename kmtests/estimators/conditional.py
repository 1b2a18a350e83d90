r"""Conditional mean embeddings: the regularised regression of kernel features on ``z``.

A conditional independence test compares what is left of ``x`` and ``y`` once
``z`` has been regressed out. In a reproducing kernel Hilbert space the
regression of the features ``phi(x)`` on ``z`` is the conditional mean
embedding ``mu(z) = E[phi(X) | Z = z]`` (Song et al., 2009), estimated by a
regularised (kernel ridge, or any spectral filter) regression. On the sample,
with the centred Gram matrix of ``z``, ``Kz_c = U diag(kappa) U'``, the fitted
values are ``P Phi`` and the residuals ``R Phi`` with

.. math:: P = U\,\mathrm{diag}\big(h(\kappa / n)\big)\,U', \qquad R = I - P,

``h(x) = x g_lambda(x)`` the filter's shrink factor
(:mod:`kmtests.estimators.filters`; Tikhonov: ``R = n lam (Kz_c + n lam I)^{-1}``).
The residual Gram matrix is ``R Kc R`` (``Kc`` the centred Gram matrix of the
target); it is all a KCI-type statistic needs.

``lam`` is in the units of the eigenvalues of the covariance operator of ``z``
(``kappa / n``), as for the package's other filters; the ridge ``epsilon`` of
Zhang et al.'s KCI (the Gram-matrix units of causal-learn, ``1e-3``) is
``n lam``.

**Tuning.** The error of this regression is what decides whether a KCI test
keeps its level (Pogodin et al., 2024). :class:`ConditionalMeanEmbedding` chooses
``lam`` (and, among candidate kernels on ``z``, the bandwidth) for each target by
one of three criteria, each exact and cheap after one eigendecomposition of
``Kz_c`` per candidate kernel (``m_a = (U' Kc U)_aa``, ``h_a = h(kappa_a / n)``):

* ``"gcv"`` — generalised cross-validation of the feature regression,
  ``n RSS / (n - sum h)^2`` with ``RSS = tr(R Kc R) = tr Kc - sum (2 h - h^2) m``
  (O(r) per ``lam``);
* ``"loo"`` — exact leave-one-out error of kernel ridge regression,
  ``(1/n) sum_i (R Kc R)_ii / R_ii^2`` (Tikhonov only; O(n r^2) per ``lam``);
* ``"marglik"`` — the Gaussian-process marginal likelihood of the targets'
  eigen-features with the signal amplitude profiled out (the criterion
  causal-learn's ``use_gp=True`` optimises by gradient steps; here on the grid,
  O(r) per ``lam``).

**No interpolation.** Every criterion searches only the regressions with at most
``max_df (n - 1)`` degrees of freedom (``sum h``; ``max_df = 0.5`` by default).
GCV and leave-one-out cannot tell a regression that interpolates from one that
fits: with a narrow kernel on a multivariate ``z`` the Gram matrix is nearly the
identity, the criteria are nearly flat in ``lam`` and chose ``df = 198.9`` of
``n = 200``, leaving residuals that carry no information (on the 3-dimensional
index null of ``benchmarks/ci_level.py`` 19 of 200 data sets rejected at 5%,
on Zhang et al.'s post-nonlinear null with two irrelevant coordinates 31 of
300; with the bound 13 of 200 and 10 of 300, and with the ``"showalter"`` and
``"cutoff"`` filters half the data sets had no residuals at all). The tuned
regressions of the level battery use 5-80 degrees of freedom at ``n = 200``.

**One given ``lam``.** Kernel ridge regression at one given ``lam`` with one kernel on
``z`` (KCI's fixed settings) needs no eigendecomposition: :func:`ridge_residual` forms
``R = n lam (Kz_c + n lam I)^{-1}`` from a Cholesky factorisation (about ``n^3``
flops against ``9 n^3`` for the eigendecomposition and the products with its
eigenvectors; equal to the spectral form to rounding).

The decompositions are cached by the bytes of ``z`` and the kernel
(:func:`z_spectrum`, :func:`ridge_residual`): a causal-discovery run that conditions
many tests on the same ``z`` decomposes its Gram matrix once.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

import numpy as np

from .._gram import centred_spectrum, psd_factor
from .._validation import check_choice, shown
from .filters import FILTERS, shrink_factor

__all__ = ["CRITERIA", "ConditionalMeanEmbedding", "FittedRegression", "RidgeResidual",
           "ZSpectrum", "clear_cache", "feature_spectrum", "lambda_grid_cme",
           "ridge_residual", "z_spectrum"]

#: the tuning criteria of :class:`ConditionalMeanEmbedding`
CRITERIA = ("gcv", "loo", "marglik")

#: bytes of eigenvectors kept in the cache of :func:`z_spectrum`
CACHE_BYTES = 256 * 2**20


@dataclass(frozen=True, eq=False)
class ZSpectrum:
    """The eigendecomposition of the centred Gram matrix of ``z`` under one kernel.

    Attributes
    ----------
    kappa : ndarray, shape (r,)
        Its eigenvalues above rounding, descending.
    U : ndarray, shape (n, r)
        Their eigenvectors (orthonormal, orthogonal to the constant vector).
    trace : float
        ``tr(Kz_c)``.
    kernel : Kernel
        The fitted kernel.
    """

    kappa: np.ndarray
    U: np.ndarray
    trace: float
    kernel: Any

    @property
    def n(self) -> int:
        return int(self.U.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.U.nbytes)


_CACHE: "OrderedDict[tuple[str, ...], Any]" = OrderedDict()
_CACHE_LOCK = threading.Lock()


def _digest(z: np.ndarray) -> str:
    a = np.ascontiguousarray(z, dtype=np.float64)
    h = hashlib.blake2b(a.tobytes(), digest_size=20)
    h.update(repr(a.shape).encode())
    return h.hexdigest()


#: the ``clear`` functions of the caches built on this one (the conditional tests' targets:
#: :mod:`kmtests.statistics.residual_cache`), called by :func:`clear_cache`
COMPANION_CACHES: list[Any] = []


def clear_cache() -> None:
    """Empty the cache of eigendecompositions (:func:`z_spectrum`) and the caches built on
    it (:data:`COMPANION_CACHES`)."""
    with _CACHE_LOCK:
        _CACHE.clear()
    for clear in COMPANION_CACHES:
        clear()


def _cache_get(key: tuple[str, ...]) -> Any:
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
        return hit


def _cache_put(key: tuple[str, ...], value: Any) -> None:
    if value.nbytes > CACHE_BYTES:
        return
    with _CACHE_LOCK:
        _CACHE[key] = value
        while sum(v.nbytes for v in _CACHE.values()) > CACHE_BYTES:
            _CACHE.popitem(last=False)


def z_spectrum(kernel: Any, z: np.ndarray, *, cache: bool = True) -> ZSpectrum:
    """Eigenpairs of the centred Gram matrix of `z` under the fitted `kernel` (cached).

    The cache is keyed by the exact bytes of `z` and the kernel's representation
    (with its bandwidth); it keeps the most recently used decompositions (and the
    operators of :func:`ridge_residual`) up to :data:`CACHE_BYTES`.
    """
    key = (_digest(z), repr(kernel))
    if cache:
        hit = _cache_get(key)
        if hit is not None:
            return hit

    Kc = kernel.centred_gram(z, name="z").Kc
    kappa, U = centred_spectrum(Kc)
    spec = ZSpectrum(kappa, U, float(np.trace(Kc)), kernel)
    if cache:
        _cache_put(key, spec)
    return spec


def feature_spectrum(kernel: Any, F: np.ndarray) -> ZSpectrum:
    """The spectrum of the approximate centred Gram matrix ``F F'`` of centred features
    `F` (n x r, e.g. random Fourier or Nyström features of z), from their SVD (O(n r^2))."""
    U, s, _ = np.linalg.svd(F, full_matrices=False)
    kappa = s * s
    top = float(kappa[0]) if kappa.size else 0.0
    keep = kappa > max(top, 0.0) * max(F.shape) * np.finfo(np.float64).eps * 10
    U = U[:, keep]
    U -= U.mean(axis=0)
    return ZSpectrum(np.ascontiguousarray(kappa[keep]), np.ascontiguousarray(U),
                     float(np.sum(F * F)), kernel)


def _target(target: Any, U: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """``(Kc U, tr Kc, diag Kc)`` of a target given as its centred Gram matrix (n x n) or
    as centred features ``F`` with ``Kc = F F'`` (an object with a ``phi`` attribute)."""
    F = getattr(target, "phi", None)
    if F is not None:
        return F @ (F.T @ U), float(np.sum(F * F)), np.einsum("ij,ij->i", F, F)
    return target @ U, float(np.trace(target)), np.diagonal(target)


def lambda_grid_cme(trace: float, n: int, count: int = 13) -> np.ndarray:
    """The default grid of ``lam``: ``(tr(Kz_c) / n) x 10^[-6, 0]`` (operator units).

    Examples
    --------
    >>> from kmtests.estimators.conditional import lambda_grid_cme
    >>> print(lambda_grid_cme(100.0, 100, 3))
    [1.e-06 1.e-03 1.e+00]
    """
    scale = trace / n if trace > 0 else 1.0
    return scale * np.logspace(-6.0, 0.0, count)


@dataclass(frozen=True, eq=False)
class FittedRegression:
    """A regression of one target's features on ``z``, fitted (see the module docs).

    Attributes
    ----------
    spectrum : ZSpectrum
        The decomposition of the chosen kernel on ``z``.
    h : ndarray, shape (r,)
        The shrink factors ``h(kappa / n)`` at the chosen ``lam``.
    lam : float
    criterion : str or None
        How ``lam`` (and the kernel) were chosen; None when both were given.
    score : float
        The criterion at the choice (NaN when none).
    scores : ndarray, shape (kernels, lams)
        The criterion on the whole grid (empty when none).
    lams : ndarray
        The grid of ``lam``.
    """

    spectrum: ZSpectrum
    h: np.ndarray
    lam: float
    criterion: str | None
    score: float
    scores: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    lams: np.ndarray = field(default_factory=lambda: np.empty(0))

    @property
    def df(self) -> float:
        """The regression's degrees of freedom ``tr(P) = sum h``."""
        return float(self.h.sum())

    @property
    def kernel(self) -> Any:
        return self.spectrum.kernel

    @property
    def n(self) -> int:
        return self.spectrum.n

    def residual_operator(self) -> np.ndarray:
        """``R = I - U diag(h) U'`` (n x n, symmetric, ``R 1 = 1``)."""
        U = self.spectrum.U
        R = -(U * self.h) @ U.T
        R[np.diag_indices_from(R)] += 1.0
        return R

    def residual_covariance(self) -> np.ndarray:
        """``R H R`` (``H`` the centring): the covariance of the residuals of independent
        rows of unit variance, ``I - U diag(2 h - h^2) U' - (R 1)(R 1)' / n`` (O(n^2 r))."""
        U, h = self.spectrum.U, self.h
        n = U.shape[0]
        r1 = 1.0 - (U * h) @ U.sum(axis=0)
        V = np.hstack([U, r1[:, None]])          # one product for both terms
        A = -(V * np.append(h * (2.0 - h), 1.0 / n)) @ V.T
        A[np.diag_indices_from(A)] += 1.0
        return A

    def residual_features(self, F: np.ndarray) -> np.ndarray:
        """``R F``: the residuals of centred features (n x r; O(n r r_z))."""
        U = self.spectrum.U
        return F - (U * self.h) @ (U.T @ F)

    def residual_gram(self, Kc: np.ndarray) -> np.ndarray:
        """``R Kc R``: the centred Gram matrix of the residual features (O(n^2 r))."""
        U, h = self.spectrum.U, self.h
        G = Kc @ U                       # n x r
        M = U.T @ G                      # r x r
        Uh = U * h
        out = Kc - Uh @ G.T
        out -= G @ Uh.T
        out += (Uh @ M) @ Uh.T
        return 0.5 * (out + out.T)


@dataclass(frozen=True, eq=False)
class RidgeResidual:
    """Kernel ridge regression on ``z`` at one given ``lam``: the residual operator
    ``R = n lam (Kz_c + n lam I)^{-1}`` held as a Cholesky factor (from
    :func:`ridge_residual`).

    It offers what :class:`FittedRegression` offers a whole-sample KCI statistic
    (``residual_gram``, ``residual_features``, ``residual_operator``, ``df``) without
    an eigendecomposition: residuals are triangular solves, and the residual Gram
    matrix of a target of numerical rank ``r`` (:func:`kmtests._gram.psd_factor`)
    costs ``O(n^2 r)`` instead of two ``n^3`` products.

    Attributes
    ----------
    chol : ndarray, shape (n, n)
        The lower Cholesky factor of ``Kz_c + n lam I``.
    lam : float
    kernel : Kernel
        The fitted kernel on ``z``.
    """

    chol: np.ndarray
    lam: float
    kernel: Any
    criterion: None = None
    score: float = float("nan")
    _memo: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return int(self.chol.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.chol.nbytes + sum(a.nbytes for a in self._memo.values()))

    @property
    def df(self) -> float:
        """The regression's degrees of freedom ``tr(I - R) = n - n lam tr(A^{-1})``."""
        if "R" in self._memo:
            return float(self.n - np.trace(self._memo["R"]))
        if "trace" not in self._memo:
            from scipy.linalg import lapack

            inv, info = lapack.dtrtri(self.chol, lower=1)
            if info != 0:  # pragma: no cover - a factor from dpotrf is invertible
                raise np.linalg.LinAlgError("singular Cholesky factor")
            # the factor's upper triangle is zero (clean=1), and so is its inverse's
            self._memo["trace"] = np.array(np.einsum("ij,ij->", inv, inv))
        return float(self.n - self.n * self.lam * float(self._memo["trace"]))

    def residual_operator(self) -> np.ndarray:
        """``R`` (n x n; computed once)."""
        if "R" not in self._memo:
            from scipy.linalg import lapack

            inv, info = lapack.dpotri(self.chol, lower=1)
            if info != 0:  # pragma: no cover - a factor from dpotrf is invertible
                raise np.linalg.LinAlgError("singular Cholesky factor")
            R = np.tril(inv)
            R += np.tril(inv, -1).T
            R *= self.n * self.lam
            self._memo["R"] = R
        return self._memo["R"]

    def residual_covariance(self) -> np.ndarray:
        """``R H R`` (``H`` the centring; O(n^3))."""
        R = self.residual_operator()
        r1 = R.sum(axis=1)
        return np.asarray(R @ R - np.outer(r1, r1) / self.n)

    def residual_features(self, F: np.ndarray) -> np.ndarray:
        """``R F`` (two triangular solves)."""
        from scipy.linalg import lapack

        out, info = lapack.dpotrs(self.chol, np.asarray(F, dtype=np.float64), lower=1)
        if info != 0:  # pragma: no cover - arguments are checked above
            raise np.linalg.LinAlgError("dpotrs failed")
        out *= self.n * self.lam
        return np.asarray(out)

    def residual_gram(self, Kc: np.ndarray) -> np.ndarray:
        """``R Kc R``: ``(R F)(R F)'`` with ``F F' = Kc`` (about ``5 n^2 r`` flops) when
        `Kc` has numerical rank ``r`` below ``0.9 n``, else two products with ``R``
        (about ``5 n^3``)."""
        F = psd_factor(Kc, int(0.9 * self.n))
        if F is not None:
            G = self.residual_features(F)
            out = G @ G.T
        else:
            R = self.residual_operator()
            out = (R @ Kc) @ R
        return 0.5 * (out + out.T)


#: :func:`ridge_residual` factorises ``Kz_c + n lam I`` only when ``n lam`` is at least this
#: share of ``tr(Kz_c)`` (condition number at most 1e7: residual operators correct to
#: about 1e-9); below, the eigendecomposition is used
COND_LIMIT = 1e-7


def ridge_residual(kernel: Any, z: np.ndarray, lam: float, *,
                   cache: bool = True) -> RidgeResidual | None:
    """The residual operator of kernel ridge regression on `z` at `lam` (cached as
    :func:`z_spectrum`), from a Cholesky factorisation of ``A = Kz_c + n lam I``; None
    when that matrix is too ill-conditioned to factorise accurately (``n lam`` below
    :data:`COND_LIMIT` ``tr(Kz_c)``), for the caller to use the eigendecomposition.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators.conditional import ridge_residual
    >>> from kmtests.kernels import Gaussian
    >>> z = np.random.default_rng(0).normal(size=(50, 1))
    >>> fit = ridge_residual(Gaussian(1.0), z, 1e-2, cache=False)
    >>> bool(np.allclose(fit.residual_operator() @ np.ones(50), 1.0)), round(fit.df, 2)
    (True, 3.35)
    """
    from scipy.linalg import lapack

    key = (_digest(z), repr(kernel), "ridge", repr(float(lam)))
    if cache:
        hit = _cache_get(key)
        if hit is not None:
            return hit
    A = kernel.centred_gram(z, name="z").Kc
    n = A.shape[0]
    eps = n * float(lam)
    if not eps >= COND_LIMIT * float(np.trace(A)):
        return None  # condition number above 1 / COND_LIMIT: the eigendecomposition
    A[np.diag_indices(n)] += eps
    c, info = lapack.dpotrf(A, lower=1, overwrite_a=1, clean=1)
    if info != 0 or not np.all(np.isfinite(np.diagonal(c))):
        return None
    fit = RidgeResidual(c, float(lam), kernel)
    if not np.allclose(fit.residual_features(np.ones((n, 1))), 1.0, rtol=0, atol=1e-6):
        return None  # R 1 = 1 exactly in exact arithmetic
    if cache:
        _cache_put(key, fit)
    return fit


def _scores(criterion: str, filt: str, spec: ZSpectrum, Kc: Any,
            lams: np.ndarray, max_df: float = 1.0) -> np.ndarray:
    """The criterion (smaller is better) of every ``lam`` for target `Kc` (a centred Gram
    matrix, or centred features: :func:`_target`); ``inf`` where the regression's
    degrees of freedom exceed ``max_df (n - 1)``."""
    n = spec.n
    U, kappa = spec.U, spec.kappa
    G, total, dK = _target(Kc, U)
    m = np.einsum("ia,ia->a", U, G)          # (U' Kc U)_aa
    out = np.full(lams.size, np.inf)
    if criterion == "loo":
        M = U.T @ G
    for j, lam in enumerate(lams):
        h = shrink_factor(filt, kappa / n, lam)
        if float(h.sum()) > max_df * (n - 1):
            continue
        if criterion == "gcv":
            rss = max(total - float(np.dot(2.0 * h - h * h, m)), 0.0)
            dof = n - float(h.sum())
            out[j] = n * rss / (dof * dof) if dof > 0.5 else np.inf
        elif criterion == "loo":
            Uh = U * h
            d_pk = np.einsum("ia,ia->i", Uh, G)
            d_pkp = np.einsum("ia,ia->i", Uh @ M, Uh)
            d_res = np.maximum(dK - 2.0 * d_pk + d_pkp, 0.0)
            r_ii = 1.0 - np.einsum("ia,ia->i", U, Uh)
            out[j] = float(np.mean(d_res / np.maximum(r_ii, 1e-12) ** 2))
        else:  # marglik: -2 log-evidence / D, amplitude profiled, on the n - 1 centred dims
            rho = n * float(lam)
            outside = max(total - float(m.sum()), 0.0)
            s = float(np.sum(m / (kappa + rho))) + outside / rho
            zeros = (n - 1) - kappa.size
            out[j] = ((n - 1) * np.log(max(s, 1e-300)) + float(np.sum(np.log(kappa + rho)))
                      + zeros * np.log(rho))
    return out


def _undersmoothed(filt: str, x: np.ndarray, lam: float, factor: float, max_df: float
                   ) -> float:
    """``lam / factor``, or the smallest ``lam`` above it whose regression has at most
    `max_df` degrees of freedom (undersmoothing's bound, within the search's: it does not
    reopen the interpolation the search excludes), found by bisection in ``log lam`` (the
    degrees of freedom decrease with ``lam``); `lam` itself when it has `max_df` or more."""
    if float(shrink_factor(filt, x, lam).sum()) >= max_df:
        return lam
    low = lam / factor
    if float(shrink_factor(filt, x, low).sum()) <= max_df:
        return low
    a, b = np.log(low), np.log(lam)  # df(a) > max_df >= df(b)
    for _ in range(60):
        mid = 0.5 * (a + b)
        if float(shrink_factor(filt, x, float(np.exp(mid))).sum()) > max_df:
            a = mid
        else:
            b = mid
    return float(np.exp(b))


@dataclass(frozen=True)
class ConditionalMeanEmbedding:
    """Regularised regression of kernel features on ``z`` (see the module docs).

    Parameters
    ----------
    filter : str
        The spectral filter (:data:`kmtests.estimators.filters.FILTERS`;
        ``"tikhonov"``: kernel ridge regression, as in KCI).
    lam : float, sequence of float or "auto"
        The regularisation in operator units (``n lam`` is KCI's ``epsilon``):
        a value, a grid searched by `criterion`, or ``"auto"`` (default: the
        grid :func:`lambda_grid_cme`).
    criterion : {"gcv", "loo", "marglik"}
        How a grid of ``lam`` or of kernels on ``z`` is searched (default
        ``"gcv"``; ``"loo"`` for Tikhonov only).
    max_df : float in (0, 1]
        The search keeps the regressions with at most ``max_df (n - 1)`` degrees of
        freedom (default 0.5; see "No interpolation" in the module docs). A single
        given ``lam`` is used as given.
    undersmooth : float >= 1
        The searched ``lam`` is divided by this factor after the search (default 1:
        the criterion's choice), as far as the regression keeps at most
        ``undersmooth_max_df (n - 1)`` degrees of freedom (beyond, the smallest ``lam``
        within that bound; the searched ``lam`` itself if it has more). A test needs
        residuals with little bias more than the best prediction: undersmoothing trades
        the bias of the regression, which makes a conditional independence test reject
        too often, for variance (``benchmarks/README.md``, "Multivariate z"). A single
        given ``lam`` is used as given.
    undersmooth_max_df : float in (0, 1]
        The bound of undersmoothing on the degrees of freedom, as a fraction of ``n - 1``
        (default 0.35, and at most `max_df`): undersmoothed up to the search's bound of
        ``0.5 (n - 1)``, the regressions of x and y on a z of 3 and 5 coordinates whose
        every coordinate acts (``benchmarks/ci_level.py``'s ``index3``, ``index5``, n =
        200) rejected 63 and 58 of 600 null data sets at 5%; with this bound 43 and 47
        (``benchmarks/README.md``, "The default from three coordinates of z").

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators import ConditionalMeanEmbedding
    >>> from kmtests.kernels import Gaussian
    >>> gen = np.random.default_rng(0)
    >>> z = gen.normal(size=(100, 1)); x = np.sin(3 * z) + 0.1 * gen.normal(size=(100, 1))
    >>> Kc = Gaussian(1.0).centred_gram(x).Kc
    >>> fit = ConditionalMeanEmbedding().fit([Gaussian(0.5), Gaussian(2.0)], z, Kc)
    >>> print(fit.kernel, f"lam = {fit.lam:.2g}")
    Gaussian(bandwidth=0.5) lam = 2.1e-06
    """

    filter: str = "tikhonov"
    lam: Any = "auto"
    criterion: str = "gcv"
    max_df: float = 0.5
    undersmooth: float = 1.0
    undersmooth_max_df: float = 0.35

    name: ClassVar[str] = "cme"

    def __post_init__(self) -> None:
        check_choice(self.filter, "filter", tuple(FILTERS))
        check_choice(self.criterion, "criterion", CRITERIA)
        if isinstance(self.max_df, bool) or not (
                isinstance(self.max_df, (int, float)) and 0.0 < self.max_df <= 1.0):
            raise ValueError(f"`max_df` must be a number in (0, 1]; got {self.max_df!r}.")
        if isinstance(self.undersmooth_max_df, bool) or not (
                isinstance(self.undersmooth_max_df, (int, float))
                and 0.0 < self.undersmooth_max_df <= 1.0):
            raise ValueError(f"`undersmooth_max_df` must be a number in (0, 1]; got "
                             f"{self.undersmooth_max_df!r}.")
        if isinstance(self.undersmooth, bool) or not (
                isinstance(self.undersmooth, (int, float)) and 1.0 <= self.undersmooth < np.inf):
            raise ValueError(f"`undersmooth` must be a number >= 1; got {self.undersmooth!r}.")
        if self.criterion == "loo" and self.filter != "tikhonov":
            raise ValueError("criterion='loo' is the exact leave-one-out error of kernel "
                             f"ridge regression (filter='tikhonov'); with filter="
                             f"{self.filter!r} use criterion='gcv' or 'marglik'.")
        self.lams()  # validates `lam`

    def lams(self) -> np.ndarray | None:
        """The given values of ``lam`` (None for ``"auto"``)."""
        lam = self.lam
        if isinstance(lam, str):
            if lam != "auto":
                raise ValueError(f"`lam` must be a positive number, a sequence of them or "
                                 f"'auto'; got {shown(lam)}.")
            return None
        arr = np.atleast_1d(np.asarray(lam, dtype=np.float64)) if not isinstance(
            lam, bool) else np.array([np.nan])
        if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError(f"`lam` must be a positive number, a sequence of them or 'auto'; "
                             f"got {shown(lam)}.")
        if np.unique(arr).size != arr.size:
            raise ValueError(f"`lam` must not repeat values; got {shown(lam)}.")
        return arr

    @property
    def tuned(self) -> bool:
        lams = self.lams()
        return lams is None or lams.size > 1

    def fit(self, kernels: Sequence[Any], z: np.ndarray, Kc: Any, *,
            cache: bool = True, spectra: Sequence[ZSpectrum] | None = None
            ) -> FittedRegression:
        """Fit the regression of the target (centred Gram matrix `Kc`) on `z`.

        Parameters
        ----------
        kernels : sequence of Kernel
            Candidate kernels on `z`, fitted (one: no kernel choice).
        z : ndarray, shape (n, d)
        Kc : ndarray, shape (n, n), or Features
            The centred Gram matrix of the target's features, or the centred features
            themselves (an object with a ``phi`` attribute, n x r: low-rank engines).
        cache : bool
            Reuse (and keep) the eigendecompositions of :func:`z_spectrum`.
        spectra : sequence of ZSpectrum, optional
            The decompositions of `kernels` on `z`, when already computed.
        """
        if not kernels:
            raise ValueError("at least one kernel on z is needed")
        specs = (list(spectra) if spectra is not None
                 else [z_spectrum(k, z, cache=cache) for k in kernels])
        n = specs[0].n
        given = self.lams()
        grids = [given if given is not None else lambda_grid_cme(s.trace, n) for s in specs]
        if len(specs) == 1 and grids[0].size == 1:
            h = shrink_factor(self.filter, specs[0].kappa / n, float(grids[0][0]))
            return FittedRegression(specs[0], h, float(grids[0][0]), None, float("nan"))
        scores = np.vstack([_scores(self.criterion, self.filter, s, Kc, g, self.max_df)
                            for s, g in zip(specs, grids)])
        if not np.any(np.isfinite(scores)):
            raise ValueError("the regression on z could not be tuned: the criterion is not "
                             "finite for any lam with at most max_df (n - 1) = "
                             f"{self.max_df * (n - 1):.3g} degrees of freedom (constant "
                             "target or z?); give `lam`.")
        i, j = np.unravel_index(int(np.nanargmin(np.where(np.isfinite(scores), scores,
                                                          np.nan))), scores.shape)
        lam = float(grids[i][j])
        if self.undersmooth != 1.0:
            lam = _undersmoothed(self.filter, specs[i].kappa / n, lam, self.undersmooth,
                                 min(self.max_df, self.undersmooth_max_df) * (n - 1))
        h = shrink_factor(self.filter, specs[i].kappa / n, lam)
        return FittedRegression(specs[i], h, lam, self.criterion, float(scores[i, j]), scores,
                                grids[i])
