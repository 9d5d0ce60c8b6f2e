"""The car of §5.2.1: explicit update vs the general integrator, constraints, order, energy, Jacobian.

References: a tight DOP853 solution of the reduced Lagrange–d'Alembert equations (core.vehicles.car
.reference), itself checked against a multiplier formulation in full coordinates written here; the
general nonholonomic integrator of eqs. (16)–(17); central finite differences.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from core.errors import ScenarioError
from core.integrators import nonholonomic as nh
from core.lie import se2
from core.vehicles import car as C

EPS = np.finfo(float).eps
CAR = C.Car.preset("hatchback")


def _controls(steps: int, dt: float, seed: int = 0, hold: int = 1, car: C.Car = CAR) -> dict[str, np.ndarray]:
    """Random piecewise-constant inputs, each value held for ``hold`` steps, inside the limits."""
    rng = np.random.default_rng(seed)
    n = -(-steps // hold)
    f = np.repeat(rng.uniform(-0.3, 0.6, n) * car.max_torque, hold)[:steps]
    w = np.repeat(rng.uniform(-0.6, 0.6, n) * car.max_steering_rate, hold)[:steps]
    return {"torque": f, "steering_rate": w}


def _wrap(a):
    return np.angle(np.exp(1j * np.asarray(a)))


# ---------------------------------------------------------------------------------------------
# Parameters and presets
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(C.PRESETS))
def test_presets_are_plausible(name):
    car = C.Car.preset(name)
    assert 800 < car.mass < 3500 and 0.25 <= car.wheel_radius <= 0.45 and 2.3 <= car.wheelbase <= 3.5
    assert math.radians(25) < car.max_steering_angle < math.radians(45)
    # the yaw inertia of a box-shaped body of that wheelbase: m (L² + W²)/12 with L ≈ 1.6 wheelbase
    assert 0.5 < car.yaw_inertia / (car.mass * ((1.6 * car.wheelbase) ** 2 + 1.8**2) / 12) < 1.5
    assert car.a + car.c * car.max_sigma * -car.max_sigma > 0   # reduced inertia stays positive


@pytest.mark.parametrize("field,value,msg", [("mass", -1.0, "positive"), ("wheelbase", 0.0, "positive"),
                                             ("yaw_inertia", float("nan"), "finite"),
                                             ("max_steering_angle", 1.6, "π/2"), ("max_torque", "x", "number")])
def test_bad_parameters_name_the_key(field, value, msg):
    with pytest.raises(ScenarioError) as e:
        C.Car.preset("hatchback", **{field: value})
    assert e.value.where == f"[vehicle] {field}" and msg in e.value.problem


def test_unknown_preset():
    with pytest.raises(ScenarioError, match="preset"):
        C.Car.preset("limousine")


# ---------------------------------------------------------------------------------------------
# The continuous reference
# ---------------------------------------------------------------------------------------------
def _multiplier_acceleration(car: C.Car, y: np.ndarray, f: float, w: float) -> np.ndarray:
    """Lagrange–d'Alembert with multipliers in (ψ, θ, x, y), σ(t) given: M q̈ = F + Gᵀλ, G q̈ + Ġ q̇ = 0."""
    psi, sg, th, x, yy, u = y
    qd = np.array([u, car.kappa * sg * u, car.wheel_radius * u * np.cos(th), car.wheel_radius * u * np.sin(th)])
    M = np.diag([car.wheel_inertia, car.yaw_inertia, car.mass, car.mass])
    ct, st = np.cos(th), np.sin(th)
    G = np.array([[-car.wheel_radius, 0, ct, st],            # rolling
                  [0, 0, -st, ct],                            # no side slip
                  [-car.kappa * sg, 1, 0, 0]])                # steering
    thd = qd[1]
    Gdot = np.array([[0, 0, -st * thd, ct * thd], [0, 0, -ct * thd, -st * thd], [-car.kappa * w, 0, 0, 0]])
    K = np.block([[M, -G.T], [G, np.zeros((3, 3))]])
    sol = np.linalg.solve(K, np.concatenate([[f, 0, 0, 0], -Gdot @ qd]))
    return sol[:4]


