"""Command line: ``kmtests demo | two-sample | independence | k-sample | joint |
conditional | aggregated | power | monitor``.

Every error is reported in one line on standard error with exit status 2,
before any computation when the arguments or files are at fault: options are
validated by their argparse types (:mod:`kmtests.cli._args`), CSV files are
read by :mod:`kmtests.cli._data` (whose messages name the file; ``-`` is
standard input), optional dependencies and output paths are checked before a
study starts, and the messages of the Python functions name the command
line's options (``--n-features``, not ``n_features``; ``--engine exact``, not
``engine='exact'``). Warnings are written alike, one line each
(``kmtests: warning: ...``), and the command goes on.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import io
import json
import math
import os
import re
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..datasets import get_scenario, load_eckerle4
from ..studies._checkpoint import output_mode, write_output
from . import _args as opt
from ._conditional import add_conditional, run_conditional
from ._data import MISSING_OK, STDIN, columns, labels, read_csv, split_by_group, unnamed_column
from ._goodness import add_goodness, run_goodness
from ._ctst import add_ctst, run_ctst
from ._joint import add_joint, run_joint
from ._monitor import add_monitor, run_monitor

_EXTRA = "pip install 'kmtests[power]'"
#: options of the tests (Python names) passed when given
_TEST_OPTIONS = ["estimator", "statistic", "method", "tuning", "filter", "lam", "engine",
                 "n_features", "covariance", "split_size", "block_size", "n_locations",
                 "diagonals", "levels", "grid", "weights"]
_K_SAMPLE_OPTIONS = ["estimator", "statistic", "method", "tuning", "engine", "n_features"]
_RESAMPLING = ["n_resamples", "batch", "n_jobs", "progress", "nan_policy", "alternative"]
_AGGREGATED = ["estimators", "statistics", "filters", "lams", "combination", "weights", "alpha",
               "tuning", "engine", "n_features", "method"]
#: keyword arguments a --test cannot set: the study sets them, or they make no sense there
_SET_BY_THE_STUDY = {"x", "y", "n_resamples", "rng", "progress", "data_name", "null",
                     "_held_out"}


# -- output ------------------------------------------------------------------------------
def _emit(res: Any, as_json: bool, pairwise: Any = None) -> None:
    """Print the result (and the pairwise table of ``k-sample --pairwise``)."""
    for name in ("statistic", "pvalue"):
        v = float(getattr(res, name))
        if not math.isfinite(v):
            raise ValueError(
                f"the test's {name} is {v}, not a finite number, so the result means nothing "
                "(the kernel overflowed or degenerated on these data: rescale the data or "
                "choose another kernel)")
    if as_json:
        # to_dict() is strict JSON: non-finite fields are null, listed under "non_finite"
        out = res.to_dict()
        if pairwise is not None:
            out["pairwise"] = pairwise.to_dict(orient="records")
        print(json.dumps(out, indent=2, default=str, allow_nan=False))
    else:
        print(res)
        print(res.summary())
        if pairwise is not None:
            print("\nPairwise two-sample tests (Holm-adjusted p-values, family-wise level "
                  "0.05):")
            print(pairwise.to_string(index=False))


def _memory_message(n: int) -> str:
    gib = n * n * 8 / 2**30
    return (f"out of memory: the test holds N x N matrices of the pooled observations "
            f"(N = {n}: {gib:.3g} GiB each in float64), and memory grows as N^2; use fewer "
            "observations (a random subsample)")


def _check_output(path: str, option: str) -> Path:
    """Refuse an output path that cannot be written, before any computation.

    Regular files (new, existing, or the target of a link) are written
    through a temporary file in their directory, which must exist and be
    writable; FIFOs and character devices (``/dev/stdout``, a pipe) are
    written through; directories, block devices and sockets are refused.
    """
    p = Path(path)
    if p.is_dir():
        link = " (through a symbolic link)" if p.is_symlink() else ""
        raise ValueError(f"{option} {path}: is a directory{link}")
    try:
        mode = output_mode(p)
    except ValueError as exc:
        raise ValueError(f"{option} {exc}") from None
    if mode != "replace":
        return p
    parent = Path(os.path.realpath(p)).parent
    if not parent.is_dir():
        raise ValueError(f"{option} {path}: directory {str(parent)!r} does not exist")
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        raise ValueError(f"{option} {path}: cannot write in {str(parent)!r} "
                         f"({exc.strerror or exc})") from None
    return p


def _written(path: str, what: str) -> None:
    """Say where an output went, unless it went to standard output or error."""
    if output_mode(path) in ("replace", "through"):
        print(f"{what} written to {path}")


def _require(module: str, option: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{option} needs {module}, which is not installed: {_EXTRA}") from None


# -- commands ------------------------------------------------------------------------------
def _demo() -> int:
    # the package's faces, looked up when the command runs (the tests replace them there)
    from .. import independence_test, two_sample_test

    df = load_eckerle4()
    print("kmtests demo on the NIST StRD Eckerle4 data (35 transmittance measurements).")
    print("\n1. Is transmittance distributed alike on the two sides of the peak (x < 451 nm")
    print("   vs x >= 451 nm)? The peak is nearly symmetric, so we expect no evidence.")
    left = df.loc[df["x"] < 451, ["y"]]
    right = df.loc[df["x"] >= 451, ["y"]]
    res = two_sample_test(left, right, rng=2026, data_name="y[x < 451] and y[x >= 451]")
    print(res)
    print(res.summary())
    print("\n2. Does transmittance depend on wavelength? The dependence is a peak, not a")
    print(f"   trend: Pearson correlation r = {np.corrcoef(df['x'], df['y'])[0, 1]:.3f}.")
    res2 = independence_test(df["x"], df["y"], rng=2026,
                             data_name="wavelength x and transmittance y")
    print(res2)
    print(res2.summary())
    return 0


def _resampling(args: argparse.Namespace) -> dict[str, Any]:
    kw = opt.given(args, _RESAMPLING)
    if args.seed is not None:
        kw["rng"] = args.seed
    return kw


def _test_options(args: argparse.Namespace) -> dict[str, Any]:
    """The test's options, --blocks and the resampling options; --process and --length
    configure the wild bootstrap's object (which then carries the resampling options)."""
    kw = {**opt.given(args, _TEST_OPTIONS + ["blocks"]), **_resampling(args)}
    wild = {k: v for k in ("process", "length")
            if (v := getattr(args, k, None)) is not None}
    if not wild:
        return kw
    if kw.get("method") != "wild":
        raise ValueError("--process and --length configure the wild bootstrap: add "
                         "--method wild")
    from ..null import WildBootstrap

    own = {k: kw.pop(k) for k in ("n_resamples", "batch", "rng", "progress") if k in kw}
    kw["method"] = WildBootstrap(**wild, **own)
    return kw


