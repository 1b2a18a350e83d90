"""Causal discovery with the kernel tests: adapters for pgmpy's and causal-learn's PC.

Constraint-based causal discovery (the PC algorithm and its relatives) asks many
questions "is column ``x`` independent of column ``y`` given columns ``z``?" of one
data set. This module answers them with :func:`kmtests.conditional_independence_test`
(KCI with a tuned regression on ``z``) and, for an empty conditioning set, with
:func:`kmtests.independence_test` (HSIC), in the forms the two Python libraries
expect:

* pgmpy: :class:`PgmpyCITest` (an object, for
  ``pgmpy.causal_discovery.PC(ci_test=PgmpyCITest(df)).fit(df)`` and for the
  deprecated ``pgmpy.estimators.PC(df).estimate(ci_test=...)``) and
  :func:`pgmpy_ci_test` (a function with the signature of pgmpy's built-in tests,
  for ``pgmpy.estimators.PC``);
* causal-learn: :func:`register_causallearn` registers :data:`KmtestsCIT` (a
  subclass of causal-learn's ``CIT_Base``) under a name, to pass as
  ``causallearn.search.ConstraintBased.PC.pc(data, alpha, indep_test="kmtests")``.

**Empty conditioning set.** KCI needs at least one conditioning variable; PC's
first round tests every pair with none. Then the adapters run the unconditional
HSIC test, ``independence_test(x, y, method="gamma")`` by default: the gamma
approximation of its null (with the permutation moments) is deterministic and
fast, as the gamma null of KCI is, and it is what causal-learn's KCI does there
(``KCI_UInd``, the HSIC gamma test of Gretton et al., 2008). ``unconditional=``
takes other options of :func:`kmtests.independence_test` (e.g. ``{"method":
"permutation", "n_resamples": 999, "rng": 0}``); the options of the conditional
test do not reach it.

**Symmetry and caching.** The adapters order each question canonically: ``x`` is
the column that comes first in the data, ``y`` the other, and the columns of ``z``
follow the data's order. (KCI is not symmetric in ``x`` and ``y``: ``x`` is
augmented by ``z / 2``.) So ``x, y | z`` and ``y, x | z`` get the same p-value,
the adapters' p-value caches (causal-learn's ``pvalue_cache`` and
:class:`PgmpyCITest`'s) answer both from one test, and every test with one
conditioning set hands the conditional test the same bytes of ``z``, whose
eigendecompositions it caches (``cache=True``, the default;
:func:`kmtests.estimators.conditional.clear_cache` empties that cache).

causal-learn and pgmpy are optional (``pip install kmtests[causal]``): they are
imported when an adapter that needs them is used.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import threading
from collections.abc import Hashable, Iterable, Mapping
from itertools import combinations
from typing import Any

import numpy as np

from .conditional import conditional_independence_test
from .independence import independence_test
from .results import ConditionalIndependenceResult, IndependenceResult

__all__ = ["CAUSALLEARN_NAME", "PgmpyCITest", "column_test", "pc", "pgmpy_ci_test",
           "register_causallearn", "skeleton_questions"]

#: the name :func:`register_causallearn` registers with causal-learn by default
CAUSALLEARN_NAME = "kmtests"

#: the options of the unconditional test when `unconditional` is not given
DEFAULT_UNCONDITIONAL: Mapping[str, Any] = {"method": "gamma"}

_NOT_OPTIONS = ("x", "y", "z")


def _option_names(func: Any) -> frozenset[str]:
    return frozenset(p for p in inspect.signature(func).parameters if p not in _NOT_OPTIONS)


def _check_options(options: Mapping[str, Any], unconditional: Mapping[str, Any] | None
                   ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Unknown option names raise here, before a discovery run starts."""
    bad = sorted(set(options) - _option_names(conditional_independence_test))
    if bad:
        raise TypeError(f"unknown option(s) of kmtests.conditional_independence_test: "
                        f"{', '.join(bad)}.")
    if unconditional is None:
        return dict(options), None
    if not isinstance(unconditional, Mapping):
        raise TypeError("`unconditional` must be a mapping of options of "
                        f"kmtests.independence_test; got {type(unconditional).__name__}.")
    bad = sorted(set(unconditional) - _option_names(independence_test))
    if bad:
        raise TypeError(f"unknown option(s) of kmtests.independence_test in "
                        f"`unconditional`: {', '.join(bad)}.")
    return dict(options), dict(unconditional)


