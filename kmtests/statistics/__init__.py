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

from typing import Any, Mapping

from ..estimators import KernelMeanEstimator
from .forms import FormInfo as FormInfo
from .forms import KernelForm as KernelForm
from ._base import STATISTICS as STATISTICS
from ._base import Prepared as Prepared
from ._base import Statistic as Statistic
from .aggregate import Aggregate as Aggregate
from .agginc import HSICAggInc as HSICAggInc
from .agginc import MMDAggInc as MMDAggInc
from .dhsic import DHSIC as DHSIC
from .fssd import FSSD as FSSD
from .hsic import KernelHSIC as KernelHSIC
from .interpretable import MESCF as MESCF
from .interpretable import NFSIC as NFSIC
from .kci import KCI as KCI
from .ksample import KSampleMMD as KSampleMMD
from .ksd import KSD as KSD
from .ksdagg import KSDAgg as KSDAgg
from .cmmd import ConditionalMMD as ConditionalMMD
from .lagged import LaggedHSIC as LaggedHSIC
from .linear_time import LinearTimeMMD as LinearTimeMMD
from .mmd import KernelMMD as KernelMMD
from .nocco import NOCCO as NOCCO
from .selfnormalized import SelfNormalizedMMD as SelfNormalizedMMD
from .spectral import SpectralMMD as SpectralMMD

__all__ = ["Aggregate", "ConditionalMMD", "DHSIC", "FSSD", "FormInfo", "HSICAggInc", "KCI", "KSD",
           "KSDAgg", "KSampleMMD", "KernelForm", "KernelHSIC", "LaggedHSIC",
           "KernelMMD", "LinearTimeMMD", "MMDAggInc", "MESCF", "NFSIC", "NOCCO", "Prepared",
           "STATISTICS", "SelfNormalizedMMD", "SpectralMMD",
           "Statistic", "resolve_statistic", "statistic_class",
           "statistic_name", "statistic_names"]

#: the options the plan decides (not user keywords)
_DECIDED = ("held_out", "combination")


#: statistic_names by problem kind, with the registry's size they were read at
_NAMES: dict[str, tuple[int, tuple[str, ...]]] = {}


def statistic_names(kind: str) -> tuple[str, ...]:
    """The registered names of the statistics that serve the problem `kind` (read once per
    state of the registry: a statistic defined later is seen)."""
    size = sum(map(len, STATISTICS.values()))
    held = _NAMES.get(kind)
    if held is None or held[0] != size:
        held = _NAMES[kind] = (size, tuple(n for n, classes in STATISTICS.items()
                                           if any(kind in c.serves() for c in classes)))
    return held[1]


def statistic_class(name: str, kind: str) -> type[Statistic]:
    """The class registered as `name` for the problem `kind` (KeyError if none)."""
    for cls in STATISTICS[name]:
        if kind in cls.serves():
            return cls
    raise KeyError((name, kind))


def statistic_name(statistic: Any, kind: str, estimator: KernelMeanEstimator,
                   options: Mapping[str, Any], names: tuple[str, ...] | None = None,
                   default: str | None = None) -> str:
    """The registry name `statistic` stands for (None: `default`, else the problem's
    default), with the keywords checked: one given (not None) to a statistic that it
    does not configure is an error naming the statistic it belongs to, and so is an
    estimator other than the KME for a statistic without an estimator. `names` restricts
    the names accepted (default: all of the problem's)."""
    from .._validation import check_choice

    if statistic is None:
        if default is None:
            raise ValueError("no statistic named and no default given (the problem's "
                             "default_statistic)")
        statistic = default
    name = check_choice(statistic, "statistic", names or statistic_names(kind))
    cls = statistic_class(name, kind)
    configures = cls.keywords(name)
    for key, value in options.items():
        if value is None or key in configures:
            continue
        owners = [repr(n) for n in statistic_names(kind)
                  if key in statistic_class(n, kind).keywords(n)]
        where = f"statistic={' or '.join(owners)}" if owners else "no statistic here"
        raise ValueError(f"`{key}` configures {where}; with statistic={name!r} it would be "
                         "ignored.")
    if not cls.uses_estimator and estimator.name != "kme":
        raise ValueError(cls.estimator_refusal.format(name=name, est=estimator.name))
    return name


def resolve_statistic(statistic: Any, kind: str, *, kernels: Mapping[str, Any],
                      estimator: KernelMeanEstimator, options: Mapping[str, Any],
                      names: tuple[str, ...] | None = None, default: str | None = None
                      ) -> Statistic:
    """A statistic name or object plus the keywords that configure one -> a statistic.

    `options` maps the face keywords (``filter``, ``lam``, ``covariance``,
    ``split_size``, ``block_size``, ...) to their values, None meaning not given
    (:func:`statistic_name`); and what the plan decided for them: ``held_out``, the
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
                          {k: v for k, v in options.items() if k not in _DECIDED}, names,
                          default)
    return statistic_class(name, kind).build(name, kernels, estimator, options)
