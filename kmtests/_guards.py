"""Guards before long or large computations: memory and time estimates.

A test whose Gram matrices do not fit in memory is refused up front with the
amount needed, instead of failing after minutes with numpy's MemoryError; a
configuration that will run for a long time is announced (with the estimate
and what to change) before it starts.
"""

from __future__ import annotations

import os
import warnings

from ._warnings import SlowTestWarning

__all__ = ["available_memory", "check_memory", "format_bytes", "format_seconds",
           "warn_if_slow"]

#: refuse when the estimate exceeds this fraction of the available memory
MEMORY_FRACTION = 0.9
#: announce configurations estimated to take longer than this (seconds)
SLOW_SECONDS = 600.0


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``), or None."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def format_bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} bytes"


def format_seconds(t: float) -> str:
    if t >= 3600:
        return f"{t / 3600:.1f} hours"
    if t >= 60:
        return f"{t / 60:.0f} minutes"
    return f"{t:.1f} s"


def check_memory(need: float, what: str, advice: str) -> None:
    """Raise ``MemoryError`` if `need` bytes exceed the available memory.

    `what` names what takes the memory; `advice` says what to do instead.
    """
    avail = available_memory()
    if avail is None or need <= MEMORY_FRACTION * avail:
        return
    raise MemoryError(
        f"this test needs about {format_bytes(need)} of memory ({what}), more than the "
        f"{format_bytes(avail)} available. {advice}")


def warn_if_slow(seconds: float, detail: str, advice: str) -> None:
    """Warn (:class:`SlowTestWarning`) when the estimated time exceeds :data:`SLOW_SECONDS`."""
    if seconds > SLOW_SECONDS:
        warnings.warn(f"this test will take about {format_seconds(seconds)} ({detail}). "
                      f"{advice}", SlowTestWarning, stacklevel=4)
