r"""FSSD: the finite-set Stein discrepancy, a linear-time goodness-of-fit statistic.

Jitkrittum, Xu, Szabó, Fukumizu & Gretton (2017) evaluate the Stein witness at ``J``
test locations ``v_1, ..., v_J`` instead of everywhere: with the Stein features

.. math::

   \tau(x) = \frac{1}{\sqrt{dJ}} \big(s(x) k(x, v_j) + \nabla_x k(x, v_j)\big)_{j = 1..J}
   \in \mathbb{R}^{dJ},

``FSSD^2 = ||E tau(X)||^2`` is zero when the sample comes from the model and positive
(almost surely over the locations) otherwise. The statistic is its U-statistic
``FSSD^2_u = (||sum_i tau_i||^2 - sum_i ||tau_i||^2) / (n (n - 1))``, computed in
``O(n J d)``. The locations and the kernel's bandwidth are learned on a training split
(half the sample by default, ``split_size`` to change it, drawn by the child generator
``"split"`` of `rng`) by maximising the papers' power criterion
``FSSD^2_u / sqrt(sigma^2_H1 + 0.01)`` with the L-BFGS-B wrapper of the ME/SCF tests
(:mod:`kmtests.statistics.locations`; finite-difference gradients here); the test uses
the other points only.

Its null law (:class:`FSSDForm`, ``method="chi2"``, the default): ``n FSSD^2_u`` is
asymptotically ``sum_k omega_k (Z_k^2 - 1)``, ``omega`` the eigenvalues of the
covariance of the features ``tau(x_i)`` on the test points — simulated, an
approximate p-value. ``method="monte_carlo"`` recomputes the statistic (the same
locations) on fresh samples of the model: exact.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import numpy as np

from .._rng import child
from .._validation import check_positive_int
from ..engines import Engine, Requirements, Values
from ..estimators import KME, KernelMeanEstimator
from ..kernels import Kernel
from ._base import Prepared, Statistic
from .forms import FormInfo, KernelForm
from .ksd import KSD, STEIN_KERNELS, kernel_gradient
from .locations import _log_bounds, _maximise

__all__ = ["FSSD", "FSSDForm", "fssd_features", "power_criterion"]

#: the regulariser of the power criterion's variance (the authors')
CRITERION_REG = 1e-2
#: iterations of L-BFGS-B for the locations and the bandwidth
MAX_ITER = 50


def fssd_features(kernel: Kernel, x: np.ndarray, s: np.ndarray, V: np.ndarray) -> np.ndarray:
    """The Stein features ``tau(x_i)`` at the locations `V` (``J x d``), shape ``(n, J d)``,
    scaled by ``1 / sqrt(d J)``."""
    n, d = x.shape
    J = V.shape[0]
    K = kernel.gram(V, x)                       # (J, n)
    G = kernel_gradient(kernel, x, V)           # (J, n, d): grad_x k(x_i, v_j)
    T = K[:, :, None] * s[None, :, :] + G       # (J, n, d)
    return np.transpose(T, (1, 0, 2)).reshape(n, J * d) / np.sqrt(d * J)


def _u_statistic(T: np.ndarray) -> float:
    n = T.shape[0]
    total = T.sum(axis=0)
    return float((total @ total - np.einsum("ij,ij->", T, T)) / (n * (n - 1)))


def power_criterion(T: np.ndarray, reg: float = CRITERION_REG) -> float:
    """``FSSD^2_u / sqrt(sigma^2_H1 + reg)`` of the features `T`, ``sigma^2_H1 = 4 (mean_i
    (tau_i' mu)^2 - ||mu||^4)`` (the asymptotic variance of ``sqrt(n) FSSD^2_u`` under the
    alternative, ``mu`` the features' mean)."""
    mu = T.mean(axis=0)
    var = 4.0 * (float(np.mean((T @ mu) ** 2)) - float(mu @ mu) ** 2)
    return _u_statistic(T) / float(np.sqrt(max(var, 0.0) + reg))


@dataclass(frozen=True, eq=False)
class FSSDForm(KernelForm):
    """FSSD's null law: ``Kc`` holds the features' covariance (``dJ x dJ``), ``n_x`` the
    number of test points; ``FSSD^2_u`` is asymptotically ``sum_k omega_k (Z_k^2 - 1) / n``
    with ``omega`` its eigenvalues."""

    kind: ClassVar[str] = "fssd"
    biased_name: ClassVar[str] = "FSSD^2"

    admits: ClassVar[frozenset[str]] = frozenset({"chi2"})
    refusals: ClassVar[Mapping[str, str]] = {
        "gamma": "method='gamma' has no approximation of FSSD's null here; use method='chi2' "
                 "(default, its asymptotic weighted chi-square) or 'monte_carlo'.",
        "wild": "method='wild' bootstraps the quadratic statistics of the Stein kernel "
                "matrix; FSSD's null is its weighted chi-square: use method='chi2' (default) "
                "or 'monte_carlo'."}

    def chi2_weights(self) -> np.ndarray:
        omega = np.linalg.eigvalsh(self.Kc)[::-1]
        return np.clip(omega, 0.0, None) / self.n_x

    def chi2_shift(self) -> float:
        """The null mean subtracted from every draw: ``sum_k omega_k / n`` (the U-statistic
        has null mean 0)."""
        return float(np.sum(self.chi2_weights()))


class FSSD(Statistic):
    """The finite-set Stein discrepancy ``FSSD^2_u`` at learned locations (module docs).

    Parameters
    ----------
    kernel : Kernel
        A Gaussian, IMQ or Matérn kernel; its fitted (median) bandwidth starts the search.
    n_locations : int
        The number ``J`` of test locations (default 5).
    split_size : int, optional
        The training points (default: half the sample).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import goodness_of_fit_test
    >>> x = np.random.default_rng(0).normal(0.5, 1.0, size=(400, 1))
    >>> res = goodness_of_fit_test(x, score=lambda t: -t, statistic="fssd",
    ...                            n_resamples=999, rng=1)
    >>> print(f"{res.statistic_name} = {res.statistic:.3f}, p = {res.pvalue:.3f}")
    FSSD^2_u = 0.080, p = 0.001
    """

    name: ClassVar[str] = "fssd"
    problem_kind: ClassVar[str] = "one_sample"
    default_method: ClassVar[str] = "chi2"
    options: ClassVar[tuple[str, ...]] = ("n_locations", "split_size")
    estimator_refusal: ClassVar[str] = (
        "statistic={name!r} is the mean of Stein features at learned locations; "
        "estimator={est!r} does not apply (use estimator='kme').")
    unbiased = True

    def __init__(self, kernel: Kernel, n_locations: int | None = None,
                 split_size: int | None = None) -> None:
        if not isinstance(kernel, STEIN_KERNELS):
            KSD(kernel)  # its refusal
        self.kernel = kernel
        self.n_locations = 5 if n_locations is None else check_positive_int(
            n_locations, "n_locations")
        self.split_size = None if split_size is None else check_positive_int(
            split_size, "split_size")
        self.estimator = KME()
        self.training: tuple[np.ndarray, np.ndarray] | None = None
        self.gen: np.random.Generator | None = None
        self._learned: tuple[Kernel, np.ndarray, float, float, bool] | None = None

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        return cls(kernels["kernel"], options.get("n_locations"), options.get("split_size"))

    @classmethod
    def design(cls, name: str, problem: Any, kernels: dict[str, Any],
               options: dict[str, Any], rng: Any) -> tuple[Any, dict[str, Any]]:
        return KSD.design(name, problem, kernels, options, rng)

    symbol: ClassVar[str] = "FSSD^2_u"
    family_name: ClassVar[str] = "finite-set Stein discrepancy"

    def describe(self, prepared: Prepared) -> str:
        return (f"FSSD^2_u, the finite-set Stein discrepancy at {self.n_locations} learned "
                "location(s) (U-statistic, linear time)")

    def holds_out(self) -> bool:
        return True

    def hold_out(self, problem: Any, rng: Any) -> Any:
        """The problem on the test points; the training points (drawn at random by the
        child generator ``"split"`` of `rng`, which then draws the initial locations) stay
        with the statistic."""
        n = problem.n
        m = n // 2 if self.split_size is None else self.split_size
        need = self.n_locations + 2
        if m < need or n - m < need:
            raise ValueError(
                f"FSSD learns {self.n_locations} location(s) on training points and tests on "
                f"the others: each part needs at least {need} points (J + 2); got {n} points "
                f"split {m} / {n - m}. Use more data, fewer `n_locations`, or another "
                "`split_size`.")
        self.gen = child(rng, "split")
        order = self.gen.permutation(n)
        tr, te = order[:m], np.sort(order[m:])
        self.training = (problem.x[tr], problem.scores[tr])
        return dataclasses.replace(problem, x=problem.x[te], scores=problem.scores[te])

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        return Requirements("pairing", {"kernel": self.kernel})

    def offers(self, engine: Engine) -> frozenset[str]:
        return frozenset({"kernel_form"})

    def form(self) -> FormInfo:
        return FormInfo(FSSDForm, self.label(), True, True)

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        n, d = problem.n, int(problem.x.shape[1])
        need = 8.0 * 4 * n * self.n_locations * d
        return need, f"the Stein features of {n} points at {self.n_locations} locations", \
            "Use fewer `n_locations`."

    def learn(self) -> tuple[Kernel, np.ndarray, float, float, bool]:
        """The locations and bandwidth maximising the power criterion on the training
        points (learned once): ``(kernel, V, criterion before, after, converged)``."""
        if self._learned is not None:
            return self._learned
        if self.training is None or self.gen is None:
            raise ValueError("FSSD learns its locations on a training split: run it through "
                             "goodness_of_fit_test (which holds the training points out).")
        x, s = self.training
        J, d = self.n_locations, x.shape[1]
        h0 = float(self.kernel.bandwidth)  # type: ignore[attr-defined]
        # initial locations: training points moved by a little noise of the data's scale
        V0 = x[self.gen.choice(x.shape[0], size=J, replace=J > x.shape[0])] \
            + 0.1 * x.std(axis=0) * self.gen.standard_normal((J, d))

        def value(p: np.ndarray) -> float:
            kern = dataclasses.replace(self.kernel,  # type: ignore[call-arg]
                                       bandwidth=float(np.exp(0.5 * p[-1])))
            return power_criterion(fssd_features(kern, x, s, p[:-1].reshape(J, d)))

        def with_gradient(p: np.ndarray) -> tuple[float, np.ndarray]:
            v = value(p)  # forward differences: one evaluation per parameter
            g = np.empty_like(p)
            for i in range(p.size):
                e = np.zeros_like(p)
                e[i] = 1e-7 * max(1.0, abs(p[i]))
                g[i] = (value(p + e) - v) / e[i]
            return v, g

        p0 = np.r_[V0.ravel(), np.log(h0 * h0)]
        bounds = [(None, None)] * (J * d) + [_log_bounds(h0 * h0)]
        start = value(p0)
        p, best, converged, _ = _maximise(with_gradient, p0, bounds, MAX_ITER)
        kern = dataclasses.replace(self.kernel,  # type: ignore[call-arg]
                                   bandwidth=float(np.exp(0.5 * p[-1])))
        self._learned = (kern, p[:-1].reshape(J, d), start, best, converged)
        return self._learned

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        kern, V, start, best, converged = self.learn()
        T = fssd_features(kern, problem.x, problem.scores, V)
        n = problem.n
        t = _u_statistic(T)
        scale = float(np.max(np.abs(T))) ** 2 if T.size else 0.0

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return Values(np.array([t]), np.array([scale])), {}

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:  # pragma: no cover
            raise AssertionError("no arrangement keeps the one-sample null")

        m = 0 if self.training is None else self.training[0].shape[0]
        notes = [f"{self.n_locations} test location(s) and the bandwidth learned on {m} "
                 f"training points (drawn at random by `rng`) by maximising the power "
                 f"criterion ({start:.4g} -> {best:.4g}); the test uses the other {n} points "
                 "only. The locations are in details['locations']."]
        if not converged:
            notes.append("the optimiser of the locations stopped before converging; the "
                         "best values found are used")
        cov = np.atleast_2d(np.cov(T, rowvar=False))
        return Prepared(values, observed, {"kernel": kern}, what=self.label(),
                        kernel_form=lambda: FSSDForm(True, cov, n_x=n), notes=notes,
                        report={"locations": V.tolist(), "bandwidth": kern.bandwidth},  # type: ignore[attr-defined]
                        sizes={"n_train": m})
