"""kmtests.causal.pc: the tests of each depth of PC's skeleton side by side (joblib).

The graph and every p-value are those of causal-learn's sequential ``pc`` with the
kmtests test; causal-learn itself runs no test (every question was in a batch).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("causallearn")
# imported at collection (several seconds on a busy machine), not inside the first test
pytest.importorskip("causallearn.search.ConstraintBased.PC")
pytest.importorskip("causallearn.utils.PCUtils.SkeletonDiscovery")

from kmtests.causal import pc, register_causallearn, skeleton_questions  # noqa: E402


def _data(n: int, seed: int) -> np.ndarray:
    gen = np.random.default_rng(seed)
    a = gen.normal(size=n)
    b = np.tanh(2 * a) + 0.3 * gen.normal(size=n)
    c = gen.normal(size=n)
    d = np.sin(b) + 0.5 * c + 0.3 * gen.normal(size=n)  # a -> b -> d <- c
    return np.column_stack([a, b, c, d])


def _sequential(data: np.ndarray) -> object:
    from causallearn.search.ConstraintBased.PC import pc as causallearn_pc

    return causallearn_pc(data, 0.05, register_causallearn(), show_progress=False)


def _check_same(cg: object, ref: object) -> None:
    assert np.array_equal(cg.G.graph, ref.G.graph)  # type: ignore[attr-defined]
    ref_p = {k: v for k, v in ref.test.pvalue_cache.items()  # type: ignore[attr-defined]
             if k not in ("data_hash", "method_name", "parameters_hash")}
    got = cg.test.pvalue_cache  # type: ignore[attr-defined]
    assert ref_p and all(got[k] == v for k, v in ref_p.items())  # the same bits
    assert cg.test.n_tests == 0  # type: ignore[attr-defined]


def test_questions_are_causallearns() -> None:
    """The questions of a depth, as causal-learn's stable skeleton asks them (recorded)."""
    from causallearn.utils.PCUtils.SkeletonDiscovery import skeleton_discovery
    from causallearn.utils.cit import CIT

    data = _data(80, 1)
    asked: list[tuple[int, int, tuple[int, ...]]] = []
    test = CIT(data, "fisherz")
    real = test.__call__

    class Recorder:
        method = "fisherz"

        def __call__(self, x, y, S):  # type: ignore[no-untyped-def]
            asked.append((int(x), int(y), tuple(int(s) for s in S)))
            return real(x, y, S)

    skeleton_discovery(data, 0.05, Recorder(), stable=True, show_progress=False)  # type: ignore[arg-type]
    adj = ~np.eye(4, dtype=bool)
    want = skeleton_questions(adj, 0)
    assert asked[:len(want)] == want
    assert skeleton_questions(adj, 2)[0] == (0, 1, (2, 3))


def test_threads_give_the_sequential_graph_and_pvalues() -> None:
    from joblib import parallel_config

    data = _data(120, 2)
    ref = _sequential(data)
    with parallel_config(backend="threading"):
        cg = pc(data, 0.05, n_jobs=2)
    _check_same(cg, ref)


def test_refusals() -> None:
    with pytest.raises(TypeError, match="unknown option"):
        pc(_data(30, 0), 0.05, not_an_option=1)
    with pytest.raises(ValueError, match="alpha"):
        pc(_data(30, 0), 1.5)


@pytest.mark.slow
def test_worker_processes_give_the_sequential_graph_and_pvalues() -> None:
    """loky worker processes (one BLAS thread each) against the sequential run with one
    BLAS thread: the same graph and the same p-values, bit for bit."""
    from threadpoolctl import threadpool_limits

    data = _data(200, 3)
    with threadpool_limits(1):
        ref = _sequential(data)
    cg = pc(data, 0.05, n_jobs=2)
    _check_same(cg, ref)
