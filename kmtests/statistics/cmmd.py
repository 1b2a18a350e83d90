r"""The conditional MMD of two groups through tuned conditional mean embeddings.

For each group ``g`` the conditional mean embedding of the outcome given the covariates,
``mu_g(x) = E_g[phi(Y) | X = x]``, is estimated by kernel ridge regression of the
outcome's features on the covariates (Song et al., 2009):

.. math:: \hat\mu_g(x) = \sum_{j \in g} a_{g,j}(x)\,\phi(y_j), \qquad
          a_g(x) = (K_{gg} + n_g \lambda I)^{-1} k_g(x),

and the statistic is the weighted mean over the pooled covariates of their squared RKHS
distance (with uniform weights, ``weights="uniform"``, the statistic of Park, Shalit,
Schölkopf and Muandet, 2021, and of pywhy-stats' ``kcd``):

.. math:: T = \sum_{i=1}^n w_i \|\hat\mu_1(x_i) - \hat\mu_2(x_i)\|^2_{\mathcal H}
          = \operatorname{tr}(\operatorname{diag}(w) W L W'),

``w_i`` proportional to ``e(x_i) (1 - e(x_i))`` of the propensity (``"overlap"``, the
default: the covariates where both groups have pairs; fixed across the relabellings) or
``1 / n``,

``W = [A_1, -A_2]`` (``A_g`` the ``n x n_g`` matrix of the ``a_g(x_i)``) and ``L`` the
pooled Gram matrix of the outcomes. ``lam`` (operator units, as the conditional
independence test's) is tuned once on the pooled pairs by the conditional test's
criterion (:class:`~kmtests.estimators.ConditionalMeanEmbedding`: GCV of the regression
of the outcome's features on the covariates, at most half the degrees of freedom), a
function of what the conditional permutations of the labels leave unchanged; the two
groups' regressions use it with their own sizes. The per-point distances are the witness:
where the conditionals differ.

With ``L = Phi Phi'`` (its eigenvectors above ``1e-12`` of the largest eigenvalue) a
relabelling costs two Cholesky factorisations and ``O(n n_g r)``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

import numpy as np

from .._rng import child
from .._validation import check_choice
from ..engines import Engine, Requirements, Values
from ..engines._loop import map_items, single_blas_thread
from ..estimators import KME, ConditionalMeanEmbedding, KernelMeanEstimator
from ..estimators.conditional import CRITERIA, lambda_grid_cme
from ._base import Prepared, Statistic
from .propensity import PROPENSITY_MODELS, check_clip, estimate_propensity

__all__ = ["CMMD_CRITERIA", "ConditionalMMD", "cmmd_parts", "shift_error"]

#: relative eigenvalue floor of the outcomes' Gram matrix (below: rounding)
_EIG_FLOOR = 1e-12
#: how `lam` is tuned: the cross-group prediction error under the propensity's covariate
#: shift (``"shift"``), or one of the conditional test's criteria
CMMD_CRITERIA = ("shift",) + CRITERIA
#: pseudo-groups drawn for ``criterion="shift"``
SHIFT_SPLITS = 3
#: how the pooled points are weighted in the mean: ``e (1 - e)`` of the propensity
#: (``"overlap"``), or equally (``"uniform"``, Park et al.'s and kcd's mean)
WEIGHTS = ("overlap", "uniform")


def _ridge_map(K: np.ndarray, labels: np.ndarray, g: int, lam: float,
               Phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``A_g Phi_g`` (n x r) at every pooled point, and ``A_g`` evaluated through
    ``(K_gg + n_g lam I)^{-1} Phi_g`` (n_g x r), for group `g` of `labels`."""
    from scipy.linalg import cho_factor, cho_solve  # here: importing kmtests loads no SciPy

    idx = np.flatnonzero(labels == g)
    Kg = K[np.ix_(idx, idx)].copy()
    Kg[np.diag_indices_from(Kg)] += idx.size * lam
    C = cho_solve(cho_factor(Kg, lower=True, check_finite=False), Phi[idx],
                  check_finite=False)
    return K[:, idx] @ C, C


