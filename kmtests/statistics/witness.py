"""Where two distributions differ: witness functions and per-feature relevance.

The *witness function* of an MMD test is the difference of the two estimated
kernel mean embeddings,

    w(t) = mu_x(t) - mu_y(t) = sum_i a_i k(x_i, t) - sum_j b_j k(y_j, t),

with the weights ``a``, ``b`` of the estimator the test used (``1/n`` for the
KME; ``c/n`` for the uniform shrinkage estimators, ``c`` chosen on each sample
or on the pooled sample as the test chose it; the weights of a spectral filter
estimator; for the marginalized estimators the KME under the test's smoothed
kernel ``c k'``). It is the function of the RKHS unit ball, up to its norm,
that separates the two estimated embeddings most: ``MMD^2_b = ||w||^2`` and
``w / ||w||`` attains the MMD. Where ``w > 0`` the first sample has more mass
than the second (as the kernel sees it).

The HSIC analogue is the witness over pairs ``(s, t)``: the estimated embedding
of the centred cross-covariance,

    w(s, t) = sum_i beta_i (k(x_i, s) - mu_x(s)) (l(y_i, t) - mu_y(t)),

which for the KME (``beta_i = 1/n``) is ``mu_XY(s, t) - mu_X(s) mu_Y(t)``; its
squared norm is ``HSIC_b``.

A witness object keeps references to the data (no copy: the pooled sample of a
two-sample test, ``n d`` floats; the two variables of an independence test),
the fitted kernels and the estimator's rule; the weights are computed when
first asked for (one Gram matrix per sample, ``n_x^2 + n_y^2`` kernel values;
``n^2`` for HSIC) and kept (``n`` floats).

:func:`feature_relevance` answers *which features*: one permutation test per
coordinate, Holm-adjusted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import as_sample
from ..estimators._rules import General, Rule
from ..kernels import Gaussian, Kernel

__all__ = ["NO_POINTS", "HSICWitness", "MMDWitness", "feature_relevance", "holm"]

#: why a test on precomputed kernel matrices has no witness
NO_POINTS = ("the test was given kernel matrices (kernel='precomputed'), not points: a "
             "witness function needs the points and the kernel to evaluate it elsewhere")


def _rule_weights(rule: Rule, G: np.ndarray) -> np.ndarray:
    """The weights the rule gives the sample whose Gram matrix is `G` (as in the engines)."""
    n = G.shape[0]
    if isinstance(rule, General):
        return np.asarray(rule.weights(G)[0], dtype=np.float64)
    rho = float(G.sum()) / (n * n)
    v = float(np.trace(G)) / n - rho
    c = float(np.asarray(rule(np.array(rho), np.array(max(v, 0.0)), n)).reshape(-1)[0])
    return np.full(n, c / n)


@dataclass(frozen=True, eq=False)
class MMDWitness:
    """The witness function ``mu_x - mu_y`` of a two-sample test (see the module docs).

    Attributes
    ----------
    kernel : Kernel
        The kernel the embeddings live in (fitted; for the marginalized
        estimators the smoothed kernel ``k'``).
    z : ndarray, shape (n_x + n_y, d)
        The pooled sample, the first `n_x` rows the first sample (a reference).
    n_x : int
    rule : Rule
        The estimator's weight rule as the test applied it (pooled tuning:
        the parameters held fixed).
    scale : float
        The factor ``c`` of a marginalized kernel ``c k'`` (1 otherwise).
    what : str
        The statistic, for messages.
    """

    kernel: Kernel
    z: np.ndarray
    n_x: int
    rule: Rule
    scale: float = 1.0
    what: str = "MMD"
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def dim(self) -> int:
        """The number of columns of the data."""
        return int(self.z.shape[1])

    @property
    def x(self) -> np.ndarray:
        """The first sample."""
        return self.z[:self.n_x]

    @property
    def y(self) -> np.ndarray:
        """The second sample."""
        return self.z[self.n_x:]

    def weights(self) -> tuple[np.ndarray, np.ndarray]:
        """The embedding weights ``(a, b)`` of the two samples."""
        if "a" not in self._cache:
            self._cache["a"] = _rule_weights(self.rule, self.scale * self.kernel.gram(self.x))
            self._cache["b"] = _rule_weights(self.rule, self.scale * self.kernel.gram(self.y))
        return self._cache["a"], self._cache["b"]

    def __call__(self, t: Any) -> np.ndarray:
        """``w(t)`` at the rows of `t` (shape ``(m, d)``, or ``(m,)`` for 1-d data)."""
        t = as_sample(t, "points", min_size=1)
        if t.shape[1] != self.dim:
            raise ValueError(f"`points` must have {self.dim} column(s), as the data; got "
                             f"{t.shape[1]}.")
        a, b = self.weights()
        return self.scale * (self.kernel.gram(t, self.x) @ a - self.kernel.gram(t, self.y) @ b)

    def norm2(self) -> float:
        """``||w||^2`` in the RKHS: the V-form statistic with these weights."""
        a, b = self.weights()
        k = self.kernel
        return self.scale * float(a @ k.gram(self.x) @ a + b @ k.gram(self.y) @ b
                                  - 2.0 * a @ k.gram(self.x, self.y) @ b)


@dataclass(frozen=True, eq=False)
class HSICWitness:
    """The witness ``w(s, t)`` of an independence test (see the module docs).

    Attributes
    ----------
    kernel_x, kernel_y : Kernel
        The kernels evaluated (marginalized estimators: the smoothed ones).
    x, y : ndarray
        The two variables (references).
    rule : Rule
        The estimator's weight rule as the test applied it.
    scales : tuple of float
        The factors of marginalized kernels (1 otherwise).
    """

    kernel_x: Kernel
    kernel_y: Kernel
    x: np.ndarray
    y: np.ndarray
    rule: Rule
    scales: tuple[float, float] = (1.0, 1.0)
    what: str = "HSIC"
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def dims(self) -> tuple[int, int]:
        """The numbers of columns of x and y."""
        return int(self.x.shape[1]), int(self.y.shape[1])

    def _grams(self) -> tuple[np.ndarray, np.ndarray]:
        return (self.scales[0] * self.kernel_x.gram(self.x),
                self.scales[1] * self.kernel_y.gram(self.y))

    def weights(self) -> np.ndarray:
        """The weights ``beta`` of the pairs (the estimator on ``Kc o Lc``)."""
        if "beta" not in self._cache:
            K, L = self._grams()
            Kc, Lc = _centre(K), _centre(L)
            self._cache["beta"] = _rule_weights(self.rule, Kc * Lc)
        return self._cache["beta"]

    def _centred_rows(self, kern: Kernel, data: np.ndarray, scale: float, t: np.ndarray
                      ) -> np.ndarray:
        G = scale * kern.gram(t, data)  # (m, n)
        return G - G.mean(axis=1, keepdims=True)

    def __call__(self, s: Any, t: Any) -> np.ndarray:
        """``w(s_i, t_i)`` at the pairs of rows of `s` (x-points) and `t` (y-points)."""
        s = as_sample(s, "x_points", min_size=1)
        t = as_sample(t, "y_points", min_size=1)
        dx, dy = self.dims
        if s.shape[1] != dx or t.shape[1] != dy:
            raise ValueError(f"the points must have {dx} (x) and {dy} (y) column(s), as the "
                             f"data; got {s.shape[1]} and {t.shape[1]}.")
        if s.shape[0] != t.shape[0]:
            raise ValueError(f"`x_points` and `y_points` must have as many rows (pairs); got "
                             f"{s.shape[0]} and {t.shape[0]}.")
        A = self._centred_rows(self.kernel_x, self.x, self.scales[0], s)
        B = self._centred_rows(self.kernel_y, self.y, self.scales[1], t)
        return np.asarray((A * B) @ self.weights())

    def grid(self, s: Any, t: Any) -> np.ndarray:
        """``w(s_i, t_j)`` on the grid of all pairs: shape ``(len(s), len(t))``."""
        s = as_sample(s, "x_points", min_size=1)
        t = as_sample(t, "y_points", min_size=1)
        A = self._centred_rows(self.kernel_x, self.x, self.scales[0], s)
        B = self._centred_rows(self.kernel_y, self.y, self.scales[1], t)
        return np.asarray((A * self.weights()) @ B.T)

    def norm2(self) -> float:
        """``||w||^2``: ``beta' (Kc o Lc) beta``, the V-form statistic with these weights."""
        K, L = self._grams()
        beta = self.weights()
        return float(beta @ (_centre(K) * _centre(L)) @ beta)


