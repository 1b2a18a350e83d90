"""Notes that name a likely set-up mistake (issue 32): an embedding shrunk to zero, and
one median bandwidth for columns on very different scales."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import kmtests


def test_a_shrinkage_to_zero_is_said():
    gen = np.random.default_rng(0)
    x, y = gen.normal(size=(15, 1)), gen.normal(size=(15, 1))
    res = kmtests.two_sample_test(x, y, estimator="skmse", bandwidth=1e-3, rng=1,
                                  n_resamples=99)
    assert res.statistic == 0.0 and res.pvalue == 1.0
    assert res.params["x"]["shrinkage"] == 1.0
    note = [n for n in res.notes if "shrank the embedding" in n]
    assert note and "of x and y to zero" in note[0] and "bandwidth='median'" in note[0]
    assert "shrank the embedding" in " ".join(str(res).split())
    fine = kmtests.two_sample_test(x, y, estimator="skmse", rng=1, n_resamples=99)
    assert not any("shrank the embedding" in n for n in fine.notes)


def _wine_like(seed=0):
    gen = np.random.default_rng(seed)
    cols = ["acid", "ph", "so2"]
    x = pd.DataFrame(gen.normal(size=(60, 3)) * [1, 1, 300], columns=cols)
    y = pd.DataFrame(gen.normal(size=(60, 3)) * [1, 1, 300], columns=cols)
    y["acid"] += 1.0
    return x, y


def test_columns_on_very_different_scales_get_a_hint():
    x, y = _wine_like()
    res = kmtests.two_sample_test(x, y, rng=1, n_resamples=99)
    note = [n for n in res.notes if "very different scales" in n]
    assert note and "for so2" in note[0] and "Standardise the columns" in note[0]
    assert "kernel='ard'" in note[0]
    bw = res.bandwidths["kernel"]
    assert f"({bw:.3g})" in note[0]
    # the fixes named: standardised columns, or an ARD kernel, get no hint
    sd = pd.concat([x, y]).std(ddof=0)
    fixed = kmtests.two_sample_test(x / sd, y / sd, rng=1, n_resamples=99)
    ard = kmtests.two_sample_test(x, y, kernel="ard", rng=1, n_resamples=99)
    given = kmtests.two_sample_test(x, y, bandwidth=2.0, rng=1, n_resamples=99)
    for r in (fixed, ard, given):
        assert not any("very different scales" in n for n in r.notes)
    # standardising finds the difference the raw columns hid
    assert fixed.pvalue < res.pvalue


def test_independence_hints_name_the_variable():
    gen = np.random.default_rng(2)
    x = gen.normal(size=(50, 2)) * [1e-3, 10.0]
    y = gen.normal(size=(50, 1))
    res = kmtests.independence_test(x, y, rng=1, n_resamples=49)
    note = [n for n in res.notes if "very different scales" in n]
    assert len(note) == 1 and note[0].startswith("the columns of x are") \
        and "column 1" in note[0]


@pytest.mark.parametrize("scale", [1.0, 50.0])
def test_no_hint_for_comparable_scales(scale):
    gen = np.random.default_rng(3)
    x = gen.normal(size=(40, 2)) * [1.0, scale]
    res = kmtests.two_sample_test(x[:20], x[20:], rng=1, n_resamples=19)
    assert not any("very different scales" in n for n in res.notes)
