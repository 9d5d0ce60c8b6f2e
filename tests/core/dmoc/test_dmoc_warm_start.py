"""Primal-dual warm start (core.dmoc.warm, interior_point's ``warm``) and the per-pattern KKT layout cache."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from core.dmoc import solve_scenario
from core.dmoc.constraints import assemble
from core.dmoc.initial_guess import initial_guess
from core.dmoc.ipm import KKT_LAYOUTS, Duals, KKTSystem, interior_point
from core.dmoc.scenario import read
from core.dmoc.solve import scaling, solve
from core.dmoc.warm import KEY, attach, duals_for
from core.scenario import loads
from core.trajectory import Trajectory

SAMPLES = Path(__file__).resolve().parents[3] / "samples"


def _car(steps: int = 40, goal_y: float = 12.0) -> str:
    text = (SAMPLES / "car_tunnel.toml").read_text()
    text = re.sub(r"(?m)^steps = \d+", f"steps = {steps}", text)
    return text.replace("position = [75.0, 12.0]", f"position = [75.0, {goal_y!r}]")


@pytest.fixture(scope="module")
def solved():
    traj, result, _ = solve_scenario(loads(_car()), "scipy")
    assert result.converged
    return traj, result


def _nlp(text: str):
    setup = read(loads(text), "scipy")
    return setup, assemble(setup.model, setup.spec)


def test_duals_unscale_to_the_kkt_point_of_the_unscaled_problem(solved):
    """The stored multipliers are the unscaled problem's: ∇f + Jᵀλ − z_L + z_U = 0 on the free variables
    (to the solve's tolerance), and a scaling computed at another point reads them back into a start that
    is already optimal (converges at once)."""
    traj, result = solved
    _, nlp = _nlp(_car())
    du = result.duals
    z = result.z
    ev = nlp.derivatives(z)
    J = nlp.jacobian(z)
    r = ev.grad + J.T @ du.y - du.z_lower[:nlp.n] + du.z_upper[:nlp.n]
    assert np.max(np.abs(r)) <= 1e-5 * max(1.0, np.max(np.abs(ev.grad)))
    D, Sc, sf = scaling(nlp, 1.01 * z)   # another scaling than the solve's
    again = interior_point(nlp, z, D, Sc, sf, warm=du)
    assert again.status == "converged" and again.iterations <= 2


def test_the_trajectory_carries_them_through_json(solved, tmp_path):
    traj, result = solved
    path = tmp_path / "car.json"
    traj.write_json(path)
    back = Trajectory.read_json(path)
    _, nlp = _nlp(_car())
    du = duals_for(back, nlp)
    assert du is not None
    np.testing.assert_array_equal(du.y, result.duals.y)
    np.testing.assert_array_equal(du.z_lower, result.duals.z_lower)
    assert json.loads(path.read_text())[KEY]["structure"] == nlp.structure_key()


def test_a_moved_goal_resolves_primal_dual_in_a_few_iterations(solved):
    traj, result = solved
    cold, cold_result, _ = solve_scenario(loads(_car(goal_y=12.5)), "scipy")
    warm, warm_result, _ = solve_scenario(loads(_car(goal_y=12.5)), "scipy", initial=traj)
    assert cold.stats["warm_start"] == "none" and warm.stats["warm_start"] == "primal-dual"
    assert warm_result.converged and cold_result.converged
    assert warm_result.iterations <= 8 < cold_result.iterations
    np.testing.assert_allclose(warm.position[-1][:2], [75.0, 12.5], atol=1e-6)


def test_another_structure_or_damaged_state_falls_back_to_a_primal_start(solved):
    traj, _ = solved
    other, res, _ = solve_scenario(loads(_car(steps=41)), "scipy", initial=_resampled(traj, 41))
    assert other.stats["warm_start"] == "primal" and res.converged
    _, nlp = _nlp(_car())
    nb = nlp.n + int(np.count_nonzero(nlp.cl != nlp.cu))
    good = dict(traj.series[KEY])
    for damage in ({"constraint_multipliers": [1.0, 2.0]}, {"barrier": -1.0}, {"barrier": "x"},
                   {"lower_bound_multipliers": -np.abs(np.asarray(good["lower_bound_multipliers"]))},
                   {"upper_bound_multipliers": np.full(nb, np.nan)}, {"structure": "0" * 32}):
        t = Trajectory.from_dict(traj.to_dict())
        t.series[KEY] = dict(good, **damage)
        assert duals_for(t, nlp) is None, damage
    t = Trajectory.from_dict(traj.to_dict())
    t.series[KEY] = "not a table"
    assert duals_for(t, nlp) is None
    _, res, _ = solve_scenario(loads(_car()), "scipy", initial=t)
    assert res.converged


def _resampled(traj: Trajectory, steps: int) -> Trajectory:
    """A rough trajectory of another node count (the warm start is primal only then)."""
    d = traj.to_dict()
    d.pop(KEY)
    t_old = np.asarray(d["time"])
    t_new = np.linspace(t_old[0], t_old[-1], steps + 1)

    def resample(a, n_old):
        a = np.asarray(a, dtype=float)
        if a.ndim == 0 or a.shape[0] not in (n_old, n_old - 1):
            return a
        tt = t_old if a.shape[0] == n_old else t_old[:-1]
        nn = t_new if a.shape[0] == n_old else t_new[:-1]
        flat = a.reshape(a.shape[0], -1)
        return np.stack([np.interp(nn, tt, flat[:, j]) for j in range(flat.shape[1])], axis=1).reshape(
            (len(nn),) + a.shape[1:])

    n_old = len(t_old)
    for k, v in list(d.items()):
        if isinstance(v, dict):
            d[k] = {kk: resample(vv, n_old) if isinstance(vv, list) else vv for kk, vv in v.items()}
        elif isinstance(v, list):
            d[k] = resample(v, n_old)
    return Trajectory.from_dict(d)


def test_kkt_layout_is_shared_per_pattern_and_factors_the_same():
    setup, nlp = _nlp(_car(steps=12))
    I = np.flatnonzero(nlp.cl != nlp.cu)
    args = (nlp.n, nlp.m, I, nlp.hess_pattern.rows, nlp.hess_pattern.cols, nlp.jac_pattern.rows,
            nlp.jac_pattern.cols)
    KKT_LAYOUTS.clear()
    a = KKTSystem(*args)
    b = KKTSystem(*args)
    assert len(KKT_LAYOUTS) == 1 and a.layout is b.layout and a.perm is b.perm
    z = nlp.reduce(initial_guess(setup.model, setup.spec))
    ev = nlp.derivatives(z)
    hv = nlp.hessian_values(z, np.ones(nlp.m), 1.0)
    rng = np.random.default_rng(3)
    Dx, Ds, dc = rng.uniform(0.5, 2.0, nlp.n), rng.uniform(0.5, 2.0, len(I)), np.zeros(nlp.m)
    na = a.factor(hv, ev.jac, Dx, Ds, dc)
    KKT_LAYOUTS.clear()
    c = KKTSystem(*args)   # laid out afresh
    assert c.perm is not a.perm
    assert c.factor(hv, ev.jac, Dx, Ds, dc) == na
    rhs = rng.normal(size=nlp.n + nlp.m)
    np.testing.assert_array_equal(a.solve_full(rhs)[0], c.solve_full(rhs)[0])
    for i in range(KKT_LAYOUTS.capacity):   # the cache stays bounded: a new pattern drops the oldest
        KKT_LAYOUTS.put(bytes([i]) * 20, c.layout)
    assert len(KKT_LAYOUTS) == KKT_LAYOUTS.capacity and bytes([0]) * 20 in KKT_LAYOUTS
    KKTSystem(nlp.n, nlp.m, I, nlp.hess_pattern.rows[:-1], nlp.hess_pattern.cols[:-1], nlp.jac_pattern.rows,
              nlp.jac_pattern.cols)
    assert len(KKT_LAYOUTS) == KKT_LAYOUTS.capacity and bytes([0]) * 20 not in KKT_LAYOUTS
    assert bytes([1]) * 20 in KKT_LAYOUTS


def test_warm_duals_are_checked_by_shape_in_the_ipm_too():
    setup, nlp = _nlp(_car(steps=12))
    z0 = nlp.reduce(initial_guess(setup.model, setup.spec))
    r = solve(nlp, z0, setup.options)
    assert r.converged and isinstance(r.duals, Duals)
    assert r.duals.y.shape == (nlp.m,) and r.duals.z_lower.shape == r.duals.z_upper.shape
    assert np.all(r.duals.z_lower >= 0) and np.all(r.duals.z_upper >= 0) and r.duals.mu > 0


def test_multipliers_that_are_not_finite_are_not_stored(solved):
    traj, result = solved
    _, nlp = _nlp(_car())
    t = Trajectory.from_dict(traj.to_dict())
    t.series.pop(KEY)
    bad = Duals(y=np.full_like(result.duals.y, np.nan), z_lower=result.duals.z_lower,
                z_upper=result.duals.z_upper, mu=result.duals.mu)
    attach(t, nlp, bad)
    assert KEY not in t.series
    t.to_json()   # still writable
    attach(t, nlp, result.duals)
    assert t.series[KEY]["structure"] == nlp.structure_key()
