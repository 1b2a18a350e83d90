"""The engines of the tests and ``engine="auto"``.

``engine=`` chooses how the statistics are computed:

``"exact"`` (default)
    The pooled (or each variable's) Gram matrix in memory: every statistic and
    estimator, permutation or gamma null.
``"streamed"`` (two-sample)
    The same exact statistics and p-values for the uniform-weight estimators,
    with the Gram matrix generated tile by tile (:mod:`kmtests.engines.streamed`):
    memory ``O(N (d + chunk))`` instead of ``O(N^2)``.
``"block"``, ``"linear"`` (two-sample)
    Linear-time statistics with an asymptotic normal null
    (:mod:`kmtests.engines.linear_time`): the B-test's block statistic and
    the linear statistic ``MMD^2_l``; memory ``O(N d + b^2)``, time
    ``O(N b d)``; a different statistic with lower power. Never chosen by
    ``"auto"``.
``"nystrom"``, ``"rff"`` (both tests)
    Low-rank approximate statistics (:mod:`kmtests.engines.lowrank`): the MMD
    or HSIC of the kernel ``Phi Phi'`` of ``n_features`` Nyström or random
    Fourier features, drawn once on the pooled sample (or each variable), so
    the permutation p-value is exact for the approximate statistic; memory
    ``O(N (d + r))``, time ``2 B N r`` (MMD) or ``2 B n r^2`` (HSIC) flops for
    ``B`` permutations. Never chosen by ``"auto"``.
``"auto"``
    ``"exact"`` when the Gram matrix fits in a quarter of the available memory,
    otherwise ``"streamed"`` for a two-sample test with a uniform-weight
    estimator; otherwise an error that names the approximate engines. The
    report says which engine ran and why; an approximate engine is never chosen
    silently.
"""

from __future__ import annotations

from typing import Any

from ._guards import available_memory, format_bytes
from ._validation import check_choice

__all__ = ["ENGINES_INDEPENDENCE", "ENGINES_TWO_SAMPLE", "LINEAR_TIME", "LOW_RANK",
           "check_n_features", "choose_engine"]

ENGINES_TWO_SAMPLE: tuple[str, ...] = ("exact", "streamed", "auto", "block", "linear",
                                       "nystrom", "rff")
ENGINES_INDEPENDENCE: tuple[str, ...] = ("exact", "auto", "nystrom", "rff")

#: the linear-time engines (their own statistics, asymptotic normal null)
LINEAR_TIME: tuple[str, ...] = ("block", "linear")

#: the engines with a number of features
LOW_RANK: tuple[str, ...] = ("nystrom", "rff")

#: "auto" keeps the in-memory engine while its Gram matrix takes at most this share of
#: the available memory
_AUTO_SHARE = 0.25


def choose_engine(engine: Any, kind: str, n: int, uniform: bool) -> tuple[str, str]:
    """The engine to run and, for ``"auto"``, why (empty otherwise).

    `n` is the number of points of the largest Gram matrix (the pooled sample,
    or the pairs), `uniform` whether the estimator has uniform weights.
    """
    names = ENGINES_TWO_SAMPLE if kind == "two_sample" else ENGINES_INDEPENDENCE
    engine = check_choice(engine, "engine", names)
    if engine != "auto":
        return engine, ""
    need = 8.0 * n * n * (1 if kind == "two_sample" else 2)
    free = available_memory()
    if free is None or need <= _AUTO_SHARE * free:
        return "exact", ""
    why = (f"engine='auto' chose 'streamed': the {n} x {n} Gram matrix ({format_bytes(need)}) "
           f"would take more than a quarter of the available memory ({format_bytes(free)})")
    if kind == "two_sample" and uniform:
        return "streamed", why
    raise MemoryError(
        f"engine='auto': the {n} x {n} Gram matrix ({format_bytes(need)}) does not fit in a "
        f"quarter of the available memory ({format_bytes(free)}), and no exact engine "
        "without it applies here. Test a random subsample, or use an approximate engine: "
        + ("engine='nystrom' or 'rff' (n_features=...), or the linear-time "
           "engine='block' or 'linear' (KME only)" if kind == "two_sample" else
           "engine='nystrom' or 'rff' (n_features=...)") + ".")


def check_n_features(engine: str, n_features: Any) -> int | None:
    """`n_features` validated: a positive int for a low-rank engine, None otherwise.

    Examples
    --------
    >>> check_n_features("rff", 100)
    100
    >>> print(check_n_features("nystrom", None))
    None
    """
    from ._validation import check_positive_int

    if engine in LOW_RANK:
        return None if n_features is None else check_positive_int(n_features, "n_features")
    if n_features is not None:
        raise ValueError(f"`n_features` applies to the low-rank engines "
                         f"({', '.join(repr(e) for e in LOW_RANK) or 'none here'}); "
                         f"engine={engine!r} computes the full kernel.")
    return None
