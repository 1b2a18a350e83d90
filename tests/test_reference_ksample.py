r"""kmtests' k-sample test against values pinned from dcor 0.7 and hyppo 0.5.2.

The peers' values are in ``benchmarks/reference/ksample_peers.json``, written by
``benchmarks/reference/ksample_peers.py`` (which records the exact calls and the
versions). The samples are redrawn here from the seeds stored there
(``default_rng(seed)``, ``gen.normal(loc, scale, size=(n, d))`` per sample, in
order) and checked against the stored SHA-256 of their bytes, so neither dcor nor
hyppo is needed. Six cases: k = 2, 3, 5; equal and unequal sizes; d = 1 and 3.

Notation. Samples ``a = 1..k`` of sizes ``n_a``, ``N = sum n_a``,
``W = sum_{a<b} n_a n_b``; ``D_ab`` the pairwise ``MMD^2`` (``_b`` V-form,
``_u`` U-form); kmtests' statistic ``T = sum_{a<b} (n_a n_b / W) D_ab``
(``T_b`` / ``T_u``); ``K`` the pooled Gram matrix, ``S`` the "same sample"
indicator (``S_ij = 1`` iff i, j are in the same sample), ``HSIC_b`` / ``HSIC_u``
as in ``tests/reference/README.md`` (V-statistic ``tr(HKH HSH)/N^2``; Song et
al.'s U-statistic); ``mu_g`` the embedding of sample g, ``mu`` the pooled one.
The "distance" kernel is ``(|x| + |y| - |x - y|)/2``, whose MMD^2 is half the
energy distance (the ``|x|`` terms cancel in V- and U-form alike).

Relations (exact identities; derivations in ``benchmarks/README.md``, section
"k-sample test: power and speed against dcor and hyppo"):

dcor (distance kernel)
    (D1) ``energy_distance(x_a, x_b, estimation_stat="V"|"U") = 2 D_ab`` (b | u).
    (D2) ``T = sum_{a<b} (n_a n_b / W) ED_ab / 2`` for any sizes; the DISCO
         between-sample statistic ``sum_{a<b} n_a n_b/(2N) ED^V_ab`` is
         ``(W/N) T_b``.
    (D3) ``energy_test(*samples).statistic = sum_{a<b} n_a n_b/(n_a+n_b) ED_ab``:
         ``= (2 n m / N) T`` for k = 2, ``= n k (k-1)/2 T`` for k equal sizes n;
         for unequal sizes and k >= 3 the weights differ from kmtests' and it is
         ``sum n_a n_b/(n_a+n_b) 2 D_ab`` with the post-hoc pairwise D_ab.
hyppo (labels: 0/1 for k = 2, one-hot for k >= 3; Gaussian ``gamma = 1/(2 bw^2)``)
    (H1) ``KSample("Dcorr"|"Hsic", bias=False).statistic = HSIC_u(K, S) /
         sqrt(HSIC_u(K, K) HSIC_u(S, S))``; ``bias=True``: the square root of the
         same ratio in V-form (K: distance | Gaussian kernel).
    (H2) ``HSIC(K, S)`` against T: k = 2, any sizes: ``HSIC_b = c_b T_b``,
         ``HSIC_u = c_u T_u`` (c_b, c_u of tests/reference/README.md); equal sizes
         n: ``HSIC_b = (k-1)/(2k^2) T_b``, ``HSIC_u = (n-1) W / (N (N-1) (N-3)) T_u``;
         in general ``HSIC_b(K, S) = N^-2 sum_g n_g^2 |mu_g - mu|^2`` while
         ``T_b = (N/W) sum_g n_g |mu_g - mu|^2`` (weights n_g^2 against n_g), with
         ``|mu_g - mu|^2 = N^-1 sum_h n_h D_gh - (2 N^2)^-1 sum_{h,l} n_h n_l D_hl``.
    (H3) ``DISCO(bias=False) = c N k HSIC_u(K, S)``, ``DISCO(bias=True) =
         (N k / 2) sqrt(2 c HSIC_b(K, S))`` with c = 1 (k = 2) or sqrt(2) (k >= 3,
         the one-hot label distance); equal sizes only (hyppo refuses others).
    (H4) k = 2: ``MMD(gamma, bias) = c_b KSample("Hsic", gamma, bias)``,
         ``Energy(bias=False) = 2 c_u T_u / c_b``, ``Energy(bias=True) =
         sqrt(2 c_b T_b) / c_b``.

Since ``HSIC(K, K)`` (pooled sample) and ``HSIC(S, S)`` (sizes) do not change
under permutations, the peers' permutation tests are kmtests' permutation test
whenever their statistic is an increasing function of T: k = 2, or equal sizes
(where ``T_b`` and ``T_u`` are also equivalent: ``sum_g t_g = tr K_c`` is fixed).
There the p-values are compared within Monte Carlo error.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

import kmtests

REF_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "reference" / \
    "ksample_peers.json"
REF = json.loads(REF_PATH.read_text())
CASES = REF["cases"]
EQUIVALENT = [c for c in CASES if "pvalues" in c]

RTOL = 1e-10  # exact identities; only floating-point rounding separates the two sides
Z_MC = 4.0  # p-values: |p_kmtests - p_peer| <= Z_MC binomial standard errors


def _ids(cases):
    return [c["name"] for c in cases]


def draw(case) -> list[np.ndarray]:
    """The case's samples, as ``benchmarks/reference/ksample_peers.py`` draws them."""
    gen = np.random.default_rng(case["seed"])
    return [gen.normal(loc, scale, size=(n, case["d"]))
            for n, loc, scale in zip(case["sizes"], case["locs"], case["scales"])]


