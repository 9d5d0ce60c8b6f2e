"""Scenario reader for ``type = "boat"`` (paper §4.3.2; model in core.vehicles.boat).

``[vehicle]`` keys (SI units; every key optional, defaults of a ~5 m, 800 kg RIB):

* ``mass`` (kg, 800) and ``inertia`` = [J₁, J₂, J₃] (kg m², default that of a uniform box
  hull_length × hull_beam × hull_height of that mass);
* ``hull_length``, ``hull_beam``, ``hull_height`` (m; 5, 2, 0.8): size of the generated default
  hull (core.vehicles.hull.default_hull: flat deck, V bottom, tapered bow). The centre of mass
  is 0.35·length ahead of the transom and 0.375·height above the keel;
* ``thrusters`` = [[cx, cy, cz, dx, dy, dz], …]: body position c_i (m, from the centre of mass;
  x forward, y to port, z up) and direction d_i (normalised) of each thruster. Default: two at the
  transom, [−0.35·L, ∓0.25·B, −0.2·H] pushing along +x (thruster_1 starboard, thruster_2 port);
* ``max_thrust`` (N, 1500): each input is limited to [−max_thrust, max_thrust];
* ``damping``: the hydrodynamic damping matrix E (N·s/m), 3 values (diagonal: surge, sway,
  heave; default [300, 2000, 3000]) or 6 (symmetric, Voigt order E_xx, E_yy, E_zz, E_yz, E_xz,
  E_xy); must be positive definite;
* ``wind`` = [wx, wy, wz] (m/s, world frame; default calm): air velocity; drag ½ ρ_air C_d A_p |v|v
  with ρ_air = 1.225 kg/m³, C_d = 1 on the emerged hull;
* ``current`` = [cx, cy, cz] (m/s, world frame; default still): the water velocity η.

Inputs: ``thruster_1``, ``thruster_2``, … (N, one per thruster, per step). The water surface is
the plane z = 0, water density 1000 kg/m³, gravity 9.81 m/s² along −z. ``[integrator]`` method
(default "vi-cay-ln", the paper's Appendix A pairing), dt, steps; ``[initial]`` as for the rigid body (a boat floating level at
rest has its centre of mass a little above z = 0: 0.084 m for the defaults).
"""
from __future__ import annotations

from ..integrators import METHODS, VEHICLE_DEFAULT_METHOD
from ..trajectory import Trajectory
from ..vehicles.boat import (DEFAULT_BEAM, DEFAULT_HEIGHT, DEFAULT_LENGTH, DEFAULT_MASS, Boat,
                             box_inertia, default_thrusters)
from ..vehicles.hull import default_hull
from ..vehicles.water import Wind
from . import Table
from .common import read_integrator, read_se3_initial
from .controls import read_controls


def read_boat(vehicle: Table) -> Boat:
    mass = vehicle.number("mass", DEFAULT_MASS, positive=True)
    length = vehicle.number("hull_length", DEFAULT_LENGTH, positive=True)
    beam = vehicle.number("hull_beam", DEFAULT_BEAM, positive=True)
    height = vehicle.number("hull_height", DEFAULT_HEIGHT, positive=True)
    inertia = vehicle.vector("inertia", 3, box_inertia(mass, length, beam, height), positive=True)
    if vehicle.has("thrusters"):
        rows = vehicle.rows("thrusters", 6)
        thrusters = tuple((r[:3], r[3:]) for r in rows)
    else:
        thrusters = default_thrusters(length, beam, height)
    damping = vehicle.vector("damping", None, [300.0, 2000.0, 3000.0])
    if len(damping) not in (3, 6):
        raise vehicle.error("damping", f"must have 3 (diagonal) or 6 (symmetric) values, got {len(damping)}")
    wind = vehicle.vector("wind", 3, [0.0, 0.0, 0.0])
    current = vehicle.vector("current", 3, [0.0, 0.0, 0.0])
    max_thrust = vehicle.number("max_thrust", 1500.0, positive=True)
    return Boat(mass=mass, inertia=tuple(inertia), hull=default_hull(length, beam, height),
                thrusters=thrusters, damping=damping, wind=Wind(wind), current=current,
                max_thrust=max_thrust)


def simulate(root: Table) -> Trajectory:
    vehicle = root.table("vehicle", required=True)
    vehicle.string("type")
    boat = read_boat(vehicle)
    vehicle.finish()
    settings = read_integrator(root, METHODS, default_method=VEHICLE_DEFAULT_METHOD)
    initial = read_se3_initial(root)
    names = boat.input_names
    controls = read_controls(root, names, settings.steps, settings.dt,
                             {n: (-boat.max_thrust, boat.max_thrust) for n in names})
    root.finish()
    return boat.simulate(initial, controls, settings.dt, settings.steps, settings.method)
