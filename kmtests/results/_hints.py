"""Notes that point at a likely mistake in the set-up of a test (issue 32).

A test can run without error and still answer a different question than the one asked:
a shrinkage estimator that shrank an embedding all the way to zero (statistic 0,
p-value 1, whatever the data), or a median bandwidth set by one column of data whose
columns are on very different scales (the narrow columns then hardly enter the kernel).
:func:`hints` turns these into notes of the result, each naming the fix.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

__all__ = ["SCALE_RATIO", "hints", "scale_hint", "shrinkage_hint"]

#: columns whose standard deviations differ by more than this factor get the scale hint
SCALE_RATIO = 100.0


def shrinkage_hint(params: Mapping[str, Mapping[str, Any]]) -> str | None:
    """A note when a uniform shrinkage estimator shrank an embedding to zero.

    Examples
    --------
    >>> print(shrinkage_hint({"x": {"shrinkage": 1.0}, "y": {"shrinkage": 0.2}}))
    the estimator shrank the embedding of x to zero (shrinkage 1): its statistic is 0 \
and the p-value 1 whatever the data. Each point is then far from the others at the \
kernel's bandwidth (a bandwidth much smaller than the distances between points): use \
bandwidth='median', or estimator='kme'
    """
    zero = [role for role, p in params.items()
            if isinstance(p, Mapping) and isinstance(p.get("shrinkage"), (int, float))
            and float(p["shrinkage"]) >= 1.0]
    if not zero:
        return None
    which = "the pooled sample" if zero == ["pooled"] else " and ".join(zero)
    return (f"the estimator shrank the embedding of {which} to zero (shrinkage 1): its "
            "statistic is 0 and the p-value 1 whatever the data. Each point is then far "
            "from the others at the kernel's bandwidth (a bandwidth much smaller than the "
            "distances between points): use bandwidth='median', or estimator='kme'")


def scale_hint(kernel: Any, data: np.ndarray | None, where: str,
               names: tuple[str, ...] = ()) -> str | None:
    """A note when one median bandwidth serves columns on very different scales.

    Only for an isotropic kernel (Gaussian, Laplacian) whose bandwidth came from the
    median heuristic, and data whose column standard deviations differ by more than
    :data:`SCALE_RATIO`.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.kernels import Gaussian
    >>> z = np.random.default_rng(0).normal(size=(50, 2)) * [1.0, 500.0]
    >>> note = scale_hint(Gaussian().fitted_to(z), z, "the pooled sample", ("a", "b"))
    >>> note.startswith("the columns of the pooled sample are on very different scales")
    True
    >>> print(note[note.index("(") + 1:note.index(")")])
    standard deviation 4.9e+02 for b, 0.93 for a
    """
    from ..kernels import _BandwidthKernel

    if (not isinstance(kernel, _BandwidthKernel) or kernel._vector
            or not str(kernel.bandwidth_rule).startswith("median") or data is None):
        return None
    z = np.asarray(data)
    if z.ndim != 2 or z.shape[1] < 2 or not np.issubdtype(z.dtype, np.number):
        return None
    top = np.max(np.abs(z), axis=0)
    top[~(top > 0)] = 1.0
    sd = np.std(z / top, axis=0) * top  # without overflow for data near 1e200
    live = np.flatnonzero(sd > 0)
    if live.size < 2:
        return None
    hi, lo = live[np.argmax(sd[live])], live[np.argmin(sd[live])]
    if sd[hi] <= SCALE_RATIO * sd[lo]:
        return None

    def col(j: int) -> str:
        return names[j] if len(names) == z.shape[1] else f"column {j}"

    bw = float(np.atleast_1d(kernel.bandwidth)[0])
    return (f"the columns of {where} are on very different scales (standard deviation "
            f"{sd[hi]:.2g} for {col(int(hi))}, {sd[lo]:.2g} for {col(int(lo))}): the median "
            f"bandwidth ({bw:.3g}) is set by the widest columns and the narrow ones hardly "
            "enter the kernel. Standardise the columns (each divided by its standard "
            "deviation), or use kernel='ard' (a median bandwidth per column)")


def hints(problem: Any, kernels: Mapping[str, Any],
          params: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The notes of :func:`shrinkage_hint` and :func:`scale_hint` for a test that ran."""
    # (the kernel Stein discrepancy notes a shrunk Stein embedding itself: its mean is near
    # zero whenever the sample fits the model, whatever the bandwidth)
    out = [shrinkage_hint(params) if getattr(problem, "kind", "") != "one_sample" else None]
    if getattr(problem, "kind", "") != "conditional":  # that test standardises its data
        columns = getattr(problem, "columns", {}) or {}
        data = {"kernel": getattr(problem, "z", None)}
        for role in ("x", "y"):
            var = getattr(problem, role, None)
            data[role] = getattr(var, "data", None)
        where = {"kernel": "the pooled sample", "x": "x", "y": "y"}
        for role, kern in kernels.items():
            if role in data:
                out.append(scale_hint(kern, data[role], where[role],
                                      tuple(columns.get("x" if role == "kernel" else role,
                                                        ()))))
    return [n for n in out if n]
