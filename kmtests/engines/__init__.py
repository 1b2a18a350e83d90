"""Engines: how the kernel matrices of a test are held, and the numerics that use them.

The registry (:data:`ENGINES`) maps names to :class:`Engine` classes:

``"exact"`` (:class:`~kmtests.engines.exact.Exact`, default)
    The Gram matrices in memory: every statistic, estimator and null method.
``"streamed"`` (:class:`~kmtests.engines.streamed.Streamed`, two-sample)
    The same exact statistics and p-values for the uniform-weight estimators,
    with the Gram matrix generated tile by tile: memory ``O(N (d + chunk))``.
``"nystrom"``, ``"rff"`` (:mod:`~kmtests.engines.lowrank`)
    Low-rank approximate statistics: the MMD or HSIC of the kernel ``Phi Phi'``
    of ``n_features`` Nyström or random Fourier features, drawn once from the
    test's `rng` on what the permutations leave unchanged, so the permutation
    p-value is exact for the approximate statistic. Never chosen by ``"auto"``.
``"auto"``
    ``"exact"`` when its matrices fit in a quarter of the available memory,
    otherwise the first exact engine without them that runs the test
    (``"streamed"``), otherwise an error naming the approximate engines. The
    report says which engine ran and why.

Numerics: :mod:`~kmtests.engines.mmd` (block sums of the pooled Gram matrix),
:mod:`~kmtests.engines.hsic` and :mod:`~kmtests.engines._jit_hsic` (pair sums),
:mod:`~kmtests.engines.tiles` (a kernel evaluated block by block, accurately),
:mod:`~kmtests.engines._loop` (the per-permutation loop of per-point weights),
:mod:`~kmtests.engines._threads`; every engine returns :class:`Values`, the
statistics and their rounding scales.
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

from .._guards import format_bytes
from ._base import Engine as Engine
from ._base import GramSource as GramSource
from ._base import PairSource as PairSource
from ._base import Requirements as Requirements
from ._values import Values as Values
from .exact import Exact as Exact
from .lowrank import RFF as RFF
from .lowrank import Nystrom as Nystrom
from .streamed import Streamed as Streamed

__all__ = ["ENGINES", "Auto", "Engine", "Exact", "GramSource", "Nystrom", "PairSource", "RFF",
           "Requirements", "Streamed", "Values", "engine_names", "resolve_engine"]

#: the registered engines, by name
ENGINES: dict[str, type[Engine]] = {"exact": Exact, "streamed": Streamed, "nystrom": Nystrom,
                                    "rff": RFF}

#: "auto" keeps the in-memory engine while its matrices take at most this share of memory
AUTO_SHARE = 0.25


class Auto(Engine):
    """``engine="auto"``: resolved to a registered engine once the test is known
    (:meth:`resolved`, see the module docs). An approximate engine is never chosen."""

    name: ClassVar[str] = "auto"

    def resolved(self, req: Requirements, n: int, dims: Mapping[str, int]) -> Engine:
        from .. import _guards

        need = 8.0 * n * n * (1 if req.scheme == "split" else 2)
        free = None if need < _guards.UNCHECKED_BYTES else _guards.available_memory()
        if free is None or need <= AUTO_SHARE * free:
            return Exact()
        for cls in ENGINES.values():
            if cls.approximate or cls.holds_gram:
                continue
            candidate = cls(note=f"engine='auto' chose {cls.name!r}: the {n} x {n} Gram "
                                 f"matrix ({format_bytes(need)}) would take more than a "
                                 "quarter of the available memory "
                                 f"({format_bytes(free)})")
            if candidate.supports(req) is None:
                return candidate
        approx = [repr(c.name) for c in ENGINES.values()
                  if c.approximate and req.scheme in c.schemes]
        linear = (", or the linear-time engine='block' or 'linear' (KME only)"
                  if req.scheme == "split" else "")
        raise MemoryError(
            f"engine='auto': the {n} x {n} Gram matrix ({format_bytes(need)}) does not fit in "
            f"a quarter of the available memory ({format_bytes(free)}), and no exact engine "
            "without it applies here. Test a random subsample, or use an approximate engine: "
            f"engine={' or '.join(approx)} (n_features=...){linear}.")

    def memory(self, req: Requirements, n: int, dims: Mapping[str, int],
               batch: int) -> tuple[float, str, str]:  # pragma: no cover - resolved first
        raise RuntimeError("engine='auto' is resolved before its memory is estimated.")


def engine_names(scheme: str) -> tuple[str, ...]:
    """The names of the engines that run a scheme, and ``"auto"``."""
    return tuple(n for n, c in ENGINES.items() if scheme in c.schemes) + ("auto",)


def resolve_engine(engine: Any, options: Mapping[str, Any], *, scheme: str,
                   extra: tuple[str, ...] = ()) -> Engine:
    """An engine name or object plus the engines' keyword options -> an engine object.

    `options` are the keyword options of the faces that configure an engine
    (``n_features``); one given (not None) to an engine that does not declare it
    is an error naming the engines it belongs to. `extra` are further names the
    face accepts (listed in the error for an unknown name).
    """
    from .._validation import check_choice

    given = {k: v for k, v in options.items() if v is not None}
    if isinstance(engine, Engine):
        if given:
            raise ValueError(f"give {', '.join(f'`{k}`' for k in given)} to the engine "
                             f"object, not to the test (engine={engine!r}).")
        return engine
    name = check_choice(engine, "engine", engine_names(scheme) + extra)
    cls: type[Engine] = Auto if name == "auto" else ENGINES[name]
    for key in given:
        if key not in cls.options:
            owners = [repr(n) for n, c in ENGINES.items() if key in c.options]
            raise ValueError(f"`{key}` applies to the low-rank engines ({', '.join(owners)}); "
                             f"engine={name!r} computes the full kernel.")
    return cls(**given)
