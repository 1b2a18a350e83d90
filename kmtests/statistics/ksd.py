r"""The kernel Stein discrepancy (KSD): how far a sample is from a model known by its score.

For a kernel ``k`` and the score ``s = grad log p`` of the model, the Stein kernel

.. math::

   h_p(x, y) = s(x)^\top s(y)\, k(x, y) + s(x)^\top \nabla_y k(x, y)
             + s(y)^\top \nabla_x k(x, y) + \operatorname{tr} \nabla_x \nabla_y k(x, y)

has mean zero under ``p`` in each argument (Liu, Lee & Jordan, 2016; Chwialkowski,
Strathmann & Gretton, 2016), and ``KSD^2 = E h_p(X, X')`` is the squared RKHS norm of the
mean embedding of the Stein features: zero exactly when the sample's law is ``p`` (for
the characteristic kernels here). The statistic is its U-form
``sum_{i != j} h_p(x_i, x_j) / (n (n - 1))`` (default, as KSDAgg) or V-form
``sum_ij h_p(x_i, x_j) / n^2``, computed from the centred data (differences only) and the
scores; ``h_p`` is closed-form for the Gaussian and IMQ kernels.

Its null laws (:class:`SteinForm`): the wild bootstrap of the degenerate statistic
(``sum W_i W_j h_p(x_i, x_j)``; i.i.d. Rademacher multipliers for i.i.d. samples, an
autoregressive process for MCMC output, not centred: ``h_p`` is already degenerate), and
fresh samples of the model (:class:`~kmtests.null.MonteCarloMethod`, exact).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Mapping

import numpy as np

from ..engines import Engine, Requirements, Values
from ..engines.mmd import quadratic_forms
from ..estimators import KME, KernelMeanEstimator
from ..estimators._rules import Uniform
from ..kernels import IMQ, Gaussian, Kernel, Matern32, Matern52
from ._base import Prepared, Statistic, statistic_name
from .forms import FormInfo, KernelForm
from .null_laws import multipliers

__all__ = ["KSD", "SteinForm", "SteinWitness", "kernel_gradient", "stein_gram"]

#: the kernels whose Stein kernel is implemented (their derivatives in closed form)
STEIN_KERNELS = (Gaussian, IMQ, Matern32, Matern52)


def _matern_derivatives(kernel: Kernel, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``phi'(rho)`` and ``4 rho phi''(rho)`` of a Matérn kernel ``k = phi(rho)``,
    ``rho = r^2``, at the distances `r`: with
    ``a = sqrt(3) / h`` (3/2) ``phi' = -a^2 e^{-a r} / 2`` and ``4 rho phi'' = a^3 r
    e^{-a r}``; with ``a = sqrt(5) / h`` (5/2) ``phi' = -a^2 (1 + a r) e^{-a r} / 6`` and
    ``4 rho phi'' = a^4 r^2 e^{-a r} / 3`` (finite at ``r = 0``: the kernels are once and
    twice differentiable)."""
    h = float(kernel.bandwidth)  # type: ignore[attr-defined]
    if isinstance(kernel, Matern32):
        a = np.sqrt(3.0) / h
        e = np.exp(-a * r)
        return -0.5 * a * a * e, a ** 3 * r * e
    a = np.sqrt(5.0) / h
    e = np.exp(-a * r)
    return -(a * a / 6.0) * (1.0 + a * r) * e, (a ** 4 / 3.0) * r * r * e


