"""The initial guess's obstacle pushing (core.dmoc.initial_guess): the distance bounds that let a sweep skip
points are exact — the same path as evaluating every point at every sweep; a vehicle on the water is pushed
round an obstacle, never over it."""
from __future__ import annotations

import numpy as np
import pytest

from core.dmoc import solve_scenario
from core.dmoc.constraints import Spec
from core.dmoc.initial_guess import push_out, smooth_path
from core.dmoc.obstacles import Obstacle
from core.scenario import Table


def _sideways(ob, points):
    level = points.copy()
    level[:, 2] = ob.middle()[2]
    g = ob.distance(level)[1].copy()
    g[:, 2] = 0.0
    return g


def _reference_push(path, spec, keep, sweeps=3, floors=None, on_surface=False):
    """Every point against every obstacle at every sweep (the definition). ``on_surface``: where ∇d is more
    vertical than horizontal, the horizontal ∇d at the obstacle's middle height."""
    path = np.array(path, dtype=float)
    reach = float(np.max(spec.spheres[:, 3]))
    movable = np.ones(len(path), dtype=bool)
    movable[keep] = False
    for _ in range(sweeps):
        for o, ob in enumerate(spec.obstacles):
            d, g = ob.distance(path)
            need = (ob.margin if floors is None else floors[o]) + reach + 0.05 - d
            hit = movable & (need > 0)
            if on_surface:
                up = np.abs(g[:, 2]) > np.hypot(g[:, 0], g[:, 1])
                g[up] = _sideways(ob, path[up])
            gn = np.linalg.norm(g, axis=1)
            g = np.where(gn[:, None] > 0, g / np.maximum(gn, 1e-300)[:, None], np.array([0.0, 1.0, 0.0]))
            path[hit] += need[hit, None] * g[hit]
    return path


def _reference_smooth(path, spec, keep, passes=200, floors=None, on_surface=False):
    path = np.array(path, dtype=float)
    movable = np.ones(len(path), dtype=bool)
    movable[keep] = False
    movable[[0, -1]] = False
    for _ in range(passes):
        avg = path.copy()
        avg[1:-1] = 0.25 * path[:-2] + 0.5 * path[1:-1] + 0.25 * path[2:]
        path[movable] = avg[movable]
        path = _reference_push(path, spec, np.flatnonzero(~movable), sweeps=1, floors=floors, on_surface=on_surface)
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
@pytest.mark.parametrize("on_surface", [False, True])
def test_smoothing_and_pushing_match_the_definition(seed, with_floors, on_surface):
    rng = np.random.default_rng(seed)
    spec = _spec(rng)
    n = 121
    # heights about the boxes' tops and bottoms, where ∇d can point up or down
    path = np.column_stack([np.linspace(0.0, 40.0, n), rng.normal(scale=1.5, size=n), rng.uniform(-0.3, 2.3, n)])
    keep = np.array([0, 40, n - 1])
    floors = [np.broadcast_to(ob.margin, (n,)) * rng.uniform(0.2, 1.0, n) for ob in spec.obstacles] \
        if with_floors else None
    np.testing.assert_array_equal(push_out(path, spec, keep, floors=floors, on_surface=on_surface),
                                  _reference_push(path, spec, keep, floors=floors, on_surface=on_surface))
    smoothed = smooth_path(path, spec, keep, passes=60, floors=floors, on_surface=on_surface)
    np.testing.assert_array_equal(smoothed,
                                  _reference_smooth(path, spec, keep, passes=60, floors=floors, on_surface=on_surface))
    assert not np.array_equal(smoothed, path)   # something was pushed and smoothed


FLOAT_Z = 0.08403097495099042   # the default boat's floating height at rest (Boat.equilibrium())
LOW_BUOY = Obstacle("box", center=np.array([6.0, 0.5, 0.0]), half_extents=np.array([0.6, 0.6, 0.3]), margin=0.1)


def test_a_boat_goes_round_a_low_buoy_not_over_it():
    """On the straight line through a buoy whose top is nearer than its sides, ∇d points up: the plain push
    lifts the path out of the water; the push on the water keeps its height and clears the buoy sideways."""
    spec = Spec(spheres=np.array([[0.0, 0.0, 0.0, 1.1]]), obstacles=[LOW_BUOY])
    n = 81
    path = np.column_stack([np.linspace(0.0, 12.0, n), np.linspace(0.0, 1.0, n), np.full(n, FLOAT_Z)])
    keep = np.array([0, n - 1])
    lifted = smooth_path(push_out(path, spec, keep), spec, keep)
    assert np.max(lifted[:, 2]) > FLOAT_Z + 0.5
    kept = smooth_path(push_out(path, spec, keep, on_surface=True), spec, keep, on_surface=True)
    np.testing.assert_array_equal(kept[:, 2], path[:, 2])
    d, _ = LOW_BUOY.distance(kept)
    assert np.min(d) >= LOW_BUOY.margin + 1.1 + 0.05 - 1e-9


def test_boat_past_a_buoy_on_its_straight_line_converges():
    """The boat's straight way runs through a low buoy: from the guess that goes round it the scipy interior point
    converges round it (from a guess lifted over the buoy it ran out of 500 iterations, the boat in the air)."""
    scenario = {
        "vehicle": {"type": "boat",
                    "collision_spheres": [[1.5, 0.0, 0.0, 1.1], [0.0, 0.0, 0.0, 1.1], [-1.5, 0.0, 0.0, 1.1]]},
        "integrator": {"steps": 80}, "time": {"duration": 8.0},
        "start": {"position": [0.0, 0.0, FLOAT_Z]},
        "goal": {"position": [12.0, 1.0, FLOAT_Z], "heading": 0.0, "velocity": [0.0, 0.0, 0.0],
                 "angular_velocity": [0.0, 0.0, 0.0]},
        "obstacles": [{"type": "box", "center": [6.0, 0.5, 0.0], "half_extents": [0.6, 0.6, 0.3], "margin": 0.1}],
        "cost": {"effort": 1e-6, "smoothness": 1e-7},
        "solver": {"backend": "scipy", "max_iter": 150},
    }
    traj, result, _ = solve_scenario(Table(scenario))
    assert result.converged, result.message
    p = np.asarray(traj.position)
    assert np.ptp(p[:, 2]) < 0.05                       # afloat all the way
    assert np.min(np.abs(p[:, 1] - 0.5)[np.abs(p[:, 0] - 6.0) < 0.6]) > 0.6 + 0.1   # beside the buoy