def _merged(options: Mapping[str, Any] | None, keywords: Mapping[str, Any]
            ) -> dict[str, Any]:
    """`keywords` and the mapping `options` (for names the host library keeps for itself)."""
    if options is None:
        return dict(keywords)
    if not isinstance(options, Mapping):
        raise TypeError(f"`options` must be a mapping of options of "
                        f"kmtests.conditional_independence_test; got "
                        f"{type(options).__name__}.")
    both = sorted(set(options) & set(keywords))
    if both:
        raise TypeError(f"option(s) given twice, as keywords and in `options`: "
                        f"{', '.join(both)}.")
    return {**keywords, **options}


def _columns(data: Any, cols: Iterable[Any]) -> np.ndarray:
    cols = list(cols)
    if hasattr(data, "loc") and hasattr(data, "columns"):  # a pandas DataFrame
        out = data.loc[:, cols].to_numpy(dtype=np.float64)
    else:
        arr = np.asarray(data)
        if arr.ndim != 2:
            raise ValueError(f"`data` must be a 2-D array or a DataFrame; got {arr.ndim} "
                             "dimension(s).")
        out = arr[:, [int(c) for c in cols]].astype(np.float64, copy=False)
    return np.ascontiguousarray(out)


def _position(data: Any, col: Any) -> int:
    if hasattr(data, "columns"):
        return int(data.columns.get_loc(col))
    return int(col)


def column_test(data: Any, x: Hashable, y: Hashable, z: Iterable[Hashable] = (), *,
                unconditional: Mapping[str, Any] | None = None, **options: Any
                ) -> ConditionalIndependenceResult | IndependenceResult:
    """Test whether column `x` of `data` is independent of column `y` given columns `z`.

    The one question every adapter of this module asks, in the order given (the
    adapters order `x` and `y` by their position in the data first).

    Parameters
    ----------
    data : DataFrame or array_like, shape (n, p)
        The data: columns are variables (labels for a DataFrame, positions for an
        array).
    x, y : label or int
        The two columns tested.
    z : iterable of labels or ints
        The conditioning columns (may be empty).
    unconditional : mapping, optional
        Options of :func:`kmtests.independence_test`, the test run when `z` is
        empty (default ``{"method": "gamma"}``).
    **options
        Options of :func:`kmtests.conditional_independence_test` (e.g. ``method``,
        ``criterion``, ``lam``, ``cache``); they do not reach the unconditional
        test.

    Returns
    -------
    ConditionalIndependenceResult or IndependenceResult
        The result of the conditional test, or of the unconditional one when `z` is
        empty.

    Raises
    ------
    TypeError
        An option that neither test knows.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.causal import column_test
    >>> gen = np.random.default_rng(0)
    >>> z = gen.normal(size=200)
    >>> data = np.column_stack([np.tanh(2 * z) + 0.3 * gen.normal(size=200),
    ...                         np.sin(2 * z) + 0.3 * gen.normal(size=200), z])
    >>> print(f"{column_test(data, 0, 1).pvalue:.2g}")        # dependent through z
    6.4e-35
    >>> print(f"{column_test(data, 0, 1, [2]).pvalue:.3f}")   # independent given z
    0.388
    """
    opts, uncond = _check_options(options, unconditional)
    zs = list(z)
    xv = _columns(data, [x])
    yv = _columns(data, [y])
    if not zs:
        kw = dict(DEFAULT_UNCONDITIONAL if uncond is None else uncond)
        return independence_test(xv, yv, **kw)
    return conditional_independence_test(xv, yv, _columns(data, zs), **opts)


def _same_data(a: Any, b: Any) -> bool:
    """The same columns and values (a copy of the data is the data)."""
    if hasattr(a, "columns") != hasattr(b, "columns"):
        return False
    if hasattr(a, "columns") and list(a.columns) != list(b.columns):
        return False
    va, vb = np.asarray(a), np.asarray(b)
    return bool(va.shape == vb.shape and np.array_equal(va, vb))


