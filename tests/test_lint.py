"""The linter: ruff with the configuration of pyproject.toml ([tool.ruff]: pyflakes, bugbear,
complexity) reports nothing in the package, the tests and the benchmarks."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: what the linter checks, relative to ROOT
CHECKED = ["kmtests", "tests", "benchmarks"]


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    pytest.importorskip("ruff", reason="the linter is in the `test` extra")
    from ruff.__main__ import find_ruff_bin

    return subprocess.run([find_ruff_bin(), "check", "--no-cache", *args], cwd=cwd,
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "NO_COLOR": "1"})


def test_the_code_is_lint_clean():
    out = _ruff("--config", str(ROOT / "pyproject.toml"), *CHECKED)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("code, rule", [
    ("import os\n", "F401"),                                    # pyflakes: unused import
    ("def f(x=[]):\n    return x\n", "B006"),                   # bugbear: mutable default
    ("def f(x):\n" + "".join(f"    if x == {i}:\n        return {i}\n" for i in range(13))
     + "    return -1\n", "C901"),                             # complexity above 12
])
def test_the_configured_rules_catch_their_faults(tmp_path, code, rule):
    """The configuration is in force: each rule family finds a fault planted for it."""
    (tmp_path / "planted.py").write_text(code)
    out = _ruff("--config", str(ROOT / "pyproject.toml"), "planted.py", cwd=tmp_path)
    assert out.returncode == 1 and rule in out.stdout, out.stdout + out.stderr
