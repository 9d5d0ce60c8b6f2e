"""Build, solve and bake the car-hill sample: a hatchback driving over bumps, a hill and up a ramp on a Ground
mesh, in a scene modelled in centimetres; draw its baked ride from the side.

    .venv/bin/python samples/build_car_hill_scene.py [out/car_hill.blend] [--fps 24] [--png docs/images/car_hill.png]

What it makes (Unit Scale 0.01: one Blender unit is a centimetre; the car is 4.2 m = 420 units long):

* ``Car``: the tunnel sample's hatchback (:func:`terrain_kit.build_car`: body, two rear wheels, two knuckles
  holding the front wheels; wheel radius 0.30 m), Suspension Comfort, keyed at frame 1 (x = 0) and at the last
  frame (x = 36 m, on the plateau), heading +X, 6.5 m/s at both;
* a ``Ground`` collection holding ``Road``: a grid 46 × 10 m subdivided every 20 cm along X, displaced in
  Python by :func:`height` — a 0.6 m hill with three 6 cm bumps on its way up, then a 15 % ramp from
  x = 16 m to 30 m (its ends rounded over ±2 m) onto a plateau 2.1 m up;
* a side camera and a sun; 5.5 s of motion: frames 1 … 1 + 5.5·fps.

Solve plans the path in the ground plane with the slope's gravity in the car's drive; the bake rides the
body on its suspension over the Ground (heave, pitch, roll) with each wheel on it, spinning along its own
3D path. The picture (``--png``) is drawn from the baked F-curves: :func:`terrain_kit.read_baked`.
``build(fps)`` alone makes the scene (the tests use it).
"""
from __future__ import annotations

import math
import pathlib
import sys
import textwrap

import bpy
import numpy as np

from build_car_tunnel_scene import WHEELBASE, _camera
from scene_kit import new_scene, vehicle_settings
from terrain_kit import (GroundProbe, add_sun, build_car, displaced_grid, ground_collection, key_car, read_baked,
                         run_sample, terrain_under, wheel_contacts)

UNIT = 100.0                               # Blender units a metre: the scene is modelled in centimetres
DURATION, SPEED = 5.5, 6.5                 # s, m/s
START_X, GOAL_X = 0.0, 36.0                # m: the rear axle's keys on y = 0
HILL_X, HILL_HEIGHT, HILL_HALF = 8.0, 0.6, 6.0                    # m
BUMPS, BUMP_HEIGHT, BUMP_HALF = (4.0, 5.2, 6.4), 0.06, 0.45       # m: on the hill's way up
RAMP_FROM, RAMP_TO, GRADE, ROUNDING = 16.0, 30.0, 0.15, 2.0       # m, rise per metre, m
GROUND_X, GROUND_Y, SPACING = (-4.0, 42.0), 5.0, 0.2              # m
# m: the rear axle's x where both axles are on the even grade, a metre or more from its rounded ends
STEADY = (RAMP_FROM + ROUNDING + 1.0, RAMP_TO - ROUNDING - 1.0 - WHEELBASE)
SIDE_VIEWS = ((-2.0, 19.5), (18.5, 40.0))   # m: the x spans of the picture's two rows, 4.4 m high


def _bump(x: np.ndarray, centre: float, half: float) -> np.ndarray:
    """A raised cosine of height 1 over centre ± half, 0 elsewhere."""
    u = np.clip((x - centre) / half, -1.0, 1.0)
    return 0.5 * (1.0 + np.cos(np.pi * u))


def _rounded(u: np.ndarray) -> np.ndarray:
    """max(u, 0) with its corner rounded by a parabola over ±ROUNDING (slope continuous)."""
    inside = (u + ROUNDING) ** 2 / (4.0 * ROUNDING)
    return np.where(u <= -ROUNDING, 0.0, np.where(u >= ROUNDING, u, inside))


def height(x: np.ndarray) -> np.ndarray:
    """The Road's height (m) at x (m): bumps and a hill (raised cosines) and a ramp with rounded ends; level
    and exactly flat at both ends, where the car is keyed."""
    x = np.asarray(x, dtype=float)
    bumps = sum(BUMP_HEIGHT * _bump(x, c, BUMP_HALF) for c in BUMPS)
    return bumps + HILL_HEIGHT * _bump(x, HILL_X, HILL_HALF) + GRADE * (_rounded(x - RAMP_FROM) - _rounded(x - RAMP_TO))


