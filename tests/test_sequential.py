"""The sequential tests by betting, the drift monitor and ``kmtests monitor``.

Payoffs against literal numpy references (every past point, or the last
``max_points``), the wealth recursion by brute force, predictability (the bet
on pair t uses only the pairs before t), pickling, refusals that leave the
state unchanged, the command line, and (slow) the level over null streams.
"""

from __future__ import annotations

import io
import math
import pickle
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from kmtests import DriftMonitor, SequentialIndependenceTest, SequentialTwoSampleTest
from kmtests.kernels import median_bandwidth
from kmtests.sequential import AGRAPA, ONS
from kmtests.sequential._betting import ONS_STEP


# -- literal references ------------------------------------------------------------------
def gauss(a, b, bw):
    d2 = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * bw * bw))


def skmse_c(K):
    """1 - alpha of the S-KMSE, from its closed form (JMLR eq. 26)."""
    n = K.shape[0]
    rho, varrho = K.sum() / n**2, np.trace(K) / n
    den = (n - 2) * rho + varrho / n
    alpha = 0.0 if den <= 0 else min(max((varrho - rho) / den, 0.0), 1.0)
    return 1.0 - alpha


def two_sample_payoffs(x, y, bw, window=None, estimator="kme"):
    """f_t for t = 2..T from the past pairs (the last `window` of them)."""
    out = []
    for t in range(1, x.shape[0]):
        lo = 0 if window is None else max(0, t - window)
        X, Y = x[lo:t], y[lo:t]
        n = X.shape[0]
        Kxx, Kyy, Kxy = gauss(X, X, bw), gauss(Y, Y, bw), gauss(X, Y, bw)
        cx, cy = (1.0, 1.0) if estimator == "kme" else (skmse_c(Kxx), skmse_c(Kyy))
        a, b = cx / n, cy / n
        g = lambda z: a * gauss(z[None], X, bw).sum() - b * gauss(z[None], Y, bw).sum()
        norm = math.sqrt(a * a * Kxx.sum() + b * b * Kyy.sum() - 2 * a * b * Kxy.sum())
        out.append((g(x[t]) - g(y[t])) / (2 * norm))
    return np.array(out)


def independence_payoffs(x, y, bwx, bwy, window=None):
    """One payoff per block (pairs 2s-1, 2s), witness from the pairs before the block."""
    out = []
    for t in range(2, x.shape[0] - 1, 2):
        lo = 0 if window is None else max(0, t - window)
        X, Y = x[lo:t], y[lo:t]
        n = X.shape[0]
        K, L = gauss(X, X, bwx), gauss(Y, Y, bwy)
        H = np.eye(n) - 1.0 / n
        hsic_b = np.trace(K @ H @ L @ H) / n**2

        def w(s, u):
            k, l = gauss(s[None], X, bwx)[0], gauss(u[None], Y, bwy)[0]
            return (k * l).mean() - k.mean() * l.mean()

        x1, y1, x2, y2 = x[t], y[t], x[t + 1], y[t + 1]
        num = w(x1, y1) + w(x2, y2) - w(x1, y2) - w(x2, y1)
        out.append(num / (4 * math.sqrt(hsic_b)))
    return np.array(out)


def ons_path(payoffs, max_bet=0.5):
    lam, a, logw, bets, path = 0.0, 1.0, 0.0, [], []
    for f in payoffs:
        bets.append(lam)
        logw += math.log(1 + lam * f)
        path.append(logw)
        z = f / (1 + lam * f)
        a += z * z
        lam = min(max_bet, max(0.0, lam + 2 / (2 - math.log(3)) * z / a))
    return np.array(bets), np.array(path)


def agrapa_path(payoffs, max_bet=0.5):
    logw, bets, path, seen = 0.0, [], [], []
    for f in payoffs:
        t = len(seen)
        mu = sum(seen) / (t + 1)
        var = (0.25 + sum((s - mu) ** 2 for s in seen)) / (t + 1)
        lam = min(max_bet, max(0.0, mu / (var + mu * mu)))
        bets.append(lam)
        logw += math.log(1 + lam * f)
        path.append(logw)
        seen.append(f)
    return np.array(bets), np.array(path)


