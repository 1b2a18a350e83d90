"""The papers' synthetic distributions: random mixtures of four Gaussians.

ICML §4.1, ARX §4.1.1, JMLR §6.1.2 and MKME eq. (35) all draw
``x = y + eps`` with ``y ~ sum_c pi_c N(theta_c, Sigma_c)``,
``pi = (0.05, 0.3, 0.4, 0.25)``, ``theta_cj ~ U(-10, 10)``,
``Sigma_c ~ W(2 I_d, 7)`` and ``eps ~ N(0, 0.2 I_d)`` (PAPERS.md §4.1).
"""

from __future__ import annotations

import numbers

from typing import Any, Sequence

import numpy as np

from .._typing import SeedLike
from .._validation import check_positive_int, check_rng, shown
from ..studies.groundtruth import GaussianMixture

__all__ = ["PAPERS_MIXTURE_WEIGHTS", "synthetic_mixture"]

#: The mixing weights of the papers' generator.
PAPERS_MIXTURE_WEIGHTS = (0.05, 0.3, 0.4, 0.25)


def synthetic_mixture(
    d: int, *, rng: SeedLike = None, weights: Sequence[float] = PAPERS_MIXTURE_WEIGHTS,
    mean_range: float = 10.0, wishart_scale: float = 2.0, wishart_df: int = 7,
    noise_var: float = 0.2,
) -> GaussianMixture:
    """Draw one random distribution of the papers' synthetic experiments.

    Parameters
    ----------
    d : int
        Dimension.
    rng : None, int, SeedSequence or Generator
        Source of randomness.
    weights : sequence of float
        Mixing weights; one component per weight (default: the papers' four).
    mean_range : float
        Component means are i.i.d. ``U(-mean_range, mean_range)`` per coordinate.
    wishart_scale, wishart_df : float, int
        ``Sigma_c ~ W(wishart_scale * I, wishart_df)``, drawn as
        ``wishart_scale * Z'Z`` with ``Z`` a ``(wishart_df, d)`` standard normal
        matrix, so ``E Sigma_c = wishart_scale * wishart_df * I``.
    noise_var : float
        Variance of the additive isotropic noise, folded into the covariances.

    Returns
    -------
    GaussianMixture
        The true distribution ``P = sum_c pi_c N(theta_c, Sigma_c + noise_var I)``
        of ``x``: sample it with ``P.sample(n, rng)``; its kernel means are
        known in closed form.

    Notes
    -----
    Two readings of the papers had to be decided (PAPERS.md §4.1):

    * ``N(0, 0.2 x I_d)`` is read with 0.2 as a **variance** (MATLAB
      ``mvnrnd(0, 0.2*eye(d))``), not a standard deviation.
    * A Wishart with 7 degrees of freedom is singular for ``d > 7`` (the
      figures go up to d = 100) and ``scipy.stats.wishart`` rejects
      ``df < d``; it is drawn as the sum of ``df`` outer products of
      ``N(0, 2 I)`` vectors, ``2 Z'Z`` (MATLAB ``wishrnd`` for integer df),
      of rank ``min(7, d)``. The noise makes every covariance non-singular.

    The draws are, in this order: all means (a ``(C, d)`` uniform block), then
    one ``Z`` per component. The papers redraw the distribution for each of
    their 30 repetitions.

    Examples
    --------
    >>> from kmtests.datasets import synthetic_mixture
    >>> P = synthetic_mixture(20, rng=0)
    >>> print(P.n_components, P.dim, P.weights)
    4 20 [0.05 0.3  0.4  0.25]
    >>> x = P.sample(10, rng=1)
    >>> x.shape
    (10, 20)
    """
    d = check_positive_int(d, "d")
    df = check_positive_int(wishart_df, "wishart_df")
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size == 0:
        raise ValueError("`weights` must be a non-empty 1-D sequence.")
    checks: tuple[tuple[str, Any], ...] = (("mean_range", mean_range),
                                          ("wishart_scale", wishart_scale),
                                          ("noise_var", noise_var))
    for name, val in checks:
        if isinstance(val, bool) or not isinstance(val, numbers.Real) \
                or not np.isfinite(float(val)) or val < 0:
            raise ValueError(f"`{name}` must be a non-negative finite number; got {shown(val)}.")
    gen = check_rng(rng)
    means = gen.uniform(-mean_range, mean_range, size=(w.size, d))
    covs = np.empty((w.size, d, d))
    for c in range(w.size):
        z = gen.standard_normal((df, d))
        covs[c] = wishart_scale * (z.T @ z) + noise_var * np.eye(d)
    return GaussianMixture(w, means, covs)