def shift_error(K: np.ndarray, Phi: np.ndarray, labels: np.ndarray, lam: float) -> float:
    """The mean squared RKHS error of predicting ``phi(y_i)`` by the regression of the
    *other* group at ``x_i``: the error the statistic makes under the covariate shift."""
    err = 0.0
    for g in (0, 1):
        M, _ = _ridge_map(K, labels, g, lam, Phi)
        other = labels != g
        R = Phi[other] - M[other]
        err += float(np.einsum("ij,ij->", R, R))
    return err / labels.size


def cmmd_parts(K: np.ndarray, Phi: np.ndarray, labels: np.ndarray, lam: float
               ) -> tuple[np.ndarray, float]:
    """The per-point squared distances ``||mu_1(x_i) - mu_2(x_i)||^2`` and the rounding
    scale (the mean of ``||mu_1||^2 + ||mu_2||^2``); zeros when a group has fewer than 2
    pairs (a labelling without two groups carries no evidence)."""
    n1 = int(np.count_nonzero(labels == 0))
    if min(n1, labels.size - n1) < 2:
        return np.zeros(labels.size), 0.0
    M1, _ = _ridge_map(K, labels, 0, lam, Phi)
    M2, _ = _ridge_map(K, labels, 1, lam, Phi)
    D = M1 - M2
    scale = float(np.mean(np.einsum("ij,ij->i", M1, M1) + np.einsum("ij,ij->i", M2, M2)))
    return np.einsum("ij,ij->i", D, D), scale


