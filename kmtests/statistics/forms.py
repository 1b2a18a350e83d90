"""Typed kernel forms: a statistic as a quadratic form of centred Gram matrices, with the
maths of the null laws that approximate its null distribution.

A statistic that is such a form says so before anything is computed
(:class:`FormInfo`: which form, its name, U or V form, uniform weights) and, once
prepared, gives the form itself (``Prepared.kernel_form()``). The null methods ask the
form — never a string — whether they apply (``gamma_refusal``, ``chi2_refusal``,
``wild_refusal``) and for the numbers (``gamma``, ``chi2_weights``, ``wild_null``):

=================  ==============================  ==================================
form               the statistic                   null laws it has
=================  ==============================  ==================================
:class:`MMDForm`   ``MMD^2_u``, ``MMD^2_b``        gamma (V-form, KME), wild bootstrap
:class:`HSICForm`  ``HSIC_b`` (``HSIC_u``)         gamma, chi-square, wild (V, KME)
:class:`KWayForm`  the k-sample MMD (an HSIC_b     gamma (V-form, KME)
                   with a label kernel, scaled)
:class:`KCIForm`   KCI (residual Gram matrices,    gamma (asymptotic moments),
                   or their features: low rank)    chi-square, wild (not Rademacher)
=================  ==============================  ==================================

A new statistic with a null law of its own adds a form class here (or in its module);
the null methods need no edit.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from ..engines.mmd import quadratic_forms
from .null_laws import (centred_diagonal, hsic_gamma, kci_gamma, mmd_gamma, multipliers,
                        null_eigenvalues)

__all__ = ["FormInfo", "HSICForm", "KCIForm", "KWayForm", "KernelForm", "MMDForm"]

#: multiplier rows drawn per step (fixed: the draws must not depend on `batch`)
WILD_DRAW = 128


@dataclass(frozen=True)
class FormInfo:
    """What kind of kernel statistic a statistic is, before anything is computed (for the
    null methods, which decide whether they apply)."""

    form: type["KernelForm"]
    name: str          # the report's name, e.g. "MMD^2_u[skmse]"
    unbiased: bool
    kme: bool          # uniform weights 1/n (the KME, or a marginalized kernel's KME)
    marginalized: bool = False   # the KME of a marginalized (transformed) kernel

    @property
    def kind(self) -> str:
        """The form's short name (``"mmd"``, ``"hsic"``, ``"kway"``, ``"kci"``)."""
        return self.form.kind


