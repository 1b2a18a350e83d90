"""KCI against causal-learn's ``KCI_CInd`` (pinned values, made by
``tests/reference/gen_causallearn.py`` with causal-learn 0.1.4.8).

With causal-learn's settings — its "empirical" widths, ridge ``epsilon = 1e-3``
(``lam = epsilon / n``), x augmented by ``z / 2``, one regression for x and y —
kmtests' statistic times ``n^2`` is causal-learn's ``Vstat``, and the gamma p-value is
causal-learn's (causal-learn drops eigen-directions below ``1e-5`` of the largest
before its moments, kmtests keeps them: relative differences of ~1e-5).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kmtests import conditional_independence_test
from kmtests.null.chi2 import null_eigenvalues

REF = json.loads((Path(__file__).parent / "reference" / "causallearn_reference.json")
                 .read_text())


@pytest.mark.parametrize("case", REF["cases"], ids=lambda c: f"seed{c['seed']}_n{c['n']}")
def test_kci_equals_causal_learn(case):
    x, y, z = (np.asarray(case[k]) for k in "xyz")
    n, bw = case["n"], case["bandwidth"]
    res = conditional_independence_test(x, y, z, bandwidth_x=bw, bandwidth_y=bw,
                                        bandwidth_z=bw, lam=case["epsilon"] / n,
                                        null_moments="zhang")
    assert res.statistic * n * n == pytest.approx(case["statistic"], rel=1e-8)
    assert res.pvalue == pytest.approx(case["pvalue_gamma"], rel=1e-3, abs=1e-15)
    assert res.params["x"]["epsilon"] == pytest.approx(case["epsilon"])
    # the weights of the chi-square null: the eigenvalues of the product of the residual
    # Gram matrices (causal-learn's, unscaled, are n^2 times kmtests')
    ref = np.asarray(case["null_eigenvalues"])
    from kmtests import _plan

    plan = _plan.plan_of(conditional_independence_test, x, y, z,
                         bandwidth_x=bw, bandwidth_y=bw, bandwidth_z=bw, lam=case["epsilon"] / n)
    kf = plan.statistic.prepare(plan.problem, plan.engine, plan.tuning, None).kernel_form()
    ours = null_eigenvalues(kf.Kc, kf.Lc) * n * n
    assert ours.sum() == pytest.approx(ref.sum(), rel=1e-3)  # their truncation
    # with their truncation (eigen-directions of each residual Gram matrix below 1e-5 of
    # the largest dropped), the weights are theirs to rounding

    def truncated(K):
        w, V = np.linalg.eigh(K)
        keep = w > w.max() * 1e-5
        return (V[:, keep] * w[keep]) @ V[:, keep].T

    M = truncated(kf.Kc) * truncated(kf.Lc)
    theirs = np.sort(np.linalg.eigvalsh(M))[::-1][: ref.size]
    np.testing.assert_allclose(theirs, ref, rtol=1e-7, atol=1e-9 * ref[0])


def test_the_reference_covers_rejection_and_not():
    ps = [c["pvalue_gamma"] for c in REF["cases"]]
    assert min(ps) < 1e-6 and max(ps) > 0.3
