"""Command line: reading CSV files, validating options, checked outputs, JSON."""

import dataclasses
import json
import sys

import numpy as np
import pandas as pd
import pytest

import kmtests
import kmtests.power

from ._cli import run as _run


def _strict_json(text):
    def refuse(token):
        raise ValueError(f"invalid JSON constant {token}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def samples(tmp_path, rng):
    a = pd.DataFrame({"u": rng.normal(size=15), "v": rng.normal(3, size=15)})
    b = pd.DataFrame({"u": rng.normal(1, size=12), "v": rng.normal(3, size=12)})
    a.to_csv(tmp_path / "a.csv", index=False)
    b.to_csv(tmp_path / "b.csv", index=False)
    return tmp_path, a, b


# -- two-sample files are matched by column name --------------------------------------
def test_two_sample_matches_columns_by_name(samples, capsys):
    tmp, a, b = samples
    b[["v", "u"]].to_csv(tmp / "b_swapped.csv", index=False)
    args = ["--n-resamples", 99, "--seed", 1, "--json"]
    rc, out, _ = _run(capsys, "two-sample", tmp / "a.csv", tmp / "b.csv", *args)
    rc2, out2, _ = _run(capsys, "two-sample", tmp / "a.csv", tmp / "b_swapped.csv", *args)
    assert rc == rc2 == 0
    d, d2 = _strict_json(out), _strict_json(out2)
    assert d2["statistic"] == d["statistic"] and d2["pvalue"] == d["pvalue"]
    direct = kmtests.two_sample_test(a.to_numpy(), b.to_numpy(), n_resamples=99, rng=1)
    assert d["statistic"] == direct.statistic


def test_two_sample_refuses_different_column_names(samples, capsys):
    tmp, _, b = samples
    b.rename(columns={"v": "w"}).to_csv(tmp / "c.csv", index=False)
    rc, out, err = _run(capsys, "two-sample", tmp / "a.csv", tmp / "c.csv")
    assert rc == 2 and out == ""
    assert "a.csv and " in err and "have different columns (only in " in err
    assert "['v']; only in " in err and "['w']); columns are matched by name" in err


def test_headerless_file_is_refused_not_shortened(samples, capsys):
    tmp, _, b = samples
    b.to_csv(tmp / "nohead.csv", index=False, header=False)
    rc, _, err = _run(capsys, "two-sample", tmp / "nohead.csv", tmp / "b.csv", "--columns", "u")
    assert rc == 2
    assert "nohead.csv: the first line" in err and "looks like data, not a header" in err


def test_unnamed_index_column_is_refused(samples, capsys):
    tmp, a, _ = samples
    a.to_csv(tmp / "idx.csv")  # pandas writes its index as a nameless first column
    rc, _, err = _run(capsys, "two-sample", tmp / "idx.csv", tmp / "idx.csv")
    assert rc == 2
    assert "idx.csv: column 1 has no name (an index written by pandas' to_csv?)" in err
    rc, _, _ = _run(capsys, "two-sample", tmp / "idx.csv", tmp / "a.csv", "--columns", "u,v",
                    "--n-resamples", 9)
    assert rc == 0


# -- independence: --x and --y ------------------------------------------------------------
def test_independence_refuses_empty_x(samples, capsys):
    tmp, _, _ = samples
    rc, out, err = _run(capsys, "independence", tmp / "a.csv", "--x", "", "--y", "v")
    assert rc == 2 and out == ""
    assert "argument --x: must be a comma-separated list of names; got ''" in err


def test_independence_refuses_overlapping_x_and_y(samples, capsys):
    tmp, _, _ = samples
    rc, _, err = _run(capsys, "independence", tmp / "a.csv", "--x", "u", "--y", "v,u")
    assert rc == 2
    assert "--x and --y must name different columns; both name ['u']" in err


def test_repeated_column_name_is_refused(samples, capsys):
    tmp, _, _ = samples
    rc, _, err = _run(capsys, "independence", tmp / "a.csv", "--x", "u,u", "--y", "v")
    assert rc == 2 and "argument --x: must not repeat a name; got 'u,u'" in err


# -- read errors name the file -------------------------------------------------------------
BAD_FILES = {
    "empty": (b"", "the file is empty"),
    "header_only": (b"u,v\n", "the file has a header line but no data rows"),
    "ragged": (b"u,v\n1,2\n3,4,5\n", "rows have different numbers of fields (Expected 2 fields "
               "in line 3, saw 3)"),
    "semicolon": (b"u;v\n1;2\n3;4\n", "the file has a single column 'u;v'; the file seems to be "
                  "separated by ';': use --sep ';'"),
    "latin1": ("u,v\n1,2\n3,\xe9\n".encode("latin-1"), "not utf-8 text (byte 0xe9 on line "
               "3); give the file's encoding with --encoding, e.g. --encoding latin-1"),
    "short_row": (b"u,v\n1,2\n3\n", "column 'v' has a missing value (an empty cell or a short "
                  "row) in data row 2"),
    "infinite": (b"u,v\n1,2\n3,inf\n", "column 'v' has the value 'inf' in data row 2"),
    "text_cell": (b"u,v\n1,2\n3,x\n", "column 'v' has a non-numeric value 'x' in data row 2"),
    "duplicate": (b"u,u\n1,2\n3,4\n", "column name(s) ['u'] appear more than once"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_read_errors_name_the_file(tmp_path, capsys, case):
    content, message = BAD_FILES[case]
    path = tmp_path / f"{case}.csv"
    path.write_bytes(content)
    rc, out, err = _run(capsys, "independence", path, "--x", "u", "--y", "v")
    assert rc == 2 and out == ""
    assert err.startswith(f"kmtests: error: {path}: {message}")


def test_missing_file_and_semicolon_file_with_sep(tmp_path, capsys):
    rc, _, err = _run(capsys, "independence", tmp_path / "nope.csv", "--x", "u", "--y", "v")
    assert rc == 2 and f"{tmp_path / 'nope.csv'}: no such file" in err
    (tmp_path / "s.csv").write_text("u;v\n1;2\n3;5\n4;4\n")
    rc, out, _ = _run(capsys, "independence", tmp_path / "s.csv", "--x", "u", "--y", "v",
                      "--sep", ";", "--n-resamples", 9)
    assert rc == 0 and "HSIC_b = " in out
    (tmp_path / "l.csv").write_bytes("\xe9,v\n1,2\n3,5\n4,4\n".encode("latin-1"))
    rc, out, _ = _run(capsys, "independence", tmp_path / "l.csv", "--x", "\xe9", "--y", "v",
                      "--encoding", "latin-1", "--n-resamples", 9)
    assert rc == 0


# -- options are validated before anything runs ------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["--n", "10.7"], "argument --n: must be a comma-separated list of positive integers; "
                      "got '10.7'"),
    (["--n", "10,,20"], "argument --n: must be a comma-separated list of positive integers; "
                        "got '10,,20'"),
    (["--n-jobs", "0"], "argument --n-jobs: must be -1 (all cores) or a positive integer; "
                        "got '0'"),
    (["--n-jobs", "-5"], "argument --n-jobs: must be -1 (all cores) or a positive integer; "
                         "got '-5'"),
    (["--reps", "0"], "argument --reps: must be a positive integer; got '0'"),
    (["--n-resamples", "1e3"], "argument --n-resamples: must be a positive integer; got '1e3'"),
    (["--seed", "-1"], "argument --seed: must be a non-negative integer; got '-1'"),
    (["--effects", "nan"], "argument --effects: must be a comma-separated list of finite "
                           "numbers; got 'nan'"),
    (["--estimators", ""], "argument --estimators: must be a comma-separated list of names; "
                           "got ''"),
])
def test_power_options_are_validated(capsys, monkeypatch, argv, message):
    monkeypatch.setattr(kmtests.power, "power_curve", _never)
    rc, out, err = _run(capsys, "power", "--scenario", "linear", *argv)
    assert rc == 2 and out == "" and message in err


