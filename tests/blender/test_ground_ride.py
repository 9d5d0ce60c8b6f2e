"""A car baked over the scene's Ground: the wheels stand on it at every frame, the body pitches with the
slope, the wheels spin along their own 3D paths (addon.ride → core.terrain.ride)."""
from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
from scene_builders import collection, ground_grade, mesh_object, small_car  # noqa: E402  (after bpy)
from small_shots import add_object  # noqa: E402

FPS, RADIUS, GRADE = 12, 0.3, 0.10
CORNERS = {"wheel_rear_left": (0.0, 0.8), "wheel_rear_right": (0.0, -0.8),
           "wheel_front_left": (2.5, 0.8), "wheel_front_right": (2.5, -0.8)}


def _hill(x, y):
    """A 10 % grade from x = 4 m, with a 12 cm bump at x = 14 m."""
    return GRADE * np.maximum(x - 4.0, 0.0) + 0.12 * np.exp(-((x - 14.0) / 1.5) ** 2)


def _scene(scene, unit: float = 1.0):
    """A box car with its four wheel empties at the corners (the rear axle at the origin), keyed 24 m along
    +x over 4 s, and a Ground mesh of the hill at 0.25 m resolution; ``unit`` scene units a metre."""
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.unit_settings.scale_length = 1.0 / unit
    car = add_object("Car")
    car.scale = (2.0 * unit, 0.9 * unit, 0.5 * unit)
    car.rotation_mode = "XYZ"
    car.vehicle_motion.preset = "HATCHBACK"
    car.vehicle_motion.car_geometry = "TYPED"
    car.vehicle_motion.wheel_radius, car.vehicle_motion.wheelbase = RADIUS, 2.5
    for role, (x, y) in CORNERS.items():
        wheel = add_object(role, parent=car, kind="EMPTY")
        wheel.location = (x / 2.0, y / 0.9, RADIUS / 0.5)   # in the car's scaled frame
        setattr(car.vehicle_motion, role, wheel)
    for frame, x in ((1, 0.0), (1 + 4 * FPS, 24.0)):
        car.location = (x * unit, 0.0, 0.0)
        car.rotation_euler = (0.0, 0.0, 0.0)
        car.keyframe_insert("location", frame=frame)
        car.keyframe_insert("rotation_euler", frame=frame)
    scene.frame_start, scene.frame_end = 1, 1 + 4 * FPS
    vm = scene.vehicle_motion
    vm.frame_start, vm.frame_end, vm.steps_per_frame, vm.solver_backend = 1, 1 + 4 * FPS, 1, "SCIPY"
    s = np.linspace(-10.0, 40.0, 201)
    X, Y = np.meshgrid(s, np.linspace(-6.0, 6.0, 49), indexing="ij")
    n, m = X.shape
    i = (np.arange(n - 1)[:, None] * m + np.arange(m - 1)[None, :]).ravel()
    vertices = np.stack([X.ravel(), Y.ravel(), _hill(X, Y).ravel()], 1) * unit
    mesh_object("Road", vertices, np.stack([i, i + m, i + m + 1, i + 1], 1), collection("Ground"))
    bpy.context.view_layer.objects.active = car
    return car


def _frames(scene, car):
    """Per frame: the car's world matrix and each wheel's world matrix (metres)."""
    unit = 1.0 / scene.unit_settings.scale_length
    out = []
    for f in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(f)
        body = np.array(car.matrix_world)
        wheels = {role: np.array(getattr(car.vehicle_motion, role).matrix_world) for role in CORNERS}
        for m in (body, *wheels.values()):
            m[:3, 3] /= unit
        out.append((body, wheels))
    return out


