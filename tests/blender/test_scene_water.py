"""A boat on Blender's Ocean modifier (issue 22, item 3): the water read from the scene (addon.scene_water) is the
evaluated Ocean sampled over the shot; Simulate and Solve float the boat on it.

Acceptance, measured: over a 10 s Simulate on the Ocean the boat's displaced mass, averaged over the shot, is its
mass within 1 % (the mean vertical force on a body whose motion stays bounded vanishes: the mean of (Π_s − m) g
is (m Δv_z + c Δz)/T, a few tenths of a percent here); the sampled surface is the evaluated mesh itself at the
grid points (against a mathutils.bvhtree ray cast straight down, within 1e-5 m: float32 vertices) and within
the bilinear interpolation error between them (stated below from the Ocean's own slopes). The Ocean modifier is
built into the bpy module (4.5 and 5.0): ``bpy.app.build_options.mod_oceansim``.
"""
from __future__ import annotations


import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
mathutils = pytest.importorskip("mathutils")

from build_car_tunnel_scene import _box, _mesh_object  # noqa: E402

L, B, H, MASS = 4.0, 2.0, 1.0, 2400.0            # a box boat: draft 0.3 m
DRAFT = MASS / (1000.0 * L * B)
FPS, SECONDS = 24, 10.0


def reader():
    from vehicle_motion.addon import scene_reader
    return scene_reader


def ocean_scene(scene, collection_name: str | None = None):
    """A 60 m Ocean (GENERATE) whose keyed Time runs with the scene's clock, and a box boat at rest on it."""
    if not bpy.app.build_options.mod_oceansim:
        pytest.skip("this bpy build has no Ocean modifier")
    scene.render.fps = FPS
    frame_end = 1 + int(SECONDS * FPS)
    scene.frame_start, scene.frame_end = 1, frame_end
    s = scene.vehicle_motion
    s.frame_start, s.frame_end, s.steps_per_frame = 1, frame_end, 2
    home = scene.collection
    if collection_name is not None:
        home = bpy.data.collections.new(collection_name)
        scene.collection.children.link(home)
    ocean = bpy.data.objects.new("Sea", bpy.data.meshes.new("Sea"))
    home.objects.link(ocean)
    mod = ocean.modifiers.new("Ocean", "OCEAN")
    mod.geometry_mode = "GENERATE"
    mod.spatial_size, mod.resolution, mod.viewport_resolution = 60, 8, 8
    mod.wind_velocity, mod.wave_scale, mod.choppiness, mod.random_seed = 6.0, 0.35, 0.5, 3
    for frame, t in ((1, 0.0), (frame_end, SECONDS)):
        mod.time = t
        ocean.keyframe_insert('modifiers["Ocean"].time', frame=frame)
    from vehicle_motion.addon import action_compat
    for fc in action_compat.fcurves(action_compat.assigned(ocean)):   # the Ocean's clock runs with the scene's
        for k in fc.keyframe_points:
            k.interpolation = "LINEAR"
    half = np.array([L, B, H]) / 2
    boat = _mesh_object("Boat", _box(tuple(-half), tuple(half)), scene.collection)
    boat.rotation_mode = "XYZ"
    boat.vehicle_motion.preset = "RIB_BOAT"
    boat.vehicle_motion.mass = MASS
    boat.location = (0.0, 0.0, H / 2 - DRAFT)
    boat.keyframe_insert("location", frame=1)
    scene.frame_set(1)
    return ocean, boat


def evaluated_triangles(obj) -> tuple[np.ndarray, list]:
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ev = obj.evaluated_get(depsgraph)
    mesh = ev.to_mesh()
    co = np.empty(3 * len(mesh.vertices))
    mesh.vertices.foreach_get("co", co)
    mesh.calc_loop_triangles()
    tris = [tuple(t.vertices) for t in mesh.loop_triangles]
    m = np.array(ev.matrix_world)
    ev.to_mesh_clear()
    return co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3], tris


def ray_heights(obj, xy: np.ndarray) -> np.ndarray:
    """The evaluated mesh's height under each point, by a BVH ray cast straight down (the reference)."""
    from mathutils.bvhtree import BVHTree
    v, tris = evaluated_triangles(obj)
    tree = BVHTree.FromPolygons([tuple(p) for p in v], tris)
    top = float(v[:, 2].max()) + 1.0
    out = []
    for x, y in xy:
        hit = tree.ray_cast(mathutils.Vector((x, y, top)), mathutils.Vector((0.0, 0.0, -1.0)))
        out.append(np.nan if hit[0] is None else hit[0].z)
    return np.array(out)


