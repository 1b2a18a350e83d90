"""Reports that name what ran (issue 20): every result type's ``print(res)``,
``summary()`` and ``summary_frame()`` name the statistic, its regularisation, the
estimator, the engine and the null method, in one table width and one key style.

The exact lines that matter are asserted; each test failed on the reports before
the fix (regularised tests titled as KME tests with ``MMD^2_u[tikhonov]``, NOCCO
titled HSIC, ``lam="auto"`` printing "Aggregated" and only ``min_j p_j/w_j``,
doubled ``====`` rules, tables 54 and 78 wide stacked, ``Estimator`` next to
``shrinkage (x)``, a dict column in ``compare_estimators``, no effect size in the
title of a one-effect power plot).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import kmtests
from kmtests.results._base import role_key

WIDTH = 78


def _run(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kmtests.KmtestsWarning)
        return fn(*args, **kwargs)


@pytest.fixture(scope="module")
def data():
    gen = np.random.default_rng(3)
    x, y, z = gen.normal(size=(40, 2)), gen.normal(0.5, size=(40, 2)), gen.normal(size=(40, 1))
    return x, y, z


CASES = {
    "two_sample": lambda x, y, z: kmtests.two_sample_test(x, y, n_resamples=99, rng=1),
    "skmse": lambda x, y, z: kmtests.two_sample_test(x, y, estimator="skmse", n_resamples=19,
                                                     rng=1),
    "gamma": lambda x, y, z: kmtests.two_sample_test(x, y, method="gamma"),
    "exact": lambda x, y, z: kmtests.two_sample_test(x[:4], y[:4], rng=1),
    "regularized": lambda x, y, z: kmtests.two_sample_test(
        x, y, statistic="regularized", lam=0.1, n_resamples=99, rng=1),
    "regularized_auto": lambda x, y, z: kmtests.two_sample_test(
        x, y, statistic="regularized", n_resamples=99, rng=1),
    "independence": lambda x, y, z: kmtests.independence_test(x, y, n_resamples=99, rng=1),
    "nocco": lambda x, y, z: kmtests.independence_test(
        x, y, statistic="regularized", lam=0.1, n_resamples=99, rng=1),
    "nocco_auto": lambda x, y, z: kmtests.independence_test(
        x, y, statistic="regularized", n_resamples=99, rng=1),
    "mmdagg": lambda x, y, z: kmtests.aggregated_two_sample_test(x, y, bandwidths=4,
                                                                 n_resamples=99, rng=1),
    "fuse": lambda x, y, z: kmtests.aggregated_two_sample_test(
        x, y, bandwidths=4, combination="fuse", n_resamples=99, rng=1),
    "hsicagg": lambda x, y, z: kmtests.aggregated_independence_test(
        x, y, bandwidths_x=3, bandwidths_y=3, n_resamples=99, rng=1),
    "k_sample": lambda x, y, z: kmtests.k_sample_test(x, y, x + 1.0, n_resamples=99, rng=1),
    "joint": lambda x, y, z: kmtests.joint_independence_test(x, y, z, n_resamples=99, rng=1),
    "conditional": lambda x, y, z: kmtests.conditional_independence_test(x, y, z),
    "linear": lambda x, y, z: kmtests.two_sample_test(x, y, engine="linear"),
    "block": lambda x, y, z: kmtests.two_sample_test(x, y, engine="block"),
    "nystrom": lambda x, y, z: kmtests.two_sample_test(x, y, engine="nystrom", n_features=20,
                                                       n_resamples=99, rng=1),
    "wild": lambda x, y, z: kmtests.independence_test(x, y, method="wild", n_resamples=99,
                                                      rng=1),
}

#: the kind of statistic each title names
FAMILIES = {
    "two_sample": "MMD", "skmse": "MMD", "gamma": "MMD", "exact": "MMD",
    "regularized": "spectral-regularised MMD",
    "regularized_auto": "spectral-regularised MMD, MMDAgg over lam",
    "independence": "HSIC", "nocco": "NOCCO, regularised HSIC",
    "nocco_auto": "NOCCO, regularised HSIC, HSICAgg over lam", "mmdagg": "MMDAgg",
    "fuse": "MMD-FUSE", "hsicagg": "HSICAgg", "k_sample": "MMD", "joint": "dHSIC",
    "conditional": "KCI", "linear": "linear-time MMD", "block": "B-test", "nystrom": "MMD",
    "wild": "HSIC",
}


@pytest.fixture(scope="module")
def results(data):
    return {name: _run(make, *data) for name, make in CASES.items()}


def _settings(summ: str) -> list[str]:
    lines = summ.splitlines()
    rules = [i for i, line in enumerate(lines) if line and set(line) == {"="}]
    return lines[rules[0] + 1:rules[1]]


def _keys(settings: list[str]) -> list[str]:
    """The keys of a settings table (left and right column)."""
    return re.findall(r"(?:^|  )\s*([^\s:][^:]*?): ", "\n".join(settings), re.M)


def _first_line(text: str) -> str:
    """The method line of ``print(res)`` (wrapped over the lines that start with a tab),
    unwrapped."""
    lines = text.splitlines()
    assert lines[0] == "" and lines[1].startswith("\t")
    block = [line[1:] for line in lines[1:] if line.startswith("\t")]
    return " ".join(block)


@pytest.mark.parametrize("name", list(CASES))
def test_every_report_names_what_ran(results, name):
    """Title with the kind of statistic; first line: statistic, estimator, engine, null."""
    res = results[name]
    text, summ = str(res), str(res.summary())
    title = f"{res.test_name} ({FAMILIES[name]})"
    assert res.title == title
    assert summ.splitlines()[0].strip() == title
    line = _first_line(text)
    assert line.startswith(f"{title}: {res.statistic_description}, ")
    assert f"{res.engine} engine" in line
    assert line.endswith(res.method.describe(res)) or line.endswith("exact level")
    if name not in ("joint", "conditional"):
        assert "estimator" in line
    assert "Aggregated" not in text and "Aggregated" not in summ
    frame = res.summary_frame()
    row = frame.iloc[0]
    assert row["test"] == title and row["method"] == res.method.name
    assert row["engine"] == res.engine
    assert frame.index[0] == res.statistic_name


@pytest.mark.parametrize("name", list(CASES))
def test_one_width_and_one_rule_between_tables(results, name):
    """Every rule of a summary is 78 wide, and no rule follows another."""
    summ = str(results[name].summary())
    lines = summ.splitlines()
    rules = [line for line in lines if line and set(line) <= {"=", "-"} and len(line) > 3]
    assert rules and all(len(line) == WIDTH for line in rules), summ
    for a, b in zip(lines, lines[1:]):
        assert not (a and b and set(a) == {"="} and set(b) == {"="}), summ
    assert max(len(line) for line in lines) == WIDTH


@pytest.mark.parametrize("name", list(CASES))
def test_settings_keys_are_the_names_of_the_values(results, name):
    """One key style: each settings key is a keyword or attribute name (snake_case) under
    which the value is found: the result, its method, sizes, params, details, or a
    column of summary_frame."""
    res = results[name]
    keys = _keys(_settings(str(res.summary())))
    assert keys
    frame = res.summary_frame()
    known = (set(frame.columns) | {a for a in dir(res) if not a.startswith("_")}
             | set(res.details) | {f for f in vars(res.method)}
             | {role_key("kernel", r) for r in res.kernels})
    if hasattr(res, "members_frame"):  # what all members share, or the range of what varies
        known |= set(res.members_frame().columns)
    for key in keys:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", key), (key, name)
        assert key in known, (key, name)


def test_regularized_two_sample_report(results):
    res = results["regularized"]
    text, summ = str(res), str(res.summary())
    assert res.statistic_name == "SRMMD^2_u"
    assert "[tikhonov]" not in text + summ
    assert _first_line(text) == (
        "Kernel two-sample test (spectral-regularised MMD): SRMMD^2_u, the "
        "spectral-regularised MMD^2_u (tikhonov filter, lam = 0.1, covariance operator of the "
        "pooled sample), KME (empirical) estimator, exact engine, permutation p-value (based "
        "on 99 random permutations)")
    assert re.search(r"^SRMMD\^2_u = \S+, p-value = \S+$", text, re.M)
    settings = _settings(summ)
    assert re.fullmatch(r" *filter: tikhonov +lam: 0\.1", settings[4])
    assert re.fullmatch(r" *covariance: pooled +rank: \d+", settings[5])
    row = res.summary_frame().iloc[0]
    assert (row["filter"], row["lam"], row["covariance"]) == ("tikhonov", 0.1, "pooled")


def test_regularized_independence_report_names_nocco(results):
    res = results["nocco"]
    text, summ = str(res), str(res.summary())
    assert "(HSIC)" not in text and "(HSIC)" not in summ
    assert summ.splitlines()[0].strip() == "Kernel independence test (NOCCO, regularised HSIC)"
    assert re.search(r"^NOCCO = \S+, p-value = \S+$", text, re.M)
    assert "NOCCO, the normalised cross-covariance (regularised HSIC; tikhonov filter, lam = " \
        "0.1)" in _first_line(text)
    assert re.search(r"^ *filter: tikhonov +lam: 0\.1$", summ, re.M)
    assert re.search(r"^NOCCO +\S+", summ, re.M)


@pytest.mark.parametrize("name, kind", [("regularized_auto", "SRMMD^2_u"),
                                        ("nocco_auto", "NOCCO")])
def test_lambda_grid_report_says_what_the_number_is(results, name, kind):
    res = results[name]
    text, summ = str(res), str(res.summary())
    lams = [m["lam"] for m in res.members]
    assert len(lams) == 10
    agg = "MMDAgg" if name == "regularized_auto" else "HSICAgg"
    assert (f"min_j p_j/w_j, the weighted minimum of the permutation p-values of 10 members: "
            f"{kind} (tikhonov filter) with lam from {min(lams):.4g} to {max(lams):.4g} "
            f"({agg}),") in _first_line(text)
    settings = _settings(summ)
    assert settings[0] == ("  statistic: min_j p_j/w_j (the weighted minimum of the members' "
                           "p-values)")
    keys = dict(re.findall(r"(?:^|  )\s*([a-z_]+): (\S+(?: to \S+)?)", "\n".join(settings),
                           re.M))
    assert keys["filter"] == "tikhonov" and keys["combination"] == "mmdagg"
    assert keys["lam"] == f"{min(lams):.4g} to {max(lams):.4g}"
    row = res.summary_frame().iloc[0]
    assert row["members"] == 10 and row["combination"] == "mmdagg"
    assert row["lam_min"] == min(lams) and row["lam_max"] == max(lams)
    assert "members" in summ and res.members_frame().shape[0] == 10


def test_aggregated_frame_has_no_member_bandwidth(results):
    """The frame of an aggregated test gave the first member's bandwidth as *the*
    bandwidth; it gives the range of the members' (and their number)."""
    res = results["mmdagg"]
    row = res.summary_frame().iloc[0]
    bws = [m["bandwidth"] for m in res.members]
    assert "bandwidth" not in row.index
    assert (row["bandwidth_min"], row["bandwidth_max"], row["members"]) == (min(bws),
                                                                            max(bws), 4)


