"""The statistic contract: every registered statistic, on every problem it serves, through
the same checks (as tests/test_contract.py does for the estimators and
tests/test_null_contract.py for the null methods). A statistic added to the registry
(:data:`kmtests.statistics.STATISTICS`) is checked here without an edit:

(a) it runs: on the in-memory engine with permutations (for the conditional problem:
    within strata of a discrete z), a p-value in (0, 1] and a finite statistic;
(b) its result names what it used: the estimator the test was given (in the printed
    report too), or the KME for a statistic without one, and the kernel it was given;
(c) it uses what it declares: a different kernel, a different estimator (when it
    declares ``uses_estimator``) and a different value of each option it declares
    (``Statistic.keywords``) each change the statistic — an option it takes and then
    ignores fails here;
(d) it refuses what it does not use: every statistic option of the problem's face that
    it does not declare, and an estimator other than the KME when it has none, are a
    ``ValueError`` naming the keyword — never silently ignored.

:func:`contract_failures` is the check itself; ``test_a_statistic_that_ignores_...``
shows it catching a statistic that ignores what it was given.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, ClassVar, Mapping

import numpy as np
import pytest

import kmtests
from kmtests import _plan
from kmtests.estimators import KernelMeanEstimator
from kmtests.statistics import STATISTICS, KernelMMD, Statistic, statistic_class

#: the face of each problem
FACES: dict[str, Callable[..., Any]] = {
    "two_sample": kmtests.two_sample_test, "independence": kmtests.independence_test,
    "k_sample": kmtests.k_sample_test, "conditional": kmtests.conditional_independence_test,
    "joint": kmtests.joint_independence_test, "one_sample": kmtests.goodness_of_fit_test,
    "cross_dependence": kmtests.timeseries.cross_dependence_test,
    "conditional_two_sample": kmtests.conditional_two_sample_test}

#: a value other than the default for each option a statistic may declare, with the
#: options whose effect is not on the statistic's value (what they change instead)
OTHER_VALUE: dict[str, Any] = {
    "filter": "cutoff", "lam": 0.3, "covariance": "split", "split_size": 12,
    "block_size": 4, "n_locations": 2, "criterion": "loo", "bandwidth_z": 2.0,
    "augment": False, "max_lag": 2, "combine": "max", "levels": (-2, 1), "grid": [0.5, 1.5],
    "weights": "centred", "diagonals": 5, "z_transform": "normal_scores", "undersmooth": 10.0,
    "null_moments": "zhang"}
NO_EFFECT_ON_VALUE = {"cache": "a cache of z's decompositions: the same numbers, faster",
                      "propensity": "the null's relabellings (tests/test_conditional_two_sample.py)",
                      "clip": "the null's relabellings (tests/test_conditional_two_sample.py)",
                      "null_moments": "the gamma null's mean (tests/test_conditional.py: the "
                                   "p-value against loops)"}

#: the statistic names with a fixed value of an option (``split_size`` of SplitKCI is the
#: fraction of the sample its regressions are fitted on)
OTHER_VALUE_BY_NAME: dict[tuple[str, str], Any] = {("split", "split_size"): 0.3,
                                                   ("cmmd", "weights"): "uniform"}
#: options that configure another option's choice, compared with that choice alone
#: (``split_size`` of the regularised MMD: the held-out points of ``covariance="split"``)
REQUIRES: dict[tuple[str, str], dict[str, Any]] = {
    ("regularized", "split_size"): {"covariance": "split", "rng": 3}}

#: the kernel keyword of each problem's face, with another kernel
OTHER_KERNEL = {"two_sample": {"kernel": "laplacian"},
                "independence": {"kernel_x": "laplacian"},
                "k_sample": {"kernel": "laplacian"},
                "conditional": {"kernel_x": "laplacian"},
                "joint": {"kernels": "laplacian"},
                "one_sample": {"kernel": "gaussian"},
                "cross_dependence": {"kernel_x": "laplacian"},
                "conditional_two_sample": {"kernel_y": "laplacian"}}


def _data(kind: str) -> tuple[Any, ...]:
    gen = np.random.default_rng(7)
    if kind == "two_sample":
        return gen.normal(size=(40, 2)), gen.normal(0.6, size=(40, 2))
    if kind in ("independence", "cross_dependence"):
        x = gen.normal(size=(40, 2))
        return x, x[:, :1] ** 2 + gen.normal(size=(40, 1))
    if kind == "k_sample":
        return tuple(gen.normal(0.5 * g, size=(15, 2)) for g in range(3))
    if kind == "conditional":  # (the strata: the sign of z)
        z = gen.normal(size=48)
        x = np.sin(2 * z) + 0.5 * gen.normal(size=48)
        return x, x + z + 0.5 * gen.normal(size=48), z
    if kind == "one_sample":
        return (gen.standard_t(4, size=(40, 2)),)
    if kind == "conditional_two_sample":
        x1, x2 = gen.normal(size=30), gen.normal(0.5, size=30)
        return (x1, np.sin(2 * x1) + 0.2 * gen.normal(size=30), x2,
                np.cos(2 * x2) + 0.2 * gen.normal(size=30))
    x = gen.normal(size=40)
    return x, x ** 2 + gen.normal(size=40), gen.normal(size=40)


def _normal_score(t: np.ndarray) -> np.ndarray:
    return -t


def _run(kind: str, name: str | Statistic, **kw: Any) -> Any:
    """The test of `kind` computing `name` on the in-memory engine with permutations."""
    face = FACES[kind]
    opts: dict[str, Any] = dict(statistic=name, n_resamples=19, rng=3)
    params = inspect.signature(face).parameters
    if "method" in params:
        opts["method"] = "permutation"
    if kind == "conditional":
        opts["strata"] = _data(kind)[2] > 0
    if kind == "one_sample":
        opts["score"] = _normal_score
    if "engine" in params and "engine" not in kw:
        opts["engine"] = "exact"
    opts = {k: v for k, v in {**opts, **kw}.items() if k in params}
    if "statistic" not in params:
        opts.pop("statistic", None)
    return face(*_data(kind), **opts)


def _cells() -> list[tuple[str, str]]:
    return [(name, kind) for name, classes in STATISTICS.items() for cls in classes
            for kind in cls.serves()]


def _engine_for(cls: type[Statistic]) -> dict[str, Any]:
    """The linear-time statistics run on their own engine and null."""
    if cls.default_engine != "exact":
        return {"engine": cls.default_engine, "method": cls.default_method,
                "n_resamples": None, "rng": None}
    if cls.default_method not in ("permutation", "gamma"):  # pragma: no cover - none today
        return {"method": cls.default_method}
    return {}


def _value(res: Any) -> tuple[float, ...]:
    """The statistic, and an aggregated test's members' statistics (its own statistic, a
    minimum of p-values, can tie)."""
    return (res.statistic,) + tuple(m["statistic"] for m in getattr(res, "members", ()) or ())


def _refuses_kernel(run: Callable[..., Any], kind: str, name: str, kw: dict[str, Any]) -> bool:
    """Whether the statistic refuses another kernel (naming it): allowed, not ignoring."""
    try:
        run(kind, name, **kw)
    except ValueError as exc:
        return "kernel" in str(exc)
    return False


def _runs_and_names(run: Callable[..., Any], kind: str, name: str, cls: type[Statistic]
                    ) -> tuple[Any, dict[str, Any], list[str]]:
    """(a) and (b): the result on the in-memory engine with permutations (SplitKCI: its own
    null), the keywords it ran with, and what is wrong."""
    base_kw = _engine_for(cls)
    out: list[str] = []
    try:
        res = run(kind, name, **base_kw)
    except ValueError:  # no permutations for it (SplitKCI): its own null
        base_kw = {"method": cls.default_method, "strata": None, "n_resamples": None,
                   "rng": None}
        res = run(kind, name, **base_kw)
    if not (0 < res.pvalue <= 1 and np.isfinite(res.statistic)):
        out.append(f"(a) p = {res.pvalue}, statistic = {res.statistic}")
    if res.estimator.name != "kme":
        out.append(f"(b) the report names estimator {res.estimator.name!r}, not 'kme'")
    return res, base_kw, out


def _uses(run: Callable[..., Any], kind: str, name: str, cls: type[Statistic], res: Any,
          base_kw: dict[str, Any]) -> list[str]:
    """(b) and (c): a different kernel, estimator or declared option changes it, and the
    result names the kernel and estimator it was given."""
    out: list[str] = []
    kernel_kw = OTHER_KERNEL[kind]
    if not _refuses_kernel(run, kind, name, {**base_kw, **kernel_kw}):
        other = run(kind, name, **base_kw, **kernel_kw)
        role_kernels = list(other.kernels.values())
        other_name = next(iter(kernel_kw.values()))
        if not any(other_name in repr(k).lower() for k in role_kernels):
            out.append(f"(b) the report's kernels {role_kernels} do not name the "
                       f"{other_name} kernel the test was given")
        if _value(other) == _value(res):
            out.append(f"(c) {kernel_kw} does not change the statistic")
    if cls.uses_estimator:
        est = run(kind, name, **base_kw, estimator="bkmse")
        if est.estimator.name != "bkmse" or est.estimator.label not in " ".join(
                str(est).split()):
            out.append(f"(b) the report names estimator {est.estimator.name!r}, not 'bkmse'")
        if _value(est) == _value(res):
            out.append("(c) estimator='bkmse' does not change the statistic")
    for key in cls.keywords(name):
        if key in NO_EFFECT_ON_VALUE:
            continue
        value = OTHER_VALUE_BY_NAME.get((name, key), OTHER_VALUE[key])
        needs = REQUIRES.get((name, key), {})
        reference = run(kind, name, **base_kw, **needs) if needs else res
        changed = run(kind, name, **{**base_kw, **needs, key: value})
        if _value(changed) == _value(reference):
            out.append(f"(c) {key}={value!r} does not change the statistic")
    return out


def _refusals(run: Callable[..., Any], kind: str, name: str, cls: type[Statistic],
              base_kw: dict[str, Any]) -> list[str]:
    """(d): what it does not use is refused, naming the keyword."""
    out: list[str] = []
    params = inspect.signature(FACES[kind]).parameters
    unused = [(key, OTHER_VALUE.get(key, True)) for key in _plan.STATISTIC_OPTIONS
              if key in params and key not in cls.keywords(name)]
    if not cls.uses_estimator and "estimator" in params:
        unused.append(("estimator", "bkmse"))
    for key, value in unused:
        try:
            run(kind, name, **base_kw, **{key: value})
        except ValueError as exc:
            if f"`{key}`" not in str(exc) and str(value) not in str(exc):
                out.append(f"(d) {key} refused without naming it: {exc}")
        else:
            out.append(f"(d) {key}={value!r} was accepted and ignored")
    return out


def contract_failures(name: str, kind: str, run: Callable[..., Any] = _run,
                      cls: type[Statistic] | None = None) -> list[str]:
    """What the statistic registered as `name` for `kind` breaks of the contract (empty:
    nothing). `run(kind, name, **keywords)` runs the test."""
    cls = cls or statistic_class(name, kind)
    res, base_kw, out = _runs_and_names(run, kind, name, cls)
    return out + _uses(run, kind, name, cls, res, base_kw) + _refusals(run, kind, name, cls,
                                                                       base_kw)


@pytest.mark.parametrize("name, kind", _cells(), ids=lambda v: str(v))
def test_statistic_contract(name, kind):
    assert contract_failures(name, kind) == []


def test_every_registered_statistic_is_in_the_contract():
    """The cells come from the registry: every class serves a problem with a face."""
    classes = {c for cs in STATISTICS.values() for c in cs}
    assert classes == {statistic_class(n, k) for n, k in _cells()}
    assert {k for _, k in _cells()} <= set(FACES)


# -- the contract catches a statistic that ignores what it was given ------------------------------
class _IgnoresItsEstimator(KernelMMD):
    """An MMD that declares the estimator and ignores it (always the KME): the
    energy-distance slip of issue 26 (``estimator="skmse"`` silently ignored, the report
    saying ``KME()``)."""

    registered_as: ClassVar[tuple[str, ...]] = ()  # not in the registry

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        return cls(kernels["kernel"], kmtests.estimators.KME(), True)


def test_a_statistic_that_ignores_its_estimator_is_caught(monkeypatch):
    monkeypatch.setitem(STATISTICS, "unbiased", (_IgnoresItsEstimator,) + tuple(
        c for c in STATISTICS["unbiased"] if c is not KernelMMD))
    failures = contract_failures("unbiased", "two_sample")
    assert failures == ["(b) the report names estimator 'kme', not 'bkmse'",
                        "(c) estimator='bkmse' does not change the statistic"]


class _IgnoresTheKernel(KernelMMD):
    """An MMD that computes with the Gaussian kernel whatever kernel it was given."""

    registered_as: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        return cls(kmtests.kernels.resolve_kernel("gaussian"), estimator, True)


def test_a_statistic_that_ignores_its_kernel_is_caught(monkeypatch):
    monkeypatch.setitem(STATISTICS, "unbiased", (_IgnoresTheKernel,) + tuple(
        c for c in STATISTICS["unbiased"] if c is not KernelMMD))
    failures = contract_failures("unbiased", "two_sample")
    assert any("do not name the laplacian kernel" in f for f in failures)
    assert "(c) {'kernel': 'laplacian'} does not change the statistic" in failures


def test_split_size_without_the_split_covariance_is_refused():
    """Found by this contract: ``split_size`` of the regularised MMD configures the held-out
    points of ``covariance="split"``; with the pooled operator 0.2 ignored it silently."""
    x, y = _data("two_sample")
    with pytest.raises(ValueError, match="`split_size` configures covariance='split'"):
        kmtests.two_sample_test(x, y, statistic="regularized", split_size=12)



def test_every_statistic_names_itself_or_says_why():
    # label()/family() read `symbol`/`family_name` unless a statistic overrides them
    for cls in {c for cs in STATISTICS.values() for c in cs}:
        assert cls.symbol or cls.label is not Statistic.label, cls

    class _Bare(Statistic):
        def requirements(self, problem: Any, tuning: str) -> Any: ...
        def prepare(self, problem: Any, engine: Any, tuning: str, rng: Any) -> Any: ...

    with pytest.raises(NotImplementedError, match="sets no `symbol`"):
        _Bare().label()
    _Bare.symbol = "T"
    assert _Bare().label() == _Bare().family() == "T"


def test_a_statistic_registers_under_its_name_unless_it_says_otherwise(monkeypatch):
    from kmtests.statistics import _base

    monkeypatch.setattr(_base, "STATISTICS", dict(_base.STATISTICS))

    class _Named(KernelMMD):
        name = "named_demo"

    class _Aliased(KernelMMD):
        name = "aliased_demo"
        registered_as = ("alias_a", "alias_b")

    class _Base(KernelMMD):
        name = "base_demo"
        registered_as = ()

    class _Unnamed(KernelMMD):  # inherits a name: registers nothing new
        pass

    reg = _base.STATISTICS
    assert reg["named_demo"] == (_Named,)
    assert reg["alias_a"] == reg["alias_b"] == (_Aliased,) and "aliased_demo" not in reg
    assert "base_demo" not in reg and _Unnamed not in {c for cs in reg.values() for c in cs}
