"""Kernel mean estimators: the empirical mean and its improvements.

Every estimator is a frozen configuration object registered by an
unambiguous name in :data:`ESTIMATORS`; build one with :func:`make` or from
the class. ``est.fit(x, kernel=..., bandwidth=...)`` returns an
:class:`Embedding`; the tests use ``est.weights(K)`` (see
:class:`KernelMeanEstimator` for the contract).
"""

from __future__ import annotations

from typing import Any

from .._validation import shown
from ._base import Embedding as Embedding
from ._base import KernelMeanEstimator as KernelMeanEstimator
from .empirical import KME as KME
from .shrinkage import BKMSE as BKMSE
from .shrinkage import SKMSE as SKMSE
from .spectral import FKMSE as FKMSE
from .spectral import TSVD as TSVD
from .spectral import IteratedTikhonov as IteratedTikhonov
from .spectral import Landweber as Landweber
from .spectral import NuMethod as NuMethod
from .marginalized import MKME as MKME
from .marginalized import MMKME as MMKME
from .conditional import ConditionalMeanEmbedding as ConditionalMeanEmbedding

ESTIMATORS: dict[str, type[KernelMeanEstimator]] = {
    "kme": KME,
    "skmse": SKMSE,
    "bkmse": BKMSE,
    "fkmse": FKMSE,
    "iterated_tikhonov": IteratedTikhonov,
    "landweber": Landweber,
    "nu_method": NuMethod,
    "tsvd": TSVD,
    "mkme": MKME,
    "mmkme": MMKME,
}


def make(name: str, **params: Any) -> KernelMeanEstimator:
    """Build the estimator registered as `name` with the given parameters.

    Examples
    --------
    >>> from kmtests.estimators import make
    >>> make("kme")
    KME()
    """
    if not isinstance(name, str) or name.lower() not in ESTIMATORS:
        valid = ", ".join(repr(k) for k in sorted(ESTIMATORS))
        raise ValueError(f"`estimator` must be one of {valid} or an estimator object; "
                         f"got {shown(name)}.")
    return ESTIMATORS[name.lower()](**params)


def resolve_estimator(estimator: Any) -> KernelMeanEstimator:
    """Name or object -> estimator object (used by the tests)."""
    if isinstance(estimator, KernelMeanEstimator):
        return estimator
    if isinstance(estimator, str):
        return make(estimator)
    raise TypeError("`estimator` must be an estimator name or a KernelMeanEstimator object; "
                    f"got {type(estimator).__name__}.")


__all__ = [
    "BKMSE", "ESTIMATORS", "FKMSE", "KME", "MKME", "MMKME", "SKMSE", "TSVD", "Embedding",
    "IteratedTikhonov", "KernelMeanEstimator", "Landweber", "NuMethod", "make",
    "resolve_estimator",
]
