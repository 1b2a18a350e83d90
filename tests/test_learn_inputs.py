"""kmtests.learn: the package's input rules, its scaling, and the memory guard."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from kmtests.learn import (KernelMeanMatchingDensity, Normal,  # noqa: E402
                           OneClassSupportMeasureMachine, ParzenClassifier,
                           ShrinkageKernelPCA, SupportMeasureMachine, flex_gram)


def _learners():
    return [KernelMeanMatchingDensity(n_components=2, n_init=2, random_state=0),
            ShrinkageKernelPCA(n_components=2, estimator="skmse"),
            ParzenClassifier(estimator="skmse")]


def _fit(est, X, y):
    return est.fit(X, y) if isinstance(est, ParzenClassifier) else est.fit(X)


def _apply(est, X):
    if isinstance(est, KernelMeanMatchingDensity):
        return est.score_samples(X)
    if isinstance(est, ShrinkageKernelPCA):
        return est.transform(X)
    return est.predict(X)


@pytest.fixture
def data(rng):
    X = np.vstack([rng.normal(-2, 0.5, (20, 2)), rng.normal(2, 0.5, (20, 2))])
    return X, np.repeat([0, 1], 20)


def _bad_inputs(X):
    masked = np.ma.masked_array(X, mask=np.zeros_like(X, dtype=bool))
    masked[0, 0] = np.ma.masked
    t = np.datetime64("2024-01-01T00:00:00") + (X * 1e6).astype("timedelta64[s]")
    obj = X.astype(object)
    obj[3, 1] = "1.5"
    cat = pd.DataFrame({"a": X[:, 0], "b": pd.Categorical(np.round(X[:, 1]))})
    when = pd.DataFrame({"a": X[:, 0], "b": pd.to_datetime(X[:, 1] * 1e9)})
    return [
        pytest.param(masked, TypeError, "`X` is a masked array", id="masked"),
        pytest.param(X.astype(str), TypeError, r"`X` must contain real numbers; it holds text",
                     id="numeric-strings"),
        pytest.param(X.astype(str).tolist(), TypeError, "it holds text", id="list-of-strings"),
        pytest.param(obj, TypeError, r"it holds text \(e.g. '1.5'\)", id="object-with-string"),
        pytest.param(X.astype(str).astype(bytes), TypeError, "it holds bytes", id="bytes"),
        pytest.param(t, TypeError, r"it holds dates/times \(datetime64\)", id="datetime64"),
        pytest.param(t - t[0, 0], TypeError, "time differences", id="timedelta64"),
        pytest.param(cat, TypeError, "column 'b' of `X` must hold real numbers; it has dtype "
                     "category", id="pandas-categorical"),
        pytest.param(when, TypeError, "column 'b' of `X` must hold real numbers; it has dtype "
                     "datetime64", id="pandas-datetime"),
    ]


@pytest.mark.parametrize("case", range(9))
@pytest.mark.parametrize("est", _learners(), ids=lambda e: type(e).__name__)
def test_learners_refuse_what_the_tests_refuse(est, case, data):
    """Masks, numeric strings, bytes, dates: refused in fit and in predict/transform."""
    X, y = data
    bad, exc, msg = _bad_inputs(X)[case].values
    with pytest.raises(exc, match=msg):
        _fit(est, bad, y)
    fitted = _fit(est, X, y)
    with pytest.raises(exc, match=msg):
        _apply(fitted, bad)


def test_learners_still_accept_numbers_in_every_form(data):
    X, y = data
    for est in _learners():
        ref = _apply(_fit(est, X, y), X)
        for form in (X.tolist(), X.astype(object), X.astype(np.float32),
                     pd.DataFrame(X, columns=["u", "v"])):
            out = _apply(_fit(est, form, y), form)
            assert np.allclose(out, ref, rtol=1e-5, atol=1e-6), type(est).__name__
    ints = np.round(X * 4).astype(int)
    assert np.array_equal(_apply(_fit(ParzenClassifier(), ints, y), ints),
                          _apply(_fit(ParzenClassifier(), ints.astype(float), y), ints))


def test_distribution_inputs_refused(data):
    X, y = data
    bags = [X[i * 4:(i + 1) * 4] for i in range(10)]
    masked = [np.ma.masked_array(b) for b in bags]
    with pytest.raises(TypeError, match=r"`X\[0\]` is a masked array"):
        SupportMeasureMachine().fit(masked, np.repeat([0, 1], 5))
    with pytest.raises(TypeError, match=r"`X\[0\]` must contain real numbers; it holds text"):
        OneClassSupportMeasureMachine().fit([b.astype(str) for b in bags])
    with pytest.raises(TypeError, match="`mean` must contain real numbers; it holds text"):
        Normal(["0.5", "1"], 1.0)
    with pytest.raises(TypeError, match="`cov` is a masked array"):
        Normal([0.5, 1.0], np.ma.masked_array([1.0, 2.0], mask=[0, 1]))
    with pytest.raises(TypeError, match="`mean` must contain real numbers, not complex"):
        Normal([0.5 + 1j, 1.0], 1.0)
    with pytest.raises(TypeError, match=r"`variances` must contain real numbers; it holds "
                       r"dates/times"):
        flex_gram([[0.0], [1.0]], np.array(["2024-01-01", "2024-01-02"], dtype="M8[D]"),
                  bandwidth=1.0)