def shifted(n, d=3, shift=0.5, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    y = rng.normal(size=(n, d))
    y[:, 0] += shift
    return x, y


# -- payoffs and wealth --------------------------------------------------------------------
@pytest.mark.parametrize("estimator", ["kme", "skmse"])
@pytest.mark.parametrize("window", [None, 7])
def test_two_sample_payoffs_match_numpy(estimator, window):
    x, y = shifted(40)
    test = SequentialTwoSampleTest(bandwidth=1.3, estimator=estimator, record=True,
                                   max_points=window or 100, alpha=1e-6)
    test.update(x, y)
    ref = two_sample_payoffs(x, y, 1.3, window, estimator)
    got = np.asarray(test.history["payoff"])
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)
    assert list(test.history["step"]) == list(range(2, 41))
    assert np.all(np.abs(got) <= 1.0)


@pytest.mark.parametrize("kernel, bw", [("gaussian", 0.8), ("laplacian", 1.3),
                                        ("ard", [0.5, 1.0, 2.0])])
def test_window_gram_is_the_kernels(kernel, bw):
    from kmtests.kernels import resolve_kernel

    x, y = shifted(30, seed=25)
    test = SequentialTwoSampleTest(kernel=kernel, bandwidth=bw, max_points=12).update(x, y)
    w = test._window
    k = resolve_kernel(kernel, bw)
    for a, b in (("x", "x"), ("y", "y"), ("x", "y")):
        np.testing.assert_allclose(w.K[(a, b)], k.gram(w.points[a], w.points[b]), rtol=1e-12,
                                   atol=1e-15)
        np.testing.assert_allclose(w.total(a, b), k.gram(w.data(a), w.data(b)).sum(),
                                   rtol=1e-12)


def test_witness_matches_the_payoff_and_is_unit_norm():
    x, y = shifted(60, shift=1.0, seed=26)
    test = SequentialTwoSampleTest(bandwidth=1.0, max_points=40, record=True)
    test.update(x[:59], y[:59])
    gx, gy, norm = test.witness_parts(x[59], y[59])
    wit = test.witness(np.vstack([x[59], y[59]]))
    np.testing.assert_allclose(wit, [gx / norm, gy / norm], rtol=1e-10)
    test.update(x[59], y[59])
    assert test.history["payoff"][-1] == pytest.approx((gx - gy) / (2 * norm), rel=1e-12)


@pytest.mark.parametrize("cls", [SequentialTwoSampleTest, SequentialIndependenceTest])
def test_adaptive_payoffs_are_the_norm_payoffs_over_their_running_max(cls):
    x, y = shifted(120, shift=0.8, seed=28)
    norm = cls(record=True, alpha=1e-9).update(x, y)
    adaptive = cls(record=True, alpha=1e-9, payoff_scale="adaptive").update(x, y)
    u = np.asarray(norm.history["payoff"])
    ref, scale = [], 0.0
    for v in u:
        ref.append(v if scale == 0 else min(1.0, max(-1.0, v / scale)))
        scale = max(scale, abs(v))
    np.testing.assert_allclose(np.asarray(adaptive.history["payoff"]), ref, rtol=1e-12)
    assert np.abs(ref).max() == 1.0 and adaptive.log_wealth > norm.log_wealth
    bets, path = ons_path(np.array(ref))
    np.testing.assert_allclose(np.asarray(adaptive.history["log_wealth"]), path, rtol=1e-10)


def test_shrinkage_changes_the_payoffs_only_through_the_ratio():
    # different spreads: the two samples get different shrinkage, so the payoffs differ
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(30, 2)), 2.0 * rng.normal(size=(30, 2))
    kme = SequentialTwoSampleTest(bandwidth=1.0, record=True).update(x, y)
    sk = SequentialTwoSampleTest(bandwidth=1.0, estimator="skmse", record=True).update(x, y)
    assert not np.allclose(kme.history["payoff"], sk.history["payoff"])
    # a fixed shrinkage scales both embeddings alike: the normalised payoffs are the KME's
    fixed = SequentialTwoSampleTest(bandwidth=1.0, estimator=__import__(
        "kmtests").estimators.SKMSE(shrinkage=0.3), record=True).update(x, y)
    np.testing.assert_allclose(fixed.history["payoff"], kme.history["payoff"], rtol=1e-12)


