"""The simulation scenarios of the regularised/aggregated tests' papers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from kmtests.datasets import (SCENARIOS, cauchy_shift, gaussian_mean_shift,
                              gaussian_scale_shift, get_scenario, perturbed_uniform, sinusoid)
from kmtests.datasets._scenarios import _bump, perturbed_uniform_density


def test_bump_integrates_to_zero_and_is_bounded_by_one_over_e():
    val, _ = integrate.quad(lambda t: float(_bump(np.array([t]))[0]), -1.0, 0.0, points=[-0.5])
    assert abs(val) < 1e-12
    t = np.linspace(-1.2, 0.2, 100_001)
    assert np.max(np.abs(_bump(t))) == pytest.approx(np.exp(-1.0), rel=1e-6)


@pytest.mark.parametrize("d, P", [(1, 1), (1, 3), (2, 2)])
def test_perturbed_density_integrates_to_one(d, P):
    theta = np.random.default_rng(0).choice([-1.0, 1.0], size=P**d)
    amp = 0.9 * np.exp(d)
    if d == 1:
        val, _ = integrate.quad(lambda t: float(perturbed_uniform_density(
            np.array([[t]]), theta, P, amp)[0]), 0, 1, limit=200)
    else:
        g = (np.arange(800) + 0.5) / 800  # midpoint rule on a fine grid
        X = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
        val = perturbed_uniform_density(X, theta, P, amp).mean()
    assert val == pytest.approx(1.0, abs=1e-6)
    assert perturbed_uniform_density(np.array([[1.5] * d]), theta, P, amp)[0] == 0.0


def test_perturbed_uniform_samples_follow_the_density():
    """Chi-square goodness of fit of y against the density with the data set's signs."""
    sc = perturbed_uniform(1, 2)
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    x, y = sc.sample(40_000, 2.7, gen)
    gen.bit_generator.state = state
    theta = gen.choice([-1.0, 1.0], size=2)  # the sampler draws the signs first
    edges = np.linspace(0, 1, 21)
    counts = np.histogram(y[:, 0], bins=edges)[0]
    probs = [integrate.quad(lambda t: float(perturbed_uniform_density(
        np.array([[t]]), theta, 2, 2.7 / 2)[0]), a, b)[0] for a, b in zip(edges[:-1], edges[1:])]
    chi2 = stats.chisquare(counts, np.array(probs) * counts.sum() / np.sum(probs))
    assert chi2.pvalue > 0.001
    assert stats.kstest(x[:, 0], "uniform").pvalue > 0.001
    with pytest.raises(ValueError, match="density is negative"):
        sc.sample(10, 6.0, 0)


def test_sinusoid_marginals_and_dependence():
    x, y = sinusoid().sample(50_000, 1.0, rng=4)
    assert stats.kstest((x[:, 0] + np.pi) / (2 * np.pi), "uniform").pvalue > 0.001
    assert stats.kstest((y[:, 0] + np.pi) / (2 * np.pi), "uniform").pvalue > 0.001
    # E[sin x sin y] = 1/4 and Var(sin x) = 1/2: correlation 1/2
    assert np.corrcoef(np.sin(x[:, 0]), np.sin(y[:, 0]))[0, 1] == pytest.approx(0.5, abs=0.01)
    x0, y0 = sinusoid().sample(50_000, 0.0, rng=5)
    assert abs(np.corrcoef(np.sin(x0[:, 0]), np.sin(y0[:, 0]))[0, 1]) < 0.02


@pytest.mark.parametrize("make, moment", [
    (gaussian_mean_shift, lambda x, y: y.mean() - x.mean()),
    (gaussian_scale_shift, lambda x, y: y.std() / x.std() - 1.0),
])
def test_gaussian_shifts(make, moment):
    sc = make(5)
    x, y = sc.sample(40_000, 0.3, rng=6)
    assert x.shape == y.shape == (40_000, 5)
    assert moment(x, y) == pytest.approx(0.3, abs=0.01)


def test_cauchy_shift_moves_the_median():
    x, y = cauchy_shift(3).sample(40_000, 0.5, rng=7)
    assert np.median(y, axis=0) - np.median(x, axis=0) == pytest.approx([0.5] * 3, abs=0.04)


def test_registered_and_effect_zero_is_the_null():
    for name in ["gaussian_mean_shift_d10", "gaussian_scale_shift_d10", "cauchy_shift_d1",
                 "perturbed_uniform_d1_p2", "perturbed_uniform_d2_p2", "sinusoid"]:
        sc = get_scenario(name)
        assert sc is SCENARIOS[name]
        a, b = sc.sample(30, 0.0, rng=1)
        assert a.shape[0] == b.shape[0] == 30