def _kernels(args: argparse.Namespace, kind: str, name: str) -> dict[str, Any]:
    """--kernel and --bandwidth(s), or their -x/-y forms, by their Python names."""
    suffixes = [""] if kind == "two_sample" else ["_x", "_y"]
    return opt.given(args, [f"{k}{s}" for k in ("kernel", name) for s in suffixes])


def _samples(args: argparse.Namespace, paths: Sequence[str], k: int | None
             ) -> tuple[list[np.ndarray], str, list[np.ndarray] | None, list[str]]:
    """The samples, the data's name, the samples' --strata labels and their names: files
    matched by column name, or one file split by --group (`k` samples, or at least two
    when None)."""
    strata = getattr(args, "strata", None)
    exclude = [] if strata is None else [strata]
    if args.group is not None:
        if len(paths) != 1:
            raise ValueError(f"--group splits one file into the samples; got {len(paths)} "
                             f"files ({', '.join(paths)}): drop all but one, or drop --group")
        table = read_csv(paths[0], args.sep, args.encoding)
        samples, masks, name, groups = split_by_group(table, args.group, args.groups,
                                                      args.columns, k=k, exclude=exclude)
        return samples, name, (None if strata is None else
                               [labels(table, strata, "--strata", m) for m in masks]), groups
    if args.groups is not None:
        raise ValueError("--groups needs --group COLUMN")
    if len(paths) < 2:
        need = ("a two-sample test needs two CSV files" if k == 2 else
                "a k-sample test needs at least two CSV files")
        raise ValueError(f"{need}, or one file and --group COLUMN (whose values split its "
                         "rows)")
    if sum(p == STDIN for p in paths) > 1:
        raise ValueError("only one of the files can be standard input ('-')")
    tables = [read_csv(p, args.sep, args.encoding) for p in paths]
    cols = args.columns
    if cols is None:  # the samples are matched by column name, never by position
        cols = _common_columns(tables, strata)
    elif strata is not None and strata in cols:
        raise ValueError(f"--columns must not contain the --strata column {strata!r}")
    samples = [columns(t, cols) for t in tables]
    names = [t.name for t in tables]
    name = " and ".join(names) if len(names) == 2 else ", ".join(names)
    return samples, name, (None if strata is None else
                           [labels(t, strata, "--strata") for t in tables]), names


