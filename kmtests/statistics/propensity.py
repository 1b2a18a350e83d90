r"""The propensity ``e(x) = P(group 2 | x)`` of a conditional two-sample test, cross-fitted.

The conditional permutations of the group labels
(:class:`~kmtests.problems.conditional_two_sample.Relabelling`) draw label ``i`` as group 2
with probability ``e(x_i)``. It is estimated by penalised logistic regression:

* ``"kernel"`` (default): kernel logistic regression with the covariates' kernel, on the
  features ``F = U diag(kappa)^{1/2}`` of the centred Gram matrix ``U diag(kappa) U'``
  (the eigenvalues above ``1e-10`` of the largest, at most :data:`MAX_FEATURES`): the
  penalty ``rho ||beta||^2`` is then the RKHS norm of the log-odds (an unpenalised
  intercept beside it);
* ``"linear"``: logistic regression on the standardised covariates (ridge penalty);
* an array of ``n1 + n2`` values in (0, 1): known propensities (a randomised design),
  used as given.

**Cross-fitting.** The pairs are cut into :data:`FOLDS` folds (each group shuffled and
dealt round the folds, from the ``"propensity"`` child of the test's `rng`); the
propensity of a pair is predicted by the regression fitted on the other folds, so a pair's
own label never enters its propensity. The penalty is the one of the grid
``rho = n_train * s * 10^[-5, ..., 0]`` (``s`` the mean squared feature norm) whose
out-of-fold predictions have the smallest log-loss.

**Clipping.** The propensities are clipped to ``[clip, 1 - clip]`` (default ``clip =
0.01``), so that no pair's label is fixed by the estimate; the report states the clipping
and how many pairs it moved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._rng import child
from .._typing import SeedLike

__all__ = ["FOLDS", "MAX_FEATURES", "PROPENSITY_MODELS", "Propensity", "check_clip",
           "estimate_propensity"]

#: the propensity models by name
PROPENSITY_MODELS = ("kernel", "linear")
#: folds of the cross-fitting
FOLDS = 5
#: the most kernel features of the kernel logistic regression
MAX_FEATURES = 60
#: the grid of penalties, relative to the mean squared feature norm
_PENALTIES = 10.0 ** np.arange(-5.0, 0.5, 1.0)


@dataclass(frozen=True)
class Propensity:
    """Estimated (or given) propensities and how they were obtained.

    Attributes
    ----------
    values : ndarray, shape (n,)
        ``P(group 2 | x_i)``, clipped.
    model : str
        ``"kernel"``, ``"linear"`` or ``"given"``.
    clip : float
    clipped : int
        How many values the clipping moved.
    penalty : float or None
        The chosen penalty (relative to the mean squared feature norm).
    """

    values: np.ndarray
    model: str
    clip: float
    clipped: int
    penalty: float | None

    def describe(self) -> str:
        how = ("known propensities" if self.model == "given" else
               f"{self.model} logistic regression, cross-fitted in {FOLDS} folds")
        return f"{how}, clipped to [{self.clip:g}, {1 - self.clip:g}]"


def check_clip(clip: object) -> float:
    """`clip` as a float in [0, 0.5)."""
    if isinstance(clip, bool) or not isinstance(clip, (int, float, np.floating)) or \
            not 0.0 <= float(clip) < 0.5:
        raise ValueError(f"`clip` must be a number in [0, 0.5); got {clip!r}.")
    return float(clip)


def _features(model: str, x: np.ndarray, kernel: object) -> np.ndarray:
    if model == "linear":
        sd = x.std(axis=0)
        return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    Kc = kernel.centred_gram(x, name="x").Kc  # type: ignore[attr-defined]
    kappa, U = np.linalg.eigh(0.5 * (Kc + Kc.T))
    order = np.argsort(kappa)[::-1]
    kappa, U = kappa[order], U[:, order]
    keep = kappa > 1e-10 * max(float(kappa[0]), 0.0)
    keep[MAX_FEATURES:] = False
    return U[:, keep] * np.sqrt(kappa[keep])


def _fit_logistic(F: np.ndarray, t: np.ndarray, rho: float, beta0: np.ndarray,
                  iters: int = 50) -> np.ndarray:
    """Penalised logistic regression by Newton's method: the coefficients ``(b0, beta)``
    minimising ``sum logloss + rho/2 ||beta||^2`` (intercept not penalised)."""
    A = np.hstack([np.ones((F.shape[0], 1)), F])
    pen = np.full(A.shape[1], rho)
    pen[0] = 0.0
    beta = beta0.copy()
    for _ in range(iters):
        eta = A @ beta
        p = 1.0 / (1.0 + np.exp(-eta))
        w = np.maximum(p * (1.0 - p), 1e-10)
        grad = A.T @ (p - t) + pen * beta
        H = (A * w[:, None]).T @ A + np.diag(pen) + 1e-10 * np.eye(A.shape[1])
        step = np.linalg.solve(H, grad)
        beta -= step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return beta


def _folds(labels: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Each pair's fold: every group shuffled and dealt round the folds."""
    fold = np.empty(labels.size, dtype=np.int64)
    for g in (0, 1):
        idx = np.flatnonzero(labels == g)
        fold[gen.permutation(idx)] = np.arange(idx.size) % FOLDS
    return fold


def estimate_propensity(model: object, x: np.ndarray, labels: np.ndarray, kernel: object,
                        clip: float, rng: SeedLike) -> Propensity:
    """The cross-fitted, clipped propensities of the pairs (module docs)."""
    n = labels.size
    if not isinstance(model, str):
        e = np.asarray(model, dtype=np.float64).reshape(-1)
        if e.size != n or not np.all((e > 0) & (e < 1)):
            raise ValueError(f"`propensity` given as values must be {n} numbers in (0, 1), "
                             "one per pair (group 1's first); "
                             f"got {np.asarray(model).size} values.")
        values = np.clip(e, clip, 1 - clip)
        return Propensity(values, "given", clip, int(np.count_nonzero(values != e)), None)
    F = _features(model, x, kernel)
    t = labels.astype(np.float64)
    fold = _folds(labels, child(rng, "propensity"))
    scale = float(np.mean(np.sum(F * F, axis=1))) or 1.0
    best: tuple[float, float, np.ndarray] | None = None
    starts = [np.zeros(F.shape[1] + 1) for _ in range(FOLDS)]
    for rel in _PENALTIES[::-1]:  # strong to weak: each fit starts from the previous one
        pred = np.empty(n)
        for k in range(FOLDS):
            train = fold != k
            starts[k] = _fit_logistic(F[train], t[train], rel * scale * train.sum(),
                                      starts[k])
            eta = starts[k][0] + F[~train] @ starts[k][1:]
            pred[~train] = 1.0 / (1.0 + np.exp(-eta))
        q = np.clip(pred, 1e-12, 1 - 1e-12)
        loss = -float(np.mean(t * np.log(q) + (1 - t) * np.log(1 - q)))
        if best is None or loss < best[0]:
            best = (loss, float(rel), pred)
    assert best is not None
    values = np.clip(best[2], clip, 1 - clip)
    return Propensity(values, model, clip, int(np.count_nonzero(values != best[2])),
                      best[1])
