"""The command line is as complete as the API: test options, aggregated tests, one file
with a group column, standard input, power studies comparing tests; errors name the
command line's options."""

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kmtests
import kmtests.power
from kmtests import cli as _cli

from ._cli import run as _run
from ._cli import run_json as _json


@pytest.fixture
def files(tmp_path):
    gen = np.random.default_rng(5)
    a = pd.DataFrame({"u": gen.normal(size=24), "v": gen.normal(size=24)})
    b = pd.DataFrame({"u": gen.normal(0.8, size=24), "v": gen.normal(size=24)})
    a.to_csv(tmp_path / "a.csv", index=False)
    b.to_csv(tmp_path / "b.csv", index=False)
    # the groups interleaved (trt first), each in the order of its own file
    both = pd.concat([b.assign(g="trt"), a.assign(g="ctl")]).sort_index(kind="stable")
    both.to_csv(tmp_path / "both.csv", index=False)
    return tmp_path, a.to_numpy(), b.to_numpy()


# -- every option has a help text ------------------------------------------------------------
def _parsers(parser, path=()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def test_every_option_has_help():
    seen = set()
    for path, parser in _parsers(_cli._parser()):
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if isinstance(action, argparse._SubParsersAction):  # every command has help
                for choice in action._choices_actions:
                    assert choice.help, f"kmtests {' '.join(path)} {choice.dest} has no help"
                continue
            assert action.help, f"kmtests {' '.join(path)}: {action.dest} has no help"
            seen.update(action.option_strings)
    for flag in ("--statistic", "--filter", "--lam", "--covariance", "--engine", "--n-features",
                 "--block-size", "--n-jobs", "--tuning", "--method", "--group", "--groups",
                 "--bandwidths", "--test", "--split-size", "--batch", "--progress",
                 "--no-progress", "--version", "--n-locations"):
        assert flag in seen


def test_version(capsys):
    rc, out, err = _run(capsys, "--version")
    assert (rc, out, err) == (0, f"kmtests {kmtests.__version__}\n", "")
    assert kmtests.__version__ == "0.2.0.dev0"


def test_every_keyword_of_the_tests_has_its_option():
    """Each keyword of the Python functions is an option of its command, but those the
    command sets itself (the data's name, the seed as --seed) or that take Python objects."""
    import inspect

    def options(*path):
        for p, parser in _parsers(_cli._parser()):
            if p == path:
                return {a.dest for a in parser._actions}
        raise AssertionError(path)

    own = {"rng", "data_name", "sample_names"}
    objects = {"kernels": "joint: --kernel", "null": "a null method object",
               "cache": "a memory switch of the regressions",
               "axis": "a CSV file's columns are its variables"}
    for path, fn in [(("two-sample",), kmtests.two_sample_test),
                     (("independence",), kmtests.independence_test),
                     (("k-sample",), kmtests.k_sample_test),
                     (("joint",), kmtests.joint_independence_test),
                     (("conditional",), kmtests.conditional_independence_test),
                     (("aggregated", "two-sample"), kmtests.aggregated_two_sample_test),
                     (("aggregated", "independence"), kmtests.aggregated_independence_test)]:
        keywords = [k for k, v in inspect.signature(fn).parameters.items()
                    if v.kind == v.KEYWORD_ONLY]
        missing = set(keywords) - options(*path) - own - set(objects)
        if path[0] == "aggregated":  # their null is the permutations (--n-resamples, --seed);
            missing -= {"method"}    # --method is 0.2's name of --combination
        assert not missing, f"kmtests {' '.join(path)}: no option for {sorted(missing)}"


# -- options reach the test ---------------------------------------------------------------------
TWO_SAMPLE_CASES = [
    (["--statistic", "regularized", "--filter", "showalter", "--lam", "0.1,1",
      "--covariance", "split", "--split-size", "5", "--seed", "3", "--n-resamples", "49"],
     dict(statistic="regularized", filter="showalter", lam=[0.1, 1.0], covariance="split",
          split_size=5, rng=3, n_resamples=49)),
    (["--statistic", "regularized", "--lam", "auto", "--seed", "3", "--n-resamples", "49"],
     dict(statistic="regularized", lam="auto", rng=3, n_resamples=49)),
    (["--engine", "block", "--block-size", "4"], dict(engine="block", block_size=4)),
    (["--engine", "linear"], dict(engine="linear")),
    (["--engine", "nystrom", "--n-features", "10", "--seed", "2", "--n-resamples", "49"],
     dict(engine="nystrom", n_features=10, rng=2, n_resamples=49)),
    (["--engine", "streamed", "--seed", "2", "--n-resamples", "49", "--batch", "7",
      "--n-jobs", "1"], dict(engine="streamed", rng=2, n_resamples=49)),
    (["--estimator", "skmse", "--tuning", "pooled", "--seed", "2", "--n-resamples", "49"],
     dict(estimator="skmse", tuning="pooled", rng=2, n_resamples=49)),
    (["--method", "gamma", "--statistic", "biased", "--kernel", "laplacian", "--bandwidth",
      "1.5"], dict(method="gamma", statistic="biased", kernel="laplacian", bandwidth=1.5)),
    (["--statistic", "block", "--block-size", "5"], dict(statistic="block", block_size=5)),
    (["--statistic", "linear"], dict(statistic="linear")),
    (["--statistic", "me", "--n-locations", "2", "--split-size", "10", "--seed", "4",
      "--method", "asymptotic"],
     dict(statistic="me", n_locations=2, split_size=10, rng=4, method="asymptotic")),
    (["--statistic", "scf", "--n-locations", "1", "--seed", "4", "--n-resamples", "49"],
     dict(statistic="scf", n_locations=1, rng=4, n_resamples=49)),
]


@pytest.mark.parametrize("argv, kwargs", TWO_SAMPLE_CASES)
def test_two_sample_options_reach_the_test(files, capsys, argv, kwargs):
    tmp, x, y = files
    d = _json(capsys, "two-sample", tmp / "a.csv", tmp / "b.csv", *argv)
    want = kmtests.two_sample_test(x, y, **kwargs)
    assert d["statistic"] == want.statistic and d["pvalue"] == want.pvalue


INDEPENDENCE_CASES = [
    (["--kernel-x", "laplacian", "--bandwidth-y", "2", "--statistic", "unbiased",
      "--seed", "1", "--n-resamples", "49"],
     dict(kernel_x="laplacian", bandwidth_y=2.0, statistic="unbiased", rng=1, n_resamples=49)),
    (["--engine", "rff", "--n-features", "20", "--seed", "1", "--n-resamples", "49"],
     dict(engine="rff", n_features=20, rng=1, n_resamples=49)),
    (["--statistic", "regularized", "--lam", "0.05", "--filter", "cutoff", "--seed", "1",
      "--n-resamples", "49"],
     dict(statistic="regularized", lam=0.05, filter="cutoff", rng=1, n_resamples=49)),
    (["--method", "gamma"], dict(method="gamma")),
    (["--statistic", "fsic", "--n-locations", "2", "--split-size", "12", "--seed", "4",
      "--n-resamples", "49"],
     dict(statistic="fsic", n_locations=2, split_size=12, rng=4, n_resamples=49)),
]


@pytest.mark.parametrize("argv, kwargs", INDEPENDENCE_CASES)
def test_independence_options_reach_the_test(files, capsys, argv, kwargs):
    tmp, x, _ = files
    d = _json(capsys, "independence", tmp / "a.csv", "--x", "u", "--y", "v", *argv)
    want = kmtests.independence_test(x[:, :1], x[:, 1:], **kwargs)
    assert d["statistic"] == want.statistic and d["pvalue"] == want.pvalue


# -- aggregated tests ----------------------------------------------------------------------------
AGGREGATED_CASES = [
    (["--bandwidths", "5", "--method", "fuse"], dict(bandwidths=5, combination="fuse")),
    (["--bandwidths", "5", "--combination", "fuse"], dict(bandwidths=5, combination="fuse")),
    (["--bandwidths", "0.5,1,2", "--weights", "increasing"],
     dict(bandwidths=[0.5, 1.0, 2.0], weights="increasing")),
    (["--bandwidths", "3", "--estimators", "kme,skmse", "--statistics", "unbiased,biased",
      "--alpha", "0.1"],
     dict(bandwidths=3, estimators=["kme", "skmse"], statistics=["unbiased", "biased"],
          alpha=0.1)),
    (["--bandwidths", "2", "--filters", "tikhonov", "--lams", "0.1,1", "--weights", "1,2,3,4,5,6"],
     dict(bandwidths=2, filters=["tikhonov"], lams=[0.1, 1.0],
          weights=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])),
    (["--bandwidths", "3", "--engine", "nystrom", "--n-features", "12"],
     dict(bandwidths=3, engine="nystrom", n_features=12)),
    (["--bandwidths", "2", "--estimators", "skmse", "--tuning", "pooled"],
     dict(bandwidths=2, estimators=["skmse"], tuning="pooled")),
]