def test_reduced_equations_match_the_multiplier_formulation():
    rng = np.random.default_rng(1)
    for _ in range(20):
        y = np.array([rng.normal(), rng.uniform(-0.7, 0.7), rng.uniform(-4, 4), rng.normal(), rng.normal(),
                      rng.uniform(-40, 40)])
        f, w = rng.uniform(-2000, 2000), rng.uniform(-1.2, 1.2)
        yd = C.rhs(CAR, y, f, w)
        acc = _multiplier_acceleration(CAR, y, f, w)
        assert np.isclose(yd[5], acc[0], rtol=1e-12, atol=1e-12)
        # θ̈, ẍ, ÿ of the reduced model, differentiated by hand
        u, ud, sg, th = y[5], yd[5], y[1], y[2]
        thd = CAR.kappa * sg * u
        assert np.isclose(CAR.kappa * (w * u + sg * ud), acc[1], rtol=1e-10, atol=1e-10)
        r = CAR.wheel_radius
        assert np.isclose(r * (ud * np.cos(th) - u * np.sin(th) * thd), acc[2], rtol=1e-10, atol=1e-9)
        assert np.isclose(r * (ud * np.sin(th) + u * np.cos(th) * thd), acc[3], rtol=1e-10, atol=1e-9)


def test_reference_satisfies_the_work_energy_balance():
    # steering does no work: E(T) − E(0) = f (ψ(T) − ψ(0)) for a constant torque f
    init = C.CarInitial(wheel_rate=20.0, steering_angle=0.2)
    n, dt, f = 40, 0.1, 500.0
    w = 0.5 * np.sin(np.arange(n) * 0.3)
    ref = C.reference(CAR, init, {"torque": np.full(n, f), "steering_rate": w}, dt, n)
    E = 0.5 * CAR.reduced_inertia(ref[:, 1]) * ref[:, 5] ** 2
    assert np.isclose(E[-1] - E[0], f * (ref[-1, 0] - ref[0, 0]), rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# Explicit update == general integrator, scalar == batched, Jacobian
# ---------------------------------------------------------------------------------------------
def _general(car, init, controls, dt, steps, alpha, group=nh.SE2_EXP_LN):
    system = car.nonholonomic_system(group)
    g0 = se2.from_pose(np.array([init.heading, *init.position]))
    r0 = np.array([init.wheel_angle, math.tan(init.steering_angle)])
    u0 = np.array([init.wheel_rate, 0.0])
    state = nh.initial_state(system, g0, r0, u0)
    zeros = np.zeros(steps)
    return nh.integrate(system, state, dt, steps, alpha,
                        shape_velocity=np.stack([zeros, controls["steering_rate"]], -1),
                        force=np.stack([controls["torque"], zeros], -1), u0=u0)


@pytest.mark.parametrize("alpha", [0.0, 0.25, 0.5, 1.0])
def test_explicit_update_equals_the_general_integrator(alpha):
    init = C.CarInitial(position=(1.0, -2.0), heading=0.4, steering_angle=-0.2, wheel_angle=0.3, wheel_rate=25.0)
    steps, dt = 150, 0.05
    ctrl = _controls(steps, dt, seed=2, hold=3)
    traj = C.simulate(CAR, init, ctrl, dt, steps, alpha)
    assert traj.stats["steering_saturated_steps"] == 0          # the general scheme does not clamp
    res = _general(CAR, init, ctrl, dt, steps, alpha)
    assert res.converged
    g_explicit = se2.from_pose(np.stack([traj.heading, traj.position[:, 0], traj.position[:, 1]], -1))
    assert np.max(np.abs(res.g - g_explicit)) < 1e-12 * (1 + np.max(np.abs(traj.position)))
    assert np.max(np.abs(res.r[:, 0] - traj.shape["wheel_angle"])) < 1e-12 * np.max(np.abs(res.r[:, 0]))
    assert np.max(np.abs(np.arctan(res.r[:, 1]) - traj.shape["steering_angle"])) < 1e-13
    # the rear-wheel momentum p_k = π^ψ_k − (A(r_k)ᵀ ν_k)^ψ of the general scheme is the car's state
    p_general = res.pi[:, 0] - np.einsum("kij,ki->kj", CAR.connection(res.r), res.nu)[:, 0]
    p_explicit = (CAR.reduced_inertia(np.tan(traj.shape["steering_angle"]))
                  * traj.linear_velocity[:, 0] / CAR.wheel_radius)
    assert np.max(np.abs(p_general - p_explicit)) < 1e-11 * np.max(np.abs(p_general))


def test_exact_dexp_inverse_differs_from_the_explicit_update_by_higher_order_terms():
    # With the exact dexp⁻¹ (se2.dexp_inv) the projected DEP keeps O(h³) terms per step (A(r_k) is parallel to
    # neither ξ_k nor ξ_{k−1} when σ moves): the trajectories differ by O(h²) globally — same order,
    # not the same scheme.
    init = C.CarInitial(steering_angle=0.3, wheel_rate=30.0)
    diffs = []
    for steps in (40, 80):
        dt = 4.0 / steps
        ctrl = {"torque": np.full(steps, 300.0), "steering_rate": np.full(steps, -0.2)}
        a = _general(CAR, init, ctrl, dt, steps, 0.5, nh.SE2_EXP)
        b = C.simulate(CAR, init, ctrl, dt, steps, 0.5)
        diffs.append(np.max(np.abs(se2.to_pose(a.g[-1])[1:] - b.position[-1, :2])))
    assert diffs[0] > 1e-9
    assert 3.0 < diffs[0] / diffs[1] < 5.0


def test_scalar_simulation_equals_batched_rollout():
    init = C.CarInitial(position=(3.0, 4.0), heading=-1.0, steering_angle=0.1, wheel_rate=10.0)
    steps, dt = 3000, 0.02
    traj = C.simulate(CAR, init, _controls(steps, dt, seed=4, hold=10), dt, steps)
    U = np.stack([traj.controls["torque"], traj.controls["steering_rate"]], -1)
    Q, rates = C.rollout(CAR, C.initial_state(CAR, init), U, dt)
    scale = 1 + np.max(np.abs(Q), axis=0)
    assert np.max(np.abs(Q[:, 3] - traj.position[:, 0])) < 1e-12 * scale[3]
    assert np.max(np.abs(Q[:, 4] - traj.position[:, 1])) < 1e-12 * scale[4]
    assert np.max(np.abs(Q[:, 2] - traj.heading)) < 1e-12 * scale[2]
    assert np.max(np.abs(Q[:, 0] - traj.shape["wheel_angle"])) < 1e-12 * scale[0]
    # and a batch of different cars' states equals the one-by-one rollouts
    states = np.stack([C.initial_state(CAR, C.CarInitial(heading=h, wheel_rate=r, steering_angle=s))
                       for h, r, s in [(0.0, 5.0, 0.0), (1.0, -3.0, 0.5), (2.0, 0.0, -0.3)]])
    Ub = np.stack([U[:200], U[200:400], U[400:600]], axis=1)
    Qb, _ = C.rollout(CAR, states, Ub, dt)
    for i in range(3):
        Qi, _ = C.rollout(CAR, states[i], Ub[:, i], dt)
        # one state against a batch of three: numpy may round the two shapes differently on other CPUs
        assert np.all(np.max(np.abs(Qi - Qb[:, i]), axis=0) < 1e-12 * (1 + np.max(np.abs(Qb[:, i]), axis=0)))


def _fd_jacobian(state, controls, dt, alpha):
    x = np.concatenate([state, controls])
    J = np.empty((6, 8))
    for j in range(8):
        d = 1e-6 * max(1.0, abs(x[j]))
        xp, xm = x.copy(), x.copy()
        xp[j] += d
        xm[j] -= d
        J[:, j] = (C.step(xp[:6], xp[6:], dt, alpha, CAR) - C.step(xm[:6], xm[6:], dt, alpha, CAR)) / (2 * d)
    return J


@pytest.mark.parametrize("case", ["generic", "omega-zero-sigma", "omega-zero-rate", "tiny-omega", "reverse"])
@pytest.mark.parametrize("alpha", [0.5, 0.0, 1.0])
def test_step_jacobian_matches_finite_differences(case, alpha):
    rng = np.random.default_rng(hash(case) % 2**32)
    state = np.array([rng.normal(), rng.uniform(-0.6, 0.6), rng.uniform(-3, 3), 10 * rng.normal(),
                      10 * rng.normal(), 0.0])
    controls = np.array([rng.uniform(-1500, 1500), rng.uniform(-1, 1)])
    dt = 0.05
    p = CAR.reduced_inertia(state[1]) * 30.0
    if case == "omega-zero-sigma":        # σ_{k+α} = 0: straight step, ω = 0 exactly
        state[1], controls[1] = 0.0, 0.0
    if case == "omega-zero-rate":          # u^ψ_k = 0: standing still
        p = -dt * (1 - alpha) * controls[0]
    if case == "tiny-omega":
        state[1], controls[1] = 1e-9, 0.0
    if case == "reverse":
        p = -p
    state[5] = p
    nxt, Jx, Ju = C.step_jacobian(state, controls, dt, alpha, CAR)
    assert np.allclose(nxt, C.step(state, controls, dt, alpha, CAR), rtol=1e-15, atol=1e-15)
    J = np.concatenate([Jx, Ju], axis=-1)
    assert np.all(np.isfinite(J))
    Jfd = _fd_jacobian(state, controls, dt, alpha)
    scale = np.maximum(np.abs(Jfd), 1.0)
    assert np.max(np.abs(J - Jfd) / scale) < 1e-6


def test_step_jacobian_is_batched():
    rng = np.random.default_rng(5)
    states = np.column_stack([rng.normal(size=4), rng.uniform(-0.5, 0.5, 4), rng.normal(size=4),
                              rng.normal(size=4), rng.normal(size=4), 3000 * rng.normal(size=4)])
    controls = np.column_stack([rng.uniform(-900, 900, 4), rng.uniform(-1, 1, 4)])
    nxt, Jx, Ju = C.step_jacobian(states, controls, 0.1, 0.5, CAR)
    assert Jx.shape == (4, 6, 6) and Ju.shape == (4, 6, 2)
    for i in range(4):
        n1, Jx1, Ju1 = C.step_jacobian(states[i], controls[i], 0.1, 0.5, CAR)
        assert np.allclose(n1, nxt[i], rtol=1e-15) and np.allclose(Jx1, Jx[i], rtol=1e-15)
        assert np.allclose(Ju1, Ju[i], rtol=1e-15)


# ---------------------------------------------------------------------------------------------
# Constraints, order, energy
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0.5, 0.3])
def test_discrete_constraints_hold_to_round_off_over_1e5_steps(alpha):
    steps, dt = 100_000, 0.01
    t = np.arange(steps) * dt
    ctrl = {"torque": 150.0 * np.sin(0.05 * t),
            "steering_rate": 0.2 * np.cos(0.4 * t) + 0.1 * np.sin(1.7 * t)}
    traj = C.simulate(CAR, C.CarInitial(wheel_rate=20.0), ctrl, dt, steps, alpha)
    assert not traj.stats["blew_up"] and len(traj) == steps + 1
    assert traj.stats["steering_saturated_steps"] == 0
    psi, sg = traj.shape["wheel_angle"], np.tan(traj.shape["steering_angle"])
    th, x, y = traj.heading, traj.position[:, 0], traj.position[:, 1]
    d_psi, d_th, dx, dy = np.diff(psi), np.diff(th), np.diff(x), np.diff(y)
    s_alpha = sg[:-1] + alpha * np.diff(sg)
    bound = lambda *arrs: 16 * EPS * sum(np.abs(a[:-1]) + np.abs(a[1:]) for a in arrs)  # noqa: E731
    # dθ = (ρ/l) σ_{k+α} dψ
    r_steer = d_th - CAR.kappa * s_alpha * d_psi
    assert np.all(np.abs(r_steer) <= bound(th, CAR.kappa * np.max(np.abs(sg)) * psi) + 1e-15)
    # no side slip: the step is the chord of a circular arc tangent to the heading (exp of ξ_k = −A u)
    tm = th[:-1] + 0.5 * d_th
    lateral = -np.sin(tm) * dx + np.cos(tm) * dy
    rolling = np.cos(tm) * dx + np.sin(tm) * dy - CAR.wheel_radius * d_psi * np.sinc(d_th / (2 * np.pi))
    scale = bound(x, y, CAR.wheel_radius * psi, th)
    assert np.all(np.abs(lateral) <= scale) and np.all(np.abs(rolling) <= scale)
    assert np.max(np.abs(d_th)) > 1e-3 and np.max(np.abs(psi)) > 1e3   # a real, long, turning run


