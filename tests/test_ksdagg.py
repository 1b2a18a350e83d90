"""KSDAgg (``goodness_of_fit_test(..., statistic="ksdagg")``): the collection, the members
against the single KSD and against the authors' code, the combination on the authors'
own multipliers, the nulls' reproducibility, bad input, and the level (slow).

The reference numbers (``tests/reference/ksdagg_reference.json``) were made by
``tests/reference/gen_ksdagg.py`` from the authors' ``ksdagg_wild`` (Schrab, Guedj &
Gretton, 2022): the median bandwidth, every member's KSD, the first columns and the row
sums of the matrix ``M`` of every member's statistic on every multiplier vector, the
level correction ``u`` of their bisection and the decision.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from kmtests import goodness_of_fit_test
from kmtests.kernels import IMQ
from kmtests.null import MonteCarloMethod, WildBootstrap
from kmtests.null.combine import minp_combination
from kmtests.statistics.ksd import SteinForm, stein_gram
from kmtests.statistics.ksdagg import ksdagg_bandwidths, split_calibration

REF = json.loads((Path(__file__).parent / "reference" / "ksdagg_reference.json").read_text())


def _authors_multipliers(seed: int, b: int, n: int) -> np.ndarray:
    """The authors' Rademacher matrix, rows the draws, row B1 the original (all ones)."""
    R = np.random.RandomState(seed).choice([1.0, -1.0], size=(b, n))
    R[REF["B1"]] = 1.0
    return R


