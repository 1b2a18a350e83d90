"""Result objects: htest-style print, summary, summary_frame, conf_int, JSON."""

import json

import numpy as np
import pandas as pd
import pytest

import kmtests


@pytest.fixture
def res2(rng):
    x, y = rng.normal(size=(30, 2)), rng.normal(0.5, size=(25, 2))
    return kmtests.two_sample_test(x, y, n_resamples=999, rng=1)


def test_htest_block(res2):
    text = str(res2)
    lines = text.splitlines()
    assert lines[0] == ""
    assert lines[1] == "\tKernel two-sample test (MMD): MMD^2_u (U-statistic), KME (empirical)"
    assert lines[2] == "\testimator, exact engine, permutation p-value (based on 999 random"
    assert "data:  x and y" in lines
    stat_line = next(line for line in lines if line.startswith("MMD^2_u = "))
    assert f"p-value = {res2.pvalue:.4g}" in stat_line
    assert "alternative hypothesis: the two samples come from different distributions" in text
    assert "based on 999 random permutations" in text.replace("\n\t", " ")


def test_summary_text_and_html(res2):
    s = res2.summary()
    text = str(s)
    assert "Kernel two-sample test (MMD)" in text
    for key in ("estimator:", "engine:", "kernel:", "bandwidth:", "n_x:", "n_y:", "method:",
                "n_resamples:", "seed:"):
        assert key in text
    assert f"{res2.bandwidths['kernel']:.4g}" in text
    assert "p 95% MC low" in text and "p 95% MC high" in text
    html = s._repr_html_()
    assert html.startswith("<table") and "MMD^2_u" in html


def test_conf_int_is_clopper_pearson(res2):
    from scipy import stats

    lo, hi = res2.pvalue_interval(0.05)
    c, B = res2.count, res2.n_resamples
    assert lo == pytest.approx(stats.beta.ppf(0.025, c, B - c + 1) if c else 0.0, abs=1e-12)
    assert hi == pytest.approx(stats.beta.ppf(0.975, c + 1, B - c), abs=1e-12)
    assert lo <= c / B <= hi
    with pytest.raises(ValueError, match="`alpha` must be in"):
        res2.pvalue_interval(1.5)


def test_summary_frame(res2):
    df = res2.summary_frame()
    assert isinstance(df, pd.DataFrame) and df.shape[0] == 1
    row = df.iloc[0]
    assert row["statistic"] == res2.statistic and row["pvalue"] == res2.pvalue
    assert row["n_x"] == 30 and row["n_y"] == 25 and row["n_resamples"] == 999
    assert row["pvalue_lower"] <= row["pvalue"] <= row["pvalue_upper"] + 1e-3
    assert (row["test"], row["method"], row["estimator"], row["engine"]) == (
        "Kernel two-sample test (MMD)", "permutation", "kme", "exact")


def test_frozen_and_json(res2):
    with pytest.raises(AttributeError):
        res2.pvalue = 0.5  # type: ignore[misc]
    with pytest.raises(ValueError):
        res2.null_distribution[0] = 1.0
    d = json.loads(json.dumps(res2.to_dict()))
    assert d["pvalue"] == res2.pvalue and d["sizes"] == {"n_x": 30, "n_y": 25}
    assert d["kernels"]["kernel"].startswith("Gaussian (bandwidth = ")


def test_independence_report_and_exact(rng):
    x = rng.normal(size=6)
    res = kmtests.independence_test(x, x**2, rng=0)
    assert res.exact and res.n_resamples == 720
    assert np.all(res.pvalue_interval() == res.pvalue)
    text = str(res)
    assert "exact permutation p-value (all 720 arrangements)" in text.replace("\n\t", " ")
    assert "HSIC_b = " in text and "alternative hypothesis: x and y are dependent" in text
    assert "bandwidth_x:" in str(res.summary())


def test_gamma_report(rng):
    x, y = rng.normal(size=(40, 1)), rng.normal(size=(40, 1))
    res = kmtests.independence_test(x, y, method="gamma")
    assert res.null_distribution is None and res.n_resamples is None
    assert "gamma approximation" in str(res).replace("\n\t", " ")
    assert "method: gamma (approx.)" in str(res.summary())
    with pytest.raises(NotImplementedError):
        res.pvalue_interval()
    assert np.isnan(res.summary_frame().iloc[0]["pvalue_lower"])


# -- issue 32: exports, the p-value interval's name, plain values in messages ----------------
def test_summary_exports_latex_and_csv(res2):
    s = res2.summary()
    latex = s.as_latex()
    assert latex.count("\\begin{tabular}") == 2 and "\\end{center}" in latex
    assert "MMD\\textasciicircum{}2\\_u" in latex and "^" not in latex.replace(
        "\\textasciicircum{}", "")
    assert "Notes: \\newline" in latex and "95\\% MC low" in latex
    import csv
    import io

    text = s.as_csv()
    rows = list(csv.reader(io.StringIO(text)))
    cells = [c.strip() for r in rows for c in r]
    assert "MMD^2_u" in cells and "p-value" in cells and "Notes" in cells
    assert format(res2.statistic, ".4g") in cells
    assert any(c.startswith("[1] Alternative hypothesis") for c in cells)


def test_pvalue_interval_and_the_deprecated_conf_int(res2):
    lo, hi = res2.pvalue_interval()
    with pytest.warns(FutureWarning, match="renamed pvalue_interval"):
        old = res2.conf_int()
    np.testing.assert_array_equal(old, [lo, hi])


def test_numpy_scalars_are_shown_as_python_values():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": np.arange(10.0)}, index=np.arange(2990, 3000))
    df.iloc[2, 0] = np.nan
    with pytest.raises(ValueError, match=r"row 2 \(index 2992\), column 'a' of `x`") as err:
        kmtests.two_sample_test(df, df + 1.0)
    assert "np." not in str(err.value)
    df = pd.DataFrame({np.int64(7): ["u", "v", "w"]})
    with pytest.raises(TypeError) as err:
        kmtests.two_sample_test(df, df)
    assert "np." not in str(err.value) and "column 7" in str(err.value)
    x = np.zeros((5, 1))
    with pytest.raises(ValueError) as err:
        kmtests.two_sample_test(x, x + 1.0, alternative=np.str_("less"))
    assert "alternative='less'" in str(err.value) and "np." not in str(err.value)


@pytest.mark.parametrize("kwargs, text", [
    (dict(bandwidth=np.str_("wide")), "got 'wide'"),
    (dict(estimator=np.str_("nope")), "got 'nope'"),
    (dict(n_jobs=np.int64(0)), "got 0"),
])
def test_numpy_scalars_in_argument_errors(kwargs, text):
    x = np.zeros((6, 1))
    with pytest.raises((ValueError, TypeError)) as err:
        kmtests.two_sample_test(x, x + 1.0, **kwargs)
    assert text in str(err.value) and "np." not in str(err.value)
