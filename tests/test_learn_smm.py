"""Support measure machines: the SVM on distribution Grams, Flex-SVM, group anomalies."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.svm import SVC  # noqa: E402
from sklearn.utils import estimator_checks as ec  # noqa: E402

from kmtests.estimators import FKMSE  # noqa: E402
from kmtests.learn import (Normal, OneClassSupportMeasureMachine,  # noqa: E402
                           SupportMeasureMachine, distribution_gram, flex_gram)


def _bags(rng, n_per=15, size=20):
    """Two classes of bags differing in spread only (equal means)."""
    X = [rng.normal(0, s, size=(size, 2)) for s in [0.6] * n_per + [1.6] * n_per]
    return X, np.repeat([0, 1], n_per)


def test_smm_is_svc_on_the_distribution_gram(rng):
    X, y = _bags(rng)
    T, _ = _bags(rng, n_per=5)
    kw = dict(bandwidth=0.9, estimator="skmse", level2="gaussian", level2_bandwidth=0.4)
    smm = SupportMeasureMachine(C=3.0, **kw).fit(X, y)
    G = distribution_gram(X, **kw)
    Gt = distribution_gram(T, X, **kw)
    svc = SVC(C=3.0, kernel="precomputed").fit(G, y)
    assert np.allclose(smm.decision_function(T), svc.decision_function(Gt), atol=1e-10)
    assert np.array_equal(smm.predict(T), svc.predict(Gt))
    assert smm.score(T, np.repeat([0, 1], 5)) >= 0.8


def test_flex_svm_equals_linear_smm_on_gaussians(rng):
    """SMM Lemma 4: the linear SMM on N(x_i, v_i I) is an SVM with the flex kernel."""
    x = rng.normal(size=(30, 2))
    v = rng.uniform(0.05, 0.6, size=30)
    y = (x[:, 0] + 0.3 * rng.normal(size=30) > 0).astype(int)
    s = 0.8
    P = [Normal(a, b) for a, b in zip(x, v)]
    smm = SupportMeasureMachine(C=2.0, bandwidth=s).fit(P, y)
    xt, vt = rng.normal(size=(8, 2)), rng.uniform(0.05, 0.6, size=8)
    svc = SVC(C=2.0, kernel="precomputed").fit(flex_gram(x, v, bandwidth=s), y)
    ref = svc.decision_function(flex_gram(xt, vt, x, v, bandwidth=s))
    assert np.allclose(smm.decision_function([Normal(a, b) for a, b in zip(xt, vt)]), ref,
                       atol=1e-10)


def test_gaussian_inputs_with_linear_trace(rng):
    P = [Normal(rng.normal(size=2), 0.5) for _ in range(10)]
    y = np.repeat([0, 1], 5)
    a = SupportMeasureMachine(kernel="linear", linear_trace=True).fit(P, y)
    b = SupportMeasureMachine(kernel="linear").fit(P, y)
    Ga, Gb = a.distribution_kernel_.gram(), b.distribution_kernel_.gram()
    assert np.allclose(Ga - Gb, np.eye(10) * 1.0)
    with pytest.raises(ValueError, match="`linear_trace` applies to Normal inputs only"):
        SupportMeasureMachine(linear_trace=True).fit(_bags(rng)[0], np.repeat([0, 1], 15))


def test_grid_search_clone_and_params_on_lists(rng):
    X, y = _bags(rng, n_per=12)
    gs = GridSearchCV(SupportMeasureMachine(level2="gaussian"),
                      {"C": [0.5, 8.0], "bandwidth": [0.5, 1.5],
                       "estimator": ["kme", "skmse"]}, cv=3).fit(X, y)
    assert gs.best_score_ >= 0.75
    assert gs.predict(X[:3]).shape == (3,)
    smm = SupportMeasureMachine(estimator=FKMSE(lam=1e-3), C=4.0)
    c = clone(smm)
    assert c.get_params() == smm.get_params() and c is not smm
    c.set_params(C=1.0, level2="polynomial")
    assert c.C == 1.0 and smm.C == 4.0


@pytest.mark.parametrize("check", [ec.check_parameters_default_constructible,
                                   ec.check_no_attributes_set_in_init,
                                   ec.check_get_params_invariance, ec.check_set_params,
                                   ec.check_estimator_cloneable,
                                   ec.check_estimators_unfitted])
@pytest.mark.parametrize("cls", [SupportMeasureMachine, OneClassSupportMeasureMachine])
def test_sklearn_checks_that_apply_to_list_inputs(check, cls):
    est = cls()
    if check is ec.check_estimators_unfitted:
        from sklearn.exceptions import NotFittedError

        with pytest.raises(NotFittedError):
            est.predict([np.zeros((3, 2))])
        return
    check(cls.__name__, est)


def test_one_class_smm_detects_group_anomalies(rng):
    normal = [rng.normal(0, 1, size=(30, 2)) for _ in range(40)]
    oc = OneClassSupportMeasureMachine(nu=0.1, bandwidth=1.0, level2="gaussian",
                                       estimator="skmse").fit(normal)
    test_ok = [rng.normal(0, 1, size=(30, 2)) for _ in range(20)]
    # group anomalies: every point is plausible, the group is not (a tight cluster)
    test_bad = [rng.normal(rng.normal(0, 0.7, 2), 0.15, size=(30, 2)) for _ in range(20)]
    s = oc.score_samples(test_ok + test_bad)
    assert roc_auc_score(np.r_[np.ones(20), np.zeros(20)], s) > 0.95
    assert np.mean(oc.predict(test_ok) == 1) >= 0.7
    assert np.mean(oc.predict(test_bad) == -1) >= 0.9
    with pytest.raises(ValueError, match="`nu` must be in \\(0, 1\\]"):
        OneClassSupportMeasureMachine(nu=1.5).fit(normal)


def test_validation_messages(rng):
    X, y = _bags(rng, n_per=4)
    with pytest.raises(ValueError, match="one label per distribution"):
        SupportMeasureMachine().fit(X, y[:-1])
    smm = SupportMeasureMachine(bandwidth=1.0).fit(X, y)
    with pytest.raises(ValueError, match="has dimension 3, but the kernel was fitted on "
                                         "dimension 2"):
        smm.predict([rng.normal(size=(5, 3))])
    with pytest.raises(TypeError, match="same kind of inputs"):
        smm.predict([Normal([0.0, 0.0], 1.0)])
    with pytest.raises(ValueError, match="`C` must be > 0"):
        SupportMeasureMachine(C=0.0).fit(X, y)


@pytest.mark.parametrize("cls, own", [(SupportMeasureMachine, {"C": 2.0, "class_weight": "balanced"}),
                                      (OneClassSupportMeasureMachine, {"nu": 0.2})])
def test_every_constructor_argument_is_kept_unchanged(cls, own):
    # the shared kernel parameters are stored by one helper: each must come back as given
    shared = {"kernel": "laplacian", "bandwidth": 0.7, "estimator": "skmse",
              "level2": "gaussian", "level2_bandwidth": 2.5, "degree": 3, "coef0": 0.5,
              "linear_trace": True}
    params = cls(**own, **shared).get_params()
    assert params == {**own, **shared}
    assert clone(cls(**own, **shared)).get_params() == params
