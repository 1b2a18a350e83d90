"""Problems: the validated data of a test, by role, and the permutation scheme.

A problem holds what is tested and which rearrangements leave the null
distribution unchanged (:mod:`kmtests.problems.schemes`); it computes nothing.

* :class:`TwoSampleProblem` — two samples, pooled (or their pooled Gram matrix),
  arranged by :class:`~kmtests.problems.schemes.Split`;
* :class:`IndependenceProblem` — two paired variables (each its data or its Gram
  matrix), arranged by :class:`~kmtests.problems.schemes.Pairing`.

pandas inputs are matched by name, never by position: two DataFrames compared
column by column must have the same columns (``y``'s are put in ``x``'s order),
and paired pandas variables are paired by their index labels (``y`` is put in
``x``'s order; different labels are an error).
"""

from __future__ import annotations

import dataclasses

import hashlib
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np

from .._gram import check_symmetric
from .._validation import as_sample, check_positive_int, check_same_dim
from .._serial import auto_length, lag1_evidence, paired_lag1_evidence
from ..kernels import Precomputed, _unit
from ._base import Problem, u_form_for_uniform_weights
from .conventions import prepare_data
from .schemes import Blocks, KWay, Pairing, Scheme, Split, Within

__all__ = ["IndependenceProblem", "KSampleProblem", "TwoSampleProblem", "Variable",
           "content_key", "data_label", "k_sample_problem", "refuse_omitted",
           "restricted",
           "independence_problem", "two_sample_problem"]


def _is_pandas(data: Any) -> bool:
    return type(data).__module__.split(".")[0] == "pandas" and hasattr(data, "to_numpy")


def data_label(data: Any, role: str) -> str:
    """How the report names an input: a pandas Series' name or a DataFrame's columns."""
    name = getattr(data, "name", None)
    if _is_pandas(data):
        if hasattr(data, "columns"):
            cols = [str(c) for c in data.columns]
            shown = ", ".join(cols[:4]) + (", ..." if len(cols) > 4 else "")
            return f"{role}[{shown}]" if cols else role
        if name is not None:
            return str(name)
    return role


def column_names(data: Any, series: bool = True) -> tuple[str, ...]:
    """A DataFrame's column names (a named Series: its name, if `series`); () for other
    inputs."""
    if _is_pandas(data):
        if hasattr(data, "columns"):
            return tuple(str(c) for c in data.columns)
        if series and getattr(data, "name", None) is not None:
            return (str(data.name),)
    return ()


def sample_label(data: Any, role: str) -> str:
    """How a picture's legend names a sample: a Series' name, else `role`."""
    name = getattr(data, "name", None)
    if _is_pandas(data) and not hasattr(data, "columns") and name is not None:
        return str(name)
    return role


def align_columns(x: Any, y: Any) -> Any:
    """`y` with its columns in `x`'s order when both are DataFrames (matched by name).

    Raises when the two DataFrames do not have the same column labels: their
    columns would otherwise be compared by position.
    """
    if not (_is_pandas(x) and _is_pandas(y) and hasattr(x, "columns")
            and hasattr(y, "columns")):
        return y
    cx, cy = list(x.columns), list(y.columns)
    if cx == cy:
        return y
    if len(set(cx)) == len(cx) and set(cx) == set(cy) and len(cy) == len(cx):
        return y[cx]
    only_x = [c for c in cx if c not in set(cy)]
    only_y = [c for c in cy if c not in set(cx)]
    raise ValueError(
        "`x` and `y` are DataFrames with different columns (only in x: "
        f"{only_x or '-'}; only in y: {only_y or '-'}): their columns are compared by name. "
        "Select or rename the same columns in both (or pass arrays to compare them by "
        "position).")


