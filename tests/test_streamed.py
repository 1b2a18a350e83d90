"""engine="streamed": the exact MMD test without the Gram matrix in memory.

Checked against the in-memory engine (same statistics to rounding, same
p-values and null distributions for the same seed) over kernels, estimators,
both forms and tile layouts, and on a dask cluster through joblib.
"""

from __future__ import annotations

import numpy as np
import pytest

import kmtests
from kmtests.engines import streamed


@pytest.fixture
def small_tiles(monkeypatch):
    """Tiles of 64 points: many tiles (and a ragged last one) at small N."""
    monkeypatch.setattr(streamed, "TILE", 64)


def _data(seed=0, n_x=150, n_y=131, d=3, shift=0.25):
    gen = np.random.default_rng(seed)
    return gen.normal(size=(n_x, d)), gen.normal(size=(n_y, d)) + shift


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian", "linear", "polynomial", "distance"])
@pytest.mark.parametrize("estimator", ["kme", "skmse", "bkmse"])
@pytest.mark.parametrize("statistic", ["unbiased", "biased"])
def test_same_statistics_and_pvalue_as_in_memory(small_tiles, kernel, estimator, statistic):
    x, y = _data()
    kw = dict(kernel=kernel, estimator=estimator, statistic=statistic, n_resamples=199, rng=3)
    a = kmtests.two_sample_test(x, y, **kw)
    b = kmtests.two_sample_test(x, y, engine="streamed", **kw)
    assert b.engine == "streamed" and a.engine == "exact"
    scale = np.max(np.abs(a.null_distribution))
    np.testing.assert_allclose(b.statistic, a.statistic, rtol=1e-9, atol=1e-12 * scale)
    np.testing.assert_allclose(b.null_distribution, a.null_distribution, rtol=1e-9,
                               atol=1e-12 * scale)
    assert b.pvalue == a.pvalue


def test_default_tiles_several_blocks():
    """N = 2 x 2048 + 100: two full tiles and a ragged one with the production tile size."""
    x, y = _data(1, 2100, 2096, 2, 0.05)
    a = kmtests.two_sample_test(x, y, n_resamples=40, rng=5)
    b = kmtests.two_sample_test(x, y, n_resamples=40, rng=5, engine="streamed")
    np.testing.assert_allclose(b.null_distribution, a.null_distribution, rtol=1e-9)
    assert b.pvalue == a.pvalue


def test_bit_identical_across_batch_and_n_jobs(small_tiles):
    x, y = _data(2)
    runs = [kmtests.two_sample_test(x, y, engine="streamed", n_resamples=300, rng=7,
                                    batch=b, n_jobs=j)
            for b, j in [(None, None), (1, 1), (77, 2), (1000, -1)]]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.null_distribution, runs[0].null_distribution)
        assert r.pvalue == runs[0].pvalue


def test_translation_and_scale_of_the_data(small_tiles):
    """The centred tiles keep their digits under a large offset (as the in-memory engine)."""
    x, y = _data(3)
    a = kmtests.two_sample_test(x, y, engine="streamed", n_resamples=99, rng=1)
    b = kmtests.two_sample_test(x * 1e-3 + 1e6, y * 1e-3 + 1e6, engine="streamed",
                                n_resamples=99, rng=1)
    np.testing.assert_allclose(b.statistic, a.statistic, rtol=1e-7)
    assert b.pvalue == a.pvalue


@pytest.mark.parametrize("kw, match", [
    (dict(estimator="fkmse"), "uniform weights"),
    (dict(estimator="mkme"), "marginalized"),
    (dict(estimator="skmse", tuning="pooled"), "tuning='pooled'"),
    (dict(method="gamma", statistic="biased"), "gamma"),
    (dict(statistic="regularized", lam=0.1), "engine='exact'"),
    (dict(engine="nowhere"), "engine"),
])
def test_what_the_streamed_engine_does_not_run(kw, match):
    x, y = _data(4, 20, 20)
    kw = {"engine": "streamed", **kw}
    with pytest.raises(ValueError, match=match):
        kmtests.two_sample_test(x, y, n_resamples=19, **kw)


def test_precomputed_gram_is_refused():
    x, y = _data(5, 10, 10)
    K = kmtests.kernels.Gaussian(1.0).gram(np.vstack([x, y]))
    with pytest.raises(ValueError, match="precomputed"):
        kmtests.two_sample_test(K, 10, kernel="precomputed", engine="streamed")


