"""``kmtests.by_group``: the Python counterpart of the command line's ``--group``
(issue 32), with the same rules for the labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import kmtests
from kmtests import by_group


@pytest.fixture
def trial():
    gen = np.random.default_rng(5)
    return pd.DataFrame({"arm": ["trt", "ctl"] * 20, "u": gen.normal(size=40),
                         "v": gen.normal(size=40)})


def test_the_samples_are_the_groups_rows(trial):
    g = by_group(trial, "arm")
    assert g.names == ("trt", "ctl") and len(g) == 2
    x, y = g
    pd.testing.assert_frame_equal(x, trial.loc[trial.arm == "trt", ["u", "v"]])
    res = kmtests.two_sample_test(*g, data_name=g.data_name, n_resamples=99, rng=1)
    want = kmtests.two_sample_test(x.to_numpy(), y.to_numpy(), n_resamples=99, rng=1)
    assert res.pvalue == want.pvalue and res.data_name == "arm = trt and arm = ctl"
    chosen = by_group(trial, "arm", groups=["ctl", "trt"], columns=["u"])
    assert chosen.names == ("ctl", "trt") and list(chosen[0].columns) == ["u"]
    # the command line splits a file the same way
    k = by_group(pd.concat([trial, trial.assign(arm="pbo")]), "arm")
    res = kmtests.k_sample_test(*k, sample_names=k.names, n_resamples=19, rng=1)
    assert res.samples == ("trt", "ctl", "pbo")


def test_the_labels_rules(trial):
    spaced = trial.copy()
    spaced.loc[0, "arm"] = "trt "
    with pytest.raises(ValueError, match=r"spells the label 'trt' in 2 ways"):
        by_group(spaced, "arm")
    padded = trial.assign(arm=" " + trial.arm)  # one spelling per label: read stripped
    assert by_group(padded, "arm").names == ("trt", "ctl")
    unlabelled = trial.copy()
    unlabelled.loc[[3, 4], "arm"] = None
    with pytest.raises(ValueError, match=r"2 row\(s\) of `data` have no label \(data "
                       r"row\(s\) 4, 5\); give them one, or nan_policy='omit'"):
        by_group(unlabelled, "arm")
    omitted = by_group(unlabelled, "arm", nan_policy="omit")
    assert sum(len(s) for s in omitted) == 38
    solo = pd.concat([trial, trial.iloc[:1].assign(arm="solo")])
    with pytest.raises(ValueError, match="group 'solo' of `data` has 1 row"):
        by_group(solo, "arm")


@pytest.mark.parametrize("kwargs, match", [
    (dict(group="nope"), "unknown column 'nope'"),
    (dict(group="arm", groups=["trt"]), "at least two different labels"),
    (dict(group="arm", groups=["trt", "xx"]), "at least two different labels"),
    (dict(group="arm", columns=["arm"]), "`columns` must name data columns"),
    (dict(group="arm", nan_policy="drop"), "`nan_policy` must be one of"),
])
def test_refusals(trial, kwargs, match):
    with pytest.raises(ValueError, match=match):
        by_group(trial, **kwargs)
    with pytest.raises(TypeError, match="DataFrame"):
        by_group(trial.to_numpy(), "arm")
