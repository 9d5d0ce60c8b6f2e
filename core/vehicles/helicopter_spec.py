"""The helicopter's spec (paper §4.3.1; dynamics in :mod:`core.vehicles.helicopter`).

The one preset, "light helicopter", is a Robinson R22-like 600 kg two-seater; its collective limit is
1.6 × its weight (a scenario that changes the mass without giving ``max_collective`` gets 1.6 × the
new weight: ``core.scenario.helicopter``).
"""
from __future__ import annotations

import math

from .spec import INERTIA, MASS, Channel, Input, Parameter, Part, Preset, VehicleSpec

# m/s²: the value of core.integrators.common.GRAVITY, which is not imported here (that package loads scipy)
HOVER_GRAVITY = 9.81

HELICOPTER = VehicleSpec(
    name="helicopter", label="Helicopter",
    description="Rigid body driven by a tilting main rotor and a tail rotor",
    parameters=(
        MASS, INERTIA,
        Parameter("main_rotor_offset", "Main Rotor Height", "m", "Main rotor hub height above the centre of mass",
                  is_length=True, minimum=1e-3),
        Parameter("tail_rotor_offset", "Tail Rotor Arm", "m", "Tail rotor distance behind the centre of mass",
                  is_length=True, minimum=1e-3),
        Parameter("max_tilt", "Max Tilt", "rad", "Largest main rotor tilt, pitch and roll", upper=1.5),
        Parameter("max_collective", "Max Collective", "N", "Largest main rotor lift", minimum=1e-3),
        Parameter("max_yaw", "Max Yaw Force", "N", "Largest tail rotor side force"),
        Parameter("rotor_speed", "Rotor Speed", "rad/s", "Spin of the animated main rotor", positive=False),
        Parameter("tail_rotor_ratio", "Tail Rotor Ratio", "", "Tail rotor spin per main rotor spin", positive=False,
                  scenario=False),
    ),
    presets=(
        Preset("light helicopter", "Light Helicopter", "A 600 kg two-seat helicopter",
               dict(mass=600.0, inertia=(300.0, 850.0, 700.0), main_rotor_offset=1.2, tail_rotor_offset=4.5,
                    max_tilt=math.radians(10.0), max_collective=1.6 * 600.0 * HOVER_GRAVITY, max_yaw=1000.0,
                    rotor_speed=55.5, tail_rotor_ratio=6.4)),
    ),
    default_preset="light helicopter",
    inputs=(
        Input("collective", "N", "Main rotor lift u_c", limit="max_collective", nonnegative=True),
        Input("yaw", "N", "Tail rotor side force u_ψ (positive turns the nose left)", limit="max_yaw"),
        Input("pitch_tilt", "rad", "Commanded main rotor pitch tilt (positive accelerates forward)",
              limit="max_tilt"),
        Input("roll_tilt", "rad", "Commanded main rotor roll tilt (positive accelerates to the right)",
              limit="max_tilt"),
    ),
    shape=(
        Channel("pitch_tilt", "rad", "Main rotor pitch tilt at the node", limit="max_tilt"),
        Channel("roll_tilt", "rad", "Main rotor roll tilt at the node", limit="max_tilt"),
        Channel("rotor_angle", "rad", "Main rotor angle: rotor_speed · t"),
        Channel("tail_rotor_angle", "rad", "Tail rotor angle: tail_rotor_ratio · rotor_speed · t"),
    ),
    parts=(
        Part("main_rotor", ("rotor_angle",), spins=True, tilts_with=("pitch_tilt", "roll_tilt")),
        Part("tail_rotor", ("tail_rotor_angle",), spins=True),
    ),
    solvable=True,
)

__all__ = ["HELICOPTER", "HOVER_GRAVITY"]
