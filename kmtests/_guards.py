"""Guards before long or large computations: memory and time estimates.

A test whose Gram matrices do not fit in memory is refused up front with the
amount needed, instead of failing after minutes with numpy's MemoryError; a
configuration that will run for a long time is announced (with the estimate
and what to change) before it starts.

The memory available is the least of what three limits leave (see
:func:`available_memory`): the machine's, the control group's (containers,
batch schedulers, systemd slices) and the process's address-space limit
(``ulimit -v``). Each is read by a small function that takes the file reader
(and the limit getter) as arguments, so that tests can give them any system.
"""

from __future__ import annotations

import os
import warnings
from typing import Callable, Optional

from ._warnings import SlowTestWarning

try:  # POSIX only
    import resource as _resource
except ImportError:  # pragma: no cover - Windows
    _resource = None  # type: ignore[assignment]

__all__ = ["address_space_available", "available_memory", "cgroup_available",
           "check_memory", "format_bytes", "format_seconds", "machine_available",
           "warn_if_slow"]

#: refuse when the estimate exceeds this fraction of the available memory
MEMORY_FRACTION = 0.9
#: announce configurations estimated to take longer than this (seconds)
SLOW_SECONDS = 30.0
#: a cgroup limit at or above this many bytes means "no limit" (cgroup v1 writes
#: 9223372036854771712, the largest page-aligned int64)
_NO_LIMIT = 2**60

#: reads a text file, None when it cannot be read
Reader = Callable[[str], Optional[str]]


def read_text(path: str) -> str | None:
    """The contents of the text file `path`, or None if it cannot be read."""
    try:
        with open(path) as fh:
            return fh.read()
    except (OSError, ValueError):  # missing, unreadable, not text
        return None


def _field_kb(text: str | None, key: str) -> int | None:
    """Bytes of the ``key:  N kB`` line of a /proc file (meminfo, status), or None."""
    for line in (text or "").splitlines():
        if line.startswith(key + ":"):
            parts = line.split()
            try:
                return int(parts[1]) * (1024 if parts[-1] == "kB" else 1)
            except (IndexError, ValueError):
                return None
    return None


def _int_or_none(text: str | None) -> int | None:
    try:
        return int((text or "").strip())
    except ValueError:  # empty, or "max" (cgroup v2: no limit)
        return None


def machine_available(read: Reader = read_text) -> int | None:
    """Bytes the machine can give a new allocation: ``MemAvailable`` of /proc/meminfo.

    Elsewhere than Linux, the free physical pages (``os.sysconf``); None if unknown.
    """
    avail = _field_kb(read("/proc/meminfo"), "MemAvailable")
    if avail is not None:
        return avail
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def _cgroup_mounts(read: Reader) -> dict[str, tuple[str, str]]:
    """``{"v1": (mount point, root), "v2": (...)}`` of the memory cgroup hierarchies, from
    /proc/self/mountinfo (the usual places when it cannot be read)."""
    text = read("/proc/self/mountinfo")
    if text is None:
        return {"v1": ("/sys/fs/cgroup/memory", "/"), "v2": ("/sys/fs/cgroup", "/")}
    out: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        head, sep, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if not sep or len(fields) < 5 or len(rest) < 3:
            continue
        root, mount = fields[3], fields[4]
        if rest[0] == "cgroup2":
            out.setdefault("v2", (mount, root))
        elif rest[0] == "cgroup" and "memory" in rest[2].split(","):
            out.setdefault("v1", (mount, root))
    return out


