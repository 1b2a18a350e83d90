r"""The joint independence test of ``d`` variables (dHSIC): the face.

:func:`joint_independence_test` maps its keywords to a problem (the ``d``
variables, :mod:`kmtests.problems.joint`), the statistic dHSIC
(:mod:`kmtests.statistics.dhsic`), the in-memory engine and a null method
(permutation, bootstrap or gamma), and runs them once
(:func:`kmtests._driver.run`). :func:`dhsic` is the statistic alone, and
:func:`dhsic_bandwidth` the R package's own median-heuristic bandwidth.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

import numpy as np

from . import _driver
from ._typing import ArrayLike, SeedLike
from ._validation import as_sample, check_choice
from .engines import Engine, Exact
from .estimators import KME
from .kernels import Kernel, Precomputed, resolve_kernel
from .null import GammaMethod, JointGammaMethod, NullMethod, resolve_method
from .problems.conventions import check_alternative
from .problems.joint import JointProblem, joint_problem, role_names
from .results import JointIndependenceResult
from .statistics import Statistic, resolve_statistic

__all__ = ["dhsic", "dhsic_bandwidth", "joint_independence_test"]

#: the null methods of the joint test, by name
_METHODS = ("permutation", "bootstrap", "gamma")


def _per_variable(value: Any, d: int, name: str, single: bool) -> list[Any]:
    """`value` for each of `d` variables: one for all (`single`), or a sequence of `d`."""
    if single:
        return [value] * d
    items = list(value)
    if len(items) != d:
        raise ValueError(f"`{name}` must be one value for all variables or one per variable "
                         f"({d}); got {len(items)}.")
    return items


def _kernels(kernels: Any, bandwidths: Any, d: int) -> list[Kernel]:
    """The kernel of each variable, with its bandwidth (nothing fitted yet)."""
    ks = _per_variable(kernels, d, "kernels",
                       isinstance(kernels, (str, Kernel)) or callable(kernels))
    bws = _per_variable(bandwidths, d, "bandwidths",
                        bandwidths is None or isinstance(bandwidths, str)
                        or np.ndim(bandwidths) == 0)
    return [resolve_kernel(k, bw, name=f"kernels[{i}]", bandwidth_name=f"bandwidths[{i}]")
            for i, (k, bw) in enumerate(zip(ks, bws))]


def _joint_iv(variables: Sequence[Any], kernels: Any, bandwidths: Any,
              data_name: str | None, axis: Any = 0, nan_policy: Any = "raise"
              ) -> tuple[JointProblem, Statistic]:
    """Validate the variables and build the statistic (nothing is computed)."""
    d = len(variables)
    if d < 2:
        raise ValueError(f"joint independence needs at least 2 variables; got {d}.")
    ks = _kernels(kernels, bandwidths, d)
    problem = joint_problem(variables, precomputed=[isinstance(k, Precomputed) for k in ks],
                            data_name=data_name, axis=axis, nan_policy=nan_policy)
    stat = resolve_statistic("dhsic", "joint", kernels=dict(zip(role_names(d), ks)),
                             estimator=KME(), options={})
    return problem, stat


def _joint_method(method: Any, n_resamples: Any, batch: Any, rng: SeedLike, n_jobs: Any,
                  progress: Any) -> NullMethod:
    """``method=`` of the joint test -> a null method object."""
    if isinstance(method, GammaMethod):
        raise ValueError("GammaMethod approximates the nulls of MMD^2_b and HSIC_b; the gamma "
                         "approximation of dHSIC is method='gamma' (JointGammaMethod).")
    if isinstance(method, NullMethod):
        return resolve_method(method, n_resamples=n_resamples, batch=batch, rng=rng,
                              n_jobs=n_jobs, progress=progress)
    name = check_choice("permutation" if method is None else method, "method", _METHODS)
    if name != "gamma":
        return resolve_method(name, n_resamples=n_resamples, batch=batch, rng=rng,
                              n_jobs=n_jobs, progress=progress)
    given = {"n_resamples": n_resamples, "batch": batch, "rng": rng, "n_jobs": n_jobs,
             "progress": progress}
    clash = [f"`{k}`" for k, v in given.items() if v is not None]
    if clash:
        raise ValueError(f"method='gamma' draws nothing: {', '.join(clash)} do(es) not "
                         "apply.")
    return JointGammaMethod()


def dhsic_bandwidth(x: ArrayLike) -> float:
    """The Gaussian bandwidth of the R package dHSIC's median heuristic.

    ``sqrt(m / 2)``, ``m`` the upper median of the squared distances between the
    pairs of points (the element ``floor(N / 2)`` of the ``N = n (n - 1) / 2``
    sorted values, counted from 0); 0.001 if that is 0. The Gaussian kernel
    ``exp(-||x - y||^2 / (2 bw^2))`` is then ``exp(-||x - y||^2 / m)``.

    kmtests' own rule (``bandwidth="median"``) is ``sqrt(med)``, ``med`` the
    median of the squared distances (the mean of the two middle values for an
    even number of pairs), and takes the median of the non-zero distances when
    more than half of them are zero: its bandwidth is about ``sqrt(2)`` times
    R's. Above 1000 points R uses a random subsample of 1000 (from R's random
    stream); here the seeded, order-free subsample of kmtests' median
    heuristic, so the value is a function of the set of points (and the tests
    stay exact), but not R's.

    Parameters
    ----------
    x : array_like, shape (n,) or (n, p)

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.joint import dhsic_bandwidth
    >>> print(f"{dhsic_bandwidth(np.array([0.0, 1.0, 3.0])):.6f}")
    1.414214
    """
    from scipy.spatial.distance import pdist

    from .kernels import _canonical_subsample

    z = _canonical_subsample(as_sample(x, "x"), 1000)
    d2 = pdist(z, "sqeuclidean")
    mid = d2.size // 2
    m = float(np.partition(d2, mid)[mid])
    bw = float(np.sqrt(0.5 * m))
    return bw if bw > 0 else 0.001


def dhsic(*variables: ArrayLike, kernels: Any = "gaussian", bandwidths: Any = "median",
          nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0) -> float:
    """The d-variable Hilbert-Schmidt independence criterion ``dHSIC_n`` of the variables.

    Parameters are as in :func:`joint_independence_test` (`nan_policy` and `axis` too).

    Returns
    -------
    float
        ``dHSIC_n``, the V-statistic of Pfister et al. (2018), as R's
        ``dHSIC::dhsic(...)$dHSIC`` (with the same kernels and bandwidths).

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests import dhsic, hsic
    >>> gen = np.random.default_rng(0)
    >>> x, y = gen.normal(size=(2, 30))
    >>> print(f"{dhsic(x, y):.6f} {hsic(x, y):.6f}")
    0.005511 0.005511
    """
    problem, stat = _joint_iv(variables, kernels, bandwidths, None, axis, nan_policy)
    return _driver.value(problem, stat, "pooled")


def joint_independence_test(
    *variables: ArrayLike,
    kernels: Any = "gaussian",
    bandwidths: Any = "median",
    method: Literal["permutation", "bootstrap", "gamma"] | NullMethod | None = None,
    n_resamples: int | None = None,
    rng: SeedLike = None,
    batch: int | None = None,
    n_jobs: int | None = None,
    progress: bool | None = None,
    data_name: str | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise",
    axis: int = 0,
) -> JointIndependenceResult:
    r"""Kernel test of joint independence of ``d >= 2`` variables (dHSIC).

    The statistic is dHSIC (Pfister et al., 2018): the squared RKHS distance
    between the embedding of the joint law of the variables and the tensor
    product of the embeddings of their marginals, estimated by the V-statistic
    ``dHSIC_n``. It is zero iff the variables are jointly independent
    (characteristic kernels), which is more than pairwise independence: three
    variables can be independent two by two and dependent together.

    Parameters
    ----------
    *variables : array_like, each shape (n,) or (n, p_k)
        The variables, observed together: row ``i`` of each is observation
        ``i`` (pandas objects are matched by index label to the first). Called
        ``x1, ..., xd`` in messages and reports. With the kernel
        ``"precomputed"``, a variable is its ``n x n`` Gram matrix.
    kernels : str, Kernel or callable, or a sequence of them
        One kernel for all variables, or one per variable (see
        :func:`kmtests.two_sample_test` for the kernels; ``"precomputed"`` for
        a variable given as its Gram matrix). Default: Gaussian.
    bandwidths : "median", float, or a sequence of them
        One bandwidth for all variables or one per variable; ``"median"`` is
        kmtests' median heuristic on each variable (which the permutations
        leave unchanged). R's dHSIC uses a bandwidth about ``sqrt(2)`` times
        smaller: :func:`dhsic_bandwidth` gives it, to match R.
    method : {"permutation", "bootstrap", "gamma"} or a method object, optional
        Null distribution, as in R's ``dhsic.test``: independent permutations
        of every variable but the first (default; exact level; all
        ``(n!)^(d-1)`` arrangements are enumerated when there are at most
        `n_resamples`), the bootstrap (each variable but the first resampled
        with replacement; approximate, :class:`~kmtests.null.BootstrapMethod`)
        or the gamma approximation with Pfister et al.'s moment estimates
        (approximate, :class:`~kmtests.null.JointGammaMethod`; at least
        ``4d - 2`` observations).
    n_resamples : int, optional
        Number of random permutations or bootstrap data sets (default 9999).
    rng : None, int, SeedSequence or Generator
        Source of the permutations or resamples; a fixed value gives the same
        p-value whatever `batch` is.
    batch : int, optional
        Arrangements evaluated per step.
    n_jobs : int, optional
        Accepted for symmetry with the other tests (threads of a resampling
        method); dHSIC's arrangements are evaluated by numpy in one thread.
    progress : bool, optional
        Show a progress bar (needs tqdm); None: only for slow tests.
    data_name : str, optional
        Name of the data for the report (default ``"x1, x2 and x3"``, or the
        names of pandas Series).
    alternative : {"greater"}
        The test is one-sided: dHSIC is 0 under joint independence and
        positive otherwise; ``"greater"`` (default) is the only value.
    nan_policy : {"raise", "omit"}
        ``"raise"`` (default) names the first missing value; ``"omit"`` leaves
        out every observation with a missing value in any variable.
    axis : {0, 1}
        The axis of 2-D data that indexes the observations (1: a column per
        observation). See :doc:`/user_guide/conventions`.

    Returns
    -------
    JointIndependenceResult
        ``statistic`` (``dHSIC_n``), ``pvalue``, ``null_distribution``,
        ``level`` (``"exact"`` or ``"approximate"``) and the base attributes.

    Raises
    ------
    ValueError
        Fewer than two variables, different numbers of observations, fewer than
        2 observations (``4d - 2`` for the gamma approximation), NaN or
        infinite values, a kernel or bandwidth list of the wrong length, a
        bandwidth for a kernel without one, a Gram matrix that is not square
        and symmetric, an unknown method, resampling options with
        ``method="gamma"``.
    TypeError
        Non-numeric data or wrongly typed options.

    Notes
    -----
    With Gram matrices ``K^1, ..., K^d``,

    .. math::

        \mathrm{dHSIC}_n = \frac{1}{n^2} \sum_{ij} \prod_k K^k_{ij}
            + \frac{1}{n^{2d}} \prod_k \sum_{ij} K^k_{ij}
            - \frac{2}{n^{d+1}} \sum_i \prod_k \sum_j K^k_{ij},

    computed from the centred Gram matrices so that it keeps its digits when
    the kernel values are nearly constant (:mod:`kmtests.statistics.dhsic`).
    For ``d = 2`` it is ``HSIC_b`` (:func:`kmtests.independence_test`). R's
    ``dhsic.test`` reports ``n dHSIC_n`` as its statistic; kmtests reports
    ``dHSIC_n`` (as R's ``dhsic``), so its gamma scale is R's divided by
    ``n``. R's default bandwidths are :func:`dhsic_bandwidth`'s; its
    ``"discrete"`` kernel is a precomputed ``K_ij = 1{x_i = x_j}``. For
    ``n < 2d`` R's ``dhsic.test`` returns ``p = 1`` without a test; the
    permutation test here is exact for any ``n >= 2``.

    References
    ----------
    .. [1] Pfister, Bühlmann, Schölkopf, Peters (2018). Kernel-based tests for
       joint independence. JRSS-B 80(1), 5-31.
    .. [2] Pfister, Peters. dHSIC: Independence Testing via Hilbert Schmidt
       Independence Criterion. R package.

    Examples
    --------
    Pairwise independent, jointly dependent (z is x xor y, plus noise):

    >>> import numpy as np
    >>> from kmtests import independence_test, joint_independence_test
    >>> gen = np.random.default_rng(0)
    >>> x, y = gen.integers(0, 2, size=(2, 100))
    >>> z = (x ^ y) + 0.3 * gen.normal(size=100)
    >>> res = joint_independence_test(x, y, z, n_resamples=999, rng=1)
    >>> print(f"dHSIC = {res.statistic:.4f}, p = {res.pvalue:.4f} ({res.level})")
    dHSIC = 0.0200, p = 0.0010 (exact)
    >>> print(f"{independence_test(x, z, n_resamples=999, rng=1).pvalue:.3f}")
    0.197
    """
    res = _driver.run(*_plan(
        variables, kernels=kernels, bandwidths=bandwidths, method=method,
        n_resamples=n_resamples, rng=rng, batch=batch, n_jobs=n_jobs, progress=progress,
        data_name=data_name, alternative=alternative, nan_policy=nan_policy, axis=axis))
    assert isinstance(res, JointIndependenceResult)
    return res


def _plan(variables: Sequence[Any], *, kernels: Any = "gaussian", bandwidths: Any = "median",
          method: Any = None, n_resamples: Any = None, rng: SeedLike = None,
          batch: Any = None, n_jobs: Any = None, progress: Any = None,
          data_name: str | None = None, alternative: Any = "greater",
          nan_policy: Any = "raise", axis: Any = 0
          ) -> tuple[JointProblem, Statistic, Engine, NullMethod, str]:
    """:func:`joint_independence_test`'s keywords -> (problem, statistic, engine, method,
    tuning)."""
    check_alternative(alternative)
    problem, stat = _joint_iv(variables, kernels, bandwidths, data_name, axis, nan_policy)
    meth = _joint_method(method, n_resamples, batch, rng, n_jobs, progress)
    return problem, stat, Exact(), meth, "pooled"
