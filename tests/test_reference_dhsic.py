"""kmtests' joint independence test against the R package dHSIC (Pfister & Peters).

The numbers come from ``tests/reference/gen_dhsic.R`` (dHSIC 2.2, and 2.1 for the
bootstrap, whose 2.2 version fails; see ``tests/reference/README.md``) and are stored
with their inputs in ``tests/reference/dhsic_reference.json``, so R is not needed
here. The R calls, for ``X = list(x1, ..., xd)``::

    dhsic(X, kernel = kernels, bandwidth = bandwidths)$dHSIC
    dhsic.test(X, method = "gamma", kernel = kernels, bandwidth = bandwidths)
    dhsic.test(X, method = "permutation", B = 4000, ...)$p.value
    dhsic.test(X, method = "bootstrap", B = 4000, ...)$p.value        # dHSIC 2.1

with ``kernels`` ``"gaussian.fixed"`` (the given bandwidths: kmtests' Gaussian
kernel with the same bandwidths), ``"gaussian"`` (the package's median-heuristic
bandwidth, recorded; kmtests' :func:`~kmtests.joint.dhsic_bandwidth` recomputes
it) or ``"discrete"`` (``1{x_i = x_j}``: a precomputed Gram matrix here). The
gamma approximation's shape, scale, mean and variance are the local variables
``a``, ``b``, ``exp.est``, ``var.est`` of ``dhsic.test``, read with ``trace()``;
R's statistic is ``n dHSIC``, so its scale is ``n`` times kmtests'.

The statistic and the gamma numbers are exact identities: ``rtol = 1e-10``
(observed: ~1e-14). The permutation and bootstrap p-values are Monte Carlo
estimates on both sides (B = 4000, different random streams): they are compared
within five standard errors of the difference.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import kmtests
from kmtests.joint import dhsic_bandwidth
from kmtests.kernels import median_bandwidth

REF = json.loads((Path(__file__).parent / "reference" / "dhsic_reference.json").read_text())
CASES = REF["cases"]
RTOL = 1e-10


def _ids(cases):
    return [c["name"] for c in cases]


def _inputs(case):
    """(variables, kernels, bandwidths) for kmtests from an R case."""
    variables, kernels, bandwidths = [], [], []
    kinds = case["kernels"] if len(case["kernels"]) == case["d"] else \
        case["kernels"] * case["d"]
    for k, (v, kind) in enumerate(zip(case["variables"], kinds)):
        v = np.asarray(v, dtype=np.float64)
        if kind == "discrete":
            variables.append(np.all(v[:, None, :] == v[None, :, :], axis=2).astype(float))
            kernels.append("precomputed")
            bandwidths.append("median")  # not used
            continue
        variables.append(v)
        kernels.append("gaussian")
        bandwidths.append(case["given_bandwidths"][k] if kind == "gaussian.fixed"
                          else case["r_bandwidths"][k])
    return variables, kernels, bandwidths


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_statistic_matches_r(case):
    """``dHSIC::dhsic(X, kernel, bandwidth)$dHSIC`` for d = 2, 3, 4, fixed and R-median
    bandwidths, a two-column variable and the discrete kernel."""
    variables, kernels, bws = _inputs(case)
    got = kmtests.dhsic(*variables, kernels=kernels, bandwidths=bws)
    np.testing.assert_allclose(got, case["dhsic"], rtol=RTOL)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_gamma_matches_r(case):
    """``dhsic.test(X, method = "gamma")``: p-value, shape, scale (R's / n), and the
    mean and variance estimates."""
    variables, kernels, bws = _inputs(case)
    res = kmtests.joint_independence_test(*variables, kernels=kernels, bandwidths=bws,
                                          method="gamma")
    g, n = case["gamma"], case["n"]
    np.testing.assert_allclose(res.statistic * n, g["statistic"], rtol=RTOL)
    np.testing.assert_allclose(res.pvalue, g["p_value"], rtol=1e-8)
    np.testing.assert_allclose(res.details["gamma_shape"], g["shape"], rtol=RTOL)
    np.testing.assert_allclose(res.details["gamma_scale"] * n, g["scale"], rtol=RTOL)
    np.testing.assert_allclose(res.details["null_mean"], g["mean"], rtol=RTOL)
    np.testing.assert_allclose(res.details["null_var"], g["var"], rtol=RTOL)
    assert res.level == "approximate"


MEDIAN_CASES = [c for c in CASES if c["kernels"] == "gaussian"]


@pytest.mark.parametrize("case", MEDIAN_CASES, ids=_ids(MEDIAN_CASES))
def test_r_bandwidth_rule(case):
    """``dhsic_bandwidth`` is R's median heuristic (``sqrt(m / 2)``, ``m`` the upper median
    of the squared distances); kmtests' own ``"median"`` is ``sqrt(2)`` times it when the
    number of pairs is odd (one middle value) and differs slightly otherwise."""
    for v, r_bw in zip(case["variables"], case["r_bandwidths"]):
        v = np.asarray(v)
        np.testing.assert_allclose(dhsic_bandwidth(v), r_bw, rtol=1e-13)
        ours = median_bandwidth(v)
        pairs = v.shape[0] * (v.shape[0] - 1) // 2
        if pairs % 2:
            np.testing.assert_allclose(ours, np.sqrt(2) * r_bw, rtol=1e-13)
        else:
            assert ours != pytest.approx(np.sqrt(2) * r_bw, rel=1e-13)
            assert ours == pytest.approx(np.sqrt(2) * r_bw, rel=0.1)


def _mc_close(ours, theirs, B):
    """Two Monte Carlo p-values of the same quantity, within 5 standard errors of their
    difference (plus one draw)."""
    p = 0.5 * (ours + theirs)
    se = np.sqrt(2 * max(p * (1 - p), 1.0 / B) / B)
    assert abs(ours - theirs) <= 5 * se + 1.0 / (B + 1), (ours, theirs)


PERM_CASES = [c for c in CASES if "permutation" in c]
BOOT_CASES = [c for c in CASES if "bootstrap" in c]


@pytest.mark.parametrize("case", PERM_CASES, ids=_ids(PERM_CASES))
def test_permutation_pvalue_matches_r(case):
    """``dhsic.test(X, method = "permutation", B = 4000)$p.value`` (a Monte Carlo
    estimate on each side: compared within 5 standard errors)."""
    variables, kernels, bws = _inputs(case)
    B = case["permutation"]["B"]
    res = kmtests.joint_independence_test(*variables, kernels=kernels, bandwidths=bws,
                                          n_resamples=B, rng=7)
    _mc_close(res.pvalue, case["permutation"]["p_value"], B)


@pytest.mark.parametrize("case", BOOT_CASES, ids=_ids(BOOT_CASES))
def test_bootstrap_pvalue_matches_r(case):
    """``dhsic.test(X, method = "bootstrap", B = 4000)$p.value`` of dHSIC 2.1 (2.2's
    bootstrap stops with "non-conformable arrays"), within 5 standard errors."""
    assert REF["bootstrap_2.2_error"] == "non-conformable arrays"
    variables, kernels, bws = _inputs(case)
    B = case["bootstrap"]["B"]
    res = kmtests.joint_independence_test(*variables, kernels=kernels, bandwidths=bws,
                                          method="bootstrap", n_resamples=B, rng=7)
    _mc_close(res.pvalue, case["bootstrap"]["p_value"], B)


def test_tolerance_detects_a_small_bandwidth_error():
    """The statistic's tolerance can fail: a 1e-6 relative change of one bandwidth moves
    dHSIC by far more than rtol."""
    case = CASES[2]
    variables, kernels, bws = _inputs(case)
    bws = [bws[0] * (1 + 1e-6)] + bws[1:]
    got = kmtests.dhsic(*variables, kernels=kernels, bandwidths=bws)
    assert abs(got - case["dhsic"]) > 100 * RTOL * case["dhsic"]
