"""What every betting test shares: wealth, the rejection rule, validation of the stream.

A sequential kernel test observes pairs one at a time. Before each bet it
chooses a payoff function from the past observations (the witness) and a
betting fraction from the past payoffs; the wealth

    K_t = prod_{s <= t} (1 + lambda_s f_s),     f_s in [-1, 1], lambda_s in [0, 1/2],

is a nonnegative supermartingale with ``K_0 = 1`` under the null, so Ville's
inequality gives ``P(exists t: K_t >= 1/alpha) <= alpha``: rejecting the
first time the wealth reaches ``1/alpha`` keeps the level over an unbounded
horizon, whenever the user looks and whenever they stop. ``1 / max_{s<=t}
K_s`` is an anytime-valid p-value.

The subclasses say what a payoff is (:meth:`SequentialTest._step`); this
module keeps the wealth and validates the stream: every check is done on the
whole batch before any observation is taken, so a refused ``update`` leaves
the test as it was.
"""

from __future__ import annotations

import array
import copy
import math
import numbers
from typing import Any

import numpy as np

from .._typing import ArrayLike
from .._validation import as_sample, check_choice
from ..estimators import KernelMeanEstimator, resolve_estimator
from ..kernels import ARDGaussian, Gaussian, Kernel, Laplacian, resolve_kernel
from ._betting import BettingStrategy, make_betting

__all__ = ["SequentialTest", "bounded_kernel", "check_alpha", "stream_rows",
           "uniform_estimator"]

#: the kernels with 0 <= k <= 1 and k(x, x) = 1: a unit-norm witness is bounded by 1
BOUNDED_KERNELS = (Gaussian, Laplacian, ARDGaussian)
#: pairs seen before the median-heuristic bandwidth is fixed (when none is given)
DEFAULT_BURN_IN = 20


def check_alpha(alpha: Any) -> float:
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, numbers.Real) \
            or not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"`alpha` must be a number in (0, 1); got {alpha!r}.")
    return float(alpha)


def bounded_kernel(kernel: Any, bandwidth: Any, name: str = "kernel",
                   bandwidth_name: str = "bandwidth") -> Kernel:
    """The kernel, refused unless it is bounded by ``k(x, x) = 1`` (the payoffs' bound)."""
    k = resolve_kernel(kernel, bandwidth, name=name, bandwidth_name=bandwidth_name)
    if not isinstance(k, BOUNDED_KERNELS):
        raise ValueError(
            f"`{name}`: a betting test needs a kernel with 0 <= k <= 1 and k(x, x) = 1, so "
            "that a unit-norm witness is bounded by 1 and the payoffs stay in [-1, 1] (the "
            "wealth must stay positive): 'gaussian', 'laplacian' or 'ard'; got the "
            f"{k.name!r} kernel.")
    return k


def uniform_estimator(estimator: Any) -> KernelMeanEstimator:
    """The estimator, refused unless its weights are ``c/n`` with ``c`` from block sums."""
    est = resolve_estimator(estimator)
    if est.transforms_kernel:
        raise ValueError(
            f"`estimator`: {est.name!r} acts through a smoothed kernel tuned on the data "
            "(marginalized embedding); the sequential tests keep one kernel fixed after the "
            "burn-in and support the KME and the uniform shrinkage estimators ('kme', "
            "'skmse', 'bkmse').")
    if not est.uniform:
        raise ValueError(
            f"`estimator`: {est.name!r} needs its weights recomputed from the whole "
            "Gram matrix of the window at every step (an eigenproblem, O(max_points^3) per "
            "observation); the sequential tests support the estimators whose weights are "
            "c/n with c from running sums, updated in O(max_points) per observation: 'kme', "
            "'skmse', 'bkmse'.")
    return est


def stream_rows(data: Any, name: str) -> tuple[np.ndarray, bool]:
    """`data` as rows ``(b, d)``: a scalar or 1-D input is one observation."""
    one = False
    if not (type(data).__module__.split(".")[0] == "pandas"
            and getattr(data, "ndim", 1) == 2):
        try:
            nd = np.ndim(data)
        except (TypeError, ValueError):  # ragged input: as_sample says so
            nd = 2
        if nd == 0:
            data, one = [[data]], True
        elif nd == 1:
            data, one = [data] if not hasattr(data, "to_numpy") else [data.to_numpy()], True
    arr = as_sample(data, name, min_size=1, allow_nan=True)
    return arr, one


