"""The recipes of docs/developer.rst "Adding things", tried as a contributor would (issue 26):
each addition is made here, in the test, the way the recipe says, and what went wrong
before the plan refactor is checked not to go wrong again.

* a statistic that ignores an option it was given: tests/test_statistic_contract.py
  (``test_a_statistic_that_ignores_its_estimator_is_caught``);
* a one-sample problem in three pieces: tests/test_one_sample_problem.py;
* a null method that draws permutations is refused by the conditional problem, which
  owns the validity of its null — the method tests nothing about the problem's kind;
* an engine registered in the registry is an option of the command line with no edit of
  the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest
from scipy import stats

import kmtests
from kmtests.engines import ENGINES, Exact
from kmtests.null import METHODS, NullOutcome, PermutationMethod


@dataclass(frozen=True)
class NormalFittedToPermutations(PermutationMethod):
    """A new null method, as the recipe says (its module + the METHODS entry): a normal law
    fitted to the permuted statistics' mean and variance."""

    name: ClassVar[str] = "normal_fit"

    def run(self, prepared: Any, problem: Any, observed: Any, ctx: Any) -> NullOutcome:
        out = super().run(prepared, problem, observed, ctx)
        null = out.null_distribution
        assert null is not None
        t = float(np.asarray(observed.stat).reshape(-1)[0])
        p = float(stats.norm.sf(t, null.mean(), null.std(ddof=1)))
        return NullOutcome(p, null, False, out.n_resamples, out.count)


def _conditional_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gen = np.random.default_rng(0)
    z = gen.normal(size=40)
    return z + gen.normal(size=40), z + gen.normal(size=40), z


def test_a_new_null_method_is_refused_where_its_draws_break_the_null(monkeypatch):
    """0.2: the rule "full permutations break a conditional null" lived in
    PermutationMethod.check (``problem.kind == "conditional"``), so a new method that
    overrode ``check`` or did not inherit it ran an invalid conditional test."""
    monkeypatch.setitem(METHODS, "normal_fit", NormalFittedToPermutations)
    x, y, z = _conditional_data()
    with pytest.raises(ValueError, match="permutations that keep the conditional null"):
        kmtests.conditional_independence_test(x, y, z, method="normal_fit", n_resamples=99)
    # within strata of z the permutations keep the null: the new method runs
    res = kmtests.conditional_independence_test(x, y, z, strata=z > 0, method="normal_fit",
                                                n_resamples=99, rng=1)
    assert 0 < res.pvalue < 1
    # and on the two-sample problem, where every permutation keeps the null
    res = kmtests.two_sample_test(x[:, None], y[:, None] + 3, method="normal_fit",
                                  n_resamples=99, rng=1)
    assert res.pvalue < 0.01


class DelegatingEngine(Exact):
    """A new engine, as the recipe says (its module + the ENGINES entry): the in-memory one
    under another name."""

    name: ClassVar[str] = "delegating"


def test_a_registered_engine_is_a_command_line_choice(monkeypatch):
    """0.2: the command line's engine lists were typed by hand."""
    from kmtests.cli import _args

    monkeypatch.setitem(ENGINES, "delegating", DelegatingEngine)
    assert "delegating" in _args.engines("two_sample")
    assert "delegating" in _args.engines("independence")
    x, y = _conditional_data()[:2]
    res = kmtests.two_sample_test(x, y + 3, engine="delegating", n_resamples=99, rng=1)
    assert res.engine == "delegating" and res.pvalue < 0.05


def test_a_registered_statistic_is_a_command_line_choice(monkeypatch):
    """The statistic names of the command line are the registry's."""
    from kmtests.cli import _args
    from kmtests.statistics import STATISTICS, KernelMMD

    monkeypatch.setitem(STATISTICS, "my_mmd", (KernelMMD,))
    assert "my_mmd" in _args.statistics("two_sample")
    assert "my_mmd" not in _args.statistics("independence")
