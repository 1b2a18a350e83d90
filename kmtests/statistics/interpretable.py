"""Interpretable tests: ME and SCF (two-sample), NFSIC (independence).

Linear-time tests whose features — test locations ``v_j`` (ME, NFSIC) or
frequencies ``t_j`` (SCF) and the Gaussian widths — are learned on a training
split of the data by maximising the power criterion, and then tested on the
held-out part (Chwialkowski et al., 2015; Jitkrittum et al., 2016, 2017; the
numerics are in :mod:`kmtests.statistics.locations`). The learned locations
say *where* the distributions differ most.

The face holds the training pairs out (:meth:`LearnedFeatures.hold_out`) and
runs the test on the rest: the statistic's null is then the permutations of the
held-out pairs (``method="permutation"``, the default, exact given the training
split), or the papers' asymptotic chi-square (``method="asymptotic"``, linear
time, liberal at moderate sizes: see :doc:`/user_guide/where`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

import numpy as np

from .._guards import format_bytes
from .._rng import child
from .._validation import check_positive_int, shown
from ..engines import Engine, Requirements, Values
from ..estimators import KME, KernelMeanEstimator
from ..estimators._rules import Uniform
from ..kernels import Gaussian, Kernel
from ._base import Prepared, Statistic
from .locations import (
    Learned,
    fsic_features,
    gauss_rows,
    hotelling,
    learn_fsic,
    learn_me,
    learn_scf,
    scf_rows,
    standard_frame,
)
from .witness import HSICWitness, MMDWitness

__all__ = ["MESCF", "NFSIC", "LearnedFeatures"]

_LABELS = {"me": "lambda_ME", "scf": "lambda_SCF", "fsic": "NFSIC"}
_PAPERS = {"me": "the ME test (Jitkrittum et al., 2016)",
           "scf": "the SCF test (Jitkrittum et al., 2016)",
           "fsic": "the NFSIC test (Jitkrittum et al., 2017)"}


def _width(kernel: Kernel, what: str) -> float | None:
    """The fixed Gaussian bandwidth of `kernel` (None: ``"median"``, learned)."""
    if not isinstance(kernel, Gaussian):
        raise ValueError(f"{what} uses a Gaussian kernel whose width it learns; got the "
                         f"{getattr(kernel, 'name', type(kernel).__name__)!r} kernel: use "
                         "kernel='gaussian'.")
    bw = kernel.bandwidth
    if isinstance(bw, str):
        return None
    return float(bw)


class LearnedFeatures(Statistic):
    """Base of the statistics with features learned on a training split."""

    options: ClassVar[tuple[str, ...]] = ("n_locations", "split_size")
    default_method: ClassVar[str] = "permutation"
    estimator_refusal: ClassVar[str] = (
        "statistic={name!r} learns its features on a training split and compares plain means "
        "of them; estimator={est!r} does not apply (use estimator='kme').")
    kind: str = "me"

    def holds_out(self) -> bool:
        return True

    def __init__(self, n_locations: int | None = None, split_size: int | None = None) -> None:
        self.n_locations = 5 if n_locations is None else check_positive_int(
            n_locations, "n_locations")
        self.split_size = None if split_size is None else check_positive_int(
            split_size, "split_size")
        self.estimator = KME()
        self.unbiased = False
        self.training: tuple[np.ndarray, np.ndarray] | None = None
        self.gen: np.random.Generator | None = None
        #: ``(centre, unit)`` of the standardised coordinates the features are learned in
        self.frame: tuple[np.ndarray, float] = (np.zeros(1), 1.0)
        #: unequal sizes: (the larger sample, its size, the size it was subsampled to)
        self.subsampled: tuple[str, int, int] | None = None

    def label(self) -> str:
        return _LABELS[self.kind]

    def offers(self, engine: Engine) -> frozenset[str]:
        return frozenset({"values", "chi2_df"})

    def _own(self) -> str:
        return (f"statistic={self.kind!r} evaluates its kernel at the learned locations "
                "only (linear time), with no Gram matrix and no low-rank features")

    def _pairs_needed(self) -> int:
        return self.n_locations * (2 if self.kind == "scf" else 1) + 2

    def _split(self, n: int) -> int:
        """The number of training pairs of `n` pairs (default: half)."""
        m = n // 2 if self.split_size is None else self.split_size
        need = self._pairs_needed()
        if m < need or n - m < need:
            raise ValueError(
                f"{_PAPERS[self.kind]} learns {self.n_locations} location(s) on training "
                f"pairs and tests on the others: each part needs at least {need} pairs (J + 2"
                f"{', 2J + 2 for SCF' if self.kind == 'scf' else ''}); got {n} pairs split "
                f"{m} / {n - m}. Use more data, fewer `n_locations`, or another `split_size`.")
        return m

    def hold_out(self, problem: Any, rng: Any) -> Any:
        """The problem on the test pairs; the training pairs and the generator of the
        initial locations are kept by the statistic. The pairs are split at random by
        the child generator ``"split"`` of `rng` (which then draws the initial values)."""
        self.gen = child(rng, "split")
        if problem.kind == "two_sample":
            if problem.precomputed:
                raise ValueError(f"{_PAPERS[self.kind]} evaluates the kernel at learned "
                                 "locations: it needs the data, not kernel='precomputed'.")
            x, y = problem.z[:problem.n_x], problem.z[problem.n_x:]
            if x.shape[0] != y.shape[0]:
                # the tests pair x_i with y_i: a random subsample of the larger sample (by
                # the child generator "subsample" of `rng`), said in the report
                sub = child(rng, "subsample")
                big, small = (x, y) if x.shape[0] > y.shape[0] else (y, x)
                keep = np.sort(sub.choice(big.shape[0], size=small.shape[0], replace=False))
                which = "x" if big is x else "y"
                self.subsampled = (which, big.shape[0], small.shape[0])
                x, y = (big[keep], small) if which == "x" else (small, big[keep])
            n = x.shape[0]
            m = self._split(n)
            order = self.gen.permutation(n)
            tr, te = order[:m], np.sort(order[m:])
            self.training = (x[tr], y[tr])
            return problem.with_data(np.vstack([x[te], y[te]]), te.size, te.size)
        if problem.precomputed:
            raise ValueError(f"{_PAPERS[self.kind]} evaluates the kernels at learned "
                             "locations: it needs the data, not precomputed kernels.")
        n = problem.n
        m = self._split(n)
        order = self.gen.permutation(n)
        tr, te = order[:m], np.sort(order[m:])
        x, y = problem.x.data, problem.y.data
        self.training = (x[tr], y[tr])
        return problem.with_rows(te)

    def _learned(self) -> tuple[Learned, tuple[np.ndarray, np.ndarray]]:
        if self.training is None or self.gen is None:
            raise ValueError(f"{_PAPERS[self.kind]} learns its features on a training "
                             "split: run it through two_sample_test / independence_test "
                             "(which hold the training pairs out).")
        return self._learn(*self.training), self.training

    def _learn(self, x: np.ndarray, y: np.ndarray) -> Learned:
        raise NotImplementedError  # pragma: no cover - each statistic learns its own

    def memory(self, problem: Any, engine: Engine, tuning: str, batch: int
               ) -> tuple[float, str, str]:
        J = self._pairs_needed()
        n, d = problem.n, sum(problem.dims.values()) or 1
        need = 8.0 * (4 * n * (d + J) + batch * n * J * 3)
        return (need, f"the features of {n} points at {J} locations take {format_bytes(need)}",
                "Use fewer `n_locations` or a smaller `batch`.")

    def _notes(self, learned: Learned, m_train: int, what: str) -> list[str]:
        notes = [f"{self.n_locations} {what} and the Gaussian width(s) learned on "
                 f"{m_train} training pairs (drawn at random from the data by `rng`) by "
                 f"maximising the power criterion (training lambda {learned.initial:.4g} "
                 f"-> {learned.criterion:.4g}); the test uses the other pairs only. The "
                 f"{what} are in details['locations']."]
        if not learned.converged:
            notes.append(f"the optimiser of the {what} stopped before converging "
                         f"({learned.n_iter} iterations); the best values found are used")
        return notes


class MESCF(LearnedFeatures):
    """The ME (``kind="me"``) or SCF (``kind="scf"``) two-sample statistic.

    Parameters
    ----------
    kernel : Kernel
        A Gaussian kernel: ``bandwidth="median"`` learns the width; a number
        holds it fixed (the locations are still learned).
    kind : {"me", "scf"}
    n_locations : int
        ``J``, the number of test locations (frequencies); default 5.
    split_size : int, optional
        Training pairs (default: half of the pairs).
    """

    problem_kind: ClassVar[str] = "two_sample"
    registered_as: ClassVar[tuple[str, ...]] = ("me", "scf")

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        return cls(kernels["kernel"], name, options.get("n_locations"),
                   options.get("split_size"))

    def __init__(self, kernel: Kernel, kind: str = "me", n_locations: int | None = None,
                 split_size: int | None = None) -> None:
        super().__init__(n_locations, split_size)
        if kind not in ("me", "scf"):
            raise ValueError(f"`kind` must be 'me' or 'scf'; got {shown(kind)}.")
        self.kind = kind
        self.name = kind  # type: ignore[misc]
        self.kernel = kernel
        self.fixed_width = _width(kernel, _PAPERS[kind])

    def __repr__(self) -> str:
        return (f"MESCF(kind={self.kind!r}, n_locations={self.n_locations}, "
                f"split_size={self.split_size})")

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        return Requirements("split", {"kernel": self.kernel}, own_features=self._own())

    def _learn(self, x: np.ndarray, y: np.ndarray) -> Learned:
        """Learn in standardised coordinates (:func:`standard_frame` of the training
        pairs), so that the test does not depend on the data's origin or units."""
        assert self.gen is not None
        J = self.n_locations
        centre, unit = self.frame = standard_frame(np.vstack([x, y]))
        xs, ys = (x - centre) / unit, (y - centre) / unit
        if self.kind == "me":
            w = None if self.fixed_width is None else (self.fixed_width / unit) ** 2
            return learn_me(xs, ys, J, self.gen, w)
        return learn_scf(xs, ys, J, self.gen,
                         None if self.fixed_width is None else self.fixed_width / unit)

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        learned, (xt, _) = self._learned()
        centre, unit = self.frame
        z, m = problem.z, problem.n_x
        zs = (z - centre) / unit
        if self.kind == "me":
            # the features in the standardised coordinates, the locations and width in
            # the data's (for the report and the witness)
            loc = centre + unit * learned.locations
            sigma = float(unit * np.sqrt(learned.width))
            F = gauss_rows(zs, learned.locations, learned.width)
        else:
            loc = learned.locations  # frequencies: dimensionless
            sigma = float(unit * learned.width)
            F = scf_rows(zs, loc, learned.width)
        kern = Gaussian(bandwidth=sigma)

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            Z = F[perms[:, :m]] - F[perms[:, m:]]
            lam, _ = hotelling(Z, ddof=1)
            return Values(lam, np.maximum(np.abs(lam), 1.0))

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return values(np.arange(2 * m, dtype=np.int64)[None, :], n_jobs), {}

        Z0 = F[:m] - F[m:]
        _, rank = hotelling(Z0, ddof=1)
        df = int(rank)
        full = F.shape[1]
        notes = self._notes(learned, xt.shape[0],
                            "test locations" if self.kind == "me" else "test frequencies")
        if self.subsampled is not None:
            which, big, small = self.subsampled
            notes.append(f"the {_PAPERS[self.kind].split(' (')[0].removeprefix('the ')} "
                         f"pairs x_i with y_i: {small} of the {big} observations of {which} "
                         "were drawn at random (by `rng`) to match the other sample's size; "
                         "the others are not used")
        if df < full:
            notes.append(f"the features' covariance on the test pairs has rank {df} of "
                         f"{full}: the statistic uses {df} directions and the chi-square null "
                         f"{df} degrees of freedom")
        witness: Any = (MMDWitness(kern, z, m, Uniform(fixed=1.0), what=self.label())
                        if self.kind == "me" else
                        "the SCF test compares smoothed characteristic functions at learned "
                        "frequencies, not kernel mean embeddings; its learned frequencies "
                        "are in details['locations'] (statistic='me' has a witness)")
        details: dict[str, Any] = {"locations": loc, "df": df, "n_locations": self.n_locations,
                                   "criterion": learned.criterion}
        if self.kind == "scf":
            details["frequency_scale"] = sigma
            details["frequency_origin"] = centre
        return Prepared(values=values, observed=observed, kernels={"kernel": kern},
                        what=f"{self.label()} with {kern.phrase()}", notes=notes,
                        report=details, details={"df": df},
                        sizes={"training pairs": int(xt.shape[0])}, witness=witness)


