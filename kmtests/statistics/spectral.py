r"""Spectral-regularised MMD statistics for many permutations and many lambdas at once.

The spectral-regularised MMD (Hagrass, Sriperumbudur & Li, 2024) is

.. math:: \eta_\lambda = \lVert g_\lambda(\hat\Sigma)^{1/2}(\mu_P - \mu_Q)\rVert^2,

with :math:`\hat\Sigma` a centred covariance operator and :math:`g_\lambda` a
spectral filter (:data:`FILTERS`); it is the MMD of the kernel
:math:`k_\lambda(x, y) = \langle\phi(x), g_\lambda(\hat\Sigma)\phi(y)\rangle`,
estimated in U-form (or V-form).

**Pooled operator** (our default): :math:`\hat\Sigma` is the centred covariance
operator of the pooled sample, a permutation-invariant choice, so the test is
exact without splitting. With the pooled centred Gram matrix
:math:`K_c = U\,\mathrm{diag}(\kappa)U'`, the operator has eigenvalues
:math:`\kappa_i/N`, and the centred Gram matrix of :math:`k_\lambda` is

.. math:: K_{c,\lambda} = U\,\mathrm{diag}\big(\kappa_i\, g_\lambda(\kappa_i/N)\big)\,U' .

**Held-out operator** (the paper's): :math:`\hat\Sigma` is estimated on ``s``
held-out points ``z`` (with the unbiased ``s/(s-1)`` normalisation) and the
statistic uses the other points; with :math:`\hat\Sigma = \sum_i \lambda_i
\psi_i\otimes\psi_i`,

.. math:: k_\lambda(a, b) = g_\lambda(0)\,k(a, b) + \sum_i
          \frac{g_\lambda(\lambda_i) - g_\lambda(0)}{\lambda_i}\, f_{ai} f_{bi},
          \qquad f_{ai} = \langle\phi(a), \sqrt{\lambda_i}\,\psi_i\rangle .

Both are of the form ``base * Kc + F diag(c) F'`` on the permuted points
(``F`` centred): for a split with membership vector ``a`` (1 on x) the x-x
block sum is ``base a'Kc a + sum_i c_i (F_i'a)^2``. The projections ``F'a`` of a
chunk of permutations are one BLAS product (fixed shapes, so bit-identical
whatever ``batch``), and every lambda of a grid is one more matrix product
(``(F'a)^2 @ C``): a grid of lambdas costs about one MMD. The U-form needs the
diagonal of :math:`K_{c,\lambda}` summed over x, one more product. The statistics
then follow as in :mod:`kmtests.engines.mmd` (centred block sums ``s``, ``t``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from .._gram import CentredGram, centred_spectrum
from .._guards import format_bytes
from .._validation import check_choice, check_positive_int, shown
from ..engines import Engine, Requirements, Values
from ..engines.mmd import _CHUNK, PooledGram, _membership_into, within_sums
from ..estimators import KME, KernelMeanEstimator
from ..estimators.filters import FILTERS, filter_function
from ..kernels import Kernel
from ._base import Prepared, Statistic
from .aggregate import over_grid
from .mmd import describe_kernel

__all__ = ["FILTERS", "SpectralGram", "SpectralMMD", "filter_function", "held_out_spectral",
           "lambda_grid", "lambda_values", "pooled_spectral", "split_held_out"]


@dataclass(frozen=True, eq=False)
class SpectralGram:
    """``base * Kc + F diag(c) F'`` for a grid of lambdas, on the points permuted.

    Attributes
    ----------
    F : ndarray, shape (N, r)
        Centred features (columns orthogonal to ``1``).
    coef : ndarray, shape (r, L)
        The weights ``c`` of each feature, one column per lambda.
    base : ndarray, shape (L,)
        Coefficient of the base centred Gram matrix (0 for the pooled operator).
    pg : PooledGram or None
        The base centred Gram matrix (None when ``base`` is all zero).
    diag : ndarray, shape (N, L)
        The diagonal of every ``Kc_lambda`` (for the U-form).
    scale : ndarray, shape (L,)
        A bound on the entries of every ``Kc_lambda`` (rounding scale).
    """

    F: np.ndarray
    coef: np.ndarray
    base: np.ndarray
    pg: PooledGram | None
    diag: np.ndarray
    scale: np.ndarray

    @property
    def n(self) -> int:
        return self.F.shape[0]

    @property
    def n_lambdas(self) -> int:
        return self.coef.shape[1]


def pooled_spectral(cg: CentredGram, filt: Callable[[np.ndarray, float], np.ndarray],
                    lams: np.ndarray) -> SpectralGram:
    """The pooled-operator form: ``Kc_lambda = U diag(kappa g(kappa/N)) U'``."""
    N = cg.n
    kappa, U = centred_spectrum(cg.Kc)
    lam = np.asarray(lams, dtype=np.float64)
    coef = np.stack([kappa * filt(kappa / N, float(v)) for v in lam], axis=1)  # (r, L)
    diag = (U * U) @ coef
    # |(Kc_lambda)_ab| <= the largest eigenvalue of Kc_lambda
    scale = np.max(np.abs(coef), axis=0) if coef.size else np.zeros(lam.size)
    return SpectralGram(U, coef, np.zeros(lam.size), None, diag, scale)


