r"""KSDAgg: the kernel Stein discrepancy aggregated over a collection of bandwidths.

Schrab, Guedj & Gretton (2022) test goodness of fit with the KSD of every bandwidth of
the collection ``2^l h`` for ``l = l_-, ..., l_+`` (``h`` the median heuristic on the
sample, or a bandwidth given), all computed on the *same* wild-bootstrap multipliers
(or the same fresh samples of the model), and reject when one member's statistic
exceeds its level-corrected quantile. kmtests builds the collection as an
:class:`~kmtests.statistics.Aggregate` of :class:`~kmtests.statistics.KSD` members
combined by MMDAgg's weighted min-p (:class:`~kmtests.null.combine.MinP`): the
aggregated statistic is ``S = min_j p_j / w_j`` and its p-value the rank of ``S`` among
the same minimum over the draws. The level correction is the one of MMDAgg — the
largest ``u`` with ``#{b: S_b <= u} <= alpha (B + 1)`` (reported as the threshold;
a member rejects when ``p_j <= u w_j``) — computed exactly on one stream of draws
instead of by the authors' bisection over a second stream (:func:`split_calibration`,
kept for comparison: ``B1`` draws for the quantiles, ``B2`` for the correction, ``B3``
bisection steps; on the same draws the two decisions agree in the tests and in
``benchmarks/README.md``).

The members' draws come from one multiplier matrix: the ``b``-th draw of every member
uses the same multipliers, as the authors' code does (:class:`SteinForms`). With fresh
samples of the model (``method="monte_carlo"``, the paper's "parametric bootstrap") the
draws are exchangeable with the data and the level is exact.
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import numpy as np

from .._validation import positive_grid
from ..engines import Engine, Requirements, Values
from ..estimators import KME, KernelMeanEstimator
from ..kernels import Kernel
from ._base import Prepared, Statistic
from .aggregate import Aggregate
from .forms import WILD_DRAW, FormInfo
from .ksd import KSD, STEIN_KERNELS, SteinForm, stein_gram
from .null_laws import multipliers

__all__ = ["DEFAULT_LEVELS", "KSDAgg", "SteinForms", "ksdagg_bandwidths", "split_calibration"]

#: the exponents ``l`` of the bandwidths ``2^l h`` when none are given (the RBM and
#: normalising-flow settings of the paper: ``l`` from -20 to 0)
DEFAULT_LEVELS = (-20, 0)


def ksdagg_bandwidths(reference: float, levels: tuple[int, int] = DEFAULT_LEVELS
                      ) -> np.ndarray:
    """The paper's collection ``2^l reference`` for ``l = levels[0], ..., levels[1]``.

    Examples
    --------
    >>> from kmtests.statistics.ksdagg import ksdagg_bandwidths
    >>> print(ksdagg_bandwidths(3.0, (-2, 1)))
    [0.75 1.5  3.   6.  ]
    """
    lo, hi = _check_levels(levels)
    return np.array([2.0 ** ell * float(reference) for ell in range(lo, hi + 1)])


def _check_levels(levels: Any) -> tuple[int, int]:
    msg = (f"`levels` must be two integers (l_minus, l_plus) with l_minus <= l_plus, the "
           f"bandwidths 2^l h for l from l_minus to l_plus; got {levels!r}.")
    try:
        lo, hi = levels
    except (TypeError, ValueError) as exc:
        raise ValueError(msg) from exc
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in (lo, hi)) \
            or lo > hi:
        raise ValueError(msg)
    return int(lo), int(hi)


def _check_grid(bandwidths: Any) -> np.ndarray:
    return positive_grid(bandwidths, f"`grid` must be distinct positive numbers (KSDAgg's "
                         f"bandwidths); got {bandwidths!r}.")


_WEIGHTS = ("uniform", "increasing", "decreasing", "centred")


def weighted_minp(options: Mapping[str, Any]) -> Any:
    """The plan's min-p combination with the `weights` option (uniform when not given)."""
    weights = options.get("weights")
    return dataclasses.replace(options["combination"],
                               weights="uniform" if weights is None else weights)


def _check_weights(weights: Any, m: int) -> None:
    """`weights` names a rule of MMDAgg's or gives `m` positive numbers (checked before any
    kernel matrix; the combination normalises them)."""
    if isinstance(weights, str):
        if weights not in _WEIGHTS:
            raise ValueError(f"`weights` must be one of {', '.join(map(repr, _WEIGHTS))} or "
                             f"{m} positive numbers; got {weights!r}.")
        return
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        w = np.empty(0)
    if w.shape != (m,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"`weights` must be one of {', '.join(map(repr, _WEIGHTS))} or {m} "
                         f"positive numbers (one per bandwidth); got {weights!r}.")


