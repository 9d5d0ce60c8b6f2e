"""A boat floats on its own closed mesh (scene_geometry.boat_hull), in Simulate and in Solve,
with its origin anywhere: the centre of mass is the mesh's volume centroid, the solve plans it and the
bake puts the object back. An open mesh or a proxy falls back to the default hull with a warning; a
dense mesh floats on its convex hull. Checked on the baked F-curves in world space. A helicopter's
rotor hubs come from its rotor objects (scene_geometry.measure_rotors), about the same centre of mass.

Reference: a box of L × B × H and mass m floats with its bottom at the draft d = m / (ρ L B) below
the water (z = 0).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
bmesh = pytest.importorskip("bmesh")

from build_car_tunnel_scene import _box, _empty, _mesh_object  # noqa: E402
from scene_kit import new_scene, solve_settings  # noqa: E402

L, B, H, MASS = 4.0, 2.0, 1.0, 800.0            # the box hull and the RIB preset's mass
DRAFT = MASS / (1000.0 * L * B)                # 0.1 m
CENTRE = (0.8, 0.0, 0.25)                      # the box's centre from the object's origin (local, metres)
DEFAULT_HULL = "it floats on a default 5 × 2 × 0.8 m hull"


def reader():
    from vehicle_motion.addon import scene_reader
    return scene_reader


def origin_height(centre_z: float = CENTRE[2]) -> float:
    """The origin's height when the box floats level at rest: its centre H/2 − d above the water."""
    return H / 2 - DRAFT - centre_z


def boat_object(collection, centre=CENTRE, size=(L, B, H), name="Boat"):
    half = np.array(size) / 2
    boat = _mesh_object(name, _box(tuple(np.array(centre) - half), tuple(np.array(centre) + half)), collection)
    boat.rotation_mode = "XYZ"
    boat.vehicle_motion.preset = "RIB_BOAT"
    return boat


def world_vertices(obj) -> np.ndarray:
    m = np.array(obj.matrix_world)
    co = np.array([v.co for v in obj.data.vertices])
    return co @ m[:3, :3].T + m[:3, 3]


def stored(obj):
    from vehicle_motion.addon import storage
    return storage.load(obj)


def rz(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


# ----------------------------------------------------------------------------- Simulate

def test_simulate_off_centre_box_settles_at_its_draft(empty_scene, vm):
    """Dropped 0.2 m above its floating height, heading 30°, no thrust: it bobs and settles with its
    bottom at −d, level, where it was (x, y); the baked origin is the centroid less R · offset."""
    scene = empty_scene
    scene.render.fps, scene.render.fps_base = 8, 1.0
    s = scene.vehicle_motion
    s.frame_start, s.frame_end, s.steps_per_frame = 1, 33, 4          # 4 s, dt 1/32 s
    boat = boat_object(scene.collection)
    heading = math.radians(30.0)
    boat.location, boat.rotation_euler = (1.0, 2.0, origin_height() + 0.2), (0.0, 0.0, heading)
    boat.keyframe_insert("location", frame=1)
    boat.keyframe_insert("rotation_euler", frame=1)
    vm.make_active(boat)
    problem = reader().read_simulation(scene, boat)
    vehicle = problem.scenario["vehicle"]
    assert len(vehicle["hull_faces"]) == 12 and not any("hull" in w for w in problem.warnings)
    assert problem.frame_map.body_offset == pytest.approx(CENTRE, abs=1e-6)
    # the hull is centred on its centroid, in the body frame (metres)
    v = np.array(vehicle["hull_vertices"])
    assert v.min(axis=0) == pytest.approx([-L / 2, -B / 2, -H / 2], abs=1e-6)
    assert problem.scenario["initial"]["position"] == pytest.approx(
        np.array([1.0, 2.0, origin_height() + 0.2]) + rz(heading) @ CENTRE, abs=1e-6)

    assert bpy.ops.vehicle_motion.simulate() == {"FINISHED"}, s.last_report
    assert "hull" not in s.last_report, s.last_report
    trajectory = stored(boat)
    assert trajectory.stats["body_offset"] == pytest.approx(CENTRE, abs=1e-6)
    scene.frame_set(33)
    m = np.array(boat.matrix_world)
    bottom = world_vertices(boat)[:, 2].min()
    assert bottom == pytest.approx(-DRAFT, abs=2e-3)                              # theory: −0.1 m
    assert m[:3, 3] == pytest.approx([1.0, 2.0, origin_height()], abs=2e-3)
    assert np.max(np.abs(m[:3, :3] - rz(heading))) < 1e-3                         # level, same heading
    # the trajectory is the centre of mass: the object's origin plus R · offset, at every frame
    for frame in (1, 9, 17, 33):
        scene.frame_set(frame)
        m = np.array(boat.matrix_world)
        k = (frame - 1) * 4
        assert m[:3, 3] + m[:3, :3] @ CENTRE == pytest.approx(trajectory.position[k], abs=1e-5)


def test_open_mesh_and_proxy_fall_back_to_the_default_hull(empty_scene, vm):
    scene = empty_scene
    s = scene.vehicle_motion
    s.frame_start, s.frame_end, s.steps_per_frame = 1, 9, 1
    boat = boat_object(scene.collection)
    bm = bmesh.new()
    bm.from_mesh(boat.data)
    bm.faces.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=[bm.faces[0]], context="FACES_ONLY")       # an open box: 4 open edges
    bm.to_mesh(boat.data)
    bm.free()
    boat.keyframe_insert("location", frame=1)
    problem = reader().read_simulation(scene, boat)
    assert f"'Boat' mesh is not closed (4 open edges): {DEFAULT_HULL}" in problem.warnings
    assert "hull_vertices" not in problem.scenario["vehicle"] and not any(problem.frame_map.body_offset)
    vm.make_active(boat)
    assert bpy.ops.vehicle_motion.simulate() == {"FINISHED"}
    assert f"'Boat' mesh is not closed (4 open edges): {DEFAULT_HULL}" in s.last_report

    proxy = _empty("Proxy Boat", scene.collection, (0.0, 0.0, 0.084))
    proxy.vehicle_motion.preset = "RIB_BOAT"
    proxy.keyframe_insert("location", frame=1)
    problem = reader().read_simulation(scene, proxy)
    assert f"'Proxy Boat' has no mesh (an empty, a proxy): {DEFAULT_HULL}" in problem.warnings
    assert "hull_vertices" not in problem.scenario["vehicle"]


