"""The result of the goodness-of-fit test (:func:`kmtests.goodness_of_fit_test`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._base import KernelTestResult
from .aggregated import _AggregatedReport, _summary_with_members

__all__ = ["AggregatedGoodnessOfFitResult", "GoodnessOfFitResult"]


@dataclass(frozen=True, repr=False, eq=False)
class GoodnessOfFitResult(KernelTestResult):
    """Result of :func:`kmtests.goodness_of_fit_test` (see
    :class:`~kmtests.results.KernelTestResult` for the attributes and methods)."""

    test_name: ClassVar[str] = "Kernel goodness-of-fit test"
    alternative_text: ClassVar[str] = "the sample does not come from the model"
    result_of: ClassVar[tuple[str, bool] | None] = ("one_sample", False)

    def witness(self, points: Any) -> np.ndarray:
        """The Stein witness at `points`: a d-vector per point.

        ``g(t) = (1/n) sum_i [s(x_i) k(x_i, t) + grad_x k(x_i, t)]``, the mean
        embedding of the Stein features of the sample (:mod:`kmtests.statistics.ksd`);
        it vanishes everywhere when the sample comes from the model, and ``KSD^2_b``
        is its squared RKHS norm. Large where the model misfits.

        Parameters
        ----------
        points : array_like, shape (m, d) or (m,)

        Returns
        -------
        ndarray, shape (m, d)

        Examples
        --------
        >>> import numpy as np
        >>> from scipy import stats
        >>> from kmtests import goodness_of_fit_test
        >>> x = np.random.default_rng(0).normal(0.5, 1.0, size=200)
        >>> res = goodness_of_fit_test(x, model=stats.norm(), n_resamples=99, rng=1)
        >>> np.round(res.witness([-2.0, 0.0, 2.0]).ravel(), 3)
        array([-0.205, -0.398, -0.305])
        """
        return np.asarray(self._witness_object("Stein witness")(points))

    def plot_witness(self, ax: Any = None, *, num: int = 200) -> Any:
        """Draw the Stein witness: its components on a grid (1-d data), or its norm at the
        sample's points against each coordinate (more columns). Requires matplotlib.

        Returns
        -------
        matplotlib Axes (1-d) or array of Axes (one per coordinate)
        """
        import matplotlib.pyplot as plt

        w = self._witness_object("Stein witness")
        x = w.x
        if w.dim == 1:
            if ax is None:
                _, ax = plt.subplots()
            lo, hi = float(x.min()), float(x.max())
            pad = 0.1 * (hi - lo or 1.0)
            grid = np.linspace(lo - pad, hi + pad, num)
            ax.plot(grid, w(grid)[:, 0], color="C0", label="Stein witness")
            ax.axhline(0.0, color="0.6", lw=0.8)
            ax.plot(x[:, 0], np.zeros(x.shape[0]), "|", color="C1", label="sample")
            ax.set_xlabel(self.feature_names("x", 1)[0])
            ax.set_ylabel("witness g(t)")
            ax.set_title(f"Stein witness ({self.statistic_name}, p = {self.pvalue:.3g})")
            ax.legend()
            return ax
        norm = np.linalg.norm(w(x), axis=1)
        if ax is None:
            _, ax = plt.subplots(1, w.dim, figsize=(4 * w.dim, 3.5), squeeze=False)
            ax = ax[0]
        names = self.feature_names("x", w.dim)
        for j, a in enumerate(np.atleast_1d(ax)):
            a.scatter(x[:, j], norm, s=8)
            a.set_xlabel(names[j])
            a.set_ylabel("|g(x_i)|")
        np.atleast_1d(ax)[0].figure.suptitle(f"Stein witness at the sample's points "
                                             f"({self.statistic_name})")
        return ax



@dataclass(frozen=True, repr=False, eq=False)
class AggregatedGoodnessOfFitResult(_AggregatedReport, GoodnessOfFitResult):
    """Result of ``goodness_of_fit_test(..., statistic="ksdagg")``: KSDAgg, the members
    (one per bandwidth) in ``members`` and :meth:`members_frame`, the level-corrected
    threshold ``u`` in ``threshold``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from kmtests import goodness_of_fit_test
    >>> x = np.random.default_rng(0).normal(0.3, 1.0, size=200)
    >>> res = goodness_of_fit_test(x, model=stats.norm(), statistic="ksdagg",
    ...                            levels=(-2, 2), n_resamples=499, rng=1)
    >>> print(res.family, f"p = {res.pvalue:.3f}")
    KSDAgg p = 0.002
    >>> print(res.members_frame()[["bandwidth", "pvalue", "rejects"]].round(3))
    ... # doctest: +NORMALIZE_WHITESPACE
                  bandwidth  pvalue  rejects
    member
    imq bw=0.236      0.236   0.058    False
    imq bw=0.472      0.472   0.006     True
    imq bw=0.944      0.944   0.002     True
    imq bw=1.89       1.889   0.002     True
    imq bw=3.78       3.777   0.002     True
    """

    result_of: ClassVar[tuple[str, bool] | None] = ("one_sample", True)

    def summary(self, alpha: float = 0.05, relevance: bool = False) -> Any:
        summ = _summary_with_members(self, alpha, relevance)
        exact = getattr(self.method, "name", "") == "monte_carlo"
        how = ("samples drawn from the model (exact level)" if exact
               else "wild-bootstrap multipliers (approximate level)")
        summ.notes = [n.replace("members' permutation p-values (MMDAgg)",
                                "members' p-values (KSDAgg)")
                       .replace("over all arrangements", "over all draws")
                       .replace("exact level, the members computed on the same permutations",
                                f"the members computed on the same {how}")
                      for n in summ.notes]
        return summ