def _pairs(k):
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


def _labels(sizes) -> np.ndarray:
    """The "same sample" indicator S (N x N)."""
    g = np.repeat(np.arange(len(sizes)), sizes)
    return (g[:, None] == g[None, :]).astype(np.float64)


def _W(sizes) -> float:
    sizes = np.asarray(sizes, dtype=np.float64)
    return float((sizes.sum() ** 2 - (sizes ** 2).sum()) / 2)


def c_b(n, m):
    return 2.0 * n * n * m * m / (n + m) ** 4


def c_u(n, m):
    N = n + m
    return 2.0 * n * m * (n - 1) * (m - 1) / (N * (N - 1) * (N - 2) * (N - 3))


def _kw(case, kernel):
    return {"bandwidth": case["bandwidth"]} if kernel == "gaussian" else {}


def T(case, kernel, form, xs=None):
    """kmtests' k-sample statistic (the test's p-value is not used here)."""
    xs = draw(case) if xs is None else xs
    return kmtests.k_sample_test(*xs, kernel=kernel, statistic=form, n_resamples=19, rng=0,
                                 **_kw(case, kernel)).statistic


def _close(actual, expected, what=""):
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=0.0, err_msg=what)


def _ed(case, s, a, b):
    return case["peers"][f"dcor_energy_distance_{s}_{a}_{b}"]


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_data_are_the_pinned_data(case):
    xs = draw(case)
    h = hashlib.sha256(b"".join(np.ascontiguousarray(x, dtype="<f8").tobytes() for x in xs))
    assert h.hexdigest() == case["data_sha256"], "numpy's normal stream changed"
    assert [len(x) for x in xs] == case["sizes"]
    assert case["gamma"] == 1.0 / (2.0 * case["bandwidth"] ** 2)


# ----------------------------------------------------------------------------------- dcor

@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_dcor_energy_distance_is_twice_the_distance_kernel_mmd(case):
    """(D1) ``dcor.energy_distance(x_a, x_b, estimation_stat=s) = 2 MMD^2`` of every pair."""
    xs = draw(case)
    for s, form in (("V", "biased"), ("U", "unbiased")):
        for a, b in _pairs(len(xs)):
            _close(2 * kmtests.mmd(xs[a], xs[b], kernel="distance", statistic=form),
                   _ed(case, s, a, b), what=f"{s} {a} {b}")


@pytest.mark.parametrize("form", ["biased", "unbiased"])
@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_statistic_is_the_weighted_sum_of_dcor_energy_distances(case, form):
    """(D2) ``T = sum_{a<b} (n_a n_b / W) ED_ab / 2`` for any sizes (``k_sample_test``)."""
    sizes, s = case["sizes"], "V" if form == "biased" else "U"
    pred = sum(sizes[a] * sizes[b] / _W(sizes) * _ed(case, s, a, b) / 2
               for a, b in _pairs(len(sizes)))
    _close(T(case, "distance", form), pred)
    if form == "biased":  # the DISCO between-sample statistic (Rizzo & Szekely, 2010)
        N = sum(sizes)
        disco = sum(sizes[a] * sizes[b] / (2 * N) * _ed(case, "V", a, b)
                    for a, b in _pairs(len(sizes)))
        _close(_W(sizes) / N * T(case, "distance", form), disco)


