"""`strata=` given as a pandas object is matched to the data by index label (issue 29,
item 5), on every face that takes it: the same labels in another order give the same
p-value as the aligned input, and labels that differ are refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kmtests import conditional_independence_test, independence_test, two_sample_test


def _paired(n=60, seed=0):
    gen = np.random.default_rng(seed)
    s = gen.integers(0, 3, size=n)
    x = s + gen.normal(size=n)
    y = s + 0.5 * x + gen.normal(size=n)
    idx = [f"r{i}" for i in range(n)]
    return pd.Series(x, index=idx), pd.Series(y, index=idx), pd.Series(s, index=idx)


def _shuffled(series, seed=1):
    order = np.random.default_rng(seed).permutation(len(series))
    return series.iloc[order]


def test_conditional_strata_series_is_matched_by_label():
    x, y, s = _paired()
    kw = dict(method="permutation", n_resamples=200, rng=0, bandwidth_x=1.0,
              bandwidth_y=1.0)
    z = s.astype(float)
    ref = conditional_independence_test(x, y, z, strata=s.to_numpy(), **kw)
    same = conditional_independence_test(x, y, z, strata=_shuffled(s), **kw)
    assert same.pvalue == ref.pvalue
    frame = conditional_independence_test(x, y, z, strata=_shuffled(s).to_frame(), **kw)
    assert frame.pvalue == ref.pvalue
    # z and y in another order too: everything is paired by label
    other = conditional_independence_test(x, _shuffled(y, 2), _shuffled(z, 3),
                                          strata=_shuffled(s), **kw)
    assert other.pvalue == ref.pvalue


def test_independence_strata_series_is_matched_by_label():
    x, y, s = _paired()
    kw = dict(n_resamples=200, rng=0)
    ref = independence_test(x, y, strata=s.to_numpy(), **kw)
    assert independence_test(x, y, strata=_shuffled(s), **kw).pvalue == ref.pvalue
    assert independence_test(x, _shuffled(y, 5), strata=_shuffled(s), **kw).pvalue \
        == ref.pvalue


def test_two_sample_strata_series_are_matched_by_label():
    gen = np.random.default_rng(3)
    x = pd.Series(gen.normal(size=30), index=[f"a{i}" for i in range(30)])
    y = pd.Series(gen.normal(0.5, size=25), index=[f"b{i}" for i in range(25)])
    sx = pd.Series(np.arange(30) % 3, index=x.index)
    sy = pd.Series(np.arange(25) % 3, index=y.index)
    kw = dict(n_resamples=200, rng=0)
    ref = two_sample_test(x, y, strata=(sx.to_numpy(), sy.to_numpy()), **kw)
    pair = two_sample_test(x, y, strata=(_shuffled(sx), _shuffled(sy, 4)), **kw)
    assert pair.pvalue == ref.pvalue
    pooled = two_sample_test(x, y, strata=_shuffled(pd.concat([sx, sy])), **kw)
    assert pooled.pvalue == ref.pvalue


def test_strata_with_other_labels_are_refused_and_arrays_pair_by_position():
    x, y, s = _paired()
    bad = s.copy()
    bad.index = [f"q{i}" for i in range(len(s))]
    with pytest.raises(ValueError, match="index labels differ"):
        independence_test(x, y, strata=bad, n_resamples=50, rng=0)
    with pytest.raises(ValueError, match="index labels differ"):
        conditional_independence_test(x, y, s.astype(float), strata=bad,
                                      method="permutation", n_resamples=50, rng=0)
    # plain arrays (x, y without labels) keep pairing by position, with a labelled strata too
    xa, ya = x.to_numpy(), y.to_numpy()
    p1 = independence_test(xa, ya, strata=bad, n_resamples=100, rng=0).pvalue
    p2 = independence_test(xa, ya, strata=s.to_numpy(), n_resamples=100, rng=0).pvalue
    assert p1 == p2
