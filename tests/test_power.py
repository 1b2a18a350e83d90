"""Power studies: reproducibility, common random numbers, resume, plots, dask."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from kmtests.datasets import SCENARIOS, get_scenario
from kmtests.estimators import KME
from kmtests.power import power_curve


class KMECopy(KME):
    name = "kme_copy"


def test_scenarios_null_and_shapes():
    for s in SCENARIOS.values():
        data = s.sample(12, 0.0, rng=1)
        assert len(data) == (3 if s.kind in ("k_sample", "joint", "conditional")
                             else 1 if s.kind == "one_sample" else 2)
        assert all(a.shape[0] == 12 and np.all(np.isfinite(a)) for a in data)
    with pytest.raises(ValueError, match="at most 35 observations"):
        get_scenario("eckerle").sample(36)
    with pytest.raises(ValueError, match="`scenario` must be one of"):
        get_scenario("nope")


def test_reproducible_and_common_random_numbers():
    kw = dict(sample_sizes=[8, 16], effects=[0.8], repetitions=6, n_resamples=49, rng=3)
    a = power_curve("mean_shift", estimators=["kme", KMECopy()], **kw)
    b = power_curve("mean_shift", estimators=["kme", KMECopy()], **kw)
    pd.testing.assert_frame_equal(a.raw, b.raw)
    # the same data and permutations for every estimator: identical estimators agree exactly
    p = a.raw.pivot_table(index=["n", "repetition"], columns="estimator", values="pvalue")
    np.testing.assert_array_equal(p["kme"], p["kme_copy"])
    c = power_curve("mean_shift", estimators=["kme", KMECopy()], **{**kw, "rng": 4})
    assert not np.array_equal(a.raw["pvalue"], c.raw["pvalue"])


def test_parallel_equals_serial():
    kw = dict(sample_sizes=[10], effects=[0.0, 1.0], repetitions=5, n_resamples=49, rng=11)
    serial = power_curve("linear", **kw)
    par = power_curve("linear", n_jobs=2, **kw)
    pd.testing.assert_frame_equal(serial.raw, par.raw)


def test_dask_backend_equals_serial():
    distributed = pytest.importorskip("distributed")
    from joblib import parallel_config

    kw = dict(sample_sizes=[10], effects=[1.0], repetitions=4, n_resamples=49, rng=5)
    serial = power_curve("circular", **kw)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        with parallel_config(backend="dask"):
            par = power_curve("circular", n_jobs=-1, **kw)
    pd.testing.assert_frame_equal(serial.raw, par.raw)


def test_checkpoint_resume(tmp_path):
    path = tmp_path / "study.csv"
    kw = dict(sample_sizes=[8], effects=[0.5], n_resamples=49, rng=9)
    power_curve("variance_shift", repetitions=4, checkpoint=path, **kw)
    assert len(pd.read_csv(path, comment="#")) == 4
    resumed = power_curve("variance_shift", repetitions=8, checkpoint=path, **kw)
    fresh = power_curve("variance_shift", repetitions=8, **kw)
    pd.testing.assert_frame_equal(resumed.raw, fresh.raw)
    # a sub-design read back from the file holds only its own rows; the file keeps all
    sub = power_curve("variance_shift", repetitions=3, checkpoint=path, **kw)
    pd.testing.assert_frame_equal(sub.raw, fresh.raw[fresh.raw["repetition"] < 3])
    assert len(pd.read_csv(path, comment="#")) == 8


def test_rows_do_not_depend_on_the_rest_of_the_design():
    # a repetition's seed is keyed by (n, effect, repetition), not by its position
    kw = dict(effects=[0.5, 1.0], repetitions=3, n_resamples=19, rng=2)
    big = power_curve("mean_shift", sample_sizes=[8, 16], **kw).raw
    small = power_curve("mean_shift", sample_sizes=[16], **{**kw, "effects": [1.0]}).raw
    pd.testing.assert_frame_equal(
        big[(big["n"] == 16) & (big["effect"] == 1.0)].reset_index(drop=True), small)


def test_table_power_and_interval():
    res = power_curve("mean_shift", sample_sizes=[10, 40], effects=[1.0], repetitions=30,
                      n_resamples=99, rng=1, alpha=[0.05, 0.1])
    t = res.table()
    assert set(t.columns) >= {"power", "ci_low", "ci_high", "mean_pvalue", "alpha", "n"}
    t5 = t[t["alpha"] == 0.05].set_index("n")
    assert t5.loc[40, "power"] > t5.loc[10, "power"]  # power grows with n
    for _, r in t.iterrows():
        k, m = r["rejections"], r["repetitions"]
        assert r["power"] == k / m
        lo = stats.beta.ppf(0.025, k, m - k + 1) if k > 0 else 0.0
        assert r["ci_low"] == pytest.approx(lo, abs=1e-12)
    assert (t[t["alpha"] == 0.1]["power"].to_numpy() >= t5["power"].to_numpy()).all()
    text = str(res.summary())
    assert "Power study: mean_shift (alpha = 0.05)" in text and "estimator: kme" in text


def test_level_at_zero_effect():
    res = power_curve("sinusoidal", sample_sizes=[15], effects=[0.0], repetitions=200,
                      n_resamples=99, rng=21)
    k = int(res.table()["rejections"].iloc[0])
    assert stats.binom.ppf(0.005, 200, 0.05) <= k <= stats.binom.ppf(0.995, 200, 0.05)


def _table_blocks(text):
    """The tables of a summary: lists of lines between '=' rules, title excluded."""
    blocks, cur = [], None
    for line in text.splitlines():
        if set(line.strip()) == {"="}:
            if cur is None:
                cur = []
            else:
                blocks.append(cur)
                cur = None
        elif cur is not None and set(line.strip()) != {"-"}:
            cur.append(line)
    return blocks


def test_summary_columns_are_aligned_and_fit_80_columns():
    import re

    res = power_curve("mean_shift", estimators=["kme", "skmse", KMECopy()],
                      sample_sizes=[8, 100], effects=[0.25, 1.0], repetitions=3,
                      n_resamples=9, rng=0)
    text = str(res.summary())
    assert max(len(line) for line in text.splitlines()) <= 80
    blocks = _table_blocks(text)
    assert len(blocks) == 4  # the settings, then one table per estimator
    assert "scenario:" in blocks[0][0] and "n_resamples:" in "".join(blocks[0])
    for est, block in zip(["kme", "skmse", "kme_copy"], blocks[1:]):
        header, *rows = block
        assert header.split() == ["n", "effect", "reps", "rejected", "power", "ci_low",
                                  "ci_high", "mean_p"]
        assert len(rows) == 4
        ends = [m.end() for m in re.finditer(r"\S+", header)]
        for row in rows:  # every column right-aligned under its header
            assert [m.end() for m in re.finditer(r"\S+", row)] == ends, (header, row)
        assert f"estimator: {est}" in text
    row = blocks[1][1].split()
    t = res.table()
    first = t[(t["estimator"] == "kme") & (t["alpha"] == 0.05)].iloc[0]
    assert row == [str(first["n"]), f"{first['effect']:g}", "3", str(first["rejections"]),
                   f"{first['power']:.3f}", f"{first['ci_low']:.3f}", f"{first['ci_high']:.3f}",
                   f"{first['mean_pvalue']:.3f}"]


def test_summary_of_long_names_fits_80_columns():
    from dataclasses import replace

    from kmtests.datasets import get_scenario

    scen = replace(get_scenario("linear"), name="linear_with_a_rather_long_custom_name")
    label = "kme_" + "configured_" * 8
    res = power_curve(scen, estimators={label: KME()}, sample_sizes=[8], repetitions=2,
                      n_resamples=9, rng=0)
    text = str(res.summary())
    assert max(len(line) for line in text.splitlines()) <= 80
    flat = " ".join(text.split())  # the notes are wrapped
    assert "Scenario linear_with_a_rather_long_custom_name: x ~ N(0, 1)" in flat
    assert label in flat.replace(" ", "") and "estimator: kme_configured_" in text


def test_plot(tmp_path):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    res = power_curve("heavy_tails", estimators=["kme", KMECopy(), "skmse"],
                      sample_sizes=[10, 20], repetitions=4, n_resamples=19, rng=0)
    ax = res.plot()
    assert ax.get_xlabel() == "sample size n"
    lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    # one line per estimator (kme and kme_copy coincide, yet both are drawn) ...
    assert [ln.get_label() for ln in lines] == ["kme", "kme_copy", "skmse"]
    # ... each with its own colour, line style and marker
    assert len({to_hex(ln.get_color()) for ln in lines}) == 3
    assert len({str(ln.get_linestyle()) for ln in lines}) == 3
    assert len({ln.get_marker() for ln in lines}) == 3
    # dodged sideways so that coinciding estimators do not hide each other
    x0, x1 = lines[0].get_xdata(), lines[1].get_xdata()
    assert np.all(x0 != x1) and np.allclose(x0, x1, atol=2.5)
    assert "heavy_tails" in ax.get_title() and "df = 1/effect" in ax.get_title()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["kme", "kme_copy", "skmse"]
    ax.figure.savefig(tmp_path / "p.png")
    plt.close(ax.figure)
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_plot_never_joins_different_effects_in_one_line():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    res = power_curve("linear", sample_sizes=[8, 16], effects=[0.0, 1.0], repetitions=4,
                      n_resamples=19, rng=0)
    ax = res.plot()
    line = [ln for ln in ax.get_lines() if ln.get_label() == "kme"][0]
    t = res.table()
    assert np.array_equal(line.get_ydata(), t[t["effect"] == 1.0]["power"])
    assert ax.get_title().startswith("linear (effect = 1): x ~ N(0, 1)")
    plt.close(ax.figure)
    ax = res.plot(at=0.0)
    assert ax.get_title().startswith("linear (effect = 0): ")
    plt.close(ax.figure)
    with pytest.raises(ValueError, match=r"`at` must be one of the study's effect values "
                                         r"\[0.0, 1.0\]; got 0.5"):
        res.plot(at=0.5)


def test_progress_bar(capsys):
    pytest.importorskip("tqdm")
    power_curve("linear", sample_sizes=[8], repetitions=3, n_resamples=19, rng=0, progress=True)
    assert "power linear" in capsys.readouterr().err


def test_bad_arguments():
    with pytest.raises(ValueError, match="`estimators` must have distinct names"):
        power_curve("linear", estimators=["kme", "kme"])
    with pytest.raises(ValueError, match="`alpha` must be in"):
        power_curve("linear", alpha=1.5)
    with pytest.raises(ValueError, match="must not contain 'rng'"):
        power_curve("linear", test_kwargs={"rng": 1})
    with pytest.raises(ValueError, match="`repetitions` must be a positive integer"):
        power_curve("linear", repetitions=0)


@pytest.mark.parametrize("n_jobs", [0, -5, 1.5, True])
def test_bad_n_jobs(n_jobs):
    with pytest.raises(ValueError, match=r"`n_jobs` must be None, -1 or a positive integer; "
                                         rf"got {n_jobs!r}"):
        power_curve("linear", n_jobs=n_jobs)


def test_empty_and_repeated_designs_are_refused():
    with pytest.raises(ValueError, match=r"`sample_sizes` must contain at least one value"):
        power_curve("linear", sample_sizes=[])
    with pytest.raises(ValueError, match=r"`sample_sizes` must not repeat a value; got \[10, 10\]"):
        power_curve("linear", sample_sizes=[10, 10])
    with pytest.raises(ValueError, match=r"`effects` must not repeat a value; got \[0.5, 0.5\]"):
        power_curve("linear", effects=[0.5, 0.5])
    with pytest.raises(ValueError, match=r"`effects` must be finite numbers; got \[nan\]"):
        power_curve("linear", effects=[float("nan")])
    with pytest.raises(ValueError, match=r"`estimators` must name at least one estimator"):
        power_curve("linear", estimators=[])
    with pytest.raises(ValueError, match=r"`test_kwargs` must be options of independence_test; "
                                         r"got \['kernel'\]"):
        power_curve("linear", test_kwargs={"kernel": "gaussian"})
    with pytest.raises(ValueError, match=r"`estimator` must be one of .* got 'nope'"):
        power_curve("linear", estimators=["nope"])


def test_missing_extras_fail_before_the_study(monkeypatch):
    import sys

    import kmtests

    def never(*args, **kwargs):  # pragma: no cover - must not run
        raise AssertionError("the study ran")

    monkeypatch.setattr(kmtests, "independence_test", never)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.raises(ImportError, match=r"`progress=True` needs tqdm, which is not installed: "
                                          r"pip install 'kmtests\[power\]'"):
        power_curve("linear", progress=True)
    monkeypatch.setitem(sys.modules, "joblib", None)
    with pytest.raises(ImportError, match=r"`n_jobs` needs joblib, which is not installed"):
        power_curve("linear", n_jobs=2)


def test_non_finite_statistic_is_an_error(monkeypatch):
    import dataclasses

    import kmtests

    real = kmtests.independence_test
    monkeypatch.setattr(kmtests.independence, "independence_test",
                        lambda *a, **k: dataclasses.replace(real(*a, **k),
                                                            statistic=float("nan")))
    with pytest.raises(ValueError, match=r"the kme test returned statistic nan and p-value .* "
                                         r"for n = 8, effect = 0.3, repetition 0"):
        power_curve("linear", sample_sizes=[8], repetitions=2, n_resamples=9, rng=0)


def test_cli_power(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from kmtests import cli as _cli

    out, png = tmp_path / "t.csv", tmp_path / "p.png"
    rc = _cli.main(["power", "--scenario", "mean_shift", "--n", "8,16", "--effects", "1",
                    "--reps", "5", "--n-resamples", "19", "--seed", "1", "--out", str(out),
                    "--plot", str(png)])
    assert rc == 0
    t = pd.read_csv(out)
    assert list(t["n"]) == [8, 16] and t["repetitions"].eq(5).all()
    assert png.stat().st_size > 1000
    assert "Power study: mean_shift" in capsys.readouterr().out
    assert _cli.main(["power", "--scenario", "nope"]) == 2


def test_power_curve_compares_tests_on_the_same_data_and_permutations():
    import kmtests

    tests = {
        "MMD": {"statistic": "unbiased"},
        "SR-MMD": {"statistic": "regularized", "lam": 1e-3},
        "MMDAgg": {"aggregated": True, "bandwidths": 3},
        "callable": lambda x, y, *, n_resamples, rng: kmtests.two_sample_test(
            x, y, statistic="unbiased", n_resamples=n_resamples, rng=rng),
    }
    res = power_curve("mean_shift", tests=tests, sample_sizes=[12], effects=[0.8],
                      repetitions=4, n_resamples=49, rng=3)
    raw = res.raw
    assert sorted(raw["estimator"].unique()) == sorted(tests)
    # the callable runs the same test on the same data with the same permutations
    a = raw[raw["estimator"] == "MMD"]["pvalue"].to_numpy()
    b = raw[raw["estimator"] == "callable"]["pvalue"].to_numpy()
    np.testing.assert_array_equal(a, b)
    # and each row is the test re-run on the scenario's data with the task's seeds
    from kmtests.datasets import get_scenario
    from kmtests.studies.power import _task_seed

    root = np.random.SeedSequence(3)
    data_seed, perm_seed = _task_seed(root, 12, 0.8, 2).spawn(2)
    x, y = get_scenario("mean_shift").sample(12, 0.8, np.random.default_rng(data_seed))
    want = kmtests.aggregated_two_sample_test(x, y, bandwidths=3, n_resamples=49,
                                              rng=np.random.default_rng(perm_seed)).pvalue
    got = raw[(raw["estimator"] == "MMDAgg") & (raw["repetition"] == 2)]["pvalue"].item()
    assert got == want
    with pytest.raises(ValueError, match="n_resamples"):
        power_curve("mean_shift", tests={"x": {"n_resamples": 9}}, repetitions=1)
    with pytest.raises(TypeError, match="tests"):
        power_curve("mean_shift", tests={"x": 3}, repetitions=1)


def test_tests_inside_a_study_show_no_progress_bar_of_their_own(monkeypatch, capsys):
    """The study has its own progress display; a per-test bar (tests expected to take more
    than PROGRESS_SECONDS) flooded the output of a study with one bar per repetition."""
    pytest.importorskip("tqdm")
    from kmtests import independence_test
    from kmtests.null import permutation as _resampling
    from kmtests.power import power_curve

    monkeypatch.setattr(_resampling, "PROGRESS_SECONDS", -1.0)  # every test "is slow"
    monkeypatch.setattr(_resampling, "_interactive", lambda: True)  # as on a terminal
    x = np.random.default_rng(0).normal(size=(12, 1))
    independence_test(x, x, n_resamples=19, rng=0)
    assert "permutations" in capsys.readouterr().err  # the bar a single test shows
    for tests in (None, {"kme U": {"statistic": "unbiased"}}):
        kw = {"estimators": ["kme"]} if tests is None else {"tests": tests}
        power_curve("eckerle", sample_sizes=[6], effects=[1.0], repetitions=2,
                    n_resamples=19, rng=0, **kw)
        assert "permutations" not in capsys.readouterr().err


def test_block_and_linear_engines_run_without_permutation_options():
    """engine='block'/'linear' have an asymptotic normal null and refuse `n_resamples`
    and `rng`; the study passes them none and records the null of each row."""
    import kmtests
    from kmtests.datasets import get_scenario
    from kmtests.studies.power import _task_seed

    tests = {"MMD": {}, "B-test": {"engine": "block"}, "linear": {"engine": "linear"}}
    res = power_curve("mean_shift", tests=tests, sample_sizes=[20], effects=[1.0],
                      repetitions=3, n_resamples=19, rng=0)
    raw = res.raw
    assert list(raw.columns[-2:]) == ["pvalue", "null"]
    assert dict(zip(raw["estimator"], raw["null"])) == {
        "MMD": "permutation", "B-test": "normal", "linear": "normal"}
    data_seed, _ = _task_seed(np.random.SeedSequence(0), 20, 1.0, 1).spawn(2)
    x, y = get_scenario("mean_shift").sample(20, 1.0, np.random.default_rng(data_seed))
    for label, engine in (("B-test", "block"), ("linear", "linear")):
        got = raw[(raw["estimator"] == label) & (raw["repetition"] == 1)]["pvalue"].item()
        assert got == kmtests.two_sample_test(x, y, engine=engine).pvalue
    assert "B-test, linear: asymptotic normal null (no permutations)" in str(res.summary())
    # the same through test_kwargs, for every estimator
    lin = power_curve("mean_shift", estimators=["kme"], test_kwargs={"engine": "linear"},
                      sample_sizes=[20], effects=[1.0], repetitions=3, n_resamples=19, rng=0)
    np.testing.assert_array_equal(lin.raw["pvalue"], raw[raw["estimator"] == "linear"]["pvalue"])
    assert (lin.raw["null"] == "normal").all()


def test_k_sample_and_dependent_scenarios():
    """Every scenario kind runs its own test; options of dependent data reach it."""
    r = power_curve("k_sample_shift_k3", sample_sizes=[10], effects=[0.0, 2.0], repetitions=3,
                    n_resamples=49, rng=1)
    assert set(r.raw["test"]) == {"k_sample"}
    assert r.raw["pvalue"].between(0, 1).all()
    assert r.raw.loc[r.raw["effect"] == 2.0, "pvalue"].mean() \
        < r.raw.loc[r.raw["effect"] == 0.0, "pvalue"].mean()
    w = power_curve("ar1_pair_phi0.8", sample_sizes=[40], effects=[0.0], repetitions=2,
                    n_resamples=19, rng=1, tests={"wild": {"method": "wild"},
                                                  "blocks": {"blocks": 10}})
    assert dict(zip(w.raw["estimator"], w.raw["null"])) == {"wild": "wild",
                                                            "blocks": "permutation"}
    with pytest.raises(TypeError, match="must return a result"):
        power_curve("k_sample_shift_k3", sample_sizes=[10], effects=[0.0], repetitions=1,
                    n_resamples=19, rng=1, tests={"f": lambda a, b, c, n_resamples, rng: 0.5})


def test_joint_and_conditional_scenarios_and_deterministic_nulls():
    """Every kind runs its test; nulls without random draws (gamma) get no permutation
    options (power_curve with method='gamma' failed before: 'has no permutations')."""
    g = power_curve("mean_shift", sample_sizes=[10], effects=[0.5], repetitions=2, rng=1,
                    test_kwargs={"method": "gamma", "statistic": "biased"})
    assert set(g.raw["null"]) == {"gamma"}
    assert "Nulls computed without random draws" in g.summary().as_text()
    j = power_curve("xor_joint", sample_sizes=[40], effects=[0.0, 2.0], repetitions=2,
                    n_resamples=49, rng=1)
    assert set(j.raw["test"]) == {"joint"} and set(j.raw["null"]) == {"permutation"}
    c = power_curve("conditional_sine_f6", sample_sizes=[80], effects=[0.0], repetitions=2,
                    rng=1, tests={"tuned": {}, "chi2": {"method": "chi2"}})
    assert dict(zip(c.raw["estimator"], c.raw["null"])) == {"tuned": "gamma", "chi2": "chi2"}
    with pytest.raises(ValueError, match="has no kernel mean estimator option"):
        power_curve("conditional_sine_f6", estimators=["skmse"], sample_sizes=[80],
                    effects=[0.0], repetitions=1, rng=1)