@dataclass(frozen=True, eq=False)
class SteinForms:
    """The Stein kernel matrices of several members, bootstrapped with the same
    multipliers: ``wild_null`` gives a ``(size, M)`` array whose row ``b`` is every
    member's statistic on the ``b``-th multiplier vector (drawn ``WILD_DRAW`` rows at a
    time, as :class:`~kmtests.statistics.ksd.SteinForm` draws them: a one-member
    collection has the single KSD's draws)."""

    forms: tuple[SteinForm, ...]

    def wild_null(self, rng: np.random.Generator, size: int, process: str, length: float,
                  n_jobs: int | None) -> np.ndarray:
        out = np.empty((size, len(self.forms)))
        n = self.forms[0].Kc.shape[0]
        for start in range(0, size, WILD_DRAW):
            b = min(WILD_DRAW, size - start)
            W = multipliers(rng, b, n, process, length, centred=False)
            for j, form in enumerate(self.forms):
                out[start:start + b, j] = form.wild_given(W, n_jobs)
        return out


class KSDAgg(Aggregate):
    """KSDAgg: the U-statistic KSD over a collection of bandwidths, min-p combined.

    Parameters
    ----------
    kernel : Kernel
        A fitted IMQ (the paper's), Gaussian or Matérn kernel: its bandwidth ``h`` is the
        reference of the collection ``2^l h`` (unless `grid` is given).
    levels : (int, int)
        ``(l_minus, l_plus)``, default ``(-20, 0)`` (:data:`DEFAULT_LEVELS`).
    grid : sequence of float, optional
        The collection itself (then `levels` and ``h`` do not enter).
    combination : MinP
        The min-p combination (:class:`kmtests.null.combine.MinP`: its weights — uniform
        in the paper — and the level at which the report says which members reject).
    """

    name: ClassVar[str] = "ksdagg"
    problem_kind: ClassVar[str] = "one_sample"
    default_method: ClassVar[str] = "wild"
    options: ClassVar[tuple[str, ...]] = ("levels", "grid", "weights")
    estimator_refusal: ClassVar[str] = KSD.estimator_refusal
    unbiased = True

    def __init__(self, kernel: Kernel, combination: Any, levels: Any = None,
                 grid: Any = None) -> None:
        if not isinstance(kernel, STEIN_KERNELS):
            KSD(kernel)  # its refusal
        self.levels: tuple[int, int] | None = None
        if grid is not None:
            if levels is not None:
                raise ValueError("give KSDAgg's collection once: `grid` (the bandwidths) "
                                 "or `levels` (the exponents of 2^l h).")
            bws = _check_grid(grid)
        else:
            self.levels = DEFAULT_LEVELS if levels is None else _check_levels(levels)
            bws = ksdagg_bandwidths(float(kernel.bandwidth),  # type: ignore[attr-defined]
                                    self.levels)
        self.reference = kernel
        kernels = [dataclasses.replace(kernel, bandwidth=float(b))  # type: ignore[call-arg]
                   for b in bws]
        _check_weights(getattr(combination, "weights", "uniform"), bws.size)
        super().__init__([KSD(k, True) for k in kernels], combination)
        self.estimator = KME()
        self.bandwidths = bws

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        return cls(kernels["kernel"], weighted_minp(options), options.get("levels"),
                   options.get("grid"))

    @classmethod
    def design(cls, name: str, problem: Any, kernels: dict[str, Any],
               options: dict[str, Any], rng: Any) -> tuple[Any, dict[str, Any]]:
        """The reference kernel fitted to the sample (the collection is fixed from it, the
        same for every fresh sample of the model)."""
        return KSD.design(name, problem, kernels, options, rng)

    symbol: ClassVar[str] = "min_j p_j/w_j"
    family_name: ClassVar[str] = "KSDAgg"

    def describe(self, prepared: Prepared) -> str:
        bws = self.bandwidths
        grid = (f"2^l h for l = {self.levels[0]}..{self.levels[1]}, h = "
                f"{float(self.reference.bandwidth):.4g}"  # type: ignore[attr-defined]
                if self.levels is not None else "given")
        return (f"{self.label()}, the weighted minimum of the p-values of {len(bws)} KSD^2_u "
                f"members: {self.reference.name} kernel with bandwidths {grid} "
                f"({bws.min():.4g} to {bws.max():.4g}) (KSDAgg)")

    def refusal_subject(self) -> str:
        return "KSDAgg"

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        return Requirements("pairing", {"kernel": self.reference},
                            gram="KSDAgg needs (one Stein kernel matrix per bandwidth)")

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        n, m = problem.n, len(self.members)
        need = 8.0 * n * n * (m + 6) + 8.0 * WILD_DRAW * n * 2
        return (need, f"the {m} Stein kernel matrices of KSDAgg ({n} x {n} each)",
                "Use fewer bandwidths (`levels` or `bandwidths`) or a subsample.")

    def offers(self, engine: Engine) -> frozenset[str]:
        return frozenset({"kernel_form"})

    def form(self) -> FormInfo:
        return FormInfo(SteinForm, "KSD^2_u", True, True)

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        Hs = [stein_gram(m.kernel, problem.x, problem.scores)  # type: ignore[attr-defined]
              for m in self.members]
        n = problem.n
        for H in Hs:  # the U-statistic: the diagonal dropped before summing (as KSD)
            np.fill_diagonal(H, 0.0)
        stats = np.array([float(H.sum()) / (n * (n - 1)) for H in Hs])
        scales = np.array([float(np.max(np.abs(H))) if H.size else 0.0 for H in Hs])

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return Values(stats[None, :], scales[None, :]), {}

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:  # pragma: no cover
            raise AssertionError("no arrangement keeps the one-sample null")

        columns = [(f"{m.kernel.name} bw={m.kernel.bandwidth:.3g}",  # type: ignore[attr-defined]
                    {"bandwidth": float(m.kernel.bandwidth)})  # type: ignore[attr-defined]
                   for m in self.members]
        return Prepared(values, observed, {"kernel": self.reference}, what="KSDAgg's KSD^2_u",
                        columns=columns, combination=self.combination,
                        # the members' forms together (their wild draws are (B, M))
                        kernel_form=lambda: SteinForms(  # type: ignore[arg-type,return-value]
                            tuple(SteinForm(True, H) for H in Hs)),
                        witness=("KSDAgg combines the KSDs of several bandwidths, each with "
                                 "its own Stein witness: run goodness_of_fit_test with the "
                                 "bandwidth of the member of interest and ask its result"))


