"""The estimator contract: every registered estimator, through the same checks.

In the spirit of scikit-learn's ``parametrize_with_checks``: the checks below
run over :data:`kmtests.estimators.ESTIMATORS` (plus configured variants), so
an estimator added to the registry is checked without touching this file:

* the seam: ``rule()`` is a ``Uniform`` or ``General`` rule, ``with_fixed``
  holds tuned parameters or raises ``FixedTuningError``, ``transform_kernel``
  returns None or ``(c, kernel, params)``;
* leave-one-out agreement: the reported ``loocv`` equals a literal leave-one-out
  (the estimator with its chosen parameters refitted on n - 1 points);
* permutation exactness: every permuted statistic of both tests equals the
  estimator refitted on that permuted data set (re-tuned, or with the pooled
  parameters held fixed);
* invariance to row order (weights permute with the rows; statistics do not
  change);
* finite output on degenerate Gram matrices.
"""

import dataclasses

import numpy as np
import pytest

import kmtests
from kmtests.null import permutation as _resampling
from kmtests.estimators import ESTIMATORS, SKMSE, FKMSE, TSVD, KernelMeanEstimator
from kmtests.estimators._base import FixedTuningError
from kmtests.estimators._rules import General, Uniform
from kmtests.kernels import Gaussian

BW = 1.0
ESTIMATOR_CASES = [cls() for cls in ESTIMATORS.values()] + [
    SKMSE(shrinkage=0.3), FKMSE(lam=0.05, lam_convention="gram"), TSVD(rank=3)]
IDS = [repr(e) if e != type(e)() else e.name for e in ESTIMATOR_CASES]


def marginalized(est: KernelMeanEstimator) -> bool:
    try:
        return est.transform_kernel(Gaussian(bandwidth=BW), np.zeros((3, 1)) + [[0], [1], [2]]) \
            is not None
    except ValueError:
        return False


def gram(x):
    return Gaussian(bandwidth=BW).gram(x)


def fixed_version(est, params):
    """The estimator with its chosen parameters set as configuration (LOO refits)."""
    fields = {f.name for f in dataclasses.fields(est)}
    fixed = {k: v for k, v in params.items() if k in fields}
    if "lam" in fixed:
        fixed["lam_convention"] = "operator"
    if fixed:
        return est.replace(**fixed)
    return est.with_fixed(params)


# -- the seam ---------------------------------------------------------------------------------
@pytest.mark.parametrize("est", ESTIMATOR_CASES, ids=IDS)
def test_seam_methods(est):
    rule = est.rule()
    assert isinstance(rule, (Uniform, General))
    if isinstance(rule, Uniform):
        c = rule(np.array([0.5, 0.2]), np.array([0.3, 0.1]), 10)
        assert c.shape == (2,) and np.all(np.isfinite(c))
    x = np.random.default_rng(0).normal(size=(9, 2))
    tk = est.transform_kernel(Gaussian(bandwidth=BW), x)
    assert tk is None or (tk[0] > 0 and tk[1].gram(x).shape == (9, 9) and isinstance(tk[2], dict))
    if tk is None:
        _, params = est.weights(gram(x))
        try:
            fixed = est.with_fixed(params)
        except FixedTuningError:
            return
        np.testing.assert_allclose(fixed.weights(gram(x))[0], est.weights(gram(x))[0],
                                   rtol=1e-6, atol=1e-12)


