"""Seeded simulation scenarios for power studies.

A scenario draws a data set — ``(x, y)``, ``k`` samples for a k-sample
scenario, or one sample ``(x,)`` with the model it is tested against for a
goodness-of-fit scenario (``gof_*``) — of size `n` with effect size `effect` from a
Generator. ``effect = 0`` is always the null hypothesis (equal distributions,
independence, or a sample of the model), so the same scenario measures both level
and power.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._validation import check_positive_int, shown

__all__ = ["SCENARIOS", "Scenario", "ar1_pair", "cauchy_shift", "conditional_sine",
           "gaussian_mean_shift",
           "gaussian_scale_shift", "get_scenario", "k_sample_shift", "perturbed_uniform",
           "sinusoid", "xor_joint"]

Sampler = Callable[[int, float, np.random.Generator], "tuple[np.ndarray, ...]"]
_Pair = tuple[np.ndarray, np.ndarray]
_Gen = np.random.Generator


@dataclass(frozen=True)
class Scenario:
    """A named data-generating process for a power study.

    Attributes
    ----------
    name : str
    kind : {'two_sample', 'independence', 'k_sample', 'joint', 'conditional'}
        Which test the scenario is for (:data:`kmtests.power.TESTS`).
    sampler : callable
        ``sampler(n, effect, rng) -> data``: two-sample scenarios return two
        samples of size `n` each, independence scenarios `n` pairs ``(x, y)``,
        k-sample scenarios a tuple of ``k`` samples of size `n`.
    default_effect : float
        A moderate effect used when none is given.
    description : str
        The model, with the meaning of `effect`.
    max_n : int or None
        Largest possible `n` (finite data sets).
    model_factory : callable or None
        ``model_factory()`` is the model a one-sample (goodness-of-fit) scenario's sample
        is tested against (a frozen scipy.stats distribution: ``goodness_of_fit_test(x,
        model=scenario.model)``); its samples come from the model when ``effect = 0``.
        (A factory: scipy loads when the model is first asked for.)
    """

    name: str
    kind: str
    sampler: Sampler
    default_effect: float
    description: str
    max_n: int | None = None
    model_factory: Callable[[], Any] | None = None

    @property
    def model(self) -> Any:
        """The model of a goodness-of-fit scenario (None for the others)."""
        return None if self.model_factory is None else self.model_factory()

    def sample(self, n: int, effect: float | None = None,
               rng: np.random.Generator | int | None = None) -> tuple[np.ndarray, ...]:
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


def _xor(n: int, effect: float, gen: _Gen) -> _Pair:
    coins = gen.integers(0, 2, size=(n, 2))
    y = effect * (coins[:, 0] ^ coins[:, 1]) + gen.normal(size=n)
    return coins.astype(np.float64), y[:, None]


def _mixtures(n: int, effect: float, gen: _Gen, d: int = 5) -> _Pair:
    # imported here, not at the top: a power study's checkpoint records the code of the
    # scenarios' functions (kmtests.studies._canonical); moving an import changes it
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


# -- the settings of the regularised and aggregated tests' papers -------------------------------
def gaussian_mean_shift(d: int = 10) -> Scenario:
    """x ~ N(0, I_d), y ~ N(effect 1_d, I_d): every coordinate shifted (Hagrass et al., 2024).

    Examples
    --------
    >>> from kmtests.datasets import gaussian_mean_shift
    >>> x, y = gaussian_mean_shift(50).sample(200, 0.1, rng=0)
    >>> x.shape, y.shape
    ((200, 50), (200, 50))
    """
    d = _dimension(d)

    def sampler(n: int, effect: float, gen: _Gen) -> _Pair:
        return gen.normal(size=(n, d)), gen.normal(size=(n, d)) + effect

    return Scenario(f"gaussian_mean_shift_d{d}", "two_sample", sampler, 0.1,
                    f"x ~ N(0, I_{d}), y ~ N(effect 1, I_{d}) (Hagrass et al., 2024)")


def gaussian_scale_shift(d: int = 10) -> Scenario:
    """x ~ N(0, I_d), y ~ N(0, (1 + effect)^2 I_d) (Hagrass et al., 2024: sd ratio 1 + effect)."""
    d = _dimension(d)

    def sampler(n: int, effect: float, gen: _Gen) -> _Pair:
        if effect <= -1:
            raise ValueError("`effect` of a scale shift must be > -1 (sd ratio 1 + effect).")
        return gen.normal(size=(n, d)), (1.0 + effect) * gen.normal(size=(n, d))

    return Scenario(f"gaussian_scale_shift_d{d}", "two_sample", sampler, 0.2,
                    f"x ~ N(0, I_{d}), y ~ N(0, (1 + effect)^2 I_{d}) (Hagrass et al., 2024)")


def cauchy_shift(d: int = 1) -> Scenario:
    """x ~ Cauchy(0, 1)^d, y ~ Cauchy(effect, 1)^d: a median shift of every coordinate of a
    heavy-tailed distribution (Hagrass et al., 2024)."""
    d = _dimension(d)

    def sampler(n: int, effect: float, gen: _Gen) -> _Pair:
        return gen.standard_cauchy(size=(n, d)), gen.standard_cauchy(size=(n, d)) + effect

    return Scenario(f"cauchy_shift_d{d}", "two_sample", sampler, 0.5,
                    f"x ~ Cauchy(0, 1)^{d}, y ~ Cauchy(effect, 1)^{d} (Hagrass et al., 2024)")


def _bump(t: np.ndarray) -> np.ndarray:
    """G of Schrab et al. (2023), Sec. 5.4: a smooth bump on (-1, -1/2), minus one on
    (-1/2, 0), zero elsewhere (it integrates to 0)."""
    out = np.zeros_like(t)
    a = (t > -1.0) & (t < -0.5)
    b = (t > -0.5) & (t < 0.0)
    out[a] = np.exp(-1.0 / (1.0 - (4.0 * t[a] + 3.0) ** 2))
    out[b] = -np.exp(-1.0 / (1.0 - (4.0 * t[b] + 1.0) ** 2))
    return out


def perturbed_uniform_density(x: np.ndarray, theta: np.ndarray, perturbations: int,
                              amplitude: float) -> np.ndarray:
    """``1 + amplitude sum_nu theta_nu prod_r G(P x_r - nu_r)`` on [0, 1]^d (0 outside)."""
    # imported here: a power study's checkpoint records the code of the
    # scenarios' functions (kmtests.studies._canonical); moving an import changes it
    import itertools

    n, d = x.shape
    P = perturbations
    f = np.zeros(n)
    for i, nu in enumerate(itertools.product(range(1, P + 1), repeat=d)):
        term = np.ones(n)
        for r in range(d):
            term = term * _bump(P * x[:, r] - nu[r])
        f += theta[i] * term
    inside = np.all((x >= 0) & (x <= 1), axis=1)
    return np.where(inside, 1.0 + amplitude * f, 0.0)


def perturbed_uniform(d: int = 1, perturbations: int = 2, smoothness: float = 1.0) -> Scenario:
    """x ~ U[0, 1]^d, y from the uniform density with ``perturbations ** d`` smooth bumps of
    random signs (Schrab et al., 2023, Sec. 5.4; also Hagrass et al., 2024, Biggs et al., 2023).

    ``effect`` is the multiplier ``c_d`` of the bumps' amplitude
    ``c_d P^(-smoothness)`` (the papers use 2.7 for d = 1 and 7.3 for d = 2); the
    density stays non-negative for ``c_d <= e^d P^smoothness``. The signs are drawn
    afresh for every data set, as in the papers. Samples of y by rejection.

    Examples
    --------
    >>> from kmtests.datasets import perturbed_uniform
    >>> sc = perturbed_uniform(d=1, perturbations=3)
    >>> x, y = sc.sample(500, 2.7, rng=0)
    >>> bool(y.min() >= 0 and y.max() <= 1)
    True
    """
    d = _dimension(d)

    P = check_positive_int(perturbations, "perturbations")

    def sampler(n: int, effect: float, gen: _Gen) -> _Pair:
        amplitude = effect * P ** (-smoothness)
        if not 0 <= amplitude * np.exp(-d) <= 1:
            raise ValueError(f"`effect` of {name!r} must be in [0, {np.exp(d) * P ** smoothness:.4g}]"
                             f" (the density is negative beyond); got {shown(effect)}.")
        theta = gen.choice([-1.0, 1.0], size=P**d)
        x = gen.uniform(size=(n, d))
        top = 1.0 + amplitude * np.exp(-d)
        out = np.empty((0, d))
        while out.shape[0] < n:
            m = max(2 * (n - out.shape[0]), 64)
            cand = gen.uniform(size=(m, d))
            keep = gen.uniform(0.0, top, size=m) <= perturbed_uniform_density(
                cand, theta, P, amplitude)
            out = np.vstack([out, cand[keep]])
        return x, out[:n]

    name = f"perturbed_uniform_d{d}_p{P}"
    return Scenario(name, "two_sample", sampler, 2.7 if d == 1 else 7.3,
                    f"x ~ U[0, 1]^{d}, y ~ the uniform density with {P}^{d} bumps of random "
                    f"signs and amplitude effect x {P}^-{smoothness:g} (Schrab et al., 2023)")


def sinusoid() -> Scenario:
    """(x, y) on [-pi, pi]^2 with density ``(1 + sin(effect x) sin(effect y)) / (4 pi^2)``:
    uniform marginals, dependence of frequency ``effect`` (0: independence; higher
    frequencies are harder; Sejdinovic et al., 2013; Schrab et al., 2022)."""

    def sampler(n: int, effect: float, gen: _Gen) -> _Pair:
        out = np.empty((0, 2))
        while out.shape[0] < n:
            m = max(2 * (n - out.shape[0]), 64)
            cand = gen.uniform(-np.pi, np.pi, size=(m, 2))
            dens = 1.0 + np.sin(effect * cand[:, 0]) * np.sin(effect * cand[:, 1])
            out = np.vstack([out, cand[gen.uniform(0.0, 2.0, size=m) <= dens]])
        return out[:n, :1], out[:n, 1:]

    return Scenario("sinusoid", "independence", sampler, 2.0,
                    "(x, y) ~ (1 + sin(effect x) sin(effect y)) / (4 pi^2) on [-pi, pi]^2 "
                    "(frequency effect; Sejdinovic et al., 2013)")


def k_sample_shift(k: int = 3, d: int = 2) -> Scenario:
    """``k`` samples from N(0, I_d) but the last, N(effect e_1, I_d) (a k-sample test's
    one-group shift).

    Examples
    --------
    >>> from kmtests.datasets import k_sample_shift
    >>> [a.shape for a in k_sample_shift(3).sample(10, 0.5, rng=0)]
    [(10, 2), (10, 2), (10, 2)]
    """
    k = check_positive_int(k, "k")
    d = _dimension(d)

    def sampler(n: int, effect: float, gen: _Gen) -> tuple[np.ndarray, ...]:
        out = [gen.normal(size=(n, d)) for _ in range(k)]
        out[-1][:, 0] += effect
        return tuple(out)

    return Scenario(f"k_sample_shift_k{k}", "k_sample", sampler, 0.6,
                    f"{k} samples of N(0, I_{d}); the last shifted by effect along the first "
                    "axis")


def ar1_pair(phi: float = 0.8) -> Scenario:
    """Two AR(1) series ``x_t = phi x_{t-1} + e_t``, ``y_t = phi y_{t-1} + f_t`` whose
    innovations have correlation `effect` (0: independent series — the null on which
    plain permutations do not keep their level; block permutations or the wild
    bootstrap do).

    Examples
    --------
    >>> from kmtests.datasets import ar1_pair
    >>> x, y = ar1_pair(0.8).sample(100, 0.0, rng=0)
    >>> x.shape, y.shape
    ((100, 1), (100, 1))
    """
    if not -1 < phi < 1:
        raise ValueError(f"`phi` must be in (-1, 1) (a stationary series); got {shown(phi)}.")

    def sampler(n: int, effect: float, gen: _Gen) -> _Pair:
        if not -1 <= effect <= 1:
            raise ValueError("`effect` is the innovations' correlation, in [-1, 1].")
        e = gen.normal(size=(n, 2))
        e[:, 1] = effect * e[:, 0] + np.sqrt(1 - effect * effect) * e[:, 1]
        out = np.empty((n, 2))
        out[0] = e[0] / np.sqrt(1 - phi * phi)
        for t in range(1, n):
            out[t] = phi * out[t - 1] + e[t]
        return out[:, :1], out[:, 1:]

    return Scenario(f"ar1_pair_phi{phi:g}", "independence", sampler, 0.3,
                    f"two AR(1) series (phi = {phi:g}) with innovations of correlation "
                    "effect (autocorrelated: use blocks= or the wild bootstrap)")


def xor_joint() -> Scenario:
    """Two fair coins and ``y = effect (x_1 xor x_2) + N(0, 1)``, as three variables: every
    pair is independent, the three are not (a joint independence test's alternative).

    Examples
    --------
    >>> from kmtests.datasets import xor_joint
    >>> [a.shape for a in xor_joint().sample(8, 1.0, rng=0)]
    [(8, 1), (8, 1), (8, 1)]
    """

    def sampler(n: int, effect: float, gen: _Gen) -> tuple[np.ndarray, ...]:
        coins = gen.integers(0, 2, size=(n, 2))
        y = effect * (coins[:, 0] ^ coins[:, 1]) + gen.normal(size=n)
        return (coins[:, :1].astype(np.float64), coins[:, 1:].astype(np.float64), y[:, None])

    return Scenario("xor_joint", "joint", sampler, 1.0,
                    "x_1, x_2 fair coins and y = effect (x_1 xor x_2) + N(0, 1): pairwise "
                    "independent, jointly dependent for effect != 0")


def conditional_sine(frequency: float = 3.0) -> Scenario:
    """``x = sin(f z) + 0.3 e``, ``y = cos(f z) + 0.3 e' + effect x`` with ``z ~ N(0, 1)``:
    independent given ``z`` for effect 0 (a null that fixed regressions on ``z`` fail
    when the frequency ``f`` is high), dependent given ``z`` otherwise.

    Examples
    --------
    >>> from kmtests.datasets import conditional_sine
    >>> [a.shape for a in conditional_sine(6).sample(50, 0.0, rng=0)]
    [(50, 1), (50, 1), (50, 1)]
    """
    if not (np.isfinite(frequency) and frequency > 0):
        raise ValueError(f"`frequency` must be a positive number; got {shown(frequency)}.")

    def sampler(n: int, effect: float, gen: _Gen) -> tuple[np.ndarray, ...]:
        z = gen.normal(size=n)
        x = np.sin(frequency * z) + 0.3 * gen.normal(size=n)
        y = np.cos(frequency * z) + 0.3 * gen.normal(size=n) + effect * x
        return x[:, None], y[:, None], z[:, None]

    return Scenario(f"conditional_sine_f{frequency:g}", "conditional", sampler, 0.5,
                    f"x = sin({frequency:g} z) + 0.3 e, y = cos({frequency:g} z) + 0.3 e' + "
                    "effect x, z ~ N(0, 1): x and y independent given z for effect 0")


def _gof_mean_shift(n: int, effect: float, gen: _Gen) -> tuple[np.ndarray]:
    return (gen.normal(effect, 1.0, size=(n, 1)),)


def _gof_heavy_tails(n: int, effect: float, gen: _Gen) -> tuple[np.ndarray]:
    if not 0 <= effect < 0.5:
        raise ValueError("`effect` of 'gof_heavy_tails' (1/df) must be in [0, 0.5).")
    if effect == 0:
        return (gen.normal(size=(n, 1)),)
    df = 1.0 / effect
    return (gen.standard_t(df, size=(n, 1)) * np.sqrt((df - 2.0) / df),)


def _gof_gamma_shape(n: int, effect: float, gen: _Gen) -> tuple[np.ndarray]:
    return (gen.gamma(5.0 + effect, 5.0, size=(n, 1)),)


def _gof_correlation(n: int, effect: float, gen: _Gen) -> tuple[np.ndarray]:
    if not -1 < effect < 1:
        raise ValueError("`effect` of 'gof_correlation' must be in (-1, 1).")
    z = gen.normal(size=(n, 2))
    z[:, 1] = effect * z[:, 0] + np.sqrt(1.0 - effect * effect) * z[:, 1]
    return (z,)


def _norm01() -> Any:
    from scipy import stats

    return stats.norm(0.0, 1.0)


def _gamma55() -> Any:
    from scipy import stats

    return stats.gamma(5.0, scale=5.0)


def _normal2() -> Any:
    from scipy import stats

    return stats.multivariate_normal(np.zeros(2), np.eye(2))


def _gof_scenarios() -> list[Scenario]:
    """Model misfit (one sample against a model; :func:`kmtests.goodness_of_fit_test`)."""
    return [
        Scenario("gof_mean_shift", "one_sample", _gof_mean_shift, 0.3,
                 "x ~ N(effect, 1) tested against the model N(0, 1)", model_factory=_norm01),
        Scenario("gof_heavy_tails", "one_sample", _gof_heavy_tails, 0.25,
                 "x ~ t with df = 1/effect scaled to unit variance, tested against N(0, 1)",
                 model_factory=_norm01),
        Scenario("gof_gamma_shape", "one_sample", _gof_gamma_shape, 0.3,
                 "x ~ Gamma(5 + effect, scale 5) tested against Gamma(5, scale 5) (KSDAgg, "
                 "Schrab et al., 2022, Figure 1)", model_factory=_gamma55),
        Scenario("gof_correlation", "one_sample", _gof_correlation, 0.3,
                 "x ~ N(0, [[1, effect], [effect, 1]]) tested against N(0, I_2)",
                 model_factory=_normal2),
    ]


def _dimension(d: int) -> int:
    return check_positive_int(d, "d")


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
    Scenario("xor", "independence", _xor, 1.0,
             "x = two fair coins (2 columns), y = effect (x_1 xor x_2) + N(0, 1): y is "
             "independent of each coin, not of the pair (compare the joint independence "
             "test of x_1, x_2, y through `tests=` callables)"),
    Scenario("eckerle", "independence", _eckerle, 1.0,
             "n rows of NIST Eckerle4 drawn without replacement (x = wavelength, y = "
             "transmittance); each y is replaced by an independent random y with "
             "probability 1 - effect (effect = 1: the data as measured; 0: independence)",
             max_n=35),
    gaussian_mean_shift(10),
    gaussian_scale_shift(10),
    cauchy_shift(1),
    perturbed_uniform(1, 2),
    perturbed_uniform(2, 2),
    sinusoid(),
    k_sample_shift(3),
    ar1_pair(0.8),
    xor_joint(),
    conditional_sine(3.0),
    conditional_sine(6.0),
    *_gof_scenarios(),
]}


def get_scenario(name: str | Scenario) -> Scenario:
    """The scenario registered as `name` (see :data:`SCENARIOS`)."""
    if isinstance(name, Scenario):
        return name
    if not isinstance(name, str) or name not in SCENARIOS:
        valid = ", ".join(repr(k) for k in sorted(SCENARIOS))
        raise ValueError(f"`scenario` must be one of {valid}; got {shown(name)}.")
    return SCENARIOS[name]
