"""Compare kernel mean estimators on one data set with common random numbers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Literal

import numpy as np

from ._typing import ArrayLike, SeedLike
from ._validation import check_choice

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["compare_estimators"]


def compare_estimators(
    x: ArrayLike,
    y: ArrayLike,
    *,
    test: Literal["two_sample", "independence"] = "two_sample",
    estimators: Iterable[Any] = ("kme", "skmse", "bkmse", "fkmse", "mkme", "mmkme"),
    tuning: Literal["permutation", "pooled"] = "permutation",
    n_resamples: int = 999,
    rng: SeedLike = None,
    **test_kwargs: Any,
) -> "pd.DataFrame":
    """Run one test with several estimators on the same data and permutations.

    All estimators are computed in one pass over the *same* permutations
    (common random numbers: differences between their p-values come from the
    estimators, not from Monte Carlo noise), sharing the Gram matrix where they
    share the kernel; the p-value of each is the one the test gives it alone
    with the same `rng`.

    Parameters
    ----------
    x, y : array_like
        The data, as for :func:`kmtests.two_sample_test` or
        :func:`kmtests.independence_test`.
    test : {"two_sample", "independence"}
    estimators : iterable of str or estimator objects
    tuning : {"permutation", "pooled"}
    n_resamples : int
    rng : None, int, SeedSequence or Generator
        A Generator is used to draw one seed shared by all estimators.
    **test_kwargs
        Passed to the test (kernel, bandwidth, statistic, ...).

    Returns
    -------
    pandas.DataFrame
        One row per estimator: ``estimator``, ``statistic_name``,
        ``statistic``, ``pvalue`` with its Monte Carlo 95% interval
        (``pvalue_lower``, ``pvalue_upper``), ``tuning``, then the columns of
        each result's :meth:`~kmtests.TwoSampleResult.summary_frame` (what ran,
        bandwidths, sizes, seed) and the parameters each estimator chose, one
        numeric column per parameter and role under the report's keys
        (``shrinkage_x``, ``shrinkage_y``, ``sigma2``; a list, such as
        MMKME's per-coordinate variances, one column per value: ``diag_0``,
        ...). A parameter an estimator does not have is NaN in its row.

    Examples
    --------
    >>> import numpy as np
    >>> from kmtests.compare import compare_estimators
    >>> gen = np.random.default_rng(0)
    >>> x, y = gen.normal(size=(30, 1)), gen.normal(0.6, size=(30, 1))
    >>> t = compare_estimators(x, y, estimators=["kme", "skmse"], n_resamples=499, rng=1)
    >>> print(t[["estimator", "pvalue"]].to_string(index=False))
    estimator  pvalue
          kme   0.004
        skmse   0.004
    >>> print(f"{t.loc[1, 'shrinkage_x']:.4f} {t['shrinkage_x'].dtype}")
    0.0179 float64
    """
    import pandas as pd

    from . import _driver, _plan
    from .independence import independence_test
    from .twosample import two_sample_test

    kind = check_choice(test, "test", ("two_sample", "independence"))
    face: Any = two_sample_test if kind == "two_sample" else independence_test
    from ._rng import root_sequence, seed_of

    seed = root_sequence(rng)[0]
    ests = list(estimators)
    if not ests:
        raise ValueError("`estimators` must name at least one estimator.")
    plans = [_plan.plan_of(face, x, y, estimator=est, tuning=tuning,
                           n_resamples=n_resamples, rng=np.random.default_rng(seed),
                           **test_kwargs) for est in ests]
    lead = plans[0]
    assert lead.method is not None
    results = _driver.run_each(lead.problem, [p.statistic for p in plans], lead.engine,
                               lead.method, lead.tuning)
    frames = []
    for res in results:
        frame = res.summary_frame().reset_index()
        frame["tuning"] = res.tuning
        frame["seed"] = seed_of(rng)  # the tests ran on generators seeded from it
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True, sort=False)
    first = ["estimator", "statistic_name", "statistic", "pvalue", "pvalue_lower",
             "pvalue_upper", "tuning"]
    return table[first + [c for c in table.columns if c not in first]]
