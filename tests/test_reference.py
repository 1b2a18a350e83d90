"""kmtests against values pinned from independent implementations.

The reference values live in ``tests/reference/*.json``, written by
``tests/reference/gen_hyppo.py`` (hyppo 0.5.2) and ``tests/reference/gen_r.R``
(R: kernlab, energy, and Gretton et al.'s gamma formulas written out in R).
The inputs are stored in the JSON too, so neither hyppo nor R is needed here.
``tests/reference/README.md`` documents provenance and derives every scaling
relation used below; the relations are exact algebraic identities (no fitted
constants), so the default tolerance is ``rtol = 1e-10`` — observed agreement
is ~1e-14 relative.  The only looser tolerance is for kernlab's Laplacian
kernel, which rounds squared distances to 9 decimals (derived bound below).

Notation: n, m sample sizes, N = n + m; K the pooled Gram matrix;
S the "same sample" label Gram matrix (S_ij = 1 if i and j are in the same
sample); ``c_b = 2 n^2 m^2 / N^4`` and
``c_u = 2 n m (n-1)(m-1) / (N (N-1)(N-2)(N-3))``, for which (README, Sec. 3)

    HSIC_b(K, S) = c_b * MMD^2_b,     HSIC_u(K, S) = c_u * MMD^2_u,
    HSIC_b(S, S) = 2 c_b,             HSIC_u(S, S) = 2 c_u.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import kmtests
from kmtests.kernels import Gaussian, Laplacian, Polynomial, median_bandwidth

REF_DIR = Path(__file__).parent / "reference"
HYPPO = json.loads((REF_DIR / "hyppo_reference.json").read_text())
RREF = json.loads((REF_DIR / "r_reference.json").read_text())

RTOL = 1e-10  # exact identities; only floating-point rounding separates the two sides


def _arr(v) -> np.ndarray:
    return np.asarray(v, dtype=np.float64)


def _ids(cases):
    return [c["name"] for c in cases]


def _assert_close(actual, expected, *, rtol=RTOL, atol=0.0, what=""):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


def c_b(n: int, m: int) -> float:
    N = n + m
    return 2.0 * n * n * m * m / N**4


def c_u(n: int, m: int) -> float:
    N = n + m
    return 2.0 * n * m * (n - 1) * (m - 1) / (N * (N - 1) * (N - 2) * (N - 3))


def _label_gram(n: int, m: int) -> np.ndarray:
    S = np.zeros((n + m, n + m))
    S[:n, :n] = 1.0
    S[n:, n:] = 1.0
    return S


# --------------------------------------------------------------------------
# The scaling identities behind the hyppo relations (kmtests-internal checks
# of the algebra in README Sec. 3, so that a failure below can be attributed).
# --------------------------------------------------------------------------

@pytest.mark.parametrize("case", HYPPO["two_sample"], ids=_ids(HYPPO["two_sample"]))
def test_label_kernel_identities(case):
    """HSIC with the two-sample label kernel S is a fixed multiple of MMD^2.

    Not a reference value: checks the identities HSIC_b(K, S) = c_b MMD^2_b,
    HSIC_u(K, S) = c_u MMD^2_u, HSIC_b(S, S) = 2 c_b, HSIC_u(S, S) = 2 c_u
    (derived in README Sec. 3) on kmtests itself, Gaussian and distance kernels.
    """
    x, y = _arr(case["x"]), _arr(case["y"])
    n, m = len(x), len(y)
    z, S = np.vstack([x, y]), _label_gram(n, m)
    for kernel, bw in (("gaussian", case["bandwidth"]), ("distance", None)):
        kw = {} if bw is None else {"bandwidth": bw}
        kwx = {} if bw is None else {"bandwidth_x": bw}
        for st, c in (("biased", c_b(n, m)), ("unbiased", c_u(n, m))):
            h = kmtests.hsic(z, S, kernel_x=kernel, kernel_y="precomputed", statistic=st, **kwx)
            _assert_close(h, c * kmtests.mmd(x, y, kernel=kernel, statistic=st, **kw),
                          what=f"{kernel} {st}")
            hss = kmtests.hsic(S, S, kernel_x="precomputed", kernel_y="precomputed",
                               statistic=st)
            _assert_close(hss, 2 * c)


# --------------------------------------------------------------------------
# hyppo 0.5.2
# --------------------------------------------------------------------------

def _hyppo_mmd_from_kmtests(x, y, bandwidth, bias):
    """hyppo's MMD statistic expressed through kmtests' MMD^2 and HSIC (README Sec. 3.1)."""
    n, m = len(x), len(y)
    z = np.vstack([x, y])
    st = "biased" if bias else "unbiased"
    mmd2 = kmtests.mmd(x, y, kernel="gaussian", bandwidth=bandwidth, statistic=st)
    hkk = kmtests.hsic(z, z, bandwidth_x=bandwidth, bandwidth_y=bandwidth, statistic=st)
    if bias:
        cb = c_b(n, m)
        return cb * np.sqrt(cb * mmd2 / np.sqrt(hkk * 2 * cb))
    cu = c_u(n, m)
    return c_b(n, m) * cu * mmd2 / np.sqrt(hkk * 2 * cu)


@pytest.mark.parametrize("bias", [True, False], ids=["biased", "unbiased"])
@pytest.mark.parametrize("case", HYPPO["two_sample"], ids=_ids(HYPPO["two_sample"]))
def test_hyppo_mmd_gaussian(case, bias):
    """hyppo MMD with a fixed Gaussian bandwidth.

    hyppo call (gamma = 1 / (2 bandwidth^2))::

        hyppo.ksample.MMD(compute_kernel="gaussian", gamma=gamma, bias=bias).statistic(x, y)

    hyppo computes ``Hsic`` (a distance *correlation* of the kernel-induced
    distances 1 - k, square-rooted when biased) between the pooled sample and
    the 0/1 labels, times ``c_b``. Hence, with K the pooled Gaussian Gram::

        bias=True:  c_b * sqrt( c_b MMD^2_b / sqrt(HSIC_b(K, K) * 2 c_b) )
        bias=False: c_b * c_u MMD^2_u / sqrt(HSIC_u(K, K) * 2 c_u)
    """
    x, y = _arr(case["x"]), _arr(case["y"])
    key = "MMD_biased" if bias else "MMD_unbiased"
    assert case["gamma"] == 1.0 / (2.0 * case["bandwidth"] ** 2)
    _assert_close(_hyppo_mmd_from_kmtests(x, y, case["bandwidth"], bias), case["hyppo"][key],
                  what=case["call"][key])


MEDIAN_TWO = [c for c in HYPPO["two_sample"] if "MMD_median_biased" in c["hyppo"]]


@pytest.mark.parametrize("bias", [True, False], ids=["biased", "unbiased"])
@pytest.mark.parametrize("case", MEDIAN_TWO, ids=_ids(MEDIAN_TWO))
def test_hyppo_mmd_median_heuristic(case, bias):
    """hyppo MMD with its default (median) bandwidth vs kmtests' default "median".

    hyppo call::

        hyppo.ksample.MMD(bias=bias).statistic(x, y)

    hyppo sets gamma = 1 / (2 med^2), med = median of the pooled pairwise
    Euclidean distances; kmtests' bandwidth is sqrt(median of squared
    distances). They coincide when the number of pairs N(N-1)/2 is odd (one
    middle element), as in these cases (N = 22, 23). Same relation as
    :func:`test_hyppo_mmd_gaussian`, here through ``bandwidth="median"``.
    """
    x, y = _arr(case["x"]), _arr(case["y"])
    assert case["n_pairs_pooled"] % 2 == 1
    key = "MMD_median_biased" if bias else "MMD_median_unbiased"
    _assert_close(_hyppo_mmd_from_kmtests(x, y, "median", bias), case["hyppo"][key],
                  what=case["call"][key])


@pytest.mark.parametrize("bias", [True, False], ids=["biased", "unbiased"])
@pytest.mark.parametrize("case", HYPPO["two_sample"], ids=_ids(HYPPO["two_sample"]))
def test_hyppo_energy(case, bias):
    """hyppo Energy (Euclidean distance) vs kmtests MMD^2 with kernel="distance".

    hyppo call::

        hyppo.ksample.Energy(bias=bias).statistic(x, y)

    hyppo returns ``_dcov(D_pooled, D_labels) * N^4 / (2 n^2 m^2)``. The
    biased ``_dcov`` is square-rooted (dCov_n, not dCov_n^2), so::

        bias=True:  N^2 / (n m) * sqrt(MMD^2_b)          (= N^2/(n m) sqrt(E_n / 2))
        bias=False: (2 c_u / c_b) * MMD^2_u              (= (c_u/c_b) E_u)

    with E_n = 2 MMD^2_b, E_u = 2 MMD^2_u the V- and U-statistic energy distances.
    """
    x, y = _arr(case["x"]), _arr(case["y"])
    n, m = len(x), len(y)
    N = n + m
    if bias:
        pred = N**2 / (n * m) * np.sqrt(kmtests.mmd(x, y, kernel="distance", statistic="biased"))
        key = "Energy_biased"
    else:
        pred = 2 * c_u(n, m) / c_b(n, m) * kmtests.mmd(x, y, kernel="distance",
                                                     statistic="unbiased")
        key = "Energy_unbiased"
    _assert_close(pred, case["hyppo"][key], what=case["call"][key])


def _hsic_corr(x, y, bias, **kw):
    """hyppo-style normalised HSIC: HSIC(K,L) / sqrt(HSIC(K,K) HSIC(L,L)), sqrt'ed if biased."""
    st = "biased" if bias else "unbiased"
    kx = {k: v for k, v in kw.items() if k.endswith("_x")}
    ky = {k: v for k, v in kw.items() if k.endswith("_y")}
    as_y = {k[:-2] + "_y": v for k, v in kx.items()}
    as_x = {k[:-2] + "_x": v for k, v in ky.items()}
    hxy = kmtests.hsic(x, y, statistic=st, **kw)
    hxx = kmtests.hsic(x, x, statistic=st, **kx, **as_y)
    hyy = kmtests.hsic(y, y, statistic=st, **as_x, **ky)
    r = hxy / np.sqrt(hxx * hyy)
    return np.sqrt(r) if bias else r


