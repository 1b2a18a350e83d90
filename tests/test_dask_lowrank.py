"""engine='dask-rff': the low-rank MMD and HSIC on dask arrays (kmtests.scaleout).

Checked: the statistic equals engine='rff''s on the same data and seed (same features);
the chunkwise split draws are uniform over all splits (by enumeration); the p-value is
the same bits on the synchronous scheduler, dask's threads and a LocalCluster of one or
two workers; refusals name what to do; the level of both nulls under H0 (slow).
"""

from __future__ import annotations

import itertools
from math import comb
from typing import Any, Callable

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from kmtests import independence_test, two_sample_test  # noqa: E402
from kmtests.engines.dask_lowrank import chunk_subsets, split_counts  # noqa: E402
from kmtests.problems.data import content_key  # noqa: E402
from kmtests.scaleout import DaskNystrom, DaskRFF  # noqa: E402


def _sync() -> object:
    return dask.config.set(scheduler="synchronous")


def _samples(n: int, d: int, seed: int, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    return g.normal(size=(n, d)), g.normal(size=(n, d)) + shift


def _dask_and_local(x: np.ndarray, y: np.ndarray, chunks: tuple[int, int], engine: Any,
                    n_features: int, **options: Any) -> tuple[Any, Any]:
    """The test on dask arrays of `x`, `y` (synchronous scheduler) and engine='rff''s on
    the arrays themselves, with the same features and seed."""
    loc = two_sample_test(x, y, engine="rff", n_features=n_features,
                          **{**options, "n_resamples": 9})
    if isinstance(engine, str):
        options["n_features"] = n_features
    with _sync():
        res = two_sample_test(da.from_array(x, chunks=chunks[0]),
                              da.from_array(y, chunks=chunks[1]), engine=engine,
                              **options)
    return res, loc


def test_mmd_statistic_equals_local_rff() -> None:
    x, y = _samples(1500, 3, 0, 0.1)
    res, loc = _dask_and_local(x, y, (400, 700), DaskRFF(n_features=40, chunk_rows=512), 40,
                               bandwidth=1.7, rng=5, n_resamples=99)
    assert res.engine == "dask-rff" and res.statistic_name == "MMD^2_u"
    assert res.statistic == pytest.approx(loc.statistic, rel=1e-10)
    assert res.pvalue == 0.01  # a shift of 0.1 at n = 1500: far in the tail


@pytest.mark.parametrize("estimator,statistic", [("skmse", None), ("kme", "biased")])
def test_mmd_uniform_estimators_equal_local(estimator: str, statistic: str | None) -> None:
    x, y = _samples(600, 2, 1, 0.2)
    kw = dict(n_features=30, bandwidth=1.2, rng=2, estimator=estimator, statistic=statistic)
    loc = two_sample_test(x, y, engine="rff", n_resamples=9, **kw)  # type: ignore[arg-type]
    with _sync():
        res = two_sample_test(x, y, engine="dask-rff", n_resamples=19, **kw)  # type: ignore[arg-type]
    assert res.statistic_name == loc.statistic_name
    assert res.statistic == pytest.approx(loc.statistic, rel=1e-10)


def test_hsic_statistic_equals_local_rff() -> None:
    g = np.random.default_rng(3)
    x = g.normal(size=(1200, 2))
    y = 0.3 * x[:, :1] ** 2 + g.normal(size=(1200, 1))
    if content_key(x) > content_key(y):  # engine='rff' draws the first variable's by content
        x, y = y, x
    loc = independence_test(x, y, engine="rff", statistic="biased", n_features=25,
                            bandwidth_x=1.0, bandwidth_y=1.3, rng=4, n_resamples=9)
    with _sync():
        res = independence_test(x, y, engine=DaskRFF(n_features=25, chunk_rows=300),
                                bandwidth_x=1.0, bandwidth_y=1.3, rng=4, n_resamples=199)
    assert res.statistic == pytest.approx(loc.statistic, rel=1e-10)
    assert res.method.name == "chi2" and res.pvalue == 0.005


def test_chunkwise_splits_are_uniform_by_enumeration() -> None:
    """Every 3-subset of 6 points in chunks of 2, 2, 2 comes out with probability 1/20."""
    sizes, n_x, B = [2, 2, 2], 3, 10000
    counts = split_counts(sizes, n_x, B, np.random.default_rng(0))
    assert counts.shape == (B, 3) and np.all(counts.sum(axis=1) == n_x)
    seen = {s: 0 for s in itertools.combinations(range(6), n_x)}
    streams = [chunk_subsets(2, counts[:, c], np.random.SeedSequence([9, c])) for c in range(3)]
    for _ in range(B):
        rows = [int(i) + 2 * c for c in range(3) for i in next(streams[c])]
        seen[tuple(sorted(rows))] += 1
    freq = np.array(list(seen.values()), dtype=float)
    expected = B / comb(6, n_x)
    chi2 = float(((freq - expected) ** 2 / expected).sum())
    from scipy import stats

    assert stats.chi2.sf(chi2, len(seen) - 1) > 1e-4


def _quiet_cluster(test: Any) -> Any:
    """The warnings a LocalCluster's start and stop raise, ignored (not the test's)."""
    for what in ("DeprecationWarning", "ResourceWarning", "UserWarning",
                 "pytest.PytestUnraisableExceptionWarning"):
        test = pytest.mark.filterwarnings(f"ignore::{what}")(test)
    return test


def _bits_of(n: int, d: int, seed: int, shift: float, chunks: int, eng: Any, B: int,
             rng: int) -> Callable[[], tuple[float, float, bytes]]:
    """A seeded dask two-sample test on fixed data, as its statistic, p-value and null
    distribution's bytes."""
    x, y = _samples(n, d, seed, shift)
    xd, yd = da.from_array(x, chunks=chunks), da.from_array(y, chunks=chunks)

    def run() -> tuple[float, float, bytes]:
        res = two_sample_test(xd, yd, engine=eng, n_resamples=B, rng=rng)
        return res.statistic, res.pvalue, res.null_distribution.tobytes()

    return run


@_quiet_cluster
def test_pvalue_same_on_every_scheduler() -> None:
    """Synchronous, threads, and a LocalCluster of 1 and 2 workers: the same bits."""
    from dask.distributed import Client, LocalCluster

    run = _bits_of(1200, 2, 4, 0.05, 300, DaskRFF(n_features=20, chunk_rows=256), 99, 11)

    with _sync():
        ref = run()
    with dask.config.set(scheduler="threads"):
        assert run() == ref
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as lc, Client(lc):
        assert run() == ref
    with _sync():
        assert run() == ref  # and again: reproducible across runs


@pytest.mark.slow
@_quiet_cluster
def test_pvalue_same_on_worker_processes() -> None:
    """LocalClusters of 1 and 3 worker processes give the synchronous scheduler's bits."""
    from dask.distributed import Client, LocalCluster

    run = _bits_of(5000, 3, 9, 0.03, 1000, DaskRFF(n_features=30, chunk_rows=700), 199, 12)

    with _sync():
        ref = run()
    for workers in (1, 3):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as lc, Client(lc):
            assert run() == ref


def test_refusals_name_the_way_out() -> None:
    x, y = _samples(40, 2, 0)
    with pytest.raises(ValueError, match="do not take `n_jobs`"):
        two_sample_test(x, y, engine="dask-rff", n_jobs=2)
    with pytest.raises(ValueError, match="do not take `strata`"):
        two_sample_test(x, y, engine="dask-rff", strata=np.arange(80) % 2)
    with pytest.raises(ValueError, match="method='permutation'"):
        two_sample_test(x, y, engine="dask-rff", method="gamma")
    with pytest.raises(ValueError, match="engine='dask-nystrom'"):
        two_sample_test(x, y, engine="dask-rff", kernel="imq")
    assert "engine='nystrom'" in (DaskNystrom().supports(None) or "")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="uniform weights"):
        two_sample_test(x, y, engine="dask-rff", estimator="fkmse")
    with pytest.raises(ValueError, match="to the engine object"):
        two_sample_test(x, y, engine=DaskRFF(n_features=5), n_features=5)
    with pytest.raises(ValueError, match="statistic='biased'"):
        independence_test(x, y, engine="dask-rff", statistic="unbiased")
    with pytest.raises(ValueError, match="method='chi2'"):
        independence_test(x, y, engine="dask-rff", method="permutation")
    K = np.eye(80)
    with pytest.raises(ValueError, match="precomputed Gram matrix"):
        two_sample_test(K, 40, engine="dask-nystrom", kernel="precomputed")
    bad = x.copy()
    bad[3, 1] = np.nan
    with _sync(), pytest.raises(ValueError, match="NaN or infinite"):
        two_sample_test(bad, y, engine="dask-rff", n_resamples=9)


