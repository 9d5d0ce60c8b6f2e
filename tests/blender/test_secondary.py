"""Secondary motion in real bpy: parts hung on a moving vehicle (tree VI), baked as rotations.

Checked on the baked scene itself (matrix_world at every frame): the cable keeps its length
and hangs from the hook, the trailer stays on the hitch ball; the physics (hanging still, swinging
back when the helicopter accelerates, the trailer cutting inside a turn and lining up after it);
bad input is one line and changes nothing.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

import build_car_trailer_scene as trailer_sample  # noqa: E402
import build_helicopter_sling_scene as sling_sample  # noqa: E402

TOL = 1e-6          # on the baked channels, composed in double precision
TOL_FLOAT32 = 1e-5  # on Blender's own matrix_world (single precision: 2e-6 at 30 m from the origin)


def _world64(ob, root) -> np.ndarray:
    """ob's world matrix composed in double precision from root's matrix_world and the evaluated
    parent inverse and matrix_basis (the baked F-curve values) of everything between."""
    if ob == root:
        return np.array(ob.matrix_world, dtype=float)
    return _world64(ob.parent, root) @ np.array(ob.matrix_parent_inverse) @ np.array(ob.matrix_basis)


def world_translations(scene, objects, frames, check_float32=True) -> dict[str, np.ndarray]:
    """World matrices of objects (the first is the vehicle, the others below it) at each frame."""
    root = objects[0]
    out = {ob.name: np.empty((len(frames), 3)) for ob in objects}
    mats = {ob.name: [] for ob in objects}
    for k, f in enumerate(frames):
        scene.frame_set(int(f))
        for ob in objects:
            m = _world64(ob, root)
            if check_float32:
                assert np.max(np.abs(m[:3, 3] - np.array(ob.matrix_world.translation))) < TOL_FLOAT32
            out[ob.name][k] = m[:3, 3]
            mats[ob.name].append(m)
    return out, {name: np.array(m) for name, m in mats.items()}


def simulate() -> None:
    assert bpy.ops.vehicle_motion.simulate_secondary() == {"FINISHED"}


def sling_residuals(names, frames):
    scene = bpy.context.scene
    obs = [bpy.data.objects[n] for n in (names["vehicle"], *names["links"], names["load"])]
    pos, mats = world_translations(scene, obs, frames)
    heli, upper, lower, load = (o.name for o in obs)
    hook = np.einsum("kij,j->ki", mats[heli], np.array([*sling_sample.HOOK, 1.0]))[:, :3]
    link = sling_sample.LINK
    residuals = {
        "hook": np.linalg.norm(pos[upper] - hook, axis=1),
        "upper": np.abs(np.linalg.norm(pos[lower] - pos[upper], axis=1) - link),
        "lower": np.abs(np.linalg.norm(pos[load] - pos[lower], axis=1) - link),
    }
    return residuals, pos, hook


def test_sling_keeps_its_cable_and_swings_back_as_the_helicopter_accelerates(addon):
    names = sling_sample.build(fps=24)
    simulate()
    report = bpy.context.scene.vehicle_motion.last_report
    assert report.startswith("Secondary motion of 'Helicopter': 2 parts, 576 steps")
    assert "onto Cable Upper, Cable Lower" in report
    frames = list(range(1, names["frame_end"] + 1))
    residuals, pos, hook = sling_residuals(names, frames)
    for name, r in residuals.items():
        assert r.max() <= TOL, (name, r.max())
    lag = pos[names["load"]][:, 0] - pos[names["vehicle"]][:, 0]
    t = (np.array(frames) - 1) / 24.0
    assert np.max(np.abs(lag[t < sling_sample.T_GO])) < 1e-6          # hanging still before it goes
    accelerating = (t > sling_sample.T_GO + 0.5) & (t < sling_sample.T_GO + 2.0)
    assert np.all(lag[accelerating] < 0.0) and lag[accelerating].min() < -1.0   # behind: opposite to +X
    assert np.all(pos[names["load"]][:, 2] < hook[:, 2] - sling_sample.LINK)  # it swings, it still hangs


def test_load_hangs_straight_down_under_a_hovering_helicopter(addon):
    names = sling_sample.build(fps=24)
    scene = bpy.context.scene
    heli = bpy.data.objects[names["vehicle"]]
    heli.animation_data_clear()
    heli.location, heli.rotation_euler = sling_sample.HOVER, (0.0, 0.0, 0.4)
    for f in (1, names["frame_end"]):
        heli.keyframe_insert("location", frame=f)
        heli.keyframe_insert("rotation_euler", frame=f)
    simulate()
    frames = list(range(1, names["frame_end"] + 1, 8))
    residuals, pos, hook = sling_residuals(names, frames)
    below = hook - np.array([0.0, 0.0, 2 * sling_sample.LINK])
    assert np.max(np.abs(pos[names["load"]] - below)) <= TOL
    assert all(r.max() <= TOL for r in residuals.values())
    assert scene.objects[names["links"][0]].vehicle_motion.is_baked


def test_trailer_stays_on_the_hitch_and_follows_the_car_through_the_turn(addon):
    names = trailer_sample.build(fps=24)
    scene = bpy.context.scene
    car, trailer, axle = (bpy.data.objects[names[k]] for k in ("vehicle", "trailer", "axle"))
    simulate()
    frames = list(range(1, names["frame_end"] + 1))
    pos, mats = world_translations(scene, [car, trailer, axle], frames)
    hitch = np.einsum("kij,j->ki", mats[car.name], np.array([*trailer_sample.HITCH, 1.0]))[:, :3]
    assert np.max(np.linalg.norm(pos[trailer.name] - hitch, axis=1)) <= TOL
    bar = np.linalg.norm(pos[axle.name] - pos[trailer.name], axis=1)
    assert np.max(np.abs(bar - np.hypot(trailer_sample.AXLE, 0.15))) <= TOL
    # in the turn the axle runs inside the hitch's circle (a towed trailer cuts the corner)
    t = (np.array(frames) - 1) / 24.0
    s = trailer_sample.SPEED * t
    arc = 0.5 * math.pi * trailer_sample.RADIUS
    turning = (s > trailer_sample.STRAIGHT + 0.5 * arc) & (s < trailer_sample.STRAIGHT + arc)
    centre = np.array(trailer_sample.CENTRE)
    r_hitch = np.linalg.norm(hitch[turning, :2] - centre, axis=1)
    r_axle = np.linalg.norm(pos[axle.name][turning, :2] - centre, axis=1)
    assert np.all(r_axle < r_hitch - 0.2)
    # lined up behind the car at the end (heading along +Y, on the car's path)
    heading = math.atan2(mats[trailer.name][-1][1, 0], mats[trailer.name][-1][0, 0])
    assert math.degrees(abs(heading - 0.5 * math.pi)) < 3.0
    assert abs(pos[axle.name][-1][0] - (trailer_sample.STRAIGHT + trailer_sample.RADIUS)) < 0.2
    # simulating again reads the same rest placement (not the baked one) and gives the same bake
    scene.frame_set(120)
    before = np.array(trailer.matrix_world)
    simulate()
    scene.frame_set(120)
    assert np.max(np.abs(np.array(trailer.matrix_world) - before)) < 1e-6


def _static_vehicle(vm, hover=True):
    heli = vm.add_object("Heli")
    heli.vehicle_motion.preset = "LIGHT_HELICOPTER"
    heli.location = (0.0, 0.0, 10.0)
    if hover:
        heli.keyframe_insert("location", frame=1)
    link = vm.add_object("Link", parent=heli, kind="EMPTY")
    link.location = (0.0, 0.0, -1.0)
    load = vm.add_object("Crate", parent=link)
    load.location = (0.0, 0.0, -3.0)
    part = heli.vehicle_motion_parts.parts.add()
    part.object, part.end, part.mass = link, load, 50.0
    scene = bpy.context.scene
    scene.vehicle_motion.frame_start, scene.vehicle_motion.frame_end = 1, 25
    vm.make_active(heli)
    return heli, link, load


def _no_motion(heli, link, load):
    heli.animation_data_clear()


def _no_end(heli, link, load):
    heli.vehicle_motion_parts.parts[0].end = None
    bpy.data.objects.remove(load)


def _zero_length(heli, link, load):
    load.location = (0.0, 0.0, 0.0)


def _not_a_child(heli, link, load):
    link.parent = None


def _end_elsewhere(heli, link, load):
    other = bpy.data.objects.new("Elsewhere", None)
    bpy.context.scene.collection.objects.link(other)
    heli.vehicle_motion_parts.parts[0].end = other


@pytest.mark.parametrize("spoil, message", [
    (_no_motion, r"'Heli' has no motion for its parts to follow: key, solve or simulate it first"),
    (_no_end, r"part 'Link' has no End object: set End \(the next link, the load or the axle\), or give the part "
              r"a child"),
    (_zero_length, r"'Link': the link has zero length \(its end is at its joint\)"),
    (_not_a_child, r"part 'Link' must be below 'Heli' \(a child of it or of another part\)"),
    (_end_elsewhere, r"the end 'Elsewhere' of part 'Link' must be a child of it"),
])
def test_bad_parts_are_one_line_and_change_nothing(empty_scene, vm, spoil, message):
    heli, link, load = _static_vehicle(vm)
    spoil(heli, link, load)
    actions = {a.name for a in bpy.data.actions}
    with pytest.raises(RuntimeError, match=message) as info:
        bpy.ops.vehicle_motion.simulate_secondary()
    assert "Traceback" not in str(info.value) and "\n" not in str(info.value).strip()
    assert {a.name for a in bpy.data.actions} == actions
    assert not link.vehicle_motion.is_baked
    assert tuple(link.rotation_euler) == (0.0, 0.0, 0.0)


def test_poll_says_why_it_is_greyed_out(empty_scene, vm):
    heli, link, load = _static_vehicle(vm)
    assert bpy.ops.vehicle_motion.simulate_secondary.poll()
    heli.vehicle_motion_parts.parts[0].object = None
    assert not bpy.ops.vehicle_motion.simulate_secondary.poll()
    with pytest.raises(RuntimeError, match=r"Part #1 of 'Heli' has no object"):
        bpy.ops.vehicle_motion.simulate_secondary()
    heli.vehicle_motion_parts.parts.clear()
    with pytest.raises(RuntimeError, match=r"'Heli' has no parts: add them under Vehicle › Articulated Parts"):
        bpy.ops.vehicle_motion.simulate_secondary()
    vm.make_active(link)
    with pytest.raises(RuntimeError, match=r"'Link' is not a vehicle"):
        bpy.ops.vehicle_motion.simulate_secondary()
    # Add Part picks the selected children
    vm.make_active(heli)
    link.select_set(True)
    assert bpy.ops.vehicle_motion.add_part() == {"FINISHED"}
    assert [p.object for p in heli.vehicle_motion_parts.parts] == [link]
    assert bpy.ops.vehicle_motion.remove_part() == {"FINISHED"}
    assert not len(heli.vehicle_motion_parts.parts)