def test_auto_is_exact_when_the_gram_fits_and_streamed_otherwise(monkeypatch, small_tiles):
    x, y = _data(6, 60, 60)
    res = kmtests.two_sample_test(x, y, engine="auto", n_resamples=99, rng=2)
    assert res.engine == "exact"
    from kmtests import _guards

    # 450 kB free: the 120 x 120 Gram matrix (115 kB) takes more than a quarter of it, the
    # streamed engine's buffers (395 kB with the small tiles) fit
    monkeypatch.setattr(_guards, "available_memory", lambda: 450_000)
    monkeypatch.setattr(_guards, "UNCHECKED_BYTES", 0)
    res2 = kmtests.two_sample_test(x, y, engine="auto", n_resamples=99, rng=2)
    assert res2.engine == "streamed" and res2.pvalue == res.pvalue
    assert any("engine='auto' chose 'streamed'" in n for n in res2.notes)
    assert "streamed engine" in str(res2)
    assert "engine: streamed" in str(res2.summary())
    with pytest.raises(MemoryError, match="approximate engine: .*engine=.block. or .linear."):
        kmtests.two_sample_test(x, y, engine="auto", estimator="fkmse", n_resamples=9)


def test_non_finite_kernel_values_are_an_error(small_tiles):
    x, y = _data(7, 40, 40)
    with pytest.raises(ValueError, match="non-finite"):
        kmtests.two_sample_test(x * 1e100, y * 1e100, kernel="polynomial", engine="streamed",
                                n_resamples=9)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_row_blocks_on_a_dask_cluster_give_the_local_pvalue(small_tiles, monkeypatch):
    distributed = pytest.importorskip("distributed")
    from joblib import parallel_config

    seen = []
    real = streamed._distributed_backend
    monkeypatch.setattr(streamed, "_distributed_backend", lambda: seen.append(real()) or seen[-1])

    x, y = _data(8, 120, 110)
    local = kmtests.two_sample_test(x, y, engine="streamed", n_resamples=199, rng=11)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        with parallel_config(backend="dask"):
            remote = kmtests.two_sample_test(x, y, engine="streamed", n_resamples=199, rng=11)
    half = len(seen) // 2  # one entry per batch: local batches, then the same on dask
    assert half >= 2 and seen == [False] * half + [True] * half  # went through dask
    np.testing.assert_array_equal(remote.null_distribution, local.null_distribution)
    assert remote.pvalue == local.pvalue


@pytest.mark.parametrize("where", ["mmd", "hsic", "streamed"])
def test_keyboard_interrupt_leaves_the_process_usable(monkeypatch, where):
    """Ctrl-C inside an engine: thread limits restored, the next test runs normally."""
    import numba
    from threadpoolctl import threadpool_info

    from kmtests.engines import hsic, mmd

    x, y = _data(9, 40, 40)
    before = kmtests.two_sample_test(x, y, n_resamples=99, rng=1, n_jobs=1)
    blas = {i["filepath"]: i["num_threads"] for i in threadpool_info()}
    threads = numba.get_num_threads()
    calls = []

    def interrupt(*args, **kwargs):
        calls.append(1)
        if len(calls) > 1:  # the observed statistic passes; the null is interrupted
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    if where == "mmd":
        real = mmd._within_sums
        monkeypatch.setattr(mmd, "_within_sums", interrupt)
        run = lambda: kmtests.two_sample_test(x, y, n_resamples=99, rng=1, n_jobs=1)  # noqa: E731
    elif where == "hsic":
        real = hsic.pair_sums
        monkeypatch.setattr(hsic, "pair_sums", interrupt)
        run = lambda: kmtests.independence_test(x, y, n_resamples=99, rng=1, n_jobs=1)  # noqa: E731
    else:
        real = streamed.row_block_sums
        monkeypatch.setattr(streamed, "row_block_sums", interrupt)
        run = lambda: kmtests.two_sample_test(x, y, n_resamples=99, rng=1, n_jobs=1,  # noqa: E731
                                              engine="streamed")
    with pytest.raises(KeyboardInterrupt):
        run()
    monkeypatch.undo()
    now = {i["filepath"]: i["num_threads"] for i in threadpool_info()}
    assert {k: now[k] for k in blas} == blas  # (numba may have loaded its OpenMP meanwhile)
    assert numba.get_num_threads() == threads
    after = kmtests.two_sample_test(x, y, n_resamples=99, rng=1, n_jobs=1)
    assert after.pvalue == before.pvalue


def test_engine_options_are_validated_in_both_tests():
    x, y = _data(10, 12, 12)
    with pytest.raises(ValueError, match="`n_features` applies"):
        kmtests.two_sample_test(x, y, n_features=10)
    with pytest.raises(ValueError, match="engine"):
        kmtests.independence_test(x, y, engine="streamed")
    res = kmtests.independence_test(x, y, engine="auto", n_resamples=9, rng=0)
    assert res.engine == "exact" and "Engine" not in str(res.summary())
