"""The interpretable tests (issue 19): ME and SCF (two-sample), NFSIC (independence).

The statistics at fixed locations and widths are pinned against the authors'
code (``tests/reference/me_reference.json``, made by
``tests/reference/gen_me_reference.py`` from wittawatj/interpretable-test and
wittawatj/fsic-test); the gradients of the training criteria against finite
differences; the level under the null in a binomial band (slow).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from kmtests import independence_test, two_sample_test
from kmtests.statistics.locations import (
    TRAIN_REG,
    fsic_criterion,
    fsic_features,
    hotelling,
    me_criterion,
    me_features,
    scf_criterion,
    scf_features,
)

REF = json.loads((Path(__file__).parent / "reference" / "me_reference.json").read_text())


# -- against the authors' code ---------------------------------------------------------------
@pytest.mark.parametrize("case", range(3))
def test_me_and_scf_statistics_match_the_authors(case):
    c = REF["two_sample"][case]
    x, y, T = (np.array(c[k]) for k in ("x", "y", "locations"))
    lam, rank = hotelling(me_features(x, y, T, c["me_width2"]), ddof=1)
    assert float(lam) == pytest.approx(c["me_stat"], rel=1e-9)
    assert int(rank) == T.shape[0]
    assert stats.chi2.sf(float(lam), T.shape[0]) == pytest.approx(c["me_pvalue"], rel=1e-7)
    lam, rank = hotelling(scf_features(x, y, T, c["scf_width"]), ddof=1)
    assert float(lam) == pytest.approx(c["scf_stat"], rel=1e-9)
    assert int(rank) == 2 * T.shape[0]
    assert stats.chi2.sf(float(lam), 2 * T.shape[0]) == pytest.approx(c["scf_pvalue"],
                                                                       rel=1e-7)


@pytest.mark.parametrize("case", range(2))
def test_nfsic_statistic_and_criterion_match_the_authors(case):
    c = REF["independence"][case]
    x, y, V, W = (np.array(c[k]) for k in ("x", "y", "V", "W"))
    # fsic's KGauss(sigma2) is exp(-d^2 / sigma2), without the 2 of its optimiser's
    # objective (exp(-d^2 / (2 sigma2))): the test's kernel is ours with s^2 = sigma2 / 2
    sx2, sy2 = c["width2_x"] / 2, c["width2_y"] / 2
    lam, rank = hotelling(fsic_features(x, y, V, W, sx2, sy2), ddof=0)
    assert float(lam) == pytest.approx(c["stat"], rel=1e-9)
    assert stats.chi2.sf(float(lam), int(rank)) == pytest.approx(c["pvalue"], rel=1e-7)
    assert TRAIN_REG == 1e-5
    assert fsic_criterion(x, y, V, W, sx2, sy2)[0] == pytest.approx(c["criterion_reg1e-5"],
                                                                    rel=1e-9)


def test_hotelling_against_a_literal_formula():
    gen = np.random.default_rng(0)
    Z = gen.normal(size=(40, 3)) + [0.3, 0.0, -0.1]
    W = Z.mean(axis=0)
    for ddof in (0, 1):
        S = np.cov(Z.T, ddof=ddof)
        lam, rank = hotelling(Z, ddof=ddof)
        assert float(lam) == pytest.approx(40 * W @ np.linalg.solve(S, W), rel=1e-10)
        assert int(rank) == 3
    # a direction without variance is dropped (and the degrees of freedom with it)
    Z2 = np.column_stack([Z, np.zeros(40)])
    lam2, rank2 = hotelling(Z2, ddof=1)
    assert int(rank2) == 3 and float(lam2) == pytest.approx(float(hotelling(Z)[0]), rel=1e-10)
    # batched arrays: one statistic per leading index
    lams, _ = hotelling(np.stack([Z, 2 * Z, Z[::-1]]), ddof=1)
    np.testing.assert_allclose(lams, float(hotelling(Z)[0]), rtol=1e-10)


# -- the training criteria and their gradients -----------------------------------------------
def _fd(fun, p, eps=1e-6):
    out = np.zeros_like(p)
    for i in range(p.size):
        e = np.zeros_like(p)
        e[i] = eps
        out[i] = (fun(p + e) - fun(p - e)) / (2 * eps)
    return out


def test_criterion_gradients_against_finite_differences():
    gen = np.random.default_rng(1)
    x = gen.normal(size=(50, 3))
    y = gen.normal(size=(50, 3)) + [0.5, 0.0, 0.0]
    V = gen.normal(size=(3, 3))
    lam, gV, gs = me_criterion(x, y, V, 2.0)
    Z = me_features(x, y, V, 2.0)
    S = np.cov(Z.T, ddof=0) + TRAIN_REG * np.eye(3)
    assert lam == pytest.approx(50 * Z.mean(0) @ np.linalg.solve(S, Z.mean(0)), rel=1e-10)
    num = _fd(lambda p: me_criterion(x, y, p[:9].reshape(3, 3), np.exp(p[9]))[0],
              np.r_[V.ravel(), np.log(2.0)])
    np.testing.assert_allclose(np.r_[gV.ravel(), gs], num, rtol=1e-5, atol=1e-6)
    lam, gT, gs = scf_criterion(x, y, V, 1.5)
    num = _fd(lambda p: scf_criterion(x, y, p[:9].reshape(3, 3), np.exp(p[9]))[0],
              np.r_[V.ravel(), np.log(1.5)])
    np.testing.assert_allclose(np.r_[gT.ravel(), gs], num, rtol=1e-5, atol=1e-6)
    yy = x[:, :2] ** 2 + 0.3 * gen.normal(size=(50, 2))
    V2, W2 = x[:4] + 0.1, yy[:4] - 0.1
    lam, gV, gW, ga, gb = fsic_criterion(x, yy, V2, W2, 2.0, 1.5)
    num = _fd(lambda p: fsic_criterion(x, yy, p[:12].reshape(4, 3), p[12:20].reshape(4, 2),
                                       np.exp(p[20]), np.exp(p[21]))[0],
              np.r_[V2.ravel(), W2.ravel(), np.log(2.0), np.log(1.5)])
    np.testing.assert_allclose(np.r_[gV.ravel(), gW.ravel(), ga, gb], num, rtol=1e-5,
                               atol=1e-6)


# -- the tests -------------------------------------------------------------------------------
def _gmd(n, d, shift, seed):
    gen = np.random.default_rng(seed)
    x = gen.normal(size=(n, d))
    y = gen.normal(size=(n, d))
    y[:, 0] += shift
    return x, y


@pytest.mark.parametrize("kind", ["me", "scf"])
def test_two_sample_statistic_on_the_test_pairs(kind):
    """The reported statistic is the authors' statistic of the held-out pairs at the
    learned locations and width (recomputed from the result), and it is reproducible."""
    x, y = _gmd(150, 2, 1.0, 3)
    res = two_sample_test(x, y, statistic=kind, n_locations=3, rng=4, method="asymptotic")
    again = two_sample_test(x, y, statistic=kind, n_locations=3, rng=4, method="asymptotic")
    assert res.statistic == again.statistic and res.pvalue == again.pvalue
    assert res.sizes["training pairs"] == 75 and res.sizes["n_x"] == 75
    loc = res.details["locations"]
    assert loc.shape == (3, 2)
    gen = np.random.default_rng(np.random.SeedSequence(4, spawn_key=(0,)))
    order = gen.permutation(150)
    te = np.sort(order[75:])
    bw = res.bandwidths["kernel"]
    # the SCF's window is centred at the training pairs' mean (issue 32)
    o = res.details.get("frequency_origin", 0.0)
    Z = (me_features(x[te], y[te], loc, bw ** 2) if kind == "me"
         else scf_features(x[te] - o, y[te] - o, loc, bw))
    lam, rank = hotelling(Z, ddof=1)
    assert res.statistic == pytest.approx(float(lam), rel=1e-9)
    df = 3 if kind == "me" else 6
    assert res.details["df"] == int(rank) == df
    assert res.pvalue == pytest.approx(stats.chi2.sf(res.statistic, df), rel=1e-12)
    assert res.pvalue < 0.01
    text = str(res.summary())
    assert "training pairs" in text and "chi2, " in text


def test_me_permutation_null_permutes_the_test_pairs():
    x, y = _gmd(80, 2, 0.0, 5)
    res = two_sample_test(x, y, statistic="me", n_locations=2, method="permutation",
                          n_resamples=99, rng=6)
    assert res.null_distribution.shape == (99,)
    count = int(np.sum(res.null_distribution >= res.statistic - 1e-9))
    assert res.pvalue == pytest.approx((1 + count) / 100)
    asym = two_sample_test(x, y, statistic="me", n_locations=2, rng=6, method="asymptotic")
    assert asym.statistic == res.statistic  # the same split and locations
    default = two_sample_test(x, y, statistic="me", n_locations=2, rng=6, n_resamples=99)
    assert default.method.name == "permutation" and default.pvalue == res.pvalue


def test_nfsic_finds_dependence_and_its_witness():
    gen = np.random.default_rng(7)
    x = gen.normal(size=(300, 2))
    y = np.sin(2 * x[:, :1]) + 0.4 * gen.normal(size=(300, 1))
    res = independence_test(x, y, statistic="fsic", n_locations=3, rng=8,
                            method="asymptotic")
    assert res.pvalue < 1e-3 and res.details["df"] == 3
    assert res.details["locations"].shape == (3, 2)
    assert res.details["locations_y"].shape == (3, 1)
    order = np.random.default_rng(np.random.SeedSequence(8, spawn_key=(0,))).permutation(300)
    te = np.sort(order[150:])
    bx, by = res.bandwidths["x"], res.bandwidths["y"]
    lam, _ = hotelling(fsic_features(x[te], y[te], res.details["locations"],
                                     res.details["locations_y"], bx ** 2, by ** 2), ddof=0)
    assert res.statistic == pytest.approx(float(lam), rel=1e-9)
    w = res.witness(x[te][:5], y[te][:5])
    assert w.shape == (5,)
    perm = independence_test(x, y, statistic="fsic", n_locations=3, rng=8,
                             method="permutation", n_resamples=49)
    assert perm.statistic == res.statistic and perm.pvalue == pytest.approx(0.02)


def test_me_witness_and_pictures():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x, y = _gmd(100, 2, 1.0, 9)
    res = two_sample_test(x, y, statistic="me", n_locations=2, rng=1, method="asymptotic")
    ax = res.plot()
    assert ax.lines and ax.collections  # the chi-square density, the statistic, the tail
    plt.close(ax.figure)
    ax = res.plot_witness()
    offsets = np.vstack([c.get_offsets() for c in ax.collections if hasattr(c, "get_offsets")
                         and len(c.get_offsets()) == 2])
    np.testing.assert_allclose(np.sort(offsets, axis=0),
                               np.sort(res.details["locations"], axis=0))
    plt.close(ax.figure)
    scf = two_sample_test(x, y, statistic="scf", n_locations=2, rng=1)
    with pytest.raises(ValueError, match="characteristic functions"):
        scf.witness(x)


@pytest.mark.parametrize("kind", ["me", "scf"])
def test_unequal_sizes_are_subsampled_with_the_seed(kind):
    """Issue 32: unbalanced data were refused ("same size"); the larger sample is
    subsampled at random by `rng` (its own child generator), and the report says so."""
    x, y = _gmd(40, 2, 1.0, 8)
    res = two_sample_test(x, y[:30], statistic=kind, n_locations=2, rng=3,
                          method="asymptotic")
    assert res.sizes["n_x"] + res.sizes["training pairs"] == 30
    note = [n for n in res.notes if "were drawn at random" in n]
    assert note and "30 of the 40 observations of x" in note[0]
    assert "30 of the 40 observations of x" in " ".join(str(res).split())
    swapped = two_sample_test(x[:30], y, statistic=kind, n_locations=2, rng=3,
                              method="asymptotic")
    assert any("observations of y were drawn" in n for n in swapped.notes)
    # the subsample is the "subsample" child of the seed: the pairs it keeps
    from kmtests._rng import child

    keep = np.sort(child(3, "subsample").choice(40, size=30, replace=False))
    same = two_sample_test(x[keep], y[:30], statistic=kind, n_locations=2, rng=3,
                           method="asymptotic")
    assert same.statistic == res.statistic and same.pvalue == res.pvalue
    assert not any("were drawn at random" in n for n in same.notes)  # equal sizes


def test_me_witness_plot_marks_the_locations_in_every_panel():
    """Issue 32: with more than two columns the witness is drawn feature by feature; the
    learned locations are marked in each panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x, y = _gmd(100, 3, 1.0, 9)
    res = two_sample_test(x, y, statistic="me", n_locations=2, rng=1, method="asymptotic")
    axs = res.plot_witness()
    loc = res.details["locations"]
    for j, ax in enumerate(axs):
        stars = [c for c in ax.collections if len(c.get_offsets()) == 2]
        assert len(stars) == 1
        np.testing.assert_allclose(np.sort(stars[0].get_offsets()[:, 0]), np.sort(loc[:, j]))
        assert "learned test locations" in ax.get_legend_handles_labels()[1] or j > 0
    plt.close("all")