def test_quads_and_ngons_are_triangulated(empty_scene):
    """A cylinder with n-gon caps (scaled 2× by the object): its hull holds the prism's volume."""
    scene = empty_scene
    mesh = bpy.data.meshes.new("Barrel")
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=True, cap_tris=False, segments=16, radius1=0.5, radius2=0.5, depth=2.0)
    bm.to_mesh(mesh)
    bm.free()
    assert max(len(p.vertices) for p in mesh.polygons) == 16
    barrel = bpy.data.objects.new("Barrel", mesh)
    scene.collection.objects.link(barrel)
    barrel.scale = (2.0, 2.0, 2.0)
    barrel.vehicle_motion.preset = "RIB_BOAT"
    barrel.keyframe_insert("location", frame=1)
    s = scene.vehicle_motion
    s.frame_start, s.frame_end, s.steps_per_frame = 1, 9, 1
    problem = reader().read_simulation(scene, barrel)
    from vehicle_motion.core.vehicles.hull import Hull
    vehicle = problem.scenario["vehicle"]
    hull = Hull(np.array(vehicle["hull_vertices"]), np.array(vehicle["hull_faces"]))
    prism = 0.5 * 16 * math.sin(2 * math.pi / 16) * 1.0**2 * 4.0                   # radius 1, length 4 after scale
    assert hull.volume == pytest.approx(prism, rel=1e-6) and len(hull.faces) == 4 * 16 - 4
    assert np.linalg.norm(hull.centroid) < 1e-9


def test_dense_mesh_floats_on_its_convex_hull(empty_scene):
    scene = empty_scene
    mesh = bpy.data.meshes.new("Ball")
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=64, v_segments=32, radius=1.5)
    bm.to_mesh(mesh)
    bm.free()
    ball = bpy.data.objects.new("Ball", mesh)
    scene.collection.objects.link(ball)
    ball.vehicle_motion.preset = "RIB_BOAT"
    ball.keyframe_insert("location", frame=1)
    s = scene.vehicle_motion
    s.frame_start, s.frame_end, s.steps_per_frame = 1, 9, 1
    problem = reader().read_simulation(scene, ball)
    limit = reader().BOAT_HULL_FACES
    faces = problem.scenario["vehicle"]["hull_faces"]
    assert len(faces) <= limit
    note = next(w for w in problem.warnings if w.startswith("'Ball' mesh has 3968 triangles: it floats on its convex "
                                                            f"hull of {len(faces)} (at most {limit}"))
    assert "m³ against the mesh's 14" in note