@pytest.mark.parametrize("window", [None, 6])
def test_independence_payoffs_match_numpy(window):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(41, 2))
    y = x[:, :1] + 0.5 * rng.normal(size=(41, 1))
    test = SequentialIndependenceTest(bandwidth_x=1.1, bandwidth_y=0.7, record=True,
                                      max_points=window or 100, alpha=1e-6)
    test.update(x, y)
    ref = independence_payoffs(x, y, 1.1, 0.7, window)
    np.testing.assert_allclose(np.asarray(test.history["payoff"]), ref, rtol=1e-9,
                               atol=1e-12)
    assert list(test.history["step"]) == list(range(4, 41, 2))
    assert test.n_seen == 41  # the last pair waits for its partner


@pytest.mark.parametrize("strategy, reference", [("ons", ons_path), ("agrapa", agrapa_path)])
def test_wealth_recursion_by_brute_force(strategy, reference):
    x, y = shifted(200, shift=1.0, seed=4)
    test = SequentialTwoSampleTest(bandwidth=1.0, betting=strategy, record=True, alpha=1e-3)
    test.update(x, y)
    payoffs = np.asarray(test.history["payoff"])
    bets, path = reference(payoffs)
    np.testing.assert_allclose(np.asarray(test.history["bet"]), bets, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(test.history["log_wealth"]), path, rtol=1e-10)
    assert test.log_wealth == pytest.approx(path[-1], rel=1e-10)
    assert test.wealth == pytest.approx(math.exp(path[-1]), rel=1e-10)
    assert test.pvalue == pytest.approx(min(1.0, math.exp(-max(0.0, path.max()))), rel=1e-10)
    crossed = np.flatnonzero(path >= math.log(1e3))
    assert test.reject == bool(crossed.size)
    steps = np.asarray(test.history["step"])
    assert test.stopping_time == (int(steps[crossed[0]]) if crossed.size else None)


def test_ons_and_agrapa_steps():
    s = ONS()
    assert s.bet() == 0.0
    s.observe(0.2)
    z = 0.2
    assert s.bet() == pytest.approx(min(0.5, ONS_STEP * z / (1 + z * z)))
    a = AGRAPA()
    assert a.bet() == 0.0  # no payoff yet: mean 0
    a.observe(-0.3)
    assert a.bet() == 0.0  # negative mean: no bet (the payoffs are oriented)
    with pytest.raises(ValueError, match="max_bet"):
        ONS(max_bet=0.9)


def test_stopping_time_and_pvalue_under_a_shift():
    x, y = shifted(2000, shift=1.0, seed=5)
    test = SequentialTwoSampleTest(alpha=0.05).update(x, y)
    assert test.reject and 20 < test.stopping_time < 2000
    assert test.pvalue <= 0.05
    partial = SequentialTwoSampleTest(alpha=0.05).update(x[:test.stopping_time - 1],
                                                         y[:test.stopping_time - 1])
    assert not partial.reject and partial.stopping_time is None and partial.pvalue > 0.05


# -- predictability --------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [SequentialTwoSampleTest, SequentialIndependenceTest])
def test_the_bet_at_t_uses_only_earlier_pairs(cls):
    x, y = shifted(60, shift=1.0, seed=6)
    t = 40  # pairs 41.. differ between the two streams
    x2, y2 = x.copy(), y.copy()
    rng = np.random.default_rng(9)
    x2[t:] = rng.normal(size=x2[t:].shape) * 3
    y2[t:] = rng.normal(size=y2[t:].shape) * 3
    a = cls(record=True).update(x, y)
    b = cls(record=True).update(x2, y2)
    steps = np.asarray(a.history["step"])
    assert np.array_equal(steps, np.asarray(b.history["step"]))
    # every bet (fraction) up to and including the first pair that differs is the same ...
    upto = steps <= t + (1 if cls is SequentialTwoSampleTest else 2)
    np.testing.assert_array_equal(np.asarray(a.history["bet"])[upto],
                                  np.asarray(b.history["bet"])[upto])
    # ... every payoff before it too, and the bandwidth (burn-in: first 20 pairs)
    before = steps <= t
    np.testing.assert_array_equal(np.asarray(a.history["payoff"])[before],
                                  np.asarray(b.history["payoff"])[before])
    first = np.flatnonzero(~before)[0]
    assert a.history["payoff"][first] != b.history["payoff"][first]


