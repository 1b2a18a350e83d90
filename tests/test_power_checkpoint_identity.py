"""Checkpoints record what a callable computes, not only its name (lambdas, partials,
closures, bound methods), and refuse what they cannot identify unless labelled."""

import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import kmtests
from kmtests.studies._checkpoint import canonical
from kmtests.datasets import Scenario, perturbed_uniform
from kmtests.power import CheckpointError, power_curve

KW = dict(sample_sizes=[8], effects=[0.5], repetitions=2, n_resamples=19, rng=4)
ROOT = Path(__file__).resolve().parents[1]


def _mmd(bandwidth):
    # two callables of the same qualified name that differ in a constant only
    if bandwidth == 1.0:
        return lambda x, y, *, n_resamples, rng: kmtests.two_sample_test(
            x, y, bandwidth=1.0, n_resamples=n_resamples, rng=rng)
    return lambda x, y, *, n_resamples, rng: kmtests.two_sample_test(
        x, y, bandwidth=2.0, n_resamples=n_resamples, rng=rng)


def test_lambdas_differing_in_a_constant_are_different_studies(tmp_path):
    path = tmp_path / "s.csv"
    one, two = _mmd(1.0), _mmd(2.0)
    assert one.__qualname__ == two.__qualname__
    power_curve("mean_shift", tests={"t": one}, checkpoint=path, **KW)
    with pytest.raises(CheckpointError, match=r"estimator 't' is .*\"constants\": "
                                              r"\[null, 1\.0, .* in the file but "
                                              r".*\[null, 2\.0, "):
        power_curve("mean_shift", tests={"t": two}, checkpoint=path, **KW)


def test_scenario_lambdas_differing_in_a_constant_are_different_studies(tmp_path):
    path = tmp_path / "s.csv"

    def scenario(k):
        sampler = [lambda n, e, g: (g.normal(size=(n, 1)), g.normal(size=(n, 1)) + e),
                   lambda n, e, g: (g.normal(size=(n, 1)), g.normal(size=(n, 1)) + 2 * e)][k]
        return Scenario("shift", "two_sample", sampler, 0.5, "a shift")

    power_curve(scenario(0), checkpoint=path, **KW)
    power_curve(scenario(0), checkpoint=path, **KW)  # an equal lambda is the same study
    with pytest.raises(CheckpointError, match=r"scenario is \{\"sampler\": \{\"code\": "):
        power_curve(scenario(1), checkpoint=path, **KW)


def test_partials_with_other_arguments_are_different_studies(tmp_path):
    path = tmp_path / "s.csv"
    first = functools.partial(kmtests.two_sample_test, bandwidth=1.0)
    power_curve("mean_shift", tests={"t": first}, checkpoint=path, **KW)
    power_curve("mean_shift", tests={"t": functools.partial(kmtests.two_sample_test,
                                                            bandwidth=1.0)},
                checkpoint=path, **KW)
    with pytest.raises(CheckpointError, match=r"estimator 't' is .*\"bandwidth\": 1\.0.* in the "
                                              r"file but .*\"bandwidth\": 2\.0"):
        power_curve("mean_shift", tests={"t": functools.partial(kmtests.two_sample_test,
                                                                bandwidth=2.0)},
                    checkpoint=path, **KW)


def test_scenario_closures_with_other_parameters_are_different_studies(tmp_path):
    path = tmp_path / "s.csv"
    smooth, rough = perturbed_uniform(smoothness=1.0), perturbed_uniform(smoothness=2.0)
    assert smooth.name == rough.name  # the name does not tell them apart
    kw = {**KW, "effects": [2.0]}
    power_curve(smooth, checkpoint=path, **kw)
    with pytest.raises(CheckpointError, match=r'"smoothness": 1\.0.* in the file but '
                                              r'.*"smoothness": 2\.0'):
        power_curve(rough, checkpoint=path, **kw)


@dataclass(frozen=True)
class Shift:
    delta: float

    def sample(self, n, effect, gen):
        return gen.normal(size=(n, 1)), gen.normal(size=(n, 1)) + self.delta * effect


def test_bound_methods_of_other_instances_are_different_studies(tmp_path):
    path = tmp_path / "s.csv"
    power_curve(Scenario("s", "two_sample", Shift(1.0).sample, 0.5, ""), checkpoint=path, **KW)
    with pytest.raises(CheckpointError, match=r'"delta": 1\.0.* in the file but .*"delta": 2\.0'):
        power_curve(Scenario("s", "two_sample", Shift(2.0).sample, 0.5, ""), checkpoint=path,
                    **KW)


SHIFT = 1.0


def _global_shift_test(x, y, *, n_resamples, rng):
    return kmtests.two_sample_test(x + SHIFT, y, n_resamples=n_resamples, rng=rng)


