"""kmtests' aggregated-test statistics against the authors' MMDAgg and MMD-FUSE code.

The reference numbers (``tests/reference/authors_reference.json``) were made
by ``tests/reference/gen_authors.py``, which runs the published functions
``mmdagg`` (numpy) and ``mmdfuse`` (jax, float64) and records their
permutations, bandwidths and the statistic of every member on every
permutation. Here the same splits are evaluated by kmtests' engines:

* every MMDAgg member statistic (MMD^2_u of a Gaussian kernel, their
  ``exp(-d^2/b^2)`` being our bandwidth ``b/sqrt(2)``) and every member
  p-value (the rank convention ``#{T_b >= T}/(B1 + 1)``);
* every MMD-FUSE normalised member ``nu T_j / N_j`` and the fused statistic
  ``log sum_j w_j exp(nu T_j / N_j)`` on every permutation, and the p-value.

The calibration differs on purpose (kmtests computes the MMDAgg level
correction on all arrangements with exact level instead of two sets of
permutations and a bisection), so the decisions are not compared.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from kmtests.null.combine import _rank_pvalues, fuse_statistic
from kmtests.statistics.mmd import fuse_norm_mmd as _fuse_norm_mmd
from kmtests.engines.mmd import PooledGram, mmd_values
from kmtests.estimators._rules import Uniform
from kmtests.kernels import Gaussian

REF = json.loads((Path(__file__).parent / "reference" / "authors_reference.json").read_text())


def _perms(idx: np.ndarray, m: int, original_row: int) -> np.ndarray:
    """Our split rows from the authors' index rows: point j is in x when idx[b, j] < m (their
    ``take_along_axis`` of the membership vector), the original row is the identity."""
    rows = []
    for b, r in enumerate(idx):
        if b == original_row:
            rows.append(np.arange(idx.shape[1]))
            continue
        rows.append(np.r_[np.flatnonzero(r < m), np.flatnonzero(r >= m)])
    return np.asarray(rows, dtype=np.int64)


def _member_stats(z: np.ndarray, bandwidth: float, perms: np.ndarray, m: int) -> np.ndarray:
    pg = PooledGram.of(Gaussian(bandwidth=bandwidth).centred_gram(z))
    return mmd_values(pg, perms, m, Uniform(fixed=1.0), True).stat


@pytest.mark.parametrize("case", REF["mmdagg"], ids=lambda c: f"m{len(c['x'])}_n{len(c['y'])}")
def test_mmdagg_member_statistics_and_pvalues(case):
    x, y = np.array(case["x"]), np.array(case["y"])
    m, B1 = len(x), case["B1"]
    z = np.vstack([x, y])
    in_x = np.array(case["in_x"]).T.astype(bool)    # (B1 + B2 + 1, m + n)
    M = np.array(case["M"])                         # (members, B1 + B2 + 1)
    perms = np.array([np.r_[np.flatnonzero(r), np.flatnonzero(~r)] for r in in_x])
    assert np.array_equal(perms[B1], np.arange(len(z)))  # their original column
    ours = np.stack([_member_stats(z, b / math.sqrt(2), perms, m)
                     for b in case["bandwidths"]])
    for j in range(len(M)):  # each bandwidth at the rounding scale of its statistics
        np.testing.assert_allclose(ours[j], M[j], rtol=1e-9,
                                   atol=1e-11 * float(np.max(np.abs(M[j]))))
    # member p-values: rank of the original among the B1 + 1 first columns
    T = M[:, :B1 + 1].T                             # arrangements x members
    P = _rank_pvalues(T, np.zeros_like(T))
    np.testing.assert_allclose(P[B1], case["p_vals"], rtol=0, atol=1e-15)


@pytest.mark.parametrize("case", REF["mmdfuse"], ids=lambda c: f"n{len(c['x'])}")
def test_mmdfuse_members_fused_statistic_and_pvalue(case):
    x, y = np.array(case["x"]), np.array(case["y"])
    n = len(x)
    z = np.vstack([x, y])
    idx = np.array(case["idx"])
    B = idx.shape[0] - 1
    M = np.array(case["M"])                         # (members, B + 1), row B the original
    perms = _perms(idx, n, B)
    nu = math.sqrt(n * (n - 1))
    stats = np.stack([_member_stats(z, b, perms, n) for b in case["bandwidths"]], axis=1)
    norms = np.array([_fuse_norm_mmd(Gaussian(bandwidth=b), z, n) for b in case["bandwidths"]])
    np.testing.assert_allclose(nu * stats / norms, M.T, rtol=1e-9, atol=1e-10)
    w = np.full(len(norms), 1.0 / len(norms))
    fused = fuse_statistic(stats, norms, w, nu)
    np.testing.assert_allclose(fused, case["all_statistics"], rtol=1e-10, atol=1e-10)
    p = float(np.mean(fused >= fused[B] - 1e-12 * max(1.0, abs(fused[B]))))
    assert p == pytest.approx(case["pvalue"], abs=1e-7)  # theirs is a float32 mean


def test_the_reference_cases_cover_rejection_and_not():
    """The pinned cases include a rejection and a non-rejection of each published test."""
    assert {c["reject"] for c in REF["mmdagg"]} == {0, 1}
    assert {c["reject"] for c in REF["mmdfuse"]} == {0, 1}


def test_mmdagg_weights_equal_the_authors():
    """``weights(kind, m)`` equals the authors' ``create_weights`` for m = 1..12 (the
    centred weights of an even m use ``+ 1/2``; they once used ``+ 1``)."""
    from kmtests.null.combine import weights

    ref = json.loads((Path(__file__).parent / "reference" / "weights_reference.json")
                     .read_text())["weights"]
    for kind, by_m in ref.items():
        for m, w in by_m.items():
            np.testing.assert_allclose(weights(kind, int(m)), w, rtol=1e-13, err_msg=kind)