def _common_columns(tables: Sequence[Any], strata: str | None) -> list[str]:
    """The columns of the samples' files, which must all have the same named ones (the
    --strata column left out)."""
    for t in tables:
        error = unnamed_column(t)
        if error is not None:
            raise error
    ta, ca = tables[0], list(tables[0].frame.columns)
    for tb in tables[1:]:
        cb = list(tb.frame.columns)
        if set(ca) != set(cb):
            only_a = [c for c in ca if c not in set(cb)]
            only_b = [c for c in cb if c not in set(ca)]
            raise ValueError(
                f"{ta.name} and {tb.name} have different columns (only in {ta.name}: "
                f"{only_a}; only in {tb.name}: {only_b}); columns are matched by name: "
                "rename them, or choose common ones with --columns")
    cols = [c for c in ca if c != strata]
    if not cols:
        raise ValueError(f"{ta.name}: no column besides the --strata column {strata!r}")
    return cols


def _two_samples(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, str, Any]:
    """x, y, their name and --strata labels: two files, or one file split by --group."""
    paths = [args.a] if args.b is None else [args.a, args.b]
    (x, y), name, strata, _ = _samples(args, paths, 2)
    return x, y, name, None if strata is None else tuple(strata)


def _two_sample(args: argparse.Namespace) -> Any:
    # the package's faces, looked up when the command runs (the tests replace them there)
    from .. import two_sample_test

    x, y, name, strata = _two_samples(args)
    args._n_memory = x.shape[0] + y.shape[0]
    return two_sample_test(x, y, data_name=name, strata=strata,
                           **_kernels(args, "two_sample", "bandwidth"), **_test_options(args))


def _drift(args: argparse.Namespace) -> Any:
    """``drift_test`` of the columns of one file (rows in time order)."""
    from ..timeseries import drift_test

    table = read_csv(args.data, args.sep, args.encoding)
    series = columns(table, args.columns, "--columns")
    n = series.shape[0]
    args._n_memory = n
    cut = n // 2 if args.split is None else args.split
    return drift_test(series, cut, memory=args.memory,
                      data_name=f"rows 0-{cut - 1} and {cut}-{n - 1} of {table.name}",
                      **_kernels(args, "two_sample", "bandwidth"), **_test_options(args))


def _k_sample(args: argparse.Namespace) -> Any:
    # the package's faces, looked up when the command runs (the tests replace them there)
    from .. import k_sample_test

    samples, name, _, names = _samples(args, args.files, None)
    args._n_memory = sum(s.shape[0] for s in samples)
    unique = len(set(names)) == len(names)
    return k_sample_test(*samples, data_name=name, sample_names=names if unique else None, **_kernels(args, "two_sample", "bandwidth"),
                         **opt.given(args, _K_SAMPLE_OPTIONS), **_resampling(args))


