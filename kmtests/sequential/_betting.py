"""Betting fractions: how much of its wealth a sequential test stakes on each payoff.

A betting test multiplies its wealth by ``1 + lambda_t f_t`` at step ``t``,
where ``f_t`` in [-1, 1] is the payoff and ``lambda_t`` the betting fraction.
``lambda_t`` must be *predictable*: chosen from the payoffs ``f_1, ...,
f_{t-1}`` only. Both strategies here keep ``lambda_t`` in ``[0, max_bet]``
with ``max_bet <= 1/2``, so every factor is at least ``1/2`` and the wealth
stays positive. The payoffs are oriented (a positive mean is evidence
against the null), so no negative bet is needed.

* :class:`ONS` -- online Newton step on the log-wealth (Cutkosky & Orabona
  2018), in the form used by Shekhar & Ramdas (2023) and Podkopaev et al.
  (2023, Algorithm 2): with ``z_t = f_t / (1 + lambda_t f_t)`` (the gradient
  of ``log(1 + lambda f_t)`` at ``lambda_t``) and ``A_t = 1 + sum z_s^2``,
  ``lambda_{t+1} = clip(lambda_t + 2/(2 - log 3) z_t / A_t, 0, max_bet)``.
* :class:`AGRAPA` -- approximate growth-rate adaptive to the particular
  alternative (Waudby-Smith & Ramdas 2023, eq. (26)):
  ``lambda_t = clip(mu_{t-1} / (sigma2_{t-1} + mu_{t-1}^2), 0, max_bet)``,
  with the predictable mean ``mu_t = (sum_s f_s) / (t + 1)`` (a prior payoff 0)
  and variance ``sigma2_t = (1/4 + sum_s (f_s - mu_t)^2) / (t + 1)`` (a prior
  variance 1/4).

Both are small picklable objects holding a few floats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["AGRAPA", "BETTING", "BettingStrategy", "ONS", "make_betting"]

#: the ONS step constant 2 / (2 - log 3)
ONS_STEP = 2.0 / (2.0 - math.log(3.0))


@dataclass
class BettingStrategy:
    """Base class: ``bet()`` is the next fraction, ``observe(f)`` takes the payoff."""

    max_bet: float = 0.5

    name = "base"

    def __post_init__(self) -> None:
        if not (isinstance(self.max_bet, (int, float)) and 0.0 < float(self.max_bet) <= 0.5):
            raise ValueError(f"`max_bet` must be in (0, 0.5]; got {self.max_bet!r}.")
        self.max_bet = float(self.max_bet)

    def bet(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def observe(self, payoff: float) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass
class ONS(BettingStrategy):
    """Online Newton step betting (see the module docs).

    Examples
    --------
    >>> from kmtests.sequential import ONS
    >>> s = ONS()
    >>> s.bet()
    0.0
    >>> s.observe(0.1); round(s.bet(), 4)
    0.2197
    >>> s.observe(0.5); s.bet()  # at most max_bet
    0.5
    """

    lam: float = 0.0
    a: float = 1.0

    name = "ons"

    def bet(self) -> float:
        return self.lam

    def observe(self, payoff: float) -> None:
        z = payoff / (1.0 + self.lam * payoff)
        self.a += z * z
        self.lam = min(self.max_bet, max(0.0, self.lam + ONS_STEP * z / self.a))


@dataclass
class AGRAPA(BettingStrategy):
    """aGRAPA betting (see the module docs).

    Examples
    --------
    >>> from kmtests.sequential import AGRAPA
    >>> s = AGRAPA()
    >>> s.observe(0.5); round(s.bet(), 4)
    0.5
    """

    n: int = 0
    s1: float = 0.0
    s2: float = 0.0

    name = "agrapa"

    def bet(self) -> float:
        m = self.s1 / (self.n + 1)
        # sum_s (f_s - m)^2 = s2 - 2 m s1 + n m^2
        var = (0.25 + max(self.s2 - 2.0 * m * self.s1 + self.n * m * m, 0.0)) / (self.n + 1)
        return min(self.max_bet, max(0.0, m / (var + m * m)))

    def observe(self, payoff: float) -> None:
        self.n += 1
        self.s1 += payoff
        self.s2 += payoff * payoff


BETTING: dict[str, type[BettingStrategy]] = {"ons": ONS, "agrapa": AGRAPA}


def make_betting(betting: object) -> BettingStrategy:
    """``"ons"`` / ``"agrapa"`` (or a fresh strategy object) -> a new strategy."""
    if isinstance(betting, BettingStrategy):
        return betting
    if isinstance(betting, str) and betting.lower() in BETTING:
        return BETTING[betting.lower()]()
    raise ValueError(f"`betting` must be 'ons' or 'agrapa' (or a BettingStrategy object); "
                     f"got {betting!r}.")