def test_refusals():
    x, y = _gmd(60, 2, 0.0, 1)
    with pytest.raises(ValueError, match="Gaussian kernel"):
        two_sample_test(x, y, statistic="me", kernel="laplacian")
    with pytest.raises(ValueError, match="estimator='kme'"):
        two_sample_test(x, y, statistic="scf", estimator="skmse")
    with pytest.raises(ValueError, match="`n_locations` configures"):
        two_sample_test(x, y, n_locations=3)
    with pytest.raises(ValueError, match="at least"):
        two_sample_test(x[:8], y[:8], statistic="me", n_locations=5)
    with pytest.raises(ValueError, match="`n_resamples` do"):
        two_sample_test(x, y, statistic="me", method="asymptotic", n_resamples=99)
    with pytest.raises(ValueError, match="asymptotic"):
        two_sample_test(x, y, method="asymptotic")
    with pytest.raises(ValueError, match="`n_locations` configures"):
        independence_test(x, y, n_locations=2)


# -- invariance to the data's origin and units (issue 32) -------------------------------------
def _shift_scale_data(seed):
    gen = np.random.default_rng(seed)
    x, y = gen.normal(size=(40, 2)), gen.normal(size=(40, 2))
    y[:, 0] += 1.5
    return x, y


def test_me_and_scf_at_the_issues_offsets_and_scales():
    """Before: ME p 0.0003 -> 0.011 at offset 1e8 and -> 1 at scale 1e-8; SCF p -> 1 (or
    nan) at offset 1e8: the locations were learned in the data's own coordinates."""
    x, y = _shift_scale_data(1)
    for kind in ("me", "scf"):
        p = [two_sample_test(a * x + b, a * y + b, statistic=kind, n_locations=2, rng=1,
                             method="asymptotic").pvalue
             for a, b in ((1.0, 0.0), (1.0, 1e8), (1e-8, 0.0))]
        assert p[0] < 1e-6
        np.testing.assert_allclose(p, p[0], rtol=1e-3)