@pytest.mark.parametrize("form", ["biased", "unbiased"])
@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_dcor_k_sample_energy_statistic(case, form):
    """(D3) ``dcor.homogeneity.energy_test(*samples, estimation_stat=s).statistic``.

    ``(2nm/N) T`` for k = 2 and ``n k (k-1)/2 T`` for equal sizes; otherwise (unequal
    sizes, k >= 3) the pairwise weights ``n_a n_b / (n_a + n_b)`` are not proportional
    to kmtests' ``n_a n_b``: the value is rebuilt from the post-hoc pairwise
    statistics of :meth:`KSampleResult.pairwise`.
    """
    xs, sizes = draw(case), case["sizes"]
    k, N = len(sizes), sum(sizes)
    s = "V" if form == "biased" else "U"
    ref = case["peers"][f"dcor_energy_test_{s}"]
    res = kmtests.k_sample_test(*xs, kernel="distance", statistic=form, n_resamples=19, rng=0)
    pw = res.pairwise()
    index = {name: g for g, name in enumerate(res.samples)}
    from_pairs = sum(sizes[index[a]] * sizes[index[b]] / (sizes[index[a]] + sizes[index[b]])
                     * 2 * st for a, b, st in zip(pw["sample_a"], pw["sample_b"],
                                                  pw["statistic"]))
    _close(from_pairs, ref, what="from the pairwise statistics")
    if k == 2:
        _close(2 * sizes[0] * sizes[1] / N * res.statistic, ref)
    elif len(set(sizes)) == 1:
        _close(sizes[0] * k * (k - 1) / 2 * res.statistic, ref)


# ---------------------------------------------------------------------------------- hyppo

def _hsics(case, kernel, form, xs):
    """(HSIC(K, S), HSIC(K, K), HSIC(S, S)) from kmtests' independence statistic."""
    z, S = np.vstack(xs), _labels(case["sizes"])
    kx = {"bandwidth_x": case["bandwidth"]} if kernel == "gaussian" else {}
    ky = {"bandwidth_y": case["bandwidth"]} if kernel == "gaussian" else {}
    ks = kmtests.hsic(z, S, kernel_x=kernel, kernel_y="precomputed", statistic=form, **kx)
    kk = kmtests.hsic(z, z, kernel_x=kernel, kernel_y=kernel, statistic=form, **kx, **ky)
    ss = kmtests.hsic(S, S, kernel_x="precomputed", kernel_y="precomputed", statistic=form)
    return ks, kk, ss


def hsic_ks_from_T(case, form, t):
    """(H2) HSIC(K, S) as a multiple of T, for k = 2 or equal sizes (else None)."""
    sizes = case["sizes"]
    k, N, W = len(sizes), sum(sizes), _W(sizes)
    if k == 2:
        return (c_b if form == "biased" else c_u)(*sizes) * t
    if len(set(sizes)) == 1:
        n = sizes[0]
        return ((k - 1) / (2 * k * k) if form == "biased"
                else (n - 1) * W / (N * (N - 1) * (N - 3))) * t
    return None


def _corr(ks, kk, ss, form):
    r = ks / math.sqrt(kk * ss)
    return math.sqrt(r) if form == "biased" else r


HYPPO_KS = [(case, test, form) for case in CASES for test in ("Dcorr", "Hsic")
            for form in ("biased", "unbiased")]


@pytest.mark.parametrize("case,test,form", HYPPO_KS,
                         ids=[f"{c['name']}-{t}-{f}" for c, t, f in HYPPO_KS])
def test_hyppo_ksample_dcorr_hsic(case, test, form):
    """(H1, H2) ``hyppo.ksample.KSample("Dcorr" | "Hsic", bias=...).statistic``.

    Through kmtests' independence HSIC between the pooled sample and the labels for
    every case, and through the k-sample statistic T where HSIC(K, S) is a multiple
    of it (k = 2, or equal sizes).
    """
    xs = draw(case)
    kernel = "distance" if test == "Dcorr" else "gaussian"
    key = f"hyppo_KSample_{test}_{form}"
    ref = case["peers"][key]
    ks, kk, ss = _hsics(case, kernel, form, xs)
    _close(_corr(ks, kk, ss, form), ref, what=case["call"][key])
    ks_t = hsic_ks_from_T(case, form, T(case, kernel, form, xs))
    if ks_t is not None:
        _close(_corr(ks_t, kk, ss, form), ref, what="through T: " + case["call"][key])


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_statistic_is_hsic_with_the_normalised_label_kernel(case):
    """kmtests' own bridge to the peers: ``T_b = N^3 / W * HSIC_b(K, L)`` with
    ``L_ij = S_ij / n_g`` (kmtests/statistics/ksample.py), where hyppo's labels give
    ``S`` itself; the two coincide up to a constant only when the sizes are equal."""
    xs, sizes = draw(case), case["sizes"]
    N, W = sum(sizes), _W(sizes)
    g = np.repeat(np.arange(len(sizes)), sizes)
    L = _labels(sizes) / np.asarray(sizes, dtype=np.float64)[g][:, None]
    for kernel in ("distance", "gaussian"):
        kx = {"bandwidth_x": case["bandwidth"]} if kernel == "gaussian" else {}
        h = kmtests.hsic(np.vstack(xs), L, kernel_x=kernel, kernel_y="precomputed",
                         statistic="biased", **kx)
        _close(T(case, kernel, "biased", xs), N ** 3 / W * h, what=kernel)


