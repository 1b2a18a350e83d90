"""MMDAggInc and HSICAggInc (``two_sample_test(statistic="mmdagginc")``,
``independence_test(statistic="hsicagginc")``; issue 31, goal 1):
the design, the members against a brute-force numpy reference on whole Gram matrices and
against kerneltests and the authors' agginc (``benchmarks/reference/agginc_reference.json``,
made by
``benchmarks/reference/gen_agginc.py``), the draws as swaps, reproducibility, refusals,
and the level (slow: two nulls each, 300 data sets, binomial band).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import kmtests
from kmtests import independence_test, two_sample_test
from kmtests.kernels import Gaussian, Laplacian
from kmtests.null import WildBootstrap
from kmtests.null.combine import minp_combination
from kmtests.statistics.agginc import IncompleteDraws, design_pairs, h_values

REF = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "reference"
                  / "agginc_reference.json").read_text())


def mmdagginc_test(x, y, **kw):
    return two_sample_test(x, y, statistic="mmdagginc", **kw)


def hsicagginc_test(x, y, **kw):
    return independence_test(x, y, statistic="hsicagginc", **kw)


def _gen(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _h_brute(kern, a: np.ndarray, b: np.ndarray, R: int) -> tuple[np.ndarray, np.ndarray]:
    """h on the design from whole Gram matrices (numpy, no kmtests code but the kernel's
    Gram matrix), in the paper's pair order."""
    Kaa, Kbb, Kab = kern.gram(a, a), kern.gram(b, b), kern.gram(a, b)
    ii, jj = design_pairs(a.shape[0], R)
    return Kaa[ii, jj] + Kbb[ii, jj] - Kab[ii, jj] - Kab[jj, ii], ii


def _flat(h: np.ndarray, N: int, R: int) -> np.ndarray:
    """The (N, M, R) array of h_values in the paper's pair order: (M, L)."""
    return np.concatenate([h[:N - r, :, r - 1] for r in range(1, min(R, N - 1) + 1)]).T


# -- the design and the kernel values ------------------------------------------------------------
def test_design_is_the_first_superdiagonals():
    ii, jj = design_pairs(6, 3)
    assert list(zip(ii, jj)) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (0, 2), (1, 3),
                                 (2, 4), (3, 5), (0, 3), (1, 4), (2, 5)]
    ii, jj = design_pairs(7, 50)  # capped: the complete design
    assert len(ii) == 21 and set(zip(ii, jj)) == {(i, j) for i in range(7)
                                                   for j in range(i + 1, 7)}


@pytest.mark.parametrize("kernel", [Gaussian(bandwidth=0.7), Laplacian(bandwidth=1.3)])
@pytest.mark.parametrize("R", [1, 7, 100])
def test_h_values_are_the_brute_force_ones(kernel, R):
    gen = _gen(1)
    a, b = gen.normal(size=(40, 3)), gen.normal(size=(40, 3)) + 0.5
    kernels = [kernel, type(kernel)(bandwidth=2.0 * kernel.bandwidth)]
    h = h_values(kernels, a, b, R)
    for m, k in enumerate(kernels):
        ref, _ = _h_brute(k, a, b, R)
        np.testing.assert_allclose(_flat(h, 40, R)[m], ref, rtol=1e-12, atol=1e-14)


def test_mmd_statistic_is_the_mean_of_h_and_complete_design_is_mmd_u():
    gen = _gen(2)
    x, y = gen.normal(size=(30, 2)), gen.normal(size=(36, 2)) * 1.5
    bws = [0.5, 1.0, 2.0]
    res = mmdagginc_test(x, y, grid=bws, diagonals=6, n_resamples=19, rng=0)
    for m, bw in zip(res.members, bws):
        ref, _ = _h_brute(Gaussian(bandwidth=bw), x[:30], y[:30], 6)
        assert m["statistic"] == pytest.approx(ref.mean(), rel=1e-12, abs=1e-15)
    assert any("the last 6 of the larger sample" in n for n in res.notes)
    full = mmdagginc_test(x[:30], y[:30], grid=[1.0], diagonals=200, n_resamples=19, rng=0)
    mmd_u = kmtests.mmd(x[:30], y[:30], bandwidth=1.0, statistic="unbiased")
    # the complete design is Gretton et al.'s h-form (Lemma 6: no cross term k(x_i, y_i)),
    # MMD^2_u (their eq. 3, kmtests.mmd) averages every cross term
    Kxy = Gaussian(bandwidth=1.0).gram(x[:30], y[:30])
    cross = 2 * Kxy.sum() / 30 ** 2 - 2 * (Kxy.sum() - np.trace(Kxy)) / (30 * 29)
    assert full.members[0]["statistic"] == pytest.approx(mmd_u + cross, rel=1e-10)


