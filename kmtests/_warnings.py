"""Warning categories of kmtests (all subclasses of :class:`KmtestsWarning`).

Filter them with the standard :mod:`warnings` machinery, e.g.
``warnings.simplefilter("error", kmtests.KmtestsWarning)``.
"""

from __future__ import annotations

__all__ = ["ApproximationWarning", "DegenerateStatisticWarning", "IndefiniteKernelWarning",
           "KmtestsWarning", "SlowTestWarning"]


class KmtestsWarning(UserWarning):
    """Base class of the warnings issued by kmtests."""


class ApproximationWarning(KmtestsWarning):
    """An approximate null distribution is used where its level is known to be off."""


class IndefiniteKernelWarning(KmtestsWarning):
    """A user-supplied kernel or Gram matrix is not positive semi-definite."""


class DegenerateStatisticWarning(KmtestsWarning):
    """The statistic cannot vary across arrangements (e.g. shrunk to zero)."""


class SlowTestWarning(KmtestsWarning):
    """The configuration will take long; the message says how long and what to change."""
