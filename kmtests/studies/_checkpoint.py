"""Checkpoint files of power studies: a settings header, checksummed rows, a lock.

A checkpoint holds the raw p-values of *one* study (one scenario, root seed,
number of permutations and set of test options) so that an interrupted study
can be resumed and a grown design (more repetitions, sizes, effects or
estimators) computes only what is missing. The file is UTF-8 text::

    # kmtests power-study checkpoint, format 1 (written by kmtests; do not edit)
    # settings 1a2b3c4d {"format": 1, "kmtests": "0.1.0", "n_resamples": 199, ...}
    scenario,test,n,effect,repetition,estimator,pvalue,crc32
    mean_shift,two_sample,20,0.5,0,kme,0.035,5e0c2a91
    ...

``pandas.read_csv(path, comment="#")`` reads the rows. The settings line
records everything that gives a row its meaning; :func:`open_checkpoint`
refuses a file whose settings differ from the call's, naming what differs.
Every row ends with the CRC-32 of the text before it, so a truncated or edited
row cannot be read as a valid one.

Writes: the file is created (and rewritten when an estimator is added) through
a temporary file renamed over it, so it is always either the old or the new
complete file (a symbolic link is kept: its target is replaced; anything but a
regular file is refused); finished rows are then appended, one ``os.write``
per repetition, and reach the disk (``fsync``) at least every
:data:`FSYNC_INTERVAL` seconds and when the study ends. Rows written before a
process is killed are therefore kept. An exclusive ``fcntl.flock`` on
``<file>.lock`` keeps a second process from using the same file at the same
time (it is refused); the lock file is opened with ``O_NOFOLLOW`` and must be
a regular file, so a link planted there cannot make a study truncate another
file. Platforms without ``fcntl`` cannot use checkpoints.

:func:`write_output` writes the other files of a study (tables, plots):
regular files atomically as above, FIFOs and character devices
(``/dev/stdout``, ``/dev/null``, a pipe) through, without renaming.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import math
import os
import stat
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any, Iterable

from ._canonical import CheckpointError as CheckpointError
from ._canonical import canonical

__all__ = ["CheckpointError", "Checkpoint", "atomic_write_text", "canonical", "open_checkpoint",
           "output_mode", "write_output"]

FORMAT = 1
MAGIC = f"# kmtests power-study checkpoint, format {FORMAT} (written by kmtests; do not edit)"
COLUMNS = ["scenario", "test", "n", "effect", "repetition", "estimator", "pvalue"]
HEADER = ",".join([*COLUMNS, "crc32"])
#: seconds between two ``fsync`` calls while rows are appended
FSYNC_INTERVAL = 2.0

#: (scenario, test, n, effect, repetition, estimator, pvalue)
Row = tuple[str, str, int, float, int, str, float]


# -- settings and their differences ----------------------------------------------------
def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


#: longest pair of settings values shown in full when they differ
_SHOWN_IN_FULL = 240


_ABSENT = object()


def _pruned(a: Any, b: Any) -> tuple[Any, Any]:
    """`a` and `b` with the dict entries they agree on left out, recursively."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return a, b
    pa, pb = {}, {}
    for key in sorted(set(a) | set(b)):
        if a.get(key, _ABSENT) == b.get(key, _ABSENT):
            continue
        x, y = _pruned(a.get(key, "(absent)"), b.get(key, "(absent)"))
        if key in a:
            pa[key] = x
        if key in b:
            pb[key] = y
    return pa, pb


def difference(name: str, stored: Any, wanted: Any) -> str:
    """``"<name> is <stored> in the file but <wanted> in this call"``; long values
    (descriptions of callables) are shown with only the entries that differ."""
    a, b = _show(stored), _show(wanted)
    if len(a) + len(b) > _SHOWN_IN_FULL:
        pa, pb = _pruned(stored, wanted)
        a, b = _show(pa), _show(pb)
    return f"{name} is {a} in the file but {b} in this call"