def align_index(x: Any, y: Any, names: tuple[str, str] = ("x", "y")) -> Any:
    """`y` in `x`'s row order when both are pandas objects (pairs matched by index label).

    Raises when the index labels differ as sets (or repeat): the pairing would
    otherwise be by position, which pandas users do not expect. `names` are the
    arguments' names in the message.
    """
    if not (_is_pandas(x) and _is_pandas(y)):
        return y
    ix, iy = x.index, y.index
    if ix.equals(iy):
        return y
    if ix.is_unique and iy.is_unique and len(ix) == len(iy) and set(ix) == set(iy):
        return y.loc[ix]
    a, b = names
    raise ValueError(
        f"`{a}` and `{b}` are pandas objects with different index labels: paired "
        f"observations are matched by their index. Align them (e.g. `{b} = {b}.loc[{a}.index]`), "
        "or drop the labels to pair them by position (`.reset_index(drop=True)` on all, or "
        "pass arrays).")


@dataclass(frozen=True, eq=False)
class TwoSampleProblem(Problem):
    """Two samples: the pooled data ``z`` (x first) or the pooled Gram matrix ``K``.

    Attributes
    ----------
    z : ndarray or None
        The pooled sample (``n_x + n_y`` rows; None when the Gram matrix is given).
    K : ndarray or None
        The pooled Gram matrix (``kernel="precomputed"``).
    n_x, n_y : int
    data_name : str
    """

    z: np.ndarray | None
    K: np.ndarray | None
    n_x: int
    n_y: int
    data_name: str = "x and y"
    _scheme: Scheme | None = field(default=None, repr=False)
    #: what the input conventions did (observations left out by nan_policy='omit')
    notes: tuple[str, ...] = ()
    #: the data's column names by role (pandas input; empty otherwise) and the samples'
    #: names for pictures
    columns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    labels: tuple[str, ...] = ("x", "y")
    #: the samples' pandas index labels (x's, y's; None for other input): `strata` given
    #: as pandas objects are matched to them
    index: tuple[Any, Any] | None = field(default=None, repr=False)
    #: two samples also keep their null under swaps within pairs (method='swap')
    draws_kept: ClassVar[frozenset[str]] = Problem.draws_kept | {"pair swaps"}
    kind: ClassVar[str] = "two_sample"
    roles: ClassVar[tuple[str, ...]] = ("kernel",)

    @classmethod
    def from_data(cls, data: tuple[Any, ...], kernels: Mapping[str, Any], *,
                  data_name: str | None, axis: Any, nan_policy: Any) -> "TwoSampleProblem":
        return two_sample_problem(*data, precomputed=isinstance(kernels["kernel"], Precomputed),
                                  data_name=data_name, axis=axis, nan_policy=nan_policy)

    @classmethod
    def default_statistic(cls, estimator: Any) -> str:
        return u_form_for_uniform_weights(estimator)

    def restricted(self, strata: Any = None, blocks: Any = None) -> "TwoSampleProblem":
        return restricted(self, strata, blocks)

    def serial_evidence(self) -> tuple[Any, ...] | None:
        return None if self.z is None else lag1_evidence(self.z, (self.n_x, self.n_y))

    @property
    def n(self) -> int:
        return self.n_x + self.n_y

    @property
    def scheme(self) -> Scheme:
        return self._scheme if self._scheme is not None else Split(self.n_x, self.n_y)

    @property
    def sizes(self) -> dict[str, int]:
        return {"n_x": self.n_x, "n_y": self.n_y}

    @property
    def precomputed(self) -> bool:
        return self.z is None

    @property
    def dims(self) -> dict[str, int]:
        """Columns of the data by role (0 for a Gram matrix)."""
        return {"kernel": 0 if self.z is None else int(self.z.shape[1])}

    def with_data(self, z: np.ndarray, n_x: int, n_y: int) -> "TwoSampleProblem":
        """The same problem on other data (e.g. after points were held out)."""
        if self._scheme is not None:
            raise ValueError("points cannot be held out of a stratified or blocked "
                             "permutation design (covariance='split' with `strata` or "
                             "`blocks`); use covariance='pooled'.")
        return TwoSampleProblem(z, None, n_x, n_y, self.data_name, notes=self.notes,
                                columns=self.columns, labels=self.labels)


