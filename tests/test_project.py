"""Project conventions that a test can hold."""

from pathlib import Path

import pytest

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


def test_the_readme_first_command_is_the_light_install():
    """The first command installs kmtests without extras (the demo needs none); the extras
    of the test-suite and the documentation are installed by the test command."""
    readme = (ROOT / "README.md").read_text().splitlines()
    blocks = [readme[i + 1] for i, line in enumerate(readme) if line.strip() == "```sh"]
    assert blocks[0] == ("python3 -m venv .venv && .venv/bin/pip install -q . && "
                         ".venv/bin/kmtests demo")
    assert '.venv/bin/pip install -q -e ".[test,docs]"' in blocks[1]


def test_the_readme_renders_on_pypi():
    """PyPI shows the README without the repository around it: every link and image is an
    absolute https URL (`twine check` on the built files is in tests/test_packaging.py)."""
    import re

    text = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)\s]+)\)", text)             # [text](target), ![alt](src)
    targets += re.findall(r"^\[[^\]]+\]:\s*(\S+)", text, re.M)  # [label]: target
    targets += re.findall(r"<img[^>]*src=\"([^\"]+)\"", text)
    assert targets
    assert [t for t in targets if not t.startswith("https://")] == []


def _pyproject():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _version_in_init():
    import ast

    tree = ast.parse((ROOT / "kmtests" / "__init__.py").read_text())
    found = [n.value.value for n in tree.body if isinstance(n, ast.Assign)
             and [getattr(t, "id", None) for t in n.targets] == ["__version__"]]
    assert len(found) == 1 and isinstance(found[0], str)
    return found[0]


def test_packaging_metadata():
    """PEP 639 license metadata (an SPDX expression and the license file; no License
    classifier beside it), the version from kmtests/__init__.py, well-formed URLs."""
    import kmtests

    meta = _pyproject()
    project = meta["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith(
        "BSD 3-Clause License\n\nCopyright (c) 2026, the kmtests developers\n")
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]
    assert "Typing :: Typed" in project["classifiers"]
    assert (ROOT / "kmtests" / "py.typed").exists()
    assert project["dynamic"] == ["version"] and "version" not in project
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "kmtests.__version__"}
    assert kmtests.__version__ == _version_in_init()
    assert "setuptools>=77" in meta["build-system"]["requires"]
    urls = project["urls"]
    assert set(urls) == {"Homepage", "Documentation", "Source", "Issues", "Changelog"}
    assert all(u.startswith("https://github.com/kmtests/kmtests") for u in urls.values())
    for extra in ("test",):
        names = [r.split(">")[0].split("[")[0] for r in project["optional-dependencies"][extra]]
        assert {"build", "twine"} <= set(names)


def test_public_api_is_explicit():
    import kmtests

    assert sorted(kmtests.__all__) == sorted(set(kmtests.__all__))
    for name in kmtests.__all__:
        assert hasattr(kmtests, name)


@pytest.mark.slow  # 10 s with a cold cache on a quiet machine, about 2 minutes on a busy one
def test_the_package_type_checks() -> None:
    """`mypy kmtests` with the configuration in pyproject.toml (strict, one documented
    exception) reports nothing: the package ships py.typed."""
    import subprocess
    import sys

    pytest.importorskip("mypy")
    out = subprocess.run([sys.executable, "-m", "mypy", "kmtests"], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


#: the floors of kmtests, top to bottom: an import may only run down (or within a floor)
_FLOORS = [
    ("kmtests", "kmtests.__main__", "kmtests.cli"),
    ("kmtests.power", "kmtests.risk", "kmtests.studies", "kmtests.compare", "kmtests.learn",
     "kmtests.causal"),
    ("kmtests.twosample", "kmtests.independence", "kmtests.aggregated", "kmtests.ksample",
     "kmtests.conditional", "kmtests.joint", "kmtests.goodness",
     "kmtests.timeseries", "kmtests.conditional_two_sample"),
    ("kmtests._plan", "kmtests._posthoc", "kmtests._collection"),
    ("kmtests._driver", "kmtests.scaleout"),
    ("kmtests.results",),
    ("kmtests.null",),
    ("kmtests.statistics",),
    ("kmtests.engines",),
    ("kmtests.problems",),
    ("kmtests.datasets", "kmtests.groundtruth", "kmtests.studies.groundtruth"),
    ("kmtests.estimators",),
    ("kmtests.kernels",),
    ("kmtests._gram", "kmtests._validation", "kmtests._guards", "kmtests._rng",
     "kmtests._typing", "kmtests._warnings", "kmtests._summary", "kmtests._docs",
     "kmtests.studies._checkpoint", "kmtests.studies._canonical", "kmtests._serial",
     "kmtests._longmemory",
     # the compiled sums of _serial, and numba's cache location (it imports no kmtests)
     "kmtests._jit_serial", "kmtests.engines._numba_cache"),
]
#: the only import that may run up: the version string of the package
_UPWARD_ALLOWED = {"kmtests.__version__"}


def _floor(module):
    best = None
    for i, names in enumerate(_FLOORS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and \
                    (best is None or len(name) > best[1]):
                best = (i, len(name))
    return None if best is None else best[0]


def test_imports_run_down_the_floors():
    """The architecture (docs/developer.rst): faces -> driver -> results -> null ->
    statistics -> engines -> problems -> estimators -> kernels -> utilities. Every import,
    lazy ones included, runs down (or stays within a floor): no import dodges a circle,
    and every module of kmtests is on a floor."""
    import ast

    up, unplaced = [], []
    for path in (ROOT / "kmtests").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = module if parts[-1] == "__init__" else module.rsplit(".", 1)[0]
        if _floor(module) is None:
            unplaced.append(module)
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")
                if node.level:
                    base = base[: len(base) - node.level + 1]
                    root = ".".join(base + ([node.module] if node.module else []))
                else:
                    root = node.module or ""
                targets = ([root] if node.module else []) + [f"{root}.{a.name}"
                                                              for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for t in targets:
                if t.startswith("kmtests") and t not in _UPWARD_ALLOWED:
                    ft = _floor(t)
                    if ft is not None and ft < _floor(module):
                        up.append(f"{module}:{node.lineno} imports {t}")
    assert not unplaced, f"modules on no floor: {unplaced}"
    assert not up, "imports running up the floors:\n" + "\n".join(sorted(set(up)))
