"""Why ``blocks="auto"`` loses the level on two windows of a long-memory series (issue 30).

(A study of the seventh session. ``drift_test``'s default has changed since: the ARFIMA
fit with ``memory="auto"`` in the eighth session, the random rotations of two windows'
blocks in the ninth; a re-run gives the current default's numbers, not the study's. The
forced lengths run the plain blocks, as the study did.)

On the data sets of ``dependent_level.py --studies auto --problem windows``
(``dependent_streams.py``), for each series: the automatic length of ``blocks="auto"``
(``kmtests._serial.auto_length``), whether it is the cap (``n / 8``), its persistence
z-score, and the drift test's p-value (``drift_test(z, n_resamples=199, rng=i)``, as in
the level tables). ``--split`` prints the rejections of the series at the cap and below
it.

``--pooled`` measures one remedy, on the nulls and on shifted series: the persistence
check of the *pooled* series (not centred within each window; a long-memory series'
windows differ in mean, which centring each window hides), and the block length then
raised to the persistence floor ``3 ceil(sqrt(n))`` (at most the cap) when that check
fires and the windowed check's z-score exceeds ``tau`` (``tau = -inf``: the pooled check
alone). A shift between the windows also fires the pooled check, so the remedy costs
power; the table gives both. The length is given to the package's test through
``kmtests.problems.data.auto_length`` (patched for the one call: the same test, only the
block length differs).

``--bias-rule`` measures a length rule that grows faster with the dependence than the
Politis-White length: ``L = ceil(c b_sb^1.5 / sqrt(n))`` (``b_sb`` the rule's
stationary-bootstrap length; with Politis & White's ``b_sb^3 = n (G / LRV)^2`` it is
``c G / LRV``, the length at which the block variance's relative bias ``G / (LRV L)`` is
``1 / c``), at least the persistence floor when the check fires, at most the cap; for
``c`` in ``C_GRID``. An exploratory grid, not in the package.

``--tag heldout`` draws another set of data sets (the seed's first key).

Run from the repository root::

    nice -n 10 .venv/bin/python benchmarks/dependent_long_memory.py --split \\
        --cell arfima,200,0,300 --cell arfima,500,0,200 --cell ar0.95,200,0,300
    nice -n 10 .venv/bin/python benchmarks/dependent_long_memory.py --pooled \\
        --cell arfima,200,0,300 --cell ar0.5,200,0.75,300
    nice -n 10 .venv/bin/python benchmarks/dependent_long_memory.py --bias-rule \\
        --cell arfima,200,0,300 --cell ar0.8,200,0,300 --cell ar0.8,200,0.75,300
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import math  # noqa: E402
import warnings  # noqa: E402
from typing import Any  # noqa: E402
from unittest import mock  # noqa: E402

import numpy as np  # noqa: E402

from dependent_streams import windows_series  # noqa: E402

from kmtests import SerialDependenceWarning  # noqa: E402
from kmtests._serial import _FLOOR, _PERSIST_Z, AutoLength, auto_length  # noqa: E402
from kmtests.timeseries import drift_test  # noqa: E402

ALPHA, B = 0.05, 199
TAUS = (-math.inf, 0.0, 0.5, 1.0)
C_GRID = (3.0, 4.0, 5.0, 6.0, 8.0)


def pvalue_with_length(z: np.ndarray, i: int, length: int) -> float:
    """``drift_test``'s block p-value with the automatic length replaced by `length`, on
    the plain blocks this study ran (before the ninth session's random rotations of two
    windows, ``AutoLength.rotations``, and before ``memory="auto"``)."""

    def forced(series: list[np.ndarray], windows: tuple[int, ...]) -> Any:
        return dataclasses.replace(auto_length(series, windows), block=length)

    with mock.patch("kmtests.problems.data.auto_length", forced), \
            mock.patch.object(AutoLength, "rotations", property(lambda self: False)):
        return float(drift_test(z, n_resamples=B, rng=i, memory="short").pvalue)


def series(proc: str, n: int, shift: float, reps: int, tag: str = "auto") -> Any:
    """The cell's series (`tag`: the data sets' seed key; ``auto`` is the level tables')."""
    return windows_series(tag, proc, n, shift, reps)


