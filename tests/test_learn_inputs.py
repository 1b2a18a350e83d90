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
    with pytest.raises(TypeError, match="^`cov` must be array-like of numbers.$"):
        Normal([0.5, 1.0], [{"a": 1}, 2.0])
    with pytest.raises(TypeError, match=r"`variances` must contain real numbers; it holds "
                       r"dates/times"):
        flex_gram([[0.0], [1.0]], np.array(["2024-01-01", "2024-01-02"], dtype="M8[D]"),
                  bandwidth=1.0)


# -- scaling: data at 1e200, 1e-200 or an offset of 1e9 give the fit of the plain data ------
def _grid_data(rng, n=30, d=2):
    """Two blobs on a grid of 2^-20, so that adding 1e9 is exact."""
    X = np.vstack([rng.normal(-2, 0.5, (n, d)), rng.normal(2, 0.5, (n, d))])
    return np.round(X * 2.0**20) / 2.0**20


SCALINGS = [pytest.param(1e200, 0.0, id="1e200"), pytest.param(1e-100, 0.0, id="1e-100"),
            pytest.param(1.0, 1e9, id="offset-1e9"), pytest.param(-3e150, 0.0, id="-3e150")]


@pytest.mark.parametrize("c,o", SCALINGS)
@pytest.mark.parametrize("est", ["kme", "skmse"])
def test_density_fit_maps_back_under_scale_and_offset(c, o, est, rng):
    X, Z = _grid_data(rng), _grid_data(rng, n=4)
    kw = dict(n_components=2, n_init=3, estimator=est, random_state=0)
    ref = KernelMeanMatchingDensity(**kw).fit(X)
    # min_variance is in the data's units (at 1e200 the default is negligible either way)
    mv = 1e-3 * c * c if abs(c) < 1 else 1e-3
    q = KernelMeanMatchingDensity(min_variance=mv, **kw).fit(X * c + o)
    order, order_ref = np.argsort(q.means_[:, 0] * np.sign(c)), np.argsort(ref.means_[:, 0])
    assert np.allclose(q.weights_[order], ref.weights_[order_ref], rtol=1e-7)
    # the offset's rounding (ulp(1e9) = 1.2e-7) is all that separates the means
    assert np.allclose((q.means_[order] - o) / c, ref.means_[order_ref], rtol=1e-7,
                       atol=1e-6 if o else 1e-12)
    assert q.objective_ == pytest.approx(ref.objective_, rel=1e-6)
    d = X.shape[1]
    # log q(c z + o) = log q_ref(z) - d log|c|
    assert np.allclose(q.score_samples(Z * c + o) + d * np.log(abs(c)),
                       ref.score_samples(Z), rtol=1e-7, atol=1e-7)
    if o:  # variances representable: compare them directly
        assert np.allclose(q.variances_, ref.variances_, rtol=1e-6)
    if c > 0:  # the same components in the same order: the same draws
        assert np.allclose((q.sample(50, random_state=1) - o) / c,
                           ref.sample(50, random_state=1), rtol=1e-6, atol=1e-6)


def test_density_min_variance_out_of_range_for_the_data(rng):
    """min_variance is in the data's units: 1e-3 for data spread over 1e-200 is refused."""
    with pytest.raises(ValueError, match=r"`min_variance` must be small next to the squared "
                       r"spread of `X`; got min_variance=0.001 for data spread over "):
        KernelMeanMatchingDensity(n_components=2).fit(_grid_data(rng) * 1e-200)


def test_density_overflowing_polynomial_kernel_is_refused(rng):
    X = _grid_data(rng) * 1e200
    with pytest.raises(ValueError, match=r"the polynomial kernel \(degree = 2, coef0 = 1\) "
                       "gives NaN or infinite Gram values on `X` .*Rescale the data"):
        KernelMeanMatchingDensity(n_components=2, kernel="polynomial").fit(X)


ALL_SCALINGS = SCALINGS + [pytest.param(1e-200, 0.0, id="1e-200")]


@pytest.mark.parametrize("c,o", ALL_SCALINGS)
@pytest.mark.parametrize("est,shrink", [("kme", "mean"), ("skmse", "mean"),
                                        ("fkmse", "covariance"), ("bkmse", "covariance")])