@pytest.mark.parametrize("argv, message", [
    (["--n-resamples", "0"], "argument --n-resamples: must be a positive integer; got '0'"),
    (["--seed", "1.5"], "argument --seed: must be a non-negative integer; got '1.5'"),
    (["--encoding", "utf-99"], "argument --encoding: must be a text encoding"),
    (["--sep", ";;"], "argument --sep: must be one character"),
])
def test_test_options_are_validated(samples, capsys, argv, message):
    tmp, _, _ = samples
    rc, _, err = _run(capsys, "two-sample", tmp / "a.csv", tmp / "b.csv", *argv)
    assert rc == 2 and message in err


def _never(*args, **kwargs):  # pragma: no cover - must not be reached
    raise AssertionError("the study ran")


# -- missing extras, output paths: refused before the study ------------------------------
@pytest.mark.parametrize("module, argv", [
    ("tqdm", ["--progress"]), ("joblib", ["--n-jobs", "2"]), ("matplotlib", ["--plot", "p.png"]),
])
def test_missing_extras_are_refused_before_the_study(tmp_path, capsys, monkeypatch, module,
                                                     argv):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(kmtests.power, "power_curve", _never)
    monkeypatch.setitem(sys.modules, module, None)  # as on a base install
    rc, _, err = _run(capsys, "power", "--scenario", "linear", *argv)
    assert rc == 2
    assert err == (f"kmtests: error: {argv[0]} needs {module}, which is not installed: "
                   "pip install 'kmtests[power]'\n")


