"""The slope in the car's drive (core.vehicles.car_slope, core.vehicles.car, core.dmoc.models.car_slope).

On a constant grade the speed is the hand solution of the drive equation (I + ρ²m) u̇ = f − m g ρ s to
round-off, uphill slower and downhill faster than on the flat with the same torque, and within the
small-slope bound s²/2 of the 3-D rolling car's m g sin β. Over a hill: second order against the
continuous equations, the energy with the potential kept to O(h²); the step's and the DMOC group's
Jacobians against central differences; a DMOC solve over the hill converges and its controls replay
to its states. Flat ground (None, or a level plane) is the flat update bit for bit. The terrains'
Hessians (analytic, by differences, zero for a plane) against references written here.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from core.dmoc.constraints import assemble
from core.dmoc.initial_guess import initial_guess
from core.dmoc.models.car import CarModel
from core.dmoc.scenario import read
from core.dmoc.solve import solve
from core.errors import ScenarioError
from core.scenario import loads
from core.terrain import FunctionTerrain, PlaneTerrain
from core.vehicles import car as C

G = 9.81
CAR = C.Car.preset("hatchback")
AMP, CX, CY, S2 = 1.5, 15.0, 0.5, 25.0           # the hill: h = AMP exp(−|(x, y) − c|² / (2 S2))


def _bump(x, y):
    return AMP * np.exp(-((x - CX) ** 2 + (y - CY) ** 2) / (2 * S2))


def _bump_gradient(x, y):
    e = _bump(x, y)
    return np.stack([-e * (x - CX) / S2, -e * (y - CY) / S2], axis=-1)


def _bump_hessian(x, y):
    e = _bump(x, y)
    dx, dy = (x - CX) / S2, (y - CY) / S2
    return np.stack([np.stack([e * (dx * dx - 1 / S2), e * dx * dy], -1),
                     np.stack([e * dx * dy, e * (dy * dy - 1 / S2)], -1)], -2)


HILL = FunctionTerrain(_bump, _bump_gradient, _bump_hessian)
HILL_BY_DIFFERENCES = FunctionTerrain(_bump, _bump_gradient)


def _straight(grade: float, torque, n: int, h: float, alpha: float = 0.5, v0: float = 5.0):
    """A straight run along +x on the plane of the given grade (None: no terrain)."""
    terrain = None if grade is None else PlaneTerrain(level=1.0, slope=(grade, 0.0))
    init = C.CarInitial(wheel_rate=v0 / CAR.wheel_radius)
    return C.simulate(CAR, init, {"torque": np.broadcast_to(torque, (n,))}, h, n, alpha=alpha, terrain=terrain)


# -- (a) the speed on a constant slope --------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0.5, 0.0, 1.0, 0.3])
@pytest.mark.parametrize("grade", [0.08, -0.08, 0.25])
def test_constant_grade_speed_is_the_drive_equation_by_hand(grade, alpha):
    """(I + ρ²m) u̇ = f − m g ρ s with v = ρu: constant acceleration A, v(t) = v₀ + A t, A = ρ(f − m g ρ s)/(I + ρ²m).
    The update applies the constant slope force like a constant torque: the node speeds are exact for every α,
    the positions v₀t_k + ½At_k² exact for α = ½ and offset by the first-order (½ − α)A h t_k otherwise."""
    n, h, f, v0 = 200, 0.05, 400.0, 5.0
    traj = _straight(grade, f, n, h, alpha, v0)
    rho, m, inertia = CAR.wheel_radius, CAR.mass, CAR.wheel_inertia
    accel = rho * (f - m * G * rho * grade) / (inertia + rho**2 * m)
    v = traj.linear_velocity[:, 0]
    assert np.max(np.abs(v - (v0 + accel * traj.time))) < 1e-12 * max(1.0, np.abs(v).max())
    t = traj.time
    assert np.allclose(traj.position[:, 0], v0 * t + 0.5 * accel * t**2 + (0.5 - alpha) * accel * h * t,
                       rtol=0, atol=1e-10)
    assert np.all(traj.position[:, 1:] == 0.0)                       # planned in the ground plane


def test_the_slope_term_is_within_the_small_slope_bound_of_m_g_sin_slope():
    """The hand computation for a car rolling on the 3-D slope of angle β has m g sin β in the drive equation;
    the planar model has m g tan β (the grade s). The deceleration the slope causes, measured as the flat run's
    speed minus the uphill run's, is m g ρ² tan β t / (I + ρ²m): within (1/cos β − 1) ≤ s²/2 of the sin β one."""
    n, h, f = 300, 0.04, 600.0
    flat = _straight(None, f, n, h).linear_velocity[:, 0]
    rho, m, inertia = CAR.wheel_radius, CAR.mass, CAR.wheel_inertia
    for grade in (0.03, 0.08, 0.15):
        beta = math.atan(grade)
        up = _straight(grade, f, n, h).linear_velocity[:, 0]
        t = np.arange(n + 1) * h
        by_hand = rho * m * G * rho * math.sin(beta) / (inertia + rho**2 * m) * t   # flat − uphill, 3-D car
        measured = flat - up
        rel = np.abs(measured[1:] - by_hand[1:]) / by_hand[1:]
        assert np.allclose(rel, 1 / math.cos(beta) - 1, rtol=1e-9, atol=1e-12)
        assert rel.max() <= grade**2 / 2


