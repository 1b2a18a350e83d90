"""Type aliases shared across kmtests."""

from __future__ import annotations

from typing import Union

import numpy as np
import numpy.typing as npt

ArrayLike = npt.ArrayLike
SeedLike = Union[None, int, np.random.SeedSequence, np.random.Generator]

__all__ = ["ArrayLike", "SeedLike"]
