"""``kmtests monitor reference.csv -``: watch a stream (standard input) for drift.

The reference is a CSV file with a header line; the stream is read line by
line as it arrives, one CSV row per observation (a first line naming the
reference's columns is a header and may reorder them). Each observation goes
to a :class:`kmtests.DriftMonitor`; an alarm is printed as one line the moment
it rings (``alarm at observation T: wealth ...; features: ...``), ``--every N``
prints a status line every N observations.

Exit status: 0 when no alarm rang by the end of the stream, 1 when an alarm
rang (at the first alarm the command stops reading, unless ``--restart``
starts a new test after each alarm), 2 for an error (one line on standard
error naming the line of the stream at fault).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import IO, Any

import numpy as np

from . import _args as opt
from ._data import STDIN, columns, read_csv, shown

__all__ = ["add_monitor", "run_monitor"]

_MISSING = {"", "nan", "na", "n/a", "null"}


def add_monitor(sub: Any) -> argparse.ArgumentParser:
    """The ``monitor`` command's parser."""
    p = sub.add_parser(
        "monitor", help="watch a stream (standard input) for a change from a reference sample",
        description="Anytime-valid drift monitor: each stream observation is paired with an "
        "unused reference observation and a kernel two-sample test by betting watches the "
        "pairs; the alarm rings when the wealth reaches 1/alpha (the probability of a false "
        "alarm over the whole stream is at most alpha). Exit status 0: no alarm; 1: an "
        "alarm rang; 2: an error.")
    p.add_argument("reference", help="CSV file with a header line: the reference sample (its "
                   "observations are used once each, so it watches as many stream "
                   "observations as it has rows)")
    p.add_argument("stream", help="'-' reads the stream from standard input, line by line (a "
                   "file name reads a file): CSV rows of numbers, optionally after a header "
                   "line naming the columns")
    p.add_argument("--columns", type=opt.names, default=None,
                   help="comma-separated columns of the reference to watch (default: all)")
    p.add_argument("--alpha", type=opt.probability, default=0.05,
                   help="probability of a false alarm over the whole stream (default 0.05)")
    p.add_argument("--kernel", default=None, choices=["gaussian", "laplacian", "ard"],
                   help="kernel (default gaussian): bounded by k(x, x) = 1")
    p.add_argument("--bandwidth", type=opt.bandwidth, default=None,
                   help="'median' (default: the median heuristic on the burn-in pairs) or a "
                   "number")
    p.add_argument("--estimator", default=None, choices=["kme", "skmse", "bkmse"],
                   help="kernel mean estimator of the witness (default kme)")
    p.add_argument("--betting", default=None, choices=["ons", "agrapa"],
                   help="betting fractions (default ons)")
    p.add_argument("--payoff-scale", default=None, choices=["norm", "adaptive"],
                   help="payoff over its bound 2||g|| (norm, default) or over the largest "
                   "earlier payoff, clipped (adaptive: valid too, and earlier alarms)")
    p.add_argument("--max-points", type=opt.positive_int, default=None,
                   help="budget: past pairs kept for the witness (default 500)")
    p.add_argument("--burn-in", type=lambda t: opt._int(t, "a non-negative integer",
                                                        lambda v: v >= 0),
                   default=None, help="pairs observed before the bandwidth is fixed (default "
                   "20 with the median heuristic)")
    p.add_argument("--every", type=opt.positive_int, default=None, metavar="N",
                   help="print a status line every N observations")
    p.add_argument("--restart", action="store_true",
                   help="after an alarm, start a new test and go on reading (each test has "
                   "level alpha); default: stop at the first alarm")
    p.add_argument("--nan-policy", default=None, choices=["raise", "omit"],
                   help="missing values (empty cells, NaN): raise (default) names the line; "
                   "omit leaves the observation out (and reference rows with one)")
    p.add_argument("--seed", type=opt.seed, default=None,
                   help="seed of the random order of the reference")
    p.add_argument("--sep", type=opt.sep, default=",",
                   help="field separator of the reference and the stream (default ',')")
    p.add_argument("--encoding", type=opt.encoding, default="utf-8",
                   help="text encoding of the reference file (default utf-8)")
    return p


def _fields(line: str, sep: str) -> list[str]:
    return [f.strip().strip('"').strip() for f in line.rstrip("\r\n").split(sep)]