@pytest.mark.parametrize("argv, kwargs", AGGREGATED_CASES)
def test_aggregated_two_sample(files, capsys, argv, kwargs):
    tmp, x, y = files
    d = _json(capsys, "aggregated", "two-sample", tmp / "a.csv", tmp / "b.csv", *argv,
              "--seed", 4, "--n-resamples", 49)
    want = kmtests.aggregated_two_sample_test(x, y, rng=4, n_resamples=49, **kwargs)
    assert d["statistic"] == want.statistic and d["pvalue"] == want.pvalue
    # the same on one file with a group column
    g = _json(capsys, "aggregated", "two-sample", tmp / "both.csv", "--group", "g", "--groups",
              "ctl,trt", *argv, "--seed", 4, "--n-resamples", 49)
    assert g["pvalue"] == want.pvalue


def test_aggregated_independence(files, capsys):
    tmp, x, _ = files
    d = _json(capsys, "aggregated", "independence", tmp / "a.csv", "--x", "u", "--y", "v",
              "--bandwidths-x", "3", "--bandwidths-y", "0.5,2", "--kernel-y", "laplacian",
              "--method", "fuse", "--seed", 4, "--n-resamples", 49)
    want = kmtests.aggregated_independence_test(
        x[:, :1], x[:, 1:], bandwidths_x=3, bandwidths_y=[0.5, 2.0], kernel_y="laplacian",
        combination="fuse", rng=4, n_resamples=49)
    assert d["statistic"] == want.statistic and d["pvalue"] == want.pvalue
    assert d["test"] == "Kernel independence test (HSIC-FUSE)"
    d = _json(capsys, "aggregated", "independence", tmp / "a.csv", "--x", "u", "--y", "v",
              "--bandwidths-x", "2", "--bandwidths-y", "2", "--engine", "rff",
              "--n-features", "16", "--seed", 4, "--n-resamples", 49)
    want = kmtests.aggregated_independence_test(
        x[:, :1], x[:, 1:], bandwidths_x=2, bandwidths_y=2, engine="rff", n_features=16,
        rng=4, n_resamples=49)
    assert d["statistic"] == want.statistic and d["pvalue"] == want.pvalue