UNEQUAL_K = [c for c in CASES if "pvalues" not in c]


@pytest.mark.parametrize("case", UNEQUAL_K, ids=_ids(UNEQUAL_K))
def test_hyppo_weights_the_centroids_by_n_squared(case):
    """(H2, general sizes) hyppo's HSIC_b(K, S) and kmtests' T_b from the same centroids.

    ``|mu_g - mu|^2`` from the pairwise MMD^2_b; hyppo's numerator weights them by
    ``n_g^2 / N^2``, kmtests by ``n_g N / W``. With unequal sizes the two are not
    proportional: their ratio changes when the pooled sample is re-divided (here: the
    sample randomly re-divided into samples of the same sizes), so hyppo's k-sample
    test is a different test.
    """
    def parts(xs):
        sizes = np.array([len(x) for x in xs], dtype=np.float64)
        k, N = len(xs), sizes.sum()
        D = np.zeros((k, k))
        for a, b in _pairs(k):
            D[a, b] = D[b, a] = kmtests.mmd(xs[a], xs[b], kernel="distance", statistic="biased")
        c2 = D @ sizes / N - sizes @ D @ sizes / (2 * N * N)
        return sizes, N, c2

    xs = draw(case)
    sizes, N, c2 = parts(xs)
    _close(N / _W(sizes) * (sizes * c2).sum(), T(case, "distance", "biased", xs))
    ks, kk, ss = _hsics(case, "distance", "biased", xs)
    _close((sizes ** 2 * c2).sum() / N ** 2, ks)
    _close(_corr((sizes ** 2 * c2).sum() / N ** 2, kk, ss, "biased"),
           case["peers"]["hyppo_KSample_Dcorr_biased"])
    # another division of the same pooled points into samples of the same sizes
    z = np.vstack(xs)[np.random.default_rng(0).permutation(int(N))]
    _, _, c2p = parts(np.split(z, np.cumsum(sizes[:-1]).astype(int)))
    ratio = (sizes ** 2 * c2).sum() / (sizes * c2).sum()
    ratio_p = (sizes ** 2 * c2p).sum() / (sizes * c2p).sum()
    assert abs(ratio / ratio_p - 1) > 0.01


EQUAL = [c for c in CASES if len(set(c["sizes"])) == 1]


@pytest.mark.parametrize("form", ["biased", "unbiased"])
@pytest.mark.parametrize("case", EQUAL, ids=_ids(EQUAL))
def test_hyppo_disco(case, form):
    """(H3) ``hyppo.ksample.DISCO(bias=...).statistic`` (equal sizes; distance kernel).

    hyppo computes ``_dcov(D_x, D_labels) * N * k / 2``: the square-rooted dCov_n when
    biased, so neither form is the DISCO between-sample statistic ``(W/N) T_b``.
    """
    sizes = case["sizes"]
    k, N = len(sizes), sum(sizes)
    c = 1.0 if k == 2 else math.sqrt(2.0)
    ks = hsic_ks_from_T(case, form, T(case, "distance", form))
    pred = (N * k / 2 * math.sqrt(2 * c * ks) if form == "biased" else c * N * k * ks)
    key = f"hyppo_DISCO_{form}"
    _close(pred, case["peers"][key], what=case["call"][key])


TWO = [c for c in CASES if len(c["sizes"]) == 2]


@pytest.mark.parametrize("case", TWO, ids=_ids(TWO))
def test_hyppo_two_sample_mmd_and_energy(case):
    """(H4) ``hyppo.ksample.MMD(compute_kernel="gaussian", gamma, bias)`` and ``Energy``."""
    xs = draw(case)
    n, m = case["sizes"]
    for form, bias in (("biased", "biased"), ("unbiased", "unbiased")):
        ks, kk, ss = _hsics(case, "gaussian", form, xs)
        _close(c_b(n, m) * _corr(ks, kk, ss, form), case["peers"][f"hyppo_MMD_{bias}"])
    tb, tu = T(case, "distance", "biased", xs), T(case, "distance", "unbiased", xs)
    _close(math.sqrt(2 * c_b(n, m) * tb) / c_b(n, m), case["peers"]["hyppo_Energy_biased"])
    _close(2 * c_u(n, m) * tu / c_b(n, m), case["peers"]["hyppo_Energy_unbiased"])


