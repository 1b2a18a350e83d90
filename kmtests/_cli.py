"""Command line: ``kmtests demo | two-sample | independence | power``.

Every error is reported in one line on standard error with exit status 2,
before any computation when the arguments or files are at fault: options are
validated by their argparse types, CSV files are read by :func:`_read_csv`
(whose messages name the file), optional dependencies and output paths are
checked before a study starts.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

if TYPE_CHECKING:  # pandas is imported lazily, in the commands that read CSV files
    import pandas as pd

_EXTRA = "pip install 'kmtests[power]'"


# -- argparse types: each refuses a bad value with "must be ...; got ..." -------------
def _parse_bandwidth(text: str) -> str | float:
    if text == "median":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bandwidth must be 'median' or a number; got {text!r}")


def _int(text: str, rule: str, ok: Callable[[int], bool]) -> int:
    try:
        value = int(text.strip(), 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {rule}; got {text!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"must be {rule}; got {text!r}")
    return value


def _positive_int(text: str) -> int:
    return _int(text, "a positive integer", lambda v: v >= 1)


def _seed(text: str) -> int:
    return _int(text, "a non-negative integer", lambda v: v >= 0)


def _n_jobs(text: str) -> int:
    return _int(text, "-1 (all cores) or a positive integer", lambda v: v == -1 or v >= 1)


def _list(text: str, rule: str) -> list[str]:
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise argparse.ArgumentTypeError(f"must be {rule}; got {text!r}")
    return items


def _names(text: str) -> list[str]:
    items = _list(text, "a comma-separated list of names")
    if len(set(items)) != len(items):
        raise argparse.ArgumentTypeError(f"must not repeat a name; got {text!r}")
    return items


def _int_list(text: str) -> list[int]:
    rule = "a comma-separated list of positive integers"
    return [_int(t, rule, lambda v: v >= 1) for t in _list(text, rule)]


def _float_list(text: str) -> list[float]:
    rule = "a comma-separated list of finite numbers"
    out = []
    for t in _list(text, rule):
        try:
            v = float(t)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {rule}; got {text!r}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"must be {rule}; got {text!r}")
        out.append(v)
    return out


def _encoding(text: str) -> str:
    import codecs

    try:
        return codecs.lookup(text).name
    except LookupError:
        raise argparse.ArgumentTypeError(f"must be a text encoding such as utf-8 or latin-1; "
                                         f"got {text!r}") from None


def _sep(text: str) -> str:
    text = {"\\t": "\t", "tab": "\t"}.get(text, text)
    if len(text) != 1 or text in "\"\r\n":
        raise argparse.ArgumentTypeError(f"must be one character such as ',' ';' or '\\t'; "
                                         f"got {text!r}")
    return text


# -- reading CSV files ----------------------------------------------------------------
def _sniff(path: str, sep: str, encoding: str) -> str | None:
    """The field separator the file's first lines seem to use, when it is not `sep`."""
    import csv

    try:
        with open(path, encoding=encoding, errors="replace", newline="") as fh:
            sample = fh.read(4096)
        found = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except (OSError, csv.Error):
        return None
    return None if found == sep else found


def _sep_hint(path: str, sep: str, encoding: str) -> str:
    found = _sniff(path, sep, encoding)
    if found is None:
        return ""
    shown = "\\t" if found == "\t" else found
    return f"; the file seems to be separated by '{shown}': use --sep '{shown}'"


