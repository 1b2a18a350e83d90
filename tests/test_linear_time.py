"""The linear-time MMD tests: ``two_sample_test(engine="block" | "linear")``.

Brute-force checks of the statistics and their standard errors against literal
formulas, the normal p-value against scipy, the errors of the options that do
not apply, the report, and (slow) the level under the null.
"""

import json

import numpy as np
import pytest
from scipy import stats

import kmtests
from kmtests import NormalMethod, PermutationMethod, two_sample_test
from kmtests.statistics.linear_time import default_block_size


def _data(n=203, d=3, shift=0.3, seed=0):
    gen = np.random.default_rng(seed)
    return gen.normal(size=(n, d)), gen.normal(shift, size=(n, d))


def _gauss(bw):
    return lambda a, b: float(np.exp(-np.sum((a - b) ** 2) / (2 * bw * bw)))


def _literal_h(x, y, k):
    """h over disjoint consecutive pairs, by a Python loop (Gretton et al. 2012, Sec. 6)."""
    h = []
    for i in range(len(x) // 2):
        x1, x2, y1, y2 = x[2 * i], x[2 * i + 1], y[2 * i], y[2 * i + 1]
        h.append(k(x1, x2) + k(y1, y2) - k(x1, y2) - k(x2, y1))
    return np.array(h)


def _literal_se(terms):
    m = len(terms)
    mean = sum(terms) / m
    return np.sqrt(sum((t - mean) ** 2 for t in terms) / (m - 1) / m)


# -- the statistics ---------------------------------------------------------------------------
@pytest.mark.parametrize("n", [203, 204])
def test_linear_statistic_and_se_match_a_loop_over_pairs(n):
    x, y = _data(n)
    res = two_sample_test(x, y, engine="linear")
    h = _literal_h(x, y, _gauss(res.bandwidths["kernel"]))
    assert res.statistic_name == "MMD^2_l"
    assert res.statistic == pytest.approx(h.mean(), rel=1e-12, abs=1e-15)
    assert res.details["n_pairs"] == n // 2
    assert res.details["se"] == pytest.approx(_literal_se(h), rel=1e-10)
    assert res.details["z"] == pytest.approx(h.mean() / _literal_se(h), rel=1e-10)


@pytest.mark.parametrize("kernel,k", [
    ("linear", lambda a, b: float(a @ b)),
    ("laplacian", None),
    ("polynomial", lambda a, b: float((a @ b + 1.0) ** 2)),
])
def test_linear_statistic_other_kernels(kernel, k):
    x, y = _data(61, d=2)
    res = two_sample_test(x, y, engine="linear", kernel=kernel)
    if k is None:
        bw = res.bandwidths["kernel"]
        k = lambda a, b: float(np.exp(-np.sqrt(np.sum((a - b) ** 2)) / bw))  # noqa: E731
    h = _literal_h(x, y, k)
    assert res.statistic == pytest.approx(h.mean(), rel=1e-10, abs=1e-13)
    assert res.details["se"] == pytest.approx(_literal_se(h), rel=1e-9)


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian", "linear"])
@pytest.mark.parametrize("n,b", [(203, None), (200, 7), (64, 2)])
def test_block_statistic_is_the_mean_of_blockwise_mmd_u(kernel, n, b):
    x, y = _data(n, d=2)
    res = two_sample_test(x, y, engine="block", block_size=b, kernel=kernel)
    b = default_block_size(n) if b is None else b
    bw = res.bandwidths["kernel"]
    opts = {} if bw is None else {"bandwidth": bw}
    eta = np.array([kmtests.mmd(x[k * b:(k + 1) * b], y[k * b:(k + 1) * b], kernel=kernel,
                                statistic="unbiased", **opts) for k in range(n // b)])
    assert res.statistic_name == "MMD^2_block"
    assert (res.details["block_size"], res.details["n_blocks"]) == (b, n // b)
    assert res.statistic == pytest.approx(eta.mean(), rel=1e-10, abs=1e-13)
    assert res.details["se"] == pytest.approx(_literal_se(eta), rel=1e-8)


def test_default_block_size_is_floor_sqrt_n():
    assert [default_block_size(n) for n in (4, 99, 100, 2000, 10**6)] == [2, 9, 10, 44, 1000]
    x, y = _data(2000, d=1)
    assert two_sample_test(x, y, engine="block").details["block_size"] == 44


def test_many_small_blocks_are_batched_the_same():
    """Blocks are computed in batches for radial kernels; a batch boundary changes nothing."""
    from kmtests.engines.tiles import KernelTiles
    from kmtests.kernels import Gaussian
    from kmtests.statistics import linear_time as lt

    x, y = _data(300, d=2)
    src = KernelTiles(Gaussian(bandwidth=1.3), np.vstack([x, y]))
    eta = lt.block_statistics(src, 300, 5)
    old = lt._BATCH_ENTRIES
    try:
        lt._BATCH_ENTRIES = 3 * 25
        assert np.allclose(lt.block_statistics(src, 300, 5), eta, rtol=1e-12, atol=1e-15)
    finally:
        lt._BATCH_ENTRIES = old


def test_large_offset_and_large_bandwidth_keep_their_digits():
    x, y = _data(200, d=2)
    ref = two_sample_test(x, y, engine="linear", bandwidth=50.0)
    far = two_sample_test(x + 1e8, y + 1e8, engine="linear", bandwidth=50.0)
    assert far.statistic == pytest.approx(ref.statistic, rel=1e-6)
    h = _literal_h(x, y, lambda a, b: float(np.expm1(-np.sum((a - b) ** 2) / 5000.0)))
    assert ref.statistic == pytest.approx(h.mean(), rel=1e-10)


# -- the p-value ------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ["block", "linear"])
@pytest.mark.parametrize("shift", [0.0, 0.3])
def test_pvalue_is_the_t_upper_tail(engine, shift):
    """The default reference is Student's t with K - 1 degrees of freedom; the published
    normal one is reference="normal"."""
    x, y = _data(400, shift=shift, seed=3)
    res = two_sample_test(x, y, engine=engine)
    z = res.statistic / res.details["se"]
    k = res.details.get("n_blocks", res.details.get("n_pairs"))
    assert res.pvalue == pytest.approx(stats.t.sf(z, k - 1), rel=1e-12)
    norm = two_sample_test(x, y, engine=engine, method=NormalMethod(reference="normal"))
    assert norm.pvalue == pytest.approx(stats.norm.sf(z), rel=1e-12)
    assert norm.pvalue == pytest.approx(1 - stats.norm.cdf(z), abs=1e-12)
    assert norm.statistic == res.statistic


def test_normal_pvalue_helper_and_degenerate_terms():
    from kmtests.null.normal import normal_pvalue

    t = np.array([0.3, -0.1, 0.2, 0.05, 0.0])
    stat, se, p = normal_pvalue(t)
    assert se == pytest.approx(np.std(t, ddof=1) / np.sqrt(5))
    assert p == pytest.approx(stats.t.sf(stat / se, 4))
    assert normal_pvalue(t, "normal")[2] == pytest.approx(stats.norm.sf(stat / se))
    assert normal_pvalue(np.zeros(4)) == (0.0, 0.0, 1.0)


def test_power_under_a_clear_alternative():
    x, y = _data(3000, d=2, shift=0.5, seed=4)
    for engine in ("block", "linear"):
        assert two_sample_test(x, y, engine=engine).pvalue < 1e-3


def test_deterministic_no_randomness():
    x, y = _data(500)
    a = two_sample_test(x, y, engine="block")
    b = two_sample_test(x, y, engine="block", method="normal")
    c = two_sample_test(x, y, engine="block", method=NormalMethod())
    assert a.statistic == b.statistic == c.statistic and a.pvalue == b.pvalue == c.pvalue


# -- the result and its report ----------------------------------------------------------------
@pytest.mark.parametrize("engine", ["block", "linear"])
def test_result_has_no_permutations(engine):
    x, y = _data(100)
    res = two_sample_test(x, y, engine=engine)
    assert isinstance(res.method, NormalMethod) and res.method.name == "normal"
    # the linear-time statistics evaluate the kernel on pairs of points: streamed engine
    assert res.engine == "streamed"
    assert res.statistic_name == {"block": "MMD^2_block", "linear": "MMD^2_l"}[engine]
    assert res.null_distribution is None and res.n_resamples is None and res.count is None
    with pytest.raises(NotImplementedError, match="Monte Carlo"):
        res.pvalue_interval()
    json.dumps(res.to_dict())
    frame = res.summary_frame()
    assert frame["method"].iloc[0] == "normal" and np.isnan(frame["pvalue_lower"].iloc[0])


def test_summary_says_engine_statistic_and_blocks():
    x, y = _data(2003, d=2)
    res = two_sample_test(x, y, engine="block")
    text = str(res.summary())
    flat = " ".join(text.split())
    assert "engine: streamed" in text and "block_size: 44" in text and "n_blocks: 45" in text
    assert "MMD^2_block" in text and "B-test" in text and "method: normal (t, K - 1 df)" in text
    assert "Lower power than the quadratic-time test" in flat
    assert "n_resamples" not in text and "MC low" not in text
    assert "The last 23 point(s) of each sample are not used" in flat
    assert "streamed engine" in res.method_line and "45 blocks of 44" in res.method_line
    assert all(len(line) <= 80 for line in str(res).splitlines())
    assert all(len(line) <= 78 for line in text.splitlines())
    lin = two_sample_test(x, y, engine="linear")
    text = str(lin.summary())
    assert "engine: streamed" in text and "n_pairs: 1001" in text and "MMD^2_l" in text
    assert "streamed engine" in lin.method_line and "1001 pairs" in lin.method_line


# -- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ["block", "linear"])
@pytest.mark.parametrize("opt", [dict(n_resamples=99), dict(batch=10),
                                 dict(progress=True), dict(n_jobs=1)])
def test_permutation_options_are_refused(engine, opt):
    x, y = _data(50)
    (name,) = opt
    with pytest.raises(ValueError, match=f"`{name}`.*not apply"):
        two_sample_test(x, y, engine=engine, **opt)
    with pytest.raises(ValueError, match=f"`{name}`.*not apply"):
        two_sample_test(x, y, engine=engine, method="normal", **opt)


@pytest.mark.parametrize("engine", ["block", "linear"])
def test_a_seed_is_accepted_and_the_report_says_nothing_was_drawn(engine):
    """A script seeds every test (issue 32): the normal null draws nothing, so `rng` is
    accepted (0.2 refused it), changes nothing, and the notes say so."""
    x, y = _data(50)
    res = two_sample_test(x, y, engine=engine, rng=1)
    assert res.pvalue == two_sample_test(x, y, engine=engine).pvalue
    assert any("nothing was drawn" in n for n in res.notes)


@pytest.mark.parametrize("engine", ["block", "linear"])
@pytest.mark.parametrize("method,match", [
    (PermutationMethod(n_resamples=99), "PermutationMethod does not apply"),
    ("gamma", "method 'gamma' needs the full kernel"),
    (kmtests.GammaMethod(), "method 'gamma' needs the full kernel"),
    ("bogus", "must be one of"),
    (5, "must be one of"),
])
def test_other_null_methods_are_refused(engine, method, match):
    x, y = _data(50)
    with pytest.raises(ValueError, match=match):
        two_sample_test(x, y, engine=engine, method=method)


def test_normal_method_needs_a_linear_time_engine():
    x, y = _data(50)
    for engine in ("exact", "streamed"):
        with pytest.raises(ValueError, match="method='normal' is the null of the linear-time"):
            two_sample_test(x, y, engine=engine, method="normal")
    with pytest.raises(ValueError, match="method='normal' is the null of the linear-time"):
        kmtests.independence_test(x, y, method=NormalMethod())
    with pytest.raises(ValueError, match="`n_resamples`.*not apply"):
        two_sample_test(x, y, engine="block", method=NormalMethod(), n_resamples=9)


@pytest.mark.parametrize("engine", ["block", "linear"])
def test_estimators_other_than_kme_are_refused(engine):
    x, y = _data(50)
    for est in ("skmse", "fkmse"):
        with pytest.raises(ValueError, match="KME statistic only.*engine='exact' or 'streamed'"):
            two_sample_test(x, y, engine=engine, estimator=est)
    with pytest.raises(ValueError, match="statistic='biased' needs engine='exact'"):
        two_sample_test(x, y, engine=engine, statistic="biased")


@pytest.mark.parametrize("engine", ["block", "linear"])
def test_precomputed_unequal_and_tiny_samples_are_refused(engine):
    x, y = _data(50)
    K = kmtests.kernels.Gaussian(bandwidth=1.0).gram(np.vstack([x, y]))
    with pytest.raises(ValueError, match="kernel='precomputed'"):
        two_sample_test(K, 50, kernel="precomputed", engine=engine)
    with pytest.raises(ValueError, match=r"same size.*n_x = 50 and n_y = 40.*x\[:40\]"):
        two_sample_test(x, y[:40], engine=engine)
    with pytest.raises(ValueError, match="at least 4 points per sample"):
        two_sample_test(x[:3], y[:3], engine=engine)


def test_block_size_is_checked():
    x, y = _data(50)
    for b in (1, 26):
        with pytest.raises(ValueError, match="`block_size` must be from 2 to n // 2 = 25"):
            two_sample_test(x, y, engine="block", block_size=b)
    with pytest.raises(TypeError):
        two_sample_test(x, y, engine="block", block_size=2.5)
    for engine in ("linear", "exact", "streamed"):
        with pytest.raises(ValueError, match="`block_size` configures statistic='block'"):
            two_sample_test(x, y, engine=engine, block_size=5)
    with pytest.raises(ValueError, match="`n_features` applies"):
        two_sample_test(x, y, engine="block", n_features=10)


def test_unknown_engine_lists_the_linear_time_ones():
    x, y = _data(20)
    with pytest.raises(ValueError, match="'block'.*'linear'"):
        two_sample_test(x, y, engine="bogus")
    with pytest.raises(ValueError, match="`engine` must be one of 'auto', 'exact', 'nystrom', 'rff'; got"):
        kmtests.independence_test(x, y, engine="block")


# -- level under the null ---------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("engine", ["block", "linear"])
def test_level_under_the_null(engine):
    """1000 null data sets at n = 2000 per sample (d = 2): the rejection rate at 5% is in
    the binomial 99.9% interval. The normal null is asymptotic: this checks it at this n."""
    reps, n, alpha = 1000, 2000, 0.05
    gen = np.random.default_rng(20131205 + len(engine))
    rej = 0
    for _ in range(reps):
        x, y = gen.normal(size=(n, 2)), gen.normal(size=(n, 2))
        rej += two_sample_test(x, y, engine=engine).pvalue <= alpha
    lo, hi = stats.binom.ppf(0.0005, reps, alpha), stats.binom.ppf(0.9995, reps, alpha)
    print(f"{engine}: {rej}/{reps} rejections at alpha = {alpha}, 99.9% band [{lo}, {hi}]")
    assert lo <= rej <= hi, f"{engine}: {rej}/{reps} rejections outside [{lo}, {hi}]"
