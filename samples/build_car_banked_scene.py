"""Build, solve and bake the car-banked sample: a hatchback driving round a banked ring road (a Ground mesh);
draw its path from above and its body roll against the bank.

    .venv/bin/python samples/build_car_banked_scene.py [out/car_banked.blend] [--fps 24] [--png docs/images/car_banked.png]

What it makes (metres):

* ``Car``: the tunnel sample's hatchback (:func:`terrain_kit.build_car`), Suspension Sport, keyed on the
  ring's centre line (radius 12 m) every 45° from 90° before the ring's +X axis to 45° past it, heading along
  the ring (counter-clockwise), 6.3 m/s at the first and last keys: 135° of the turn in 4.5 s;
* a ``Ground`` collection holding ``Banked Ring``: a grid subdivided 180 × 8 and bent in Python into a ring
  8–16 m from the origin, banked 20° (rising outwards);
* a top camera and a sun; frames 1 … 1 + 4.5·fps.

On the ring's centre line 6.3 m/s is about the bank's neutral speed (v² = g r tan 20°, 6.5 m/s), so the
body's roll stays at the bank once the start's sway has died down. The picture (``--png``) is drawn from the
baked F-curves (:func:`terrain_kit.read_baked`). ``build(fps)`` alone makes the scene (the tests use it).
"""
from __future__ import annotations

import math
import pathlib
import sys
import textwrap

import bpy
import numpy as np

from build_car_tunnel_scene import _camera
from scene_kit import new_scene, vehicle_settings
from terrain_kit import (GroundProbe, add_sun, build_car, displaced_grid, ground_collection, key_car, read_baked,
                         run_sample, terrain_under, wheel_contacts)

INNER, OUTER, BANK = 8.0, 16.0, math.radians(20.0)    # m, m, rad: the ring and its bank
RADIUS = 12.0                                         # m: the keys' circle
KEY_ANGLES = np.radians([-90.0, -45.0, 0.0, 45.0])    # where the car is keyed on the ring
DURATION = 4.5                                        # s
SPEED = RADIUS * float(KEY_ANGLES[-1] - KEY_ANGLES[0]) / DURATION   # m/s along the ring, 6.28
STEADY_FROM = 1.5                                     # s: the start's sway has died down


def height(r: np.ndarray) -> np.ndarray:
    """The ring's height (m) at a distance r (m) from the origin: level at its inner edge, rising outwards."""
    return (np.asarray(r, dtype=float) - INNER) * math.tan(BANK)


