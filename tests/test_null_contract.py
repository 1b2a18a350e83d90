"""The null-method contract: every permutation scheme and every registered null method,
through the same checks.

In the spirit of ``tests/test_contract.py`` (the estimator contract): the checks run
over the schemes of :mod:`kmtests.problems.schemes` and the registry
:data:`kmtests.null.METHODS`, so a scheme or method added without meeting the
contract fails here.

(a) Schemes: ``count(cap)`` is the number of rows ``enumerate()`` yields (None below
    it), ``enumerate()`` yields every distinct arrangement once with the identity
    first, ``random()`` rows are permutations, drawn from the stream whatever the batch
    (3 then 7 rows are the 10 rows of one draw).
(b) Applicability: every method against every statistic/engine combination the faces
    build either applies (a p-value in (0, 1]) or is refused with a ``ValueError``
    before any Gram matrix, tile or feature map is built. Which cells apply is derived
    from what the methods declare (``needs``, ``draws``), what the statistics offer on
    each engine and what the problems keep (``draws_kept``, ``null_methods``), with a
    short explicit list: the null laws of the kernel forms (gamma: MMD^2_b, HSIC_b with
    the KME, KCI; wild: MMD^2_u, MMD^2_b, HSIC_b with the KME, KCI; chi2: HSIC_b, KCI)
    and the conditional cells' lack of strata. A method that starts to apply, or
    stops, where its declarations say otherwise fails the table.
(c) Reproducibility: a seeded method gives the same p-value (and null distribution)
    for every `batch` on one thread, on two threads, and across runs.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import kmtests
from kmtests.engines import lowrank
from kmtests.engines.tiles import KernelTiles
from kmtests.kernels import Kernel
from kmtests.null import METHODS, WildBootstrap
from kmtests.problems.schemes import Pairing, Scheme, Split


# -- (a) schemes --------------------------------------------------------------------------------
SCHEMES = [Split(1, 1), Split(1, 3), Split(2, 3), Split(3, 3), Split(4, 2), Split(5, 5),
           Pairing(1), Pairing(2), Pairing(4), Pairing(6)]


def _concrete(cls):
    out = set()
    for sub in cls.__subclasses__():
        if not getattr(sub, "__abstractmethods__", None):
            out.add(sub)
        out |= _concrete(sub)
    return out


def _arrangement(scheme, row):
    """What the arrangement means: the set of points called x (split), or the pairing."""
    return frozenset(row[:scheme.n_x].tolist()) if isinstance(scheme, Split) else tuple(row)


def _size(scheme):
    return (math.comb(scheme.n, scheme.n_x) if isinstance(scheme, Split)
            else math.factorial(scheme.n))


def test_every_scheme_class_is_in_the_contract():
    """Every scheme class is in this contract or in the group contract of
    tests/test_schemes.py (strata, blocks, k samples, d variables)."""
    from tests.test_schemes import SCHEMES as GROUP_SCHEMES

    from kmtests.problems.conditional_two_sample import Relabelling

    covered = {type(s) for s in SCHEMES} | {type(s) for s in GROUP_SCHEMES.values()}
    # draws of group labels from a propensity, not permutations: their own contract
    # (tests/test_conditional_two_sample.py::test_relabellings_follow_the_propensity_...)
    covered |= {Relabelling}
    assert covered == _concrete(Scheme)


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_count_is_the_number_of_enumerated_rows(scheme):
    rows = list(scheme.enumerate())
    N = len(rows)
    assert N == _size(scheme)              # C(n, n_x) splits, n! pairings
    assert scheme.count(N) == N and scheme.count(10 ** 9) == N
    assert scheme.count(N - 1) is None     # above the cap: a Monte Carlo test


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_enumerate_yields_distinct_arrangements_identity_first(scheme):
    rows = np.array(list(scheme.enumerate()))
    assert rows.dtype == np.int64 and rows.shape == (_size(scheme), scheme.n)
    np.testing.assert_array_equal(rows[0], np.arange(scheme.n))
    np.testing.assert_array_equal(scheme.identity(), rows[:1])
    np.testing.assert_array_equal(np.sort(rows, axis=1), np.tile(np.arange(scheme.n),
                                                                 (len(rows), 1)))
    meaning = [_arrangement(scheme, r) for r in rows]
    assert len(set(meaning)) == len(meaning)  # no arrangement twice (a split is a set)


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_random_rows_are_permutations_from_the_stream(scheme):
    ten = scheme.random(np.random.default_rng(7), 10)
    gen = np.random.default_rng(7)
    three_then_seven = np.vstack([scheme.random(gen, 3), scheme.random(gen, 7)])
    np.testing.assert_array_equal(ten, three_then_seven)
    assert ten.dtype == np.int64 and ten.flags.c_contiguous and ten.shape == (10, scheme.n)
    np.testing.assert_array_equal(np.sort(ten, axis=1), np.tile(np.arange(scheme.n), (10, 1)))


@pytest.mark.parametrize("scheme", [Split(2, 3), Pairing(4)], ids=repr)
def test_random_arrangements_are_uniform(scheme):
    """Chi-square of 12000 draws over the C(5, 2) = 10 splits / 4! = 24 pairings."""
    rows = scheme.random(np.random.default_rng(11), 12000)
    index = {a: i for i, a in enumerate(_arrangement(scheme, r) for r in scheme.enumerate())}
    counts = np.bincount([index[_arrangement(scheme, r)] for r in rows], minlength=len(index))
    assert stats.chisquare(counts).pvalue > 1e-3, counts


def test_huge_schemes_are_counted_without_computing_them():
    assert Split(10 ** 6, 10 ** 6).count(10 ** 4) is None
    assert Pairing(21).count(10 ** 30) is None and Pairing(20).count(10 ** 30) == \
        math.factorial(20)


# -- (b) every method against every statistic and engine ----------------------------------------
TWO_SAMPLE_STATISTICS = {
    "MMD_u[kme]": dict(statistic="unbiased"),
    "MMD_b[kme]": dict(statistic="biased"),
    "MMD_u[skmse]": dict(estimator="skmse", statistic="unbiased"),
    "MMD_b[fkmse]": dict(estimator="fkmse", statistic="biased"),
    "regularized": dict(statistic="regularized", lam=0.1),
    "regularized-grid": dict(statistic="regularized"),
    "ME": dict(statistic="me", n_locations=2, split_size=5),
    "SCF": dict(statistic="scf", n_locations=1, split_size=5),
}
INDEPENDENCE_STATISTICS = {
    "HSIC_b[kme]": dict(statistic="biased"),
    "HSIC_u[kme]": dict(statistic="unbiased"),
    "NOCCO": dict(statistic="regularized", lam=0.1),
    "NOCCO-grid": dict(statistic="regularized"),
    "NFSIC": dict(statistic="fsic", n_locations=2, split_size=6),
}
#: the interpretable tests: their own features (the in-memory engine only), their own null
LEARNED = ("ME", "SCF", "NFSIC")
ENGINES = ["exact", "streamed", "nystrom", "rff"]
LINEAR_TIME = ["block", "linear"]   # engine names of two_sample_test for those statistics

#: the conditional and joint tests (in-memory engine only)
OTHER_STATISTICS = {"conditional": {"KCI": dict(statistic="kci"),
                                    "SplitKCI": dict(statistic="split")},
                    "joint": {"dHSIC": {}}}

CELLS = ([("two_sample", s, e) for s, e in itertools.product(TWO_SAMPLE_STATISTICS, ENGINES)]
         + [("two_sample", e, e) for e in LINEAR_TIME]
         + [("independence", s, e)
            for s, e in itertools.product(INDEPENDENCE_STATISTICS, ENGINES)]
         + [(p, s, "exact") for p, stats_ in OTHER_STATISTICS.items() for s in stats_])


def statistic_runs(problem, stat, engine):
    """The statistic/engine combinations the faces run (the engine contract)."""
    if problem in OTHER_STATISTICS:
        return engine == "exact"
    if stat in LINEAR_TIME:
        return True
    if problem == "independence" and engine == "streamed":
        return False  # not an engine of the independence test
    if stat in LEARNED:
        return engine == "exact"
    uniform_kme = stat in ("MMD_u[kme]", "MMD_b[kme]", "MMD_u[skmse]", "HSIC_b[kme]",
                           "HSIC_u[kme]")
    # the spectral estimators re-weight the points on the low-rank engines' features too
    spectral_lowrank = stat == "MMD_b[fkmse]" and engine in ("nystrom", "rff")
    return engine == "exact" or uniform_kme or spectral_lowrank


#: the null laws of the kernel forms (kmtests/statistics/forms.py): the statistics of this
#: table whose form has each law. These, and the problems' rules, are the only explicit
#: part of the table: the rest is derived from what the methods need and draw, what the
#: statistics offer on each engine and what the problems keep
FORM_LAWS = {"gamma": {"MMD_b[kme]", "HSIC_b[kme]", "KCI", "SplitKCI"},
             "wild": {"MMD_u[kme]", "MMD_b[kme]", "HSIC_b[kme]", "KCI"},
             "chi2": {"HSIC_b[kme]", "KCI", "SplitKCI"}}
#: the problem classes of the table's problems
PROBLEMS = {"two_sample": "kmtests.problems.data.TwoSampleProblem",
            "independence": "kmtests.problems.data.IndependenceProblem",
            "conditional": "kmtests.problems.conditional.ConditionalProblem",
            "joint": "kmtests.problems.joint.JointProblem"}


def _problem_class(problem):
    import importlib

    module, _, name = PROBLEMS[problem].rpartition(".")
    return getattr(importlib.import_module(module), name)


def _offers(problem, stat, engine):
    """What the statistic of a cell offers the null methods on its engine (the plan the face
    builds, nothing computed)."""
    from kmtests import _plan

    gen = np.random.default_rng(4)
    if problem == "conditional":
        face, data, kw = (kmtests.conditional_independence_test,
                          tuple(gen.normal(size=(30, 1)) for _ in range(3)),
                          dict(OTHER_STATISTICS[problem][stat]))
    elif problem == "joint":
        face, data, kw = (kmtests.joint_independence_test,
                          tuple(gen.normal(size=(20, 1)) for _ in range(3)), {})
    elif problem == "two_sample":
        face, data = kmtests.two_sample_test, (gen.normal(size=(10, 2)),) * 2
        kw = (dict(engine=stat) if stat in LINEAR_TIME
              else dict(TWO_SAMPLE_STATISTICS[stat], engine=engine))
    else:
        face, data = kmtests.independence_test, (gen.normal(size=(12, 1)),) * 2
        kw = dict(INDEPENDENCE_STATISTICS[stat], engine=engine)
    if engine in ("nystrom", "rff"):
        kw["n_features"] = 5
    plan = _plan.plan_of(face, *data, **kw)
    return plan.statistic.offers(plan.engine)


def method_applies(method, problem, stat, engine):
    """Derived: the statistic runs on the engine, the problem keeps what the method draws,
    the statistic offers what it needs, and its kernel form has the method's null law."""
    if not statistic_runs(problem, stat, engine):
        return False
    cls = _method_class(method, problem)
    pcls = _problem_class(problem)
    if pcls.null_methods is not None and method not in pcls.null_methods:
        return False
    if cls.draws not in pcls.draws_kept or cls.draws == "samples":  # no model to draw from
        return False
    if problem == "conditional" and cls.draws == "arrangements":  # these cells: no strata
        return False
    if cls.needs not in _offers(problem, stat, engine):
        return False
    return stat in FORM_LAWS[method] if cls.needs == "kernel_form" else True


