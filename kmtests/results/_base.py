"""Result objects of the kernel tests.

Frozen dataclasses with the scipy attribute names (``statistic``, ``pvalue``,
``null_distribution``) and statsmodels-style methods (``summary()``,
``summary_frame()``, ``pvalue_interval()``). ``print(result)`` gives an R
``htest``-style block. ``statistic, pvalue = result`` unpacks as scipy's
results do.

The result keeps the objects that produced it — the null method
(:mod:`kmtests.null`), the estimator, the fitted kernels — and the estimator's
data-driven parameters structured by role (``params["x"]``, ``params["pooled"]``
...). Everything that depends on how the null distribution was obtained
(method line, Monte Carlo interval, notes) is asked of the method object.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterator, Mapping

import numpy as np

from .._rng import child, generator
from .._summary import (
    WIDTH,
    Annotated,
    Pair,
    Summary,
    format_bound,
    format_number,
    format_pvalue,
    html_settings_table,
    result_table,
    settings_table,
)
from .._summary import flow as _flow
from .._validation import check_positive_int, shown
from ..statistics.witness import HSICWitness, feature_relevance
from ._plot import plot_null, plot_witness

if TYPE_CHECKING:
    import pandas as pd

    from ..estimators import KernelMeanEstimator
    from ..kernels import Kernel
    from ..null import NullMethod

__all__ = ["IndependenceResult", "KernelTestResult", "TwoSampleResult"]


#: the result class of each problem kind, for a single statistic and for an aggregate
#: (filled by the classes' ``result_of``)
RESULTS: dict[tuple[str, bool], type["KernelTestResult"]] = {}


@dataclass(frozen=True, repr=False, eq=False)
class KernelTestResult:
    """Common base of :class:`TwoSampleResult` and :class:`IndependenceResult`.

    Attributes
    ----------
    statistic : float
        The observed test statistic (see `statistic_name`).
    pvalue : float
        Upper-tail p-value.
    null_distribution : ndarray or None
        The permutation statistics (all arrangements when `exact`); None for
        the gamma approximation.
    method : PermutationMethod or GammaMethod
        How the null distribution was obtained (:mod:`kmtests.null`).
    exact : bool
        True when every arrangement was enumerated (exact p-value).
    n_resamples : int or None
        Number of null statistics computed (None for the gamma approximation).
    count : int or None
        Number of null statistics ``>= statistic`` (up to rounding).
    statistic_name : str
        e.g. ``'MMD^2_u'``, ``'HSIC_b[fkmse]'``.
    estimator : KernelMeanEstimator
        The kernel mean estimator (its configuration; ``estimator.name`` is
        the registry name).
    params : dict of dict
        The estimator's data-driven parameters by role: ``"x"`` and ``"y"``
        (chosen on each observed sample, two-sample test), ``"observed"``
        (chosen on the observed cross-covariance, independence test),
        ``"pooled"`` (tuned once on a permutation-invariant function of the
        data and held fixed), or ``"x"``/``"y"``/``"pooled"`` for the
        marginalized estimators' corruption variances.
    kernels : dict of Kernel
        The fitted kernels by role (``"kernel"``, or ``"x"`` and ``"y"``).
    sizes : dict
        Sample sizes.
    seed : int or None
        The integer seed, when `rng` was given as one.
    tuning : str
        How data-driven estimator parameters were set for the permutations.
    data_name : str
        Names of the data, as in R's ``data:`` line.
    details : dict
        Extra method details (gamma shape/scale, null and exact permutation
        moments).
    notes : tuple of str
        Notes about this result (fallbacks taken, optimisers that did not
        converge, a negative unbiased statistic ...).
    engine : str
        The engine that computed the statistics: ``"exact"`` (the in-memory
        Gram matrix), ``"streamed"`` (exact, Gram tiles on the fly), or an
        approximate one (``"nystrom"``, ``"rff"``, ``"block"``, ``"linear"``,
        whose statistic is a different, approximate one; see
        :doc:`/user_guide/scale`).
    engine_info : str
        For the low-rank engines: the number of features and the rank used,
        e.g. ``"200 features, rank 200, approximate statistic"`` (empty otherwise).
    family : str
        What kind of statistic ran, as the title names it: ``"MMD"``,
        ``"spectral-regularised MMD"``, ``"NOCCO, regularised HSIC"``,
        ``"MMDAgg"`` ...
    statistic_description : str
        The statistic as it ran, in words: its name, what it is and its
        regularisation (filter and lambda, or the grid of an aggregated test);
        for an aggregated statistic, what the number is and over which members.
    kernel_notes : dict of str
        How a kernel was transformed by the estimator (marginalized
        estimators), by role.

    Notes
    -----
    ``print(result)`` gives an R ``htest``-style block and ``result.summary()``
    a statsmodels-style report (settings, result, notes), each line at most
    80 and 78 characters wide. Both name what ran: the statistic (with its
    regularisation), the estimator, the engine and the null method. The keys
    of the settings table are the names under which the values are found:
    the test's keywords and the result's attributes (``estimator``,
    ``engine``, ``method``, ``n_resamples``), the keys of `sizes`, `params`
    and `details`, and the columns of :meth:`summary_frame` (``kernel_x``,
    ``bandwidth_x``). The result unpacks as scipy's test results do:
    ``statistic, pvalue = result``.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import two_sample_test
    >>> gen = np.random.default_rng(0)
    >>> res = two_sample_test(gen.normal(size=(20, 2)), gen.normal(1.0, size=(20, 2)),
    ...                       n_resamples=999, rng=1)
    >>> statistic, pvalue = res
    >>> print(f"{statistic:.4f} {pvalue:.3f}")
    0.3788 0.001
    >>> for line in str(res.summary()).splitlines()[2:6]:
    ...     print(line)
    estimator: kme                              engine: exact
          n_x: 20                                  n_y: 20
       kernel: Gaussian
    bandwidth: 1.928 (median)
    """

    statistic: float
    pvalue: float
    null_distribution: np.ndarray | None
    method: NullMethod
    exact: bool
    n_resamples: int | None
    count: int | None
    statistic_name: str
    estimator: KernelMeanEstimator
    params: Mapping[str, Mapping[str, Any]]
    kernels: Mapping[str, Kernel]
    sizes: Mapping[str, int]
    seed: int | None = None
    tuning: str = "permutation"
    data_name: str = "x and y"
    details: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    kernel_notes: Mapping[str, str] = field(default_factory=dict)
    #: the data's column names by role ("x", "y"; pandas input) and the samples' or
    #: variables' names, for :meth:`relevance` and the pictures
    columns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    labels: tuple[str, ...] = ("x", "y")
    engine: str = "exact"
    engine_info: str = ""
    family: str = ""
    statistic_description: str = ""
    #: the witness function of the statistic (kmtests.statistics.witness), or why there
    #: is none; it keeps references to the data (see :meth:`witness`)
    _witness: Any = field(default="this test keeps no witness function", repr=False)
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    #: the kind of test; the title adds the statistic's `family`
    test_name: ClassVar[str] = "Kernel test"
    alternative_text: ClassVar[str] = ""
    #: the problem kind (and whether aggregated) whose result it is: a class that sets it
    #: registers itself in :data:`RESULTS` (a new problem's result class needs no edit
    #: elsewhere); none: the generic result of any problem
    result_of: ClassVar[tuple[str, bool] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "result_of" in cls.__dict__ and cls.result_of is not None:
            RESULTS[cls.result_of] = cls

    @property
    def title(self) -> str:
        """The report's title: the test and the kind of statistic that ran, e.g.
        ``"Kernel independence test (NOCCO, regularised HSIC)"``."""
        return f"{self.test_name} ({self.family})" if self.family else self.test_name

    def __post_init__(self) -> None:
        if self.null_distribution is not None:
            self.null_distribution.setflags(write=False)

    # -- scipy-style unpacking ----------------------------------------------------------------
    def __iter__(self) -> Iterator[float]:
        """``statistic, pvalue = result``, as with scipy's test results."""
        return iter((self.statistic, self.pvalue))

    # -- conveniences -------------------------------------------------------------------------
    @property
    def bandwidths(self) -> dict[str, Any]:
        """The bandwidth of each kernel by role (None for kernels without one)."""
        out: dict[str, Any] = {}
        for role, k in self.kernels.items():
            b = getattr(k, "bandwidth", None)
            out[role] = b.tolist() if isinstance(b, np.ndarray) else b
        return out

    # -- where the distributions differ ----------------------------------------------------------
    def _witness_object(self, what: str = "witness function") -> Any:
        """The witness object, or ``ValueError`` saying why the test has none."""
        if isinstance(self._witness, str):
            raise ValueError(f"no {what}: {self._witness}.")
        return self._witness

    def feature_names(self, role: str, d: int) -> list[str]:
        """The names of the `d` columns of `role` (``"x"`` or ``"y"``): ``role[name]``
        with a DataFrame's column names (``x[0]``, ``x[1]``, ... for arrays)."""
        cols = self.columns.get(role, ())
        return [f"{role}[{cols[j] if len(cols) == d else j}]" for j in range(d)]

    def relevance(self, n_resamples: int = 999, *, rng: Any = None) -> pd.DataFrame:
        """Which features carry the difference: one permutation test per feature.

        Two-sample tests: for each column ``j`` of the data, the test of
        ``H0_j``: *the two samples' marginal distributions of feature j are
        equal*, by ``MMD^2_u`` with a Gaussian kernel (median bandwidth of the
        pooled column) and `n_resamples` permutations (the same permutations
        for every feature). Independence tests: for each column of x, the
        test of its independence of the whole of y by ``HSIC_b`` (Gaussian
        kernels, median bandwidths), and for each column of y the same with
        the whole of x.

        The p-values are adjusted by Holm's step-down method: rejecting every
        feature whose ``pvalue_holm <= alpha`` has family-wise error rate at
        most `alpha`, whatever the dependence between the features. What it
        does not claim: a feature whose marginals agree but whose dependence
        on the other features differs (a difference in correlation only) has
        no marginal difference to find; and a large adjusted p-value is not
        evidence that a feature is irrelevant.

        Parameters
        ----------
        n_resamples : int
            Permutations (shared by the features).
        rng : int, Generator or None
            The permutations' seed. None: the child ``"relevance"`` of the
            test's integer seed when it had one (the same table every time),
            else fresh.

        Returns
        -------
        pandas.DataFrame
            Indexed by feature (``x[0]``, ``x[1]``, ... and for independence
            tests ``y[0]``, ...; with a DataFrame's column names, ``x[name]``,
            see :meth:`feature_names`), with columns ``statistic``, ``z`` (the
            statistic standardised by the mean and standard deviation of its
            permutations), ``pvalue``, ``pvalue_holm`` and ``rank`` (1: the
            most relevant, by Holm p-value, ties broken by ``z``); in rank
            order.

        Notes
        -----
        Costs ``n_resamples`` quadratic forms of an ``n x n`` matrix per
        feature; computed once per setting and kept.

        Examples
        --------
        >>> import numpy as np
        >>> from kmtests import two_sample_test
        >>> gen = np.random.default_rng(0)
        >>> x = gen.normal(size=(60, 4))
        >>> y = gen.normal(size=(60, 4)); y[:, 2] += 1.0
        >>> res = two_sample_test(x, y, n_resamples=199, rng=1)
        >>> table = res.relevance(n_resamples=199)
        >>> table.index[0], int(table.loc["x[2]", "rank"])
        ('x[2]', 1)
        """
        n_resamples = check_positive_int(n_resamples, "n_resamples")
        w = self._witness_object("feature relevance (it keeps the data with the witness)")

        # a fixed seed (given, or the test's own) gives the same table: kept for reuse
        seeded = isinstance(rng, (int, np.integer)) or (rng is None and self.seed is not None)
        key = ("relevance", n_resamples, "test" if rng is None else rng if seeded else None)
        if seeded and key in self._cache:
            return self._cache[key].copy()
        gen = child(self.seed, "relevance") if rng is None and seeded else generator(rng)
        if isinstance(w, HSICWitness):
            names = self.feature_names("x", w.x.shape[1]) + self.feature_names("y",
                                                                             w.y.shape[1])
            cols = feature_relevance("hsic", w.x, w.y, n_resamples, gen, names)
        else:
            cols = feature_relevance("mmd", w.x, w.y, n_resamples, gen,
                                     self.feature_names("x", w.x.shape[1]))
        import pandas as pd

        frame = pd.DataFrame({k: v for k, v in cols.items() if k != "feature"},
                             index=pd.Index(cols["feature"], name="feature"))
        frame = frame.sort_values("rank")
        if seeded:
            self._cache[key] = frame
        return frame.copy()

    def plot(self, ax: Any = None, *, bins: Any = "auto") -> Any:
        """The null distribution with the observed statistic and the p-value marked.

        A histogram of the null sample (permutations, bootstrap or chi-square
        draws), or the approximating density (gamma, normal/t) with the upper
        tail beyond the observed statistic shaded. Requires matplotlib
        (``pip install 'kmtests[plot]'``).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        bins : int, sequence or str
            The histogram's bins (numpy's rule names accepted).

        Returns
        -------
        matplotlib.axes.Axes

        Examples
        --------
        >>> import numpy as np
        >>> from kmtests import two_sample_test
        >>> gen = np.random.default_rng(0)
        >>> res = two_sample_test(gen.normal(size=30), gen.normal(0.8, size=30),
        ...                       n_resamples=199, rng=1)
        >>> ax = res.plot()
        >>> ax.get_xlabel()
        'MMD^2_u'
        """
        return plot_null(self, ax, bins)

    # -- p-value uncertainty -----------------------------------------------------------------
    def conf_int(self, alpha: float = 0.05) -> np.ndarray:
        """Deprecated name of :meth:`pvalue_interval` (statsmodels' ``conf_int`` is an
        interval of the parameters, not of the p-value); warns with ``FutureWarning``."""
        import warnings

        warnings.warn("conf_int() is renamed pvalue_interval(): it is the Monte Carlo "
                      "interval of the p-value, not a confidence interval of a parameter "
                      "(statsmodels' conf_int); conf_int() will be removed.",
                      FutureWarning, stacklevel=2)
        return self.pvalue_interval(alpha)

    def pvalue_interval(self, alpha: float = 0.05) -> np.ndarray:
        """Monte Carlo confidence interval of the p-value.

        For a Monte Carlo permutation test the reported p-value estimates the
        exact permutation p-value ``p* = P(T_perm >= T_obs)``. The interval is
        Clopper-Pearson for ``p*`` from ``count`` successes in
        ``n_resamples`` draws (statsmodels ``proportion_confint``). For an
        exact test both ends equal the p-value.

        Returns
        -------
        ndarray, shape (2,)
            ``[lower, upper]``.

        Raises
        ------
        NotImplementedError
            For a method without Monte Carlo error (the gamma approximation).
        """
        if not 0 < alpha < 1:
            raise ValueError(f"`alpha` must be in (0, 1); got {shown(alpha)}.")
        ci = self.method.conf_int(self, alpha)
        if ci is None:
            raise NotImplementedError(f"a Monte Carlo interval exists only for permutation "
                                      f"p-values; the {self.method.name} p-value has no "
                                      "Monte Carlo error.")
        return ci

    # -- text ---------------------------------------------------------------------------------
    @property
    def method_line(self) -> str:
        """What ran, as the first line of ``print(result)``: the test, the statistic (with
        its regularisation), the estimator, the engine and the null method."""
        parts = [self.statistic_description or self.statistic_name,
                 self._estimator_phrase(), self._engine_phrase(), self.method.describe(self)]
        return f"{self.title}: " + ", ".join(p for p in parts if p)

    def _estimator_phrase(self) -> str:
        """How the report's first line names the estimator ('' for a test without one)."""
        return f"{self.estimator.label} estimator"

    def _engine_phrase(self) -> str:
        """How the report's first line names the engine."""
        info = f" ({self.engine_info})" if self.engine_info else ""
        return f"{self.engine} engine{info}"

    def _general_rows(self) -> list[tuple[str, Any]]:
        """The settings table's first rows: the estimator, how it was tuned, the engine."""
        general: list[tuple[str, Any]] = [("estimator", self.estimator.name)]
        if self.estimator.name != "kme":
            general.append(("tuning", self.tuning))
        return general + self._engine_rows()

    def _engine_rows(self) -> list[tuple[str, Any]]:
        if self.engine_info:
            return [("engine", Annotated(self.engine, f"({self.engine_info})", "(approx.)"))]
        return [("engine", self.engine)]

    def __str__(self) -> str:
        # R's print.htest: strwrap(method, prefix = "\t") (a tab is 8 columns; 80 in all)
        lines = [""]
        lines += ["\t" + line for line in textwrap.wrap(self.method_line, width=WIDTH - 8)]
        lines += [""]
        lines += textwrap.wrap(f"data:  {self.data_name}", width=WIDTH, subsequent_indent=" " * 7,
                               break_on_hyphens=False)
        lines += textwrap.wrap(
            f"{self.statistic_name} = {format_number(self.statistic)}, p-value "
            f"{format_pvalue(self.pvalue, floor=self.method.pvalue_floor(self))}",
            width=WIDTH)
        lines += textwrap.wrap(f"alternative hypothesis: {self.alternative_text}", width=WIDTH)
        ci = self.method.conf_int(self, 0.05)
        if ci is not None and not self.exact:
            lines.append(f"95 percent Monte Carlo interval of the p-value: "
                         f"[{format_bound(ci[0])}, {format_bound(ci[1])}]")
        notes = list(self.notes)
        if self.method.name == "gamma":
            notes.append("approximate p-value (gamma approximation to the null)")
        for note in notes:
            lines += textwrap.wrap(f"note: {note}", width=WIDTH, subsequent_indent="      ",
                                   break_on_hyphens=False)
        lines.append("")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(statistic={self.statistic!r}, pvalue={self.pvalue!r}, "
                f"method={self.method.name!r}, estimator={self.estimator.name!r})")

    # -- summary: the settings table ----------------------------------------------------------
    def _kernel_value(self, role: str) -> Any:
        kern = self.kernels[role]
        head, _, rest = kern.describe().partition(" (")
        if self.kernel_notes.get(role):
            return Annotated(head, "(marginalized)", "(marg.)", lossless=True)
        if not rest or getattr(kern, "has_bandwidth", False):  # the bandwidth has its row
            return head
        return Annotated(head, f"({rest}", "(...)")

    def _bandwidth_value(self, role: str) -> Any:
        kern = self.kernels[role]
        if not getattr(kern, "has_bandwidth", False):
            return None
        bw = self.bandwidths[role]
        rule = str(getattr(kern, "bandwidth_rule", ""))
        return Annotated(bw, "(median)" if rule.startswith("median") else "")

    def _settings_lines(self) -> list[tuple[Pair, ...]]:
        """The lines of the settings table: (left, right) key/value pairs.

        Related settings share a line: role x on the left, role y on the
        right (sample sizes, kernels, bandwidths, the estimator's parameters
        chosen on each sample or variable). Settings with one role (the data's
        names, the kernel of both samples, parameters chosen on the pooled
        sample or the observed data) take a line each, the whole width; the
        general rows (estimator, tuning) and the null method's rows fill both
        columns in order.
        """
        general = self._general_rows()
        sizes = list(self.sizes.items())
        if len(sizes) != 2:
            general += sizes
        lines = _flow(general)
        if len(sizes) == 2:
            lines.append((sizes[0], sizes[1]))
        if self.data_name != "x and y":  # names of pandas inputs, or the user's data_name
            lines.append((("data_name", self.data_name),))
        lines += self._kernel_lines()
        lines += self._param_lines()
        lines += _flow(self.method.info_rows(self))
        return lines

    def _kernel_lines(self) -> list[tuple[Pair, ...]]:
        roles = list(self.kernels)
        bws = {r: self._bandwidth_value(r) for r in roles}
        if len(roles) == 1:  # one kernel for both samples: a line each, the whole width
            (r,) = roles
            return [((role_key("kernel", r), self._kernel_value(r)),)] + (
                [] if bws[r] is None else [((role_key("bandwidth", r), bws[r]),)])
        lines: list[tuple[Pair, ...]] = []
        for i in range(0, len(roles), 2):  # roles x and y: x on the left, y on the right
            pair = roles[i:i + 2]
            lines.append(_line([(role_key("kernel", r), self._kernel_value(r)) for r in pair]))
            if any(bws[r] is not None for r in pair):
                lines.append(_line([(role_key("bandwidth", r),
                                     "-" if bws[r] is None else bws[r]) for r in pair]))
        return lines

    def _param_lines(self) -> list[tuple[Pair, ...]]:
        lines: list[tuple[Pair, ...]] = []
        params = {role: p for role, p in self.params.items() if p}
        roles = list(params)
        if "x" in params and "y" in params:
            px, py = params.pop("x"), params.pop("y")
            for k in dict.fromkeys([*px, *py]):
                lines.append(((param_key(k, "x", roles), px.get(k, "-")),
                              (param_key(k, "y", roles), py.get(k, "-"))))
        reg = params.pop("regularization", None)
        if reg:  # the filter and lambda of a regularised statistic: two a line
            lines += _flow(list(reg.items()))
        for role, p in params.items():
            lines += [((param_key(k, role, roles), v),) for k, v in p.items()]
        shown = {k for p in self.params.values() for k in p}
        for k, v in _given_config(self.estimator).items():
            if k not in shown:
                lines.append(((k, Annotated(v, "(given)")),))
        return lines

    def _param_note(self) -> str | None:
        roles = [role for role, p in self.params.items() if p and role != "regularization"]
        if not roles:
            return None
        what = {"x": "x", "y": "y", "pooled": "the pooled data", "observed": "the observed data"}
        kind = "two-sample" if "n_x" in self.sizes else "independence"
        if self.kernel_notes:
            where = " and ".join(what.get(r, r) for r in roles)
            return (f"Estimator parameters: the noise variances of the marginalized kernel, "
                    f"tuned once on {where} (which the permutations leave unchanged: "
                    "nothing is re-tuned).")
        if self.tuning == "pooled":
            src = ("the pooled sample" if kind == "two-sample" else
                   "the permutation-averaged cross-covariance Gram matrix")
            return (f"Estimator parameters: chosen once on {src} (tuning='pooled') and held "
                    "fixed for every permutation.")
        where = ("each observed sample (x, y)" if kind == "two-sample"
                 else "the observed data")
        return (f"Estimator parameters: those chosen on {where}; tuning='permutation' "
                "chooses them again for every permutation.")

    def summary(self, alpha: float = 0.05, relevance: bool = False) -> Summary:
        """statsmodels-style summary: a settings table, a result table and notes.

        Every line is at most 78 characters: long lists (e.g. MMKME's
        per-coordinate noise variances) are summarised and long names are cut,
        with a note; the full values are in `params`, `bandwidths` and
        `kernels`.

        Parameters
        ----------
        alpha : float
            Level of the Monte Carlo interval of the p-value.
        relevance : bool
            Add the per-feature relevance table (:meth:`relevance` with its
            defaults; at most 12 features, in rank order).

        Returns
        -------
        Summary
            Prints as text; ``_repr_html_`` renders it in Jupyter.
        """
        if not 0 < alpha < 1:
            raise ValueError(f"`alpha` must be in (0, 1); got {shown(alpha)}.")
        lines = self._settings_lines()
        settings, shortened = settings_table(lines, self.title)
        ci = self.method.conf_int(self, alpha)
        header, values = ["statistic", "p-value"], [
            format_number(self.statistic),
            format_pvalue(self.pvalue, floor=self.method.pvalue_floor(self), sign=False)]
        if ci is not None and not self.exact:
            conf = f"{100 * (1 - alpha):.4g}%"
            header += [f"p {conf} MC low", f"p {conf} MC high"]
            values += [format_bound(ci[0]), format_bound(ci[1])]
        results = result_table(self.statistic_name, header, values)
        notes = [f"Alternative hypothesis: {self.alternative_text}."]
        notes += self.method.notes(self, alpha)
        param_note = self._param_note()
        if param_note:
            notes.append(param_note)
        for role, text in self.kernel_notes.items():
            which = "The kernel" if role == "kernel" else f"The kernel of {role}"
            notes.append(f"{which} is marginalized by the estimator: the test uses "
                         f"{_shorten_lists(text.removeprefix('marginalized: '))}.")
        notes += [_sentence(n) for n in self.notes if n]
        full = {k: v for ln in lines for e in ln if e is not None for k, v in [e]}
        cut = [k for k in shortened if isinstance(_unwrap(full[k]), str)]
        if cut:
            notes.append("In full: " + "; ".join(f"{k}: {full[k]}" for k in cut) + ".")
        if len(cut) < len(shortened):
            notes.append("Lists are summarised in the table (number of values and range); "
                         "the full values are in `params` and `bandwidths`.")
        tables = [results]
        if relevance:
            frame = self.relevance()
            tables.append(relevance_table(frame.head(12)))
            notes.append(relevance_note(frame, alpha))
        return Summary([*settings, *tables], notes,
                       html_tables=[html_settings_table(settings), *tables])

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """One-row DataFrame: the statistic, p-value and its interval, and what ran.

        The columns name what ran as the report does: ``test`` (the title, with
        the kind of statistic), ``method`` (the null method), ``exact``,
        ``n_resamples``, ``estimator`` (and ``tuning``), ``engine``; the
        regularisation of a regularised statistic (``filter``, ``lam``, ...);
        the bandwidths by role; the sizes; ``seed``; and the estimator's
        data-driven parameters under the report's keys (``shrinkage_x``,
        ``sigma2``; a list gives one numeric column per value). The index is
        the statistic's name.
        """
        import pandas as pd

        row: dict[str, Any] = {"statistic": self.statistic, "pvalue": self.pvalue}
        ci = self.method.conf_int(self, alpha)
        lo, hi = (np.nan, np.nan) if ci is None else (ci[0], ci[1])
        row.update(pvalue_lower=lo, pvalue_upper=hi, test=self.title,
                   method=self.method.name, exact=self.exact, n_resamples=self.n_resamples)
        row.update(self._frame_estimator())
        row["engine"] = self.engine
        row.update(self._frame_kernels())
        row.update(self.sizes)
        row["seed"] = self.seed
        row.update(flat_params(self.params))
        return pd.DataFrame([row], index=pd.Index([self.statistic_name], name="statistic_name"))

    def _frame_estimator(self) -> dict[str, Any]:
        """The estimator (and its tuning), as columns of :meth:`summary_frame`."""
        return dict(self._general_rows()[:-len(self._engine_rows())])

    def _frame_kernels(self) -> dict[str, Any]:
        """The bandwidths by role, as columns of :meth:`summary_frame`."""
        return {role_key("bandwidth", role): bw for role, bw in self.bandwidths.items()}

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python dict (strict JSON) of the result, without the null sample.

        Non-finite numbers (in `details`, say) are None, and their paths are listed under
        ``"non_finite"`` (``{"details.shape": "nan"}``).
        """
        out: dict[str, Any] = {
            "test": self.title,
            "statistic": self.statistic,
            "statistic_name": self.statistic_name,
            "statistic_description": self.statistic_description,
            "pvalue": self.pvalue,
            "alternative": self.alternative_text,
            "method": {"name": self.method.name,
                       **{f.name: getattr(self.method, f.name)
                          for f in dataclasses.fields(self.method) if f.name != "rng"}},
            "exact": self.exact,
            "n_resamples": self.n_resamples,
            "count": self.count,
            "estimator": {"name": self.estimator.name, "label": self.estimator.label,
                          "config": _config(self.estimator)},
            "params": self.params,
            "tuning": self.tuning,
            "kernels": {role: k.describe() + (f"; {self.kernel_notes[role]}"
                                              if self.kernel_notes.get(role) else "")
                        for role, k in self.kernels.items()},
            "bandwidths": self.bandwidths,
            "sizes": self.sizes,
            "seed": self.seed,
            "data_name": self.data_name,
            "details": self.details,
            "engine": self.engine,
            **({"engine_info": self.engine_info} if self.engine_info else {}),
            "notes": list(self.notes),
        }
        ci = self.method.conf_int(self, 0.05)
        if ci is not None:
            out["pvalue_interval_95"] = ci.tolist()
        bad: dict[str, str] = {}
        clean = _jsonable(out, "", bad)
        if bad:  # JSON has no NaN: such fields are null, and listed here
            clean["non_finite"] = bad
        return clean


def role_key(name: str, role: str) -> str:
    """The report's key of a setting by role: ``kernel``, ``kernel_x``, ``bandwidth_x1``
    (the keywords of the tests and the columns of ``summary_frame``)."""
    return name if role == "kernel" else f"{name}_{role}"


def param_key(key: str, role: str, roles: list[str]) -> str:
    """The report's key of an estimator parameter chosen on the `role` data (`roles`: the
    roles with parameters): ``shrinkage_x``, ``sigma2`` (chosen once, on the pooled
    sample), ``lam`` (of the regularisation)."""
    if role == "regularization":
        return key
    others = [r for r in roles if r != "regularization"]
    if role in ("pooled", "observed") and others == [role]:
        return key
    return f"{key}_{role.replace(' ', '_')}"


def flat_params(params: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The parameters by role as flat columns, under the keys of the report
    (:func:`param_key`); a list-valued parameter (MMKME's per-coordinate variances) gives
    one column per value, ``diag_0``, ``diag_1``, ... Numbers stay numbers."""
    out: dict[str, Any] = {}
    roles = [r for r, p in params.items() if p]
    for role in roles:
        for k, v in params[role].items():
            key = param_key(k, role, roles)
            if isinstance(v, (list, tuple, np.ndarray)):
                for i, u in enumerate(np.ravel(np.asarray(v))):
                    out[f"{key}_{i}"] = u.item() if isinstance(u, np.generic) else u
            else:
                out[key] = v.item() if isinstance(v, np.generic) else v
    return out


