"""A drift monitor: a reference sample, a stream, and an alarm at the stopping time.

Each stream observation ``y_t`` is paired with a reference observation
``x_t`` not used before (the reference in a random order fixed at the start)
and the pair goes to a :class:`~kmtests.sequential.SequentialTwoSampleTest`.
Under the null "the stream is distributed as the reference", ``x_t`` and
``y_t`` are independent draws of one law given everything before, so the
alarm keeps the level ``alpha`` over the whole stream. The pairing uses each
reference observation once, so a reference of ``m`` observations watches ``m``
stream observations: re-using reference observations would compare the stream
with the reference's empirical distribution, which a consistent test tells
apart from any continuous law eventually (a false alarm bound to ring).

The alarm says when (the stream observation), how much evidence (the wealth,
and the anytime-valid p-value ``1 / max wealth``) and which features: the
share of the witness gap ``mean g(reference) - mean g(stream)`` over the kept
points that disappears when one feature of the stream points is replaced by
the reference points' (a per-feature swap of the kept pairs), with the
features' mean shifts beside it.
"""

from __future__ import annotations

import array
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .._typing import ArrayLike, SeedLike
from .._validation import as_sample, check_choice, check_rng
from ._base import stream_rows
from .twosample import SequentialTwoSampleTest

__all__ = ["DriftAlarm", "DriftMonitor"]


@dataclass(frozen=True)
class DriftAlarm:
    """An alarm of a :class:`DriftMonitor`.

    Attributes
    ----------
    step : int
        The stream observation (counted from 1) at which the wealth reached
        ``1/alpha``.
    segment_start : int
        The first stream observation of the test that rang (1 unless the
        monitor restarts after alarms).
    wealth, log_wealth : float
        The evidence at the alarm (``wealth >= 1/alpha``).
    pvalue : float
        ``1 / max wealth``, anytime-valid.
    alpha : float
        The level.
    features : dict
        Feature name -> share of the witness gap explained by that feature
        (non-negative, summing to 1 unless no feature explains any).
    mean_shift : dict
        Feature name -> mean of the kept stream points minus mean of the kept
        reference points.
    """

    step: int
    segment_start: int
    wealth: float
    log_wealth: float
    pvalue: float
    alpha: float
    features: dict[str, float] = field(default_factory=dict)
    mean_shift: dict[str, float] = field(default_factory=dict)

    def top_features(self, k: int = 3) -> list[tuple[str, float]]:
        """The `k` features with the largest shares."""
        return sorted(self.features.items(), key=lambda kv: -kv[1])[:k]

    def __str__(self) -> str:
        feats = ", ".join(f"{name} {share:.2f} (shift {self.mean_shift[name]:+.3g})"
                          for name, share in self.top_features())
        return (f"alarm at observation {self.step}: wealth {self.wealth:.4g} >= 1/alpha = "
                f"{1 / self.alpha:.4g} (p <= {self.pvalue:.4g}); features: {feats}")