def _members_on(case: dict, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """kmtests' bandwidth grid and every member's statistic on the rows of R (B, M)."""
    x, s = np.array(case["x"]), np.array(case["score"])
    res = goodness_of_fit_test(x, score=s, statistic="ksdagg", levels=tuple(case["levels"]),
                               n_resamples=9, rng=0)
    grid = np.array([m["bandwidth"] for m in res.members])
    M = np.column_stack([SteinForm(True, stein_gram(IMQ(bandwidth=b), x, s))
                         .wild_given(R, 1) for b in grid])
    return grid, M


@pytest.mark.parametrize("case", REF["cases"], ids=lambda c: c["name"])
def test_members_and_multiplier_draws_are_the_authors(case):
    """The paper's grid 2^l h, every member's KSD^2_u and every member on the authors'
    multipliers, to 1e-10."""
    B1, B2 = REF["B1"], REF["B2"]
    R = _authors_multipliers(REF["seed"], B1 + B2 + 1, len(case["x"]))
    grid, M = _members_on(case, R)
    np.testing.assert_allclose(grid, ksdagg_bandwidths(case["median_bandwidth"],
                                                       tuple(case["levels"])), rtol=1e-12)
    np.testing.assert_allclose(M[B1], case["ksd"], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(M[:4].T, case["M_first_columns"], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(M.sum(axis=0), case["M_row_sums"], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("case", REF["cases"], ids=lambda c: c["name"])
def test_level_correction_and_decision_agree_with_the_authors(case):
    """On the authors' draws: their bisection (:func:`split_calibration`) gives their u and
    decision, and kmtests' min-p combination (one stream: the original and all B1 + B2
    draws) the same decision."""
    B1, B2 = REF["B1"], REF["B2"]
    R = _authors_multipliers(REF["seed"], B1 + B2 + 1, len(case["x"]))
    _, M = _members_on(case, R)
    m = M.shape[1]
    w = np.full(m, 1.0 / m)
    reject, u, _ = split_calibration(M[:B1], M[B1 + 1:], M[B1], w, REF["alpha"], REF["B3"])
    assert u == pytest.approx(case["u"], abs=1e-12)
    assert reject == bool(case["reject"])
    T = np.vstack([M[B1], M[:B1], M[B1 + 1:]])
    p, _, _, _ = minp_combination(T, np.zeros_like(T), w, REF["alpha"])
    assert (p <= REF["alpha"]) == bool(case["reject"])


@pytest.mark.parametrize("case", REF["cases"], ids=lambda c: c["name"])
def test_the_face_decides_as_the_authors(case):
    """kmtests' own multipliers (B = 999): the same decision on the four data sets, and
    the members' statistics are the authors'."""
    x, s = np.array(case["x"]), np.array(case["score"])
    res = goodness_of_fit_test(x, score=s, statistic="ksdagg", levels=tuple(case["levels"]),
                               n_resamples=999, rng=5)
    np.testing.assert_allclose([m["statistic"] for m in res.members], case["ksd"],
                               rtol=1e-10, atol=1e-14)
    assert (res.pvalue <= 0.05) == bool(case["reject"])


def test_the_grid_is_two_to_the_l_times_the_bandwidth():
    x = np.random.default_rng(3).normal(size=(60, 2))
    res = goodness_of_fit_test(x, score=lambda t: -t, statistic="ksdagg", levels=(-2, 3),
                               bandwidth=1.5, n_resamples=9, rng=0)
    assert [m["bandwidth"] for m in res.members] == [1.5 * 2.0 ** ell for ell in range(-2, 4)]
    default = goodness_of_fit_test(x, score=lambda t: -t, statistic="ksdagg",
                                   bandwidth=1.5, n_resamples=9, rng=0)
    assert len(default.members) == 21 and default.members[-1]["bandwidth"] == 1.5
    given = goodness_of_fit_test(x, score=lambda t: -t, statistic="ksdagg",
                                 grid=[0.5, 2.0], n_resamples=9, rng=0)
    assert [m["bandwidth"] for m in given.members] == [0.5, 2.0]


@pytest.mark.parametrize("method", ["wild", "monte_carlo"])
def test_members_are_the_single_ksd_tests_on_the_same_draws(method):
    """Each member's statistic is the single KSD^2_u's at its bandwidth; with one bandwidth
    the member's p-value is the single test's (the same draws from the same seed)."""
    x = np.random.default_rng(4).standard_t(5, size=80)
    model = stats.norm()
    agg = goodness_of_fit_test(x, model=model, statistic="ksdagg", levels=(-1, 1),
                               method=method, n_resamples=49, rng=2)
    for m in agg.members:
        single = goodness_of_fit_test(x, model=model, bandwidth=m["bandwidth"],
                                      method=method, n_resamples=49, rng=2)
        assert m["statistic"] == pytest.approx(single.statistic, rel=1e-12)
    one = goodness_of_fit_test(x, model=model, statistic="ksdagg", grid=[0.8],
                               method=method, n_resamples=49, rng=2)
    single = goodness_of_fit_test(x, model=model, bandwidth=0.8, method=method,
                                  n_resamples=49, rng=2)
    assert one.members[0]["pvalue"] == single.pvalue


def test_pvalue_is_reproducible_across_batch_and_n_jobs_and_the_ar_multipliers_run():
    x = np.random.default_rng(5).normal(0.2, 1.0, size=(70, 2))
    kw = dict(score=lambda t: -t, statistic="ksdagg", levels=(-2, 2))
    a = goodness_of_fit_test(x, method=WildBootstrap(n_resamples=300, rng=7), **kw)
    b = goodness_of_fit_test(x, method=WildBootstrap(n_resamples=300, rng=7, batch=128), **kw)
    c = goodness_of_fit_test(x, method=WildBootstrap(n_resamples=300, rng=7, n_jobs=1), **kw)
    assert a.pvalue == b.pvalue == c.pvalue and a.statistic == b.statistic == c.statistic
    ar = goodness_of_fit_test(x, method=WildBootstrap(n_resamples=99, rng=7, process="ar",
                                                      length=3.0), **kw)
    assert ar.details["process"] == "ar" and 0 < ar.pvalue <= 1


def test_monte_carlo_null_combines_the_members_of_fresh_samples():
    x = np.random.default_rng(6).normal(0.7, 1.0, size=50)
    res = goodness_of_fit_test(x, model=stats.norm(), statistic="ksdagg", levels=(-1, 1),
                               method=MonteCarloMethod(n_resamples=99, rng=1))
    assert res.pvalue == pytest.approx(0.01) and res.family == "KSDAgg"
    assert "samples drawn from the model (exact level)" in str(res.summary())


def test_some_member_rejects_exactly_when_the_test_does():
    gen = np.random.default_rng(8)
    for i in range(6):
        x = gen.normal(0.15 * i, 1.0, size=60)
        res = goodness_of_fit_test(x, model=stats.norm(), statistic="ksdagg", levels=(-3, 2),
                                   n_resamples=199, rng=i)
        assert any(m["rejects"] for m in res.members) == (res.pvalue <= 0.05)


@pytest.mark.parametrize("kw, match", [
    (dict(levels=(2, 1)), "`levels` must be two integers"),
    (dict(levels=(0.5, 2)), "`levels` must be two integers"),
    (dict(grid=[1.0, 1.0]), "`grid` must be distinct positive"),
    (dict(grid=[1.0, -2.0]), "`grid` must be distinct positive"),
    (dict(grid=[1.0], levels=(0, 1)), "give KSDAgg's collection once"),
    (dict(weights="heavy"), "`weights` must be one of"),
    (dict(weights=[1.0, 2.0]), "one per bandwidth"),
    (dict(kernel="laplacian"), "'matern32' and 'matern52'"),
    (dict(method="chi2"), "method='chi2' is FSSD's asymptotic null"),
])
def test_bad_collection_is_one_clear_error(kw, match):
    x = np.random.default_rng(9).normal(size=30)
    with pytest.raises(ValueError, match=match):
        goodness_of_fit_test(x, score=lambda t: -t, statistic="ksdagg", n_resamples=9, **kw)


def test_ksdagg_has_no_single_witness():
    x = np.random.default_rng(9).normal(size=30)
    res = goodness_of_fit_test(x, score=lambda t: -t, statistic="ksdagg", levels=(0, 1),
                               n_resamples=9, rng=0)
    with pytest.raises(ValueError, match="each with its own Stein witness"):
        res.witness([0.0])


def test_collection_keywords_belong_to_ksdagg():
    x = np.random.default_rng(9).normal(size=30)
    with pytest.raises(ValueError, match="`levels` configures statistic='ksdagg'"):
        goodness_of_fit_test(x, score=lambda t: -t, levels=(0, 2), n_resamples=9)


def test_weights_change_the_combination_not_the_members():
    x = np.random.default_rng(10).normal(0.3, 1.0, size=60)
    kw = dict(model=stats.norm(), statistic="ksdagg", levels=(-2, 2), n_resamples=99, rng=3)
    u = goodness_of_fit_test(x, **kw)
    c = goodness_of_fit_test(x, weights="centred", **kw)
    assert [m["statistic"] for m in u.members] == [m["statistic"] for m in c.members]
    assert [round(m["weight"], 6) for m in c.members] == [0.125, 0.1875, 0.375, 0.1875, 0.125]


def test_split_calibration_rejects_as_its_quantiles_say():
    gen = np.random.default_rng(11)
    M1, M2 = gen.normal(size=(400, 4)), gen.normal(size=(400, 4))
    w = np.full(4, 0.25)
    reject, u, q = split_calibration(M1, M2, np.zeros(4), w, 0.05)
    assert not reject and 0.05 / 4 <= u <= 0.05 + 1e-9  # between Bonferroni and alpha
    assert np.mean(np.any(M2 > q, axis=1)) <= 0.05
    assert split_calibration(M1, M2, q + 1e-9, w, 0.05)[0]


# -- level (slow) -------------------------------------------------------------------------------
def _rejections(method: str, levels: tuple[int, int], reps: int = 200) -> int:
    return sum(goodness_of_fit_test(np.random.default_rng(700 + i).normal(size=100),
                                    model=stats.norm(), statistic="ksdagg", method=method,
                                    levels=levels, n_resamples=99, rng=i).pvalue <= 0.05
               for i in range(reps))


@pytest.mark.slow
@pytest.mark.parametrize("method, levels", [("wild", (-3, 3)), ("wild", (0, 10)),
                                            ("monte_carlo", (-20, 0))])
def test_level_is_in_the_binomial_band(method, levels):
    """200 samples of N(0, 1), n = 100, B = 99: the number rejected at 5% inside the
    binomial 99% band [3, 19] (the Monte Carlo null with the default 21 bandwidths: exact)."""
    lo, hi = stats.binom.ppf([0.005, 0.995], 200, 0.05)
    assert lo <= _rejections(method, levels) <= hi


@pytest.mark.slow
def test_wild_level_with_tiny_bandwidths_is_kept_conservatively():
    """The default collection reaches 2^-20 h: such a member's statistic is a sum over a
    few close pairs, whose sign the Rademacher multipliers flip, so the observed one (all
    multipliers +1) is rarely in the upper tail: those members almost never reject, and
    the aggregated wild test stays below its level (not above the band)."""
    hi = stats.binom.ppf(0.995, 200, 0.05)
    assert _rejections("wild", (-20, 0)) <= hi


# -- the U-statistic at a small bandwidth (a bug of the single KSD, found here) ------------------
def _literal_u(x: np.ndarray, s: np.ndarray, h: float) -> float:
    """sum_{i != j} h_p(x_i, x_j) / (n (n - 1)) of the IMQ kernel, pair by pair."""
    n, d = x.shape
    tot = 0.0
    for i in range(n):
        for j in range(n):
            if i != j:
                r = x[i] - x[j]
                r2 = float(r @ r)
                u = 1.0 + r2 / h ** 2
                tot += (s[i] @ s[j] * u ** -0.5 + (s[i] - s[j]) @ r / h ** 2 * u ** -1.5
                        + d / h ** 2 * u ** -1.5 - 3.0 * r2 / h ** 4 * u ** -2.5)
    return tot / (n * (n - 1))


def test_u_statistic_at_a_small_bandwidth_is_the_literal_sum():
    """h_p(x, x) = d / h^2 + ... dwarfs the statistic at a small bandwidth: summing H and
    subtracting its trace gave 0.0 here (every digit cancelled) where the pairs give
    -4.8e-07; the diagonal is now dropped before summing, in the statistic and in the
    wild bootstrap's quadratic forms."""
    case = REF["cases"][2]
    x, s = np.array(case["x"]), np.array(case["score"])
    h = case["median_bandwidth"] * 2.0 ** -20
    res = goodness_of_fit_test(x, score=s, bandwidth=h, n_resamples=99, rng=0)
    assert res.statistic == pytest.approx(_literal_u(x, s, h), rel=1e-9)
    assert res.statistic == pytest.approx(case["ksd"][0], rel=1e-10)
    assert res.statistic != 0.0


def test_command_line_runs_ksdagg(tmp_path, capsys):
    from kmtests.cli import main

    path = tmp_path / "x.csv"
    x = np.random.default_rng(0).standard_t(3, size=(150, 1))
    np.savetxt(path, x, header="a", comments="", delimiter=",")
    assert main(["gof", str(path), "--model", "norm", "--statistic", "ksdagg",
                 "--levels=-2,2", "--seed", "1", "--n-resamples", "199"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    want = goodness_of_fit_test(x, model=stats.norm(), statistic="ksdagg", levels=(-2, 2),
                                n_resamples=199, rng=1)
    assert f"p-value = {want.pvalue:.4g}" in out and "KSDAgg" in out
    assert main(["gof", str(path), "--model", "norm", "--statistic", "ksdagg", "--grid",
                 "0.5,1,2", "--weights", "centred", "--n-resamples", "99"]) == 0
    capsys.readouterr()
    assert main(["gof", str(path), "--model", "norm", "--statistic", "ksdagg", "--levels",
                 "2,1"]) == 2
    assert "LMIN must not exceed LMAX" in capsys.readouterr().err
    assert main(["gof", str(path), "--model", "norm", "--levels", "0,2"]) == 2
    assert "--levels configures --statistic ksdagg" in capsys.readouterr().err
