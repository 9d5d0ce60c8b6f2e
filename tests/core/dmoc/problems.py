"""Small DMOC programs shared by the derivative tests: one per vehicle model with every constraint
and cost group switched on (free duration, obstacles of every type, waypoints, speed limits, goal
velocity, every cost term), taken at random points near the initial guess, and the dense
central-difference Jacobian they are checked against (test-only reference).

Imported as ``from tests.core.dmoc.problems import ...`` (the repository root is on pytest's
``pythonpath``) by test_dmoc_problem, test_dmoc_hessians, test_dmoc_exact_waypoints and
tests/core/shot/test_shot.py.
"""
from __future__ import annotations

import numpy as np

from core.dmoc.constraints import assemble
from core.dmoc.initial_guess import initial_guess
from core.dmoc.scenario import read
from core.scenario import loads

CAR = """
[vehicle]
type = "car"
preset = "hatchback"
collision_spheres = [[0.0, 0.0, 0.5, 1.0], [2.0, 0.3, 0.5, 0.8]]
[integrator]
steps = 7
alpha = {alpha}
[time]
min = 3.0
max = 6.0
[start]
position = [0.0, 0.0]
heading = 0.2
speed = 3.0
steering_angle = 0.1
[goal]
position = [15.0, 3.0]
speed = 2.0
[[obstacles]]
type = "sphere"
center = [6.0, 3.0, 0.0]
radius = 1.0
margin = 0.1
[[obstacles]]
type = "box"
center = [9.0, -2.0, 0.5]
half_extents = [1.0, 0.7, 0.5]
orientation = [0.9238795325112867, 0.0, 0.0, 0.3826834323650898]
margin = 0.2
[[obstacles]]
type = "capsule"
a = [4.0, -3.0, 0.0]
b = [5.0, -2.5, 1.0]
radius = 0.5
[bounds]
speed = [-1.0, 10.0]
steering_angle = [-0.5, 0.5]
[cost]
effort = 1.0
duration = 2.0
path_length = 0.3
hazard = 0.5
smoothness = 0.1
[cost.input_weights]
torque = 1e-5
"""

HELICOPTER = """
[vehicle]
type = "helicopter"
collision_spheres = [[0.0, 0.0, 0.0, 2.0], [-3.0, 0.5, 0.2, 1.0]]
[integrator]
method = "{method}"
steps = 6
[time]
min = 4.0
max = 9.0
[start]
position = [0.0, 0.0, 10.0]
orientation = {q0}
angular_velocity = [0.1, -0.2, 0.3]
velocity = [2.0, 0.5, -0.3]
[goal]
position = [40.0, 5.0, 12.0]
heading = 0.3
velocity = [0.5, 0.0, 0.0]
angular_velocity = [0.0, 0.0, 0.1]
[[obstacles]]
type = "sphere"
center = [15.0, 6.0, 10.0]
radius = 3.0
margin = 0.5
[[obstacles]]
type = "box"
center = [25.0, -5.0, 8.0]
half_extents = [3.0, 2.0, 8.0]
orientation = [0.8, 0.36, 0.0, 0.48]
[[obstacles]]
type = "capsule"
a = [30.0, 5.0, 0.0]
b = [32.0, 6.0, 20.0]
radius = 1.0
[bounds]
speed = [0.0, 25.0]
pitch_tilt = [-0.15, 0.15]
[cost]
effort = 1.0
duration = 10.0
path_length = 0.3
hazard = 0.5
smoothness = 0.1
[cost.input_weights]
collective = 1e-6
yaw = 1e-4
pitch_tilt = 100.0
roll_tilt = 100.0
"""
BOAT = """
[vehicle]
type = "boat"
wind = [1.0, -5.0, 0.0]
current = [0.3, 0.2, 0.0]
collision_spheres = [[1.0, 0.0, 0.0, 1.2], [-1.0, 0.3, 0.0, 1.2]]
[integrator]
steps = 4
[time]
min = 6.0
max = 10.0
[start]
position = [0.0, 0.0, 0.084]
velocity = [0.5, 0.1, 0.0]
[goal]
position = [5.0, 2.0, 0.084]
heading = 0.3
velocity = [0.0, 0.0, 0.0]
[[obstacles]]
type = "sphere"
center = [3.0, 2.0, 0.0]
radius = 0.5
[bounds]
speed = [0.0, 3.0]
[cost]
effort = 1e-6
duration = 1.0
smoothness = 1e-6
"""
IDENTITY = "[1.0, 0.0, 0.0, 0.0]"
TURNED = "[0.052335956242943966, 0.0, 0.19968597374908592, 0.9784612713705209]"  # 174° about (0, .2, .98)

SCENARIOS = {"car": CAR.format(alpha=0.5), "car-alpha0": CAR.format(alpha=0.0),
             "car-alpha1": CAR.format(alpha=1.0),
             "helicopter-cay": HELICOPTER.format(method="vi-cay", q0=IDENTITY),
             "helicopter-cay-turned": HELICOPTER.format(method="vi-cay", q0=TURNED),
             "helicopter-exp": HELICOPTER.format(method="vi-exp", q0=TURNED),
             "helicopter-cay-ln": HELICOPTER.format(method="vi-cay-ln", q0=IDENTITY),
             "boat": BOAT}
# rotation charts far from their centre (|ρ| up to ~3, i.e. rotations of ~110°) and near it
LARGE_CHART = {"helicopter-cay-turned", "helicopter-exp"}


def perturbed_problem(name: str, seed: int = 0, large: bool = False):
    """The NLP of ``SCENARIOS[name]`` and a random point near its initial guess (rotation charts at
    |ρ| ~ 1.5 when ``large`` or the scenario is in LARGE_CHART, else ~1e-3), inside the bounds."""
    setup = read(loads(SCENARIOS[name]))
    nlp = assemble(setup.model, setup.spec)
    z0 = nlp.reduce(initial_guess(setup.model, setup.spec))
    rng = np.random.default_rng(seed)
    z = z0 + rng.normal(scale=0.05, size=z0.shape) * np.maximum(1.0, np.abs(z0))
    if setup.model.se3:
        rho = nlp.freepos[setup.model.rho.ravel()]
        rho = rho[rho >= 0]
        scale = 1.5 if (large or name in LARGE_CHART) else 1e-3
        z[rho] = rng.normal(scale=0.05 if name == "boat" else scale, size=len(rho))  # a boat stays afloat
    z = np.clip(z, nlp.lb, nlp.ub)
    return nlp, z


def dense_jacobian(fun, z: np.ndarray) -> np.ndarray:
    """Central differences of ``fun`` over every entry of ``z`` (step 1e-6 · max(1, |zᵢ|)): (m, n)."""
    cols = []
    for i in range(len(z)):
        d = 1e-6 * max(1.0, abs(z[i]))
        zp, zm = z.copy(), z.copy()
        zp[i] += d
        zm[i] -= d
        cols.append((np.atleast_1d(fun(zp)) - np.atleast_1d(fun(zm))) / (2 * d))
    return np.stack(cols, axis=-1)
