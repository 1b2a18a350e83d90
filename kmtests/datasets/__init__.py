"""Bundled data sets.

``load_eckerle4()`` returns the NIST StRD Eckerle4 data (public domain): 35
measurements of transmittance against wavelength from a circular interference
filter study (NIST, Eckerle, K., 1979). The original certified-regression
problem fits a Gaussian peak ``y = (b1/b2) exp(-(x - b3)^2 / (2 b2^2))``, so
y depends strongly — and non-monotonically — on x.

``synthetic_mixture(d, rng=...)`` draws one random distribution of the
papers' synthetic experiments (a mixture of four Gaussians, PAPERS.md §4.1)
as a :class:`kmtests.groundtruth.GaussianMixture`, whose kernel means are
known in closed form.
"""

from __future__ import annotations

from importlib import resources

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

from ._synthetic import PAPERS_MIXTURE_WEIGHTS as PAPERS_MIXTURE_WEIGHTS
from ._synthetic import synthetic_mixture as synthetic_mixture

from ._scenarios import SCENARIOS as SCENARIOS
from ._scenarios import Scenario as Scenario
from ._scenarios import ar1_pair as ar1_pair
from ._scenarios import k_sample_shift as k_sample_shift
from ._scenarios import cauchy_shift as cauchy_shift
from ._scenarios import conditional_sine as conditional_sine
from ._scenarios import xor_joint as xor_joint
from ._scenarios import gaussian_mean_shift as gaussian_mean_shift
from ._scenarios import gaussian_scale_shift as gaussian_scale_shift
from ._scenarios import get_scenario as get_scenario
from ._scenarios import perturbed_uniform as perturbed_uniform
from ._scenarios import sinusoid as sinusoid

__all__ = ["SCENARIOS", "Scenario", "ar1_pair", "cauchy_shift", "conditional_sine",
           "gaussian_mean_shift",
           "gaussian_scale_shift", "get_scenario", "k_sample_shift", "load_eckerle4",
           "perturbed_uniform", "sinusoid", "xor_joint"]
__all__ += ["PAPERS_MIXTURE_WEIGHTS", "synthetic_mixture"]


def load_eckerle4() -> pd.DataFrame:
    """NIST StRD Eckerle4 data: 35 rows, columns ``x`` (wavelength, nm) and ``y``
    (transmittance).

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> from kmtests.datasets import load_eckerle4
    >>> df = load_eckerle4()
    >>> df.shape
    (35, 2)
    >>> print(f"{df['x'].min():.0f}-{df['x'].max():.0f} nm")
    400-500 nm
    """
    import pandas as pd

    with resources.files(__package__).joinpath("data/eckerle4.csv").open("r") as fh:
        return pd.read_csv(fh, dtype={"x": "float64", "y": "float64"})