def _method_class(name, problem):
    """The class a method name stands for in a problem (the joint test's gamma is dHSIC's)."""
    if problem == "joint" and name == "gamma":
        from kmtests.null import JointGammaMethod

        return JointGammaMethod
    return METHODS[name]


def _method_object(name, problem=None):
    cls = _method_class(name, problem)
    if problem == "conditional" and name == "gamma":  # KCI's gamma: its asymptotic moments
        return cls(moments="asymptotic")
    if problem == "conditional" and name == "wild":  # KCI's wild: Gaussian multipliers
        return cls(n_resamples=19, rng=0, process="gaussian")
    return cls(n_resamples=19, rng=0) if "n_resamples" in cls.test_options else cls()


def _method_keywords(name):
    cls = METHODS[name]
    return (dict(n_resamples=19, rng=0) if "n_resamples" in cls.test_options else {})


def _run(problem, stat, engine, **method):
    gen = np.random.default_rng(4)
    if problem == "conditional":
        x, y, z = gen.normal(size=(30, 1)), gen.normal(size=(30, 1)), gen.normal(size=(30, 1))
        return kmtests.conditional_independence_test(x, y, z, **OTHER_STATISTICS[problem][stat],
                                                     **method)
    if problem == "joint":
        x, y, z = gen.normal(size=(20, 1)), gen.normal(size=(20, 2)), gen.normal(size=(20, 1))
        return kmtests.joint_independence_test(x, y, z, **method)
    if problem == "two_sample":
        x, y = gen.normal(size=(10, 2)), gen.normal(size=(10, 2))
        if stat in LINEAR_TIME:
            return kmtests.two_sample_test(x, y, engine=stat, **method)
        kw = dict(TWO_SAMPLE_STATISTICS[stat], engine=engine)
        test = kmtests.two_sample_test
    else:
        x, y = gen.normal(size=(12, 1)), gen.normal(size=(12, 2))
        kw = dict(INDEPENDENCE_STATISTICS[stat], engine=engine)
        test = kmtests.independence_test
    if engine in ("nystrom", "rff"):
        kw["n_features"] = 5
    return test(x, y, **kw, **method)


