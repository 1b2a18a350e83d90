"""Run the command line in-process for the CLI tests."""

from __future__ import annotations

import json
from typing import Any

from kmtests import cli as _cli


def run(capsys: Any, *argv: Any) -> tuple[int, str, str]:
    """``kmtests argv...``: the exit status, standard output and standard error."""
    rc = _cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def run_json(capsys: Any, *argv: Any) -> Any:
    """``kmtests argv... --json``, which must succeed: the parsed output."""
    rc, out, err = run(capsys, *argv, "--json")
    assert rc == 0, err
    return json.loads(out)
