"""Command line and bundled data."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from kmtests import cli as _cli
from kmtests.datasets import load_eckerle4


def test_eckerle4():
    df = load_eckerle4()
    assert df.shape == (35, 2) and list(df.columns) == ["x", "y"]
    assert df["x"].iloc[0] == 400.0 and df["y"].iloc[0] == pytest.approx(1.575e-4)
    assert df["y"].idxmax() == int(np.argmax(df["y"].to_numpy()))
    assert df["x"].iloc[df["y"].idxmax()] == pytest.approx(451.0, abs=5)  # the peak


def test_demo_prints_two_reports(capsys):
    assert _cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    assert out.count("data:  ") == 2
    assert "Kernel two-sample test (MMD)" in out and "Kernel independence test (HSIC)" in out
    assert "HSIC_b = " in out and "MMD^2_u = " in out


def test_two_sample_and_independence_csv(tmp_path, capsys, rng):
    a = pd.DataFrame({"u": rng.normal(size=20), "v": rng.normal(size=20), "lab": ["q"] * 20})
    b = pd.DataFrame({"u": rng.normal(2, size=25), "v": rng.normal(size=25), "lab": ["r"] * 25})
    a.to_csv(tmp_path / "a.csv", index=False)
    b.to_csv(tmp_path / "b.csv", index=False)
    rc = _cli.main(["two-sample", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"),
                    "--columns", "u,v", "--n-resamples", "199", "--seed", "1", "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert d["sizes"] == {"n_x": 20, "n_y": 25} and d["n_resamples"] == 199
    assert d["pvalue"] == 1 / 200 and d["seed"] == 1
    rc = _cli.main(["independence", str(tmp_path / "a.csv"), "--x", "u", "--y", "v",
                    "--n-resamples", "99", "--seed", "2"])
    assert rc == 0
    assert "HSIC_b = " in capsys.readouterr().out
    # non-numeric columns and unknown columns are clear errors (exit code 2)
    assert _cli.main(["two-sample", str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]) == 2
    assert "non-numeric column(s) ['lab']" in capsys.readouterr().err
    assert _cli.main(["independence", str(tmp_path / "a.csv"), "--x", "zz", "--y", "v"]) == 2
    assert "unknown column(s) ['zz']" in capsys.readouterr().err


def test_python_dash_m_entry_point():
    out = subprocess.run([sys.executable, "-m", "kmtests", "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert "demo" in out and "two-sample" in out and "independence" in out
