"""Where numba caches the compiled kernels of kmtests: never inside an installed package.

numba's ``cache=True`` writes the compiled code next to the source, in the module's
``__pycache__`` folder, whenever that folder is writable (its ``InTreeCacheLocator``),
and only falls back to a per-user cache folder otherwise. For a package installed into a
virtual environment the source's folder is writable, so the cache ends up in
``site-packages/kmtests/engines/__pycache__``: a file the installer did not write and
does not remove. Uninstalling kmtests (``pip install -e .`` over a regular install does)
then leaves ``site-packages/kmtests/engines/__pycache__`` behind, and Python imports the
leftover ``site-packages/kmtests`` folder as an empty namespace package that shadows the
editable install (``kmtests --version`` raises ImportError; issue 32).

:func:`enable_caching` gives a dispatcher numba's own cache with one locator more, tried
first: for a source file inside ``site-packages`` (or Debian's ``dist-packages``) it is
numba's per-user locator (the user's cache folder, e.g. ``~/.cache/numba``, with a
subfolder per source folder). Everything else is numba's: ``NUMBA_CACHE_DIR`` still
wins, and a checkout (an editable install, the test-suite) keeps its in-tree cache.
numba's global locator list is not changed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from numba.core import caching

__all__ = ["enable_caching", "installed", "locator_for"]

_INSTALL_DIRS = frozenset({"site-packages", "dist-packages"})


def installed(py_file: str | os.PathLike[str]) -> bool:
    """Whether `py_file` lies in an installed package (a ``site-packages`` folder)."""
    return any(part in _INSTALL_DIRS for part in Path(py_file).resolve().parts)


def _numba(*names: str) -> Any:
    """A numba class by its current name or its older, private one (numba < 0.61)."""
    for name in names:
        found = getattr(caching, name, None)
        if found is not None:
            return found
    raise ImportError(f"numba.core.caching has none of {names}")  # pragma: no cover


_UserWide = _numba("UserWideCacheLocator", "_UserWideCacheLocator")
_CompileResultCacheImpl = _numba("CompileResultCacheImpl")
_FunctionCache = _numba("FunctionCache")


class _InstalledPackageLocator(_UserWide):  # type: ignore[misc, valid-type]
    """numba's per-user locator, for the sources of an installed package only."""

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        if not installed(py_file):
            return None
        return super().from_function(py_func, py_file)


class _CacheImpl(_CompileResultCacheImpl):  # type: ignore[misc, valid-type]
    # numba's list, with the installed-package locator right after the user's own folder
    _locator_classes = list(_CompileResultCacheImpl._locator_classes)
    _locator_classes.insert(1, _InstalledPackageLocator)


class _Cache(_FunctionCache):  # type: ignore[misc, valid-type]
    _impl_class = _CacheImpl


def enable_caching(dispatcher: Any) -> Any:
    """Give a numba dispatcher (``njit`` without ``cache=True``) its on-disk cache, kept
    out of an installed package; returns the dispatcher."""
    dispatcher._cache = _Cache(dispatcher.py_func)
    return dispatcher


def locator_for(dispatcher: Any) -> Any:
    """The locator the dispatcher's cache uses (for the tests)."""
    return dispatcher._cache._impl._locator