@pytest.mark.parametrize("argv, progress", [([], None), (["--progress"], True),
                                            (["--no-progress"], False)])
@pytest.mark.parametrize("command, face", [
    (["two-sample", "a.csv", "b.csv"], "two_sample_test"),
    (["independence", "a.csv", "--x", "u", "--y", "v"], "independence_test"),
    (["k-sample", "a.csv", "b.csv"], "k_sample_test"),
    (["aggregated", "two-sample", "a.csv", "b.csv"], "aggregated_two_sample_test"),
    (["joint", "a.csv"], "joint_independence_test"),
    (["conditional", "both.csv", "--x", "u", "--y", "v", "--z", "g"],
     "conditional_independence_test"),
])
def test_progress_reaches_the_test(files, capsys, monkeypatch, command, face, argv, progress):
    """--progress / --no-progress: progress=True / False; neither: the function's default."""
    tmp, _, _ = files
    pd.read_csv(tmp / "both.csv").assign(g=lambda d: (d["g"] == "trt").astype(float)).to_csv(
        tmp / "both.csv", index=False)
    seen = {}

    def fake(*args, **kwargs):
        seen.update(kwargs)
        raise ValueError("stopped")

    monkeypatch.setattr(kmtests, face, fake)
    rc, _, err = _run(capsys, *[tmp / c if c.endswith(".csv") else c for c in command], *argv)
    assert rc == 2 and err == "kmtests: error: stopped\n"
    assert seen.get("progress", "absent") == ("absent" if progress is None else progress)