@dataclass(frozen=True, eq=False)
class Variable:
    """One variable of an independence problem: its data, or its Gram matrix."""

    data: np.ndarray | None
    K: np.ndarray | None = None

    @property
    def n(self) -> int:
        arr = self.data if self.data is not None else self.K
        assert arr is not None
        return int(arr.shape[0])

    @property
    def values(self) -> np.ndarray:
        """The data, or the Gram matrix when it was given."""
        out = self.data if self.data is not None else self.K
        assert out is not None
        return out


@dataclass(frozen=True, eq=False)
class IndependenceProblem(Problem):
    """Two paired variables (rows of `x` paired with rows of `y`)."""

    x: Variable
    y: Variable
    data_name: str = "x and y"
    kind: ClassVar[str] = "independence"
    roles: ClassVar[tuple[str, ...]] = ("x", "y")
    engine_scheme: ClassVar[str] = "pairing"
    kernel_keywords: ClassVar[Mapping[str, tuple[str, str]]] = {
        "x": ("kernel_x", "bandwidth_x"), "y": ("kernel_y", "bandwidth_y")}

    @classmethod
    def from_data(cls, data: tuple[Any, ...], kernels: Mapping[str, Any], *,
                  data_name: str | None, axis: Any, nan_policy: Any) -> "IndependenceProblem":
        return independence_problem(*data, precomputed_x=isinstance(kernels["x"], Precomputed),
                                    precomputed_y=isinstance(kernels["y"], Precomputed),
                                    data_name=data_name, axis=axis, nan_policy=nan_policy)

    def restricted(self, strata: Any = None, blocks: Any = None) -> "IndependenceProblem":
        return restricted(self, strata, blocks)

    def serial_evidence(self) -> tuple[Any, ...] | None:
        if self.x.data is None or self.y.data is None:
            return None
        return paired_lag1_evidence(self.x.data, self.y.data)
    _scheme: Scheme | None = field(default=None, repr=False)
    #: what the input conventions did (observations left out by nan_policy='omit')
    notes: tuple[str, ...] = ()
    #: the variables' column names (pandas input; empty otherwise) and their names
    columns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    labels: tuple[str, ...] = ("x", "y")
    #: the pairs' pandas index labels (None for other input): `strata` given as a pandas
    #: object is matched to them
    index: Any = field(default=None, repr=False)

    @property
    def n(self) -> int:
        return self.x.n

    @property
    def scheme(self) -> Scheme:
        return self._scheme if self._scheme is not None else Pairing(self.n)

    @property
    def sizes(self) -> dict[str, int]:
        return {"n": self.n}

    @property
    def precomputed(self) -> bool:
        return self.x.data is None or self.y.data is None

    @property
    def dims(self) -> dict[str, int]:
        return {role: 0 if v.data is None else int(v.data.shape[1])
                for role, v in (("x", self.x), ("y", self.y))}

    def with_rows(self, rows: np.ndarray) -> "IndependenceProblem":
        """The same problem on some of its pairs (e.g. after training pairs were held
        out)."""
        if self._scheme is not None or self.x.data is None or self.y.data is None:
            raise ValueError("pairs cannot be held out of a stratified or blocked "
                             "permutation design, or of precomputed kernels.")
        return IndependenceProblem(Variable(self.x.data[rows]), Variable(self.y.data[rows]),
                                   self.data_name, columns=self.columns, labels=self.labels)


