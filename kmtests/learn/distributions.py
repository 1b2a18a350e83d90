r"""Kernels between distributions via their kernel mean embeddings (SMM, NIPS 2012).

A distribution ``P`` enters through its embedding ``mu_P``; kernels on
distributions are kernels on embeddings (SMM §3):

* level 1 (linear): ``K(P, Q) = <mu_P, mu_Q>``, from samples with any kernel
  mean estimator, ``sum_{p,q} beta_p gamma_q k(x_p, z_q)`` (ICML 2014 §4.2),
  or in closed form for Gaussian distributions (SMM Table 1, see
  :func:`expected_kernel`);
* level 2: ``(<mu_P, mu_Q> + c)^degree`` or
  ``exp(-||mu_P - mu_Q||^2 / (2 sigma^2))`` (SMM writes ``gamma = 1/sigma^2``;
  ARX and JMLR print it without the minus sign).

The Flex-SVM kernel (SMM Lemma 4) is the linear kernel between the Gaussians
``N(x_i, v_i I)`` centred at the training points (:func:`flex_gram`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .._typing import ArrayLike
from .._validation import as_sample, refuse_non_real
from ..estimators import Embedding, KernelMeanEstimator
from ..kernels import Gaussian, Linear, Polynomial, resolve_kernel
from ._common import (check_arrays_memory, check_estimator_param, check_int,
                      check_kernel_finite, check_option, check_real, embedding_arrays)

__all__ = ["DistributionKernel", "Normal", "distribution_gram", "embedding_gram",
           "expected_kernel", "flex_gram", "level2_gram"]

_LEVEL2 = ("gaussian", "linear", "polynomial")


@dataclass(frozen=True, eq=False)
class Normal:
    """A Gaussian distribution ``N(mean, cov)`` given as an input to the kernels.

    Parameters
    ----------
    mean : array_like, shape (d,)
    cov : array_like, shape (d, d), (d,) or scalar
        Covariance matrix, its diagonal, or an isotropic variance.

    Examples
    --------
    >>> from kmtests.learn import Normal
    >>> P = Normal([0.0, 1.0], 0.5)
    >>> print(P.cov)
    [[0.5 0. ]
     [0.  0.5]]
    """

    mean: Any
    cov: Any

    def __post_init__(self) -> None:
        m = np.atleast_1d(_real_array(self.mean, "mean"))
        if m.ndim != 1 or not np.all(np.isfinite(m)):
            raise ValueError("`mean` must be a finite 1-D array.")
        d = m.size
        c = _real_array(self.cov, "cov")
        if c.ndim == 0:
            c = float(c) * np.eye(d)
        elif c.ndim == 1:
            c = np.diag(c) if c.size == d else c
        if c.shape != (d, d) or not np.all(np.isfinite(c)) or not np.allclose(c, c.T):
            raise ValueError(f"`cov` must be a symmetric ({d}, {d}) matrix, its diagonal or a "
                             "scalar variance.")
        if np.linalg.eigvalsh(c)[0] < -1e-10 * max(1.0, float(np.abs(c).max())):
            raise ValueError("`cov` must be positive semi-definite.")
        object.__setattr__(self, "mean", m)
        object.__setattr__(self, "cov", c)


# -- input handling ------------------------------------------------------------------
def _real_array(value: Any, name: str) -> np.ndarray:
    """`value` as a float64 array of real numbers, refused as the samples are
    (:func:`~kmtests._validation.refuse_non_real`: masks, text, dates; complex)."""
    arr = np.asarray(refuse_non_real(value, name))
    if arr.dtype.kind == "c":
        raise TypeError(f"`{name}` must contain real numbers, not complex ones.")
    try:
        return np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be array-like of numbers.") from exc


def _as_inputs(X: Any, name: str) -> tuple[str, list[Any]]:
    """``("samples", [arrays])`` or ``("normal", [Normal])``."""
    if isinstance(X, np.ndarray) and X.ndim == 3:
        X = list(X)
    if not isinstance(X, (list, tuple)) or len(X) == 0:
        raise TypeError(f"`{name}` must be a non-empty list of samples (2-D arrays, one "
                        "per distribution) or of Normal distributions.")
    if all(isinstance(p, Normal) for p in X):
        d = {p.mean.size for p in X}
        if len(d) != 1:
            raise ValueError(f"all distributions in `{name}` must have the same dimension; "
                             f"got {sorted(d)}.")
        return "normal", list(X)
    if any(isinstance(p, Normal) for p in X):
        raise TypeError(f"`{name}` mixes samples and Normal distributions; use one kind.")
    out = [as_sample(p, f"{name}[{i}]", min_size=1) for i, p in enumerate(X)]
    d = {p.shape[1] for p in out}
    if len(d) != 1:
        raise ValueError(f"all samples in `{name}` must have the same number of columns; "
                         f"got {sorted(d)}.")
    return "samples", out


def _stack_normals(P: Sequence[Normal]) -> tuple[np.ndarray, np.ndarray]:
    return np.stack([p.mean for p in P]), np.stack([p.cov for p in P])


# -- closed forms for Gaussian inputs (SMM Table 1, corrected) ---------------------------
def expected_kernel(P: Sequence[Normal], Q: Sequence[Normal] | None = None, *,
                    kernel: Any = "gaussian", bandwidth: Any = 1.0,
                    linear_trace: bool = False) -> np.ndarray:
    r"""``<mu_{P_i}, mu_{Q_j}> = E k(x, z)``, ``x ~ P_i``, ``z ~ Q_j`` for Gaussians.

    Parameters
    ----------
    P, Q : list of Normal
        ``Q = None`` means ``Q = P`` (then ``K(P_i, P_i)`` uses two
        independent draws, like the off-diagonal entries).
    kernel : {"gaussian", "linear", "polynomial"} or Kernel, default="gaussian"
        Gaussian ``exp(-||x - z||^2/(2 s^2))``, linear, or polynomial
        ``(<x, z> + c)^p`` of degree ``p <= 3``.
    bandwidth : float, default=1.0
        ``s`` of the Gaussian kernel (SMM's ``gamma = 1/s^2``).
    linear_trace : bool, default=False
        Linear kernel only: add ``delta_ij tr Sigma_i`` as printed in SMM
        Table 1 (``K(P, P) = E ||x||^2`` instead of ``||m||^2``); it is not
        ``<mu_P, mu_P>`` and is offered only to reproduce the paper.

    Returns
    -------
    ndarray, shape (len(P), len(Q))

    Notes
    -----
    With ``t = m_i'm_j``, ``S = tr(S_i S_j) + m_i'S_j m_i + m_j'S_i m_j``:

    * Gaussian: ``|I + (S_i + S_j)/s^2|^{-1/2}
      exp(-(m_i - m_j)'(S_i + S_j + s^2 I)^{-1}(m_i - m_j)/2)``;
    * degree 2: ``(t + c)^2 + S``;
    * degree 3: ``(t + c)^3 + 3 (t + c) S + 6 m_i' S_j S_i m_j``. SMM Table 1
      prints the last term as ``6 m_i' S_i S_j m_j``, which is wrong unless
      the covariances commute (checked by Monte Carlo in the tests).

    Examples
    --------
    >>> from kmtests.learn import Normal, expected_kernel
    >>> P = [Normal([0.0], 1.0), Normal([1.0], 0.5)]
    >>> print(np.round(expected_kernel(P, kernel="gaussian", bandwidth=1.0), 4))
    [[0.5774 0.5178]
     [0.5178 0.7071]]
    """
    kind_p, P = _as_inputs(P, "P")
    same = Q is None
    kind_q, Q = (kind_p, P) if same else _as_inputs(Q, "Q")
    if kind_p != "normal" or kind_q != "normal":
        raise TypeError("`P` and `Q` must be lists of Normal distributions.")
    mp, Sp = _stack_normals(P)
    mq, Sq = _stack_normals(Q)
    d = mp.shape[1]
    if mq.shape[1] != d:
        raise ValueError(f"`P` and `Q` must have the same dimension; got {d} and "
                         f"{mq.shape[1]}.")
    kern = resolve_kernel(kernel, bandwidth if isinstance(kernel, str)
                          and kernel.lower() == "gaussian" else "median")
    if isinstance(kern, Gaussian):
        return _gaussian_expected(kern, mp, Sp, mq, Sq)
    if isinstance(kern, Linear):
        out = mp @ mq.T
        if linear_trace:
            if not same:
                raise ValueError("`linear_trace` applies to the Gram matrix of one list "
                                 "(Q=None) only.")
            out = out + np.diag(np.trace(Sp, axis1=1, axis2=2))
        return out
    if isinstance(kern, Polynomial) and kern.degree <= 3:
        if linear_trace:
            raise ValueError("`linear_trace` applies to the linear kernel only.")
        return _polynomial_expected(kern, mp, Sp, mq, Sq)
    raise ValueError("`kernel` must be 'gaussian', 'linear' or 'polynomial' (degree <= 3) "
                     f"for Gaussian inputs; got {kern!r}.")


def _gaussian_expected(kern: Gaussian, mp: np.ndarray, Sp: np.ndarray, mq: np.ndarray,
                       Sq: np.ndarray) -> np.ndarray:
    """:func:`expected_kernel` of the Gaussian kernel (means and covariances stacked)."""
    d = mp.shape[1]
    if not kern.is_fitted:
        raise ValueError("`bandwidth` must be a positive number for Gaussian inputs "
                         "(there is no sample to apply the median heuristic to).")
    s2 = float(kern.bandwidth) ** 2
    out = np.empty((len(mp), len(mq)))
    eye = s2 * np.eye(d)
    for i in range(len(mp)):
        M = Sp[i][None] + Sq + eye
        _, logdet = np.linalg.slogdet(M)
        diff = mp[i][None, :] - mq
        quad = np.einsum("jd,jd->j", diff, np.linalg.solve(M, diff[:, :, None])[:, :, 0])
        out[i] = np.exp(-0.5 * (logdet - d * np.log(s2) + quad))
    return out


def _polynomial_expected(kern: Polynomial, mp: np.ndarray, Sp: np.ndarray, mq: np.ndarray,
                         Sq: np.ndarray) -> np.ndarray:
    """:func:`expected_kernel` of a polynomial kernel of degree <= 3."""
    d = mp.shape[1]
    p, c = kern.degree, kern.coef0
    t = mp @ mq.T
    if p == 1:
        return t + c
    d2 = d * d
    tr = Sp.reshape(len(mp), d2) @ Sq.reshape(len(mq), d2).T
    mSm_q = np.einsum("ia,ib->iab", mp, mp).reshape(len(mp), d2) @ Sq.reshape(len(mq), d2).T
    mSm_p = (np.einsum("ja,jb->jab", mq, mq).reshape(len(mq), d2)
             @ Sp.reshape(len(mp), d2).T).T
    S = tr + mSm_q + mSm_p
    if p == 2:
        return (t + c) ** 2 + S
    # kappa_ij = (S_j m_i)'(S_i m_j) = sum_{a,b,c} S_i[a,c] m_i[b] S_j[a,b] m_j[c]
    A = np.einsum("iac,ib->iabc", Sp, mp).reshape(len(mp), d2 * d)
    B = np.einsum("jab,jc->jabc", Sq, mq).reshape(len(mq), d2 * d)
    return (t + c) ** 3 + 3.0 * (t + c) * S + 6.0 * (A @ B.T)


def flex_gram(x: ArrayLike, variances: ArrayLike, y: ArrayLike | None = None,
              variances_y: ArrayLike | None = None, *, bandwidth: float) -> np.ndarray:
    r"""Flex-SVM kernel (SMM Lemma 4): points with their own isotropic variances.

    ``K(x_i, y_j) = (s^2/(s^2 + v_i + w_j))^{d/2}
    exp(-||x_i - y_j||^2 / (2 (s^2 + v_i + w_j)))``, the linear kernel
    between ``N(x_i, v_i I)`` and ``N(y_j, w_j I)`` with the Gaussian kernel
    of bandwidth ``s``. The bandwidth is pair dependent: SMM's "kernel
    ``k_{sigma^2 + 2 sigma_i^2}``" holds only when ``v_i = w_j``, and then only
    up to the factor ``(s^2/(s^2 + 2 v_i))^{d/2}``.

    Parameters
    ----------
    x : array_like, shape (n, d)
    variances : array_like, shape (n,)
    y, variances_y : optional
        Second set of points and variances (default: `x`, `variances`).
    bandwidth : float
        ``s``, the bandwidth of the Gaussian embedding kernel.

    Returns
    -------
    ndarray, shape (n, m)

    Examples
    --------
    >>> from kmtests.learn import flex_gram
    >>> K = flex_gram([[0.0], [1.0]], [0.0, 0.5], bandwidth=1.0)
    >>> print(np.round(K, 4))
    [[1.     0.585 ]
     [0.585  0.7071]]
    """
    xa = as_sample(x, "x", min_size=1)
    v = _real_array(variances, "variances").reshape(-1)
    if v.shape != (xa.shape[0],) or np.any(~np.isfinite(v)) or np.any(v < 0):
        raise ValueError("`variances` must be non-negative numbers, one per row of `x`.")
    if y is None:
        ya, w = xa, v
    else:
        ya = as_sample(y, "y", min_size=1)
        w = v if variances_y is None else _real_array(variances_y, "variances_y").reshape(-1)
        if w.shape != (ya.shape[0],) or np.any(~np.isfinite(w)) or np.any(w < 0):
            raise ValueError("`variances_y` must be non-negative numbers, one per row of `y`.")
    s2 = check_real(bandwidth, "bandwidth", low=0.0) ** 2
    d = xa.shape[1]
    check_arrays_memory(4.0, xa.shape[0], ya.shape[0], "the distances and variances",
                        subject="flex_gram", advice="Compute it in blocks of rows, or use a "
                        "machine with more memory.")
    tot = s2 + v[:, None] + w[None, :]
    d2 = (np.einsum("ij,ij->i", xa, xa)[:, None] + np.einsum("ij,ij->i", ya, ya)[None, :]
          - 2.0 * xa @ ya.T)
    return (s2 / tot) ** (d / 2) * np.exp(-np.maximum(d2, 0.0) / (2.0 * tot))


# -- empirical embeddings ------------------------------------------------------------------
def _smoothed(e: Embedding) -> bool:
    return e.smoothing is not None and bool(np.any(np.asarray(e.smoothing) > 0))


def _same_kernel(a: Any, b: Any) -> bool:
    """Same kernel class and parameters (public ``Kernel.params()``)."""
    return a is b or (type(a) is type(b) and a.params() == b.params())


#: rows of the stacked points per block of :func:`embedding_gram`
_BLOCK = 2048


def embedding_gram(A: Sequence[Embedding], B: Sequence[Embedding] | None = None, *,
                   block: int = _BLOCK) -> np.ndarray:
    """Gram matrix of RKHS inner products ``<A_i, B_j>`` between fitted embeddings.

    All embeddings must share one kernel. Unsmoothed embeddings go through
    blocked Gram matrices of the stacked atoms; smoothed ones (MKME/MMKME)
    pair by pair through :meth:`Embedding.inner`.
    """
    same = B is None
    B = A if B is None else B
    if any(_smoothed(e) for e in (*A, *B)):
        out = np.empty((len(A), len(B)))
        for i, a in enumerate(A):
            for j, b in enumerate(B):
                if same and j < i:
                    out[i, j] = out[j, i]
                else:
                    out[i, j] = a.inner(b)
        return out
    kern = A[0].kernel
    for e in (*A, *B):
        if not _same_kernel(kern, e.kernel):
            raise ValueError("all embeddings must share one kernel (same kernel and "
                             "bandwidth) for their inner products.")
    Pb = np.vstack([e.points for e in B])
    wb = np.concatenate([e.weights for e in B])
    starts_b = np.cumsum(np.array([0] + [e.points.shape[0] for e in B]))[:-1]
    out = np.empty((len(A), len(B)))
    i = 0
    while i < len(A):
        j, rows = i, 0
        while j < len(A) and (j == i or rows + A[j].points.shape[0] <= block):
            rows += A[j].points.shape[0]
            j += 1
        Pa = np.vstack([e.points for e in A[i:j]])
        wa = np.concatenate([e.weights for e in A[i:j]])
        starts_a = np.cumsum([0] + [e.points.shape[0] for e in A[i:j]])[:-1]
        G = kern.gram(Pa, Pb) * wb[None, :]
        G = np.add.reduceat(G, starts_b, axis=1) * wa[:, None]
        out[i:j] = np.add.reduceat(G, starts_a, axis=0)
        i = j
    return out


def level2_gram(G: np.ndarray, diag_a: np.ndarray, diag_b: np.ndarray, *, level2: str,
                bandwidth: float = 1.0, degree: int = 2, coef0: float = 1.0) -> np.ndarray:
    """Apply a level-2 kernel to a Gram matrix of embeddings.

    ``G[i, j] = <mu_i, nu_j>``, ``diag_a[i] = ||mu_i||^2``, ``diag_b[j] = ||nu_j||^2``.
    ``"linear"`` returns `G`; ``"polynomial"`` ``(G + coef0)^degree``;
    ``"gaussian"`` ``exp(-||mu_i - nu_j||^2 / (2 bandwidth^2))``.
    """
    if level2 == "linear":
        return G
    if level2 == "polynomial":
        return (G + coef0) ** degree
    D2 = np.maximum(diag_a[:, None] + diag_b[None, :] - 2.0 * G, 0.0)
    return np.exp(-D2 / (2.0 * bandwidth * bandwidth))


class DistributionKernel:
    """A kernel on distributions fitted on a training list (used by the SMMs).

    ``fit(X)`` resolves the data-driven bandwidths on `X` (the embedding
    bandwidth on the pooled training points, or on the means of Normal
    inputs; the level-2 bandwidth as the median RKHS distance between the
    training embeddings) and embeds `X`; ``gram(Y)`` is the kernel between
    `Y` and the training list, ``gram()`` between the training list and
    itself. Parameters as in :func:`distribution_gram`.
    """

    def __init__(self, *, kernel: Any = "gaussian", bandwidth: Any = "median",
                 estimator: Any = "kme", level2: str = "linear",
                 level2_bandwidth: Any = "median", degree: int = 2, coef0: float = 1.0,
                 linear_trace: bool = False) -> None:
        self.level2 = check_option(level2, "level2", _LEVEL2)
        self.degree = check_int(degree, "degree")
        self.coef0 = check_real(coef0, "coef0", low=0.0, low_inclusive=True)
        if not (isinstance(level2_bandwidth, str) and level2_bandwidth == "median"):
            check_real(level2_bandwidth, "level2_bandwidth", low=0.0)
        self.level2_bandwidth = level2_bandwidth
        self.estimator: KernelMeanEstimator = check_estimator_param(estimator)
        self.kernel_arg, self.bandwidth_arg = kernel, bandwidth
        self.linear_trace = bool(linear_trace)

    def _level1(self, X: list[Any], Y: list[Any] | None) -> np.ndarray:
        if self.kind == "normal":
            return expected_kernel(X, Y, kernel=self.kernel_, linear_trace=(
                self.linear_trace and Y is None))
        return embedding_gram(X, Y)

    def _embed(self, samples: list[Any]) -> list[Embedding]:
        return [self.estimator.fit(x, kernel=self.kernel_) for x in samples]

    def _check_memory(self, sizes: list[int], n_train: int, subject: str) -> None:
        """Refuse up front what does not fit: each sample's embedding, one at a time, and
        the blocks of the Gram matrix of the stacked points (:func:`embedding_gram`: up to
        2048 rows against all `n_train` training points, three such arrays)."""
        big = max(sizes)
        rows = max(min(_BLOCK, sum(sizes)), big)
        embed = embedding_arrays(self.estimator) * 8.0 * big * big
        if embed >= 3.0 * 8.0 * rows * n_train:
            check_arrays_memory(embedding_arrays(self.estimator), big, big,
                                f"the {self.estimator.name} embedding of the largest sample",
                                subject=subject)
        else:
            check_arrays_memory(3.0, rows, n_train, "the Gram matrix of the samples' points "
                                "(in blocks of rows)", subject=subject,
                                advice="Use fewer or smaller samples (subsample their "
                                "points), or a machine with more memory.")

    def fit(self, X: Any, name: str = "X") -> "DistributionKernel":
        self.kind, items = _as_inputs(X, name)
        if self.kind == "normal":
            pooled = np.stack([p.mean for p in items])
            if self.linear_trace and self.level2 != "linear":
                raise ValueError("`linear_trace` works with level2='linear' only.")
        else:
            if self.linear_trace:
                raise ValueError("`linear_trace` applies to Normal inputs only.")
            sizes = [x.shape[0] for x in items]
            self._check_memory(sizes, sum(sizes), "this fit")
            pooled = np.vstack(items)
        self.d = pooled.shape[1]
        self.kernel_ = resolve_kernel(self.kernel_arg, self.bandwidth_arg).fitted_to(
            pooled, name=name)
        if self.kind == "samples":
            check_kernel_finite(self.kernel_, pooled, name)
        self.items_ = items if self.kind == "normal" else self._embed(items)
        G = self._level1(self.items_, None)
        self.diag_ = np.diag(G).copy()
        if self.level2 == "gaussian" and isinstance(self.level2_bandwidth, str):
            D2 = np.maximum(self.diag_[:, None] + self.diag_[None, :] - 2.0 * G, 0.0)
            iu = np.triu_indices(G.shape[0], 1)
            med = float(np.median(D2[iu])) if iu[0].size else 0.0
            if not med > 0:
                raise ValueError("the median heuristic gives a zero `level2_bandwidth` (fewer "
                                 "than two distinct distributions); pass a positive number.")
            self.level2_bandwidth_ = float(np.sqrt(med))
        else:
            self.level2_bandwidth_ = float(self.level2_bandwidth) \
                if not isinstance(self.level2_bandwidth, str) else float("nan")
        self.gram_ = self._apply(G, self.diag_, self.diag_)
        return self

    def _apply(self, G: np.ndarray, da: np.ndarray, db: np.ndarray) -> np.ndarray:
        return level2_gram(G, da, db, level2=self.level2, bandwidth=self.level2_bandwidth_,
                           degree=self.degree, coef0=self.coef0)

    def transform_items(self, Y: Any, name: str = "X") -> list[Any]:
        kind, items = _as_inputs(Y, name)
        if kind != self.kind:
            raise TypeError(f"`{name}` must hold the same kind of inputs as the training list "
                            f"({'Normal distributions' if self.kind == 'normal' else 'samples'}).")
        dim = items[0].mean.size if kind == "normal" else items[0].shape[1]
        if dim != self.d:
            raise ValueError(f"`{name}` has dimension {dim}, but the kernel was fitted on "
                             f"dimension {self.d}.")
        if kind == "normal":
            return items
        self._check_memory([x.shape[0] for x in items],
                           sum(e.points.shape[0] for e in self.items_), "this Gram matrix")
        check_kernel_finite(self.kernel_, np.vstack(items), name)
        return self._embed(items)

    def gram(self, Y: Any = None, name: str = "X") -> np.ndarray:
        """Kernel between `Y` (rows) and the training list (columns)."""
        if Y is None:
            return self.gram_
        items = self.transform_items(Y, name)
        G = self._level1(items, self.items_)
        if self.level2 == "gaussian":
            dy = np.array([float(v) for v in np.diag(self._level1_diag(items))])
        else:
            dy = np.zeros(len(items))
        return self._apply(G, dy, self.diag_)

    def _level1_diag(self, items: list[Any]) -> np.ndarray:
        if self.kind == "normal":
            return np.diag([float(expected_kernel([p], kernel=self.kernel_)[0, 0])
                            for p in items])
        return np.diag([e.norm2() for e in items])


def distribution_gram(X: Any, Y: Any = None, *, kernel: Any = "gaussian",
                      bandwidth: Any = "median", estimator: Any = "kme",
                      level2: str = "linear", level2_bandwidth: Any = "median",
                      degree: int = 2, coef0: float = 1.0) -> np.ndarray:
    r"""Gram matrix of a kernel on distributions over lists of samples.

    Each sample ``X[i]`` (an ``(n_i, d)`` array) is embedded by `estimator`;
    ``Normal`` inputs use the closed forms of :func:`expected_kernel`.

    Parameters
    ----------
    X : list of array_like or list of Normal
        The distributions (rows of the result).
    Y : list, optional
        Second list (columns); default `X`. Data-driven bandwidths are
        always resolved on `X`.
    kernel : str or Kernel, default="gaussian"
        Embedding (level-1) kernel.
    bandwidth : "median" or float, default="median"
        Its bandwidth; ``"median"`` on the pooled points of `X` (the means
        for Normal inputs).
    estimator : str or KernelMeanEstimator, default="kme"
        Kernel mean estimator applied to every sample (its parameters are
        tuned on each sample).
    level2 : {"linear", "polynomial", "gaussian"}, default="linear"
        ``<mu_i, mu_j>``, ``(<mu_i, mu_j> + coef0)^degree`` or
        ``exp(-||mu_i - mu_j||^2 / (2 level2_bandwidth^2))``.
    level2_bandwidth : "median" or float, default="median"
        ``"median"``: the median RKHS distance between the embeddings of `X`.
    degree : int, default=2
    coef0 : float, default=1.0

    Returns
    -------
    ndarray, shape (len(X), len(Y))

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.learn import distribution_gram
    >>> gen = np.random.default_rng(0)
    >>> bags = [gen.normal(m, 1.0, size=(50, 2)) for m in (0.0, 0.0, 3.0)]
    >>> K = distribution_gram(bags, kernel="gaussian", bandwidth=1.0, estimator="skmse")
    >>> print(np.round(K, 3))
    [[0.324 0.318 0.034]
     [0.318 0.324 0.023]
     [0.034 0.023 0.279]]
    """
    dk = DistributionKernel(kernel=kernel, bandwidth=bandwidth, estimator=estimator,
                            level2=level2, level2_bandwidth=level2_bandwidth, degree=degree,
                            coef0=coef0).fit(X)
    if Y is None:
        return dk.gram()
    return dk.gram(Y, name="Y").T