def stein_gram(kernel: Kernel, x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The Stein kernel matrix ``H_ij = h_p(x_i, x_j)`` of a fitted Gaussian, IMQ or Matérn
    (3/2, 5/2) kernel.

    ``x`` (n x d) the points, ``s`` (n x d) the score at them. Differences are formed from
    the centred points (the matrix does not depend on the data's offset).
    """
    xc = x - x.mean(axis=0)
    n, d = xc.shape
    bw = float(kernel.bandwidth)  # type: ignore[attr-defined]
    h2 = bw * bw
    sx = np.einsum("ij,ij->i", s, xc)
    A = sx[:, None] - s @ xc.T          # s_i' (x_i - x_j)
    B = xc @ s.T - sx[None, :]          # s_j' (x_i - x_j)
    D2 = kernel._scaled_sqdist(x, None) * h2  # type: ignore[attr-defined]
    K = kernel.gram(x)
    if isinstance(kernel, Gaussian):
        return K * (s @ s.T + (A - B) / h2 + d / h2 - D2 / (h2 * h2))
    if isinstance(kernel, (Matern32, Matern52)):
        # a radial kernel k = phi(rho), rho = ||x - y||^2: grad_x k = 2 phi' (x - y) and
        # tr grad_x grad_y k = -2 d phi' - 4 rho phi''
        d1, rho_d2 = _matern_derivatives(kernel, np.sqrt(D2))
        return K * (s @ s.T) - 2.0 * d1 * (A - B) - 2.0 * d * d1 - rho_d2
    beta = -0.5  # IMQ: k = u^beta, u = 1 + ||r||^2 / h^2
    u = 1.0 + D2 / h2
    k1 = K / u                           # u^(beta - 1)
    k2 = k1 / u                          # u^(beta - 2)
    return (K * (s @ s.T) - 2.0 * beta * k1 * (A - B) / h2
            - 4.0 * beta * (beta - 1.0) * k2 * D2 / (h2 * h2) - 2.0 * d * beta * k1 / h2)


def kernel_gradient(kernel: Kernel, x: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``grad_x k(x_i, t_j)`` of a fitted Gaussian, IMQ or Matérn kernel, shape
    ``(m, n, d)``."""
    bw = float(kernel.bandwidth)  # type: ignore[attr-defined]
    h2 = bw * bw
    r = x[None, :, :] - t[:, None, :]                       # (m, n, d): x_i - t_j
    K = kernel.gram(t, x)                                    # (m, n)
    if isinstance(kernel, Gaussian):
        return -(r / h2) * K[:, :, None]
    if isinstance(kernel, (Matern32, Matern52)):
        d1, _ = _matern_derivatives(kernel, np.sqrt(np.einsum("mnd,mnd->mn", r, r)))
        return 2.0 * d1[:, :, None] * r
    u = 1.0 + np.einsum("mnd,mnd->mn", r, r) / h2
    return -(r / h2) * (K / u)[:, :, None]                  # 2 beta u^(beta-1) r/h2, beta=-1/2


@dataclass(frozen=True, eq=False)
class SteinWitness:
    """The Stein witness ``g(t) = (1/n) sum_i [s(x_i) k(x_i, t) + grad_x k(x_i, t)]``: the
    mean embedding of the Stein features, a d-vector at each point; ``KSD^2_b`` is its
    squared norm. Away from zero where the sample and the model disagree (its sign: the
    direction in which the model's score would have to change)."""

    kernel: Kernel
    x: np.ndarray
    scores: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.x.shape[1])

    def __call__(self, t: Any) -> np.ndarray:
        pts = np.asarray(t, dtype=np.float64)
        pts = pts.reshape(-1, 1) if pts.ndim == 1 and self.dim == 1 else np.atleast_2d(pts)
        if pts.shape[1] != self.dim:
            raise ValueError(f"`points` must have {self.dim} column(s); got {pts.shape[1]}.")
        K = self.kernel.gram(pts, self.x)                    # (m, n)
        grad = kernel_gradient(self.kernel, self.x, pts)      # (m, n, d)
        return (K @ self.scores + grad.sum(axis=1)) / self.x.shape[0]


@dataclass(frozen=True, eq=False)
class SteinForm(KernelForm):
    """KSD as a quadratic form of the Stein kernel matrix ``Kc = H`` (not centred)."""

    kind: ClassVar[str] = "stein"
    biased_name: ClassVar[str] = "KSD^2_b"

    admits: ClassVar[frozenset[str]] = frozenset({"wild"})
    refusals: ClassVar[Mapping[str, str]] = {
        "gamma": "method='gamma' has no approximation of the KSD's null here; use "
                 "method='wild' (default) or 'monte_carlo' (fresh samples of the model).",
        "chi2": "method='chi2' is FSSD's asymptotic null (statistic='fssd'); the kernel "
                "Stein discrepancy takes method='wild' (default) or 'monte_carlo' (fresh "
                "samples of the model)."}

    @cached_property
    def _off_diagonal(self) -> np.ndarray:
        """``H`` with a zero diagonal (itself when it has one): the U-statistic's quadratic
        forms without the diagonal, which at a small bandwidth is many orders of magnitude
        larger than the statistic (subtracting it afterwards cancels every digit)."""
        if not np.any(np.diagonal(self.Kc)):
            return self.Kc
        H = self.Kc.copy()
        np.fill_diagonal(H, 0.0)
        return H

    def _wild_block(self, rng: np.random.Generator, b: int, process: str, length: float,
                    n_jobs: int | None) -> np.ndarray:
        n = self.Kc.shape[0]
        return self.wild_given(multipliers(rng, b, n, process, length, centred=False), n_jobs)

    def wild_given(self, W: np.ndarray, n_jobs: int | None) -> np.ndarray:
        """The statistic on each row of the multipliers ``W`` (``b x n``):
        ``sum_{i != j} W_i W_j h_p(x_i, x_j) / (n (n - 1))`` (U), or with the diagonal
        over ``n^2`` (V)."""
        n = self.Kc.shape[0]
        if not self.unbiased:
            q = quadratic_forms(self.Kc, W, n_jobs) / (n * n)
        else:
            q = quadratic_forms(self._off_diagonal, W, n_jobs) / (n * (n - 1))
        return q if self.scale == 1.0 else q * self.scale  # (a shrinkage factor c^2)


class KSD(Statistic):
    """The kernel Stein discrepancy ``KSD^2`` in U-form (default) or V-form.

    Parameters
    ----------
    kernel : Kernel
        A Gaussian, IMQ or Matérn (3/2, 5/2) kernel (a ``"median"`` bandwidth is fitted on
        the sample).
    unbiased : bool
        U-form (diagonal dropped) or V-form.
    estimator : KernelMeanEstimator, optional
        The estimator of the mean embedding of the Stein features (default the KME),
        fitted on the Stein kernel matrix ``H`` (their Gram matrix): weights ``beta`` and
        the statistic ``beta' H beta`` (V-form). An estimator of uniform weights ``c / n``
        (the shrinkage estimators S-KMSE, B-KMSE) scales either form by ``c^2``; one of
        unequal weights (the spectral filters) takes the V-form only. The marginalized
        estimators act through the kernel and have no Stein form.
    """

    name: ClassVar[str] = "ksd"
    registered_as: ClassVar[tuple[str, ...]] = ("unbiased", "biased")
    problem_kind: ClassVar[str] = "one_sample"
    default_method: ClassVar[str] = "wild"
    uses_estimator: ClassVar[bool] = True
    #: (KSDAgg's members and FSSD take the empirical mean only)
    estimator_refusal: ClassVar[str] = (
        "the kernel Stein discrepancy is computed with the empirical mean of the Stein "
        "features here; estimator={est!r} does not apply (use estimator='kme').")

    def __init__(self, kernel: Kernel, unbiased: bool = True,
                 estimator: KernelMeanEstimator | None = None) -> None:
        if not isinstance(kernel, STEIN_KERNELS):
            raise ValueError(f"the Stein kernel needs the kernel's derivatives, which kmtests "
                             f"has for kernel='imq', 'gaussian', 'matern32' and 'matern52'; "
                             f"got the {kernel.name!r} kernel.")
        est = KME() if estimator is None else estimator
        if est.transforms_kernel:
            raise ValueError(f"estimator={est.name!r} acts through the kernel (a marginalized "
                             "embedding), and the Stein kernel has no such form: use 'kme', a "
                             "shrinkage estimator ('skmse', 'bkmse') or a spectral filter.")
        if unbiased and not isinstance(est.rule(), Uniform):
            raise ValueError(f"the U-form KSD^2_u drops the diagonal of an equally weighted "
                             f"sum; estimator={est.name!r} weights the points unequally: use "
                             "statistic='biased' (its default with this estimator).")
        self.kernel = kernel
        self.unbiased = unbiased
        self.estimator = est
        if not isinstance(est.rule(), Uniform):  # no wild bootstrap has its law
            self.default_method = "monte_carlo"  # type: ignore[misc]

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        return cls(kernels["kernel"], name == "unbiased", estimator)

    @classmethod
    def design(cls, name: str, problem: Any, kernels: dict[str, Any],
               options: dict[str, Any], rng: Any) -> tuple[Any, dict[str, Any]]:
        """The kernel fitted to the sample (the same for every fresh sample of the model)."""
        return problem, {"kernel": kernels["kernel"].fitted_to(problem.x, name="x")}

    def label(self) -> str:
        return statistic_name("KSD^2_u" if self.unbiased else "KSD^2_b", self.estimator)

    family_name: ClassVar[str] = "kernel Stein discrepancy"

    def describe(self, prepared: Prepared) -> str:
        return (f"{self.label()}, the kernel Stein discrepancy "
                f"({'U' if self.unbiased else 'V'}-statistic)")

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        return Requirements("pairing", {"kernel": self.kernel},
                            gram="the kernel Stein discrepancy needs (its Stein kernel "
                                 "matrix)")

    def offers(self, engine: Engine) -> frozenset[str]:
        # unequal weights: no quadratic form with the wild bootstrap's law (fresh samples of
        # the model, method='monte_carlo', test it exactly)
        return frozenset({"kernel_form"} if isinstance(self.estimator.rule(), Uniform)
                         else ())

    def form(self) -> FormInfo:
        return FormInfo(SteinForm, self.label(), self.unbiased, True)

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        H = stein_gram(self.kernel, problem.x, problem.scores)
        n = problem.n
        if self.estimator.name != "kme":
            return self._weighted(problem, H)
        if self.unbiased:
            # the diagonal dropped before summing: h_p(x, x) grows like d / h^2 and, at a
            # small bandwidth, sum(H) - trace(H) cancels every digit of the statistic
            np.fill_diagonal(H, 0.0)
            t = float(H.sum()) / (n * (n - 1))
        else:
            t = float(H.sum()) / (n * n)
        scale = float(np.max(np.abs(H))) if H.size else 0.0

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return Values(np.array([t]), np.array([scale])), {}

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:  # pragma: no cover
            raise AssertionError("no arrangement keeps the one-sample null")

        return Prepared(values, observed, {"kernel": self.kernel}, what=self.label(),
                        kernel_form=lambda: SteinForm(self.unbiased, H),
                        witness=SteinWitness(self.kernel, problem.x, problem.scores))

    def _weighted(self, problem: Any, H: np.ndarray) -> Prepared:
        """The statistic of an estimator's weights ``beta`` fitted on ``H``: ``beta' H beta``,
        or for uniform weights ``c / n`` the U- or V-form times ``c^2``."""
        n = problem.n
        beta, params = self.estimator.weights(H)
        beta = np.asarray(beta, dtype=np.float64)
        uniform = isinstance(self.estimator.rule(), Uniform)
        factor = float(beta.sum()) ** 2 if uniform else 1.0
        if uniform and self.unbiased:
            np.fill_diagonal(H, 0.0)
            t = factor * float(H.sum()) / (n * (n - 1))
        elif uniform:
            t = factor * float(H.sum()) / (n * n)
        else:
            t = float(beta @ H @ beta)
        t += 0.0  # (no -0.0 when an embedding is shrunk to zero)
        scale = float(np.max(np.abs(H))) * max(factor, float(np.abs(beta).sum()) ** 2) \
            if H.size else 0.0
        chosen = {"x": dict(params)}

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return Values(np.array([t]), np.array([scale])), chosen

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:  # pragma: no cover
            raise AssertionError("no arrangement keeps the one-sample null")

        form = (lambda: SteinForm(self.unbiased, H, scale=factor)) if uniform else None
        witness = ("the Stein witness is the KME's mean embedding of the Stein features; "
                   "run the test with estimator='kme' for it")
        notes = []
        if uniform and factor == 0.0:
            notes.append(
                f"{self.estimator.name} shrank the mean embedding of the Stein features to zero "
                "(their mean is small against their spread, as it is when the sample fits the "
                "model): the statistic is 0 and the p-value 1 whatever the data. Shrinkage "
                "towards zero, the null's value, costs a goodness-of-fit test power: use "
                "estimator='kme'")
        return Prepared(values, observed, {"kernel": self.kernel}, what=self.label(),
                        kernel_form=form, witness=witness, notes=notes)
