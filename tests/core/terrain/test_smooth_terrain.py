"""The drive's smooth ground (core.terrain.smooth): a bicubic spline through a mesh's heights."""
from __future__ import annotations

import numpy as np
import pytest

from core.dmoc import solve_scenario
from core.errors import ScenarioError
from core.scenario import Table, loads
from core.scenario.terrain import read_terrain
from core.terrain.mesh import MeshTerrain
from core.terrain.smooth import SplineTerrain
from core.terrain.surface import PlaneTerrain


def hill(x, y):
    """A 0.6 m Gaussian hill on a 4 % grade."""
    return 0.04 * x + 0.6 * np.exp(-((x - 15.0) ** 2 + 0.5 * y**2) / 8.0)


def meshed(spacing: float, height=hill):
    xs, ys = np.arange(-10.0, 45.0 + 1e-9, spacing), np.arange(-8.0, 8.0 + 1e-9, spacing)
    X, Y = np.meshgrid(xs, ys, indexing="ij")
    n, m = X.shape
    i = (np.arange(n - 1)[:, None] * m + np.arange(m - 1)[None, :]).ravel()
    triangles = np.concatenate([np.stack([i, i + m, i + m + 1], 1), np.stack([i, i + m + 1, i + 1], 1)])
    return np.stack([X.ravel(), Y.ravel(), height(X, Y).ravel()], 1), triangles


def test_the_spline_follows_the_mesh_to_its_faceting():
    v, t = meshed(0.25)
    spline = read_terrain(Table({"terrain": {"vertices": v, "triangles": t}}, "vehicle"))
    assert isinstance(spline, SplineTerrain)
    rng = np.random.default_rng(3)
    x, y = rng.uniform(-9.0, 44.0, 4000), rng.uniform(-7.0, 7.0, 4000)
    mesh = MeshTerrain.from_arrays(v, t)
    facet = np.abs(mesh.height(x, y) - hill(x, y)).max()          # the mesh's own error, ~1 mm
    assert np.abs(spline.height(x, y) - hill(x, y)).max() < facet + 2e-3
    assert np.abs(spline.height(x, y) - mesh.height(x, y)).max() < 2 * facet + 2e-3


def test_its_gradient_and_hessian_are_its_heights_derivatives():
    v, t = meshed(0.5)
    mesh = MeshTerrain.from_arrays(v, t)
    spline = SplineTerrain.of(mesh, *mesh.bounds)
    rng = np.random.default_rng(4)
    x, y, e = rng.uniform(-5.0, 40.0, 200), rng.uniform(-5.0, 5.0, 200), 1e-5
    g = spline.gradient(x, y)
    fd = np.stack([spline.height(x + e, y) - spline.height(x - e, y),
                   spline.height(x, y + e) - spline.height(x, y - e)], -1) / (2 * e)
    assert np.abs(g - fd).max() < 1e-6
    H = spline.hessian(x, y)
    fdx = (spline.gradient(x + e, y) - spline.gradient(x - e, y)) / (2 * e)
    fdy = (spline.gradient(x, y + e) - spline.gradient(x, y - e)) / (2 * e)
    assert np.abs(H[..., 0, :] - fdx).max() < 1e-5 and np.abs(H[..., 1, :] - fdy).max() < 1e-5
    assert np.array_equal(H[..., 0, 1], H[..., 1, 0])
    # beyond the mesh's box the ground is held level at its edge: no slope, no NaN
    far = spline.gradient(np.array([1e4, -1e4]), np.array([0.0, 1e4]))
    assert np.array_equal(far, np.zeros((2, 2)))


@pytest.mark.parametrize("spacing", [0.125, 0.2, 0.25])
@pytest.mark.parametrize("speed", [6.5, 7.5])
def test_a_car_solves_over_a_meshed_hill(spacing, speed):
    """Over the faceted mesh itself the solve's nodes caught on face edges; through the spline it converges
    at every mesh spacing and speed, close to the solve on the analytic hill."""
    v, t = meshed(spacing)
    scenario = f"""
[vehicle]
type = "car"
preset = "hatchback"
[integrator]
steps = 40
[time]
duration = {30.0 / speed}
[start]
position = [0.0, 0.3]
speed = {speed}
[goal]
position = [30.0, -0.2]
speed = {speed}
[bounds]
torque = [-2000.0, 2000.0]
[cost]
effort = 1.0
"""
    root = loads(scenario)
    root.data["vehicle"]["terrain"] = {"vertices": v, "triangles": t}
    trajectory, result, _ = solve_scenario(root)
    assert result.status == "converged" and result.max_constraint_violation < 1e-8
    assert trajectory.stats["iterations"] < 120   # 88 here; 79-84 on the analytic hill; 229-363 or stalled on facets


def test_smoothing_is_only_for_a_mesh():
    with pytest.raises(ScenarioError, match="smoothing"):
        read_terrain(Table({"terrain": {"slope": [0.1, 0.0], "smoothing": 1.0}}, "vehicle"))
    with pytest.raises(ScenarioError, match="smoothing"):
        v, t = meshed(1.0)
        read_terrain(Table({"terrain": {"vertices": v, "triangles": t, "smoothing": -1.0}}, "vehicle"))
    assert isinstance(read_terrain(Table({"terrain": {"slope": [0.1, 0.0]}}, "vehicle")), PlaneTerrain)
