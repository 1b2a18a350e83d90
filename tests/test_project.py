"""Project conventions that a test can hold."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command_exactly():
    readme = (ROOT / "README.md").read_text().splitlines()
    blocks = [readme[i + 1] for i, line in enumerate(readme) if line.strip() == "```sh"]
    assert len(blocks) >= 2
    demo, test = blocks[0], blocks[1]
    assert demo.endswith("kmtests demo")
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line and not line.startswith("#") and not line.startswith(("set ", "cd ", "export "))]
    assert ci == [test]


def test_public_api_is_explicit():
    import kmtests

    assert sorted(kmtests.__all__) == sorted(set(kmtests.__all__))
    for name in kmtests.__all__:
        assert hasattr(kmtests, name)


def test_the_package_type_checks() -> None:
    """`mypy kmtests` with the configuration in pyproject.toml (strict, one documented
    exception) reports nothing: the package ships py.typed."""
    import subprocess
    import sys

    import pytest

    pytest.importorskip("mypy")
    out = subprocess.run([sys.executable, "-m", "mypy", "kmtests"], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
