"""``kmtests gof data.csv --model norm --loc 0 --scale 1``: the goodness-of-fit test (kernel
Stein discrepancy) of columns of a CSV file against a scipy.stats model, or against a score
function given as ``--score module:function``."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from . import _args as opt
from ._data import columns, read_csv

__all__ = ["add_goodness", "run_goodness"]


def _score(text: str) -> Any:
    """``module:function``: a score function importable from the Python path."""
    module, sep, name = text.partition(":")
    if not sep or not module or not name:
        raise argparse.ArgumentTypeError(f"must be module:function; got {text!r}")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise argparse.ArgumentTypeError(f"cannot import {text!r}: {exc}") from None
    if not callable(fn):
        raise argparse.ArgumentTypeError(f"{text!r} is not callable")
    return fn


def _model(args: argparse.Namespace) -> Any:
    """The frozen scipy.stats distribution of --model with its parameters."""
    from scipy import stats

    dist = getattr(stats, args.model, None)
    if dist is None or not hasattr(dist, "freeze"):
        raise ValueError(f"--model: {args.model!r} is not a scipy.stats distribution")
    params = [float(v) for v in args.shape] if args.shape else []
    kw = {k: v for k, v in (("loc", args.loc), ("scale", args.scale)) if v is not None}
    return dist(*params, **kw)


def add_goodness(sub: Any) -> argparse.ArgumentParser:
    """The ``gof`` command's parser."""
    p = sub.add_parser("gof", help="goodness-of-fit test (kernel Stein discrepancy) of a "
                       "sample against a model",
                       description="Kernel goodness-of-fit test: do the rows of a CSV file "
                       "(the columns of --columns) come from the model? The model is a "
                       "scipy.stats distribution (--model with --shape, --loc, --scale) or a "
                       "score function d log p / dx (--score module:function).")
    p.add_argument("data", help="CSV file with a header line; '-' reads standard input")
    p.add_argument("--columns", type=opt.names, default=None, metavar="A,B",
                   help="the columns of the sample (default: every column)")
    p.add_argument("--model", default=None, metavar="NAME",
                   help="a scipy.stats distribution by name, e.g. norm, gamma, t")
    p.add_argument("--shape", type=opt.float_list, default=None, metavar="A,B",
                   help="its shape parameters, comma-separated (e.g. 3 for gamma)")
    p.add_argument("--loc", type=float, default=None, help="its location")
    p.add_argument("--scale", type=float, default=None, help="its scale")
    p.add_argument("--score", type=_score, default=None, metavar="MODULE:FUNCTION",
                   help="a function of the points (an n x d array) returning d log p / dx")
    p.add_argument("--kernel", default=None,
                   choices=["imq", "gaussian", "matern32", "matern52"],
                   help="kernel of the Stein discrepancy (default imq)")
    p.add_argument("--bandwidth", type=float, default=None,
                   help="its bandwidth (default: the median heuristic)")
    p.add_argument("--estimator", default=None,
                   help="estimator of the Stein features' mean embedding: kme (default), "
                   "skmse, bkmse (uniform shrinkage), fkmse, tsvd, ... (V-form, with "
                   "--method monte_carlo)")
    p.add_argument("--statistic", default=None, choices=opt.statistics("one_sample"),
                   help="U-statistic (default), V-statistic, or KSDAgg (the U-statistic "
                   "over a collection of bandwidths, aggregated)")
    opt.add_collection(p, "KSDAgg", "--levels=-20,0")
    p.add_argument("--n-locations", dest="n_locations", type=opt.positive_int, default=None,
                   help="FSSD's number of test locations (default 5)")
    p.add_argument("--split-size", dest="split_size", type=opt.positive_int, default=None,
                   help="FSSD's training points (default half the sample)")
    p.add_argument("--method", default=None, choices=["wild", "monte_carlo", "chi2"],
                   help="null distribution: wild bootstrap (default), fresh samples of "
                   "--model (exact), or FSSD's weighted chi-square (its default)")
    return p  # (the resampling and output options: kmtests.cli._finish)


def run_goodness(args: argparse.Namespace) -> Any:
    """Read the sample and run :func:`kmtests.goodness_of_fit_test`."""
    from .. import goodness_of_fit_test

    if (args.model is None) == (args.score is None):
        raise ValueError("give the model as --model NAME (a scipy.stats distribution) or as "
                         "--score module:function, one of the two")
    table = read_csv(args.data, args.sep, args.encoding)
    cols = list(table.frame.columns) if args.columns is None else args.columns
    x = columns(table, cols)
    args._n_memory = x.shape[0]
    kw: dict[str, Any] = {"model": _model(args)} if args.model else {"score": args.score}
    for key in ("kernel", "bandwidth", "estimator", "statistic", "levels", "grid", "weights", "n_locations",
                "split_size", "method"):
        if getattr(args, key) is not None:
            kw[key] = getattr(args, key)
    if args.seed is not None:
        kw["rng"] = args.seed
    kw.update(opt.given(args, ["n_resamples", "batch", "n_jobs", "progress", "nan_policy",
                                "alternative"]))
    return goodness_of_fit_test(x, data_name=f"{', '.join(cols)} in {table.name}", **kw)