def test_a_changed_global_of_the_function_is_a_different_study(tmp_path, monkeypatch):
    path = tmp_path / "s.csv"
    power_curve("mean_shift", tests={"t": _global_shift_test}, checkpoint=path, **KW)
    monkeypatch.setitem(globals(), "SHIFT", 3.0)
    with pytest.raises(CheckpointError, match=r'"SHIFT": 1\.0.* in the file but .*"SHIFT": 3\.0'):
        power_curve("mean_shift", tests={"t": _global_shift_test}, checkpoint=path, **KW)


class Opaque:
    """An object without a stable description: its repr has a memory address."""

    shift = 1.0


def test_unidentifiable_callable_needs_a_checkpoint_label(tmp_path):
    path = tmp_path / "s.csv"
    box = Opaque()
    calls = box.calls = []  # the closure holds the box only: the list is not recorded

    def test(x, y, *, n_resamples, rng):
        box.calls.append(1)
        return kmtests.two_sample_test(x + box.shift, y, n_resamples=n_resamples, rng=rng)

    with pytest.raises(CheckpointError, match=r"`tests\['t'\]`: the closure variable `box` = "
                                              r"<.*Opaque object at 0x[0-9a-f]+> has no stable "
                                              r"description .*pass `checkpoint_label="):
        power_curve("mean_shift", tests={"t": test}, checkpoint=path, **KW)
    assert not calls and not path.exists()
    first = power_curve("mean_shift", tests={"t": test}, checkpoint=path,
                        checkpoint_label="opaque v1", **KW)
    assert len(calls) == 2 and '"label":"opaque v1"' in path.read_text()
    again = power_curve("mean_shift", tests={"t": test}, checkpoint=path,
                        checkpoint_label="opaque v1", **KW)
    assert len(calls) == 2  # the label vouches for the rows: reused
    assert again.raw.equals(first.raw)
    with pytest.raises(CheckpointError, match=r'label is "opaque v1" in the file but "opaque v2" '
                                              r'in this call'):
        power_curve("mean_shift", tests={"t": test}, checkpoint=path,
                    checkpoint_label="opaque v2", **KW)
    with pytest.raises(CheckpointError, match=r"`tests\['t'\]`: the closure variable `box`"):
        power_curve("mean_shift", tests={"t": test}, checkpoint=path, **KW)


def test_a_label_does_not_hide_what_can_be_identified(tmp_path):
    path = tmp_path / "s.csv"
    power_curve("mean_shift", tests={"t": _mmd(1.0)}, checkpoint=path, checkpoint_label="v",
                **KW)
    with pytest.raises(CheckpointError, match=r"estimator 't' is .*\"constants\""):
        power_curve("mean_shift", tests={"t": _mmd(2.0)}, checkpoint=path,
                    checkpoint_label="v", **KW)


def test_checkpoint_label_is_validated(tmp_path):
    with pytest.raises(TypeError, match=r"`checkpoint_label` must be a non-empty string or "
                                        r"None; got 3"):
        power_curve("mean_shift", checkpoint=tmp_path / "s.csv", checkpoint_label=3, **KW)
    with pytest.raises(ValueError, match=r"`checkpoint_label` needs `checkpoint`"):
        power_curve("mean_shift", checkpoint_label="v1", **KW)


def test_bound_builtin_of_an_opaque_object_is_refused():
    gen = np.random.default_rng(0)
    with pytest.raises(CheckpointError, match=r"`f`: .*Generator\(PCG64\) at 0x"):
        canonical(gen.normal, "f")
    assert canonical(gen.normal, "f", vouched=True)["self"] == {
        "unidentified": "numpy.random._generator.Generator"}
    assert canonical(len) == {"builtin": "builtins.len"}
    assert canonical(np.exp) == {"class": "numpy.ufunc", "repr": "<ufunc 'exp'>"}


def test_recursive_functions_are_described():
    def fact(k):
        return 1 if k <= 1 else k * fact(k - 1)

    d = canonical(fact)
    assert d["closure"]["fact"] == {"function": d["function"], "recursive": True}


_DESCRIBE = """
import json, sys
sys.path.insert(0, {root!r})
from kmtests.studies._checkpoint import canonical
from tests.test_power_checkpoint_identity import _with_a_frozenset
print(json.dumps(canonical(_with_a_frozenset), sort_keys=True))
"""


def _with_a_frozenset(x):
    return x in {"alpha", "beta", "gamma", "delta"}  # a frozenset constant: order by hash


def test_descriptions_are_the_same_in_another_process():
    outs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.add(subprocess.run([sys.executable, "-c", _DESCRIBE.format(root=str(ROOT))],
                                capture_output=True, text=True, check=True, env=env).stdout)
    assert len(outs) == 1
    assert json.loads(outs.pop()) == json.loads(json.dumps(canonical(_with_a_frozenset)))