class GramBuilt(Exception):
    pass


def test_every_registered_method_is_in_the_table():
    for name in METHODS:
        method_applies(name, "two_sample", "MMD_b[kme]", "exact")  # raises if unknown


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("problem, stat, engine", CELLS,
                         ids=[f"{p}-{s}-{e}" for p, s, e in CELLS])
def test_method_applies_or_is_refused_before_any_gram(problem, stat, engine, method,
                                                      monkeypatch):
    if method_applies(method, problem, stat, engine):
        for given in (dict(method=_method_object(method, problem)),
                      dict(method=method, **_method_keywords(method))):
            res = _run(problem, stat, engine, **given)
            assert 0.0 < res.pvalue <= 1.0, res.pvalue
            assert isinstance(res.method, _method_class(method, problem))
        return

    def boom(*a, **k):
        raise GramBuilt("a kernel matrix was built before the refusal")

    monkeypatch.setattr(Kernel, "centred_gram", boom)
    monkeypatch.setattr(KernelTiles, "__init__", boom)
    monkeypatch.setattr(lowrank, "feature_map", boom)
    for given in (dict(method=_method_object(method, problem)),
                  dict(method=method, **_method_keywords(method))):
        with pytest.raises((ValueError, TypeError)):
            _run(problem, stat, engine, **given)