def _variables(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, str, Any]:
    """x, y, their name and the --strata labels, from columns of one file."""
    shared = [c for c in args.x if c in args.y]
    if shared:
        raise ValueError(f"--x and --y must name different columns; both name {shared}")
    strata = getattr(args, "strata", None)
    if strata is not None and strata in [*args.x, *args.y]:
        raise ValueError(f"--strata {strata}: the strata column must not be one of --x, --y")
    table = read_csv(args.data, args.sep, args.encoding)
    x = columns(table, args.x, "--x")
    y = columns(table, args.y, "--y")
    labs = None if strata is None else labels(table, strata, "--strata")
    return x, y, f"{','.join(args.x)} and {','.join(args.y)} in {table.name}", labs


def _independence(args: argparse.Namespace) -> Any:
    # the package's faces, looked up when the command runs (the tests replace them there)
    from .. import independence_test

    x, y, name, strata = _variables(args)
    args._n_memory = x.shape[0]
    return independence_test(x, y, data_name=name, strata=strata,
                             **_kernels(args, "independence", "bandwidth"),
                             **_test_options(args))


def _aggregated(args: argparse.Namespace) -> Any:
    # the package's faces, looked up when the command runs (the tests replace them there)
    from .. import aggregated_independence_test, aggregated_two_sample_test

    kind = "two_sample" if args.variant == "two-sample" else "independence"
    test: Any
    if kind == "two_sample":
        x, y, name, _ = _two_samples(args)
        args._n_memory = x.shape[0] + y.shape[0]
        test = aggregated_two_sample_test
    else:
        x, y, name, _ = _variables(args)
        args._n_memory = x.shape[0]
        test = aggregated_independence_test
    return test(x, y, data_name=name, **_kernels(args, kind, "bandwidths"),
                **opt.given(args, _AGGREGATED), **_resampling(args))


def _power_test_kwargs(args: argparse.Namespace, kind: str, name: str) -> dict[str, Any]:
    """The test options of a study (for every estimator or --test), by Python names."""
    from ..power import TESTS  # the power study (pandas) loads only for `kmtests power`

    kw = opt.given(args, [o for o in _TEST_OPTIONS if o != "estimator"])
    module, fname = TESTS[(kind, False)]

    accepted = set(inspect.signature(
        getattr(importlib.import_module(f"kmtests.{module}"), fname)).parameters)
    bad = [f"--{o.replace('_', '-')}" for o in kw if o not in accepted]
    if bad:
        raise ValueError(f"{', '.join(bad)}: not an option of the {kind.replace('_', '-')} test "
                         f"of scenario {name!r} ({fname})")
    for option in ("kernel", "bandwidth"):
        value = getattr(args, option)
        if value is None:
            continue
        if option in accepted:
            kw[option] = value
        elif f"{option}s" in accepted:  # the joint test: one for every variable
            kw[f"{option}s"] = value
        else:
            kw.update({f"{option}_x": value, f"{option}_y": value})
    return kw


def _power_tests(args: argparse.Namespace, kind: str) -> dict[str, Any] | None:
    """``power_curve(tests=...)`` from the --test options, validated."""
    from ..studies.power import _test_function  # loads pandas: `kmtests power` only

    if not args.test:
        return None
    if args.estimators is not None:
        raise ValueError("--estimators and --test cannot be combined: put estimator=NAME in "
                         "a --test")
    tests: dict[str, Any] = {}
    for label, options in args.test:
        if label in tests:
            raise ValueError(f"--test labels must be distinct; {label!r} is given twice")
        agg = options.get("aggregated", False)
        if not isinstance(agg, bool):
            raise ValueError(f"--test {label!r}: aggregated must be true or false; got {agg!r}")
        fn: Any = _test_function(kind, agg)
        allowed = sorted(set(inspect.signature(fn).parameters) - _SET_BY_THE_STUDY)
        unknown = sorted(set(options) - set(allowed) - {"aggregated"})
        if unknown:
            raise ValueError(f"--test {label!r}: unknown option(s) {unknown}; the options of "
                             f"{fn.__name__}: {', '.join(allowed)} (and aggregated=true)")
        tests[label] = options
    return tests


