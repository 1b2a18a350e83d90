"""The engine contract: how the kernel matrices of a test are held.

An engine turns a fitted kernel and data into a *source* the statistics read:

* ``pooled(kernel, z)`` -> a :class:`GramSource` (two-sample statistics): the
  permutation-invariant summaries of the pooled Gram matrix (row means ``r``,
  grand mean ``g``, centred diagonal, the rounding scales) and
  ``within_sums(perms, n_x)``, the centred within-sample sums ``a'Kc a`` of
  every split;
* ``paired(kx, x, ky, y)`` -> a :class:`PairSource` (independence statistics):
  the two sums ``S_p``, ``D_p`` of every permutation of the pairing.

An engine that holds the whole centred Gram matrix (``holds_gram``) also gives
it (``source.cg`` / ``source.Kc``, ``source.Lc``): per-point weights, pooled
tuning, spectral statistics and the gamma approximation need it.

Each engine declares its options (``n_features`` ...), what it runs
(:meth:`Engine.supports` — the one place where an engine refuses a test), its
memory and its default permutation batch.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Protocol

import numpy as np

__all__ = ["Engine", "GramSource", "PairSource", "Requirements", "SharedSources",
           "kernel_key"]


class GramSource(Protocol):
    """What the uniform-weight MMD statistics read of the pooled Gram matrix (attributes
    an engine's source sets once)."""

    n: int
    r: np.ndarray
    g: float
    kc_max: float
    r_max: float
    diag_c: np.ndarray

    def within_sums(self, perms: np.ndarray, n_x: int,
                    n_jobs: int | None = None) -> np.ndarray: ...


class PairSource(Protocol):
    """What the uniform-weight HSIC statistics read of the two Gram matrices."""

    n: int
    trK: float
    trL: float
    scale: float

    def pair_sums(self, perms: np.ndarray, n_jobs: int | None = None
                  ) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass(frozen=True)
class Requirements:
    """What a statistic needs of an engine (the engines decide whether they run it).

    Attributes
    ----------
    scheme : str
        ``"split"`` (two samples) or ``"pairing"`` (paired variables).
    kernels : mapping of role to Kernel
        The kernels the statistic evaluates.
    gram : str
        Why the whole centred Gram matrix must be in memory (empty: block or
        pair sums suffice).
    marginalized : str
        The name of an estimator that acts through a transformation of the
        kernel (empty: none).
    pair_values : bool
        The statistic evaluates the kernel on pairs of points (linear-time
        statistics), not through sums over permutations.
    own_features : str
        Why the statistic computes its own features and takes no engine source
        (the interpretable tests); empty: it uses the engine's.
    features : str
        Why the statistic needs the Gram matrix in memory *or* the features of a
        low-rank engine (per-point weights with a feature form); empty: sums suffice.
    pooled_tuning : bool
        Its estimator is tuned once on the pooled Gram matrix (``tuning="pooled"``):
        the engines that tune on every permutation (streamed, low-rank) refuse it.
    """

    scheme: str
    kernels: Mapping[str, Any] = field(default_factory=dict)
    gram: str = ""
    marginalized: str = ""
    pair_values: bool = False
    own_features: str = ""
    features: str = ""
    pooled_tuning: bool = False

    @property
    def precomputed(self) -> list[str]:
        """The roles whose Gram matrix was given."""
        return [role for role, k in self.kernels.items()
                if getattr(k, "name", "") == "precomputed"]


class Engine(abc.ABC):
    """Base class of the engines (see the module docs).

    Subclasses set ``name``, ``options`` (their keyword options) and implement
    :meth:`pooled` and/or :meth:`paired`. An engine object is a configuration
    (its options) plus, once chosen, the notes the report shows.
    """

    name: ClassVar[str] = "engine"
    #: the statistic it computes is an approximation of the kernel's own
    approximate: ClassVar[bool] = False
    #: the whole centred Gram matrix is in memory (``source.cg``)
    holds_gram: ClassVar[bool] = False
    #: the source holds features of every point (``source.f``, the low-rank engines)
    holds_features: ClassVar[bool] = False
    #: the schemes it runs
    schemes: ClassVar[tuple[str, ...]] = ("split", "pairing")
    #: its keyword options
    options: ClassVar[tuple[str, ...]] = ()
    #: it evaluates the kernel on pairs of points from the data (linear-time statistics)
    pair_values: ClassVar[bool] = False

    def __init__(self, note: str = "") -> None:
        self.note = note

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.options)
        return f"{type(self).__name__}({opts})"

    # -- what it runs --------------------------------------------------------------------------
    def supports(self, req: Requirements) -> str | None:
        """Why this engine cannot run a statistic with these requirements (None: it can)."""
        if req.scheme not in self.schemes:
            return (f"engine={self.name!r} runs the two-sample test only; use engine='exact'"
                    + (" or an approximate engine ('nystrom', 'rff')" if req.scheme == "pairing"
                       else "") + ".")
        if req.precomputed and not self.holds_gram:
            roles = ", ".join(f"{r}='precomputed'" for r in req.precomputed)
            return (f"engine={self.name!r} computes the kernel from the data; with {roles} "
                    "the Gram matrix is given: use engine='exact'.")
        if req.own_features and not self.holds_gram:
            return (f"engine={self.name!r} does not apply: {req.own_features}; use "
                    "engine='exact' (the default).")
        if req.pair_values and not self.pair_values:
            return (f"engine={self.name!r} evaluates the kernel on the whole sample; the "
                    "linear-time statistics evaluate it on pairs of points of the data: use "
                    "engine='streamed' (their default).")
        if req.gram and not self.holds_gram:
            return (f"engine={self.name!r} does not hold the Gram matrix in memory, which "
                    f"{req.gram}: use engine='exact'.")
        if req.features and not (self.holds_gram or self.holds_features):
            return (f"engine={self.name!r} holds neither the Gram matrix nor features, "
                    f"which {req.features}: use engine='exact', 'nystrom' or 'rff'.")
        if req.marginalized and not self.holds_gram:
            return (f"engine={self.name!r} does not run the marginalized estimator "
                    f"{req.marginalized!r}; use engine='exact'.")
        return None

    def resolved(self, req: Requirements, n: int, dims: Mapping[str, int]) -> "Engine":
        """The engine that runs (``"auto"`` chooses one; every other engine is itself)."""
        return self

    def notes(self, statistic: str, n: int, permutations: bool = True) -> list[str]:
        """Notes for the report: why it was chosen, and what it approximates."""
        return [self.note] if self.note else []

    # -- sources ------------------------------------------------------------------------------
    def pooled(self, kernel: Any, z: np.ndarray, *, rng: Any = None,
               scale: float = 1.0) -> Any:
        """The pooled Gram matrix of `z` (or the given one) under the fitted `kernel`,
        times `scale`."""
        raise NotImplementedError(f"engine={self.name!r} has no two-sample source.")

    def paired(self, kx: Any, x: np.ndarray, ky: Any, y: np.ndarray, *, rng: Any = None,
               scales: tuple[float, float] = (1.0, 1.0), orientation: bool | None = None
               ) -> Any:
        """The two centred Gram matrices (or their features) of paired variables.

        `orientation` fixes which one is permuted (False: `y`, True: `x`); None
        chooses it from the matrices, so that the test does not depend on the
        order of the arguments.
        """
        raise NotImplementedError(f"engine={self.name!r} has no independence source.")

    # -- costs ----------------------------------------------------------------------------------
    @abc.abstractmethod
    def memory(self, req: Requirements, n: int, dims: Mapping[str, int],
               batch: int) -> tuple[float, str, str]:
        """Bytes one source takes, what takes them, and what to do when they do not fit.

        `batch` is the number of arrangements per batch; the engine counts its own
        buffers for them (the permutation method counts the index arrays).
        """

    def batch(self, scheme: str, n: int, n_resamples: int) -> int | None:
        """The default number of arrangements per batch (None: the permutation method's)."""
        return None

    def describe(self) -> str:
        """The engine for the report (e.g. ``nystrom``)."""
        return self.name


