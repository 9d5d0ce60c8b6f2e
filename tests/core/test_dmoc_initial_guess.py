"""The initial guess's obstacle pushing (core.dmoc.initial_guess): the distance bounds that let a sweep skip
points are exact — the same path as evaluating every point at every sweep."""
from __future__ import annotations

import numpy as np
import pytest

from core.dmoc.constraints import Spec
from core.dmoc.initial_guess import push_out, smooth_path
from core.dmoc.obstacles import Obstacle


def _reference_push(path, spec, keep, sweeps=3, floors=None):
    """Every point against every obstacle at every sweep (the definition)."""
    path = np.array(path, dtype=float)
    reach = float(np.max(spec.spheres[:, 3]))
    movable = np.ones(len(path), dtype=bool)
    movable[keep] = False
    for _ in range(sweeps):
        for o, ob in enumerate(spec.obstacles):
            d, g = ob.distance(path)
            need = (ob.margin if floors is None else floors[o]) + reach + 0.05 - d
            hit = movable & (need > 0)
            gn = np.linalg.norm(g, axis=1)
            g = np.where(gn[:, None] > 0, g / np.maximum(gn, 1e-300)[:, None], np.array([0.0, 1.0, 0.0]))
            path[hit] += need[hit, None] * g[hit]
    return path


def _reference_smooth(path, spec, keep, passes=200, floors=None):
    path = np.array(path, dtype=float)
    movable = np.ones(len(path), dtype=bool)
    movable[keep] = False
    movable[[0, -1]] = False
    for _ in range(passes):
        avg = path.copy()
        avg[1:-1] = 0.25 * path[:-2] + 0.5 * path[1:-1] + 0.25 * path[2:]
        path[movable] = avg[movable]
        path = _reference_push(path, spec, np.flatnonzero(~movable), sweeps=1, floors=floors)
    return path


def _spec(rng):
    c, s = np.cos(0.4), np.sin(0.4)
    obstacles = [Obstacle("sphere", center=np.array([10.0, 0.5, 0.0]), radius=2.0, margin=0.2),
                 Obstacle("capsule", a=np.array([20.0, -1.0, 0.0]), b=np.array([20.0, -1.0, 3.0]), radius=1.0,
                          margin=0.1),
                 Obstacle("box", center=np.array([30.0, 2.0, 1.0]), half_extents=np.array([3.0, 1.5, 1.0]),
                          rotation=np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]), margin=0.3),
                 Obstacle("box", center=np.array([31.0, -4.0, 1.0]), half_extents=np.array([2.0, 1.0, 1.0]),
                          margin=0.0)]
    return Spec(spheres=np.array([[0.0, 0.0, 0.5, 1.0], [1.5, 0.0, 0.5, 0.8]]), obstacles=obstacles)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("with_floors", [False, True])
def test_smoothing_and_pushing_match_the_definition(seed, with_floors):
    rng = np.random.default_rng(seed)
    spec = _spec(rng)
    n = 121
    path = np.column_stack([np.linspace(0.0, 40.0, n), rng.normal(scale=1.5, size=n), np.zeros(n)])
    keep = np.array([0, 40, n - 1])
    floors = [np.broadcast_to(ob.margin, (n,)) * rng.uniform(0.2, 1.0, n) for ob in spec.obstacles] \
        if with_floors else None
    np.testing.assert_array_equal(push_out(path, spec, keep, floors=floors),
                                  _reference_push(path, spec, keep, floors=floors))
    smoothed = smooth_path(path, spec, keep, passes=60, floors=floors)
    np.testing.assert_array_equal(smoothed, _reference_smooth(path, spec, keep, passes=60, floors=floors))
    assert not np.array_equal(smoothed, path)   # something was pushed and smoothed