def relevance_table(frame: pd.DataFrame) -> Any:
    """The relevance frame as a statsmodels SimpleTable."""
    from statsmodels.iolib.table import SimpleTable

    cols = [frame[c].to_numpy(dtype=np.float64) for c in
            ("statistic", "z", "pvalue", "pvalue_holm", "rank")]
    data = [[format_number(float(t)), f"{z:.3g}", f"{p:.4g}", f"{ph:.4g}", str(int(r))]
            for t, z, p, ph, r in zip(*cols)]
    return SimpleTable(data, headers=["statistic", "z", "p-value", "Holm p", "rank"],
                       stubs=[str(i) for i in frame.index],
                       title="Feature relevance (one test per feature)")


def relevance_note(frame: pd.DataFrame, alpha: float) -> str:
    """What the relevance table claims."""
    k = int((frame["pvalue_holm"] <= alpha).sum())
    shown = "" if len(frame) <= 12 else f" (the first 12 of {len(frame)} shown)"
    return (f"Feature relevance{shown}: one permutation test per feature (its marginal "
            f"difference between the samples, or its dependence on the other variable; "
            f"Gaussian kernel, median bandwidth), p-values Holm-adjusted: the {k} "
            f"feature(s) with Holm p <= {alpha:g} differ, with family-wise error rate at "
            f"most {alpha:g}. A feature that differs only jointly with others is not "
            "found this way.")


