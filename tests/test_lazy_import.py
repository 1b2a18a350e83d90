"""`import kmtests` loads the package alone; every public name loads on first use.

The public names of :mod:`kmtests` are resolved by the module's ``__getattr__`` (PEP 562):
importing the package loads neither numpy nor any test, and each name of ``__all__``
is then the object of the module it is defined in, looked up there on each use (a name
patched in its module is not kept here after the patch is undone).
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import kmtests


def test_import_loads_the_package_alone():
    code = ("import sys, kmtests; "
            "print(sorted(m for m in sys.modules if m.startswith('kmtests')), "
            "'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "['kmtests', 'kmtests._warnings'] False", out.stdout


def test_every_public_name_resolves_to_its_modules_object():
    for name in kmtests.__all__:
        value = getattr(kmtests, name)
        module = kmtests._ATTRIBUTES.get(name)
        if module is not None:
            assert value is getattr(importlib.import_module(f"kmtests.{module}"), name)
        elif name in kmtests._LAZY:
            assert value is importlib.import_module(f"kmtests.{name}")
    assert set(kmtests.__all__) <= set(dir(kmtests))
    assert set(kmtests._ATTRIBUTES) | set(kmtests._LAZY) <= set(kmtests.__all__)


def test_sub_modules_are_attributes_as_before():
    # `import kmtests` used to load every module; code reaches them as attributes
    code = ("import kmtests; print(kmtests.aggregated.__name__, kmtests._guards.__name__, "
            "kmtests.engines.hsic.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["kmtests.aggregated", "kmtests._guards",
                                  "kmtests.engines.hsic"], out.stdout + out.stderr


def test_a_patch_in_the_defining_module_is_not_kept(monkeypatch):
    import kmtests.twosample as ts

    real = ts.two_sample_test
    monkeypatch.setattr(ts, "two_sample_test", lambda *a, **k: "patched")
    assert kmtests.two_sample_test() == "patched"
    monkeypatch.undo()
    assert kmtests.two_sample_test is real


def test_an_unknown_name_is_an_attribute_error():
    try:
        kmtests.no_such_test  # noqa: B018
    except AttributeError as err:
        assert "no_such_test" in str(err)
    else:  # pragma: no cover - the test fails
        raise AssertionError("kmtests.no_such_test did not raise")


def test_from_import_and_star_import_work():
    code = ("from kmtests import two_sample_test, SlowTestWarning, null; "
            "from kmtests import *; print(callable(independence_test), null.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["True", "kmtests.null"], out.stdout + out.stderr
