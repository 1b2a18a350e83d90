"""A new problem in three pieces, as docs/developer.rst "Adding a problem" says: a one-sample
problem (is ``x`` a sample from a model we can draw from?), a statistic for it and its
face, all written here with no edit of the library, run by the Monte Carlo null
(:class:`kmtests.null.MonteCarloMethod`).

The statistic is the V-form ``MMD^2`` between ``x`` and a reference sample drawn once from
the model (the child ``"reference"`` of `rng`): given the reference, the data and fresh
draws of the model are exchangeable under the null, so the Monte Carlo p-value is exact.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar, Mapping

import numpy as np
import pytest
from scipy import stats

import kmtests
from kmtests import _plan
from kmtests._rng import child
from kmtests.engines import Engine, Requirements, Values
from kmtests.estimators import KME, KernelMeanEstimator
from kmtests.null import MonteCarloMethod
from kmtests.problems._base import Problem
from kmtests.statistics import STATISTICS, Prepared, Statistic


# -- 1. the problem ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, eq=False)
class OneSampleProblem(Problem):
    """A sample and a model to draw from (``sampler(gen, n) -> (n, d)``)."""

    x: np.ndarray
    sampler: Callable[[np.random.Generator, int], np.ndarray]
    reference: np.ndarray | None = None
    data_name: str = "x"
    notes: tuple[str, ...] = ()
    kind: ClassVar[str] = "one_sample_demo"
    precomputed: ClassVar[bool] = False

    @classmethod
    def from_data(cls, data: tuple[Any, ...], kernels: Mapping[str, Any], *,
                  data_name: str | None, axis: Any, nan_policy: Any) -> "OneSampleProblem":
        x, sampler = data
        return cls(np.asarray(x, dtype=float).reshape(len(x), -1), sampler)

    @classmethod
    def default_statistic(cls, estimator: Any) -> str:
        return "model_mmd"

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    @property
    def sizes(self) -> dict[str, int]:
        return {"n": self.n}

    @property
    def dims(self) -> dict[str, int]:
        return {"kernel": int(self.x.shape[1])}

    def with_sample(self, x: np.ndarray) -> "OneSampleProblem":
        return dataclasses.replace(self, x=np.asarray(x, dtype=float).reshape(len(x), -1))


# -- 2. the statistic ------------------------------------------------------------------------------
def _mmd_v(x: np.ndarray, r: np.ndarray, bw: float) -> float:
    def k(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.exp(-((a[:, None, :] - b[None, :, :]) ** 2).sum(-1) / (2 * bw * bw))
    return float(k(x, x).mean() + k(r, r).mean() - 2 * k(x, r).mean())


class ModelMMD(Statistic):
    """``MMD^2_b`` between the sample and a reference sample of the model."""

    registered_as: ClassVar[tuple[str, ...]] = ("model_mmd",)
    problem_kind: ClassVar[str] = "one_sample_demo"
    default_method: ClassVar[str] = "monte_carlo"
    options: ClassVar[tuple[str, ...]] = ()

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.estimator = KME()

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        return cls(kernels["kernel"])

    @classmethod
    def design(cls, name: str, problem: Any, kernels: dict[str, Any],
               options: dict[str, Any], rng: Any) -> tuple[Any, dict[str, Any]]:
        ref = problem.sampler(child(rng, "reference"), problem.n)
        ref = np.asarray(ref, dtype=float).reshape(problem.n, -1)
        # the bandwidth from the reference alone: the same for the data and every draw
        return (dataclasses.replace(problem, reference=ref),
                {"kernel": kernels["kernel"].fitted_to(ref, name="the reference sample")})

    def label(self) -> str:
        return "MMD^2_b(x, model)"

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        return Requirements(scheme="split", kernels={"kernel": self.kernel})

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        bw = float(self.kernel.bandwidth)
        t = _mmd_v(problem.x, problem.reference, bw)

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return Values(np.array([t]), np.array([1.0])), {}

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:  # pragma: no cover
            raise AssertionError("the one-sample problem has no arrangements")

        return Prepared(values, observed, {"kernel": self.kernel}, "MMD^2_b(x, model)")


#: the class registered itself by its ``registered_as``; taken out of the registry while the
#: other test modules run (their contracts cover the library's problems), put back for this
#: module's tests
_REGISTERED = STATISTICS.pop("model_mmd")


@pytest.fixture(autouse=True, scope="module")
def _registered():
    STATISTICS["model_mmd"] = _REGISTERED
    yield
    STATISTICS.pop("model_mmd")


# -- 3. the face -----------------------------------------------------------------------------------
@_plan.face(OneSampleProblem)
def one_sample_test(x: Any, sampler: Any, *, kernel: Any = "gaussian",
                    bandwidth: Any = "median", method: Any = None,
                    n_resamples: int | None = None, rng: Any = None, batch: int | None = None,
                    alternative: str = "greater") -> Any:
    """Is `x` a sample from the model `sampler` draws from?"""
    return _plan.run((x, sampler), locals())


def _normal(gen: np.random.Generator, n: int) -> np.ndarray:
    return gen.normal(size=(n, 1))


# -- the checks -----------------------------------------------------------------------------------
def test_the_new_statistic_registered_itself():
    assert _REGISTERED == (ModelMMD,) and STATISTICS["model_mmd"] == (ModelMMD,)


def test_pvalue_equals_a_literal_monte_carlo_test():
    """The same draws made by hand: (1 + #{T_b >= T}) / (1 + B)."""
    x = np.random.default_rng(1).normal(0.3, size=25)
    res = one_sample_test(x, _normal, n_resamples=49, rng=5)
    ref = _normal(child(5, "reference"), 25)
    bw = float(res.kernels["kernel"].bandwidth)  # the median heuristic on the reference
    assert bw == pytest.approx(kmtests.kernels.median_bandwidth(ref), rel=1e-12)
    t = _mmd_v(x[:, None], ref, bw)
    gen = np.random.default_rng(5)
    null = np.array([_mmd_v(_normal(gen, 25), ref, bw) for _ in range(49)])
    assert res.statistic == pytest.approx(t, rel=1e-12)
    np.testing.assert_allclose(res.null_distribution, null, rtol=1e-12)
    assert res.pvalue == (1 + np.sum(null >= t)) / 50
    assert "Monte Carlo p-value (based on 49 samples drawn from the model)" in " ".join(
        str(res).split())


def test_seeded_pvalue_does_not_depend_on_batch_threads_or_run():
    """The null contract's reproducibility check, for the Monte Carlo null."""
    x = np.random.default_rng(2).normal(size=20)
    a = one_sample_test(x, _normal, n_resamples=30, rng=3)
    for other in (one_sample_test(x, _normal, n_resamples=30, rng=3, batch=7),
                  one_sample_test(x, _normal, method=MonteCarloMethod(30, rng=3, n_jobs=2)),
                  one_sample_test(x, _normal, n_resamples=30, rng=3)):
        assert a.pvalue == other.pvalue
        assert np.array_equal(a.null_distribution, other.null_distribution)
    c = one_sample_test(x, _normal, n_resamples=30, rng=4)
    assert not np.array_equal(a.null_distribution, c.null_distribution)


def test_the_problem_judges_the_null_methods():
    x = np.random.default_rng(2).normal(size=20)
    with pytest.raises(ValueError, match="no rearrangement keeps the null of the "
                                         "one_sample_demo problem"):
        one_sample_test(x, _normal, method="permutation", rng=1)
    with pytest.raises(ValueError, match="the two_sample problem has no model to draw from"):
        kmtests.two_sample_test(x, x + 1, method="monte_carlo")


@pytest.mark.slow
def test_level_is_exact():
    """Under the null, P(p <= 0.05) = 1/20 exactly with B = 19: 400 data sets inside the
    binomial 99% band."""
    rejections = 0
    for i in range(400):
        x = np.random.default_rng(1000 + i).normal(size=15)
        rejections += one_sample_test(x, _normal, n_resamples=19, rng=i).pvalue <= 0.05
    lo, hi = stats.binom.ppf([0.005, 0.995], 400, 0.05)
    assert lo <= rejections <= hi


def test_power_against_a_shifted_model():
    x = np.random.default_rng(4).normal(1.0, size=40)
    assert one_sample_test(x, _normal, n_resamples=99, rng=1).pvalue <= 0.02
