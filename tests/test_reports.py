"""What users see first: the printed reports (``print(res)``, ``res.summary()``).

Widths, alignment and the exact text of the lines that matter are asserted,
for every registered estimator, both tests, both tunings, the three null
methods, several kernels and pandas inputs.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

import kmtests
from kmtests._summary import Summary, format_pvalue, format_value, result_table
from kmtests.estimators import ESTIMATORS

MAX = 80          # every printed line
TABLE = 78        # every summary line


def _run(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kmtests.KmtestsWarning)
        return fn(*args, **kwargs)


def _settings(summary_text: str) -> list[str]:
    """The lines of the settings table (between its two '=' rules)."""
    lines = summary_text.splitlines()
    rules = [i for i, line in enumerate(lines) if line and set(line) == {"="}]
    return lines[rules[0] + 1:rules[1]]


def _colons(line: str) -> tuple[int, int | None]:
    """Positions of the separators of the left and the right column of a settings line."""
    left = re.match(r"^ *[^ :][^:]*:", line)
    assert left, line
    half = (TABLE - 1) // 2
    right = re.match(r"^ *[^ :][^:]*:", line[half + 1:])
    return left.end() - 1, None if right is None else half + 1 + right.end() - 1


def check_report(res) -> tuple[str, str]:
    """Widths, alignment and the key fields of both reports of `res`; returns their text."""
    text, summ = str(res), str(res.summary())
    for line in text.splitlines():
        assert len(line.expandtabs()) <= MAX, line
    for line in summ.splitlines():
        assert len(line) <= TABLE, line
    settings = _settings(summ)
    assert all(len(line) <= TABLE for line in settings)
    cols = [_colons(line) for line in settings]
    assert len({c[0] for c in cols}) == 1, "\n".join(settings)       # left separators
    assert len({c[1] for c in cols if c[1] is not None}) <= 1, "\n".join(settings)
    # the key fields
    assert re.search(rf"^ *estimator: {res.estimator.name}\b", summ, re.M)
    assert re.search(rf"(^ *| )engine: {res.engine}\b", summ, re.M)
    assert re.search(r"^ *method: (permutation|permutation \(exact\)|gamma \(approx\.\))( |$)",
                     summ, re.M)
    assert re.search(rf"^{re.escape(res.statistic_name)} ", summ, re.M)   # result table stub
    assert "Notes:\n[1] Alternative hypothesis: " in summ
    stat_line = f"{res.statistic_name} = "
    assert any(line.startswith(stat_line) and ", p-value " in line
               for line in text.splitlines())
    assert "= <" not in text and "= <" not in summ
    if "n_x" in res.sizes:
        assert re.search(rf"^ *n_x: {res.sizes['n_x']} +n_y: {res.sizes['n_y']}$", summ, re.M)
    else:
        assert re.search(rf"\bn: {res.sizes['n']}\b", summ)
    return text, summ


def _param_checks(res, summ: str) -> None:
    """Parameters by role: x left and y right on one line; one-role parameters one a line."""
    settings = _settings(summ)
    params = {r: p for r, p in res.params.items() if p}
    if "x" in params and "y" in params:
        for k in params["x"]:
            assert any(re.match(rf"^ *{re.escape(k)}_x: .* {re.escape(k)}_y: ", line)
                       for line in settings), (k, summ)
    for role in set(params) - {"x", "y"}:
        for k in params[role]:
            line = next(line for line in settings if re.match(rf"^ *{re.escape(k)}: ", line))
            assert line.count(":") == 1, line


# -- the grid: every estimator x both tests x both tunings x methods ------------------------
def _grid():
    for est in ESTIMATORS:
        for test in ("two_sample", "independence"):
            for tuning in ("permutation", "pooled"):
                if est == "tsvd" and tuning == "pooled":
                    continue  # refused: a rank does not transfer (tested elsewhere)
                d = 30 if est == "mmkme" else 3
                yield pytest.param(est, test, tuning, d, id=f"{est}-{test}-{tuning}-d{d}")


@pytest.fixture(scope="module")
def data():
    gen = np.random.default_rng(11)
    return {d: (gen.normal(size=(18, d)), gen.normal(0.4, size=(18, d))) for d in (3, 30)}


@pytest.mark.parametrize("est, test, tuning, d", list(_grid()))
def test_report_grid(data, est, test, tuning, d):
    x, y = data[d]
    fn = kmtests.two_sample_test if test == "two_sample" else kmtests.independence_test
    res = _run(fn, x, y, estimator=est, tuning=tuning, n_resamples=19, rng=3)
    text, summ = check_report(res)
    _param_checks(res, summ)
    assert "p 95% MC low" in summ and "p 95% MC high" in summ
    assert "95 percent Monte Carlo interval of the p-value: [" in text
    settings = _settings(summ)
    if test == "independence":
        i = next(i for i, line in enumerate(settings) if "kernel_x:" in line)
        assert re.match(r"^ *kernel_x: .+ kernel_y: ", settings[i])
        assert re.match(r"^ *bandwidth_x: .+ bandwidth_y: ", settings[i + 1])
    else:
        assert any(re.match(r"^ *kernel: Gaussian", line) for line in settings)
        assert any(re.match(r"^ *bandwidth: \S+ \(median\)$", line) for line in settings)
    if est != "kme":
        assert re.search(rf"^ *estimator: {est} +tuning: {res.tuning}$", summ, re.M)
    if res.kernel_notes:
        assert "(marg" in "\n".join(settings)
        assert "is marginalized by the estimator: the test uses" in summ
    if est == "mmkme":  # 30 per-coordinate variances, summarised
        assert re.search(r"diag(?:_[xy])?: 30 (values )?in \[", summ)
        assert "Lists are summarised in the table" in summ


@pytest.mark.parametrize("test", ["two_sample", "independence"])
def test_report_gamma_and_exact(data, test):
    x, y = data[3]
    fn = kmtests.two_sample_test if test == "two_sample" else kmtests.independence_test
    kw = {"statistic": "biased"} if test == "two_sample" else {}
    res = _run(fn, x, y, method="gamma", **kw)
    text, summ = check_report(res)
    assert re.search(r"^ *method: gamma \(approx\.\) +moments: permutation$", summ, re.M)
    assert re.search(r"^ *gamma_shape: \S+ +gamma_scale: \S+$", summ, re.M)
    assert "MC low" not in summ and "Monte Carlo interval" not in text
    assert text.rstrip().endswith("note: approximate p-value (gamma approximation to the null)")

    small = _run(fn, x[:4], y[:4], rng=0)
    assert small.exact
    text, summ = check_report(small)
    n = small.n_resamples
    assert re.search(rf"^ *method: permutation \(exact\) +n_resamples: {n} \(all\)$", summ, re.M)
    assert "seed:" not in summ and "MC low" not in summ
    assert f"exact permutation p-value (all {n} arrangements)" in text.replace("\n\t", " ")
    assert "95 percent Monte Carlo interval" not in text


KERNELS = {
    "laplacian": {"kernel": "laplacian"},
    "ard": {"kernel": "ard"},
    "linear": {"kernel": "linear"},
    "polynomial": {"kernel": "polynomial"},
    "distance": {"kernel": "distance"},
    "callable": {"kernel": lambda a, b: (a @ b.T + 1.0) ** 2},
    "fixed": {"kernel": kmtests.kernels.Gaussian(bandwidth=2.5)},
}


@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("est", ["kme", "fkmse"])
def test_report_kernels(data, name, est):
    x, y = data[30]
    kw = KERNELS[name]
    res = _run(kmtests.two_sample_test, x, y, estimator=est, n_resamples=19, rng=1, **kw)
    _, summ = check_report(res)
    settings = _settings(summ)
    kern = next(line for line in settings if re.match(r"^ *kernel: ", line))
    label = {"ard": "ARD Gaussian", "fixed": "Gaussian", "callable": "user callable"}
    assert kern.split(": ", 1)[1].startswith(label.get(name, name.capitalize()))
    bw = [line for line in settings if re.match(r"^ *bandwidth: ", line)]
    if name in ("laplacian", "ard"):
        assert bw and bw[0].endswith("(median)")
    elif name == "fixed":
        assert bw and bw[0].split(": ", 1)[1] == "2.5"
    else:
        assert not bw
    if name == "ard":  # 30 bandwidths, summarised
        assert re.search(r"bandwidth: 30 values in \[\S+, \S+\] \(median\)", summ)
    ind = _run(kmtests.independence_test, x, y[:, :2], kernel_x=kw["kernel"],
               estimator=est, n_resamples=19, rng=1)
    _, isumm = check_report(ind)
    if name == "polynomial":  # the whole description fits one column, not a half
        assert kern.endswith("kernel: Polynomial (degree = 2, coef0 = 1)")
        assert re.search(r"^ *kernel_x: Polynomial \(\.\.\.\) +kernel_y: Gaussian$",
                         isumm, re.M)
        assert "In full: kernel_x: Polynomial (degree = 2, coef0 = 1)." in isumm


def test_report_precomputed():
    gen = np.random.default_rng(5)
    z = gen.normal(size=(20, 2))
    K = np.exp(-0.5 * ((z[:, None, :] - z[None, :, :]) ** 2).sum(-1))
    res = kmtests.two_sample_test(K, 10, kernel="precomputed", n_resamples=19, rng=1)
    _, summ = check_report(res)
    assert re.search(r"^ *kernel: Precomputed$", summ, re.M)
    assert "bandwidth" not in summ
    ind = kmtests.independence_test(K, z[:, 0], kernel_x="precomputed", n_resamples=19, rng=1)
    _, summ = check_report(ind)
    assert re.search(r"^ *kernel_x: Precomputed +kernel_y: Gaussian$", summ, re.M)
    assert re.search(r"^ *bandwidth_x: - +bandwidth_y: \S+ \(median\)$", summ, re.M)


def test_report_given_estimator_parameter(data):
    x, y = data[3]
    res = kmtests.two_sample_test(x, y, estimator=kmtests.estimators.SKMSE(shrinkage=0.25),
                                  n_resamples=19, rng=1)
    _, summ = check_report(res)
    assert re.search(r"^ *shrinkage: 0\.25 \(given\)$", summ, re.M)


# -- specific defects of the issue ---------------------------------------------------------
def test_mmkme_summary_fits_80_columns():
    """It was 160 characters wide: a list parameter printed at full precision."""
    gen = np.random.default_rng(0)
    x, y = gen.normal(size=(30, 30)), gen.normal(0.5, size=(30, 30))
    res = _run(kmtests.two_sample_test, x, y, estimator="mmkme", n_resamples=99, rng=1)
    _, summ = check_report(res)
    assert max(len(line) for line in summ.splitlines()) == TABLE
    assert re.search(r"^ +diag: 30 values in \[\d\.\d+, \d\.\d+\]$", summ, re.M)
    assert re.search(r"^ *at_boundary: \d+ of 30$", summ, re.M)
    value = re.search(r"^ *sigma2_init: (\S+)$", summ, re.M).group(1)
    assert len(value.split("e")[0].replace(".", "").lstrip("0")) <= 4          # 4 digits
    assert float(value) == pytest.approx(res.params["pooled"]["sigma2_init"], rel=1e-3)
    assert "ARD Gaussian (bandwidth = 30 values in [" in summ.replace("\n    ", " ")


def test_settings_pairs_sit_on_one_line(rng):
    x, y = rng.normal(size=(25, 2)), rng.normal(size=(30, 2))
    res = kmtests.two_sample_test(x, y, estimator="skmse", n_resamples=19, rng=1)
    settings = _settings(str(res.summary()))
    assert re.fullmatch(r" *estimator: skmse +tuning: permutation", settings[0])
    assert re.fullmatch(r" *engine: exact", settings[1])
    assert re.fullmatch(r" *n_x: 25 +n_y: 30", settings[2])
    assert re.fullmatch(r" *kernel: Gaussian", settings[3])
    assert re.fullmatch(r" *bandwidth: \S+ \(median\)", settings[4])
    assert re.fullmatch(r" *shrinkage_x: \S+ +shrinkage_y: \S+", settings[5])
    assert re.fullmatch(r" *loocv_x: \S+ +loocv_y: \S+", settings[6])
    assert re.fullmatch(r" *method: permutation +n_resamples: 19", settings[7])
    assert re.fullmatch(r" *seed: 1", settings[8])
    assert len(settings) == 9
    # the separators of each column at one position; the right column starts mid-table
    assert {_colons(line)[0] for line in settings} == {len("shrinkage_x:") - 1}
    assert {_colons(line)[1] for line in settings} - {None} == {39 + len("n_resamples:") - 1}


def test_independence_pandas_names(rng):
    df = pd.DataFrame(rng.normal(size=(40, 3)), columns=["temp", "pres", "hum"])
    res = kmtests.independence_test(df["temp"], df[["pres", "hum"]], estimator="fkmse",
                                    n_resamples=19, rng=1)
    text, summ = check_report(res)
    assert "\ndata:  temp and y[pres, hum]\n" in text
    assert re.search(r"^ *data_name: temp and y\[pres, hum\]$", summ, re.M)
    assert re.search(r"^ *estimator: fkmse +tuning: permutation$", summ, re.M)
    assert re.search(r"^ *lam: \S+$", summ, re.M)   # the observed data's: one column
    assert "Estimator parameters: those chosen on the observed data" in summ
    # two-sample: DataFrames name their columns, a Series its name
    two = kmtests.two_sample_test(df[["temp", "pres"]], df[["temp", "pres"]] + 1.0,
                                  n_resamples=19, rng=1)
    text, summ = check_report(two)
    assert "\ndata:  x[temp, pres] and y[temp, pres]\n" in text
    assert re.search(r"^ *data_name: x\[temp, pres\] and y\[temp, pres\]$", summ, re.M)
    # numpy inputs: nothing to add
    plain = kmtests.two_sample_test(df.to_numpy(), df.to_numpy() + 1, n_resamples=19, rng=1)
    assert "data_name:" not in str(plain.summary()) and "data:  x and y" in str(plain)


def test_long_names_are_cut_with_a_note(rng):
    cols = [f"a_rather_long_column_name_{i}" for i in range(3)]
    df = pd.DataFrame(rng.normal(size=(20, 3)), columns=cols)
    res = kmtests.independence_test(df[cols[:1]], df[cols[1:]], n_resamples=19, rng=1)
    text, summ = check_report(res)
    name = "x[a_rather_long_column_name_0] and y[a_rather_long_column_name_1, " \
           "a_rather_long_column_name_2]"
    assert res.data_name == name
    line = next(line for line in summ.splitlines() if re.match(r"^ *data_name: ", line))
    assert line.endswith("...") and len(line) == TABLE
    assert name.startswith(line.split("data_name: ")[1][:-3])
    assert f"In full: data_name: {name}." in summ.replace("\n    ", " ")
    assert "data:  x[a_rather_long_column_name_0] and y[a_rather_long_column_name_1,\n" \
           "       a_rather_long_column_name_2]" in text
    other = dataclasses.replace(res, data_name="the wine data")
    assert re.search(r"^ *data_name: the wine data$", str(other.summary()), re.M)


def test_gamma_pvalue_below_machine_precision(rng):
    x = rng.normal(size=(40, 1))
    res = kmtests.two_sample_test(x, x + 5.0, method="gamma", statistic="biased")
    assert res.pvalue < 2.2e-16
    text, summ = check_report(res)
    line = next(line for line in text.splitlines() if line.startswith("MMD^2_b = "))
    assert re.fullmatch(r"MMD\^2_b = \S+, p-value < 2\.2e-16", line)
    assert re.search(r"^MMD\^2_b +\S+ +< 2\.2e-16$", summ, re.M)
    # an underflow to 0 prints the same way, never "= 0"
    assert format_pvalue(0.0) == "< 2.2e-16" and format_pvalue(0.0, sign=False) == "< 2.2e-16"
    assert format_pvalue(0.03123) == "= 0.03123"


def test_pvalue_interval_is_labelled_as_such(rng):
    x, y = rng.normal(size=(20, 2)), rng.normal(size=(20, 2))
    res = kmtests.two_sample_test(x, y, n_resamples=199, rng=1)
    summ = str(res.summary())
    lo, hi = res.pvalue_interval()
    header = next(line for line in summ.splitlines() if "statistic" in line)
    assert header.split() == ["statistic", "p-value", "p", "95%", "MC", "low", "p", "95%", "MC",
                              "high"]
    assert "[0.025" not in summ and "0.975]" not in summ
    assert "p 95% MC low/high: the Clopper-Pearson 95% interval of the exact" in summ
    assert "Monte Carlo error of the p-value (not an interval for the statistic)" in \
        summ.replace("\n    ", " ")
    assert f"{lo:.4g}" in summ and f"{hi:.4g}" in summ
    assert "p 90% MC low" in str(res.summary(alpha=0.1))
    with pytest.raises(ValueError, match="alpha"):
        res.summary(alpha=0)


def test_negative_unbiased_statistic_is_explained():
    gen = np.random.default_rng(0)
    for _ in range(50):
        x, y = gen.normal(size=(15, 1)), gen.normal(size=(15, 1))
        res = kmtests.two_sample_test(x, y, n_resamples=19, rng=1)
        if res.statistic < 0:
            break
    assert res.statistic < 0
    text, summ = check_report(res)
    assert re.search(r"^MMD\^2_u = -\d", text, re.M)
    assert ("note: the unbiased statistic is negative; it estimates a non-negative quantity\n"
            "      without bias, so it is negative about half the time when the null\n"
            "      hypothesis holds") in text
    assert "The unbiased statistic is negative; it estimates a non-negative" in summ
    positive = kmtests.two_sample_test(x, y + 3.0, n_resamples=19, rng=1)
    assert "negative" not in str(positive) and "negative" not in str(positive.summary())


def test_unpacking_as_scipy(rng):
    x, y = rng.normal(size=(20, 2)), rng.normal(size=(20, 2))
    res = kmtests.two_sample_test(x, y, n_resamples=19, rng=1)
    statistic, pvalue = res
    assert (statistic, pvalue) == (res.statistic, res.pvalue)
    assert list(res) == [res.statistic, res.pvalue]
    with pytest.raises(ValueError):
        a, b, c = res  # noqa: F841


def test_method_line_wraps_like_r(rng):
    """R's print.htest: strwrap(method, prefix = "\\t"), at most 80 columns with the tab."""
    x, y = rng.normal(size=(20, 2)), rng.normal(size=(20, 2))
    res = kmtests.two_sample_test(x, y, estimator="iterated_tikhonov", n_resamples=19, rng=1)
    lines = str(res).splitlines()
    assert lines[0] == ""
    assert lines[1] == "\tKernel two-sample test (MMD): MMD^2_b[iterated_tikhonov]"
    assert lines[2] == "\t(V-statistic), Iterated Tikhonov spectral shrinkage (LOOCV) estimator,"
    assert lines[3] == "\texact engine, permutation p-value (based on 19 random permutations)"
    assert lines[4] == ""