def _config(est: Any) -> dict[str, Any]:
    return {k: v for k, v in est.get_params().items() if v is not None}


def _line(entries: list[tuple[str, Any]]) -> tuple[Pair, Pair]:
    """A two-column line from one or two entries."""
    return (entries[0], entries[1] if len(entries) > 1 else None)


def _given_config(est: Any) -> dict[str, Any]:
    """Configuration parameters the user set to a value that fixes a data-driven one."""
    try:
        defaults = type(est)().get_params()
    except Exception:  # pragma: no cover - an estimator that needs arguments
        defaults = {}
    out: dict[str, Any] = {}
    for k, v in est.get_params().items():
        d = defaults.get(k)
        if v is None or (d is not None and _same(v, d)):
            continue
        if isinstance(v, np.ndarray) and v.ndim > 1:
            v = f"array {v.shape[0]} x {v.shape[1]}"
        out[k] = v
    return out


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object)))
    except Exception:  # pragma: no cover - incomparable values
        return False


def _sentence(note: str) -> str:
    """A note of `notes` as a sentence of the summary: capital first (unless it starts
    with a name such as ``n_features``), full stop last."""
    first = note.split(" ", 1)[0]
    if "_" not in first and "=" not in first:
        note = note[0].upper() + note[1:]
    return note if note.endswith((".", "!", "?")) else note + "."