def _order(alpha: float) -> tuple[float, list[float]]:
    """Final pose error vs the DOP853 reference, inputs piecewise constant on a 0.1 s grid."""
    T, grid = 6.0, 0.1
    base = _controls(int(T / grid), grid, seed=11)
    init = C.CarInitial(heading=0.3, steering_angle=0.2, wheel_rate=25.0)
    ref = C.reference(CAR, init, base, grid, int(T / grid))[-1]
    errs, hs = [], []
    for sub in (2, 4, 8, 16):
        steps = int(T / grid) * sub
        ctrl = {k: np.repeat(v, sub) for k, v in base.items()}
        traj = C.simulate(CAR, init, ctrl, grid / sub, steps, alpha)
        e = np.hypot(*(traj.position[-1, :2] - ref[3:5])) + abs(_wrap(traj.heading[-1] - ref[2]))
        errs.append(e)
        hs.append(grid / sub)
    return float(np.polyfit(np.log(hs), np.log(errs), 1)[0]), errs


@pytest.mark.parametrize("alpha,order", [(0.5, 2.0), (0.0, 1.0), (1.0, 1.0)])
def test_error_order_against_the_continuous_reference(alpha, order):
    fitted, errs = _order(alpha)
    assert abs(fitted - order) < 0.15, (fitted, errs)
    assert errs[-1] < (1e-3 if alpha == 0.5 else 0.5)


