"""The conventions users expect from scipy.stats and R (issue 20): ``alternative=``,
``nan_policy=``, ``axis=`` on every test face, and ``method="gamma"`` computing its own
statistic when none is named (:mod:`kmtests.problems.conventions`).

``nan_policy="omit"`` is checked against the test on the data with the rows left out by
hand (the same statistic and p-value for the same `rng`), and its level under the null
(missing completely at random) with a binomial tolerance.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import kmtests
from kmtests.problems.conventions import check_alternative, check_axis, check_nan_policy


def _run(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kmtests.KmtestsWarning)
        return fn(*args, **kwargs)


@pytest.fixture(scope="module")
def xyz():
    gen = np.random.default_rng(20)
    x = gen.normal(size=(30, 2))
    y = x[:, :1] + gen.normal(size=(30, 1))
    z = gen.normal(size=(30, 1))
    return x, y, z


FACES = {
    "two_sample": lambda x, y, z, **kw: kmtests.two_sample_test(x, x[::-1] + 1, n_resamples=49,
                                                                rng=1, **kw),
    "independence": lambda x, y, z, **kw: kmtests.independence_test(x, y, n_resamples=49,
                                                                    rng=1, **kw),
    "k_sample": lambda x, y, z, **kw: kmtests.k_sample_test(x[:, 1:], y, z, n_resamples=49,
                                                            rng=1, **kw),
    "joint": lambda x, y, z, **kw: kmtests.joint_independence_test(x, y, z, n_resamples=49,
                                                                   rng=1, **kw),
    "conditional": lambda x, y, z, **kw: kmtests.conditional_independence_test(x, y, z, **kw),
    "aggregated_two_sample": lambda x, y, z, **kw: kmtests.aggregated_two_sample_test(
        x, x[::-1] + 1, bandwidths=3, n_resamples=49, rng=1, **kw),
    "aggregated_independence": lambda x, y, z, **kw: kmtests.aggregated_independence_test(
        x, y, bandwidths_x=2, bandwidths_y=2, n_resamples=49, rng=1, **kw),
}


# -- alternative ------------------------------------------------------------------------------
@pytest.mark.parametrize("face", list(FACES))
def test_alternative_greater_only(xyz, face):
    res = _run(FACES[face], *xyz)
    same = _run(FACES[face], *xyz, alternative="greater")
    assert (same.statistic, same.pvalue) == (res.statistic, res.pvalue)
    for alt in ("two-sided", "less"):
        with pytest.raises(ValueError, match=rf"alternative='{alt}' has no meaning for a kernel "
                           r"test: its statistic estimates a squared distance .* The test is "
                           r"one-sided: use alternative='greater' \(the default\)\."):
            FACES[face](*xyz, alternative=alt)
    with pytest.raises(ValueError, match=r"`alternative` must be 'greater' \(kernel tests are "
                       r"one-sided\); got 'larger'\."):
        FACES[face](*xyz, alternative="larger")


def test_alternative_validation():
    assert check_alternative("GREATER") == "greater"
    with pytest.raises(ValueError, match="got None"):
        check_alternative(None)


# -- nan_policy -------------------------------------------------------------------------------
@pytest.mark.parametrize("face", list(FACES))
def test_nan_raise_names_the_argument_row_and_column(xyz, face):
    x, y, z = (a.copy() for a in xyz)
    x[4, 1] = np.nan
    with pytest.raises(ValueError, match=r"`x1?` must not contain NaN or infinite values "
                       r"\(missing values included\): row 4(, column 1)? of `x1?` is missing "
                       r"\(NaN\)\. Pass nan_policy='omit' to leave out the observations"):
        FACES[face](x, y, z)
    with pytest.raises(ValueError, match="nan_policy='propagate' would give a NaN statistic "
                       "and p-value, which mean nothing as a test result"):
        FACES[face](*xyz, nan_policy="propagate")
    with pytest.raises(ValueError, match="`nan_policy` must be one of 'omit', 'raise'; got "
                       "'drop'."):
        FACES[face](*xyz, nan_policy="drop")


def test_nan_raise_names_pandas_labels():
    gen = np.random.default_rng(1)
    df = pd.DataFrame(gen.normal(size=(12, 2)), columns=["temp", "pres"],
                      index=[f"s{i}" for i in range(12)])
    df.loc["s7", "pres"] = None
    with pytest.raises(ValueError, match=r"row 7 \(index 's7'\), column 'pres' of `x` is "
                       r"missing"):
        kmtests.two_sample_test(df, df + 1.0, n_resamples=9, rng=1)


def test_infinity_is_not_a_missing_value(xyz):
    x, y, _ = (a.copy() for a in xyz)
    x[2, 0] = np.inf
    for policy in ("raise", "omit"):
        with pytest.raises(ValueError, match=r"row 2, column 0 of `x` is infinite\. An "
                           r"infinity is not a missing value"):
            kmtests.two_sample_test(x, y, nan_policy=policy, n_resamples=9, rng=1)


def test_omit_two_sample_drops_each_samples_own_rows(xyz):
    x, y, _ = xyz
    xm, ym = x.copy(), np.hstack([y, y]) + 1.0
    xm[[3, 17], 0] = np.nan
    ym[5, 1] = np.nan
    res = kmtests.two_sample_test(xm, ym, nan_policy="omit", n_resamples=199, rng=3)
    ref = kmtests.two_sample_test(np.delete(xm, [3, 17], 0), np.delete(ym, [5], 0),
                                  n_resamples=199, rng=3)
    assert (res.statistic, res.pvalue) == (ref.statistic, ref.pvalue)
    assert res.sizes == {"n_x": 28, "n_y": 29}
    assert res.notes[:2] == (
        "nan_policy='omit': 2 of the 30 observations of x had a missing value and were left "
        "out (rows 3 and 17)",
        "nan_policy='omit': 1 of the 30 observations of y had a missing value and were left "
        "out (row 5)")
    summ = str(res.summary()).replace("\n    ", " ")
    assert ("Nan_policy" not in summ and "[3] nan_policy='omit': 2 of the 30 observations of x "
            "had a missing value and were left out (rows 3 and 17).") in summ
    assert "note: nan_policy='omit': 2 of the 30 observations of x" in str(res)
    stat = kmtests.mmd(xm, ym, nan_policy="omit")
    assert stat == ref.statistic


def test_omit_pairs_is_pairwise_complete(xyz):
    x, y, _ = xyz
    xm, ym = x.copy(), y.copy()
    xm[2, 1] = np.nan
    ym[[2, 9], 0] = np.nan
    res = kmtests.independence_test(xm, ym, nan_policy="omit", n_resamples=199, rng=3)
    keep = np.setdiff1d(np.arange(30), [2, 9])
    ref = kmtests.independence_test(xm[keep], ym[keep], n_resamples=199, rng=3)
    assert (res.statistic, res.pvalue) == (ref.statistic, ref.pvalue)
    assert res.sizes == {"n": 28}
    assert res.notes[0] == ("nan_policy='omit': 2 of the 30 paired observations had a missing "
                            "value and were left out (x: row 2; y: rows 2 and 9)")
    assert kmtests.hsic(xm, ym, nan_policy="omit") == pytest.approx(ref.statistic, rel=1e-12)


def test_omit_aligns_pandas_pairs_before_dropping(xyz):
    """Pairs are matched by index label, then a pair with a missing value is left out:
    the NaN of y at label 'r4' removes x's row 'r4', wherever y has it."""
    x, y, _ = xyz
    idx = [f"r{i}" for i in range(30)]
    sx = pd.DataFrame(x, index=idx, columns=["a", "b"])
    sy = pd.Series(y[:, 0], index=idx, name="v")
    sy.loc["r4"] = np.nan
    shuffled = sy.iloc[np.random.default_rng(0).permutation(30)]
    res = kmtests.independence_test(sx, shuffled, nan_policy="omit", n_resamples=99, rng=2)
    ref = kmtests.independence_test(sx.drop(index="r4"), sy.drop(index="r4"), n_resamples=99,
                                    rng=2)
    assert (res.statistic, res.pvalue) == (ref.statistic, ref.pvalue)
    assert res.data_name == "x[a, b] and v"
    assert res.notes[0].endswith("(v: row 4)") or res.notes[0].endswith("(y: row 4)")


