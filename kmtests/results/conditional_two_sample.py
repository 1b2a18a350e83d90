"""The result of the conditional two-sample test."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._base import KernelTestResult

__all__ = ["ConditionalTwoSampleResult"]


@dataclass(frozen=True, repr=False, eq=False)
class ConditionalTwoSampleResult(KernelTestResult):
    """Result of :func:`kmtests.conditional_two_sample_test` (attributes as in the base
    class).

    ``details`` holds the tuned regularisation (``lam``, its degrees of freedom ``df`` and
    ``criterion``) and the propensity's ``propensity_model``, ``clip``, ``clipped`` (how
    many propensities the clipping moved) and ``propensity_penalty``.
    """

    test_name: ClassVar[str] = "Kernel conditional two-sample test"
    result_of: ClassVar[tuple[str, bool] | None] = ("conditional_two_sample", False)
    alternative_text: ClassVar[str] = "the conditional laws of y given x differ"

    @property
    def lam(self) -> float:
        """The regularisation of the two kernel ridge regressions (operator units)."""
        return float(self.details["lam"])

    def _general_rows(self) -> list[tuple[str, Any]]:
        d = self.details
        return [("lam", f"{d['lam']:.4g}"), ("df", f"{d['df']:.3g}"),
                ("criterion", d["criterion"] or "given"),
                ("propensity", d["propensity_model"]), ("clip", d["clip"]),
                ("clipped", d["clipped"])] + self._engine_rows()

    def _param_note(self) -> str | None:
        return None  # the rows above say how lam was set

    def witness(self, points: Any) -> np.ndarray:
        """Where the conditional laws differ: ``||mu_1(x) - mu_2(x)||^2`` at `points`.

        The squared RKHS distance between the two groups' estimated conditional mean
        embeddings of ``y`` given ``x = points`` (the kernel ridge regressions of the
        test, at its ``lam``); the statistic is its mean over the pooled covariates.

        Parameters
        ----------
        points : array_like, shape (m, d_x) or (m,)
            Covariate values (``(m,)`` for one covariate).

        Returns
        -------
        ndarray, shape (m,)

        Examples
        --------
        >>> import numpy as np
        >>> from kmtests import conditional_two_sample_test
        >>> gen = np.random.default_rng(0)
        >>> x1, x2 = gen.uniform(-2, 2, 150), gen.uniform(-2, 2, 150)
        >>> y1 = np.sin(x1) + 0.2 * gen.normal(size=150)
        >>> y2 = np.sin(x2) + (x2 > 0) + 0.2 * gen.normal(size=150)  # differs for x > 0
        >>> res = conditional_two_sample_test(x1, y1, x2, y2, n_resamples=99, rng=1)
        >>> w = res.witness(np.array([-1.5, 1.5]))
        >>> bool(w[1] > 10 * w[0])
        True
        """
        return np.asarray(self._witness_object()(points))