def test_energy_with_zero_torque():
    """Continuous: E = ½ M(σ) (u^ψ)² is conserved with zero torque (steering does no work).

    Discrete, E_k = p_k² / (2 M(σ_k)): exactly conserved while the steering is held; with moving
    (periodic, unsaturated) steering not exact but O(h²) and without drift."""
    init = C.CarInitial(steering_angle=0.15, wheel_rate=30.0)
    held = C.simulate(CAR, init, {"torque": np.zeros(100_000)}, 0.01, 100_000)
    E = held.series["energy"]
    assert np.max(np.abs(E / E[0] - 1)) < 1e-13
    errs = []
    for dt in (0.04, 0.02):
        n = int(800 / dt)
        t = np.arange(n) * dt
        traj = C.simulate(CAR, C.CarInitial(wheel_rate=30.0), {"steering_rate": 0.4 * np.cos(0.7 * t)}, dt, n)
        assert traj.stats["steering_saturated_steps"] == 0
        rel = np.abs(traj.series["energy"] / traj.series["energy"][0] - 1)
        tenth = len(rel) // 10
        assert rel[-tenth:].max() < 1.2 * rel[:tenth].max()          # no drift
        errs.append(rel.max())
    assert errs[0] < 1e-5 and 3.5 < errs[0] / errs[1] < 4.5      # O(h²)


