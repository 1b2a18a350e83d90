"""A scenario that sleeps before each draw: lets a test interrupt a study mid-way.

It lives in an importable module so that a subprocess and the test process
describe it identically in a checkpoint file (by qualified name). The delay is
read from the environment, so the resuming process runs at full speed.
"""

import os
import time

from kmtests.datasets import Scenario, get_scenario

DELAY_ENV = "KMTESTS_TEST_SCENARIO_DELAY"


def _slow_mean_shift(n, effect, gen):
    time.sleep(float(os.environ.get(DELAY_ENV, "0")))
    return get_scenario("mean_shift").sampler(n, effect, gen)


SLOW_MEAN_SHIFT = Scenario("slow_mean_shift", "two_sample", _slow_mean_shift, 0.5,
                           "mean_shift, slowed down by $KMTESTS_TEST_SCENARIO_DELAY seconds")
