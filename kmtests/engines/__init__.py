"""Permutation engines: how the statistics of many arrangements are computed.

* :mod:`~kmtests.engines.mmd` — MMD statistics as block sums of the pooled,
  centred Gram matrix (one BLAS product for many splits), or split by split
  for estimators with per-sample weights;
* :mod:`~kmtests.engines.hsic` — HSIC statistics from two sums per
  permutation of the pairing (a parallel numba loop), or permutation by
  permutation;
* :mod:`~kmtests.engines._loop` — the one per-permutation loop (a thread pool,
  one BLAS thread per worker);
* :mod:`~kmtests.engines._threads` — thread counts (`n_jobs`).

Every engine returns :class:`Values`: the statistics and their rounding
scales, from which the p-value's tie tolerance is set.
"""

from __future__ import annotations

from ._values import Values as Values

__all__ = ["Values"]
