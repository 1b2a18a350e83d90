"""Problems: what is tested, by role, and the permutation scheme of its null hypothesis.

* :mod:`~kmtests.problems.schemes` — the schemes (:class:`Split`, :class:`Pairing`,
  :class:`KWay`, :class:`Within` strata, :class:`Blocks`, :class:`Independent`,
  :class:`Swaps` of pairs):
  ``count``, ``random``, ``enumerate``, all the permutation null method uses;
* :mod:`~kmtests.problems.data` — the validated data (:class:`TwoSampleProblem`,
  :class:`IndependenceProblem`); a problem computes nothing.
"""

from __future__ import annotations

from .data import IndependenceProblem as IndependenceProblem
from .data import TwoSampleProblem as TwoSampleProblem
from .data import Variable as Variable
from .data import data_label as data_label
from .data import independence_problem as independence_problem
from .data import two_sample_problem as two_sample_problem
from .data import KSampleProblem as KSampleProblem
from .lagged import CrossDependenceProblem as CrossDependenceProblem
from .schemes import Blocks as Blocks
from .schemes import Independent as Independent
from .schemes import KWay as KWay
from .schemes import Pairing as Pairing
from .schemes import Scheme as Scheme
from .schemes import Split as Split
from .schemes import Swaps as Swaps
from .schemes import Within as Within

__all__ = ["Blocks", "CrossDependenceProblem", "IndependenceProblem", "Independent", "KSampleProblem", "KWay", "Pairing",
           "Scheme", "Split", "Swaps", "TwoSampleProblem", "Variable", "Within", "data_label",
           "independence_problem", "two_sample_problem"]
