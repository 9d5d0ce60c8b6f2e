"""Build, solve and bake the boat-on-the-ocean sample: the docking sample's RIB crossing an Ocean-modifier sea from
a start to a goal, heaving, pitching and rolling on the waves; draw its baked ride.

    .venv/bin/python samples/build_boat_ocean_scene.py [out/boat_ocean.blend] [--fps 10] [--png docs/images/boat_ocean.png]

What it makes (Blender units = metres):

* ``Boat``: the boat sample's 5 m × 2 m × 0.8 m box hull, preset RIB Boat loaded to 2400 kg (a 0.24 m draft),
  keyed at rest, heading +X, at frame 1 (x = 0) and at the last frame (x = 8 m): a start and a goal only (keys between them are held in 3D,
  which waves do not allow); their heights are the calm float height — on waves the goal's height, roll and
  pitch are left to the sea;
* ``Sea``: an Ocean modifier (Generate, 50 m square, resolution 6: a few seconds to sample) of 0.3–0.6 m crest
  to trough under the boat, waves of about 4 s (a 6 m/s wind), its Time keyed linearly with the scene's clock — found as the
  water by its Ocean modifier (``addon/scene_water.py``);
* a camera and a sun; 6 s of motion at 10 fps: frames 1 … 61, one step a frame (the boat needs steps ≤ 0.1 s).

Solve plans through the sampled waves with the duration fixed by the keys; the bake writes the boat's motion on
them. The picture (``--png``) is drawn from the baked F-curves (``frame_set`` + ``matrix_world``):
:func:`read_baked`; the water under the boat from the evaluated Ocean mesh (:class:`terrain_kit.GroundProbe`).
``build(fps)`` alone makes the scene (the tests use it).
"""
from __future__ import annotations

import importlib
import math
import pathlib
import sys
import textwrap
from dataclasses import dataclass

import bpy
import numpy as np

from build_boat_scene import BEAM, HEIGHT, LENGTH, _hull
from build_car_tunnel_scene import _camera, _mesh_object, package_name
from scene_kit import key_at_rest_pose, new_scene, vehicle_settings
from terrain_kit import GroundProbe, add_sun, run_sample

DURATION = 6.0                     # s
START, GOAL = (0.0, 0.0), (8.0, 0.0)   # m
SEA_RESOLUTION = 6          # the Ocean's resolution (detail): small, sampled in a few seconds
SEA_CENTRE, SEA_SIZE = (4.0, 0.0), 50   # m: the sea reaches past the region the solve samples
WIND, WAVE_SCALE, CHOP, SEED = 6.0, 0.5, 0.5, 3             # m/s, Ocean settings
MASS = 2400.0               # kg: the RIB loaded to a 0.24 m draft, its hull well in the waves


def float_height() -> float:
    """Height of the centre of mass of the loaded boat floating level at rest on calm water."""
    boat = importlib.import_module(package_name() + ".core.vehicles.boat")
    hull = importlib.import_module(package_name() + ".core.vehicles.hull")
    return float(boat.Boat(hull=hull.box_hull((LENGTH, BEAM, HEIGHT)), mass=MASS).float_height())