def _unwrap(v: Any) -> Any:
    return v.value if isinstance(v, Annotated) else v


def _shorten_lists(text: str, keep: int = 6) -> str:
    """Lists of more than `keep` numbers in a text, e.g. a kernel description, summarised."""
    def repl(m: re.Match[str]) -> str:
        items = [u.strip() for u in m.group(1).split(",")]
        if len(items) <= keep:
            return m.group(0)
        try:
            nums = [float(u) for u in items]
        except ValueError:
            return m.group(0)
        return (f"{len(nums)} values in [{format_number(min(nums))}, "
                f"{format_number(max(nums))}]")

    return re.sub(r"\[([^\[\]]*)\]", repl, text)


def _jsonable(v: Any, where: str = "", bad: dict[str, str] | None = None) -> Any:
    """`v` as plain JSON values; non-finite floats become None, their paths recorded in
    `bad` (``{"details.shape": "nan"}``)."""
    if isinstance(v, Mapping):
        return {str(k): _jsonable(u, f"{where}.{k}" if where else str(k), bad)
                for k, u in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(u, f"{where}[{i}]", bad) for i, u in enumerate(v)]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist(), where, bad)
    if isinstance(v, np.generic):
        return _jsonable(v.item(), where, bad)
    if isinstance(v, float) and not np.isfinite(v):
        if bad is not None:
            bad[where] = repr(v)
        return None  # JSON has no NaN/inf
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return repr(v)