def test_a_mesh_too_small_for_its_mass_is_refused(empty_scene):
    scene = empty_scene
    boat = boat_object(scene.collection, centre=(0.0, 0.0, 0.0), size=(1.0, 1.0, 0.5))
    boat.keyframe_insert("location", frame=1)
    s = scene.vehicle_motion
    s.frame_start, s.frame_end, s.steps_per_frame = 1, 9, 1
    with pytest.raises(reader().SceneError, match=r"^'Boat' sinks: its mesh displaces at most 500 kg of water "
                                                   r"\(0\.5 m³\) and its Mass is 800 kg: lower the Mass or scale "
                                                   r"the mesh up$"):
        reader().read_simulation(scene, boat)


# ----------------------------------------------------------------------------- Solve

def test_solve_docks_an_off_centre_box_at_a_pier(addon):
    """The docking sample's shot with a box whose origin is 0.8 m behind and 0.25 m below its centre:
    it docks with its origin on the Berth empty, heading along it, at rest; it floats at its draft
    all the way; it never enters the pier."""
    scene, frame_end = new_scene("Boat Hull Docking", 10, 3.0)
    root = scene.collection
    boat = boat_object(root)
    z = origin_height()
    for frame, x in ((1, 0.0), (frame_end, 3.0)):
        boat.location, boat.rotation_euler = (x, 0.0, z), (0.0, 0.0, 0.0)
        boat.keyframe_insert("location", frame=frame)
        boat.keyframe_insert("rotation_euler", frame=frame)
    obstacles = bpy.data.collections.new("Obstacles")
    root.children.link(obstacles)
    # 0.6 m off the hull's side (y = 1) at the berth, alongside the centroid's stretch
    pier = _mesh_object("Pier", _box((-3.0, -0.6, -0.5), (3.0, 0.6, 0.5)), obstacles, location=(3.8, 2.2, 0.3))
    berth = _empty("Berth", root, (3.0, 0.0, z), "SINGLE_ARROW", 1.0)
    berth.vehicle_motion.constraint_kind = "LAND"
    berth.keyframe_insert("location", frame=frame_end)
    solve_settings(scene, boat, steps_per_frame=1, backend="SCIPY", max_iter=500, time_limit_s=60.0)
    scene.vehicle_motion.tol = 1e-5

    problem = reader().read_problem(scene, boat)
    sc = problem.scenario
    assert len(sc["vehicle"]["hull_faces"]) == 12 and not any("hull" in w for w in problem.warnings)
    assert sc["start"]["position"] == pytest.approx(np.array([0.0, 0.0, z]) + CENTRE, abs=1e-6)
    assert sc["goal"]["position"] == pytest.approx(np.array([3.0, 0.0, z]) + CENTRE, abs=1e-6)
    spheres = np.array(sc["vehicle"]["collision_spheres"])
    assert spheres[:, 0].min() == pytest.approx(-spheres[:, 0].max(), abs=1e-6)   # around the centroid

    assert bpy.ops.vehicle_motion.solve_trajectory() == {"FINISHED"}, scene.vehicle_motion.last_report
    report = scene.vehicle_motion.last_report
    assert report.startswith("Solved 'Boat'") and "hull" not in report, report
    trajectory = stored(boat)
    assert trajectory.stats["converged"] and trajectory.stats["body_offset"] == pytest.approx(CENTRE, abs=1e-6)
    worst_draft, worst_pier = 0.0, math.inf
    pier_lo = np.array(pier.matrix_world.translation) - [3.0, 0.6, 0.5]
    pier_hi = np.array(pier.matrix_world.translation) + [3.0, 0.6, 0.5]
    for frame in range(1, frame_end + 1):
        scene.frame_set(frame)
        m = np.array(boat.matrix_world)
        assert m[:3, 3] + m[:3, :3] @ CENTRE == pytest.approx(trajectory.position[frame - 1], abs=1e-5)
        world = world_vertices(boat)
        worst_draft = max(worst_draft, abs(world[:, 2].min() + DRAFT))
        gap = np.maximum(np.maximum(pier_lo - world, world - pier_hi), 0.0)
        worst_pier = min(worst_pier, float(np.min(np.linalg.norm(gap, axis=1))))
    assert worst_draft < 0.02, worst_draft                 # it floats at its draft (0.1 m) the whole way
    assert worst_pier > 0.0, worst_pier
    scene.frame_set(frame_end)
    m = np.array(boat.matrix_world)
    assert m[:3, 3] == pytest.approx(np.array(berth.matrix_world.translation), abs=1e-5)
    assert world_vertices(boat)[:, 2].min() == pytest.approx(-DRAFT, abs=1e-5)
    assert np.max(np.abs(m[:3, :3] - np.eye(3))) < 1e-5
    assert np.max(np.abs(trajectory.linear_velocity[-1])) < 1e-6