def two_sample_problem(x: Any, y: Any, *, precomputed: bool = False,
                       data_name: str | None = None, axis: Any = 0,
                       nan_policy: Any = "raise") -> TwoSampleProblem:
    """Validate two samples (or a pooled Gram matrix and ``n_x``) into a problem, with the
    input conventions `axis` and `nan_policy` (:mod:`kmtests.problems.conventions`)."""
    if precomputed:
        (x,), _ = prepare_data([x], ["x"], axis=axis, nan_policy=nan_policy, paired=False,
                               gram=[True])
        K = as_sample(x, "x", min_size=4)
        if K.shape[0] != K.shape[1]:
            raise ValueError("with kernel='precomputed', `x` must be the square pooled Gram "
                             f"matrix; got shape {K.shape}.")
        K = check_symmetric(K, "with kernel='precomputed', `x`")
        if isinstance(y, (bool, np.bool_)) or not isinstance(y, (int, np.integer)):
            raise TypeError("with kernel='precomputed', `y` must be the integer size of the "
                            "first sample (its rows come first in `x`).")
        n_x = int(y)
        n_y = K.shape[0] - n_x
        if n_x < 2 or n_y < 2:
            raise ValueError("with kernel='precomputed', each sample must have at least 2 "
                             f"observations; got {n_x} and {n_y}.")
        return TwoSampleProblem(None, K, n_x, n_y, data_name or "x and y")
    (x, y), notes = prepare_data([x, y], ["x", "y"], axis=axis, nan_policy=nan_policy,
                                 paired=False)
    name = data_name or f"{data_label(x, 'x')} and {data_label(y, 'y')}"
    y = align_columns(x, y)
    xa, ya = as_sample(x, "x"), as_sample(y, "y")
    check_same_dim(xa, ya)
    cols = column_names(x, series=False)  # a Series' name names the sample
    return TwoSampleProblem(np.vstack([xa, ya]), None, xa.shape[0], ya.shape[0], name,
                            notes=tuple(notes),
                            columns={"x": cols} if len(cols) == xa.shape[1] else {},
                            labels=(sample_label(x, "x"), sample_label(y, "y")),
                            index=(index_of(x), index_of(y)))


def _variable(data: Any, name: str, precomputed: bool) -> Variable:
    if precomputed:
        K = as_sample(data, name, min_size=2)
        if K.shape[0] != K.shape[1]:
            raise ValueError(f"with kernel_{name}='precomputed', `{name}` must be a square "
                             f"symmetric Gram matrix; got shape {K.shape}.")
        return Variable(None, check_symmetric(K, f"with kernel_{name}='precomputed', `{name}`"))
    return Variable(as_sample(data, name))


def independence_problem(x: Any, y: Any, *, precomputed_x: bool = False,
                         precomputed_y: bool = False, data_name: str | None = None,
                         min_size: int = 2, axis: Any = 0, nan_policy: Any = "raise"
                         ) -> IndependenceProblem:
    """Validate two paired variables (or their Gram matrices) into a problem, with the
    input conventions `axis` and `nan_policy` (:mod:`kmtests.problems.conventions`: a pair
    with a missing value is left out as a whole)."""
    (x, y), notes = prepare_data([x, y], ["x", "y"], axis=axis, nan_policy=nan_policy,
                                 paired=True, gram=[precomputed_x, precomputed_y],
                                 align=align_index)
    name = data_name or f"{data_label(x, 'x')} and {data_label(y, 'y')}"
    if not (precomputed_x or precomputed_y):
        y = align_index(x, y)
    vx = _variable(x, "x", precomputed_x)
    vy = _variable(y, "y", precomputed_y)
    if vx.n != vy.n:
        raise ValueError("`x` and `y` must have the same number of observations (paired "
                         f"data); got {vx.n} and {vy.n}.")
    if vx.n < min_size:
        raise ValueError(f"this statistic needs at least {min_size} observations; got {vx.n}.")
    columns = {role: cols for role, cols, v in (("x", column_names(x), vx),
                                                ("y", column_names(y), vy))
               if v.data is not None and cols and len(cols) == v.data.shape[1]}
    return IndependenceProblem(vx, vy, name, notes=tuple(notes), columns=columns,
                               labels=(sample_label(x, "x"), sample_label(y, "y")),
                               index=index_of(x) if index_of(x) is not None else index_of(y))


