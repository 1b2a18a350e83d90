"""The pictures of a test result: the null distribution, the witness, p-value QQ plots.

matplotlib is an optional dependency (``pip install 'kmtests[plot]'``): it is
imported inside each function, and every function returns the Axes it drew
on (an array of Axes when it drew several panels).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .._summary import format_pvalue
from ..statistics.witness import HSICWitness, MMDWitness

#: a test result (kmtests.results): typed loosely, the module is below ``_base``
KernelTestResult = Any

__all__ = ["plot_null", "plot_pvalue_qq", "plot_witness", "pyplot"]


def pyplot(what: str) -> Any:
    """``matplotlib.pyplot``, or an ImportError naming the extra that installs it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - matplotlib is a test dependency
        raise ImportError(f"{what} needs matplotlib: pip install 'kmtests[plot]'") from exc
    return plt


def _axes(ax: Any, what: str) -> Any:
    if ax is None:
        _, ax = pyplot(what).subplots()
    return ax


def plot_null(res: KernelTestResult, ax: Any = None, bins: Any = "auto") -> Any:
    """The null distribution with the observed statistic and the p-value marked
    (see :meth:`KernelTestResult.plot`)."""
    null = res.null_distribution
    density = None
    if null is None:
        density = res.method.null_density(res)
        if density is None:
            raise ValueError(f"method={res.method.name!r} keeps neither a null sample nor a "
                             "null density to draw; method='permutation' keeps its "
                             "permutation statistics.")
    elif np.ndim(null) != 1:
        raise ValueError("the result keeps one null sample per member (an aggregated test "
                         "with each member its own p-value): draw a member's test.")
    ax = _axes(ax, "plot()")
    t = float(res.statistic)
    if null is not None:
        ax.hist(np.asarray(null), bins=bins, density=True, color="0.75", edgecolor="0.45",
                label=f"null ({res.method.name}, {null.size} values)")
        lo, hi = float(np.min(null)), float(np.max(null))
    else:
        assert density is not None
        label, dist = density
        lo, hi = (float(v) for v in dist.ppf([1e-4, 1 - 1e-4]))
        lo, hi = min(lo, t), max(hi, t)
        span = hi - lo or 1.0
        grid = np.linspace(lo - 0.05 * span, hi + 0.05 * span, 400)
        ax.plot(grid, dist.pdf(grid), color="0.3", label=f"null: {label}")
        right = grid[grid >= t]
        if right.size:
            ax.fill_between(right, dist.pdf(right), color="C3", alpha=0.3,
                            label="P(T >= observed)")
    ax.axvline(t, color="C3", linewidth=2, label=f"observed {res.statistic_name}")
    floor = res.method.pvalue_floor(res)
    ax.text(0.98, 0.95, f"p-value {format_pvalue(res.pvalue, floor=floor)}",
            transform=ax.transAxes, ha="right", va="top")
    ax.set_xlabel(res.statistic_name)
    ax.set_ylabel("density")
    ax.set_title(res.title)
    ax.legend(loc="center right", fontsize="small")
    return ax


def _grid(points: np.ndarray, num: int) -> np.ndarray:
    lo, hi = float(np.min(points)), float(np.max(points))
    pad = 0.1 * (hi - lo or 1.0)
    return np.linspace(lo - pad, hi + pad, num)


def plot_witness(res: KernelTestResult, ax: Any = None, features: Sequence[int] | None = None,
                 num: int = 200) -> Any:
    """The witness function (see :meth:`TwoSampleResult.plot_witness`)."""
    w = res._witness_object()
    if isinstance(w, MMDWitness):
        return _plot_mmd_witness(res, w, ax, features, num)
    assert isinstance(w, HSICWitness)
    return _plot_hsic_witness(res, w, ax, features, num)


def _locations(res: KernelTestResult, key: str = "locations") -> np.ndarray | None:
    """The learned test locations of an interpretable test (None for the others)."""
    loc = res.details.get(key)
    return None if loc is None else np.asarray(loc)