# -- HTML ---------------------------------------------------------------------------------
def test_html_is_well_formed_and_escaped(rng):
    x = rng.normal(size=(40, 1))
    res = kmtests.two_sample_test(x, x + 5.0, method="gamma", statistic="biased")
    res = dataclasses.replace(res, notes=("a < b & c > d",), data_name="<a> and b&c")
    html = res.summary()._repr_html_()
    root = ET.fromstring(f"<div>{html}</div>")     # well-formed: escaped text, closed tags
    tables = root.findall("table")
    assert len(tables) == 2 and all(t.get("class") == "simpletable" for t in tables)
    assert tables[0].find("caption").text == "Kernel two-sample test (MMD)"
    rows = [[(c.text or "").strip() for c in tr] for tr in tables[0].iter("tr")]
    assert all(len(r) == 4 for r in rows)                  # one table, 4 columns
    assert ["data_name:", "<a> and b&c", "", ""] in rows
    assert ["kernel:", "Gaussian", "", ""] in rows
    assert ["method:", "gamma (approx.)", "moments:", "permutation"] in rows
    assert ["gamma_shape:", f"{res.details['gamma_shape']:.4g}", "gamma_scale:",
            f"{res.details['gamma_scale']:.4g}"] in rows
    cells = [(c.text or "").strip() for c in tables[1].iter("td")]
    assert cells[-1] == "< 2.2e-16"
    assert "&lt; 2.2e-16" in html
    assert "<br/>\n[3] A &lt; b &amp; c &gt; d" in html
    assert "[3] A < b & c > d" in "".join(root.itertext())