def test_the_same_torque_profile_climbs_slower_and_descends_faster():
    """A varying torque (driving and braking) on a slope along the heading θ = 0.4 of the plane's gradient: the
    speed is below the flat run's at every node uphill and above it downhill, by the slope's constant
    deceleration m g ρ² (∇h·e_θ) t / (I + ρ²m) (straight: the slope force does not depend on the torque)."""
    n, h = 250, 0.04
    t = np.arange(n) * h
    torque = 500.0 * np.sin(1.3 * t) + 200.0
    heading = 0.4
    slope = np.array([0.06, 0.05])
    along = slope @ [math.cos(heading), math.sin(heading)]
    init = C.CarInitial(heading=heading, wheel_rate=6.0 / CAR.wheel_radius)
    runs = {name: C.simulate(CAR, init, {"torque": torque}, h, n,
                             terrain=None if s is None else PlaneTerrain(slope=tuple(s))).linear_velocity[:, 0]
            for name, s in (("flat", None), ("up", slope), ("down", -slope))}
    assert np.all(runs["up"][1:] < runs["flat"][1:]) and np.all(runs["down"][1:] > runs["flat"][1:])
    rho, m = CAR.wheel_radius, CAR.mass
    decel = rho * m * G * rho * along / CAR.a * np.arange(n + 1) * h
    assert np.allclose(runs["flat"] - runs["up"], decel, rtol=1e-10, atol=1e-10)
    assert np.allclose(runs["down"] - runs["flat"], decel, rtol=1e-10, atol=1e-10)


# -- over a hill: order, energy, float and array paths ------------------------------------------------
def test_second_order_against_the_continuous_equations_over_a_hill():
    """α = ½, torque and steering varying, the car crossing the hill's flank: the node error against the
    constrained Lagrange–d'Alembert equations with the slope (core.vehicles.car.reference) falls 4× per halving."""
    init = C.CarInitial(position=(0.0, -1.0), heading=0.1, wheel_rate=5.0 / CAR.wheel_radius)
    errors = []
    for n in (60, 120, 240):
        h = 6.0 / n
        t = np.arange(n) * h
        controls = {"torque": 300.0 * np.sin(t), "steering_rate": 0.1 * np.cos(0.7 * t)}
        traj = C.simulate(CAR, init, controls, h, n, terrain=HILL)
        ref = C.reference(CAR, init, controls, h, n, terrain=HILL)
        errors.append(max(np.abs(traj.position[:, :2] - ref[:, 3:5]).max(),
                          np.abs(traj.linear_velocity[:, 0] - CAR.wheel_radius * ref[:, 5]).max()))
    flat = C.reference(CAR, init, controls, h, n)
    assert np.abs(flat[:, 5] - ref[:, 5]).max() * CAR.wheel_radius > 100 * errors[-1]   # the hill matters
    orders = np.log2(np.array(errors[:-1]) / errors[1:])
    assert np.all((orders > 1.9) & (orders < 2.1)), (errors, orders)


