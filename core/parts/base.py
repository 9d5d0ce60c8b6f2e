"""The vehicle as the base of its free-base chain of parts (:mod:`.articulated`): its mass, its
principal inertia and its own wrench from its :mod:`core.vehicles` model, as a function
f(k, R, x, ξ) of the base's state that the Lie group methods evaluate at every stage.

The chain (Park & Chung §V, :class:`core.vehicles.chain.Chain`) applies gravity to every body, the
base included, so the vehicle's wrench here is its model's wrench **without its own weight**
(the weight would otherwise count twice). Body frame, (torque, force) about the base's frame
origin, which is the vehicle's centre of mass (the chain's body-0 convention):

- helicopter (Kobilarov, Crane & Desbrun 2009 §4.3.1; equations.md "Holonomic vehicles"): the rotor wrench
  f = F(γ_k) u_k, u = (collective, yaw), γ = (pitch_tilt, roll_tilt) held over step k — the
  model's f_ext = (0, Rᵀ(0, 0, −9.81 m)) is the weight the chain applies;
- boat (Kobilarov, Crane & Desbrun 2009 §4.3.2, eq. 15; equations.md "Holonomic vehicles"): thrusters F u_k, plus
  buoyancy 9.81 (Rᵀ((x_s − x) × (0, 0, Π_s)), Rᵀ(0, 0, Π_s)) (eq. 15 without its −m term),
  hydrodynamic damping with the current, and wind, at the stage state
  (:meth:`core.vehicles.boat.Boat.external_wrench` plus m g Rᵀe_z);
- rigid body: no wrench of its own (a free body, gravity from the chain).

Other vehicle types have no free-base model here (a car or a snakeboard rolls on the ground
under nonholonomic constraints): :func:`from_scenario` refuses them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from ..errors import ScenarioError
from ..integrators.common import GRAVITY, WrenchFunction
from ..vehicles.boat import Boat
from ..vehicles.helicopter import INPUTS as HELICOPTER_INPUTS
from ..vehicles.helicopter import Helicopter

# vehicle types (the ``[vehicle] type`` names) that can carry articulated parts on a free base
BASE_TYPES: tuple[str, ...] = ("helicopter", "boat", "rigid_body")


def weight(mass: float, R: np.ndarray) -> np.ndarray:
    """The weight of ``mass`` at its centre of mass as a body wrench: (0, Rᵀ(0, 0, −9.81 m)), (…, 6)."""
    force = -GRAVITY * mass * np.asarray(R, dtype=float)[..., 2, :]     # Rᵀ e_z is the third row of R
    return np.concatenate([np.zeros_like(force), force], axis=-1)


@dataclass(frozen=True)
class VehicleBase:
    """The vehicle as body 0 of the chain. ``wrench`` excludes the weight (module docstring);
    ``controls`` are the checked per-step inputs; ``model`` the core.vehicles model (or None)."""

    kind: str
    mass: float
    inertia: tuple[float, float, float]
    wrench: WrenchFunction | None = None
    controls: dict[str, np.ndarray] = field(default_factory=dict)
    model: Any = None
    steps: int | None = None           # the steps its inputs cover (None: it has none)

    def shape(self, time: np.ndarray) -> dict[str, np.ndarray]:
        """Animation series of the vehicle's own moving parts at the nodes ``time`` (what the plain
        simulation of the vehicle gives the baker): a helicopter's rotor angles and tilts."""
        if self.kind != "helicopter":
            return {}
        heli: Helicopter = self.model
        t = np.asarray(time, dtype=float)
        n = len(t)

        def per_node(u: np.ndarray) -> np.ndarray:   # the input held over the step leaving each node
            return np.concatenate([u, u[-1:]])[:n] if len(u) else np.zeros(n)

        return {"pitch_tilt": per_node(self.controls["pitch_tilt"]),
                "roll_tilt": per_node(self.controls["roll_tilt"]),
                "rotor_angle": heli.rotor_speed * t,
                "tail_rotor_angle": heli.tail_rotor_ratio * heli.rotor_speed * t}


