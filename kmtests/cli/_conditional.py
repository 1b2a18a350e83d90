"""``kmtests conditional data.csv --x a --y b --z c,d``: the conditional independence test.

The options are those of :func:`kmtests.conditional_independence_test`, by their
command-line names (``--bandwidth-z auto|isotropic|ard|ard_each|median|NUMBER|LIST``,
``--criterion``, ``--lam``, ``--undersmooth``, ``--z-transform``, ``--no-augment``,
``--null-moments``, ``--statistic kci|split``, ``--method``,
``--strata COLUMN``, ``--engine exact|rff|nystrom``, ``--n-features``).
"""

from __future__ import annotations

import argparse
from typing import Any

from . import _args as opt
from ._data import columns, labels, read_csv

__all__ = ["add_conditional", "run_conditional"]

_OPTIONS = ["statistic", "filter", "lam", "criterion", "split_size", "method", "engine",
            "n_features", "kernel_x", "kernel_y", "kernel_z", "bandwidth_x", "bandwidth_y",
            "bandwidth_z", "undersmooth", "z_transform", "null_moments"]


def _bandwidth_z(text: str) -> str | float | list[float]:
    """'auto', 'isotropic', 'ard', 'ard_each', 'median', a positive number, or
    comma-separated positive numbers."""
    if text.strip().lower() in ("auto", "isotropic", "ard", "ard_each", "median"):
        return text.strip().lower()
    values = opt.float_list(text)
    if any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"must be 'auto', 'isotropic', 'ard', 'ard_each', "
                                         f"'median' or "
                                         f"positive numbers; got {text!r}")
    return values[0] if len(values) == 1 else values


def add_conditional(sub: Any) -> argparse.ArgumentParser:
    """The ``conditional`` command's parser."""
    p = sub.add_parser("conditional", help="conditional independence test (KCI) of columns of "
                       "a CSV file", description="Kernel conditional independence test (KCI "
                       "with tuned regressions on z): are --x and --y independent given --z?")
    p.add_argument("data", help="CSV file with a header line; '-' reads standard input")
    p.add_argument("--x", required=True, type=opt.names, help="comma-separated columns of x")
    p.add_argument("--y", required=True, type=opt.names, help="comma-separated columns of y")
    p.add_argument("--z", required=True, type=opt.names,
                   help="comma-separated columns of z (the conditioning variables)")
    for role in ("x", "y", "z"):
        p.add_argument(f"--kernel-{role}", default=None,
                       help=f"kernel of {role}: {opt.KERNELS} (default gaussian)")
    for role in ("x", "y"):
        p.add_argument(f"--bandwidth-{role}", type=opt.bandwidth, default=None,
                       help=f"bandwidth of {role}: 'median' (default) or a number")
    p.add_argument("--bandwidth-z", type=_bandwidth_z, default=None,
                   help="bandwidth of the regression on z: 'isotropic' (searched around "
                   "the median heuristic by --criterion), 'ard' / 'ard_each' (one bandwidth "
                   "per column of z, shared by x's and y's regressions / for each), 'median', "
                   "a number, or comma-separated numbers to search; 'auto' (default): "
                   "isotropic for one or two z columns, ard_each with --undersmooth 10 "
                   "for more")
    p.add_argument("--statistic", default=None, choices=["kci", "split"],
                   help="kci (default) or split (regressions fitted on part of the data)")
    p.add_argument("--filter", default=None, choices=opt.FILTERS,
                   help="spectral filter of the regression (default tikhonov: kernel ridge)")
    p.add_argument("--lam", type=opt.lam, default=None,
                   help="regularisation of the regression: 'auto' (default: a searched grid), "
                   "a number, or comma-separated numbers")
    p.add_argument("--criterion", default=None, choices=["gcv", "loo", "marglik"],
                   help="how --lam and --bandwidth-z are searched (default gcv)")
    p.add_argument("--undersmooth", type=float, default=None,
                   help="divide the searched lam of each regression by this factor (>= 1; "
                   "default 10 where --bandwidth-z auto searches one bandwidth per z column "
                   "(3 or more columns), "
                   "else 1)")
    p.add_argument("--z-transform", default=None, choices=["none", "normal_scores", "rank"],
                   help="replace each column of z by its normal scores or ranks first")
    p.add_argument("--no-augment", dest="augment", action="store_false", default=None,
                   help="compare x rather than (x, z/2)")
    p.add_argument("--null-moments", default=None, choices=["corrected", "zhang"],
                   help="the gamma null's moments: corrected for the rows' correlation through "
                   "the regressions (default) or Zhang et al.'s (causal-learn's)")
    p.add_argument("--split-size", type=opt.probability, default=None,
                   help="fraction of the data the regressions of --statistic split are "
                   "fitted on (default 0.5)")
    p.add_argument("--method", default=None, choices=["gamma", "chi2", "wild", "permutation"],
                   help="null distribution: gamma (default), chi2, wild (approximate), or "
                   "permutation with --strata (exact within strata of a discrete z)")
    p.add_argument("--strata", default=None, metavar="COLUMN",
                   help="permute y only within the strata labelled by COLUMN (a discrete z)")
    p.add_argument("--engine", default=None, choices=["exact", "rff", "nystrom"],
                   help="exact (default; Gram matrices) or rff/nystrom (features: large n)")
    p.add_argument("--n-features", type=opt.positive_int, default=None,
                   help="features of z of --engine rff or nystrom (default 200)")
    return p  # (the resampling and output options: kmtests.cli._finish)


def run_conditional(args: argparse.Namespace) -> Any:
    """Read the variables and run :func:`kmtests.conditional_independence_test`."""
    # the package's face, looked up when the command runs (the tests replace it there)
    from .. import conditional_independence_test

    used = [*args.x, *args.y, *args.z]
    twice = sorted({c for c in used if used.count(c) > 1})
    if twice:
        raise ValueError(f"--x, --y and --z must name different columns; {twice} appear(s) "
                         "more than once")
    if args.strata is not None and args.strata in [*args.x, *args.y]:
        raise ValueError(f"--strata {args.strata}: the strata column must not be one of --x, "
                         "--y (it is typically a discrete column of --z)")
    table = read_csv(args.data, args.sep, args.encoding)
    x, y, z = (columns(table, getattr(args, r), f"--{r}") for r in ("x", "y", "z"))
    args._n_memory = x.shape[0]
    kw = opt.given(args, _OPTIONS + ["augment", "n_resamples", "batch", "n_jobs", "progress",
                                     "nan_policy", "alternative"])
    if args.seed is not None:
        kw["rng"] = args.seed
    if args.strata is not None:
        kw["strata"] = labels(table, args.strata, "--strata")
    name = (f"{','.join(args.x)} and {','.join(args.y)} given {','.join(args.z)} in "
            f"{table.name}")
    return conditional_independence_test(x, y, z, data_name=name, **kw)
