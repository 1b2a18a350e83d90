"""What the faces' type hints and docstrings list is what the registries hold (issue 26:
derive, don't restate). Python's ``Literal`` types are written by hand for the type
checker, so this test keeps them, and the docstrings' choice lists, equal to the
registries: a statistic, method or engine added to a registry and not to a face's
signature and docs fails here."""

from __future__ import annotations

import re
import typing

import pytest

import kmtests
from kmtests.cli import _args
from kmtests.null import METHODS
from kmtests.statistics import statistic_names

FACES = {"two_sample": kmtests.two_sample_test, "independence": kmtests.independence_test,
         "k_sample": kmtests.k_sample_test,
         "conditional": kmtests.conditional_independence_test,
         "joint": kmtests.joint_independence_test,
         "one_sample": kmtests.goodness_of_fit_test}


def _literal(face, key):
    hint = typing.get_type_hints(face)[key]
    out = set()
    for arg in (hint, *typing.get_args(hint)):
        if typing.get_origin(arg) is typing.Literal:
            out |= set(typing.get_args(arg))
    return out


def _documented(face, key):
    m = re.search(rf"\n    {key} : \{{([^}}]*)\}}", face.__doc__)
    return None if m is None else {v.strip().strip('"') for v in m.group(1).split(",")}


@pytest.mark.parametrize("kind", [k for k in FACES if k != "joint"])
def test_statistic_names_are_the_registrys(kind):
    names = set(statistic_names(kind))
    assert _literal(FACES[kind], "statistic") == names
    assert _documented(FACES[kind], "statistic") == names


@pytest.mark.parametrize("kind", list(FACES))
def test_method_names_are_registered_and_documented(kind):
    face = FACES[kind]
    literal = _literal(face, "method")
    assert literal <= set(METHODS)
    assert _documented(face, "method") == literal


@pytest.mark.parametrize("kind", ["two_sample", "independence", "k_sample"])
def test_documented_engines_are_the_registrys(kind):
    assert _documented(FACES[kind], "engine") == set(_args.engines(kind))