def test_energy_with_the_potential_is_kept_to_second_order():
    """No torque, held steering, α = ½: E = p²/(2M(σ)) + m g h(x, y) (series ``energy``) stays within O(h²) of
    its start while the car rolls over the hill (1.4 m of height exchanged with speed)."""
    init = C.CarInitial(position=(0.0, 0.3), heading=0.05, steering_angle=0.02, wheel_rate=7.0 / CAR.wheel_radius)
    drift = []
    for n in (100, 200, 400):
        traj = C.simulate(CAR, init, {}, 12.0 / n, n, terrain=HILL)
        E = traj.series["energy"]
        heights = HILL.height(traj.position[:, 0], traj.position[:, 1])
        assert np.ptp(heights) > 1.4
        assert np.allclose(E, 0.5 * CAR.reduced_inertia(np.tan(traj.shape["steering_angle"])) *
                           (traj.linear_velocity[:, 0] / CAR.wheel_radius) ** 2 + CAR.mass * G * heights, rtol=1e-12)
        drift.append(np.abs(E - E[0]).max() / E[0])
    assert drift[-1] < 1e-4
    assert 3.6 < drift[0] / drift[1] < 4.4 and 3.6 < drift[1] / drift[2] < 4.4, drift


def test_float_path_and_array_path_agree_on_a_hill():
    """simulate (plain floats, G kept from node to node) and rollout / step (arrays) give the same nodes."""
    n, h = 150, 0.05
    rng = np.random.default_rng(4)
    controls = {"torque": rng.uniform(-800, 800, n), "steering_rate": rng.uniform(-0.3, 0.3, n)}
    init = C.CarInitial(position=(2.0, 0.0), heading=0.05, wheel_rate=20.0)
    for alpha in (0.5, 0.3):
        traj = C.simulate(CAR, init, controls, h, n, alpha=alpha, terrain=HILL)
        U = np.stack([controls["torque"], controls["steering_rate"]], axis=-1)
        Q, _ = C.rollout(CAR, C.initial_state(CAR, init), U, h, alpha, terrain=HILL)
        assert np.allclose(traj.position[:, :2], Q[:, 3:5], rtol=0, atol=1e-9)
        assert np.allclose(traj.linear_velocity[:, 0], CAR.wheel_radius * Q[:, 5] / CAR.reduced_inertia(Q[:, 1]),
                           rtol=1e-12, atol=1e-12)
        single = C.step(Q[40], U[40], h, alpha, CAR, HILL)
        assert np.allclose(single, Q[41], rtol=1e-13, atol=1e-9)


# -- (b) Jacobians ------------------------------------------------------------------------------------
def _states(rng, B):
    s = np.column_stack([rng.normal(size=B), rng.uniform(-0.6, 0.6, B), rng.normal(size=B),
                         CX + 5 * rng.normal(size=B), CY + 5 * rng.normal(size=B), rng.normal(size=B) * 3000])
    s[0, 1] = 0.0                                  # ω = 0 (series branch)
    u = np.column_stack([rng.uniform(-1500, 1500, B), rng.uniform(-1, 1, B)])
    u[0, 1] = 0.0
    return s, u


