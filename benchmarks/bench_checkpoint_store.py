"""The checkpoint store of the power studies: today's CSV file against a sqlite3 database.

Issue 26 (item 8) and issue 32 ask whether the checkpoint store (a settings line,
CRC-checked CSV rows appended with one ``os.write`` per repetition, ``fsync`` every
``FSYNC_INTERVAL`` seconds, a ``flock`` on ``<file>.lock``, atomic renames) would be
better as a sqlite3 database with transactions. This measures both on the same rows:

* ``write``  : open a new store, append R repetitions of E rows one repetition at a time
  (as ``power_curve`` does), close it (the final ``fsync`` / commit included);
* ``resume`` : open the finished store again and read every row back (what a resumed
  study does before it computes what is missing);
* ``bytes``  : the size of the store on disk.

The sqlite3 store is the one a port would use: one table of rows, the settings as JSON in a
second table, WAL journal, ``synchronous=NORMAL`` (a commit survives the process being
killed, as a row appended to the CSV file does; the last commits may be lost on a power
failure, as the CSV rows not yet synced are), one transaction per repetition. Run::

    .venv/bin/python benchmarks/bench_checkpoint_store.py [--repetitions 5000] [--rows 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from kmtests.datasets._scenarios import get_scenario  # noqa: E402
from kmtests.estimators import KME  # noqa: E402
from kmtests.studies._checkpoint import open_checkpoint, read_checkpoint  # noqa: E402
from kmtests.studies.power import _checkpoint_settings, _Study  # noqa: E402


def _settings(per: int) -> dict:
    """The settings a power study records: scenario mean_shift, `per` estimators."""
    labels = [f"est{j}" for j in range(per)]
    study = _Study(get_scenario("mean_shift"), [50], [0.5], 1, 199, {}, labels,
                   [KME()] * per)
    return _checkpoint_settings(study, np.random.SeedSequence(1), None)


def _rows(repetitions: int, per: int) -> list[list[tuple]]:
    labels = [f"est{j}" for j in range(per)]
    return [[("mean_shift", "two_sample", 50, 0.5, r, lab, (r * 7 + j) % 199 / 199 + 0.005)
             for j, lab in enumerate(labels)] for r in range(repetitions)]


def _cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def csv_store(path: Path, reps: list[list[tuple]]) -> dict[str, float]:
    settings = _settings(len(reps[0]))
    t, c = time.perf_counter(), _cpu()
    with open_checkpoint(path, settings, seed_given=True) as ck:
        for rows in reps:
            ck.append(rows)
    write = (time.perf_counter() - t, _cpu() - c)
    t, c = time.perf_counter(), _cpu()
    with open_checkpoint(path, settings, seed_given=True) as ck:
        n = len(ck.rows)
    resume = (time.perf_counter() - t, _cpu() - c)
    assert n == sum(map(len, reps)) and len(read_checkpoint(path)[1]) == n
    return {"write": write, "resume": resume, "bytes": path.stat().st_size}


def sqlite_store(path: Path, reps: list[list[tuple]]) -> dict[str, float]:
    settings = _settings(len(reps[0]))

    def connect() -> sqlite3.Connection:
        con = sqlite3.connect(path, isolation_level=None)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        return con

    t, c = time.perf_counter(), _cpu()
    con = connect()
    con.execute("CREATE TABLE settings (json TEXT NOT NULL)")
    con.execute("CREATE TABLE rows (scenario TEXT, test TEXT, n INTEGER, effect REAL, "
                "repetition INTEGER, estimator TEXT, pvalue REAL, "
                "PRIMARY KEY (n, effect, repetition, estimator))")
    con.execute("INSERT INTO settings VALUES (?)", (json.dumps(settings, sort_keys=True),))
    for rows in reps:
        con.execute("BEGIN")
        con.executemany("INSERT INTO rows VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        con.execute("COMMIT")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    write = (time.perf_counter() - t, _cpu() - c)
    t, c = time.perf_counter(), _cpu()
    con = connect()
    stored = json.loads(con.execute("SELECT json FROM settings").fetchone()[0])
    got = con.execute("SELECT * FROM rows").fetchall()
    con.close()
    resume = (time.perf_counter() - t, _cpu() - c)
    assert stored == settings and len(got) == sum(map(len, reps))
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    return {"write": write, "resume": resume, "bytes": size}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repetitions", type=int, default=5000)
    ap.add_argument("--rows", type=int, default=5, help="rows per repetition (estimators)")
    ap.add_argument("--repeats", type=int, default=3, help="best of")
    args = ap.parse_args(argv)
    reps = _rows(args.repetitions, args.rows)
    print(f"{args.repetitions} repetitions x {args.rows} rows; load {os.getloadavg()}; "
          f"best of {args.repeats}; seconds wall / CPU")
    for name, store in [("csv", csv_store), ("sqlite3", sqlite_store)]:
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as d:
                out = store(Path(d) / "study.ckpt", reps)
            for k in ("write", "resume"):
                best[k] = min(best.get(k, (1e9, 1e9)), out[k])
        n = args.repetitions * args.rows
        print(f"{name:8s} write {best['write'][0]:.3f} / {best['write'][1]:.3f} "
              f"({n / best['write'][0]:,.0f} rows/s)  resume {best['resume'][0]:.3f} / "
              f"{best['resume'][1]:.3f}  size {out['bytes'] / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