def held_out_spectral(cg_rest: CentredGram, K_rz: np.ndarray, K_z: np.ndarray,
                      filt: Callable[[np.ndarray, float], np.ndarray],
                      lams: np.ndarray) -> tuple[SpectralGram, np.ndarray]:
    """The held-out form (Hagrass et al.): operator from ``s`` points z, statistic on the rest.

    `cg_rest` is the centred Gram matrix of the points permuted, `K_rz` their
    kernel values against z, `K_z` the Gram matrix of z. Returns the
    :class:`SpectralGram` and the eigenvalues of the estimated operator.
    """
    s = K_z.shape[0]
    H = np.eye(s) - 1.0 / s
    # Sigma_hat = (1/(s-1)) sum_j (phi(z_j) - mean)(...)': eigenpairs of H K_z H /(s-1)
    ev, V = centred_spectrum(H @ K_z @ H)
    # rounding is relative to the kernel's values, not to the centred matrix's top
    # eigenvalue: held-out points that coincide leave only rounding (the operator is 0)
    real = ev > 10.0 * s * np.finfo(np.float64).eps * float(np.max(np.abs(np.diagonal(K_z))))
    ev, V = ev[real] / (s - 1), V[:, real]
    # f_ai = <phi(a), sqrt(ev_i) psi_i> = (K_az H V)_i / sqrt(s - 1)
    F = (K_rz @ (H @ V)) / np.sqrt(s - 1)
    F -= F.mean(axis=0)  # centring over the permuted points (the MMD ignores the offset)
    lam = np.asarray(lams, dtype=np.float64)
    g0 = np.array([float(filt(np.zeros(1), float(v))[0]) for v in lam])
    coef = np.stack([(filt(ev, float(v)) - g) / ev for v, g in zip(lam, g0)], axis=1)
    diag = g0[None, :] * np.diagonal(cg_rest.Kc)[:, None] + (F * F) @ coef
    # the held-out points may all coincide (tied data): the operator is then 0, it has no
    # eigenpairs (r = 0) and ``Kc_lambda = g(0) Kc`` (the base term alone)
    top_f = float(np.max(np.sum(F * F, axis=1))) if F.size else 0.0
    top_c = np.max(np.abs(coef), axis=0) if coef.size else np.zeros(lam.size)
    scale = np.abs(g0) * cg_rest.kc_max + top_c * top_f
    return SpectralGram(F, coef, g0, PooledGram.of(cg_rest), diag, scale), ev