class NFSIC(LearnedFeatures):
    """The normalised finite-set independence criterion (NFSIC) with learned paired
    locations ``(v_j, w_j)`` and Gaussian widths.

    Parameters
    ----------
    kernel_x, kernel_y : Kernel
        Gaussian kernels (``"median"``: the width is learned; a number: fixed).
    n_locations, split_size
        As for :class:`MESCF` (``J``, default 5; training pairs, default half).
    """

    problem_kind: ClassVar[str] = "independence"

    @classmethod
    def build(cls, name: str, kernels: Mapping[str, Any], estimator: KernelMeanEstimator,
              options: Mapping[str, Any]) -> Statistic:
        return cls(kernels["x"], kernels["y"], options.get("n_locations"),
                   options.get("split_size"))
    kind = "fsic"
    name: ClassVar[str] = "fsic"

    def __init__(self, kernel_x: Kernel, kernel_y: Kernel, n_locations: int | None = None,
                 split_size: int | None = None) -> None:
        super().__init__(n_locations, split_size)
        self.kernel_x, self.kernel_y = kernel_x, kernel_y
        self.fixed = (_width(kernel_x, _PAPERS["fsic"]), _width(kernel_y, _PAPERS["fsic"]))

    def __repr__(self) -> str:
        return f"NFSIC(n_locations={self.n_locations}, split_size={self.split_size})"

    def requirements(self, problem: Any, tuning: str) -> Requirements:
        return Requirements("pairing", {"x": self.kernel_x, "y": self.kernel_y},
                            own_features=self._own())

    def _learn(self, x: np.ndarray, y: np.ndarray) -> Learned:
        assert self.gen is not None
        w = tuple(None if b is None else b * b for b in self.fixed)
        return learn_fsic(x, y, self.n_locations, self.gen, w)  # type: ignore[arg-type]

    def prepare(self, problem: Any, engine: Engine, tuning: str, rng: Any) -> Prepared:
        learned, (xt, _) = self._learned()
        x, y = problem.x.data, problem.y.data
        V, W = learned.locations, learned.locations_y
        assert W is not None and learned.width_y is not None
        sx2, sy2 = learned.width, learned.width_y
        K = gauss_rows(x, V, sx2)
        L = gauss_rows(y, W, sy2)
        Kt = K - K.mean(axis=0)

        def values(perms: np.ndarray, n_jobs: int | None) -> Values:
            Lp = L[perms]                      # (B, n, J): y re-paired
            M = Kt[None] * (Lp - Lp.mean(axis=1, keepdims=True))
            lam, _ = hotelling(M, ddof=0)
            return Values(lam, np.maximum(np.abs(lam), 1.0))

        def observed(n_jobs: int | None) -> tuple[Values, dict[str, dict[str, Any]]]:
            return values(np.arange(problem.n, dtype=np.int64)[None, :], n_jobs), {}

        _, rank = hotelling(fsic_features(x, y, V, W, sx2, sy2), ddof=0)
        df = int(rank)
        kx, ky = Gaussian(bandwidth=float(np.sqrt(sx2))), Gaussian(bandwidth=float(np.sqrt(sy2)))
        notes = self._notes(learned, xt.shape[0], "paired test locations")
        if df < self.n_locations:
            notes.append(f"the features' covariance on the test pairs has rank {df} of "
                         f"{self.n_locations}: the chi-square null has {df} degrees of "
                         "freedom")
        details = {"locations": V, "locations_y": W, "df": df,
                   "n_locations": self.n_locations, "criterion": learned.criterion}
        return Prepared(values=values, observed=observed, kernels={"x": kx, "y": ky},
                        what=f"NFSIC with {kx.phrase()} on x and {ky.phrase()} on y",
                        notes=notes, report=details, details={"df": df},
                        sizes={"training pairs": int(xt.shape[0])},
                        witness=HSICWitness(kx, ky, x, y, Uniform(fixed=1.0),
                                            what=self.label()))

