"""kmtests.causal: the CI-test adapters for pgmpy's and causal-learn's PC.

The adapters must give the p-values of kmtests itself (in the canonical order of
the question), keep causal-learn's caching conventions, and let PC recover a small
known graph. pgmpy and causal-learn are optional: their tests skip without them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from kmtests import conditional_independence_test, independence_test
from kmtests.causal import PgmpyCITest, column_test, pgmpy_ci_test

#: a -> c <- b (a collider) and c -> d, nonlinear, additive noise
TRUE_DIRECTED = {("a", "c"), ("b", "c"), ("c", "d")}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    gen = np.random.default_rng(1)
    n = 300
    a = gen.normal(size=n)
    b = gen.normal(size=n)
    c = np.tanh(a) + np.sin(b) + 0.3 * gen.normal(size=n)
    d = np.tanh(c) + 0.3 * gen.normal(size=n)
    return pd.DataFrame({"a": a, "b": b, "c": c, "d": d})


def _col(df: pd.DataFrame, *names: str) -> np.ndarray:
    return df.loc[:, list(names)].to_numpy(dtype=float)


# --------------------------------------------------------------- the same p-values as kmtests

def test_column_test_is_the_kmtests_test(frame):
    res = column_test(frame, "a", "d", ["c"])
    direct = conditional_independence_test(_col(frame, "a"), _col(frame, "d"),
                                           _col(frame, "c"))
    assert res.pvalue == direct.pvalue and res.statistic == direct.statistic
    # options reach the conditional test
    res = column_test(frame, "a", "d", ["b", "c"], criterion="loo")
    direct = conditional_independence_test(_col(frame, "a"), _col(frame, "d"),
                                           _col(frame, "b", "c"), criterion="loo")
    assert res.pvalue == direct.pvalue
    # an empty conditioning set: HSIC with the gamma null, or the options given
    res = column_test(frame, "a", "b", [])
    direct = independence_test(_col(frame, "a"), _col(frame, "b"), method="gamma")
    assert res.pvalue == direct.pvalue and res.statistic == direct.statistic
    res = column_test(frame.to_numpy(), 0, 1, (),
                      unconditional={"method": "permutation", "n_resamples": 99, "rng": 3})
    direct = independence_test(_col(frame, "a"), _col(frame, "b"), n_resamples=99, rng=3)
    assert res.pvalue == direct.pvalue


def test_unknown_options_are_refused_before_any_test(frame):
    with pytest.raises(TypeError, match="conditional_independence_test: citerion"):
        PgmpyCITest(frame, citerion="loo")
    with pytest.raises(TypeError, match="independence_test in `unconditional`: lam_x"):
        column_test(frame, "a", "b", unconditional={"lam_x": 1.0})
    with pytest.raises(ValueError, match="two different columns"):
        pgmpy_ci_test("a", "b", ["a"], frame)


def test_pgmpy_adapters_give_the_kmtests_pvalue_in_canonical_order(frame):
    direct = conditional_independence_test(_col(frame, "a"), _col(frame, "d"),
                                           _col(frame, "b", "c"))
    # the question is put in the data's column order: x = a, y = d, z = (b, c)
    for X, Y, Z in (("a", "d", ["b", "c"]), ("d", "a", ("c", "b"))):
        stat, p = pgmpy_ci_test(X, Y, Z, frame, boolean=False)
        assert (stat, p) == (direct.statistic, direct.pvalue)
        assert pgmpy_ci_test(X, Y, Z, frame, significance_level=0.05) == (p >= 0.05)
    test = PgmpyCITest(frame)
    assert test.run_test("d", "a", ["c", "b"]) == (direct.statistic, direct.pvalue)
    assert test("a", "d", ["b", "c"], significance_level=0.05) == (direct.pvalue >= 0.05)
    assert test.p_value_ == direct.pvalue and test.effect_size_ == direct.statistic
    assert (test.n_tests, test.n_calls) == (1, 2)  # the second answer came from the cache
    assert test.result_ is not None and test.result_.pvalue == direct.pvalue
    uncached = PgmpyCITest(frame, use_cache=False)
    uncached.run_test("a", "d", ["b", "c"])
    uncached.run_test("d", "a", ["b", "c"])
    assert uncached.n_tests == 2 and uncached.p_value_ == direct.pvalue
    # `options`: for names that pgmpy's estimate() keeps for itself (n_jobs)
    stat, p = pgmpy_ci_test("a", "d", ["c"], frame, boolean=False, criterion="marglik",
                            options={"n_jobs": 1, "method": "wild", "rng": 0})
    assert p == conditional_independence_test(_col(frame, "a"), _col(frame, "d"),
                                              _col(frame, "c"), n_jobs=1, method="wild",
                                              rng=0, criterion="marglik").pvalue
    with pytest.raises(TypeError, match="significance_level"):
        pgmpy_ci_test("a", "b", [], frame)
    with pytest.raises(ValueError, match="another data set"):
        test("a", "b", [], data=frame.iloc[:100])
    # a copy of the data (what pgmpy.estimators.PC passes) is the data
    assert test("a", "d", ["b", "c"], 0.05, data=frame.copy(), boolean=False) == (
        direct.statistic, direct.pvalue)


def test_causallearn_test_keeps_its_conventions(frame, tmp_path):
    cit = pytest.importorskip("causallearn.utils.cit")
    from kmtests.causal import KmtestsCIT, register_causallearn

    assert issubclass(KmtestsCIT, cit.CIT_Base)
    assert register_causallearn() == "kmtests" and register_causallearn("kmtests") == "kmtests"
    data = frame.to_numpy()
    test = cit.CIT(data, "kmtests", criterion="loo")
    direct = conditional_independence_test(data[:, [0]], data[:, [3]], data[:, [1, 2]],
                                           criterion="loo")
    assert test(3, 0, (2, 1)) == direct.pvalue
    assert test(0, 3, [1, 2]) == direct.pvalue and test.n_tests == 1
    assert test.pvalue_cache["0;3|1.2"] == direct.pvalue
    assert test.statistics["0;3|1.2"] == direct.statistic
    assert test.method == "kmtests"
    marginal = independence_test(data[:, [0]], data[:, [1]], method="gamma")
    assert test(1, 0) == marginal.pvalue and "0;1" in test.pvalue_cache
    # causal-learn's JSON cache: written, read back, and refused for other options
    path = str(tmp_path / "pc" / "cache.json")
    first = KmtestsCIT(data, cache_path=path)
    first.SAVE_CACHE_CYCLE_SECONDS = 0
    p = first(0, 3, [2])
    first(0, 1)  # saving happens on the next call
    again = KmtestsCIT(data, cache_path=path)
    assert again(0, 3, [2]) == p and again.n_tests == 0
    with pytest.raises(ValueError, match="another test or other options"):
        KmtestsCIT(data, cache_path=path, method="wild", rng=0)
    with pytest.raises(TypeError, match="unknown option"):
        cit.CIT(data, "kmtests", kernel="laplace")
    # `method` is CIT's own argument: the null method goes in `options`
    wild = cit.CIT(data, "kmtests", options={"method": "wild", "rng": 0}, n_resamples=99)
    direct = conditional_independence_test(data[:, [0]], data[:, [3]], data[:, [2]],
                                           method="wild", rng=0, n_resamples=99)
    assert wild(0, 3, [2]) == direct.pvalue
    with pytest.raises(TypeError, match="given twice"):
        cit.CIT(data, "kmtests", options={"rng": 0}, rng=1)


# --------------------------------------------------------------------- PC recovers the graph

def test_causallearn_pc_recovers_the_graph(frame):
    pytest.importorskip("causallearn")
    from causallearn.search.ConstraintBased.PC import pc

    from kmtests.causal import register_causallearn

    cg = pc(frame.to_numpy(), 0.05, register_causallearn(), show_progress=False)
    g = cg.G.graph  # g[j, i] == 1 and g[i, j] == -1: i -> j
    names = list(frame.columns)
    edges = {(names[i], names[j]) for i in range(4) for j in range(4)
             if g[j, i] == 1 and g[i, j] == -1}
    undirected = {(names[i], names[j]) for i in range(4) for j in range(i + 1, 4)
                  if g[i, j] == -1 and g[j, i] == -1}
    assert edges == TRUE_DIRECTED and not undirected
    assert cg.test.n_tests == len(cg.test.pvalue_cache) - 3  # data_hash, method, parameters


def test_pgmpy_pc_recovers_the_graph(frame):
    pytest.importorskip("pgmpy")
    from pgmpy.causal_discovery import PC

    test = PgmpyCITest(frame)
    est = PC(ci_test=test, variant="stable", significance_level=0.05,
             show_progress=False).fit(frame)
    assert set(est.causal_graph_.directed_edges) == TRUE_DIRECTED
    assert not est.causal_graph_.undirected_edges
    assert test.n_tests == test.n_calls > 0
    # orient_rule="pvalue" reads p_value_ and effect_size_ after each call
    est = PC(ci_test=PgmpyCITest(frame), variant="stable", significance_level=0.05,
             orient_rule="pvalue", show_progress=False).fit(frame)
    assert set(est.causal_graph_.directed_edges) == TRUE_DIRECTED


def test_deprecated_pgmpy_pc_recovers_the_graph(frame):
    pytest.importorskip("pgmpy")
    with warnings.catch_warnings():  # pgmpy.estimators warns that it is deprecated
        warnings.simplefilter("ignore", FutureWarning)
        from pgmpy.estimators import PC

        for ci_test in (pgmpy_ci_test, PgmpyCITest(frame)):
            pdag = PC(frame).estimate(ci_test=ci_test, variant="stable",
                                      significance_level=0.05, show_progress=False)
            assert set(pdag.directed_edges) == TRUE_DIRECTED
        # options of estimate() reach the function's test
        skel, sep = PC(frame).estimate(ci_test=pgmpy_ci_test, variant="orig",
                                       significance_level=0.05, show_progress=False,
                                       return_type="skeleton", criterion="loo")
    assert {frozenset(e) for e in skel.edges()} == {frozenset(e) for e in TRUE_DIRECTED}
    assert set(sep[frozenset(("a", "d"))]) == {"c"}
