"""Command line: ``kmtests demo | two-sample | independence``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

import numpy as np


def _parse_bandwidth(text: str) -> str | float:
    if text == "median":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bandwidth must be 'median' or a number; got {text!r}")


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--estimator", default="kme", help="kernel mean estimator (default: kme)")
    p.add_argument("--method", default="permutation", choices=["permutation", "gamma"])
    p.add_argument("--statistic", default=None, choices=["unbiased", "biased"])
    p.add_argument("--n-resamples", type=int, default=9999, help="permutations (default 9999)")
    p.add_argument("--seed", type=int, default=None, help="seed for the permutations")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")


def _columns(df, cols: Sequence[str] | None, what: str):
    import pandas as pd  # noqa: F401

    if cols:
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise ValueError(f"{what}: unknown column(s) {missing}; available: {list(df.columns)}")
        df = df[list(cols)]
    numeric = df.select_dtypes(include="number")
    if numeric.shape[1] != df.shape[1]:
        bad = [c for c in df.columns if c not in numeric.columns]
        raise ValueError(f"{what}: non-numeric column(s) {bad}; choose columns with --columns/--x/--y")
    return df.to_numpy(dtype=np.float64)


def _split_cols(text: str | None) -> list[str] | None:
    return None if text is None else [c.strip() for c in text.split(",") if c.strip()]


def _emit(res, as_json: bool) -> None:
    if as_json:
        print(json.dumps(res.to_dict(), indent=2, default=str))
    else:
        print(res)
        print(res.summary())


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


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",") if v.strip()]


def _power(args: argparse.Namespace) -> int:
    from .power import power_curve

    res = power_curve(args.scenario, estimators=_split_cols(args.estimators) or ["kme"],
                      sample_sizes=[int(v) for v in _floats(args.n)],
                      effects=None if args.effects is None else _floats(args.effects),
                      repetitions=args.reps, alpha=_floats(args.alpha),
                      n_resamples=args.n_resamples, rng=args.seed, n_jobs=args.n_jobs,
                      progress=args.progress, checkpoint=args.checkpoint)
    print(res.summary())
    if args.out:
        res.table().to_csv(args.out, index=False)
        print(f"table written to {args.out}")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        ax = res.plot()
        ax.figure.savefig(args.plot, dpi=120, bbox_inches="tight")
        print(f"plot written to {args.plot}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="kmtests", description="Kernel two-sample (MMD) and independence (HSIC) tests.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="run both tests on the bundled Eckerle4 data")
    p2 = sub.add_parser("two-sample", help="two-sample test between two CSV files")
    p2.add_argument("a", help="CSV file of the first sample")
    p2.add_argument("b", help="CSV file of the second sample")
    p2.add_argument("--columns", help="comma-separated columns to use (default: all)")
    p2.add_argument("--kernel", default="gaussian")
    p2.add_argument("--bandwidth", type=_parse_bandwidth, default="median")
    _add_common(p2)
    pi = sub.add_parser("independence", help="independence test between columns of a CSV file")
    pi.add_argument("data", help="CSV file")
    pi.add_argument("--x", required=True, help="comma-separated columns of x")
    pi.add_argument("--y", required=True, help="comma-separated columns of y")
    pi.add_argument("--kernel-x", default="gaussian")
    pi.add_argument("--kernel-y", default="gaussian")
    pi.add_argument("--bandwidth-x", type=_parse_bandwidth, default="median")
    pi.add_argument("--bandwidth-y", type=_parse_bandwidth, default="median")
    _add_common(pi)
    pp = sub.add_parser("power", help="power study of a simulation scenario")
    pp.add_argument("--scenario", required=True, help="scenario name (see kmtests.datasets.SCENARIOS)")
    pp.add_argument("--estimators", default="kme", help="comma-separated estimators (default: kme)")
    pp.add_argument("--n", default="20,40,80", help="comma-separated sample sizes")
    pp.add_argument("--effects", default=None, help="comma-separated effect sizes (default: the scenario's)")
    pp.add_argument("--reps", type=int, default=100, help="repetitions per design point")
    pp.add_argument("--alpha", default="0.05", help="comma-separated levels")
    pp.add_argument("--n-resamples", type=int, default=199)
    pp.add_argument("--seed", type=int, default=None)
    pp.add_argument("--n-jobs", type=int, default=None)
    pp.add_argument("--out", default=None, help="write the power table to this CSV file")
    pp.add_argument("--plot", default=None, help="write the power plot to this image file")
    pp.add_argument("--checkpoint", default=None, help="CSV of raw p-values (resumable)")
    pp.add_argument("--progress", action="store_true", help="show a progress bar")
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            return _demo()
        if args.command == "power":
            return _power(args)
        import pandas as pd

        from . import independence_test, two_sample_test

        if args.command == "two-sample":
            cols = _split_cols(args.columns)
            x = _columns(pd.read_csv(args.a), cols, args.a)
            y = _columns(pd.read_csv(args.b), cols, args.b)
            res = two_sample_test(x, y, kernel=args.kernel, bandwidth=args.bandwidth,
                                  estimator=args.estimator, statistic=args.statistic,
                                  method=args.method, n_resamples=args.n_resamples,
                                  rng=args.seed, data_name=f"{args.a} and {args.b}")
        else:
            df = pd.read_csv(args.data)
            x = _columns(df, _split_cols(args.x), "--x")
            y = _columns(df, _split_cols(args.y), "--y")
            res = independence_test(
                x, y, kernel_x=args.kernel_x, kernel_y=args.kernel_y,
                bandwidth_x=args.bandwidth_x, bandwidth_y=args.bandwidth_y,
                estimator=args.estimator, statistic=args.statistic or "biased",
                method=args.method, n_resamples=args.n_resamples, rng=args.seed,
                data_name=f"{args.x} and {args.y} in {args.data}")
    except BrokenPipeError:  # output piped into e.g. `head`: not an error
        return _closed_stdout()
    except (ValueError, TypeError, OSError) as exc:
        print(f"kmtests: error: {exc}", file=sys.stderr)
        return 2
    try:
        _emit(res, args.json)
    except BrokenPipeError:
        return _closed_stdout()
    return 0


def _closed_stdout() -> int:
    """Silence the interpreter's flush of a stdout whose reader has gone."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0