def test_burn_in_fixes_the_median_bandwidth_on_the_first_pairs():
    x, y = shifted(60, seed=7)
    test = SequentialTwoSampleTest(record=True, burn_in=15).update(x, y)
    assert test.kernel_.bandwidth == pytest.approx(median_bandwidth(np.vstack([x[:15],
                                                                               y[:15]])))
    assert test.history["step"][0] == 16
    ind = SequentialIndependenceTest(record=True, burn_in=10).update(x, y)
    assert ind.kernel_x_.bandwidth == pytest.approx(median_bandwidth(x[:10]))
    assert ind.kernel_y_.bandwidth == pytest.approx(median_bandwidth(y[:10]))
    assert ind.history["step"][0] == 12


def test_constant_burn_in_waits_for_a_bandwidth():
    x = np.zeros((30, 1))
    y = np.zeros((30, 1))
    x[25:] = np.arange(5)[:, None]
    test = SequentialTwoSampleTest(record=True, burn_in=5).update(x, y)
    # pair 27 brings the first point other than 0: the bandwidth exists from pair 28 on
    assert test.history["step"][0] == 28


# -- batches, pickling ------------------------------------------------------------------------
def test_batches_and_single_pairs_agree():
    x, y = shifted(80, seed=8)
    a = SequentialTwoSampleTest(record=True).update(x, y)
    b = SequentialTwoSampleTest(record=True)
    b.update(x[:13], y[:13])
    for i in range(13, 80):
        b.update(x[i], y[i])
    assert np.array_equal(np.asarray(a.history["log_wealth"]),
                          np.asarray(b.history["log_wealth"]))
    one = SequentialTwoSampleTest(bandwidth=1.0).update(0.3, -0.2).update([[0.1], [0.5]],
                                                                         [[0.0], [1.0]])
    assert one.n_seen == 3


@pytest.mark.parametrize("cls", [SequentialTwoSampleTest, SequentialIndependenceTest])
def test_pickled_test_resumes_identically(cls):
    x, y = shifted(700, shift=0.6, seed=10)
    whole = cls(alpha=0.01, max_points=50).update(x, y)
    part = cls(alpha=0.01, max_points=50).update(x[:333], y[:333])
    resumed = pickle.loads(pickle.dumps(part)).update(x[333:], y[333:])
    assert resumed.stopping_time == whole.stopping_time
    assert resumed.log_wealth == whole.log_wealth


def test_monitor_pickles_and_resumes_with_the_same_alarm():
    rng = np.random.default_rng(11)
    ref = rng.normal(size=(3000, 2))
    stream = np.vstack([rng.normal(size=(400, 2)), rng.normal(size=(1500, 2)) + [0.8, 0]])
    whole = DriftMonitor(ref, alpha=0.01, rng=3, max_points=100)
    whole.update(stream)
    part = DriftMonitor(ref, alpha=0.01, rng=3, max_points=100)
    part.update(stream[:450])
    resumed = pickle.loads(pickle.dumps(part))
    resumed.update(stream[450:])
    assert whole.alarms and resumed.alarms[0].step == whole.alarms[0].step > 400
    assert resumed.alarms[0] == whole.alarms[0]
    assert list(resumed.path) == list(whole.path)


def test_monitor_alarm_points_at_the_shifted_feature_and_plots():
    rng = np.random.default_rng(12)
    ref = rng.normal(size=(4000, 3))
    stream = rng.normal(size=(1500, 3)) + [0.0, 0.0, 1.0]
    mon = DriftMonitor(ref, alpha=0.05, rng=0, feature_names=["a", "b", "c"])
    alarms = mon.update(stream)
    assert len(alarms) == 1 and mon.alarm
    al = alarms[0]
    assert al.top_features(1)[0][0] == "c" and al.features["c"] > 0.5
    assert sum(al.features.values()) == pytest.approx(1.0)
    assert al.mean_shift["c"] > 0.5 and al.wealth >= 20 and al.pvalue <= 0.05
    assert "alarm at observation" in str(al) and "c " in str(al)
    assert "alarm at observation" in mon.report()
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    ax = mon.plot()
    assert ax.get_ylabel() == "log-wealth" and len(ax.lines) == 3
    matplotlib.pyplot.close("all")


