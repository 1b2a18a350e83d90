"""The time guard of the conditional test's O(n^3) paths (issue 29, item 5): a
SlowTestWarning above a size threshold, naming faster options the function takes."""

from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import pytest

import kmtests.statistics.kci as kci
from kmtests import SlowTestWarning
from kmtests import conditional_independence_test as ci


def _data(n=120):
    gen = np.random.default_rng(0)
    z = gen.normal(size=n)
    return z + gen.normal(size=n), z + gen.normal(size=n), z


def test_the_tuned_exact_path_warns_above_the_threshold_with_options_it_takes(monkeypatch):
    # the threshold scaled down to n = 120 (the real one: the default at n = 2000)
    monkeypatch.setattr(kci, "SLOW_UNITS", 5 * 100.0 ** 3, raising=False)
    with pytest.warns(SlowTestWarning, match="O\\(n\\^3\\)") as rec:
        ci(*_data())
    message = str(rec[0].message)
    assert "5 eigendecompositions of 120 x 120" in message
    params = set(inspect.signature(ci).parameters)
    named = set(re.findall(r"(\w+)=", message)) | set(re.findall(r"`(\w+)`", message))
    assert named and named <= params, named - params
    assert {"engine", "n_features", "bandwidth_z", "lam"} <= named


def test_no_warning_below_it_nor_on_the_low_rank_engines(monkeypatch):
    monkeypatch.setattr(kci, "SLOW_UNITS", 5 * 100.0 ** 3, raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowTestWarning)
        ci(*_data(), engine="nystrom", rng=0)
        ci(*_data(), engine="rff", rng=0)
        ci(*_data(), bandwidth_z=1.0, lam=1e-3)  # one Cholesky: 0.35 units per n^3
        ci(*_data(60))


def test_the_thresholds_in_observations():
    """The default warns from n = 2000 (five eigendecompositions), SplitKCI from 4000,
    one given regression from about 4900; never on the low-rank engines."""
    from kmtests.engines import Exact
    from kmtests.kernels import Gaussian

    def warns(stat, n):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            stat._warn_if_slow(n, Exact())
        return any(issubclass(r.category, SlowTestWarning) for r in rec)

    g = Gaussian(1.0)
    tuned = kci.KCI(g, g, g)
    split = kci.KCI(g, g, g, split=0.5)
    given = kci.KCI(g, g, g, bandwidth_z=1.0,
                    regression=kci.ConditionalMeanEmbedding(lam=1e-3))
    assert not warns(tuned, 1999) and warns(tuned, 2000) and warns(tuned, 2500)
    assert not warns(split, 3990) and warns(split, 4000)
    assert not warns(given, 4800) and warns(given, 5000)