def test_median_bandwidth_from_rows_by_position() -> None:
    x, y = _samples(800, 2, 5)
    with _sync():
        res = two_sample_test(x, y, engine=DaskRFF(n_features=10, chunk_rows=256),
                              n_resamples=9, rng=0)
    assert any("drawn by position" in n for n in res.notes)
    # up to 1000 pooled rows, every row: engine='rff''s bandwidth
    small = _samples(300, 2, 6)
    with _sync():
        a = two_sample_test(*small, engine="dask-rff", n_features=10, n_resamples=9, rng=0)
    b = two_sample_test(*small, engine="rff", n_features=10, n_resamples=9, rng=0)
    assert a.kernels["kernel"].bandwidth == b.kernels["kernel"].bandwidth
    assert a.statistic == pytest.approx(b.statistic, rel=1e-10)


@pytest.mark.slow
def test_statistics_equal_local_at_1e5() -> None:
    """N = 10^5 (pooled) with 100 features: the dask statistic is engine='rff''s to 1e-10."""
    x, y = _samples(50000, 5, 7, 0.01)
    res, loc = _dask_and_local(x, y, (20000, 20000), "dask-rff", 100, bandwidth=2.0, rng=3,
                               n_resamples=9)
    assert res.statistic == pytest.approx(loc.statistic, rel=1e-10)
    g = np.random.default_rng(8)
    u = g.normal(size=(100000, 3))
    v = 0.05 * u[:, :2] ** 2 + g.normal(size=(100000, 2))
    if content_key(u) > content_key(v):
        u, v = v, u
    loc = independence_test(u, v, engine="rff", statistic="biased", n_features=60,
                            bandwidth_x=1.5, bandwidth_y=1.2, rng=3, n_resamples=9)
    with _sync():
        res = independence_test(da.from_array(u, chunks=30000), da.from_array(v, chunks=30000),
                                engine="dask-rff", n_features=60, bandwidth_x=1.5,
                                bandwidth_y=1.2, rng=3, n_resamples=9)
    assert res.statistic == pytest.approx(loc.statistic, rel=1e-10)


