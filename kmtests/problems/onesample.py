"""The one-sample problem: is ``x`` a sample of a model known up to its normalising constant?

The model enters through its *score* ``s(x) = grad log p(x)`` (the normalising constant
cancels): a callable, its values at the points, or a frozen :mod:`scipy.stats`
distribution, from which the score (analytic for the normal laws, else the derivative
of ``logpdf``) and a sampler (``rvs``) come. No rearrangement of ``x`` keeps the null
hypothesis; it is kept by a wild bootstrap of the degenerate statistic (i.i.d.
multipliers for i.i.d. samples, autoregressive ones for MCMC output) or by fresh samples
of the model (:class:`~kmtests.null.MonteCarloMethod`, when the model can be sampled).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from .._serial import lag1_evidence
from .._validation import as_sample
from ..kernels import Kernel
from ._base import Problem, u_form_for_uniform_weights
from .conventions import prepare_data
from .data import data_label

__all__ = ["Model", "OneSampleProblem"]


@dataclass(frozen=True, eq=False)
class Model:
    """A model by its score (and, when it can be sampled, its sampler)."""

    score: Callable[[np.ndarray], Any] | None
    values: np.ndarray | None = None
    distribution: Any = None
    description: str = "the model"

    @classmethod
    def of(cls, score: Any, model: Any) -> "Model":
        """The model of ``goodness_of_fit_test(score=..., model=...)``: exactly one given."""
        if (score is None) == (model is None):
            raise ValueError("give the model as `score=` (a callable returning d log p / dx "
                             "at the points, or those values) or as `model=` (a frozen "
                             "scipy.stats distribution), one of the two.")
        if model is not None:
            return _from_scipy(model)
        if callable(score):
            name = getattr(score, "__name__", type(score).__name__)
            return cls(score, description=f"the model of score {name}")
        return cls(None, values=np.asarray(score), description="the model of the given scores")

    def dimension(self) -> int | None:
        """The model's dimension when it says (a scipy.stats distribution), else None."""
        dist = self.distribution
        if dist is None:
            return None
        mean = np.atleast_1d(np.asarray(dist.mean() if callable(dist.mean) else dist.mean))
        return int(mean.size)

    def scores(self, x: np.ndarray) -> np.ndarray:
        """``grad log p`` at the rows of `x`, checked: shape ``(n, d)``, finite."""
        n, d = x.shape
        dim = self.dimension()
        if dim is not None and dim != d:
            raise ValueError(f"the model ({self.description}) is {dim}-dimensional and the "
                             f"data have {d} columns.")
        if self.values is not None:
            s = self.values
        else:
            assert self.score is not None
            with np.errstate(all="ignore"):  # a non-finite score is refused below, by point
                s = np.asarray(self.score(x[:, 0] if d == 1 and self.distribution is not None
                                          else x), dtype=np.float64)
        s = np.asarray(s, dtype=np.float64)
        if s.shape == (n,) and d == 1:
            s = s[:, None]
        if s.shape != (n, d):
            raise ValueError(f"the score must give one value per coordinate of each point, "
                             f"shape ({n}, {d}); got shape {s.shape}.")
        if not np.all(np.isfinite(s)):
            i = int(np.argwhere(~np.isfinite(s))[0][0])
            raise ValueError(f"the score is not finite at point {i} ({x[i].tolist()}): the "
                             "data are outside the model's support, or the score overflows.")
        return s

    @property
    def sampler(self) -> Callable[[np.random.Generator, int], np.ndarray] | None:
        """``sampler(gen, n)`` -> n points of the model, or None (it cannot be sampled)."""
        dist = self.distribution
        if dist is None or not hasattr(dist, "rvs"):
            return None
        return lambda gen, n: np.asarray(dist.rvs(size=n, random_state=gen), dtype=np.float64)