# -- leave-one-out agreement with a literal refit ----------------------------------------------
@pytest.mark.parametrize("est", ESTIMATOR_CASES, ids=IDS)
def test_loocv_equals_literal_leave_one_out(rng, est):
    x = rng.normal(size=(11, 2))
    if marginalized(est):
        emb = est.fit(x, kernel="gaussian", bandwidth=BW)
        params = emb.params
        fixed = fixed_version(est, params)
        errs = []
        for i in range(len(x)):
            rest = fixed.fit(np.delete(x, i, axis=0), kernel="gaussian", bandwidth=BW)
            xi = x[i:i + 1]
            errs.append(1.0 - 2.0 * rest(xi)[0] + rest.norm2())  # k(x, x) = 1
        assert params["loocv"] == pytest.approx(np.mean(errs), rel=1e-8)
        return
    K = gram(x)
    _, params = est.weights(K)
    if "loocv" not in params:
        pytest.skip(f"{est.name} reports no leave-one-out score")
    fixed = fixed_version(est, params)
    errs = []
    for i in range(len(x)):
        keep = np.delete(np.arange(len(x)), i)
        b, _ = fixed.weights(K[np.ix_(keep, keep)])
        errs.append(K[i, i] - 2.0 * b @ K[keep, i] + b @ K[np.ix_(keep, keep)] @ b)
    assert params["loocv"] == pytest.approx(np.mean(errs), rel=1e-8, abs=1e-12)


# -- permutation exactness, both tests, both tunings ------------------------------------------
def _mmd_v(Kxx, Kyy, Kxy, est):
    bx, _ = est.weights(Kxx)
    by, _ = est.weights(Kyy)
    return bx @ Kxx @ bx + by @ Kyy @ by - 2.0 * bx @ Kxy @ by


@pytest.mark.parametrize("tuning", ["permutation", "pooled"])
@pytest.mark.parametrize("est", ESTIMATOR_CASES, ids=IDS)
def test_two_sample_permutations_refit_the_estimator(rng, est, tuning):
    x, y = rng.normal(size=(7, 2)), rng.normal(0.4, size=(6, 2))
    z = np.vstack([x, y])
    B = 6
    try:
        res = kmtests.two_sample_test(x, y, estimator=est, statistic="biased", tuning=tuning,
                                      bandwidth=BW, n_resamples=B, rng=11)
    except FixedTuningError:
        assert tuning == "pooled"
        return
    perms = _resampling.random_permutations(np.random.default_rng(11), 13, B)
    if marginalized(est):
        c, kern, _ = est.transform_kernel(Gaussian(bandwidth=BW), z)
        K, ref_est = c * kern.gram(z), ESTIMATORS["kme"]()
    else:
        K = gram(z)
        ref_est = est
        if tuning == "pooled":
            ref_est = est.with_fixed(est.weights(K)[1])
            if isinstance(ref_est.rule(), Uniform) and ref_est.rule().fixed == 0.0:
                ref_est = ESTIMATORS["kme"]()
    ident = np.arange(13)
    for p, got in zip(np.vstack([ident, perms]), np.r_[res.statistic, res.null_distribution]):
        ix, iy = np.sort(p[:7]), np.sort(p[7:])
        want = _mmd_v(K[np.ix_(ix, ix)], K[np.ix_(iy, iy)], K[np.ix_(ix, iy)], ref_est)
        # spectral filters' LOOCV optima are flat: rounding moves lambda at ~1e-8
        rel = 1e-6 if isinstance(ref_est.rule(), General) else 1e-10
        assert got == pytest.approx(want, rel=rel, abs=1e-13)


