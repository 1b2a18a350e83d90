"""Shrinkage kernel PCA: explicit feature maps, scikit-learn KernelPCA, sklearn API."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.decomposition import KernelPCA  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from kmtests.estimators import FKMSE, SKMSE  # noqa: E402
from kmtests.kernels import Gaussian, Polynomial  # noqa: E402
from kmtests.learn import ShrinkageKernelPCA  # noqa: E402


def _phi(x, c=1.0):
    """Explicit feature map of (<x, y> + c)^2 in two dimensions."""
    x1, x2 = x[:, 0], x[:, 1]
    r2, rc = np.sqrt(2.0), np.sqrt(2.0 * c)
    return np.column_stack([x1**2, x2**2, r2 * x1 * x2, rc * x1, rc * x2, np.full(len(x), c)])


@pytest.mark.parametrize("shrink,est", [("mean", "kme"), ("mean", "skmse"), ("mean", "fkmse"),
                                        ("covariance", "fkmse"), ("covariance", "bkmse")])
def test_reconstruction_error_equals_explicit_feature_space(shrink, est, rng):
    """Brute force in the 6-dimensional feature space of the quadratic kernel."""
    x, z = rng.normal(size=(40, 2)), rng.normal(size=(9, 2))
    k = 3
    kpca = ShrinkageKernelPCA(n_components=k, estimator=est, shrink=shrink,
                              kernel=Polynomial(degree=2)).fit(x)
    F, Fz = _phi(x), _phi(z)
    n = len(x)
    if shrink == "mean":
        mu = kpca.center_.weights @ F  # the estimator's embedding, explicitly
        beta = np.full(n, 1.0 / n)
    else:
        mu = F.mean(axis=0)
        Fc = F - mu
        G = (Fc @ Fc.T) ** 2
        from kmtests.estimators import make

        beta = make(est).weights(G)[0]
    Fc, Fzc = F - mu, Fz - mu
    C = (Fc * beta[:, None]).T @ Fc  # sum_i beta_i phi~_i phi~_i'
    ev, V = np.linalg.eigh(C)
    V = V[:, np.argsort(ev)[::-1][:k]]
    resid = Fzc - (Fzc @ V) @ V.T
    assert np.allclose(kpca.reconstruction_error(z), np.sum(resid**2, axis=1), rtol=1e-7,
                       atol=1e-9)
    assert np.allclose(np.abs(kpca.transform(z)), np.abs(Fzc @ V), rtol=1e-6, atol=1e-8)
    assert np.allclose(np.sort(kpca.eigenvalues_), np.sort(ev)[::-1][:k][::-1], rtol=1e-8)


def test_kme_is_scikit_learn_kernel_pca(rng):
    x, z = rng.normal(size=(50, 3)), rng.normal(size=(10, 3))
    ours = ShrinkageKernelPCA(n_components=4, bandwidth=1.5).fit(x)
    K = Gaussian(bandwidth=1.5)
    ref = KernelPCA(n_components=4, kernel="precomputed").fit(K.gram(x))
    assert np.allclose(np.abs(ours.transform(z)), np.abs(ref.transform(K.gram(z, x))),
                       atol=1e-9)


def test_uniform_cose_has_the_kpca_projection(rng):
    """S-COSE scales the operator by (1 - alpha): same components, same error."""
    x, z = rng.normal(size=(60, 4)), rng.normal(size=(15, 4))
    base = ShrinkageKernelPCA(n_components=5).fit(x)
    s = ShrinkageKernelPCA(n_components=5, estimator=SKMSE(shrinkage=0.3),
                           shrink="covariance").fit(x)
    assert np.allclose(s.eigenvalues_, 0.7 * base.eigenvalues_)
    assert np.allclose(s.reconstruction_error(z), base.reconstruction_error(z))


def test_marginalized_centring_uses_the_smoothed_mean(rng):
    x, z = rng.normal(size=(30, 2)), rng.normal(size=(5, 2))
    kpca = ShrinkageKernelPCA(n_components=2, estimator="mkme", bandwidth=1.0).fit(x)
    mu = kpca.center_
    # ||phi(z) - mu||^2 = k(z,z) - 2 mu(z) + ||mu||^2, then minus the projections
    full = 1.0 - 2.0 * mu(z) + mu.norm2()
    assert np.allclose(kpca.reconstruction_error(z),
                       full - np.sum(kpca.transform(z) ** 2, axis=1))
    assert kpca.center_.smoothing is not None and np.all(kpca.center_.smoothing > 0)


def test_rank_deficient_pads_zero_components(rng):
    x = rng.normal(size=(6, 1))
    kpca = ShrinkageKernelPCA(n_components=10, kernel="linear").fit(x)
    t = kpca.transform(x)
    assert t.shape == (6, 10) and np.allclose(t[:, 1:], 0.0)
    assert np.allclose(kpca.reconstruction_error(x), 0.0, atol=1e-10)


def test_validation_messages(rng):
    x = rng.normal(size=(20, 2))
    with pytest.raises(ValueError, match="`shrink` must be one of"):
        ShrinkageKernelPCA(shrink="both").fit(x)
    with pytest.raises(ValueError, match="`estimator` must be a weight estimator"):
        ShrinkageKernelPCA(estimator="mkme", shrink="covariance").fit(x)
    with pytest.raises(ValueError, match="`n_components` must be an integer >= 1"):
        ShrinkageKernelPCA(n_components=0).fit(x)
    with pytest.raises(ValueError, match="shrank the covariance operator to zero"):
        ShrinkageKernelPCA(estimator=SKMSE(shrinkage=1.0), shrink="covariance").fit(x)


def test_grid_search_over_estimators_in_pipeline(rng):
    x = rng.normal(size=(60, 3))
    pipe = make_pipeline(StandardScaler(), ShrinkageKernelPCA(n_components=3))
    gs = GridSearchCV(pipe, {"shrinkagekernelpca__estimator": ["kme", "fkmse"],
                             "shrinkagekernelpca__shrink": ["mean", "covariance"]},
                      cv=3).fit(x)
    assert gs.best_score_ <= 0.0
    assert gs.transform(x).shape == (60, 3)
    assert ShrinkageKernelPCA(estimator=FKMSE(lam=0.1)).get_params()["estimator"].lam == 0.1


@parametrize_with_checks([ShrinkageKernelPCA(n_components=2, estimator="fkmse"),
                          ShrinkageKernelPCA(n_components=2, estimator="skmse",
                                             shrink="covariance")])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("shrink", ["mean", "covariance"])
def test_components_have_a_fixed_sign(shrink, rng):
    """Equal data (rows reordered, float32) give equal coordinates, not flipped ones."""
    x, z = rng.normal(size=(40, 3)), rng.normal(size=(7, 3))
    kw = dict(n_components=4, estimator="fkmse", shrink=shrink, bandwidth=1.0)
    ref = ShrinkageKernelPCA(**kw).fit(x).transform(z)
    for other in (x[rng.permutation(40)], x[::-1], x.astype(np.float32)):
        assert np.allclose(ShrinkageKernelPCA(**kw).fit(other).transform(z), ref,
                           rtol=1e-5, atol=1e-6)
    alphas = ShrinkageKernelPCA(**kw).fit(x).alphas_
    assert np.all(alphas[np.argmax(np.abs(alphas), axis=0), np.arange(4)] > 0)