def test_gamma_tables_have_one_width(results):
    """The gamma report stacked a 54-wide result table under the 78-wide settings."""
    summ = str(results["gamma"].summary())
    lines = summ.splitlines()
    i = next(i for i, line in enumerate(lines) if line.lstrip().startswith("statistic"))
    assert lines[i - 1] == "=" * WIDTH and lines[i + 1] == "-" * WIDTH
    assert re.fullmatch(r"MMD\^2_b +\S+ +\S+", lines[i + 2]) and len(lines[i + 2]) == WIDTH


def test_members_table_is_as_wide_as_the_report(results):
    summ = str(results["hsicagg"].summary())
    lines = summ.splitlines()
    i = lines.index(next(line for line in lines if line.strip() == "Members"))
    assert lines[i - 1] == "=" * WIDTH and lines[i + 1] == "=" * WIDTH
    assert re.fullmatch(r" +bandwidth_x +bandwidth_y +statistic +p-value +rejects",
                        lines[i + 2]) and len(lines[i + 2]) == WIDTH


def test_compare_estimators_has_numeric_columns():
    gen = np.random.default_rng(0)
    x, y = gen.normal(size=(30, 3)), gen.normal(0.3, size=(30, 3))
    t = _run(kmtests.compare_estimators, x, y, estimators=["kme", "skmse", "mmkme"],
             n_resamples=19, rng=1)
    assert "parameters" not in t.columns
    assert not any(isinstance(v, dict) for v in t.to_numpy().ravel())
    for col in ("shrinkage_x", "shrinkage_y", "loocv_x", "diag_0", "diag_2", "sigma2_init"):
        assert t[col].dtype == np.float64, col
    res = _run(kmtests.two_sample_test, x, y, estimator="mmkme", n_resamples=19, rng=1)
    diag = res.params["pooled"]["diag"]
    assert [t.loc[2, f"diag_{i}"] for i in range(3)] == diag
    assert np.isnan(t.loc[0, "shrinkage_x"])
    assert list(t["engine"]) == ["exact"] * 3 and list(t["method"]) == ["permutation"] * 3
    assert list(t["seed"]) == [1, 1, 1]