def settings_differences(stored: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """Human-readable differences between two settings dicts (estimators excluded)."""
    out = []
    for key in sorted(set(stored) | set(wanted)):
        if key == "estimators":
            continue
        a, b = stored.get(key, "(absent)"), wanted.get(key, "(absent)")
        if a != b:
            out.append(difference(key, a, b))
    return out


# -- row encoding ------------------------------------------------------------------
def _crc(text: str) -> str:
    return f"{zlib.crc32(text.encode('utf-8')):08x}"


def encode_row(row: Row) -> str:
    scenario, test, n, effect, rep, est, p = row
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(
        [scenario, test, int(n), repr(float(effect)), int(rep), est, repr(float(p))])
    body = buf.getvalue()
    return f"{body},{_crc(body)}\n"


def _decode_row(line: str, where: str) -> Row:
    body, sep, crc = line.rpartition(",")
    if not sep or len(crc) != 8 or _crc(body) != crc:
        raise CheckpointError(f"{where} is truncated or corrupt (its checksum does not match); "
                              "delete that line to recompute its row.")
    try:
        fields = next(csv.reader([body]))
    except csv.Error as exc:  # a NUL byte, a line break inside a field
        raise CheckpointError(f"{where} cannot be read as CSV ({exc}).") from None
    if len(fields) != len(COLUMNS):
        raise CheckpointError(f"{where} has {len(fields)} fields; expected {len(COLUMNS)}.")
    scenario, test, n, effect, rep, est, p = fields
    try:
        row = (scenario, test, int(n), float(effect), int(rep), est, float(p))
    except ValueError as exc:
        raise CheckpointError(f"{where} has an invalid field ({exc}).") from None
    if row[2] < 1 or row[4] < 0 or not math.isfinite(row[3]) or not 0.0 <= row[6] <= 1.0:
        raise CheckpointError(f"{where} has an out-of-range value: n = {row[2]}, "
                              f"repetition = {row[4]}, effect = {row[3]}, p-value = {row[6]}.")
    return row


def _settings_line(settings: dict[str, Any]) -> str:
    text = json.dumps(settings, sort_keys=True, allow_nan=False, separators=(",", ":"))
    return f"# settings {_crc(text)} {text}"


def _render(settings: dict[str, Any], rows: Iterable[Row]) -> str:
    return "".join([f"{MAGIC}\n{_settings_line(settings)}\n{HEADER}\n",
                    *(encode_row(r) for r in rows)])


def read_checkpoint(path: Path) -> tuple[dict[str, Any], list[Row]]:
    """Parse and validate a checkpoint file; return its settings and rows.

    Whatever the file holds, a problem is a :class:`CheckpointError` with a
    one-line message naming the file and the line (crafted settings
    included: nested too deeply, keys missing, values of the wrong type).
    """
    lines = _read_lines(path)
    settings = _parse_settings(lines[1], f"line 2 of checkpoint {path}")
    if lines[2] != HEADER:
        raise CheckpointError(f"line 3 of checkpoint {path} is not the column header "
                              f"{HEADER!r}.")
    scen, labels = settings["scenario"], settings["estimators"]
    rows: list[Row] = []
    seen: dict[tuple[int, float, int, str], int] = {}
    for i, line in enumerate(lines[3:], start=4):
        where = f"line {i} of checkpoint {path}"
        row = _decode_row(line, where)
        if row[0] != scen["name"] or row[1] != scen["kind"]:
            raise CheckpointError(f"{where} belongs to scenario {row[0]!r} ({row[1]!r}), not "
                                  f"to the file's {scen['name']!r}.")
        if row[5] not in labels:
            raise CheckpointError(f"{where} names estimator {row[5]!r}, which the file's "
                                  "settings do not describe.")
        key = row[2:6]
        if key in seen:
            raise CheckpointError(f"{where} repeats the row of line {seen[key]}.")
        seen[key] = i
        rows.append(row)
    return settings, rows


def _read_lines(path: Path) -> list[str]:
    """The lines of a checkpoint file with a complete header (the magic line checked)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CheckpointError(f"checkpoint {path} is not a kmtests checkpoint file "
                              "(not UTF-8 text).") from None
    lines = text.split("\n")
    if lines[0] != MAGIC:
        if lines[0].startswith("# kmtests power-study checkpoint"):
            raise CheckpointError(f"checkpoint {path} has a format this version of kmtests "
                                  f"cannot read ({lines[0][2:80]!r}); use another file.")
        raise CheckpointError(
            f"checkpoint {path} is not a kmtests checkpoint file (its first line is "
            f"{lines[0][:60]!r}); files of earlier versions, and tables written by "
            "`to_csv`, record no settings and cannot be resumed: use a new file.")
    if not text.endswith("\n"):
        raise CheckpointError(f"line {len(lines)} of checkpoint {path} is truncated (no end "
                              "of line); delete that line to recompute its row.")
    lines = lines[:-1]
    if len(lines) < 3:
        raise CheckpointError(f"checkpoint {path} is truncated (its header is incomplete).")
    return lines


#: deepest nesting of lists and objects accepted in the settings
MAX_DEPTH = 200


def _parse_settings(line: str, where: str) -> dict[str, Any]:
    parts = line.split(" ", 3)
    if len(parts) != 4 or parts[:2] != ["#", "settings"] or _crc(parts[3]) != parts[2]:
        raise CheckpointError(f"{where} (the settings) is corrupt.")
    try:
        settings = json.loads(parts[3])
    except RecursionError:
        raise CheckpointError(f"{where} (the settings) is nested too deeply.") from None
    except ValueError:  # also integers of more than 4300 digits
        raise CheckpointError(f"{where} (the settings) is corrupt (not JSON).") from None
    if _depth(settings) > MAX_DEPTH:
        raise CheckpointError(f"{where} (the settings) is nested more than {MAX_DEPTH} levels "
                              "deep.")
    problem = _settings_problem(settings)
    if problem:
        raise CheckpointError(f"{where} (the settings) is invalid: {problem}.")
    return settings


def _depth(value: Any) -> int:
    """Nesting depth of lists and dicts (iterative: no recursion limit), capped past the
    maximum."""
    deepest, stack = 0, [(value, 1)]
    while stack and deepest <= MAX_DEPTH:
        v, d = stack.pop()
        deepest = max(deepest, d)
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return deepest


def _count(v: Any, low: int = 0, high: float = math.inf) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


#: (key, rule, test, required) of the settings that are read, not only compared
_SETTINGS_RULES: tuple[tuple[str, str, Any, bool], ...] = (
    ("kmtests", "a string", lambda v: isinstance(v, str), True),
    ("scenario", "an object", lambda v: isinstance(v, dict), True),
    ("scenario.name", "a string", lambda v: isinstance(v, str), True),
    ("scenario.kind", "a string", lambda v: isinstance(v, str), True),
    ("seed", "an object", lambda v: isinstance(v, dict), True),
    ("seed.entropy", "a non-negative integer or a non-empty list of them",
     lambda v: _count(v) or (isinstance(v, list) and bool(v) and all(map(_count, v))), True),
    ("seed.spawn_key", "a list of non-negative integers",
     lambda v: isinstance(v, list) and all(map(_count, v)), True),
    ("seed.pool_size", "an integer from 4 to 1024", lambda v: _count(v, 4, 1024), True),
    ("n_resamples", "a positive integer", lambda v: _count(v, 1), True),
    ("test_kwargs", "an object", lambda v: isinstance(v, dict), True),
    ("estimators", "an object", lambda v: isinstance(v, dict), True),
    ("label", "a string", lambda v: isinstance(v, str), False),
)


def _settings_problem(settings: Any) -> str | None:
    """What is wrong with the structure of `settings`, or None."""
    if not isinstance(settings, dict):
        return f"it must be a JSON object; got {_brief(settings)}"
    for key, rule, test, required in _SETTINGS_RULES:
        *parents, name = key.split(".")
        owner = settings
        for parent in parents:
            owner = owner[parent]  # checked by an earlier rule
        if name not in owner:
            if required:
                return f"`{key}` is missing"
            continue
        if not test(owner[name]):
            return f"`{key}` must be {rule}; got {_brief(owner[name])}"
    return None


def _brief(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- whole-file writes ----------------------------------------------------------------
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


def file_kind(mode: int) -> str:
    """What a file of mode `mode` (from ``os.stat``) is, in words."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a special file"


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write_text(path: str | os.PathLike[str], text: str | bytes) -> None:
    """Write `text` to `path` through a temporary file renamed over it.

    Readers (and a crash) see either the old file or the complete new one. A
    symbolic link is followed: its target is replaced and the link kept.
    Anything but a regular file (a directory, FIFO, device, socket; also
    through a link) is refused with a ValueError and left as it is.
    """
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        mode = _default_mode()
    else:
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path} is {file_kind(st.st_mode)}, not a regular file; it is not "
                             "replaced.")
        mode = st.st_mode & 0o777
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8") if isinstance(text, str) else text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def output_mode(path: str | os.PathLike[str]) -> str:
    """How :func:`write_output` writes `path`, or a ValueError saying why it cannot.

    Returns ``"stdout"`` or ``"stderr"`` when `path` is the file this process's
    standard output or error goes to (``/dev/stdout``, ``/dev/fd/2``, a link
    to the file they are redirected to); ``"replace"`` for a new file, a
    regular file or a link to one (a temporary file renamed over it, or over
    the link's target); ``"through"`` for a FIFO or a character device
    (``/dev/null``, a terminal, a pipe ``<(...)``), which are opened and
    written, never replaced. A directory, block device or socket is refused.
    """
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return "replace"  # a new file (or the missing target of a link)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            std = os.fstat(fd)
        except OSError:  # closed
            continue
        if (std.st_dev, std.st_ino) == (st.st_dev, st.st_ino):
            return name
    if stat.S_ISREG(st.st_mode):
        return "replace"
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
        return "through"
    link = " (through a symbolic link)" if os.path.islink(p) else ""
    raise ValueError(f"{p} is {file_kind(st.st_mode)}{link}, not a file that can be written")


