"""``engine="exact"``: the Gram matrices in memory, in centred form.

The pooled Gram matrix (two-sample) or the two variables' Gram matrices
(independence) are built once, centred (:mod:`kmtests._gram`), and every
statistic and estimator runs on them: block sums of many splits per BLAS call
(:mod:`kmtests.engines.mmd`), the parallel numba pair sums
(:mod:`kmtests.engines.hsic`), per-point weights, spectral decompositions and
the moments of the gamma approximation.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar, Mapping

import numpy as np

from .._guards import format_bytes
from ._base import Engine, Requirements
from .hsic import PairedGrams
from .mmd import PooledGram

__all__ = ["Exact"]


class Exact(Engine):
    """The in-memory engine (default): every statistic, estimator and null method."""

    name: ClassVar[str] = "exact"
    holds_gram: ClassVar[bool] = True

    def pooled(self, kernel: Any, z: np.ndarray, *, rng: Any = None,
               scale: float = 1.0) -> PooledGram:
        cg = kernel.centred_gram(z, name="x" if kernel.name == "precomputed"
                                 else "the pooled sample")
        return PooledGram.of(cg.scaled(scale) if scale != 1.0 else cg)

    def paired(self, kx: Any, x: np.ndarray, ky: Any, y: np.ndarray, *, rng: Any = None,
               scales: tuple[float, float] = (1.0, 1.0), orientation: bool | None = None
               ) -> PairedGrams:
        cgx, cgy = kx.centred_gram(x, name="x"), ky.centred_gram(y, name="y")
        if scales[0] != 1.0:
            cgx = cgx.scaled(scales[0])
        if scales[1] != 1.0:
            cgy = cgy.scaled(scales[1])
        if orientation is None:
            return PairedGrams.oriented(cgx.Kc, cgy.Kc)
        return PairedGrams(cgy.Kc, cgx.Kc, True) if orientation else PairedGrams(cgx.Kc, cgy.Kc)

    def memory(self, req: Requirements, n: int, dims: Mapping[str, int],
               batch: int) -> tuple[float, str, str]:
        if req.scheme == "split":
            need = 8.0 * n * n + 8.0 * n * (2 * 256 + 2 * 128)
            return (need, f"the {n} x {n} pooled Gram matrix takes "
                          f"{format_bytes(8.0 * n * n)}",
                    "Test a random subsample of each sample, or use a machine with more "
                    "memory.")
        need = 2 * 8.0 * n * n + 8.0 * n * 2 * 256
        return (need, f"two {n} x {n} Gram matrices take {format_bytes(16.0 * n * n)}",
                "Test a random subsample of the pairs, or use a machine with more memory.")

    @staticmethod
    def per_thread_bytes(n: int) -> float:
        """Work arrays of one worker of the per-permutation loop (cross Gram, weights)."""
        return 2 * 8.0 * n * n * (os.cpu_count() or 1)