def _ring(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    angle, r = 2.0 * np.pi * u, INNER + (OUTER - INNER) * v
    return np.stack([r * np.cos(angle), r * np.sin(angle), height(r)], axis=1)


def build(fps: int = 24, suspension: str = "SPORT") -> dict:
    """Replace the current file's contents with the sample scene; the names of its parts."""
    scene, frame_end = new_scene("Car Banked", fps, DURATION)

    vehicles = bpy.data.collections.new("Vehicle")
    scene.collection.children.link(vehicles)
    car = build_car(vehicles, 1.0)
    car.vehicle_motion.suspension = suspension
    last = len(KEY_ANGLES) - 1
    for i, angle in enumerate(KEY_ANGLES):
        frame = 1 + (frame_end - 1) * i / last
        location = (RADIUS * math.cos(angle), RADIUS * math.sin(angle), 0.0)   # a car's key heights are not used
        key_car(car, frame, location, float(angle) + 0.5 * math.pi, SPEED if i in (0, last) else None)

    ring = displaced_grid("Banked Ring", ground_collection(scene), (180, 8), _ring)

    _camera("Top Camera", scene.collection, scene, (0.0, 0.0, 40.0), ortho_scale=36.0)
    add_sun(scene)

    scene.vehicle_motion.solver_backend = "SCIPY"
    vehicle_settings(scene, car, steps_per_frame=2)
    return {"car": car.name, "ground": [ring.name], "frame_end": frame_end, "fps": fps}


def draw(scene, car, path: pathlib.Path, report: str) -> dict:
    """The top view of the baked path and the body's roll against the bank (module docstring) to ``path``;
    the figures."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle, Polygon
    from scipy.spatial import ConvexHull

    ride = read_baked(scene, car)
    probe = GroundProbe(bpy.data.collections["Ground"].all_objects, 1.0)
    _, bank = terrain_under(probe, ride)
    body = np.array([v.co for v in car.data.vertices])
    rear = ride.body[:, :3, 3]

    fig = plt.figure(figsize=(13, 6.2))
    grid = fig.add_gridspec(1, 2, width_ratios=[1.0, 1.15], wspace=0.18, left=0.05, right=0.98, top=0.92,
                            bottom=0.12)
    ax = fig.add_subplot(grid[0, 0])
    for r in np.linspace(INNER, OUTER, 5):
        ax.add_patch(Circle((0.0, 0.0), r, fill=False, color="0.55", lw=0.8 if r in (INNER, OUTER) else 0.4,
                            ls="-" if r in (INNER, OUTER) else ":"))
        ax.annotate(f"{height(r):.1f} m", (r * math.cos(-2.6), r * math.sin(-2.6)), fontsize=7, color="0.4",
                    ha="center", va="center")
    fps = scene.render.fps / scene.render.fps_base
    every = max(1, int(round(0.5 * fps)))
    for k in range(0, len(ride.frames), every):
        m = ride.body[k]
        xy = (body @ m[:3, :3].T + m[:3, 3])[:, :2]
        ax.add_patch(Polygon(xy[ConvexHull(xy).vertices], closed=True, facecolor="tab:orange", alpha=0.3,
                             edgecolor="tab:red", lw=0.7))
    ax.plot(rear[:, 0], rear[:, 1], color="tab:blue", lw=1.3, label="rear axle point, every frame (baked)")
    keys = np.stack([RADIUS * np.cos(KEY_ANGLES), RADIUS * np.sin(KEY_ANGLES)], axis=1)
    ax.plot(keys[:, 0], keys[:, 1], "o", color="k", ms=4, label="keys")
    ax.set_aspect("equal")
    ax.set_xlim(-OUTER - 1.0, OUTER + 1.0)
    ax.set_ylim(-OUTER - 1.0, OUTER + 1.0)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title(f"Top view: a ring banked {math.degrees(BANK):.0f}° (heights on the dotted circles), body "
                 f"every {every / fps:g} s", fontsize=9)
    ax.legend(loc="upper right", fontsize=7)
    ax.grid(alpha=0.3)

    ax1 = fig.add_subplot(grid[0, 1])
    ax1.axvspan(STEADY_FROM, ride.time[-1], color="tab:green", alpha=0.1, label="steady part")
    ax1.plot(ride.time, -np.degrees(bank), color="0.35", lw=1.4, label="bank of the ground under the car")
    ax1.plot(ride.time, -np.degrees(ride.roll()), color="tab:red", lw=1.4, label="body roll (baked)")
    ax1.set_xlabel("time (s)")
    ax1.set_ylabel("lean into the turn, left side down (°)")
    ax1.set_title(f"Body roll against the bank, {SPEED:.1f} m/s on a {RADIUS:g} m radius "
                  f"(suspension {car.vehicle_motion.suspension.title()})", fontsize=9)
    ax1.set_ylim(math.degrees(BANK) - 6.0, math.degrees(BANK) + 2.0)
    ax1.legend(loc="lower right", fontsize=8)
    ax1.grid(alpha=0.3)
    fig.suptitle("Car banked: the baked ride round a banked turn, read back from the F-curves", fontsize=11)
    fig.text(0.01, 0.005, textwrap.fill(report, 200), fontsize=7, color="0.3")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    gaps = [wheel_contacts(probe, ride.wheels[role], ride.radius[role])[1] for role in ride.wheels]
    steady = ride.time >= STEADY_FROM
    return {"wheel_gap_cm": 100.0 * float(np.max(np.abs(gaps))),
            "steady_roll_error_deg": float(np.max(np.abs(np.degrees(ride.roll() - bank)[steady]))),
            "radius_m": (float(np.hypot(*rear[:, :2].T).min()), float(np.hypot(*rear[:, :2].T).max()))}


def main(argv: list[str]) -> int:
    return run_sample("car_banked", build, draw, argv, "Build, solve, bake and draw the car banked-turn sample")


if __name__ == "__main__":
    args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    sys.exit(main(args))
