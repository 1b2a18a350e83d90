"""risk_study: shape, reproducibility, n_jobs invariance, paired ratios."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kmtests.estimators import ESTIMATORS, KME, make
from kmtests.groundtruth import GaussianMixture
from kmtests.kernels import Gaussian, Laplacian, Polynomial
from kmtests.risk import SUMMARY_COLUMNS, risk_study

#: the estimators of the issue that are registered now (the registry grows)
AVAILABLE = [e for e in ("kme", "skmse", "bkmse", "fkmse", "mkme", "mmkme") if e in ESTIMATORS]
GAUSSIAN_ONLY = {"mkme", "mmkme"}
SMALL = dict(n=[5, 8], d=[2, 3], repetitions=3)


def _any_kernel_estimators() -> list[str]:
    return [e for e in AVAILABLE if e not in GAUSSIAN_ONLY]


def test_shape_and_columns():
    ests = _any_kernel_estimators()
    df = risk_study(ests, kernels=["rbf", "linear"], rng=0, **SMALL)
    assert list(df.columns) == SUMMARY_COLUMNS
    assert len(df) == len(ests) * 2 * 2 * 2
    assert list(df["estimator"].unique()) == ests
    assert set(df["kernel"]) == {"rbf", "linear"}
    assert (df["repetitions"] == 3).all()
    assert np.all(np.isfinite(df[["mean_loss", "se_loss", "ratio", "kme_risk"]].to_numpy()))
    assert (df["mean_loss"] > 0).all()
    kme = df[df["estimator"] == "kme"]
    np.testing.assert_array_equal(kme["ratio"], 1.0)
    np.testing.assert_array_equal(kme["mean_ratio"], 1.0)
    np.testing.assert_array_equal(kme["se_ratio"], 0.0)


def test_gaussian_only_estimators_with_rbf():
    ests = AVAILABLE  # includes mkme/mmkme when registered
    df, raw = risk_study(ests, n=6, d=2, kernels="rbf", repetitions=2, rng=1, return_raw=True)
    assert len(df) == len(ests) and len(raw) == 2 * len(ests)
    assert np.all(np.isfinite(raw["loss"])) and (raw["loss"] >= 0).all()


def test_summary_equals_raw_aggregates():
    ests = _any_kernel_estimators()
    df, raw = risk_study(ests, kernels="poly2", rng=2, return_raw=True, **SMALL)
    assert len(raw) == len(ests) * 2 * 2 * 3
    for row in df.itertuples():
        g = raw[(raw.estimator == row.estimator) & (raw.d == row.d) & (raw.n == row.n)]
        y, x = g["loss"].to_numpy(), g["loss_kme"].to_numpy()
        np.testing.assert_allclose(row.mean_loss, y.mean(), rtol=1e-14)
        np.testing.assert_allclose(row.se_loss, y.std(ddof=1) / np.sqrt(3), rtol=1e-12)
        np.testing.assert_allclose(row.ratio, y.mean() / x.mean(), rtol=1e-14)
        np.testing.assert_allclose(row.mean_ratio, np.mean(y / x), rtol=1e-14)
        assert row.p_improve == np.mean(y < x)
    # common random numbers: the KME loss is the same for every estimator of a cell
    per_cell = raw.groupby(["d", "n", "repetition"])["loss_kme"].nunique()
    assert (per_cell == 1).all()
    kme = raw[raw.estimator == "kme"]
    np.testing.assert_array_equal(kme["loss"], kme["loss_kme"])


def test_same_seed_same_frame():
    ests = _any_kernel_estimators()
    a = risk_study(ests, kernels=["rbf", "poly3"], rng=3, return_raw=True, **SMALL)
    b = risk_study(ests, kernels=["rbf", "poly3"], rng=3, return_raw=True, **SMALL)
    for u, v in zip(a, b):
        pd.testing.assert_frame_equal(u, v, check_exact=True)
    c = risk_study(ests, kernels=["rbf", "poly3"], rng=4, **SMALL)
    assert not np.array_equal(a[0]["mean_loss"], c["mean_loss"])
    # a SeedSequence is not consumed: passing the same object twice repeats the study
    ss = np.random.SeedSequence(5)
    pd.testing.assert_frame_equal(risk_study(["kme"], rng=ss, **SMALL),
                                  risk_study(["kme"], rng=ss, **SMALL), check_exact=True)
    # a Generator is a source of entropy like any other
    g1 = risk_study(["kme"], rng=np.random.default_rng(6), **SMALL)
    g2 = risk_study(["kme"], rng=np.random.default_rng(6), **SMALL)
    pd.testing.assert_frame_equal(g1, g2, check_exact=True)


def test_n_jobs_does_not_change_the_result():
    ests = AVAILABLE
    kw = dict(n=[5, 7], d=[2, 3], kernels="rbf", repetitions=2, rng=7, return_raw=True)
    seq = risk_study(ests, **kw)
    one = risk_study(ests, n_jobs=1, **kw)
    two = risk_study(ests, n_jobs=2, **kw)
    for u, v, w in zip(seq, one, two):
        pd.testing.assert_frame_equal(u, v, check_exact=True)
        pd.testing.assert_frame_equal(u, w, check_exact=True)


def test_cells_do_not_depend_on_the_grid():
    """Keyed seeding: adding sizes, dimensions or kernels leaves a cell unchanged."""
    big = risk_study(["kme"], n=[5, 9], d=[2, 4], kernels=["linear", "rbf"], repetitions=3,
                     rng=8)
    small = risk_study(["kme"], n=9, d=4, kernels="rbf", repetitions=3, rng=8)
    sel = big[(big.n == 9) & (big.d == 4) & (big.kernel == "rbf")].reset_index(drop=True)
    pd.testing.assert_frame_equal(sel, small, check_exact=True)


def test_distribution_is_shared_across_sample_sizes():
    _, raw = risk_study(["kme"], n=[4, 12], d=3, kernels="linear", repetitions=4, rng=9,
                        return_raw=True)
    # Delta = (E k(x,x) - ||mu_P||^2) / n depends on P only through n * Delta
    nd = raw.assign(nd=raw.n * raw.kme_risk).pivot(index="repetition", columns="n", values="nd")
    np.testing.assert_allclose(nd[4], nd[12], rtol=1e-12)


def test_kme_risk_is_the_average_kme_loss():
    """E[loss(KME) | P] = Delta_P: the mean of loss - Delta is zero within MC error."""
    _, raw = risk_study(["kme"], n=4, d=3, kernels=["linear", "poly2"], repetitions=400,
                        rng=10, return_raw=True)
    for _, g in raw.groupby("kernel"):
        diff = (g["loss"] - g["kme_risk"]).to_numpy() / g["kme_risk"].to_numpy()
        se = diff.std(ddof=1) / np.sqrt(diff.size)
        assert abs(diff.mean()) <= 5 * se
        assert 5 * se < 0.3


def test_kme_added_for_ratios_when_absent():
    others = [e for e in _any_kernel_estimators() if e != "kme"]
    if not others:
        pytest.skip("no estimator besides kme registered yet")
    with_kme = risk_study(["kme"] + others, rng=11, **SMALL)
    without = risk_study(others, rng=11, **SMALL)
    pd.testing.assert_frame_equal(
        with_kme[with_kme.estimator != "kme"].reset_index(drop=True), without, check_exact=True)


def test_estimator_objects_and_labels():
    df = risk_study({"plain": "kme", "obj": KME()}, n=5, d=2, repetitions=2, rng=12)
    assert list(df.estimator) == ["plain", "obj"]
    np.testing.assert_array_equal(df["mean_loss"].iloc[0], df["mean_loss"].iloc[1])
    df = risk_study([KME()], n=5, d=2, repetitions=2, rng=12)
    assert list(df.estimator) == ["kme"]
    if "skmse" in ESTIMATORS:
        try:
            fixed = make("skmse", shrinkage=0.5)
        except TypeError:
            pytest.skip("skmse has no fixed `shrinkage` parameter")
        df = risk_study(["skmse", fixed], n=5, d=2, repetitions=2, rng=12)
        assert df.estimator.iloc[0] == "skmse" and df.estimator.iloc[1] == repr(fixed)


def test_kernel_objects_and_custom_generator():
    P = GaussianMixture([0.5, 0.5], [[0.0, 0.0], [2.0, 1.0]], [np.eye(2), 0.5 * np.eye(2)])
    df, raw = risk_study(["kme"], n=6, d=2, kernels=[Gaussian(bandwidth=1.5),
                                                     Polynomial(degree=3, coef0=0.5)],
                         repetitions=3, rng=13, generator=lambda d, rng: P, return_raw=True)
    assert list(df.kernel) == ["Gaussian (bandwidth = 1.5)", "Polynomial (degree = 3, coef0 = 0.5)"]
    g = raw[raw.kernel.str.startswith("Gaussian")]
    assert (g["bandwidth"] == 1.5).all()
    assert g["kme_risk"].nunique() == 1  # fixed P and bandwidth: one Delta


def test_progress_bar(capsys):
    df = risk_study(["kme"], n=5, d=2, repetitions=2, rng=14, progress=True)
    assert len(df) == 1


def test_single_repetition_has_nan_standard_errors():
    df = risk_study(["kme"], n=5, d=2, repetitions=1, rng=15)
    assert np.isnan(df["se_loss"].iloc[0]) and np.isfinite(df["mean_loss"].iloc[0])


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(estimators=["nope"]), ValueError, "`estimator` must be one of"),
    (dict(estimators=[3]), TypeError, "`estimator` must be an estimator name"),
    (dict(estimators=["kme", "KME"]), ValueError, "distinct labels"),
    (dict(estimators=[]), ValueError, "`estimators` must be non-empty"),
    (dict(kernels=["laplacian"]), ValueError, "`kernels` entries must be one of"),
    (dict(kernels=[Laplacian(bandwidth=1.0)]), TypeError, "closed-form ground truth exists"),
    (dict(kernels=[3]), TypeError, "`kernels` must be kernel names or Kernel objects"),
    (dict(n=1), ValueError, "`n` must be at least 2"),
    (dict(n=[5, 5]), ValueError, "without repeated values"),
    (dict(d=0), ValueError, "`d` must be a positive integer"),
    (dict(d=2.5), TypeError, "`d` must be a positive integer"),
    (dict(repetitions=0), ValueError, "`repetitions` must be a positive integer"),
    (dict(n_jobs=0), ValueError, "`n_jobs` must be None, -1 or a positive integer"),
    (dict(rng="seed"), TypeError, "`rng` must be None, an int"),
    (dict(generator=5), TypeError, "`generator` must be callable"),
    (dict(generator=lambda d, rng: None), TypeError, "must return a GaussianMixture"),
])
def test_validation(kwargs, exc, match):
    args = dict(estimators=["kme"], n=5, d=2, repetitions=1, rng=0)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        risk_study(args.pop("estimators"), **args)