def _centre(K: np.ndarray) -> np.ndarray:
    return K - K.mean(axis=0) - K.mean(axis=1)[:, None] + K.mean()


# -- which features ---------------------------------------------------------------------------
def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error rate, any dependence):
    statsmodels' ``multipletests(p, method="holm")``, as the k-sample test's post-hoc
    table uses it."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p, dtype=np.float64)
    if p.size == 0:
        return p.copy()
    return np.asarray(multipletests(p, method="holm")[1], dtype=np.float64)


def _median_gaussian(v: np.ndarray) -> Kernel:
    return Gaussian(bandwidth="median").fitted_to(v, name="the feature")


def _perm_pvalues(T: np.ndarray, null: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Upper-tail permutation p-values ``(1 + #{null >= T}) / (1 + B)`` (per column) and
    the standardised statistics ``(T - mean) / sd`` of the null."""
    B = null.shape[0]
    tol = 100 * np.finfo(np.float64).eps * np.maximum(np.abs(T), np.abs(null).max(axis=0))
    count = np.sum(null >= T - tol, axis=0)
    sd = null.std(axis=0)
    z = np.where(sd > 0, (T - null.mean(axis=0)) / np.where(sd > 0, sd, 1.0), 0.0)
    return (1.0 + count) / (1.0 + B), z


def _mmd_u(K: np.ndarray, s: np.ndarray, n_x: int) -> np.ndarray:
    """``MMD^2_u`` of each arrangement: rows of `s` are the +1/n_x, -1/n_y sign vectors."""
    n = K.shape[0]
    n_y = n - n_x
    Kz = K - np.diag(np.diag(K))
    q = np.einsum("bi,ij,bj->b", s, Kz, s)  # within terms without the diagonal, cross terms
    # rescale the within terms from 1/n^2 to 1/(n(n-1)) (cross terms stay 1/(n_x n_y))
    pos = s > 0
    wx = np.einsum("bi,ij,bj->b", pos * 1.0, Kz, pos * 1.0)
    wy = np.einsum("bi,ij,bj->b", ~pos * 1.0, Kz, ~pos * 1.0)
    return (q + wx * (1 / (n_x * (n_x - 1)) - 1 / n_x ** 2)
            + wy * (1 / (n_y * (n_y - 1)) - 1 / n_y ** 2))


def feature_relevance(kind: str, a: np.ndarray, b: np.ndarray, n_resamples: int,
                      rng: np.random.Generator, names: list[str] | None = None
                      ) -> dict[str, np.ndarray | list[str]]:
    """One permutation test per feature, Holm-adjusted (``res.relevance()`` of the results).

    Two-sample (`kind` ``"mmd"``; `a`, `b` the samples): for each column ``j``,
    ``MMD^2_u`` of a Gaussian kernel with the median bandwidth of the pooled
    column, its permutation p-value; the null hypothesis of feature ``j`` is
    that its two *marginal* distributions are equal. Independence (``"hsic"``;
    `a`, `b` the variables x and y): for each column of x, ``HSIC_b`` of that
    column (Gaussian, median bandwidth) with the whole of y (the test's y
    kernel is not used: a Gaussian with the median bandwidth of each whole
    variable), and for each column of y the same with the whole of x; the null
    hypothesis is the independence of that feature and the other variable.
    The same `n_resamples` permutations serve every feature.

    Returns a dict of columns: ``feature``, ``statistic``, ``z`` (the
    statistic standardised by its permutation mean and sd), ``pvalue``,
    ``pvalue_holm``, ``rank`` (1 = most relevant: ordered by the Holm
    p-value, then by ``z``).
    """
    if kind == "mmd":
        z = np.vstack([a, b])
        n_x, n = a.shape[0], z.shape[0]
        perms = np.vstack([np.arange(n)] + [rng.permutation(n) for _ in range(n_resamples)])
        labels = np.zeros((perms.shape[0], n))
        rows = np.arange(perms.shape[0])[:, None]
        labels[rows, perms[:, :n_x]] = 1.0 / n_x
        labels[rows, perms[:, n_x:]] = -1.0 / (n - n_x)
        stats = []
        for j in range(z.shape[1]):
            col = z[:, j:j + 1]
            K = _median_gaussian(col).gram(col)
            stats.append(np.concatenate([
                _mmd_u(K, labels[i:i + 256], n_x) for i in range(0, labels.shape[0], 256)]))
        feats = names or [f"x[{j}]" for j in range(z.shape[1])]
    elif kind == "hsic":
        n = a.shape[0]
        perms = np.vstack([np.arange(n)] + [rng.permutation(n) for _ in range(n_resamples)])
        stats, feats = [], []
        whole = {"x": _centre(_median_gaussian(a).gram(a)),
                 "y": _centre(_median_gaussian(b).gram(b))}
        for role, data, other in (("x", a, "y"), ("y", b, "x")):
            L = whole[other]
            for j in range(data.shape[1]):
                col = data[:, j:j + 1]
                Kc = _centre(_median_gaussian(col).gram(col))
                vals = np.empty(perms.shape[0])
                for i, p in enumerate(perms):  # the other variable's pairing permuted
                    vals[i] = np.einsum("ij,ij->", Kc, L[np.ix_(p, p)]) / n ** 2
                stats.append(vals)
                feats.append(f"{role}[{j}]")
        if names is not None:
            feats = names
    else:
        raise ValueError(f"no feature relevance for a {kind!r} statistic.")
    S = np.column_stack(stats)
    T, null = S[0], S[1:]
    p, zscore = _perm_pvalues(T, null)
    ph = holm(p)
    order = np.lexsort((-zscore, ph))
    rank = np.empty(T.size, dtype=np.int64)
    rank[order] = np.arange(1, T.size + 1)
    return {"feature": list(feats), "statistic": T, "z": zscore, "pvalue": p,
            "pvalue_holm": ph, "rank": rank}
