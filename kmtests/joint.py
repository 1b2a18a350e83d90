r"""The joint independence test of ``d`` variables (dHSIC): the face.

:func:`joint_independence_test` maps its keywords to a problem (the ``d``
variables, :mod:`kmtests.problems.joint`), the statistic dHSIC
(:mod:`kmtests.statistics.dhsic`), the in-memory engine and a null method
(permutation, bootstrap or gamma), and runs them once
(:func:`kmtests._driver.run`). :func:`dhsic` is the statistic alone, and
:func:`~kmtests.kernels.dhsic_bandwidth` the R package's own median-heuristic bandwidth.
"""

from __future__ import annotations

from typing import Any, Literal

from . import _plan
from ._docs import shared_docs
from ._typing import ArrayLike, SeedLike
from .kernels import dhsic_bandwidth as dhsic_bandwidth  # its old path
from .null import NullMethod
from .problems.joint import JointProblem
from .results import JointIndependenceResult

__all__ = ["dhsic", "dhsic_bandwidth", "joint_independence_test"]


@_plan.face(JointProblem)
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
    return _plan.value(variables, locals())


@_plan.face(JointProblem)
@shared_docs
def joint_independence_test(
    *variables: ArrayLike,
    kernels: Any = "gaussian",
    bandwidths: Any = "median",
    method: Literal["permutation", "bootstrap", "gamma"] | NullMethod | None = None,
    n_resamples: int | None = None, rng: SeedLike = None, batch: int | None = None,
    n_jobs: int | None = None, progress: bool | None = None,
    data_name: str | None = None,
    alternative: Literal["greater"] = "greater",
    nan_policy: Literal["raise", "omit"] = "raise", axis: int = 0,
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
        smaller: :func:`~kmtests.kernels.dhsic_bandwidth` gives it, to match R.
    method : {"permutation", "bootstrap", "gamma"} or a method object, optional
        Null distribution, as in R's ``dhsic.test``: independent permutations
        of every variable but the first (default; exact level; all
        ``(n!)^(d-1)`` arrangements are enumerated when there are at most
        `n_resamples`), the bootstrap (each variable but the first resampled
        with replacement; approximate, :class:`~kmtests.null.BootstrapMethod`)
        or the gamma approximation with Pfister et al.'s moment estimates
        (approximate, :class:`~kmtests.null.JointGammaMethod`; at least
        ``4d - 2`` observations).
    {{resampling}}
    data_name : str, optional
        Name of the data for the report (default ``"x1, x2 and x3"``, or the
        names of pandas Series).
    {{conventions}}

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
    ``n``. R's default bandwidths are :func:`~kmtests.kernels.dhsic_bandwidth`'s; its
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
    return _plan.run(variables, locals())