class ConditionalMMD(Statistic):
    """The conditional MMD of two groups (module docs)."""

    name: ClassVar[str] = "cmmd"
    problem_kind: ClassVar[str] = "conditional_two_sample"
    options: ClassVar[tuple[str, ...]] = ("lam", "criterion", "weights", "propensity", "clip")
    estimator_refusal: ClassVar[str] = (
        "the conditional MMD compares kernel-ridge conditional mean embeddings; "
        "estimator={est!r} does not apply (use estimator='kme').")

    def __init__(self, kernel_x: Any, kernel_y: Any, lam: Any = "auto",
                 criterion: str = "shift", weights: str = "overlap") -> None:
        self.kernels = {"x": kernel_x, "y": kernel_y}
        self.weights = check_choice(weights, "weights", WEIGHTS)
        self.criterion = check_choice(criterion, "criterion", CMMD_CRITERIA)
        self.regression = ConditionalMeanEmbedding(
            lam=lam, criterion="gcv" if criterion == "shift" else criterion)
        self.estimator = KME()

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        lam = "auto" if options.get("lam") is None else options["lam"]
        crit = check_choice("shift" if options.get("criterion") is None
                            else options["criterion"], "criterion", CMMD_CRITERIA)
        weights = "overlap" if options.get("weights") is None else options["weights"]
        return cls(kernels["x"], kernels["y"], lam, crit, weights)

    @classmethod
    def design(cls, name: str, problem: Any, kernels: dict[str, Any],
               options: dict[str, Any], rng: Any) -> tuple[Any, dict[str, Any]]:
        """The kernels fitted to the pooled covariates and outcomes; the propensity,
        cross-fitted from the ``"propensity"`` child of `rng`."""
        fitted = {"x": kernels["x"].fitted_to(problem.covariates, name="x"),
                  "y": kernels["y"].fitted_to(problem.outcomes, name="y")}
        model = "kernel" if options.get("propensity") is None else options["propensity"]
        if isinstance(model, str):
            model = check_choice(model, "propensity", PROPENSITY_MODELS)
        clip = check_clip(0.01 if options.get("clip") is None else options["clip"])
        prop = estimate_propensity(model, problem.covariates, problem.labels, fitted["x"],
                                   clip, rng)
        return problem.with_propensity(prop), fitted

    def label(self) -> str:
        return "CMMD^2"

    def family(self) -> str:
        return "conditional MMD"

    def describe(self, prepared: Prepared) -> str:
        lam = prepared.report.get("lam")
        mean = "e(1 - e)-weighted mean" if self.weights == "overlap" else "mean"
        return (f"{self.label()}: {mean} over the pooled x of ||mu_1(x) - mu_2(x)||^2, "
                f"kernel ridge at lam = {lam:.3g}" if lam is not None else self.label())

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        return Requirements("pairing", dict(self.kernels),
                            gram="the conditional MMD needs (its kernel ridge regressions)")

    def check(self, problem: Any, tuning: str) -> None:
        if problem.scheme is None:
            raise ValueError("the conditional two-sample test needs the propensity of its "
                             "null: run it through its face (statistic='cmmd').")

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        # one BLAS thread: the bits of a factorisation depend on the thread count (and
        # threads fight on a busy machine); relabellings run side by side instead
        with single_blas_thread():
            return self._prepare(problem, rng)

    def _tune(self, problem: Any, K: np.ndarray, Phi: np.ndarray, rng: Any
              ) -> tuple[float, float, str | None]:
        """``(lam, degrees of freedom of the pooled regression, criterion)``."""
        X, kx = problem.covariates, self.kernels["x"]
        Lc = self.kernels["y"].centred_gram(problem.outcomes, name="y").Kc
        given = self.regression.lams()
        if self.criterion != "shift" or (given is not None and given.size == 1):
            fit = self.regression.fit([kx], X, Lc, cache=False)
            return float(fit.lam), fit.df, fit.criterion
        # pseudo-groups drawn from the propensity: a split with the data's covariate shift
        # that does not depend on the observed labels (the relabellings leave it unchanged)
        Kc = kx.centred_gram(X, name="x").Kc
        grid = given if given is not None else lambda_grid_cme(float(np.trace(Kc)), problem.n)
        draws = problem.scheme.random(child(rng, "tuning"), SHIFT_SPLITS)
        errors = [np.mean([shift_error(K, Phi, z, float(lam)) for z in draws
                           if min(z.sum(), z.size - z.sum()) >= 2]) for lam in grid]
        lam = float(grid[int(np.argmin(errors))])
        fit = ConditionalMeanEmbedding(lam=lam).fit([kx], X, Lc, cache=False)
        return lam, fit.df, "shift"

    def _prepare(self, problem: Any, rng: Any) -> Prepared:
        X, Y = problem.covariates, problem.outcomes
        kx, ky = self.kernels["x"], self.kernels["y"]
        K = kx.gram(X)
        L = ky.gram(Y)
        s, V = np.linalg.eigh(0.5 * (L + L.T))
        keep = s > _EIG_FLOOR * max(float(s.max()), 0.0)
        Phi = np.ascontiguousarray(V[:, keep] * np.sqrt(s[keep]))
        lam, df, criterion = self._tune(problem, K, Phi, rng)
        e = problem.scheme.propensity
        w = e * (1.0 - e) if self.weights == "overlap" else np.ones(problem.n)
        w = w / w.sum()

        def value(labels: np.ndarray) -> tuple[float, float]:
            d, scale = cmmd_parts(K, Phi, labels, lam)
            return float(np.dot(w, d)), scale

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            out = np.array(map_items(value, perms, n_jobs))
            return Values(out[:, 0], out[:, 1])

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            with single_blas_thread():
                t, scale = value(problem.labels)
            return Values(np.array([t]), np.array([scale])), {}

        def witness(points: Any) -> np.ndarray:
            with single_blas_thread():
                return _witness(points)

        def _witness(points: Any) -> np.ndarray:
            P = np.asarray(points, dtype=np.float64).reshape(-1, X.shape[1])
            Kp = kx.gram(P, X)
            out = np.zeros(P.shape[0])
            maps = []
            for g in (0, 1):
                idx = np.flatnonzero(problem.labels == g)
                _, C = _ridge_map(K, problem.labels, g, lam, Phi)
                maps.append(Kp[:, idx] @ C)
            D = maps[0] - maps[1]
            out[:] = np.einsum("ij,ij->i", D, D)
            return out

        prop = problem.scheme.estimate
        report = {"lam": lam, "df": df, "criterion": criterion, "weights": self.weights,
                  "propensity_model": getattr(prop, "model", None),
                  "clip": getattr(prop, "clip", None),
                  "clipped": getattr(prop, "clipped", None),
                  "propensity_penalty": getattr(prop, "penalty", None)}
        return Prepared(values, observed, {"x": kx, "y": ky}, what=self.label(),
                        report=report, witness=witness)
