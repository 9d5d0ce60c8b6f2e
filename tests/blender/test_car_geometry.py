"""A car's geometry read from its wheels, in real bpy: the same shot keyed by a car whose origin is at its rear
axle, at the middle of its bounding box and at its front bumper drives its rear axle along the same path with
no sideways slip there; the wheels' measured radii (0.34 m rear, 0.36 m front) are used; each wheel spins
along its own path (left and right differ in the turn, front wheels along their steered heading); wheels that
are empties give their centres and the typed radius; Typed Values override. Everything is measured on the
baked scene (frame_set + matrix_world)."""
from __future__ import annotations

import math
import time

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from build_car_tunnel_scene import _box, _cylinder, _mesh_object  # noqa: E402

FPS = 12
KEYS = ((1, (0.0, 0.0), 0.0), (31, (10.0, 1.5), math.radians(20.0)), (61, (17.0, 8.0), math.radians(75.0)))
WHEELBASE, TRACK, REAR_R, FRONT_R, WIDTH = 2.6, 1.5, 0.34, 0.36, 0.24
BODY = ((-0.9, -0.9, 0.3), (3.5, 0.9, 1.4))          # the body box, rear-axle coordinates (x forward, z up)
ORIGINS = {"rear axle": (0.0, 0.0, 0.0), "middle": (1.3, 0.0, 0.7), "front bumper": (3.5, 0.0, 0.5)}
WHEELS = {"wheel_rear_left": ((0.0, 0.5 * TRACK, REAR_R), REAR_R),
          "wheel_rear_right": ((0.0, -0.5 * TRACK, REAR_R), REAR_R),
          "wheel_front_left": ((WHEELBASE, 0.5 * TRACK, FRONT_R), FRONT_R),
          "wheel_front_right": ((WHEELBASE, -0.5 * TRACK, FRONT_R), FRONT_R)}
FIGURES: dict[str, float] = {}


def _rot(heading: float) -> np.ndarray:
    c, s = math.cos(heading), math.sin(heading)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def build_car(name: str, origin, *, empties: bool = False, keys=KEYS):
    """A car as an animator builds it: a body mesh and four wheel cylinders (turned 90° about X so their axle
    is sideways; Wheel Axis Z) as children, the front ones on steering knuckles; the object's origin at
    ``origin`` (rear-axle coordinates); keyed at (frame, rear axle (x, y), heading)."""
    origin = np.asarray(origin, dtype=float)
    lo, hi = (np.asarray(c) - origin for c in BODY)
    car = _mesh_object(name, _box(lo, hi), bpy.context.scene.collection)
    car.rotation_mode = "XYZ"
    s = car.vehicle_motion
    s.preset = "HATCHBACK"
    s.wheel_axis = "Z"
    for role, (centre, radius) in WHEELS.items():
        place = np.asarray(centre) - origin
        if empties:
            wheel = bpy.data.objects.new(f"{name} {role}", None)
            bpy.context.scene.collection.objects.link(wheel)
        else:
            wheel = _mesh_object(f"{name} {role}", _cylinder(radius, WIDTH), bpy.context.scene.collection)
        wheel.rotation_mode = "XYZ"
        wheel.rotation_euler = (math.pi / 2, 0.0, 0.0)
        parent = car
        if role.startswith("wheel_front"):
            knuckle = bpy.data.objects.new(f"{name} knuckle {role[12:]}", None)
            bpy.context.scene.collection.objects.link(knuckle)
            knuckle.parent, knuckle.location = car, place
            setattr(s, "knuckle" + role[5:], knuckle)
            parent, place = knuckle, (0.0, 0.0, 0.0)
        wheel.parent, wheel.location = parent, place
        setattr(s, role, wheel)
    for frame, (x, y), heading in keys:
        car.location = np.array([x, y, 0.0]) + _rot(heading) @ origin
        car.rotation_euler = (0.0, 0.0, heading)
        car.keyframe_insert("location", frame=frame)
        car.keyframe_insert("rotation_euler", frame=frame)
    return car


def setup_scene():
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.frame_start, scene.frame_end = KEYS[0][0], KEYS[-1][0]
    vm = scene.vehicle_motion
    vm.steps_per_frame, vm.solver_backend = 1, "SCIPY"
    scene.frame_set(1)
    return scene