# -- one file with a group column -------------------------------------------------------------
def test_group_column_splits_one_file(files, capsys):
    tmp, x, y = files
    args = ["--seed", 1, "--n-resamples", 99]
    two_files = _json(capsys, "two-sample", tmp / "a.csv", tmp / "b.csv", *args)
    grouped = _json(capsys, "two-sample", tmp / "both.csv", "--group", "g", "--groups",
                    "ctl,trt", *args)
    assert grouped["statistic"] == two_files["statistic"]
    assert grouped["pvalue"] == two_files["pvalue"]
    assert grouped["data_name"] == f"{tmp / 'both.csv'}: g = ctl and g = trt"
    # without --groups: the two values in order of appearance
    plain = _json(capsys, "two-sample", tmp / "both.csv", "--group", "g", *args)
    assert plain["data_name"].endswith(": g = trt and g = ctl")
    assert plain["pvalue"] == kmtests.two_sample_test(y, x, rng=1, n_resamples=99).pvalue
    only_u = _json(capsys, "two-sample", tmp / "both.csv", "--group", "g", "--groups", "ctl,trt",
                   "--columns", "u", *args)
    assert only_u["pvalue"] == kmtests.two_sample_test(x[:, :1], y[:, :1], rng=1,
                                                       n_resamples=99).pvalue


@pytest.mark.parametrize("argv, message", [
    (["--group", "zz"], "--group: unknown column 'zz' in "),
    (["--group", "g", "--groups", "ctl,xx"], "--groups: value(s) ['xx'] do not occur in column "
                                             "'g' of "),
    (["--group", "g", "--groups", "ctl"], "--groups must name two different values of column "
                                          "'g'; got ['ctl']"),
    (["--group", "g", "--columns", "u,g"], "--columns must not contain the group column 'g'"),
    (["--groups", "ctl,trt"], "--groups needs --group COLUMN"),
    ([], "a two-sample test needs two CSV files, or one file and --group COLUMN"),
])
def test_group_errors(files, capsys, argv, message):
    tmp, _, _ = files
    rc, out, err = _run(capsys, "two-sample", tmp / "both.csv", *argv)
    assert rc == 2 and out == "" and message in err and err.count("\n") == 1


