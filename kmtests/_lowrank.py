"""``engine="nystrom" | "rff"``: permutation tests of a low-rank approximate statistic.

The problem classes of the driver for :mod:`kmtests.engines.lowrank`. The
feature map is drawn once, from a child of the test's random generator
(:func:`feature_rng`), on the pooled sample (two-sample) or on each variable
(independence), so the permutations leave it unchanged: the p-value is an
exact permutation p-value *for the approximate statistic* (the MMD or HSIC
of the kernel ``Phi Phi'``), whose power approaches the exact test's as
`n_features` grows. Memory ``O(N (d + r))``; time ``O(N r (d + r))`` for the
features, then ``2 B N r`` flops (MMD) or ``2 B n r^2`` (HSIC) for ``B``
permutations. The KME and the estimators with uniform weights; no gamma
approximation, no precomputed kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _resampling
from ._driver import Prepared, identity, prepare_rule
from ._guards import format_bytes
from .engines import Values
from .estimators import KernelMeanEstimator
from .estimators._rules import Uniform
from .independence import _Independence
from .kernels import Kernel, Precomputed
from .null import NullMethod, PermutationMethod
from .twosample import _TwoSample

__all__ = ["DEFAULT_FEATURES", "LowRankIndependence", "LowRankTwoSample", "feature_rng",
           "lowrank_batch", "lowrank_independence", "lowrank_two_sample"]

#: the default number of features (landmarks or frequencies)
DEFAULT_FEATURES = 200

_LABEL = {"nystrom": "Nyström", "rff": "random Fourier"}


def feature_rng(rng: Any) -> np.random.Generator:
    """The generator of the features: a child of the test's `rng` (its stream, which
    draws the permutations, is left alone), so a given seed gives the same features
    and the same permutations."""
    from ._validation import check_rng

    return check_rng(rng).spawn(1)[0]


def _variable_rngs(gen: np.random.Generator, x: Any, y: Any
                   ) -> tuple[np.random.Generator, np.random.Generator]:
    """One generator per variable, assigned by the content of the data (not by the
    argument position), so ``independence_test(y, x)`` draws each variable's features
    as ``independence_test(x, y)`` does and the test does not depend on argument order."""
    import hashlib

    def key(a: Any) -> bytes:
        arr = np.ascontiguousarray(a, dtype=np.float64)
        return hashlib.sha256(repr(arr.shape).encode() + arr.tobytes()).digest()

    first, second = gen.spawn(2)
    return (first, second) if key(x) <= key(y) else (second, first)


def lowrank_batch(n: int, n_resamples: int) -> int:
    """Splits per batch of the MMD: whole chunks of the engine's products (a smaller
    batch pads its last chunk: wasted products), as many as take at most 10% of the
    available memory (at least 512 MB) as permutation indices and byte masks."""
    from ._guards import available_memory
    from .engines.lowrank import _CHUNK

    free = available_memory()
    budget = max(0.1 * (free if free is not None else 4e9), 512e6)
    chunks = max(1, int(budget // (17.0 * n * _CHUNK)))  # indices (2 copies) and mask
    return int(min(chunks * _CHUNK, -(-n_resamples // _CHUNK) * _CHUNK))


def _check_estimator(engine: str, est: KernelMeanEstimator) -> None:
    if not isinstance(est.rule(), Uniform):
        raise ValueError(
            f"engine={engine!r} runs the estimators with uniform weights (kme, skmse, bkmse, "
            f"...); {est.name!r} re-weights every point and needs the Gram matrix in memory "
            "(engine='exact').")


def _check_kernel(engine: str, kernel: Kernel, role: str = "kernel") -> None:
    if isinstance(kernel, Precomputed):
        raise ValueError(f"engine={engine!r} computes features from the data; with "
                         f"{role}='precomputed' the Gram matrix is given: use engine='exact'.")
    if engine == "rff":
        from .engines.lowrank import check_rff_kernel

        check_rff_kernel(kernel)


def _n_features(engine: str, n_features: int | None, n: int) -> tuple[int, str]:
    """The number of features and a note when Nyström's was clipped to the points."""
    r = DEFAULT_FEATURES if n_features is None else int(n_features)
    if engine == "nystrom" and r > n:
        return n, (f"n_features = {r} is more than the {n} points: every point is a "
                   "Nyström landmark")
    return r, ""


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def _info(engine: str, feats: list[Any]) -> str:
    """E.g. ``200 landmarks, rank 187, approximate statistic`` (x/y for HSIC)."""
    def joined(vals: list[int]) -> str:
        return str(vals[0]) if len(set(vals)) == 1 else "/".join(map(str, vals))

    what = "landmarks" if engine == "nystrom" else "features"
    each = " each" if len(feats) > 1 else ""
    return (f"{joined([f.n_features for f in feats])} {what}{each}, rank "
            f"{joined([f.rank for f in feats])}, approximate statistic")