# ----------------------------------------------------------------------------- helicopter rotor hubs

def test_helicopter_rotor_hubs_from_its_parts(empty_scene, vm):
    """The hubs are the rotor objects' origins measured from the centre of mass — the volume centroid of
    the body's closed mesh — in the body frame, metres: a body scaled 2×, turned 40°, its box centred
    0.3 m ahead of and 0.2 m below its origin; the main rotor 1.5 m above the origin, the tail rotor
    4 m behind it. Hovering on its weight it stays put, baked about its origin."""
    scene = empty_scene
    scene.render.fps, scene.render.fps_base = 8, 1.0
    s = scene.vehicle_motion
    s.frame_start, s.frame_end, s.steps_per_frame = 1, 17, 2
    heli = boat_object(scene.collection, centre=(0.3, 0.0, -0.2), size=(2.0, 1.0, 1.0), name="Heli")
    heli.vehicle_motion.preset = "LIGHT_HELICOPTER"
    heli.scale = (2.0, 2.0, 2.0)
    heli.location, heli.rotation_euler = (5.0, -3.0, 20.0), (0.0, 0.0, math.radians(40.0))
    heli.keyframe_insert("location", frame=1)
    heli.keyframe_insert("rotation_euler", frame=1)
    rotor = vm.add_object("Rotor", parent=heli, kind="EMPTY")
    rotor.location = (0.3, 0.0, 1.5)
    tail = vm.add_object("Tail", parent=heli, kind="EMPTY")
    tail.location = (-4.0, 0.1, 0.4)
    hs = heli.vehicle_motion
    hs.main_rotor, hs.tail_rotor = rotor, tail
    assert hs.rotor_geometry == "PARTS"
    problem = reader().read_simulation(scene, heli)
    vehicle = problem.scenario["vehicle"]
    assert vehicle["main_rotor_offset"] == pytest.approx(2.0 * (1.5 + 0.2), abs=1e-6)
    assert vehicle["tail_rotor_offset"] == pytest.approx(2.0 * (4.0 + 0.3), abs=1e-6)
    assert problem.frame_map.body_offset == pytest.approx((0.6, 0.0, -0.4), abs=1e-6)
    assert problem.scenario["initial"]["position"] == pytest.approx(
        np.array([5.0, -3.0, 20.0]) + rz(math.radians(40.0)) @ [0.6, 0.0, -0.4], abs=1e-6)
    assert not any("rotor" in w.lower() for w in problem.warnings), problem.warnings

    heli["collective"] = hs.mass * 9.81
    vm.make_active(heli)
    assert bpy.ops.vehicle_motion.simulate() == {"FINISHED"}, s.last_report
    for frame in (1, 9, 17):
        scene.frame_set(frame)
        assert np.array(heli.matrix_world.translation) == pytest.approx([5.0, -3.0, 20.0], abs=1e-6)
        assert np.max(np.abs(np.array(heli.matrix_world.to_3x3().normalized()) - rz(math.radians(40.0)))) < 1e-6

    hs.rotor_geometry = "TYPED"                       # the typed values, about the origin
    typed = reader().read_simulation(scene, heli)
    assert (typed.scenario["vehicle"]["main_rotor_offset"], typed.scenario["vehicle"]["tail_rotor_offset"]) == \
        pytest.approx((1.2, 4.5))
    assert not any(typed.frame_map.body_offset)


def test_helicopter_placeholder_rotor_keeps_the_typed_height(empty_scene, vm):
    scene = empty_scene
    s = scene.vehicle_motion
    s.frame_start, s.frame_end, s.steps_per_frame = 1, 9, 1
    heli = vm.add_object("Heli")
    heli.vehicle_motion.preset = "LIGHT_HELICOPTER"
    heli.keyframe_insert("location", frame=1)
    rotor = vm.add_object("Rotor", parent=heli, kind="EMPTY")            # at the origin: a placeholder
    tail = vm.add_object("Tail", parent=heli, kind="EMPTY")
    tail.location = (-3.0, 0.0, 0.0)
    heli.vehicle_motion.main_rotor, heli.vehicle_motion.tail_rotor = rotor, tail
    problem = reader().read_simulation(scene, heli)
    vehicle = problem.scenario["vehicle"]
    assert vehicle["main_rotor_offset"] == pytest.approx(1.2) and vehicle["tail_rotor_offset"] == pytest.approx(3.0)
    assert ("'Rotor' (main rotor of 'Heli') has its origin 0 m at the height of the centre of mass, not above it: "
            "the typed Main Rotor Height (1.2 m) holds (put the rotor's origin at its hub)") in problem.warnings