@pytest.mark.parametrize("bias", [True, False], ids=["biased", "unbiased"])
@pytest.mark.parametrize("case", HYPPO["independence"], ids=_ids(HYPPO["independence"]))
def test_hyppo_hsic_gaussian(case, bias):
    """hyppo Hsic with one fixed Gaussian bandwidth for x and y.

    hyppo call (gamma = 1 / (2 bandwidth^2), used for both x and y)::

        hyppo.independence.Hsic(compute_kernel="gaussian", gamma=gamma, bias=bias).statistic(x, y)

    hyppo runs Dcorr on the distances 1 - K / max(K) = 1 - K (double- or
    U-centring turns them into -HKH resp. minus the U-centred K), so::

        bias=True:  sqrt( HSIC_b(K, L) / sqrt(HSIC_b(K, K) HSIC_b(L, L)) )
        bias=False:       HSIC_u(K, L) / sqrt(HSIC_u(K, K) HSIC_u(L, L))
    """
    x, y = _arr(case["x"]), _arr(case["y"])
    bw = case["bandwidth"]
    key = "Hsic_biased" if bias else "Hsic_unbiased"
    _assert_close(_hsic_corr(x, y, bias, bandwidth_x=bw, bandwidth_y=bw), case["hyppo"][key],
                  what=case["call"][key])


