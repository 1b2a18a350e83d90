"""The result of the k-sample test, with its post-hoc pairwise comparisons."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar

from .._validation import shown
from ._base import KernelTestResult

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["KSampleResult"]


@dataclass(frozen=True, repr=False, eq=False)
class KSampleResult(KernelTestResult):
    """Result of :func:`kmtests.k_sample_test` (attributes as in the base class).

    ``sizes`` holds ``n_1 .. n_k``; :meth:`pairwise` runs the post-hoc two-sample
    tests.
    """

    samples: tuple[str, ...] = ()
    _pairwise: Callable[[tuple[int, int]], Any] | None = field(default=None, repr=False,
                                                                compare=False)

    test_name: ClassVar[str] = "Kernel k-sample test"
    result_of: ClassVar[tuple[str, bool] | None] = ("k_sample", False)
    alternative_text: ClassVar[str] = ("at least two of the samples come from different "
                                       "distributions")

    def pairwise(self, alpha: float = 0.05, adjust: str = "holm") -> "pd.DataFrame":
        """Post-hoc two-sample tests of every pair of samples, with adjusted p-values.

        Each pair is tested with :func:`kmtests.two_sample_test` with this test's
        settings (the kernel fitted on all k samples, the estimator, the statistic
        form and the null method; a pair's permutations from a child of `rng` keyed
        by the pair). The p-values are adjusted for the ``k (k - 1) / 2`` comparisons
        (statsmodels' ``multipletests``; Holm's step-down by default, which controls
        the family-wise error rate at `alpha` with no assumption on the dependence
        between the comparisons), as after an ANOVA.

        Parameters
        ----------
        alpha : float
            The family-wise level of the ``reject`` column.
        adjust : str
            A ``statsmodels.stats.multitest.multipletests`` method (``"holm"``,
            ``"bonferroni"``, ``"fdr_bh"``, ...).

        Returns
        -------
        pandas.DataFrame
            One row per pair: ``sample_a``, ``sample_b``, ``statistic``, ``pvalue``,
            ``pvalue_adjusted`` and ``reject``.

        Examples
        --------
        >>> import numpy as np
        >>> from kmtests import k_sample_test
        >>> gen = np.random.default_rng(0)
        >>> arms = [gen.normal(size=(30, 2)), gen.normal(size=(30, 2)),
        ...         gen.normal(1, size=(30, 2))]
        >>> res = k_sample_test(*arms, sample_names=["placebo", "low", "high"],
        ...                     n_resamples=499, rng=1)
        >>> print(res.pairwise()[["sample_a", "sample_b", "reject"]].to_string(index=False))
        sample_a sample_b  reject
         placebo      low   False
         placebo     high    True
             low     high    True
        """
        import pandas as pd
        from statsmodels.stats.multitest import multipletests

        if not 0 < alpha < 1:
            raise ValueError(f"`alpha` must be in (0, 1); got {shown(alpha)}.")
        if self._pairwise is None:
            raise ValueError("this result has no data to compare pairwise (it was not made "
                             "by k_sample_test).")
        k = len(self.samples)
        rows = []
        for a in range(k):
            for b in range(a + 1, k):
                res = self._pairwise((a, b))
                rows.append({"sample_a": self.samples[a], "sample_b": self.samples[b],
                             "statistic": res.statistic, "pvalue": res.pvalue})
        frame = pd.DataFrame(rows)
        reject, adjusted, _, _ = multipletests(frame["pvalue"].to_numpy(), alpha=alpha,
                                               method=adjust)
        frame["pvalue_adjusted"] = adjusted
        frame["reject"] = reject
        return frame