hyp = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["me", "scf"])
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 3),
       offset=st.one_of(st.sampled_from([0.0, 1e8, -1e8]), st.floats(-1e8, 1e8)),
       log_scale=st.floats(-8.0, 8.0))
def test_me_and_scf_are_invariant_to_shift_and_scale(kind, seed, offset, log_scale):
    """The p-value of ``a (x + b)`` is that of ``x`` for offsets ``|b| <= 1e8`` and scales
    ``a`` in ``[1e-8, 1e8]``, to the optimiser's tolerance (L-BFGS-B stops when the
    criterion gains less than ~1e-9 of itself: 1e-4 relative in the p-value; measured
    here at most 5e-4). Data are rounded at ``1e-8`` of their spread at offset 1e8, and
    the training is a non-convex optimisation: on weaker signals than these, a
    perturbation of the data of that size (or of 1e-16) can move it to another local
    optimum (SCF, n = 100, shift 0.5: 2 of 10 data sets)."""
    x, y = _shift_scale_data(seed)
    a = 10.0 ** log_scale
    base = two_sample_test(x, y, statistic=kind, n_locations=2, rng=1, method="asymptotic")
    moved = two_sample_test(a * (x + offset), a * (y + offset), statistic=kind,
                            n_locations=2, rng=1, method="asymptotic")
    assert moved.pvalue == pytest.approx(base.pvalue, rel=1e-3)
    assert moved.bandwidths["kernel"] == pytest.approx(a * base.bandwidths["kernel"],
                                                       rel=1e-2)
    if kind == "me":  # the learned locations move with the data
        np.testing.assert_allclose(moved.details["locations"] / a - offset,
                                   base.details["locations"], atol=1e-2)


