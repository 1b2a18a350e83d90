# The public import path of the power studies; their code is kmtests/studies/power.py.
from .studies.power import __doc__ as __doc__  # its page in the API reference
from .studies.power import CheckpointError as CheckpointError
from .studies.power import TESTS as TESTS
from .studies.power import PowerCurveResult as PowerCurveResult
from .studies.power import power_curve as power_curve

__all__ = ["CheckpointError", "PowerCurveResult", "power_curve"]