def kernel_key(kernel: Any) -> tuple[Any, ...]:
    """What identifies a fitted kernel's Gram matrix (for sharing sources)."""
    items: list[Any] = [type(kernel).__name__]
    for name, value in sorted(vars(kernel).items()):
        if isinstance(value, np.ndarray):
            items.append((name, value.shape, value.tobytes()))
        elif callable(value):
            items.append((name, id(value)))
        else:
            items.append((name, repr(value)))
    return tuple(items)


class SharedSources:
    """A view of an engine that builds each source once: the members of an aggregated
    statistic (or the estimators compared by :func:`kmtests.compare_estimators`) that
    evaluate the same kernel on the same data share one Gram matrix."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._cache: dict[tuple[Any, ...], Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def pooled(self, kernel: Any, z: np.ndarray, *, rng: Any = None,
               scale: float = 1.0) -> Any:
        key = ("pooled", kernel_key(kernel), id(z), scale)
        if key not in self._cache:
            self._cache[key] = self.engine.pooled(kernel, z, rng=rng, scale=scale)
        return self._cache[key]

    def paired(self, kx: Any, x: np.ndarray, ky: Any, y: np.ndarray, *, rng: Any = None,
               scales: tuple[float, float] = (1.0, 1.0), orientation: bool | None = None
               ) -> Any:
        key = ("paired", kernel_key(kx), id(x), kernel_key(ky), id(y), scales, orientation)
        if key not in self._cache:
            self._cache[key] = self.engine.paired(kx, x, ky, y, rng=rng, scales=scales,
                                                  orientation=orientation)
        return self._cache[key]
