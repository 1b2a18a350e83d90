r"""Marginal transforms of the conditioning variable ``z`` (``z_transform=``).

``X`` and ``Y`` are independent given ``Z`` if and only if they are independent given
``g(Z)`` for any invertible map ``g``: the conditional test may regress on a transform
of ``z`` without changing its null. A coordinate-wise monotone transform that makes
each coordinate's marginal well behaved helps the regressions on ``z``: with
heavy-tailed coordinates a Gaussian kernel whose width suits the bulk leaves the few
far-out points unregressed (their kernel row is nearly a unit vector) and one whose
width suits them blurs the bulk — the level of the test is lost either way
(``benchmarks/README.md``, "Multivariate z").

* ``"normal_scores"``: each coordinate replaced by ``Phi^-1(r / (n + 1))``, with ``r``
  its ranks (ties: their average rank) — the van der Waerden scores;
* ``"rank"``: each coordinate replaced by ``r / (n + 1)`` (uniform scores);
* ``"none"``: ``z`` as given.

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

__all__ = ["AUTO_FROM_DIMENSION", "Z_TRANSFORMS", "marginal_transform", "resolve_z_transform"]

#: the values of ``z_transform``
Z_TRANSFORMS = ("auto", "none", "normal_scores", "rank")

#: ``z_transform="auto"`` takes the normal scores of z from this dimension of z on, and z as
#: given below (benchmarks/README.md, "Multivariate z": the measurements this rests on)
AUTO_FROM_DIMENSION = 2


def resolve_z_transform(kind: str, dimension: int) -> str:
    """The transform ``z_transform=kind`` applies to a z of `dimension` columns
    (``"auto"``: ``"normal_scores"`` from :data:`AUTO_FROM_DIMENSION` on, else
    ``"none"``).

    Examples
    --------
    >>> from kmtests.problems.marginal import resolve_z_transform
    >>> resolve_z_transform("auto", 1), resolve_z_transform("auto", 3)
    ('none', 'normal_scores')
    """
    kind = check_choice(kind, "z_transform", Z_TRANSFORMS)
    if kind == "auto":
        return "normal_scores" if dimension >= AUTO_FROM_DIMENSION else "none"
    return kind


def marginal_transform(z: np.ndarray, kind: str) -> np.ndarray:
    """Each column of `z` (n x d) replaced by its scores (see the module docs).

    Parameters
    ----------
    z : ndarray, shape (n, d)
    kind : {"none", "normal_scores", "rank"}
        ``"auto"`` is resolved by the caller (:func:`resolve_z_transform`).

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
    kind = check_choice(kind, "z_transform", Z_TRANSFORMS[1:])
    if kind == "none":
        return z
    from scipy.stats import rankdata

    z = np.asarray(z, dtype=np.float64)
    u = rankdata(z, method="average", axis=0) / (z.shape[0] + 1.0)
    if kind == "rank":
        return np.asarray(u, dtype=np.float64)
    from scipy.special import ndtri

    return np.asarray(ndtri(u), dtype=np.float64)
