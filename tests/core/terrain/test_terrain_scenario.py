"""``[vehicle.terrain]`` in car scenarios: a plane or a mesh, read for Simulate and Solve alike."""
from __future__ import annotations

import numpy as np
import pytest

from core.dmoc import solve_scenario
from core.errors import ScenarioError
from core.scenario import loads
from core.scenario import car as car_scenario
from core.terrain import PlaneTerrain
from core.terrain.smooth import SplineTerrain

SIMULATE = """
[vehicle]
type = "car"
preset = "hatchback"
{terrain}
[integrator]
dt = 0.05
steps = 100
[initial]
wheel_rate = 10.0
[controls.torque]
offset = 300.0
"""

SOLVE = """
[vehicle]
type = "car"
preset = "hatchback"
{terrain}
[integrator]
steps = 30
[time]
duration = 6.0
[start]
position = [0.0, 0.0]
speed = 4.0
[goal]
position = [24.0, 0.0]
speed = 4.0
[bounds]
torque = [-1500.0, 1500.0]
[cost]
effort = 1.0
"""

PLANE = "[vehicle.terrain]\nlevel = 2.0\nslope = [0.08, 0.0]"


def _plane_mesh() -> str:
    """The same 8 % grade as a 2-triangle mesh, large enough for the whole run."""
    v = [[-100, -100, 2 - 8], [400, -100, 2 + 32], [400, 100, 2 + 32], [-100, 100, 2 - 8]]
    return f"[vehicle.terrain]\nvertices = {v}\ntriangles = [[0, 1, 2], [0, 2, 3]]"


def _simulate(terrain: str):
    return car_scenario.simulate(loads(SIMULATE.format(terrain=terrain)))


def test_a_grade_slows_the_car_that_climbs_it():
    flat, up = _simulate(""), _simulate(PLANE)
    assert up.linear_velocity[-1, 0] < flat.linear_velocity[-1, 0] - 1.0


def test_a_mesh_of_the_plane_drives_like_the_plane():
    plane, mesh = _simulate(PLANE), _simulate(_plane_mesh())
    scale = np.abs(plane.position).max()
    assert np.abs(mesh.position - plane.position).max() < 1e-12 * scale * 100
    assert np.abs(mesh.linear_velocity - plane.linear_velocity).max() < 1e-10


def test_solve_reads_the_terrain_and_plans_a_harder_climb():
    flat, _, _ = solve_scenario(loads(SOLVE.format(terrain="")))
    up, _, _ = solve_scenario(loads(SOLVE.format(terrain=PLANE)))
    assert flat.stats["status"] == up.stats["status"] == "converged"
    assert up.controls["torque"].mean() > flat.controls["torque"].mean() + 100.0


def test_mesh_terrain_arrays_pass_through_unchanged():
    """The add-on hands the Ground's arrays over as numpy arrays, not lists."""
    v = np.array([[0, 0, 0], [10, 0, 1], [10, 10, 1], [0, 10, 0]], float)
    t = np.array([[0, 1, 2], [0, 2, 3]])
    from core.scenario import Table
    from core.scenario.terrain import read_terrain

    terrain = read_terrain(Table({"terrain": {"vertices": v, "triangles": t}}, "vehicle"))
    assert isinstance(terrain, SplineTerrain)     # the drive reads the mesh through a smooth spline
    assert terrain.height(2.0, 2.0) == pytest.approx(0.2, abs=1e-12)
    assert np.abs(terrain.hessian(np.array([1.0, 2.0]), 1.0)).max() < 1e-10   # a plane stays a plane


@pytest.mark.parametrize("table, message", [
    ("[vehicle.terrain]\nlevel = 1.0\nvertices = [[0, 0, 0]]\ntriangles = [[0, 0, 0]]", "not both"),
    ("[vehicle.terrain]\nvertices = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]\ntriangles = [[0, 1, 2.5]]", "whole vertex indices"),
    ("[vehicle.terrain]\nvertices = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]", "triangles"),
    ("[vehicle.terrain]\nslope = [0.1]", "slope"),
    ("[vehicle.terrain]\nlevel = 0.0\nbumps = 3", "bumps"),
])
def test_bad_terrain_tables_name_the_key(table, message):
    with pytest.raises(ScenarioError, match=message) as info:
        _simulate(table)
    assert "vehicle.terrain" in str(info.value)
    assert PlaneTerrain  # the plane reader is the default