# -- shared helpers -------------------------------------------------------------------------
def test_rows_appended_to_a_table_keep_its_columns():
    """The power summary appends the rows of one-row tables to the first one.

    statsmodels' ``extend`` kept each appended row attached to its own table,
    so the first row was formatted with other column widths (shifted).
    """
    stubs = ["kme n=20", "kme n=40", "iterated_tikhonov n=20 eff=0.25"]
    tables = [result_table(s, ["power", "ci_low", "ci_high", "mean p", "reps"],
                           ["0.500", "0.300", "0.700", "0.100", "50"]) for s in stubs]
    merged = tables[0]
    for t in tables[1:]:
        merged.extend(t[1:])
    text = Summary([merged]).as_text()
    rows = [line for line in text.splitlines() if line.startswith(("kme", "iterated"))]
    assert len(rows) == 3
    assert len({line.index("0.500") for line in rows}) == 1, text
    assert len({len(line) for line in rows}) == 1, text
    html = Summary([merged]).as_html()
    assert html.count("<tr>") == 4


def test_power_summary_rows_aligned():
    from kmtests.power import PowerCurveResult

    gen = np.random.default_rng(0)
    raw = pd.DataFrame([{"scenario": "s", "test": "two_sample", "n": n, "effect": 0.5,
                         "repetition": r, "estimator": est, "pvalue": gen.uniform()}
                        for est in ("kme", "tsvd_with_a_long_label") for n in (20, 40)
                        for r in range(10)])
    text = str(PowerCurveResult(raw=raw, alpha=(0.05,), n_resamples=99).summary())
    rows = [line for line in text.splitlines() if re.match(r"\s+\d+\s+0\.5\s", line)]
    assert len(rows) == 4 and "estimator: tsvd_with_a_long_label" in text
    assert len({len(line) for line in rows}) == 1, text
    assert len({re.search(r"\d\.\d{3}", line).start() for line in rows}) == 1, text


def test_format_value_fits():
    vals = np.linspace(0.0123456, 0.987654, 30)
    for width in range(8, 60):
        text, short = format_value(vals, width)
        assert len(text) <= width and short
    assert format_value(vals, 40) == ("30 values in [0.01235, 0.9877]", True)
    assert format_value(vals, 24) == ("30 in [0.01235, 0.9877]", True)
    assert format_value(vals, 18) == ("30 in [0.01, 1]", True)
    assert format_value(vals, 12) == ("[0.01235,...", True)
    assert format_value([1.0, 2.5], 10) == ("[1, 2.5]", False)
    assert format_value("operator", 5) == ("op...", True)