def _approx_note(engine: str, stat: str) -> str:
    return (f"approximate statistic: {stat} of the {_LABEL[engine]} approximation of the "
            "kernel; the permutation p-value is exact for this statistic, not for the "
            "kernel's own")


def _tuning_check(engine: str, est: KernelMeanEstimator, tuning: str) -> None:
    rule = est.rule()
    if tuning == "pooled" and isinstance(rule, Uniform) and rule.fixed is None:
        raise ValueError(f"engine={engine!r} tunes the estimator on every permutation "
                         "(tuning='permutation'); tuning='pooled' needs the Gram matrix in "
                         "memory (engine='exact').")


def _no_gamma(engine: str) -> ValueError:
    return ValueError(f"engine={engine!r} computes permutation p-values; the gamma "
                      "approximation needs the moments of the in-memory Gram matrix "
                      "(engine='exact').")


@dataclass
class LowRankTwoSample(_TwoSample):
    """The two-sample test on a low-rank engine (uniform-weight estimators)."""

    engine: str = "nystrom"
    n_features: int = DEFAULT_FEATURES
    rng: Any = None
    engine_note: str = ""
    engine_info: str = ""

    def memory(self, method: NullMethod, tuning: str) -> tuple[float, str, str]:
        from .engines.lowrank import _CHUNK, _ROWS

        n, r = self.n, self.n_features
        d = 0 if self.z is None else self.z.shape[1]
        blocks = -(-n // _ROWS)
        need = (8.0 * n * (d + 2 * r + 8) + 8.0 * r * r * 3 + _CHUNK * n
                + 8.0 * _CHUNK * (2 * _ROWS + r * (blocks + 1)))
        if isinstance(method, PermutationMethod):
            need += 16.0 * method.n_resamples + 17.0 * n * (
                method.batch or lowrank_batch(n, method.n_resamples))
        return (need, f"the {self.engine} engine's {r} features of {n} points take "
                      f"{format_bytes(need)}",
                "Use fewer features (`n_features`) or test a random subsample.")

    def check_gamma(self) -> None:
        raise _no_gamma(self.engine)

    def plan(self, method: PermutationMethod) -> _resampling.PermutationPlan:
        batch = method.batch or lowrank_batch(self.n, method.n_resamples)
        return _resampling.plan_two_sample(self.n_x, self.n_y, method.n_resamples, batch)

    def prepare(self, tuning: str) -> Prepared:
        from .engines.lowrank import FeaturePooled, feature_map, lowrank_mmd_values

        est = self.estimator
        assert self.z is not None
        _tuning_check(self.engine, est, tuning)
        kern = self.kernel.fitted_to(self.z, name="the pooled sample")
        if est.transform_kernel(kern, self.z) is not None:
            raise ValueError(f"engine={self.engine!r} does not run the marginalized "
                             f"estimator {est.name!r}; use engine='exact'.")
        feats = feature_map(self.engine, kern, self.z, self.n_features, feature_rng(self.rng))
        fp = FeaturePooled(feats)
        self.engine_info = _info(self.engine, [feats])
        self.engine_note = _join(self.engine_note,
                                 _approx_note(self.engine, self.statistic_name()))
        prep = prepare_rule(est, "permutation", lambda: np.empty((0, 0)), transformed=False)
        rule, n_x, unbiased = prep.rule, self.n_x, self.unbiased

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            return lowrank_mmd_values(fp, perms, n_x, rule, unbiased, n_jobs)

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return values(identity(self.n), n_jobs), {}

        def gamma(t: float, moments: str) -> tuple[float, dict[str, Any]]:
            raise _no_gamma(self.engine)

        return Prepared(values=values, observed=observed, gamma=gamma, prep=prep,
                        kernels={"kernel": kern}, params={},
                        what=f"{self.statistic_name()} with {kern.phrase()} "
                             f"({self.engine} approximation)")


@dataclass
class LowRankIndependence(_Independence):
    """The independence test on a low-rank engine (uniform-weight estimators)."""

    engine: str = "nystrom"
    n_features: int = DEFAULT_FEATURES
    rng: Any = None
    engine_note: str = ""
    engine_info: str = ""

    def memory(self, method: NullMethod, tuning: str) -> tuple[float, str, str]:
        n, r = self.n, self.n_features
        d = sum(0 if v.data is None else v.data.shape[1] for v in (self.x, self.y))
        need = 8.0 * n * (d + 3 * r + 4) + 8.0 * r * r * 4 + 8.0 * 8192 * r
        if isinstance(method, PermutationMethod):
            need += 16.0 * method.n_resamples + 8.0 * n * (method.batch or 1)
        return (need, f"the {self.engine} engine's {r} features of each variable ({n} points) "
                      f"take {format_bytes(need)}",
                "Use fewer features (`n_features`) or test a random subsample of the pairs.")

    def check_gamma(self) -> None:
        raise _no_gamma(self.engine)

    def prepare(self, tuning: str) -> Prepared:
        from .engines.lowrank import feature_map, lowrank_hsic_values, oriented

        est = self.estimator
        _tuning_check(self.engine, est, tuning)
        gens = _variable_rngs(feature_rng(self.rng), self.x.data, self.y.data)
        kernels: dict[str, Kernel] = {}
        feats = []
        for v, role, gen in ((self.x, "x", gens[0]), (self.y, "y", gens[1])):
            assert v.data is not None
            kern = v.kernel.fitted_to(v.data, name=role)
            if est.transform_kernel(kern, v.data) is not None:
                raise ValueError(f"engine={self.engine!r} does not run the marginalized "
                                 f"estimator {est.name!r}; use engine='exact'.")
            kernels[role] = kern
            feats.append(feature_map(self.engine, kern, v.data, self.n_features, gen))
        fx, fy = oriented(feats[0], feats[1])
        self.engine_info = _info(self.engine, feats)
        self.engine_note = _join(self.engine_note,
                                 _approx_note(self.engine, self.statistic_name()))
        prep = prepare_rule(est, "permutation", lambda: np.empty((0, 0)), transformed=False)
        rule, unbiased = prep.rule, self.unbiased

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            return lowrank_hsic_values(fx, fy, perms, rule, unbiased, n_jobs)

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return values(identity(self.n), n_jobs), {}

        def gamma(t: float, moments: str) -> tuple[float, dict[str, Any]]:
            raise _no_gamma(self.engine)

        kx, ky = kernels["x"], kernels["y"]
        return Prepared(values=values, observed=observed, gamma=gamma, prep=prep,
                        kernels=kernels, params={},
                        what=(f"{self.statistic_name()} with {kx.phrase()} on x and "
                              f"{ky.phrase()} on y ({self.engine} approximation)"))


def lowrank_two_sample(problem: _TwoSample, engine: str, n_features: int | None, rng: Any,
                       note: str = "") -> LowRankTwoSample:
    """`problem` on a low-rank engine, checked (see the module docs)."""
    _check_estimator(engine, problem.estimator)
    _check_kernel(engine, problem.kernel)
    r, clip = _n_features(engine, n_features, problem.n)
    return LowRankTwoSample(problem.kernel, problem.estimator, problem.unbiased, problem.z,
                            None, problem.n_x, problem.n_y, engine=engine, n_features=r,
                            rng=rng, engine_note=_join(note, clip))


def lowrank_independence(problem: _Independence, engine: str, n_features: int | None,
                         rng: Any, note: str = "") -> LowRankIndependence:
    """`problem` on a low-rank engine, checked (see the module docs)."""
    _check_estimator(engine, problem.estimator)
    _check_kernel(engine, problem.x.kernel, "kernel_x")
    _check_kernel(engine, problem.y.kernel, "kernel_y")
    r, clip = _n_features(engine, n_features, problem.n)
    return LowRankIndependence(problem.x, problem.y, problem.estimator, problem.unbiased,
                               problem.n, engine=engine, n_features=r, rng=rng,
                               engine_note=_join(note, clip))