def test_output_paths_are_checked_before_the_study(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(kmtests.power, "power_curve", _never)
    base = ["power", "--scenario", "linear"]
    rc, _, err = _run(capsys, *base, "--out", tmp_path / "missing" / "t.csv")
    assert rc == 2 and "--out " in err and "missing' does not exist" in err
    rc, _, err = _run(capsys, *base, "--checkpoint", tmp_path)
    assert rc == 2 and f"--checkpoint {tmp_path}: is a directory" in err
    rc, _, err = _run(capsys, *base, "--out", tmp_path / "x.csv", "--checkpoint",
                      tmp_path / "x.csv")
    assert rc == 2 and "--checkpoint and --out must be different files" in err
    rc, _, err = _run(capsys, *base, "--plot", tmp_path / "p.xyz")
    assert rc == 2 and "p.xyz: must end with an image format matplotlib writes (" in err


def test_memory_error_explains_the_n_squared_need(samples, capsys, monkeypatch):
    tmp, _, _ = samples

    def oom(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(kmtests, "two_sample_test", oom)
    rc, _, err = _run(capsys, "two-sample", tmp / "a.csv", tmp / "b.csv")
    assert rc == 2
    assert "out of memory: the test holds N x N matrices of the pooled observations (N = 27:" in err
    assert "memory grows as N^2" in err
    monkeypatch.setattr(kmtests.power, "power_curve", oom)
    rc, _, err = _run(capsys, "power", "--scenario", "mean_shift", "--n", "10,5000")
    assert rc == 2 and "(N = 10000: 0.745 GiB each in float64)" in err


def test_power_interrupted_points_to_the_checkpoint(tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(kmtests.power, "power_curve", interrupted)
    try:
        rc, _, err = _run(capsys, "power", "--scenario", "linear", "--checkpoint",
                          tmp_path / "s")
    except KeyboardInterrupt:  # would stop the whole test session
        pytest.fail("KeyboardInterrupt escaped from the command line")
    assert rc == 130
    assert f"interrupted; the finished repetitions are saved in {tmp_path / 's'}" in err


def test_power_outputs_and_checkpoint_resume(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    ck, out, png = tmp_path / "ck.csv", tmp_path / "t.csv", tmp_path / "p.png"
    out.write_text("old content")
    base = ["power", "--scenario", "linear", "--n", "8", "--effects", "0,1", "--n-resamples",
            "19", "--seed", "3", "--checkpoint", ck]
    assert _run(capsys, *base, "--reps", "2")[0] == 0
    rc, text, _ = _run(capsys, *base, "--reps", "4", "--out", out, "--plot", png)
    assert rc == 0 and "Power study: linear" in text
    t = pd.read_csv(out)
    assert list(t["effect"]) == [0.0, 1.0] and t["repetitions"].eq(4).all()
    assert png.stat().st_size > 1000 and not list(tmp_path.glob(".*tmp*"))
    fresh = kmtests.power.power_curve("linear", sample_sizes=[8], effects=[0, 1],
                                      repetitions=4, n_resamples=19, rng=3)
    np.testing.assert_array_equal(t["power"], fresh.table()["power"])


# -- JSON is always valid ----------------------------------------------------------------------
def test_json_never_prints_nan(samples, capsys, monkeypatch):
    tmp, _, _ = samples
    real = kmtests.two_sample_test

    def nan_detail(*args, **kwargs):
        res = real(*args, **kwargs)
        return dataclasses.replace(res, details={"shape": float("nan"), "scale": 2.0,
                                                 "moments": [1.0, float("inf")]})

    monkeypatch.setattr(kmtests, "two_sample_test", nan_detail)
    rc, out, _ = _run(capsys, "two-sample", tmp / "a.csv", tmp / "b.csv", "--json",
                      "--n-resamples", 9)
    assert rc == 0
    d = _strict_json(out)
    assert d["details"] == {"shape": None, "scale": 2.0, "moments": [1.0, None]}
    assert d["non_finite"] == {"details.shape": "nan", "details.moments[1]": "inf"}


@pytest.mark.parametrize("as_json", [True, False])
def test_non_finite_statistic_is_an_error(samples, capsys, monkeypatch, as_json):
    tmp, _, _ = samples
    real = kmtests.two_sample_test
    monkeypatch.setattr(kmtests, "two_sample_test", lambda *a, **k: dataclasses.replace(
        real(*a, **k), statistic=float("nan")))
    rc, out, err = _run(capsys, "two-sample", tmp / "a.csv", tmp / "b.csv", "--n-resamples", 9,
                        *(["--json"] if as_json else []))
    assert rc == 2 and out == ""
    assert "kmtests: error: the test's statistic is nan, not a finite number, so the result " \
           "means nothing" in err