@pytest.mark.parametrize("alpha", [0.5, 0.0, 1.0, 0.3])
@pytest.mark.parametrize("terrain", [HILL, HILL_BY_DIFFERENCES], ids=["hessian_fn", "hessian-by-differences"])
def test_step_jacobian_on_a_hill_matches_differences(alpha, terrain):
    rng = np.random.default_rng(11)
    s, u = _states(rng, 10)
    h = 0.1
    nxt, Js, Ju = C.step_jacobian(s, u, h, alpha, CAR, terrain)
    assert np.allclose(nxt, C.step(s, u, h, alpha, CAR, terrain), rtol=1e-13, atol=1e-11)
    Z = np.concatenate([s, u], axis=1)
    J = np.concatenate([Js, Ju], axis=-1)
    for j in range(8):
        d = 1e-6 * max(1.0, np.abs(Z[:, j]).max())
        Zp, Zm = Z.copy(), Z.copy()
        Zp[:, j] += d
        Zm[:, j] -= d
        col = (C.step(Zp[:, :6], Zp[:, 6:], h, alpha, CAR, terrain)
               - C.step(Zm[:, :6], Zm[:, 6:], h, alpha, CAR, terrain)) / (2 * d)
        assert np.allclose(J[..., j], col, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(col).max())), j
    flat = C.step_jacobian(s, u, h, alpha, CAR)
    assert np.abs(flat[1] - Js).max() > 1.0                           # the slope's partials are there


def _group(alpha: float, free_T: bool, terrain, N: int = 20):
    model = CarModel(CAR, N, alpha, terrain=terrain)
    model.fixed[model.T] = not free_T
    return model.dynamics()[0]


def _locals(rng, B, T=5.0):
    s, u = _states(rng, B)
    s1 = s + rng.normal(size=(B, 6)) * [1, 0.1, 0.3, 1, 1, 300]
    return np.column_stack([s, u, s1, np.full(B, T)])


@pytest.mark.parametrize("free_T", [True, False], ids=["free-T", "fixed-T"])
@pytest.mark.parametrize("alpha", [0.5, 0.0, 1.0, 0.3])
def test_dmoc_dynamics_jacobian_on_a_hill_matches_differences(alpha, free_T):
    """The group's analytic Jacobian against central differences of its values, within its declared mask; its
    residual vanishes where s_{k+1} is the car's explicit step on the terrain."""
    rng = np.random.default_rng(12)
    N, T = 20, 5.0
    g = _group(alpha, free_T, HILL, N)
    X = _locals(rng, 9, T)
    J = g.jac(X)
    assert np.array_equal(J, _group(alpha, free_T, HILL, N).jac(X))      # after values or cold: the same
    for j in range(15 if free_T else 14):
        d = 1e-6 * max(1.0, np.abs(X[:, j]).max())
        Xp, Xm = X.copy(), X.copy()
        Xp[:, j] += d
        Xm[:, j] -= d
        col = (g.fun(Xp) - g.fun(Xm)) / (2 * d)
        assert np.allclose(J[..., j], col, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(col).max())), j
        assert not np.any(J[..., j][:, ~g.mask[:, j]]), j
    on_step = X.copy()
    on_step[:, 8:14] = C.step(X[:, :6], X[:, 6:8], T / N, alpha, CAR, HILL)
    assert np.abs(g.fun(on_step)).max() < 1e-9


# -- (c) a DMOC solve over a hill ----------------------------------------------------------------------
SOLVE = """
[vehicle]
type = "car"
preset = "hatchback"
[integrator]
steps = 40
[time]
duration = 8.0
[start]
position = [0.0, 0.0]
heading = 0.0
speed = 4.0
[goal]
position = [30.0, 0.0]
heading = 0.0
speed = 4.0
[bounds]
torque = [-1500.0, 1500.0]
[cost]
effort = 1.0
[cost.input_weights]
steering_rate = 1.0
torque = 1e-6
"""


def _solve(terrain):
    setup = read(loads(SOLVE))
    setup.model.terrain = terrain
    nlp = assemble(setup.model, setup.spec)
    result = solve(nlp, nlp.reduce(initial_guess(setup.model, setup.spec)), setup.options)
    return setup.model, result, setup.model.trajectory(nlp.full(result.z))