def split(proc: str, n: int, shift: float, reps: int, tag: str = "auto") -> str:
    """The rejections of the series whose automatic length is the cap, and of the others."""
    h = n // 2
    at, below, hit_at, hit_below, fired = 0, 0, 0, 0, 0
    for i, z in series(proc, n, shift, reps, tag):
        al = auto_length([z[:, None]], (h, n - h))
        hit = drift_test(z, n_resamples=B, rng=i).pvalue <= ALPHA
        fired += al.persistent > _PERSIST_Z
        if al.block == al.cap:
            at, hit_at = at + 1, hit_at + hit
        else:
            below, hit_below = below + 1, hit_below + hit
    return (f"| {proc} | {n} | {hit_at + hit_below}/{reps} | {hit_at}/{at} | {hit_below}/{below} "
            f"| {fired}/{reps} |")


def pooled(proc: str, n: int, shift: float, reps: int, tag: str = "auto") -> str:
    """Rejections of ``blocks="auto"`` and of the pooled persistence check's variants."""
    h = n // 2
    floor = _FLOOR * math.ceil(math.sqrt(n))
    hits = dict.fromkeys(("auto", *TAUS), 0)
    for i, z in series(proc, n, shift, reps, tag):
        al = auto_length([z[:, None]], (h, n - h))
        whole = auto_length([z[:, None]], ())
        p = float(drift_test(z, n_resamples=B, rng=i).pvalue)
        hits["auto"] += p <= ALPHA
        for tau in TAUS:
            length = al.block
            if whole.persistent > _PERSIST_Z and al.persistent > tau:
                length = max(length, min(floor, al.cap))
            q = p if length == al.block else pvalue_with_length(z, i, length)
            hits[tau] += q <= ALPHA
    cells = " | ".join(f"{hits[k]}/{reps}" for k in ("auto", *TAUS))
    return f"| {proc} | {n} | {shift:g} | {cells} |"


def bias_rule(proc: str, n: int, shift: float, reps: int, tag: str = "auto") -> str:
    """Rejections of ``blocks="auto"`` and of the bias-targeting rule for each ``c``."""
    h = n // 2
    floor = _FLOOR * math.ceil(math.sqrt(n))
    hits = dict.fromkeys(("auto", *C_GRID), 0)
    for i, z in series(proc, n, shift, reps, tag):
        al = auto_length([z[:, None]], (h, n - h))
        hits["auto"] += drift_test(z, n_resamples=B, rng=i).pvalue <= ALPHA
        for c in C_GRID:
            length = math.ceil(c * al.multiplier ** 1.5 / math.sqrt(n))
            if al.persistent > _PERSIST_Z:
                length = max(length, floor)
            length = max(2, min(length, al.cap))
            hits[c] += pvalue_with_length(z, i, length) <= ALPHA
    cells = " | ".join(f"{hits[k]}/{reps}" for k in ("auto", *C_GRID))
    return f"| {proc} | {n} | {shift:g} | {cells} |"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cell", action="append", required=True,
                    help="process,n,shift,datasets (repeatable)")
    ap.add_argument("--split", action="store_true")
    ap.add_argument("--pooled", action="store_true")
    ap.add_argument("--bias-rule", action="store_true")
    ap.add_argument("--tag", default="auto",
                    help="the data sets' seed key: auto (the level tables') or another set")
    args = ap.parse_args()
    warnings.simplefilter("ignore", SerialDependenceWarning)
    cells = [(p, int(n), float(s), int(r), args.tag) for p, n, s, r in
             (c.split(",") for c in args.cell)]
    if args.split:
        print("| process | n | rejections | series at the cap: rejections | below the cap "
              "| persistence check fired |\n|---|---:|---:|---:|---:|---:|")
        for c in cells:
            print(split(*c), flush=True)
    if args.pooled:
        print("| process | n | shift | blocks=auto | pooled check | and windowed z > 0 "
              "| > 0.5 | > 1 |\n|---|---:|---:|---:|---:|---:|---:|---:|")
        for c in cells:
            print(pooled(*c), flush=True)
    if args.bias_rule:
        head = " | ".join(f"c = {c:g}" for c in C_GRID)
        print(f"| process | n | shift | blocks=auto | {head} |\n|---|---:|---:|---:|"
              + "---:|" * len(C_GRID))
        for c in cells:
            print(bias_rule(*c), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