class SequentialTest:
    """Base class of the betting tests (wealth, rejection, stream validation).

    Subclasses set ``roles`` and implement :meth:`_step` (one observation).
    """

    roles: tuple[str, str] = ("x", "y")

    def __init__(self, *, alpha: float, betting: Any, max_points: Any, burn_in: Any,
                 nan_policy: Any, record: bool, needs_burn_in: bool,
                 payoff_scale: Any = "norm") -> None:
        self.alpha = check_alpha(alpha)
        self.payoff_scale = check_choice(payoff_scale, "payoff_scale", ("norm", "adaptive"))
        self._scale = 0.0
        self.betting: BettingStrategy = copy.deepcopy(make_betting(betting))
        if isinstance(max_points, (bool, np.bool_)) or not isinstance(max_points,
                                                                     numbers.Integral) \
                or int(max_points) < 2:
            raise ValueError(f"`max_points` must be an integer >= 2 (the past observations "
                             f"kept for the witness); got {max_points!r}.")
        self.max_points = int(max_points)
        if burn_in is None:
            burn_in = DEFAULT_BURN_IN if needs_burn_in else 0
        if isinstance(burn_in, (bool, np.bool_)) or not isinstance(burn_in, numbers.Integral) \
                or int(burn_in) < 0:
            raise ValueError(f"`burn_in` must be a non-negative integer or None; got "
                             f"{burn_in!r}.")
        burn_in = int(burn_in)
        if needs_burn_in and burn_in < 2:
            raise ValueError(f"`burn_in` must be at least 2 when a bandwidth is chosen by the "
                             f"median heuristic (it needs two points); got {burn_in}.")
        if burn_in > self.max_points:
            raise ValueError(f"`burn_in` ({burn_in}) must not exceed `max_points` "
                             f"({self.max_points}): the bandwidth is chosen on the kept "
                             "observations.")
        self.burn_in = burn_in
        self.nan_policy = check_choice(nan_policy, "nan_policy", ("raise", "omit"))
        self.record = bool(record)
        self.n_seen = 0
        self.n_omitted = 0
        self._log_wealth = 0.0
        self._max_log_wealth = 0.0
        self._stopping_time: int | None = None
        self._dims: dict[str, int] | None = None
        self._bets = 0
        self.history: dict[str, array.array[Any]] = {
            "step": array.array("q"), "payoff": array.array("d"), "bet": array.array("d"),
            "log_wealth": array.array("d")}

    # -- results -----------------------------------------------------------------
    @property
    def log_wealth(self) -> float:
        """``log K_t``, the log of the current wealth."""
        return self._log_wealth

    @property
    def wealth(self) -> float:
        """``K_t``, the current wealth (``inf`` if it overflows a float)."""
        return math.exp(self._log_wealth) if self._log_wealth < 709.0 else math.inf

    @property
    def threshold(self) -> float:
        """``log(1/alpha)``: the test rejects when the log-wealth reaches it."""
        return math.log(1.0 / self.alpha)

    @property
    def reject(self) -> bool:
        """Whether the wealth has reached ``1/alpha`` at some step."""
        return self._stopping_time is not None

    @property
    def stopping_time(self) -> int | None:
        """The number of pairs seen when the wealth first reached ``1/alpha`` (None before)."""
        return self._stopping_time

    @property
    def pvalue(self) -> float:
        """``1 / max_s K_s`` (at most 1): valid at any stopping time."""
        return math.exp(-self._max_log_wealth)

    @property
    def n_bets(self) -> int:
        """The number of bets placed (payoffs observed)."""
        return self._bets

    # -- the stream --------------------------------------------------------------
    def update(self, x_new: ArrayLike, y_new: ArrayLike) -> "SequentialTest":
        """Observe one pair or a batch of pairs (rows), in order.

        Parameters
        ----------
        x_new, y_new : array_like
            One observation (a scalar, or a 1-D array of its features) or a
            batch of observations as rows (2-D, shape ``(b, d)``; a batch of
            one-feature observations has shape ``(b, 1)``). Rows of `x_new`
            and `y_new` are paired.

        Returns
        -------
        self

        Raises
        ------
        ValueError, TypeError
            Non-numeric values, infinities, a number of columns other than
            the first update's, unpaired batches, or missing values (NaN) with
            ``nan_policy="raise"`` (the error names the row). Nothing of the
            batch is taken then: the test is left as it was.
        """
        x, y = self._validate(x_new, y_new)
        for i in range(x.shape[0]):
            self._observe(x[i], y[i])
        return self

    def _validate(self, x_new: Any, y_new: Any) -> tuple[np.ndarray, np.ndarray]:
        names = (f"{self.roles[0]}_new", f"{self.roles[1]}_new")
        x, _ = stream_rows(x_new, names[0])
        y, _ = stream_rows(y_new, names[1])
        if x.shape[0] != y.shape[0]:
            raise ValueError(f"`{names[0]}` and `{names[1]}` must have the same number of rows "
                             f"(paired observations); got {x.shape[0]} and {y.shape[0]}.")
        dims = {self.roles[0]: x.shape[1], self.roles[1]: y.shape[1]}
        if self._dims is not None:
            for (role, d), name in zip(dims.items(), names):
                if d != self._dims[role]:
                    raise ValueError(
                        f"`{name}` has {d} column(s) but the stream's {role} had "
                        f"{self._dims[role]} so far (a batch of one-column observations has "
                        f"shape (b, 1)); nothing of this update was taken.")
        self._check_dims(dims)
        bad = np.isnan(x).any(axis=1) | np.isnan(y).any(axis=1)
        if bad.any():
            if self.nan_policy == "raise":
                i = int(np.flatnonzero(bad)[0])
                name = names[0] if np.isnan(x[i]).any() else names[1]
                raise ValueError(
                    f"`{name}` row {i} (observation {self.n_seen + self.n_omitted + i + 1} of "
                    "the stream) is missing (NaN); with nan_policy='raise' nothing of this "
                    "update was taken. Remove or fill it, or use nan_policy='omit' to leave "
                    "out pairs with a missing value.")
            self.n_omitted += int(bad.sum())
            x, y = x[~bad], y[~bad]
        self._begin(dims)
        return x, y

    def _begin(self, dims: dict[str, int]) -> None:
        """Fix the stream's dimensions at its first observations (once)."""
        if self._dims is None:
            self._dims = dims
            self._start(dims)

    def _check_dims(self, dims: dict[str, int]) -> None:
        """Refuse dimensions the test cannot take (before anything is changed)."""

    def _start(self, dims: dict[str, int]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _observe(self, x: np.ndarray, y: np.ndarray) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _bet(self, payoff: float) -> None:
        """Stake the predictable fraction on `payoff` (in [-1, 1]) and update the wealth.

        With ``payoff_scale="adaptive"`` the payoff is first divided by the
        largest absolute payoff of the earlier bets and clipped to [-1, 1]: a
        predictable scale and an odd function, so a payoff whose sign flips
        under a swap that leaves the null law unchanged keeps mean 0.
        """
        payoff = min(1.0, max(-1.0, float(payoff)))
        if self.payoff_scale == "adaptive":
            raw, scale = payoff, self._scale
            if scale > 0.0:
                payoff = min(1.0, max(-1.0, raw / scale))
            self._scale = max(scale, abs(raw))
        lam = self.betting.bet()
        self._log_wealth += math.log1p(lam * payoff)
        self.betting.observe(payoff)
        self._bets += 1
        if self._log_wealth > self._max_log_wealth:
            self._max_log_wealth = self._log_wealth
        if self._stopping_time is None and self._log_wealth >= self.threshold:
            self._stopping_time = self.n_seen
        if self.record:
            h = self.history
            h["step"].append(self.n_seen)
            h["payoff"].append(payoff)
            h["bet"].append(lam)
            h["log_wealth"].append(self._log_wealth)

    def summary_line(self) -> str:
        """One line: pairs seen, log-wealth, p-value, decision."""
        verdict = (f"REJECT at pair {self._stopping_time}" if self.reject
                   else "no rejection so far")
        return (f"{self.n_seen} pairs, log-wealth {self._log_wealth:.3f} (threshold "
                f"{self.threshold:.3f}), p <= {self.pvalue:.4g}: {verdict}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.summary_line()}>"