@pytest.mark.parametrize("unit", [1.0, 100.0])
def test_wheels_stand_on_the_ground_and_the_body_follows_the_slope(empty_scene, unit):
    scene = empty_scene
    car = _scene(scene, unit)
    assert bpy.ops.vehicle_motion.solve_trajectory() == {"FINISHED"}
    from vehicle_motion.core.terrain.surface import FunctionTerrain
    ground = FunctionTerrain(_hill, lambda x, y: np.stack([np.where(x > 4.0, GRADE, 0.0) + 0.12 * np.exp(
        -((x - 14.0) / 1.5) ** 2) * (-2.0 * (x - 14.0) / 1.5**2), np.zeros_like(y)], -1))
    worst, pitches = 0.0, []
    for body, wheels in _frames(scene, car):
        for m in wheels.values():
            hub = m[:3, 3]
            axle = body[:3, 1] / np.linalg.norm(body[:3, 1])
            n = ground.normal(hub[0], hub[1])
            u = n - (n @ axle) * axle
            for _ in range(3):   # the disc's lowest point towards the ground under it
                contact = hub - RADIUS * u / np.linalg.norm(u)
                n = ground.normal(contact[0], contact[1])
                u = n - (n @ axle) * axle
            contact = hub - RADIUS * u / np.linalg.norm(u)
            worst = max(worst, abs(contact[2] - ground.height(contact[0], contact[1])))
        forward = body[:3, 0] / np.linalg.norm(body[:3, 0])
        pitches.append((body[0, 3], np.degrees(np.arctan2(forward[2], np.hypot(forward[0], forward[1])))))
    assert worst < 0.01, f"a wheel is {worst * 100:.2f} cm off the ground"
    steady = [p for x, p in pitches if 18.0 < x < 21.0]   # past the bump, all four wheels on the grade
    assert steady and max(abs(p - np.degrees(np.arctan(GRADE))) for p in steady) < 2.0


def test_flat_ground_bakes_as_without_ground(empty_scene):
    """A level Ground at the keys' height: the wheels roll on it at hub height, and the body only squats
    and dives with the shot's acceleration (centimetres, under 2°)."""
    scene = empty_scene
    car = _scene(scene)
    bpy.data.objects.remove(scene.objects["Road"])
    mesh_object("Floor", [(-50, -50, 0), (50, -50, 0), (50, 50, 0), (-50, 50, 0)], [(0, 1, 2, 3)],
                bpy.data.collections["Ground"])
    assert bpy.ops.vehicle_motion.solve_trajectory() == {"FINISHED"}
    for body, wheels in _frames(scene, car):
        assert abs(body[2, 3]) < 0.05 and abs(body[2, 0]) < np.radians(2.0) * np.linalg.norm(body[:3, 0])
        for m in wheels.values():
            assert m[2, 3] == pytest.approx(RADIUS, abs=1e-4)


def test_simulate_climbs_slower_on_the_ground(empty_scene, vm):
    """Simulate (keyed torque) over a 10 % Ground grade: the car's speed over the shot matches the drive
    equation with the slope's torque −m g ρ s, checked against core's own simulate on the plane."""
    from vehicle_motion.core.scenario import Table
    from vehicle_motion.core.simulation import simulate
    scene = empty_scene
    car = small_car(scene, keys=((1, (0.0, 0.0, 0.0), 0.0), (17, (0.0, 0.0, 0.0), 0.0)))
    scene.render.fps, scene.render.fps_base = 8, 1.0
    scene.vehicle_motion.frame_start, scene.vehicle_motion.frame_end, scene.vehicle_motion.steps_per_frame = 1, 17, 2
    car.vehicle_motion.speed = 4.0
    for name, value in (("torque", 500.0), ("steering_rate", 0.0)):
        car[name] = value
        car.keyframe_insert(f'["{name}"]', frame=1)
    vm.make_active(car)
    assert bpy.ops.vehicle_motion.simulate() == {"FINISHED"}
    scene.frame_set(17)
    flat = car.matrix_world.translation.x
    bpy.ops.vehicle_motion.clear_bake()
    ground_grade(GRADE)
    vm.make_active(car)
    assert bpy.ops.vehicle_motion.simulate() == {"FINISHED"}
    scene.frame_set(17)
    s = car.vehicle_motion
    expected = simulate(Table({
        "vehicle": {"type": "car", "preset": "hatchback", "wheel_inertia": s.wheel_inertia,
                    "wheel_radius": s.wheel_radius, "wheelbase": s.wheelbase,
                    "terrain": {"slope": [GRADE, 0.0]}},
        "integrator": {"dt": 1 / 16, "steps": 32},
        "initial": {"wheel_rate": 4.0 / s.wheel_radius},
        "controls": {"torque": {"offset": 500.0}},
    }))
    assert car.matrix_world.translation.x == pytest.approx(expected.position[-1, 0], abs=1e-4)
    assert car.matrix_world.translation.x < flat - 0.5
