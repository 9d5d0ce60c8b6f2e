"""The ground read from the scene (addon.scene_ground), in real bpy, against mathutils.bvhtree.

The reference: ``BVHTree.FromObject`` of each ground object (Blender's own evaluation, modifiers
applied) ray-cast straight down in the object's local space, the highest hit over the objects, brought
to world metres — written here, independent of the reader's arrays. Heights agree to 1e-6 m and
normals to 1e-6 on a rotated, scaled, mirrored and parented plane, a hill from a displaced grid with a
subdivision and a displace modifier, a scene in centimetres (Unit Scale 0.01) and a road under a
bridge (``below``). Then which objects are ground and what is warned about, the errors, the warning
for a path that leaves the ground, and the Ground setting in the panel.
"""
from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
from mathutils import Matrix, Vector  # noqa: E402
from mathutils.bvhtree import BVHTree  # noqa: E402
from scene_builders import collection, grid, mesh_object  # noqa: E402

TOLERANCE = 1e-6   # m


def read(scene):
    from vehicle_motion.addon.scene_ground import scene_ground
    warnings: list[str] = []
    return scene_ground(scene, warnings), warnings


def bvh_ground(objects, x, y, scale: float, below=None):
    """Heights (m), unit upward normals and hit mask of the highest face under each point (at or below
    ``below``, m) by BVHTree ray casts on the objects' evaluated meshes in their local space."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    height = np.full(len(x), -np.inf)
    normal = np.zeros((len(x), 3))
    for ob in objects:
        evaluated = ob.evaluated_get(depsgraph)
        tree = BVHTree.FromObject(ob, depsgraph)
        m = Matrix(evaluated.matrix_world)
        inverse, turn = m.inverted(), m.to_3x3().inverted().transposed()
        down = (m.to_3x3().inverted() @ Vector((0.0, 0.0, -1.0))).normalized()
        top = max((m @ Vector(c)).z for c in evaluated.bound_box) + 1.0
        for i in range(len(x)):
            start = top if below is None else below[i] / scale
            hit, n, _, _ = tree.ray_cast(inverse @ Vector((x[i] / scale, y[i] / scale, start)), down)
            if hit is None:
                continue
            z = (m @ hit).z * scale
            if z > height[i]:
                w = (turn @ n).normalized()
                height[i], normal[i] = z, np.array(w) * (1.0 if w.z > 0 else -1.0)
    return height, normal, np.isfinite(height)


def same_face_everywhere(objects, x, y, scale, step=1e-4):
    """Points whose BVH normals at (x ± step, y ± step) equal their own: inside one face."""
    _, n0, _ = bvh_ground(objects, x, y, scale)
    keep = np.ones(len(x), dtype=bool)
    for dx, dy in ((step, 0.0), (-step, 0.0), (0.0, step), (0.0, -step)):
        _, n, hit = bvh_ground(objects, x + dx, y + dy, scale)
        keep &= hit & np.all(np.abs(n - n0) < 1e-9, axis=1)
    return keep


def compare(ground, objects, x, y, scale, below=None):
    """Heights and normals of the reader's terrain against the BVH reference; returns how many points."""
    h, n, hit = bvh_ground(objects, x, y, scale, below)
    sample = ground.terrain.sample(x, y, below)
    assert np.array_equal(sample.covered, hit)
    assert np.max(np.abs(sample.height[hit] - h[hit])) < TOLERANCE
    inside = hit & same_face_everywhere(objects, x, y, scale)
    assert inside.sum() > 0.5 * hit.sum()
    assert np.max(np.abs(sample.normal[inside] - n[inside])) < 1e-6
    return int(hit.sum())


def test_a_rotated_scaled_mirrored_parented_plane(empty_scene):
    ground = collection("Ground")
    plane = mesh_object("Slope", *grid(4, 10.0), ground)
    parent = bpy.data.objects.new("Holder", None)
    empty_scene.collection.objects.link(parent)
    parent.location, parent.rotation_euler, parent.scale = (3.0, -2.0, 1.0), (0.0, 0.0, 0.4), (1.3, 1.3, 1.3)
    plane.parent = parent
    plane.location, plane.rotation_euler, plane.scale = (1.0, 2.0, 0.5), (0.2, -0.15, 0.7), (2.0, -1.5, 1.0)
    bpy.context.view_layer.update()
    found, warnings = read(empty_scene)
    assert warnings == [] and found.objects == ("Slope",) and found.label == "'Ground'"
    rng = np.random.default_rng(1)
    u, v = rng.uniform(-5.5, 5.5, (2, 300))
    world = np.array(plane.matrix_world)
    p = np.stack([u, v, np.zeros_like(u), np.ones_like(u)], 1) @ world.T
    assert compare(found, [plane], p[:, 0], p[:, 1], 1.0) > 150


