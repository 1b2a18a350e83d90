"""The shared parameter descriptions reach every face and every resampling null method."""
from __future__ import annotations

import inspect

import pytest

import kmtests
from kmtests._docs import BLOCKS, with_block
from kmtests.null import METHODS
from kmtests.null.permutation import ResamplingMethod

_RESAMPLING = BLOCKS["resampling"].splitlines()[0]  # "n_resamples : int, optional"


@pytest.mark.parametrize("name", sorted(n for n, c in METHODS.items()
                                         if issubclass(c, ResamplingMethod)))
def test_every_resampling_null_method_documents_its_options_once(name):
    doc = inspect.getdoc(METHODS[name])
    assert doc.count(_RESAMPLING) == 1 and doc.count("Parameters\n----------") == 1
    # the block sits inside the Parameters section, before any other section
    params = doc.index("Parameters\n----------")
    assert params < doc.index(_RESAMPLING)
    for later in ("Notes\n-----", "References\n----------", "Examples\n--------"):
        if later in doc:
            assert doc.index(later) > doc.index("progress : bool")


def test_with_block_keeps_a_class_own_parameters_after_the_shared_ones():
    doc = with_block("""Summary.

    Parameters
    ----------
    length : float
        Its own.

    Notes
    -----
    A note.
    """, "resampling")
    assert doc.index("n_resamples :") < doc.index("progress :") < doc.index("length :") \
        < doc.index("Notes")
    assert with_block("Only a summary.", "resampling").startswith(
        "Only a summary.\n\nParameters\n----------\nn_resamples")
    assert with_block(None, "resampling") is None


def test_every_face_carries_the_conventions():
    for face in (kmtests.two_sample_test, kmtests.independence_test,
                 kmtests.conditional_independence_test, kmtests.goodness_of_fit_test):
        doc = inspect.getdoc(face)
        assert "{{" not in doc and "nan_policy : " in doc, face.__name__