@dataclass(frozen=True, eq=False)
class KSampleProblem(Problem):
    """``k`` samples pooled (the first sample's rows first), arranged by
    :class:`~kmtests.problems.schemes.KWay`."""

    z: np.ndarray
    sizes_: tuple[int, ...]
    data_name: str = "the samples"
    #: what the input conventions did (observations left out by nan_policy='omit')
    notes: tuple[str, ...] = ()
    kind: ClassVar[str] = "k_sample"
    roles: ClassVar[tuple[str, ...]] = ("kernel",)
    precomputed: ClassVar[bool] = False

    @classmethod
    def from_data(cls, data: tuple[Any, ...], kernels: Mapping[str, Any], *,
                  data_name: str | None, axis: Any, nan_policy: Any) -> "KSampleProblem":
        if isinstance(kernels["kernel"], Precomputed):
            raise ValueError("k_sample_test computes the kernel from the samples; a "
                             "precomputed Gram matrix is not supported (use the data).")
        return k_sample_problem(data, data_name=data_name, axis=axis, nan_policy=nan_policy)

    @classmethod
    def default_statistic(cls, estimator: Any) -> str:
        return u_form_for_uniform_weights(estimator)

    @property
    def n(self) -> int:
        return int(sum(self.sizes_))

    @property
    def k(self) -> int:
        return len(self.sizes_)

    @property
    def scheme(self) -> Scheme:
        return KWay(self.sizes_)

    @property
    def sizes(self) -> dict[str, int]:
        return {f"n_{g + 1}": int(s) for g, s in enumerate(self.sizes_)}

    @property
    def offsets(self) -> np.ndarray:
        """Where each group starts in a row of the scheme (and its end)."""
        return np.concatenate([[0], np.cumsum(self.sizes_)]).astype(np.int64)

    @property
    def dims(self) -> dict[str, int]:
        return {"kernel": int(self.z.shape[1])}

    def sample(self, g: int) -> np.ndarray:
        """The data of group `g`."""
        o = self.offsets
        return self.z[o[g]:o[g + 1]]


def k_sample_problem(samples: tuple[Any, ...], *, data_name: str | None = None,
                     axis: Any = 0, nan_policy: Any = "raise") -> KSampleProblem:
    """Validate ``k >= 2`` samples (same number of columns; DataFrames matched by column
    name) into a problem, with the input conventions `axis` and `nan_policy`
    (:mod:`kmtests.problems.conventions`)."""
    if len(samples) == 1 and isinstance(samples[0], (list, tuple)) and len(samples[0]) >= 2 \
            and all(np.ndim(s) >= 1 and not np.isscalar(s) for s in samples[0]):
        raise TypeError("pass the samples as separate arguments: k_sample_test(*samples).")
    if len(samples) < 2:
        raise ValueError(f"a k-sample test needs at least 2 samples; got {len(samples)}.")
    prepared, notes = prepare_data(list(samples), [f"x{g + 1}" for g in range(len(samples))],
                                   axis=axis, nan_policy=nan_policy, paired=False)
    samples = tuple(prepared)
    names = [data_label(s, f"x{g + 1}") for g, s in enumerate(samples)]
    first = samples[0]
    arrays = []
    for g, s in enumerate(samples):
        s = align_columns(first, s) if g else s
        arrays.append(as_sample(s, f"x{g + 1}"))
    for g, a in enumerate(arrays[1:], start=2):
        check_same_dim(arrays[0], a, ("x1", f"x{g}"))
    name = data_name or (", ".join(names[:-1]) + " and " + names[-1])
    return KSampleProblem(np.vstack(arrays), tuple(int(a.shape[0]) for a in arrays), name,
                          notes=tuple(notes))


def index_of(data: Any) -> Any:
    """A pandas object's index (the labels its rows are paired by), else None."""
    return data.index if _is_pandas(data) else None


