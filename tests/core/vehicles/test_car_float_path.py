"""The plain-float car step (core.vehicles.car.advance_float, the path of ``simulate`` and of the
one-car benchmark) against the batched numpy step ``advance``."""
from __future__ import annotations

import numpy as np
import pytest

from core.vehicles import car as C


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.8, 1.0])
def test_float_step_equals_the_batched_step(alpha):
    """Random states and inputs, including straight steering (σ_{k+α} = 0) and a car at rest
    (u = 0), where sinc(z) is taken at z = 0: every output agrees to round-off."""
    car = C.Car.preset("hatchback")
    rng = np.random.default_rng(4)
    n = 400
    state = [rng.uniform(-3, 3, n), rng.uniform(-0.5, 0.5, n), rng.uniform(-3, 3, n),
             rng.uniform(-50, 50, n), rng.uniform(-50, 50, n), rng.uniform(-200, 200, n)]
    torque, rate = rng.uniform(-300, 300, n), rng.uniform(-0.5, 0.5, n)
    state[1][:20] = 0.0
    rate[:20] = 0.0            # σ_{k+α} = 0: z = 0
    state[5][20:40] = 0.0
    torque[20:40] = 0.0        # p = 0, no torque: u = 0
    for h in (0.004, 0.05, 0.25):
        batched = np.array(C.advance(car, *state, torque, rate, h, alpha))
        k = C.float_constants(car, h, alpha)
        single = np.array([C.advance_float(k, *(float(s[i]) for s in state), float(torque[i]), float(rate[i]))
                           for i in range(n)]).T
        scale = np.maximum(np.abs(batched), 1.0)
        assert np.max(np.abs(single - batched) / scale) < 1e-13, (h, alpha)
        assert np.all(np.isfinite(single))
