"""The sequential two-sample test by betting (Shekhar & Ramdas 2023).

Pairs ``(x_t, y_t)`` arrive, ``x_t ~ P`` and ``y_t ~ Q`` independent; the null
is ``P = Q``. Before pair ``t`` the test estimates the witness of the MMD from
the kept past pairs (the last `max_points`),

    g_t = mu_x - mu_y,   mu_x = (c_x / n) sum_i k(x_i, .),   mu_y = (c_y / n) sum_j k(y_j, .),

with the weights ``c/n`` of the kernel mean estimator (``c = 1`` for the KME;
``c = 1 - alpha`` for the uniform shrinkage estimators, ``alpha`` chosen on
that sample of past points exactly as :mod:`kmtests.estimators` chooses it).
The payoff of pair ``t`` is

    f_t = (g_t(x_t) - g_t(y_t)) / (2 ||g_t||)  in [-1, 1]

(``|g(z)| <= ||g|| sqrt(k(z, z)) = ||g||`` for the bounded kernels), and
``f_t = 0`` while ``||g_t|| = 0``. Under the null ``x_t`` and ``y_t`` have the
same law given the past, so ``E[f_t | past] = 0`` whatever ``g_t`` is. With
``||g||^2 = a^2 1'K_xx 1 + b^2 1'K_yy 1 - 2 a b 1'K_xy 1`` (``a = c_x/n``,
``b = c_y/n``) every quantity is a running sum of the window
(:mod:`kmtests.sequential._window`).

Estimators: a uniform shrinkage changes the payoff only through the ratio
``c_x / c_y`` (the normalisation divides a common factor out): the witness
leans toward the sample whose embedding is estimated more confidently.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._typing import ArrayLike
from ..estimators._rules import Uniform
from ..kernels import Kernel
from ._base import SequentialTest, bounded_kernel, uniform_estimator
from ._window import Window

__all__ = ["SequentialTwoSampleTest"]


class SequentialTwoSampleTest(SequentialTest):
    """Anytime-valid kernel two-sample test by betting.

    Parameters
    ----------
    alpha : float
        Level: the test rejects the first time the wealth reaches
        ``1/alpha``; under the null the probability that this ever happens, over
        an unbounded stream, is at most `alpha`.
    kernel : {"gaussian", "laplacian", "ard"} or Kernel
        A kernel bounded by ``k(x, x) = 1`` (so that the payoffs are bounded).
    bandwidth : "median" or float
        ``"median"``: the median heuristic on the pooled points of the first
        `burn_in` pairs, then fixed (the bandwidth of every bet is a
        function of earlier pairs only, so the bets stay predictable).
    estimator : {"kme", "skmse", "bkmse"} or KernelMeanEstimator
        The kernel mean estimator of each sample's embedding in the witness.
        The estimators whose weights are ``c/n`` (the KME and the uniform
        shrinkage estimators) apply: their weights follow from running sums
        in ``O(max_points)`` per pair. The spectral filters need an
        eigenproblem of the window at every pair and the marginalized
        estimators a kernel tuned on the data; both are refused.
    betting : {"ons", "agrapa"}
        How the betting fraction is chosen (:mod:`kmtests.sequential._betting`).
    max_points : int
        The budget: the witness uses the last `max_points` pairs. Memory is
        ``3 max_points^2`` floats (the Gram blocks) and each pair costs
        ``O(max_points d)``. A smaller budget forgets older pairs: under a
        fixed alternative this slows detection once the budget binds (on the
        benchmarks' variance change, 215 pairs on average with 25 against 157
        with 500; see ``benchmarks/README.md``); after a change it lets the
        witness follow.
    burn_in : int or None
        Pairs observed without betting before the bandwidth is fixed (default
        20 with ``bandwidth="median"``, else 0). If the burn-in points all tie,
        the test keeps observing without betting until they do not.
    payoff_scale : {"norm", "adaptive"}
        ``"norm"`` (default): the payoff is the witness difference over its
        bound ``2 ||g||``, as published. ``"adaptive"``: that payoff divided by
        the largest absolute payoff of the earlier bets and clipped to
        ``[-1, 1]`` -- still predictable and odd in the swap of the pair, so
        still valid, and it stakes more when the payoffs are small against
        their bound (on the benchmarks' Gaussian streams it rejects after
        about 0.6-0.66 times as many pairs; after a long calm phase it is
        slower, its scale being the largest calm payoff).
    nan_policy : {"raise", "omit"}
        A pair with a missing value: an error naming the row (nothing of that
        update is taken), or left out (counted in ``n_omitted``).
    record : bool
        Keep the step, payoff, bet and log-wealth of every bet in
        ``history`` (4 numbers per bet).

    Attributes
    ----------
    n_seen : int
        Pairs taken so far.
    kernel_ : Kernel or None
        The fitted kernel (None during the burn-in).

    Notes
    -----
    Rejecting when the wealth reaches ``1/alpha`` is valid at any stopping
    time (Ville's inequality); the p-value ``1 / max wealth`` is
    anytime-valid. The payoff, the witness norm and the betting fraction of
    pair ``t`` use the pairs before ``t`` only.

    References
    ----------
    .. [1] S. Shekhar and A. Ramdas, "Nonparametric two-sample testing by
       betting", IEEE Trans. Inf. Theory 70(2), 2024 (arXiv:2112.09162).
    .. [2] A. Cutkosky and F. Orabona, "Black-box reductions for parameter-free
       online learning in Banach spaces", COLT 2018 (ONS betting).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import SequentialTwoSampleTest
    >>> rng = np.random.default_rng(0)
    >>> test = SequentialTwoSampleTest(alpha=0.05)
    >>> for t in range(2000):
    ...     x = rng.normal(size=3)
    ...     y = rng.normal(size=3) + np.array([1.0, 0.0, 0.0])
    ...     if test.update(x, y).reject:
    ...         break
    >>> test.reject, test.stopping_time
    (True, 90)
    >>> print(f"{test.pvalue:.4f}")
    0.0488
    """

    def __init__(self, *, alpha: float = 0.05, kernel: Any = "gaussian",
                 bandwidth: Any = "median", estimator: Any = "kme", betting: Any = "ons",
                 max_points: int = 500, burn_in: int | None = None,
                 nan_policy: str = "raise", record: bool = False,
                 payoff_scale: str = "norm") -> None:
        self.kernel = bounded_kernel(kernel, bandwidth)
        self.estimator = uniform_estimator(estimator)
        rule = self.estimator.rule()
        assert isinstance(rule, Uniform)  # uniform_estimator() refused the others
        self._rule: Uniform = rule
        super().__init__(alpha=alpha, betting=betting, max_points=max_points, burn_in=burn_in,
                         nan_policy=nan_policy, record=record,
                         needs_burn_in=not self.kernel.is_fitted,
                         payoff_scale=payoff_scale)
        self.kernel_: Kernel | None = None
        self._window: Window | None = None

    # -- the stream --------------------------------------------------------------
    def _check_dims(self, dims: dict[str, int]) -> None:
        if dims["x"] != dims["y"]:
            raise ValueError(f"`x_new` and `y_new` must have the same number of columns (one "
                             f"space for both samples); got {dims['x']} and {dims['y']}.")

    def _start(self, dims: dict[str, int]) -> None:
        self._window = Window(self.max_points, dims, [("x", "x"), ("y", "y"), ("x", "y")])

    def _fit_kernel(self) -> bool:
        """Fix the bandwidth from the kept pairs (once the burn-in is over)."""
        w = self._window
        assert w is not None
        if self.n_seen < self.burn_in:
            return False
        try:
            kern = self.kernel.fitted_to(np.vstack([w.data("x"), w.data("y")]), name="the "
                                         "burn-in pairs")
        except ValueError:  # every burn-in point ties: keep observing without betting
            return False
        self.kernel_ = kern
        w.set_kernels({"x": kern, "y": kern})
        return True

    def _weights(self) -> tuple[float, float]:
        """``(c_x / n, c_y / n)``: the estimator's weights on the kept pairs."""
        w = self._window
        assert w is not None
        n = w.count
        if self._rule.fixed is not None:  # the KME, a fixed shrinkage
            return self._rule.fixed / n, self._rule.fixed / n
        out = []
        for r in ("x", "y"):
            rho = w.total(r, r) / (n * n)
            v = max(w.trace(r) / n - rho, 0.0)
            c = float(np.asarray(self._rule(rho, v, n)).reshape(-1)[0])
            out.append(c / n)
        return out[0], out[1]

    def _rows(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``k([x; y], X)`` and ``k([x; y], Y)`` at every slot of the window (2 x C)."""
        w = self._window
        assert w is not None
        p = np.stack([x, y])
        return w.gram("x", p, w.points["x"]), w.gram("x", p, w.points["y"])

    def witness_parts(self, x: np.ndarray, y: np.ndarray,
                      rows: tuple[np.ndarray, np.ndarray] | None = None
                      ) -> tuple[float, float, float]:
        """``(g(x), g(y), ||g||)`` of the current witness (nothing is changed)."""
        w = self._window
        assert w is not None and w.ready
        a, b = self._weights()
        RX, RY = self._rows(x, y) if rows is None else rows
        sx, sy = RX @ w.mask, RY @ w.mask  # [sum_i k(x, x_i), sum_i k(y, x_i)], ...
        gx = a * sx[0] - b * sy[0]
        gy = a * sx[1] - b * sy[1]
        norm2 = (a * a * w.total("x", "x") + b * b * w.total("y", "y")
                 - 2.0 * a * b * w.total("x", "y"))
        return float(gx), float(gy), math.sqrt(max(norm2, 0.0))

    def _observe(self, x: np.ndarray, y: np.ndarray) -> None:
        w = self._window
        assert w is not None
        ready = w.ready or self._fit_kernel()
        self.n_seen += 1
        cache = None
        if ready and w.count >= 1:
            rows = self._rows(x, y)
            gx, gy, norm = self.witness_parts(x, y, rows)
            # a norm at rounding level (identical past samples) carries no direction
            self._bet(0.0 if norm <= 1e-12 else (gx - gy) / (2.0 * norm))
            cache = {("x", "x"): rows[0][0], ("y", "x"): rows[0][1],
                     ("x", "y"): rows[1][0], ("y", "y"): rows[1][1]}
        w.push({"x": x, "y": y}, cache)

    # -- the witness ---------------------------------------------------------------
    def witness(self, points: ArrayLike) -> np.ndarray:
        """The current unit-norm witness ``g_t / ||g_t||`` at the rows of `points`.

        Positive where the x-stream has (recently) had more mass than the
        y-stream, as the kernel sees it; all zeros before the first bet or
        while the witness is 0.
        """
        from .._validation import as_sample

        w = self._window
        pts = as_sample(points, "points", min_size=1)
        if w is None or not w.ready or w.count == 0:
            return np.zeros(pts.shape[0])
        if pts.shape[1] != w.points["x"].shape[1]:
            raise ValueError(f"`points` must have {w.points['x'].shape[1]} columns; got "
                             f"{pts.shape[1]}.")
        a, b = self._weights()
        assert self.kernel_ is not None
        m = w.mask
        vals = (a * self.kernel_.gram(pts, w.points["x"]) @ m
                - b * self.kernel_.gram(pts, w.points["y"]) @ m)
        norm2 = (a * a * w.total("x", "x") + b * b * w.total("y", "y")
                 - 2.0 * a * b * w.total("x", "y"))
        if norm2 <= 1e-24:
            return np.zeros(pts.shape[0])
        return np.asarray(vals / math.sqrt(norm2))
