"""The engine contract: every registered engine against the exact engine, on the same data.

* the same statistic and p-value as the in-memory engine (streamed), or as the
  in-memory engine on the engine's own approximate kernel ``Phi Phi'`` (low-rank);
* translation: data shifted by 1e8 and 1e12 give the same statistic and p-value with
  every kernel whose KME statistics are translation-invariant (the data are dyadic, so
  the shifted data are exact: any difference is the engine's own rounding). In 0.2 the
  streamed, block, linear and Nyström engines computed the linear and distance kernels
  from the raw data: at an offset of 1e8 the streamed p-value was 1 where the exact one
  was 0.005;
* user kernels: a non-symmetric or complex-valued callable is an error on every engine,
  an indefinite one a warning (0.2 checked them on the exact engine only);
* what an engine does not run is refused by the engine (one place), before anything is
  computed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import kmtests
from kmtests.engines import ENGINES
from kmtests.kernels import Gaussian

KERNELS = ["gaussian", "laplacian", "imq", "ard", "linear", "distance"]
TWO_SAMPLE_ENGINES = [name for name, cls in ENGINES.items() if "split" in cls.schemes]
PAIRING_ENGINES = [name for name, cls in ENGINES.items() if "pairing" in cls.schemes]
OFFSETS = [1e8, 1e12]


def dyadic(a: np.ndarray) -> np.ndarray:
    """Values with 10 fractional bits: exact after adding 1e12 (ulp 2^-12)."""
    return np.round(a * 1024.0) / 1024.0


def _samples(seed=0, n_x=40, n_y=33, d=2, shift=0.4):
    gen = np.random.default_rng(seed)
    return dyadic(gen.normal(size=(n_x, d))), dyadic(gen.normal(size=(n_y, d)) + shift)


def _supported(engine: str, kernel: str) -> bool:
    return engine != "rff" or kernel in ("gaussian", "laplacian", "ard")


def _bw(kernel: str) -> dict:
    # a fixed bandwidth: the median heuristic is translation-invariant too, but a fixed one
    # isolates the engine
    return {"bandwidth": 1.3} if kernel in ("gaussian", "laplacian", "ard") else {}


# -- the same test on every engine ----------------------------------------------------------------
def test_streamed_equals_exact_on_every_kernel():
    x, y = _samples()
    for kernel in KERNELS:
        a = kmtests.two_sample_test(x, y, kernel=kernel, n_resamples=199, rng=3, **_bw(kernel))
        b = kmtests.two_sample_test(x, y, kernel=kernel, engine="streamed", n_resamples=199,
                                    rng=3, **_bw(kernel))
        assert b.statistic == pytest.approx(a.statistic, rel=1e-10, abs=1e-14), kernel
        assert b.pvalue == a.pvalue, kernel


@pytest.mark.parametrize("engine", ["nystrom", "rff"])
@pytest.mark.parametrize("test", ["mmd", "hsic"])
def test_low_rank_equals_exact_on_its_own_kernel(engine, test):
    """The low-rank statistic is the exact engine's statistic of the kernel Phi Phi' (given
    as a precomputed Gram matrix), with the same p-value for the same seed."""
    from kmtests.engines import Exact, Nystrom, RFF
    from kmtests.problems import independence_problem, two_sample_problem

    x, y = _samples(1, 30, 30)
    eng = {"nystrom": Nystrom, "rff": RFF}[engine](n_features=25)
    kern = Gaussian(1.1)
    if test == "mmd":
        z = np.vstack([x, y])
        src = eng.pooled(kern, z, rng=7)
        K = src.f.gram()
        a = kmtests.two_sample_test(x, y, kernel=kern, engine=eng, n_resamples=199, rng=7)
        b = kmtests.two_sample_test(K, len(x), kernel="precomputed", n_resamples=199, rng=7)
    else:
        pair = eng.paired(kern, x, Gaussian(0.9), y, rng=7)
        Kx, Ky = pair.fx.gram(), pair.fy.gram()
        if pair.swapped:
            Kx, Ky = Ky, Kx
        a = kmtests.independence_test(x, y, kernel_x=kern, kernel_y=Gaussian(0.9), engine=eng,
                                      n_resamples=199, rng=7)
        b = kmtests.independence_test(Kx, Ky, kernel_x="precomputed", kernel_y="precomputed",
                                      n_resamples=199, rng=7)
    del Exact, independence_problem, two_sample_problem
    assert a.statistic == pytest.approx(b.statistic, rel=1e-9, abs=1e-13)
    assert a.pvalue == b.pvalue


@pytest.mark.parametrize("engine", TWO_SAMPLE_ENGINES + ["block", "linear"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_two_sample_statistic_is_translation_invariant(engine, kernel):
    if not _supported(engine, kernel):
        pytest.skip("random Fourier features exist for the Gaussian family only")
    x, y = _samples(2, 36, 36)
    kw = dict(kernel=kernel, engine=engine, **_bw(kernel))
    if engine not in ("block", "linear"):
        kw.update(n_resamples=99, rng=4, n_features=20) if engine in ("nystrom", "rff") \
            else kw.update(n_resamples=99, rng=4)
    ref = kmtests.two_sample_test(x, y, **kw)
    for c in OFFSETS:
        far = kmtests.two_sample_test(x + c, y + c, **kw)
        scale = max(abs(ref.statistic), 1e-3 * _spread(kernel))
        assert far.statistic == pytest.approx(ref.statistic, abs=1e-9 * scale), (engine, c)
        assert far.pvalue == pytest.approx(ref.pvalue, rel=1e-9), (engine, c)


@pytest.mark.parametrize("engine", PAIRING_ENGINES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_independence_statistic_is_translation_invariant(engine, kernel):
    if not _supported(engine, kernel):
        pytest.skip("random Fourier features exist for the Gaussian family only")
    gen = np.random.default_rng(5)
    x = dyadic(gen.normal(size=(30, 2)))
    y = dyadic(x[:, :1] ** 2 + gen.normal(size=(30, 1)))
    kw = dict(kernel_x=kernel, kernel_y=kernel, engine=engine, n_resamples=99, rng=4)
    if kernel in ("gaussian", "laplacian", "ard"):
        kw.update(bandwidth_x=1.3, bandwidth_y=1.1)
    if engine in ("nystrom", "rff"):
        kw.update(n_features=20)
    ref = kmtests.independence_test(x, y, **kw)
    for c in OFFSETS:
        far = kmtests.independence_test(x - c, y + c, **kw)
        scale = max(abs(ref.statistic), 1e-3 * _spread(kernel) ** 2)
        assert far.statistic == pytest.approx(ref.statistic, abs=1e-9 * scale), (engine, c)
        assert far.pvalue == pytest.approx(ref.pvalue, rel=1e-9), (engine, c)


def _spread(kernel: str) -> float:
    return 1.0 if kernel in ("gaussian", "laplacian", "ard") else 4.0


def test_the_0_2_offset_defect_is_gone():
    """The reported case: linear kernel, offset 1e8, streamed p = 1 where exact gave 0.005."""
    x, y = _samples(6, 60, 60, 1, 1.0)
    a = kmtests.two_sample_test(x + 1e8, y + 1e8, kernel="linear", n_resamples=199, rng=1)
    b = kmtests.two_sample_test(x + 1e8, y + 1e8, kernel="linear", engine="streamed",
                                n_resamples=199, rng=1)
    assert a.pvalue < 0.05 and b.pvalue == a.pvalue


# -- user kernels: one check on every engine ----------------------------------------------------
def _skew(a, b):
    return np.exp(-np.abs(a[:, :1] - b[:, :1].T)) + 0.1 * (a[:, :1] - b[:, :1].T)


def _complex(a, b):
    return np.exp(-((a[:, :1] - b[:, :1].T) ** 2)) * (1 + 0.5j)


def _indefinite(a, b):
    return -np.abs(a[:, :1] - b[:, :1].T)  # minus a distance: conditionally negative


CALLABLE_ENGINES = ["exact", "streamed", "nystrom", "block"]


@pytest.mark.parametrize("engine", CALLABLE_ENGINES)
def test_a_non_symmetric_user_kernel_is_an_error_on_every_engine(engine):
    x, y = _samples(7, 20, 20)
    kw = {} if engine == "block" else dict(n_resamples=19, rng=0)
    with pytest.raises(ValueError, match="not symmetric"):
        kmtests.two_sample_test(x, y, kernel=_skew, engine=engine, **kw)


@pytest.mark.parametrize("engine", CALLABLE_ENGINES)
def test_a_complex_user_kernel_is_an_error_on_every_engine(engine):
    x, y = _samples(8, 20, 20)
    kw = {} if engine == "block" else dict(n_resamples=19, rng=0)
    with pytest.raises(TypeError, match="complex"):
        kmtests.two_sample_test(x, y, kernel=_complex, engine=engine, **kw)


@pytest.mark.parametrize("engine", CALLABLE_ENGINES)
def test_an_indefinite_user_kernel_warns_on_every_engine(engine):
    x, y = _samples(9, 20, 20)
    kw = {} if engine == "block" else dict(n_resamples=19, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kmtests.DegenerateStatisticWarning)
        with pytest.warns(kmtests.IndefiniteKernelWarning, match="not positive semi-definite"):
            try:
                kmtests.two_sample_test(x, y, kernel=_indefinite, engine=engine, **kw)
            except ValueError as exc:  # Nyström: no positive eigenvalue on the landmarks
                assert "positive eigenvalue" in str(exc)


def test_rff_refuses_user_kernels():
    x, y = _samples(10, 20, 20)
    with pytest.raises(ValueError, match="Gaussian, ARD Gaussian and Laplacian"):
        kmtests.two_sample_test(x, y, kernel=_skew, engine="rff", n_resamples=19, rng=0)


# -- refusals come from the engine, before anything is computed ---------------------------------
@pytest.mark.parametrize("engine", [e for e in ENGINES if e != "exact"])
def test_non_exact_engines_refuse_what_needs_the_gram_matrix(engine, monkeypatch):
    from kmtests.kernels import Kernel

    def boom(*a, **k):
        raise AssertionError("a Gram matrix was built before the refusal")

    monkeypatch.setattr(Kernel, "centred_gram", boom)
    x, y = _samples(11, 20, 20)
    # the low-rank engines run the spectral estimators on their features
    reweighting = (() if engine in ("nystrom", "rff")
                   else ((dict(estimator="fkmse"), "uniform weights"),))
    for kw, what in (*reweighting,
                     (dict(estimator="skmse", tuning="pooled"), "tuning='pooled'"),
                     (dict(statistic="regularized", lam=0.1), "engine='exact'"),
                     (dict(estimator="mkme"), "marginalized"),
                     (dict(method="gamma", statistic="biased"), "gamma")):
        with pytest.raises(ValueError, match=what):
            kmtests.two_sample_test(x, y, engine=engine, n_resamples=19, rng=0, **kw)


@pytest.mark.parametrize("engine", TWO_SAMPLE_ENGINES)
def test_batch_and_n_jobs_do_not_change_the_pvalue(engine):
    """On one BLAS thread the null distribution is bit-identical for every `batch`
    (fixed-shape products). Multithreaded BLAS may change the last bit of a product with
    the thread count and even with a split's row in a chunk, never the p-value (ties are
    judged on the statistics' rounding scale)."""
    x, y = _samples(12, 70, 64)
    kw = dict(engine=engine, n_resamples=299, rng=9)
    if engine in ("nystrom", "rff"):
        kw["n_features"] = 30
    a = kmtests.two_sample_test(x, y, n_jobs=1, **kw)
    for batch in (7, 128, 1000):
        b = kmtests.two_sample_test(x, y, batch=batch, n_jobs=1, **kw)
        np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
        c = kmtests.two_sample_test(x, y, batch=batch, n_jobs=2, **kw)
        assert a.pvalue == b.pvalue == c.pvalue
        np.testing.assert_allclose(c.null_distribution, a.null_distribution, rtol=1e-12,
                                   atol=1e-15)
    one = kmtests.two_sample_test(x, y, n_jobs=1, **kw)
    two = kmtests.two_sample_test(x, y, n_jobs=2, **kw)
    assert one.pvalue == two.pvalue
    np.testing.assert_allclose(one.null_distribution, two.null_distribution, rtol=1e-12,
                               atol=1e-15)