class DriftMonitor:
    """Watch a stream for a change from a reference sample, with anytime-valid alarms.

    Parameters
    ----------
    reference : array_like, shape (m, d)
        Observations of the law the stream should follow. The monitor
        watches up to ``m`` stream observations (each is paired with a
        reference observation not used before).
    alpha : float
        The probability of a false alarm over the whole stream (per test:
        with ``restart=True`` each segment after an alarm is a new test).
    kernel, bandwidth, estimator, betting, max_points, burn_in, payoff_scale
        As in :class:`~kmtests.sequential.SequentialTwoSampleTest`.
    nan_policy : {"raise", "omit"}
        A stream observation with a missing value: an error naming it
        (nothing of that update is taken), or left out (and so are the
        reference's rows with a missing value).
    restart : bool
        After an alarm, start a new test on the next observations (so that
        later alarms can ring); default False: one alarm, the monitor keeps
        counting.
    feature_names : sequence of str, optional
        Names of the ``d`` features in reports (default ``x0, x1, ...``; the
        column names of a pandas DataFrame).
    rng : None, int or numpy.random.Generator
        The random order of the reference.

    Attributes
    ----------
    alarms : list of DriftAlarm
    n_seen : int
        Stream observations taken.
    path : array of float
        The log-wealth after each stream observation (0 during a burn-in).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import DriftMonitor
    >>> rng = np.random.default_rng(0)
    >>> monitor = DriftMonitor(rng.normal(size=(5000, 3)), alpha=0.01, rng=1)
    >>> before = rng.normal(size=(300, 3))
    >>> after = rng.normal(size=(2000, 3)) + np.array([0.0, 1.0, 0.0])
    >>> monitor.update(before)
    []
    >>> alarm, = monitor.update(after)
    >>> print(alarm.step, alarm.top_features(1)[0][0])
    344 x1
    """

    def __init__(self, reference: ArrayLike, *, alpha: float = 0.05, kernel: Any = "gaussian",
                 bandwidth: Any = "median", estimator: Any = "kme", betting: Any = "ons",
                 max_points: int = 500, burn_in: int | None = None,
                 nan_policy: str = "raise", restart: bool = False, payoff_scale: str = "norm",
                 feature_names: Sequence[str] | None = None, rng: SeedLike = None) -> None:
        names = None
        if type(reference).__module__.split(".")[0] == "pandas" and hasattr(reference,
                                                                             "columns"):
            names = [str(c) for c in reference.columns]
        omit = nan_policy == "omit"
        ref = as_sample(reference, "reference", min_size=1 if omit else 2, allow_nan=omit)
        if omit:  # reference rows with a missing value are left out too
            ref = ref[~np.isnan(ref).any(axis=1)]
            if ref.shape[0] < 2:
                raise ValueError("`reference` must contain at least 2 observations without a "
                                 f"missing value; got {ref.shape[0]}.")
        self._options = {"alpha": alpha, "kernel": kernel, "bandwidth": bandwidth,
                         "estimator": estimator, "betting": betting,
                         "max_points": max_points, "burn_in": burn_in,
                         "payoff_scale": payoff_scale}
        self.test = self._new_test()
        self.nan_policy = check_choice(nan_policy, "nan_policy", ("raise", "omit"))
        self.restart = bool(restart)
        d = ref.shape[1]
        if feature_names is not None:
            names = [str(v) for v in feature_names]
        if names is None:
            names = [f"x{j}" for j in range(d)]
        if len(names) != d:
            raise ValueError(f"`feature_names` must name the {d} columns of `reference`; got "
                             f"{len(names)} names.")
        self.feature_names = names
        self.reference = ref[check_rng(rng).permutation(ref.shape[0])]
        self.alarms: list[DriftAlarm] = []
        self.n_seen = 0
        self.n_omitted = 0
        self._segment_start = 1
        self.path = array.array("d")

    def _new_test(self) -> SequentialTwoSampleTest:
        return SequentialTwoSampleTest(**self._options)

    @property
    def alpha(self) -> float:
        return self.test.alpha

    @property
    def remaining(self) -> int:
        """Stream observations the reference can still be paired with."""
        return self.reference.shape[0] - self.n_seen

    @property
    def alarm(self) -> bool:
        """Whether an alarm has rung."""
        return bool(self.alarms)

    def update(self, rows: ArrayLike) -> list[DriftAlarm]:
        """Take stream observations (one as a 1-D array, or a batch as rows), in order.

        Returns
        -------
        list of DriftAlarm
            The alarms that rang during this update (usually empty).

        Raises
        ------
        ValueError, TypeError
            Non-numeric values, infinities, another number of columns than the
            reference, missing values with ``nan_policy="raise"`` (naming the
            row), or more observations than reference observations left.
            Nothing of the update is taken then.
        """
        y, _ = stream_rows(rows, "rows")
        d = self.reference.shape[1]
        if y.shape[1] != d:
            raise ValueError(f"`rows` has {y.shape[1]} column(s) but the reference has {d} "
                             "(a batch of one-column observations has shape (b, 1)); nothing "
                             "of this update was taken.")
        bad = np.isnan(y).any(axis=1)
        if bad.any() and self.nan_policy == "raise":
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"`rows` row {i} (observation {self.n_seen + self.n_omitted + i + 1} of the "
                "stream) is missing (NaN); with nan_policy='raise' nothing of this update was "
                "taken. Remove or fill it, or use nan_policy='omit'.")
        n_bad = int(bad.sum())
        y = y[~bad]
        if y.shape[0] > self.remaining:
            raise ValueError(
                f"the reference has {self.remaining} unused observation(s) left but this update "
                f"brings {y.shape[0]}: each stream observation is paired with a reference "
                "observation used once (re-using them would break the level); nothing of this "
                "update was taken. Give a larger reference.")
        self.n_omitted += n_bad
        test = self.test
        test._begin({"x": d, "y": d})
        new: list[DriftAlarm] = []
        for row in y:
            x = self.reference[self.n_seen]
            rejected = test.reject
            test._observe(x, row)
            self.n_seen += 1
            self.path.append(test.log_wealth)
            if test.reject and not rejected:
                alarm = self._alarm()
                self.alarms.append(alarm)
                new.append(alarm)
                if self.restart:
                    self.test = test = self._new_test()
                    test._begin({"x": d, "y": d})
                    self._segment_start = self.n_seen + 1
        return new

    def _alarm(self) -> DriftAlarm:
        test = self.test
        step = self._segment_start - 1 + int(test.stopping_time or 0)
        shares, shifts = self.explain()
        return DriftAlarm(step=step, segment_start=self._segment_start, wealth=test.wealth,
                          log_wealth=test.log_wealth, pvalue=test.pvalue, alpha=test.alpha,
                          features=shares, mean_shift=shifts)

    def explain(self) -> tuple[dict[str, float], dict[str, float]]:
        """Which features the current witness points at (see the module docs).

        Returns
        -------
        shares : dict
            Feature -> share of the witness gap ``mean g(x) - mean g(y)``
            over the kept pairs that a swap of that feature removes
            (negative drops count 0; shares sum to 1 when any is positive).
        mean_shift : dict
            Feature -> mean of the kept stream points minus the kept
            reference points'.
        """
        w = self.test._window
        names = self.feature_names
        if w is None or w.count == 0:
            return {n: 0.0 for n in names}, {n: 0.0 for n in names}
        xr, ys = w.data("x"), w.data("y")
        shifts = {n: float(v) for n, v in zip(names, ys.mean(axis=0) - xr.mean(axis=0))}
        if not w.ready:
            return {n: 0.0 for n in names}, shifts
        g = self.test.witness
        gx = float(g(xr).mean())
        gap = gx - float(g(ys).mean())
        drops = np.zeros(len(names))
        for j in range(len(names)):
            swapped = ys.copy()
            swapped[:, j] = xr[:, j]
            drops[j] = gap - (gx - float(g(swapped).mean()))
        drops = np.maximum(drops, 0.0)
        total = float(drops.sum())
        shares = drops / total if total > 0 else drops
        return {n: float(s) for n, s in zip(names, shares)}, shifts

    def status(self) -> str:
        """One line: observations, log-wealth against the threshold, p-value, alarms."""
        t = self.test
        return (f"observation {self.n_seen}: log-wealth {t.log_wealth:.3f} / threshold "
                f"{t.threshold:.3f}, p <= {t.pvalue:.4g}, alarms {len(self.alarms)}")

    def report(self) -> str:
        """A few lines: what was watched, and each alarm (or none)."""
        t = self.test
        kern = t.kernel_.describe() if t.kernel_ is not None else "bandwidth not fixed yet"
        lines = [f"Drift monitor: {self.n_seen} stream observation(s) against a reference of "
                 f"{self.reference.shape[0]} ({self.remaining} left), alpha = {t.alpha:g}, "
                 f"{t.estimator.name} witness, {t.betting.name} bets, kernel {kern}, "
                 f"budget {t.max_points} pairs."]
        if self.n_omitted:
            lines.append(f"{self.n_omitted} observation(s) with a missing value left out.")
        if not self.alarms:
            lines.append(f"No alarm: {self.status()}.")
        lines.extend(str(a) for a in self.alarms)
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Log-wealth along the stream, with the threshold ``log(1/alpha)`` and the alarms.

        Needs matplotlib; returns the Axes drawn on.
        """
        from ..results._plot import pyplot

        plt = pyplot("DriftMonitor.plot()")
        if ax is None:
            _, ax = plt.subplots()
        steps = np.arange(1, len(self.path) + 1)
        ax.plot(steps, np.asarray(self.path), color="C0", lw=1.2, label="log-wealth")
        ax.axhline(self.test.threshold, color="C3", ls="--",
                   label=f"log(1/alpha) = {self.test.threshold:.2f}")
        for i, a in enumerate(self.alarms):
            ax.axvline(a.step, color="0.4", ls=":", label="alarm" if i == 0 else None)
        ax.set_xlabel("stream observation")
        ax.set_ylabel("log-wealth")
        ax.legend(loc="upper left")
        return ax

    def __repr__(self) -> str:
        return f"<DriftMonitor: {self.status()}>"
