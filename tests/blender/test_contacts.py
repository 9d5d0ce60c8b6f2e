"""Contacts are not collisions, in real bpy: a helicopter (a body mesh and a 4 m main rotor disc) lands on a
box building's roof — keyed standing on it, or given by a Land empty alone — a boat docks against a box
pier, and a car parks nose-in against a wall. Each solves (scipy) and bakes, and the baked real geometry
(the evaluated mesh vertices of the vehicle and its parts at every baked frame) never goes deeper than
1 cm into the obstacle. A key really inside an obstacle is still refused (tests/blender/test_bad_scenes)."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from build_car_tunnel_scene import _box, _mesh_object  # noqa: E402
from build_roof_landing_scene import PAD, ROOF, box_obstacle  # noqa: E402
from build_roof_landing_scene import helicopter as _helicopter  # noqa: E402
from scene_kit import key_at_rest_pose, world_vertices  # noqa: E402

TOL = 0.01
FIGURES: dict[str, float] = {}


def box_clearance(obstacle, points: np.ndarray) -> np.ndarray:
    """Signed distance of world points to an axis-aligned box obstacle (its evaluated bounds)."""
    m = np.array(obstacle.matrix_world)
    corners = np.array([m[:3, :3] @ np.array(c) + m[:3, 3] for c in obstacle.bound_box])
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    q = np.abs(points - 0.5 * (lo + hi)) - 0.5 * (hi - lo)
    return np.linalg.norm(np.maximum(q, 0.0), axis=1) + np.minimum(np.max(q, axis=1), 0.0)


def solve(scene, vehicle) -> str:
    from operator_runs import solve_active
    report = solve_active(scene, vehicle)
    assert "reaches" not in report, report   # core.shot.contacts.check_motion found nothing
    return report


def solve_time(report: str) -> float:
    return float(re.search(r"iterations, ([0-9.]+) s \(scipy", report).group(1))


def baked_worst(scene, vehicle, obstacle, frames) -> tuple[float, float]:
    """(the least clearance of the vehicle's meshes over the baked frames, the frame)."""
    meshes = [ob for ob in [vehicle, *vehicle.children_recursive] if ob.type == "MESH"]
    worst = (math.inf, None)
    for f in frames:
        scene.frame_set(int(f))
        d = float(np.min(box_clearance(obstacle, world_vertices(meshes))))
        worst = min(worst, (d, f))
    return worst


def contact_clearance(scene, vehicle) -> tuple[float, float]:
    """The planner's contact: (the real geometry's clearance at the key, the spheres' allowance)."""
    from vehicle_motion.addon import scene_reader
    problem = scene_reader.read_problem(scene, vehicle)
    [c] = problem.contacts
    return c.clearance, c.allowance


# -- the helicopter on a roof ------------------------------------------------------------------------

def helicopter(scene, frame_end=41, land_key=True):
    """The roof-landing sample's helicopter and building, at 8 fps over frames 1–``frame_end``."""
    scene.render.fps, scene.render.fps_base = 8, 1.0
    scene.frame_start, scene.frame_end = 1, frame_end
    return _helicopter(scene, frame_end=frame_end, land_key=land_key)


def test_helicopter_lands_on_a_roof(empty_scene):
    scene = empty_scene
    heli, building = helicopter(scene)
    clearance, allowance = contact_clearance(scene, heli)
    assert clearance == pytest.approx(0.0, abs=1e-5) and allowance < -0.1   # the body's row reaches into the roof
    report = solve(scene, heli)
    worst, frame = baked_worst(scene, heli, building, range(1, 42))
    scene.frame_set(41)
    assert np.array(heli.matrix_world.translation) == pytest.approx(PAD, abs=1e-4)
    assert worst >= -TOL and worst == pytest.approx(0.0, abs=1e-4)   # touching at the end, never deeper
    FIGURES.update(heli_contact_m=clearance, heli_allowance_m=allowance, heli_worst_m=worst, heli_worst_frame=frame,
                   heli_solve_s=solve_time(report))


def test_helicopter_lands_on_a_roof_at_a_land_empty_alone(empty_scene):
    from scene_builders import constraint_empty
    scene = empty_scene
    heli, building = helicopter(scene, land_key=False)
    scene.frame_end = 250   # the landing, not the scene, ends the shot
    pad = constraint_empty(scene, "Pad", "LAND", PAD, size=0.5, rotation=(0.0, 0.0, math.radians(20.0)))
    pad.vehicle_motion.constraint_timing = "FRAME"
    pad.vehicle_motion.constraint_frame = 41
    report = solve(scene, heli)
    assert "baked frames 1–41" in report
    scene.frame_set(41)
    m = np.array(heli.matrix_world)
    assert m[:3, 3] == pytest.approx(PAD, abs=1e-4)
    assert math.atan2(m[1, 0], m[0, 0]) == pytest.approx(math.radians(20.0), abs=1e-4) and m[2, 2] == pytest.approx(1.0)
    worst, frame = baked_worst(scene, heli, building, range(1, 42))
    assert worst >= -TOL
    FIGURES.update(heli_land_worst_m=worst, heli_land_solve_s=solve_time(report))


def test_a_keyed_land_empty_ends_the_shot_and_is_the_goal(empty_scene):
    from scene_builders import constraint_empty
    from vehicle_motion.addon import scene_reader
    scene = empty_scene
    heli, _ = helicopter(scene, land_key=False)
    scene.frame_end = 250
    constraint_empty(scene, "Pad", "LAND", PAD, size=0.5, frame=33)
    problem = scene_reader.read_problem(scene, heli)
    fm = problem.frame_map
    assert (fm.frame_start, fm.frame_end) == (1, 33) and len(problem.segments) == 1
    goal = problem.scenario["goal"]
    assert goal["orientation"] == pytest.approx([1.0, 0.0, 0.0, 0.0]) and goal["velocity"] == [0.0, 0.0, 0.0]
    [contact] = problem.contacts
    assert contact.frame == 33 and contact.what == "landing 'Pad' (frame 33)"
    assert problem.scenario["obstacles"][0]["contact"][0]["time"] == pytest.approx(4.0)


def test_a_helicopter_keyed_into_the_roof_is_refused(empty_scene):
    scene = empty_scene
    heli, _ = helicopter(scene)
    heli.location = (PAD[0], PAD[1], ROOF - 0.3)
    heli.keyframe_insert("location", frame=41)
    bpy.context.view_layer.objects.active = heli
    with pytest.raises(RuntimeError, match=r"'Heli' at frame 41 is inside obstacle 'Building' \(clearance -0\.3 m, "
                                           r"margin 0\.1 m\)"):
        bpy.ops.vehicle_motion.solve_trajectory()


# -- the boat at a pier -------------------------------------------------------------------------------

def test_boat_docks_against_a_pier(empty_scene):
    """A 5 × 2 × 0.8 m box boat (origin at its centre) floating level runs 4 m straight ahead and stops, at
    rest, with its bow against a box pier."""
    from vehicle_motion.addon import scene_reader
    from vehicle_motion.core.scenario import Table
    from vehicle_motion.core.scenario.boat import read_boat
    scene = empty_scene
    scene.render.fps, scene.render.fps_base = 10, 1.0
    scene.frame_start, scene.frame_end = 1, 51
    boat = _mesh_object("Boat", _box((-2.5, -1.0, -0.4), (2.5, 1.0, 0.4)), scene.collection)
    boat.rotation_mode = "XYZ"
    boat.vehicle_motion.preset = "RIB_BOAT"
    vm = scene.vehicle_motion
    vm.steps_per_frame, vm.max_iter, vm.time_limit_s, vm.tol = 1, 500, 120.0, 1e-5

    def key(z):
        for frame, x in ((1, -2.0), (51, 2.0)):   # at rest; at the berth the bow (2.5 m ahead) is on the pier
            key_at_rest_pose(boat, frame, (x, 0.0, z))
    key(0.0)
    # floating level at rest: the height at which the solver's hull (this mesh) displaces the boat's mass
    z = float(read_boat(Table(dict(scene_reader.read_problem(scene, boat).scenario["vehicle"]))).float_height())
    key(z)
    pier = box_obstacle(scene, "Pier", (4.5, -4.0, -0.6), (6.5, 4.0, 0.8))
    clearance, allowance = contact_clearance(scene, boat)
    assert clearance == pytest.approx(0.0, abs=1e-5) and allowance < -0.1
    report = solve(scene, boat)
    worst, frame = baked_worst(scene, boat, pier, range(1, 52))
    scene.frame_set(51)
    assert np.array(boat.matrix_world.translation) == pytest.approx((2.0, 0.0, z), abs=1e-4)
    assert worst >= -TOL and worst == pytest.approx(0.0, abs=1e-4)
    FIGURES.update(boat_contact_m=clearance, boat_allowance_m=allowance, boat_worst_m=worst, boat_worst_frame=frame,
                   boat_solve_s=solve_time(report))


# -- the car against a wall ---------------------------------------------------------------------------

def test_car_parks_nose_in_against_a_wall(empty_scene):
    """A 4 × 1.8 × 1.4 m box car (origin mid-body at ground level, wheels at its corners) drives 12 m and
    parks with its bumper on a wall."""
    from small_shots import add_object
    scene = empty_scene
    scene.render.fps, scene.render.fps_base = 8, 1.0
    scene.frame_start, scene.frame_end = 1, 49
    car = _mesh_object("Car", _box((-2.0, -0.9, 0.0), (2.0, 0.9, 1.4)), scene.collection)
    car.rotation_mode = "XYZ"
    s = car.vehicle_motion
    s.preset = "HATCHBACK"
    for role, (x, y) in {"wheel_rear_left": (-1.2, 0.8), "wheel_rear_right": (-1.2, -0.8),
                         "wheel_front_left": (1.35, 0.8), "wheel_front_right": (1.35, -0.8)}.items():
        wheel = add_object(role, parent=car, kind="EMPTY")
        wheel.location = (x, y, 0.3)
        setattr(s, role, wheel)
    for frame, x in ((1, 0.0), (49, 12.0)):   # parked: at rest
        car.location = (x, 0.0, 0.0)
        car.rotation_euler = (0.0, 0.0, 0.0)
        s.speed = 0.0
        for path in ("location", "rotation_euler", "vehicle_motion.speed"):
            car.keyframe_insert(path, frame=frame)
    vm = scene.vehicle_motion
    vm.steps_per_frame, vm.max_iter, vm.time_limit_s = 1, 500, 120.0
    wall = box_obstacle(scene, "Wall", (14.0, -4.0, 0.0), (14.4, 4.0, 2.0))
    clearance, allowance = contact_clearance(scene, car)
    assert clearance == pytest.approx(0.0, abs=1e-5) and allowance < -0.1
    report = solve(scene, car)
    worst, frame = baked_worst(scene, car, wall, range(1, 50))
    scene.frame_set(49)
    assert np.array(car.matrix_world.translation) == pytest.approx((12.0, 0.0, 0.0), abs=1e-4)
    assert worst >= -TOL and worst == pytest.approx(0.0, abs=1e-4)
    FIGURES.update(car_contact_m=clearance, car_allowance_m=allowance, car_worst_m=worst, car_worst_frame=frame,
                   car_solve_s=solve_time(report))


def test_zz_figures():
    """The figures of this file's solves (printed with -s)."""
    print("\ncontacts figures:", {k: (round(v, 6) if isinstance(v, float) else v) for k, v in FIGURES.items()})
