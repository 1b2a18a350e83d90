"""The estimator/engine seam and the driver: rules, U-forms, null methods, results."""

import numpy as np
import pandas as pd
import pytest

import kmtests
from kmtests import GammaMethod, PermutationMethod
from kmtests.null import permutation as _resampling
from kmtests.engines.hsic import PairedGrams, hsic_general, hsic_values
from kmtests.engines.mmd import PooledGram, mmd_general, mmd_values
from kmtests.estimators import FKMSE, KME, SKMSE
from kmtests.estimators._rules import General
from kmtests.kernels import Gaussian

from . import _naive


class GeneralKME(KME):
    """The KME through the general (per-sample weights) path."""

    name = "general_kme"

    def rule(self):
        return General(self.weights)


# -- U-forms of weighted statistics -------------------------------------------------------
@pytest.mark.parametrize("unbiased", [False, True])
def test_weighted_mmd_forms_equal_literal_sums(rng, unbiased):
    z = rng.normal(size=(13, 2))
    K = Gaussian(bandwidth=1.0).gram(z)
    pg = PooledGram.from_gram(K)
    perms = _resampling.random_permutations(rng, 13, 5)
    est = FKMSE(lam=0.05)
    vals, _ = mmd_general(pg, perms, 6, est.rule(), unbiased=unbiased)
    for got, p in zip(vals.stat, perms):
        ix, iy = np.sort(p[:6]), np.sort(p[6:])
        bx = est.weights(K[np.ix_(ix, ix)])[0]
        by = est.weights(K[np.ix_(iy, iy)])[0]
        want = _naive.weighted_mmd(K, ix, iy, bx, by, unbiased)
        assert got == pytest.approx(want, rel=1e-10, abs=1e-13)


def test_general_u_form_at_uniform_weights_is_mmd_u(rng):
    """The U-form reduces to c^2 U_xx + c^2 U_yy - 2 c^2 Kbar_xy: MMD^2_u at c = 1."""
    z = rng.normal(size=(12, 2))
    x, y = z[:5], z[5:]
    K = Gaussian(bandwidth=1.0).gram(z)
    pg = PooledGram.from_gram(K)
    perms = _resampling.random_permutations(rng, 12, 6)
    general = mmd_general(pg, perms, 5, GeneralKME().rule(), unbiased=True)[0].stat
    uniform = mmd_values(pg, perms, 5, KME().rule(), unbiased=True).stat
    np.testing.assert_allclose(general, uniform, rtol=1e-11)
    ident = np.arange(12)[None, :]
    assert mmd_general(pg, ident, 5, GeneralKME().rule(), unbiased=True)[0].stat[0] == \
        pytest.approx(_naive.mmd2_u(x, y, _naive.k_gauss(1.0)), rel=1e-11)


@pytest.mark.parametrize("unbiased", [False, True])
def test_weighted_hsic_forms_equal_literal_sums(rng, unbiased):
    x, y = rng.normal(size=(9, 1)), rng.normal(size=(9, 2))
    K, L = Gaussian(bandwidth=1.0).gram(x), Gaussian(bandwidth=1.3).gram(y)
    pg = PairedGrams.from_grams(K, L)
    perms = _resampling.random_permutations(rng, 9, 4)
    est = FKMSE(lam=0.02)
    vals, _ = hsic_general(pg, perms, est.rule(), unbiased=unbiased)
    H = np.eye(9) - 1 / 9
    Kc, Lc = H @ K @ H, H @ L @ H
    for got, p in zip(vals.stat, perms):
        Lp = Lc[np.ix_(p, p)]
        beta = est.weights(Kc * Lp)[0]
        want = _naive.weighted_hsic(Kc.tolist(), Lp.tolist(), list(beta), unbiased)
        assert got == pytest.approx(want, rel=1e-9, abs=1e-14)


def test_hsic_u_forms_at_uniform_weights(rng):
    """General U-form at beta = 1/n is HSIC_u; a fixed uniform factor c gives c^2 HSIC_u."""
    x, y = rng.normal(size=(10, 1)), rng.normal(size=(10, 1))
    K, L = Gaussian(bandwidth=1.0).gram(x), Gaussian(bandwidth=0.8).gram(y)
    pg = PairedGrams.from_grams(K, L)
    perms = _resampling.random_permutations(rng, 10, 5)
    hsic_u = hsic_values(pg, perms, KME().rule(), unbiased=True).stat
    gen = hsic_general(pg, perms, GeneralKME().rule(), unbiased=True)[0].stat
    np.testing.assert_allclose(gen, hsic_u, rtol=1e-10)
    ref = _naive.hsic_u(x, y[perms[0]], _naive.k_gauss(1.0), _naive.k_gauss(0.8))
    assert hsic_u[0] == pytest.approx(ref, rel=1e-9)
    shrunk = hsic_values(pg, perms, SKMSE(shrinkage=0.4).rule(), unbiased=True).stat
    np.testing.assert_allclose(shrunk, 0.36 * hsic_u, rtol=1e-12)


def test_u_form_available_for_every_estimator(rng):
    x, y = rng.normal(size=(12, 1)), rng.normal(size=(12, 1))
    for est in ("kme", "skmse", "bkmse", "fkmse", "landweber", "mkme"):
        a = kmtests.two_sample_test(x, y, estimator=est, statistic="unbiased", n_resamples=19,
                                    rng=0)
        b = kmtests.independence_test(x, y, estimator=est, statistic="unbiased",
                                      n_resamples=19, rng=0)
        assert a.statistic_name.startswith("MMD^2_u") and b.statistic_name.startswith("HSIC_u")
        assert np.isfinite(a.statistic) and np.isfinite(b.statistic)