def test_group_labels_spaces_missing_and_small_groups(files, capsys):
    """Issue 32: "a " and "a" were merged silently, a missing label became a group of its
    own, and a faulty group was named by its position ("`x4`")."""
    tmp, x, y = files
    df = pd.read_csv(tmp / "both.csv")
    spaced = df.copy()
    spaced.loc[0, "g"] = spaced.loc[0, "g"] + " "
    spaced.to_csv(tmp / "spaced.csv", index=False)
    rc, out, err = _run(capsys, "two-sample", tmp / "spaced.csv", "--group", "g")
    label = df.loc[0, "g"]
    assert rc == 2 and out == "" and f"spells the label {label!r} in 2 ways" in err
    # the same extra space on every row of a label is harmless (read as the label)
    padded = df.copy()
    padded["g"] = " " + padded["g"]
    padded.to_csv(tmp / "padded.csv", index=False)
    args = ["--group", "g", "--groups", "ctl,trt", "--seed", 1, "--n-resamples", 49]
    assert (_json(capsys, "two-sample", tmp / "padded.csv", *args)["pvalue"]
            == _json(capsys, "two-sample", tmp / "both.csv", *args)["pvalue"])
    unlabelled = df.copy()
    unlabelled.loc[[0, 5], "g"] = np.nan
    unlabelled.to_csv(tmp / "unlabelled.csv", index=False)
    rc, out, err = _run(capsys, "two-sample", tmp / "unlabelled.csv", "--group", "g")
    assert rc == 2 and "2 row(s) of" in err and "have no label (data row(s) 1, 6)" in err
    assert "--nan-policy omit to leave them out" in err
    d = _json(capsys, "two-sample", tmp / "unlabelled.csv", "--group", "g", "--groups",
              "ctl,trt", "--nan-policy", "omit", "--seed", 1, "--n-resamples", 49)
    assert sum(d["sizes"].values()) == len(df) - 2
    tiny = pd.concat([df, df.iloc[:1].assign(g="solo")])
    tiny.to_csv(tmp / "tiny.csv", index=False)
    rc, out, err = _run(capsys, "k-sample", tmp / "tiny.csv", "--group", "g")
    assert rc == 2 and "group 'solo' of" in err and "has 1 row(s)" in err and "`x" not in err


def test_only_the_greater_alternative_is_offered(capsys):
    from kmtests.cli import _parser

    text = _parser().format_help() + _parser()._subparsers._group_actions[0].choices[
        "two-sample"].format_help()
    assert "{greater}" in text and "two-sided,less" not in text.replace(" ", "")


def test_group_with_three_values_or_two_files_is_refused(files, capsys):
    tmp, _, _ = files
    df = pd.read_csv(tmp / "both.csv")
    df.loc[:2, "g"] = "other"
    df.to_csv(tmp / "three.csv", index=False)
    rc, _, err = _run(capsys, "two-sample", tmp / "three.csv", "--group", "g")
    assert rc == 2 and "column 'g' of" in err and "has 3 value(s)" in err
    hint = f"kmtests k-sample {tmp / 'three.csv'} --group g"
    assert err.endswith(f"choose them with --groups A,B, or compare all 3 with {hint}\n")
    # the suggested command runs the k-sample test of the three groups
    d = _json(capsys, *hint.split()[1:], "--seed", 1, "--n-resamples", 49)
    assert d["test"].startswith("Kernel k-sample test")
    assert d["data_name"].endswith(": g = other, ctl, trt")
    assert list(d["sizes"].values()) == [3, 23, 22]
    rc, _, err = _run(capsys, "two-sample", tmp / "a.csv", tmp / "b.csv", "--group", "g")
    assert rc == 2 and "--group splits one file into the samples; got 2 files" in err


# -- standard input ------------------------------------------------------------------------------
def _stdin(monkeypatch, path):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(path).read_bytes())))


def test_standard_input(files, capsys, monkeypatch):
    tmp, _, _ = files
    args = ["--seed", 1, "--n-resamples", 99]
    want = _json(capsys, "two-sample", tmp / "a.csv", tmp / "b.csv", *args)
    _stdin(monkeypatch, tmp / "a.csv")
    got = _json(capsys, "two-sample", "-", tmp / "b.csv", *args)
    assert got["pvalue"] == want["pvalue"] and got["data_name"] == f"<stdin> and {tmp / 'b.csv'}"
    _stdin(monkeypatch, tmp / "both.csv")
    got = _json(capsys, "independence", "-", "--x", "u", "--y", "v", *args)
    assert got["data_name"] == "u and v in <stdin>"
    rc, _, err = _run(capsys, "two-sample", "-", "-")
    assert rc == 2 and "only one of the files can be standard input ('-')" in err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"u;v\n1;2\n3;4\n")))
    rc, _, err = _run(capsys, "independence", "-", "--x", "u", "--y", "v")
    assert rc == 2 and err.startswith("kmtests: error: <stdin>: the file has a single column")


