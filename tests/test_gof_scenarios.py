"""Model-misfit scenarios of the power studies (``gof_*``): at effect 0 they sample the
model they are tested against, and ``power_curve`` runs the goodness-of-fit test with
that model (its default, and ``tests=`` configurations such as KSDAgg)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from kmtests import goodness_of_fit_test
from kmtests.datasets import SCENARIOS, get_scenario
from kmtests.power import power_curve
from kmtests.studies.power import _describe_model

GOF = [name for name, s in SCENARIOS.items() if s.kind == "one_sample"]


def test_there_are_model_misfit_scenarios():
    assert GOF == ["gof_mean_shift", "gof_heavy_tails", "gof_gamma_shape", "gof_correlation"]


@pytest.mark.parametrize("name", GOF)
def test_effect_zero_samples_the_model(name):
    sc = get_scenario(name)
    (x,) = sc.sample(4000, 0.0, rng=1)
    model = sc.model
    if x.shape[1] == 1:  # Kolmogorov-Smirnov against the model's distribution function
        assert stats.kstest(x[:, 0], model.cdf).pvalue > 1e-3
    else:
        np.testing.assert_allclose(np.cov(x, rowvar=False), model.cov, atol=0.1)
        np.testing.assert_allclose(x.mean(axis=0), model.mean, atol=0.1)
    (y,) = sc.sample(4000, sc.default_effect, rng=1)
    assert not np.allclose(x, y)


def test_power_curve_tests_the_scenarios_model():
    """Each p-value is goodness_of_fit_test(x, model=scenario.model) on the scenario's data
    with the study's stream; KSDAgg through ``tests=``."""
    kw = dict(sample_sizes=[80], effects=[0.0, 0.4], repetitions=4, n_resamples=49, rng=2)
    res = power_curve("gof_heavy_tails", tests={"KSD": {}, "KSDAgg": {
        "statistic": "ksdagg", "levels": (-2, 2)}}, **kw)
    raw = res.raw
    assert set(raw["estimator"]) == {"KSD", "KSDAgg"} and len(raw) == 16
    assert raw["pvalue"].between(0, 1).all()
    again = power_curve("gof_heavy_tails", tests={"KSD": {}, "KSDAgg": {
        "statistic": "ksdagg", "levels": (-2, 2)}}, **kw)
    np.testing.assert_array_equal(raw["pvalue"], again.raw["pvalue"])
    default = power_curve("gof_mean_shift", sample_sizes=[60], effects=[1.0], repetitions=3,
                          n_resamples=49, rng=2)
    assert (default.raw["pvalue"] <= 0.05).all()  # N(1, 1) against N(0, 1): clear misfit


def test_a_scenario_without_its_model_would_fail_clearly():
    """The model comes from the scenario: the same data without it is refused."""
    (x,) = get_scenario("gof_mean_shift").sample(30, 0.0, rng=0)
    with pytest.raises(ValueError, match="give the model"):
        goodness_of_fit_test(x, n_resamples=9)


def test_checkpoint_describes_the_model():
    assert _describe_model(get_scenario("gof_gamma_shape").model) == {
        "family": "gamma", "args": [5.0], "kwds": {"scale": 5.0}}
    desc = _describe_model(get_scenario("gof_correlation").model)
    assert desc["kwds"]["cov"] == [[1.0, 0.0], [0.0, 1.0]]
