r"""Marginal transforms of the conditioning variable ``z`` (``z_transform=``).

``X`` and ``Y`` are independent given ``Z`` if and only if they are independent given
``g(Z)`` for any invertible map ``g``: the conditional test may regress on a transform
of ``z`` without changing its null. The idea measured: with heavy-tailed coordinates a
Gaussian kernel whose width suits the bulk leaves the far-out points unregressed and one
whose width suits them blurs the bulk; a coordinate-wise monotone transform to
well-behaved marginals removes the tails.

* ``"normal_scores"``: each coordinate replaced by ``Phi^-1(r / (n + 1))``, with ``r``
  its ranks (ties: their average rank) — the van der Waerden scores;
* ``"rank"``: each coordinate replaced by ``r / (n + 1)`` (uniform scores);
* ``"none"``: ``z`` as given (the default).

Measured on the multivariate-z designs of ``benchmarks/README.md`` ("Multivariate
z"), the transform did not keep the test's level where the default did not: heavy tails
of ``z`` then move into the regression function, which becomes steep where the scores
are extreme. It is offered for data whose scale is arbitrary (the test is then
invariant under increasing maps of each coordinate), not as a fix for the level.

On the sample the map is the empirical one (a function of the ranks), so it is
invariant under any increasing map of a coordinate: the test's p-value with the
transform on does not change when a coordinate of ``z`` is replaced by, say, its
exponential. The ranks are taken on the whole sample (the map is then a function of
all of z, not of one point's; the statistic conditions on z, and permutations within
strata of ``z`` keep the ranks).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_choice

__all__ = ["Z_TRANSFORMS", "marginal_transform"]

#: the values of ``z_transform`` (``"none"``: the default)
Z_TRANSFORMS = ("none", "normal_scores", "rank")


def marginal_transform(z: np.ndarray, kind: str) -> np.ndarray:
    """Each column of `z` (n x d) replaced by its scores (see the module docs).

    Parameters
    ----------
    z : ndarray, shape (n, d)
    kind : {"none", "normal_scores", "rank"}

    Returns
    -------
    ndarray, shape (n, d)
        `z` itself for ``"none"``, else a new array of floats.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.problems.marginal import marginal_transform
    >>> z = np.array([[10.0], [-3.0], [0.5], [0.5]])
    >>> marginal_transform(z, "rank").ravel()
    array([0.8, 0.2, 0.5, 0.5])
    >>> np.round(marginal_transform(z, "normal_scores").ravel(), 4)
    array([ 0.8416, -0.8416,  0.    ,  0.    ])
    """
    kind = check_choice(kind, "z_transform", Z_TRANSFORMS)
    if kind == "none":
        return z
    from scipy.stats import rankdata

    z = np.asarray(z, dtype=np.float64)
    u = rankdata(z, method="average", axis=0) / (z.shape[0] + 1.0)
    if kind == "rank":
        return np.asarray(u, dtype=np.float64)
    from scipy.special import ndtri

    return np.asarray(ndtri(u), dtype=np.float64)
