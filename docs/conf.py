"""Sphinx configuration for the kmtests documentation.

Build (warnings are errors)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html
    python -m sphinx -W -b doctest docs docs/_build/doctest

The build needs no network: no intersphinx inventories, no theme downloads
(alabaster ships with Sphinx), and the pages need none to be read: MathJax
is served from the built site itself (``sphinx-mathjax-offline`` copies its
bundled MathJax 3 into ``_static/mathjax``). :func:`setup` makes a page that
loads MathJax from a URL a build error.
"""

from __future__ import annotations

import doctest
import os
import re
import sys
from pathlib import Path

# Make the package importable from a plain checkout too (it is normally
# installed editable, in which case this is a no-op).
sys.path.insert(0, os.path.abspath(".."))

import kmtests  # noqa: E402

# -- Project information -------------------------------------------------------
project = "kmtests"
author = "kmtests developers"
copyright = "2025, kmtests developers"
release = kmtests.__version__
version = ".".join(release.split(".")[:2])

# -- General configuration ---------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # a local MathJax (sets mathjax_path to _static/mathjax)
    "numpydoc",
    "matplotlib.sphinxext.plot_directive",  # the pictures of user_guide/where
]

# -- the plot directive: figures rendered in the build (matplotlib, the docs extra) ---------
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 90)]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
root_doc = "index"
nitpicky = False
default_role = "obj"  # `name` in docstrings is a cross-reference, as in numpy/scipy

# -- autodoc / autosummary -----------------------------------------------------------
# Stubs go to docs/api/generated/ (git-ignored), regenerated on every build.
autosummary_generate = True
autosummary_generate_overwrite = True
# Module pages list exactly the names in the module's __all__, so a new public
# member (e.g. a new estimator class) is documented as soon as it is exported.
autosummary_ignore_module_all = False
autosummary_imported_members = False
autodoc_typehints = "none"  # numpydoc Parameters sections carry the types
autodoc_default_options = {"member-order": "bysource"}

# -- numpydoc ----------------------------------------------------------------------------
numpydoc_show_class_members = False  # members are listed by the class template
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- doctest (sphinx.ext.doctest) -----------------------------------------------------
# Examples in the pages and in the API docstrings are run by
# ``python -m sphinx -b doctest``. They print formatted numbers, never reprs.
doctest_default_flags = (
    doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL | doctest.DONT_ACCEPT_TRUE_FOR_1
)
doctest_test_doctest_blocks = "default"  # plain >>> blocks are tested too

# -- HTML ------------------------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"kmtests {release}"
html_static_path = []
html_theme_options = {
    "description": "Kernel two-sample and independence tests with better kernel mean estimators",
    "fixed_sidebar": True,
    "page_width": "1100px",
    "sidebar_width": "240px",
}
html_sidebars = {
    "**": ["about.html", "navigation.html", "relations.html", "searchbox.html"],
}


# -- Offline maths ---------------------------------------------------------------------
#: a <script> that loads MathJax from the network
REMOTE_MATHJAX = re.compile(r"""<script[^>]*src=["'](?:https?:)?//[^"']*mathjax""", re.I)


def check_offline_mathjax(app, exc) -> None:
    """Fail the HTML build if a page loads MathJax from a URL, or the local copy is missing."""
    from sphinx.errors import ExtensionError

    if exc is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    remote = [str(p.relative_to(out)) for p in out.rglob("*.html")
              if REMOTE_MATHJAX.search(p.read_text(encoding="utf-8"))]
    if remote:
        raise ExtensionError(f"pages load MathJax from the network: {', '.join(remote[:5])}")
    if not (out / "_static" / "mathjax" / "tex-chtml.js").is_file():
        raise ExtensionError("the local MathJax (_static/mathjax/tex-chtml.js) is missing")


def setup(app) -> None:
    # after sphinx-mathjax-offline's own build-finished handler, which copies MathJax
    app.connect("build-finished", check_offline_mathjax, priority=900)
