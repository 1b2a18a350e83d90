"""The package as a user gets it: the sdist and the wheel are built from the sources,
checked as PyPI checks them (``twine check --strict``), and the wheel is installed in a
fresh virtual environment (no system site-packages, no access to this checkout), where
``kmtests --version``, ``kmtests demo`` and a test on CSV files run through the installed
console script.

The build fetches setuptools and the install fetches kmtests' dependencies from the
package index (pip's cache makes it about 30 s here; ``benchmarks/bench_install.py``
measures the README's install command).
"""

from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kmtests

ROOT = Path(__file__).resolve().parents[1]
#: the files the build reads (MANIFEST.in says what the sdist keeps)
SOURCES = ["kmtests", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "CHANGELOG.md",
           "tests", "docs"]

pytestmark = pytest.mark.slow


def _run(argv, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kw)
    assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """The sdist and the wheel built from it (``python -m build``), from a copy of the
    sources, so that the build leaves nothing in the checkout."""
    pytest.importorskip("build")
    tmp = tmp_path_factory.mktemp("build")
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_build"))
        else:
            shutil.copy2(ROOT / name, src / name)
    out = tmp / "dist"
    _run([sys.executable, "-m", "build", "--outdir", out, src])
    return out


def _one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def test_twine_check_passes(dist):
    pytest.importorskip("twine")
    proc = _run([sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir())])
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_the_wheel_holds_the_package_its_data_and_license(dist):
    wheel = _one(dist, "kmtests-*-py3-none-any.whl")
    version = kmtests.__version__
    assert wheel.name == f"kmtests-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = f"kmtests-{version}.dist-info"
        meta = email.message_from_bytes(z.read(f"{info}/METADATA"))
        scripts = z.read(f"{info}/entry_points.txt").decode()
    for needed in ("kmtests/py.typed", "kmtests/datasets/data/eckerle4.csv",
                   "kmtests/cli/__init__.py", "kmtests/engines/_jit_hsic.py",
                   f"{info}/licenses/LICENSE"):
        assert needed in names
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "docs/"))]
    package = {p.relative_to(ROOT).as_posix() for p in (ROOT / "kmtests").rglob("*.py")}
    assert package <= names, sorted(package - names)
    assert meta["Name"] == "kmtests" and meta["Version"] == version
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert meta["Requires-Python"] == ">=3.10"
    assert meta["Description-Content-Type"] == "text/markdown"
    assert "python3 -m venv .venv && .venv/bin/pip install -q ." in meta.get_payload()
    classifiers = meta.get_all("Classifier")
    assert "Typing :: Typed" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert set(urls) == {"Homepage", "Documentation", "Source", "Issues", "Changelog"}
    required = {r.split(">")[0] for r in meta.get_all("Requires-Dist") if ";" not in r}
    assert required == {"numpy", "scipy", "numba", "statsmodels", "pandas", "threadpoolctl"}
    assert "kmtests = kmtests.cli:main" in scripts


def test_the_sdist_holds_what_builds_the_package(dist):
    """The sdist builds and installs kmtests (the wheel above was built from it) and
    carries the test-suite and the documentation sources (issue 32); the benchmarks and
    the CI script stay in the repository."""
    sdist = _one(dist, "kmtests-*.tar.gz")
    top = f"kmtests-{kmtests.__version__}"
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for needed in ("LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "PKG-INFO",
                   "kmtests/py.typed", "kmtests/datasets/data/eckerle4.csv"):
        assert needed in names, needed
    assert sdist.name == f"{top}.tar.gz"
    assert not [n for n in names if n.startswith(("benchmarks/", ".ci/", "docs/_build/"))]
    for needed in ("tests/conftest.py", "tests/test_packaging.py", "docs/conf.py",
                   "docs/index.rst", "docs/user_guide/where.rst"):
        assert needed in names, needed
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".nbi"))]


@pytest.fixture(scope="module")
def venv(dist, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel installed (its dependencies from the
    package index), that neither this checkout nor this interpreter's packages reach."""
    where = tmp_path_factory.mktemp("venv") / "venv"
    _run([sys.executable, "-m", "venv", where])
    wheel = _one(dist, "kmtests-*.whl")
    _run([where / "bin" / "python", "-m", "pip", "install", "-q", wheel], env=_clean_env())
    return where


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}


def _kmtests(venv: Path, *argv, cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "bin" / "kmtests"), *map(str, argv)], cwd=cwd,
                          env=_clean_env(), capture_output=True, text=True, **kw)


def test_the_installed_package_is_the_wheel(venv, tmp_path):
    proc = _run([venv / "bin" / "python", "-c",
                 "import importlib.metadata as m, kmtests, numpy, sys; "
                 "print(kmtests.__file__); print(m.version('kmtests')); print(sys.prefix)"],
                cwd=tmp_path, env=_clean_env())
    where, version, prefix = proc.stdout.split()
    assert Path(where).is_relative_to(venv) and version == kmtests.__version__
    assert Path(prefix) == venv
    assert (Path(where).parent / "py.typed").exists()