# -- errors in the command line's words ----------------------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["--engine", "nystrom", "--n-features", "0"],
     "argument --n-features: must be a positive integer; got '0'"),
    (["--statistic", "regularized", "--lam", "-1"], "--lam must be"),
    (["--engine", "exact", "--n-features", "5"], "--n-features"),
    (["--lam", "1,x"], "argument --lam: must be 'auto', a number or comma-separated numbers; "
                       "got '1,x'"),
    (["--engine", "gpu"], "argument --engine: invalid choice: 'gpu'"),
    (["--statistic", "median"], "argument --statistic: invalid choice: 'median'"),
    # the Python API's name='value' is written in the command line's words
    (["--filter", "cutoff"], "kmtests: error: --filter configures --statistic regularized; "
                             "with --statistic unbiased it would be ignored.\n"),
    (["--block-size", "3"], "kmtests: error: --block-size configures --statistic block; "
                            "with --statistic unbiased it would be ignored.\n"),
    (["--engine", "linear", "--statistic", "biased"],
     "kmtests: error: --engine linear computes its own unbiased linear-time statistic; "
     "--statistic biased needs --engine exact or streamed.\n"),
    (["--engine", "block", "--n-resamples", "9"],
     "(--method normal, its default) has no permutations: --n-resamples do(es) not apply. "
     "Drop them, or run a permutation test with --engine exact or streamed."),
])
def test_errors_name_the_command_line_options(files, capsys, argv, message):
    tmp, _, _ = files
    rc, out, err = _run(capsys, "two-sample", tmp / "a.csv", tmp / "b.csv", *argv)
    assert rc == 2 and out == "" and message in err
    assert "Traceback" not in err and "`" not in err.splitlines()[-1]


def test_warnings_are_one_line_in_the_command_line_words(files, capsys):
    """A warning of the Python function is printed as the errors are, and the command goes
    on: here a bandwidth so small that the kernel matrix is the identity."""
    import warnings

    tmp, x, y = files
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        rc, out, err = _run(capsys, "two-sample", tmp / "a.csv", tmp / "b.csv", "--bandwidth",
                            "1e-9", "--n-resamples", 19, "--seed", 1)
    assert rc == 0 and "p-value = 1" in out
    assert err.startswith("kmtests: warning: MMD^2_u with the Gaussian kernel (bandwidth = "
                          "1e-09) is the same for the data and for every permutation")
    assert err.endswith("carries no evidence either way. (DegenerateStatisticWarning)\n")
    assert err.count("\n") == 1
    flags = {"engine": "--engine", "n_resamples": "--n-resamples"}
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        _cli._warning_printer(flags)(UserWarning("use engine='nystrom' or fewer `n_resamples`"),
                                     kmtests.SlowTestWarning, "file.py", 1)
    assert capsys.readouterr().err == ("kmtests: warning: use --engine nystrom or fewer "
                                       "--n-resamples (SlowTestWarning)\n")


def test_python_spelling_becomes_options():
    """`name` and name='value' of the command's options become the options; other names,
    and text that only looks alike, stay."""
    flags = {"engine": "--engine", "n_features": "--n-features", "lam": "--lam"}
    spelled = _cli._spelled
    assert spelled("`n_features` needs engine='nystrom' or 'rff'", flags) == \
        "--n-features needs --engine nystrom or rff"
    assert spelled("engine='exact', 'streamed' or 'auto'; got lam=-1.5", flags) == \
        "--engine exact, streamed or auto; got --lam -1.5"
    assert spelled("process='ar' and kernel='precomputed'\nnext line", flags) == \
        "process='ar' and kernel='precomputed' next line"
    assert spelled("p-value = (1 + #{T_b >= T}) / (1 + B); x.engine='a'", flags) == \
        "p-value = (1 + #{T_b >= T}) / (1 + B); x.engine='a'"