def test_fixed_width_is_kept():
    x, y = _gmd(100, 2, 1.0, 2)
    res = two_sample_test(x, y, statistic="me", bandwidth=0.7, n_locations=2, rng=3)
    assert res.bandwidths["kernel"] == pytest.approx(0.7)


# -- level -----------------------------------------------------------------------------------
def _band(reps, alpha=0.05):
    return stats.binom.ppf(0.005, reps, alpha), stats.binom.ppf(0.995, reps, alpha)


def _rejections(kind, n, d, reps, **kw):
    rej = 0
    for r in range(reps):
        gen = np.random.default_rng(30_000 + r)
        x, y = gen.normal(size=(n, d)), gen.normal(size=(n, d))
        if kind == "fsic":
            res = independence_test(x, y, statistic="fsic", rng=r, **kw)
        else:
            res = two_sample_test(x, y, statistic=kind, rng=r, **kw)
        rej += res.pvalue <= 0.05
    return rej


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["me", "scf"])
def test_level_of_the_asymptotic_null(kind):
    """n = 500 (250 test pairs), d = 2, J = 5: measured 5 (ME) and 17 (SCF) of 300 at 5%
    (the band is [6, 25]; the chi-square null is not liberal here)."""
    _, hi = _band(300)
    assert _rejections(kind, 500, 2, 300, method="asymptotic") <= hi


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="measured 47 of 300 at 5% (band [6, 25]): with "
                   "250 test pairs the chi-square null of NFSIC is liberal (its learned "
                   "widths are narrow, the features far from Gaussian); the default "
                   "permutation null keeps the level")
def test_level_of_the_asymptotic_null_nfsic():
    _, hi = _band(300)
    assert _rejections("fsic", 500, 2, 300, method="asymptotic") <= hi


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["me", "scf", "fsic"])
def test_level_of_the_permutation_null(kind):
    """The default null: permutations of the test pairs (exact given the split)."""
    lo, hi = _band(200)
    assert lo <= _rejections(kind, 100, 2, 200, n_resamples=199) <= hi
