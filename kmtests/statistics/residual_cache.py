r"""Work shared by the conditional tests of one data set: the regressions of each target.

Causal discovery (the PC algorithm) asks many questions "``x`` independent of ``y``
given ``S``?" of one data set, and most of a KCI test's work depends on one side of the
question only: the regression of a target (``x`` augmented by ``z / 2``, or ``y``) on
the conditioning columns ``z`` -- its kernel's median heuristic, its centred Gram matrix
``K``, the products ``K U`` with the eigenvectors of the candidate kernels on ``z`` that
the tuning criterion reads, the chosen regression and the residual Gram matrix
``R K R``. On the 9-variable model of ``benchmarks/pc_discovery.py`` at ``n = 500``
the 327 conditional tests of a PC run regress 136 distinct x-targets and 125 distinct
y-targets instead of 654 (on 37 conditioning sets, whose eigendecompositions
:func:`kmtests.estimators.conditional.z_spectrum` already shared).

Three things are kept, keyed by content -- the bytes of the standardised target and of
``z``, the representations of the fitted kernels, of the candidate kernels on ``z`` and
of the regression -- so that a cached result is the one the computation would give
again (the p-values are bit-identical with and without the caches):

* the fitted kernels (the median heuristic of a target or of ``z``: a partial sort of the
  ``n (n - 1) / 2`` squared distances);
* the *choice* of each target's regression (the kernel on ``z``, ``lam``, the criterion on
  the grid: kilobytes): a target met again needs no tuning, only the decomposition of
  its chosen kernel (usually still cached) and its residuals;
* the residual Gram matrices ``R K R`` (``8 n^2`` bytes each).

The first two share a cache of :data:`SMALL_BYTES`, the residual Gram matrices have one
of :data:`RESIDUAL_BYTES`: apart from the eigendecompositions of
:mod:`kmtests.estimators.conditional` (256 MiB), which cost more to redo and which they
never evict. The choices and the residuals are keyed also by the number of BLAS threads
in effect (:func:`kmtests.engines._loop.blas_thread_counts`: the bits of the products
depend on it).

All are least recently used first out, read-only, and emptied by
:func:`kmtests.estimators.conditional.clear_cache`. Only the kernels of
:mod:`kmtests.kernels` are cached (not a user's callable or a precomputed Gram matrix,
whose checks warn), and only when the statistic's ``cache`` is on (its caller decides).
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..engines._loop import blas_thread_counts
from ..estimators.conditional import (
    COMPANION_CACHES,
    FittedRegression,
    RidgeResidual,
    ZSpectrum,
    _digest,
)
from ..kernels import CallableKernel, Kernel, Precomputed

__all__ = ["RESIDUAL_BYTES", "TargetResiduals", "cacheable", "fitted_kernel",
           "target_residuals"]

#: bytes of residual Gram matrices kept (64 at n = 500, 16 at n = 1000)
RESIDUAL_BYTES = 128 * 2**20
#: bytes of fitted kernels (counted 1 KiB each) and regressions' choices kept
SMALL_BYTES = 16 * 2**20

Fit = FittedRegression | RidgeResidual


@dataclass(frozen=True, eq=False)
class _Small:
    """A cached value that holds no large array (a fitted kernel, a regression's choice)."""

    value: Any
    nbytes: int = 1024


@dataclass(frozen=True, eq=False)
class TargetResiduals:
    """The regression of one target on ``z`` and what the statistic reads of it.

    Attributes
    ----------
    fit : FittedRegression or RidgeResidual
        The regression (its kernel on ``z``, ``lam``, degrees of freedom).
    gram : ndarray, shape (n, n)
        The residual Gram matrix ``R K R`` (read-only).
    unexplained : float
        ``tr(R K R) / tr(K)``: the share of the target's kernel features the regression
        leaves.
    nbytes : int
        The bytes of `gram` (the regression's arrays belong to the cache of
        eigendecompositions).
    """

    fit: Fit
    gram: np.ndarray
    unexplained: float
    nbytes: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "nbytes", int(self.gram.nbytes))


class _Store:
    """A least-recently-used cache of values with an ``nbytes``, at most the module's
    :data:`RESIDUAL_BYTES` or :data:`SMALL_BYTES` (`budget`: the name; read at every
    insertion)."""

    def __init__(self, budget: str) -> None:
        self._items: OrderedDict[tuple[str, ...], Any] = OrderedDict()
        self._bytes = 0
        self._budget = budget
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> Any:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def put(self, key: tuple[str, ...], value: Any) -> None:
        budget = int(globals()[self._budget])
        if value.nbytes > budget:
            return
        with self._lock:
            old = self._items.pop(key, None)
            self._bytes += value.nbytes - (old.nbytes if old is not None else 0)
            self._items[key] = value
            while self._bytes > budget:
                self._bytes -= self._items.popitem(last=False)[1].nbytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