def _check_power_outputs(args: argparse.Namespace) -> None:
    """Everything that can fail after the study, checked before it starts."""
    outputs = {o: _check_output(p, o) for o, p in
               (("--out", args.out), ("--plot", args.plot), ("--checkpoint", args.checkpoint))
               if p is not None}
    resolved: dict[Path, str] = {}
    for o, p in outputs.items():
        if p.resolve() in resolved:
            raise ValueError(f"{o} and {resolved[p.resolve()]} must be different files; "
                             f"both are {p}")
        resolved[p.resolve()] = o
    if args.progress:
        _require("tqdm", "--progress")
    if args.n_jobs is not None:
        _require("joblib", "--n-jobs")
    if args.plot:
        _require("matplotlib", "--plot")
        from matplotlib.figure import Figure

        kinds = Figure().canvas.get_supported_filetypes()
        ext = Path(args.plot).suffix.lower().lstrip(".")
        if ext not in kinds:
            raise ValueError(f"--plot {args.plot}: must end with an image format matplotlib "
                             f"writes ({', '.join('.' + k for k in sorted(kinds))})")


def _power(args: argparse.Namespace) -> int:
    from ..power import power_curve  # loads pandas: `kmtests power` only

    scen = get_scenario(args.scenario)
    test_kwargs = _power_test_kwargs(args, scen.kind, scen.name)
    tests = _power_tests(args, scen.kind)
    _check_power_outputs(args)
    args._n_memory = max(args.n) * (2 if scen.kind == "two_sample" else 1)
    try:
        res = power_curve(scen, estimators=args.estimators or ["kme"], sample_sizes=args.n,
                          effects=args.effects, repetitions=args.reps, alpha=args.alpha,
                          n_resamples=args.n_resamples, rng=args.seed, n_jobs=args.n_jobs,
                          progress=args.progress, checkpoint=args.checkpoint,
                          test_kwargs=test_kwargs, tests=tests)
    except KeyboardInterrupt:
        if args.checkpoint:
            print(f"kmtests: interrupted; the finished repetitions are saved in "
                  f"{args.checkpoint}: run the same command to resume", file=sys.stderr)
        else:
            print("kmtests: interrupted (with --checkpoint FILE a study can be resumed)",
                  file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps(_power_json(res), indent=2, allow_nan=False))
    else:
        print(res.summary())
    _write_power_outputs(args, res)
    return 0


def _power_json(res: Any) -> dict[str, Any]:
    root = res.root_seed
    return {"scenario": res.scenario, "description": res.description,
            "test": str(res.raw["test"].iloc[0]), "estimators": list(res.estimators),
            "n_resamples": res.n_resamples, "alpha": list(res.alpha), "seed": res.seed,
            "root_seed": None if root is None else {
                "entropy": root.entropy, "spawn_key": list(root.spawn_key)},
            "test_kwargs": {k: v for k, v in res.test_kwargs.items()},
            "table": res.table().to_dict(orient="records")}


def _write_power_outputs(args: argparse.Namespace, res: Any) -> None:
    if args.out:
        write_output(args.out, res.table().to_csv(index=False))
        _written(args.out, "table")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        ax = res.plot()
        buf = io.BytesIO()
        try:
            ax.figure.savefig(buf, format=Path(args.plot).suffix.lower().lstrip("."), dpi=120,
                              bbox_inches="tight")
        finally:
            plt.close(ax.figure)
        write_output(args.plot, buf.getvalue())
        _written(args.plot, "plot")


# -- the parser ------------------------------------------------------------------------------
def _finish(p: argparse.ArgumentParser, resamples: int | None = 9999, **flags: str) -> None:
    """What every test command ends with: the resampling options (their default count
    `resamples`; None: a command without resampling) and the output options, and the
    table of its flags for the messages of the Python functions."""
    if resamples is not None:
        opt.add_resampling(p, resamples)
        opt.add_io(p)
    p.set_defaults(_flags=_flags(p, **flags))


def _flags(p: argparse.ArgumentParser, **extra: str) -> dict[str, str]:
    """Python name -> command-line option, for the messages of the Python functions."""
    out = {"rng": "--seed", **extra}
    for action in p._actions:
        longs = [o for o in action.option_strings if o.startswith("--")]
        if longs and action.dest not in out:
            out[action.dest] = longs[0]
    return out


