"""The conditional two-sample test (issue 29 part B): its statistic against a brute-force
numpy reference, its invariances, its refusals, its reproducibility, its witness; slow:
its level under a pure covariate shift (where the plain two-sample test of the pairs
rejects) and its power under a conditional shift."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import binom

import kmtests
from kmtests import conditional_two_sample_test as ctst
from kmtests.problems.conditional_two_sample import Relabelling
from kmtests.statistics.propensity import estimate_propensity


def _data(seed: int = 0, n1: int = 40, n2: int = 50, shift: float = 0.0,
          covariate_shift: float = 0.5) -> tuple[np.ndarray, ...]:
    gen = np.random.default_rng(seed)
    x1 = gen.normal(-covariate_shift, 1.0, size=n1)
    x2 = gen.normal(covariate_shift, 1.0, size=n2)
    y1 = np.sin(2 * x1) + 0.3 * gen.normal(size=n1)
    y2 = np.sin(2 * x2) + shift * (x2 > 0) + 0.3 * gen.normal(size=n2)
    return x1, y1, x2, y2


def _gauss(a: np.ndarray, b: np.ndarray, bw: float) -> np.ndarray:
    d2 = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * bw ** 2))


def _brute(x1, y1, x2, y2, bw_x, bw_y, lam, e=None):
    """``(1/n) sum_i ||mu_1(x_i) - mu_2(x_i)||^2`` with explicit inverses and the full
    outcome Gram matrix (Park et al.'s formula, as pywhy-stats' kcd computes it); with
    propensities `e`, the mean weighted by ``e (1 - e)``."""
    X = np.vstack([x1.reshape(len(x1), -1), x2.reshape(len(x2), -1)])
    Y = np.vstack([y1.reshape(len(y1), -1), y2.reshape(len(y2), -1)])
    n1, n = len(x1), len(X)
    K, L = _gauss(X, X, bw_x), _gauss(Y, Y, bw_y)
    g1, g2 = np.arange(n1), np.arange(n1, n)
    A1 = K[:, g1] @ np.linalg.inv(K[np.ix_(g1, g1)] + n1 * lam * np.eye(n1))
    A2 = K[:, g2] @ np.linalg.inv(K[np.ix_(g2, g2)] + (n - n1) * lam * np.eye(n - n1))
    W = np.hstack([A1, -A2])
    per_point = np.einsum("ij,jk,ik->i", W, L, W)
    w = np.full(n, 1.0 / n) if e is None else e * (1 - e) / np.sum(e * (1 - e))
    return float(w @ per_point), per_point, X


def test_statistic_matches_the_brute_force_reference():
    x1, y1, x2, y2 = _data(shift=1.0)
    res = ctst(x1, y1, x2, y2, n_resamples=19, rng=0, weights="uniform")
    bw = res.bandwidths
    ref, _, _ = _brute(x1, y1, x2, y2, bw["x"], bw["y"], res.lam)
    assert res.statistic == pytest.approx(ref, rel=1e-8)
    # the overlap weights e (1 - e), with known propensities
    e = np.random.default_rng(1).uniform(0.1, 0.9, size=90)
    over = ctst(x1, y1, x2, y2, n_resamples=19, rng=0, propensity=e)
    assert over.details["weights"] == "overlap"
    ref, _, _ = _brute(x1, y1, x2, y2, bw["x"], bw["y"], over.lam, e)
    assert over.statistic == pytest.approx(ref, rel=1e-8)
    # a given lam is used as given
    fixed = ctst(x1, y1, x2, y2, lam=0.01, n_resamples=19, rng=0, weights="uniform")
    assert fixed.lam == 0.01
    assert fixed.statistic == pytest.approx(_brute(x1, y1, x2, y2, bw["x"], bw["y"], 0.01)[0],
                                            rel=1e-8)
    assert fixed.statistic != pytest.approx(res.statistic, rel=1e-3)


def test_witness_is_the_per_point_distance():
    x1, y1, x2, y2 = _data(shift=1.0)
    res = ctst(x1, y1, x2, y2, n_resamples=19, rng=0)
    bw = res.bandwidths
    ref, per_point, X = _brute(x1, y1, x2, y2, bw["x"], bw["y"], res.lam)
    w = res.witness(X)
    np.testing.assert_allclose(w, per_point, rtol=1e-7, atol=1e-12)
    assert w.mean() == pytest.approx(ctst(x1, y1, x2, y2, n_resamples=19, rng=0,
                                          weights="uniform").statistic, rel=1e-8)
    # the conditional laws differ for x > 0 only: the witness says so
    grid = res.witness(np.array([-1.0, -0.5, 0.5, 1.0]))
    assert grid[2:].min() > 5 * grid[:2].max()


@pytest.mark.parametrize("tuning", [{"lam": 0.01}, {"criterion": "gcv"}])
def test_statistic_is_invariant_to_row_order_within_a_group_and_symmetric_in_the_groups(
        tuning):
    """(With a given lam or a deterministic criterion, and uniform weights: the default
    criterion="shift" and the overlap weights read the cross-fitted propensity, whose
    folds are drawn row by row.)"""
    tuning = {**tuning, "weights": "uniform"}
    x1, y1, x2, y2 = _data(shift=0.5)
    def run(*args, **kw):
        return ctst(*args, **kw, **tuning)

    res = run(x1, y1, x2, y2, n_resamples=9, rng=0)
    gen = np.random.default_rng(5)
    p1, p2 = gen.permutation(len(x1)), gen.permutation(len(x2))
    shuffled = run(x1[p1], y1[p1], x2[p2], y2[p2], n_resamples=9, rng=0)
    assert shuffled.lam == pytest.approx(res.lam, rel=1e-12)
    assert shuffled.statistic == pytest.approx(res.statistic, rel=1e-9)
    swapped = run(x2, y2, x1, y1, n_resamples=9, rng=0)
    assert swapped.lam == pytest.approx(res.lam, rel=1e-12)
    assert swapped.statistic == pytest.approx(res.statistic, rel=1e-9)


@pytest.mark.parametrize("args, kwargs, match", [
    (lambda d: (d[0][:-1], d[1], d[2], d[3]), {}, "`x1` and `y1` .* same number of rows"),
    (lambda d: (d[0], d[1], d[2], d[3][:-3]), {}, "`x2` and `y2` .* same number of rows"),
    (lambda d: (np.r_[d[0][:-1], np.inf], d[1], d[2], d[3]), {}, "`x1` must not contain NaN"),
    (lambda d: (d[0], np.r_[d[1][:-1], np.nan], d[2], d[3]), {}, "`y1` must not contain NaN"),
    (lambda d: (d[0][:3], d[1][:3], d[2], d[3]), {}, "group 1 must have at least 4 pairs"),
    (lambda d: (np.c_[d[0], d[0]], d[1], d[2], d[3]), {}, "covariates of the two groups"),
    (lambda d: d, {"clip": 0.5}, "`clip` must be a number in"),
    (lambda d: d, {"propensity": "forest"}, "`propensity` must be one of"),
    (lambda d: d, {"propensity": np.full(5, 0.5)}, "`propensity` given as values must be 90"),
    (lambda d: d, {"criterion": "aic"}, "`criterion` must be one of"),
    (lambda d: d, {"lam": -1.0}, "`lam` must be a positive number"),
])
def test_bad_input_gives_one_clear_error(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ctst(*args(_data()), n_resamples=9, rng=0, **kwargs)


def test_nan_policy_omit_leaves_out_the_pair():
    x1, y1, x2, y2 = _data()
    y1 = y1.copy()
    y1[3] = np.nan
    res = ctst(x1, y1, x2, y2, nan_policy="omit", n_resamples=9, rng=0)
    full = ctst(np.delete(x1, 3), np.delete(y1, 3), x2, y2, n_resamples=9, rng=0)
    assert res.sizes["n1"] == len(x1) - 1
    assert res.statistic == full.statistic
    assert any("left out" in n for n in res.notes)


def test_seeded_pvalues_are_reproducible_across_batch_and_n_jobs():
    x1, y1, x2, y2 = _data(shift=0.3)
    a = ctst(x1, y1, x2, y2, n_resamples=59, rng=7)
    b = ctst(x1, y1, x2, y2, n_resamples=59, rng=7, batch=4)
    c = ctst(x1, y1, x2, y2, n_resamples=59, rng=7, batch=13, n_jobs=2)
    assert a.pvalue == b.pvalue == c.pvalue
    np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
    np.testing.assert_array_equal(a.null_distribution, c.null_distribution)
    d = ctst(x1, y1, x2, y2, n_resamples=59, rng=8)
    assert not np.array_equal(a.null_distribution, d.null_distribution)


def test_relabellings_follow_the_propensity_whatever_the_batch():
    """Labels drawn with the propensity's odds given the groups' sizes: every row keeps
    n2 labels of group 2; the law of a row is the product of the odds of its group-2
    pairs (checked exactly on the 6 rows of 2 of 4), whatever the batch."""
    e = np.array([0.1, 0.5, 0.8, 0.3])
    s = Relabelling(np.array([0, 0, 1, 1]), e, "given")
    whole = s.random(np.random.default_rng(1), 6000)
    gen = np.random.default_rng(1)
    parts = np.vstack([s.random(gen, b) for b in (1, 1999, 4000)])
    np.testing.assert_array_equal(whole, parts)
    assert whole.dtype == np.int64 and set(np.unique(whole)) == {0, 1}
    assert np.all(whole.sum(axis=1) == 2)
    odds = e / (1 - e)
    rows = [r for r in itertools.combinations(range(4), 2)]
    law = np.array([odds[list(r)].prod() for r in rows])
    law /= law.sum()
    seen = np.array([np.mean([set(np.flatnonzero(w)) == set(r) for w in whole[:3000]])
                     for r in rows])
    np.testing.assert_allclose(seen, law, atol=0.03)
    with pytest.raises(ValueError, match="never enumerated"):
        next(s.enumerate())


def test_propensity_is_cross_fitted_and_clipped():
    gen = np.random.default_rng(2)
    x = np.r_[gen.normal(-3, 0.3, 30), gen.normal(3, 0.3, 30)][:, None]
    labels = np.repeat([0, 1], 30)
    from kmtests.kernels import Gaussian

    for model in ("kernel", "linear"):
        prop = estimate_propensity(model, x, labels, Gaussian(1.0), 0.05, 0)
        assert prop.values.min() == 0.05 and prop.values.max() == 0.95  # separable: clipped
        assert prop.clipped > 0
        assert np.all(prop.values[labels == 1] > 0.5) and np.all(prop.values[labels == 0] < 0.5)
    # a pair's own label does not enter its propensity (cross-fitting): flipping one label
    # changes the other folds' fits, not the way that pair is predicted from the rest
    x = gen.normal(size=(60, 1))
    labels = (gen.random(60) < 0.5).astype(np.int64)
    a = estimate_propensity("linear", x, labels, Gaussian(1.0), 0.0, 3)
    assert 0.2 < a.values.mean() < 0.8
    assert "cross-fitted in 5 folds, clipped to [0, 1]" in a.describe()


def test_given_propensities_are_used_as_given_and_reported():
    x1, y1, x2, y2 = _data()
    e = np.full(90, 0.5)
    res = ctst(x1, y1, x2, y2, propensity=e, n_resamples=99, rng=0)
    assert res.details["propensity_model"] == "given"
    assert res.null_distribution.size == 99
    text = str(res.summary())
    for word in ("CMMD^2", "propensity", "clip", "lam", "known propensities"):
        assert word in " ".join(text.split()), word


def test_a_conditional_shift_is_detected():
    """(Its level under a covariate shift, where the plain MMD rejects: the slow tests.)"""
    x1, y1, x2, y2 = _data(seed=3, n1=80, n2=80, shift=1.0)
    assert ctst(x1, y1, x2, y2, n_resamples=99, rng=0).pvalue <= 0.02


def test_exported_and_reported_under_its_own_name():
    assert "conditional_two_sample_test" in kmtests.__all__
    assert "ConditionalTwoSampleResult" in kmtests.__all__
    res = ctst(*_data(), n_resamples=9, rng=0)
    assert isinstance(res, kmtests.ConditionalTwoSampleResult)
    assert res.title == "Kernel conditional two-sample test (conditional MMD)"


# -- slow: level and power ----------------------------------------------------------------------
def _band(n: int, alpha: float = 0.05) -> int:
    """The upper end of the two-sided 99% binomial band of a level-alpha test's
    rejections (19 of 200 at 5%)."""
    return int(binom.ppf(0.995, n, alpha))


def _covariate_shift(seed: int, n: int = 100) -> tuple[np.ndarray, ...]:
    """Cobb & Van Looveren-style context shift: the covariates' laws differ, P(y | x) not."""
    gen = np.random.default_rng(seed)
    x1 = gen.normal(-0.75, 1.0, size=(n, 1))
    x2 = gen.normal(0.75, 1.0, size=(n, 1))
    y1 = x1 + 0.5 * np.sin(3 * x1) + 0.5 * gen.normal(size=(n, 1))
    y2 = x2 + 0.5 * np.sin(3 * x2) + 0.5 * gen.normal(size=(n, 1))
    return x1, y1, x2, y2