def test_dmoc_solve_over_a_hill_converges_and_its_controls_replay_its_states():
    model, result, traj = _solve(HILL)
    assert result.status == "converged" and result.max_constraint_violation < 1e-8
    h = traj.time[1] - traj.time[0]
    replay = C.simulate(CAR, model.start, traj.controls, h, model.N, terrain=HILL)
    for key in ("position", "linear_velocity", "angular_velocity", "heading"):
        assert np.abs(getattr(replay, key) - getattr(traj, key)).max() < 1e-8, key
    assert np.abs(replay.series["energy"] - traj.series["energy"]).max() < 1e-8 * traj.series["energy"].max()
    assert np.allclose(traj.position[-1, :2], [30.0, 0.0], atol=1e-9)
    # the hill shapes the optimum: the flat optimum's controls leave the hill's car short or off its speed
    _, flat_result, flat = _solve(None)
    assert flat_result.status == "converged"
    assert np.abs(traj.controls["torque"] - flat.controls["torque"]).max() > 200.0
    off = C.simulate(CAR, model.start, flat.controls, h, model.N, terrain=HILL)
    assert np.abs(off.position[-1, :2] - [30.0, 0.0]).max() > 0.5


# -- (d) flat ground -------------------------------------------------------------------------------------
def test_a_level_plane_is_the_flat_update():
    """A level plane (zero gradient) at any height gives the flat run's nodes bit for bit (the slope torque is
    a signed zero), the energy shifted by m g level; the DMOC group's values and Jacobian equal the flat ones."""
    rng = np.random.default_rng(13)
    n, h = 120, 0.05
    controls = {"torque": rng.uniform(-900, 900, n), "steering_rate": rng.uniform(-0.4, 0.4, n)}
    init = C.CarInitial(position=(1.0, 2.0), heading=0.3, wheel_rate=15.0)
    level = PlaneTerrain(level=2.5)
    flat = C.simulate(CAR, init, controls, h, n)
    on_plane = C.simulate(CAR, init, controls, h, n, terrain=level)
    for key in ("position", "orientation", "linear_velocity", "angular_velocity", "heading"):
        assert np.array_equal(getattr(flat, key), getattr(on_plane, key)), key
    assert np.allclose(on_plane.series["energy"] - flat.series["energy"], CAR.mass * G * 2.5, rtol=1e-12)
    X = _locals(rng, 12)
    for alpha in (0.5, 0.3):
        g_flat, g_plane = _group(alpha, True, None), _group(alpha, True, level)
        assert np.array_equal(g_flat.fun(X), g_plane.fun(X))
        assert np.array_equal(g_flat.jac(X), g_plane.jac(X))
        assert g_flat.hess is not None                       # flat: the closed-form Hessian, unchanged


def test_a_terrain_without_a_gradient_is_refused():
    with pytest.raises(ScenarioError, match="gradient"):
        C.simulate(CAR, C.CarInitial(), {}, 0.1, 3, terrain=object())

    class HeightsOnly:
        def gradient(self, x, y):
            return np.zeros(np.shape(x) + (2,))

    with pytest.raises(ScenarioError, match="hessian"):
        C.step_jacobian(np.zeros(6), np.zeros(2), 0.1, 0.5, CAR, HeightsOnly())


# -- the terrains' Hessians ------------------------------------------------------------------------------
def test_terrain_hessians():
    rng = np.random.default_rng(14)
    x, y = CX + 6 * rng.normal(size=(4, 5)), CY + 6 * rng.normal(size=(4, 5))
    exact = _bump_hessian(x, y)
    assert HILL.hessian(x, y).shape == (4, 5, 2, 2)
    assert np.array_equal(HILL.hessian(x, y), exact)
    by_differences = HILL_BY_DIFFERENCES.hessian(x, y)
    assert np.allclose(by_differences, exact, rtol=0, atol=1e-9 * np.abs(exact).max())
    assert np.array_equal(by_differences, np.swapaxes(by_differences, -1, -2))
    plane = PlaneTerrain(level=1.0, slope=(0.2, -0.1))
    assert np.array_equal(plane.hessian(x, 3.0), np.zeros((4, 5, 2, 2)))
    with pytest.raises(ScenarioError, match="hessian"):
        FunctionTerrain(_bump, _bump_gradient, lambda x, y: np.zeros(3)).hessian(x, y)