def write_output(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write a result file as :func:`output_mode` says (text is written as UTF-8).

    Regular files are replaced atomically; FIFOs and character devices are
    written through; a path naming standard output or error is written to that
    stream, after what the process printed there.
    """
    mode = output_mode(path)
    if mode == "replace":
        atomic_write_text(path, data)
    elif mode == "through":
        with open(path, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
    else:
        stream = sys.stdout if mode == "stdout" else sys.stderr
        if isinstance(data, str):
            stream.write(data)
        else:
            stream.flush()
            stream.buffer.write(data)
        stream.flush()


# -- the lock -------------------------------------------------------------------------
class _Lock:
    """Exclusive, non-blocking ``flock`` on ``<path>.lock`` (refuses when held).

    The lock file is a regular file created by kmtests: a link (never
    followed: ``O_NOFOLLOW``) or any other kind of file there is refused.
    """

    def __init__(self, path: Path) -> None:
        try:
            import fcntl
        except ImportError:  # non-POSIX platforms
            raise CheckpointError(
                "checkpoint files need POSIX file locking (fcntl), which this platform "
                "lacks; run the study without `checkpoint`.") from None
        self.path = path.with_name(path.name + ".lock")
        self.checkpoint = path
        for _ in range(10):
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
                os.close(fd)
                raise CheckpointError(
                    f"checkpoint {path} is in use by another process (pid {owner}, lock "
                    f"{self.path}); wait until it finishes or use another file.") from None
            try:  # the previous holder may have removed the file before we locked it
                same = os.lstat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        else:  # pragma: no cover - needs a pathological race
            raise CheckpointError(f"could not lock checkpoint {path}; try again.")
        self.fd = fd
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))

    def _refuse(self, mode: int) -> CheckpointError:
        return CheckpointError(
            f"lock file {self.path} of checkpoint {self.checkpoint} is {file_kind(mode)}, not "
            "a regular file; remove it (kmtests creates its lock file itself and never "
            "follows a link there).")

    def _open(self) -> int:
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            pass
        else:
            if not stat.S_ISREG(st.st_mode):
                raise self._refuse(st.st_mode)
        flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as exc:  # replaced by a link or a directory since lstat
            if exc.errno in (errno.ELOOP, errno.EISDIR):
                raise self._refuse(os.lstat(self.path).st_mode) from None
            raise
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # replaced by a FIFO or a device since lstat
            os.close(fd)
            raise self._refuse(mode)
        return fd

    def release(self) -> None:
        if self.fd < 0:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:  # pragma: no cover
            pass
        os.close(self.fd)  # closing releases the flock
        self.fd = -1


# -- the checkpoint object -----------------------------------------------------------------
class Checkpoint:
    """An open, locked checkpoint: its settings, its rows, and an appender."""

    def __init__(self, path: Path, settings: dict[str, Any], rows: list[Row],
                 lock: _Lock) -> None:
        self.path = path
        self.settings = settings
        self.rows = rows
        self._lock = lock
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        self._synced = time.monotonic()

    def append(self, rows: Iterable[Row]) -> None:
        """Append finished rows (one write; synced to disk every few seconds)."""
        data = "".join(encode_row(r) for r in rows).encode("utf-8")
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]
        if time.monotonic() - self._synced > FSYNC_INTERVAL:
            os.fsync(self._fd)
            self._synced = time.monotonic()

    def close(self) -> None:
        if self._fd >= 0:
            try:
                os.fsync(self._fd)
            finally:
                os.close(self._fd)
                self._fd = -1
                self._lock.release()

    def __enter__(self) -> "Checkpoint":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_checkpoint(path: str | os.PathLike[str], settings: dict[str, Any], *,
                    seed_given: bool) -> Checkpoint:
    """Lock `path`, check its settings against `settings`, and open it for appending.

    `settings` holds ``"estimators"`` (label -> configuration) and the other
    keys that define a row's meaning. A new file is created with them. An
    existing file must agree on every key; when `seed_given` is false the
    file's ``"seed"`` is adopted (a study started with fresh entropy continues
    its stream). Estimators new to the file are added to its settings (the file
    is rewritten atomically); an estimator whose label is in the file must have
    the same configuration.
    """
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISREG(st.st_mode):
            link = " (through a symbolic link)" if path.is_symlink() else ""
            raise CheckpointError(f"checkpoint {path} is {file_kind(st.st_mode)}{link}, not a "
                                  "regular file; a checkpoint must be a file kmtests can read, "
                                  "append to and replace.")
    if not path.parent.is_dir():
        raise CheckpointError(f"checkpoint {path}: directory {path.parent} does not exist.")
    lock = _Lock(path)
    try:
        if not path.exists() or path.stat().st_size == 0:
            atomic_write_text(path, _render(settings, []))
            return Checkpoint(path, settings, [], lock)
        stored, rows = read_checkpoint(path)
        wanted = dict(settings)
        if not seed_given and "seed" in stored:
            wanted["seed"] = stored["seed"]
        diffs = settings_differences(stored, wanted)
        ests_stored = stored.get("estimators", {})
        for label, config in settings["estimators"].items():
            if label in ests_stored and ests_stored[label] != config:
                diffs.append(difference(f"estimator {label!r}", ests_stored[label], config))
        if diffs:
            raise CheckpointError(
                f"checkpoint {path} was written with other settings than this call: "
                + "; ".join(diffs) + ". Its rows would not mean what this call asks for: use "
                "the same settings, or another checkpoint file.")
        merged = {**stored, "estimators": {**ests_stored, **settings["estimators"]}}
        if merged != stored:  # new estimators: record their configuration first
            atomic_write_text(path, _render(merged, rows))
        return Checkpoint(path, merged, rows, lock)
    except BaseException:
        lock.release()
        raise