def _from_scipy(dist: Any) -> Model:
    """A frozen scipy.stats distribution as a model: its score, its sampler."""
    if not hasattr(dist, "logpdf"):
        raise ValueError(f"`model` must be a frozen scipy.stats distribution with a density "
                         f"(logpdf); got {type(dist).__name__}" + (
                             " (a discrete law: the Stein discrepancy needs a density)"
                             if hasattr(dist, "logpmf") else "") + ".")
    name = getattr(getattr(dist, "dist", None), "name", None) or type(dist).__name__
    mean, cov = getattr(dist, "mean", None), getattr(dist, "cov", None)
    if name == "multivariate_normal" or (isinstance(mean, np.ndarray) and cov is not None):
        prec = np.linalg.inv(np.atleast_2d(np.asarray(dist.cov, dtype=np.float64)))
        mu = np.atleast_1d(np.asarray(dist.mean, dtype=np.float64))
        return Model(lambda x: -(np.asarray(x) - mu) @ prec, distribution=dist,
                     description=f"multivariate_normal(mean={mu.tolist()})")
    if name == "norm":
        loc, scale = float(dist.mean()), float(dist.std())
        return Model(lambda x: -(np.asarray(x) - loc) / scale ** 2, distribution=dist,
                     description=f"norm(loc={loc:g}, scale={scale:g})")

    def numeric(x: Any) -> np.ndarray:
        """d logpdf / dx by a central difference (steps relative to the points' size)."""
        x = np.asarray(x, dtype=np.float64)
        h = 1e-5 * np.maximum(1.0, np.abs(x))
        return (dist.logpdf(x + h) - dist.logpdf(x - h)) / (2.0 * h)

    return Model(numeric, distribution=dist, description=f"{name} (score from its logpdf)")


@dataclass(frozen=True, eq=False)
class OneSampleProblem(Problem):
    """A sample ``x`` (``n x d``) and a model, with the score at the points."""

    x: np.ndarray
    model: Model
    scores: np.ndarray
    data_name: str = "x"
    notes: tuple[str, ...] = ()
    kind: ClassVar[str] = "one_sample"
    precomputed: ClassVar[bool] = False
    engine_scheme: ClassVar[str] = "pairing"
    #: no arrangement keeps the null: multipliers, fresh samples of the model, an
    #: asymptotic law (FSSD's weighted chi-square), or nothing
    draws_kept: ClassVar[frozenset[str]] = frozenset({"multipliers", "samples", "law",
                                                      "nothing"})
    scheme: ClassVar[None] = None

    @classmethod
    def from_data(cls, data: tuple[Any, ...], kernels: Mapping[str, Kernel], *,
                  data_name: str | None, axis: Any, nan_policy: Any) -> "OneSampleProblem":
        x, score, model = data
        mod = Model.of(score, model)
        if mod.values is not None and nan_policy != "raise":
            raise ValueError("nan_policy='omit' with the scores given as values: give "
                             "`score` as a callable so that the rows left out have none.")
        (x,), notes = prepare_data([x], ["x"], axis=axis, nan_policy=nan_policy, paired=False)
        xa = as_sample(x, "x")
        name = data_name or data_label(x, "x")
        return cls(xa, mod, mod.scores(xa), name, tuple(notes))

    @classmethod
    def default_statistic(cls, estimator: Any) -> str:
        return u_form_for_uniform_weights(estimator)  # (V-form for unequal weights)

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    @property
    def sizes(self) -> dict[str, int]:
        return {"n": self.n}

    @property
    def dims(self) -> dict[str, int]:
        return {"kernel": int(self.x.shape[1])}

    @property
    def sampler(self) -> Callable[[np.random.Generator, int], np.ndarray] | None:
        return self.model.sampler

    def serial_evidence(self) -> tuple[Any, ...] | None:
        """An MCMC chain's draws are autocorrelated: the i.i.d. multipliers reject a chain
        that samples the model."""
        hit, what = lag1_evidence(self.x)
        return hit, what, ("If the rows are a Markov chain, use "
                           "method=WildBootstrap(process='ar') (dependent multipliers).")

    def with_sample(self, x: np.ndarray) -> "OneSampleProblem":
        """The problem on another sample of the model (the Monte Carlo null)."""
        xa = np.asarray(x, dtype=np.float64).reshape(self.n, -1)
        return dataclasses.replace(self, x=xa, scores=self.model.scores(xa))