def test_monitor_takes_data_frames():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(27)
    ref = pd.DataFrame(rng.normal(size=(500, 2)), columns=["temp", "load"])
    mon = DriftMonitor(ref, rng=0)
    assert mon.feature_names == ["temp", "load"]
    stream = pd.DataFrame(rng.normal(size=(40, 2)), columns=["temp", "load"])
    mon.update(stream)
    mon.update(stream.iloc[0])  # one row (a Series) is one observation
    assert mon.n_seen == 41


def test_monitor_restart_rings_again():
    rng = np.random.default_rng(13)
    ref = rng.normal(size=(6000, 1))
    stream = rng.normal(size=(3000, 1)) + 1.5
    mon = DriftMonitor(ref, alpha=0.05, rng=0, restart=True, max_points=100)
    mon.update(stream)
    assert len(mon.alarms) >= 3
    assert all(a.segment_start <= a.step for a in mon.alarms)
    assert [a.step for a in mon.alarms] == sorted(a.step for a in mon.alarms)


# -- refusals --------------------------------------------------------------------------------
def _state(test):
    w = test._window
    return (test.n_seen, test.log_wealth, test.n_bets, test.n_omitted,
            None if w is None else w.data("x").tobytes(), None if w is None else w.count)


def test_nan_raises_naming_the_row_and_leaves_the_state():
    x, y = shifted(50, seed=14)
    test = SequentialTwoSampleTest().update(x[:30], y[:30])
    before = _state(test)
    bad = y[30:40].copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match=r"`y_new` row 4 \(observation 35 of the stream\)"):
        test.update(x[30:40], bad)
    assert _state(test) == before
    test.update(x[30:], y[30:])  # goes on as if nothing happened
    assert test.n_seen == 50


def test_nan_omit_leaves_out_the_pair():
    x, y = shifted(50, seed=15)
    xn = x.copy()
    xn[10, 0] = np.nan
    a = SequentialTwoSampleTest(nan_policy="omit", record=True).update(xn, y)
    b = SequentialTwoSampleTest(record=True).update(np.delete(x, 10, 0), np.delete(y, 10, 0))
    assert a.n_omitted == 1 and a.n_seen == 49
    assert list(a.history["log_wealth"]) == list(b.history["log_wealth"])


@pytest.mark.parametrize("xb, yb, match", [
    (np.ones((2, 2)), np.ones((2, 2)), "`x_new` has 2 column"),
    (np.ones((2, 3)), np.ones((3, 3)), "same number of rows"),
    (np.ones(4), np.ones(4), "has 4 column"),
    ([["a", "b", "c"]], np.ones((1, 3)), "real numbers"),
    (np.array([[np.inf, 0, 0]]), np.ones((1, 3)), "infinite"),
])
def test_bad_updates_are_refused_without_change(xb, yb, match):
    x, y = shifted(30, seed=16)
    test = SequentialTwoSampleTest().update(x, y)
    before = _state(test)
    with pytest.raises((ValueError, TypeError), match=match):
        test.update(xb, yb)
    assert _state(test) == before


