"""The documentation renders maths offline: MathJax from the built site, never from a URL.

Each test builds a one-page project with the real ``docs/conf.py`` (a few
seconds), so the check covers the configuration the documentation is built with.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = """Maths
=====

The statistic :math:`\\widehat{\\mathrm{MMD}}^2_u` and

.. math::

   p = \\frac{1 + \\#\\{T_b \\ge T\\}}{1 + B}.
"""


def _build(tmp_path: Path, conf: str) -> tuple[int, Path, str]:
    from sphinx.cmd.build import build_main

    src, out = tmp_path / "src", tmp_path / "html"
    src.mkdir()
    (src / "conf.py").write_text(conf)
    (src / "index.rst").write_text(PAGE)
    log = tmp_path / "warnings.txt"
    code = build_main(["-W", "-q", "-b", "html", "-w", str(log), str(src), str(out)])
    return code, out, log.read_text() if log.exists() else ""


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_docs_load_a_local_mathjax(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert '"sphinx-mathjax-offline"' in conf
    code, out, log = _build(tmp_path, conf)
    assert code == 0, log
    page = (out / "index.html").read_text()
    scripts = re.findall(r"<script[^>]*src=[\"']([^\"']*)[\"']", page)
    mathjax = [s for s in scripts if "mathjax" in s.lower()]
    assert mathjax == ["_static/mathjax/tex-chtml.js"]
    assert not re.search(r"https?://[^\"'\s]*mathjax", page, re.I)
    assert (out / "_static" / "mathjax" / "tex-chtml.js").stat().st_size > 100_000


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_a_remote_mathjax_fails_the_build(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    conf = (ROOT / "docs" / "conf.py").read_text()
    conf = conf.replace('    "sphinx-mathjax-offline",', "")  # back to the CDN default
    assert "sphinx-mathjax-offline" not in conf.split("extensions = [")[1].split("]")[0]
    code, _, log = _build(tmp_path, conf)
    assert code != 0
    assert "pages load MathJax from the network: index.html" in log