def test_omit_joint_conditional_and_k_sample(xyz):
    x, y, z = (a.copy() for a in xyz)
    z[[1, 6], 0] = np.nan
    keep = np.setdiff1d(np.arange(30), [1, 6])
    res = kmtests.joint_independence_test(x, y, z, nan_policy="omit", n_resamples=99, rng=1)
    ref = kmtests.joint_independence_test(x[keep], y[keep], z[keep], n_resamples=99, rng=1)
    assert (res.statistic, res.pvalue) == (ref.statistic, ref.pvalue)
    assert res.notes[0].endswith("(x3: rows 1 and 6)")
    assert kmtests.dhsic(x, y, z, nan_policy="omit") == pytest.approx(ref.statistic, rel=1e-12)
    res = kmtests.conditional_independence_test(x, y, z, nan_policy="omit")
    ref = kmtests.conditional_independence_test(x[keep], y[keep], z[keep])
    assert (res.statistic, res.pvalue) == (ref.statistic, ref.pvalue)
    res = kmtests.k_sample_test(x[:, :1], y, z, nan_policy="omit", n_resamples=99, rng=1)
    ref = kmtests.k_sample_test(x[:, :1], y, z[keep], n_resamples=99, rng=1)
    assert (res.statistic, res.pvalue) == (ref.statistic, ref.pvalue)
    assert res.sizes == {"n_1": 30, "n_2": 30, "n_3": 28}