def test_ocean_sampling_matches_the_evaluated_mesh(empty_scene):
    from vehicle_motion.core.scenario import Table
    from vehicle_motion.core.scenario.water import read_water
    scene = empty_scene
    ocean, boat = ocean_scene(scene, collection_name="Water")
    problem = reader().read_simulation(scene, boat)
    grid = problem.scenario["vehicle"]["water"]["grid"]
    heights = grid["heights"]
    assert heights.shape[0] == 1 + int(SECONDS * FPS) and grid["interval"] == pytest.approx(1 / FPS)
    surface, orbital = read_water(Table({"water": problem.scenario["vehicle"]["water"]}, "vehicle"))
    assert surface.moving and not orbital
    (x0, y0), (dx, dy) = grid["origin"], grid["spacing"]
    ny, nx = heights.shape[1:]
    rng = np.random.default_rng(5)
    worst_node = worst_between = 0.0
    slack = []
    for frame in (1, 97, 241):
        scene.frame_set(frame)
        t = (frame - 1) / FPS
        h = heights[frame - 1]
        # at the grid points: the mesh itself
        j, k = rng.integers(1, ny - 1, 40), rng.integers(1, nx - 1, 40)
        nodes = np.column_stack([x0 + k * dx, y0 + j * dy])
        worst_node = max(worst_node, float(np.max(np.abs(ray_heights(ocean, nodes) - h[j, k]))))
        # between them: the bilinear interpolation error ⅛ dx² |h_xx| + ⅛ dy² |h_yy| + ¼ dx dy |h_xy|, the second
        # derivatives taken as the grid's largest second differences around the cell (the mesh is piecewise
        # linear: its kinks show in them), with a factor 2
        pts = np.column_stack([rng.uniform(x0 + dx, x0 + (nx - 3) * dx, 60),
                               rng.uniform(y0 + dy, y0 + (ny - 3) * dy, 60)])
        err = np.abs(ray_heights(ocean, pts) - surface(pts[:, 0], pts[:, 1], np.full(60, t)))
        for (px, py), e in zip(pts, err):
            i0, j0 = int((px - x0) // dx), int((py - y0) // dy)
            n = h[j0 - 1:j0 + 3, i0 - 1:i0 + 3]
            bound = 2 * (np.abs(np.diff(n, 2, axis=1)).max() / 8 + np.abs(np.diff(n, 2, axis=0)).max() / 8
                         + np.abs(np.diff(np.diff(n, axis=0), axis=1)).max() / 4)
            slack.append(bound - e)
        worst_between = max(worst_between, float(err.max()))
    span = float(heights.max() - heights.min())
    print(f"Ocean sampled on {nx} × {ny} points ({dx:.3f} × {dy:.3f} m), {heights.shape[0]} frames, crest to trough "
          f"{span:.3f} m: at the grid points {worst_node:.2e} m off the evaluated mesh, between them at most "
          f"{worst_between:.3f} m ({worst_between / span:.1%} of the span), every point within its bilinear bound "
          f"(least slack {min(slack):.4f} m)")
    assert worst_node < 1e-5
    assert min(slack) >= 0.0 and worst_between < 0.05 * span
    assert span > 0.3          # a real sea


def test_boat_floats_its_mass_on_the_ocean_over_ten_seconds(empty_scene, vm):
    from vehicle_motion.addon import solving
    from vehicle_motion.core.lie import quaternion
    from vehicle_motion.core.scenario import Table
    from vehicle_motion.core.scenario.boat import read_boat
    scene = empty_scene
    ocean, boat = ocean_scene(scene)                       # found by its Ocean modifier
    problem = reader().read_simulation(scene, boat)
    assert "water" in problem.scenario["vehicle"]
    world = solving.simulate(problem)
    model = read_boat(Table(problem.scenario["vehicle"], "vehicle"))
    t = np.asarray(world.time)
    assert t[-1] == pytest.approx(SECONDS)
    R = quaternion.to_matrix(np.asarray(world.orientation))
    x = np.asarray(world.position) * scene.unit_settings.scale_length
    displaced = np.asarray(model.displaced_mass(R, x, t))
    mean = float(np.sum(0.5 * (displaced[1:] + displaced[:-1]) * np.diff(t)) / SECONDS)   # trapezoids
    heave = np.ptp(x[:, 2])
    print(f"10 s on the Ocean: mean displaced mass {mean:.2f} kg for {MASS:g} kg ({mean / MASS - 1:+.3%}); "
          f"heave range {heave:.3f} m, displaced mass {displaced.min():.0f} … {displaced.max():.0f} kg")
    assert abs(mean / MASS - 1) < 0.01
    assert heave > 0.05 and displaced.max() - displaced.min() > 0.05 * MASS   # it rides the waves

    # the scene setting takes the water from elsewhere: no water named, calm (no [vehicle.water])
    scene.vehicle_motion.water = ocean
    assert "water" in reader().read_simulation(scene, boat).scenario["vehicle"]
    ocean.modifiers.remove(ocean.modifiers["Ocean"])
    scene.vehicle_motion.water = None
    assert "water" not in reader().read_simulation(scene, boat).scenario["vehicle"]


def test_solve_plans_through_the_ocean(empty_scene):
    """Solve on the Ocean: the problem carries the sampled water (over the keys' region), the boat's goal height is
    left to the waves, and the solve converges; the stored motion heaves with them."""
    from operator_runs import solve_active, stored
    scene = empty_scene
    ocean, boat = ocean_scene(scene)
    boat.location = (4.0, 1.0, H / 2 - DRAFT)
    boat.keyframe_insert("location", frame=1 + 5 * FPS)
    s = scene.vehicle_motion
    s.frame_end = 1 + 5 * FPS                              # a 5 s shot
    s.use_frame_range = False
    problem = reader().read_problem(scene, boat)
    water = problem.segments[0].scenario["vehicle"]["water"]
    (x0, y0), (dx, dy) = water["grid"]["origin"], water["grid"]["spacing"]
    ny, nx = water["grid"]["heights"].shape[1:]
    assert x0 <= 0.0 and y0 <= 0.0 and x0 + (nx - 1) * dx >= 4.0 and y0 + (ny - 1) * dy >= 1.0
    assert water["grid"]["heights"].shape[0] == 1 + 5 * FPS and water["time_origin"] == 0.0
    report = solve_active(scene, boat)
    trajectory = stored(boat)
    z = np.asarray(trajectory.position)[:, 2]
    print(f"Solve on the Ocean: {report}; heave range {np.ptp(z):.3f} m")
    assert trajectory.stats["converged"], report
    assert np.asarray(trajectory.position)[-1, :2] == pytest.approx([4.0, 1.0], abs=1e-3)
    assert np.ptp(z) > 0.05