def _canonical(data: Any, x: Any, y: Any, z: Iterable[Any]
               ) -> tuple[Any, Any, tuple[Any, ...]]:
    """`x` before `y` and `z` in the data's column order."""
    zs = tuple(sorted(set(z), key=lambda c: _position(data, c)))
    if _position(data, y) < _position(data, x):
        x, y = y, x
    if x == y or x in zs or y in zs:
        raise ValueError(f"x and y must be two different columns, not in z; got x={x!r}, "
                         f"y={y!r}, z={list(zs)!r}.")
    return x, y, zs


def pgmpy_ci_test(X: Hashable, Y: Hashable, Z: Iterable[Hashable], data: Any,
                  boolean: bool = True, **kwargs: Any) -> bool | tuple[float, float]:
    """The kmtests test with the signature of pgmpy's CI-test functions.

    For the (deprecated) ``pgmpy.estimators.PC(data).estimate(ci_test=pgmpy_ci_test)``,
    which calls ``ci_test(X, Y, Z, data=data, independencies=...,
    significance_level=..., **kwargs)`` with the keywords of ``estimate`` it does
    not know itself: those are options of :func:`column_test` here (e.g.
    ``estimate(ci_test=pgmpy_ci_test, criterion="loo")``). For
    ``pgmpy.causal_discovery.PC``, which passes no data, use :class:`PgmpyCITest`.

    Parameters
    ----------
    X, Y : column labels
    Z : iterable of column labels
        The conditioning set (may be empty).
    data : pandas.DataFrame
    boolean : bool
        True (default): return whether the test accepts independence, ``p-value >=
        significance_level`` (pgmpy's rule). False: return ``(statistic, p-value)``.
    **kwargs
        ``significance_level`` (needed when `boolean`), ``independencies`` (ignored)
        and the options of :func:`column_test` (`unconditional` and those of
        :func:`kmtests.conditional_independence_test`). ``options``, a mapping of
        the latter, passes those whose names ``estimate`` keeps for itself
        (``n_jobs``): ``estimate(ci_test=pgmpy_ci_test, options={"method": "wild",
        "rng": 0, "n_jobs": 1})``.

    Returns
    -------
    bool or (float, float)

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from kmtests.causal import pgmpy_ci_test
    >>> gen = np.random.default_rng(0)
    >>> a = gen.normal(size=150)
    >>> df = pd.DataFrame({"a": a, "b": np.tanh(2 * a) + 0.3 * gen.normal(size=150)})
    >>> pgmpy_ci_test("a", "b", [], df, significance_level=0.05)
    False
    >>> stat, p = pgmpy_ci_test("a", "b", [], df, boolean=False)
    >>> print(f"{p:.4f}")
    0.0000
    """
    level = kwargs.pop("significance_level", None)
    kwargs.pop("independencies", None)
    opts = _merged(kwargs.pop("options", None), kwargs)
    x, y, zs = _canonical(data, X, Y, Z)
    res = column_test(data, x, y, zs, **opts)
    if not boolean:
        return float(res.statistic), float(res.pvalue)
    if level is None:
        raise TypeError("pgmpy_ci_test(boolean=True) needs `significance_level`.")
    return bool(res.pvalue >= level)