@pytest.mark.slow
def test_level_under_a_pure_covariate_shift_where_the_plain_mmd_rejects():
    reps, rejected, plain = 200, 0, 0
    for seed in range(reps):
        x1, y1, x2, y2 = _covariate_shift(seed)
        rejected += ctst(x1, y1, x2, y2, n_resamples=99, rng=seed).pvalue <= 0.05
        if seed < 40:  # the plain two-sample test of the pairs sees the covariate shift
            plain += kmtests.two_sample_test(np.c_[x1, y1], np.c_[x2, y2], n_resamples=99,
                                             rng=seed).pvalue <= 0.05
    assert rejected <= _band(reps), f"{rejected}/{reps} rejected at 5%"
    assert plain >= 36, f"the plain MMD rejected {plain}/40"


@pytest.mark.slow
def test_power_under_a_conditional_shift():
    reps, rejected = 100, 0
    for seed in range(reps):
        x1, y1, x2, y2 = _covariate_shift(seed)
        y2 = y2 + 1.0 * (x2 > 0)  # P(y | x) moves where x > 0
        rejected += ctst(x1, y1, x2, y2, n_resamples=99, rng=seed).pvalue <= 0.05
    assert rejected >= 60, f"power {rejected}/{reps}"


def test_the_shift_criterion_does_not_read_the_observed_labels():
    """lam is tuned on pseudo-groups drawn from the propensity: with the pooled pairs, the
    propensities and the groups' sizes fixed, other observed labels give the same lam
    (what keeps the relabellings exchangeable)."""
    import dataclasses

    from kmtests import _plan
    from kmtests.problems.conditional_two_sample import Relabelling

    x1, y1, x2, y2 = _data(shift=1.0)
    plan = _plan.plan_of(ctst, x1, y1, x2, y2, n_resamples=9, rng=4)
    problem, stat = plan.problem, plan.statistic
    K = stat.kernels["x"].gram(problem.covariates)
    L = stat.kernels["y"].gram(problem.outcomes)
    s, V = np.linalg.eigh(L)
    Phi = V[:, s > 1e-12 * s.max()] * np.sqrt(s[s > 1e-12 * s.max()])
    lam, _, crit = stat._tune(problem, K, Phi, 4)
    shuffled = np.random.default_rng(9).permutation(problem.labels)  # the same sizes
    assert not np.array_equal(shuffled, problem.labels)
    other = dataclasses.replace(problem, labels=shuffled, scheme=Relabelling(
        shuffled, problem.scheme.propensity, problem.scheme.how))
    assert crit == "shift"
    assert stat._tune(other, K, Phi, 4)[0] == lam
    g = ctst(x1, y1, x2, y2, criterion="gcv", n_resamples=9, rng=4)
    assert g.details["criterion"] == "gcv" and g.lam != lam


def test_command_line(tmp_path, capsys):
    import pandas as pd

    from kmtests.cli import main

    x1, y1, x2, y2 = _data(shift=1.0)
    frame = pd.DataFrame({"arm": ["a"] * len(x1) + ["b"] * len(x2), "age": np.r_[x1, x2],
                          "resp": np.r_[y1, y2]})
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    assert main(["conditional-two-sample", str(path), "--group", "arm", "--x", "age",
                 "--y", "resp", "--n-resamples", "49", "--seed", "1", "--json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    res = ctst(x1, y1, x2, y2, n_resamples=49, rng=1)
    assert out["pvalue"] == pytest.approx(res.pvalue)
    assert out["statistic"] == pytest.approx(res.statistic, rel=1e-12)
    assert main(["conditional-two-sample", str(path), "--group", "arm", "--x", "age",
                 "--y", "age"]) == 2
    assert "--x and --y must not share columns" in capsys.readouterr().err
    assert main(["conditional-two-sample", str(path), "--group", "arm", "--x", "age",
                 "--y", "resp", "--clip", "0.7"]) == 2