@dataclass(frozen=True, eq=False)
class KernelForm:
    """The statistic as a quadratic form of centred Gram matrices (base class).

    ``Kc`` (and ``Lc``) the centred Gram matrices; ``n_x`` the first sample's size of a
    pooled matrix; ``diag`` its uncentred diagonal; ``scale`` a factor of the statistic.
    """

    unbiased: bool
    Kc: np.ndarray
    Lc: np.ndarray | None = None
    n_x: int = 0
    diag: np.ndarray | None = None
    scale: float = 1.0

    #: the form's short name
    kind: ClassVar[str] = "form"
    #: the V-statistic it is called in messages (e.g. ``MMD^2_b``)
    biased_name: ClassVar[str] = "(V-form)"

    #: the null laws (``"gamma"``, ``"chi2"``, ``"wild"``) it always admits, and those it
    #: always refuses with the reason; the others are judged by the classmethods below
    admits: ClassVar[frozenset[str]] = frozenset()
    refusals: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def _declared(cls, law: str) -> tuple[bool, str | None]:
        """Whether the form declares `law` admitted or refused, and the refusal."""
        if law in cls.admits:
            return True, None
        return law in cls.refusals, cls.refusals.get(law)

    # -- which null laws apply (classmethods: decided before anything is computed) -----------
    @classmethod
    def gamma_refusal(cls, info: FormInfo, moments: str, problem: Any) -> str | None:
        """Why the gamma approximation does not apply (None: it does)."""
        declared, why = cls._declared("gamma")
        if declared:
            return why
        if info.unbiased or not info.kme or info.marginalized:
            fix = ("estimator='kme'" if not info.unbiased
                   else "statistic='biased' with estimator='kme'")
            return (f"method='gamma' approximates the null of the biased KME statistic "
                    f"{cls.biased_name}; the test computes {info.name}: use {fix}, or "
                    "method='permutation'.")
        return None

    @classmethod
    def chi2_refusal(cls, info: FormInfo, default_method: str) -> str | None:
        """Why the weighted chi-square does not apply (None: it does)."""
        declared, why = cls._declared("chi2")
        if declared:
            return why
        return ("method='chi2' approximates the null of the V-statistics HSIC_b and KCI; the "
                f"test computes {info.name}: use statistic='biased' with estimator='kme' for "
                f"HSIC, or method={default_method!r}.")

    @classmethod
    def wild_refusal(cls, info: FormInfo, process: str, statistic: Any) -> str | None:
        """Why the wild bootstrap does not apply (None: it does)."""
        declared, why = cls._declared("wild")
        return why if declared else _WILD_KME.format(name=info.name)

    # -- the numbers ----------------------------------------------------------------------------
    def gamma(self, t: float, moments: str) -> tuple[float, dict[str, Any]]:
        """The gamma p-value of the observed statistic `t` and its details."""
        raise NotImplementedError(f"{type(self).__name__} has no gamma approximation")

    def chi2_weights(self) -> np.ndarray:
        """The weights of the chi-squares of the asymptotic null (descending)."""
        raise NotImplementedError(f"{type(self).__name__} has no chi-square null")

    def chi2_shift(self) -> float:
        """What every draw of the weighted chi-square is moved by (0: the V-statistics'
        law ``sum_k lambda_k chi^2_1`` itself; a U-statistic's law is centred)."""
        return 0.0

    def wild_null(self, rng: np.random.Generator, size: int, process: str, length: float,
                  n_jobs: int | None) -> np.ndarray:
        """`size` wild-bootstrap statistics, the multipliers drawn `WILD_DRAW` rows at a
        time from `rng` (so the draws do not depend on how `size` is batched)."""
        out = np.empty(size)
        for start in range(0, size, WILD_DRAW):
            b = min(WILD_DRAW, size - start)
            out[start:start + b] = self._wild_block(rng, b, process, length, n_jobs)
        return out

    def _wild_block(self, rng: np.random.Generator, b: int, process: str, length: float,
                    n_jobs: int | None) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} has no wild bootstrap")


_WILD_KME = ("method='wild' bootstraps MMD^2_u, MMD^2_b and HSIC_b with the KME; the test "
             "computes {name}: use estimator='kme' (and statistic='biased' for HSIC), or "
             "method='permutation'.")