@pytest.mark.parametrize("argv, message", [
    (["--bandwidths", "0"], "argument --bandwidths: must be a positive count; got '0'"),
    (["--bandwidths", "1,a"], "argument --bandwidths: must be 'auto', a count such as 5, or "
                              "comma-separated bandwidths"),
    (["--weights", "heavy"], "argument --weights: must be one of uniform, increasing, "
                             "decreasing, centred or comma-separated numbers; got 'heavy'"),
    (["--alpha", "1.5"], "argument --alpha: must be a number in (0, 1); got '1.5'"),
    (["--lams", "auto,1"], "argument --lams: must be 'auto' or comma-separated numbers"),
])
def test_aggregated_options_are_validated(files, capsys, argv, message):
    tmp, _, _ = files
    rc, out, err = _run(capsys, "aggregated", "two-sample", tmp / "a.csv", tmp / "b.csv", *argv)
    assert rc == 2 and out == "" and message in err


def test_usage_errors_exit_with_status_2(capsys):
    assert _run(capsys, "aggregated")[0] == 2
    assert _run(capsys, "aggregated", "three-sample")[0] == 2
    assert _run(capsys, "independence", "x.csv")[0] == 2  # --x and --y are required
    assert _run(capsys, "two-sample", "--help")[0] == 0


# -- power studies: options and --test ------------------------------------------------------------
POWER = ["power", "--scenario", "mean_shift", "--n", "12", "--effects", "1", "--reps", "3",
         "--n-resamples", "19", "--seed", "2"]
STUDY = dict(sample_sizes=[12], effects=[1.0], repetitions=3, n_resamples=19, rng=2)


def test_power_compares_tests(tmp_path, capsys):
    out = tmp_path / "t.csv"
    rc, text, err = _run(capsys, *POWER, "--test", "MMD: statistic=unbiased",
                         "--test", "SR-MMD: statistic=regularized lam=0.001,0.01",
                         "--test", "B-test: engine=block block-size=3",
                         "--test", "MMDAgg: aggregated=true bandwidths=3", "--out", out)
    assert rc == 0, err
    res = kmtests.power.power_curve("mean_shift", tests={
        "MMD": {"statistic": "unbiased"},
        "SR-MMD": {"statistic": "regularized", "lam": [0.001, 0.01]},
        "B-test": {"engine": "block", "block_size": 3},
        "MMDAgg": {"aggregated": True, "bandwidths": 3}}, **STUDY)
    table = pd.read_csv(out)
    assert list(table["estimator"]) == ["MMD", "SR-MMD", "B-test", "MMDAgg"]
    np.testing.assert_array_equal(table["mean_pvalue"], res.table()["mean_pvalue"])
    assert "B-test: asymptotic normal null (no permutations)" in text


def test_power_test_options_and_json(capsys):
    d = _json(capsys, *POWER, "--kernel", "laplacian", "--statistic", "biased",
              "--engine", "streamed")
    kw = {"kernel": "laplacian", "statistic": "biased", "engine": "streamed"}
    assert d["test_kwargs"] == kw and d["seed"] == 2 and d["estimators"] == ["kme"]
    res = kmtests.power.power_curve("mean_shift", test_kwargs=kw, **STUDY)
    assert [r["mean_pvalue"] for r in d["table"]] == list(res.table()["mean_pvalue"])
    # on an independence scenario --kernel is the kernel of both variables
    d = _json(capsys, "power", "--scenario", "linear", "--n", "12", "--reps", "2",
              "--n-resamples", "19", "--seed", "2", "--kernel", "laplacian")
    assert d["test_kwargs"] == {"kernel_x": "laplacian", "kernel_y": "laplacian"}


