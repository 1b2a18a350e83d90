"""Crafted or damaged checkpoint files: each is a one-line CheckpointError (on the command
line: exit status 2 and one line on standard error), never another exception."""

import json

import numpy as np
import pytest

from kmtests import cli as _cli
from kmtests.studies._checkpoint import _crc
from kmtests.power import CheckpointError, power_curve

KW = dict(sample_sizes=[8], effects=[0.5], repetitions=2, n_resamples=19)


@pytest.fixture(scope="module")
def valid(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "valid.csv"
    power_curve("linear", checkpoint=path, rng=3, **KW)
    text = path.read_text()
    lines = text.split("\n")
    return text, lines, json.loads(lines[1].split(" ", 3)[3])


def _with_settings(lines, settings_text):
    """The file with another settings line (with a valid checksum: crafted, not damaged)."""
    return "\n".join([lines[0], f"# settings {_crc(settings_text)} {settings_text}",
                      *lines[2:]])


def _settings_variants(settings):
    """(name, settings JSON text) of settings damaged in every way a reader must survive."""
    def edit(path, value):
        s = json.loads(json.dumps(settings))
        d = s
        for key in path[:-1]:
            d = d[key]
        if value is KeyError:
            del d[path[-1]]
        else:
            d[path[-1]] = value
        return json.dumps(s)

    deep = 10**5
    yield "nested list", "[" * deep + "]" * deep
    yield "nested dict", '{"a":' * deep + "1" + "}" * deep
    yield "nested in a key", json.dumps({**settings, "test_kwargs": "@"}).replace(
        '"@"', "[" * deep + "]" * deep)
    yield "nested 500", json.dumps({**settings, "test_kwargs": "@"}).replace(
        '"@"', "[" * 500 + "]" * 500)
    yield "a list", "[]"
    yield "a number", "1e999"
    yield "huge integer", "9" * 5000
    for key in sorted(settings):
        yield f"no {key}", edit([key], KeyError)
        for bad in ("x", 1.5, [], None, {"a": 1}):
            yield f"{key} = {bad!r}", edit([key], bad)
    for key in ("entropy", "spawn_key", "pool_size"):
        yield f"no seed.{key}", edit(["seed", key], KeyError)
        for bad in ("x", -1, 1.5, [-1], ["x"], [], None, 10**4000, [10**4000], 10**300, 1e308,
                    True):
            yield f"seed.{key} = {str(bad)[:20]}", edit(["seed", key], bad)
    for key in ("name", "kind"):
        for bad in (KeyError, 3, None, ["linear"]):
            yield f"scenario.{key} = {bad!r}", edit(["scenario", key], bad)
    yield "estimators keyed by numbers", edit(["estimators"], {"1": 2})
    yield "label = 3", edit(["label"], 3)


def _check(path, rng):
    try:
        power_curve("linear", checkpoint=path, rng=rng, **KW)
    except CheckpointError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(("checkpoint ", "line ")), str(exc)


@pytest.mark.parametrize("rng", [None, 3])
def test_damaged_settings_give_a_checkpoint_error(tmp_path, valid, rng):
    text, lines, settings = valid
    path = tmp_path / "s.csv"
    names, failures = [], []
    for name, settings_text in _settings_variants(settings):
        names.append(name)
        path.write_text(_with_settings(lines, settings_text))
        try:
            _check(path, rng)
        except Exception as exc:
            failures.append(f"settings {name}: {type(exc).__name__}: {str(exc)[:200]}")
    assert not failures, "\n".join(failures)
    assert len(names) > 80


def test_truncated_files_give_a_checkpoint_error(tmp_path, valid):
    text, _, _ = valid
    path = tmp_path / "s.csv"
    data, failures = text.encode(), []
    for cut in sorted(set(np.linspace(1, len(data) - 1, 60).astype(int))):
        path.write_bytes(data[:cut])
        try:
            _check(path, 3)
        except Exception as exc:
            failures.append(f"cut at {cut}: {type(exc).__name__}: {str(exc)[:200]}")
    assert not failures, "\n".join(failures)


BAD_ROWS = {
    "nul": "linear,independence,8,0.5,0,kme,0.5\x00",
    "carriage return": "linear,independence,8,0.5,0,kme\r,0.5",
    "quote": 'linear,independence,8,0.5,0,"kme,0.5',
    "huge n": "linear,independence," + "9" * 5000 + ",0.5,0,kme,0.5",
    "big n": "linear,independence," + "9" * 4000 + ",0.5,0,kme,0.5",
    "huge effect": "linear,independence,8,1e999,0,kme,0.5",
    "negative p": "linear,independence,8,0.5,0,kme,-0.0001",
    "empty": "",
    "too many fields": "linear,independence,8,0.5,0,kme,0.5,1",
    "other estimator": "linear,independence,8,0.5,0,skmse,0.5",
}


@pytest.mark.parametrize("case", sorted(BAD_ROWS))
def test_crafted_rows_give_a_checkpoint_error(tmp_path, valid, case):
    text, lines, _ = valid
    body = BAD_ROWS[case]
    path = tmp_path / "s.csv"
    path.write_text("\n".join([*lines[:3], f"{body},{_crc(body)}", ""]), newline="")
    _check(path, 3)


@pytest.mark.parametrize("damage", ["nested", "no seed", "seed string", "truncated"])
def test_cli_reports_a_damaged_checkpoint_in_one_line(tmp_path, valid, capsys, damage):
    text, lines, settings = valid
    path = tmp_path / "s.csv"
    if damage == "truncated":
        path.write_text(text[:len(text) // 2])
    else:
        bad = {"nested": "[" * 10**5 + "]" * 10**5,
               "no seed": json.dumps({k: v for k, v in settings.items() if k != "seed"}),
               "seed string": json.dumps({**settings, "seed": "x"})}[damage]
        path.write_text(_with_settings(lines, bad))
    rc = _cli.main(["power", "--scenario", "linear", "--n", "8", "--effects", "0.5", "--reps",
                    "2", "--n-resamples", "19", "--checkpoint", str(path)])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert err.startswith(("kmtests: error: checkpoint ", "kmtests: error: line ")), err[:500]
    assert err.count("\n") == 1, err[:500]
    assert "Traceback" not in err