def split_calibration(M1: np.ndarray, M2: np.ndarray, observed: np.ndarray,
                      weights: np.ndarray, alpha: float, B3: int = 50
                      ) -> tuple[bool, float, np.ndarray]:
    """The authors' level correction (Schrab et al., 2022, Algorithm 1), for comparison.

    ``M1`` (``B1 x M``) the draws that give the members' quantiles, ``M2`` (``B2 x M``)
    independent draws that estimate the probability that some member exceeds its
    ``1 - u w_j`` quantile; ``u`` is found by ``B3`` steps of bisection on
    ``[0, min_j 1 / w_j]`` as the largest with that probability at most `alpha`. The test
    rejects when some member's observed statistic exceeds its quantile.

    Returns
    -------
    reject : bool
    u : float
    quantiles : ndarray, shape (M,)

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.statistics.ksdagg import split_calibration
    >>> gen = np.random.default_rng(0)
    >>> M1, M2 = gen.normal(size=(500, 3)), gen.normal(size=(500, 3))
    >>> reject, u, q = split_calibration(M1, M2, np.array([3.0, 0.0, 0.0]),
    ...                                  np.full(3, 1 / 3), 0.05)
    >>> print(reject, round(u, 4), np.round(q, 2))
    True 0.042 [2.04 2.2  2.12]
    """
    M1s = np.sort(np.asarray(M1, dtype=np.float64), axis=0)
    M2 = np.asarray(M2, dtype=np.float64)
    B1, B2 = M1s.shape[0], M2.shape[0]
    w = np.asarray(weights, dtype=np.float64)
    cols = np.arange(w.size)

    def quantiles(u: float) -> np.ndarray:
        idx = np.ceil(B1 * (1.0 - u * w)).astype(np.int64) - 1
        return M1s[idx, cols]

    lo, hi = 0.0, float(np.min(1.0 / w))
    for _ in range(B3):
        u = (lo + hi) / 2.0
        p_u = np.count_nonzero(np.max(M2 - quantiles(u)[None, :], axis=1) > 0) / B2
        if p_u <= alpha:
            lo = u
        else:
            hi = u
    q = quantiles(lo)
    return bool(np.any(np.asarray(observed, dtype=np.float64) > q)), lo, q