def test_omit_refusals(xyz):
    x, y, _ = (a.copy() for a in xyz)
    y[4, 0] = np.nan
    strata = np.repeat(np.arange(6), 5)
    with pytest.raises(ValueError, match="`strata` labels the observations as given, and "
                       "nan_policy='omit' left some out"):
        kmtests.independence_test(x, y, nan_policy="omit", strata=strata, rng=1)
    with pytest.raises(ValueError, match="`blocks` labels the observations as given"):
        kmtests.independence_test(x, y, nan_policy="omit", blocks=5, rng=1)
    # nothing missing: strata as usual
    kmtests.independence_test(x, xyz[1], nan_policy="omit", strata=strata, n_resamples=9,
                              rng=1)
    few = np.full((4, 1), np.nan)
    few[0, 0] = 1.0
    with pytest.raises(ValueError, match="nan_policy='omit' leaves 1 of the 4 observations of "
                       "`y` .* a test needs at least 2"):
        kmtests.two_sample_test(x, few, nan_policy="omit")
    with pytest.raises(ValueError, match="nan_policy='omit' leaves 1 of the 4 paired "
                       "observations"):
        kmtests.independence_test(x[:4], few, nan_policy="omit")


def test_precomputed_gram(xyz):
    x, y, _ = xyz
    K = kmtests.kernels.Gaussian(bandwidth=1.0).gram(x)
    bad = K.copy()
    bad[3, 5] = bad[5, 3] = np.nan
    with pytest.raises(ValueError, match=r"`x` is a precomputed Gram matrix with a missing "
                       r"value \(row 3, column 5 of `x` is NaN\)"):
        kmtests.independence_test(bad, y, kernel_x="precomputed", nan_policy="omit")
    ym = y.copy()
    ym[7, 0] = np.nan
    res = kmtests.independence_test(K, ym, kernel_x="precomputed", nan_policy="omit",
                                    n_resamples=99, rng=1)
    keep = np.setdiff1d(np.arange(30), [7])
    ref = kmtests.independence_test(K[np.ix_(keep, keep)], y[keep], kernel_x="precomputed",
                                    n_resamples=99, rng=1)
    assert (res.statistic, res.pvalue) == (ref.statistic, ref.pvalue)


