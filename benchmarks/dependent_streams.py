"""The series of the dependent-data studies (``dependent_level.py``), with numpy only, so
that a peer installed in a separate environment (``driftdep_peer.py``) sees the very
same data sets: every cell's generator is seeded by :func:`seed_of` of its key."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import numpy as np


def seed_of(*key: object) -> int:
    return 20260000 + zlib.crc32("/".join(map(str, key)).encode()) % 10000


def ar1(gen: np.random.Generator, n: int, phi: float) -> np.ndarray:
    """A stationary AR(1) series of unit variance."""
    e = gen.normal(size=n)
    s = np.empty(n)
    s[0] = e[0]
    c = np.sqrt(1.0 - phi * phi)
    for t in range(1, n):
        s[t] = phi * s[t - 1] + c * e[t]
    return s


def _ma_filter(gen: np.random.Generator, n: int, psi: np.ndarray) -> np.ndarray:
    e = gen.normal(size=n + psi.size - 1)
    return np.convolve(e, psi, mode="valid")


def process(name: str, gen: np.random.Generator, n: int) -> np.ndarray:
    """One series of `name` (see the module docs)."""
    if name == "iid":
        return gen.normal(size=n)
    if name.startswith("ar") and name != "arfima":
        return ar1(gen, n, float(name[2:]))
    if name == "ma2":
        return _ma_filter(gen, n, np.array([0.3, 0.6, 1.0]))
    if name == "arfima":
        d, lags = 0.3, 3000
        psi = np.empty(lags)
        psi[0] = 1.0
        for k in range(1, lags):
            psi[k] = psi[k - 1] * (k - 1 + d) / k
        return _ma_filter(gen, n, psi[::-1])
    if name == "garch":
        burn = 500
        e = gen.normal(size=n + burn)
        h, r = 1.0, np.empty(n + burn)
        for t in range(n + burn):
            r[t] = np.sqrt(h) * e[t]
            h = 0.05 + 0.1 * r[t] ** 2 + 0.85 * h
        return r[burn:]
    raise ValueError(f"unknown process {name!r}")


def windows_series(tag: str, proc: str, n: int, shift: float, reps: int) -> Any:
    """The `reps` series of a windows cell, ``(i, z)``: one series of `proc` of length `n`,
    its second half shifted by `shift` (`tag`: the data sets' seed key; ``auto`` is the
    level tables')."""
    gen = np.random.default_rng(seed_of(tag, proc, n, "windows", shift))
    for i in range(reps):
        z = process(proc, gen, n)
        z[n // 2:] += shift
        yield i, z


def merge_rows(path: Path, rows: list[dict[str, Any]], key: tuple[str, ...] = ("null",)
               ) -> None:
    """Write `rows` to the CSV at `path`, keeping its rows whose `key` columns match no
    new row (a run with ``--only`` adds or replaces its nulls' rows and leaves the
    others)."""
    import pandas as pd

    new = pd.DataFrame(rows)
    if path.exists():
        old = pd.read_csv(path)
        cols = list(key)
        kept = ~old.set_index(cols).index.isin(new.set_index(cols).index)
        new = pd.concat([old[kept], new], ignore_index=True)
    new.to_csv(path, index=False, float_format="%.4g")


def pvalue_path(proc: str, n: int, shift: float, draws: int, tag: str = "auto") -> Path:
    """Where every data set's p-value of a windows cell is kept (``driftdep_peer.py
    --pvalues`` and ``dependent_size_adjusted.py``): one CSV per cell, number of draws
    and set of data sets (`tag`, the seed's first key; ``auto`` is the level tables')."""
    tail = f"_shift{shift:g}" if shift else ""
    folder = Path(__file__).resolve().parent / "results" / "dependent_pvalues"
    folder.mkdir(parents=True, exist_ok=True)
    data = "" if tag == "auto" else f"{tag}_"
    return folder / f"{data}windows_{proc}_n{n}{tail}_B{draws}.csv"