def build(fps: int = 10) -> dict:
    """Replace the current file's contents with the sample scene; the names of its parts."""
    if not bpy.app.build_options.mod_oceansim:
        raise RuntimeError("this Blender build has no Ocean modifier")
    scene, frame_end = new_scene("Boat Ocean", fps, DURATION)

    sea = bpy.data.objects.new("Sea", bpy.data.meshes.new("Sea"))
    scene.collection.objects.link(sea)
    sea.location = (*SEA_CENTRE, 0.0)
    sea.hide_select = True
    ocean = sea.modifiers.new("Ocean", "OCEAN")
    ocean.geometry_mode = "GENERATE"
    ocean.spatial_size, ocean.resolution, ocean.viewport_resolution = int(SEA_SIZE), SEA_RESOLUTION, SEA_RESOLUTION
    ocean.wind_velocity, ocean.wave_scale, ocean.choppiness, ocean.random_seed = WIND, WAVE_SCALE, CHOP, SEED
    for frame, t in ((1, 0.0), (frame_end, DURATION)):
        ocean.time = t
        sea.keyframe_insert('modifiers["Ocean"].time', frame=frame)
    compat = importlib.import_module(package_name() + ".addon.action_compat")
    for fc in compat.fcurves(compat.assigned(sea)):   # the Ocean's clock runs with the scene's
        for k in fc.keyframe_points:
            k.interpolation = "LINEAR"

    vehicles = bpy.data.collections.new("Vehicle")
    scene.collection.children.link(vehicles)
    boat = _mesh_object("Boat", _hull, vehicles)
    boat.rotation_mode = "XYZ"
    boat.vehicle_motion.preset = "RIB_BOAT"
    boat.vehicle_motion.mass = MASS
    z = float_height()
    for frame, (x, y) in ((1, START), (frame_end, GOAL)):
        key_at_rest_pose(boat, frame, (x, y, z))

    _camera("Camera", scene.collection, scene, (6.0, -22.0, 9.0), (math.radians(68.0), 0.0, 0.0),
            ortho_scale=26.0)
    add_sun(scene)
    scene.vehicle_motion.solver_backend = "SCIPY"
    scene.vehicle_motion.tol = 1e-5      # the boat's wrench is piecewise smooth (the docking sample's tolerance)
    vehicle_settings(scene, boat, steps_per_frame=1)
    return {"car": boat.name, "vehicle": boat.name, "water": sea.name, "frame_end": frame_end, "fps": fps,
            "float_height": z}


@dataclass
class BakedBoat:
    """The baked motion read back at every frame: ``frames``, ``time`` (s), ``matrix`` (F, 4, 4) the boat's world
    matrix (metres) and ``water`` (F,) the evaluated sea's height under its origin (m)."""

    frames: np.ndarray
    time: np.ndarray
    matrix: np.ndarray
    water: np.ndarray

    def pitch(self) -> np.ndarray:
        """Bow-up pitch (rad): the rise of the boat's forward axis."""
        forward = self.matrix[:, :3, 0] / np.linalg.norm(self.matrix[:, :3, 0], axis=1, keepdims=True)
        return np.arcsin(np.clip(forward[:, 2], -1.0, 1.0))

    def roll(self) -> np.ndarray:
        """Left-side-up roll (rad): the rise of the boat's left axis."""
        left = self.matrix[:, :3, 1] / np.linalg.norm(self.matrix[:, :3, 1], axis=1, keepdims=True)
        return np.arcsin(np.clip(left[:, 2], -1.0, 1.0))


def read_baked(scene, boat, sea) -> BakedBoat:
    """The boat's baked motion over the scene's frame range and the sea's height under it, frame by frame."""
    metres = float(scene.unit_settings.scale_length)
    frames = np.arange(scene.frame_start, scene.frame_end + 1)
    matrix, water = [], []
    for f in frames:
        scene.frame_set(int(f))
        m = np.array(boat.matrix_world)
        m[:3, 3] *= metres
        matrix.append(m)
        water.append(GroundProbe([sea], metres).at(m[0, 3], m[1, 3])[0])
    scene.frame_set(scene.frame_start)
    fps = scene.render.fps / scene.render.fps_base
    return BakedBoat(frames=frames, time=(frames - frames[0]) / fps, matrix=np.array(matrix), water=np.array(water))