def _road(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    x = GROUND_X[0] + u * (GROUND_X[1] - GROUND_X[0])
    return np.stack([x, (2.0 * v - 1.0) * GROUND_Y, height(x)], axis=1) * UNIT


def build(fps: int = 24, suspension: str = "COMFORT") -> dict:
    """Replace the current file's contents with the sample scene; the names of its parts."""
    scene, frame_end = new_scene("Car Hill", fps, DURATION)
    scene.unit_settings.scale_length, scene.unit_settings.length_unit = 1.0 / UNIT, "CENTIMETERS"

    vehicles = bpy.data.collections.new("Vehicle")
    scene.collection.children.link(vehicles)
    car = build_car(vehicles, UNIT)
    car.vehicle_motion.suspension = suspension
    for frame, x in ((1, START_X), (frame_end, GOAL_X)):
        key_car(car, frame, (x * UNIT, 0.0, 0.0), 0.0, SPEED * UNIT)   # a car's key heights are not used

    segments = (int(round((GROUND_X[1] - GROUND_X[0]) / SPACING)), 10)
    road = displaced_grid("Road", ground_collection(scene), segments, _road)

    cam = _camera("Side Camera", scene.collection, scene, (19.0 * UNIT, -45.0 * UNIT, 2.0 * UNIT),
                  (math.pi / 2, 0.0, 0.0), ortho_scale=50.0 * UNIT)
    cam.data.clip_end = 100.0 * UNIT
    add_sun(scene)

    scene.vehicle_motion.solver_backend = "SCIPY"
    vehicle_settings(scene, car, steps_per_frame=2)
    return {"car": car.name, "ground": [road.name], "frame_end": frame_end, "fps": fps}


def draw(scene, car, path: pathlib.Path, report: str) -> dict:
    """The side view of the baked ride and its pitch and heave (module docstring) to ``path``; the figures."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle, Polygon
    from scipy.spatial import ConvexHull

    metres = float(scene.unit_settings.scale_length)
    ride = read_baked(scene, car)
    probe = GroundProbe(bpy.data.collections["Ground"].all_objects, metres)
    slope, _ = terrain_under(probe, ride)
    rear = ride.body[:, :3, 3]
    heave = rear[:, 2] - probe.heights(rear[:, :2])
    body = np.array([v.co for v in car.data.vertices]) * metres

    fig = plt.figure(figsize=(14, 9.5))
    grid = fig.add_gridspec(3, 2, height_ratios=[1, 1, 1.25], hspace=0.45, wspace=0.18,
                            left=0.05, right=0.98, top=0.95, bottom=0.08)
    x = np.linspace(GROUND_X[0] + 2.0, GROUND_X[1] - 2.0, 1200)
    y = np.interp(x, rear[:, 0], rear[:, 1])
    ground = probe.heights(np.stack([x, y], axis=1))
    fps = scene.render.fps / scene.render.fps_base
    every = max(1, int(round(0.75 * fps)))
    for row, span in enumerate(SIDE_VIEWS):
        ax = fig.add_subplot(grid[row, :])
        ax.fill_between(x, ground, ground.min() - 1.0, color="0.82", lw=0)
        ax.plot(x, ground, color="0.35", lw=1.0, label="Ground under the path")
        for k in range(0, len(ride.frames), every):
            m = ride.body[k]
            world = body @ m[:3, :3].T + m[:3, 3]
            hull = ConvexHull(world[:, [0, 2]])
            ax.add_patch(Polygon(world[hull.vertices][:, [0, 2]], closed=True, facecolor="tab:orange",
                                 alpha=0.3, edgecolor="tab:red", lw=0.7))
            for role in ("wheel_rear_left", "wheel_front_left"):
                hub, r = ride.wheels[role][k, :3, 3], ride.radius[role]
                ax.add_patch(Circle(hub[[0, 2]], r, facecolor="0.2", edgecolor="k", lw=0.5))
                a = ride.spin[role][k]       # a spoke turned by the wheel's spin (positive rolls forward)
                ax.plot([hub[0], hub[0] - r * math.sin(a)], [hub[2], hub[2] - r * math.cos(a)], color="w", lw=0.9)
        ax.plot(rear[:, 0], rear[:, 2], color="tab:blue", lw=1.0, label="rear axle point (body origin), every frame")
        low = ground[(x >= span[0]) & (x <= span[1])].min() - 0.6
        ax.set_aspect("equal")
        ax.set_xlim(*span)
        ax.set_ylim(low, low + 4.4)
        ax.set_ylabel("z (m)")
        ax.grid(alpha=0.3)
        if row == 0:
            ax.set_title("Car hill (a scene in centimetres): the baked ride from the side — body and left wheels "
                         f"every {every / fps:g} s over bumps, a hill and a {GRADE:.0%} ramp")
            ax.legend(loc="upper left", fontsize=8)
        else:
            ax.set_xlabel("x (m)")

    ax1 = fig.add_subplot(grid[2, 0])
    ax1.axvspan(*STEADY, color="tab:green", alpha=0.1, label="whole car on the even grade")
    ax1.plot(rear[:, 0], np.degrees(slope), color="0.35", lw=1.2, label="ground slope under the car")
    ax1.plot(rear[:, 0], np.degrees(ride.pitch()), color="tab:red", lw=1.2, label="body pitch (baked)")
    ax1.set_title("nose-up angle (°) against the rear axle's x", fontsize=9)
    ax1.set_xlabel("x (m)")
    ax1.legend(fontsize=7, loc="lower right")
    ax1.grid(alpha=0.3)
    ax2 = fig.add_subplot(grid[2, 1])
    ax2.plot(rear[:, 0], 100.0 * heave, color="tab:purple", lw=1.2)
    ax2.axhline(0.0, color="k", lw=0.6, ls=":")
    ax2.set_title("heave: the rear axle point above the ground under it (cm; 0 at ride height)", fontsize=9)
    ax2.set_xlabel("x (m)")
    ax2.grid(alpha=0.3)
    fig.text(0.01, 0.005, textwrap.fill(report, 230), fontsize=7, color="0.3")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    gaps = [wheel_contacts(probe, ride.wheels[role], ride.radius[role])[1] for role in ride.wheels]
    steady = (rear[:, 0] > STEADY[0]) & (rear[:, 0] < STEADY[1])
    return {"wheel_gap_cm": 100.0 * float(np.max(np.abs(gaps))),
            "steady_pitch_error_deg": float(np.max(np.abs(np.degrees(ride.pitch() - slope)[steady]))),
            "heave_cm": (100.0 * float(heave.min()), 100.0 * float(heave.max()))}


def main(argv: list[str]) -> int:
    return run_sample("car_hill", build, draw, argv, "Build, solve, bake and draw the car hill sample")


if __name__ == "__main__":
    args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    sys.exit(main(args))
