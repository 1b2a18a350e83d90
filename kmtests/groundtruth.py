# The public import path of the closed-form ground truth; its code is
# kmtests/studies/groundtruth.py.
from .studies.groundtruth import __doc__ as __doc__  # its page in the API reference
from .studies.groundtruth import GaussianMixture as GaussianMixture
from .studies.groundtruth import loss as loss

__all__ = ["GaussianMixture", "loss"]
