"""Witness functions, per-feature relevance and the pictures of a result (issue 19)."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from kmtests import independence_test, mmd, two_sample_test
from kmtests.estimators import ESTIMATORS
from kmtests.statistics.witness import holm


def _gauss(a, b, bw):
    d2 = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * bw * bw))


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def samples():
    gen = np.random.default_rng(3)
    x = gen.normal(size=(30, 2))
    y = gen.normal(size=(40, 2)) + [0.8, 0.0]
    return x, y


# -- the witness against a literal numpy evaluation ------------------------------------------
def test_mmd_witness_is_the_literal_mean_difference(samples):
    x, y = samples
    res = two_sample_test(x, y, n_resamples=19, rng=0)
    t = np.random.default_rng(1).normal(size=(25, 2))
    bw = res.bandwidths["kernel"]
    literal = _gauss(t, x, bw).mean(axis=1) - _gauss(t, y, bw).mean(axis=1)
    np.testing.assert_allclose(res.witness(t), literal, rtol=1e-12, atol=1e-15)


def test_hsic_witness_is_joint_minus_product_of_marginals():
    gen = np.random.default_rng(2)
    x = gen.normal(size=(35, 2))
    y = x[:, :1] ** 2 + 0.3 * gen.normal(size=(35, 1))
    res = independence_test(x, y, n_resamples=19, rng=0)
    s, t = gen.normal(size=(12, 2)), gen.normal(size=(12, 1))
    Kx = _gauss(s, x, res.bandwidths["x"])
    Ly = _gauss(t, y, res.bandwidths["y"])
    literal = (Kx * Ly).mean(axis=1) - Kx.mean(axis=1) * Ly.mean(axis=1)
    np.testing.assert_allclose(res.witness(s, t), literal, rtol=1e-10, atol=1e-15)
    grid = res.witness(s, t[:5], grid=True)
    assert grid.shape == (12, 5)
    np.testing.assert_allclose(np.diag(grid[:5, :5]), literal[:5], rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("estimator", sorted(ESTIMATORS))
@pytest.mark.parametrize("tuning", ["permutation", "pooled"])
def test_witness_uses_the_estimator_of_the_test(samples, estimator, tuning):
    """||w||^2 with the witness's weights is the test's V-form statistic: the weights are
    the ones the test used (per sample, pooled, marginalized kernel)."""
    x, y = samples
    try:
        res = two_sample_test(x, y, estimator=estimator, statistic="biased", tuning=tuning,
                              n_resamples=9, rng=0)
    except ValueError as exc:  # an estimator whose parameters cannot be held fixed
        assert "tuning='permutation'" in str(exc)
        return
    w = res._witness_object()
    assert w.norm2() == pytest.approx(res.statistic, rel=1e-9, abs=1e-15)
    if tuning == "permutation" and not ESTIMATORS[estimator].transforms_kernel:
        # the estimator's own embeddings of each sample (KernelMeanEstimator.fit)
        est, bw = res.estimator, res.bandwidths["kernel"]
        t = np.random.default_rng(1).normal(size=(20, 2))
        ref = est.fit(x, bandwidth=bw)(t) - est.fit(y, bandwidth=bw)(t)
        np.testing.assert_allclose(res.witness(t), ref, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("estimator", ["kme", "skmse", "fkmse", "mkme"])
def test_hsic_witness_uses_the_estimator_of_the_test(estimator):
    gen = np.random.default_rng(4)
    x = gen.normal(size=(40, 1))
    y = np.sin(2 * x) + 0.3 * gen.normal(size=(40, 1))
    res = independence_test(x, y, estimator=estimator, n_resamples=9, rng=0)
    assert res._witness_object().norm2() == pytest.approx(res.statistic, rel=1e-9, abs=1e-15)


def test_linear_time_witness_is_the_kme_one(samples):
    x, y = samples
    block = two_sample_test(x, y[:30], engine="block")
    full = two_sample_test(x, y[:30], n_resamples=9, rng=0)
    t = np.vstack([x, y])
    np.testing.assert_allclose(block.witness(t), full.witness(t), rtol=1e-12)


def test_witness_refusals(samples):
    x, y = samples
    z = np.vstack([x, y])
    K = _gauss(z, z, 1.0)
    res = two_sample_test(K, 30, kernel="precomputed", n_resamples=9, rng=0)
    with pytest.raises(ValueError, match="kernel matrices"):
        res.witness(x)
    with pytest.raises(ValueError, match="kernel matrices"):
        res.relevance()
    reg = two_sample_test(x, y, statistic="regularized", lam=0.1, n_resamples=9, rng=0)
    with pytest.raises(ValueError, match="spectral-regularised"):
        reg.witness(x)
    grid = two_sample_test(x, y, statistic="regularized", n_resamples=9, rng=0)
    with pytest.raises(ValueError, match="aggregated"):
        grid.witness(x)
    res = two_sample_test(x, y, n_resamples=9, rng=0)
    with pytest.raises(ValueError, match="2 column"):
        res.witness(np.zeros((3, 3)))
    ind = independence_test(x, y[:30], n_resamples=9, rng=0)
    with pytest.raises(ValueError, match="as many rows"):
        ind.witness(x[:3], y[:4])


def test_aggregated_test_refuses_a_witness(samples):
    from kmtests import aggregated_two_sample_test as mmd_agg_test

    x, y = samples
    res = mmd_agg_test(x, y, n_resamples=19, rng=0)
    with pytest.raises(ValueError, match="aggregated"):
        res.witness(x)


# -- the witness on known alternatives --------------------------------------------------------
def _bump_hits(reps: int, n: int = 200) -> int:
    """A local bump: y has 25% of its mass in N(2, 0.3^2); the witness's minimum on a
    grid (where y has more mass than x) must be within 0.5 of the bump."""
    grid = np.linspace(-3, 4, 141)
    hits = 0
    for r in range(reps):
        gen = np.random.default_rng(1000 + r)
        x = gen.normal(size=n)
        y = gen.normal(size=n)
        bump = gen.random(n) < 0.25
        y[bump] = gen.normal(2.0, 0.3, size=bump.sum())
        res = two_sample_test(x, y, n_resamples=1, rng=r, bandwidth=0.3)
        hits += abs(grid[np.argmin(res.witness(grid))] - 2.0) < 0.5
    return hits


def test_witness_finds_a_local_bump_in_95_of_100():
    assert _bump_hits(100) >= 95


def _shift_ranks(reps: int, n: int = 100, shift: float = 0.8) -> tuple[int, int]:
    """A shift of one of ten coordinates: how often the relevance table ranks it first, and
    how often the witness at the data correlates most with that coordinate."""
    first = peak = 0
    for r in range(reps):
        gen = np.random.default_rng(2000 + r)
        j = int(gen.integers(10))
        x = gen.normal(size=(n, 10))
        y = gen.normal(size=(n, 10))
        y[:, j] += shift
        res = two_sample_test(x, y, n_resamples=1, rng=r)
        table = res.relevance(n_resamples=199, rng=r)
        first += table.index[0] == f"x[{j}]"
        z = np.vstack([x, y])
        w = res.witness(z)
        corr = [abs(np.corrcoef(z[:, k], w)[0, 1]) for k in range(10)]
        peak += int(np.argmax(corr)) == j
    return first, peak


def test_relevance_ranks_the_shifted_coordinate_first():
    first, peak = _shift_ranks(4)
    assert first == 4 and peak == 4


@pytest.mark.slow
def test_relevance_ranks_the_shifted_coordinate_first_in_95_of_100():
    first, peak = _shift_ranks(100)
    assert first >= 95
    assert peak >= 95


# -- the relevance table ---------------------------------------------------------------------
def test_relevance_statistics_and_holm_against_references():
    from statsmodels.stats.multitest import multipletests

    gen = np.random.default_rng(5)
    x = gen.normal(size=(40, 4))
    y = gen.normal(size=(45, 4))
    y[:, 1] *= 2.0
    res = two_sample_test(x, y, n_resamples=19, rng=3)
    table = res.relevance(n_resamples=99, rng=4)
    for j in range(4):  # the per-feature statistic is kmtests' own MMD^2_u of the column
        assert table.loc[f"x[{j}]", "statistic"] == pytest.approx(
            mmd(x[:, j], y[:, j]), rel=1e-10)
    ref = multipletests(table["pvalue"].to_numpy(), method="holm")[1]
    np.testing.assert_allclose(table["pvalue_holm"].to_numpy(), ref, rtol=1e-12)
    assert list(table["rank"]) == [1, 2, 3, 4]
    assert table.index[0] == "x[1]"
    # seeded: the same table again; from the test's seed when no rng is given
    assert table.equals(res.relevance(n_resamples=99, rng=4))
    assert res.relevance(n_resamples=99).equals(res.relevance(n_resamples=99))
    # p-values are permutation p-values: (1 + count) / (1 + B)
    assert np.all(np.isclose(table["pvalue"] * 100, np.round(table["pvalue"] * 100)))


def test_relevance_pvalues_against_brute_force():
    """The permutation p-value of one feature, recomputed literally from the same
    permutations (drawn from the same generator)."""
    gen = np.random.default_rng(6)
    x, y = gen.normal(size=(12, 1)), gen.normal(0.5, size=(10, 1))
    res = two_sample_test(x, y, n_resamples=9, rng=0)
    table = res.relevance(n_resamples=49, rng=11)
    z = np.vstack([x, y])
    bw = float(np.median(np.abs(z - z.T)[np.triu_indices(22, 1)]))
    perm_gen = np.random.default_rng(11)
    perms = [np.arange(22)] + [perm_gen.permutation(22) for _ in range(49)]
    vals = []
    for p in perms:
        a, b = z[p[:12]], z[p[12:]]
        Kaa, Kbb, Kab = _gauss(a, a, bw), _gauss(b, b, bw), _gauss(a, b, bw)
        vals.append((Kaa.sum() - 12) / (12 * 11) + (Kbb.sum() - 10) / (10 * 9)
                    - 2 * Kab.mean())
    assert table.loc["x[0]", "statistic"] == pytest.approx(vals[0], rel=1e-10)
    count = sum(v >= vals[0] - 1e-12 for v in vals[1:])
    assert table.loc["x[0]", "pvalue"] == pytest.approx((1 + count) / 50)


def test_independence_relevance_names_both_variables():
    gen = np.random.default_rng(7)
    x = gen.normal(size=(60, 3))
    y = np.column_stack([x[:, 2] ** 2 + 0.2 * gen.normal(size=60), gen.normal(size=60)])
    res = independence_test(x, y, n_resamples=19, rng=1)
    table = res.relevance(n_resamples=99, rng=2)
    assert set(table.index) == {"x[0]", "x[1]", "x[2]", "y[0]", "y[1]"}
    assert set(table.index[:2]) == {"x[2]", "y[0]"}


def test_summary_reports_the_relevance_table():
    gen = np.random.default_rng(8)
    x, y = gen.normal(size=(50, 3)), gen.normal(size=(50, 3))
    y[:, 0] += 1.0
    res = two_sample_test(x, y, n_resamples=99, rng=1)
    text = str(res.summary(relevance=True))
    assert "Feature relevance (one test per feature)" in text
    assert "Holm" in text and "family-wise error rate" in text
    assert all(len(line) <= 78 for line in text.splitlines())
    assert "Feature relevance" not in str(res.summary())
    assert "Feature relevance" in res.summary(relevance=True).as_html()


def _holm_by_hand(p):
    """The step-down formula kmtests used before statsmodels' multipletests (issue 32)."""
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_holm_is_statsmodels_and_bit_identical_to_the_old_formula(seed):
    gen = np.random.default_rng(seed)
    m = int(gen.integers(1, 40))
    # permutation p-values (1 + k) / (1 + B) have ties; some near 0 and 1
    p = (1 + gen.integers(0, 200, size=m)) / 200.0
    if seed % 2:
        p = gen.uniform(size=m) ** 3
    np.testing.assert_array_equal(holm(p), _holm_by_hand(p))