def _cgroup_paths(read: Reader) -> dict[str, str]:
    """``{"v1": path, "v2": path}`` of this process in the memory hierarchies, from
    /proc/self/cgroup (``0::/path`` for v2, ``N:...memory...:/path`` for v1)."""
    out: dict[str, str] = {}
    for line in (read("/proc/self/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hid, controllers, path = parts
        if hid == "0" and controllers == "":
            out["v2"] = path
        elif "memory" in controllers.split(","):
            out["v1"] = path
    return out


def _cgroup_free(read: Reader, mount: str, root: str, path: str, limit: str, usage: str,
                 inactive: tuple[str, ...]) -> int | None:
    """Least ``limit - (usage - inactive file cache)`` over the process's cgroup and its
    ancestors up to the mount point (a parent's limit binds its children too)."""
    if root != "/" and path.startswith(root):
        path = path[len(root):]
    elif root != "/":  # not inside the mounted part: only the mount point is known
        path = "/"
    base = mount.rstrip("/")
    parts = [p for p in path.split("/") if p]
    best: int | None = None
    for depth in range(len(parts), -1, -1):
        d = "/".join([base, *parts[:depth]])
        lim = _int_or_none(read(f"{d}/{limit}"))
        if lim is None or lim >= _NO_LIMIT:
            continue
        used = _int_or_none(read(f"{d}/{usage}")) or 0
        stat = read(f"{d}/memory.stat") or ""
        cache = 0
        for key in inactive:  # reclaimable page cache is not in the way of an allocation
            vals = [line.split()[1] for line in stat.splitlines()
                    if line.startswith(key + " ") and len(line.split()) == 2]
            if vals and vals[0].isdigit():
                cache = int(vals[0])
                break
        free = lim - max(used - cache, 0)
        best = free if best is None else min(best, free)
    return best


def cgroup_available(read: Reader = read_text) -> int | None:
    """Bytes the process's control group leaves, or None without a memory limit.

    cgroup v2: ``memory.max - memory.current``; cgroup v1:
    ``memory.limit_in_bytes - memory.usage_in_bytes``; in both the inactive
    file cache (``memory.stat``), which the kernel reclaims before it fails an
    allocation, is not counted as used. The process's cgroup is found in
    /proc/self/cgroup and the hierarchies in /proc/self/mountinfo; the least
    over the cgroup and its ancestors is returned.
    """
    mounts, paths = _cgroup_mounts(read), _cgroup_paths(read)
    found = []
    if "v2" in mounts and "v2" in paths:
        found.append(_cgroup_free(read, *mounts["v2"], paths["v2"], "memory.max",
                                  "memory.current", ("inactive_file",)))
    if "v1" in mounts and "v1" in paths:
        found.append(_cgroup_free(read, *mounts["v1"], paths["v1"], "memory.limit_in_bytes",
                                  "memory.usage_in_bytes",
                                  ("total_inactive_file", "inactive_file")))
    values = [v for v in found if v is not None]
    return min(values) if values else None


def _rlimit_as() -> int | None:
    """The soft address-space limit (``RLIMIT_AS``) in bytes, None if unlimited."""
    if _resource is None:  # pragma: no cover - Windows
        return None
    soft = _resource.getrlimit(_resource.RLIMIT_AS)[0]
    return None if soft == _resource.RLIM_INFINITY or soft < 0 else int(soft)


def address_space_available(read: Reader = read_text,
                            rlimit: Callable[[], int | None] = _rlimit_as) -> int | None:
    """Bytes of address space the process may still map: the ``RLIMIT_AS`` soft limit
    (``ulimit -v``) minus the current virtual size (``VmSize`` of /proc/self/status);
    None without a limit."""
    limit = rlimit()
    if limit is None:
        return None
    size = _field_kb(read("/proc/self/status"), "VmSize")
    return limit - (size or 0)


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation, or None if unknown.

    The least of what the machine has (:func:`machine_available`, Linux
    ``MemAvailable``), what the process's control group leaves
    (:func:`cgroup_available`: cgroup v2 ``memory.max``, v1
    ``memory.limit_in_bytes``, less the usage) and what its address-space
    limit leaves (:func:`address_space_available`: ``RLIMIT_AS`` less the
    virtual size). Under a cgroup or ``ulimit -v`` limit the machine may have
    plenty while the process is killed or refused the memory; the smallest
    limit is the one that counts. Never negative.
    """
    found = [machine_available(), cgroup_available(), address_space_available()]
    values = [v for v in found if v is not None]
    return max(min(values), 0) if values else None


def format_bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} bytes"


def format_seconds(t: float) -> str:
    """E.g. ``35.3 s``, ``1 minute``, ``12 minutes``, ``1.5 hours``."""
    if t >= 3600:
        return f"{t / 3600:.1f} hours"
    if t >= 60:
        m = round(t / 60)
        return f"{m} minute{'s' if m != 1 else ''}"
    return f"{t:.1f} s"


#: needs below this many bytes are not checked against the available memory (reading the
#: limits costs about 0.3 ms, the per-call cost of a small test)
UNCHECKED_BYTES = 32 * 2**20


def check_memory(need: float, what: str, advice: str, *, subject: str = "this test") -> None:
    """Raise ``MemoryError`` if `need` bytes exceed the available memory.

    `what` names what takes the memory; `advice` says what to do instead;
    `subject` is what needs it (``"this test"``, ``"this fit"``). Needs below
    :data:`UNCHECKED_BYTES` are not checked.
    """
    if need < UNCHECKED_BYTES:
        return
    avail = available_memory()
    if avail is None or need <= MEMORY_FRACTION * avail:
        return
    raise MemoryError(
        f"{subject} needs about {format_bytes(need)} of memory ({what}), more than the "
        f"{format_bytes(avail)} available. {advice}")


def warn_if_slow(seconds: float, detail: str, advice: str, stacklevel: int = 4) -> bool:
    """Warn (:class:`SlowTestWarning`) when the estimated time exceeds :data:`SLOW_SECONDS`;
    whether it did."""
    if seconds > SLOW_SECONDS:
        warnings.warn(f"this test will take about {format_seconds(seconds)} ({detail}). "
                      f"{advice}", SlowTestWarning, stacklevel=stacklevel)
        return True
    return False