def test_kpca_maps_back_under_scale_and_offset(c, o, est, shrink, rng):
    X, Z = _grid_data(rng), _grid_data(rng, n=4)
    kw = dict(n_components=3, estimator=est, shrink=shrink)
    ref = ShrinkageKernelPCA(**kw).fit(X)
    k = ShrinkageKernelPCA(**kw).fit(X * c + o)
    assert np.allclose(k.transform(Z * c + o), ref.transform(Z), rtol=1e-6, atol=1e-8)
    assert np.allclose(k.reconstruction_error(Z * c + o), ref.reconstruction_error(Z),
                       rtol=1e-6, atol=1e-8)
    assert np.allclose(k.eigenvalues_, ref.eigenvalues_, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("c,o", ALL_SCALINGS)
@pytest.mark.parametrize("est", ["kme", "skmse", "fkmse"])
def test_parzen_and_smm_map_back_under_scale_and_offset(c, o, est, rng):
    X, Z = _grid_data(rng), _grid_data(rng, n=4)
    y = np.repeat([0, 1], len(X) // 2)
    ref = ParzenClassifier(estimator=est).fit(X, y)
    p = ParzenClassifier(estimator=est).fit(X * c + o, y)
    assert np.allclose(p.decision_function(Z * c + o), ref.decision_function(Z), rtol=1e-6,
                       atol=1e-9)
    bags = [X[i * 6:(i + 1) * 6] for i in range(10)]
    yb = np.repeat([0, 1], 5)
    ref_s = SupportMeasureMachine(level2="gaussian", estimator=est).fit(bags, yb)
    s = SupportMeasureMachine(level2="gaussian", estimator=est).fit(
        [b * c + o for b in bags], yb)
    assert np.allclose(s.decision_function([b * c + o for b in bags[:4]]),
                       ref_s.decision_function(bags[:4]), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("kernel", ["linear", "polynomial"])
def test_overflowing_kernels_are_refused_in_fit_and_predict(kernel, rng):
    X, y = _grid_data(rng), np.repeat([0, 1], 30)
    msg = (rf"the {kernel} kernel.* gives NaN or infinite Gram values on `X` \(the data "
           r"reach \|value\| = .*e\+200\).*Rescale the data")
    big = X * 1e200
    with pytest.raises(ValueError, match=msg):
        ShrinkageKernelPCA(n_components=2, kernel=kernel).fit(big)
    with pytest.raises(ValueError, match=msg):
        ParzenClassifier(kernel=kernel).fit(big, y)
    with pytest.raises(ValueError, match=msg):
        ShrinkageKernelPCA(n_components=2, kernel=kernel).fit(X).transform(big)
    with pytest.raises(ValueError, match=msg):
        ParzenClassifier(kernel=kernel).fit(X, y).predict(big)
    bags = [big[i * 6:(i + 1) * 6] for i in range(10)]
    with pytest.raises(ValueError, match=msg):
        SupportMeasureMachine(kernel=kernel).fit(bags, np.repeat([0, 1], 5))


# -- memory guard: refused up front, before any large array -------------------------------
@pytest.fixture
def little_memory(monkeypatch):
    from kmtests import _guards

    monkeypatch.setattr(_guards, "available_memory", lambda: 2_000_000)  # 2 MB
    monkeypatch.setattr(_guards, "UNCHECKED_BYTES", 0)


def _refused_before_allocating(call, match):
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(MemoryError, match=match):
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000, peak  # copies of the data at most; n x n would be 32 MB


@pytest.mark.parametrize("make,what", [
    (lambda: KernelMeanMatchingDensity(n_components=2, estimator="fkmse"),
     r"the fkmse embedding and the mixture: about 8 arrays of 2000 x 2000, 32.0 MB each"),
    (lambda: ShrinkageKernelPCA(n_components=2),
     r"kernel PCA with the kme mean: about 7 arrays of 2000 x 2000, 32.0 MB each"),
    (lambda: ShrinkageKernelPCA(n_components=2, estimator="fkmse", shrink="covariance"),
     r"kernel PCA with the fkmse covariance: about 10 arrays of 2000 x 2000, 32.0 MB each"),
    (lambda: ParzenClassifier(estimator="skmse"),
     r"the skmse embedding of the largest class: about 3 arrays of 1000 x 1000, 8.0 MB each"),
], ids=["density", "kpca-mean", "kpca-covariance", "parzen"])
def test_learners_refuse_a_fit_that_does_not_fit_in_memory(make, what, little_memory, rng):
    X, y = rng.normal(size=(2000, 3)), np.repeat([0, 1], 1000)
    est = make()
    _refused_before_allocating(
        lambda: _fit(est, X, y),
        rf"^this fit needs about .* of memory \({what}\), more than the 2.0 MB available. "
        r"Fit on a random subsample of the rows, or use a machine with more memory.$")


def test_transform_predict_and_distributions_refused_up_front(rng, monkeypatch):
    from kmtests import _guards

    X, y = rng.normal(size=(100, 3)), np.repeat([0, 1], 50)
    kpca = ShrinkageKernelPCA(n_components=2).fit(X)
    clf = ParzenClassifier().fit(X, y)
    dens = KernelMeanMatchingDensity(n_components=2, n_init=2, random_state=0).fit(X)
    bags = [rng.normal(size=(50, 3)) for _ in range(40)]
    big = rng.normal(size=(20_000, 3))
    bigger = np.tile(big, (3, 1))
    monkeypatch.setattr(_guards, "available_memory", lambda: 2_000_000)
    monkeypatch.setattr(_guards, "UNCHECKED_BYTES", 0)
    apply = r"Pass `X` in batches of rows, or use a machine with more memory.$"
    _refused_before_allocating(lambda: kpca.transform(big), r"^this transform needs about "
                               r".*\(the cross Gram matrix with the training points: about 5 "
                               r"arrays of 20000 x 100, 16.0 MB each\).*" + apply)
    _refused_before_allocating(lambda: clf.predict(big), r"^this prediction needs about .*"
                               r"20000 x 50.*" + apply)
    _refused_before_allocating(lambda: dens.score_samples(bigger),
                               r"^this evaluation needs about .*60000 x 2.*" + apply)
    _refused_before_allocating(
        lambda: SupportMeasureMachine().fit(bags, np.repeat([0, 1], 20)),
        r"^this fit needs about .*\(the Gram matrix of the samples' points \(in blocks of "
        r"rows\): about 3 arrays of 2000 x 2000, 32.0 MB each\).*Use fewer or smaller samples")
    _refused_before_allocating(lambda: flex_gram(big, np.zeros(20_000), bandwidth=1.0),
                               r"^flex_gram needs about .*20000 x 20000")