def test_holm_examples():
    np.testing.assert_allclose(holm(np.array([0.01, 0.04, 0.03])), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(holm(np.array([0.5, 0.6])), [1.0, 1.0])


# -- pictures --------------------------------------------------------------------------------
def test_plot_permutation_null_marks_the_statistic_and_pvalue(samples):
    x, y = samples
    res = two_sample_test(x, y, n_resamples=199, rng=0)
    ax = res.plot()
    assert len(ax.patches) > 5  # histogram bars
    assert any(np.allclose(line.get_xdata(), res.statistic) for line in ax.lines)
    assert any("p-value" in t.get_text() for t in ax.texts)
    _png(ax.figure)


@pytest.mark.parametrize("kind", ["gamma", "block"])
def test_plot_approximate_null_draws_the_density(samples, kind):
    from scipy import stats  # noqa: F401

    x, y = samples
    res = (two_sample_test(x, y, statistic="biased", method="gamma") if kind == "gamma"
           else two_sample_test(x, y[:30], engine="block"))
    _, dist = res.method.null_density(res)
    assert dist.sf(res.statistic) == pytest.approx(res.pvalue, rel=1e-10)
    ax = res.plot()
    assert len(ax.lines) >= 2 and ax.collections  # the density, the statistic, the tail
    _png(ax.figure)


def test_plot_refuses_without_null(samples):
    from kmtests import aggregated_two_sample_test as mmd_agg_test

    x, y = samples
    agg = mmd_agg_test(x, y, n_resamples=19, rng=0)
    if agg.null_distribution is not None and np.ndim(agg.null_distribution) == 1:
        _png(agg.plot().figure)
    else:
        with pytest.raises(ValueError):
            agg.plot()


def test_plot_witness_1d_2d_and_features(samples):
    x, y = samples
    r1 = two_sample_test(x[:, 0], y[:, 0], n_resamples=19, rng=0)
    ax = r1.plot_witness()
    assert len(ax.lines) >= 3 and ax.get_legend() is not None
    _png(ax.figure)
    r2 = two_sample_test(x, y, n_resamples=19, rng=0)
    ax = r2.plot_witness()
    assert ax.collections  # the colour map and the two samples
    _png(ax.figure)
    gen = np.random.default_rng(0)
    x5, y5 = gen.normal(size=(40, 5)), gen.normal(size=(40, 5))
    y5[:, 4] += 1.5
    r5 = two_sample_test(x5, y5, n_resamples=19, rng=0)
    axs = r5.plot_witness()
    assert len(axs) == 3 and axs[0].get_xlabel() == "x[4]"
    _png(axs[0].figure)
    axs = r5.plot_witness(features=[1, 2])
    assert [a.get_xlabel() for a in axs] == ["x[1]", "x[2]"]
    plt.close("all")
    with pytest.raises(ValueError, match="features"):
        r5.plot_witness(features=[7])


def test_plot_witness_independence():
    gen = np.random.default_rng(9)
    x = gen.normal(size=80)
    res = independence_test(x, np.cos(2 * x) + 0.2 * gen.normal(size=80), n_resamples=19,
                            rng=0)
    ax = res.plot_witness()
    assert ax.get_xlabel() == "x" and ax.collections
    _png(ax.figure)
    x3 = gen.normal(size=(60, 3))
    res = independence_test(x3, x3[:, 1:2] ** 2 + 0.1 * gen.normal(size=(60, 1)),
                            n_resamples=19, rng=0)
    ax = res.plot_witness()
    assert ax.get_xlabel() == "x[1]"
    _png(ax.figure)


def test_power_plot_qq_under_the_null():
    from kmtests.power import power_curve

    res = power_curve("linear", sample_sizes=[20], effects=[0.0, 1.0], repetitions=12,
                      n_resamples=19, rng=1)
    ax = res.plot_qq()
    assert ax.lines and ax.collections  # the p-values, the diagonal, the band
    assert ax.get_xlabel() == "uniform quantile"
    _png(ax.figure)


def test_relevance_seeds():
    gen = np.random.default_rng(10)
    x, y = gen.normal(size=(30, 2)), gen.normal(size=(30, 2))
    res = two_sample_test(x, y, n_resamples=19, rng=2)
    a = res.relevance(n_resamples=49, rng=np.random.default_rng(3))
    b = res.relevance(n_resamples=49, rng=np.random.default_rng(3))
    assert a.equals(b)  # a Generator: used as given
    assert res.relevance(n_resamples=49).equals(res.relevance(n_resamples=49))
    unseeded = two_sample_test(x, y, n_resamples=19)
    assert unseeded.seed is None
    assert len(unseeded.relevance(n_resamples=19)) == 2
    with pytest.raises(ValueError, match="n_resamples"):
        res.relevance(n_resamples=0)


# -- pandas names (issue 32) ------------------------------------------------------------------
def test_relevance_and_witness_plot_keep_the_column_names():
    pd = pytest.importorskip("pandas")
    gen = np.random.default_rng(4)
    cols = ["pres", "temp", "ph"]
    X = pd.DataFrame(gen.normal(size=(40, 3)), columns=cols)
    Y = pd.DataFrame(gen.normal(size=(40, 3)), columns=cols)
    Y["temp"] += 1.5
    res = two_sample_test(X, Y, n_resamples=99, rng=1)
    table = res.relevance(n_resamples=99)
    assert set(table.index) == {"x[pres]", "x[temp]", "x[ph]"}
    assert table.index[0] == "x[temp]"
    plain = two_sample_test(X.to_numpy(), Y.to_numpy(), n_resamples=99, rng=1)
    np.testing.assert_array_equal(plain.relevance(n_resamples=99)["pvalue"].to_numpy(),
                                  table["pvalue"].to_numpy())
    axs = res.plot_witness()
    assert [a.get_xlabel() for a in axs] == ["x[pres]", "x[temp]", "x[ph]"]
    plt.close("all")
    ax = two_sample_test(X[["pres", "temp"]], Y[["pres", "temp"]], n_resamples=19,
                         rng=1).plot_witness()
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x[pres]", "x[temp]")
    plt.close("all")
    # two named Series: the names are the samples' (legend), not columns
    ctl = pd.Series(gen.normal(size=30), name="control")
    trt = pd.Series(gen.normal(0.5, size=30), name="treated")
    ax = two_sample_test(ctl, trt, n_resamples=19, rng=1).plot_witness()
    assert {"control", "treated"} <= set(ax.get_legend_handles_labels()[1])
    assert ax.get_xlabel() == "x"
    plt.close("all")
    # independence: the variables' names
    dose = pd.Series(gen.normal(size=40), name="dose")
    resp = pd.Series(dose.to_numpy() ** 2 + 0.1 * gen.normal(size=40), name="resp")
    ind = independence_test(dose, resp, n_resamples=99, rng=1)
    assert set(ind.relevance(n_resamples=99).index) == {"x[dose]", "y[resp]"}
    ax = ind.plot_witness()
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x[dose]", "y[resp]")
    plt.close("all")
