"""``kmtests conditional-two-sample data.csv --group arm --x age,dose --y response``: the
conditional two-sample test (is the law of y given x the same in the two groups?)."""

from __future__ import annotations

import argparse
from typing import Any

from . import _args as opt
from ._data import read_csv, split_by_group

__all__ = ["add_ctst", "run_ctst"]


def _clip(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value < 0.5:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 0.5); got {text!r}")
    return value


def add_ctst(sub: Any) -> argparse.ArgumentParser:
    """The ``conditional-two-sample`` command's parser."""
    p = sub.add_parser(
        "conditional-two-sample",
        help="conditional two-sample test: is y given x the same in two groups of a CSV file?",
        description="Conditional two-sample test (conditional MMD with a conditional "
        "permutation null through the propensity): is the law of the columns --y given the "
        "columns --x the same in the two groups of rows of --group (the law of x may differ)?")
    p.add_argument("data", help="CSV file with a header line; '-' reads standard input")
    p.add_argument("--group", required=True, metavar="COLUMN",
                   help="the column whose two values are the two groups")
    p.add_argument("--groups", type=opt.names, default=None, metavar="A,B",
                   help="the two values of --group to compare, in this order (default: the "
                   "column's two values, in order of appearance)")
    p.add_argument("--x", required=True, type=opt.names,
                   help="comma-separated columns of the covariates x")
    p.add_argument("--y", required=True, type=opt.names,
                   help="comma-separated columns of the outcome y")
    p.add_argument("--propensity", default=None, choices=["kernel", "linear"],
                   help="model of P(second group | x): kernel logistic regression (default) "
                   "or logistic regression on the standardised x, cross-fitted")
    p.add_argument("--weights", default=None, choices=["overlap", "uniform"],
                   help="weights of the pooled points in the mean: e(1 - e) of the "
                   "propensity (overlap, default) or equal (uniform)")
    p.add_argument("--clip", type=_clip, default=None,
                   help="clip the propensities to [clip, 1 - clip] (default 0.01)")
    p.add_argument("--lam", type=opt.lam, default=None,
                   help="the ridge of the regressions: 'auto' (default: tuned by "
                   "--criterion), a number, or comma-separated numbers searched")
    opt.add_kernels(p, "independence")
    p.add_argument("--criterion", default=None, choices=["shift", "gcv", "loo", "marglik"],
                   help="how the ridge is tuned (default shift: the cross-group prediction "
                   "error)")
    return p  # (the resampling and output options: kmtests.cli._finish)


def run_ctst(args: argparse.Namespace) -> Any:
    """Read the two groups and run :func:`kmtests.conditional_two_sample_test`."""
    # the package's face, looked up when the command runs
    from .. import conditional_two_sample_test

    clash = sorted(set(args.x) & set(args.y))
    if clash:
        raise ValueError(f"--x and --y must not share columns; both name {clash}")
    table = read_csv(args.data, args.sep, args.encoding)
    samples, _, name, _ = split_by_group(table, args.group, args.groups,
                                         list(args.x) + list(args.y))
    d = len(args.x)
    (x1, y1), (x2, y2) = ((s[:, :d], s[:, d:]) for s in samples)
    args._n_memory = x1.shape[0] + x2.shape[0]
    kw = opt.given(args, ["propensity", "clip", "lam", "criterion", "weights", "kernel_x",
                          "kernel_y",
                          "bandwidth_x", "bandwidth_y", "n_resamples", "batch", "n_jobs",
                          "progress", "nan_policy", "alternative"])
    if args.seed is not None:
        kw["rng"] = args.seed
    return conditional_two_sample_test(x1, y1, x2, y2, data_name=name, **kw)
