"""Statistics against literal loop implementations (tests/_naive.py)."""

import numpy as np
import pytest

import kmtests
from kmtests.kernels import Distance, Gaussian, Linear, Polynomial

from . import _naive


@pytest.mark.parametrize("shape", [((7, 2), (9, 2)), ((5, 1), (5, 1)), ((12, 3), (6, 3))])
def test_mmd_gaussian_fixed_bandwidth_equals_loops(rng, shape):
    x, y = rng.normal(size=shape[0]), rng.normal(0.3, size=shape[1])
    k = _naive.k_gauss(0.9)
    for stat, ref in (("unbiased", _naive.mmd2_u), ("biased", _naive.mmd2_b)):
        got = kmtests.mmd(x, y, bandwidth=0.9, statistic=stat)
        assert got == pytest.approx(ref(x, y, k), rel=1e-11, abs=1e-14)


def test_mmd_median_bandwidth_is_pooled(rng):
    x, y = rng.normal(size=(8, 2)), rng.normal(size=(6, 2)) * 3
    bw = _naive.median_bw(np.vstack([x, y]))
    got = kmtests.mmd(x, y)
    assert got == pytest.approx(_naive.mmd2_u(x, y, _naive.k_gauss(bw)), rel=1e-11)
    res = kmtests.two_sample_test(x, y, n_resamples=9, rng=0)
    assert res.bandwidths["kernel"] == pytest.approx(bw, rel=1e-12)


@pytest.mark.parametrize("kernel,k", [(Linear(), _naive.k_linear),
                                      (Distance(), _naive.k_distance),
                                      (Polynomial(degree=3, coef0=1.0),
                                       lambda a, b: (float(np.dot(a, b)) + 1.0) ** 3)])
def test_mmd_other_kernels_equal_loops(rng, kernel, k):
    x, y = rng.normal(size=(6, 2)), rng.normal(size=(7, 2))
    assert kmtests.mmd(x, y, kernel=kernel) == pytest.approx(_naive.mmd2_u(x, y, k), rel=1e-10,
                                                             abs=1e-12)
    assert kmtests.mmd(x, y, kernel=kernel, statistic="biased") == pytest.approx(
        _naive.mmd2_b(x, y, k), rel=1e-10, abs=1e-12)


def test_mmd_symmetric_and_precomputed(rng):
    x, y = rng.normal(size=(9, 2)), rng.normal(size=(11, 2))
    assert kmtests.mmd(x, y) == pytest.approx(kmtests.mmd(y, x), rel=1e-12)
    z = np.vstack([x, y])
    K = Gaussian(bandwidth=1.3).gram(z)
    assert kmtests.mmd(K, 9, kernel="precomputed") == pytest.approx(
        kmtests.mmd(x, y, bandwidth=1.3), rel=1e-12)


def test_mmd_callable_and_ard_kernels(rng):
    x, y = rng.normal(size=(6, 2)), rng.normal(size=(5, 2))

    def my_kernel(a, b):
        return Gaussian(bandwidth=0.7).gram(a, b)

    assert kmtests.mmd(x, y, kernel=my_kernel) == pytest.approx(
        kmtests.mmd(x, y, bandwidth=0.7), rel=1e-12)
    ard = kmtests.kernels.ARDGaussian(bandwidth=[0.5, 2.0])
    k = lambda a, b: float(np.exp(-0.5 * np.sum(((a - b) / [0.5, 2.0]) ** 2)))  # noqa: E731
    assert kmtests.mmd(x, y, kernel=ard) == pytest.approx(_naive.mmd2_u(x, y, k), rel=1e-11)


@pytest.mark.parametrize("n", [6, 9])
def test_hsic_biased_and_unbiased_equal_loops(rng, n):
    x = rng.normal(size=(n, 2))
    y = x[:, :1] ** 2 + rng.normal(size=(n, 1))
    kx, ky = _naive.k_gauss(1.1), _naive.k_gauss(0.6)
    got_b = kmtests.hsic(x, y, bandwidth_x=1.1, bandwidth_y=0.6)
    assert got_b == pytest.approx(_naive.hsic_b(x, y, kx, ky), rel=1e-11)
    got_u = kmtests.hsic(x, y, bandwidth_x=1.1, bandwidth_y=0.6, statistic="unbiased")
    assert got_u == pytest.approx(_naive.hsic_u(x, y, kx, ky), rel=1e-9, abs=1e-13)