def _read_csv(path: str, sep: str = ",", encoding: str = "utf-8") -> pd.DataFrame:
    """The file as a DataFrame of strings, its header line as the column names.

    Every problem is a ValueError whose message starts with the file name:
    a missing or unreadable file, an empty file, a header without data rows,
    rows with more fields than the header, text that is not in `encoding`, a
    header that looks like data (no header line), nameless or repeated
    column names.
    """
    import pandas as pd

    try:
        raw = pd.read_csv(path, sep=sep, encoding=encoding, header=None, dtype=str,
                          keep_default_na=False, skip_blank_lines=True)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not {encoding} text ({_bad_byte(path, encoding)}); give "
                         "the file's encoding with --encoding, e.g. --encoding latin-1") from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path}: the file is empty") from None
    except pd.errors.ParserError as exc:
        detail = str(exc).strip().split("C error: ")[-1]
        raise ValueError(f"{path}: rows have different numbers of fields ({detail})"
                         + _sep_hint(path, sep, encoding)) from None
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None
    names = [str(v).strip() if isinstance(v, str) else "" for v in raw.iloc[0]]
    if len(names) == 1:  # e.g. a ';'-separated file read with ','
        found = _sniff(path, sep, encoding)
        if found is not None and found in names[0]:
            raise ValueError(f"{path}: the file has a single column {names[0]!r}"
                             + _sep_hint(path, sep, encoding))
    data = raw.iloc[1:].reset_index(drop=True)
    data.columns = names
    if all(_is_number(v) for v in names):
        raise ValueError(f"{path}: the first line {names} looks like data, not a header; "
                         "the file needs a header line naming its columns")
    dup = sorted({v for v in names if names.count(v) > 1 and v})
    if dup:
        raise ValueError(f"{path}: column name(s) {dup} appear more than once in the header")
    if len(data) == 0:
        raise ValueError(f"{path}: the file has a header line but no data rows")
    return data


def _bad_byte(path: str, encoding: str) -> str:
    """Where the file stops being `encoding` text: the byte and its line."""
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        return f"byte 0x{data[exc.start]:02x} on line {line}"
    return "a byte sequence"  # pragma: no cover - pandas and Python disagree


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _columns(df: pd.DataFrame, cols: Sequence[str] | None, path: str, option: str = "--columns",
             sep: str = ",", encoding: str = "utf-8") -> np.ndarray:
    """The named columns (default: all) of a file read by :func:`_read_csv`, as floats."""
    import pandas as pd

    available = list(df.columns)
    if cols is not None:
        missing = [c for c in cols if c not in available]
        if missing:
            raise ValueError(f"{option}: unknown column(s) {missing} in {path}; "
                             f"available: {available}")
    else:
        cols = available
        if "" in cols:
            raise ValueError(f"{path}: column {cols.index('') + 1} has no name (an index "
                             f"written by pandas' to_csv?); choose columns with {option}")
    out = np.empty((len(df), len(cols)))
    bad_cols = []
    for j, c in enumerate(cols):
        text = df[c]
        values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
        blank = text.isna().to_numpy() | (text.fillna("").str.strip() == "").to_numpy()
        unparsable = np.isnan(values) & ~blank & ~text.fillna("").str.strip().str.lower().isin(
            ["nan", "na", "n/a", "null"]).to_numpy()
        if unparsable.all():
            bad_cols.append((c, text.iloc[0]))
            continue
        if unparsable.any():
            i = int(np.argmax(unparsable))
            raise ValueError(f"{path}: column {c!r} has a non-numeric value {text.iloc[i]!r} "
                             f"in data row {i + 1}")
        nonfinite = ~np.isfinite(values)
        if nonfinite.any():
            i = int(np.argmax(nonfinite))
            what = "a missing value (an empty cell or a short row)" if (
                blank[i] or np.isnan(values[i])) else f"the value {text.iloc[i]!r}"
            raise ValueError(f"{path}: column {c!r} has {what} in data row {i + 1}; "
                             "the tests need finite numbers")
        out[:, j] = values
    if bad_cols:
        names = [c for c, _ in bad_cols]
        hint = _sep_hint(path, sep, encoding) if len(available) == 1 else ""
        raise ValueError(f"{path}: non-numeric column(s) {names} (e.g. {bad_cols[0][1]!r} in "
                         f"data row 1){hint or f'; choose numeric columns with {option}'}")
    return out


# -- output ------------------------------------------------------------------------------
def _emit(res: Any, as_json: bool) -> None:
    for name in ("statistic", "pvalue"):
        v = float(getattr(res, name))
        if not math.isfinite(v):
            raise ValueError(
                f"the test's {name} is {v}, not a finite number, so the result means nothing "
                "(the kernel overflowed or degenerated on these data: rescale the data or "
                "choose another kernel)")
    if as_json:
        # to_dict() is strict JSON: non-finite fields are null, listed under "non_finite"
        print(json.dumps(res.to_dict(), indent=2, default=str, allow_nan=False))
    else:
        print(res)
        print(res.summary())


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
    import tempfile

    from ._checkpoint import output_mode

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
    from ._checkpoint import output_mode

    if output_mode(path) in ("replace", "through"):
        print(f"{what} written to {path}")


