"""The engines' output: statistics and the magnitude of their rounding."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Values"]


@dataclass(frozen=True)
class Values:
    """Statistics of a batch of arrangements and the magnitude of their rounding.

    ``scale[b]`` bounds the size of the terms statistic ``b`` was summed
    from; the statistic is accurate to a few ``eps * scale[b]``.
    """

    stat: np.ndarray
    scale: np.ndarray