def test_work_energy_balance_is_exact_for_alpha_half_with_held_steering():
    # p_{k+1} = p_k + h f, u_k = (p_k + h f/2)/M  ⇒  E_{k+1} − E_k = f (ψ_{k+1} − ψ_k) exactly
    n = 500
    f = np.random.default_rng(2).uniform(-1500, 1500, n)
    traj = C.simulate(CAR, C.CarInitial(steering_angle=-0.3, wheel_rate=5.0), {"torque": f}, 0.05, n)
    dE = np.diff(traj.series["energy"])
    work = f * np.diff(traj.shape["wheel_angle"])
    assert np.max(np.abs(dE - work)) < 1e-9 * np.max(np.abs(traj.series["energy"]))


# ---------------------------------------------------------------------------------------------
# simulate(): trajectory contract, saturation, bad input, blow-up
# ---------------------------------------------------------------------------------------------
def test_trajectory_fields():
    init = C.CarInitial(position=(1.0, 2.0), heading=0.5, steering_angle=0.1, wheel_angle=0.2, wheel_rate=12.0)
    steps = 50
    traj = C.simulate(CAR, init, _controls(steps, 0.02), 0.02, steps)
    n = steps + 1
    assert traj.vehicle == "car" and traj.position.shape == (n, 3) and traj.orientation.shape == (n, 4)
    assert np.all(traj.position[:, 2] == 0) and np.allclose(traj.position[0], [1, 2, 0])
    assert np.allclose(traj.orientation[:, 0] ** 2 + traj.orientation[:, 3] ** 2, 1.0)
    R = traj.rotation_matrices
    assert np.allclose(np.arctan2(R[:, 1, 0], R[:, 0, 0]), _wrap(traj.heading))
    assert np.allclose(traj.linear_velocity[0], [CAR.wheel_radius * 12.0, 0, 0])
    assert np.allclose(traj.angular_velocity[0], [0, 0, CAR.kappa * math.tan(0.1) * 12.0])
    assert set(traj.shape) == set(C.SHAPE_NAMES) and set(traj.controls) == set(C.INPUT_NAMES)
    assert traj.controls["torque"].shape == (steps,)
    assert np.isclose(traj.shape["steering_angle"][0], 0.1) and np.isclose(traj.shape["wheel_angle"][0], 0.2)
    for key in ("wall_time_s", "newton_iterations_mean", "blew_up"):
        assert key in traj.stats
    json.loads(traj.to_json())


