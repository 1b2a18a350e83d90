"""``kmtests conditional`` gives the API's results; its errors name the CLI's options."""


import numpy as np
import pandas as pd
import pytest

import kmtests

from ._cli import run as _run
from ._cli import run_json as _json


@pytest.fixture
def data(tmp_path):
    gen = np.random.default_rng(0)
    n = 120
    z = gen.normal(size=n)
    d = (z > 0).astype(int)
    frame = pd.DataFrame({"a": np.sin(2 * z) + 0.3 * gen.normal(size=n),
                          "b": np.cos(2 * z) + 0.3 * gen.normal(size=n), "c": z, "d": d,
                          "e": d + gen.normal(size=n), "f": d + gen.normal(size=n)})
    frame.to_csv(tmp_path / "ci.csv", index=False)
    return tmp_path / "ci.csv", frame


def test_equals_the_api(capsys, data):
    path, f = data
    out = _json(capsys, "conditional", path, "--x", "a", "--y", "b", "--z", "c")
    ref = kmtests.conditional_independence_test(f["a"].to_numpy(), f["b"].to_numpy(),
                                                f["c"].to_numpy())
    assert out["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
    assert out["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
    opts = _json(capsys, "conditional", path, "--x", "a", "--y", "b", "--z", "c,d",
                 "--criterion", "marglik", "--method", "chi2", "--n-resamples", 199,
                 "--seed", 3, "--bandwidth-z", "0.5,1,2", "--lam", "1e-4,1e-2",
                 "--no-augment", "--kernel-y", "laplacian")
    ref = kmtests.conditional_independence_test(
        f["a"].to_numpy(), f["b"].to_numpy(), f[["c", "d"]].to_numpy(), criterion="marglik",
        method="chi2", n_resamples=199, rng=3, bandwidth_z=[0.5, 1.0, 2.0], lam=[1e-4, 1e-2],
        augment=False, kernel_y="laplacian")
    assert opts["pvalue"] == ref.pvalue
    ard = _json(capsys, "conditional", path, "--x", "a", "--y", "b", "--z", "c,d",
                "--bandwidth-z", "ard_each", "--undersmooth", 10, "--z-transform", "rank")
    ref = kmtests.conditional_independence_test(
        f["a"].to_numpy(), f["b"].to_numpy(), f[["c", "d"]].to_numpy(),
        bandwidth_z="ard_each", undersmooth=10.0, z_transform="rank")
    assert ard["pvalue"] == ref.pvalue
    zhang = _json(capsys, "conditional", path, "--x", "a", "--y", "b", "--z", "c",
                  "--null-moments", "zhang")
    ref = kmtests.conditional_independence_test(f["a"].to_numpy(), f["b"].to_numpy(),
                                                f["c"].to_numpy(), null_moments="zhang")
    assert zhang["pvalue"] == ref.pvalue and zhang["pvalue"] != out["pvalue"]
    assert "null_mean_factor" not in zhang["details"] and out["details"]["null_mean_factor"] > 1
    strata = _json(capsys, "conditional", path, "--x", "e", "--y", "f", "--z", "d",
                   "--strata", "d", "--seed", 1, "--n-resamples", 199)
    ref = kmtests.conditional_independence_test(
        f["e"].to_numpy(), f["f"].to_numpy(), f["d"].to_numpy(),
        strata=f["d"].astype(str).to_numpy(), rng=1, n_resamples=199)
    assert strata["pvalue"] == ref.pvalue and strata["details"]["permutations"] == \
        "within 2 strata"
    rff = _json(capsys, "conditional", path, "--x", "a", "--y", "b", "--z", "c", "--engine",
                "rff", "--n-features", 50, "--seed", 2)
    ref = kmtests.conditional_independence_test(f["a"].to_numpy(), f["b"].to_numpy(),
                                                f["c"].to_numpy(), engine="rff", n_features=50,
                                                rng=2)
    assert rff["pvalue"] == ref.pvalue and rff["engine"] == "rff"


def test_a_seed_is_accepted_where_nothing_is_drawn(capsys, data):
    """Issue 32: ``--seed`` with the default (gamma) null was refused; a script that seeds
    every test must run, and the result says that nothing was drawn."""
    path, _ = data
    seeded = _json(capsys, "conditional", path, "--x", "a", "--y", "b", "--z", "c",
                   "--seed", 3)
    plain = _json(capsys, "conditional", path, "--x", "a", "--y", "b", "--z", "c")
    assert seeded["pvalue"] == plain["pvalue"]
    assert any("draws nothing" in n for n in seeded["notes"])
    assert not any("draws nothing" in n for n in plain["notes"])


@pytest.mark.parametrize("argv, message", [
    (["--x", "a", "--y", "a", "--z", "c"], "--x, --y and --z must name different columns"),
    (["--x", "a", "--y", "b", "--z", "c", "--strata", "a"], "--strata a: the strata column"),
    (["--x", "a", "--y", "b", "--z", "c", "--method", "permutation"], "Give --strata"),
    (["--x", "a", "--y", "b", "--z", "nope"], "--z: unknown column(s) ['nope']"),
    (["--x", "a", "--y", "b", "--z", "c", "--bandwidth-z", "-1"], "argument --bandwidth-z"),
    (["--x", "a", "--y", "b", "--z", "c", "--criterion", "loo", "--filter", "cutoff"],
     "--criterion loo is the exact leave-one-out error"),
])
def test_errors(capsys, data, argv, message):
    rc, out, err = _run(capsys, "conditional", data[0], *argv)
    assert rc == 2 and message in err, err
