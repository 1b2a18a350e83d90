"""FSSD (``goodness_of_fit_test(..., statistic="fssd")``): the Stein features against their
definition, the statistic against a literal double loop and against hyppo's FSSD
(``tests/reference/hyppo_fssd_reference.json``, made by
``tests/reference/gen_hyppo_fssd.py``), its weighted chi-square null, the learning on a
split, reproducibility, bad input, and the level (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from kmtests import goodness_of_fit_test
from kmtests.kernels import IMQ, Gaussian
from kmtests.statistics.fssd import FSSDForm, _u_statistic, fssd_features, power_criterion

REF = json.loads((Path(__file__).parent / "reference" / "hyppo_fssd_reference.json")
                 .read_text())


def test_features_are_the_stein_features_at_the_locations():
    """tau(x)_j = (s(x) k(x, v_j) + grad_x k(x, v_j)) / sqrt(d J), the gradient by central
    differences."""
    gen = np.random.default_rng(0)
    x, s, V = gen.normal(size=(7, 2)), gen.normal(size=(7, 2)), gen.normal(size=(3, 2))
    kern = IMQ(bandwidth=1.3)
    T = fssd_features(kern, x, s, V)
    eps = 1e-6
    for i in range(7):
        for j in range(3):
            k = kern.gram(x[i:i + 1], V[j:j + 1])[0, 0]
            grad = [(kern.gram(x[i:i + 1] + eps * e, V[j:j + 1])[0, 0]
                     - kern.gram(x[i:i + 1] - eps * e, V[j:j + 1])[0, 0]) / (2 * eps)
                    for e in np.eye(2)]
            np.testing.assert_allclose(T[i, 2 * j:2 * j + 2],
                                       (s[i] * k + np.array(grad)) / np.sqrt(6), rtol=1e-6,
                                       atol=1e-9)
    n = 7
    literal = sum(T[a] @ T[b] for a in range(n) for b in range(n) if a != b) / (n * (n - 1))
    assert _u_statistic(T) == pytest.approx(literal, rel=1e-12)


@pytest.mark.parametrize("case", REF["cases"], ids=lambda c: f"n{len(c['x'])}")
def test_statistic_and_null_law_are_hyppos(case):
    """n FSSD^2_u and the eigenvalues of the features' covariance to 1e-10; the weighted
    chi-square p-value within Monte Carlo error of hyppo's (3000 draws)."""
    x, V = np.array(case["x"]), np.array(case["V"])
    T = fssd_features(Gaussian(bandwidth=np.sqrt(case["sigma2"])), x, -x, V)
    n = x.shape[0]
    assert n * _u_statistic(T) == pytest.approx(case["n_fssd"], rel=1e-10, abs=1e-13)
    form = FSSDForm(True, np.atleast_2d(np.cov(T, rowvar=False)), n_x=n)
    np.testing.assert_allclose(form.chi2_weights() * n, np.clip(case["eigenvalues"], 0, None),
                               rtol=1e-9, atol=1e-13)
    lam = form.chi2_weights()
    draws = np.random.default_rng(0).chisquare(1.0, size=(20000, lam.size)) @ lam \
        - form.chi2_shift()
    p = np.mean(draws > _u_statistic(T))
    assert p == pytest.approx(case["pvalue"], abs=0.03)


def test_the_face_runs_on_the_test_points_with_learned_locations():
    gen = np.random.default_rng(1)
    x = gen.standard_t(3, size=(300, 2))
    res = goodness_of_fit_test(x, score=lambda t: -t, statistic="fssd", kernel="gaussian",
                               n_locations=3, n_resamples=999, rng=4)
    assert res.sizes["n"] == 150 and res.sizes["n_train"] == 150
    assert np.array(res.details["locations"]).shape == (3, 2)
    assert res.pvalue <= 0.05 and "approximate" in str(res)
    again = goodness_of_fit_test(x, score=lambda t: -t, statistic="fssd", kernel="gaussian",
                                 n_locations=3, n_resamples=999, rng=4)
    assert again.pvalue == res.pvalue and again.statistic == res.statistic
    # the statistic is the U-statistic of the features at the learned locations
    kern = res.kernels["kernel"]
    other = goodness_of_fit_test(x, score=lambda t: -t, statistic="fssd", kernel="gaussian",
                                 n_locations=3, split_size=100, n_resamples=99, rng=4)
    assert other.sizes["n"] == 200 and other.statistic != res.statistic
    assert kern.bandwidth > 0