def test_version_and_demo_through_the_console_script(venv, tmp_path, capsys):
    proc = _kmtests(venv, "--version", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0, f"kmtests {kmtests.__version__}\n", "")
    proc = _run([venv / "bin" / "python", "-m", "kmtests", "--version"], cwd=tmp_path,
                env=_clean_env())
    assert proc.stdout == f"kmtests {kmtests.__version__}\n"
    demo = _kmtests(venv, "demo", cwd=tmp_path)
    assert demo.returncode == 0 and demo.stderr == "", demo.stderr
    # the installed wheel prints what this checkout prints, word for word
    from kmtests.cli import main

    assert main(["demo"]) == 0
    assert demo.stdout == capsys.readouterr().out
    assert "data:  wavelength x and transmittance y" in demo.stdout


def test_a_test_on_csv_files_through_the_console_script(venv, tmp_path):
    gen = np.random.default_rng(11)
    x = gen.normal(size=(25, 2))
    y = gen.normal(0.7, size=(30, 2))
    pd.concat([pd.DataFrame(x, columns=["u", "v"]).assign(arm="a"),
               pd.DataFrame(y, columns=["u", "v"]).assign(arm="b")]
              ).to_csv(tmp_path / "trial.csv", index=False)
    pd.DataFrame(y, columns=["u", "v"]).to_csv(tmp_path / "b.csv", index=False)
    want = kmtests.two_sample_test(x, y, rng=3, n_resamples=199)
    proc = _kmtests(venv, "two-sample", "trial.csv", "--group", "arm", "--seed", 3,
                    "--n-resamples", 199, "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["statistic"] == pytest.approx(want.statistic, rel=1e-12)
    assert got["pvalue"] == want.pvalue
    assert got["data_name"] == "trial.csv: arm = a and arm = b"
    # standard input, and an error in the command line's words (exit status 2)
    a_csv = pd.DataFrame(x, columns=["u", "v"]).to_csv(index=False)
    proc = _kmtests(venv, "two-sample", "-", "b.csv", "--seed", 3, "--n-resamples", 199,
                    "--json", cwd=tmp_path, input=a_csv)
    assert proc.returncode == 0 and json.loads(proc.stdout)["pvalue"] == want.pvalue
    bad = _kmtests(venv, "two-sample", "trial.csv", "--group", "arm", "--filter", "cutoff",
                   cwd=tmp_path)
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == ("kmtests: error: --filter configures --statistic regularized; with "
                          "--statistic unbiased it would be ignored.\n")


# -- the README's two commands in one checkout (issue 32) -----------------------------------
def _readme_commands() -> list[str]:
    """The README's shell commands, in order (the first and the test command)."""
    lines = (ROOT / "README.md").read_text().splitlines()
    return [lines[i + 1] for i, line in enumerate(lines) if line == "```sh"]


def test_the_readme_commands_in_order_in_one_checkout(tmp_path):
    """The README's first command (a regular install and the demo, whose HSIC test
    compiles the numba kernel and caches it), then an editable install over it in the
    same checkout: ``kmtests --version`` still works from another folder. Before, numba
    wrote its cache into ``site-packages/kmtests/engines/__pycache__``; ``pip install -e``
    uninstalled the wheel by its RECORD and left that folder, which Python then imported
    as an empty namespace package shadowing the editable install (ImportError)."""
    first = _readme_commands()[0]
    assert first == "python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/kmtests demo"
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, checkout / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, checkout / name)
    env = _clean_env()
    env["XDG_CACHE_HOME"] = str(tmp_path / "user-cache")  # numba's per-user cache, here
    demo = _run(["bash", "-c", first], cwd=checkout, env=env)
    assert "data:  wavelength x and transmittance y" in demo.stdout
    site = _run([checkout / ".venv" / "bin" / "python", "-c",
                 "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                cwd=tmp_path, env=env).stdout.strip()
    # the demo's compiled kernel went to the user's cache, not into the installed package
    assert not list(Path(site).glob("kmtests/**/*.nbi"))
    assert list((tmp_path / "user-cache" / "numba").rglob("_jit_hsic.pair_sums-*.nbi"))
    _run([checkout / ".venv" / "bin" / "pip", "install", "-q", "-e", "."], cwd=checkout,
         env=env)
    assert not (Path(site) / "kmtests").exists()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = _run([checkout / ".venv" / "bin" / "kmtests", "--version"], cwd=elsewhere, env=env)
    assert proc.stdout == f"kmtests {kmtests.__version__}\n"
    proc = _run([checkout / ".venv" / "bin" / "python", "-c",
                 "import kmtests; print(kmtests.__file__)"], cwd=elsewhere, env=env)
    assert Path(proc.stdout.strip()) == checkout / "kmtests" / "__init__.py"