def _two_sample_data(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", help="CSV file of the first sample, or of both with --group; '-' reads "
                   "standard input")
    p.add_argument("b", nargs="?", default=None,
                   help="CSV file of the second sample (not with --group); '-' reads standard "
                   "input")
    _grouping(p, "two")


def _grouping(p: argparse.ArgumentParser, how_many: str) -> None:
    """--group, --groups, --columns: the samples as the groups of one file."""
    two = how_many == "two"
    p.add_argument("--group", default=None, metavar="COLUMN",
                   help=("one file holds both samples: COLUMN has two values, whose rows are "
                         "the two samples" if two else "one file holds the samples: the rows "
                         "of each value of COLUMN are a sample")
                   + " (the other columns are the data)")
    p.add_argument("--groups", type=opt.names, default=None,
                   metavar="A,B" if two else "A,B,...",
                   help=f"the {'two ' if two else ''}values of --group to compare, in this "
                   "order (default: " + ("the column's two values" if two else "all")
                   + ", in order of appearance)")
    p.add_argument("--columns", type=opt.names, default=None,
                   help="comma-separated columns to use (default: all, the --group column "
                   f"excepted; {'two files' if two else 'the files'} must then have the "
                   "same column names)")


def _independence_data(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="CSV file with a header line; '-' reads standard input")
    p.add_argument("--x", required=True, type=opt.names, help="comma-separated columns of x")
    p.add_argument("--y", required=True, type=opt.names, help="comma-separated columns of y")


def _add_test_commands(sub: Any) -> None:
    for name, kind, data, text, description in (
            ("two-sample", "two_sample", _two_sample_data,
             "two-sample test (MMD) of two CSV files, or of the two groups of one file",
             "Two-sample test between the rows of two CSV files with a header line (columns "
             "matched by name), or between the two groups of rows of one file (--group)."),
            ("independence", "independence", _independence_data,
             "independence test (HSIC) between columns of a CSV file",
             "Independence test between the columns --x and --y of a CSV file with a header "
             "line.")):
        p = sub.add_parser(name, help=text, description=description)
        data(p)
        opt.add_kernels(p, kind)
        opt.add_test(p, kind)
        opt.add_dependence(p, kind)
        _finish(p)
    pd_ = sub.add_parser(
        "drift", help="drift between two windows of one series (columns of a CSV file)",
        description="Kernel two-sample test between two windows of one series, the rows of "
        "a CSV file with a header line in time order: block permutations of a length from "
        "the data, or, where an ARFIMA(1, d, 0) fit finds long memory or a root near one, "
        "the self-normalised drift test (--memory).")
    pd_.add_argument("data", help="CSV file with a header line, rows in time order; '-' "
                     "reads standard input")
    pd_.add_argument("--columns", type=opt.names, default=None,
                     help="comma-separated columns of the series (default: all)")
    pd_.add_argument("--split", type=opt.positive_int, default=None,
                     help="the first window is the first SPLIT rows (default: half)")
    pd_.add_argument("--memory", default="auto", choices=["auto", "short", "long"],
                     help="auto (default): the self-normalised test with an ARFIMA null "
                     "where the fit finds long memory or a root near one, block "
                     "permutations elsewhere; short: block permutations; long: the "
                     "self-normalised test (which takes --n-resamples and --seed only)")
    opt.add_kernels(pd_, "two_sample")
    opt.add_test(pd_, "two_sample")
    opt.add_dependence(pd_, "two_sample", with_strata=False)
    _finish(pd_)
    pk = sub.add_parser("k-sample", help="k-sample test (MMD) of several CSV files, or of the "
                        "groups of one file", description="Kernel k-sample test: do the rows "
                        "of several CSV files with a header line (columns matched by name), or "
                        "the groups of rows of one file (--group), come from one distribution?")
    pk.add_argument("files", nargs="+", metavar="FILE",
                    help="CSV files of the samples (one file with --group); '-' reads standard "
                    "input")
    _grouping(pk, "k")
    opt.add_kernels(pk, "two_sample")
    opt.add_k_sample(pk)
    _finish(pk)