def by_label(strata: Any, index: Any, what: str = "the data") -> Any:
    """`strata` in the order of `index` when both carry labels (a pandas Series or
    one-column DataFrame and a pandas index): the labels pair them, as they pair x, y
    and z. Raises when the labels differ as sets (or repeat); other input is paired by
    position."""
    if index is None or not _is_pandas(strata):
        return strata
    if hasattr(strata, "columns"):
        if strata.shape[1] != 1:
            raise ValueError(f"`strata` must give one label per observation (a Series or a "
                             f"one-column DataFrame); got {strata.shape[1]} columns.")
        strata = strata.iloc[:, 0]
    own = strata.index
    if own.equals(index):
        return strata
    if own.is_unique and index.is_unique and len(own) == len(index) and set(own) == set(index):
        return strata.loc[index]
    raise ValueError(
        f"`strata` is a pandas object whose index labels differ from those of {what}: "
        "observations are matched by their index labels. Align it (e.g. `strata = "
        "strata.loc[x.index]`), or pass its values (`strata.to_numpy()`) to pair it by "
        "position.")


def _labels(strata: Any, n: int, name: str) -> np.ndarray:
    arr = np.asarray(strata)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"`strata` must give one label per {name} ({n}); got shape "
                         f"{arr.shape}.")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError("`strata` must not contain NaN or infinite labels.")
    return arr


def _block_length(blocks: Any) -> int:
    b = check_positive_int(blocks, "blocks")
    if b < 2:
        raise ValueError(f"`blocks` must be a block length of at least 2; got {b}.")
    return b


def _is_auto(blocks: Any) -> bool:
    return isinstance(blocks, str) and blocks.lower() == "auto"


def _auto(problem: Any, arrays: list[tuple[Any, Any]], windows: tuple[int, ...]) -> Any:
    """The automatic block length of `problem` from its (data, Gram matrix) pairs (a
    precomputed Gram matrix: its first principal components stand for the data)."""

    if problem.n < 16:
        raise ValueError("blocks='auto' needs at least 16 observations to estimate the "
                         f"dependence; got {problem.n}. Give a block length.")
    series = []
    for data, gram in arrays:
        if data is not None:
            a = np.asarray(data, dtype=np.float64)
        else:  # a Gram matrix: the first principal components of its centred form
            g = np.asarray(gram, dtype=np.float64)
            c = g - g.mean(axis=0) - g.mean(axis=1)[:, None] + g.mean()
            vals, vecs = np.linalg.eigh(c)
            top = np.argsort(vals)[::-1][:3]
            a = vecs[:, top] * np.sqrt(np.maximum(vals[top], 0.0))
        series.append(a)
    return auto_length(series, windows)


def auto_length_of(problem: Any) -> Any:
    """The automatic lengths (:class:`kmtests._serial.AutoLength`) of a two-sample
    (two windows of one series) or independence problem."""
    if isinstance(problem, TwoSampleProblem):
        return _auto(problem, [(problem.z, problem.K)], (problem.n_x, problem.n_y))
    if isinstance(problem, IndependenceProblem):
        return _auto(problem, [(v.data, v.K) for v in (problem.x, problem.y)], ())
    raise ValueError(f"an automatic length applies to two-sample and independence problems; "
                     f"got a {problem.kind} problem: give `length`.")