def helicopter_base(heli: Helicopter, controls: Mapping[str, np.ndarray], steps: int) -> VehicleBase:
    """The rotor wrench F(γ_k) u_k over step k (module docstring); inputs checked by the model."""
    c = heli.check_controls(controls, steps)
    F = heli.control_matrix(c["pitch_tilt"], c["roll_tilt"])                    # (steps, 6, 2)
    rotor = np.einsum("kij,kj->ki", F, np.stack([c["collective"], c["yaw"]], axis=-1))

    def wrench(k: int, R: np.ndarray, x: np.ndarray, xi: np.ndarray) -> np.ndarray:
        return np.broadcast_to(rotor[k], np.shape(x)[:-1] + (6,))

    return VehicleBase("helicopter", heli.mass, heli.inertia, wrench, c, heli, int(steps))


def boat_base(boat: Boat, controls: Mapping[str, np.ndarray], steps: int, dt: float | None = None) -> VehicleBase:
    """Thrusters + buoyancy + hydrodynamics + wind at the stage state, without the weight (on moving water the
    sea held over step k at its midpoint time (k + ½) dt, as ``Boat.system`` holds it)."""
    u = boat.check_controls(controls, steps)                                      # (steps, n)
    system = boat.system(controls, steps, dt)

    def wrench(k: int, R: np.ndarray, x: np.ndarray, xi: np.ndarray) -> np.ndarray:
        return system.wrench(k, R, x, xi) - weight(boat.mass, R)

    return VehicleBase("boat", boat.mass, boat.inertia, wrench,
                       {name: u[:, i] for i, name in enumerate(boat.input_names)}, boat, int(steps))


def rigid_base(mass: float, inertia) -> VehicleBase:
    """A free rigid body: no wrench of its own."""
    return VehicleBase("rigid_body", float(mass), tuple(float(j) for j in inertia))


def from_scenario(root: Mapping, steps: int, dt: float) -> VehicleBase:
    """The base from the ``simulate`` contract's tables: ``vehicle`` (with its ``type``) read as
    :mod:`core.scenario` reads it, and ``controls`` ({name: {values | sinusoid}}) per step.
    Other tables are ignored; errors name the key (ScenarioError)."""
    from ..scenario import Table
    from ..scenario.controls import read_controls
    table = Table({"vehicle": dict(root.get("vehicle", {})), "controls": dict(root.get("controls", {}))})
    vehicle = table.table("vehicle", required=True)
    kind = vehicle.string("type")
    if kind not in BASE_TYPES:
        raise ScenarioError("[vehicle] type", f"a {kind.replace('_', ' ')} has no free-base model for articulated "
                            f"parts (models: {', '.join(t.replace('_', ' ') for t in BASE_TYPES)}); "
                            "use Secondary Motion")
    if kind == "helicopter":
        from ..scenario.helicopter import limits, read_helicopter
        heli = read_helicopter(vehicle)
        vehicle.finish()
        return helicopter_base(heli, read_controls(table, HELICOPTER_INPUTS, steps, dt, limits(heli)), steps)
    if kind == "boat":
        from ..scenario.boat import read_boat
        boat = read_boat(vehicle)
        vehicle.finish()
        names = boat.input_names
        controls = read_controls(table, names, steps, dt, {n: (-boat.max_thrust, boat.max_thrust) for n in names})
        return boat_base(boat, controls, steps, dt)
    from ..scenario.rigid_body import read_body
    body = read_body(vehicle)             # its gravity key is unused: the chain's gravity acts on every body
    vehicle.finish()
    read_controls(table, (), steps, dt)   # a rigid body has no inputs: refuse any
    return rigid_base(body.mass, body.inertia)


__all__ = ["BASE_TYPES", "VehicleBase", "weight", "helicopter_base", "boat_base", "rigid_base", "from_scenario"]
