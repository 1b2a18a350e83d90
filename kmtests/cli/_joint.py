"""``kmtests joint data.csv --columns a,b,c``: the joint independence test (dHSIC).

Each comma-separated entry of ``--columns`` is a variable; ``a+b`` makes the
columns ``a`` and ``b`` one two-column variable. Without ``--columns`` every
column is a variable.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..joint import dhsic_bandwidth
from . import _args as opt
from ._data import columns, read_csv

__all__ = ["add_joint", "run_joint"]


def _bandwidths(text: str) -> str | float | list[float]:
    """'median', 'dhsic', a number, or comma-separated numbers (one per variable)."""
    if text.strip().lower() in ("median", "dhsic"):
        return text.strip().lower()
    values = opt.float_list(text)
    if any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"bandwidths must be positive; got {text!r}")
    return values[0] if len(values) == 1 else values


def add_joint(sub: Any) -> argparse.ArgumentParser:
    """The ``joint`` command's parser."""
    p = sub.add_parser("joint", help="joint independence test (dHSIC) of columns of a CSV file",
                       description="Joint independence test (dHSIC, Pfister et al. 2018) of "
                       "the variables given by --columns in a CSV file with a header line.")
    p.add_argument("data", help="CSV file with a header line; '-' reads standard input")
    p.add_argument("--columns", type=opt.names, default=None, metavar="A,B,C",
                   help="comma-separated variables, each a column or columns joined by '+' "
                   "(e.g. a+b,c,d: three variables, the first of two columns); default: "
                   "every column is a variable")
    p.add_argument("--kernel", default=None,
                   help=f"kernel of every variable: {opt.KERNELS} (default gaussian)")
    p.add_argument("--bandwidths", type=_bandwidths, default=None,
                   help="'median' (default: kmtests' median heuristic on each variable), "
                   "'dhsic' (the R package's rule), a number, or one number per variable")
    p.add_argument("--method", default=None, choices=["permutation", "bootstrap", "gamma"],
                   help="null distribution: permutation (default; exact level), bootstrap or "
                   "gamma (approximate)")
    return p  # (the resampling and output options: kmtests.cli._finish)


def run_joint(args: argparse.Namespace) -> Any:
    """Read the variables and run :func:`kmtests.joint_independence_test`."""
    # the package's face, looked up when the command runs (the tests replace it there)
    from .. import joint_independence_test

    table = read_csv(args.data, args.sep, args.encoding)
    groups = ([[c] for c in table.frame.columns] if args.columns is None
              else [[c for c in entry.split("+")] for entry in args.columns])
    if len(groups) < 2:
        raise ValueError(f"--columns: a joint independence test needs at least 2 variables; "
                         f"got {len(groups)} ({table.name})")
    used = [c for g in groups for c in g]
    twice = sorted({c for c in used if used.count(c) > 1})
    if twice:
        raise ValueError(f"--columns: each column can be in one variable only; {twice} "
                         "appear(s) more than once")
    variables = [columns(table, g) for g in groups]
    args._n_memory = variables[0].shape[0]
    kw: dict[str, Any] = {}
    if args.kernel is not None:
        kw["kernels"] = args.kernel
    if args.bandwidths == "dhsic":
        kw["bandwidths"] = [dhsic_bandwidth(v) for v in variables]
    elif args.bandwidths is not None:
        kw["bandwidths"] = args.bandwidths
    if args.method is not None:
        kw["method"] = args.method
    if args.seed is not None:
        kw["rng"] = args.seed
    kw.update(opt.given(args, ["n_resamples", "batch", "n_jobs", "progress", "nan_policy",
                                "alternative"]))
    name = ", ".join("+".join(g) for g in groups) + f" in {table.name}"
    return joint_independence_test(*variables, data_name=name, **kw)
