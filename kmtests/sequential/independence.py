"""The sequential independence test by betting (Podkopaev et al. 2023, SKIT).

Pairs ``z_t = (x_t, y_t)`` arrive i.i.d.; the null is that ``x`` and ``y`` are
independent. The test bets once per two pairs: on the block ``(z_{2s-1},
z_{2s})`` it compares the two observed pairs with the two *swapped* pairs
``(x_{2s-1}, y_{2s})`` and ``(x_{2s}, y_{2s-1})``, which under the null have
the same joint law as the observed ones (a sample of the product of the
marginals). The payoff uses the HSIC witness estimated from the kept pairs
before the block (the last `max_points`),

    w(s, t) = (1/n) sum_i k(x_i, s) l(y_i, t) - mu_x(s) mu_y(t)
            = mu_XY(s, t) - mu_X(s) mu_Y(t),   ||w||^2 = HSIC_b,

    f = [w(x1, y1) + w(x2, y2) - w(x1, y2) - w(x2, y1)] / (4 ||w||)  in [-1, 1]

(``|w(s, t)| <= ||w||`` for kernels bounded by ``k(x, x) = l(y, y) = 1``);
under the null ``E[f | past] = 0`` for any witness, so the wealth is a
nonnegative supermartingale. ``||w||^2 = had/n^2 - 2 r's/n^3 +
(1'r)(1's)/n^4`` with ``had = sum_ij K_ij L_ij``, ``r = K1``, ``s = L1``,
all running sums of the window.

Estimators: kmtests' estimated HSIC witness with a uniform estimator is
``c`` times the KME's (``c`` from the joint Gram matrix), and the
normalised payoff divides ``c`` out: the uniform shrinkage estimators bet
exactly as the KME does, so only ``estimator="kme"`` is accepted (an option
that changed nothing would mislead).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..estimators import KME
from ..kernels import Kernel
from ._base import SequentialTest, bounded_kernel, uniform_estimator
from ._window import Window

__all__ = ["SequentialIndependenceTest"]


class SequentialIndependenceTest(SequentialTest):
    """Anytime-valid kernel independence test by betting (SKIT).

    Parameters
    ----------
    alpha : float
        Level (the probability of ever rejecting under the null is at most
        `alpha`).
    kernel_x, kernel_y : {"gaussian", "laplacian", "ard"} or Kernel
        Kernels bounded by ``k(x, x) = 1``.
    bandwidth_x, bandwidth_y : "median" or float
        ``"median"``: the median heuristic on each variable's points of the
        first `burn_in` pairs, then fixed.
    estimator : "kme"
        The only estimator that changes nothing by being chosen; see the
        module docs for why the uniform shrinkage estimators would bet alike.
    betting : {"ons", "agrapa"}
        How the betting fraction is chosen.
    max_points : int
        The budget: the witness uses the last `max_points` pairs (memory
        ``2 max_points^2`` floats, ``O(max_points d)`` per pair).
    burn_in : int or None
        Pairs observed without betting before the bandwidths are fixed
        (default 20 when a bandwidth is ``"median"``, else 0).
    payoff_scale : {"norm", "adaptive"}
        As in :class:`SequentialTwoSampleTest` (the payoff changes sign when
        the two pairs of a block swap their ``y``).
    nan_policy : {"raise", "omit"}
        As in :class:`SequentialTwoSampleTest`.
    record : bool
        Keep the step, payoff, bet and log-wealth of every bet in ``history``.

    Notes
    -----
    One bet per two pairs: ``stopping_time`` is even. A pair left over at the
    end of an update waits for its partner.

    References
    ----------
    .. [1] A. Podkopaev, P. Bloebaum, S. Kasiviswanathan and A. Ramdas,
       "Sequential kernelized independence testing", ICML 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import SequentialIndependenceTest
    >>> rng = np.random.default_rng(1)
    >>> x = rng.normal(size=(3000, 1))
    >>> y = x + rng.normal(size=(3000, 1))
    >>> test = SequentialIndependenceTest(alpha=0.05).update(x, y)
    >>> test.reject, test.stopping_time
    (True, 238)
    """

    def __init__(self, *, alpha: float = 0.05, kernel_x: Any = "gaussian",
                 kernel_y: Any = "gaussian", bandwidth_x: Any = "median",
                 bandwidth_y: Any = "median", estimator: Any = "kme", betting: Any = "ons",
                 max_points: int = 500, burn_in: int | None = None,
                 nan_policy: str = "raise", record: bool = False,
                 payoff_scale: str = "norm") -> None:
        self.kernel_x = bounded_kernel(kernel_x, bandwidth_x, "kernel_x", "bandwidth_x")
        self.kernel_y = bounded_kernel(kernel_y, bandwidth_y, "kernel_y", "bandwidth_y")
        est = uniform_estimator(estimator)
        if not isinstance(est, KME):
            raise ValueError(
                f"`estimator`: the sequential independence test bets with the normalised "
                f"HSIC witness, and a uniform estimator ({est.name!r}) only scales it by a "
                "constant that the normalisation divides out: it would bet exactly as "
                "estimator='kme'. Use estimator='kme'.")
        self.estimator = est
        super().__init__(alpha=alpha, betting=betting, max_points=max_points, burn_in=burn_in,
                         nan_policy=nan_policy, record=record,
                         needs_burn_in=not (self.kernel_x.is_fitted and self.kernel_y.is_fitted),
                         payoff_scale=payoff_scale)
        self.kernel_x_: Kernel | None = None
        self.kernel_y_: Kernel | None = None
        self._window: Window | None = None
        self._pending: tuple[np.ndarray, np.ndarray] | None = None

    def _start(self, dims: dict[str, int]) -> None:
        self._window = Window(self.max_points, dims, [("x", "x"), ("y", "y")], hadamard=True)

    def _fit_kernels(self) -> bool:
        w = self._window
        assert w is not None
        if w.count < max(self.burn_in, 1):
            return False
        try:
            kx = self.kernel_x.fitted_to(w.data("x"), name="the burn-in x")
            ky = self.kernel_y.fitted_to(w.data("y"), name="the burn-in y")
        except ValueError:  # the burn-in points of a variable all tie: keep observing
            return False
        self.kernel_x_, self.kernel_y_ = kx, ky
        w.set_kernels({"x": kx, "y": ky})
        return True

    def hsic_norm(self) -> float:
        """``||w||`` of the current witness (``sqrt(HSIC_b)`` of the kept pairs)."""
        w = self._window
        assert w is not None and w.ready
        n = w.count
        r, s = w.rows[("x", "x")], w.rows[("y", "y")]
        norm2 = (w.had / n**2 - 2.0 * float(r @ s) / n**3
                 + w.total("x", "x") * w.total("y", "y") / n**4)
        return math.sqrt(max(norm2, 0.0))

    def _payoff(self, x1: np.ndarray, y1: np.ndarray, x2: np.ndarray, y2: np.ndarray) -> float:
        w = self._window
        assert w is not None
        n = w.count
        norm = self.hsic_norm()
        if norm <= 1e-12:
            return 0.0
        dk = w.row("x", x1, "x") - w.row("x", x2, "x")
        dl = w.row("y", y1, "y") - w.row("y", y2, "y")
        num = float(dk @ dl) / n - dk.sum() * dl.sum() / n**2
        return num / (4.0 * norm)

    def _observe(self, x: np.ndarray, y: np.ndarray) -> None:
        w = self._window
        assert w is not None
        self.n_seen += 1
        if self._pending is None:
            self._pending = (x.copy(), y.copy())
            return
        x1, y1 = self._pending
        ready = w.ready or self._fit_kernels()
        if ready and w.count >= 2:
            self._bet(self._payoff(x1, y1, x, y))
        self._pending = None
        w.push({"x": x1, "y": y1})
        w.push({"x": x, "y": y})
