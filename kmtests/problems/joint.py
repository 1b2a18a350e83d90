"""The joint-independence problem: ``d`` variables observed together, row by row.

A :class:`JointProblem` holds ``d >= 2`` validated variables of ``n`` observations
each (each its data, or its Gram matrix), and the permutation scheme of the null
hypothesis of joint independence, :class:`~kmtests.problems.schemes.Independent`:
independent permutations of every variable but the first (a row of that scheme
holds the ``d - 1`` permutations one after another). It computes nothing.

pandas inputs are matched by index label, as paired variables are
(:mod:`kmtests.problems.data`): every variable is put in the first one's row
order, and different labels are an error.

Examples
--------
>>> import numpy as np
>>> from kmtests.problems.joint import joint_problem
>>> p = joint_problem([np.arange(5.0), np.ones((5, 2)), np.arange(5.0) ** 2])
>>> p.d, p.n, p.roles, p.dims
(3, 5, ('x1', 'x2', 'x3'), {'x1': 1, 'x2': 2, 'x3': 1})
>>> p.scheme
Independent(size=5, d=3)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from .._gram import check_symmetric
from .._validation import as_sample
from ..kernels import Kernel, Precomputed, resolve_kernel
from ._base import Problem
from .conventions import prepare_data
from .data import Variable, align_index, data_label
from .schemes import Independent, Scheme

__all__ = ["JointProblem", "joint_problem", "role_names"]


def _per_variable(value: Any, d: int, name: str, single: bool) -> list[Any]:
    """`value` for each of `d` variables: one for all (`single`), or a sequence of `d`."""
    if single:
        return [value] * d
    items = list(value)
    if len(items) != d:
        raise ValueError(f"`{name}` must be one value for all variables or one per variable "
                         f"({d}); got {len(items)}.")
    return items


def role_names(d: int) -> tuple[str, ...]:
    """The names of the variables in messages and reports: ``x1, ..., xd``."""
    return tuple(f"x{i + 1}" for i in range(d))


@dataclass(frozen=True, eq=False)
class JointProblem(Problem):
    """``d`` variables observed together (row ``i`` of each is observation ``i``).

    Attributes
    ----------
    variables : tuple of Variable
        Each variable's data (``(n, p_k)``), or its ``n x n`` Gram matrix.
    data_name : str
        The data for the report (R's ``data:`` line).
    """

    variables: tuple[Variable, ...]
    data_name: str = "x1, x2"
    #: what the input conventions did (observations left out by nan_policy='omit')
    notes: tuple[str, ...] = ()
    kind: ClassVar[str] = "joint"
    engine_scheme: ClassVar[str] = "independent"
    null_methods: ClassVar[tuple[str, ...] | None] = ("permutation", "bootstrap", "gamma")
    draws_kept: ClassVar[frozenset[str]] = frozenset({"arrangements", "resamples", "nothing"})

    @classmethod
    def kernels(cls, keywords: Mapping[str, Any], data: tuple[Any, ...]) -> dict[str, Kernel]:
        """One kernel per variable: `kernels` and `bandwidths` one for all variables, or a
        sequence of one per variable."""
        d = len(data)
        if d < 2:
            raise ValueError(f"joint independence needs at least 2 variables; got {d}.")
        kernels, bandwidths = keywords["kernels"], keywords["bandwidths"]
        ks = _per_variable(kernels, d, "kernels",
                           isinstance(kernels, (str, Kernel)) or callable(kernels))
        bws = _per_variable(bandwidths, d, "bandwidths",
                            bandwidths is None or isinstance(bandwidths, str)
                            or np.ndim(bandwidths) == 0)
        return {role: resolve_kernel(k, bw, name=f"kernels[{i}]",
                                     bandwidth_name=f"bandwidths[{i}]")
                for i, (role, k, bw) in enumerate(zip(role_names(d), ks, bws))}

    @classmethod
    def from_data(cls, data: tuple[Any, ...], kernels: Mapping[str, Any], *,
                  data_name: str | None, axis: Any, nan_policy: Any) -> "JointProblem":
        return joint_problem(data, precomputed=[isinstance(k, Precomputed)
                                                for k in kernels.values()],
                             data_name=data_name, axis=axis, nan_policy=nan_policy)

    @classmethod
    def default_statistic(cls, estimator: Any) -> str:
        return "dhsic"

    def refuses(self, method: Any) -> str | None:
        """A gamma approximation of another statistic's null is not dHSIC's."""
        if method.name == "gamma" and method.approximates != "dHSIC":
            return (f"{type(method).__name__} approximates the nulls of "
                    f"{method.approximates}; the gamma approximation of dHSIC is "
                    "method='gamma' (JointGammaMethod).")
        return super().refuses(method)

    @property
    def d(self) -> int:
        """The number of variables."""
        return len(self.variables)

    @property
    def n(self) -> int:
        """The number of observations (of every variable)."""
        return self.variables[0].n

    @property
    def roles(self) -> tuple[str, ...]:
        return role_names(self.d)

    @property
    def scheme(self) -> Scheme:
        return Independent(self.n, self.d)

    @property
    def sizes(self) -> dict[str, int]:
        return {"n": self.n, "d": self.d}

    @property
    def precomputed(self) -> bool:
        return any(v.data is None for v in self.variables)

    @property
    def dims(self) -> dict[str, int]:
        """Columns of each variable's data (0 for a Gram matrix)."""
        return {role: 0 if v.data is None else int(v.data.shape[1])
                for role, v in zip(self.roles, self.variables)}


def _variable(data: Any, role: str, precomputed: bool) -> Variable:
    if not precomputed:
        return Variable(as_sample(data, role))

    K = as_sample(data, role)
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"`{role}` has the kernel 'precomputed', so it must be a square "
                         f"symmetric Gram matrix; got shape {K.shape}.")
    return Variable(None, check_symmetric(K, f"`{role}` (kernel 'precomputed')"))