# -- null methods as objects ---------------------------------------------------------------
def test_method_objects_and_strings_agree(rng):
    x, y = rng.normal(size=(15, 2)), rng.normal(0.5, size=(15, 2))
    a = kmtests.two_sample_test(x, y, n_resamples=199, rng=3)
    b = kmtests.two_sample_test(x, y, method=PermutationMethod(n_resamples=199, rng=3))
    assert a.pvalue == b.pvalue and a.method == b.method
    assert isinstance(a.method, PermutationMethod) and a.method.n_resamples == 199
    g = kmtests.two_sample_test(x, y, statistic="biased", method=GammaMethod())
    assert isinstance(g.method, GammaMethod) and g.n_resamples is None
    with pytest.raises(NotImplementedError, match="no Monte Carlo error"):
        g.pvalue_interval()


def test_method_option_conflicts_and_validation(rng):
    x = rng.normal(size=(10, 1))
    with pytest.raises(ValueError, match="give `n_resamples` either in `method`"):
        kmtests.two_sample_test(x, x, method=PermutationMethod(), n_resamples=99)
    with pytest.raises(ValueError, match="`n_resamples` must be a positive integer"):
        PermutationMethod(n_resamples=0)
    with pytest.raises(TypeError, match="`progress` must be True, False or None"):
        PermutationMethod(progress="yes")
    with pytest.raises(ValueError, match="`method` must be one of 'asymptotic', 'bootstrap', "
                       "'chi2', 'gamma', 'monte_carlo', 'normal', 'permutation', 'swap', 'wild', or a "
                       "method "
                       "object"):
        kmtests.independence_test(x, x, method="jackknife")


def test_results_unpack_like_scipy(rng):
    x, y = rng.normal(size=(10, 1)), rng.normal(size=(10, 1))
    res = kmtests.two_sample_test(x, y, n_resamples=99, rng=1)
    statistic, pvalue = res
    assert (statistic, pvalue) == (res.statistic, res.pvalue)


# -- reports name the data, keep the objects, and say what happened ------------------------
def test_pandas_names_reach_the_report(rng):
    df = pd.DataFrame({"temp": rng.normal(size=30), "pres": rng.normal(size=30),
                       "hum": rng.normal(size=30)})
    res = kmtests.independence_test(df["temp"], df[["pres", "hum"]], n_resamples=99, rng=1)
    assert res.data_name == "temp and y[pres, hum]"
    assert "data:  temp and y[pres, hum]" in str(res)
    a, b = df.iloc[:15][["temp", "pres"]], df.iloc[15:][["temp", "pres"]]
    two = kmtests.two_sample_test(a, b, n_resamples=99, rng=1)
    assert two.data_name == "x[temp, pres] and y[temp, pres]"


def test_negative_unbiased_statistic_gets_a_note(rng):
    for seed in range(20):
        gen = np.random.default_rng(seed)
        res = kmtests.two_sample_test(gen.normal(size=10), gen.normal(size=10),
                                      n_resamples=19, rng=1)
        if res.statistic < 0:
            break
    assert res.statistic < 0
    assert any("unbiased statistic is negative" in n for n in res.notes)
    assert "negative" in str(res) and "negative" in str(res.summary())


def test_result_keeps_objects_and_structured_params(rng):
    x, y = rng.normal(size=(12, 2)), rng.normal(size=(14, 2))
    res = kmtests.two_sample_test(x, y, estimator=SKMSE(), n_resamples=49, rng=2)
    assert isinstance(res.estimator, SKMSE) and res.estimator.name == "skmse"
    assert set(res.params) == {"x", "y"} and 0 <= res.params["x"]["shrinkage"] <= 1
    assert isinstance(res.kernels["kernel"], Gaussian)
    pooled = kmtests.two_sample_test(x, y, estimator="fkmse", tuning="pooled",
                                     n_resamples=19, rng=2)
    assert set(pooled.params) == {"pooled"} and pooled.params["pooled"]["lam"] > 0


def test_progress_bar(rng, capsys):
    pytest.importorskip("tqdm")
    x, y = rng.normal(size=(10, 1)), rng.normal(size=(10, 1))
    kmtests.two_sample_test(x, y, n_resamples=99, rng=1, progress=True)
    assert "permutations" in capsys.readouterr().err
    kmtests.two_sample_test(x, y, n_resamples=99, rng=1)  # quick: no bar by default
    assert capsys.readouterr().err == ""


def test_no_progress_bar_by_default_off_a_terminal(rng, capsys, monkeypatch):
    # a long test shows a bar by default on a terminal, none into a log file or pipe
    pytest.importorskip("tqdm")
    from kmtests.null import permutation as _resampling

    monkeypatch.setattr(_resampling, "PROGRESS_SECONDS", -1.0)
    x, y = rng.normal(size=(10, 1)), rng.normal(size=(10, 1))
    for interactive, shown in ((True, True), (False, False)):
        monkeypatch.setattr(_resampling, "_interactive", lambda v=interactive: v)
        kmtests.two_sample_test(x, y, n_resamples=99, rng=1)
        assert ("permutations" in capsys.readouterr().err) is shown