def spectral_mmd_values(sg: SpectralGram, perms: np.ndarray, n_x: int, unbiased: bool,
                        n_jobs: int | None = None) -> Values:
    """MMD^2 of ``k_lambda`` for every split in `perms` and every lambda: stat (B, L)."""
    n = sg.n
    n_y = n - n_x
    B = perms.shape[0]
    L = sg.n_lambdas
    s = np.zeros((B, L))
    t_x = np.zeros((B, L))
    A = np.empty((_CHUNK, n))
    for start in range(0, B, _CHUNK):  # fixed-shape chunks: the same bits for any batch
        stop = min(start + _CHUNK, B)
        _membership_into(A, perms[start:stop], n_x)
        Q = A @ sg.F                                  # (CHUNK, r): F'a for every split
        s[start:stop] = ((Q * Q) @ sg.coef)[: stop - start]
        t_x[start:stop] = (A @ sg.diag)[: stop - start]
    if sg.pg is not None and np.any(sg.base):
        s += within_sums(sg.pg.Kc, perms, n_x, n_jobs)[:, None] * sg.base[None, :]
    t_y = sg.diag.sum(axis=0)[None, :] - t_x
    if unbiased:
        stat = ((s - t_x) / (n_x * (n_x - 1)) + (s - t_y) / (n_y * (n_y - 1))
                + 2.0 * s / (n_x * n_y))
    else:
        stat = s * (1.0 / n_x + 1.0 / n_y) ** 2
    scale = np.broadcast_to(4.0 * sg.scale[None, :], stat.shape).copy()
    return Values(stat, scale)


def lambda_grid(trace: float, count: int = 10) -> np.ndarray:
    """The default grid of regularisation parameters, ``trace x 10^[-6, 1]``.

    `trace` is the trace of the estimated covariance operator (``tr(Kc)/N``):
    for kernels bounded by 1 it is below 1 and the grid is close to the
    ``10^seq(-6, 1, 0.75)`` of Hagrass et al.'s code.

    Examples
    --------
    >>> from kmtests.statistics.spectral import lambda_grid
    >>> print(lambda_grid(1.0, 3))
    [1.00000000e-06 3.16227766e-03 1.00000000e+01]
    """
    return float(trace) * np.logspace(-6.0, 1.0, check_positive_int(count, "lam"))