MEDIAN_IND = [c for c in HYPPO["independence"] if "Hsic_median_biased" in c["hyppo"]]


@pytest.mark.parametrize("bias", [True, False], ids=["biased", "unbiased"])
@pytest.mark.parametrize("case", MEDIAN_IND, ids=_ids(MEDIAN_IND))
def test_hyppo_hsic_median_heuristic(case, bias):
    """hyppo Hsic with its default bandwidth.

    hyppo call::

        hyppo.independence.Hsic(bias=bias).statistic(x, y)

    hyppo takes the median distance of **x** and uses it for both kernels
    (compute_kern computes one gamma from x); with an odd number of pairs
    (n = 15, 22) that is kmtests' ``median_bandwidth(x)``. Relation as in
    :func:`test_hyppo_hsic_gaussian`.
    """
    x, y = _arr(case["x"]), _arr(case["y"])
    assert case["n_pairs"] % 2 == 1
    bw = median_bandwidth(x)
    key = "Hsic_median_biased" if bias else "Hsic_median_unbiased"
    _assert_close(_hsic_corr(x, y, bias, bandwidth_x="median", bandwidth_y=bw),
                  case["hyppo"][key], what=case["call"][key])


@pytest.mark.parametrize("bias", [True, False], ids=["biased", "unbiased"])
@pytest.mark.parametrize("case", HYPPO["independence"], ids=_ids(HYPPO["independence"]))
def test_hyppo_dcorr(case, bias):
    """hyppo Dcorr (Euclidean) vs normalised HSIC with kernel="distance".

    hyppo call::

        hyppo.independence.Dcorr(bias=bias).statistic(x, y)

    bias=True is dCor_n = sqrt(dCov^2 / sqrt(dVar^2_x dVar^2_y)) and dCov^2_n =
    4 HSIC_b (distance kernel); bias=False is the bias-corrected dCor^2
    (energy::bcdcor), the U-centred version, = HSIC_u ratio.
    """
    x, y = _arr(case["x"]), _arr(case["y"])
    key = "Dcorr_biased" if bias else "Dcorr_unbiased"
    _assert_close(_hsic_corr(x, y, bias, kernel_x="distance", kernel_y="distance"),
                  case["hyppo"][key], what=case["call"][key])