def sea_heights(scene, sea, frame: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The evaluated sea's heights (m) over the grid ``x`` × ``y`` at ``frame``, (len(y), len(x))."""
    scene.frame_set(frame)
    probe = GroundProbe([sea], float(scene.unit_settings.scale_length))
    xx, yy = np.meshgrid(x, y)
    out = probe.heights(np.stack([xx, yy], axis=-1))
    scene.frame_set(scene.frame_start)
    return out


def draw(scene, boat, path: pathlib.Path, report: str) -> dict:
    """The baked ride (module docstring) to ``path``: from above over the sea, heave against the water under the
    boat, pitch and roll; the figures."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Polygon

    sea = bpy.data.objects["Sea"]
    ride = read_baked(scene, boat, sea)
    offset = ride.matrix[:, 2, 3] - ride.water
    fps = scene.render.fps / scene.render.fps_base
    mid = int(ride.frames[len(ride.frames) // 2])
    x = np.linspace(START[0] - 4.0, GOAL[0] + 4.0, 121)
    y = np.linspace(-5.0, 5.0, 61)
    h = sea_heights(scene, sea, mid, x, y)

    fig = plt.figure(figsize=(13, 9))
    grid = fig.add_gridspec(2, 2, height_ratios=[1.0, 1.0], hspace=0.35, wspace=0.2,
                            left=0.06, right=0.97, top=0.94, bottom=0.1)
    ax = fig.add_subplot(grid[0, :])
    shade = ax.pcolormesh(x, y, h, cmap="Blues_r", shading="auto")
    fig.colorbar(shade, ax=ax, label=f"sea height at t = {(mid - ride.frames[0]) / fps:g} s (m)", pad=0.01)
    hull = np.array([[-2.5, -1.0], [2.5, -1.0], [2.5, 1.0], [-2.5, 1.0]])
    every = max(1, int(round(1.0 * fps)))
    for k in range(0, len(ride.frames), every):
        m = ride.matrix[k]
        ax.add_patch(Polygon(hull @ m[:2, :2].T + m[:2, 3], closed=True, facecolor="tab:orange", alpha=0.35,
                             edgecolor="tab:red", lw=0.7))
    ax.plot(ride.matrix[:, 0, 3], ride.matrix[:, 1, 3], color="k", lw=1.2, label="centre of mass, every frame")
    ax.plot(*zip(START, GOAL), "o", color="tab:green", label="start and goal keys")
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title(f"Boat on an Ocean-modifier sea: the baked path from above, hull every {every / fps:g} s")
    ax.legend(loc="upper left", fontsize=8)

    ax1 = fig.add_subplot(grid[1, 0])
    ax1.plot(ride.time, ride.water, color="tab:blue", lw=1.2, label="sea height under the boat")
    ax1.plot(ride.time, ride.matrix[:, 2, 3] - float(np.mean(offset)), color="tab:red", lw=1.2,
             label=f"boat's centre of mass − {np.mean(offset):.3f} m (its mean height above the sea)")
    ax1.set_title("heave (baked) against the water under it (m)", fontsize=9)
    ax1.set_xlabel("t (s)")
    ax1.legend(fontsize=7, loc="lower left")
    ax1.grid(alpha=0.3)
    ax2 = fig.add_subplot(grid[1, 1])
    ax2.plot(ride.time, np.degrees(ride.pitch()), color="tab:purple", lw=1.2, label="pitch (bow up)")
    ax2.plot(ride.time, np.degrees(ride.roll()), color="tab:olive", lw=1.2, label="roll (left side up)")
    ax2.axhline(0.0, color="k", lw=0.6, ls=":")
    ax2.set_title("pitch and roll (baked, °)", fontsize=9)
    ax2.set_xlabel("t (s)")
    ax2.legend(fontsize=7, loc="lower left")
    ax2.grid(alpha=0.3)
    fig.text(0.01, 0.005, textwrap.fill(report, 220), fontsize=7, color="0.3")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return {"water_range_m": float(np.ptp(ride.water)), "heave_range_m": float(np.ptp(ride.matrix[:, 2, 3])),
            "height_above_sea_m": (float(offset.min()), float(offset.max())),
            "pitch_deg": float(np.max(np.abs(np.degrees(ride.pitch())))),
            "roll_deg": float(np.max(np.abs(np.degrees(ride.roll()))))}


def main(argv: list[str]) -> int:
    if not any(a.startswith("--fps") for a in argv):
        argv = [*argv, "--fps", "10"]      # the boat's step must stay ≤ 0.1 s; 10 fps keeps the solve small
    return run_sample("boat_ocean", build, draw, argv, "Build, solve, bake and draw the boat-on-the-ocean sample")


if __name__ == "__main__":
    args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    sys.exit(main(args))
