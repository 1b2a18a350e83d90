"""A SlowTestWarning's advice names only options of the function that warns.

Each public test that takes ``n_resamples`` is run with its permutation loop announced as
slow (``SLOW_SECONDS`` below zero), in the configurations whose advice differs (an
estimator tuned per permutation, a collection of estimators, a problem without low-rank
engines); every keyword the advice names (``name=...`` or `` `name` ``) must be a
parameter of that function (the CLI turns them into its flags). The goodness-of-fit test
draws no permutations: its statistic's advice is inspected through its plan.
"""

from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import pytest

import kmtests
from kmtests import _guards, _plan

#: keywords an advice names: ``engine='nystrom'``, ``n_resamples=999``, `` `n_features` ``
_NAMED = re.compile(r"(?<![\w.])([a-z_][a-z0-9_]*)=|`([a-z_][a-z0-9_]*)`")


def _named(text: str) -> set[str]:
    return {a or b for a, b in _NAMED.findall(text)}


def _cases() -> list[tuple[str, object, tuple, dict]]:
    gen = np.random.default_rng(0)
    x, y, z = gen.normal(size=(3, 40, 1))
    few = {"n_resamples": 30, "batch": 5, "rng": 1}
    strata = np.repeat([0, 1], 20)
    return [
        ("two_sample_test", kmtests.two_sample_test, (x, y), few),
        ("two_sample_test fkmse per permutation", kmtests.two_sample_test, (x, y),
         {**few, "estimator": "fkmse", "tuning": "permutation"}),
        ("independence_test", kmtests.independence_test, (x, y), few),
        ("independence_test fkmse", kmtests.independence_test, (x, y),
         {**few, "estimator": "fkmse"}),
        ("k_sample_test", kmtests.k_sample_test, (x, y, z), few),
        ("ci_test", kmtests.ci_test, (x, y, z), {**few, "method": "permutation", "strata": strata}),
        ("conditional_independence_test", kmtests.conditional_independence_test, (x, y, z),
         {**few, "method": "permutation", "strata": strata}),
        ("joint_independence_test", kmtests.joint_independence_test, (x, y, z), few),
        ("aggregated_two_sample_test", kmtests.aggregated_two_sample_test, (x, y),
         {**few, "estimators": ["kme", "fkmse"]}),
        ("aggregated_independence_test", kmtests.aggregated_independence_test, (x, y),
         {**few, "estimators": ["kme", "fkmse"]}),
        ("conditional_two_sample_test", kmtests.conditional_two_sample_test, (x, y, z, x),
         {**few, "lam": 1e-3}),
        ("compare_estimators", kmtests.compare_estimators, (x, y),
         {"estimators": ["kme", "fkmse"], "n_resamples": 30, "rng": 1,
          "batch": 5}),
    ]


def _accepted(fn, kwargs) -> set[str]:
    """The keywords `fn` takes (for compare_estimators, with those of the test it forwards
    its further keywords to)."""
    names = set(inspect.signature(fn).parameters)
    if fn is kmtests.compare_estimators:
        names |= set(inspect.signature(kmtests.two_sample_test).parameters)
    return names


def test_every_resampling_face_is_covered():
    faces = {name for name in kmtests.__all__
             if callable(getattr(kmtests, name)) and not isinstance(getattr(kmtests, name), type)
             and "n_resamples" in inspect.signature(getattr(kmtests, name)).parameters}
    covered = {label.split()[0] for label, *_ in _cases()} | {"goodness_of_fit_test"}
    assert faces <= covered, f"add a slow-advice case for {sorted(faces - covered)}"


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_slow_test_advice_names_only_the_functions_options(case, monkeypatch):
    label, fn, args, kwargs = case
    monkeypatch.setattr(_guards, "SLOW_SECONDS", -1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args, **kwargs)
    slow = [str(w.message) for w in caught
            if issubclass(w.category, kmtests.SlowTestWarning)]
    assert slow, f"{label}: no SlowTestWarning was issued"
    accepted = _accepted(fn, kwargs)
    for message in slow:
        advice = message.split(").", 1)[1]  # after "this test will take about ... (...)."
        named = _named(advice)
        assert named, message
        assert named <= accepted, (f"{label} advises {sorted(named - accepted)}, which it "
                                   f"does not take: {message}")


def test_the_goodness_of_fit_statistic_advises_only_its_options():
    gen = np.random.default_rng(0)
    x = gen.normal(size=(30, 1))
    face = kmtests.goodness_of_fit_test
    score = lambda v: -v  # noqa: E731 - the standard normal's score
    sig = inspect.signature(face)
    keywords = {**{k: p.default for k, p in sig.parameters.items()
                   if p.default is not p.empty}, "score": score, "rng": 1}
    plan = _plan.build(_plan._FACES[face.__code__][0], (x, score, None),
                       _plan.given_keywords(sig, keywords))
    advice = plan.statistic.slow_advice(plan.problem, plan.engine, plan.tuning)
    named = _named(advice)
    assert "n_resamples" in named
    assert named <= set(inspect.signature(face).parameters), advice


def test_the_joint_advice_is_followed():
    # what the joint test's advice names runs (it used to name engine= and tuning=,
    # a TypeError when followed)
    gen = np.random.default_rng(1)
    x, y, z = gen.normal(size=(3, 40, 1))
    res = kmtests.joint_independence_test(x, y, z, method="gamma")
    assert res.level == "approximate" and 0.0 <= res.pvalue <= 1.0