def restricted(problem: Any, strata: Any = None, blocks: Any = None) -> Any:
    """The problem with its permutations restricted to strata or blocks (or as it is).

    `strata` (one label per observation: for two samples, a sequence of the two
    samples' labels or one label per pooled point) keeps every arrangement inside
    the strata: a paired design (one stratum per pair), clustered data.
    `blocks` (a block length) permutes blocks of consecutive observations: time
    series (for two samples both sizes must be multiples of it). ``blocks="auto"``
    chooses the length from the data (:func:`kmtests._serial.auto_length`: the
    Politis-White rule on the data's columns and kernel features; two samples are
    then two windows of one series, and need not be multiples of it).
    """
    if strata is None and blocks is None:
        return problem
    if strata is not None and blocks is not None:
        raise ValueError("give `strata` or `blocks`, not both.")
    refuse_omitted(problem, "strata" if strata is not None else "blocks")
    if isinstance(problem, TwoSampleProblem):
        if strata is not None:
            ix, iy = problem.index if problem.index is not None else (None, None)
            if isinstance(strata, (tuple, list)) and len(strata) == 2 and all(
                    np.ndim(s) == 1 for s in strata):
                sx = _labels(by_label(strata[0], ix, "x"), problem.n_x, "point of x")
                sy = _labels(by_label(strata[1], iy, "y"), problem.n_y, "point of y")
                labels = np.concatenate([sx, sy])
            else:
                pooled = (ix.append(iy) if ix is not None and iy is not None
                          and ix.append(iy).is_unique else None)
                labels = _labels(by_label(strata, pooled, "x and y (x first)"), problem.n,
                                 "pooled point (x first)")
            scheme: Scheme = Within(labels, n_x=problem.n_x)
        elif _is_auto(blocks):
            auto = auto_length_of(problem)
            # random rotations too (eight blocks alone split two windows 35 ways),
            # unless the dependence was persistent (AutoLength.rotations)
            scheme = Blocks(problem.n, auto.block, n_x=problem.n_x, auto=auto,
                            offsets=auto.rotations)
        else:
            b = _block_length(blocks)
            if problem.n_x % b or problem.n_y % b:
                raise ValueError(f"`blocks` must divide both sample sizes ({problem.n_x} and "
                                 f"{problem.n_y}) so that the blocks redistributed between "
                                 f"the samples keep their sizes; got {b}.")
            scheme = Blocks(problem.n, b, n_x=problem.n_x)
        return dataclasses.replace(problem, _scheme=scheme)
    if strata is not None:
        scheme = Within(_labels(by_label(strata, problem.index, "x and y"), problem.n,
                                "pair"))
    elif _is_auto(blocks):
        auto = auto_length_of(problem)
        scheme = Blocks(problem.n, auto.block, auto=auto)
    else:
        b = _block_length(blocks)
        if b >= problem.n:
            raise ValueError(f"`blocks` must be shorter than the series ({problem.n}); got "
                             f"{b}.")
        scheme = Blocks(problem.n, b)
    return dataclasses.replace(problem, _scheme=scheme)


def refuse_omitted(problem: Any, what: str) -> None:
    """Refuse `strata` or `blocks` on data whose missing observations were left out
    (``nan_policy="omit"``): they label the observations as given, and a block of
    consecutive observations would span the gap."""
    if problem.notes:
        raise ValueError(f"`{what}` labels the observations as given, and nan_policy='omit' "
                         "left some out (missing values): remove the observations with a "
                         f"missing value, and their {what} labels, before the test (or fill "
                         "them).")


def content_key(a: np.ndarray) -> bytes:
    """A digest of the *set* of rows of `a`, which a translation of the data, a scaling by
    a power of two and a reordering of the rows leave unchanged.

    The rows are centred at their mean (two passes) and scaled to [-1, 1] by a power of
    two, rounded to single precision (so the rounding of the centring cannot change the
    digest), and sorted lexicographically. Choices made from it (which generator draws a
    variable's random features) are then functions of what the permutations leave
    unchanged (exact tests) and of the data's shape, not of their offset or order.
    """
    arr = np.ascontiguousarray(a, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    unit = _unit(arr)[0].astype(np.float32) if arr.size else arr.astype(np.float32)
    order = np.lexsort(unit.T[::-1]) if unit.size else np.arange(unit.shape[0])
    rows = np.ascontiguousarray(unit[order])
    return hashlib.sha256(repr(arr.shape).encode() + rows.tobytes()).digest()