_RESIDUALS = _Store("RESIDUAL_BYTES")
_SMALL = _Store("SMALL_BYTES")
COMPANION_CACHES.extend([_RESIDUALS.clear, _SMALL.clear])


def cacheable(*kernels: Any) -> bool:
    """Whether results computed with `kernels` may be cached: kernels of
    :mod:`kmtests.kernels` whose representation names every parameter, not a user's
    callable or a precomputed Gram matrix.

    Examples
    --------
    >>> from kmtests.kernels import Gaussian
    >>> from kmtests.statistics.residual_cache import cacheable
    >>> cacheable(Gaussian(1.0)), cacheable(lambda a, b: a @ b.T)
    (True, False)
    """
    return all(isinstance(k, Kernel) and type(k).__module__ == Kernel.__module__
               and not isinstance(k, (CallableKernel, Precomputed)) for k in kernels)


def fitted_kernel(kernel: Kernel, data: np.ndarray, name: str, *, cache: bool) -> Kernel:
    """``kernel.fitted_to(data, name=name)``, cached by the bytes of `data` when `cache`.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.kernels import Gaussian
    >>> from kmtests.statistics.residual_cache import fitted_kernel
    >>> z = np.arange(5.0)[:, None]
    >>> k = fitted_kernel(Gaussian(), z, "z", cache=True)
    >>> print(k, fitted_kernel(Gaussian(), z, "z", cache=True) is k)
    Gaussian(bandwidth=2.0) True
    """
    if not (cache and cacheable(kernel)):
        return kernel.fitted_to(data, name=name)
    key = ("kernel", _digest(data), repr(kernel))
    hit = _SMALL.get(key)
    if hit is None:
        hit = _Small(kernel.fitted_to(data, name=name))
        _SMALL.put(key, hit)
    out: Kernel = hit.value
    return out


def _light(fit: FittedRegression) -> _Small:
    """The regression's choice without its eigenvectors (which the cache of
    eigendecompositions holds, or gives again bit for bit)."""
    spec = fit.spectrum
    bare = ZSpectrum(spec.kappa, np.empty((spec.n, 0)), spec.trace, spec.kernel)
    light = dataclasses.replace(fit, spectrum=bare)
    return _Small(light, 1024 + int(spec.kappa.nbytes + fit.h.nbytes + fit.scores.nbytes
                                    + fit.lams.nbytes))


def target_residuals(kernel: Kernel, data: np.ndarray, gram: Callable[[], np.ndarray],
                     z: np.ndarray, settings: Sequence[Any],
                     fit: Callable[[np.ndarray], Fit],
                     spectrum: Callable[[Any], ZSpectrum],
                     share: Callable[[np.ndarray, np.ndarray], float]) -> TargetResiduals:
    """The regression of a target on `z` and its residual Gram matrix, cached.

    Parameters
    ----------
    kernel : Kernel
        The target's fitted kernel.
    data : ndarray
        The target's (standardised) data.
    gram : callable
        ``gram()``: the target's centred Gram matrix ``K`` (called only when its residual
        Gram matrix is not in the cache).
    z : ndarray
        The (standardised) conditioning data.
    settings : sequence
        What else decides the regression (the candidate kernels on `z`, the
        regression's settings): keyed by their representations.
    fit : callable
        ``fit(K)``: the fitted regression (its choice is cached).
    spectrum : callable
        ``spectrum(kernel)``: the decomposition of a kernel on `z`, as `fit` computes it
        (for a regression whose choice is cached).
    share : callable
        ``share(R K R, K)``: the share of the features the regression leaves.
    """
    # the bits of the products with K (the criterion, the residuals) depend on the threads
    key = (_digest(data), repr(kernel), _digest(z), *(repr(s) for s in settings),
           repr(blas_thread_counts()))
    hit = _RESIDUALS.get(key)
    if hit is not None:
        return hit
    K = gram()
    chosen = _SMALL.get(("choice", *key))
    if chosen is not None:
        light = chosen.value
        f: Fit = dataclasses.replace(light, spectrum=spectrum(light.spectrum.kernel))
    else:
        f = fit(K)
        if isinstance(f, FittedRegression):
            _SMALL.put(("choice", *key), _light(f))
    G = f.residual_gram(K)
    G.setflags(write=False)
    res = TargetResiduals(f, G, share(G, K))
    _RESIDUALS.put(key, res)
    return res
