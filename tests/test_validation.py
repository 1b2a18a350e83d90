"""Bad input gets a clear error naming the argument; good odd input is accepted."""

import numpy as np
import pandas as pd
import pytest

import kmtests
from kmtests.kernels import Gaussian


@pytest.fixture
def xy(rng):
    return rng.normal(size=(10, 2)), rng.normal(size=(12, 2))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_rejected(xy, bad):
    x, y = xy
    x = x.copy(); x[3, 1] = bad
    with pytest.raises(ValueError, match="`x` must not contain NaN or infinite"):
        kmtests.two_sample_test(x, y)
    with pytest.raises(ValueError, match="`y` must not contain NaN or infinite"):
        kmtests.independence_test(y[:10], x)


def test_dimension_and_length_mismatch(xy):
    x, y = xy
    with pytest.raises(ValueError, match="same number of columns; got 2 and 1"):
        kmtests.two_sample_test(x, y[:, :1])
    with pytest.raises(ValueError, match=r"same number of observations \(paired data\); got 10 and 12"):
        kmtests.independence_test(x, y)


def test_too_few_samples(xy):
    x, y = xy
    with pytest.raises(ValueError, match="`x` must contain at least 2 observations; got 1"):
        kmtests.two_sample_test(x[:1], y)
    with pytest.raises(ValueError, match="`y` must contain at least 2 observations; got 0"):
        kmtests.mmd(x, y[:0])
    with pytest.raises(ValueError, match="at least 2 observations"):
        kmtests.independence_test([1.0], [2.0])
    with pytest.raises(ValueError, match="needs at least 5 observations"):
        kmtests.hsic(x[:4], y[:4], statistic="unbiased")


def test_constant_data_zero_bandwidth(xy):
    x, _ = xy
    const = np.ones((10, 2))
    with pytest.raises(ValueError, match="no bandwidth for `the pooled sample`: every pair of "
                       "points ties.*pass a positive `bandwidth`"):
        kmtests.two_sample_test(const, const)
    with pytest.raises(ValueError, match="no bandwidth for `y`"):
        kmtests.independence_test(x, const)
    # with an explicit bandwidth, constant data is a valid (uninformative) input: p = 1,
    # with a warning that the statistic cannot vary
    with pytest.warns(kmtests.DegenerateStatisticWarning, match="is 0 for the data and for "
                      "every permutation"):
        res = kmtests.two_sample_test(const, const, bandwidth=1.0, n_resamples=50, rng=0)
    assert res.pvalue == 1.0


def test_unknown_names_list_valid_choices(xy):
    x, y = xy
    with pytest.raises(ValueError, match="`kernel` must be one of 'ard', 'distance', 'gaussian'"):
        kmtests.two_sample_test(x, y, kernel="rbf2")
    with pytest.raises(ValueError, match="`kernel_y` must be one of"):
        kmtests.independence_test(x, x, kernel_y="nope")
    with pytest.raises(ValueError, match="`estimator` must be one of .*'kme'"):
        kmtests.two_sample_test(x, y, estimator="nope")
    with pytest.raises(ValueError, match="`method` must be one of 'asymptotic', 'bootstrap', "
                       "'chi2', 'gamma', 'monte_carlo', 'normal', 'permutation', 'swap', 'wild', or a "
                       "method "
                       "object"):
        kmtests.two_sample_test(x, y, method="jackknife")
    with pytest.raises(ValueError, match="`statistic` must be one of 'biased', 'fsic', "
                       "'hsicagginc', 'regularized', 'unbiased'"):
        kmtests.independence_test(x, x, statistic="u")
    with pytest.raises(TypeError, match="`estimator` must be an estimator name"):
        kmtests.two_sample_test(x, y, estimator=3)
    with pytest.raises(TypeError, match="`kernel` must be a kernel name"):
        kmtests.two_sample_test(x, y, kernel=3)


@pytest.mark.parametrize("bw,exc,msg", [(0.0, ValueError, "positive finite"),
                                        (-1.0, ValueError, "positive finite"),
                                        (np.nan, ValueError, "positive finite"),
                                        ("mean", ValueError, "'median' or a positive number"),
                                        ([1.0, 2.0], TypeError, "'median' or a positive number"),
                                        (True, TypeError, "'median' or a positive number")])
def test_bad_bandwidths(xy, bw, exc, msg):
    x, y = xy
    with pytest.raises(exc, match=msg):
        kmtests.two_sample_test(x, y, bandwidth=bw)
    with pytest.raises(exc, match="`bandwidth_x`"):
        kmtests.independence_test(x, x, bandwidth_x=bw)


