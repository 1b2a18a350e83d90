"""Warning categories of kmtests (all subclasses of :class:`KmtestsWarning`).

Filter them with the standard :mod:`warnings` machinery, e.g.
``warnings.simplefilter("error", kmtests.KmtestsWarning)``.
"""

from __future__ import annotations

__all__ = ["ApproximationWarning", "DegenerateStatisticWarning", "IndefiniteKernelWarning",
           "KmtestsWarning", "SerialDependenceWarning", "SlowTestWarning"]


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


class SerialDependenceWarning(KmtestsWarning):
    """A null for i.i.d. observations meets serially dependent data (rows in time order
    whose autocorrelation inflates the level); the message names the fix
    (``blocks="auto"``)."""
