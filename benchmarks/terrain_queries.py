"""Ground queries: build time and queries per second of ``core.terrain.mesh.MeshTerrain``.

    .venv/bin/python benchmarks/terrain_queries.py [--triangles 20000] [--points 100000] [--repeat 5]

A hilly grid mesh of about ``--triangles`` triangles over 100 m × 100 m; ``--points`` random points
inside its footprint (every one covered) and over a box 20 % larger each way (about a third off the
mesh: the outline fallback). With bpy importable, the same heights by ``mathutils.bvhtree`` ray casts
(one Python call per point, as an add-on would), for comparison. Best of ``--repeat``, wall time.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from core.terrain.mesh import MeshTerrain


def hill_mesh(triangles: int) -> tuple[np.ndarray, np.ndarray]:
    n = max(1, int(round(np.sqrt(triangles / 2.0))))
    xs = np.linspace(0.0, 100.0, n + 1)
    X, Y = np.meshgrid(xs, xs, indexing="ij")
    Z = 3.0 * np.sin(0.1 * X) * np.cos(0.07 * Y) + 0.2 * np.sin(0.9 * X + 0.4 * Y)
    V = np.stack([X.ravel(), Y.ravel(), Z.ravel()], axis=1)
    i = (np.arange(n)[:, None] * (n + 1) + np.arange(n)[None, :]).ravel()
    return V, np.concatenate([np.stack([i, i + n + 1, i + n + 2], 1), np.stack([i, i + n + 2, i + 1], 1)])


def best(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return min(times)


def bvh_heights(V: np.ndarray, T: np.ndarray, x: np.ndarray, y: np.ndarray, repeat: int) -> tuple[float, float, np.ndarray]:
    from mathutils import Vector
    from mathutils.bvhtree import BVHTree
    build = best(repeat, lambda: BVHTree.FromPolygons(V.tolist(), T.tolist()))
    tree = BVHTree.FromPolygons(V.tolist(), T.tolist())
    down = Vector((0.0, 0.0, -1.0))
    out = np.full(len(x), np.nan)

    def cast():
        for i, (a, b) in enumerate(zip(x.tolist(), y.tolist())):
            hit = tree.ray_cast(Vector((a, b, 10.0)), down)[0]   # above the hills, near: float32
            if hit is not None:
                out[i] = hit.z
    return build, best(repeat, cast), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triangles", type=int, default=20000)
    parser.add_argument("--points", type=int, default=100000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    V, T = hill_mesh(args.triangles)
    rng = np.random.default_rng(0)
    build = best(args.repeat, lambda: MeshTerrain.from_arrays(V, T))
    terrain = MeshTerrain.from_arrays(V, T)
    print(f"mesh: {len(T)} triangles; grid {terrain.grid.shape[0]}×{terrain.grid.shape[1]} cells, "
          f"{len(terrain.grid.cell_triangles) / len(T):.1f} entries per triangle; build {build * 1e3:.1f} ms")
    inside = rng.uniform(0.0, 100.0, (2, args.points))
    around = rng.uniform(-20.0, 120.0, (2, args.points))
    for label, (x, y) in (("inside", inside), ("around", around)):
        seconds = best(args.repeat, lambda: terrain.sample(x, y))
        off = 1.0 - float(np.mean(terrain.covered(x, y)))
        print(f"{label}: {args.points} points ({off:.0%} off the mesh) in {seconds * 1e3:.1f} ms, "
              f"{args.points / seconds:,.0f} queries/s")
    try:
        import bpy  # noqa: F401  (the bpy module brings mathutils)
    except ImportError:
        return
    x, y = inside
    bvh_build, bvh_time, heights = bvh_heights(V, T, x, y, min(args.repeat, 2))
    error = float(np.max(np.abs(heights - terrain.height(x, y))))
    print(f"mathutils BVHTree: build {bvh_build * 1e3:.1f} ms; {args.points} ray casts in {bvh_time * 1e3:.0f} ms, "
          f"{args.points / bvh_time:,.0f} queries/s; largest height difference {error:.2g} m")


if __name__ == "__main__":
    main()