def test_a_hill_with_its_modifiers_applied(empty_scene):
    def hill(x, y):
        return 2.0 * np.exp(-(x * x + 0.5 * y * y) / 20.0) + 0.1 * np.sin(x)
    ground = collection("Ground")
    ob = mesh_object("Hill", *grid(12, 20.0, hill), ground)
    sub = ob.modifiers.new("Subdivision", "SUBSURF")
    sub.levels = 2
    shift = ob.modifiers.new("Displace", "DISPLACE")
    shift.strength = 0.3                              # no texture: 0.15 along each vertex normal
    ob.rotation_euler = (0.0, 0.0, 0.3)
    ob.scale = (1.2, 0.9, 1.5)
    bpy.context.view_layer.update()
    found, _ = read(empty_scene)
    evaluated = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
    me = evaluated.to_mesh()
    me.calc_loop_triangles()
    assert len(found.terrain.face) == len(me.loop_triangles) == 2 * 12 * 12 * 16     # modifiers applied
    evaluated.to_mesh_clear()
    rng = np.random.default_rng(2)
    x, y = rng.uniform(-10.0, 10.0, (2, 400))
    assert compare(found, [ob], x, y, 1.0) > 300
    for modifier in ob.modifiers:                  # without them: the grid's own faces, another surface
        modifier.show_viewport = False
    bpy.context.view_layer.update()
    plain, _ = read(empty_scene)
    assert len(plain.terrain.face) == 2 * 12 * 12
    assert np.max(np.abs(plain.terrain.height(x, y) - found.terrain.height(x, y))) > 0.1
    assert compare(plain, [ob], x, y, 1.0) > 300


def test_a_scene_in_centimetres(empty_scene):
    """Unit Scale 0.01: the same ground built in centimetres reads in metres."""
    empty_scene.unit_settings.scale_length = 0.01
    ground = collection("Ground")
    ob = mesh_object("Field", *grid(10, 1000.0, lambda x, y: 30.0 * np.sin(x / 200.0) * np.cos(y / 300.0)), ground)
    ob.location = (150.0, -80.0, 50.0)
    ob.rotation_euler = (0.05, 0.1, 0.8)
    bpy.context.view_layer.update()
    found, _ = read(empty_scene)
    rng = np.random.default_rng(3)
    x, y = rng.uniform(-6.0, 6.0, (2, 300)) + np.array([[1.5], [-0.8]])        # metres, around its centre
    assert compare(found, [ob], x, y, 0.01) > 150
    assert found.terrain.height(1.5, -0.8) == pytest.approx(bvh_ground([ob], [1.5], [-0.8], 0.01)[0][0], abs=1e-6)
    low, high = found.terrain.bounds
    assert 9.0 < high[0] - low[0] < 15.0                                       # metres, not centimetres


def test_a_road_under_a_bridge(empty_scene):
    """A sloping road and a bridge deck (a flat box: its sides are vertical, its underside a face): the
    highest face, and the highest at or below a height, as Blender's ray cast from there finds them."""
    ground = collection("Ground")
    road = mesh_object("Road", *grid(8, 40.0, lambda x, y: 0.05 * x + 0.02 * y), ground)
    bridge = collection("Bridges", parent=ground)                          # a child collection
    bpy.ops.mesh.primitive_cube_add(size=1.0)
    deck = bpy.context.active_object
    for c in deck.users_collection:
        c.objects.unlink(deck)
    bridge.objects.link(deck)
    deck.name = "Deck"
    deck.location, deck.scale, deck.rotation_euler = (2.0, 0.0, 5.0), (8.0, 30.0, 0.4), (0.0, 0.0, 0.25)
    bpy.context.view_layer.update()
    found, warnings = read(empty_scene)
    assert found.objects == ("Deck", "Road") and warnings == []
    rng = np.random.default_rng(4)
    x, y = rng.uniform(-12.0, 12.0, (2, 300))
    compare(found, [road, deck], x, y, 1.0)
    below = rng.uniform(-1.5, 6.0, x.shape)
    compare(found, [road, deck], x, y, 1.0, below=below)
    on_deck = found.terrain.height(2.0, 0.0)
    assert on_deck == pytest.approx(5.2, abs=1e-6)
    assert found.terrain.height(2.0, 0.0, below=4.0) == pytest.approx(0.1, abs=1e-6)