#: methods whose cells that apply are problems of the tests (the Monte Carlo null: the
#: one-sample problem of tests/test_one_sample_problem.py, which checks it the same way)
ELSEWHERE = {"monte_carlo"}


def test_the_table_has_cells_of_both_kinds_for_every_method():
    for name in set(METHODS) - ELSEWHERE:
        outcomes = {method_applies(name, *cell) for cell in CELLS}
        assert outcomes == {True, False}, name


# -- (c) reproducibility ------------------------------------------------------------------------
REPRO = [("two_sample", "MMD_u[kme]", "exact"), ("two_sample", "MMD_b[kme]", "exact"),
         ("two_sample", "MMD_u[kme]", "nystrom"), ("two_sample", "block", "block"),
         ("independence", "HSIC_b[kme]", "exact"), ("independence", "NOCCO-grid", "exact"),
         ("two_sample", "ME", "exact"), ("independence", "NFSIC", "exact")]


@pytest.mark.parametrize("method", sorted(set(METHODS) - ELSEWHERE))
def test_seeded_pvalue_is_the_same_for_every_batch_thread_count_and_run(method):
    cls = METHODS[method]
    cells = [c for c in REPRO if method_applies(method, *c)]
    if method == "bootstrap":
        cells = [("joint", "dHSIC", "exact")]
    assert cells
    for cell in cells:
        if "batch" not in cls.test_options:  # gamma, normal: nothing random, no batches
            seed = {"rng": 3} if cell[1] in LEARNED else {}  # the training split's
            a, b = _run(*cell, method=cls(), **seed), _run(*cell, method=cls(), **seed)
            assert (a.statistic, a.pvalue) == (b.statistic, b.pvalue)
            with pytest.raises(ValueError, match="batch"):
                _run(*cell, method=method, batch=5)
            continue
        runs = {batch: _run(*cell, method=cls(n_resamples=300, rng=5, batch=batch, n_jobs=1))
                for batch in (None, 1, 7, 64, 128, 300)}
        ref = runs[None]
        again = _run(*cell, method=cls(n_resamples=300, rng=5, n_jobs=1))
        two = _run(*cell, method=cls(n_resamples=300, rng=5, n_jobs=2))
        for batch, res in list(runs.items()) + [("again", again)]:
            assert res.pvalue == ref.pvalue, (cell, batch)
            np.testing.assert_array_equal(res.null_distribution, ref.null_distribution)
        assert two.pvalue == ref.pvalue, cell
        other = _run(*cell, method=cls(n_resamples=300, rng=6, n_jobs=1))
        assert not np.array_equal(other.null_distribution, ref.null_distribution)  # seeded