def _names(variables: Sequence[Any], roles: tuple[str, ...]) -> str:
    labels = [data_label(v, r) for v, r in zip(variables, roles)]
    return ", ".join(labels[:-1]) + " and " + labels[-1]


def joint_problem(variables: Sequence[Any], *, precomputed: Sequence[bool] | None = None,
                  data_name: str | None = None, axis: Any = 0, nan_policy: Any = "raise"
                  ) -> JointProblem:
    """Validate ``d >= 2`` variables (or their Gram matrices) into a :class:`JointProblem`.

    Parameters
    ----------
    variables : sequence of array_like
        Variable ``k`` is ``(n,)`` or ``(n, p_k)`` data, or its ``n x n`` Gram
        matrix where ``precomputed[k]`` is true.
    precomputed : sequence of bool, optional
        Which variables are given as Gram matrices (default: none).
    data_name : str, optional
        The data for the report (default: ``"x1, x2 and x3"``, or pandas names).
    axis, nan_policy
        The input conventions (:mod:`kmtests.problems.conventions`; ``"omit"`` leaves
        out an observation with a missing value in any variable).

    Raises
    ------
    ValueError
        Fewer than two variables, variables with different numbers of observations,
        fewer than 2 observations, pandas variables with different index labels,
        non-finite values, a non-square or non-symmetric Gram matrix.
    TypeError
        Non-numeric data.
    """
    variables = list(variables)
    d = len(variables)
    if d < 2:
        raise ValueError(f"joint independence needs at least 2 variables; got {d}.")
    flags = [False] * d if precomputed is None else [bool(p) for p in precomputed]
    if len(flags) != d:
        raise ValueError(f"`precomputed` must give one flag per variable ({d}); got "
                         f"{len(flags)}.")
    roles = role_names(d)
    variables, notes = prepare_data(variables, list(roles), axis=axis, nan_policy=nan_policy,
                                    paired=True, gram=flags, align=align_index)
    name = data_name or _names(variables, roles)
    if not any(flags):
        variables = [variables[0]] + [align_index(variables[0], v, (roles[0], r))
                                      for v, r in zip(variables[1:], roles[1:])]
    vs = tuple(_variable(v, r, p) for v, r, p in zip(variables, roles, flags))
    sizes = [v.n for v in vs]
    if len(set(sizes)) > 1:
        listed = ", ".join(f"{r}: {s}" for r, s in zip(roles, sizes))
        raise ValueError("every variable must have the same number of observations (row i "
                         f"of each is observation i); got {listed}.")
    return JointProblem(vs, name, tuple(notes))
