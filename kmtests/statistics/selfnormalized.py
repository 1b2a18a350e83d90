r"""The self-normalised MMD of two windows of one series (Shao & Zhang, 2010).

For the windows ``x = (z_1, ..., z_m)`` and ``y = (z_{m+1}, ..., z_{m+k})`` of one
series (rows in time order) and the kernel's feature map ``phi``, the statistic is

.. math::

    T = \frac{\|\bar\phi_x - \bar\phi_y\|^2}{V}, \qquad
    V = \frac{1}{m^3} \sum_{j=1}^{m} \Big\| \sum_{t \le j} (\phi(x_t) - \bar\phi_x)
        \Big\|^2 + \frac{1}{k^3} \sum_{j=1}^{k} \Big\| \sum_{t \ge j}
        (\phi(y_t) - \bar\phi_y) \Big\|^2,

``MMD^2_b`` over the self-normaliser of Shao & Zhang (2010): the squared norms of the
partial sums of each window's centred features (forward in the first window, backward
in the second, as their change-point statistic at a known break). Both the numerator
and ``V`` grow with the long-run variance of the features, so their ratio does not
depend on its size: a null that gets the dependence only partly right (block
permutations whose blocks are too short, so that neighbouring blocks still correlate)
errs in both and the errors cancel, in part. In matrices, with ``K`` the pooled Gram
matrix, ``c = (1/m, ..., -1/k, ...)`` and ``Omega`` the fixed matrix ``H W H`` (``H``
centres each window, ``W`` counts the partial sums a pair of points shares, over
``m^3`` or ``k^3``): ``T = c' K c / <K, Omega>``. It is computed from features ``F``
with ``F F' = K`` (the eigenvectors of ``K`` above ``1e-13`` of its largest eigenvalue,
:func:`gram_features`): an arrangement ``p`` of the rows (block permutations:
``blocks="auto"``) gives the statistic of the rows ``F[p]`` by cumulative sums, ``O(n r)``
each for ``r`` features, after one ``O(n^3)`` eigendecomposition.

The null is the one the test is given: the statistic offers only its values
(permutations, block permutations: ``blocks="auto"``); with plain permutations it is an
exact test for exchangeable data like any other statistic, but ``V`` reads the rows in
their order and is meant for a series. Measured on the windows cells of
``benchmarks/dependent_level.py`` (``benchmarks/README.md``, "Dependent data"; 5%,
``blocks="auto"``, the same data sets as ``MMD^2_u``): inside the 99% band in 13 of 16
cells, as ``MMD^2_u`` (outside: ARFIMA at n = 200 and 500, AR(1) with phi = 0.95 at
n = 200, 31/300 against ``MMD^2_u``'s 26/300); below ``MMD^2_u`` in every cell at
n = 500 (ARFIMA 23/200 against 32/200); power on a shift of the second window no higher
(AR(1), phi = 0.8, n = 200: 71/300 against 69/300; n = 500: 71/200 against 83/200). A
wild bootstrap of the ratio (AR(1) multipliers of the automatic length times the
window-centred features, numerator and normaliser recomputed) did not keep the level
(36/300 at phi = 0.8, 41/300 at phi = 0.95), so ``method="wild"`` is not offered.

References
----------
Shao, X. and Zhang, X. (2010). Testing for change points in time series. JASA 105,
1228-1240. Shao, X. (2010). A self-normalized approach to confidence interval
construction in time series. JRSS B 72, 343-366.

Examples
--------
>>> import numpy as np
>>> from kmtests.statistics.selfnormalized import normaliser_matrix
>>> om = normaliser_matrix(3, 2)
>>> om.shape, bool(np.allclose(om.sum(axis=0), 0.0))   # each window centred
((5, 5), True)
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

import numpy as np

from ..engines import Engine, Requirements, Values
from ..estimators import KME, KernelMeanEstimator
from ._base import Prepared, Statistic

__all__ = ["SelfNormalizedMMD", "gram_features", "normaliser_matrix", "window_parts"]


def normaliser_matrix(m: int, k: int) -> np.ndarray:
    """``Omega`` with ``<K, Omega> = V`` (module docs) for windows of `m` and `k` rows:
    block-diagonal, ``H_m W_m H_m / m^3`` (``W_m[s, t] = m + 1 - max(s, t)``, the forward
    partial sums that hold both ``s`` and ``t``) and ``H_k W'_k H_k / k^3``
    (``W'_k[s, t] = min(s, t)``, the backward ones), ``H`` the centring matrix."""
    out = np.zeros((m + k, m + k))
    for lo, size, forward in ((0, m, True), (m, k, False)):
        u = np.arange(1, size + 1)
        w = (size + 1 - np.maximum.outer(u, u)) if forward else np.minimum.outer(u, u)
        w = w.astype(np.float64)
        w -= w.mean(axis=0)                    # H W H: centre the columns, then the rows
        w -= w.mean(axis=1)[:, None]
        out[lo:lo + size, lo:lo + size] = w / float(size) ** 3
    return out


def gram_features(K: np.ndarray, rtol: float = 1e-13) -> np.ndarray:
    """Features ``F`` with ``F F' = K`` (to ``rtol`` of its largest eigenvalue): the
    eigenvectors of the symmetric `K` scaled by the square roots of its eigenvalues above
    ``rtol`` times the largest (a Gaussian Gram matrix of a series has few: the
    statistic of an arrangement then costs ``O(n r)``, not ``O(n^2)``)."""
    vals, vecs = np.linalg.eigh(K)
    keep = vals > rtol * max(float(vals[-1]), 0.0)
    if not keep.any():
        return np.zeros((K.shape[0], 1))
    return np.ascontiguousarray(vecs[:, keep] * np.sqrt(vals[keep]))


def window_parts(f: np.ndarray, m: int) -> tuple[float, float]:
    """``(||mean f_x - mean f_y||^2, V)`` for the rows of `f` (features in time order;
    the first `m` the first window): the numerator and the normaliser of the module
    docs."""
    fx, fy = f[:m], f[m:]
    k = fy.shape[0]
    d = fx.mean(axis=0) - fy.mean(axis=0)
    cx = np.cumsum(fx - fx.mean(axis=0), axis=0)
    cy = np.cumsum((fy - fy.mean(axis=0))[::-1], axis=0)
    v = float(np.einsum("ij,ij->", cx, cx)) / m ** 3 + float(np.einsum("ij,ij->", cy, cy)) / k ** 3
    return float(d @ d), v


class SelfNormalizedMMD(Statistic):
    """``MMD^2_b`` of two windows of a series over Shao & Zhang's self-normaliser (see the
    module docs); registered as ``"selfnormalized"`` for the two-sample problem.

    Parameters
    ----------
    kernel : Kernel
        The kernel (its bandwidth may be ``"median"``: fitted on the pooled series).
    """

    name: ClassVar[str] = "selfnormalized"
    problem_kind: ClassVar[str] = "two_sample"
    symbol: ClassVar[str] = "MMD^2_b/V_SN"
    family_name: ClassVar[str] = "self-normalised MMD"

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.estimator = KME()

    def __repr__(self) -> str:
        return f"SelfNormalizedMMD(kernel={self.kernel!r})"

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        return cls(kernels["kernel"])

    def describe(self, prepared: Prepared) -> str:
        return (f"{self.label()}, the squared MMD of the windows over the partial sums of "
                "their centred features (Shao & Zhang's self-normaliser)")

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        return Requirements("split", {"kernel": self.kernel},
                            gram="the self-normalised MMD needs (its normaliser reads the "
                                 "Gram matrix along each window)")

    def check(self, problem: Any, tuning: str) -> None:
        if min(problem.n_x, problem.n_y) < 2:
            raise ValueError(f"the self-normalised MMD needs at least 2 observations in each "
                             f"window; got {problem.n_x} and {problem.n_y}.")

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        m = problem.n_x
        if problem.z is None:
            kern, K = self.kernel, np.asarray(problem.K, dtype=np.float64)
        else:
            kern = self.kernel.fitted_to(problem.z, name="the pooled sample")
            K = kern.gram(problem.z)
        feats = gram_features(K)
        # the size of the terms: |c' K c| <= 4 max|K|, and V's (over m^3, k^3) likewise
        kmax = float(np.abs(K).max())

        def ratio(p: np.ndarray | None) -> tuple[float, float]:
            num, den = window_parts(feats if p is None else feats[p], m)
            if not den > 1e-12 * kmax:
                return np.inf, np.inf
            t = num / den
            return t, (4.0 + 4.0 * abs(t)) * kmax / den

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            out = np.array([ratio(p) for p in perms]).reshape(-1, 2)
            return Values(out[:, 0], out[:, 1])

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            t, s = ratio(None)
            if not np.isfinite(t):
                raise ValueError("the self-normalised MMD needs data that vary within each "
                                 "window (its normaliser, the partial sums of the centred "
                                 "features, is 0).")
            return Values(np.array([t]), np.array([s])), {}

        return Prepared(values, observed, {"kernel": kern},
                        what=f"{self.label()} with {kern.phrase()}",
                        columns=[(kern.name, {"form": "V/V_SN"})],
                        witness="the self-normalised MMD's witness is the MMD's: run "
                                "two_sample_test(..., statistic='biased') for it")
