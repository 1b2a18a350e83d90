"""Parzen-window classifier: scores against loops, JMLR eq. 46, pairwise votes, sklearn API."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import load_iris  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from kmtests.estimators import make  # noqa: E402
from kmtests.learn import ParzenClassifier  # noqa: E402


def _data(rng, k=3, n=25):
    X = np.vstack([rng.normal(c, 1.0, (n, 2)) for c in range(k)])
    return X, np.repeat(np.arange(k), n)


@pytest.mark.parametrize("est", ["kme", "skmse", "bkmse", "fkmse"])
@pytest.mark.parametrize("rule", ["distance", "embedding"])
def test_scores_match_a_loop(est, rule, rng):
    X, y = _data(rng)
    h = 0.8
    clf = ParzenClassifier(estimator=est, bandwidth=h, rule=rule).fit(X, y)
    Z = rng.normal(1.0, 1.5, size=(6, 2))
    k = lambda a, b: np.exp(-np.sum((a - b) ** 2) / (2 * h * h))  # noqa: E731
    ref = np.empty((6, 3))
    for c in range(3):
        Xc = X[y == c]
        K = np.array([[k(a, b) for b in Xc] for a in Xc])
        beta = make(est).weights(K)[0]
        norm2 = sum(beta[i] * beta[j] * K[i, j] for i in range(len(Xc)) for j in range(len(Xc)))
        for t, z in enumerate(Z):
            mu = sum(beta[i] * k(Xc[i], z) for i in range(len(Xc)))
            ref[t, c] = mu - 0.5 * norm2 if rule == "distance" else mu
    assert np.allclose(clf.decision_function(Z), ref, rtol=1e-10)
    assert np.array_equal(clf.predict(Z), np.argmax(ref, axis=1))


def test_binary_decision_is_jmlr_eq_46(rng):
    X, y = _data(rng, k=2)
    clf = ParzenClassifier(estimator="skmse", bandwidth=1.0).fit(X, y)
    Z = rng.normal(size=(10, 2))
    m0, m1 = clf.embeddings_
    b = 0.5 * (m0.norm2() - m1.norm2())  # classes ordered (0, 1): f = mu_1 - mu_0 + b
    assert np.allclose(clf.decision_function(Z), m1(Z) - m0(Z) + b)
    assert np.array_equal(clf.predict(Z), (m1(Z) - m0(Z) + b > 0).astype(int))


def test_multiclass_equals_pairwise_majority_vote(rng):
    """JMLR's pairwise coupling with majority vote picks the nearest mean."""
    X, y = _data(rng, k=4, n=15)
    clf = ParzenClassifier(estimator="fkmse", bandwidth=1.0).fit(X, y)
    Z = rng.normal(1.5, 2.0, size=(40, 2))
    emb = clf.embeddings_
    votes = np.zeros((40, 4), dtype=int)
    for a, b in itertools.combinations(range(4), 2):
        f = emb[b](Z) - emb[a](Z) + 0.5 * (emb[a].norm2() - emb[b].norm2())
        votes[np.arange(40), np.where(f > 0, b, a)] += 1
    assert np.array_equal(clf.predict(Z), np.argmax(votes, axis=1))
    assert np.all(votes.max(axis=1) == 3)


def test_predict_proba_orders_as_predict_and_labels_are_kept(rng):
    X, y = _data(rng)
    labels = np.array(["a", "b", "c"])[y]
    clf = ParzenClassifier(bandwidth=1.0).fit(X, labels)
    P = clf.predict_proba(X)
    assert np.allclose(P.sum(axis=1), 1.0)
    assert np.array_equal(clf.classes_[np.argmax(P, axis=1)], clf.predict(X))
    assert set(clf.predict(X)) <= {"a", "b", "c"}


def test_grid_search_over_bandwidth_is_reproducible(rng):
    X, y = _data(rng, k=2, n=30)
    grid = {"parzenclassifier__bandwidth": list(np.linspace(0.1, 2.0, 5))}
    pipe = make_pipeline(StandardScaler(), ParzenClassifier(estimator="skmse"))
    a = GridSearchCV(pipe, grid, cv=3).fit(X, y)
    b = GridSearchCV(pipe, grid, cv=3).fit(X, y)
    assert a.best_params_ == b.best_params_ and a.best_score_ == b.best_score_
    assert a.score(X, y) > 0.6


def test_validation_messages(rng):
    X, y = _data(rng, k=2)
    with pytest.raises(ValueError, match="`rule` must be one of"):
        ParzenClassifier(rule="vote").fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        ParzenClassifier().fit(X, np.zeros(len(y)))
    y1 = y.copy()
    y1[0] = 7
    with pytest.raises(ValueError, match="at least 2 samples; classes \\[7\\]"):
        ParzenClassifier().fit(X, y1)


@parametrize_with_checks([ParzenClassifier(estimator="skmse"),
                          ParzenClassifier(estimator="fkmse", rule="embedding")])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_grid_search_over_estimator_objects_and_their_parameters():
    """Objects are shared by clone (immutable); nested parameters replace the object."""
    from sklearn.base import clone

    from kmtests.estimators import FKMSE, SKMSE

    X, y = load_iris(return_X_y=True)
    est = SKMSE(shrinkage=0.1)
    assert clone(est) is est
    gs = GridSearchCV(ParzenClassifier(), {"estimator": [est, FKMSE()]}, cv=3).fit(X, y)
    assert gs.best_params_["estimator"] in (est, FKMSE())
    gs2 = GridSearchCV(ParzenClassifier(estimator=SKMSE()),
                       {"estimator__shrinkage": [0.0, 0.5]}, cv=3).fit(X, y)
    assert gs2.best_estimator_.estimator.shrinkage == gs2.best_params_["estimator__shrinkage"]
    assert gs2.cv_results_["mean_test_score"][0] != gs2.cv_results_["mean_test_score"][1]
    model = ParzenClassifier(estimator="skmse").set_params(estimator__shrinkage=0.2)
    assert model.estimator == SKMSE(shrinkage=0.2)