# --------------------------------------------------------------------------
# R: kernlab 0.9.32
# --------------------------------------------------------------------------

def _kmmd_kernels(case):
    return {
        "kmmd_rbf": Gaussian(bandwidth=case["bandwidth_gaussian"]),
        "kmmd_laplace": Laplacian(bandwidth=case["bandwidth_laplacian"]),
        "kmmd_poly": Polynomial(degree=case["poly_degree"], coef0=case["poly_offset"]),
    }


def _kernlab_entry_error(case, key) -> float:
    """Bound on |kernlab Gram entry - exact| (README Sec. 4).

    kernlab's laplacedot Gram computes ``exp(-sigma sqrt(round(d^2, 9)))``:
    |delta d^2| <= 5e-10, so |delta d| <= 5e-10 / (2 d_min) and
    |delta k| <= sigma * 5e-10 / (2 d_min) (k <= 1). rbfdot and polydot do
    not round (observed agreement ~1e-15): no extra allowance.
    """
    if key != "kmmd_laplace":
        return 0.0
    z = np.vstack([_arr(case["x"]), _arr(case["y"])])
    d = np.sqrt(((z[:, None, :] - z[None, :, :]) ** 2).sum(-1))
    d_min = d[np.triu_indices(len(z), 1)].min()
    return 1.01 * case["sigma_laplacedot"] * 5e-10 / (2 * d_min)


KMMD_KEYS = ["kmmd_rbf", "kmmd_laplace", "kmmd_poly"]


@pytest.mark.parametrize("key", KMMD_KEYS)
@pytest.mark.parametrize("case", RREF["two_sample"], ids=_ids(RREF["two_sample"]))
def test_kernlab_kmmd_biased(case, key):
    """kernlab ``mmdstats(.)[1]`` is the *unsquared* biased MMD_b.

    R calls (sigma = 1 / (2 bandwidth^2) for rbfdot, 1 / bandwidth for laplacedot)::

        res <- kernlab::kmmd(x, y, kernel = rbfdot(sigma = sigma))
        res <- kernlab::kmmd(x, y, kernel = laplacedot(sigma = sigma))
        res <- kernlab::kmmd(x, y, kernel = polydot(degree = d, scale = 1, offset = c))
        mmdstats(res)[1]     # sqrt(max(0, MMD^2_b))

    so ``mmdstats(res)[1]^2 == kmtests.mmd(x, y, statistic="biased")``.
    """
    x, y = _arr(case["x"]), _arr(case["y"])
    ref = case[key]
    kern = _kmmd_kernels(case)[key]
    got = kmtests.mmd(x, y, kernel=kern, statistic="biased")
    atol = 4 * _kernlab_entry_error(case, key)  # MMD^2_b = mean Kxx + mean Kyy - 2 mean Kxy
    _assert_close(got, ref["mmd1"] ** 2, atol=atol, what=ref["call"])