@dataclass(frozen=True, repr=False, eq=False)
class TwoSampleResult(KernelTestResult):
    """Result of :func:`kmtests.two_sample_test` (attributes as in the base class)."""

    result_of: ClassVar[tuple[str, bool] | None] = ("two_sample", False)

    test_name: ClassVar[str] = "Kernel two-sample test"
    alternative_text: ClassVar[str] = "the two samples come from different distributions"

    def witness(self, points: Any) -> np.ndarray:
        """The witness function ``mu_x - mu_y`` at `points`.

        The difference of the two estimated kernel mean embeddings, with the
        estimator the test used (its weights chosen as the test chose them:
        on each sample, or once on the pooled sample with
        ``tuning="pooled"``; the marginalized estimators' smoothed kernel),
        and the fitted kernel. Where it is positive the first sample has more
        mass than the second, as the kernel sees it; ``MMD^2_b`` is its
        squared RKHS norm. The linear-time tests (``engine="block"``,
        ``"linear"``) estimate the KME's ``MMD^2``: their witness is the
        KME's, from all points; the low-rank engines' (``"nystrom"``,
        ``"rff"``) is the exact kernel's, which their statistic approximates.

        The result keeps a reference to the pooled sample (no copy) for it;
        the weights cost one Gram matrix per sample when first asked for.

        Parameters
        ----------
        points : array_like, shape (m, d) or (m,)
            Where to evaluate it (``(m,)`` for 1-d data).

        Returns
        -------
        ndarray, shape (m,)

        Raises
        ------
        ValueError
            For a test without a witness: on kernel matrices
            (``kernel="precomputed"``), the spectral-regularised statistic,
            an aggregated test (ask a member's test).

        Examples
        --------
        >>> import numpy as np
        >>> from kmtests import two_sample_test
        >>> gen = np.random.default_rng(0)
        >>> res = two_sample_test(gen.normal(size=50), gen.normal(1.5, size=50),
        ...                       n_resamples=99, rng=1)
        >>> w = res.witness(np.array([-1.0, 0.75, 2.5]))
        >>> bool(w[0] > 0 > w[2])
        True
        """
        return np.asarray(self._witness_object()(points))

    def plot_witness(self, ax: Any = None, *, features: Any = None, num: int = 200) -> Any:
        """Draw the witness function (see :meth:`witness`).

        1-d data: the witness on a grid, with the two samples as rugs. 2-d
        data: a colour map of the witness with the two samples on it. More
        columns (or `features` given): the witness at each data point
        against each of the chosen features, one panel per feature (default:
        the 3 first of :meth:`relevance`). Requires matplotlib.

        Parameters
        ----------
        ax : matplotlib Axes or array of Axes, optional
            Where to draw (one Axes per feature for the per-feature panels).
        features : sequence of int, optional
            The columns of the per-feature panels.
        num : int
            Grid points (1-d; 2-d uses ``num / 2`` per axis).

        Returns
        -------
        matplotlib Axes, or an array of Axes (per-feature panels)

        Examples
        --------
        >>> import numpy as np
        >>> from kmtests import two_sample_test
        >>> gen = np.random.default_rng(0)
        >>> res = two_sample_test(gen.normal(size=(40, 2)), gen.normal(1.0, size=(40, 2)),
        ...                       n_resamples=99, rng=1)
        >>> ax = res.plot_witness()
        >>> ax.get_title()
        'Witness of MMD^2_u'
        """
        return plot_witness(self, ax, features, num)


