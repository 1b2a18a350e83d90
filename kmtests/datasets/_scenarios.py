"""Seeded simulation scenarios for power studies.

A scenario draws a data set ``(x, y)`` of size `n` with effect size `effect`
from a Generator. ``effect = 0`` is always the null hypothesis (equal
distributions, or independence), so the same scenario measures both level and
power.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["SCENARIOS", "Scenario", "get_scenario"]

Sampler = Callable[[int, float, np.random.Generator], "tuple[np.ndarray, np.ndarray]"]
_Pair = tuple[np.ndarray, np.ndarray]
_Gen = np.random.Generator


@dataclass(frozen=True)
class Scenario:
    """A named data-generating process for a power study.

    Attributes
    ----------
    name : str
    kind : {'two_sample', 'independence'}
        Which test the scenario is for.
    sampler : callable
        ``sampler(n, effect, rng) -> (x, y)``; two-sample scenarios return two
        samples of size `n` each, independence scenarios `n` pairs.
    default_effect : float
        A moderate effect used when none is given.
    description : str
        The model, with the meaning of `effect`.
    max_n : int or None
        Largest possible `n` (finite data sets).
    """

    name: str
    kind: str
    sampler: Sampler
    default_effect: float
    description: str
    max_n: int | None = None

    def sample(self, n: int, effect: float | None = None,
               rng: np.random.Generator | int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Draw one data set.

        Examples
        --------
        >>> from kmtests.datasets import get_scenario
        >>> x, y = get_scenario("mean_shift").sample(5, 1.0, rng=0)
        >>> x.shape, y.shape
        ((5, 2), (5, 2))
        """
        if self.max_n is not None and n > self.max_n:
            raise ValueError(f"scenario {self.name!r} has at most {self.max_n} observations; "
                             f"got n = {n}.")
        gen = np.random.default_rng(rng)
        return self.sampler(int(n), float(self.default_effect if effect is None else effect), gen)


def _mean_shift(n: int, effect: float, gen: _Gen) -> _Pair:
    x = gen.normal(size=(n, 2))
    y = gen.normal(size=(n, 2))
    y[:, 0] += effect
    return x, y


def _variance_shift(n: int, effect: float, gen: _Gen) -> _Pair:
    return gen.normal(size=(n, 2)), (1.0 + effect) * gen.normal(size=(n, 2))


def _mixture_vs_gaussian(n: int, effect: float, gen: _Gen) -> _Pair:
    if not 0 <= effect < 1:
        raise ValueError("`effect` of 'mixture_vs_gaussian' must be in [0, 1).")
    x = gen.normal(size=(n, 1))
    sign = np.where(gen.random(n) < 0.5, -1.0, 1.0)[:, None]
    y = sign * effect + np.sqrt(1.0 - effect**2) * gen.normal(size=(n, 1))
    return x, y


def _heavy_tails(n: int, effect: float, gen: _Gen) -> _Pair:
    if not 0 <= effect < 0.5:
        raise ValueError("`effect` of 'heavy_tails' (1/df) must be in [0, 0.5).")
    x = gen.normal(size=(n, 1))
    if effect == 0:
        return x, gen.normal(size=(n, 1))
    df = 1.0 / effect
    return x, gen.standard_t(df, size=(n, 1)) * np.sqrt((df - 2.0) / df)


def _linear(n: int, effect: float, gen: _Gen) -> _Pair:
    x = gen.normal(size=(n, 1))
    return x, effect * x + gen.normal(size=(n, 1))


def _sinusoidal(n: int, effect: float, gen: _Gen) -> _Pair:
    x = gen.uniform(-np.pi, np.pi, size=(n, 1))
    return x, effect * np.sin(2.0 * x) + gen.normal(size=(n, 1))


def _circular(n: int, effect: float, gen: _Gen) -> _Pair:
    theta = gen.uniform(0, 2 * np.pi, size=n)
    x = effect * np.cos(theta)[:, None] + 0.5 * gen.normal(size=(n, 1))
    y = effect * np.sin(theta)[:, None] + 0.5 * gen.normal(size=(n, 1))
    return x, y


def _mixtures(n: int, effect: float, gen: _Gen, d: int = 5) -> _Pair:
    from dataclasses import replace

    from ._synthetic import synthetic_mixture

    mix = synthetic_mixture(d, rng=gen)
    shifted = replace(mix, means=mix.means + np.r_[effect, np.zeros(d - 1)])
    return mix.sample(n, rng=gen), shifted.sample(n, rng=gen)


def _eckerle(n: int, effect: float, gen: _Gen) -> _Pair:
    from . import load_eckerle4

    df = load_eckerle4()
    idx = gen.choice(len(df), size=n, replace=False)
    x = df["x"].to_numpy()[idx, None]
    y = df["y"].to_numpy()[idx, None]
    if effect < 1:  # mix: with probability 1 - effect a pair's y is replaced by a random y
        swap = gen.random(n) >= effect
        y[swap] = df["y"].to_numpy()[gen.choice(len(df), size=int(swap.sum())), None]
    return x, y


SCENARIOS: dict[str, Scenario] = {s.name: s for s in [
    Scenario("mean_shift", "two_sample", _mean_shift, 0.5,
             "x ~ N(0, I_2), y ~ N((effect, 0), I_2)"),
    Scenario("variance_shift", "two_sample", _variance_shift, 0.5,
             "x ~ N(0, I_2), y ~ N(0, (1 + effect)^2 I_2)"),
    Scenario("mixture_vs_gaussian", "two_sample", _mixture_vs_gaussian, 0.8,
             "x ~ N(0, 1), y ~ 0.5 N(-effect, 1 - effect^2) + 0.5 N(effect, 1 - effect^2) "
             "(same mean and variance)"),
    Scenario("heavy_tails", "two_sample", _heavy_tails, 0.3,
             "x ~ N(0, 1), y ~ t with df = 1/effect scaled to unit variance"),
    Scenario("gaussian_mixtures", "two_sample", _mixtures, 4.0,
             "a random mixture of 4 Gaussians in d = 5 (the papers' generator, "
             "kmtests.datasets.synthetic_mixture) per data set; y's component means are "
             "shifted by effect along the first axis"),
    Scenario("linear", "independence", _linear, 0.3,
             "x ~ N(0, 1), y = effect x + N(0, 1)"),
    Scenario("sinusoidal", "independence", _sinusoidal, 0.6,
             "x ~ U(-pi, pi), y = effect sin(2x) + N(0, 1)"),
    Scenario("circular", "independence", _circular, 1.0,
             "theta ~ U(0, 2 pi), (x, y) = effect (cos theta, sin theta) + N(0, 0.25 I_2)"),
    Scenario("eckerle", "independence", _eckerle, 1.0,
             "n rows of NIST Eckerle4 drawn without replacement (x = wavelength, y = "
             "transmittance); each y is replaced by an independent random y with "
             "probability 1 - effect (effect = 1: the data as measured; 0: independence)",
             max_n=35),
]}


def get_scenario(name: str | Scenario) -> Scenario:
    """The scenario registered as `name` (see :data:`SCENARIOS`)."""
    if isinstance(name, Scenario):
        return name
    if not isinstance(name, str) or name not in SCENARIOS:
        valid = ", ".join(repr(k) for k in sorted(SCENARIOS))
        raise ValueError(f"`scenario` must be one of {valid}; got {name!r}.")
    return SCENARIOS[name]