@dataclass(frozen=True, eq=False)
class MMDForm(KernelForm):
    """Two samples: ``Kc`` the pooled centred Gram matrix, the first ``n_x`` rows the
    first sample."""

    kind: ClassVar[str] = "mmd"
    biased_name: ClassVar[str] = "MMD^2_b"

    @classmethod
    def wild_refusal(cls, info: FormInfo, process: str, statistic: Any) -> str | None:
        return None if info.kme else _WILD_KME.format(name=info.name)

    def gamma(self, t: float, moments: str) -> tuple[float, dict[str, Any]]:
        return mmd_gamma(self.Kc, self.n_x, t, moments, centred=True)

    @cached_property
    def _centred_diagonals(self) -> np.ndarray:
        """The diagonals of the samples' own centred Gram matrices (for ``MMD^2_u``)."""
        nx = self.n_x
        return np.concatenate([centred_diagonal(self.Kc[:nx, :nx]),
                               centred_diagonal(self.Kc[nx:, nx:])])

    def _wild_block(self, rng: np.random.Generator, b: int, process: str, length: float,
                    n_jobs: int | None) -> np.ndarray:
        n = self.Kc.shape[0]
        nx, ny = self.n_x, n - self.n_x
        Wx = multipliers(rng, b, nx, process, length, centred=False)
        Wy = multipliers(rng, b, ny, process, length, centred=False)
        # the quadratic forms with centred multipliers: W~' K W~ = W' (H K H) W
        Cx = Wx - Wx.mean(axis=1, keepdims=True)
        Cy = Wy - Wy.mean(axis=1, keepdims=True)
        if not self.unbiased:
            A = np.hstack([Cx / nx, -Cy / ny])
            return quadratic_forms(self.Kc, A, n_jobs)
        U = np.hstack([Cx, np.zeros((b, ny))])
        V = np.hstack([np.zeros((b, nx)), Cy])
        sxx = quadratic_forms(self.Kc, U, n_jobs)
        syy = quadratic_forms(self.Kc, V, n_jobs)
        sxy = 0.5 * (quadratic_forms(self.Kc, U + V, n_jobs) - sxx - syy)
        # the U-statistic drops the diagonal of the *centred* kernel: sum_{i != j}
        # W_i W_j <phi_i - mu, phi_j - mu> has mean zero (Rademacher W); dropping the
        # uncentred k_ii instead leaves a bias of order 1/n, as large as the statistic
        dc = self._centred_diagonals
        txx = (Wx * Wx) @ dc[:nx]
        tyy = (Wy * Wy) @ dc[nx:]
        return ((sxx - txx) / (nx * (nx - 1)) + (syy - tyy) / (ny * (ny - 1))
                - 2.0 * sxy / (nx * ny))


@dataclass(frozen=True, eq=False)
class HSICForm(KernelForm):
    """Paired variables: ``Kc``, ``Lc`` their centred Gram matrices; the statistic is
    ``scale`` times ``sum(Kc o Lc) / n^2``."""

    kind: ClassVar[str] = "hsic"
    biased_name: ClassVar[str] = "HSIC_b"

    @classmethod
    def gamma_refusal(cls, info: FormInfo, moments: str, problem: Any) -> str | None:
        why = super().gamma_refusal(info, moments, problem)
        if why is None and cls.kind == "hsic" and problem.n < 6:
            return f"method='gamma' needs at least 6 observations; got {problem.n}."
        return why

    @classmethod
    def chi2_refusal(cls, info: FormInfo, default_method: str) -> str | None:
        if cls.kind == "hsic" and not info.unbiased and info.kme:
            return None
        return super().chi2_refusal(info, default_method)

    @classmethod
    def wild_refusal(cls, info: FormInfo, process: str, statistic: Any) -> str | None:
        if cls.kind == "hsic" and info.kme and not info.unbiased:
            return None
        return _WILD_KME.format(name=info.name)

    def gamma(self, t: float, moments: str) -> tuple[float, dict[str, Any]]:
        assert self.Lc is not None
        p, details = hsic_gamma(self.Kc, self.Lc, t / self.scale, moments, centred=True)
        if self.scale != 1.0:
            details = {k: (v * self.scale if k in ("gamma_scale", "null_mean",
                                                   "asymptotic_mean", "permutation_mean")
                           else v * self.scale ** 2 if k.endswith("_var") else v)
                       for k, v in details.items()}
        return p, details

    def chi2_weights(self) -> np.ndarray:
        assert self.Lc is not None
        return null_eigenvalues(self.Kc, self.Lc) * self.scale

    @cached_property
    def _product(self) -> np.ndarray:
        assert self.Lc is not None
        return self.Kc * self.Lc

    def _wild_block(self, rng: np.random.Generator, b: int, process: str, length: float,
                    n_jobs: int | None) -> np.ndarray:
        n = self.Kc.shape[0]
        W = multipliers(rng, b, n, process, length) / n
        return quadratic_forms(self._product, W, n_jobs)