def test_bandwidth_conflicts(xy):
    x, y = xy
    with pytest.raises(ValueError, match="`bandwidth` does not apply to the linear kernel"):
        kmtests.two_sample_test(x, y, kernel="linear", bandwidth=1.0)
    with pytest.raises(ValueError, match="either in the Kernel object `kernel` or as `bandwidth`"):
        kmtests.two_sample_test(x, y, kernel=Gaussian(bandwidth=1.0), bandwidth=2.0)
    with pytest.raises(ValueError, match="does not apply to a callable"):
        kmtests.two_sample_test(x, y, kernel=lambda a, b: a @ b.T, bandwidth=2.0)


@pytest.mark.parametrize("value,exc", [(0, ValueError), (-5, ValueError), (10.5, TypeError),
                                       ("100", TypeError), (True, TypeError)])
def test_bad_n_resamples(xy, value, exc):
    x, y = xy
    with pytest.raises(exc, match="`n_resamples` must be a positive integer"):
        kmtests.two_sample_test(x, y, n_resamples=value)


def test_bad_batch_n_jobs_rng(xy):
    x, y = xy
    with pytest.raises(ValueError, match="`batch` must be a positive integer or None"):
        kmtests.two_sample_test(x, y, batch=0)
    with pytest.raises(ValueError, match=r"`n_jobs` must be None, -1 \(all CPUs\) or an "
                       "integer from 1 to"):
        kmtests.independence_test(x, x, n_jobs=0)
    with pytest.raises(TypeError, match="`rng` must be None, a non-negative int"):
        kmtests.two_sample_test(x, y, rng="seed")
    with pytest.raises(TypeError, match="legacy RandomState"):
        kmtests.two_sample_test(x, y, rng=np.random.RandomState(0))


def test_wrong_dtypes():
    with pytest.raises(TypeError, match="`x` must contain real numbers"):
        kmtests.mmd(np.array(["a", "b", "c"]), [1.0, 2.0])
    with pytest.raises(TypeError, match="not complex"):
        kmtests.mmd(np.array([1j, 2j, 3j]), [1.0, 2.0])
    with pytest.raises(TypeError, match="`x` must be array-like"):
        kmtests.mmd([[1.0, 2.0], [3.0]], [1.0, 2.0])
    with pytest.raises(ValueError, match="`x` must be 1-D or 2-D; got 3 dimensions"):
        kmtests.mmd(np.zeros((3, 2, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="got a scalar"):
        kmtests.mmd(3.0, [1.0, 2.0])


def test_accepted_input_forms(rng):
    x, y = rng.normal(size=12), rng.normal(size=10)
    ref = kmtests.mmd(x[:, None], y[:, None])
    assert kmtests.mmd(x, y) == ref  # 1-D vectors are n observations of one variable
    assert kmtests.mmd(list(x), tuple(y)) == ref
    assert kmtests.mmd(pd.Series(x), pd.DataFrame({"a": y})) == ref
    assert kmtests.mmd(x.astype(np.float32), y) == pytest.approx(ref, rel=1e-6)
    ints = kmtests.mmd(np.arange(5), np.arange(3, 9))
    assert ints == kmtests.mmd(np.arange(5.0), np.arange(3.0, 9.0))
    df = pd.DataFrame({"u": rng.normal(size=12), "v": rng.normal(size=12)})
    assert kmtests.hsic(df["u"], df[["v"]]) == kmtests.hsic(df["u"].to_numpy(), df["v"].to_numpy())


def test_precomputed_validation(rng):
    K = Gaussian(bandwidth=1.0).gram(rng.normal(size=(6, 1)))
    with pytest.raises(ValueError, match="square pooled Gram matrix"):
        kmtests.two_sample_test(K[:, :5], 3, kernel="precomputed")
    with pytest.raises(TypeError, match="integer size of the first sample"):
        kmtests.two_sample_test(K, np.ones(3), kernel="precomputed")
    with pytest.raises(ValueError, match="at least 2 observations; got 5 and 1"):
        kmtests.two_sample_test(K, 5, kernel="precomputed")
    bad = K.copy(); bad[0, 1] += 1
    with pytest.raises(ValueError, match="symmetric"):
        kmtests.two_sample_test(bad, 3, kernel="precomputed")
    with pytest.raises(ValueError, match="square symmetric Gram"):
        kmtests.independence_test(K[:, :4], K, kernel_x="precomputed")


def test_gamma_restrictions(xy):
    x, y = xy
    with pytest.raises(ValueError, match="method='gamma' approximates the null of the biased"):
        kmtests.two_sample_test(x, y, method="gamma", statistic="unbiased")
    with pytest.raises(ValueError, match="the test computes MMD\\^2_b\\[skmse\\]: use "
                       "estimator='kme', or"):
        kmtests.two_sample_test(x, y, method="gamma", estimator="skmse")
    with pytest.raises(ValueError, match="method='gamma' approximates the null of the biased "
                       "KME statistic HSIC_b"):
        kmtests.independence_test(x, x, method="gamma", statistic="unbiased")
    with pytest.raises(ValueError, match="at least 6 observations"):
        kmtests.independence_test(x[:5], x[:5], method="gamma")
