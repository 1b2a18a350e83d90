"""numba's cache of kmtests' compiled kernel stays out of an installed package (issue 32;
the README's two commands in one checkout: ``tests/test_packaging.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kmtests.engines import _numba_cache
from kmtests.engines._jit_hsic import pair_sums


def test_a_checkout_keeps_numba_s_in_tree_cache():
    source = Path(pair_sums.py_func.__code__.co_filename)
    assert not _numba_cache.installed(source)
    locator = _numba_cache.locator_for(pair_sums)
    assert Path(locator.get_cache_path()) == source.parent / "__pycache__"


@pytest.mark.parametrize("folder", ["site-packages", "dist-packages"])
def test_an_installed_package_caches_in_the_user_s_folder(tmp_path, monkeypatch, folder):
    """A source file in ``site-packages`` gets numba's per-user locator (the user's cache
    folder, here ``$XDG_CACHE_HOME/numba``), never the package's ``__pycache__``."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "venv" / "lib" / "python3.11" / folder / "kmtests" / "engines"
    source.mkdir(parents=True)
    (source / "_jit_hsic.py").write_text("# a copy\n")
    assert _numba_cache.installed(source / "_jit_hsic.py")
    impl = _numba_cache._CacheImpl.__new__(_numba_cache._CacheImpl)
    for cls in impl._locator_classes:
        locator = cls.from_function(pair_sums.py_func, str(source / "_jit_hsic.py"))
        if locator is not None:
            break
    path = Path(locator.get_cache_path())
    assert path.is_relative_to(tmp_path / "cache" / "numba"), path
    assert not path.is_relative_to(source)


def test_numba_s_own_folder_still_wins():
    """``NUMBA_CACHE_DIR`` (numba's user-provided locator) comes first, as in numba."""
    cls = _numba_cache._CacheImpl._locator_classes[0]
    assert cls.__name__.lstrip("_") == "UserProvidedCacheLocator"
    assert _numba_cache._CacheImpl._locator_classes[1] is _numba_cache._InstalledPackageLocator