@pytest.mark.parametrize("key", KMMD_KEYS)
@pytest.mark.parametrize("case", RREF["two_sample"], ids=_ids(RREF["two_sample"]))
def test_kernlab_kmmd_unbiased(case, key):
    """kernlab ``mmdstats(.)[2]``: Gretton's equal-size MMD^2_u on the first M pairs.

    R call: as in :func:`test_kernlab_kmmd_biased`, then ``mmdstats(res)[2]``.

    kernlab uses only the first M = min(n, m) points of each sample and
    ``sum_{i != j} h(z_i, z_j) / (M (M-1))`` with
    h = k(x_i,x_j) + k(y_i,y_j) - k(x_i,y_j) - k(x_j,y_i): the cross terms
    k(x_i, y_i) are excluded, unlike kmtests' MMD^2_u (all n m cross pairs).
    With T = sum_i k(x_i, y_i) and S = sum_ij k(x_i, y_j) over i, j <= M (kernlab's Gram)::

        mmdstats(res)[2] = MMD^2_u(x[:M], y[:M]) + 2 (T - S / M) / (M (M - 1))
    """
    x, y = _arr(case["x"]), _arr(case["y"])
    M = min(len(x), len(y))
    ref = case[key]
    kern = _kmmd_kernels(case)[key]
    got = kmtests.mmd(x[:M], y[:M], kernel=kern, statistic="unbiased")
    pred = got + 2.0 * (ref["trace_Kxy_M"] - ref["sum_Kxy_M"] / M) / (M * (M - 1))
    err = _kernlab_entry_error(case, key)
    atol = 4 * err + 4 * err / (M - 1)  # statistic + the T, S correction
    _assert_close(pred, ref["mmd3"], atol=atol, what=ref["call"])


# --------------------------------------------------------------------------
# R: energy 1.7.11
# --------------------------------------------------------------------------

@pytest.mark.parametrize("case", RREF["two_sample"], ids=_ids(RREF["two_sample"]))
def test_energy_edist(case):
    """energy's two-sample energy statistic vs MMD^2_b with kernel="distance".

    R calls::

        as.numeric(energy::edist(rbind(x, y), sizes = c(n, m)))
        energy::eqdist.etest(rbind(x, y), sizes = c(n, m), R = 0)$statistic

    both equal (n m / N) E_n, E_n = 2 mean|x-y| - mean|x-x'| - mean|y-y'|
    (V-statistics) = 2 MMD^2_b, so MMD^2_b = edist * N / (2 n m).
    """
    x, y = _arr(case["x"]), _arr(case["y"])
    n, m = len(x), len(y)
    got = kmtests.mmd(x, y, kernel="distance", statistic="biased")
    _assert_close(got, case["edist"] * (n + m) / (2 * n * m), what=case["edist_call"])
    _assert_close(got, case["eqdist_etest"] * (n + m) / (2 * n * m),
                  what=case["eqdist_etest_call"])


@pytest.mark.parametrize("case", RREF["independence"], ids=_ids(RREF["independence"]))
def test_energy_dcov_dcor(case):
    """energy's distance covariance/correlation vs HSIC with kernel="distance".

    R calls::

        energy::dcov(x, y)     # dCov_n = sqrt(V^2_n):      dcov^2 = 4 HSIC_b
        energy::dcor(x, y)     # dCor_n: dcor^2 = HSIC_b(K,L) / sqrt(HSIC_b(K,K) HSIC_b(L,L))
        energy::dcovU(x, y)    # U-statistic dCov^2:        dcovU = 4 HSIC_u
        energy::bcdcor(x, y)   # bias-corrected dCor^2 = HSIC_u(K,L) / sqrt(HSIC_u(K,K) HSIC_u(L,L))
    """
    x, y = _arr(case["x"]), _arr(case["y"])
    e = case["energy"]
    kw = dict(kernel_x="distance", kernel_y="distance")
    _assert_close(4 * kmtests.hsic(x, y, statistic="biased", **kw), e["dcov"] ** 2,
                  what="energy::dcov(x, y)^2")
    _assert_close(4 * kmtests.hsic(x, y, statistic="unbiased", **kw), e["dcovU"],
                  what="energy::dcovU(x, y)")
    _assert_close(_hsic_corr(x, y, True, **kw), e["dcor"], what="energy::dcor(x, y)")
    _assert_close(_hsic_corr(x, y, False, **kw), e["bcdcor"], what="energy::bcdcor(x, y)")


