"""The kernel goodness-of-fit test (kernel Stein discrepancy): the Stein kernel against a
finite-difference reference, the statistic against a literal double loop, the wild
bootstrap and Monte Carlo nulls against the same draws made by hand, their level
(slow), and one clear error for each bad input before any kernel matrix."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import kmtests
from kmtests import goodness_of_fit_test
from kmtests.kernels import IMQ, Gaussian, Matern32, Matern52
from kmtests.null import WildBootstrap
from kmtests.statistics.ksd import stein_gram


def _fd_stein(kernel, x, s, eps=1e-5):
    """h_p(x_i, x_j) with the kernel's derivatives by central differences (the definition,
    term by term)."""
    n, d = x.shape

    def k(a, b):
        return float(kernel.gram(np.vstack([a, b]))[0, 1]) if not np.array_equal(a, b) \
            else 1.0

    H = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            a, b = x[i], x[j]
            gx = np.array([(k(a + eps * e, b) - k(a - eps * e, b)) / (2 * eps)
                           for e in np.eye(d)])
            gy = np.array([(k(a, b + eps * e) - k(a, b - eps * e)) / (2 * eps)
                           for e in np.eye(d)])
            tr = sum((k(a + eps * e, b + eps * e) - k(a + eps * e, b - eps * e)
                      - k(a - eps * e, b + eps * e) + k(a - eps * e, b - eps * e))
                     / (4 * eps * eps) for e in np.eye(d))
            H[i, j] = s[i] @ s[j] * k(a, b) + s[i] @ gy + s[j] @ gx + tr
    return H


@pytest.mark.parametrize("kernel", [Gaussian(bandwidth=1.3), IMQ(bandwidth=0.9),
                                    Matern32(bandwidth=1.1), Matern52(bandwidth=0.8)],
                         ids=["gaussian", "imq", "matern32", "matern52"])
def test_stein_kernel_is_the_definition(kernel):
    """(The Matérn 3/2 kernel is not twice differentiable in the distance at 0: the
    finite-difference trace on the diagonal carries an error of order eps, hence its
    larger tolerance there.)"""
    gen = np.random.default_rng(0)
    x = gen.normal(size=(6, 2)) + [5.0, -3.0]
    s = gen.normal(size=(6, 2))
    H, F = stein_gram(kernel, x, s), _fd_stein(kernel, x, s)
    off = ~np.eye(6, dtype=bool)
    np.testing.assert_allclose(H[off], F[off], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.diag(H), np.diag(F),
                               rtol=1e-3 if isinstance(kernel, Matern32) else 1e-5, atol=1e-6)


def test_statistic_is_the_literal_mean_of_the_stein_kernel():
    gen = np.random.default_rng(1)
    x = gen.normal(size=(40, 2))
    score = lambda t: -t  # noqa: E731 - the standard normal's score
    H = stein_gram(IMQ(bandwidth=1.0), x, -x)
    n = x.shape[0]
    u = kmtests.goodness_of_fit_test(x, score=score, bandwidth=1.0, n_resamples=9, rng=0)
    v = kmtests.goodness_of_fit_test(x, score=score, bandwidth=1.0, statistic="biased",
                                     n_resamples=9, rng=0)
    assert u.statistic == pytest.approx(sum(H[i, j] for i in range(n) for j in range(n)
                                            if i != j) / (n * (n - 1)), rel=1e-12)
    assert v.statistic == pytest.approx(H.sum() / n ** 2, rel=1e-12)


def test_the_stein_kernel_has_mean_zero_under_the_model():
    """E h_p(X, X') = 0 for X, X' independent draws of p: the U-statistic averages to 0
    (200 samples of n = 30 from N(0, 1): the mean within 3 standard errors of 0)."""
    gen = np.random.default_rng(2)
    us = []
    for _ in range(200):
        x = gen.normal(size=(30, 1))
        H = stein_gram(IMQ(bandwidth=1.0), x, -x)
        us.append((H.sum() - np.trace(H)) / (30 * 29))
    us = np.array(us)
    assert abs(us.mean()) < 3 * us.std(ddof=1) / np.sqrt(us.size)


@pytest.mark.parametrize("unbiased", [True, False])
def test_wild_bootstrap_is_the_literal_quadratic_form(unbiased):
    gen = np.random.default_rng(3)
    x = gen.normal(size=(25, 1))
    res = goodness_of_fit_test(x, model=stats.norm(), bandwidth=1.0, n_resamples=50, rng=7,
                               statistic="unbiased" if unbiased else "biased")
    H = stein_gram(IMQ(bandwidth=1.0), x, -x)
    W = np.where(np.random.default_rng(7).random((50, 25)) < 0.5, -1.0, 1.0)
    q = np.einsum("bi,ij,bj->b", W, H, W)
    ref = (q - W ** 2 @ np.diag(H)) / (25 * 24) if unbiased else q / 625
    np.testing.assert_allclose(res.null_distribution, ref, rtol=1e-10, atol=1e-14)
    assert res.pvalue == (1 + np.sum(ref >= res.statistic - 1e-12)) / 51


def test_monte_carlo_null_draws_fresh_samples_of_the_model():
    x = np.random.default_rng(4).standard_t(3, size=40)
    res = goodness_of_fit_test(x, model=stats.norm(), method="monte_carlo", n_resamples=30,
                               rng=5)
    gen = np.random.default_rng(5)
    bw = float(res.kernels["kernel"].bandwidth)
    ref = []
    for _ in range(30):
        xs = stats.norm().rvs(size=40, random_state=gen)[:, None]
        H = stein_gram(IMQ(bandwidth=bw), xs, -xs)
        ref.append((H.sum() - np.trace(H)) / (40 * 39))
    np.testing.assert_allclose(res.null_distribution, ref, rtol=1e-10)
    again = goodness_of_fit_test(x, model=stats.norm(), method="monte_carlo",
                                 n_resamples=30, rng=5, batch=7)
    assert again.pvalue == res.pvalue


def test_power_and_the_report():
    x = np.random.default_rng(0).standard_t(df=3, size=300)
    res = goodness_of_fit_test(x, model=stats.norm(0, 1), n_resamples=499, rng=1)
    assert res.pvalue < 0.01
    text = " ".join(str(res).split())
    assert "Kernel goodness-of-fit test (kernel Stein discrepancy)" in text
    assert "alternative hypothesis: the sample does not come from the model" in text
    fit = goodness_of_fit_test(x, model=stats.t(3), n_resamples=499, rng=1)
    assert fit.pvalue > 0.05


def test_dependent_multipliers_for_mcmc_output():
    """An AR(1) chain whose stationary law is N(0, 1): the AR wild bootstrap runs."""
    gen = np.random.default_rng(6)
    x = np.empty(400)
    x[0] = gen.normal()
    for t in range(1, 400):
        x[t] = 0.8 * x[t - 1] + 0.6 * gen.normal()
    res = goodness_of_fit_test(x, model=stats.norm(),
                               method=WildBootstrap(n_resamples=199, rng=1, process="ar",
                                                    length=10.0))
    assert 0 < res.pvalue <= 1 and "AR(1) multipliers" in " ".join(str(res).split())


@pytest.mark.parametrize("kw, match", [
    (dict(score=lambda t: np.zeros((3, 3))), r"shape \(30, 1\); got shape \(3, 3\)"),
    (dict(score=lambda t: np.log(t)), "the score is not finite at point"),
    (dict(model=stats.poisson(3)), "with a density.*a discrete law"),
    (dict(model=stats.multivariate_normal([0, 0])), "2-dimensional and the data have 1"),
    (dict(), "give the model as `score=`"),
    (dict(score=lambda t: -t, model=stats.norm()), "one of the two"),
    (dict(score=lambda t: -t, kernel="laplacian"), "'matern32' and 'matern52'"),
    (dict(score=lambda t: -t, method="permutation"), "no rearrangement keeps the null"),
    (dict(score=lambda t: -t, method="monte_carlo"), "no model to draw from"),
    (dict(score=lambda t: -t, estimator="mkme"), "acts through the kernel"),
    (dict(score=lambda t: -t, estimator="fkmse", statistic="unbiased"),
     "weights the points unequally"),
    (dict(score=lambda t: -t, estimator="fkmse", method="wild"), "monte_carlo"),
])
def test_bad_input_is_one_clear_error(kw, match):
    x = np.random.default_rng(0).normal(size=30)
    with pytest.raises((ValueError, TypeError), match=match):
        goodness_of_fit_test(x, **kw)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["wild", "monte_carlo"])
def test_level(method):
    """300 samples of N(0, 1), n = 100, B = 99: rejections at 5% inside the binomial 99%
    band (the Monte Carlo null is exact; the wild bootstrap asymptotically valid)."""
    rejections = 0
    for i in range(300):
        x = np.random.default_rng(100 + i).normal(size=100)
        res = goodness_of_fit_test(x, model=stats.norm(), method=method, n_resamples=99,
                                   rng=i)
        rejections += res.pvalue <= 0.05
    lo, hi = stats.binom.ppf([0.005, 0.995], 300, 0.05)
    assert lo <= rejections <= hi, rejections


def test_command_line(tmp_path, capsys):
    from kmtests.cli import main

    path = tmp_path / "x.csv"
    x = np.random.default_rng(0).standard_t(3, size=(200, 1))
    np.savetxt(path, x, header="a", comments="", delimiter=",")
    assert main(["gof", str(path), "--model", "norm", "--seed", "1", "--n-resamples",
                 "499"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    want = goodness_of_fit_test(x, model=stats.norm(), n_resamples=499, rng=1)
    assert f"p-value = {want.pvalue:.4g}" in out and "data: a in" in out
    assert main(["gof", str(path), "--model", "t", "--shape", "3", "--method",
                 "monte_carlo", "--seed", "1", "--n-resamples", "99"]) == 0
    capsys.readouterr()
    assert main(["gof", str(path), "--model", "poisson", "--shape", "3"]) == 2
    assert "with a density" in capsys.readouterr().err
    assert main(["gof", str(path)]) == 2
    assert "--model NAME" in capsys.readouterr().err
    assert main(["gof", str(path), "--score", "numpy:negative", "--seed", "2",
                 "--n-resamples", "99"]) == 0


@pytest.mark.parametrize("kernel", ["imq", "gaussian", "matern32", "matern52"])
def test_stein_witness_is_the_mean_of_the_stein_features(kernel):
    """g(t) = mean_i [s(x_i) k(x_i, t) + grad_x k(x_i, t)], the gradient by central
    differences; it is small under the model and large where the model misfits."""
    gen = np.random.default_rng(8)
    x = gen.normal(0.5, 1.0, size=(60, 2))
    res = goodness_of_fit_test(x, score=lambda t: -t, kernel=kernel, n_resamples=19, rng=0)
    k = res.kernels["kernel"]
    t = np.array([[0.0, 0.0], [1.0, -1.0], [2.5, 0.5]])
    eps = 1e-6
    want = np.zeros((3, 2))
    for a, tt in enumerate(t):
        for i in range(60):
            kv = k.gram(x[i:i + 1], tt[None])[0, 0]
            grad = [(k.gram(x[i:i + 1] + eps * e, tt[None])[0, 0]
                     - k.gram(x[i:i + 1] - eps * e, tt[None])[0, 0]) / (2 * eps)
                    for e in np.eye(2)]
            want[a] += (-x[i]) * kv + np.array(grad)
    np.testing.assert_allclose(res.witness(t), want / 60, rtol=1e-6, atol=1e-9)
    fit = goodness_of_fit_test(gen.normal(size=(60, 2)), score=lambda t: -t, kernel=kernel,
                               n_resamples=19, rng=0)
    assert np.abs(fit.witness(t)).max() < np.abs(res.witness(t)).max()


def test_plot_witness(tmp_path):
    pytest.importorskip("matplotlib")
    x = np.random.default_rng(0).normal(0.5, 1.0, size=100)
    res = goodness_of_fit_test(x, model=stats.norm(), n_resamples=19, rng=1)
    ax = res.plot_witness()
    assert ax.get_title().startswith("Stein witness")
    ax.figure.savefig(tmp_path / "w.png")
    axes = goodness_of_fit_test(np.c_[x, x[::-1]], score=lambda t: -t, n_resamples=19,
                                rng=1).plot_witness()
    assert len(axes) == 2


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["matern32", "matern52"])
def test_matern_stein_kernels_keep_the_level(kernel):
    """200 samples of N(0, 1) at n = 100, wild bootstrap, B = 99: rejected at 5% inside the
    binomial 99% band."""
    rej = sum(goodness_of_fit_test(np.random.default_rng(900 + i).normal(size=100),
                                   model=stats.norm(), kernel=kernel, n_resamples=99,
                                   rng=i).pvalue <= 0.05 for i in range(200))
    lo, hi = stats.binom.ppf([0.005, 0.995], 200, 0.05)
    assert lo <= rej <= hi, rej


# -- the estimator of the Stein features' mean embedding ------------------------------------
def test_an_estimator_weights_the_stein_features_as_a_literal_quadratic_form():
    """``beta' H beta`` with ``beta`` the estimator's weights fitted on the Stein kernel
    matrix ``H`` (F-KMSE: unequal weights, V-form, Monte Carlo null); S-KMSE: ``c^2`` times
    the KME's U-statistic."""
    from kmtests.estimators import FKMSE, SKMSE

    x = np.random.default_rng(5).standard_t(3, size=(60, 1)) + 0.4
    res = kmtests.goodness_of_fit_test(x, model=stats.norm(), estimator="fkmse",
                                       n_resamples=19, rng=2)
    kern = IMQ(bandwidth="median").fitted_to(x, name="x")
    H = stein_gram(kern, x, -x)
    beta, _ = FKMSE().weights(H)
    assert res.method.name == "monte_carlo" and res.statistic_name == "KSD^2_b[fkmse]"
    assert res.statistic == pytest.approx(float(beta @ H @ beta), rel=1e-10)
    shr = kmtests.goodness_of_fit_test(x, model=stats.norm(), estimator="skmse",
                                       n_resamples=99, rng=2)
    kme = kmtests.goodness_of_fit_test(x, model=stats.norm(), n_resamples=99, rng=2)
    c = SKMSE().weights(H)[0].sum()
    assert 0 < c < 1
    assert shr.statistic == pytest.approx(c * c * kme.statistic, rel=1e-10)
    # with the wild bootstrap the factor is the same for every draw: the KME's p-value
    assert shr.pvalue == kme.pvalue


def test_shrinkage_to_zero_says_why_and_not_the_mmds_hint():
    x = np.random.default_rng(6).normal(size=80)   # fits the model: the mean is near zero
    res = kmtests.goodness_of_fit_test(x, model=stats.norm(), estimator="skmse",
                                       n_resamples=19, rng=1)
    assert res.statistic == 0.0 and res.pvalue == 1.0
    assert any("shrank the mean embedding of the Stein features to zero" in n
               for n in res.notes)
    assert not any("bandwidth='median'" in n for n in res.notes)


@pytest.mark.slow
def test_monte_carlo_level_with_a_spectral_estimator():
    """F-KMSE's statistic with fresh samples of the model: exact level (200 data sets,
    B = 19; the 99% binomial band for 200 at 5%: [3, 19])."""
    gen = np.random.default_rng(7)
    rejections = sum(
        kmtests.goodness_of_fit_test(gen.normal(size=40), model=stats.norm(),
                                     estimator="fkmse", n_resamples=19,
                                     rng=int(gen.integers(2**31))).pvalue <= 0.05
        for _ in range(200))
    assert 3 <= rejections <= 19, rejections
