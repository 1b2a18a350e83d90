"""The swap null (``method="swap"``): exchanges within random pairs of two samples of equal
size. Checked against brute force (every swapped data set's MMD by a literal loop), by full
enumeration, for reproducibility, for its refusals and, in the slow lane, for its level
(sorted samples included: the random pairing is what keeps it there)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy import stats

import kmtests
from kmtests import DegenerateStatisticWarning
from kmtests.engines.mmd import PooledGram, swap_split_sums
from kmtests.null import SwapMethod
from kmtests.problems.schemes import SwapRows, Swaps


def _mmd_u(x, y, bw):
    """MMD^2_u by its definition (Gaussian kernel)."""
    def k(a, b):
        return np.exp(-((a[:, None, :] - b[None, :, :]) ** 2).sum(-1) / (2 * bw * bw))

    m, n = len(x), len(y)
    kxx, kyy = k(x, x), k(y, y)
    return ((kxx.sum() - np.trace(kxx)) / (m * (m - 1))
            + (kyy.sum() - np.trace(kyy)) / (n * (n - 1)) - 2 * k(x, y).mean())


def _swapped(x, y, pairing, signs):
    x2, y2 = x.copy(), y.copy()
    for i, s in enumerate(signs):
        if s < 0:
            x2[i], y2[pairing[i]] = y[pairing[i]], x[i]
    return x2, y2


def test_swap_sums_are_the_within_sums_of_the_same_splits():
    gen = np.random.default_rng(0)
    z = gen.normal(size=(2 * 37, 3))
    K = np.exp(-((z[:, None] - z[None]) ** 2).sum(-1) / 3.0)
    pg = PooledGram.from_gram(K)
    scheme = Swaps(gen.permutation(37))
    rows = SwapRows(Swaps(scheme.pairing, as_signs=True).random(gen, 300), scheme.pairing)
    perms = rows.perms
    np.testing.assert_array_equal(scheme.signs(perms), rows.signs)
    a = pg.within_sums(perms, 37)
    b = pg.swap_sums(rows.signs, scheme.pairing)
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-12 * np.abs(a).max())
    # and the other sums of the splits, from the pairs
    from kmtests.engines.mmd import split_sums

    ref, got = split_sums(pg, perms, 37), swap_split_sums(pg, rows)
    for name in ("t_x", "t_y", "rbar_x", "rbar_y"):
        np.testing.assert_allclose(getattr(got, name), getattr(ref, name), rtol=1e-12,
                                   atol=1e-12)


def test_exact_pvalue_is_the_brute_force_rank_over_all_swaps():
    """m = 6 pairs: all 64 swaps enumerated; the p-value is the share of swapped data sets
    (each MMD^2_u computed by the definition) at or above the observed one."""
    gen = np.random.default_rng(1)
    x, y = gen.normal(size=(6, 2)), gen.normal(0.8, size=(6, 2))
    bw = 1.3
    res = kmtests.two_sample_test(x, y, bandwidth=bw, method="swap", n_resamples=100, rng=5)
    assert res.exact and res.n_resamples == 64
    pairing = np.random.default_rng(5).permutation(6)   # the method's first draw
    t = _mmd_u(x, y, bw)
    null = np.array([_mmd_u(*_swapped(x, y, pairing, s), bw)
                     for s in itertools.product((1, -1), repeat=6)])
    assert res.statistic == pytest.approx(t, rel=1e-12)
    np.testing.assert_allclose(np.sort(res.null_distribution), np.sort(null), rtol=1e-10,
                               atol=1e-14)
    assert res.pvalue == pytest.approx(np.mean(null >= t - 1e-12), abs=1e-12)


def test_swaps_are_exact_by_enumeration_of_a_discrete_null():
    """Under the null the p-value is super-uniform: every data set of a two-point law with
    m = 3 pairs, weighted by its probability, P(p <= a) <= a for every a."""
    pts = np.array([[0.0], [1.0]])
    probs = []
    for bits in itertools.product((0, 1), repeat=6):
        z = pts[list(bits)]
        w = np.prod([0.3 if b else 0.7 for b in bits])
        with warnings.catch_warnings():  # constant data sets: p = 1, said by a warning
            warnings.simplefilter("ignore", DegenerateStatisticWarning)
            res = kmtests.two_sample_test(z[:3], z[3:], bandwidth=1.0, method="swap",
                                          n_resamples=100, rng=0)
        probs.append((res.pvalue, w))
    pv = np.array([p for p, _ in probs])
    wt = np.array([w for _, w in probs])
    for a in sorted(set(pv)):
        assert wt[pv <= a + 1e-12].sum() <= a + 1e-12


def test_aggregated_swaps_reproducible_across_batch_threads_and_paths(monkeypatch):
    gen = np.random.default_rng(2)
    x, y = gen.normal(size=(40, 2)), gen.normal(0.4, size=(40, 2))
    runs = [kmtests.aggregated_two_sample_test(x, y, bandwidths=4, method="swap",
                                               n_resamples=300, rng=7, batch=b, n_jobs=j)
            for b, j in ((None, 1), (7, 1), (300, 2), (None, None))]
    for r in runs[1:]:
        assert r.pvalue == runs[0].pvalue
        np.testing.assert_array_equal(r.null_distribution, runs[0].null_distribution)
    # without the pairs' shortcut (the arrangements' own values): the same test
    monkeypatch.delattr(PooledGram, "swap_sums")
    slow = kmtests.aggregated_two_sample_test(x, y, bandwidths=4, method="swap",
                                              n_resamples=300, rng=7)
    assert slow.pvalue == runs[0].pvalue
    assert [m["pvalue"] for m in slow.members] == [m["pvalue"] for m in runs[0].members]


def test_swap_detects_a_shift_and_reports_itself():
    gen = np.random.default_rng(3)
    x, y = gen.normal(size=(50, 2)), gen.normal(1.0, size=(50, 2))
    res = kmtests.aggregated_two_sample_test(x, y, method=SwapMethod(n_resamples=199, rng=1))
    assert res.pvalue == pytest.approx(1 / 200)
    text = res.summary().as_text()
    assert "Swap test" in text and "method: swap" in " ".join(text.split())
    assert res.method.describe(res) == ("swap p-value (199 random swaps within 50 random "
                                        "pairs (x_i, y_j))")


@pytest.mark.parametrize("case,match", [
    ("unequal", "equal size"), ("strata", "strata"), ("independence", "independence"),
    ("k_sample", "k_sample")])
def test_swap_refusals(case, match):
    gen = np.random.default_rng(4)
    x, y = gen.normal(size=(12, 2)), gen.normal(size=(12, 2))
    with pytest.raises(ValueError, match=match):
        if case == "unequal":
            kmtests.two_sample_test(x, y[:10], method="swap")
        elif case == "strata":
            kmtests.two_sample_test(x, y, method="swap", strata=np.arange(24) % 3)
        elif case == "independence":
            kmtests.independence_test(x, y, method="swap")
        else:
            kmtests.k_sample_test(x, y, x + 1, method="swap")


def _level(make, reps=300, alpha=0.05):
    rej = sum(make(i) <= alpha for i in range(reps))
    lo, hi = stats.binom.ppf([0.005, 0.995], reps, alpha)
    return rej, lo, hi


@pytest.mark.slow
@pytest.mark.parametrize("sort", [False, True])
def test_swap_level_aggregated(sort):
    """300 null data sets, m = 30: the rejections of MMDAgg with swaps inside the 99%
    binomial band, also when both samples come sorted (the random pairing keeps the
    level; pairing sorted rows by position would not)."""
    def one(i):
        g = np.random.default_rng(1000 + i)
        x, y = g.standard_t(4, size=(30, 2)), g.standard_t(4, size=(30, 2))
        if sort:
            x, y = x[np.argsort(x[:, 0])], y[np.argsort(y[:, 0])]
        return kmtests.aggregated_two_sample_test(x, y, bandwidths=5, method="swap",
                                                  n_resamples=99, rng=i).pvalue

    rej, lo, hi = _level(one)
    assert lo <= rej <= hi, (rej, lo, hi)


@pytest.mark.slow
def test_swap_level_single_mmd():
    def one(i):
        g = np.random.default_rng(2000 + i)
        x, y = g.exponential(size=(25, 3)), g.exponential(size=(25, 3))
        return kmtests.two_sample_test(x, y, method="swap", n_resamples=99, rng=i).pvalue

    rej, lo, hi = _level(one)
    assert lo <= rej <= hi, (rej, lo, hi)


def test_cli_takes_swaps(tmp_path, capsys):
    from kmtests import cli

    gen = np.random.default_rng(5)
    a, b = gen.normal(size=(30, 2)), gen.normal(0.3, size=(30, 2))
    np.savetxt(tmp_path / "a.csv", a, delimiter=",", header="u,v", comments="")
    np.savetxt(tmp_path / "b.csv", b, delimiter=",", header="u,v", comments="")
    files = [str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--n-resamples", "99",
             "--seed", "3"]
    assert cli.main(["two-sample", *files, "--method", "swap"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "swap p-value (99 random swaps within 30 random pairs" in out
    assert cli.main(["aggregated", "two-sample", *files, "--swaps"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    ref = kmtests.aggregated_two_sample_test(a, b, method="swap", n_resamples=99, rng=3)
    assert f"p-value = {ref.pvalue:.4g}" in out and "swap p-value" in out


def test_the_kme_shortcut_builds_no_arrangements(monkeypatch):
    """With the KME every member takes its swaps from the pairs: the arrangements (2m
    indices a row) are never built (the time they took was a tenth of the test)."""
    def boom(self):
        raise AssertionError("arrangements built")

    monkeypatch.setattr(SwapRows, "perms", property(boom))
    gen = np.random.default_rng(6)
    x, y = gen.normal(size=(30, 2)), gen.normal(size=(30, 2))
    res = kmtests.aggregated_two_sample_test(x, y, bandwidths=3, method="swap",
                                             n_resamples=99, rng=0)
    assert 0 < res.pvalue <= 1
    with pytest.raises(AssertionError, match="arrangements built"):  # no shortcut here
        kmtests.two_sample_test(x, y, estimator="fkmse", method="swap", n_resamples=9, rng=0)