def _top_features(res: KernelTestResult, d: int, k: int, features: Sequence[int] | None,
                  prefix: str | None = None) -> list[int]:
    if features is not None:
        out = [int(j) for j in features]
        if not out or any(not 0 <= j < d for j in out):
            raise ValueError(f"`features` must be column numbers in [0, {d}); got "
                             f"{list(features)!r}.")
        return out
    if d <= k:
        return list(range(d))
    table = res.relevance()
    rows = table.sort_values("rank")
    role = "x" if prefix is None else prefix.rstrip("[")
    position = {f: j for j, f in enumerate(res.feature_names(role, d))}
    return [position[f] for f in rows.index if f in position][:k]


def _plot_mmd_witness(res: KernelTestResult, w: Any, ax: Any,
                      features: Sequence[int] | None, num: int) -> Any:
    d = w.dim
    x, y = w.x, w.y
    names = res.feature_names("x", d)
    lx, ly = res.labels[0], res.labels[1]
    if d == 1 and features is None:
        ax = _axes(ax, "plot_witness()")
        t = _grid(w.z, num)
        ax.plot(t, w(t[:, None]), color="C0", label="witness mu_x - mu_y")
        ax.axhline(0.0, color="0.6", linewidth=0.8)
        bottom = ax.get_ylim()[0]
        ax.plot(x[:, 0], np.full(x.shape[0], bottom), "|", color="C1", markersize=10,
                label=lx)
        ax.plot(y[:, 0], np.full(y.shape[0], bottom), "|", color="C2", markersize=10,
                label=ly)
        locs = _locations(res)
        if locs is not None:
            ax.plot(locs[:, 0], w(locs), "*", color="k", markersize=12,
                    label="learned test locations")
        ax.set_xlabel(names[0] if res.columns.get("x") else "x")
        ax.set_ylabel("witness")
        ax.set_title(f"Witness of {res.statistic_name}")
        ax.legend(fontsize="small")
        return ax
    if d == 2 and features is None:
        ax = _axes(ax, "plot_witness()")
        g0, g1 = _grid(w.z[:, 0], num // 2), _grid(w.z[:, 1], num // 2)
        G0, G1 = np.meshgrid(g0, g1)
        W = w(np.column_stack([G0.ravel(), G1.ravel()])).reshape(G0.shape)
        lim = float(np.max(np.abs(W))) or 1.0
        mesh = ax.pcolormesh(G0, G1, W, cmap="RdBu_r", vmin=-lim, vmax=lim, shading="auto")
        ax.figure.colorbar(mesh, ax=ax, label="witness mu_x - mu_y")
        ax.scatter(x[:, 0], x[:, 1], s=10, marker="o", color="C1", label=lx)
        ax.scatter(y[:, 0], y[:, 1], s=12, marker="x", color="C2", label=ly)
        locs = _locations(res)
        if locs is not None:
            ax.scatter(locs[:, 0], locs[:, 1], s=150, marker="*", color="k",
                       label="learned test locations")
        ax.set_xlabel(names[0])
        ax.set_ylabel(names[1])
        ax.set_title(f"Witness of {res.statistic_name}")
        ax.legend(fontsize="small")
        return ax
    cols = _top_features(res, d, 3, features)
    if ax is None:
        _, axs = pyplot("plot_witness()").subplots(1, len(cols), squeeze=False,
                                                   figsize=(4 * len(cols), 3.5),
                                                   layout="constrained")
        axs = axs[0]
    else:
        axs = np.atleast_1d(np.asarray(ax, dtype=object))
        if axs.size != len(cols):
            raise ValueError(f"`ax` must hold {len(cols)} Axes, one per feature; got "
                             f"{axs.size}.")
    wx, wy = w(x), w(y)
    locs = _locations(res)
    for a, j in zip(axs, cols):
        a.scatter(x[:, j], wx, s=8, color="C1", label=lx)
        a.scatter(y[:, j], wy, s=8, marker="x", color="C2", label=ly)
        if locs is not None:  # the learned locations, at their witness values
            a.scatter(locs[:, j], w(locs), s=150, marker="*", color="k",
                      label="learned test locations")
        a.axhline(0.0, color="0.6", linewidth=0.8)
        a.set_xlabel(names[j])
        a.set_ylabel("witness at the data")
    axs[0].set_title(f"Witness of {res.statistic_name}", loc="left")
    axs[0].legend(fontsize="small")
    return axs


def _plot_hsic_witness(res: KernelTestResult, w: Any, ax: Any,
                       features: Sequence[int] | None, num: int) -> Any:
    dx, dy = w.dims
    ax = _axes(ax, "plot_witness()")
    if dx == 1 and dy == 1 and features is None:
        s, t = _grid(w.x, num // 2), _grid(w.y, num // 2)
        W = w.grid(s[:, None], t[:, None]).T  # rows: y, columns: x
        lim = float(np.max(np.abs(W))) or 1.0
        mesh = ax.pcolormesh(s, t, W, cmap="RdBu_r", vmin=-lim, vmax=lim, shading="auto")
        ax.figure.colorbar(mesh, ax=ax, label="witness mu_xy - mu_x mu_y")
        ax.scatter(w.x[:, 0], w.y[:, 0], s=8, color="k", label="(x, y) pairs")
        locs, locs_y = _locations(res), _locations(res, "locations_y")
        if locs is not None and locs_y is not None:
            ax.scatter(locs[:, 0], locs_y[:, 0], s=150, marker="*", color="gold",
                       edgecolors="k", label="learned test locations")
        ax.set_xlabel(res.feature_names("x", 1)[0] if res.columns.get("x") else res.labels[0])
        ax.set_ylabel(res.feature_names("y", 1)[0] if res.columns.get("y") else res.labels[1])
    else:
        if features is not None:
            if len(features) != 2:
                raise ValueError("`features` of an independence test's witness are two "
                                 "column numbers: one of x, one of y.")
            jx, jy = (int(f) for f in features)
            if not (0 <= jx < dx and 0 <= jy < dy):
                raise ValueError(f"`features` must be a column of x (< {dx}) and one of y "
                                 f"(< {dy}); got {list(features)!r}.")
        else:
            jx = _top_features(res, dx, 1, None, "x[")[0] if dx > 1 else 0
            jy = _top_features(res, dy, 1, None, "y[")[0] if dy > 1 else 0
        vals = w(w.x, w.y)
        lim = float(np.max(np.abs(vals))) or 1.0
        sc = ax.scatter(w.x[:, jx], w.y[:, jy], c=vals, cmap="RdBu_r", vmin=-lim, vmax=lim,
                        s=14)
        ax.figure.colorbar(sc, ax=ax, label="witness at the observed pairs")
        ax.set_xlabel(res.feature_names("x", dx)[jx])
        ax.set_ylabel(res.feature_names("y", dy)[jy])
    ax.set_title(f"Witness of {res.statistic_name}")
    return ax


def plot_pvalue_qq(pvalues: Mapping[str, np.ndarray], ax: Any = None, level: float = 0.95,
                   title: str = "p-values under the null") -> Any:
    """QQ plot of p-values against the uniform distribution, with a pointwise band.

    Each entry of `pvalues` (label -> p-values) is drawn as its sorted values
    against the expected uniform order statistics ``i / (m + 1)``; the band is
    the central `level` interval of the uniform order statistics
    (``Beta(i, m + 1 - i)``) for the largest ``m``.
    """
    from scipy import stats

    ax = _axes(ax, "plot_qq()")
    m_max = 0
    for label, p in pvalues.items():
        p = np.sort(np.asarray(p, dtype=np.float64))
        m = p.size
        if m == 0:
            continue
        m_max = max(m_max, m)
        ax.plot(np.arange(1, m + 1) / (m + 1), p, marker=".", linestyle="-", label=label)
    if m_max == 0:
        raise ValueError("no p-values to draw.")
    i = np.arange(1, m_max + 1)
    lo = stats.beta.ppf((1 - level) / 2, i, m_max + 1 - i)
    hi = stats.beta.ppf((1 + level) / 2, i, m_max + 1 - i)
    ax.fill_between(i / (m_max + 1), lo, hi, color="0.85",
                    label=f"{100 * level:g}% band (uniform, m = {m_max})")
    ax.plot([0, 1], [0, 1], color="0.4", linewidth=0.8)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("uniform quantile")
    ax.set_ylabel("p-value")
    ax.set_title(title)
    ax.legend(fontsize="small")
    return ax