@pytest.mark.parametrize("kwargs, match", [
    ({"kernel": "linear"}, "k\\(x, x\\) = 1"),
    ({"estimator": "fkmse"}, "eigenproblem"),
    ({"estimator": "mkme"}, "smoothed kernel"),
    ({"alpha": 1.5}, "alpha"),
    ({"max_points": 1}, "max_points"),
    ({"burn_in": 600}, "must not exceed"),
    ({"burn_in": 1}, "at least 2"),
    ({"betting": "kelly"}, "betting"),
    ({"nan_policy": "propagate"}, "nan_policy"),
    ({"payoff_scale": "max"}, "payoff_scale"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SequentialTwoSampleTest(**kwargs)


def test_a_first_update_with_unequal_columns_is_refused():
    test = SequentialTwoSampleTest()
    with pytest.raises(ValueError, match="same number of columns"):
        test.update(np.ones((2, 2)), np.ones((2, 3)))
    assert test.n_seen == 0 and test._dims is None
    test.update(np.ones((2, 3)), np.zeros((2, 3)))
    assert test.n_seen == 2


def test_independence_refuses_a_shrinkage_estimator():
    with pytest.raises(ValueError, match="divides out"):
        SequentialIndependenceTest(estimator="skmse")


def test_monitor_refusals_leave_the_state():
    rng = np.random.default_rng(17)
    with pytest.raises(ValueError, match="at least 2 observations"):
        DriftMonitor(np.empty((0, 2)))
    mon = DriftMonitor(rng.normal(size=(60, 2)), rng=0)
    mon.update(rng.normal(size=(30, 2)))
    before = (mon.n_seen, list(mon.path), _state(mon.test))
    bad = rng.normal(size=(5, 2))
    bad[3, 0] = np.nan
    for rows, match in [(bad, "row 3"), (np.ones((2, 3)), "reference has 2"),
                        (np.ones((31, 2)), "30 unused"), ([["1", "x"]], "real numbers")]:
        with pytest.raises((ValueError, TypeError), match=match):
            mon.update(rows)
        assert (mon.n_seen, list(mon.path), _state(mon.test)) == before
    mon.update(np.ones((30, 2)))
    assert mon.remaining == 0


# -- the command line --------------------------------------------------------------------------
@pytest.fixture
def reference_csv(tmp_path):
    rng = np.random.default_rng(18)
    path = tmp_path / "ref.csv"
    np.savetxt(path, rng.normal(size=(3000, 2)), delimiter=",", header="a,b", comments="")
    return path


def _run_cli(args, stdin, monkeypatch, capsys):
    from kmtests.cli import main

    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _lines(rows):
    return "\n".join(",".join(f"{v:.6f}" for v in r) for r in rows) + "\n"


def test_cli_monitor_alarm_and_status(reference_csv, monkeypatch, capsys):
    rng = np.random.default_rng(19)
    stream = np.vstack([rng.normal(size=(200, 2)), rng.normal(size=(1500, 2)) + [0, 1.0]])
    code, out, err = _run_cli(["monitor", str(reference_csv), "-", "--every", "100",
                               "--seed", "1"], "a,b\n" + _lines(stream), monkeypatch, capsys)
    assert code == 1, err
    alarms = [ln for ln in out.splitlines() if ln.startswith("alarm")]
    assert len(alarms) == 1 and "b " in alarms[0]
    status = [ln for ln in out.splitlines() if ln.startswith("observation")]
    assert status[0].startswith("observation 100:")
    step = int(alarms[0].split()[3].rstrip(":"))
    mon = DriftMonitor(np.loadtxt(reference_csv, delimiter=",", skiprows=1), rng=1)
    mon.update(stream)
    assert mon.alarms[0].step == step > 200


def test_cli_monitor_payoff_scale(reference_csv, monkeypatch, capsys):
    rng = np.random.default_rng(29)
    stream = rng.normal(size=(1500, 2)) + [0, 0.8]
    steps = []
    for scale in ("norm", "adaptive"):
        code, out, err = _run_cli(["monitor", str(reference_csv), "-", "--seed", "1",
                                   "--payoff-scale", scale], _lines(stream), monkeypatch, capsys)
        assert code == 1, err
        steps.append(int(out.split()[3].rstrip(":")))
        mon = DriftMonitor(np.loadtxt(reference_csv, delimiter=",", skiprows=1), rng=1,
                           payoff_scale=scale)
        mon.update(stream)
        assert mon.alarms[0].step == steps[-1]
    assert steps[1] < steps[0]


def test_cli_monitor_no_alarm_exit_0(reference_csv, monkeypatch, capsys):
    rng = np.random.default_rng(20)
    code, out, err = _run_cli(["monitor", str(reference_csv), "-"],
                              _lines(rng.normal(size=(300, 2))), monkeypatch, capsys)
    assert code == 0, err
    assert "no alarm" in out


@pytest.mark.parametrize("stdin, match", [
    ("0.1,0.2\n0.3,oops\n", "line 2 of <stdin>"),
    ("0.1,0.2\n0.3\n", "line 2 of <stdin>: 1 field"),
    ("0.1,nan\n", "missing"),
    ("1,x\n", "line 1 of <stdin>: field 2 'x' is not a number"),
    ("a,c\n1,2\n", "lacks the reference's column(s) ['b']"),
    ("1,inf\n", "not finite"),
])
def test_cli_monitor_bad_lines(reference_csv, monkeypatch, capsys, stdin, match):
    code, out, err = _run_cli(["monitor", str(reference_csv), "-"], stdin, monkeypatch, capsys)
    assert code == 2
    assert err.startswith("kmtests: error:") and match in err


def test_cli_monitor_nan_omit(reference_csv, monkeypatch, capsys):
    code, out, err = _run_cli(["monitor", str(reference_csv), "-", "--nan-policy", "omit"],
                              "0.1,nan\n0.2,0.3\n", monkeypatch, capsys)
    assert code == 0, err
    assert "1 observation(s) with a missing value left out" in out


def test_cli_monitor_header_reorders_columns(reference_csv, monkeypatch, capsys):
    rng = np.random.default_rng(22)
    stream = rng.normal(size=(600, 2)) + [0, 1.2]
    code, out, _ = _run_cli(["monitor", str(reference_csv), "-", "--seed", "2"],
                            "a,b\n" + _lines(stream), monkeypatch, capsys)
    code2, out2, _ = _run_cli(["monitor", str(reference_csv), "-", "--seed", "2"],
                              "b,a\n" + _lines(stream[:, ::-1]), monkeypatch, capsys)
    assert code == code2 == 1 and out == out2


def test_cli_monitor_bad_files(tmp_path, reference_csv, monkeypatch, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_text("a,b\n")
    code, _, err = _run_cli(["monitor", str(empty), "-"], "1,2\n", monkeypatch, capsys)
    assert code == 2 and "no data rows" in err
    code, _, err = _run_cli(["monitor", "-", "-"], "1,2\n", monkeypatch, capsys)
    assert code == 2 and "must be a file" in err
    code, _, err = _run_cli(["monitor", str(reference_csv), "-", "--burn-in", "900"], "1,2\n",
                            monkeypatch, capsys)
    assert code == 2 and "--burn-in (900) must not exceed --max-points" in err


def test_cli_monitor_stops_when_the_reference_is_used_up(tmp_path, monkeypatch, capsys):
    ref = tmp_path / "small.csv"
    np.savetxt(ref, np.random.default_rng(23).normal(size=(50, 1)), header="a", comments="")
    stream = np.random.default_rng(24).normal(size=(80, 1))
    code, out, err = _run_cli(["monitor", str(ref), "-"], _lines(stream), monkeypatch, capsys)
    assert "used up" in err and code == 0
    assert "no alarm after 50 observation(s)" in out


def test_cli_monitor_subprocess(reference_csv):
    rng = np.random.default_rng(21)
    stream = rng.normal(size=(800, 2)) + [1.5, 0]
    proc = subprocess.run([sys.executable, "-m", "kmtests", "monitor", str(reference_csv), "-"],
                          input=_lines(stream), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("alarm at observation")


# -- validity (slow) ---------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("cls, scale", [(SequentialTwoSampleTest, "norm"),
                                        (SequentialTwoSampleTest, "adaptive"),
                                        (SequentialIndependenceTest, "norm"),
                                        (SequentialIndependenceTest, "adaptive")])
def test_ever_reject_fraction_of_null_streams(cls, scale):
    """Ville: P(ever reject) <= alpha. 300 null streams of 600 pairs at alpha = 0.1."""
    n_streams, n, alpha = 300, 600, 0.1
    rng = np.random.default_rng(2024)
    rejections = 0
    for _ in range(n_streams):
        x, y = rng.normal(size=(n, 2)), rng.normal(size=(n, 2))
        test = cls(alpha=alpha, max_points=100, payoff_scale=scale).update(x, y)
        rejections += test.reject
    upper = stats.binom.ppf(0.999, n_streams, alpha)
    assert rejections <= upper, (rejections, upper)