@pytest.mark.parametrize("argv, message", [
    (["--test", "x: foo=1"], "--test 'x': unknown option(s) ['foo']; the options of "
                             "two_sample_test: "),
    (["--test", "x: bandwidth=1", "--test", "x: bandwidth=2"],
     "--test labels must be distinct; 'x' is given twice"),
    (["--test", "x: aggregated=maybe"], "--test 'x': aggregated must be true or false"),
    (["--test", "x: n_resamples=9"], "--test 'x': unknown option(s) ['n_resamples']"),
    (["--estimators", "kme", "--test", "x: bandwidth=1"],
     "--estimators and --test cannot be combined"),
    (["--test", "no label"], "argument --test: must be 'LABEL: key=value ...'"),
    (["--test", "x: bandwidth"], "argument --test: must hold key=value pairs after 'x:'"),
])
def test_power_test_errors(capsys, monkeypatch, argv, message):
    monkeypatch.setattr(kmtests.power, "power_curve", lambda *a, **k: pytest.fail("ran"))
    rc, out, err = _run(capsys, *POWER, *argv)
    assert rc == 2 and out == "" and message in err


def test_power_two_sample_options_on_an_independence_scenario_are_refused(capsys, monkeypatch):
    monkeypatch.setattr(kmtests.power, "power_curve", lambda *a, **k: pytest.fail("ran"))
    rc, _, err = _run(capsys, "power", "--scenario", "linear", "--covariance", "split",
                      "--block-size", "4")
    assert rc == 2
    assert ("--covariance, --block-size: not an option of the independence test of scenario "
            "'linear' (independence_test)") in err


# -- through the installed entry point ------------------------------------------------------
def test_the_kmtests_command(files):
    tmp, x, y = files
    script = Path(sys.executable).with_name("kmtests")
    if not script.exists():
        pytest.skip("the kmtests script is not installed next to this Python")
    run = subprocess.run([str(script), "aggregated", "two-sample", "-", str(tmp / "b.csv"),
                          "--bandwidths", "5", "--method", "fuse", "--seed", "1",
                          "--n-resamples", "49", "--json"], input=(tmp / "a.csv").read_bytes(),
                         capture_output=True, check=True)
    d = json.loads(run.stdout)
    want = kmtests.aggregated_two_sample_test(x, y, bandwidths=5, combination="fuse", rng=1,
                                              n_resamples=49)
    assert d["pvalue"] == want.pvalue and d["statistic_name"] == "FUSE"
    bad = subprocess.run([str(script), "two-sample", str(tmp / "a.csv"), str(tmp / "b.csv"),
                          "--engine", "nystrom", "--n-features", "-3"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "argument --n-features: must be a positive integer; got '-3'" in bad.stderr


# -- conventions: missing values and the alternative ------------------------------------------
def test_nan_policy_and_alternative_reach_every_test(files, capsys):
    tmp, a, b = files
    holes = pd.read_csv(tmp / "a.csv")
    holes.loc[[3, 7], "u"] = np.nan
    holes.to_csv(tmp / "h.csv", index=False)
    x = holes.to_numpy()
    rc, _, err = _run(capsys, "two-sample", tmp / "h.csv", tmp / "b.csv", "--seed", 1,
                      "--n-resamples", 49)
    assert rc == 2 and "has a missing value" in err and "(or --nan-policy omit" in err
    d = _json(capsys, "two-sample", tmp / "h.csv", tmp / "b.csv", "--nan-policy", "omit",
              "--seed", 1, "--n-resamples", 49)
    want = kmtests.two_sample_test(x, b, nan_policy="omit", rng=1, n_resamples=49)
    assert d["statistic"] == want.statistic and d["pvalue"] == want.pvalue
    d = _json(capsys, "independence", tmp / "h.csv", "--x", "u", "--y", "v",
              "--nan-policy", "omit", "--seed", 1, "--n-resamples", 49)
    want = kmtests.independence_test(x[:, :1], x[:, 1:], nan_policy="omit", rng=1,
                                     n_resamples=49)
    assert d["statistic"] == want.statistic and d["pvalue"] == want.pvalue
    rc, _, err = _run(capsys, "two-sample", tmp / "a.csv", tmp / "b.csv", "--alternative",
                      "two-sided")
    assert rc == 2 and err.startswith("kmtests: error: ") and "--alternative" in err
    assert "--alternative two-sided has no meaning for a kernel test" in err
    assert "--alternative greater" in err