def _is_text(text: str) -> bool:
    """A field that is neither a number nor a missing value (a column name)."""
    if text.lower() in _MISSING:
        return False
    try:
        float(text)
    except ValueError:
        return True
    return False


def _row(fields: list[str], where: str, order: list[int] | None, d: int) -> np.ndarray:
    if len(fields) != (d if order is None else len(order)):
        want = d if order is None else len(order)
        raise ValueError(f"{where}: {len(fields)} field(s), expected {want}")
    out = np.empty(len(fields))
    for j, f in enumerate(fields):
        if f.lower() in _MISSING:
            out[j] = np.nan
            continue
        try:
            out[j] = float(f)
        except ValueError:
            raise ValueError(f"{where}: field {j + 1} {f!r} is not a number") from None
        if not math.isfinite(out[j]):
            raise ValueError(f"{where}: field {j + 1} {f!r} is not finite (an infinity is "
                             "not a missing value)")
    return out if order is None else out[order]


def _open(path: str) -> IO[str]:
    if path == STDIN:
        return sys.stdin
    try:
        return open(path, encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None


def _monitor(args: argparse.Namespace) -> tuple[Any, list[str]]:
    """The monitor of the reference file, and the reference's column names."""
    from ..sequential import DriftMonitor

    if args.reference == STDIN:
        raise ValueError("the reference must be a file: standard input ('-') is the stream")
    table = read_csv(args.reference, args.sep, args.encoding)
    names = list(args.columns) if args.columns is not None else list(table.frame.columns)
    ref = columns(table, args.columns)
    omit = args.nan_policy == "omit"
    if omit:
        ref = ref[~np.isnan(ref).any(axis=1)]
    kw: dict[str, Any] = {"alpha": args.alpha, "restart": args.restart, "rng": args.seed,
                          "feature_names": names}
    for key in ("kernel", "bandwidth", "estimator", "betting", "max_points", "burn_in",
                "nan_policy", "payoff_scale"):
        value = getattr(args, key)
        if value is not None:
            kw[key] = value
    if ref.shape[0] < 2:
        raise ValueError(f"{table.name}: the reference needs at least 2 observations; got "
                         f"{ref.shape[0]}")
    return DriftMonitor(ref, **kw), names


def _watch(monitor: Any, args: argparse.Namespace, names: list[str]) -> None:
    """Feed the stream to the monitor, printing its alarms (and status lines)."""
    d = monitor.reference.shape[1]
    source = shown(args.stream)
    order: list[int] | None = None
    first = True
    shown_status = 0
    stream = _open(args.stream)
    try:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            fields = _fields(line, args.sep)
            where = f"line {number} of {source}"
            if first:
                first = False
                if all(_is_text(f) for f in fields):  # a header line
                    missing = [f for f in names if f not in fields]
                    if missing:
                        raise ValueError(f"{where}: the header {fields} lacks the reference's "
                                         f"column(s) {missing}")
                    order = [fields.index(f) for f in names]
                    continue
            row = _row(fields, where, order, d)
            if monitor.remaining == 0:
                print(f"kmtests: warning: the reference's {monitor.reference.shape[0]} "
                      "observations are used up: the monitor stops here (each stream "
                      "observation needs an unused reference observation; a larger "
                      "reference watches longer)", file=sys.stderr)
                break
            try:
                alarms = monitor.update(row)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{where}: {exc}") from None
            for alarm in alarms:
                print(alarm, flush=True)
            if args.every and monitor.n_seen // args.every > shown_status:
                shown_status = monitor.n_seen // args.every
                print(monitor.status(), flush=True)
            if alarms and not args.restart:
                break
    finally:
        if stream is not sys.stdin:
            stream.close()


def run_monitor(args: argparse.Namespace) -> int:
    """Read the reference, watch the stream; return the exit status (0 or 1)."""
    monitor, names = _monitor(args)
    _watch(monitor, args, names)
    if monitor.n_omitted:
        print(f"{monitor.n_omitted} observation(s) with a missing value left out")
    if not monitor.alarms:
        t = monitor.test
        print(f"no alarm after {monitor.n_seen} observation(s): log-wealth "
              f"{t.log_wealth:.3f} / threshold {t.threshold:.3f} (wealth "
              f"{_num(t.wealth)}, p <= {t.pvalue:.4g})")
    return 1 if monitor.alarms else 0


def _num(v: float) -> str:
    return "inf" if math.isinf(v) else f"{v:.4g}"