@pytest.mark.parametrize("test", ["two_sample", "independence"])
def test_level_with_missing_values_omitted(test):
    """Values missing completely at random, left out: the test keeps its level (each
    sample, or the complete pairs, are still i.i.d. under the null). 300 null data sets,
    n = 25 per sample, 10% of the entries missing, alpha = 0.05."""
    gen = np.random.default_rng(2024)
    reps, rejections = 300, 0
    for r in range(reps):
        x, y = gen.normal(size=(25, 2)), gen.normal(size=(25, 2))
        for a in (x, y):
            a[gen.uniform(size=a.shape) < 0.1] = np.nan
        fn = kmtests.two_sample_test if test == "two_sample" else kmtests.independence_test
        res = _run(fn, x, y, nan_policy="omit", n_resamples=99, rng=r)
        rejections += res.pvalue <= 0.05
    assert stats.binomtest(rejections, reps, 0.05).pvalue > 0.001, rejections


# -- axis ---------------------------------------------------------------------------------------
def test_axis_one_reads_columns_as_observations(xyz):
    x, y, z = xyz
    res = kmtests.two_sample_test(x.T, (x[::-1] + 1).T, axis=1, n_resamples=99, rng=1)
    ref = kmtests.two_sample_test(x, x[::-1] + 1, n_resamples=99, rng=1)
    assert (res.statistic, res.pvalue) == (ref.statistic, ref.pvalue)
    res = kmtests.independence_test(x.T, y[:, 0], axis=1, n_resamples=99, rng=1)
    ref = kmtests.independence_test(x, y[:, 0], n_resamples=99, rng=1)   # 1-D: any axis
    assert (res.statistic, res.pvalue) == (ref.statistic, ref.pvalue)
    df = pd.DataFrame(x.T, index=["gene_a", "gene_b"], columns=[f"s{i}" for i in range(30)])
    res = kmtests.independence_test(df, pd.Series(y[:, 0], index=df.columns, name="v"),
                                    axis=1, n_resamples=99, rng=1)
    assert (res.statistic, res.pvalue) == (ref.statistic, ref.pvalue)
    assert res.data_name == "x[gene_a, gene_b] and v"
    res = kmtests.joint_independence_test(x.T, y.T, z.T, axis=1, n_resamples=49, rng=1)
    ref = kmtests.joint_independence_test(x, y, z, n_resamples=49, rng=1)
    assert (res.statistic, res.pvalue) == (ref.statistic, ref.pvalue)


@pytest.mark.parametrize("axis", [2, -1, None, 1.0, True])
def test_axis_validation(xyz, axis):
    with pytest.raises(ValueError, match=r"`axis` must be 0 \(the rows are the observations\) "
                       r"or 1 \(the columns are\); got .* `axis` does not run one test per "
                       "row or column"):
        kmtests.two_sample_test(*xyz[:2], axis=axis)


def test_checks():
    assert check_axis(np.int64(1)) == 1
    assert check_nan_policy("OMIT") == "omit"


# -- method="gamma" picks its statistic --------------------------------------------------------
def test_gamma_computes_its_own_statistic(xyz):
    x, y, _ = xyz
    w = x[::-1] + 0.5
    res = kmtests.two_sample_test(x, w, method="gamma")
    ref = kmtests.two_sample_test(x, w, method="gamma", statistic="biased")
    assert res.statistic_name == "MMD^2_b"
    assert (res.statistic, res.pvalue) == (ref.statistic, ref.pvalue)
    assert res.statistic == pytest.approx(kmtests.mmd(x, w, statistic="biased"), rel=1e-12)
    res = kmtests.two_sample_test(x, w, method=kmtests.GammaMethod())
    assert res.statistic_name == "MMD^2_b"
    ind = kmtests.independence_test(x, y, method="chi2", n_resamples=99, rng=1)
    assert ind.statistic_name == "HSIC_b"
    # a statistic the method does not approximate, asked for: refused, as before
    with pytest.raises(ValueError, match=re.escape("the test computes MMD^2_u: use "
                                                   "statistic='biased' with estimator='kme'")):
        kmtests.two_sample_test(x, w, method="gamma", statistic="unbiased")