def test_single_effect_power_plot_names_its_effect():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kmtests.power import power_curve

    res = _run(power_curve, "mean_shift", sample_sizes=[10, 20], effects=[0.75],
               repetitions=3, n_resamples=9, rng=0)
    ax = res.plot()
    assert ax.get_title().startswith("mean_shift (effect = 0.75): ")
    other = _run(power_curve, "mean_shift", sample_sizes=[12], effects=[0.5, 1.0],
                 repetitions=3, n_resamples=9, rng=0)
    assert other.plot().get_title().startswith("mean_shift (n = 12): ")
    with pytest.raises(ValueError, match="`at` must be one of the study's effect values"):
        res.plot(at=0.5)
    plt.close("all")


def test_power_summary_one_width_one_key_style():
    from kmtests.power import power_curve

    res = _run(power_curve, "mean_shift", estimators=["kme", "skmse"], sample_sizes=[10],
               effects=[0.5], repetitions=3, n_resamples=9, rng=0)
    lines = str(res.summary()).splitlines()
    rules = [line for line in lines if line and set(line) <= {"=", "-"}]
    assert rules and {len(line) for line in rules} == {WIDTH}
    assert re.fullmatch(r" *scenario: mean_shift +test: .+", lines[2])
    assert re.fullmatch(r" *n_resamples: 9 +seed: 0", lines[4])
    assert "estimator: kme" in lines and "estimator: skmse" in lines
    for a, b in zip(lines, lines[1:]):
        assert not (a and b and set(a) == {"="} and set(b) == {"="})