@pytest.mark.parametrize("tuning", ["permutation", "pooled"])
@pytest.mark.parametrize("est", ESTIMATOR_CASES, ids=IDS)
def test_independence_permutations_refit_the_estimator(rng, est, tuning):
    from kmtests.engines.hsic import PairedGrams
    from kmtests.statistics.tuning import symmetric_cose_gram

    n, B = 9, 5
    x = rng.normal(size=(n, 1))
    y = x + rng.normal(size=(n, 1))
    try:
        res = kmtests.independence_test(x, y, estimator=est, tuning=tuning, bandwidth_x=BW,
                                        bandwidth_y=1.3, n_resamples=B, rng=5)
    except FixedTuningError:
        assert tuning == "pooled"
        return
    H = np.eye(n) - 1.0 / n
    if marginalized(est):
        cx, kx, _ = est.transform_kernel(Gaussian(bandwidth=BW), x)
        cy, ky, _ = est.transform_kernel(Gaussian(bandwidth=1.3), y)
        Kc, Lc = H @ (cx * kx.gram(x)) @ H, H @ (cy * ky.gram(y)) @ H
        ref_est = ESTIMATORS["kme"]()
    else:
        Kc, Lc = H @ gram(x) @ H, H @ Gaussian(bandwidth=1.3).gram(y) @ H
        ref_est = est
        if tuning == "pooled":
            ref_est = est.with_fixed(est.weights(symmetric_cose_gram(Kc, Lc))[1])
    pg = PairedGrams.oriented(Kc, Lc)  # the engine permutes the second matrix of the canonical pair
    A, Bm = (Kc, Lc) if np.allclose(pg.Kc, Kc) else (Lc, Kc)
    perms = _resampling.random_permutations(np.random.default_rng(5), n, B)
    for p, got in zip(np.vstack([np.arange(n), perms]),
                      np.r_[res.statistic, res.null_distribution]):
        G = A * Bm[np.ix_(p, p)]
        beta, _ = ref_est.weights(G)
        # flat LOOCV optima of the spectral filters move with rounding-level changes of G
        rel = 1e-5 if isinstance(ref_est.rule(), General) else 1e-10
        assert got == pytest.approx(beta @ G @ beta, rel=rel, abs=1e-14)


# -- invariance to row order ---------------------------------------------------------------------
@pytest.mark.parametrize("est", ESTIMATOR_CASES, ids=IDS)
def test_row_order_equivariance(rng, est):
    x = rng.normal(size=(10, 2))
    p = rng.permutation(10)
    if marginalized(est):
        a = est.fit(x, bandwidth=BW)
        b = est.fit(x[p], bandwidth=BW)
        np.testing.assert_allclose(a.smoothing, b.smoothing, rtol=1e-6)
        return
    K = gram(x)
    wa, _ = est.weights(K)
    wb, _ = est.weights(K[np.ix_(p, p)])
    np.testing.assert_allclose(wb, wa[p], rtol=1e-6, atol=1e-12)
    y = rng.normal(size=(8, 2))
    s1 = kmtests.mmd(x, y, estimator=est, statistic="biased")
    s2 = kmtests.mmd(x[p], y[::-1], estimator=est, statistic="biased")
    assert s2 == pytest.approx(s1, rel=1e-6, abs=1e-13)


# -- finite output on degenerate Gram matrices ----------------------------------------------------
DEGENERATE = {
    "zeros": np.zeros((5, 5)),
    "ones": np.ones((5, 5)),
    "n2": np.array([[1.0, 0.3], [0.3, 1.0]]),
    "duplicates": gram(np.array([[0.0], [0.0], [0.0], [1.0]])),
    "rank1_linear": np.outer(np.arange(1.0, 6.0), np.arange(1.0, 6.0)),
    "tiny": 1e-300 * gram(np.arange(5.0)[:, None]),
    "huge": 1e300 * gram(np.arange(5.0)[:, None]),
}


@pytest.mark.parametrize("case", sorted(DEGENERATE))
@pytest.mark.parametrize("est", ESTIMATOR_CASES, ids=IDS)
def test_finite_on_degenerate_grams(est, case):
    if marginalized(est):
        data = {"zeros": np.zeros((5, 1)), "n2": np.array([[0.0], [1.0]]),
                "duplicates": np.array([[0.0], [0.0], [0.0], [1.0]])}.get(case)
        if data is None:
            pytest.skip("marginalized estimators act through the data")
        if case == "zeros":
            with pytest.raises(ValueError, match="every pair of points ties"):
                est.fit(data)
            return
        emb = est.fit(data)
        assert np.all(np.isfinite(emb.smoothing)) and np.isfinite(emb.norm2())
        return
    K = DEGENERATE[case]
    rank = getattr(est, "rank", None)
    if rank is not None and rank > K.shape[0]:
        with pytest.raises(ValueError, match="at most the sample size"):
            est.weights(K)
        return
    beta, params = est.weights(K)
    assert beta.shape == (K.shape[0],) and np.all(np.isfinite(beta))
    for k, v in params.items():
        if isinstance(v, (float, int)) and not isinstance(v, bool):
            assert np.isfinite(v), (k, v)
