"""Anytime-valid kernel tests by betting, and a drift monitor built on them.

A betting test observes a stream, bets a predictable fraction of its wealth
on a payoff built from the past observations, and rejects the first time its
wealth reaches ``1/alpha``; the false-alarm probability over the whole,
unbounded stream is at most ``alpha`` (Ville's inequality).

SequentialTwoSampleTest
    Pairs ``(x_t, y_t)``: is the x-stream distributed like the y-stream?
    (Shekhar & Ramdas 2023.)
SequentialIndependenceTest
    Pairs ``(x_t, y_t)``: is ``x`` independent of ``y``? (Podkopaev et al. 2023.)
DriftMonitor, DriftAlarm
    A reference sample and a stream: an alarm at the stopping time, with the
    evidence and the features the witness points at.
ONS, AGRAPA
    The betting-fraction strategies.
"""

from __future__ import annotations

from ._betting import AGRAPA as AGRAPA
from ._betting import ONS as ONS
from .independence import SequentialIndependenceTest as SequentialIndependenceTest
from .monitor import DriftAlarm as DriftAlarm
from .monitor import DriftMonitor as DriftMonitor
from .twosample import SequentialTwoSampleTest as SequentialTwoSampleTest

__all__ = ["AGRAPA", "DriftAlarm", "DriftMonitor", "ONS", "SequentialIndependenceTest",
           "SequentialTwoSampleTest"]