class PgmpyCITest:
    """The kmtests test as a pgmpy CI-test object (``pgmpy.ci_tests`` interface).

    Use it as ``pgmpy.causal_discovery.PC(ci_test=PgmpyCITest(df)).fit(df)``, or
    with the deprecated ``pgmpy.estimators.PC(df).estimate(ci_test=PgmpyCITest(df))``.
    Like pgmpy's own tests, it keeps the last result in ``statistic_``,
    ``p_value_`` and ``effect_size_`` (what ``orient_rule="pvalue"`` and
    ``"effect"`` of ``pgmpy.causal_discovery.PC`` read), and caches the results by
    the unordered pair and the conditioning set.

    Parameters
    ----------
    data : pandas.DataFrame
        The data PC runs on.
    use_cache : bool
        Keep each result and answer a repeated question from it (default True).
    unconditional : mapping, optional
        Options of :func:`kmtests.independence_test` for an empty conditioning set
        (default ``{"method": "gamma"}``).
    **options
        Options of :func:`kmtests.conditional_independence_test`.

    Attributes
    ----------
    statistic_, p_value_ : float
        Of the last question (KCI, or ``HSIC_b`` for an empty conditioning set).
    effect_size_ : float
        The statistic again (it is 0 under independence and grows with the
        dependence; it is not normalised, so compare it only across tests of one
        size of conditioning set).
    result_ : ConditionalIndependenceResult or IndependenceResult
        The last kmtests result (with the report).
    n_tests : int
        Tests run (answers from the cache not counted).
    n_calls : int
        Questions asked.

    Notes
    -----
    pgmpy's ``variant="parallel"`` runs the tests in threads: the answers and the
    cache are right, but ``statistic_``, ``p_value_`` and ``effect_size_`` then
    belong to whichever thread wrote last (as with pgmpy's own tests).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from kmtests.causal import PgmpyCITest
    >>> gen = np.random.default_rng(0)
    >>> a = gen.normal(size=150)
    >>> b = np.tanh(2 * a) + 0.3 * gen.normal(size=150)
    >>> df = pd.DataFrame({"a": a, "b": b, "c": b ** 2 + 0.3 * gen.normal(size=150)})
    >>> test = PgmpyCITest(df)
    >>> test("a", "c", ["b"], significance_level=0.05)   # a -> b -> c: a, c | b
    True
    >>> print(f"p = {test.p_value_:.3f}; tests run: {test.n_tests}")
    p = 0.780; tests run: 1
    >>> test("c", "a", ["b"]), test.n_tests               # the same question, cached
    (True, 1)
    """

    def __init__(self, data: Any, *, use_cache: bool = True,
                 unconditional: Mapping[str, Any] | None = None, **options: Any) -> None:
        if data is None:
            raise ValueError("PgmpyCITest needs the data (a pandas DataFrame).")
        self.data = data
        self.use_cache = bool(use_cache)
        self.options, self.unconditional = _check_options(options, unconditional)
        self.statistic_: float = float("nan")
        self.p_value_: float = float("nan")
        self.effect_size_: float = float("nan")
        self.result_: ConditionalIndependenceResult | IndependenceResult | None = None
        self.n_tests = 0
        self.n_calls = 0
        self._cache: dict[tuple[Any, ...], ConditionalIndependenceResult
                          | IndependenceResult] = {}
        self._lock = threading.Lock()
        self._checked: Any = None

    def __repr__(self) -> str:
        opts = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"PgmpyCITest(<data {getattr(self.data, 'shape', '?')}>{opts})"

    def __call__(self, X: Hashable, Y: Hashable, Z: Iterable[Hashable] = (),
                 significance_level: float = 0.05, *, data: Any = None,
                 independencies: Any = None, boolean: bool = True
                 ) -> bool | tuple[float, float]:
        """Whether X and Y are independent given Z (``p-value >= significance_level``).

        `data` and `independencies` are what ``pgmpy.estimators.PC`` passes
        (`data` must be the object given at construction); ``boolean=False`` returns
        ``(statistic, p-value)``.
        """
        if data is not None and data is not self.data and data is not self._checked:
            if not _same_data(data, self.data):
                raise ValueError("this PgmpyCITest was built for another data set: build "
                                 "PgmpyCITest(data) for the data PC runs on.")
            self._checked = data  # pgmpy.estimators.PC passes its own copy
        if not boolean:
            return self.run_test(X, Y, Z)
        return self.is_independent(X, Y, Z, significance_level)

    def is_independent(self, X: Hashable, Y: Hashable, Z: Iterable[Hashable] = (),
                       significance_level: float = 0.05) -> bool:
        """Run the test (or take it from the cache); True if ``p >= significance_level``."""
        self.run_test(X, Y, Z)
        return bool(self.p_value_ >= significance_level)

    def run_test(self, X: Hashable, Y: Hashable, Z: Iterable[Hashable] = ()
                 ) -> tuple[float, float]:
        """Run the test (or take it from the cache) and return ``(statistic, p-value)``."""
        x, y, zs = _canonical(self.data, X, Y, Z)
        key = (x, y, zs)
        with self._lock:
            self.n_calls += 1
            res = self._cache.get(key) if self.use_cache else None
        if res is None:
            res = column_test(self.data, x, y, zs, unconditional=self.unconditional,
                              **self.options)
            with self._lock:
                self.n_tests += 1
                if self.use_cache:
                    self._cache[key] = res
        self.result_ = res
        self.statistic_ = float(res.statistic)
        self.p_value_ = float(res.pvalue)
        self.effect_size_ = self.statistic_
        return self.statistic_, self.p_value_


