r"""The kernel conditional independence statistic (KCI) with a tuned regression on z.

Zhang, Peters, Janzing & Schölkopf (2011) test ``X independent of Y given Z``
with the HSIC of what is left of ``x`` and ``y`` once ``z`` is regressed out in
feature space. With the centred Gram matrices ``Kx`` (of ``x`` augmented by
``z / 2``, as in their code) and ``Ky``, and the residual operators
``R = I - P`` of the regularised regressions on ``z``
(:mod:`kmtests.estimators.conditional`),

.. math:: \tilde K_x = R_x K_x R_x, \qquad \tilde K_y = R_y K_y R_y, \qquad
          T = \frac{1}{n^2} \sum_{ij} (\tilde K_x)_{ij} (\tilde K_y)_{ij}.

(causal-learn's ``KCI_CInd`` reports ``n^2 T``, with ``R_x = R_y`` and the ridge
fixed at ``epsilon = n lam = 1e-3``.) Every variable is standardised first
(mean 0, standard deviation 1, ``ddof=1``; constant columns become 0), as in
causal-learn, so the widths are comparable across variables.

Here the regression is an estimator: ``lam`` and the bandwidth of the kernel on
``z`` are chosen for each of ``x`` and ``y`` by the criterion of
:class:`~kmtests.estimators.ConditionalMeanEmbedding` (generalised
cross-validation by default), because the error of this regression is what
inflates KCI's type-I error (Pogodin et al., 2024). ``split`` fits the
regressions on one part of the sample and computes the statistic on the rest
(their SplitKCI): the residuals of the test points are then not fitted to
themselves.

Null distributions (:mod:`kmtests.null`): under the null, ``n^2 T`` is
asymptotically ``sum_k lambda_k chi^2_1`` with ``lambda_k`` the eigenvalues of
``M = Kx~ o Ky~`` — the weighted chi-square (``method="chi2"``) and its two-moment
gamma fit (``"gamma"``, mean ``tr M``, variance ``2 ||M||_F^2``), and the wild
bootstrap of the quadratic form (``"wild"``), all approximate. When ``z`` is
discrete, permuting ``y`` within the strata of ``z`` (``strata=``) gives the exact
test: the statistic of an arrangement ``p`` is
``sum_ij A_ij (Ky)_{p_i p_j} / n^2`` with ``A = R_y Kx~ R_y``, the HSIC pair sum.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import threading
from collections import OrderedDict
from typing import Any, Callable, ClassVar, Mapping, Sequence, cast

import numpy as np

from .._guards import format_bytes
from .._rng import child
from ..engines import Engine, Requirements, Values, lowrank
from ..engines._loop import linalg_threads, map_items
from ..engines._threads import numba_threads
from .._validation import check_choice, shown
from ..engines.hsic import PairedGrams, pair_sums
from ..estimators import KME, KernelMeanEstimator
from ..estimators.conditional import (
    COMPANION_CACHES,
    ConditionalMeanEmbedding,
    FittedRegression,
    RidgeResidual,
    _digest,
    feature_spectrum,
    ridge_residual,
    z_spectrum,
)
from ..estimators.filters import filter_function
from ..kernels import ARDGaussian, Kernel, _BandwidthKernel, _sqdist_diff
from ..problems.conditional import standardized
from ..problems.marginal import Z_TRANSFORMS, marginal_transform
from ._base import Prepared, Statistic
from .forms import FormInfo, KCIForm, KernelForm
from .mmd import describe_kernel
from .residual_cache import TargetResiduals, cacheable, fitted_kernel, target_residuals

__all__ = ["KCI", "Z_FACTORS", "ard_bandwidths", "split_residual_gram", "sweep_order"]

#: ``z_transform`` when not given (:mod:`kmtests.problems.marginal`)
Z_TRANSFORM_DEFAULT = "none"
#: ``undersmooth`` when not given: the searched ``lam`` divided by this factor
#: (:class:`~kmtests.estimators.ConditionalMeanEmbedding`)
UNDERSMOOTH_DEFAULT = 1.0
#: ``bandwidth_z="auto"`` on a z of at least this many coordinates (Gaussian kernel on z,
#: the exact engine, the whole sample) is ``"ard_each"`` with ``lam`` divided by
#: :data:`MULTI_Z_UNDERSMOOTH` (unless ``undersmooth`` is given; no further than 0.35 (n - 1)
#: degrees of freedom, ``ConditionalMeanEmbedding.undersmooth_max_df``): on the 520 null
#: data sets with z of 3 to 10 coordinates of ``benchmarks/multiz_transform.py`` (n = 200)
#: it rejected 37 at 5% where the search of one bandwidth rejected 145; on the 1200 of
#: ``ci_level.py``'s ``index3``, ``pnl3``, ``index5``, ``pnl5`` 87 against 75
#: (``benchmarks/README.md``, "The default from three coordinates of z"). Not from 2: PC on
#: the benchmark's 9 variables would take 3-4 times the CPU time
#: (``benchmarks/pc_discovery.py``), and one bandwidth kept the level on 5 of the 6
#: two-coordinate designs measured
MULTI_Z_FROM = 3
MULTI_Z_UNDERSMOOTH = 10.0
#: the candidate bandwidths on z of ``bandwidth_z="auto"``: the median heuristic times these
Z_FACTORS = (0.125, 0.25, 0.5, 1.0, 2.0)
#: ``bandwidth_z="ard"``: the factors each coordinate's bandwidth is tried at in the
#: greedy sweep (1e4: the coordinate dropped)
ARD_STEPS = (1e4, 0.5, 2.0)
#: the values of ``bandwidth_z`` that search one bandwidth per coordinate of z: ``"ard"``
#: one set shared by x's and y's regressions, ``"ard_each"`` one set for each
ARD_MODES = ("ard", "ard_each")
#: the low-rank engines (features instead of Gram matrices: RCoT-style, Strobl et al.)
LOWRANK = ("nystrom", "rff")
#: features of x and of y on the low-rank engines (``n_features`` is z's)
FEATURES_XY = 16



#: below this many observations the given-ridge path (:func:`ridge_residual`) runs on one
#: BLAS thread: it alternates SciPy's LAPACK (Cholesky, triangular solves) with NumPy's
#: BLAS, two OpenBLAS libraries whose idle threads spin against each other (idle 2-core
#: machine, per call with one / two threads: 19 / 32 ms at n = 500, 72 / 158 ms at
#: 1000, 423 / 503 ms at 2000, 1354 / 1094 ms at 3000)
RIDGE_SINGLE_BELOW = 3000

#: the time guard of the exact engine (:class:`~kmtests.SlowTestWarning`): the work of its
#: O(n^3) decompositions in units of ``m^3`` per eigendecomposition of an m x m matrix,
#: above which the test warns -- the tuned default's five eigendecompositions at n = 2000
#: (6.2 s of CPU, 9.7 s wall measured on the 2-core Xeon of benchmarks/README.md at load
#: 4; 42 s wall reported at n = 2500 on a busy machine). The given-ridge path (one
#: Cholesky factorisation: 0.45 s CPU at n = 2000) counts ``CHOLESKY_UNITS`` per ``n^3``,
#: so it warns from n of about 4900; SplitKCI decomposes ``split * n`` points.
SLOW_UNITS = 5 * 2000.0 ** 3
CHOLESKY_UNITS = 0.35
#: CPU seconds per unit (the tuned default at n = 2000: 6.2 s / (5 * 2000^3))
SECONDS_PER_UNIT = 1.55e-10

#: a regression on z as the statistic uses it
Fit = FittedRegression | RidgeResidual

#: the share of a variable's kernel features left unexplained by its regression on z
#: (the relative trace ``tr(R K R) / tr(K)`` of the residual Gram matrix) below which the
#: variable is taken as a function of z: conditional independence then holds trivially
#: and the test reports p = 1 instead of a p-value from the regression's rounding
#: (benchmarks/ci_degenerate.py, n = 200, the tuned regression on the whole sample: exact
#: smooth functions of a 1-d z leave 4e-9 to 2e-7, of a 2-d z up to 4e-7; ``sin(3z) + eps
#: e`` leaves about ``2 eps^2``: 2e-6 at eps = 1e-3, whose dependence on e is still
#: detected. Below this threshold a part of x beyond z below about 7e-4 of its standard
#: deviation -- three significant digits -- is treated as rounding)
DEGENERATE_BELOW = 1e-6
#: the same for the coarser regressions of SplitKCI (fitted on half the sample) and of the
#: low-rank engines (on z's features), whose residuals of exact functions of a 2-d z
#: reach 1e-6 to 5e-6 (a part beyond z below about 2e-3 of the standard deviation counts
#: as rounding there)
DEGENERATE_BELOW_COARSE = 1e-5


def _bandwidth(k: Kernel) -> float | None:
    b = getattr(k, "bandwidth", None)
    return float(b) if isinstance(b, (int, float)) and not isinstance(b, bool) else None


def _bandwidth_report(k: Kernel) -> float | list[float] | None:
    """The bandwidth on z for the report: one number, or one per coordinate (ARD)."""
    b = getattr(k, "bandwidth", None)
    if isinstance(b, np.ndarray) or isinstance(b, (tuple, list)):
        return [float(v) for v in np.ravel(b)]
    return _bandwidth(k)


def split_residual_gram(fit: FittedRegression, z_train: np.ndarray, z_test: np.ndarray,
                        K: np.ndarray, train: np.ndarray, test: np.ndarray,
                        filt: str) -> np.ndarray:
    """The centred Gram matrix of the test points' residual features, the regression
    fitted on the training points (`K`: the target's Gram matrix on all points, in any
    centring).

    ``r_b = phi_b - sum_a W_ba phi_a`` with ``W = C + (1 - C 1) 1' / n_A`` (rows sum to 1,
    so the centring of `K` does not matter) and ``C = kc(z_B, z_A) U diag(g(kappa /
    n_A) / n_A) U'`` the fitted coefficients (``kc`` the kernel centred at the training
    points' mean embedding).
    """
    spec = fit.spectrum
    kern = spec.kernel
    n_a = z_train.shape[0]
    K_ba = kern.gram(z_test, z_train)
    K_aa = kern.gram(z_train)
    kc = K_ba - K_ba.mean(axis=1, keepdims=True) - K_aa.mean(axis=0)[None, :] + K_aa.mean()
    g = filter_function(filt)(spec.kappa / n_a, fit.lam) / n_a
    C = ((kc @ spec.U) * g) @ spec.U.T
    W = C + ((1.0 - C.sum(axis=1)) / n_a)[:, None]
    Kab = K[np.ix_(test, train)]
    Rg = K[np.ix_(test, test)] - W @ Kab.T
    Rg -= Kab @ W.T
    Rg += (W @ K[np.ix_(train, train)]) @ W.T
    Rg = 0.5 * (Rg + Rg.T)
    # centred over the test points (the HSIC of the residuals)
    Rg -= Rg.mean(axis=0)[None, :]
    Rg -= Rg.mean(axis=1)[:, None]
    return Rg


def ard_bandwidths(z: np.ndarray, targets: Sequence[np.ndarray], regression: Any,
                   passes: int = 1) -> np.ndarray:
    """Per-coordinate bandwidths on `z` (``bandwidth_z="ard"``): the median heuristic on
    all coordinates times the best of :data:`Z_FACTORS`, then a sweep over the
    coordinates trying each one's bandwidth times :data:`ARD_STEPS`, a change kept when
    the `regression`'s criterion summed over the centred Gram matrices `targets`
    decreases. `passes` sweeps at most (one in the tests; more in
    ``benchmarks/multiz_transform.py``), stopping when a sweep changes nothing.

    The sweep visits the coordinates in the order of :func:`sweep_order` (the least
    related to the targets first), not in the order of z's columns: a reordering of
    the columns reorders the bandwidths and leaves the test unchanged."""
    from ..kernels import ARDGaussian, median_bandwidth

    def score(bw: np.ndarray) -> float:
        k = ARDGaussian(bandwidth=bw)
        spec = [z_spectrum(k, z, cache=False)]
        return float(sum(regression.fit([k], z, K, spectra=spec).score for K in targets))

    d = z.shape[1]
    iso = float(median_bandwidth(z, name="z"))
    best_bw, best = np.full(d, iso), np.inf
    for f in Z_FACTORS:
        bw = np.full(d, iso * f)
        s = score(bw)
        if s < best:
            best, best_bw = s, bw
    order = sweep_order(z, targets)
    for _ in range(passes):
        moved = False
        for j in order:
            for m in ARD_STEPS:
                bw = best_bw.copy()
                bw[j] *= m
                s = score(bw)
                if s < best:
                    best, best_bw, moved = s, bw, True
        if not moved:
            break
    return best_bw


def sweep_order(z: np.ndarray, targets: Sequence[np.ndarray]) -> np.ndarray:
    """The order in which :func:`ard_bandwidths` sweeps the coordinates of `z`: by
    ``sum_t z_j' K_t z_j / z_j' z_j`` over the centred Gram matrices ``K_t`` of the
    `targets` (the linear part of the coordinate's relation to the targets' features),
    the smallest first, ties in column order (tied columns are equal, or constant).
    A function of each column and the targets alone: it moves with the column.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.statistics.kci import sweep_order
    >>> z = np.array([[0., 1.], [1., 0.], [2., 1.], [3., 0.]])
    >>> t = z[:, :1] - z[:, :1].mean()
    >>> sweep_order(z, [t @ t.T])   # the second column is unrelated to the target
    array([1, 0])
    """
    zc = z - z.mean(axis=0)
    norms = np.einsum("ij,ij->j", zc, zc)
    key = np.zeros(z.shape[1])
    for K in targets:
        key += np.einsum("ij,ij->j", zc, K @ zc)
    key = np.where(norms > 0, key / np.where(norms > 0, norms, 1.0), 0.0)
    return np.argsort(key, kind="stable")


class KCI(Statistic):
    """The KCI statistic with tuned regressions on z (see the module docs).

    Parameters
    ----------
    kernel_x, kernel_y, kernel_z : Kernel
        The kernels (bandwidths fitted on the standardised data).
    bandwidth_z : "auto", "isotropic", "ard", "ard_each", "median", float or sequence of float
        The bandwidth of `kernel_z`: ``"isotropic"`` searches the median heuristic times
        :data:`Z_FACTORS` by the regression's criterion, ``"ard"`` one bandwidth per
        coordinate shared by x's and y's regressions (:func:`ard_bandwidths`),
        ``"ard_each"`` one set for each regression, a sequence searches those values, a
        number or ``"median"`` fixes it; ``"auto"`` is ``"isotropic"`` on a z of one or
        two coordinates and ``"ard_each"`` with undersmoothing on more (:meth:`resolved`).
    regression : ConditionalMeanEmbedding
        The regression on z (filter, ``lam``, criterion).
    augment : bool
        Regress and compare ``(x, z / 2)`` instead of ``x`` (Zhang et al.'s KCI).
    split : float or None
        The fraction of the sample the regressions are fitted on (SplitKCI); None:
        the whole sample (KCI).
    cache : bool
        Reuse the eigendecompositions of the Gram matrices of z across calls.
    z_transform : {"none", "normal_scores", "rank"}
        A monotone map of each coordinate of z before the regressions
        (:mod:`kmtests.problems.marginal`).
    undersmooth_auto : bool, optional
        Whether ``bandwidth_z="auto"`` on a multivariate z divides the searched ``lam``
        by :data:`MULTI_Z_UNDERSMOOTH` (default: when `regression` is not given).
    null_moments : {"corrected", "zhang"}
        The mean and variance of the gamma null (``method="gamma"``, the exact engine, the
        whole sample): ``"corrected"`` (default) adds to the mean the terms of the rows'
        correlation through the regressions that involve the noise
        (:func:`noise_mean_factor`; mean and variance times the ratio of the means);
        ``"zhang"`` is Zhang et al.'s (causal-learn's number).
    """

    name: ClassVar[str] = "kci"
    registered_as: ClassVar[tuple[str, ...]] = ("kci", "split")
    options: ClassVar[tuple[str, ...]] = ("filter", "lam", "criterion", "bandwidth_z", "augment",
                                          "z_transform", "undersmooth", "null_moments", "cache",
                                          "split_size")
    default_method: ClassVar[str] = "gamma"
    problem_kind: ClassVar[str] = "conditional"
    uses_threads: ClassVar[bool] = True
    estimator_refusal: ClassVar[str] = (
        "the conditional test regresses the kernel features on z (the regression is its "
        "estimator: `filter`, `lam`, `criterion`); estimator={est!r} does not apply.")

    @classmethod
    def keywords(cls, name: str) -> tuple[str, ...]:
        if name == "split":  # (the correction of the null mean is the whole sample's)
            return tuple(o for o in cls.options if o != "null_moments")
        return cls.options[:-1]

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        reg = ConditionalMeanEmbedding(
            filter=options.get("filter") or "tikhonov",
            lam="auto" if options.get("lam") is None else options["lam"],
            criterion=options.get("criterion") or "gcv",
            undersmooth=(UNDERSMOOTH_DEFAULT if options.get("undersmooth") is None
                         else options["undersmooth"]))
        fraction = options.get("split_size")
        if name == "split" and fraction is None:
            fraction = 0.5
        bandwidth_z = options.get("bandwidth_z")
        return cls(kernels["x"], kernels["y"], kernels["z"],
                   bandwidth_z="auto" if bandwidth_z is None else bandwidth_z, regression=reg,
                   undersmooth_auto=options.get("undersmooth") is None,
                   augment=True if options.get("augment") is None else options["augment"],
                   split=fraction if name == "split" else None,
                   cache=True if options.get("cache") is None else options["cache"],
                   z_transform=options.get("z_transform") or Z_TRANSFORM_DEFAULT,
                   null_moments=options.get("null_moments") or "corrected")

    def draws(self, engine: Any) -> bool:
        """The split of SplitKCI and the features of the low-rank engines are drawn."""
        return self.split is not None or engine.name in ("rff", "nystrom")

    def __init__(self, kernel_x: Kernel, kernel_y: Kernel, kernel_z: Kernel,
                 bandwidth_z: Any = "auto",
                 regression: ConditionalMeanEmbedding | None = None, augment: bool = True,
                 split: float | None = None, cache: bool = True,
                 z_transform: str = "none", undersmooth_auto: bool | None = None,
                 null_moments: str = "corrected") -> None:
        self.kernel_x, self.kernel_y, self.kernel_z = kernel_x, kernel_y, kernel_z
        self.null_moments = check_choice(null_moments, "null_moments", NULL_MOMENTS)
        self.z_transform = check_choice(z_transform, "z_transform", Z_TRANSFORMS)
        self.bandwidth_z = _check_bandwidth_z(bandwidth_z)
        #: whether ``bandwidth_z="auto"`` on a multivariate z may set the undersmoothing
        #: (not when the regression, or its ``undersmooth``, was given)
        self.undersmooth_auto = (regression is None if undersmooth_auto is None
                                 else bool(undersmooth_auto))
        self.regression = regression if regression is not None else ConditionalMeanEmbedding()
        if not isinstance(self.regression, ConditionalMeanEmbedding):
            raise TypeError("`regression` must be a ConditionalMeanEmbedding; got "
                            f"{type(self.regression).__name__}.")
        if not isinstance(augment, (bool, np.bool_)):
            raise TypeError(f"`augment` must be True or False; got {shown(augment)}.")
        self.augment = bool(augment)
        if split is not None and (isinstance(split, bool) or not isinstance(split, (int, float))
                                  or not 0.0 < float(split) < 1.0):
            raise ValueError(f"`split` must be a fraction between 0 and 1 (the part the "
                             f"regressions are fitted on); got {shown(split)}.")
        self.split = None if split is None else float(split)
        self.cache = bool(cache)
        self.features_xy = FEATURES_XY
        self.estimator = KME()
        #: the seed of the split (set by the face when the null takes no random numbers)
        self.split_rng: Any = None
        #: BLAS threads of the regressions (set by the face from `n_jobs`; None: see
        #: :func:`kmtests.engines._loop.linalg_threads`)
        self.n_jobs: int | None = None
        #: set on the copy :meth:`resolved` makes: ``bandwidth_z="auto"`` became ARD
        self.auto_multi = False

    # -- what it is -------------------------------------------------------------------------------
    def label(self) -> str:
        return "SplitKCI" if self.split is not None else "KCI"

    def describe(self, prepared: Prepared) -> str:
        if self.split is not None:
            return ("SplitKCI (KCI with the regressions fitted on a held-out part of the "
                    "data)")
        return "KCI (V-statistic of the regression residuals)"

    def refusal_subject(self) -> str:
        return f"the conditional statistic {self.label()}"

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        # the in-memory engine (Gram matrices) or a low-rank one (features of x, y and z)
        return Requirements("pairing", {"x": self.kernel_x, "y": self.kernel_y,
                                        "z": self.kernel_z})

    def check(self, problem: Any, tuning: str) -> None:
        if self.bandwidth_z in ARD_MODES and getattr(self.kernel_z, "name", None) != "gaussian":
            raise ValueError(f"bandwidth_z={self.bandwidth_z!r} gives the Gaussian kernel on z one bandwidth "
                             f"per coordinate; got kernel_z={self.kernel_z.name!r}.")
        if self.split is not None and not problem.scheme.full:
            raise ValueError("statistic='split' fits the regressions on part of the sample; "
                             "permutations within strata need the statistic of the whole "
                             "sample: use statistic='kci' with `strata`.")
        n = problem.n
        if self.split is not None and min(round(self.split * n), n - round(self.split * n)) < 4:
            raise ValueError(f"`split` = {self.split:g} leaves fewer than 4 points on one side "
                             f"of {n}.")

    def offers(self, engine: Engine) -> frozenset[str]:
        if self.split is not None or engine.name in LOWRANK:
            return frozenset({"kernel_form"})
        return frozenset({"values", "kernel_form"})

    def check_engine(self, engine: Engine) -> None:
        """Refuse the engines it does not run on (the in-memory and low-rank ones run)."""
        if engine.name not in ("exact",) + LOWRANK:
            raise ValueError(f"the conditional test runs on engine='exact' (Gram matrices) or "
                             f"'nystrom'/'rff' (features); got engine={engine.name!r}.")
        if engine.name in LOWRANK and self.split is not None:
            raise ValueError("statistic='split' runs on engine='exact'; the low-rank engines "
                             "fit the regressions on all the data's features.")
        if engine.name in LOWRANK and self.bandwidth_z in ARD_MODES:
            raise ValueError(f"bandwidth_z={self.bandwidth_z!r} searches the bandwidths on the Gram matrices "
                             "of z: use engine='exact'.")

    def form(self) -> FormInfo:
        return FormInfo(KCIForm, self.label(), False, True)

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        n = problem.n
        self.check_engine(engine)
        if engine.name in LOWRANK:
            r = int(getattr(engine, "n_features", 200))
            q = self.features_xy
            need = 8.0 * n * (len(self._candidates_count()) * r + 4 * q + 2 * r) \
                + 8.0 * 3 * (q * q) ** 2
            return (need, f"the features of x, y and z of {n} observations take about "
                          f"{format_bytes(need)}", "Use fewer features (`n_features`).")
        need = 12 * 8.0 * n * n
        return (need, f"the {n} x {n} Gram, residual and eigenvector matrices of x, y and z "
                      f"take about {format_bytes(need)}",
                "Test a random subsample of the observations, or use a machine with more "
                "memory.")


    # -- computing it ----------------------------------------------------------------------------
    def _candidates(self, zs: np.ndarray) -> list[Kernel]:
        b = self.bandwidth_z
        if isinstance(b, (tuple, list, np.ndarray)):
            return [_with_bandwidth(self.kernel_z, float(v)) for v in b]
        base = fitted_kernel(self.kernel_z, zs, "z", cache=self.cache)
        bw = _bandwidth(base)
        if b in ("auto", "isotropic") and bw is not None:
            return [_with_bandwidth(base, bw * f) for f in Z_FACTORS]
        return [base]

    def resolved(self, dz: int, engine: Engine) -> KCI:
        """The statistic with ``bandwidth_z="auto"`` resolved for a z of `dz` coordinates:
        ``"isotropic"`` (one bandwidth searched), or, from :data:`MULTI_Z_FROM` (3)
        coordinates on (Gaussian kernel on z, the exact engine, the whole sample),
        ``"ard_each"`` with the searched ``lam`` divided by :data:`MULTI_Z_UNDERSMOOTH`
        unless the undersmoothing was given. Any other `bandwidth_z`: the statistic
        itself."""
        if self.bandwidth_z != "auto":
            return self
        out = copy.copy(self)
        multi = (dz >= MULTI_Z_FROM and engine.name not in LOWRANK and self.split is None
                 and getattr(self.kernel_z, "name", None) == "gaussian")
        out.bandwidth_z = "ard_each" if multi else "isotropic"
        out.auto_multi = multi
        if multi and self.undersmooth_auto and self.regression.tuned:
            out.regression = dataclasses.replace(self.regression,
                                                 undersmooth=MULTI_Z_UNDERSMOOTH)
        return out

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        dz = int(problem.dims.get("z", 1))
        stat = self.resolved(dz, engine)
        stat._warn_if_slow(problem.n, engine, dz)
        with linalg_threads(stat.n_jobs, problem.n,
                            RIDGE_SINGLE_BELOW if stat._direct(engine) else None):
            return stat._prepare(problem, engine, rng)

    def _warn_if_slow(self, n: int, engine: Engine, dz: int = 1, stacklevel: int = 7
                      ) -> None:
        """:class:`~kmtests.SlowTestWarning` when the O(n^3) decompositions of the exact
        engine reach :data:`SLOW_UNITS` (see there), with the faster options."""
        if engine.name in LOWRANK:
            return
        if self._direct(engine):
            units, what = CHOLESKY_UNITS * float(n) ** 3, f"a Cholesky factorisation of {n} x {n}"
        else:
            m = n if self.split is None else int(round(self.split * n))
            k = len(Z_FACTORS) + len(ARD_STEPS) * dz if self.bandwidth_z in ARD_MODES \
                else len(self._candidates_count())
            k *= 2 if self.bandwidth_z == "ard_each" else 1
            units = k * float(m) ** 3
            what = f"{k} eigendecomposition{'s' if k > 1 else ''} of {m} x {m} matrices"
        if units < SLOW_UNITS:
            return
        import warnings

        from .._guards import format_seconds
        from .._warnings import SlowTestWarning

        faster = ("engine='nystrom' or engine='rff' (features of z instead of Gram matrices: "
                  "O(n) time, `n_features` of them, default 200)")
        if not self._direct(engine):
            faster += (", or one given regression (a number for `bandwidth_z` and for `lam`: "
                       "one Cholesky factorisation, without the tuning)")
        warnings.warn(
            f"the conditional test on {n} observations takes {what} (O(n^3) time: about "
            f"{format_seconds(units * SECONDS_PER_UNIT)} of CPU on an idle 2-core Xeon, "
            f"longer on a busy machine). Faster: {faster}.", SlowTestWarning,
            stacklevel=stacklevel)

    def _given_ridge(self) -> float | None:
        """The `lam` of a kernel ridge regression with one given `lam` (with one kernel on
        z: the given-ridge path, :func:`ridge_residual`), else None."""
        lams = self.regression.lams()
        if lams is not None and lams.size == 1 and self.regression.filter == "tikhonov":
            return float(lams[0])
        return None

    def _direct(self, engine: Engine) -> bool:
        """Whether the regressions take the given-ridge path."""
        return (engine.name not in LOWRANK and self.split is None
                and len(self._candidates_count()) == 1 and self._given_ridge() is not None)

    def _prepare(self, problem: Any, engine: Engine, rng: Any) -> Prepared:
        x = standardized(problem.x.values)
        y = standardized(problem.y.values)
        applied = self.z_transform
        z = standardized(marginal_transform(problem.z.values, applied))
        xa = np.hstack([x, 0.5 * z]) if self.augment else x
        kx = fitted_kernel(self.kernel_x, xa, "x", cache=self.cache)
        ky = fitted_kernel(self.kernel_y, y, "y", cache=self.cache)
        if engine.name in LOWRANK:
            prepared = self._prepare_lowrank(problem, engine, kx, ky, xa, y, z, rng)
        elif self.split is None:
            prepared = self._prepare_whole(problem, kx, ky, xa, y, z)
        else:
            Kx = kx.centred_gram(xa, name="x").Kc
            Ky = ky.centred_gram(y, name="y").Kc
            prepared = self._prepare_split(problem, kx, ky, Kx, Ky, z, rng)
        prepared.report["z_transform"] = applied
        if applied != "none":
            scores = "normal scores" if applied == "normal_scores" else "ranks / (n + 1)"
            prepared.notes.append(f"z_transform={applied!r}: each coordinate of z was "
                                  f"replaced by its {scores} before the regressions (a "
                                  f"monotone map of each coordinate: the conditional null is "
                                  f"unchanged).")
        return prepared

    def _ard_kernel(self, z: np.ndarray, Kx: np.ndarray, Ky: np.ndarray) -> Kernel:
        """``bandwidth_z="ard"``: one bandwidth per coordinate of z, shared by the
        regressions of x and y (:func:`ard_bandwidths` on both targets; ``5 + 3 d_z``
        eigendecompositions)."""
        from ..kernels import ARDGaussian

        return ARDGaussian(bandwidth=ard_bandwidths(z, [Kx, Ky], self.regression))

    def _fit_whole(self, z: np.ndarray, *targets: np.ndarray,
                   spectra: list[Any] | None = None) -> list[Fit]:
        cands, lam = self._candidates(z), self._given_ridge()
        if len(cands) == 1 and lam is not None and self.bandwidth_z not in ARD_MODES:
            # one given kernel and lam: no eigendecomposition (shared by x and y)
            rr = ridge_residual(cands[0], z, lam, cache=self.cache)
            if rr is not None:
                return [rr] * len(targets)
        return list(self._fit(z, *targets, spectra=spectra))

    def _fit(self, z: np.ndarray, *targets: np.ndarray, spectra: list[Any] | None = None
             ) -> list[FittedRegression]:
        """The regressions of the `targets` (centred Gram matrices; x's and y's for ARD) on
        `z`; the decompositions of z are put in `spectra` when given empty, and read from
        it when filled."""
        reg = self.regression
        if self.bandwidth_z == "ard_each":
            # each regression its own bandwidths, searched on its own target
            fits = []
            for K in targets:
                own = ARDGaussian(bandwidth=ard_bandwidths(z, [K], reg))
                fits.append(reg.fit([own], z, K,
                                    spectra=[z_spectrum(own, z, cache=self.cache)]))
            return fits
        if self.bandwidth_z == "ard":
            k = self._ard_kernel(z, *targets)
            spec = [z_spectrum(k, z, cache=self.cache)]
            return [reg.fit([k], z, K, spectra=spec) for K in targets]
        cands = self._candidates(z)
        # shared by x and y; one BLAS thread each, side by side (the same bits whatever
        # the number of threads)
        specs = spectra if spectra else map_items(
            lambda k: z_spectrum(k, z, cache=self.cache), cands, self.n_jobs)
        if spectra is not None and not spectra:
            spectra.extend(specs)
        return [reg.fit(cands, z, K, spectra=specs) for K in targets]

    def _residuals(self, z: np.ndarray, *targets: tuple[Kernel, np.ndarray, str]
                   ) -> list[TargetResiduals]:
        """Each target's (kernel, data, role) regression on `z` and residual Gram matrix;
        with `cache` shared with the other tests that regress the same target on the same
        z (:mod:`kmtests.statistics.residual_cache`; not for ``"ard"``, which chooses z's kernel
        for x and y together)."""
        def gram(t: tuple[Kernel, np.ndarray, str]) -> Callable[[], np.ndarray]:
            return lambda: t[0].centred_gram(t[1], name=t[2]).Kc

        cands = self._candidates(z)
        if (not self.cache or self.bandwidth_z == "ard"
                or not cacheable(*cands, *(t[0] for t in targets))):
            Ks = [gram(t)() for t in targets]
            out = []
            for f, K in zip(self._fit_whole(z, *Ks), Ks):
                G = f.residual_gram(K)
                out.append(TargetResiduals(f, G, _share(G, K)))
            return out
        spectra: list[Any] = []

        def spectrum(k: Kernel) -> Any:  # as _fit computes it: on one BLAS thread
            if self.bandwidth_z == "ard_each":  # (ARD: in the caller's threads)
                return z_spectrum(k, z, cache=True)
            return map_items(lambda k: z_spectrum(k, z, cache=True), [k], 1)[0]

        settings = (self.bandwidth_z, cands, self.regression)
        return [target_residuals(t[0], t[1], gram(t), z, settings,
                                 lambda K: self._fit_whole(z, K, spectra=spectra)[0],
                                 spectrum, _share)
                for t in targets]

    def _prepare_whole(self, problem: Any, kx: Kernel, ky: Kernel, xa: np.ndarray,
                       y: np.ndarray, z: np.ndarray) -> Prepared:
        n = problem.n
        rx, ry = self._residuals(z, (kx, xa, "x"), (ky, y, "y"))
        fx, fy, Kxt, Kyt = rx.fit, ry.fit, rx.gram, ry.gram
        cache: dict[str, PairedGrams] = {}

        def paired() -> PairedGrams:
            # the y arrangement p: sum_ij (R_y Kx~ R_y)_ij (Ky)_{p_i p_j}; R_y is a function of
            # z, which permutations within strata of z leave unchanged
            if "pg" not in cache:
                Ry = fy.residual_operator()
                A = Ry @ Kxt @ Ry
                Ky = ky.centred_gram(y, name="y").Kc
                cache["pg"] = PairedGrams(np.ascontiguousarray(0.5 * (A + A.T)), Ky)
            return cache["pg"]

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            pg = paired()
            with numba_threads(n_jobs):
                S = pair_sums(pg, perms)[0]
            return Values(S / (n * n), np.full(S.shape, pg.scale))

        stat = float(np.einsum("ij,ij->", Kxt, Kyt)) / (n * n)
        scale = _absmax(Kxt) * _absmax(Kyt)

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return Values(np.array([stat]), np.array([scale])), {}

        factor = None
        if self.null_moments == "corrected":   # (computed when the gamma is fitted)
            factor = functools.partial(_corrected_factor, (fx, kx, xa, Kxt),
                                       (fy, ky, y, Kyt), z)
        return self._prepared(problem, kx, ky, fx, fy, Kxt, Kyt, values, observed, n,
                              unexplained=(rx.unexplained, ry.unexplained),
                              mean_factor=factor)

    def _prepare_split(self, problem: Any, kx: Kernel, ky: Kernel, Kx: np.ndarray,
                       Ky: np.ndarray, z: np.ndarray, rng: Any) -> Prepared:
        n = problem.n
        assert self.split is not None
        n_train = int(round(self.split * n))
        source = self.split_rng if self.split_rng is not None else rng
        order = child(source, "split").permutation(n)
        train, test = np.sort(order[:n_train]), np.sort(order[n_train:])
        zt = z[train]
        Kxa = Kx[np.ix_(train, train)]
        Kxa = Kxa - Kxa.mean(axis=0) - Kxa.mean(axis=1)[:, None] + Kxa.mean()
        Kya = Ky[np.ix_(train, train)]
        Kya = Kya - Kya.mean(axis=0) - Kya.mean(axis=1)[:, None] + Kya.mean()
        fx, fy = self._fit(zt, Kxa, Kya)
        filt = self.regression.filter
        Kxt = split_residual_gram(fx, zt, z[test], Kx, train, test, filt)
        Kyt = split_residual_gram(fy, zt, z[test], Ky, train, test, filt)
        m = test.size
        stat = float(np.einsum("ij,ij->", Kxt, Kyt)) / (m * m)
        scale = _absmax(Kxt) * _absmax(Kyt)

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:  # pragma: no cover
            raise AssertionError("SplitKCI offers no permutation values")

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return Values(np.array([stat]), np.array([scale])), {}

        # whether x or y is a function of z: judged in the sample the regressions were fitted
        # on (out of it, a regression's error is not rounding)
        prepared = self._prepared(problem, kx, ky, fx, fy, Kxt, Kyt, values, observed, m,
                                  unexplained=(_share(fx.residual_gram(Kxa), Kxa),
                                               _share(fy.residual_gram(Kya), Kya)))
        prepared.sizes = {"n_train": int(n_train), "n_test": int(m)}
        prepared.notes.append(f"SplitKCI: the regressions on z were fitted on {n_train} "
                              f"randomly chosen observations and the statistic computed on "
                              f"the other {m}.")
        return prepared

    def _prepare_lowrank(self, problem: Any, engine: Engine, kx: Kernel, ky: Kernel,
                         xa: np.ndarray, y: np.ndarray, z: np.ndarray, rng: Any) -> Prepared:
        """Features instead of Gram matrices (RCoT-style): the regressions are ridge (or
        filter) regressions of the features of x and y on those of z, and the statistic
        ``||Rx' Ry||_F^2 / n^2`` of the residual features."""
        n = problem.n
        source = self.split_rng if self.split_rng is not None else rng
        gx, gy, gz = child(source, "features").spawn(3)
        q = min(self.features_xy, n)
        r = min(int(getattr(engine, "n_features", 200)), n)
        Fx = lowrank.feature_map(engine.name, kx, xa, q, gx)  # looked up: tests patch it
        Fy = lowrank.feature_map(engine.name, ky, y, q, gy)
        seed = gz.integers(2**63)
        cands = self._candidates(z)
        # the same draws for every candidate bandwidth (common random numbers)
        specs = [feature_spectrum(k, lowrank.feature_map(engine.name, k, z, r,
                                                         np.random.default_rng(seed)).phi)
                 for k in cands]
        reg = self.regression
        fx = reg.fit(cands, z, Fx, spectra=specs)
        fy = reg.fit(cands, z, Fy, spectra=specs)
        Rx, Ry = fx.residual_features(Fx.phi), fy.residual_features(Fy.phi)
        C = Rx.T @ Ry
        stat = float(np.sum(C * C)) / (n * n)
        scale = float(np.max(np.einsum("ij,ij->i", Rx, Rx))
                      * np.max(np.einsum("ij,ij->i", Ry, Ry)))

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:  # pragma: no cover
            raise AssertionError("the low-rank KCI offers no permutation values")

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return Values(np.array([stat]), np.array([scale])), {}

        prepared = self._prepared(problem, kx, ky, fx, fy, Rx, Ry, values, observed, n,
                                  kind="kci_lowrank",
                                  unexplained=(_share_features(Rx, Fx.phi),
                                               _share_features(Ry, Fy.phi)))
        prepared.engine_info = (f"{Fx.rank} + {Fy.rank} features of x and y, {r} of z, "
                                "approximate")
        prepared.notes.append(
            f"engine={engine.name!r}: the Gram matrices are approximated by {engine.name} "
            f"features ({Fx.rank} of x, {Fy.rank} of y, {r} of z; drawn from `rng`), and the "
            "regressions on z are regressions on z's features (RCoT-style, Strobl et al., "
            "2019): an approximation of KCI.")
        return prepared

    def _prepared(self, problem: Any, kx: Kernel, ky: Kernel, fx: Fit, fy: Fit,
                  Kxt: np.ndarray, Kyt: np.ndarray, values: Any, observed: Any, m: int,
                  kind: str = "kci", unexplained: tuple[float, float] = (1.0, 1.0),
                  mean_factor: Callable[[], float] | None = None) -> Prepared:
        reg = self.regression

        def kernel_form() -> KernelForm:
            return KCIForm(False, Kxt, Kyt, lowrank=kind == "kci_lowrank",
                           mean_factor=mean_factor)

        def role(fit: Fit) -> dict[str, Any]:
            return {"lam": fit.lam, "epsilon": fit.lam * fit.n,
                    "bandwidth_z": _bandwidth_report(fit.kernel), "df": fit.df}

        params = {"x": role(fx), "y": role(fy)}
        tuned = reg.tuned or len(self._candidates_count()) > 1
        how = (f"lam (and the bandwidth on z) chosen for each variable by {reg.criterion}"
               if tuned else "lam and the bandwidth on z fixed")
        if self.bandwidth_z in ARD_MODES:
            whose = "for x and y together" if self.bandwidth_z == "ard" else "for each variable"
            how = (f"one bandwidth per coordinate of z (ARD) chosen {whose}, and lam for each "
                   f"variable, by {reg.criterion}")
        if reg.undersmooth != 1.0:
            how += (f", then lam divided by {reg.undersmooth:g} (undersmoothed, to at most "
                    f"{min(reg.max_df, reg.undersmooth_max_df):g} (n - 1) degrees of "
                    f"freedom)")
        if self.auto_multi:
            how += (" (bandwidth_z='auto' on a z of three or more coordinates: of the "
                    "choices measured, the one whose level held best there; "
                    "bandwidth_z='isotropic' searches one bandwidth)")
        regression_kind = "kernel ridge" if reg.filter == "tikhonov" else "spectral"
        aug = "x augmented by z/2, " if self.augment else ""
        note = (f"regression on z: {reg.filter} filter ({regression_kind} regression of the "
                f"features), {how}; {aug}all variables standardised.")
        what = (f"{self.label()} with {kx.phrase()} on x, {ky.phrase()} on y and "
                f"{fx.kernel.phrase()} on z")
        prepared = Prepared(values=values, observed=observed,
                        kernels={"x": kx, "y": ky, "z": fx.kernel}, what=what,
                        params=params, notes=[note], kernel_form=kernel_form,
                        report={"regression": {r: dict(v) for r, v in params.items()},
                                 "regression_config": {"filter": reg.filter,
                                                       "criterion": reg.criterion,
                                                       "tuned": bool(tuned)},
                                 "augment": self.augment,
                                 "kernel_z": {"x": describe_kernel(fx.kernel),
                                              "y": describe_kernel(fy.kernel)},
                                 "unexplained": {"x": unexplained[0],
                                                 "y": unexplained[1]}})
        coarse = kind == "kci_lowrank" or self.split is not None
        prepared.holds = _trivially(unexplained, (fx, fy),
                                    DEGENERATE_BELOW_COARSE if coarse else DEGENERATE_BELOW)
        return prepared

    def _candidates_count(self) -> list[Any]:
        b = self.bandwidth_z
        if isinstance(b, (tuple, list, np.ndarray)):
            return list(b)
        return list(Z_FACTORS) if b in ("auto", "isotropic", *ARD_MODES) else [b]