def test_wild_bootstrap_draws_do_not_depend_on_the_batch_for_each_process():
    gen = np.random.default_rng(2)
    x = gen.normal(size=(40, 1))
    y = x + gen.normal(size=(40, 1))
    for process in ("rademacher", "ar"):
        kw = dict(n_resamples=333, rng=3, process=process, length=5.0)
        ref = kmtests.independence_test(x, y, method=WildBootstrap(**kw))
        for batch in (1, 200, 1000):
            res = kmtests.independence_test(x, y, method=WildBootstrap(batch=batch, **kw))
            np.testing.assert_array_equal(res.null_distribution, ref.null_distribution)



# -- the aggregated faces: calibrated by permutations only ----------------------------------------
AGGREGATED = {
    "two_sample": lambda x, y, **kw: kmtests.aggregated_two_sample_test(x, y, bandwidths=2,
                                                                        **kw),
    "independence": lambda x, y, **kw: kmtests.aggregated_independence_test(
        x, y, bandwidths_x=2, bandwidths_y=2, **kw),
}


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("problem", sorted(AGGREGATED))
def test_aggregated_faces_take_permutations_and_refuse_other_methods_before_any_gram(
        problem, method, monkeypatch):
    """The aggregated tests take any null method whose needs their combination meets (the
    value of every member on every arrangement: the permutations, and for two samples of
    equal size their swaps within pairs); any other method, as a
    name or an object, is refused by its own check (a ValueError) before a kernel matrix
    exists."""
    gen = np.random.default_rng(8)
    x, y = gen.normal(size=(10, 2)), gen.normal(size=(10, 2))
    if method == "permutation" or (method, problem) == ("swap", "two_sample"):
        res = AGGREGATED[problem](x, y, null=_method_object(method))
        assert 0.0 < res.pvalue <= 1.0
        return

    def boom(*a, **k):
        raise GramBuilt("a kernel matrix was built before the refusal")

    monkeypatch.setattr(Kernel, "centred_gram", boom)
    with pytest.raises(ValueError, match=f"method={method!r}|method '{method}'"):
        AGGREGATED[problem](x, y, null=_method_object(method))
    with pytest.raises(ValueError, match=f"method={method!r}|method '{method}'"):
        AGGREGATED[problem](x, y, method=method, **_method_keywords(method))


@pytest.mark.parametrize("combination", ["mmdagg", "fuse"])
def test_aggregated_seeded_pvalue_is_the_same_for_every_batch(combination):
    gen = np.random.default_rng(9)
    x, y = gen.normal(size=(14, 1)), gen.normal(size=(14, 2))
    runs = [AGGREGATED["independence"](x, y, combination=combination, n_resamples=250, rng=4,
                                       n_jobs=1, batch=batch) for batch in (None, 1, 9, 250)]
    for res in runs[1:]:
        assert res.pvalue == runs[0].pvalue and res.statistic == runs[0].statistic
        np.testing.assert_array_equal(res.null_distribution, runs[0].null_distribution)
