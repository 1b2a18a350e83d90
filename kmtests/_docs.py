"""The parameter descriptions the faces share, written once.

A face's (or a null method's) docstring names a shared block on a line of its own, ``{{conventions}}`` or
``{{resampling}}``, indented as its parameters are; :func:`shared_docs` puts the block
there when the module is imported (so ``help()``, Sphinx and the doctests see the whole
text).
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable, TypeVar

__all__ = ["BLOCKS", "shared_docs", "with_block"]

F = TypeVar("F", bound=Callable[..., Any])

#: the shared parameter descriptions, by name (numpydoc, unindented)
BLOCKS: dict[str, str] = {
    "resampling": """\
n_resamples : int, optional
    Number of random draws of the null (default 9999): permutations — when the
    distinct arrangements are not more, all of them are enumerated and the p-value is
    exact — or the draws of a resampling null (wild bootstrap, weighted chi-square,
    bootstrap, samples of the model).
rng : None, int, SeedSequence or Generator
    Source of everything random: the null's draws and the statistic's own (a training
    split, low-rank features). A fixed value gives bit-identical p-values whatever
    `batch` and `n_jobs` are. A null that draws nothing accepts it and the report says
    that nothing was drawn.
batch : int, optional
    Arrangements or draws evaluated per step (default: as many as fit in about 16 MB
    besides the kernel matrices); the p-value does not depend on it.
n_jobs : int, optional
    Threads: -1 or 1 to the number of CPUs (None: the default, decided from the CPUs
    idle at the call). Results do not depend on `n_jobs`.
progress : bool, optional
    Show a progress bar (needs tqdm). None (default): only on a terminal or in a
    notebook, when the null distribution is expected to take more than a few seconds.""",
    "conventions": """\
alternative : {"greater"}
    The alternative hypothesis, as scipy's tests name it. The statistic estimates a
    quantity that is 0 under the null hypothesis and positive otherwise, so the test is
    one-sided: ``"greater"`` (default) is the only value, and ``"two-sided"`` or
    ``"less"`` is an error that says why (:doc:`/user_guide/conventions`).
nan_policy : {"raise", "omit"}
    Missing values (NaN, None, ``pd.NA``): ``"raise"`` (default) names the argument,
    row and column of the first one; ``"omit"`` leaves out the observations that have
    one — each sample its own rows (two or k samples), the whole observation when the
    data are paired (every variable's row) — and the report says which.
    ``"propagate"`` is refused (a test has no NaN answer); an infinity is an error
    under either policy.
axis : {0, 1}
    The axis of 2-D data that indexes the observations: 0 (default, a row per
    observation) or 1 (a column per observation; DataFrames are transposed). It does
    not run one test per row as scipy's one-dimensional tests do.""",
}

_MARK = re.compile(r"^( *)\{\{(\w+)\}\}$", re.M)


def shared_docs(fn: F) -> F:
    """Put the shared blocks in `fn`'s docstring (see the module docs)."""
    if fn.__doc__:
        fn.__doc__ = _MARK.sub(lambda m: "\n".join(
            m.group(1) + line if line else line
            for line in BLOCKS[m.group(2)].splitlines()), fn.__doc__)
    return fn


_SECTION = re.compile(r"^[A-Z][a-z]+( [A-Z]?[a-z]+)*\n-{3,}$", re.M)


def with_block(doc: str | None, name: str) -> str | None:
    """`doc` with the shared block `name` first in its Parameters section (a Parameters
    section is made before the first section if it has none)."""
    if not doc:
        return doc
    text, block = inspect.cleandoc(doc).rstrip(), BLOCKS[name]
    head = "Parameters\n----------\n"
    if head in text:
        return text.replace(head, head + block + "\n", 1)
    first = _SECTION.search(text)
    if first is None:
        return f"{text}\n\n{head}{block}\n"
    return f"{text[:first.start()]}{head}{block}\n\n{text[first.start():]}"