# ------------------------------------------------------------------------------- causal-learn

_CIT_CLASS: Any = None
_CIT_LOCK = threading.Lock()


def _make_cit_class() -> Any:
    try:
        from causallearn.utils.cit import CIT_Base
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the causal-learn adapter needs causal-learn (pip install "
                          "'kmtests[causal]').") from exc

    class KmtestsCIT(CIT_Base):
        """The kmtests test as a causal-learn CI test (a ``CIT_Base``).

        causal-learn builds it as ``KmtestsCIT(data, **kwargs)`` from the keywords
        of ``pc(...)`` (or ``fci(...)``) it does not know: `cache_path` (causal-learn's
        JSON file of p-values), `unconditional` and the options of
        :func:`kmtests.conditional_independence_test`, as keywords or in the mapping
        `options` (needed for ``method``, which causal-learn's ``CIT(data, method)``
        keeps for itself: ``pc(..., options={"method": "wild", "rng": 0})``), and
        `pvalues`, p-values already computed under causal-learn's keys (what
        :func:`kmtests.causal.pc` passes). Calling it with two column
        positions and a conditioning set returns the p-value, cached in
        ``pvalue_cache`` under causal-learn's key (``"x;y|z1.z2"``, ``x < y``) as
        causal-learn's own tests do (a `cache_path` file written for another test or
        other options is refused). ``n_tests`` counts the tests run and
        ``statistics`` keeps the statistic of each key.
        """

        def __init__(self, data: np.ndarray, cache_path: str | None = None,
                     unconditional: Mapping[str, Any] | None = None,
                     options: Mapping[str, Any] | None = None,
                     pvalues: Mapping[str, float] | None = None, **keywords: Any) -> None:
            super().__init__(data, cache_path=cache_path)
            self.options, self.unconditional = _check_options(_merged(options, keywords),
                                                              unconditional)
            params = json.dumps({"options": self.options,
                                 "unconditional": self.unconditional},
                                sort_keys=True, default=repr)
            digest = hashlib.md5(params.encode("utf-8")).hexdigest()
            # CIT_Base.check_cache_method_consistent (causal-learn 0.1.4.8) looks for the
            # method's name among the keys of the cache, never finds it and overwrites
            # the loaded names: a file of other tests' p-values would be reused silently
            loaded = (self.pvalue_cache.get("method_name"),
                      self.pvalue_cache.get("parameters_hash"))
            if loaded[0] is not None and loaded != ("kmtests", digest):
                raise ValueError(f"the cache {cache_path!r} holds the p-values of another "
                                 f"test or other options ({loaded[0]!r}); use another "
                                 "cache_path.")
            self.check_cache_method_consistent("kmtests", digest)
            self.assert_input_data_is_valid()
            if pvalues is not None:  # computed side by side by kmtests.causal.pc
                self.pvalue_cache.update(pvalues)
            self.n_tests = 0
            self.statistics: dict[str, float] = {}

        def __call__(self, X: Any, Y: Any, condition_set: Any = None) -> float:
            Xs, Ys, cond, key = self.get_formatted_XYZ_and_cachekey(X, Y, condition_set)
            if key in self.pvalue_cache:
                return float(self.pvalue_cache[key])
            res = column_test(self.data, Xs[0], Ys[0], cond,
                              unconditional=self.unconditional, **self.options)
            p = float(res.pvalue)
            self.pvalue_cache[key] = p
            self.statistics[key] = float(res.statistic)
            self.n_tests += 1
            return p

    KmtestsCIT.__module__ = __name__
    KmtestsCIT.__qualname__ = "KmtestsCIT"
    return KmtestsCIT


def _cit_class() -> Any:
    global _CIT_CLASS
    with _CIT_LOCK:
        if _CIT_CLASS is None:
            _CIT_CLASS = _make_cit_class()
        return _CIT_CLASS