def _band(p: float, m: int) -> tuple[float, float]:
    from scipy import stats

    lo, hi = stats.binom.interval(0.999, m, p)
    return lo / m, hi / m


@pytest.mark.slow
def test_level_chunkwise_permutation_null() -> None:
    """H0, N = 600 pooled in 5 chunks of 128 (a partial last one), 300 data sets: the
    rejection rate at 5% and 10% lies in the 99.9% binomial band."""
    m, pv = 300, []
    eng = DaskRFF(n_features=20, chunk_rows=128)
    with _sync():
        for rep in range(m):
            x, y = _samples(300, 2, 1000 + rep)
            pv.append(two_sample_test(x, y, engine=eng, n_resamples=99,
                                      rng=rep).pvalue)
    p = np.array(pv)
    for alpha in (0.05, 0.10):
        lo, hi = _band(alpha, m)
        assert lo <= float(np.mean(p <= alpha)) <= hi


@pytest.mark.slow
def test_level_spectral_null_hsic() -> None:
    """H0, N = 2000 independent pairs, 300 data sets: the chi-square null's rejection rate
    at 5% and 10% lies in the 99.9% binomial band (approximate null; asymptotic)."""
    m, pv = 300, []
    eng = DaskRFF(n_features=20, chunk_rows=512)
    with _sync():
        for rep in range(m):
            g = np.random.default_rng(5000 + rep)
            x, y = g.normal(size=(2000, 2)), g.standard_t(4, size=(2000, 1))
            pv.append(independence_test(x, y, engine=eng, n_resamples=199, rng=rep).pvalue)
    p = np.array(pv)
    for alpha in (0.05, 0.10):
        lo, hi = _band(alpha, m)
        assert lo <= float(np.mean(p <= alpha)) <= hi