def _add_aggregated(sub: Any) -> None:
    pa = sub.add_parser("aggregated", help="aggregated tests over many kernels (MMDAgg, "
                        "MMD-FUSE, HSICAgg)", description="Aggregated two-sample or "
                        "independence test: one test over a collection of kernels (bandwidths), "
                        "estimators and statistic forms, with exact level.")
    variants = pa.add_subparsers(dest="variant", required=True,
                                 metavar="{two-sample,independence}")
    for name, kind in (("two-sample", "two_sample"), ("independence", "independence")):
        p = variants.add_parser(name, help=f"aggregated {name} test", description=(
            "Aggregated two-sample test of two CSV files, or of the two groups of one file."
            if kind == "two_sample" else
            "Aggregated independence test between the columns --x and --y of a CSV file."))
        (_two_sample_data if kind == "two_sample" else _independence_data)(p)
        opt.add_kernels(p, kind, plural=True)
        opt.add_aggregated(p, kind)
        _finish(p, 1999)


def _add_power(sub: Any) -> None:
    pp = sub.add_parser("power", help="power study of a simulation scenario",
                        description="Power of the kernel test of a scenario across estimators "
                        "(or tests), sample sizes and effect sizes.")
    pp.add_argument("--scenario", required=True,
                    help="scenario name (see kmtests.datasets.SCENARIOS)")
    pp.add_argument("--estimators", type=opt.names, default=None,
                    help="comma-separated estimators to compare (default: kme)")
    pp.add_argument("--test", type=opt.parse_test_spec, action="append", default=None,
                    metavar="'LABEL: KEY=VALUE ...'",
                    help="a test to compare (repeat the option for each): a label, then options "
                    "of the scenario's test as key=value (lists comma-separated), e.g. "
                    "'SR-MMD: statistic=regularized lam=0.001' or 'MMDAgg: aggregated=true "
                    "bandwidths=5'")
    pp.add_argument("--n", type=opt.int_list, default=[20, 40, 80],
                    help="comma-separated sample sizes (default 20,40,80)")
    pp.add_argument("--effects", type=opt.float_list, default=None,
                    help="comma-separated effect sizes (default: the scenario's)")
    pp.add_argument("--reps", type=opt.positive_int, default=100,
                    help="repetitions per design point (default 100)")
    pp.add_argument("--alpha", type=opt.float_list, default=[0.05],
                    help="comma-separated levels (default 0.05)")
    pp.add_argument("--n-resamples", type=opt.positive_int, default=199,
                    help="permutations per test (default 199)")
    pp.add_argument("--seed", type=opt.seed, default=None,
                    help="root seed of the study (default: fresh entropy, recorded)")
    pp.add_argument("--n-jobs", type=opt.n_jobs, default=None,
                    help="parallel workers: -1 (all cores) or a positive number (needs joblib)")
    pp.add_argument("--kernel", default=None,
                    help=f"kernel of every test: {opt.KERNELS} (default gaussian)")
    pp.add_argument("--bandwidth", type=opt.bandwidth, default=None,
                    help="bandwidth of every test: 'median' (default) or a number")
    opt.add_test(pp, "two_sample", power=True)
    pp.add_argument("--out", default=None, help="write the power table to this CSV file")
    pp.add_argument("--plot", default=None,
                    help="write the power plot to this image file (needs matplotlib)")
    pp.add_argument("--checkpoint", default=None,
                    help="file of raw p-values and settings; the study resumes from it")
    pp.add_argument("--progress", action="store_true", help="show a progress bar (needs tqdm)")
    pp.add_argument("--json", action="store_true",
                    help="print the settings and the power table as JSON instead of the report")
    pp.set_defaults(_flags=_flags(pp, kernel_x="--kernel", kernel_y="--kernel",
                                  bandwidth_x="--bandwidth", bandwidth_y="--bandwidth",
                                  sample_sizes="--n", repetitions="--reps"))


