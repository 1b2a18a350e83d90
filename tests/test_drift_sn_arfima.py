"""The helpers of the pilot ``benchmarks/drift_sn_arfima.py`` (issue 30, seventh session;
not in the package): its numbers in benchmarks/README.md rest on these.

* the ARFIMA(0, d, 0) autocovariances equal the closed forms (``gamma_0`` and
  ``rho_1 = d / (1 - d)``), and the circulant-embedding series have them (Monte Carlo);
* the self-normalised statistic equals a loop;
* the Whittle fit recovers an AR(1) and a fractional noise from long series, and does not
  read a shift between the windows as memory.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.signal import lfilter

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from drift_sn_arfima import (  # noqa: E402
    arfima_autocovariance,
    simulate_arfima,
    sn_statistic,
    whittle_fit,
)


@pytest.mark.parametrize("d", [-0.3, 0.1, 0.3, 0.45])
def test_arfima_autocovariance_closed_forms(d):
    g = arfima_autocovariance(d, 5)
    assert g[0] == pytest.approx(math.gamma(1 - 2 * d) / math.gamma(1 - d) ** 2)
    assert g[1] / g[0] == pytest.approx(d / (1 - d))
    assert g[2] / g[1] == pytest.approx((1 + d) / (2 - d))


@pytest.mark.parametrize("d", [0.0, 0.3])
def test_simulated_series_have_the_autocovariances(d):
    x = simulate_arfima(d, 64, 20000, np.random.default_rng(1))
    want = arfima_autocovariance(d, 4)
    got = [np.mean(x[:, 10:50] * x[:, 10 + k:50 + k]) for k in range(4)]
    assert np.allclose(got, want, atol=0.05 * want[0])


def test_sn_statistic_equals_a_loop():
    z = np.random.default_rng(2).normal(size=40)
    m = 20
    a, b = z[:m], z[m:]
    v = 0.0
    for t in range(1, m + 1):
        v += (sum(a[:t]) - t * a.mean()) ** 2
        v += (sum(b[m - t:]) - t * b.mean()) ** 2
    want = (a.mean() - b.mean()) ** 2 / (v / m ** 2)
    assert sn_statistic(z)[0] == pytest.approx(want)


def test_whittle_fit_recovers_short_and_long_memory():
    gen = np.random.default_rng(3)
    ar = lfilter([1.0], [1.0, -0.7], gen.normal(size=4600))[600:]
    phi, d = whittle_fit(ar)
    assert abs(phi - 0.7) < 0.1 and abs(d) < 0.1
    fn = simulate_arfima(0.3, 4000, 1, gen)[0]
    phi, d = whittle_fit(fn)
    assert abs(d - 0.3) < 0.1 and abs(phi) < 0.15
    shifted = ar.copy()
    shifted[2000:] += 3.0  # the windows' periodograms are each centred
    assert whittle_fit(shifted) == pytest.approx(whittle_fit(ar), abs=1e-4)
