"""Marginalized kernel mean estimators MKME and MMKME (Xia et al.).

Every point is corrupted with Gaussian noise ``N(x_i, Sigma)`` and the kernel
mean of the corrupted sample is taken in closed form,

    mu~ = (1/n) sum_i E_{x ~ N(x_i, Sigma)} k(x, .),

with ``Sigma = sigma2 * I`` (MKME) or ``Sigma = diag(e_1, ..., e_d)`` (MMKME),
for the Gaussian kernel ``k(x, y) = exp(-||x - y||^2 / (2 theta^2))``. The
result is a sum of wider Gaussian bumps, *not* a weighted sum of the
``k(x_i, .)``: it is returned as an :class:`Embedding` with ``smoothing`` set,
and every evaluation, inner product and norm is exact (L- and Q-kernels, MKME
eqs. 26-27). ``Sigma`` is chosen by the leave-one-out score of MKME eqs. 24-25.

Key identity: the Q-kernel with total corruption variance ``v`` is
``c * exp(-sum_j (x_j - y_j)^2 / (2 (theta_j^2 + v_j)))`` with
``c = prod_j (theta_j^2 / (theta_j^2 + v_j))^{1/2}``: marginalized MMD/HSIC are
plain MMD/HSIC with inflated bandwidths ``theta^2 + 2 sigma2`` (see
:func:`inflated_kernel`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._typing import ArrayLike
from .._validation import as_sample, check_positive_int, check_variances, shown
from ..kernels import ARDGaussian, Gaussian, Kernel, resolve_kernel, sq_distances
from ._base import Embedding, KernelMeanEstimator, gaussian_bandwidths2, smoothed_gaussian_gram
from ._rules import Uniform
from . import _loocv as L

__all__ = ["MKME", "MMKME", "MarginalizedEstimator", "inflated_kernel", "linearized_weights",
           "marginalized_gram", "marginalized_loocv"]


# -- marginalized kernels ---------------------------------------------------
def _check_gaussian(kernel: Kernel, who: str) -> None:
    if not isinstance(kernel, (Gaussian, ARDGaussian)):
        raise ValueError(f"`kernel` must be 'gaussian' or 'ard' for {who} (the marginalized "
                         f"kernels have a closed form only for Gaussian kernels); got "
                         f"{kernel.name!r}.")


def marginalized_gram(x: ArrayLike, y: ArrayLike | None = None, *, kernel: Kernel,
                      smoothing_x: Any = 0.0, smoothing_y: Any = None) -> np.ndarray:
    """Marginalized Gram matrix ``E k(x~_i, y~_j)`` (MKME eqs. 26-27).

    ``x~_i ~ N(x_i, diag(smoothing_x))`` and ``y~_j ~ N(y_j, diag(smoothing_y))``
    independently. With ``y=None`` the matrix is the Q-kernel of `x` with
    itself (``smoothing_y = smoothing_x``; the diagonal uses two independent
    corruptions, so ``Q_ii = prod_j (theta_j^2/(theta_j^2 + 2 e_j))^{1/2} < 1``).
    With `y` given and ``smoothing_y=None``, `y` is not corrupted: the L-kernel.

    Parameters
    ----------
    x, y : array_like, shape (n, d) and (m, d)
    kernel : Gaussian or ARDGaussian
        A kernel with a numeric bandwidth.
    smoothing_x, smoothing_y : float or array_like of d floats
        Corruption variances (a scalar is isotropic).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.kernels import Gaussian
    >>> from kmtests.estimators.marginalized import marginalized_gram
    >>> Q = marginalized_gram(np.array([[0.0], [1.0]]), kernel=Gaussian(bandwidth=1.0),
    ...                       smoothing_x=0.5)
    >>> print(np.round(Q, 4))
    [[0.7071 0.5507]
     [0.5507 0.7071]]
    """
    xa = as_sample(x, "x", min_size=1)
    d = xa.shape[1]
    _check_gaussian(kernel, "marginalized_gram")
    sx = check_variances(smoothing_x, d, "smoothing_x")
    if y is None:
        if smoothing_y is not None:
            raise ValueError("`smoothing_y` needs `y`; with y=None the smoothing of `x` is used "
                             "for both arguments.")
        return smoothed_gaussian_gram(kernel, xa, None, 2.0 * sx)
    ya = as_sample(y, "y", min_size=1)
    if ya.shape[1] != d:
        raise ValueError(f"`x` and `y` must have the same number of columns; got {d} and "
                         f"{ya.shape[1]}.")
    sy = np.zeros(d) if smoothing_y is None else check_variances(smoothing_y, d, "smoothing_y")
    return smoothed_gaussian_gram(kernel, xa, ya, sx + sy)


def inflated_kernel(kernel: Kernel, variance: Any, d: int) -> tuple[float, Kernel]:
    """The marginalized kernel as a scaled Gaussian: ``(c, kernel')``.

    ``E k(x + e1, y + e2) = c * kernel'(x, y)`` when the *total* corruption
    variance of the two arguments is `variance` (``2 * sigma2`` for two
    MKME-corrupted points), with ``kernel'`` of squared bandwidths
    ``theta_j^2 + variance_j`` and ``c = prod_j (theta_j^2/(theta_j^2 +
    variance_j))^{1/2}``. ``kernel'`` is a :class:`~kmtests.kernels.Gaussian`
    when both `kernel` and `variance` are isotropic, an
    :class:`~kmtests.kernels.ARDGaussian` otherwise.

    Examples
    --------
    >>> from kmtests.kernels import Gaussian
    >>> from kmtests.estimators.marginalized import inflated_kernel
    >>> c, k2 = inflated_kernel(Gaussian(bandwidth=1.0), 2 * 0.5, d=2)
    >>> print(f"{c:.4f} {k2.bandwidth:.4f}")
    0.5000 1.4142
    """
    _check_gaussian(kernel, "inflated_kernel")
    theta2 = gaussian_bandwidths2(kernel, d)
    v = check_variances(variance, d, "variance")
    c = float(np.exp(-0.5 * np.sum(np.log1p(v / theta2))))
    bw = np.sqrt(theta2 + v)
    if np.all(bw == bw[0]) and isinstance(kernel, Gaussian):
        return c, Gaussian(bandwidth=float(bw[0]))
    return c, ARDGaussian(bandwidth=bw)


# -- the leave-one-out score (MKME eqs. 24-25) --------------------------------
class _Loocv:
    """LOOCV score of the marginalized KME on one sample, O(n^2 d) per evaluation.

    With ``m(v) = mean_{i != j} exp(-sum_m (x_im - x_jm)^2 / (2 v_m))`` the score
    (MKME eq. 25, with ``k(x, x) = 1``) reduces exactly to

        1 - 2 a_L m(theta^2 + e) + a_Q (1 + (n - 2) m(theta^2 + 2e)) / (n - 1),

    ``a_L = prod (theta^2/(theta^2+e))^{1/2}``, ``a_Q = prod (theta^2/(theta^2+2e))^{1/2}``
    (row sums: ``sum_{j != i} L_ji = (L1)_i - L_ii`` and
    ``sum_{j,k != i} Q_jk = 1'Q1 - 2 (Q1)_i + Q_ii``, averaged over i).
    """

    def __init__(self, theta2: np.ndarray, n: int, x: np.ndarray | None,
                 pd: np.ndarray | None) -> None:
        self.theta2, self.n, self.x, self.pd = theta2, n, x, pd
        # work buffers, reused across evaluations (no page faults per call)
        self._pbuf: np.ndarray | None = None
        self._ebuf: np.ndarray | None = None

    def _exp_kernel(self, v: np.ndarray) -> np.ndarray:
        """``E_ij = exp(-sum_m (x_im - x_jm)^2 / (2 v_m))`` in a reused n x n buffer.

        As :func:`kmtests.kernels.sq_distances` (one matrix product of the rescaled
        data, clipped at 0, exact zero diagonal) but in place.
        """
        if self._ebuf is None:
            self._ebuf = np.empty((self.n, self.n))
        xs = self.x / np.sqrt(v)
        sq = np.einsum("ij,ij->i", xs, xs)
        E = np.matmul(xs, xs.T, out=self._ebuf)
        E *= -2.0
        E += sq[:, None]
        E += sq[None, :]
        np.maximum(E, 0.0, out=E)
        np.fill_diagonal(E, 0.0)
        E *= -0.5
        return np.exp(E, out=E)

    @classmethod
    def from_data(cls, x: np.ndarray, theta2: np.ndarray) -> "_Loocv":
        xc = x - x.mean(axis=0)  # translation invariant; less cancellation below
        from scipy.spatial.distance import pdist

        pd = pdist(xc, "sqeuclidean") if np.all(theta2 == theta2[0]) else None
        return cls(theta2, x.shape[0], xc, pd)

    def _offdiag_mean(self, v: np.ndarray) -> float:
        n = self.n
        if self.pd is not None and np.all(v == v[0]):
            if self._pbuf is None:
                self._pbuf = np.empty_like(self.pd)
            buf = np.multiply(self.pd, -0.5 / v[0], out=self._pbuf)
            return float(np.exp(buf, out=buf).mean())
        return float((self._exp_kernel(v).sum() - n) / (n * (n - 1)))

    def score(self, e: np.ndarray) -> float:
        n, t2 = self.n, self.theta2
        a_l = np.exp(-0.5 * np.sum(np.log1p(e / t2)))
        a_q = np.exp(-0.5 * np.sum(np.log1p(2.0 * e / t2)))
        m_l, m_q = self._offdiag_mean(t2 + e), self._offdiag_mean(t2 + 2.0 * e)
        return float(1.0 - 2.0 * a_l * m_l + a_q * (1.0 + (n - 2) * m_q) / (n - 1))

    def _moments(self, v: np.ndarray) -> tuple[float, np.ndarray]:
        """m(v) and ``G_m = sum_{i,j} E_ij (x_im - x_jm)^2`` (for the gradient)."""
        n, x = self.n, self.x
        assert x is not None  # the gradient needs the data (not only pairwise distances)
        E = self._exp_kernel(v)
        r = E.sum(axis=1)
        G = 2.0 * (r @ (x * x) - np.einsum("ij,ij->j", x, E @ x))
        return float((r.sum() - n) / (n * (n - 1))), np.maximum(G, 0.0)

    def score_and_grad(self, u: np.ndarray) -> tuple[float, np.ndarray]:
        """Score and gradient with respect to ``u = log e`` (MMKME search)."""
        n, t2 = self.n, self.theta2
        e = np.exp(u)
        vl, vq = t2 + e, t2 + 2.0 * e
        a_l = np.exp(-0.5 * np.sum(np.log1p(e / t2)))
        a_q = np.exp(-0.5 * np.sum(np.log1p(2.0 * e / t2)))
        m_l, g_l = self._moments(vl)
        m_q, g_q = self._moments(vq)
        nn = n * (n - 1)
        d_l = -2.0 * (-a_l / (2.0 * vl) * m_l + a_l * g_l / (2.0 * vl * vl * nn))
        d_q = (-a_q / vq * (1.0 + (n - 2) * m_q) + a_q * (n - 2) * g_q / (vq * vq * nn)) / (n - 1)
        f = 1.0 - 2.0 * a_l * m_l + a_q * (1.0 + (n - 2) * m_q) / (n - 1)
        return float(f), e * (d_l + d_q)


def _search_isotropic(problem: _Loocv, d: int, lo: float, hi: float,
                      grid_size: int) -> tuple[float, float, dict[str, Any], bool]:
    """Coarse log-grid, then bounded Brent on log sigma2 around the grid minimum."""
    grid = np.geomspace(lo, hi, grid_size)
    scores = np.array([problem.score(np.full(d, s)) for s in grid])
    k = L.stable_argmin(scores)
    a, b = np.log(grid[max(k - 1, 0)]), np.log(grid[min(k + 1, grid_size - 1)])
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(lambda u: problem.score(np.full(d, np.exp(u))), bounds=(a, b),
                          method="bounded", options={"xatol": 1e-10})
    if res.fun < scores[k] - L.SCORE_RTOL * abs(scores[k]):
        s2 = L.quantise_log(float(np.exp(res.x)))
        best = float(problem.score(np.full(d, s2)))
    else:
        s2, best = float(grid[k]), float(scores[k])
    at_boundary = bool(np.log(s2 / lo) < 1e-3 or np.log(hi / s2) < 1e-3)
    return s2, best, {"grid": grid.tolist(), "score": scores.tolist()}, at_boundary


def marginalized_loocv(x: ArrayLike, smoothing: Any, *, kernel: Any = "gaussian",
                       bandwidth: Any = "median") -> float:
    """The LOOCV score of MKME eq. 25 at corruption variances `smoothing`.

    ``(1/n) sum_i ||k(x_i, .) - mu~^(-i)||^2`` where ``mu~^(-i)`` is the
    marginalized embedding of the sample without ``x_i`` (the held-out point
    is not corrupted). ``smoothing = 0`` gives the leave-one-out score of the
    empirical KME.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators.marginalized import marginalized_loocv
    >>> x = np.random.default_rng(0).normal(size=(20, 2))
    >>> print(f"{marginalized_loocv(x, 0.3, bandwidth=1.0):.4f}")
    0.5651
    """
    xa = as_sample(x, "x", min_size=2)
    kern = resolve_kernel(kernel, bandwidth).fitted_to(xa, name="x")
    _check_gaussian(kern, "marginalized_loocv")
    theta2 = gaussian_bandwidths2(kern, xa.shape[1])
    return _Loocv.from_data(xa, theta2).score(check_variances(smoothing, xa.shape[1], "smoothing"))


# -- estimators -------------------------------------------------------------
def _check_range(rng: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in rng)
    except (TypeError, ValueError) as exc:
        raise TypeError("`sigma2_range` must be a pair of numbers (lo, hi).") from exc
    if not (np.isfinite(lo) and np.isfinite(hi) and 0 < lo < hi):
        raise ValueError(f"`sigma2_range` must satisfy 0 < lo < hi (finite); got {shown(rng)}.")
    return lo, hi


@dataclass(frozen=True, kw_only=True)
class MarginalizedEstimator(KernelMeanEstimator):
    """Base of the marginalized estimators: they act through the data, not a Gram matrix.

    :meth:`weights` is not applicable (the embedding is not a weighted sum of
    ``k(x_i, .)``); use :meth:`fit`, or :meth:`tune` to get the corruption
    variances and then :func:`marginalized_gram` / :func:`inflated_kernel`.
    """

    transforms_kernel: ClassVar[bool] = True

    sigma2_range: tuple[float, float] = (1e-6, 1e2)
    grid_size: int = 41

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma2_range", _check_range(self.sigma2_range))
        g = check_positive_int(self.grid_size, "grid_size")
        if g < 3:
            raise ValueError(f"`grid_size` must be at least 3; got {g}.")

    def weights(self, K: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        raise NotImplementedError(
            f"{type(self).__name__} is a marginalized estimator: its embedding is a sum of "
            "Gaussian-smoothed atoms, not a weighted sum of k(x_i, .), so it cannot be "
            "computed from a Gram matrix. Use `fit(x, ...)`, or `tune(x, kernel)` and the "
            "marginalized kernel (`marginalized_gram`, `inflated_kernel`)."
        )

    def tune(self, x: ArrayLike, kernel: Kernel) -> tuple[np.ndarray, dict[str, Any]]:
        """Corruption variances (d-vector) and the reported parameters for sample `x`."""
        raise NotImplementedError

    # -- inside the tests: a kernel transformation and the KME's weights ---------------
    def rule(self) -> Uniform:
        """Weights ``1/n`` on the corrupted points: the KME under the marginalized kernel."""
        return Uniform(fixed=1.0)

    def with_fixed(self, params: dict[str, Any]) -> "MarginalizedEstimator":
        """Nothing to fix: the corruption is tuned on a permutation-invariant set."""
        return self

    def transform_kernel(self, kernel: Kernel, data: np.ndarray | None
                         ) -> tuple[float, Kernel, dict[str, Any]]:
        """``(c, k', params)``: the Q-kernel of two corrupted points is ``c k'``.

        The corruption is tuned on `data` (the pooled sample, or one variable:
        a permutation-invariant choice); ``k'`` is the Gaussian/ARD kernel with
        squared bandwidths ``theta^2 + 2 sigma2`` (``+ 2 e_j`` for MMKME).
        """
        if data is None or not isinstance(kernel, (Gaussian, ARDGaussian)):
            what = "kernel='precomputed'" if data is None else f"the {kernel.name!r} kernel"
            raise ValueError(f"estimator {self.name!r} needs the data and a Gaussian kernel "
                             f"('gaussian' or 'ard'), not {what}.")
        smoothing, params = self.tune(data, kernel)
        c, infl = inflated_kernel(kernel, 2.0 * np.asarray(smoothing), data.shape[1])
        return c, infl, params

    def _bounds(self, theta2: np.ndarray) -> tuple[float, float]:
        return self.sigma2_range[0] * float(theta2.min()), self.sigma2_range[1] * float(theta2.max())

    def fit(self, x: ArrayLike, *, kernel: Any = "gaussian", bandwidth: Any = "median") -> Embedding:
        """Fit the exact marginalized embedding of `x`.

        Returns an :class:`Embedding` with ``weights = 1/n``, ``points = x`` and
        ``smoothing`` the chosen corruption variances (d-vector).
        """
        xa = as_sample(x, "x", min_size=2)
        kern = resolve_kernel(kernel, bandwidth).fitted_to(xa, name="x")
        smoothing, params = self.tune(xa, kern)
        n = xa.shape[0]
        return Embedding(points=xa, weights=np.full(n, 1.0 / n), kernel=kern, params=params,
                         estimator=self, smoothing=smoothing)

    def _prepare(self, x: ArrayLike, kernel: Kernel) -> tuple[np.ndarray, np.ndarray]:
        xa = as_sample(x, "x", min_size=2)
        if not isinstance(kernel, Kernel):
            raise TypeError("`kernel` must be a Kernel object (e.g. kmtests.kernels.Gaussian).")
        _check_gaussian(kernel, type(self).__name__)
        kern = kernel.fitted_to(xa, name="x")
        return xa, gaussian_bandwidths2(kern, xa.shape[1])


@dataclass(frozen=True, kw_only=True)
class MKME(MarginalizedEstimator):
    """Marginalized KME with isotropic corruption ``N(x_i, sigma2 I)`` (Xia et al., MKME).

    ``mu~ = (1/n) sum_i E_{x ~ N(x_i, sigma2 I)} k(x, .)`` for the Gaussian kernel
    of bandwidth ``theta``: each atom is the Gaussian bump
    ``(theta^2/(theta^2+sigma2))^{d/2} exp(-||t - x_i||^2 / (2 (theta^2 + sigma2)))``.

    Parameters
    ----------
    sigma2 : float, optional
        Fixed corruption variance (``0`` is the KME). By default chosen by the
        LOOCV score (MKME eqs. 24-25), minimised over ``log sigma2`` on
        ``sigma2_range * theta^2`` (a log grid of `grid_size` points, then
        bounded Brent around the grid minimum). For an ARD base kernel the
        range is ``[lo * min theta_j^2, hi * max theta_j^2]``.
    sigma2_range : (float, float)
        Search interval in units of ``theta^2``; default ``(1e-6, 1e2)``.
    grid_size : int
        Number of grid points of the coarse search (default 41).

    Notes
    -----
    ``emb.params`` keys: ``sigma2``; ``loocv`` (score at ``sigma2``);
    ``loocv_curve`` ``{"grid": sigma2 values, "score": ...}`` (None when
    ``sigma2`` is fixed); ``selection`` (``"loocv"`` or ``"fixed"``);
    ``sigma2_bounds``; ``at_boundary`` (the optimum sits at an end of the range,
    e.g. the lower end — the KME — for duplicated points).
    One LOOCV evaluation costs O(n^2) given the pairwise squared distances.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators import MKME
    >>> x = np.random.default_rng(0).normal(size=(30, 3))
    >>> emb = MKME().fit(x, bandwidth=1.0)
    >>> print(f"{emb.params['sigma2']:.4f} {emb.params['loocv']:.4f}")
    0.2446 0.8150
    """

    sigma2: float | None = None
    name: ClassVar[str] = "mkme"
    label: ClassVar[str] = "MKME (marginalized, isotropic noise, LOOCV)"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.sigma2 is not None:
            if isinstance(self.sigma2, bool) or not isinstance(self.sigma2, numbers.Real):
                raise TypeError(f"`sigma2` must be a non-negative number or None; got "
                                f"{self.sigma2!r}.")
            if not np.isfinite(self.sigma2) or self.sigma2 < 0:
                raise ValueError(f"`sigma2` must be a non-negative finite number; got "
                                 f"{self.sigma2!r}.")
            object.__setattr__(self, "sigma2", float(self.sigma2))

    def _select(self, problem: _Loocv, d: int) -> tuple[np.ndarray, dict[str, Any]]:
        lo, hi = self._bounds(problem.theta2)
        if self.sigma2 is not None:
            score = problem.score(np.full(d, self.sigma2))
            return np.full(d, self.sigma2), {
                "sigma2": self.sigma2, "loocv": score, "loocv_curve": None,
                "selection": "fixed", "sigma2_bounds": [lo, hi], "at_boundary": False}
        s2, score, curve, edge = _search_isotropic(problem, d, lo, hi, self.grid_size)
        return np.full(d, s2), {"sigma2": s2, "loocv": score, "loocv_curve": curve,
                                "selection": "loocv", "sigma2_bounds": [lo, hi],
                                "at_boundary": edge}

    def tune(self, x: ArrayLike, kernel: Kernel) -> tuple[np.ndarray, dict[str, Any]]:
        """Choose ``sigma2`` on sample `x` for a fitted Gaussian/ARD `kernel`.

        Returns ``(smoothing, params)`` with ``smoothing = sigma2 * ones(d)``.
        """
        xa, theta2 = self._prepare(x, kernel)
        return self._select(_Loocv.from_data(xa, theta2), xa.shape[1])

    def tune_sqdist(self, sqdist: np.ndarray, *, bandwidth: float,
                    d: int) -> tuple[np.ndarray, dict[str, Any]]:
        """As :meth:`tune`, from the n x n squared-distance matrix (Gaussian kernel).

        For permutation tests: compute the pooled squared distances once and
        pass sub-blocks; each LOOCV evaluation is then O(n^2).
        """
        D2 = np.asarray(sqdist, dtype=np.float64)
        if D2.ndim != 2 or D2.shape[0] != D2.shape[1] or D2.shape[0] < 2:
            raise ValueError(f"`sqdist` must be a square matrix with at least 2 rows; got shape "
                             f"{D2.shape}.")
        d = check_positive_int(d, "d")
        bw = Gaussian(bandwidth=bandwidth)._bw()
        n = D2.shape[0]
        pd = D2[np.triu_indices(n, 1)]
        return self._select(_Loocv(np.full(d, bw * bw), n, None, pd), d)


@dataclass(frozen=True, kw_only=True)
class MMKME(MarginalizedEstimator):
    """Marginalized KME with diagonal corruption ``N(x_i, diag(e_1..e_d))`` (Xia et al., MMKME).

    Parameters
    ----------
    diag : sequence of d floats, optional
        Fixed corruption variances. By default chosen by the LOOCV score
        (MKME eqs. 24-25): L-BFGS-B on ``log e_j`` (analytic gradient, bounds
        ``sigma2_range * theta_j^2``), started at the MKME solution.
    sigma2_range, grid_size
        As in :class:`MKME` (used by the MKME initialisation and the bounds).
    maxiter : int
        Iteration limit of L-BFGS-B (default 500).

    Notes
    -----
    ``emb.params`` keys: ``diag`` (list of d variances); ``loocv``;
    ``loocv_curve`` (the isotropic MKME curve of the initialisation; None when
    ``diag`` is fixed); ``sigma2_init`` and ``loocv_init`` (the MKME start);
    ``converged``, ``n_iter``; ``selection``; ``at_boundary`` (per coordinate).
    One evaluation (score and gradient) costs O(n^2 d) time and O(n^2)
    memory (no n^2 d tensor is stored). Because the search is in ``log e_j``,
    a start at the lower end of the range (e.g. duplicated points) has a
    near-zero gradient and stays there.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators import MMKME
    >>> x = np.random.default_rng(0).normal(size=(30, 2)) * [1.0, 0.2]
    >>> emb = MMKME().fit(x, bandwidth=1.0)
    >>> print(np.round(emb.params["diag"], 3))
    [0.234 0.   ]
    """

    diag: tuple[float, ...] | None = None
    maxiter: int = 500
    name: ClassVar[str] = "mmkme"
    label: ClassVar[str] = "MMKME (marginalized, diagonal noise, LOOCV)"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive_int(self.maxiter, "maxiter")
        if self.diag is not None:
            v = np.atleast_1d(np.asarray(self.diag, dtype=np.float64))
            if v.ndim != 1 or not np.all(np.isfinite(v)) or np.any(v < 0):
                raise ValueError(f"`diag` must be None or a sequence of non-negative finite "
                                 f"variances; got {self.diag!r}.")
            object.__setattr__(self, "diag", tuple(float(u) for u in v))

    def tune(self, x: ArrayLike, kernel: Kernel) -> tuple[np.ndarray, dict[str, Any]]:
        """Choose ``diag`` on sample `x` for a fitted Gaussian/ARD `kernel`."""
        xa, theta2 = self._prepare(x, kernel)
        d = xa.shape[1]
        problem = _Loocv.from_data(xa, theta2)
        lo, hi = self._bounds(theta2)
        if self.diag is not None:
            if len(self.diag) != d:
                raise ValueError(f"`diag` has {len(self.diag)} entries but the data have {d} "
                                 "columns.")
            e = np.array(self.diag)
            return e, {"diag": e.tolist(), "loocv": problem.score(e), "loocv_curve": None,
                       "selection": "fixed"}
        s2, _, curve, _ = _search_isotropic(problem, d, lo, hi, self.grid_size)
        blo = np.log(self.sigma2_range[0] * theta2)
        bhi = np.log(self.sigma2_range[1] * theta2)
        u0 = np.clip(np.full(d, np.log(s2)), blo, bhi)
        f0 = problem.score_and_grad(u0)[0]
        from scipy.optimize import minimize

        res = minimize(problem.score_and_grad, u0, jac=True, method="L-BFGS-B",
                       bounds=list(zip(blo, bhi)),
                       options={"maxiter": self.maxiter, "ftol": 1e-13, "gtol": 1e-10})
        u, f = (res.x, float(res.fun)) if res.fun <= f0 else (u0, f0)
        # rounded (0.01%) so that the choice does not carry the objective's rounding noise,
        # which depends on the order of the rows (exact tests on tied data)
        e = np.array([L.quantise_log(float(v)) for v in np.exp(u)])
        edge = ((u - blo < 1e-3) | (bhi - u < 1e-3)).tolist()
        return e, {"diag": e.tolist(), "loocv": f, "loocv_curve": curve, "selection": "loocv",
                   "sigma2_init": s2, "loocv_init": f0, "converged": bool(res.success),
                   "n_iter": int(res.nit), "at_boundary": edge}


# -- the corrected linearisation (approximation) -----------------------------
def linearized_weights(x: ArrayLike, smoothing: Any, *, kernel: Any = "gaussian",
                       bandwidth: Any = "median", jitter: float = 1e-10) -> np.ndarray:
    """Weights of the O(Sigma) linearisation of MKME/MMKME — an approximation.

    The exact marginalized embedding is not in ``span{k(x_i, .)}``; to first
    order in the corruption variances ``e_j`` its projection is

        beta = (1 - sum_j e_j / (2 theta_j^2)) 1_n + (1/2) K^{-1} K'' 1_n,
        K''_ij = K_ij sum_j e_j (x_i - x_j)_j^2 / theta_j^4,

    i.e. ``(1 - d sigma2/(2 theta^2)) 1_n + (sigma2/(2 theta^4)) K^{-1} K' 1_n`` for
    MKME (``1_n = 1/n``). This corrects MKME Thms 1-2 as printed (wrong
    constant, sign, Hessian and ``e_j^2``; see the docs). ``K^{-1}`` is applied
    by a Cholesky solve of ``K + jitter * I``.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators.marginalized import linearized_weights
    >>> x = np.array([[0.0], [1.0], [3.0]])
    >>> print(np.round(linearized_weights(x, 0.01, bandwidth=1.0), 4))
    [0.3318 0.3334 0.3325]
    """
    xa = as_sample(x, "x", min_size=1)
    kern = resolve_kernel(kernel, bandwidth).fitted_to(xa, name="x")
    _check_gaussian(kern, "linearized_weights")
    if isinstance(jitter, bool) or not isinstance(jitter, numbers.Real) \
            or not np.isfinite(jitter) or jitter < 0:
        raise ValueError(f"`jitter` must be a non-negative finite number; got {shown(jitter)}.")
    n, d = xa.shape
    theta2 = gaussian_bandwidths2(kern, d)
    e = check_variances(smoothing, d, "smoothing")
    K = kern.gram(xa)
    K2 = K * sq_distances(xa * (np.sqrt(e) / theta2))
    from scipy.linalg import cho_factor, cho_solve

    c = cho_factor(K + float(jitter) * np.eye(n), lower=True)
    return (1.0 - 0.5 * float(np.sum(e / theta2))) / n + 0.5 * cho_solve(c, K2.sum(axis=1) / n)