def _parser() -> argparse.ArgumentParser:
    # read when the parser is built (a test changes it on the package)
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="kmtests", description="Kernel two-sample (MMD), independence (HSIC), k-sample, "
        "joint and conditional independence tests.")
    parser.add_argument("--version", action="version", version=f"kmtests {__version__}",
                        help="print the version of kmtests and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="run both tests on the bundled Eckerle4 data")
    _add_test_commands(sub)
    _finish(add_joint(sub), kernels="--kernel")
    _finish(add_conditional(sub), split="--split-size")
    _finish(add_goodness(sub))
    _finish(add_ctst(sub), resamples=999)
    _add_aggregated(sub)
    _add_power(sub)
    _finish(add_monitor(sub), None)
    return parser


#: ``name='value'`` (also ``name='a' or 'b'``, ``name=3``) in a message of the Python API
_ASSIGNED = re.compile(r"(?<![\w.\-])([a-z_]\w*)=('[^'\s]*'(?:(?:, | or | and )'[^'\s]*')*"
                       r"|-?\d[\w.+\-]*)")


def _spelled(message: str, flags: dict[str, str]) -> str:
    """`message` in one line and in the command line's words: the Python names of options,
    backticked (`` `n_features` ``) or set (``engine='exact'``, ``engine='exact' or
    'streamed'``), become the command's options (``--n-features``, ``--engine exact``,
    ``--engine exact or streamed``). Names that are no option of the command stay."""
    def option(m: re.Match[str]) -> str:
        return flags.get(m.group(1), m.group(0))

    def assigned(m: re.Match[str]) -> str:
        flag = flags.get(m.group(1))
        return m.group(0) if flag is None else f"{flag} {m.group(2).replace(chr(39), '')}"

    text = re.sub(r"`(\w+)`", option, " ".join(message.split("\n")))
    return _ASSIGNED.sub(assigned, text)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 2 for any error (reported in one line on standard
        error), 130 when a study is interrupted with Ctrl-C.

    Examples
    --------
    >>> from kmtests.cli import main
    >>> main(["independence", "no-such-file.csv", "--x", "a", "--y", "b"])
    2
    """
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2, message already printed)
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    args._n_memory = None
    flags = getattr(args, "_flags", {})

    token = MISSING_OK.set(getattr(args, "nan_policy", None) == "omit")
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _warning_printer(flags)
            return _main(args, flags)
    finally:
        MISSING_OK.reset(token)


def _warning_printer(flags: dict[str, str]) -> Any:
    """Warnings as the errors are written: one line on standard error, in the command
    line's words, with their kind (``kmtests: warning: ... (SlowTestWarning)``)."""
    def show(message: Any, category: type[Warning], *_: Any, **__: Any) -> None:
        print(f"kmtests: warning: {_spelled(str(message), flags)} ({category.__name__})",
              file=sys.stderr)

    return show


def _main(args: argparse.Namespace, flags: dict[str, str]) -> int:
    try:
        if args.command == "demo":
            return _demo()
        if args.command == "power":
            return _power(args)
        if args.command == "monitor":
            return run_monitor(args)
        run = {"two-sample": _two_sample, "independence": _independence, "drift": _drift,
               "k-sample": _k_sample, "joint": run_joint, "conditional": run_conditional,
               "gof": run_goodness, "conditional-two-sample": run_ctst,
               "aggregated": _aggregated}[args.command]
        res = run(args)
        _emit(res, args.json, res.pairwise() if getattr(args, "pairwise", False) else None)
    except BrokenPipeError:  # output piped into e.g. `head`: not an error
        return _closed_stdout()
    except KeyboardInterrupt:
        print("kmtests: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        n = args._n_memory
        print("kmtests: error: " + (_memory_message(n) if n else "out of memory"),
              file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError, ImportError) as exc:
        print(f"kmtests: error: {_spelled(str(exc), flags)}", file=sys.stderr)
        return 2
    return 0


def _closed_stdout() -> int:
    """Silence the interpreter's flush of a stdout whose reader has gone."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0