def lambda_values(lam: Any, name: str = "lam") -> np.ndarray | None:
    """`lam` validated: None for ``"auto"``, else a 1-D array of distinct positive numbers."""
    msg = f"`{name}` must be 'auto', a positive number or a sequence of them; got {shown(lam)}."
    if isinstance(lam, str):
        if lam.lower() != "auto":
            raise ValueError(msg)
        return None
    if lam is None or isinstance(lam, (bool, np.bool_)):
        raise TypeError(msg)
    try:
        grid = np.atleast_1d(np.asarray(lam, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise TypeError(msg) from exc
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError(msg)
    if np.unique(grid).size != grid.size:
        raise ValueError(f"`{name}` must not repeat a value (a repeated lambda would count "
                         f"twice in the aggregated test); got {shown(lam)}.")
    return grid


def split_held_out(n_x: int, n_y: int, s: int, gen: np.random.Generator
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The paper's held-out design: ``s`` random rows of each sample, of which a fair coin
    keeps one of each pair for z (the other is discarded); returns
    ``(z rows of x, z rows of y, remaining rows of x, remaining rows of y)``."""
    hx = gen.choice(n_x, size=s, replace=False)
    hy = gen.choice(n_y, size=s, replace=False)
    coin = gen.random(s) < 0.5
    rest_x = np.setdiff1d(np.arange(n_x), hx)
    rest_y = np.setdiff1d(np.arange(n_y), hy)
    return hx[coin], hy[~coin], rest_x, rest_y


def _held_out(problem: Any, split_size: Any, rng: Any) -> tuple[Any, np.ndarray]:
    """The held-out design of ``covariance="split"`` (Hagrass et al.): the problem on the
    remaining points, and the held-out points."""
    from .._rng import child
    from .._validation import check_positive_int

    nx, ny = problem.n_x, problem.n_y
    n_min = min(nx, ny)
    s = (max(3, int(round(0.2 * n_min))) if split_size is None
         else check_positive_int(split_size, "split_size"))
    if s < 3 or n_min - s < 2:
        raise ValueError(f"`split_size` must be at least 3 and leave 2 points in each sample; "
                         f"got {s} with samples of {nx} and {ny}.")
    x, y = problem.z[:nx], problem.z[nx:]
    zx, zy, rx, ry = split_held_out(nx, ny, s, child(rng, "split"))
    held = np.vstack([x[zx], y[zy]])
    return problem.with_data(np.vstack([x[rx], y[ry]]), rx.size, ry.size), held


def regularised_description(symbol: str, filter: str, reg: Mapping[str, Any] | None,
                            what: str) -> str:
    """A regularised statistic in the report's first line: its name and filter for a
    lambda grid (`reg` None: the members of an aggregate), else what it is (`what`, with
    ``{filter}`` and ``{lam}`` filled in)."""
    if reg is None:
        return f"{symbol} ({filter} filter)"
    return f"{symbol}, " + what.format(filter=filter, lam=f"{reg['lam']:.4g}")


class SpectralMMD(Statistic):
    """The spectral-regularised MMD (Hagrass et al., 2024) in U-form, over a lambda grid.

    Parameters
    ----------
    kernel : Kernel
        The kernel (a ``"median"`` bandwidth is fitted on the pooled sample).
    filter : str
        A filter of :data:`FILTERS`.
    lams : "auto" or array
        The regularisation parameters (one column each; ``"auto"``:
        :func:`lambda_grid` of the operator's trace).
    held_out : ndarray or None
        The points of the held-out covariance operator (``covariance="split"``);
        None: the pooled operator.
    """

    name: ClassVar[str] = "regularized"
    options: ClassVar[tuple[str, ...]] = ("filter", "lam", "covariance", "split_size")
    registered_as: ClassVar[tuple[str, ...]] = ("regularized",)
    problem_kind: ClassVar[str] = "two_sample"
    estimator_refusal: ClassVar[str] = (
        "statistic='regularized' regularises the covariance operator of the empirical kernel "
        "mean; use estimator='kme' (the regularisation is the filter and lam), or another "
        "statistic with {est!r}.")

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        lam = "auto" if options.get("lam") is None else options["lam"]
        stat = cls(kernels["kernel"], options.get("filter") or "tikhonov", lam,
                   options.get("held_out"))
        return over_grid(stat, options["combination"])

    @classmethod
    def design(cls, name: str, problem: Any, kernels: dict[str, Any],
               options: dict[str, Any], rng: Any) -> tuple[Any, dict[str, Any]]:
        """The kernel fitted to the pooled sample (and the held-out points of
        ``covariance="split"``, drawn from the child ``"split"`` of `rng`)."""
        from .._validation import check_choice

        covariance = options.get("covariance")
        if covariance is not None:
            covariance = check_choice(covariance, "covariance", ("pooled", "split"))
        if options.get("split_size") is not None and covariance != "split":
            raise ValueError("`split_size` configures covariance='split' (the held-out "
                             "points); with the pooled covariance operator it would be "
                             "ignored.")
        if problem.precomputed:
            return problem, kernels
        fit_on = problem.z
        if covariance == "split":
            problem, held = _held_out(problem, options.get("split_size"), rng)
            options["held_out"] = held
            fit_on = np.vstack([problem.z, held])
        return problem, {**kernels, "kernel": kernels["kernel"].fitted_to(
            fit_on, name="the pooled sample")}

    def __init__(self, kernel: Kernel, filter: str = "tikhonov", lams: Any = "auto",
                 held_out: np.ndarray | None = None) -> None:
        self.kernel = kernel
        self.estimator = KME()
        self.filter = check_choice(filter, "filter", tuple(FILTERS))
        self.lams = lambda_values(lams)
        self.held_out = held_out
        self.unbiased = True

    symbol: ClassVar[str] = "SRMMD^2_u"
    family_name: ClassVar[str] = "spectral-regularised MMD"

    def describe(self, prepared: Prepared) -> str:
        reg = prepared.params.get("regularization")
        where = "held-out points" if reg and reg["covariance"] != "pooled" else \
            "the pooled sample"
        return regularised_description(
            "SRMMD^2_u", self.filter, reg, "the spectral-regularised MMD^2_u ({filter} filter, "
            "lam = {lam}, covariance operator of " + where + ")")

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        return Requirements("split", {"kernel": self.kernel},
                            gram="statistic='regularized' needs (it decomposes the Gram "
                                 "matrix into its eigenvectors)")

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        n = problem.n
        need = 3 * 8.0 * n * n + 8.0 * n * 128  # the centred Gram, its eigenvectors, workspace
        return (need, f"the {n} x {n} pooled Gram matrix and its eigenvectors take "
                      f"{format_bytes(16.0 * n * n)}",
                "Test a random subsample of each sample, or use a machine with more memory.")

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        z, n_x, n = problem.z, problem.n_x, problem.n
        kern = self.kernel.fitted_to(z, name="the pooled sample")
        cg = kern.centred_gram(z, name="the pooled sample")
        filt = filter_function(self.filter)
        notes: list[str] = []
        if self.held_out is None:
            grid = self.lams if self.lams is not None else lambda_grid(cg.trace_c / cg.n)
            sg = pooled_spectral(cg, filt, grid)
            rank = int(sg.F.shape[1])
            covariance = "pooled"
            notes.append("regularisation: the spectral filter acts on the centred covariance "
                         "operator of the pooled sample, which the permutations leave "
                         f"unchanged (one eigendecomposition; rank {rank}); lam is in the "
                         "units of its eigenvalues.")
        else:
            zz = self.held_out
            K_z = kern.gram(zz)
            s = zz.shape[0]
            given = self.lams
            if given is not None:
                grid = given
            else:
                trace = float(np.trace(K_z) - K_z.sum() / s) / (s - 1)
                if not trace > 0:  # every held-out point ties: the operator is 0
                    trace = cg.trace_c / cg.n
                    notes.append("the held-out covariance operator is 0 (the held-out points "
                                 "coincide), so the lambda grid is scaled by the trace of the "
                                 "pooled operator instead")
                grid = lambda_grid(trace)
            sg, ev = held_out_spectral(cg, kern.gram(z, zz), K_z, filt, grid)
            rank = int(ev.size)
            if rank == 0:
                notes.append("the held-out covariance operator has no positive eigenvalue "
                             "(the held-out points coincide): the regularised kernel is "
                             "g_lambda(0) times the kernel, so the statistic is a multiple "
                             "of MMD^2_u and the test is the unregularised permutation test")
            covariance = "split"
            notes.append(f"regularisation: the covariance operator is estimated on {s} "
                         "held-out points (one of each of the split_size pairs drawn from x "
                         "and y, Hagrass et al.), the statistic and its permutations use the "
                         "other points; lam is in the units of the operator's eigenvalues.")
        L = grid.size
        params: dict[str, dict[str, Any]] = {}
        if L == 1:
            params["regularization"] = {"filter": self.filter, "lam": float(grid[0]),
                                        "covariance": covariance, "rank": rank}
        nmin = min(n_x, n - n_x)
        bw = getattr(kern, "bandwidth", None)
        columns = [(f"{describe_kernel(kern)}, {self.filter} lam={lam:.3g}",
                    {"bandwidth": float(bw) if isinstance(bw, (float, int)) else None,
                     "estimator": "kme", "form": "U", "filter": self.filter,
                     "lam": float(lam)})
                   for lam in grid]

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            return spectral_mmd_values(sg, perms, n_x, True, n_jobs)

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return values(np.arange(n, dtype=np.int64)[None, :], n_jobs), {}

        def norms() -> np.ndarray:
            # the Frobenius norm of Kc_lambda without its diagonal (from the eigenvalues)
            out = np.sqrt(np.maximum(np.sum(sg.coef**2, axis=0) - np.sum(sg.diag**2, axis=0),
                                     0.0))
            return out / (nmin * (nmin - 1))

        return Prepared(values=values, observed=observed, kernels={"kernel": kern},
                        what=f"{self.label()} with {kern.phrase()}", params=params,
                        notes=notes, columns=columns, norms=norms,
                        details={"lams": grid},
                        sizes={} if self.held_out is None else {"held out": s},
                        witness=("the spectral-regularised MMD is a norm of the mean "
                                 "difference re-weighted by a filter of the covariance "
                                 "operator, not of a difference of two estimated embeddings; "
                                 "kmtests does not offer its witness: the unregularised test "
                                 "(statistic='unbiased' or 'biased') has one"))
