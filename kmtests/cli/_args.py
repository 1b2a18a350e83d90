"""The command line's options: argparse types and the option groups of each command.

Each type refuses a bad value with ``must be ...; got ...`` (argparse adds
``argument --option:``); the groups give every option a help text. Options of
the tests default to None and are passed to the Python function only when
given, so the function's own defaults hold. The choices are read from the
registries (statistics, engines, null methods, filters, combinations), so a
registered addition is an option value with no edit here.
"""

from __future__ import annotations

import argparse
import codecs
import math
from typing import Any, Callable

from .._collection import COMBINATIONS
from .._plan import engine_aliases
from ..engines import engine_names
from ..null import METHODS
from ..null.combine import _WEIGHTS
from ..problems import IndependenceProblem, KSampleProblem, TwoSampleProblem
from ..statistics import statistic_names
from ..statistics.spectral import FILTERS as _FILTERS
from ..statistics.tuning import TUNINGS

KERNELS = "gaussian, laplacian, ard, linear, polynomial or distance"
FILTERS = list(_FILTERS)
WEIGHTS = list(_WEIGHTS)
_PROBLEMS: dict[str, Any] = {"two_sample": TwoSampleProblem, "independence": IndependenceProblem,
             "k_sample": KSampleProblem}


def statistics(kind: str) -> list[str]:
    """The registered statistics of a problem kind (``--statistic``)."""
    return list(statistic_names(kind))


def engines(kind: str, aliases: bool = True) -> list[str]:
    """The engines that run a problem kind, and the statistics named as engines."""
    scheme = _PROBLEMS[kind].engine_scheme
    return list(engine_names(scheme)) + (list(engine_aliases(kind)) if aliases else [])


def methods(kind: str) -> list[str]:
    """The null methods of a problem kind: those the problem lists, else every registered
    one whose draws keep its null (a method that does not apply to the statistic that
    runs says why)."""
    cls = _PROBLEMS[kind]
    if cls.null_methods is not None:
        return list(cls.null_methods)
    return sorted(n for n, m in METHODS.items() if m.draws in cls.draws_kept)