def register_causallearn(name: str = CAUSALLEARN_NAME) -> str:
    """Register the kmtests test with causal-learn; return the name to pass as `indep_test`.

    After it, ``pc(data, alpha, indep_test=name, **options)`` (and ``fci(...,
    independence_test_method=name, ...)``) run :data:`KmtestsCIT`: the keywords
    of ``pc`` it does not know itself (`unconditional`, `cache_path`, the options
    of :func:`kmtests.conditional_independence_test`) reach the test; ``method``,
    a name causal-learn keeps for itself, goes in the mapping ``options=``
    (``pc(data, 0.05, name, options={"method": "chi2", "rng": 0})``). Calling it
    again is harmless.

    Parameters
    ----------
    name : str
        The name to register (default ``"kmtests"``).

    Returns
    -------
    str
        `name`.

    Raises
    ------
    ImportError
        causal-learn is not installed, or too old to register tests
        (``causallearn.utils.cit.register_ci_test``; 0.1.4.8 has it).

    Examples
    --------
    >>> import numpy as np
    >>> from causallearn.search.ConstraintBased.PC import pc
    >>> from kmtests.causal import register_causallearn
    >>> gen = np.random.default_rng(0)
    >>> a = gen.normal(size=200)
    >>> b = np.tanh(2 * a) + 0.3 * gen.normal(size=200)
    >>> c = b ** 2 + 0.3 * gen.normal(size=200)                 # a -> b -> c
    >>> cg = pc(np.column_stack([a, b, c]), 0.05, register_causallearn(),
    ...         show_progress=False)
    >>> print(cg.G)
    Graph Nodes:
    X1;X2;X3
    <BLANKLINE>
    Graph Edges:
    1. X1 --- X2
    2. X2 --- X3
    <BLANKLINE>
    >>> print(cg.test.n_tests)          # 3 pairs marginally, 3 given one variable
    6
    """
    try:
        from causallearn.utils.cit import register_ci_test
    except ImportError as exc:
        raise ImportError("the causal-learn adapter needs causal-learn with "
                          "causallearn.utils.cit.register_ci_test (0.1.4.8 has it): pip "
                          "install 'kmtests[causal]'.") from exc
    if not isinstance(name, str) or not name:
        raise TypeError(f"`name` must be a non-empty string; got {name!r}.")
    register_ci_test(name, _cit_class())
    return name


# ------------------------------------------------------------- PC with its tests side by side

def _cl_key(x: int, y: int, z: Iterable[int]) -> str:
    """causal-learn's cache key of the question ``x, y | z`` (``"x;y|z1.z2"``, sorted)."""
    a, b = sorted((int(x), int(y)))
    zs = sorted({int(c) for c in z})
    return f"{a};{b}|{'.'.join(map(str, zs))}" if zs else f"{a};{b}"