#: the choices of ``KCI(null_moments=...)``
NULL_MOMENTS = ("corrected", "zhang")


#: the nearest neighbours of recent metrics of z (:func:`_nearest`; PC asks for the same
#: conditioning set and bandwidths once per pair of targets)
_NEAREST: OrderedDict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = OrderedDict()
_NEAREST_KEEP = 64
_NEAREST_LOCK = threading.Lock()
COMPANION_CACHES.append(_NEAREST.clear)


def _nearest(zm: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's nearest other rows of `zm`: the pairs ``(i, j)`` and their weights
    ``1 / (number of rows tied at i's smallest distance, to a relative 1e-9)``, so that a
    mean over them does not depend on the order of the rows (ties are common in a
    discrete or rounded z). The squared distances come from the coordinates' differences
    (:func:`kmtests.kernels._sqdist_diff`: the same number for a pair wherever its rows
    are); kept in a small
    least-recently-used store by the digest of `zm`'s bytes."""
    key = _digest(zm)
    with _NEAREST_LOCK:
        hit = _NEAREST.get(key)
        if hit is not None:
            _NEAREST.move_to_end(key)
            return hit
    n = zm.shape[0]
    d2 = _sqdist_diff(zm, zm)
    np.fill_diagonal(d2, np.inf)
    # tied: within a relative 1e-9 of the smallest distance, so that equal distances
    # whose last bits differ (a grid of z, standardised) tie in every order of the rows
    tied = d2 <= d2.min(axis=1)[:, None] * (1.0 + 1e-9)
    rows, cols = np.nonzero(tied)
    weights = 1.0 / np.bincount(rows, minlength=n)[rows]
    out = (rows, cols, weights)
    for a in out:
        a.setflags(write=False)   # (shared by the callers of the store)
    with _NEAREST_LOCK:
        _NEAREST[key] = out
        while len(_NEAREST) > _NEAREST_KEEP:
            _NEAREST.popitem(last=False)
    return out


def _nearest_noise(K: Any, zm: np.ndarray) -> float:
    """Half the mean squared feature distance of each row to its nearest neighbours in
    `zm` (rows; the mean over the neighbours tied at the smallest distance): the noise
    level in the features where the conditional mean changes little between neighbours
    (a difference-based estimator). `K` is the centred Gram matrix, or a function of the
    pairs' indices ``(i, j)`` giving ``K_ii + K_jj - 2 K_ij`` (:func:`_feature_gaps`)."""
    i, j, w = _nearest(zm)
    gaps = K(i, j) if callable(K) else K[i, i] + K[j, j] - 2.0 * K[i, j]
    return float(0.5 * np.dot(w, gaps) / zm.shape[0])


def _feature_gaps(kernel: Kernel, data: np.ndarray, name: str) -> Any:
    """``(i, j) -> K_ii + K_jj - 2 K_ij``, the squared feature distances of the pairs of
    rows (centring cancels in them): for the kernels ``exp(exponent(d^2))`` of a scaled
    distance, ``-2 expm1(exponent(d_ij^2))`` from the pairs alone (O(pairs d)); else the
    centred Gram matrix."""
    if isinstance(kernel, _BandwidthKernel) and kernel.translation_invariant:
        a = np.asarray(data, dtype=np.float64)
        a = a.reshape(a.shape[0], -1)
        scaled = a / kernel.bandwidth_values(a.shape[1])

        def gaps(i: np.ndarray, j: np.ndarray) -> np.ndarray:
            d = scaled[i] - scaled[j]
            t = kernel._exponent(np.einsum("ij,ij->i", d, d))
            return np.asarray(-2.0 * np.expm1(t))
        return gaps
    return kernel.centred_gram(data, name=name).Kc


def _corrected_factor(x: tuple[Fit, Kernel, np.ndarray, np.ndarray],
                      y: tuple[Fit, Kernel, np.ndarray, np.ndarray], z: np.ndarray) -> float:
    """:func:`noise_mean_factor` from each variable's fit, kernel, data and residual Gram
    matrix."""
    (fx, kx, xa, Kxt), (fy, ky, ya, Kyt) = x, y
    return noise_mean_factor((fx, _feature_gaps(kx, xa, "x"), Kxt),
                             (fy, _feature_gaps(ky, ya, "y"), Kyt), z)


def noise_mean_factor(x: tuple[Fit, Any, np.ndarray], y: tuple[Fit, Any, np.ndarray],
                      z: np.ndarray) -> float:
    """The factor of the gamma null's mean for rows correlated by the regressions.

    KCI's null mean ``sum_t Kx~_tt Ky~_tt / n^2`` (Zhang et al.) takes the rows of the
    residual features as independent; the residuals are ``R`` (the regression's
    residual-maker) applied to independent rows, which correlates neighbouring rows.
    With ``E Kx~ = s_x A_x + B_x`` (``A = R H R``, ``s`` the noise level of the
    features, ``B`` the regression's bias) the terms that involve the noise add
    ``[s_x off(A_x, Ky~) + s_y off(A_y, Kx~) - s_x s_y off(A_x, A_y)] / n^2`` to the null
    mean (``off``: the sum of the products of the off-diagonal entries; the bias-bias
    term cannot be told from dependence and is left as Zhang et al. have it). The noise
    levels are estimated by :func:`_nearest_noise` in the metric of each regression's
    bandwidths on z, at most ``tr Kx~ / tr A_x``. Measured: ``benchmarks/README.md``,
    "Rows correlated by the regressions".

    Parameters
    ----------
    x, y : tuple
        Each variable's ``(fit, centred Gram matrix, residual Gram matrix)``; instead of
        the centred Gram matrix, a function of the pairs' indices ``(i, j)`` giving
        ``K_ii + K_jj - 2 K_ij`` (what the noise level reads of it).
    z : ndarray, shape (n, d)
        The (standardised) conditioning data the regressions were fitted on.

    Returns
    -------
    float
        The ratio of the corrected null mean to Zhang et al.'s (1.0 when either is not
        positive and finite).
    """
    with np.errstate(all="ignore"):   # (residuals at rounding level: the factor is 1)
        return _noise_mean_factor(x, y, z)


def _noise_mean_factor(x: tuple[Fit, Any, np.ndarray], y: tuple[Fit, Any, np.ndarray],
                       z: np.ndarray) -> float:
    parts = []
    for fit, Kc, Kt in (x, y):
        A = fit.residual_covariance()                     # R H R
        trace_a = float(np.trace(A))
        if not trace_a > 0.0 or not np.isfinite(trace_a):
            return 1.0
        level = float(np.trace(Kt)) / trace_a
        bw = getattr(fit.kernel, "bandwidth", None)
        try:
            zm = z / np.asarray(bw, dtype=np.float64)
        except (TypeError, ValueError):
            zm = z
        if not np.all(np.isfinite(zm)):
            zm = z
        parts.append((A, Kt, min(_nearest_noise(Kc, zm), level)))
    (Ax, Kx, sx), (Ay, Ky, sy) = parts

    def off(P: np.ndarray, Q: np.ndarray) -> float:
        return float(np.einsum("ij,ij->", P, Q) - np.diagonal(P) @ np.diagonal(Q))

    mean = float(np.diagonal(Kx) @ np.diagonal(Ky))
    extra = sx * off(Ax, Ky) + sy * off(Ay, Kx) - sx * sy * off(Ax, Ay)
    factor = 1.0 + extra / mean if mean > 0 else 1.0
    return factor if np.isfinite(factor) and factor > 0 else 1.0


def _with_bandwidth(kernel: Kernel, bandwidth: float) -> Kernel:
    """The kernel with another bandwidth (kernels are frozen dataclasses)."""
    out: Kernel = dataclasses.replace(cast(Any, kernel), bandwidth=bandwidth)
    return out


def _share(residual: np.ndarray, K: np.ndarray) -> float:
    """``tr(residual) / tr(K)``: the share of the features' energy (centred Gram `K`) that
    the regression on z leaves (0 for a constant variable: no energy to explain)."""
    total = float(np.trace(K))
    return float(np.trace(residual)) / total if total > 0 else 0.0


def _share_features(residual: np.ndarray, F: np.ndarray) -> float:
    """:func:`_share` of centred features (``tr(F F') = ||F||_F^2``)."""
    total = float(np.einsum("ij,ij->", F, F))
    return float(np.einsum("ij,ij->", residual, residual)) / total if total > 0 else 0.0


def _trivially(unexplained: tuple[float, float], fits: tuple[Fit, Fit],
               below: float) -> str | None:
    """Why conditional independence holds trivially (x or y a function of z to the
    precision of the regression: :data:`DEGENERATE_BELOW`), or None. A regression with
    more than half as many degrees of freedom as observations (e.g. a given ``lam`` at
    rounding level) nearly interpolates any data: its small residuals say nothing about z."""
    low = [(role, v) for role, v, fit in zip(("x", "y"), unexplained, fits)
           if v < below and fit.df <= 0.5 * fit.n]
    if not low:
        return None
    who = "x and y are functions" if len(low) == 2 else f"{low[0][0]} is a function"
    left = " and ".join(f"{v:.1e} of {role}'s" for role, v in low)
    return (f"{who} of z to the precision of the regression (it leaves {left} kernel "
            f"features unexplained, below {below:g}): x and y are then independent given z "
            f"trivially, and the statistic measures only the regression's rounding, so the "
            f"p-value is 1 (a part beyond z smaller than about {math.sqrt(below / 2):.0e} "
            f"of the variable's standard deviation counts as rounding: test that part "
            f"itself, rescaled, if it matters)")


def _absmax(M: np.ndarray) -> float:
    return max(abs(float(M.min())), abs(float(M.max())))


#: the names `bandwidth_z` takes besides numbers (for the refusals)
_BANDWIDTH_Z_NAMES = "'auto', 'isotropic', 'median', 'ard', 'ard_each'"


def _check_bandwidth_z(b: Any) -> Any:
    if isinstance(b, str):
        if b not in ("auto", "isotropic", "median", *ARD_MODES):
            raise ValueError(f"`bandwidth_z` must be {_BANDWIDTH_Z_NAMES}, a positive number "
                             f"or a sequence of them; got {shown(b)}.")
        return b
    if isinstance(b, (Sequence, np.ndarray)):
        arr = np.asarray(b, dtype=np.float64)
        if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0) \
                or np.unique(arr).size != arr.size:
            raise ValueError(f"`bandwidth_z` must be {_BANDWIDTH_Z_NAMES}, a positive number "
                             f"or a sequence of distinct positive numbers; got {shown(b)}.")
        return tuple(float(v) for v in arr)
    if isinstance(b, bool) or not isinstance(b, (int, float)) or not (np.isfinite(b) and b > 0):
        raise ValueError(f"`bandwidth_z` must be {_BANDWIDTH_Z_NAMES}, a positive number or a "
                         f"sequence of them; got {shown(b)}.")
    return float(b)