def test_steering_saturates_at_its_limit_with_a_warning():
    steps, dt = 200, 0.05
    ctrl = {"steering_rate": np.full(steps, CAR.max_steering_rate), "torque": np.full(steps, 200.0)}
    init = C.CarInitial(wheel_rate=10.0)
    traj = C.simulate(CAR, init, ctrl, dt, steps)
    phi = traj.shape["steering_angle"]
    assert np.max(np.abs(phi)) <= CAR.max_steering_angle + 1e-15
    assert np.isclose(phi[-1], CAR.max_steering_angle, rtol=1e-14)
    k0 = int(np.ceil(CAR.max_sigma / (CAR.max_steering_rate * dt))) - 1   # the step that hits the limit
    assert traj.stats["steering_saturated_steps"] == steps - k0
    assert traj.stats["warnings"] and "saturated" in traj.stats["warnings"][0]
    applied = traj.controls["steering_rate"]
    assert np.all(applied[:k0] == CAR.max_steering_rate) and np.all(applied[k0 + 1:] == 0.0)
    # the applied inputs are what was integrated: the reference with them agrees to O(h²)
    ref = C.reference(CAR, init, traj.controls, dt, steps)
    assert np.max(np.abs(traj.position[:, :2] - ref[:, 3:5])) < 5e-3


@pytest.mark.parametrize("kwargs,where", [
    (dict(dt=0.0), "[integrator] dt"), (dict(dt=float("inf")), "[integrator] dt"),
    (dict(steps=0), "[integrator] steps"), (dict(alpha=1.5), "[integrator] alpha"),
    (dict(controls={"throttle": np.zeros(10)}), "[controls.throttle]"),
    (dict(controls={"torque": np.zeros(9)}), "[controls.torque]"),
    (dict(controls={"torque": np.full(10, np.nan)}), "[controls.torque]"),
    (dict(controls={"steering_rate": np.full(10, 5.0)}), "[controls.steering_rate]"),
    (dict(initial=C.CarInitial(steering_angle=1.0)), "[initial] steering_angle"),
    (dict(initial=C.CarInitial(heading=float("nan"))), "[initial] heading"),
])
def test_simulate_refuses_bad_input(kwargs, where):
    args = dict(initial=C.CarInitial(), controls={}, dt=0.01, steps=10, alpha=0.5)
    args.update(kwargs)
    with pytest.raises(ScenarioError) as e:
        C.simulate(CAR, args["initial"], args["controls"], args["dt"], args["steps"], args["alpha"])
    assert e.value.where == where


def test_blow_up_stops_at_the_last_good_node():
    # An extreme (legal) car: steering to 86° with a huge rate limit; a reversal from 79° to −86° in one 2 s step
    # makes a + c σ_k σ_{k+α} negative — reported, never NaN.
    car = C.Car.preset("hatchback", max_steering_angle=1.5, max_steering_rate=20.0)
    init = C.CarInitial(steering_angle=math.atan(5.0), wheel_rate=10.0)
    traj = C.simulate(car, init, {"steering_rate": np.array([0.0, -20.0, 0.0])}, 2.0, 3)
    assert traj.stats["blew_up"] and len(traj) == 2 and len(traj.controls["torque"]) == 1
    assert "stopped at step 1" in traj.stats["warnings"][-1]
    json.loads(traj.to_json())