def test_hsic_median_per_variable_and_linear(rng):
    x, y = rng.normal(size=(10, 1)), rng.normal(size=(10, 3)) * 5
    bx, by = _naive.median_bw(x), _naive.median_bw(y)
    got = kmtests.hsic(x, y)
    assert got == pytest.approx(
        _naive.hsic_b(x, y, _naive.k_gauss(bx), _naive.k_gauss(by)), rel=1e-11)
    lin = kmtests.hsic(x, y, kernel_x="linear", kernel_y="linear")
    assert lin == pytest.approx(_naive.hsic_b(x, y, _naive.k_linear, _naive.k_linear), rel=1e-10)


def test_hsic_invariances(rng):
    x, y = rng.normal(size=(15, 2)), rng.normal(size=(15, 2))
    h = kmtests.hsic(x, y)
    p = rng.permutation(15)
    assert kmtests.hsic(x[p], y[p]) == pytest.approx(h, rel=1e-12)  # joint row shuffle
    assert kmtests.hsic(y, x) == pytest.approx(h, rel=1e-12)  # symmetry
    K = Gaussian(bandwidth=1.0).gram(x)
    L = Gaussian(bandwidth=2.0).gram(y)
    assert kmtests.hsic(K, L, kernel_x="precomputed", kernel_y="precomputed") == pytest.approx(
        kmtests.hsic(x, y, bandwidth_x=1.0, bandwidth_y=2.0), rel=1e-12)


def test_mmd_equals_hsic_with_label_kernel(rng):
    """MMD^2_b = HSIC_b with a label kernel times a known factor (hyppo's equivalence).

    With l(a, b) = 1{a = b} / p_a p_b ... here checked in its simplest exact form:
    for n_x = n_y = n/2 and labels coded as +-1 with the linear kernel on labels,
    HSIC_b(z, labels) = MMD^2_b(x, y) / 4.
    """
    x, y = rng.normal(size=(8, 2)), rng.normal(1.0, size=(8, 2))
    z = np.vstack([x, y])
    lab = np.r_[np.ones(8), -np.ones(8)]
    h = kmtests.hsic(z, lab, bandwidth_x=1.2, kernel_y="linear")
    assert h == pytest.approx(kmtests.mmd(x, y, bandwidth=1.2, statistic="biased") / 4, rel=1e-11)


def test_energy_relations(rng):
    """Distance kernel: MMD^2_b = energy distance / 2 and HSIC_b = dCov^2_n / 4."""
    x, y = rng.normal(size=(7, 2)), rng.normal(size=(9, 2))
    d = lambda a, b: float(np.linalg.norm(a - b))  # noqa: E731
    e_xy = np.mean([[d(a, b) for b in y] for a in x])
    e_xx = np.mean([[d(a, b) for b in x] for a in x])
    e_yy = np.mean([[d(a, b) for b in y] for a in y])
    energy = 2 * e_xy - e_xx - e_yy
    assert kmtests.mmd(x, y, kernel="distance", statistic="biased") == pytest.approx(energy / 2,
                                                                                  rel=1e-11)
    u, v = rng.normal(size=(10, 2)), rng.normal(size=(10, 1))
    A = np.array([[d(a, b) for b in u] for a in u])
    B = np.array([[d(a, b) for b in v] for a in v])
    Ac = A - A.mean(0) - A.mean(1)[:, None] + A.mean()
    Bc = B - B.mean(0) - B.mean(1)[:, None] + B.mean()
    dcov2 = float(np.mean(Ac * Bc))
    assert kmtests.hsic(u, v, kernel_x="distance", kernel_y="distance") == pytest.approx(
        dcov2 / 4, rel=1e-11)