@dataclass(frozen=True, repr=False, eq=False)
class IndependenceResult(KernelTestResult):
    """Result of :func:`kmtests.independence_test` (attributes as in the base class)."""

    result_of: ClassVar[tuple[str, bool] | None] = ("independence", False)

    test_name: ClassVar[str] = "Kernel independence test"
    alternative_text: ClassVar[str] = "x and y are dependent"

    def witness(self, x_points: Any, y_points: Any, *, grid: bool = False) -> np.ndarray:
        """The witness ``w(s, t)`` over pairs: the estimated embedding of the centred
        cross-covariance.

        ``w(s, t) = sum_i beta_i (k(x_i, s) - mu_x(s)) (l(y_i, t) - mu_y(t))``
        with the weights ``beta`` of the estimator the test used; for the KME
        it is ``mu_XY(s, t) - mu_X(s) mu_Y(t)``, the difference between the
        joint embedding and the product of the marginal ones, and ``HSIC_b``
        is its squared norm. Positive where pairs ``(s, t)`` are more frequent
        than under independence. The result keeps references to x and y for it.

        Parameters
        ----------
        x_points, y_points : array_like
            Points of x and of y (rows).
        grid : bool
            False: ``w`` at the pairs of rows (same number of rows); True:
            on the grid of all pairs, shape ``(len(x_points), len(y_points))``.

        Returns
        -------
        ndarray

        Examples
        --------
        >>> import numpy as np
        >>> from kmtests import independence_test
        >>> gen = np.random.default_rng(0)
        >>> x = gen.normal(size=80)
        >>> res = independence_test(x, x + 0.3 * gen.normal(size=80), n_resamples=99, rng=1)
        >>> w = res.witness([1.0, 1.0], [1.0, -1.0])
        >>> bool(w[0] > 0 > w[1])
        True
        """
        w = self._witness_object()
        return np.asarray(w.grid(x_points, y_points) if grid else w(x_points, y_points))

    def plot_witness(self, ax: Any = None, *, features: Any = None, num: int = 120) -> Any:
        """Draw the witness (see :meth:`witness`): for 1-d x and y a colour map over the
        (x, y) plane with the observed pairs; otherwise the observed pairs on the plane of
        two features (`features`: a column of x and one of y; default the most relevant
        ones, :meth:`relevance`), coloured by the witness at them. Requires matplotlib.

        Returns
        -------
        matplotlib.axes.Axes
        """
        return plot_witness(self, ax, features, num)