def _require(module: str, option: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{option} needs {module}, which is not installed: {_EXTRA}") from None


# -- commands ------------------------------------------------------------------------------
def _demo() -> int:
    from . import independence_test, two_sample_test
    from .datasets import load_eckerle4

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
    res2 = independence_test(df["x"], df["y"], rng=2026, data_name="wavelength x and transmittance y")
    print(res2)
    print(res2.summary())
    return 0


def _two_sample(args: argparse.Namespace) -> Any:
    from . import two_sample_test

    da = _read_csv(args.a, args.sep, args.encoding)
    db = _read_csv(args.b, args.sep, args.encoding)
    cols = args.columns
    if cols is None:  # the samples are matched by column name, never by position
        for df, path in ((da, args.a), (db, args.b)):
            if "" in df.columns:
                raise ValueError(f"{path}: column {list(df.columns).index('') + 1} has no name "
                                 "(an index written by pandas' to_csv?); choose columns with "
                                 "--columns")
        if set(da.columns) != set(db.columns):
            only_a = [c for c in da.columns if c not in set(db.columns)]
            only_b = [c for c in db.columns if c not in set(da.columns)]
            raise ValueError(
                f"{args.a} and {args.b} have different columns (only in {args.a}: {only_a}; "
                f"only in {args.b}: {only_b}); columns are matched by name: rename them, or "
                "choose common ones with --columns")
        cols = list(da.columns)
    x = _columns(da, cols if args.columns else None, args.a, sep=args.sep,
                 encoding=args.encoding)
    y = _columns(db, cols, args.b, sep=args.sep, encoding=args.encoding)
    args._n_memory = x.shape[0] + y.shape[0]
    return two_sample_test(x, y, kernel=args.kernel, bandwidth=args.bandwidth,
                           estimator=args.estimator, statistic=args.statistic,
                           method=args.method, n_resamples=args.n_resamples,
                           rng=args.seed, data_name=f"{args.a} and {args.b}")


def _independence(args: argparse.Namespace) -> Any:
    from . import independence_test

    shared = [c for c in args.x if c in args.y]
    if shared:
        raise ValueError(f"--x and --y must name different columns; both name {shared}")
    df = _read_csv(args.data, args.sep, args.encoding)
    x = _columns(df, args.x, args.data, "--x", args.sep, args.encoding)
    y = _columns(df, args.y, args.data, "--y", args.sep, args.encoding)
    args._n_memory = x.shape[0]
    return independence_test(
        x, y, kernel_x=args.kernel_x, kernel_y=args.kernel_y,
        bandwidth_x=args.bandwidth_x, bandwidth_y=args.bandwidth_y,
        estimator=args.estimator, statistic=args.statistic or "biased",
        method=args.method, n_resamples=args.n_resamples, rng=args.seed,
        data_name=f"{','.join(args.x)} and {','.join(args.y)} in {args.data}")


def _power(args: argparse.Namespace) -> int:
    from ._checkpoint import write_output
    from .datasets import get_scenario
    from .power import power_curve

    scen = get_scenario(args.scenario)
    # everything that can fail after the study is checked before it starts
    outputs = {opt: _check_output(p, opt) for opt, p in
               (("--out", args.out), ("--plot", args.plot), ("--checkpoint", args.checkpoint))
               if p is not None}
    resolved: dict[Path, str] = {}
    for opt, p in outputs.items():
        if p.resolve() in resolved:
            raise ValueError(f"{opt} and {resolved[p.resolve()]} must be different files; "
                             f"both are {p}")
        resolved[p.resolve()] = opt
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
    args._n_memory = max(args.n) * (2 if scen.kind == "two_sample" else 1)
    try:
        res = power_curve(scen, estimators=args.estimators, sample_sizes=args.n,
                          effects=args.effects, repetitions=args.reps, alpha=args.alpha,
                          n_resamples=args.n_resamples, rng=args.seed, n_jobs=args.n_jobs,
                          progress=args.progress, checkpoint=args.checkpoint)
    except KeyboardInterrupt:
        if args.checkpoint:
            print(f"kmtests: interrupted; the finished repetitions are saved in "
                  f"{args.checkpoint}: run the same command to resume", file=sys.stderr)
        else:
            print("kmtests: interrupted (with --checkpoint FILE a study can be resumed)",
                  file=sys.stderr)
        return 130
    print(res.summary())
    if args.out:
        write_output(args.out, res.table().to_csv(index=False))
        _written(args.out, "table")
    if args.plot:
        import io

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
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kmtests", description="Kernel two-sample (MMD) and independence (HSIC) tests.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="run both tests on the bundled Eckerle4 data")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--estimator", default="kme", help="kernel mean estimator (default: kme)")
        p.add_argument("--method", default="permutation", choices=["permutation", "gamma"])
        p.add_argument("--statistic", default=None, choices=["unbiased", "biased"])
        p.add_argument("--n-resamples", type=_positive_int, default=9999,
                       help="permutations (default 9999)")
        p.add_argument("--seed", type=_seed, default=None, help="seed for the permutations")
        p.add_argument("--json", action="store_true", help="print machine-readable JSON")
        p.add_argument("--sep", type=_sep, default=",", help="field separator (default ',')")
        p.add_argument("--encoding", type=_encoding, default="utf-8",
                       help="text encoding of the files (default utf-8)")

    p2 = sub.add_parser("two-sample", help="two-sample test between two CSV files",
                        description="Two-sample test between the rows of two CSV files with "
                        "a header line; columns are matched by name.")
    p2.add_argument("a", help="CSV file of the first sample")
    p2.add_argument("b", help="CSV file of the second sample")
    p2.add_argument("--columns", type=_names,
                    help="comma-separated columns to use (default: all; both files must "
                    "then have the same column names)")
    p2.add_argument("--kernel", default="gaussian")
    p2.add_argument("--bandwidth", type=_parse_bandwidth, default="median")
    common(p2)
    pi = sub.add_parser("independence", help="independence test between columns of a CSV file")
    pi.add_argument("data", help="CSV file")
    pi.add_argument("--x", required=True, type=_names, help="comma-separated columns of x")
    pi.add_argument("--y", required=True, type=_names, help="comma-separated columns of y")
    pi.add_argument("--kernel-x", default="gaussian")
    pi.add_argument("--kernel-y", default="gaussian")
    pi.add_argument("--bandwidth-x", type=_parse_bandwidth, default="median")
    pi.add_argument("--bandwidth-y", type=_parse_bandwidth, default="median")
    common(pi)
    pp = sub.add_parser("power", help="power study of a simulation scenario")
    pp.add_argument("--scenario", required=True, help="scenario name (see kmtests.datasets.SCENARIOS)")
    pp.add_argument("--estimators", type=_names, default=["kme"],
                    help="comma-separated estimators (default: kme)")
    pp.add_argument("--n", type=_int_list, default=[20, 40, 80],
                    help="comma-separated sample sizes")
    pp.add_argument("--effects", type=_float_list, default=None,
                    help="comma-separated effect sizes (default: the scenario's)")
    pp.add_argument("--reps", type=_positive_int, default=100,
                    help="repetitions per design point")
    pp.add_argument("--alpha", type=_float_list, default=[0.05], help="comma-separated levels")
    pp.add_argument("--n-resamples", type=_positive_int, default=199)
    pp.add_argument("--seed", type=_seed, default=None)
    pp.add_argument("--n-jobs", type=_n_jobs, default=None,
                    help="parallel workers: -1 (all cores) or a positive number (needs joblib)")
    pp.add_argument("--out", default=None, help="write the power table to this CSV file")
    pp.add_argument("--plot", default=None,
                    help="write the power plot to this image file (needs matplotlib)")
    pp.add_argument("--checkpoint", default=None,
                    help="file of raw p-values and settings; the study resumes from it")
    pp.add_argument("--progress", action="store_true", help="show a progress bar (needs tqdm)")
    return parser


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
    >>> from kmtests._cli import main
    >>> main(["independence", "no-such-file.csv", "--x", "a", "--y", "b"])
    2
    """
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2, message already printed)
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    args._n_memory = None
    try:
        if args.command == "demo":
            return _demo()
        if args.command == "power":
            return _power(args)
        res = _two_sample(args) if args.command == "two-sample" else _independence(args)
        _emit(res, args.json)
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
        print(f"kmtests: error: {exc}", file=sys.stderr)
        return 2
    return 0


def _closed_stdout() -> int:
    """Silence the interpreter's flush of a stdout whose reader has gone."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0
