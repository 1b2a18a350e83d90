"""An aggregate of statistics computed on the same arrangements, combined into one test.

The members (kernel MMD/HSIC statistics, spectral-regularised statistics over a
lambda grid ...) are prepared once; every batch of arrangements is evaluated by
all of them (one column each), and the combination
(:mod:`kmtests.null.combine`: MMDAgg's min-p, MMD-FUSE) turns the columns into one
statistic and p-value with exact level. Members of an independence aggregate all
permute the same variable — the one the first member chooses from its Gram
matrices, symmetrically in the two variables — so that a row of the permutation
stream is one pairing for every member (each member choosing its own, as 0.2
did, made the combination's level inexact).
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import numpy as np

from .._guards import format_bytes
from ..engines import Engine, Requirements, Values
from ..engines._base import SharedSources
from ..estimators._rules import General
from ..kernels import shared_distances
from ._base import Prepared, Statistic

__all__ = ["over_grid", "Aggregate", "members_varying"]


def members_varying(attrs: list[dict[str, Any]]) -> list[str]:
    """What varies between the members, in words: ``"bandwidth from 0.24 to 6.6"``,
    ``"estimator kme, skmse"`` (the descriptive attributes of their columns)."""
    out = []
    keys = list(dict.fromkeys(k for a in attrs for k in a))
    for k in keys:
        vals = [a.get(k) for a in attrs]
        if len({repr(v) for v in vals}) < 2:
            continue
        present = [v for v in vals if v is not None]
        if present and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                           for v in present):
            lo, hi = min(present), max(present)
            out.append(f"{k} from {lo:.4g} to {hi:.4g}")
        else:
            out.append(f"{k} " + ", ".join(dict.fromkeys("-" if v is None else str(v)
                                                           for v in vals)))
    return out


def over_grid(statistic: Statistic, combination: Any) -> Statistic:
    """A regularised statistic over its lambdas: itself for one lambda, else its columns
    combined (the adaptive test: min-p with exact level, ``combination``)."""
    grid = getattr(statistic, "lams", None)
    if grid is not None and grid.size == 1:
        return statistic
    return Aggregate([statistic], combination)


class Aggregate(Statistic):
    """Several statistics combined into one test.

    Parameters
    ----------
    members : list of Statistic
        The statistics (each may have several columns, e.g. a lambda grid).
    combination : MinP or Fuse
        How the columns are combined (:mod:`kmtests.null.combine`).
    """

    name: ClassVar[str] = "aggregate"
    registered_as: ClassVar[tuple[str, ...] | None] = ()  # built by the aggregated faces

    def __init__(self, members: list[Statistic], combination: Any) -> None:
        if not members:
            raise ValueError("the collection is empty: give `estimators` and `statistics`, or "
                             "`filters`.")
        self.members = list(members)
        self.combination = combination
        self.estimator = members[0].estimator
        self.problem_kind = members[0].problem_kind  # type: ignore[misc]

    def label(self) -> str:
        return self.symbol or str(self.combination.label)

    def _combination_name(self) -> str:
        base = "MMD" if self.problem_kind == "two_sample" else "HSIC"
        return f"{base}Agg" if self.combination.name == "mmdagg" else f"{base}-FUSE"

    def family(self) -> str:
        if self.family_name:  # a named aggregate (KSDAgg)
            return self.family_name
        if len(self.members) == 1:  # one statistic over a lambda grid
            return f"{self.members[0].family()}, {self._combination_name()} over lam"
        return self._combination_name()

    def describe(self, prepared: Prepared) -> str:
        """What the number is: the combination of how many members, which statistics,
        and what varies between them."""
        parts = prepared.details.get("parts", [])
        names = list(dict.fromkeys(
            m.describe(p) for m, p in zip(self.members, parts)))
        what = " and ".join(names)
        varying = members_varying([attrs for _, attrs in prepared.columns])
        if varying:
            what += " with " + ", ".join(varying)
        n = prepared.width
        if self.combination.name == "mmdagg":
            return (f"{self.label()}, the weighted minimum of the permutation p-values of {n} "
                    f"members: {what} ({self._combination_name()})")
        return (f"{self.label()}, the soft maximum of {n} normalised members: {what} "
                f"({self._combination_name()})")

    def refusal_subject(self) -> str:
        return f"the aggregated test ({self.combination.name})"

    def estimator_advice(self, tuning: str) -> list[str]:
        # the faces of a collection take `estimators` (a list), not `estimator`
        if not any(m.uses_estimator and m.estimator.name != "kme" for m in self.members):
            return []
        return [("tuning='pooled' where the estimators allow it, " if tuning != "pooled"
                 else "") + "or fewer `estimators`"]

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        reqs = [m.requirements(problem, tuning) for m in self.members]
        kernels: dict[str, Any] = {}
        for i, r in enumerate(reqs):
            for role, k in r.kernels.items():
                kernels[role if i == 0 else f"{role} ({i + 1})"] = k
        gram = next((r.gram for r in reqs if r.gram), "")
        if not gram and self.combination.needs_norms:
            gram = ("MMD-FUSE's normalisers need (the Frobenius norm of each member's Gram "
                    "matrix)")
        return Requirements(reqs[0].scheme, kernels, gram=gram,
                            marginalized=next((r.marginalized for r in reqs if r.marginalized),
                                              ""),
                            pair_values=any(r.pair_values for r in reqs),
                            features=next((r.features for r in reqs if r.features), ""))

    def check(self, problem: Any, tuning: str) -> None:
        for m in self.members:
            m.check(problem, tuning)

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        parts = [m.memory(problem, engine, tuning, batch) for m in self.members]
        if len(parts) == 1:
            return parts[0]
        # plus the squared distances the members share while they are prepared
        need = float(sum(p[0] for p in parts)) + 8.0 * problem.n * problem.n

        return (need, f"the {len(parts)} members' matrices take {format_bytes(need)}",
                parts[0][2] + " Or aggregate fewer members.")

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        with shared_distances():  # a bandwidth grid computes the distances once
            return self._prepare(problem, engine, tuning, rng)

    def _prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        shared: Any = SharedSources(engine)  # members of one kernel share its Gram matrix
        preps = [self.members[0].prepare(problem, shared, tuning, rng)]
        # one orientation for the collection: the first member's (a function of its Gram
        # matrices, symmetric in x and y); every member then permutes the same variable,
        # so a row of the permutation stream is one pairing for all of them
        orientation = preps[0].details.get("orientation")
        for m in self.members[1:]:
            if orientation is not None and getattr(m, "orientation", "n/a") is None:
                m = copy.copy(m)
                m.orientation = orientation  # type: ignore[attr-defined]
            preps.append(m.prepare(problem, shared, tuning, rng))
        widths = [p.width for p in preps]

        def stacked(parts: list[Values], b: int) -> Values:
            return Values(np.hstack([np.asarray(v.stat).reshape(b, w)
                                     for v, w in zip(parts, widths)]),
                          np.hstack([np.asarray(v.scale).reshape(b, w)
                                     for v, w in zip(parts, widths)]))

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            return stacked([p.values(perms, n_jobs) for p in preps], perms.shape[0])

        def swap_values(rows: Any, n_jobs: int | None) -> Values:
            # each member from its pairs where it can, else from the arrangements
            return stacked([p.values(rows.perms, n_jobs) if p.swap_values is None
                            else p.swap_values(rows, n_jobs) for p in preps],
                           rows.signs.shape[0])

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return stacked([p.observed(n_jobs)[0] for p in preps], 1), {}

        norms = None
        if self.combination.needs_norms:
            if any(p.norms is None for p in preps):  # pragma: no cover - refused by the engine
                raise ValueError("MMD-FUSE needs every member's normaliser (engine='exact').")

            def norms() -> np.ndarray:
                return np.concatenate([np.asarray(p.norms(), dtype=np.float64).reshape(-1)
                                       for p in preps if p.norms is not None])

        notes = list(dict.fromkeys(n for p in preps for n in p.notes if n))
        first = preps[0]

        rule = next((p.rule for p in preps if isinstance(p.rule, General)), first.rule)
        what = "the MMD statistic" if problem.kind == "two_sample" else "the HSIC statistic"
        return Prepared(values=values, observed=observed, swap_values=swap_values,
                        kernels=first.kernels, what=what,
                        tuning=first.tuning, rule=rule, notes=notes,
                        engine_info=first.engine_info,
                        columns=[c for p in preps for c in p.columns], norms=norms,
                        combination=self.combination,
                        witness=("an aggregated test combines several statistics (kernels, "
                                 "bandwidths or lambdas), each with its own witness: run the "
                                 "test of the member of interest and ask its result"),
                        details={"widths": widths, "parts": preps,
                                 "whats": [p.what for p in preps for _ in range(p.width)]})
