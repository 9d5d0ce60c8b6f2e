"""The README main job: build the car tunnel scene, solve, bake, save, draw the baked path.

    .venv/bin/python samples/main_job.py [--out-dir out] [--fps 24]

1. builds the sample scene (samples/build_car_tunnel_scene.py) at 24 fps;
2. runs the ``vehicle_motion.solve_trajectory`` operator on the car (solve + store + bake);
3. saves ``out/car_tunnel.blend``;
4. writes ``out/car_tunnel.png``: a top view of the BAKED motion — the car's evaluated
   ``matrix_world`` at every frame (its path, and its body outline every second) — with the
   obstacles (outlines of their evaluated meshes in world space), the pass-through gates
   (circles of their radius, with the car's position at the gate's frame) and the speed,
   steering angle and wheel spin against time.

Exit status 0 when the solve converged and the files were written, 1 otherwise (one line).
"""
from __future__ import annotations

import argparse
import importlib
import math
import pathlib
import sys

import bpy
import numpy as np

import build_car_tunnel_scene as sample
from scene_kit import world_vertices


def _outline(points_xy: np.ndarray) -> np.ndarray:
    """Convex hull of 2-D points (monotone chain), closed."""
    pts = sorted(set(map(tuple, np.round(points_xy, 6))))
    if len(pts) < 3:
        return np.array(pts + pts[:1])

    def half(seq):
        out = []
        for p in seq:
            while len(out) >= 2 and (out[-1][0] - out[-2][0]) * (p[1] - out[-2][1]) - \
                    (out[-1][1] - out[-2][1]) * (p[0] - out[-2][0]) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(reversed(pts))
    hull = lower[:-1] + upper[:-1]
    return np.array(hull + hull[:1])


def sample_baked(scene, car) -> dict:
    """The baked motion, evaluated frame by frame (frame_set + matrix_world)."""
    vm = scene.vehicle_motion
    s = car.vehicle_motion
    body_local = world_vertices([car])
    m0 = np.array(car.matrix_world)
    body_local = (body_local - m0[:3, 3]) @ np.linalg.inv(m0[:3, :3]).T
    frames = np.arange(vm.frame_start, vm.frame_end + 1)
    pos, outlines, steer, spin = [], {}, [], []
    fps = scene.render.fps / scene.render.fps_base
    for f in frames:
        scene.frame_set(int(f))
        m = np.array(car.matrix_world)
        pos.append(m[:3, 3].copy())
        if (f - vm.frame_start) % int(round(fps)) == 0:
            outlines[int(f)] = (body_local @ m[:3, :3].T + m[:3, 3])[:, :2]
        steer.append(s.knuckle_front_left.rotation_euler[2])
        spin.append(s.wheel_rear_left.rotation_euler[1])
    scene.frame_set(vm.frame_start)
    pos = np.array(pos)
    return {"frames": frames, "time": (frames - vm.frame_start) / fps, "position": pos, "outlines": outlines,
            "steering": np.array(steer), "spin": np.unwrap(np.array(spin))}