def test_hsic_statistic_is_the_mean_of_the_product_over_the_halves():
    gen = _gen(3)
    x = gen.normal(size=(41, 2))
    y = x[:, :1] ** 2 + gen.normal(size=(41, 1))
    res = hsicagginc_test(x, y, grid=([0.8, 2.0], [1.0, 3.0]), diagonals=5,
                          n_resamples=19, rng=0)
    N = 20
    k = 0
    for by in (1.0, 3.0):          # y's bandwidth slowest, x's fastest
        hy, _ = _h_brute(Gaussian(bandwidth=by), y[:N], y[N:2 * N], 5)
        for bx in (0.8, 2.0):
            hx, _ = _h_brute(Gaussian(bandwidth=bx), x[:N], x[N:2 * N], 5)
            m = res.members[k]
            assert (m["bandwidth_x"], m["bandwidth_y"]) == (bx, by)
            assert m["statistic"] == pytest.approx((hx * hy).mean(), rel=1e-12)
            k += 1
    assert any("n odd" in n for n in res.notes)


# -- the null: the draws are swaps -------------------------------------------------------------------
def _draws(x, y, bws, R) -> IncompleteDraws:
    N = min(len(x), len(y))
    h = h_values([Gaussian(bandwidth=b) for b in bws], x[:N], y[:N], R)
    Rc = min(R, N - 1)
    return IncompleteDraws(lambda i0, i1: h[i0:i1], N, len(bws), Rc,
                           Rc * N - Rc * (Rc + 1) // 2)


def test_draws_are_the_brute_force_quadratic_forms_and_swaps():
    gen = _gen(4)
    x, y = gen.normal(size=(25, 2)), gen.normal(size=(25, 2)) + 0.3
    bws, R = [0.6, 1.7], 4
    W = np.where(gen.random((7, 25)) < 0.5, -1.0, 1.0)
    got = _draws(x, y, bws, R).given(W)
    ii, jj = design_pairs(25, R)
    for m, bw in enumerate(bws):
        h, _ = _h_brute(Gaussian(bandwidth=bw), x, y, R)
        brute = np.array([(w[ii] * w[jj] * h).mean() for w in W])
        np.testing.assert_allclose(got[:, m], brute, rtol=1e-12, atol=1e-15)
        for b, w in enumerate(W):  # the draw is the statistic of the swapped samples
            swap = w < 0
            xs, ys = np.where(swap[:, None], y, x), np.where(swap[:, None], x, y)
            hs, _ = _h_brute(Gaussian(bandwidth=bw), xs, ys, R)
            assert got[b, m] == pytest.approx(hs.mean(), rel=1e-10, abs=1e-14)


# -- kerneltests' values (benchmarks/reference/gen_agginc.py) ---------------------------------------
def _kt_multipliers(N: int) -> np.ndarray:
    return np.random.RandomState(REF["seed"]).choice([1.0, -1.0],
                                                     size=(N, REF["B1"] + REF["B2"]))


@pytest.mark.parametrize("case", REF["cases"], ids=lambda c: c["name"])
def test_members_and_draws_are_kerneltests(case):
    """Every member's statistic and its draws on kerneltests' (and the authors') own
    multipliers to 1e-10
    (kerneltests' Gaussian exp(-d^2/b^2) is kmtests' bandwidth b/sqrt(2)), the members'
    p-values on those draws equal, and the design's size."""
    X, Y = np.array(case["X"]), np.array(case["Y"])
    s2 = np.sqrt(2.0)
    if case["type"] == "mmd":
        grid = [b / s2 for b in case["bandwidths"]]
        res = mmdagginc_test(X, Y, grid=grid, diagonals=case["R"], n_resamples=19, rng=0)
        N = min(len(X), len(Y))
        h = h_values([Gaussian(bandwidth=b) for b in grid], X[:N], Y[:N], case["R"])
        block = h.__getitem__
    else:
        gx, gy = ([b / s2 for b in bw] for bw in case["bandwidths"])
        res = hsicagginc_test(X, Y, grid=(gx, gy), diagonals=case["R"], n_resamples=19,
                              rng=0)
        N = len(X) // 2
        hx = h_values([Gaussian(bandwidth=b) for b in gx], X[:N], X[N:2 * N], case["R"])
        hy = h_values([Gaussian(bandwidth=b) for b in gy], Y[:N], Y[N:2 * N], case["R"])

        def block(s):
            return (hy[s, :, None, :] * hx[s, None, :, :]).reshape(
                s.stop - s.start, len(gx) * len(gy), -1)
    stat = np.array([m["statistic"] for m in res.members])
    np.testing.assert_allclose(stat, case["statistic"], rtol=1e-10, atol=1e-15)
    assert res.details["pairs"] == case["pairs"] and res.details["N"] == case["N"]
    Rc = res.details["diagonals"]
    draws = IncompleteDraws(lambda i0, i1: block(slice(i0, i1)), N, stat.size, Rc,
                            case["pairs"])
    W = _kt_multipliers(N)[:, :REF["B1"]].T
    boot = draws.given(W)
    np.testing.assert_allclose(boot.T, case["boot"], rtol=1e-10, atol=1e-14)
    # the authors' agginc/np.py on the same cases (stored beside kerneltests')
    np.testing.assert_allclose(stat, case["authors_statistic"], rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(boot.T, case["authors_boot"], rtol=1e-10, atol=1e-14)
    # kerneltests' member p-values: mean over (B1 draws, the statistic) of draw >= stat
    T = np.vstack([stat[None, :], boot])
    _, pm, _, _ = minp_combination(T, np.zeros_like(T), np.full(stat.size, 1 / stat.size),
                                   0.05)
    np.testing.assert_allclose(pm, case["p_value"], rtol=1e-12)


# -- reproducibility, the report, refusals -----------------------------------------------------------
def test_seed_batch_and_threads_give_the_same_pvalue():
    gen = _gen(5)
    x, y = gen.normal(size=(300, 2)), gen.normal(size=(300, 2)) * [1.0, 1.2]
    runs = [mmdagginc_test(x, y, n_resamples=299, rng=7, **kw)
            for kw in ({}, {"batch": 128}, {"batch": 1000}, {"n_jobs": 1}, {"n_jobs": 2})]
    assert len({r.pvalue for r in runs}) == 1
    assert len({tuple(r.null_distribution) for r in runs}) == 1
    u = gen.normal(size=300)
    v = u * 0.2 + gen.normal(size=300)
    a = hsicagginc_test(u, v, n_resamples=199, rng=3, n_jobs=2)
    b = hsicagginc_test(u, v, n_resamples=199, rng=3, batch=128, n_jobs=1)
    assert a.pvalue == b.pvalue
    c = hsicagginc_test(u, v, n_resamples=199, rng=4)
    assert not np.array_equal(a.null_distribution, c.null_distribution)


def test_the_report_names_the_test_and_its_exact_level():
    gen = _gen(6)
    x, y = gen.normal(size=(80, 2)), gen.normal(size=(90, 2))
    text = str(mmdagginc_test(x, y, n_resamples=99, rng=2))
    assert "MMDAggInc" in text and "exact level" in text and "the last 10" in text
    with pytest.raises(ValueError, match="`diagonals`"):  # an option of another statistic
        two_sample_test(x, y, diagonals=5)


@pytest.mark.parametrize("kw, match", [
    ({"method": "permutation"}, "method='permutation'"),
    ({"method": "gamma"}, "gamma"),
    ({"method": WildBootstrap(process="gaussian", n_resamples=9)}, "Rademacher"),
    ({"strata": np.repeat([0, 1], 40)}, "strata"),
    ({"kernel": "linear"}, "one\\s+bandwidth"),
    ({"levels": (2, 1)}, "levels"),
    ({"levels": (-1, 1), "grid": [1.0, 2.0]}, "once"),
    ({"grid": [1.0, 1.0]}, "distinct"),
    ({"weights": [1.0, 2.0]}, "weights"),
    ({"diagonals": 0}, "diagonals"),
    ({"engine": "nystrom"}, "exact"),
])
def test_refusals_are_clear(kw, match):
    gen = _gen(7)
    x, y = gen.normal(size=(40, 2)), gen.normal(size=(40, 2))
    draws = {} if isinstance(kw.get("method"), WildBootstrap) else {"n_resamples": 9, "rng": 0}
    with pytest.raises(ValueError, match=match):
        mmdagginc_test(x, y, **draws, **kw)


def test_given_bandwidth_centres_the_collection():
    gen = _gen(8)
    x, y = gen.normal(size=(50, 1)), gen.normal(size=(50, 1))
    res = mmdagginc_test(x, y, bandwidth=2.0, n_resamples=9, rng=0)
    assert [m["bandwidth"] for m in res.members] == [0.5, 1.0, 2.0, 4.0, 8.0]
    res = mmdagginc_test(x, y, levels=(0, 1), n_resamples=9, rng=0)
    h = Gaussian().fitted_to(np.vstack([x, y])).bandwidth
    assert [m["bandwidth"] for m in res.members] == pytest.approx([h, 2 * h])


# -- level (slow) -------------------------------------------------------------------------------------
def _mmd_null(kind: str, gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if kind == "gaussian":
        return gen.normal(size=(200, 3)), gen.normal(size=(200, 3))
    return gen.standard_t(3, size=(150, 1)), gen.standard_t(3, size=(180, 1))


def _hsic_null(kind: str, gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if kind == "gaussian":
        return gen.normal(size=(300, 2)), gen.normal(size=(300, 1))
    return gen.exponential(size=(251, 1)), gen.uniform(-1, 1, size=(251, 2))


_SETS = 300


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gaussian", "heavy_unequal"])
def test_mmdagginc_level_is_in_the_binomial_band(kind):
    """300 null data sets at alpha = 0.05 (R = 50, 199 draws): the rejections in the
    binomial 99% band of an exact test."""
    gen = _gen(11)
    rej = sum(mmdagginc_test(*_mmd_null(kind, gen), diagonals=50, n_resamples=199,
                             rng=int(s)).pvalue <= 0.05 for s in range(_SETS))
    lo, hi = stats.binom.ppf([0.005, 0.995], _SETS, 0.05)
    assert lo <= rej <= hi, rej


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gaussian", "skewed_odd"])
def test_hsicagginc_level_is_in_the_binomial_band(kind):
    gen = _gen(12)
    rej = sum(hsicagginc_test(*_hsic_null(kind, gen), diagonals=50, n_resamples=199,
                              rng=int(s)).pvalue <= 0.05 for s in range(_SETS))
    lo, hi = stats.binom.ppf([0.005, 0.995], _SETS, 0.05)
    assert lo <= rej <= hi, rej


def test_the_command_line_runs_the_same_test(tmp_path, capsys):
    """``kmtests two-sample --statistic mmdagginc --diagonals --levels --weights`` is the
    Python call with those keywords (the same p-value and members)."""
    import pandas as pd

    from ._cli import run_json

    gen = _gen(9)
    x, y = gen.normal(size=(60, 2)), gen.normal(size=(60, 2)) + [0.5, 0.0]
    pd.DataFrame(x, columns=["a", "b"]).to_csv(tmp_path / "x.csv", index=False)
    pd.DataFrame(y, columns=["a", "b"]).to_csv(tmp_path / "y.csv", index=False)
    out = run_json(capsys, "two-sample", tmp_path / "x.csv", tmp_path / "y.csv",
                   "--statistic", "mmdagginc", "--diagonals", "7", "--levels=-1,1",
                   "--weights", "centred", "--n-resamples", "99", "--seed", "4")
    res = mmdagginc_test(x, y, diagonals=7, levels=(-1, 1), weights="centred",
                         n_resamples=99, rng=4)
    assert out["pvalue"] == res.pvalue
    assert out["statistic"] == pytest.approx(res.statistic)