def solve(car) -> str:
    scene = bpy.context.scene
    bpy.context.view_layer.objects.active = car
    started = time.perf_counter()
    result = bpy.ops.vehicle_motion.solve_trajectory()
    FIGURES[f"solve_seconds_{car.name}"] = time.perf_counter() - started
    report = scene.vehicle_motion.last_report
    assert result == {"FINISHED"}, report
    return report


@pytest.fixture(scope="module")
def solved(addon, tmp_path_factory):
    """The shot solved for a car with its origin at each of ORIGINS (three cars in one scene, no obstacles)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    setup_scene()
    reports = {}
    for label, origin in ORIGINS.items():
        reports[label] = solve(build_car(label, origin))
    path = tmp_path_factory.mktemp("car_geometry") / "solved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    yield path, reports
    if FIGURES:
        print("\nmeasured:", ", ".join(f"{k} = {v:.6g}" for k, v in sorted(FIGURES.items())))


def reopen(path):
    bpy.ops.wm.open_mainfile(filepath=str(path))
    return bpy.context.scene


def frames(scene):
    return range(scene.frame_start, scene.frame_end + 1)


def world(obj) -> np.ndarray:
    return np.array(obj.matrix_world)


def rear_axle_path(scene, car) -> tuple[np.ndarray, np.ndarray]:
    """(midpoints of the rear wheels' baked centres, body heading) at every frame."""
    s = car.vehicle_motion
    points, headings = [], []
    for f in frames(scene):
        scene.frame_set(f)
        points.append(0.5 * (world(s.wheel_rear_left)[:3, 3] + world(s.wheel_rear_right)[:3, 3]))
        m = world(car)
        headings.append(math.atan2(m[1, 0], m[0, 0]))
    return np.array(points), np.unwrap(headings)


def test_the_origin_anywhere_gives_the_same_rear_axle_motion_without_slip(solved):
    path, reports = solved
    scene = reopen(path)
    for report in reports.values():
        assert "converged" in report or report.startswith("Solved"), report
        assert "different radii" not in report and "Wheel Axis" not in report, report
    paths = {label: rear_axle_path(scene, bpy.data.objects[label]) for label in ORIGINS}
    reference, _ = paths["rear axle"]
    # the keys are met by the rear axle, wherever the origin is
    for frame, (x, y), _ in KEYS:
        assert reference[frame - 1][:2] == pytest.approx([x, y], abs=0.05 + 1e-3)
    assert reference[0][:2] == pytest.approx([0.0, 0.0], abs=1e-4)
    assert reference[-1][:2] == pytest.approx(KEYS[-1][1], abs=1e-4)
    worst = 0.0
    for label in ("middle", "front bumper"):
        worst = max(worst, float(np.max(np.linalg.norm(paths[label][0] - reference, axis=1))))
    FIGURES["rear_axle_difference_between_origins_m"] = worst
    assert worst <= 1e-3
    # no sideways slip at the rear axle: each frame's chord lies along the body's mean heading of the frame
    dt = 1.0 / FPS
    worst_slip = 0.0
    for points, heading in paths.values():
        chord = np.diff(points[:, :2], axis=0)
        speed = np.linalg.norm(chord, axis=1) / dt
        mid = 0.5 * (heading[1:] + heading[:-1])
        slip = np.abs(np.remainder(np.arctan2(chord[:, 1], chord[:, 0]) - mid + math.pi, 2 * math.pi) - math.pi)
        fast = speed > 1.0
        assert np.count_nonzero(fast) > len(speed) // 2
        worst_slip = max(worst_slip, math.degrees(float(np.max(slip[fast]))))
    FIGURES["max_rear_axle_slip_deg"] = worst_slip
    assert worst_slip <= 0.5


def test_measured_radii_and_wheelbase_are_used_and_kept_with_the_trajectory(solved):
    from vehicle_motion.addon import baking, scene_reader, storage
    path, _ = solved
    scene = reopen(path)
    for label, origin in ORIGINS.items():
        car = bpy.data.objects[label]
        problem = scene_reader.read_problem(scene, car)
        vehicle = problem.scenario["vehicle"]
        assert vehicle["wheel_radius"] == pytest.approx(REAR_R, abs=1e-6)
        assert vehicle["wheelbase"] == pytest.approx(WHEELBASE, abs=1e-6)
        assert problem.scenario["start"]["position"] == pytest.approx([0.0, 0.0], abs=1e-6)
        stats = storage.load(car).stats
        assert stats.get("body_offset", [0.0, 0.0, 0.0]) == pytest.approx(-np.asarray(origin), abs=1e-6)
        radii = {role: w["radius"] for role, w in stats["wheels"].items()}
        assert radii == pytest.approx({r: w[1] for r, w in WHEELS.items()}, abs=1e-6)
    # a re-bake of the stored trajectory gives the same motion
    car = bpy.data.objects["front bumper"]
    s = car.vehicle_motion
    before = {}
    for f in (1, 20, 45, 61):
        scene.frame_set(f)
        before[f] = [world(ob) for ob in (car, s.wheel_rear_left, s.wheel_front_right)]
    baking.bake_stored(car, scene)
    for f, matrices in before.items():
        scene.frame_set(f)
        for ob, m in zip((car, s.wheel_rear_left, s.wheel_front_right), matrices):
            assert world(ob) == pytest.approx(m, abs=1e-5)


def _spin(parent, wheel, rest) -> float:
    """The wheel's rotation about its axle (its local Z, after its rest rotation), relative to its parent."""
    p, w = world(parent)[:3, :3], world(wheel)[:3, :3]
    local = (p / np.linalg.norm(p, axis=0)).T @ (w / np.linalg.norm(w, axis=0))
    spin = rest.T @ local
    return math.atan2(spin[1, 0], spin[0, 0])


def test_each_wheel_spins_along_its_own_path(solved):
    """Each wheel's rotation about its axle between frames × its own measured radius = the distance its baked
    contact point (its centre on the ground) moved, within 1 %; the outer rear wheel turns more than the inner."""
    path, _ = solved
    scene = reopen(path)
    rest = np.array(bpy.data.objects["middle wheel_rear_left"].matrix_basis)[:3, :3]
    rest = rest / np.linalg.norm(rest, axis=0)
    worst = 0.0
    for label in ORIGINS:
        car = bpy.data.objects[label]
        s = car.vehicle_motion
        parents = {"wheel_rear_left": car, "wheel_rear_right": car, "wheel_front_left": s.knuckle_front_left,
                   "wheel_front_right": s.knuckle_front_right}
        spins = {role: [] for role in WHEELS}
        centres = {role: [] for role in WHEELS}
        for f in frames(scene):
            scene.frame_set(f)
            for role, parent in parents.items():
                wheel = getattr(s, role)
                spins[role].append(_spin(parent, wheel, rest))
                centres[role].append(world(wheel)[:3, 3].copy())
        totals = {}
        for role, (_, radius) in WHEELS.items():
            turn = np.remainder(np.diff(spins[role]) + math.pi, 2 * math.pi) - math.pi   # each |step| < π here
            distance = np.linalg.norm(np.diff(np.array(centres[role])[:, :2], axis=0), axis=1)
            rolled = -turn * radius      # local Z (Wheel Axis) points to the car's right: rolling forward is −Z
            assert np.all(rolled > -1e-6), (label, role)                  # the spin rolls it forward
            moving = distance > 0.05
            error = float(np.max(np.abs(rolled[moving] - distance[moving]) / distance[moving]))
            worst = max(worst, error)
            total = float(np.sum(rolled)) / float(np.sum(distance)) - 1.0
            assert abs(total) < 0.01 and error < 0.01, (label, role, error, total)
            totals[role] = float(np.sum(rolled)) / radius
            FIGURES[f"spin_total_{role}_rad"] = totals[role]
        assert totals["wheel_rear_right"] > totals["wheel_rear_left"] * 1.02   # a left turn: the right wheel is outer
        assert totals["wheel_front_right"] > totals["wheel_front_left"]
    FIGURES["max_wheel_spin_error_per_frame"] = worst


def test_empties_as_wheels_give_their_centres_and_the_typed_radius(addon):
    """Wheels that are empties (a rig without wheel meshes yet): the rear axle midway between the rear empties,
    a typed Wheel Radius below them, the wheelbase from their centres, the typed radius; no warning."""
    from vehicle_motion.addon import scene_reader
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = setup_scene()
    car = build_car("Car", ORIGINS["front bumper"], empties=True)
    problem = scene_reader.read_problem(scene, car)
    vehicle = problem.scenario["vehicle"]
    assert vehicle["wheel_radius"] == pytest.approx(0.30) and vehicle["wheelbase"] == pytest.approx(WHEELBASE)
    assert problem.warnings == []
    # the rear empties are at 0.34 m: the rear axle 0.30 m below them, 3.5 m behind the origin
    assert problem.frame_map.body_offset == pytest.approx((-3.5, 0.0, -0.5 + 0.34 - 0.30), abs=1e-6)
    assert problem.scenario["start"]["position"] == pytest.approx([0.0, 0.0], abs=1e-6)
    assert problem.scenario["goal"]["position"] == pytest.approx(list(KEYS[-1][1]), abs=1e-6)
    # Typed Values override the meshes' measures (a car with wheel meshes)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = setup_scene()
    car = build_car("Car", ORIGINS["middle"])
    car.vehicle_motion.car_geometry = "TYPED"
    car.vehicle_motion.wheelbase = 2.7
    vehicle = scene_reader.read_problem(scene, car).scenario["vehicle"]
    assert (vehicle["wheel_radius"], vehicle["wheelbase"]) == pytest.approx((0.30, 2.7))
    car.vehicle_motion.car_geometry = "WHEELS"
    vehicle = scene_reader.read_problem(scene, car).scenario["vehicle"]
    assert (vehicle["wheel_radius"], vehicle["wheelbase"]) == pytest.approx((REAR_R, WHEELBASE), abs=1e-6)


def test_a_car_built_backwards_is_refused(addon):
    from vehicle_motion.addon import scene_reader
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = setup_scene()
    car = build_car("Car", ORIGINS["middle"])
    s = car.vehicle_motion
    s.wheel_rear_left, s.wheel_front_left = s.wheel_front_left, s.wheel_rear_left
    s.wheel_rear_right, s.wheel_front_right = s.wheel_front_right, s.wheel_rear_right
    with pytest.raises(scene_reader.SceneError, match=r"the front wheels of 'Car' are 2.6 m behind its rear wheels "
                                                      r"along its X axis"):
        scene_reader.read_problem(scene, car)


def test_simulate_drives_the_rear_axle_of_a_car_keyed_by_its_bumper(addon):
    """Simulate starts the car model at the rear axle too: keyed by its front bumper at (0, 0) heading 0 with a
    constant torque and steering rate, the rear axle starts 3.5 m behind the bumper, rolls at the start speed
    over the measured 0.34 m radius, and never slips sideways."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = setup_scene()
    car = build_car("Car", ORIGINS["front bumper"], keys=((1, (0.0, 0.0), 0.0), (61, (0.0, 0.0), 0.0)))
    car.vehicle_motion.speed = 3.0
    car.keyframe_insert("vehicle_motion.speed", frame=1)
    car["torque"], car["steering_rate"] = 300.0, 0.15
    bpy.context.view_layer.objects.active = car
    assert bpy.ops.vehicle_motion.simulate() == {"FINISHED"}, scene.vehicle_motion.last_report
    points, heading = rear_axle_path(scene, car)
    assert points[0][:2] == pytest.approx([0.0, 0.0], abs=1e-5)       # the keyed rear axle, not the bumper
    scene.frame_set(1)
    assert np.array(car.matrix_world.translation) == pytest.approx([3.5, 0.0, 0.5], abs=1e-5)
    chord = np.diff(points[:, :2], axis=0)
    assert np.linalg.norm(chord[0]) * FPS == pytest.approx(3.0, rel=0.05)  # 3 m/s from the first frame
    mid = 0.5 * (heading[1:] + heading[:-1])
    slip = np.abs(np.remainder(np.arctan2(chord[:, 1], chord[:, 0]) - mid + math.pi, 2 * math.pi) - math.pi)
    assert heading[-1] > 0.3 and math.degrees(float(np.max(slip))) <= 0.5
    from vehicle_motion.addon import storage
    stats = storage.load(car).stats
    assert stats["body_offset"] == pytest.approx([-3.5, 0.0, -0.5], abs=1e-6)
