r"""Spectral filters ``g_lambda``: regularised inverses of a covariance operator.

A filter maps an eigenvalue ``x >= 0`` of a covariance operator to
``g_lambda(x)``, an approximation of ``1/x`` that stays bounded near 0; its
*shrink factor* ``h(x) = x g_lambda(x)`` is in ``[0, 1]``. They regularise the
spectral-regularised MMD and NOCCO (:mod:`kmtests.statistics`) and the
conditional mean embeddings (:mod:`kmtests.estimators.conditional`), where the
regression of features on ``z`` keeps the fraction ``h`` of each eigendirection.

==========================  ==============================  ==========================
name                        ``g_lambda(x)``                 ``h(x) = x g_lambda(x)``
==========================  ==============================  ==========================
``"tikhonov"``              ``1 / (x + lam)``               ``x / (x + lam)`` (ridge)
``"showalter"``             ``(1 - exp(-x / lam)) / x``     ``1 - exp(-x / lam)``
``"iterated_tikhonov"``     ``(x + 2 lam) / (x + lam)^2``   ``1 - (lam / (x + lam))^2``
``"cutoff"``                ``1 / x`` for ``x >= lam``      ``1[x >= lam]`` (PCA)
==========================  ==============================  ==========================
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .._validation import check_choice

__all__ = ["FILTERS", "filter_function", "shrink_factor"]


def _tikhonov(x: np.ndarray, lam: float) -> np.ndarray:
    return 1.0 / (x + lam)


def _showalter(x: np.ndarray, lam: float) -> np.ndarray:
    out = np.full(np.shape(x), 1.0 / lam)
    pos = x > 0
    out[pos] = -np.expm1(-x[pos] / lam) / x[pos]
    return out


def _cutoff(x: np.ndarray, lam: float) -> np.ndarray:
    out = np.zeros(np.shape(x))
    keep = x >= lam
    out[keep] = 1.0 / x[keep]
    return out


def _iterated_tikhonov(x: np.ndarray, lam: float) -> np.ndarray:  # order 2
    return (x + 2.0 * lam) / (x + lam) ** 2


#: spectral filters g_lambda(x) (x >= 0 an eigenvalue of the covariance operator)
FILTERS: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {
    "tikhonov": _tikhonov,                    # 1/(x + lam)
    "showalter": _showalter,                  # (1 - exp(-x/lam))/x, 1/lam at 0
    "iterated_tikhonov": _iterated_tikhonov,  # (1 - (lam/(x + lam))^2)/x
    "cutoff": _cutoff,                        # 1/x for x >= lam, else 0 (spectral cut-off)
}


def filter_function(name: str) -> Callable[[np.ndarray, float], np.ndarray]:
    """The filter ``g_lambda`` called `name` (an error names the choices)."""
    return FILTERS[check_choice(name, "filter", tuple(FILTERS))]


def shrink_factor(name: str, x: np.ndarray, lam: float) -> np.ndarray:
    """``h(x) = x g_lambda(x)`` in ``[0, 1]`` (exactly 0 at ``x = 0``).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.estimators.filters import shrink_factor
    >>> print(shrink_factor("tikhonov", np.array([0.0, 1.0, 3.0]), 1.0))
    [0.   0.5  0.75]
    """
    x = np.asarray(x, dtype=np.float64)
    return np.clip(x * filter_function(name)(x, float(lam)), 0.0, 1.0)