@pytest.mark.parametrize("case", RREF["independence"], ids=_ids(RREF["independence"]))
def test_gaussian_hsic_via_energy(case):
    """Gaussian HSIC_b / HSIC_u (different bandwidths for x and y) via R's energy.

    R calls (sigma_x = 1 / (2 bandwidth_x^2), sigma_y likewise)::

        Kx <- kernlab::kernelMatrix(rbfdot(sigma = sigma_x), x)
        Ky <- kernlab::kernelMatrix(rbfdot(sigma = sigma_y), y)
        energy::dcov(as.dist(1 - Kx), as.dist(1 - Ky))    # ^2 = HSIC_b
        energy::dcovU(as.dist(1 - Kx), as.dist(1 - Ky))   # = HSIC_u (Song et al.)

    1 - k is the kernel-induced distance with k(x, x) = 1: double centring
    gives H(1-K)H = -HKH, so dcov^2 = tr(HKH HLH)/n^2; U-centring gives minus
    the U-centred K with zero diagonal, so dcovU equals Song et al.'s HSIC_u.
    """
    x, y = _arr(case["x"]), _arr(case["y"])
    g = case["gaussian_via_energy"]
    kw = dict(bandwidth_x=case["bandwidth_x"], bandwidth_y=case["bandwidth_y"])
    assert case["sigma_x"] == pytest.approx(1 / (2 * case["bandwidth_x"] ** 2), rel=1e-15)
    _assert_close(kmtests.hsic(x, y, statistic="biased", **kw), g["dcov"] ** 2, what=g["call"])
    _assert_close(kmtests.hsic(x, y, statistic="unbiased", **kw), g["dcovU"], what=g["call"])


# --------------------------------------------------------------------------
# R: Gretton et al. (2008) gamma approximation, formulas written out in gen_r.R
# --------------------------------------------------------------------------

# the small reference cases (n = 15, 30) are where the gamma's variance is off by a factor
# ~1.3 against the exact permutation variance: the warning is right, the formulas are pinned
@pytest.mark.filterwarnings("ignore::kmtests.ApproximationWarning")
@pytest.mark.parametrize("case", RREF["independence"], ids=_ids(RREF["independence"]))
def test_hsic_gamma_pvalue_vs_gretton_formulas(case):
    """kmtests ``independence_test(method="gamma")`` vs Gretton et al. (2008) in R.

    R call (function defined in tests/reference/gen_r.R, after the authors'
    hsicTestGamma.m; the p-value is ``pgamma(m HSIC_b, shape, scale,
    lower.tail = FALSE)``)::

        gretton_hsic_gamma(kernelMatrix(rbfdot(sigma_x), x), kernelMatrix(rbfdot(sigma_y), y))

    Gretton fits the gamma law to m * HSIC_b (scale m V / E); kmtests fits it
    to HSIC_b (scale V / E): the same distribution of the same event.
    The p-value tolerance is 1e-10 relative (R's pgamma and SciPy's gammaincc
    agree to ~1e-14 here).
    """
    x, y = _arr(case["x"]), _arr(case["y"])
    ref = case["gretton_gamma"]
    res = kmtests.independence_test(x, y, bandwidth_x=case["bandwidth_x"],
                                    bandwidth_y=case["bandwidth_y"],
                                    method=kmtests.GammaMethod(moments="asymptotic"))
    _assert_close(res.statistic, ref["hsic_b"], what="HSIC_b")
    _assert_close(res.details["null_mean"], ref["null_mean"], what="null mean")
    _assert_close(res.details["null_var"], ref["null_var"], what="null variance")
    _assert_close(res.details["gamma_shape"], ref["gamma_shape"], what="gamma shape")
    _assert_close(res.details["gamma_scale"], ref["gamma_scale_for_HSIC_b"], what="gamma scale")
    _assert_close(res.pvalue, ref["pvalue"], what=ref["call"])


# --------------------------------------------------------------------------
# The comparisons above are sharp enough to catch small convention errors.
# --------------------------------------------------------------------------

def test_tolerance_detects_small_bandwidth_error():
    """A 1e-6 relative bandwidth error (e.g. a mis-converted gamma/sigma) must fail.

    Guards against the comparisons being vacuous: the same relations as in
    :func:`test_hyppo_mmd_gaussian` and :func:`test_gaussian_hsic_via_energy`
    with a slightly wrong bandwidth are outside the tolerance.
    """
    case = HYPPO["two_sample"][0]
    x, y = _arr(case["x"]), _arr(case["y"])
    bad = _hyppo_mmd_from_kmtests(x, y, case["bandwidth"] * (1 + 1e-6), True)
    with pytest.raises(AssertionError):
        _assert_close(bad, case["hyppo"]["MMD_biased"])
    rc = RREF["independence"][0]
    xr, yr = _arr(rc["x"]), _arr(rc["y"])
    bad = kmtests.hsic(xr, yr, bandwidth_x=rc["bandwidth_x"] * (1 + 1e-6),
                       bandwidth_y=rc["bandwidth_y"])
    with pytest.raises(AssertionError):
        _assert_close(bad, rc["gaussian_via_energy"]["dcov"] ** 2)
