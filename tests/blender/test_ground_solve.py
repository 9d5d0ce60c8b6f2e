"""A car solved over the scene's Ground: the slope under it enters its drive (core.terrain, [vehicle.terrain])."""
from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
from scene_builders import ground_grade, small_car  # noqa: E402  (after bpy)


def _solve(scene, car):
    scene.vehicle_motion.solver_backend = "SCIPY"
    bpy.context.view_layer.objects.active = car
    assert bpy.ops.vehicle_motion.solve_trajectory() == {"FINISHED"}
    from vehicle_motion.addon import storage
    return storage.load(car)


def test_the_ground_reaches_the_car_scenario_in_solve_coordinates(empty_scene):
    from vehicle_motion.addon import scene_reader
    scene = empty_scene
    scene.unit_settings.scale_length = 0.01       # a scene in centimetres
    car = small_car(scene, keys=((1, (500.0, 300.0, 0.0), 0.0), (25, (1500.0, 300.0, 0.0), 0.0)))
    ground_grade(0.05, size=20000.0)
    problem = scene_reader.read_problem(scene, car)
    terrain = problem.scenario["vehicle"]["terrain"]
    from vehicle_motion.core.terrain.mesh import MeshTerrain
    ground = MeshTerrain.from_arrays(terrain["vertices"], terrain["triangles"])
    # the rise is 5 % of the world x in metres, whatever the solve origin
    fm = problem.frame_map
    for p in ([500.0, 300.0, 0.0], [1500.0, 300.0, 0.0]):
        x, y, _ = fm.to_solve(np.array(p))
        assert ground.height(x, y) == pytest.approx(0.05 * p[0] * 0.01, abs=1e-6)   # float32 mesh coordinates of 100 m
    assert not any("leaves the ground" in w for w in problem.warnings)


def test_uphill_takes_more_torque_than_flat(empty_scene):
    """The wheel's impulse balance over the shot, ∫ f dt − m g ρ s T = M (u_end − u_start) on a straight
    grade s (M = I + ρ² m): the uphill solve pays the slope's torque m g ρ s on top of its own speed change."""
    from vehicle_motion.addon import scene_reader
    scene = empty_scene
    car = small_car(scene)           # 10 m along +x in 3 s, the end speed free
    flat = _solve(scene, car)
    ground_grade(0.10)
    vehicle = scene_reader.read_problem(scene, car).scenario["vehicle"]
    up = _solve(scene, car)
    assert "terrain" in vehicle and up.stats["status"] == flat.stats["status"] == "converged"
    m, rho, inertia = vehicle["mass"], vehicle["wheel_radius"], vehicle["wheel_inertia"]
    M, T = inertia + rho**2 * m, up.time[-1] - up.time[0]

    def slope_torque(traj) -> float:   # what the balance leaves for gravity, per second
        speed = traj.linear_velocity[:, 0]
        return traj.controls["torque"].mean() - M * (speed[-1] - speed[0]) / rho / T

    assert abs(slope_torque(flat)) < 0.01 * m * 9.81 * rho * 0.10
    assert slope_torque(up) == pytest.approx(m * 9.81 * rho * 0.10, rel=0.01)
    assert up.controls["torque"].mean() > flat.controls["torque"].mean() + 200.0


def test_keys_off_the_ground_are_warned(empty_scene):
    from vehicle_motion.addon import scene_reader
    scene = empty_scene
    car = small_car(scene, keys=((1, (0.0, 0.0, 0.0), 0.0), (25, (10.0, 0.0, 0.0), 0.0)))
    ground_grade(0.0, size=12.0)    # a 12 m pad: the end key at x = 10 is on it, ...
    scene.objects["Road"].location.x = -4.0          # ... moved 4 m back it is not
    problem = scene_reader.read_problem(scene, car)
    assert any("leaves the ground 'Ground' at frame 25" in w for w in problem.warnings), problem.warnings


def test_keys_on_the_ground_surface_are_not_warned_about_their_height(empty_scene):
    """Keyed where the animator put it, on the Ground (here 1 m higher at the end key): the ground sets
    the height, so no 'drives at its start height' warning."""
    from vehicle_motion.addon import scene_reader
    scene = empty_scene
    car = small_car(scene, keys=((1, (0.0, 0.0, 0.0), 0.0), (25, (10.0, 0.0, 1.0), 0.0)))
    problem = scene_reader.read_problem(scene, car)
    assert any("drives at its start height" in w for w in problem.warnings)   # flat ground: warned
    ground_grade(0.10)
    problem = scene_reader.read_problem(scene, car)
    assert not any("drives at its start height" in w for w in problem.warnings), problem.warnings
