"""Statistics: which number a test computes, as objects, and the registry of their names.

* :class:`~kmtests.statistics.mmd.KernelMMD`, :class:`~kmtests.statistics.hsic.KernelHSIC`
  — MMD and HSIC (U/V forms) with a kernel mean estimator;
* :class:`~kmtests.statistics.spectral.SpectralMMD` — the spectral-regularised MMD;
* :class:`~kmtests.statistics.nocco.NOCCO` — the normalised cross-covariance;
* :class:`~kmtests.statistics.linear_time.LinearTimeMMD` — the block and linear
  statistics (their own normal null);
* :class:`~kmtests.statistics.aggregate.Aggregate` — members combined into one test;
* :class:`~kmtests.statistics.interpretable.MESCF`,
  :class:`~kmtests.statistics.interpretable.NFSIC` — the interpretable tests with
  features learned on a training split (their own chi-square null).

:func:`resolve_statistic` maps the tests' ``statistic=`` names (and the keywords
that configure one statistic: ``filter``, ``lam``, ``block_size``) to objects;
a keyword given to a statistic it does not configure is an error naming the
statistic it belongs to. The contract is in :mod:`kmtests.statistics._base`.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ..estimators import KernelMeanEstimator
from ..estimators._rules import Uniform
from ._base import FormInfo as FormInfo
from ._base import KernelForm as KernelForm
from ._base import Prepared as Prepared
from ._base import Statistic as Statistic
from .aggregate import Aggregate as Aggregate
from .dhsic import DHSIC as DHSIC
from .hsic import KernelHSIC as KernelHSIC
from .interpretable import MESCF as MESCF
from .interpretable import NFSIC as NFSIC
from .kci import KCI as KCI
from .ksample import KSampleMMD as KSampleMMD
from .linear_time import LinearTimeMMD as LinearTimeMMD
from .mmd import KernelMMD as KernelMMD
from .nocco import NOCCO as NOCCO
from .spectral import SpectralMMD as SpectralMMD

__all__ = ["Aggregate", "DHSIC", "FormInfo", "KCI", "KSampleMMD", "KernelForm", "KernelHSIC",
           "KernelMMD", "LinearTimeMMD", "MESCF", "NFSIC", "NOCCO", "Prepared", "STATISTICS", "SpectralMMD",
           "Statistic", "default_statistic", "resolve_statistic", "statistic_name"]

Builder = Callable[[Mapping[str, Any], KernelMeanEstimator, Mapping[str, Any]], Statistic]


def _check_kme(est: KernelMeanEstimator) -> None:
    if est.name != "kme":
        raise ValueError("statistic='regularized' regularises the covariance operator of the "
                         "empirical kernel mean; use estimator='kme' (the regularisation is "
                         f"the filter and lam), or another statistic with {est.name!r}.")


def _regularized(kernels: Mapping[str, Any], est: KernelMeanEstimator,
                 opts: Mapping[str, Any]) -> Statistic:
    _check_kme(est)
    lam = opts.get("lam", "auto")
    lam = "auto" if lam is None else lam
    filt = opts.get("filter") or "tikhonov"
    if "kernel" in kernels:
        stat: Statistic = SpectralMMD(kernels["kernel"], filt, lam, opts.get("held_out"))
    else:
        stat = NOCCO(kernels["x"], kernels["y"], filt, lam)
    grid = getattr(stat, "lams")
    if grid is not None and grid.size == 1:
        return stat
    # a grid: the adaptive test, its members combined (min-p with exact level) by the
    # combination the face gives (the null methods' side: kmtests.null.combine)
    return Aggregate([stat], opts["combination"])


def _block(kernels: Mapping[str, Any], est: KernelMeanEstimator,
           opts: Mapping[str, Any]) -> Statistic:
    return _linear_time("block", kernels, est, opts)


def _linear(kernels: Mapping[str, Any], est: KernelMeanEstimator,
            opts: Mapping[str, Any]) -> Statistic:
    return _linear_time("linear", kernels, est, opts)


def _linear_time(kind: str, kernels: Mapping[str, Any], est: KernelMeanEstimator,
                 opts: Mapping[str, Any]) -> Statistic:
    if est.name != "kme":
        raise ValueError(f"engine={kind!r} runs the KME statistic only (estimator='kme'); for "
                         f"estimator {est.name!r} use engine='exact' or 'streamed'.")
    return LinearTimeMMD(kernels["kernel"], kind, opts.get("block_size"))


def _learned(kind: str) -> Builder:
    def build(kernels: Mapping[str, Any], est: KernelMeanEstimator,
              opts: Mapping[str, Any]) -> Statistic:
        if est.name != "kme":
            raise ValueError(f"statistic={kind!r} learns its features on a training split "
                             "and compares plain means of them; estimator="
                             f"{est.name!r} does not apply (use estimator='kme').")
        if kind == "fsic":
            return NFSIC(kernels["x"], kernels["y"], opts.get("n_locations"),
                         opts.get("split_size"))
        return MESCF(kernels["kernel"], kind, opts.get("n_locations"), opts.get("split_size"))

    return build


def _mmd(unbiased: bool) -> Builder:
    def build(kernels: Mapping[str, Any], est: KernelMeanEstimator,
              opts: Mapping[str, Any]) -> Statistic:
        return KernelMMD(kernels["kernel"], est, unbiased)

    return build


def _hsic(unbiased: bool) -> Builder:
    def build(kernels: Mapping[str, Any], est: KernelMeanEstimator,
              opts: Mapping[str, Any]) -> Statistic:
        return KernelHSIC(kernels["x"], kernels["y"], est, unbiased)

    return build


def _kmmd(unbiased: bool) -> Builder:
    def build(kernels: Mapping[str, Any], est: KernelMeanEstimator,
              opts: Mapping[str, Any]) -> Statistic:
        return KSampleMMD(kernels["kernel"], est, unbiased)

    return build


def _kci(split: bool) -> Builder:
    def build(kernels: Mapping[str, Any], est: KernelMeanEstimator,
              opts: Mapping[str, Any]) -> Statistic:
        from ..estimators.conditional import ConditionalMeanEmbedding

        if est.name != "kme":
            raise ValueError("the conditional test regresses the kernel features on z (the "
                             "regression is its estimator: `filter`, `lam`, `criterion`); "
                             f"estimator={est.name!r} does not apply.")
        reg = ConditionalMeanEmbedding(
            filter=opts.get("filter") or "tikhonov",
            lam="auto" if opts.get("lam") is None else opts["lam"],
            criterion=opts.get("criterion") or "gcv")
        fraction = opts.get("split_size")
        if split and fraction is None:
            fraction = 0.5
        return KCI(kernels["x"], kernels["y"], kernels["z"],
                   bandwidth_z=("auto" if opts.get("bandwidth_z") is None
                                else opts["bandwidth_z"]), regression=reg,
                   augment=True if opts.get("augment") is None else opts["augment"],
                   split=fraction if split else None,
                   cache=True if opts.get("cache") is None else opts["cache"])

    return build


#: the statistics by problem and name, with the face keywords that configure each
STATISTICS: dict[str, dict[str, tuple[Builder, tuple[str, ...]]]] = {
    "two_sample": {
        "unbiased": (_mmd(True), ()),
        "biased": (_mmd(False), ()),
        "regularized": (_regularized, ("filter", "lam", "covariance", "split_size")),
        "block": (_block, ("block_size",)),
        "linear": (_linear, ()),
        "me": (_learned("me"), ("n_locations", "split_size")),
        "scf": (_learned("scf"), ("n_locations", "split_size")),
    },
    "independence": {
        "biased": (_hsic(False), ()),
        "unbiased": (_hsic(True), ()),
        "regularized": (_regularized, ("filter", "lam")),
        "fsic": (_learned("fsic"), ("n_locations", "split_size")),
    },
    "k_sample": {
        "unbiased": (_kmmd(True), ()),
        "biased": (_kmmd(False), ()),
    },
    "conditional": {
        "kci": (_kci(False), ("filter", "lam", "criterion", "bandwidth_z", "augment",
                              "cache")),
        "split": (_kci(True), ("filter", "lam", "criterion", "bandwidth_z", "augment",
                               "cache", "split_size")),
    },
    "joint": {"dhsic": (lambda kernels, est, opts: DHSIC(tuple(kernels.values())), ())},
}


#: the options the face decides (not user keywords)
_DECIDED = ("held_out", "combination")


def default_statistic(kind: str, est: KernelMeanEstimator) -> str:
    """The statistic a test computes when none is named: the U-form for uniform weights
    (two-sample), the V-form otherwise; HSIC_b for independence."""
    if kind in ("two_sample", "k_sample"):
        return "unbiased" if isinstance(est.rule(), Uniform) else "biased"
    if kind == "conditional":
        return "kci"
    return "biased"


def statistic_name(statistic: Any, kind: str, estimator: KernelMeanEstimator,
                   options: Mapping[str, Any], names: tuple[str, ...] | None = None) -> str:
    """The registry name `statistic` stands for, with the keywords checked: one given (not
    None) to a statistic that it does not configure is an error naming the statistic it
    belongs to. `names` restricts the names accepted (default: all of the problem's)."""
    from .._validation import check_choice

    table = STATISTICS[kind]
    name = statistic if statistic is not None else default_statistic(kind, estimator)
    name = check_choice(name, "statistic", names or tuple(table))
    configures = table[name][1]
    for key, value in options.items():
        if value is None or key in configures:
            continue
        owners = [repr(n) for n, (_, keys) in table.items() if key in keys]
        where = f"statistic={' or '.join(owners)}" if owners else "no statistic here"
        raise ValueError(f"`{key}` configures {where}; with statistic={name!r} it would be "
                         "ignored.")
    return name


def resolve_statistic(statistic: Any, kind: str, *, kernels: Mapping[str, Any],
                      estimator: KernelMeanEstimator, options: Mapping[str, Any],
                      names: tuple[str, ...] | None = None) -> Statistic:
    """A statistic name or object plus the keywords that configure one -> a statistic.

    `options` maps the face keywords (``filter``, ``lam``, ``covariance``,
    ``split_size``, ``block_size``) to their values, None meaning not given
    (:func:`statistic_name`); and what the face decided for them: ``held_out``, the
    points of a held-out operator, and ``combination``, how a lambda grid's members
    are combined. With a statistic object, a keyword given as well is an error
    (configure the object).
    """
    if isinstance(statistic, Statistic):
        given = [k for k, v in options.items() if v is not None and k not in _DECIDED]
        if given:
            raise ValueError(f"give {', '.join(f'`{k}`' for k in given)} to the statistic "
                             f"object, not to the test (statistic={type(statistic).__name__}).")
        return statistic
    name = statistic_name(statistic, kind, estimator,
                          {k: v for k, v in options.items() if k not in _DECIDED}, names)
    return STATISTICS[kind][name][0](kernels, estimator, options)
