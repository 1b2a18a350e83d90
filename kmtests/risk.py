# The public import path of the risk studies; their code is kmtests/studies/risk.py.
from .studies.risk import __doc__ as __doc__  # its page in the API reference
from .studies.risk import KERNEL_NAMES as KERNEL_NAMES
from .studies.risk import SUMMARY_COLUMNS as SUMMARY_COLUMNS
from .studies.risk import risk_study as risk_study

__all__ = ["risk_study"]
