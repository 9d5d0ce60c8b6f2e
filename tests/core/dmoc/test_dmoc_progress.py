"""``solve_scenario(..., callback=)``: progress (iterations so far, largest constraint violation of
the current iterate) for the Blender worker, and a way to stop the solve."""
from __future__ import annotations

import tomllib

import numpy as np
import pytest

from core.dmoc import _progress, solve_scenario
from core.dmoc.constraints import assemble
from core.dmoc.initial_guess import initial_guess
from core.dmoc.scenario import read
from core.dmoc.solve import ipopt_available
from core.scenario import Table

SCENARIO = """
[vehicle]
type = "car"
preset = "hatchback"
collision_radius = 0.9
[integrator]
steps = 16
[time]
duration = 4.0
[start]
position = [0.0, 0.0]
speed = 3.0
[goal]
position = [12.0, 1.5]
heading = 0.0
[[obstacles]]
type = "sphere"
center = [6.0, -1.5, 0.0]
radius = 0.8
[solver]
backend = "scipy"
"""


def scenario() -> Table:
    return Table(tomllib.loads(SCENARIO))


class Stop(BaseException):
    pass


def test_callback_ends_with_the_results_iterations_and_violation():
    seen: list[tuple[int, float]] = []
    trajectory, result, _ = solve_scenario(scenario(), callback=lambda k, v: seen.append((k, v)))
    assert result.converged, result.message
    assert seen and seen[-1] == (result.iterations, result.max_constraint_violation)
    assert [k for k, _ in seen] == sorted(k for k, _ in seen)
    # every iteration is reported, not only the end of each outer solve
    assert len(seen) >= result.iterations and [k for k, _ in seen[:3]] == [0, 1, 2]
    assert all(np.isfinite(v) and v >= 0.0 for _, v in seen)
    _, plain, _ = solve_scenario(scenario())  # the callback does not change the solve
    assert plain.iterations == result.iterations and plain.cost == pytest.approx(result.cost, rel=1e-12)


@pytest.mark.skipif(not ipopt_available(), reason="cyipopt not installed")
def test_ipopt_reports_every_iteration():
    seen: list[tuple[int, float]] = []
    _, result, _ = solve_scenario(scenario(), backend="ipopt", callback=lambda k, v: seen.append((k, v)))
    assert result.converged, result.message
    assert len(seen) >= result.iterations and seen[-1][0] == result.iterations
    assert [k for k, _ in seen] == sorted(k for k, _ in seen)
    assert seen[-1][1] <= 1e-8 < seen[0][1]


def test_a_base_exception_from_the_callback_stops_the_solve():
    calls = []

    def stop(k, v):
        calls.append(k)
        raise Stop()

    with pytest.raises(Stop):
        solve_scenario(scenario(), callback=stop)
    assert len(calls) == 1


def test_per_iteration_forwarding_counts_on_and_measures_the_iterate():
    """core.dmoc.solve's callback(k, z) (z: the free variables) becomes callback(done + k, max violation of z)."""
    setup = read(scenario())
    nlp = assemble(setup.model, setup.spec)
    z = nlp.reduce(initial_guess(setup.model, setup.spec))
    seen = []
    step = _progress(lambda k, v: seen.append((k, v)), nlp, 7)
    step(3, z)
    step(4, z + 0.01)
    assert seen == [(10, nlp.max_violation(z)), (11, nlp.max_violation(z + 0.01))]
    assert seen[0][1] > 1e-3  # the initial guess is not feasible: a real measurement
    assert seen[0][1] != seen[1][1]
    assert _progress(None, nlp, 0) is None