def draw(scene, car, baked: dict, path: pathlib.Path, report: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle, Polygon

    fig = plt.figure(figsize=(14, 9))
    grid = fig.add_gridspec(2, 3, height_ratios=[2.1, 1], hspace=0.3, wspace=0.25,
                            left=0.05, right=0.98, top=0.95, bottom=0.08)
    ax = fig.add_subplot(grid[0, :])
    for ob in bpy.data.collections["Obstacles"].all_objects:
        if ob.type != "MESH":
            continue
        hull = _outline(world_vertices([ob])[:, :2])
        roof = "Roof" in ob.name
        ax.add_patch(Polygon(hull, closed=True, facecolor="none" if roof else "0.6",
                             edgecolor="0.25", ls="--" if roof else "-", lw=1.0, alpha=0.9))
        c = hull[:-1].mean(axis=0)
        if not roof:
            ax.annotate(ob.name, c, ha="center", va="center", fontsize=7, color="0.1")
    x, y = baked["position"][:, 0], baked["position"][:, 1]
    for outline in baked["outlines"].values():
        ax.add_patch(Polygon(_outline(outline), closed=True, facecolor="tab:orange", alpha=0.25,
                             edgecolor="tab:orange", lw=0.6))
    ax.plot(x, y, "-", color="tab:blue", lw=1.6, label="baked path (matrix_world, every frame)")
    ax.plot(x[::6], y[::6], ".", color="tab:blue", ms=3)
    vm = scene.vehicle_motion
    for ob in scene.objects:
        if ob.type != "EMPTY" or ob.vehicle_motion.constraint_kind != "PASS_THROUGH":
            continue
        scene_reader = importlib.import_module(sample.package_name() + ".addon.scene_reader")
        frames = scene_reader.keyed_frames(ob)
        scene.frame_set(int(frames[0]))
        c = np.array(ob.matrix_world.translation)
        r = ob.empty_display_size * max(ob.matrix_world.to_scale())
        p = np.array(car.matrix_world.translation)
        ax.add_patch(Circle(c[:2], r, fill=False, color="tab:green", lw=1.5))
        ax.plot(*p[:2], "o", color="tab:green", ms=5)
        ax.annotate(f"{ob.name}, frame {frames[0]:g}", c[:2] + [0, r + 0.5], ha="center", fontsize=8,
                    color="tab:green")
    scene.frame_set(vm.frame_start)
    ax.plot(x[0], y[0], "s", color="k", ms=6, label=f"start (frame {vm.frame_start})")
    ax.plot(x[-1], y[-1], "*", color="k", ms=10, label=f"goal (frame {vm.frame_end})")
    ax.set_aspect("equal")
    ax.set_xlim(-8, 68)
    ax.set_ylim(-14, 22)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title("Car tunnel: baked motion, top view (body outline every second; dashed: tunnel roof)")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)

    t = baked["time"]
    dt = np.diff(t)
    speed = np.linalg.norm(np.diff(baked["position"], axis=0), axis=1) / dt
    ax1 = fig.add_subplot(grid[1, 0])
    ax1.plot(t[1:], speed, color="tab:blue")
    ax1.set_title("speed from the baked positions (m/s)", fontsize=9)
    ax1.set_xlabel("time (s)")
    ax1.grid(alpha=0.3)
    ax2 = fig.add_subplot(grid[1, 1])
    limit = math.degrees(car.vehicle_motion.max_steering_angle)
    ax2.plot(t, np.degrees(baked["steering"]), color="tab:red")
    ax2.axhline(limit, color="k", ls=":", lw=0.8)
    ax2.axhline(-limit, color="k", ls=":", lw=0.8)
    ax2.set_title(f"knuckle steering angle (°), limit ±{limit:.0f}°", fontsize=9)
    ax2.set_xlabel("time (s)")
    ax2.grid(alpha=0.3)
    ax3 = fig.add_subplot(grid[1, 2])
    dist = np.concatenate([[0.0], np.cumsum(speed * dt)])
    ax3.plot(t, baked["spin"] - baked["spin"][0], color="tab:purple", label="rear wheel angle")
    ax3.plot(t, dist / car.vehicle_motion.wheel_radius, "--", color="k", lw=0.8, label="distance / radius")
    ax3.set_title("wheel spin (rad)", fontsize=9)
    ax3.set_xlabel("time (s)")
    ax3.legend(fontsize=7)
    ax3.grid(alpha=0.3)
    fig.text(0.01, 0.005, report[:220], fontsize=7, color="0.3")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Build, solve, bake and draw the car tunnel sample")
    parser.add_argument("--out-dir", default=str(pathlib.Path(__file__).resolve().parents[1] / "out"))
    parser.add_argument("--fps", type=int, default=24)
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with sample.addon_registered():
        names = sample.build(args.fps)
        scene = bpy.context.scene
        car = bpy.data.objects[names["car"]]
        bpy.context.view_layer.objects.active = car
        result = bpy.ops.vehicle_motion.solve_trajectory()
        report = scene.vehicle_motion.last_report
        print(report)
        if result != {"FINISHED"}:
            print(f"main_job: the solve failed: {report or 'see the messages above'}", file=sys.stderr)
            return 1
        blend = out / "car_tunnel.blend"
        bpy.context.preferences.filepaths.save_version = 0  # no .blend1 backup next to the result
        bpy.ops.wm.save_as_mainfile(filepath=str(blend))
        baked = sample_baked(scene, car)
        png = out / "car_tunnel.png"
        draw(scene, car, baked, png, report)
        print(f"main_job: wrote {blend} and {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