@dataclass(frozen=True, eq=False)
class KWayForm(HSICForm):
    """k samples: ``Kc`` the pooled centred Gram matrix and ``Lc`` the centred label
    kernel; the statistic is ``scale`` times ``sum(Kc o Lc) / N^2`` (an HSIC_b form)."""

    kind: ClassVar[str] = "kway"
    biased_name: ClassVar[str] = "kMMD^2_b"


@dataclass(frozen=True, eq=False)
class KCIForm(HSICForm):
    """KCI: ``Kc``, ``Lc`` the residual Gram matrices of x and y after the regression on z
    (with ``lowrank``: their features, ``M = (Kc Kc') o (Lc Lc')``, no n x n matrix)."""

    lowrank: bool = False
    #: computes the gamma null's mean (and variance) factor when the gamma is fitted: the
    #: rows' correlation through the regressions
    #: (:func:`kmtests.statistics.kci.noise_mean_factor`; None: Zhang et al.'s moments)
    mean_factor: Callable[[], float] | None = None

    kind: ClassVar[str] = "kci"
    biased_name: ClassVar[str] = "KCI"

    @classmethod
    def gamma_refusal(cls, info: FormInfo, moments: str, problem: Any) -> str | None:
        if moments == "permutation":
            return ("the gamma approximation of a conditional statistic is fitted to the "
                    "asymptotic moments of Zhang et al. (permutations do not keep the "
                    "conditional null): use method='gamma' or "
                    "GammaMethod(moments='asymptotic').")
        return None

    @classmethod
    def chi2_refusal(cls, info: FormInfo, default_method: str) -> str | None:
        return None

    @classmethod
    def wild_refusal(cls, info: FormInfo, process: str, statistic: Any) -> str | None:
        if process == "rademacher":
            return ("Rademacher multipliers make the wild bootstrap of KCI liberal (39 of "
                    "300 sharp conditional nulls rejected at 5%, n = 100, against 22 with "
                    "Gaussian multipliers): use WildBootstrap(process='gaussian') (what "
                    "method='wild' does for the conditional test) or process='ar' for "
                    "dependent data.")
        if getattr(statistic, "split", None) is not None:
            # measured (benchmarks/ci_level.py, n = 200, 500 null data sets a cell): 11-30%
            # rejections at 5% on 8 of 9 nulls, where the gamma and chi2 nulls keep 3-11%
            return ("method='wild' does not keep the level of SplitKCI (statistic='split'): "
                    "on the conditional nulls of benchmarks/ci_level.py it rejected 11-30% of "
                    "the data sets at 5%; use method='gamma' or 'chi2'.")
        return None

    def gamma(self, t: float, moments: str) -> tuple[float, dict[str, Any]]:
        assert self.Lc is not None
        factor = None if self.mean_factor is None else self.mean_factor()
        return kci_gamma(self.Kc, self.Lc, t, lowrank=self.lowrank, factor=factor)

    def chi2_weights(self) -> np.ndarray:
        assert self.Lc is not None
        return null_eigenvalues(self.Kc, self.Lc, self.lowrank) * self.scale

    def _wild_block(self, rng: np.random.Generator, b: int, process: str, length: float,
                    n_jobs: int | None) -> np.ndarray:
        if not self.lowrank:
            return super()._wild_block(rng, b, process, length, n_jobs)
        # ||Fx' diag(w) Fy||_F^2 / n^2, no n x n matrix
        assert self.Lc is not None
        n = self.Kc.shape[0]
        W = multipliers(rng, b, n, process, length)
        acc = np.zeros(b)
        for a in range(self.Kc.shape[1]):
            Q = (W * self.Kc[:, a][None, :]) @ self.Lc
            acc += np.einsum("ij,ij->i", Q, Q)
        return acc / (n * n)