# -- engine="dask-nystrom" -------------------------------------------------------------------
def _mmd_u(K: np.ndarray, n_x: int) -> float:
    """MMD^2_u of a Gram matrix by its definition (brute force)."""
    n_y = K.shape[0] - n_x
    kxx, kyy, kxy = K[:n_x, :n_x], K[n_x:, n_x:], K[:n_x, n_x:]
    return float((kxx.sum() - np.trace(kxx)) / (n_x * (n_x - 1))
                 + (kyy.sum() - np.trace(kyy)) / (n_y * (n_y - 1)) - 2.0 * kxy.mean())


def test_nystrom_every_point_a_landmark_is_the_exact_statistic() -> None:
    x, y = _samples(140, 2, 21, 0.3)
    with _sync():
        res = two_sample_test(x, y[:120], engine=DaskNystrom(n_features=1000, chunk_rows=64),
                              bandwidth=1.3, n_resamples=19, rng=1)
        hs = independence_test(x[:120], y[:120], engine="dask-nystrom", n_features=500,
                               bandwidth_x=1.0, bandwidth_y=0.8, n_resamples=19, rng=1)
    exact = two_sample_test(x, y[:120], bandwidth=1.3, n_resamples=19, rng=1)
    assert res.statistic == pytest.approx(exact.statistic, rel=1e-10)
    assert res.engine == "dask-nystrom" and res.engine_info.startswith("260 landmarks")
    ref = independence_test(x[:120], y[:120], statistic="biased", bandwidth_x=1.0,
                            bandwidth_y=0.8, n_resamples=19, rng=1)
    assert hs.statistic == pytest.approx(ref.statistic, rel=1e-10)


def test_nystrom_against_a_numpy_reference() -> None:
    """m < N landmarks drawn by position from the child generator "features": the MMD^2_u
    of ``K_nL K_LL^+ K_Ln`` by its definition; and any kernel (here the IMQ)."""
    from kmtests._rng import child
    from kmtests.kernels import IMQ

    x, y = _samples(200, 3, 22, 0.2)
    z = np.vstack([x, y])
    kern = IMQ(bandwidth=1.5)
    with _sync():
        res = two_sample_test(x, y, engine=DaskNystrom(n_features=40, chunk_rows=96),
                              kernel="imq", bandwidth=1.5, n_resamples=19, rng=3)
    idx = np.sort(child(np.random.default_rng(3), "features").choice(400, 40, replace=False))
    s, U = np.linalg.eigh(kern.gram(z[idx]))
    keep = s > 1e-12 * s[-1]
    phi = kern.gram(z, z[idx]) @ (U[:, keep] / np.sqrt(s[keep]))
    assert res.statistic == pytest.approx(_mmd_u(phi @ phi.T, 200), rel=1e-9)