# -- types ---------------------------------------------------------------------------------
def _int(text: str, rule: str, ok: Callable[[int], bool]) -> int:
    try:
        value = int(text.strip(), 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {rule}; got {text!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"must be {rule}; got {text!r}")
    return value


def positive_int(text: str) -> int:
    return _int(text, "a positive integer", lambda v: v >= 1)


def seed(text: str) -> int:
    return _int(text, "a non-negative integer", lambda v: v >= 0)


def n_jobs(text: str) -> int:
    return _int(text, "-1 (all cores) or a positive integer", lambda v: v == -1 or v >= 1)


def _list(text: str, rule: str) -> list[str]:
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise argparse.ArgumentTypeError(f"must be {rule}; got {text!r}")
    return items


def names(text: str) -> list[str]:
    items = _list(text, "a comma-separated list of names")
    if len(set(items)) != len(items):
        raise argparse.ArgumentTypeError(f"must not repeat a name; got {text!r}")
    return items


def int_list(text: str) -> list[int]:
    rule = "a comma-separated list of positive integers"
    return [_int(t, rule, lambda v: v >= 1) for t in _list(text, rule)]


def _number(text: str, rule: str, whole: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {rule}; got {whole!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be {rule}; got {whole!r}")
    return v


def float_list(text: str) -> list[float]:
    rule = "a comma-separated list of finite numbers"
    return [_number(t, rule, text) for t in _list(text, rule)]


def probability(text: str) -> float:
    v = _number(text, "a number in (0, 1)", text)
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}")
    return v


def bandwidth(text: str) -> str | float:
    if text == "median":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be 'median' or a number; got {text!r}") from None


def lam(text: str) -> str | float | list[float]:
    """``auto``, a number, or comma-separated numbers (a grid, aggregated)."""
    if text.strip() == "auto":
        return "auto"
    rule = "'auto', a number or comma-separated numbers"
    values = [_number(t, rule, text) for t in _list(text, rule)]
    return values[0] if len(values) == 1 else values


def lams(text: str) -> str | list[float]:
    if text.strip() == "auto":
        return "auto"
    rule = "'auto' or comma-separated numbers"
    return [_number(t, rule, text) for t in _list(text, rule)]


def bandwidths(text: str) -> str | int | list[float]:
    """``auto``, a count (digits only), or bandwidths (other numbers, comma-separated)."""
    text = text.strip()
    if text == "auto":
        return "auto"
    if text.isdigit():
        return _int(text, "a positive count", lambda v: v >= 1)
    rule = "'auto', a count such as 5, or comma-separated bandwidths such as 0.5,1,2"
    return [_number(t, rule, text) for t in _list(text, rule)]


def weights(text: str) -> str | list[float]:
    if text.strip() in WEIGHTS:
        return text.strip()
    rule = f"one of {', '.join(WEIGHTS)} or comma-separated numbers"
    return [_number(t, rule, text) for t in _list(text, rule)]


def encoding(text: str) -> str:
    try:
        return codecs.lookup(text).name
    except LookupError:
        raise argparse.ArgumentTypeError(f"must be a text encoding such as utf-8 or latin-1; "
                                         f"got {text!r}") from None


def sep(text: str) -> str:
    text = {"\\t": "\t", "tab": "\t"}.get(text, text)
    if len(text) != 1 or text in "\"\r\n":
        raise argparse.ArgumentTypeError(f"must be one character such as ',' ';' or '\\t'; "
                                         f"got {text!r}")
    return text


# -- --test LABEL: key=value ... ----------------------------------------------------------
def parse_test_spec(text: str) -> tuple[str, dict[str, Any]]:
    """``"LABEL: key=value key=value"`` as ``(label, options)``; values are read as
    true/false, none, integers, numbers, comma-separated lists of those, or text."""
    label, colon, rest = text.partition(":")
    label = label.strip()
    if not colon or not label:
        raise argparse.ArgumentTypeError(f"must be 'LABEL: key=value ...' (e.g. 'SR-MMD: "
                                         f"statistic=regularized lam=0.001'); got {text!r}")
    options: dict[str, Any] = {}
    for item in rest.split():
        key, eq, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key or not value:
            raise argparse.ArgumentTypeError(f"must hold key=value pairs after '{label}:'; got "
                                             f"{item!r} in {text!r}")
        if key in options:
            raise argparse.ArgumentTypeError(f"must not repeat {key!r}; got {text!r}")
        items = [_value(v) for v in value.split(",")]
        options[key] = items[0] if len(items) == 1 else items
    return label, options


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


#: the help of --n-features (the same for every command with a low-rank engine)
_N_FEATURES = ("features of --engine nystrom or rff (default 200; nystrom then keeps the "
               "smallest rank holding 99.9%% of the landmarks' trace)")


# -- option groups -------------------------------------------------------------------------
def add_io(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true",
                   help="print the result as JSON (strict: non-finite fields are null)")
    p.add_argument("--sep", type=sep, default=",",
                   help="field separator of the CSV files (default ','; 'tab' for tabs)")
    p.add_argument("--encoding", type=encoding, default="utf-8",
                   help="text encoding of the CSV files (default utf-8)")


def add_resampling(p: argparse.ArgumentParser, default: int) -> None:
    add_conventions(p)
    p.add_argument("--n-resamples", type=positive_int, default=None,
                   help=f"random permutations (default {default})")
    p.add_argument("--seed", type=seed, default=None,
                   help="seed of the permutations (and of random features): a non-negative "
                   "integer; the same seed gives the same p-value")
    p.add_argument("--batch", type=positive_int, default=None,
                   help="permutations per step (memory; default: about 16 MB worth)")
    p.add_argument("--n-jobs", type=n_jobs, default=None,
                   help="threads: -1 (all cores) or a positive number")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar of the null distribution (needs tqdm), or never "
                   "(--no-progress); default: when it is expected to take more than a few "
                   "seconds")


def add_conventions(p: argparse.ArgumentParser) -> None:
    """``nan_policy`` and ``alternative`` (``axis`` has no option: a CSV file's columns are
    its variables, its rows the observations)."""
    p.add_argument("--nan-policy", default=None, choices=["raise", "omit"],
                   help="missing values (empty cells, NaN): raise (default) names the first "
                   "one; omit drops the rows that have one (a whole observation where "
                   "variables are paired)")
    p.add_argument("--alternative", default=None, metavar="{greater}",
                   help="the alternative: greater, the only one of a kernel test (its "
                   "statistic, a squared distance between kernel embeddings, grows with "
                   "the difference: two-sided and less have no meaning)")


def add_test(p: argparse.ArgumentParser, kind: str, *, power: bool = False) -> None:
    """Options of ``two_sample_test`` / ``independence_test`` (all of them for `power`)."""
    two = kind == "two_sample"
    if not power:
        p.add_argument("--estimator", default=None,
                       help="kernel mean estimator: kme (default), skmse, bkmse, fkmse, ...")
    learned = (["me", "scf"] if two else ["fsic"]) if not power else ["me", "scf", "fsic"]
    stats = (list(dict.fromkeys(statistics("two_sample") + statistics("independence")))
             if power else statistics(kind))
    p.add_argument("--statistic", default=None, choices=stats,
                   help="the statistic's form (default: the estimator's; 'regularized': the "
                   "spectral-regularised MMD/HSIC, see --filter, --lam"
                   + ("; block, linear: the linear-time statistics of --engine block, linear"
                      if two or power else "")
                   + f"; {', '.join(learned)}: the interpretable tests with test locations "
                   "learned on a training split, see --n-locations, --split-size)")
    p.add_argument("--method", default=None, choices=methods(kind),
                   help="null distribution: permutation (default), gamma (biased KME only)"
                   + (", swap (equal sizes: swaps within random pairs, exact), normal "
                      "(--engine block/linear)" if two else "")
                   + ", wild (the wild bootstrap of Chwialkowski et al.: approximate, KME"
                   + (")" if two else ", --statistic biased)")
                   + ("" if two else ", chi2 (weighted chi-square of HSIC_b)")
                   + ", asymptotic (the chi-square of the interpretable tests); a method "
                   "that does not apply to the statistic says why")
    p.add_argument("--tuning", default=None, choices=list(TUNINGS),
                   help="data-driven estimator parameters re-tuned on every permutation "
                   "(default) or tuned once on the pooled sample")
    p.add_argument("--filter", default=None, choices=FILTERS,
                   help="spectral filter of --statistic regularized (default tikhonov)")
    p.add_argument("--lam", type=lam, default=None,
                   help="its parameter: 'auto' (default: a grid, aggregated), a number, or "
                   "comma-separated numbers")
    p.add_argument("--engine", default=None, choices=engines("two_sample" if power else kind),
                   help="how the statistic is computed (default exact; block, linear: "
                   "linear-time two-sample tests with a normal null, no permutations; "
                   "nystrom, rff: low-rank approximations)")
    p.add_argument("--n-features", type=positive_int, default=None,
                   help=_N_FEATURES)
    p.add_argument("--n-locations", type=positive_int, default=None,
                   help="test locations of --statistic "
                   + ("me/scf/fsic" if power else "me/scf" if two else "fsic") + " (default 5)")
    if not two and not power:
        p.add_argument("--split-size", type=positive_int, default=None,
                       help="training pairs of --statistic fsic (default half)")
    if not power:
        agg = "MMDAggInc" if two else "HSICAggInc"
        p.add_argument("--diagonals", type=positive_int, default=None,
                       help=f"{agg} (--statistic {agg.lower()}): the superdiagonals R of its "
                       "design of pairs (default 200)")
        add_collection(p, agg, "10 from the pooled distances" if two else "--levels=-2,2")
    if two or power:
        suffix = " (two-sample scenarios)" if power else ""
        p.add_argument("--covariance", default=None, choices=["pooled", "split"],
                       help="covariance of --statistic regularized: of the pooled sample "
                       "(default) or of held-out points" + suffix)
        p.add_argument("--split-size", type=positive_int, default=None,
                       help="held-out pairs of --covariance split (default 20%% of the smaller "
                       "sample); training pairs of --statistic me/scf (default half)"
                       + suffix)
        p.add_argument("--block-size", type=positive_int, default=None,
                       help="block size of --engine block (default floor(sqrt(n)))" + suffix)


def blocks_arg(text: str) -> int | str:
    """--blocks: a block length (an integer of at least 1) or 'auto'."""
    if text.strip().lower() == "auto":
        return "auto"
    return positive_int(text)


def length_arg(text: str) -> float | str:
    """--length: a positive number or 'auto'."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive number or 'auto'; got {text!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number or 'auto'; got {text!r}")
    return v


#: the help of --strata and --blocks by problem (what is permuted)
_RESTRICTIONS = {
    "two_sample": ("permute only within strata: COLUMN labels each row's stratum (e.g. a pair "
                   "of a paired design), in each file; exact",
                   "the rows are in time order (two windows of one series): permute blocks "
                   "of SIZE consecutive rows (SIZE must divide both sample sizes)"),
    "independence": ("permute y against x only within the strata labelled by COLUMN "
                     "(independence within strata); exact",
                     "the rows are in time order: permute blocks of SIZE consecutive rows of "
                     "y against x")}


def add_dependence(p: argparse.ArgumentParser, kind: str, *, with_strata: bool = True) -> None:
    """--strata and --blocks: permutations restricted to strata or to blocks; --process
    and --length: the multipliers of --method wild (time series)."""
    strata, blocks = _RESTRICTIONS["two_sample" if kind == "two_sample" else "independence"]
    if with_strata:
        p.add_argument("--strata", default=None, metavar="COLUMN", help=strata)
    p.add_argument("--blocks", type=blocks_arg, default=None, metavar="SIZE|auto",
                   help=blocks + ", or 'auto' (a length from the data, the Politis-White "
                   "rule); with --method wild, AR(1) multipliers of that length; approximate")
    p.add_argument("--process", default=None, choices=["auto", "rademacher", "gaussian", "ar"],
                   help="multipliers of --method wild: auto (default: ar with --blocks, "
                   "else rademacher), rademacher, gaussian (i.i.d. data) or ar (an AR(1) "
                   "process: time series)")
    p.add_argument("--length", type=length_arg, default=None, metavar="L|auto",
                   help="memory of the AR(1) multipliers of --method wild --process ar: a "
                   "number, or 'auto' (default: the Politis-White rule on the data)")


def add_k_sample(p: argparse.ArgumentParser) -> None:
    """Options of ``k_sample_test``."""
    p.add_argument("--estimator", default=None,
                   help="kernel mean estimator: kme (default), skmse, bkmse, fkmse, ...")
    p.add_argument("--statistic", default=None, choices=statistics("k_sample"),
                   help="the pairwise MMD^2's form (default: the estimator's)")
    p.add_argument("--method", default=None, choices=methods("k_sample"),
                   help="null distribution: permutation (default) or gamma (biased KME "
                   "only); a method that does not apply says why")
    p.add_argument("--tuning", default=None, choices=list(TUNINGS),
                   help="data-driven estimator parameters re-tuned on every permutation "
                   "(default) or tuned once on the pooled sample")
    p.add_argument("--engine", default=None, choices=engines("k_sample"),
                   help="how the statistic is computed (default exact)")
    p.add_argument("--n-features", type=positive_int, default=None,
                   help=_N_FEATURES)
    p.add_argument("--pairwise", action="store_true",
                   help="also the post-hoc two-sample tests of every pair, with Holm-adjusted "
                   "p-values")


def add_kernels(p: argparse.ArgumentParser, kind: str, *, plural: bool = False) -> None:
    """--kernel/--bandwidth (two-sample) or their -x/-y forms (independence)."""
    btype: Callable[[str], Any]
    if plural:
        btype, bname, bhelp = bandwidths, "bandwidths", (
            "'auto' (default: 10 from the data), a count such as 5, or comma-separated "
            "bandwidths such as 0.5,1,2 (one bandwidth of 5: 5.0)")
    else:
        btype, bname, bhelp = bandwidth, "bandwidth", (
            "'median' (default: the median heuristic) or a number")
    for suffix, who in ([("", "")] if kind == "two_sample" else
                        [("-x", " of x"), ("-y", " of y")]):
        p.add_argument(f"--kernel{suffix}", default=None, help=f"kernel{who}: {KERNELS} "
                       "(default gaussian)")
        p.add_argument(f"--{bname}{suffix}", type=btype, default=None, help=f"{bname}{who}: "
                       + bhelp)


def add_aggregated(p: argparse.ArgumentParser, kind: str) -> None:
    """Options of ``aggregated_two_sample_test`` / ``aggregated_independence_test``."""
    p.add_argument("--estimators", type=names, default=None,
                   help="comma-separated kernel mean estimators (default kme)")
    p.add_argument("--statistics", type=names, default=None,
                   help="comma-separated statistic forms: unbiased (default), biased")
    p.add_argument("--filters", type=names, default=None,
                   help="comma-separated spectral filters of regularised members "
                   f"({', '.join(FILTERS)})")
    p.add_argument("--lams", type=lams, default=None,
                   help="their parameters: 'auto' (default) or comma-separated numbers")
    p.add_argument("--combination", default=None, choices=list(COMBINATIONS),
                   help="the combination: mmdagg (default; weighted minimum p-value) or fuse "
                   "(soft maximum of normalised statistics)")
    p.add_argument("--method", default=None, choices=list(COMBINATIONS), dest="combination",
                   help=argparse.SUPPRESS)  # 0.2's name of --combination
    p.add_argument("--swaps", action="store_const", const="swap", default=None,
                   dest="method", help="two samples of equal size: swaps within random pairs "
                   "instead of permutations (method='swap'; exact, faster with the KME)")
    p.add_argument("--weights", type=weights, default=None,
                   help=f"members' weights: {', '.join(WEIGHTS)} (default uniform) or "
                   "comma-separated numbers")
    p.add_argument("--alpha", type=probability, default=None,
                   help="level at which the report says which members reject (default 0.05)")
    p.add_argument("--tuning", default=None, choices=list(TUNINGS),
                   help="data-driven estimator parameters re-tuned on every permutation "
                   "(default) or tuned once on the pooled sample")
    p.add_argument("--engine", default=None, choices=engines(kind, aliases=False),
                   help="how every member's statistics are computed (default exact; "
                   "nystrom, rff: low-rank approximations; --combination fuse and regularised "
                   "members need exact)")
    p.add_argument("--n-features", type=positive_int, default=None,
                   help=_N_FEATURES)


def levels(text: str) -> tuple[int, int]:
    """``LMIN,LMAX``: two integers, LMIN <= LMAX (the exponents of an aggregated test's 2^l h)."""
    parts = text.split(",")
    try:
        lo, hi = (int(v) for v in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be two integers LMIN,LMAX; got {text!r}"
                                         ) from None
    if lo > hi:
        raise argparse.ArgumentTypeError(f"LMIN must not exceed LMAX; got {text!r}")
    return lo, hi


def add_collection(p: argparse.ArgumentParser, who: str, default: str) -> None:
    """--levels, --grid, --weights: the bandwidth collection of an aggregated statistic."""
    p.add_argument("--levels", type=levels, default=None, metavar="LMIN,LMAX",
                   help=f"{who}'s bandwidths 2^l h for l from LMIN to LMAX (default: "
                   f"{default}; write it with '=' when LMIN is negative)")
    p.add_argument("--grid", type=float_list, default=None, metavar="A,B,...",
                   help=f"{who}'s bandwidths themselves (instead of --levels)")
    p.add_argument("--weights", type=weights, default=None,
                   help=f"{who}'s weights of the members (default uniform)")


def given(args: argparse.Namespace, names: list[str]) -> dict[str, Any]:
    """The options among `names` that were given (not None), by their Python names."""
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