def skeleton_questions(adjacent: np.ndarray, depth: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """The questions causal-learn's stable skeleton search asks at `depth`, in its order.

    With ``stable=True`` (causal-learn's default) the adjacencies are fixed for a whole
    depth and every conditioning set is tried (no early stop), so the questions of a
    depth are known when it starts: for each node ``x`` and neighbour ``y`` (ascending),
    every subset of ``depth`` other neighbours of ``x``
    (``causallearn.utils.PCUtils.SkeletonDiscovery.skeleton_discovery``).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.causal import skeleton_questions
    >>> adj = ~np.eye(3, dtype=bool)
    >>> skeleton_questions(adj, 1)[:2]
    [(0, 1, (2,)), (0, 2, (1,))]
    """
    out: list[tuple[int, int, tuple[int, ...]]] = []
    for x in range(adjacent.shape[0]):
        neigh = [int(v) for v in np.flatnonzero(adjacent[x])]
        for y in neigh:
            rest = [v for v in neigh if v != y]
            out.extend((x, y, S) for S in combinations(rest, depth))
    return out


def _pvalues(data: np.ndarray, pairs: list[tuple[int, int]], z: tuple[int, ...],
             unconditional: Mapping[str, Any] | None, options: Mapping[str, Any]
             ) -> list[float]:
    """The p-values of the questions ``x, y | z`` for the pairs sharing one conditioning set
    (one task: the conditional test's cache of z's eigendecompositions serves them all)."""
    return [float(column_test(data, x, y, z, unconditional=unconditional,
                              **options).pvalue) for x, y in pairs]


def pc(data: Any, alpha: float = 0.05, *, n_jobs: int | None = None,
       unconditional: Mapping[str, Any] | None = None, node_names: Any = None,
       show_progress: bool = False, **options: Any) -> Any:
    """causal-learn's PC with the kmtests test, the tests of each depth run side by side.

    The skeleton search of causal-learn's ``pc`` (``stable=True``, its default) asks,
    at each depth, questions that are all known when the depth starts
    (:func:`skeleton_questions`). This function asks them first, as one batch per
    depth through joblib (``n_jobs`` workers; inside
    ``joblib.parallel_config(backend="dask")`` on a dask cluster), follows the
    removals of edges from depth to depth as causal-learn does, and then runs
    causal-learn's ``pc`` with these p-values in its cache (:data:`KmtestsCIT`'s
    `pvalues`): the graph is the one the sequential run finds, as every p-value is
    the same function of the data and the question (the same bits when the BLAS of
    the workers and of the sequential run use one thread each; see the test-suite).
    The questions with one conditioning set are one task, so that a worker's cache of
    that set's eigendecompositions serves all of them.

    Parameters
    ----------
    data : ndarray, shape (n, p)
        The data (columns are variables), as causal-learn takes it.
    alpha : float
        The level of each test (causal-learn's `alpha`).
    n_jobs : int, optional
        joblib workers for the tests of one depth (None: one, in this process).
    unconditional : mapping, optional
        Options of :func:`kmtests.independence_test` for the empty conditioning set.
    node_names, show_progress
        Passed to causal-learn's ``pc``.
    **options
        Options of :func:`kmtests.conditional_independence_test`.

    Returns
    -------
    causallearn.graph.GraphClass.CausalGraph
        causal-learn's result; ``cg.test.n_tests`` counts the tests causal-learn ran
        itself (0: every question was answered from the batches), and
        ``cg.test.pvalue_cache`` holds the p-values.

    Examples
    --------
    >>> from kmtests.causal import pc
    >>> import numpy as np
    >>> gen = np.random.default_rng(0)
    >>> a = gen.normal(size=200)
    >>> b = np.tanh(2 * a) + 0.3 * gen.normal(size=200)
    >>> c = b ** 2 + 0.3 * gen.normal(size=200)                 # a -> b -> c
    >>> cg = pc(np.column_stack([a, b, c]), 0.05, n_jobs=1)
    >>> [(e.get_node1().get_name(), e.get_node2().get_name()) for e in cg.G.get_graph_edges()]
    [('X1', 'X2'), ('X2', 'X3')]
    >>> cg.test.n_tests
    0
    """
    from joblib import Parallel, delayed
    from causallearn.search.ConstraintBased.PC import pc as causallearn_pc

    arr = np.asarray(data, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"`data` must be a 2-D array (n, p); got {arr.ndim} dimension(s).")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"`alpha` must be in (0, 1); got {alpha!r}.")
    opts, uncond = _check_options(options, unconditional)
    p = arr.shape[1]
    adjacent = ~np.eye(p, dtype=bool)
    pvalues: dict[str, float] = {}
    depth = -1
    while (int(adjacent.sum(axis=1).max()) if p else 0) - 1 > depth:
        depth += 1
        asked = skeleton_questions(adjacent, depth)
        todo = {}
        for x, y, S in asked:
            key = _cl_key(x, y, S)
            if key not in pvalues and key not in todo:
                a, b = sorted((x, y))
                todo[key] = (a, b, tuple(sorted(S)))
        groups: dict[tuple[int, ...], list[tuple[int, int]]] = {}
        for a, b, S in todo.values():  # one task per conditioning set
            groups.setdefault(S, []).append((a, b))
        found = Parallel(n_jobs=n_jobs)(delayed(_pvalues)(arr, pairs, S, uncond, opts)
                                        for S, pairs in groups.items())
        for (S, pairs), ps in zip(groups.items(), found):
            pvalues.update((_cl_key(a, b, S), p_ab) for (a, b), p_ab in zip(pairs, ps))
        for x, y, S in asked:  # removed after the depth (stable)
            if pvalues[_cl_key(x, y, S)] > alpha:
                adjacent[x, y] = adjacent[y, x] = False
    return causallearn_pc(arr, alpha, register_causallearn(), stable=True,
                          show_progress=show_progress, node_names=node_names,
                          unconditional=unconditional, options=opts, pvalues=pvalues)


def __getattr__(name: str) -> Any:  # PEP 562: the causal-learn class is built on first use
    if name == "KmtestsCIT":
        return _cit_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
