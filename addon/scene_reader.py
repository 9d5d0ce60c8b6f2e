"""Scene → problem: the first step of scene → problem → solve → trajectory → F-curves.

``read_problem(scene, vehicle)`` gathers what an artist set up into plain data and hands it to
``core.shot.plan``, which builds the ``solve`` scenarios (``read_simulation`` builds the
``simulate`` contract). It gathers, each concern in its own module:

* the vehicle's own keyframes (``scene_keys``: of the action it plays, or of the action it had before a
  bake): the frames, the world pose at each, whether a rotation or the speed (``vehicle_motion.speed``)
  is keyed there; the shot spans the first to the last key (``core.shot.frames.shot_range``; a Land /
  Dock empty's frame counts as a key, so a start key and a landing make a shot), or the add-on's own
  range when Own Frame Range is on;
* obstacles and constraint empties (``scene_obstacles``);
* the vehicle's collision spheres and real geometry, a car's wheel layout, a boat's hull and a
  helicopter's rotor hubs (``scene_geometry``);
* the vehicle's parameters, input limits and control channels, from its spec (``core.vehicles.spec``),
  and the scene's frame rate, range and Solve Settings (``scene_settings``);
* a boat's water: the scene's water surface sampled over the shot (``scene_water``), last, as it moves
  the scene through the frames.

Everything is read before anything is solved; problems are a :class:`SceneError`, one line naming the
object or frame, and the numbers are checked as ``scene_keys`` says. The scene is left as it was (the
current frame is restored). The result holds plain numbers and strings only, so a worker thread can
use it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.shot import car_geometry
from ..core.shot.frames import FrameMap, bake_frames
from ..core.shot.geometry import MIN_SIZE, ObstacleShape, fit_shape, floats, quaternion_of, yaw
from ..core.shot.plan import Constraint, Problem, Segment, ShotError, ShotInput, plan
from .properties import CORE_VEHICLE_NAMES, SPECS
from .scene_geometry import BOAT_HULL_FACES, boat_hull, measure_car, measure_rotors, vehicle_geometry
from .scene_keys import (FrameGuard, Pose, SceneError, check_all_keys, key_frames, key_poses, keyed_frames,
                         landing_frames, source_action, source_fcurves, speed_at, vehicle_pose)
from .scene_keys import is_animated as _is_animated  # noqa: F401  (addon.live reads it here)
from .scene_obstacles import OBSTACLE_COLLECTION, constraint_empties, obstacles, scene_constraints
from .scene_obstacles import OBSTACLE_COLLECTION_NAME as _OBSTACLE_COLLECTION_NAME  # noqa: F401  (addon.live)
from .scene_settings import (check_parameters, check_parts, control_values, frame_map, input_limits, parameters,
                             shot_settings, simulation_range, solve_range)
from .scene_ground import off_ground, scene_ground
from .scene_water import reach_region, water_table

SOLVABLE = frozenset(t for t, spec in SPECS.items() if spec.solvable)
PLANAR = frozenset(t for t, spec in SPECS.items() if spec.planar)
INTEGRATOR_METHODS = {"VARIATIONAL": None, "RK2": "rk2", "IMPLICIT_RK2": "rk2i", "RK4": "rk4",
                      "LIE_NEWMARK": "lie-newmark", "LIE_EULER": "lie-euler"}


@dataclass
class SimulationProblem:
    vehicle: str
    vehicle_type: str
    frame_map: FrameMap
    scenario: dict
    warnings: list[str] = field(default_factory=list)


class _Reader:
    """One reading of ``vehicle`` in ``scene``: what every concern needs, and the warnings they add."""

    def __init__(self, scene, vehicle, guard: FrameGuard):
        self.scene, self.obj, self.guard = scene, vehicle, guard
        self.warnings: list[str] = []
        self.vtype = vehicle.vehicle_motion.vehicle_type
        if self.vtype == "NONE":
            raise SceneError(f"'{vehicle.name}' is not a vehicle: set its Vehicle type in the Vehicle panel")
        self.spec = SPECS[self.vtype]
        self.scale = float(scene.unit_settings.scale_length) or 1.0
        self.fcurves = [fc for fc in source_fcurves(vehicle) if not fc.mute]
        self.pose = Pose(vehicle, guard)

    def check_vehicle(self) -> None:
        """Parts, settings and keys (the vehicle's and its parents') before anything is evaluated."""
        check_parts(self.obj, self.spec, self.warnings)
        check_parameters(self.obj, self.spec, self.fcurves, self.scale)
        check_all_keys(self.obj, self.fcurves, self.scale)

    def centre(self) -> tuple[dict, np.ndarray] | None:
        """A boat's own hull or a helicopter's rotor hubs: ([vehicle] keys, body offset of the centre of mass)."""
        args = (self.scene, self.obj, self.scale, self.warnings)
        return boat_hull(*args) or measure_rotors(*args)

    def problem(self) -> Problem:
        """Gather the shot (keys, empties, obstacles, the vehicle) and plan it (core.shot)."""
        obj, scene = self.obj, self.scene
        if self.vtype not in SOLVABLE:
            raise SceneError(f"'{obj.name}' is a {self.vtype.replace('_', ' ').lower()}: Solve plans vehicles "
                             "(car, snakeboard, helicopter, boat); use Simulate")
        s = scene.vehicle_motion
        if s.integrator != "VARIATIONAL":
            raise SceneError(f"Solve needs the Variational integrator (Solve Settings › Integrator is "
                             f"{s.integrator.replace('_', ' ').title()})")
        self.check_vehicle()
        landings = landing_frames(scene, obj)
        frames = key_frames(obj, self.fcurves, landings)
        fm = frame_map(scene, *solve_range(scene, obj, frames, landings, self.warnings), self.scale, solve=True)
        keys = key_poses(obj, self.pose, self.fcurves, frames, fm, s.use_frame_range, self.scale, self.warnings)
        empties = constraint_empties(scene, obj, fm, self.guard, self.scale, self.warnings)
        shapes = obstacles(scene, obj, fm, self.guard, self.scale, self.warnings)
        spheres, vertices = vehicle_geometry(scene, obj, self.scale)
        shot = ShotInput(
            vehicle=obj.name, vehicle_type=self.vtype, core_type=CORE_VEHICLE_NAMES[self.vtype], frame_map=fm,
            keys=keys, empties=empties, obstacles=shapes, spheres=spheres, parameters=parameters(obj, self.spec),
            input_limits=input_limits(obj, self.spec), settings=shot_settings(scene), warnings=self.warnings)
        shot.vertices = vertices
        geometry = measure_car(scene, obj, self.scale, self.warnings)
        if geometry is not None:  # the solve plans the rear axle: keys and spheres are moved to it (core.shot)
            shot.parameters.update(wheel_radius=geometry.wheel_radius, wheelbase=geometry.wheelbase)
            shot.body_offset, shot.wheels = geometry.body_offset, geometry.wheel_tables()
        centred = self.centre()
        if centred is not None:  # a boat's own hull, a helicopter's rotor hubs: the solve plans the centre of mass
            shot.parameters.update(centred[0])
            shot.body_offset = centred[1]
        if self.vtype == "CAR":
            self.read_ground(shot, fm)
        if self.vtype == "BOAT":
            reach = reach_region([k.position for k in keys] + [c.position for c in empties if c.position is not None],
                                 fm, spheres)
            water = water_table(scene, obj, fm, self.guard, self.warnings, reach)
            if water is not None:
                shot.parameters["water"] = water
        try:
            return plan(shot)
        except SceneError:
            raise
        except ShotError as exc:
            raise SceneError(str(exc)) from None

    def read_ground(self, shot: ShotInput, fm) -> None:
        """The scene's Ground as the car's [vehicle.terrain]: its slope enters the drive."""
        ground = self.terrain_table(shot.parameters, fm)
        if ground is None:
            return
        keys = np.array([k.position[:2] for k in shot.keys]) * fm.scale   # world metres
        warning = off_ground(ground, keys, [k.frame for k in shot.keys])
        if warning is not None:
            self.warnings.append(warning)

    def terrain_table(self, vehicle: dict, fm: FrameMap):
        """Put the scene's Ground into ``vehicle`` as [vehicle.terrain] in solve coordinates; the ground read
        (``addon.scene_ground.SceneGround``), or None without one."""
        ground = scene_ground(self.scene, self.warnings)
        if ground is not None:
            origin = np.asarray(fm.offset, dtype=float) * fm.scale
            vehicle["terrain"] = {"vertices": ground.vertices - origin, "triangles": ground.triangles}
        return ground

    def simulation(self) -> SimulationProblem:
        """The ``simulate`` scenario: the start pose and speed, the parameters, the control channels."""
        obj, scene = self.obj, self.scene
        fm = frame_map(scene, *simulation_range(scene), self.scale)
        self.check_vehicle()
        start_pos, start_r = vehicle_pose(obj, self.pose, fm.frame_start, self.scale)
        speed = speed_at(obj, fm.frame_start) * self.scale
        geometry = measure_car(scene, obj, self.scale, self.warnings)
        if geometry is not None:  # the car model moves its rear axle: start there, bake the object back
            start_pos = car_geometry.to_rear_axle(start_pos, start_r, geometry.body_offset)
            fm.body_offset = tuple(float(x) for x in geometry.body_offset)
            fm.wheels = geometry.wheel_tables()
        centred = self.centre()
        if centred is not None:  # a boat's own hull, a helicopter's rotor hubs: start at the centre of mass
            start_pos = start_pos + start_r @ centred[1]
            fm.body_offset = tuple(float(x) for x in centred[1])
        if self.vtype in PLANAR:
            fm.offset = (0.0, 0.0, float(start_pos[2]))
        p = fm.to_solve(start_pos)
        heading = self.pose.euler_heading(fm.frame_start)
        if heading is None:
            heading = yaw(start_r)
        method = INTEGRATOR_METHODS[scene.vehicle_motion.integrator]
        integrator: dict = {"dt": fm.dt, "steps": fm.steps}
        if self.vtype == "CAR":
            initial = {"position": floats(p[:2]), "heading": float(heading),
                       "wheel_rate": speed / geometry.wheel_radius}
        elif self.vtype == "SNAKEBOARD":
            initial = {"position": floats(p[:2]), "heading": float(heading), "speed": speed}
        else:
            initial = {"position": floats(p), "orientation": quaternion_of(start_r),
                       "linear_velocity": [speed, 0.0, 0.0]}
        if self.vtype in PLANAR:
            if method is not None:
                raise SceneError(f"a {self.vtype.lower()} has only the Variational integrator (Solve Settings › "
                                 "Integrator)")
        else:
            integrator["method"] = method or "vi-cay"
        vehicle = parameters(obj, self.spec)
        if geometry is not None:
            vehicle.update(wheel_radius=geometry.wheel_radius, wheelbase=geometry.wheelbase)
        if centred is not None:
            vehicle.update(centred[0])
        if self.vtype == "CAR":
            self.terrain_table(vehicle, fm)
        if self.vtype == "BOAT":
            water = water_table(scene, obj, fm, self.guard, self.warnings)
            if water is not None:
                vehicle["water"] = water
        scenario = {"vehicle": vehicle, "integrator": integrator, "initial": initial}
        if self.spec.inputs:  # a rigid body has no inputs (and no [controls] table)
            scenario["controls"] = control_values(obj, self.spec, self.fcurves, fm, self.warnings)
        return SimulationProblem(obj.name, self.vtype, fm, scenario, self.warnings)


def read_problem(scene, vehicle) -> Problem:
    """The solve problem of ``vehicle`` in ``scene``; raises SceneError (scene unchanged)."""
    with FrameGuard(scene) as guard:
        return _Reader(scene, vehicle, guard).problem()


def read_simulation(scene, vehicle) -> SimulationProblem:
    """The forward simulation of ``vehicle`` driven by its keyed control channels."""
    with FrameGuard(scene) as guard:
        return _Reader(scene, vehicle, guard).simulation()


__all__ = ["SceneError", "FrameMap", "ObstacleShape", "Constraint", "Segment", "Problem", "SimulationProblem",
           "bake_frames", "simulation_range", "read_problem", "read_simulation", "scene_constraints",
           "keyed_frames", "fit_shape", "source_action", "OBSTACLE_COLLECTION", "SOLVABLE", "MIN_SIZE",
           "BOAT_HULL_FACES"]
