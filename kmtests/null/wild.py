r"""The wild bootstrap of the degenerate kernel statistics (Chwialkowski et al., 2014).

Under the null hypothesis ``MMD^2`` and ``HSIC`` are degenerate V- (or U-)
statistics. The wild bootstrap redraws them with random multipliers ``W`` on
the points instead of rearranging the points:

* two samples (``MMD^2_b``): ``T_b = a_b' K a_b`` with ``a_b = (W~_x / n_x,
  -W~_y / n_y)``, where ``W~`` is each sample's multiplier process minus its
  mean; ``MMD^2_u`` drops the within-sample diagonal terms as the statistic
  does (``sum_{i != j} W~_i W~_j k(x_i, x_j) / (n_x (n_x - 1))`` and the same in
  y, minus ``2 sum_ij W~_i W~_j k(x_i, y_j) / (n_x n_y)``);
* two variables (``HSIC_b``): ``T_b = W~' (Kc o Lc) W~ / n^2``, as in the
  authors' code (``Kc = HKH``); the conditional statistic KCI likewise, with the
  residual Gram matrices (:mod:`kmtests.statistics.kci`).

With independent Rademacher multipliers (``process="rademacher"``) this is
the multiplier bootstrap of i.i.d. data; with the autoregressive process
``W_t = e^{-1/l} W_{t-1} + sqrt(1 - e^{-2/l}) eps_t`` (``process="ar"``,
``length=l``; standard normal ``eps``, stationary start) it is meant for
weakly dependent (e.g. time-series) data, where permutations are not: the
multipliers keep the dependence of neighbouring points. ``process="auto"``
(the default, what ``method="wild"`` means) takes the AR process when the
problem is declared a time series (``blocks=`` given to the test) and
Rademacher multipliers otherwise. ``length="auto"`` (the default) chooses ``l``
from the data: the Politis-White stationary-bootstrap block length, the
largest over the data's columns and the first principal components of the
Gaussian kernel's features (:mod:`kmtests._serial`; the AR multipliers'
covariance ``e^{-|s - t| / l}`` is the stationary bootstrap's with mean block
``l``); with ``blocks=b`` given as a number, ``l = b``. Either way the p-value
``(1 + #{T_b >= T}) / (1 + B)`` is approximate (asymptotic).

The multipliers are drawn from `rng`'s stream in fixed-shape chunks, and the
quadratic forms use the same fixed-shape products as the MMD engine, so a seed
gives the same p-value whatever `batch` and `n_jobs` are. Cost: ``2 B N^2``
flops for ``MMD^2_b`` and ``HSIC_b`` (three times that for ``MMD^2_u``), like
``B`` permutations of the MMD.

Examples
--------
>>> import numpy as np
>>> from kmtests import independence_test
>>> from kmtests.null import WildBootstrap
>>> gen = np.random.default_rng(0)
>>> x = gen.normal(size=100); y = x + gen.normal(size=100)
>>> res = independence_test(x, y, method=WildBootstrap(n_resamples=499, rng=1))
>>> print(f"{res.pvalue:.3f}")
0.002
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._summary import Annotated
from .._validation import check_choice
from ..engines.mmd import quadratic_forms
from ._base import NullOutcome, ResultLike, RunContext
from .permutation import (ResamplingMethod)

__all__ = ["WildBootstrap", "multipliers"]

#: multiplier rows drawn per step (fixed: the draws must not depend on `batch`)
_DRAW = 128


def multipliers(rng: np.random.Generator, size: int, n: int, process: str,
                length: float, centred: bool = True) -> np.ndarray:
    """`size` multiplier processes of length `n` (rows), centred (each minus its mean)
    unless `centred` is False."""
    if process == "rademacher":
        W = np.where(rng.random((size, n)) < 0.5, -1.0, 1.0)
    elif process == "gaussian":
        W = rng.standard_normal((size, n))
    else:
        rho = float(np.exp(-1.0 / length))
        eps = rng.standard_normal((size, n))
        W = np.empty((size, n))
        W[:, 0] = eps[:, 0]
        scale = float(np.sqrt(1.0 - rho * rho))
        for t in range(1, n):
            W[:, t] = rho * W[:, t - 1] + scale * eps[:, t]
    if centred:
        W -= W.mean(axis=1, keepdims=True)
    return W


def _fmt(length: Any) -> str:
    return f"{length:g}" if isinstance(length, (int, float)) else str(length)


def centred_diagonal(B: np.ndarray) -> np.ndarray:
    """The diagonal of ``H B H`` (``H`` the centring matrix of B's size)."""
    row = B.mean(axis=1)
    return np.diag(B) - row - B.mean(axis=0) + row.mean()


@dataclass(frozen=True)
class WildBootstrap(ResamplingMethod):
    """The wild bootstrap null (approximate; see the module docs).

    Parameters
    ----------
    n_resamples : int
        Number of bootstrap draws (default 9999).
    batch, rng, n_jobs, progress
        As for :class:`~kmtests.null.PermutationMethod`.
    process : {"auto", "rademacher", "gaussian", "ar"}
        Independent Rademacher or standard normal multipliers (i.i.d. data), or
        the autoregressive process of Chwialkowski et al. (dependent data);
        ``"auto"`` (default): ``"ar"`` on a problem declared a time series (the
        test's ``blocks=``), else ``"rademacher"``. The
        conditional test (KCI) takes ``"gaussian"`` (its ``method="wild"``) or
        ``"ar"``: with Gaussian multipliers the draws of ``W' M W`` are the
        weighted chi-square null itself, while Rademacher multipliers fix the
        diagonal and have lighter tails (refused there: on the sharp conditional
        null of ``tests/test_level_conditional.py``, n = 100, 39 of 300 data sets
        rejected at 5% against 22 with Gaussian multipliers and with the gamma
        null).
    length : float or "auto"
        The memory ``l`` of the autoregressive process; ``"auto"`` (default): from
        the data (see the module docs; the result's ``details["length"]`` and
        report give the value and the rule). Before 0.2 the default was 20 (the
        authors' code).

    Notes
    -----
    Applies to ``MMD^2_u``, ``MMD^2_b`` and ``HSIC_b`` with the KME (uniform
    weights) on the in-memory engine. Measured at the 5% level
    (``benchmarks/dependent_level.py``): on i.i.d. data with Rademacher
    multipliers 6-8% at n = 20, 4.6-5.9% at n = 50-100. On time series with the
    automatic length (``blocks="auto", method="wild"``) it over-rejects at
    n = 200-500: HSIC of two AR(1) series 9% (phi = 0.8, n = 200) to 23%
    (phi = 0.95), MMD between two windows of one series 13-32%, where
    ``blocks="auto"`` (block permutations) keeps the level up to phi = 0.9
    (``benchmarks/README.md``, "Dependent data").

    References
    ----------
    .. [1] Chwialkowski, Sejdinovic, Gretton (2014). A wild bootstrap for
       degenerate kernel tests. NeurIPS.
    """

    process: str = "auto"
    length: float | str = "auto"

    name: ClassVar[str] = "wild"
    needs: ClassVar[str] = "kernel_form"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice(self.process, "process", ("auto", "rademacher", "gaussian", "ar"))
        if isinstance(self.length, str) and self.length.lower() == "auto":
            pass
        elif isinstance(self.length, bool) or not (
                isinstance(self.length, (int, float, np.integer, np.floating))
                and np.isfinite(self.length) and self.length > 0):
            raise ValueError(f"`length` must be a positive number or 'auto'; got "
                             f"{self.length!r}.")

    def resolved_process(self, problem: Any) -> str:
        """The process on `problem`: ``"auto"`` is ``"ar"`` on a time series (a problem
        with ``blocks``), else ``"rademacher"``."""
        if self.process != "auto":
            return self.process
        return "ar" if problem.scheme.kind == "blocks" else "rademacher"

    def resolved_length(self, problem: Any) -> tuple[float, str]:
        """The memory of the AR multipliers on `problem`, and why."""
        if not isinstance(self.length, str):
            return float(self.length), "given"
        scheme = problem.scheme
        auto = getattr(scheme, "auto", None)
        if auto is None and scheme.kind == "blocks":
            return float(scheme.length), "the block length given (blocks=)"
        if auto is None:
            from ..problems.data import auto_length_of

            auto = auto_length_of(problem)
        return round(float(auto.multiplier), 2), auto.why_multiplier

    def check(self, statistic: Any, problem: Any, engine: Any) -> None:
        if problem.scheme.kind == "blocks":
            # a time series: the AR multipliers replace the block permutations
            if self.resolved_process(problem) != "ar":
                raise ValueError(f"process={self.process!r} draws independent multipliers "
                                 "(i.i.d. data), and `blocks` declares a time series: use "
                                 "method='wild' (AR multipliers on a time series) or "
                                 "WildBootstrap(process='ar').")
            if self.needs not in statistic.offers(engine):
                raise ValueError(self.refusal(statistic, engine))
        else:
            super().check(statistic, problem, engine)
        form = statistic.form()
        if form.kind not in ("mmd", "hsic", "kci", "kci_lowrank") or not form.kme or (
                form.kind in ("hsic", "kci", "kci_lowrank") and form.unbiased):
            raise ValueError("method='wild' bootstraps MMD^2_u, MMD^2_b and HSIC_b with the "
                             f"KME; the test computes {form.name}: use estimator='kme' (and "
                             "statistic='biased' for HSIC), or method='permutation'.")
        if form.kind in ("kci", "kci_lowrank") and self.resolved_process(problem) == "rademacher":
            raise ValueError("Rademacher multipliers make the wild bootstrap of KCI liberal "
                             "(39 of 300 sharp conditional nulls rejected at 5%, n = 100, "
                             "against 22 with Gaussian multipliers): use "
                             "WildBootstrap(process='gaussian') (what method='wild' does "
                             "for the conditional test) or process='ar' for dependent data.")
        if form.kind == "kci" and getattr(statistic, "split", None) is not None:
            # measured (benchmarks/ci_level.py, n = 200, 500 null data sets a cell): 11-30%
            # rejections at 5% on 8 of 9 nulls, where the gamma and chi2 nulls keep 3-11%
            raise ValueError("method='wild' does not keep the level of SplitKCI "
                             "(statistic='split'): on the conditional nulls of "
                             "benchmarks/ci_level.py it rejected 11-30% of the data sets at "
                             "5%; use method='gamma' or 'chi2'.")

    def refusal(self, statistic: Any, engine: Any) -> str:
        return ("method='wild' needs the kernel matrices in memory (engine='exact') and a "
                f"kernel statistic; {statistic.refusal_subject()} on engine={engine.name!r} "
                f"has none: use method={statistic.default_method!r}.")

    def _draws(self, kf: Any, M: np.ndarray | None, dc: np.ndarray | None,
               rng: np.random.Generator, size: int, process: str, length: float
               ) -> np.ndarray:
        """The bootstrap statistics of `size` draws (rows drawn `_DRAW` at a time; `M` the
        HSIC matrix ``Kc o Lc``; `dc` the diagonals of the samples' own centred Gram
        matrices, for ``MMD^2_u``)."""
        n = kf.Kc.shape[0]
        out = np.empty(size)
        for start in range(0, size, _DRAW):
            b = min(_DRAW, size - start)
            if kf.kind == "kci_lowrank":  # ||Fx' diag(w) Fy||_F^2 / n^2, no n x n matrix
                W = multipliers(rng, b, n, process, length)
                acc = np.zeros(b)
                for a in range(kf.Kc.shape[1]):
                    Q = (W * kf.Kc[:, a][None, :]) @ kf.Lc
                    acc += np.einsum("ij,ij->i", Q, Q)
                out[start:start + b] = acc / (n * n)
                continue
            if kf.kind in ("hsic", "kci"):
                W = multipliers(rng, b, n, process, length) / n
                assert M is not None
                out[start:start + b] = quadratic_forms(M, W, self.n_jobs)
                continue
            nx, ny = kf.n_x, n - kf.n_x
            Wx = multipliers(rng, b, nx, process, length, centred=False)
            Wy = multipliers(rng, b, ny, process, length, centred=False)
            # the quadratic forms with centred multipliers: W~' K W~ = W' (H K H) W
            Cx = Wx - Wx.mean(axis=1, keepdims=True)
            Cy = Wy - Wy.mean(axis=1, keepdims=True)
            if not kf.unbiased:
                A = np.hstack([Cx / nx, -Cy / ny])
                out[start:start + b] = quadratic_forms(kf.Kc, A, self.n_jobs)
                continue
            U = np.hstack([Cx, np.zeros((b, ny))])
            V = np.hstack([np.zeros((b, nx)), Cy])
            sxx = quadratic_forms(kf.Kc, U, self.n_jobs)
            syy = quadratic_forms(kf.Kc, V, self.n_jobs)
            sxy = 0.5 * (quadratic_forms(kf.Kc, U + V, self.n_jobs) - sxx - syy)
            # the U-statistic drops the diagonal of the *centred* kernel: sum_{i != j}
            # W_i W_j <phi_i - mu, phi_j - mu> has mean zero (Rademacher W); dropping the
            # uncentred k_ii instead leaves a bias of order 1/n, as large as the statistic
            assert dc is not None
            txx = (Wx * Wx) @ dc[:nx]
            tyy = (Wy * Wy) @ dc[nx:]
            out[start:start + b] = ((sxx - txx) / (nx * (nx - 1)) + (syy - tyy) / (ny * (ny - 1))
                                    - 2.0 * sxy / (nx * ny))
        return out

    def run(self, prepared: Any, problem: Any, observed: Any, ctx: RunContext) -> NullOutcome:
        kf = prepared.kernel_form()
        M = kf.Kc * kf.Lc if kf.kind in ("hsic", "kci") else None
        dc = None
        if kf.kind == "mmd" and kf.unbiased:
            nx = kf.n_x
            dc = np.concatenate([centred_diagonal(kf.Kc[:nx, :nx]),
                                 centred_diagonal(kf.Kc[nx:, nx:])])
        process = self.resolved_process(problem)
        length, why = (self.resolved_length(problem) if process == "ar" else (20.0, ""))
        null = self.draw_null(lambda gen, b: self._draws(kf, M, dc, gen, b, process, length),
                              _DRAW, 16 * _DRAW)
        details: dict[str, Any] = {"process": process}
        if process == "ar":
            details["length"] = length
            details["length_rule"] = why
        return self.upper_outcome(prepared, observed, null, details)

    # -- the report ---------------------------------------------------------------------------
    def _resolved(self, res: ResultLike) -> tuple[str, Any, str]:
        """The process, length and its rule of a result (as run)."""
        details = getattr(res, "details", None) or {}
        process = details.get("process", self.process)
        return process, details.get("length", self.length), details.get("length_rule", "")

    def describe(self, res: ResultLike) -> str:
        process, length, _ = self._resolved(res)
        what = {"rademacher": "Rademacher multipliers",
                "gaussian": "Gaussian multipliers"}.get(process) or (
                    f"AR(1) multipliers, length {_fmt(length)}")
        return f"wild bootstrap p-value ({res.n_resamples} draws, {what}; approximate)"

    def info_rows(self, res: ResultLike) -> list[tuple[str, Any]]:
        process, length, _ = self._resolved(res)
        rows: list[tuple[str, Any]] = [("method", Annotated("wild", "(approx.)")),
                                       ("n_resamples", res.n_resamples),
                                       ("process", process)]
        if process == "ar":
            rows.append(("length", length))
        rows.append(("seed", "-" if res.seed is None else res.seed))
        return rows

    def notes(self, res: ResultLike, alpha: float) -> list[str]:
        process, length, why = self._resolved(res)
        why = f", {why}" if why and why != "given" else ""
        which = {"rademacher": "independent Rademacher multipliers (i.i.d. data)",
                 "gaussian": "independent Gaussian multipliers (i.i.d. data)"}.get(
                     process) or (f"an AR(1) multiplier process of length {_fmt(length)}"
                                  f"{why} (dependent data)")
        return [f"Wild bootstrap null (Chwialkowski et al., 2014) with {which}: approximate "
                "p-value = (1 + #{T_b >= T}) / (1 + B); its Monte Carlo interval is the "
                "Clopper-Pearson interval of the bootstrap p-value."]