def test_learning_raises_the_power_criterion():
    gen = np.random.default_rng(2)
    x = gen.normal(0.4, 1.0, size=(200, 1))
    res = goodness_of_fit_test(x, model=stats.norm(), statistic="fssd", n_resamples=99,
                               rng=0)
    note = next(n for n in res.notes if "power criterion" in n)
    before, after = (float(v) for v in note.split("criterion (")[1].split(")")[0]
                     .split(" -> "))
    assert after >= before


def test_monte_carlo_null_uses_the_same_locations():
    x = np.random.default_rng(3).normal(size=(120, 1))
    res = goodness_of_fit_test(x, model=stats.norm(), statistic="fssd", method="monte_carlo",
                               n_resamples=49, rng=2)
    chi2 = goodness_of_fit_test(x, model=stats.norm(), statistic="fssd", n_resamples=49,
                                rng=2)
    assert res.statistic == chi2.statistic and 0 < res.pvalue <= 1
    assert res.details["locations"] == chi2.details["locations"]


def test_power_criterion_is_mean_over_h1_standard_deviation():
    T = np.random.default_rng(4).normal(0.3, 1.0, size=(50, 4))
    mu = T.mean(axis=0)
    var = 4 * (np.mean((T @ mu) ** 2) - (mu @ mu) ** 2)
    assert power_criterion(T) == pytest.approx(_u_statistic(T) / np.sqrt(var + 1e-2))


@pytest.mark.parametrize("kw, match", [
    (dict(n_locations=30), "each part needs at least 32 points"),
    (dict(method="wild"), "FSSD's null is its weighted chi-square"),
    (dict(method="gamma"), "method='gamma' has no approximation of FSSD"),
    (dict(kernel="laplacian"), "'matern32' and 'matern52'"),
])
def test_bad_input_is_one_clear_error(kw, match):
    x = np.random.default_rng(5).normal(size=40)
    draws = {} if kw.get("method") == "gamma" else dict(n_resamples=9, rng=0)
    with pytest.raises(ValueError, match=match):
        goodness_of_fit_test(x, score=lambda t: -t, statistic="fssd", **draws, **kw)


def test_command_line_runs_fssd(tmp_path, capsys):
    from kmtests.cli import main

    path = tmp_path / "x.csv"
    x = np.random.default_rng(6).standard_t(3, size=(200, 1))
    np.savetxt(path, x, header="a", comments="", delimiter=",")
    assert main(["gof", str(path), "--model", "norm", "--statistic", "fssd",
                 "--n-locations", "2", "--split-size", "80", "--seed", "1",
                 "--n-resamples", "199"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    want = goodness_of_fit_test(x, model=stats.norm(), statistic="fssd", n_locations=2,
                                split_size=80, n_resamples=199, rng=1)
    assert f"p-value = {want.pvalue:.4g}" in out and "FSSD^2_u" in out


@pytest.mark.slow
def test_level_of_the_weighted_chi_square_null():
    """200 samples of N(0, I_2) at n = 400 (200 to learn, 200 to test), J = 5, B = 499:
    rejected at 5% inside the binomial 99% band [3, 19] (the null is asymptotic)."""
    lo, hi = stats.binom.ppf([0.005, 0.995], 200, 0.05)
    rej = sum(goodness_of_fit_test(np.random.default_rng(300 + i).normal(size=(400, 2)),
                                   score=lambda t: -t, statistic="fssd", kernel="gaussian",
                                   n_resamples=499, rng=i).pvalue <= 0.05
              for i in range(200))
    assert lo <= rej <= hi, rej