def test_which_objects_are_ground_and_what_is_warned(empty_scene):
    ground = collection("Ground")
    child = collection("Kerbs", parent=ground)
    mesh_object("Floor", *grid(2, 10.0), ground)
    kerb = mesh_object("Kerb", *grid(2, 2.0, lambda x, y: 0.15 + 0.0 * x), child)
    kerb.location = (20.0, 0.0, 0.0)
    hidden = mesh_object("Hidden", *grid(1, 2.0), ground)
    hidden.location = (-20.0, 0.0, 0.0)
    disabled = mesh_object("Disabled", *grid(1, 2.0), ground)
    disabled.location = (0.0, 20.0, 0.0)
    holder = bpy.data.objects.new("Holder", None)
    lamp = bpy.data.objects.new("Lamp", bpy.data.lights.new("Lamp", "POINT"))
    car = mesh_object("Car", *grid(1, 2.0), ground)
    car.vehicle_motion.vehicle_type = "CAR"
    wire = bpy.data.curves.new("Wire", "CURVE")
    wire.splines.new("POLY").points.add(1)
    for ob in (holder, lamp, bpy.data.objects.new("Wire", wire)):
        ground.objects.link(ob)
    bpy.context.view_layer.update()
    hidden.hide_set(True)
    disabled.hide_viewport = True
    found, warnings = read(empty_scene)
    assert found.objects == ("Floor", "Hidden", "Kerb")
    assert warnings == [
        "'Car' is a vehicle and moves: it is not part of the ground",
        "'Lamp' is a light, which has no surface: it is not part of the ground",
        "'Disabled' is disabled in viewports (or its collection is disabled or excluded from the view layer): "
        "Blender does not evaluate it, so it is not part of the ground",
        "'Wire' (a curve) has no faces after its modifiers: it is not part of the ground"]
    assert found.terrain.height(20.0, 0.0) == pytest.approx(0.15) and found.terrain.covered(-20.0, 0.0)
    assert not found.terrain.covered(0.0, 20.0)
    # the scene's Ground setting takes over the name
    other = collection("Terrain")
    mesh_object("Other", *grid(1, 4.0, lambda x, y: 3.0 + 0.0 * x), other)
    empty_scene.vehicle_motion.ground = other
    found, warnings = read(empty_scene)
    assert found.objects == ("Other",) and found.label == "'Terrain'" and warnings == []
    assert found.terrain.height(0.0, 0.0) == pytest.approx(3.0)


def test_no_ground(empty_scene):
    assert read(empty_scene) == (None, [])
    ground = collection("Ground")
    assert read(empty_scene) == (None, ["the ground 'Ground' has no faces: the vehicles move on flat ground"])
    ground.objects.link(bpy.data.objects.new("Holder", None))
    collection("Ground.001")
    assert read(empty_scene) == (None, ["the ground 'Ground', 'Ground.001' has no faces: the vehicles move on "
                                        "flat ground"])


def test_bad_ground_is_refused_in_one_line(empty_scene):
    from vehicle_motion.addon.scene_keys import SceneError
    ground = collection("Ground")
    wall = mesh_object("Wall", [(0, 0, 0), (1, 0, 0), (1, 0, 1), (0, 0, 1)], [(0, 1, 2, 3)], ground)
    bpy.context.view_layer.update()
    with pytest.raises(SceneError, match=r"^the ground 'Ground': every one of its 2 faces is vertical or has no "
                                         r"area: the ground needs faces seen from above$"):
        read(empty_scene)
    wall.location = (2e6, 0.0, 0.0)
    bpy.context.view_layer.update()
    with pytest.raises(SceneError, match=r"^ground object 'Wall' reaches 2e\+06 m from the world origin, out of "
                                         r"range \(Vehicle Motion works within 1000 km of the world origin\): fix "
                                         r"its scale or location$"):
        read(empty_scene)


def test_a_path_that_leaves_the_ground_is_warned_about(empty_scene):
    from vehicle_motion.addon.scene_ground import off_ground
    empty_scene.unit_settings.scale_length = 0.01
    mesh_object("Floor", *grid(2, 1000.0), collection("Ground"))        # 10 m × 10 m
    bpy.context.view_layer.update()
    found, _ = read(empty_scene)
    frames = list(range(1, 25))
    x = np.linspace(0.0, 8.0, len(frames))                               # metres: leaves at x > 5
    path = np.stack([x, np.zeros_like(x)], -1)
    first = int(np.flatnonzero(x > 5.0)[0])
    assert off_ground(found, path, frames) == (
        f"the path leaves the ground 'Ground' at frame {frames[first]} ({len(frames) - first} of {len(frames)} "
        "frames off it): there the ground continues at the height of its nearest edge")
    wheels = np.stack([path, path + [0.0, 4.0]], axis=1)                   # (F, 2 wheels, 2)
    assert off_ground(found, wheels[:first], frames[:first]) is None
    wheels[3, 1] = (0.0, 5.5)
    assert off_ground(found, wheels[:first], frames[:first]).startswith("the path leaves the ground 'Ground' at frame 4 ")


def test_the_ground_setting_is_in_the_panel(empty_scene):
    from vehicle_motion.panels.vehicle_panel import VEHICLE_MOTION_PT_solve
    drawn = []

    class Layout:
        def __getattr__(self, name):
            return lambda *args, **kwargs: drawn.append(args[1]) if name == "prop" else self

    class Panel:
        layout = Layout()
    VEHICLE_MOTION_PT_solve.draw(Panel(), bpy.context)
    assert "ground" in drawn
    prop = empty_scene.vehicle_motion.bl_rna.properties["ground"]
    assert prop.type == "POINTER" and prop.fixed_type.identifier == "Collection"
