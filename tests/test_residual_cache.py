"""The caches of the conditional tests' regressions (kmtests.statistics.residual_cache):
the same bits with and without them, shared work, bounded, emptied, keyed right."""

from __future__ import annotations

import numpy as np
import pytest

import kmtests.statistics.residual_cache as rc
from kmtests import conditional_independence_test as ci
from kmtests.causal import column_test
from kmtests.estimators import ConditionalMeanEmbedding
from kmtests.estimators.conditional import clear_cache
from kmtests.kernels import Gaussian


def _data(seed: int, n: int = 80) -> np.ndarray:
    gen = np.random.default_rng(seed)
    a = gen.normal(size=n)
    b = np.tanh(2 * a) + 0.4 * gen.normal(size=n)
    c = np.sin(2 * b) + 0.4 * gen.normal(size=n)
    d = 0.5 * a + c ** 2 + 0.4 * gen.normal(size=n)
    e = gen.normal(size=n)
    return np.column_stack([a, b, c, d, e])


#: questions as PC asks them: targets met again with the same and with other z, the same
#: z with other targets, x and y swapped
QUESTIONS = [(0, 2, [1]), (0, 3, [1]), (0, 3, [2]), (1, 3, [2]), (2, 4, [1]),
             (0, 4, [1]), (0, 3, [1, 2]), (3, 4, [1, 2])]

SETTINGS = [{}, {"criterion": "loo"}, {"lam": 1e-3}, {"lam": 1e-3, "bandwidth_z": 1.0},
            {"bandwidth_z": [0.5, 2.0]}, {"augment": False}, {"filter": "showalter"},
            {"bandwidth_z": "isotropic"}, {"bandwidth_z": "ard_each", "undersmooth": 3.0}]


def _answers(data: np.ndarray, settings: list[dict[str, object]] = SETTINGS,
             **options: object) -> list[tuple[float, float]]:
    out = []
    for kw in settings:
        for x, y, z in QUESTIONS:
            r = column_test(data, x, y, z, **kw, **options)
            out.append((float(r.statistic), float(r.pvalue)))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bit_identical_with_and_without_the_caches(seed: int) -> None:
    data = _data(seed)
    clear_cache()
    cached = _answers(data)
    again = _answers(data)  # everything from the caches now
    uncached = _answers(data, cache=False)
    assert cached == uncached
    assert again == uncached


def test_choice_cached_when_the_residuals_are_evicted(monkeypatch: pytest.MonkeyPatch) -> None:
    # room for one residual Gram matrix: the second meeting of a target rebuilds its
    # regression from the cached choice and the decomposition of the chosen kernel
    data = _data(3)
    monkeypatch.setattr(rc, "RESIDUAL_BYTES", data.shape[0] ** 2 * 8)
    clear_cache()
    first = _answers(data, SETTINGS[:2])
    second = _answers(data, SETTINGS[:2])
    assert first == second == _answers(data, SETTINGS[:2], cache=False)
    assert len(rc._RESIDUALS._items) == 1


def test_targets_shared_across_questions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each (target, z) is tuned once: 4 questions on one z, 4 distinct targets."""
    fits: list[int] = []
    original = ConditionalMeanEmbedding.fit

    def counted(self: ConditionalMeanEmbedding, *args: object, **kw: object) -> object:
        fits.append(1)
        return original(self, *args, **kw)

    monkeypatch.setattr(ConditionalMeanEmbedding, "fit", counted)
    data = _data(4)
    clear_cache()
    # targets: (0 | 1) and (3) ; (0 | 1) and (4) ; (2 | 1) and (3) ; (2 | 1) and (4)
    for x, y in [(0, 3), (0, 4), (2, 3), (2, 4)]:
        column_test(data, x, y, [1])
    assert len(fits) == 4
    fits.clear()
    for x, y in [(0, 3), (2, 4)]:
        column_test(data, x, y, [1], cache=False)
    assert len(fits) == 4


def test_ard_search_shared_across_questions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default on a 3-d z searches per-coordinate bandwidths for each target once."""
    import kmtests.statistics.kci as kci

    searches: list[int] = []
    original = kci.ard_bandwidths

    def counted(*args: object, **kw: object) -> object:
        searches.append(1)
        return original(*args, **kw)

    monkeypatch.setattr(kci, "ard_bandwidths", counted)
    data = _data(4)
    clear_cache()
    # targets: (0 | z) and (3 | z) as x, 3 and 0 as y: four searches; the third question
    # is answered from the caches
    for x, y in [(0, 3), (3, 0), (0, 3)]:
        column_test(data, x, y, [1, 2, 4])
    assert len(searches) == 4
    searches.clear()
    column_test(data, 0, 3, [1, 2, 4], cache=False)
    assert len(searches) == 2


def test_cached_residuals_are_read_only_and_cleared() -> None:
    data = _data(5)
    clear_cache()
    column_test(data, 0, 2, [1])
    assert len(rc._RESIDUALS._items) == 2
    for entry in rc._RESIDUALS._items.values():
        assert not entry.gram.flags.writeable
        with pytest.raises(ValueError):
            entry.gram[0, 0] = 1.0
    assert len(rc._SMALL._items) == 5  # 3 fitted kernels (x with z/2, y, z), 2 choices
    clear_cache()
    assert len(rc._RESIDUALS._items) == 0 and rc._RESIDUALS._bytes == 0
    assert len(rc._SMALL._items) == 0 and rc._SMALL._bytes == 0


def test_residual_cache_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _data(6)
    n = data.shape[0]
    monkeypatch.setattr(rc, "RESIDUAL_BYTES", 3 * n * n * 8)
    clear_cache()
    for x, y, z in QUESTIONS:
        column_test(data, x, y, z)
    assert len(rc._RESIDUALS._items) == 3
    assert rc._RESIDUALS._bytes == sum(v.nbytes for v in rc._RESIDUALS._items.values())
    assert rc._RESIDUALS._bytes <= 3 * n * n * 8


def test_keyed_by_blas_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Products computed under another number of BLAS threads (other bits) are not reused."""
    data = _data(7)
    clear_cache()
    column_test(data, 0, 2, [1])
    assert len(rc._RESIDUALS._items) == 2
    monkeypatch.setattr(rc, "blas_thread_counts", lambda: (99,))
    column_test(data, 0, 2, [1])
    assert len(rc._RESIDUALS._items) == 4


def test_user_kernels_not_cached() -> None:
    data = _data(8)

    def k(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d2 = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
        return np.exp(-d2 / 2.0)

    assert rc.cacheable(Gaussian(1.0)) and not rc.cacheable(k)
    clear_cache()
    r1 = ci(data[:, 0], data[:, 2], data[:, 1], kernel_y=k)
    r2 = ci(data[:, 0], data[:, 2], data[:, 1], kernel_y=k, cache=False)
    assert len(rc._RESIDUALS._items) == 0
    assert (r1.statistic, r1.pvalue) == (r2.statistic, r2.pvalue)
