"""The command line's k-sample test and dependent-data options: ``kmtests k-sample``
(files matched by column name, or the groups of one file; ``--pairwise``),
``--strata``, ``--blocks`` and ``--method wild`` give the API's results."""


import numpy as np
import pandas as pd
import pytest

import kmtests

from ._cli import run as _run
from ._cli import run_json as _json


@pytest.fixture
def data(tmp_path):
    gen = np.random.default_rng(7)
    frames = {g: pd.DataFrame({"u": gen.normal(shift, size=20), "v": gen.normal(size=20),
                               "pair": np.arange(20)})
              for g, shift in (("a", 0.0), ("b", 0.0), ("c", 1.2))}
    for g, f in frames.items():
        # columns in another order in each file: matched by name
        f[["v", "pair", "u"] if g == "b" else ["u", "v", "pair"]].to_csv(
            tmp_path / f"{g}.csv", index=False)
    both = pd.concat([f.assign(grp=g) for g, f in frames.items()]).sample(frac=1,
                                                                          random_state=1)
    both.to_csv(tmp_path / "all.csv", index=False)
    arrays = {g: f[["u", "v"]].to_numpy() for g, f in frames.items()}
    return tmp_path, frames, arrays


def test_k_sample_files_and_groups_equal_the_api(capsys, data):
    path, frames, arr = data
    ref = kmtests.k_sample_test(arr["a"], arr["b"], arr["c"], n_resamples=199, rng=3)
    files = _json(capsys, "k-sample", path / "a.csv", path / "b.csv", path / "c.csv",
                  "--columns", "u,v", "--n-resamples", 199, "--seed", 3)
    group = _json(capsys, "k-sample", path / "all.csv", "--group", "grp", "--groups", "a,b,c",
                  "--columns", "u,v", "--n-resamples", 199, "--seed", 3)
    for out in (files, group):
        assert out["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
        assert out["pvalue"] == ref.pvalue
    # all groups in order of appearance by default; --groups picks and orders them
    order = list(dict.fromkeys(pd.read_csv(path / "all.csv")["grp"]))
    assert order != ["a", "b", "c"]  # the file's order, not the alphabet
    default = _json(capsys, "k-sample", path / "all.csv", "--group", "grp", "--columns", "u,v",
                    "--n-resamples", 199, "--seed", 3)
    by_order = kmtests.k_sample_test(*(arr[g] for g in order), n_resamples=199, rng=3)
    assert default["pvalue"] == by_order.pvalue
    assert default["data_name"].endswith("grp = " + ", ".join(order))
    two = _json(capsys, "k-sample", path / "all.csv", "--group", "grp", "--groups", "c,a",
                "--columns", "u,v", "--n-resamples", 99, "--seed", 1)
    api = kmtests.k_sample_test(arr["c"], arr["a"], n_resamples=99, rng=1)
    assert two["pvalue"] == api.pvalue


def test_k_sample_pairwise_names_the_groups(capsys, data):
    path, _, arr = data
    rc, out, err = _run(capsys, "k-sample", path / "all.csv", "--group", "grp", "--groups",
                        "a,b,c", "--columns", "u,v", "--n-resamples", 199, "--seed", 2,
                        "--pairwise")
    assert rc == 0, err
    assert "Pairwise two-sample tests (Holm-adjusted" in out
    table = out.split("Pairwise two-sample tests")[1].splitlines()[2:5]
    assert [line.split()[:2] for line in table] == [["a", "b"], ["a", "c"], ["b", "c"]]
    js = _json(capsys, "k-sample", path / "all.csv", "--group", "grp", "--groups", "a,b,c",
               "--columns", "u,v", "--n-resamples", 199, "--seed", 2, "--pairwise")
    ref = kmtests.k_sample_test(arr["a"], arr["b"], arr["c"], n_resamples=199, rng=2,
                                sample_names=["a", "b", "c"]).pairwise()
    assert [(r["sample_a"], r["sample_b"]) for r in js["pairwise"]] == [
        ("a", "b"), ("a", "c"), ("b", "c")]
    np.testing.assert_array_equal([r["pvalue_adjusted"] for r in js["pairwise"]],
                                  ref["pvalue_adjusted"])


def test_k_sample_options_reach_the_test(capsys, data):
    path, _, arr = data
    argv = ["k-sample", path / "all.csv", "--group", "grp", "--groups", "a,b,c",
            "--columns", "u,v"]
    gamma = _json(capsys, *argv, "--statistic", "biased", "--method", "gamma")
    ref = kmtests.k_sample_test(arr["a"], arr["b"], arr["c"], statistic="biased",
                                method="gamma")
    assert gamma["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
    rff = _json(capsys, *argv, "--engine", "rff", "--n-features", 30, "--seed", 4,
                "--n-resamples", 99, "--kernel", "laplacian", "--bandwidth", 2)
    ref = kmtests.k_sample_test(arr["a"], arr["b"], arr["c"], engine="rff", n_features=30,
                                rng=4, n_resamples=99, kernel="laplacian", bandwidth=2.0)
    assert rff["pvalue"] == ref.pvalue
    assert rff["statistic"] == pytest.approx(ref.statistic, rel=1e-12)


@pytest.mark.parametrize("argv, message", [
    (["{p}/a.csv"], "a k-sample test needs at least two CSV files"),
    (["{p}/all.csv", "--group", "grp", "--groups", "a"], "--groups must name at least two"),
    (["{p}/all.csv", "{p}/a.csv", "--group", "grp"], "--group splits one file"),
    (["{p}/all.csv", "--group", "grp", "--groups", "a,zz"], "do not occur in column"),
    (["{p}/a.csv", "{p}/all.csv"], "have different columns"),
    (["-", "-"], "only one of the files can be standard input"),
])
def test_k_sample_errors(capsys, data, argv, message):
    path = data[0]
    rc, out, err = _run(capsys, "k-sample", *[a.format(p=path) for a in argv])
    assert rc == 2 and message in err and out == ""


def test_strata_blocks_and_wild_equal_the_api(capsys, data):
    path, frames, arr = data
    a, c = frames["a"], frames["c"]
    # a paired design: the pair column labels each row's stratum in both files
    out = _json(capsys, "two-sample", path / "a.csv", path / "c.csv", "--columns", "u,v",
                "--strata", "pair", "--n-resamples", 199, "--seed", 5)
    ref = kmtests.two_sample_test(arr["a"], arr["c"], strata=(a["pair"].astype(str),
                                                              c["pair"].astype(str)),
                                  n_resamples=199, rng=5)
    assert out["pvalue"] == ref.pvalue
    # the data columns default to all but the strata column
    default = _json(capsys, "two-sample", path / "a.csv", path / "c.csv", "--strata", "pair",
                    "--n-resamples", 199, "--seed", 5)
    assert default["pvalue"] == ref.pvalue
    blocks = _json(capsys, "two-sample", path / "a.csv", path / "c.csv", "--columns", "u,v",
                   "--blocks", 5, "--n-resamples", 199, "--seed", 5)
    assert blocks["pvalue"] == kmtests.two_sample_test(arr["a"], arr["c"], blocks=5,
                                                       n_resamples=199, rng=5).pvalue
    wild = _json(capsys, "two-sample", path / "a.csv", path / "c.csv", "--columns", "u,v",
                 "--method", "wild", "--n-resamples", 199, "--seed", 5)
    assert wild["pvalue"] == kmtests.two_sample_test(arr["a"], arr["c"], method="wild",
                                                     n_resamples=199, rng=5).pvalue
    full = pd.read_csv(path / "all.csv")
    ind = _json(capsys, "independence", path / "all.csv", "--x", "u", "--y", "v", "--strata",
                "grp", "--n-resamples", 199, "--seed", 6)
    assert ind["pvalue"] == kmtests.independence_test(
        full["u"].to_numpy(), full["v"].to_numpy(), strata=full["grp"].to_numpy(),
        n_resamples=199, rng=6).pvalue
    ind = _json(capsys, "independence", path / "all.csv", "--x", "u", "--y", "v", "--blocks",
                6, "--n-resamples", 199, "--seed", 6)
    assert ind["pvalue"] == kmtests.independence_test(
        full["u"].to_numpy(), full["v"].to_numpy(), blocks=6, n_resamples=199, rng=6).pvalue


@pytest.mark.parametrize("argv, message", [
    (["independence", "{p}/all.csv", "--x", "u", "--y", "v", "--strata", "u"],
     "--strata u: the strata column must not be one of --x, --y"),
    (["independence", "{p}/all.csv", "--x", "u", "--y", "v", "--strata", "nope"],
     "--strata: unknown column 'nope'"),
    (["two-sample", "{p}/a.csv", "{p}/c.csv", "--columns", "u,pair", "--strata", "pair"],
     "--columns must not contain the --strata column"),
    (["two-sample", "{p}/a.csv", "{p}/c.csv", "--strata", "pair", "--blocks", "5"],
     "give --strata or --blocks, not both"),
    (["two-sample", "{p}/a.csv", "{p}/c.csv", "--blocks", "3"], "--blocks must divide"),
    (["independence", "{p}/all.csv", "--x", "u", "--y", "v", "--blocks", "5", "--method",
      "gamma"], "restrict the permutations"),
])
def test_dependence_option_errors(capsys, data, argv, message):
    path = data[0]
    rc, out, err = _run(capsys, *[a.format(p=path) for a in argv])
    assert rc == 2 and message in err, err


def test_blank_stratum_is_an_error(capsys, data, tmp_path):
    path = data[0]
    f = pd.read_csv(path / "all.csv")
    f.loc[3, "grp"] = None
    f.to_csv(tmp_path / "blank.csv", index=False)
    rc, out, err = _run(capsys, "independence", tmp_path / "blank.csv", "--x", "u", "--y", "v",
                        "--strata", "grp")
    assert rc == 2 and "column 'grp' (--strata) has an empty cell in data row 4" in err