def test_tolerance_detects_a_small_bandwidth_error():
    """A 1e-6 relative error in the Gaussian bandwidth breaks the relation at RTOL."""
    case = CASES[2]
    xs = draw(case)
    wrong = dict(case, bandwidth=case["bandwidth"] * (1 + 1e-6))
    ks, kk, ss = _hsics(wrong, "gaussian", "unbiased", xs)
    with pytest.raises(AssertionError):
        _close(_corr(ks, kk, ss, "unbiased"), case["peers"]["hyppo_KSample_Hsic_unbiased"])


# -------------------------------------------------------------------------------- p-values

#: peer p-value -> kmtests test with a permutation-equivalent statistic
EQUIVALENT_TEST = {
    "dcor_energy_test_V": ("distance", "biased"),
    "dcor_energy_test_U": ("distance", "unbiased"),
    "hyppo_KSample_Dcorr_unbiased": ("distance", "unbiased"),
    "hyppo_KSample_Hsic_unbiased": ("gaussian", "unbiased"),
}


def _mc_tolerance(p1, b1, p2, b2):
    """Z_MC binomial standard errors of the difference of two independent estimates."""
    p = min(max((p1 + p2) / 2, 1.0 / min(b1, b2)), 0.5)  # p(1 - p) <= 1/4
    return Z_MC * math.sqrt(p * (1 - p) * (1.0 / b1 + 1.0 / b2))


PVALUE_CASES = [(c, key) for c in EQUIVALENT for key in EQUIVALENT_TEST]


@pytest.mark.parametrize("case,key", PVALUE_CASES,
                         ids=[f"{c['name']}-{k}" for c, k in PVALUE_CASES])
def test_pvalue_agrees_within_monte_carlo_error(case, key):
    """kmtests' permutation p-value against the peer's, B = 20000 permutations each.

    Both estimate the same permutation p-value (the statistics are increasing
    functions of each other over all divisions of the pooled sample), so the
    difference has standard error ``sqrt(p (1 - p) (1/B_1 + 1/B_2))``; the tolerance
    is ``Z_MC = 4`` of them (two-sided 6e-5 each; 16 comparisons).
    """
    kernel, form = EQUIVALENT_TEST[key]
    B = case["B"]
    res = kmtests.k_sample_test(*draw(case), kernel=kernel, statistic=form, n_resamples=B,
                                rng=case["seed"], **_kw(case, kernel))
    assert res.n_resamples == B  # Monte Carlo, not an enumeration
    ref = case["pvalues"][key]
    tol = _mc_tolerance(res.pvalue, B, ref, B)
    assert abs(res.pvalue - ref) <= tol, (res.pvalue, ref, tol, case["pvalue_call"][key])


def test_pvalue_tolerance_separates_different_kernels():
    """The Monte Carlo tolerance is tight enough to tell the distance kernel's p-value
    from the Gaussian kernel's on the same data (k2_unequal_d3: about 0.52 vs 0.77)."""
    case = next(c for c in EQUIVALENT if c["name"] == "k2_unequal_d3")
    B = case["B"]
    res = kmtests.k_sample_test(*draw(case), kernel="distance", statistic="unbiased",
                                n_resamples=B, rng=case["seed"])
    ref = case["pvalues"]["hyppo_KSample_Hsic_unbiased"]
    assert abs(res.pvalue - ref) > 5 * _mc_tolerance(res.pvalue, B, ref, B)


# ------------------------------------------------------------------- defects found here

def test_gamma_refusal_names_the_k_sample_statistic():
    """It read 'the biased KME statistic statistic (V-form)' (the k-sample kind was missing
    from the refusal's name table)."""
    xs = draw(CASES[2])
    with pytest.raises(ValueError, match="biased KME statistic kMMD\\^2_b; the test computes "
                       "kMMD\\^2_u: use statistic='biased'"):
        kmtests.k_sample_test(*xs, method="gamma", statistic="unbiased")  # U-form: refused
    # statistic=None with the gamma: the method's own statistic, kMMD^2_b
    res = kmtests.k_sample_test(*xs, method="gamma")
    assert res.statistic_name == "kMMD^2_b"
    assert res.statistic == kmtests.k_sample_test(*xs, method="gamma",
                                                  statistic="biased").statistic
