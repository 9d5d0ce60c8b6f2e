"""core.parts: parts on a vehicle (secondary motion by the tree VI, free-base chains carrying the
vehicle's own forces), checked against independent references."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from core.errors import ScenarioError
from core.lie import quaternion, so3
from core.parts import Part, joint_quaternions, validate
from core.parts import articulated, secondary
from core.parts import base as vehicle_base
from core.parts.spec import rest_poses
from core.scenario import Table
from core.simulation import simulate as simulate_scenario
from core.vehicles.boat import Boat
from core.vehicles.helicopter import Helicopter
from core.vehicles.hull import clip

G = 9.81


def _still(T=10.0, n=11):
    t = np.linspace(0.0, T, n)
    return t, np.zeros((n, 3)), np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))


def test_grip_force_derivatives_match_finite_differences():
    """Eqs. (3), (4) of core.parts.grip against central differences of eq. (2)."""
    t, pos, quat = _still()
    turn = tuple(quaternion.normalize(np.array([0.9, 0.1, 0.2, 0.3])))
    part = Part("T", None, "HINGE", (-1.0, 0.2, 0.4), orientation=turn,
                end=(-3.0, 0.5, 0.1), mass=100.0, axis="z", grip=700.0)
    system = secondary.build_system([part], t, pos, quat)
    rng = np.random.default_rng(3)
    q, dq = rng.normal(size=system.tree.n) * 0.4, rng.normal(size=system.tree.n)
    f, fq, fdq = system.grip_force(q, dq, derivatives=True)
    e = 1e-6
    for j in range(system.tree.n):
        d = np.zeros(system.tree.n)
        d[j] = e
        num_q = (system.grip_force(q + d, dq)[0] - system.grip_force(q - d, dq)[0]) / (2 * e)
        num_dq = (system.grip_force(q, dq + d)[0] - system.grip_force(q, dq - d)[0]) / (2 * e)
        assert np.max(np.abs(fq[:, j] - num_q)) < 1e-6 * max(1.0, np.max(np.abs(num_q)))
        assert np.max(np.abs(fdq[:, j] - num_dq)) < 1e-6 * max(1.0, np.max(np.abs(num_dq)))
    assert f @ dq <= 0.0   # it only dissipates


def test_pendulum_under_an_accelerating_hook_matches_its_ode():
    """θ̈ = (ẍ cos θ − g sin θ)/L for a bob hung from a point moving along x (independent ODE)."""
    D, T, L = 20.0, 6.0, 8.0

    def x(t):
        u = np.clip((t - 1.0) / T, 0.0, 1.0)
        return D * (10 * u**3 - 15 * u**4 + 6 * u**5)

    def xdd(t):
        u = np.clip((t - 1.0) / T, 0.0, 1.0)
        return D * (60 * u - 180 * u**2 + 120 * u**3) / T**2

    t = np.arange(0, 481) / 48.0
    pos = np.stack([x(t), 0 * t, 0 * t], axis=-1)
    quat = np.tile([1.0, 0.0, 0.0, 0.0], (len(t), 1))
    r = secondary.simulate([Part("P", None, "SWING", (0.0, 0.0, 0.0), end=(0.0, 0.0, -L), mass=10.0)],
                           t, pos, quat, 1 / 96, 960)
    ref = solve_ivp(lambda s, y: [y[1], (xdd(s) * math.cos(y[0]) - G * math.sin(y[0])) / L], (0.0, 10.0),
                    [0.0, 0.0], rtol=1e-11, atol=1e-12, dense_output=True).sol(r.time)[0]
    assert np.max(np.abs(r.angles["P"][:, 1] - ref)) < 2e-4
    assert np.max(np.abs(r.angles["P"][:, 0])) < 1e-12          # no motion across the plane
    assert np.max(np.abs(ref)) > 0.5                             # it swung


def test_hanging_still_under_a_still_vehicle():
    t, pos, quat = _still()
    pos[:, 2] = 30.0
    parts = [Part("U", None, "SWING", (0, 0, -1), end=(0, 0, -4), mass=15.0),
             Part("L", "U", "SWING", (0, 0, -4), end=(0, 0, -4), mass=400.0, damping=50.0)]
    r = secondary.simulate(parts, t, pos, quat, 1 / 48, 240)
    assert max(np.max(np.abs(a)) for a in r.angles.values()) < 1e-12


def test_trailer_with_grip_runs_on_the_no_slip_circle():
    """Steady turn: a trailer whose axle does not slip sideways runs on the circle of radius
    √(R_h² − L²) (R_h the hitch's radius, L the drawbar), inside the hitch's."""
    R, v, T, L = 10.0, 5.0, 30.0, 4.0
    t = np.linspace(0.0, T, int(T * 24) + 1)
    a = v * t / R
    pos = np.stack([R * np.sin(a), R - R * np.cos(a), 0 * a], axis=-1)
    quat = np.stack([np.cos(a / 2), 0 * a, 0 * a, np.sin(a / 2)], axis=-1)
    part = Part("T", None, "HINGE", (-1.0, 0.0, 0.5), end=(-L, 0.0, 0.0), mass=500.0, inertia=(0.0, 0.0, 300.0),
                axis="z", grip=50000.0)
    r = secondary.simulate([part], t, pos, quat, 1 / 48, int(T * 48))
    system = secondary.build_system([part], t, pos, quat)
    q = np.zeros((len(r.time), system.tree.n))
    q[:, system.kin] = system.drive(r.time)[0]
    q[:, system.dyn] = r.angles["T"]
    axle = secondary.end_positions(system, q)["T.end"]
    radius = np.hypot(axle[-1, 0], axle[-1, 1] - R)
    assert radius == pytest.approx(math.sqrt(R**2 + 1.0 - L**2), abs=0.05)
    assert r.angles["T"][-1, 0] == pytest.approx(-math.asin(L / math.hypot(R, 1.0)) - math.atan(1.0 / R), abs=0.02)


def test_chain_of_parts_moves_the_part_frames_as_the_joint_rotations_say():
    """Articulated eq. (1): chain body k turned by q_k carries the part object turned about its own axis."""
    parts = [Part("Arm", None, "HINGE", (1, 0, 0.5), orientation=(math.cos(math.pi / 4), 0, math.sin(math.pi / 4), 0),
                  end=(0, 0, 2), mass=50, inertia=(2, 2, 2), axis="x", rate=1.0),
             Part("Hook", "Arm", "HINGE", (0, 0, 3), end=(0, 0, -1), mass=10, inertia=(0.1, 0.2, 0.3), axis="-y",
                  rate=-0.5)]
    R0 = quaternion.to_matrix(np.array([math.cos(0.3), 0, 0, math.sin(0.3)]))
    res = articulated.simulate(parts, 800, (800, 2000, 2500), R0, (1.0, 2.0, 3.0), (0, 0, 0.1), (1, 0, 0),
                               1 / 48, 240, "cf4")
    chain, ordered = articulated.build_chain(parts, 800, (800, 2000, 2500))
    rest = rest_poses(ordered)
    tr = res.trajectory
    for k in (0, 120, 240):
        Rb, xb = quaternion.to_matrix(tr.orientation[k]), tr.position[k]
        Rs, xs = chain.link_poses(Rb, xb, np.array([tr.shape["joint_1"][k], tr.shape["joint_2"][k]]))
        R_arm = (Rb @ quaternion.to_matrix(np.array(parts[0].orientation))
                 @ quaternion.to_matrix(joint_quaternions(ordered[0], res.angles["Arm"][k:k + 1])[0]))
        R_hook = R_arm @ quaternion.to_matrix(joint_quaternions(ordered[1], res.angles["Hook"][k:k + 1])[0])
        assert np.max(np.abs(Rs[1] @ rest["Arm"][0] - R_arm)) < 1e-12
        assert np.max(np.abs(Rs[2] @ rest["Hook"][0] - R_hook)) < 1e-12
        assert np.max(np.abs(xs[2] - (xb + Rb @ np.array(parts[0].position) + R_arm @ np.array((0, 0, 3))))) < 1e-12
    L = tr.momentum_angular
    assert np.max(np.abs(L - L[0])) < 1e-4 * np.linalg.norm(L[0])


@pytest.mark.parametrize("parts, message", [
    ([Part("A", None, "HINGE", (0, 0, 0), end=(0, 0, 0))], r"part 'A': the link has zero length"),
    ([Part("A", "B", "SWING", (0, 0, 0))], r"part 'A': unknown parent part 'B'"),
    ([Part("A", "B", "SWING", (0, 0, 0)), Part("B", "A", "SWING", (0, 0, 0))], r"part 'A': its parents form a cycle"),
    ([Part("A", None, "HINGE", (0, 0, 0), end=(0, 0, -1), axis="z")], r"part 'A': its hinge axis runs through its end"),
    ([Part("A", None, "SWING", (0, 0, 0), mass=0.0)], r"part 'A': mass must be positive"),
    ([Part("A", None, "SWING", (0, 0, 0), grip=5.0)], r"part 'A': grip .* needs a hinge joint"),
])
def test_bad_parts_are_refused_naming_the_part(parts, message):
    with pytest.raises(ScenarioError, match=message):
        validate(parts)


def test_parents_come_first():
    parts = [Part("C", "B", "SWING", (0, 0, -1)), Part("A", None, "SWING", (0, 0, -1)),
             Part("B", "A", "SWING", (0, 0, -1))]
    assert [p.name for p in validate(parts)] == ["A", "B", "C"]


# -- articulated parts on a vehicle with its own forces (core.parts.base) ---------------------------

CABLE = [Part("Upper", None, "HINGE", (0.0, 0.0, -0.6), end=(0.0, 0.0, -3.0), mass=30.0, inertia=(0.4, 0.4, 0.1),
              axis="x"),
         Part("Load", "Upper", "HINGE", (0.0, 0.0, -3.0), end=(0.0, 0.0, -2.0), mass=150.0, inertia=(2.0, 2.0, 1.0),
              axis="y")]


def _yaw(a: float) -> np.ndarray:
    return so3.exp(np.array([0.0, 0.0, a]))


def _helicopter(steps: int, **controls) -> vehicle_base.VehicleBase:
    table = {"vehicle": {"type": "helicopter"},
             "controls": {k: {"values": list(np.broadcast_to(v, (steps,)))} for k, v in controls.items()}}
    return vehicle_base.from_scenario(table, steps, 0.02)


@pytest.mark.parametrize("method", ["cf4", "cg3", "mk4", "rk4"])
def test_helicopter_with_a_hanging_load_hovers_on_the_total_weight(method):
    """Collective = (helicopter + cable + load)·g, zero tilts: the assembly stays put; the same
    collective without the parts' weight lets it sink (the parts load the base through the chain)."""
    total = 600.0 + 30.0 + 150.0
    hover = _helicopter(200, collective=total * G)
    res = articulated.simulate_vehicle(CABLE, hover, _yaw(0.7), np.array([5.0, -3.0, 40.0]), (0, 0, 0), (0, 0, 0),
                                       0.02, 200, method)
    tr = res.trajectory
    assert np.max(np.abs(tr.position - tr.position[0])) < 1e-6
    assert max(np.max(np.abs(a)) for a in res.angles.values()) < 1e-9
    sink = articulated.simulate_vehicle(CABLE, _helicopter(200, collective=600.0 * G), _yaw(0.7),
                                        np.array([5.0, -3.0, 40.0]), (0, 0, 0), (0, 0, 0), 0.02, 200, method)
    drop = 0.5 * G * 180.0 / total * 4.0**2          # ½ (m_parts g / M) t² at t = 4 s
    assert sink.trajectory.position[-1, 2] - 40.0 == pytest.approx(-drop, rel=1e-6)


def test_pitch_tilt_accelerates_forward_and_the_load_swings_back():
    """Momentum balance of the whole assembly, dP/dt = R F(γ)u + M g, and the load trailing."""
    steps, dt, tilt = 100, 0.02, 0.08
    total = 780.0
    u = total * G / math.cos(tilt)
    heli = _helicopter(steps, collective=u, pitch_tilt=tilt)
    res = articulated.simulate_vehicle(CABLE, heli, np.eye(3), np.array([0.0, 0.0, 40.0]), (0, 0, 0), (0, 0, 0),
                                       dt, steps, "cf4")
    tr = res.trajectory
    R = quaternion.to_matrix(tr.orientation)
    rotor = R @ (u * np.array([math.sin(tilt), 0.0, math.cos(tilt)]))
    force = rotor + np.array([0.0, 0.0, -total * G])
    impulse = np.concatenate([np.zeros((1, 3)), np.cumsum(0.5 * dt * (force[1:] + force[:-1]), axis=0)])
    P = np.asarray(tr.momentum_linear)
    assert np.max(np.abs(P - P[0] - impulse)) < 1e-3 * np.max(np.abs(impulse))
    assert P[-1, 0] > 0.9 * u * math.sin(tilt) * 2.0    # ~the full forward impulse over 2 s
    # the load (end of the last link) trails its hook point on the helicopter
    link1 = tr.series["links"]["link_1"]
    hook, load_frame = link1["position"], tr.series["links"]["link_2"]
    load = load_frame["position"] + np.einsum("nij,j->ni", quaternion.to_matrix(load_frame["orientation"]),
                                              np.array([0.0, 0.0, -2.0]))
    back = load[:, 0] - hook[:, 0]
    assert tr.linear_velocity[-1, 0] > 1.0 and back[-1] < -0.3 and np.all(back[1:] < 0)


@pytest.mark.parametrize("method", ["cf4", "mk3", "rk4"])
def test_a_negligible_part_follows_the_plain_helicopter_simulation(method):
    """The chain with one part of 1e-9 kg against core.simulation of the helicopter alone, same
    method and step: the difference is the part's coupling (~1e-9 relative), not the integrator."""
    steps, dt = 200, 0.02
    t = np.arange(steps) * dt
    controls = {"collective": {"values": list(600 * G * (1.02 + 0.05 * np.sin(2 * t)))},
                "yaw": {"values": list(200 * np.sin(1.5 * t))},
                "pitch_tilt": {"values": list(0.05 * np.sin(t))}, "roll_tilt": {"values": list(0.03 * np.cos(0.7 * t))}}
    q0 = quaternion.normalize(np.array([0.95, 0.05, 0.1, 0.2]))
    root = {"vehicle": {"type": "helicopter"}, "integrator": {"method": method, "dt": dt, "steps": steps},
            "initial": {"position": [1.0, 2.0, 30.0], "orientation": list(q0), "linear_velocity": [5.0, 0.0, 0.0],
                        "angular_velocity": [0.1, 0.0, 0.05]},
            "controls": controls}
    ref = simulate_scenario(Table(root))
    heli = vehicle_base.from_scenario(root, steps, dt)
    part = [Part("Tag", None, "HINGE", (0.0, 0.0, -0.5), end=(0.0, 0.0, -2.0), mass=1e-9, inertia=(1e-11,) * 3,
                 axis="x")]
    res = articulated.simulate_vehicle(part, heli, quaternion.to_matrix(q0), np.array([1.0, 2.0, 30.0]),
                                       (0.1, 0.0, 0.05), (5.0, 0.0, 0.0), dt, steps, method)
    tr = res.trajectory
    assert np.max(np.abs(ref.position - ref.position[0])) > 20.0          # it flew somewhere
    assert np.max(np.abs(tr.position - ref.position)) < 1e-8
    assert np.max(np.abs(quaternion.to_matrix(tr.orientation) - quaternion.to_matrix(ref.orientation))) < 1e-9
    assert np.allclose(tr.shape["rotor_angle"], ref.shape["rotor_angle"])
    assert np.array_equal(tr.shape["pitch_tilt"], ref.shape["pitch_tilt"])


def test_a_negligible_part_follows_the_plain_boat_simulation():
    steps, dt = 60, 0.05
    root = {"vehicle": {"type": "boat", "current": [0.3, -0.2, 0.0], "wind": [0.0, 8.0, 0.0]},
            "integrator": {"method": "cf4", "dt": dt, "steps": steps},
            "initial": {"position": [0.0, 0.0, 0.2], "linear_velocity": [1.0, 0.0, 0.0]},
            "controls": {"thruster_1": {"values": [900.0] * steps}, "thruster_2": {"values": [300.0] * steps}}}
    ref = simulate_scenario(Table(root))
    boat = vehicle_base.from_scenario(root, steps, dt)
    part = [Part("Flag", None, "HINGE", (0.0, 0.0, 0.5), end=(0.0, 0.0, 1.0), mass=1e-9, inertia=(1e-11,) * 3,
                 axis="y")]
    res = articulated.simulate_vehicle(part, boat, np.eye(3), np.array([0.0, 0.0, 0.2]), (0, 0, 0), (1.0, 0, 0),
                                       dt, steps, "cf4")
    tr = res.trajectory
    assert np.max(np.abs(ref.position - ref.position[0])) > 1.0
    assert np.max(np.abs(tr.position - ref.position)) < 1e-9
    assert np.max(np.abs(quaternion.to_matrix(tr.orientation) - quaternion.to_matrix(ref.orientation))) < 1e-9


BOOM = dict(end=(2.0, 0.0, 1.0), mass=150.0, inertia=(5.0, 5.0, 5.0), axis="z")


def test_boat_with_a_crane_floats_at_the_draft_of_its_total_mass():
    boat = Boat(damping=(300.0, 4000.0, 8000.0))
    steps = 200
    crane = [Part("Boom", None, "HINGE", (0.5, 0.0, 0.5), **BOOM)]
    res = articulated.simulate_vehicle(crane, vehicle_base.boat_base(boat, {}, steps), np.eye(3),
                                       np.array([0.0, 0.0, boat.float_height()]), (0, 0, 0), (0, 0, 0), 0.05, steps)
    tr = res.trajectory
    R = quaternion.to_matrix(tr.orientation)
    # released at the bare boat's draft, it settles where the hull displaces boat + boom
    assert float(boat.displaced_mass(R[0], tr.position[0])) == pytest.approx(800.0, rel=1e-9)
    assert float(boat.displaced_mass(R[-1], tr.position[-1])) == pytest.approx(950.0, rel=1e-3)
    assert np.max(np.abs(tr.linear_velocity[-1])) < 1e-3


def test_boat_heels_to_its_static_equilibrium_with_the_arm_swung_out():
    """Arm out to port: the simulation settles at the heel where buoyancy, the two weights and the
    arm's hinge balance (an independent fsolve on the model's hydrostatics)."""
    from scipy.optimize import fsolve
    boat = Boat(damping=(300.0, 4000.0, 8000.0))
    steps, m_arm = 400, 150.0
    p, e = np.array([0.0, 0.5, 0.5]), np.array([0.0, 2.0, 1.0])
    crane = [Part("Boom", None, "HINGE", tuple(p), end=tuple(e), mass=m_arm, inertia=(5.0, 5.0, 5.0), axis="z",
                  damping=3000.0)]
    res = articulated.simulate_vehicle(crane, vehicle_base.boat_base(boat, {}, steps), np.eye(3),
                                       np.array([0.0, 0.0, boat.float_height()]), (0, 0, 0), (0, 0, 0), 0.05, steps)
    tr = res.trajectory
    R = quaternion.to_matrix(tr.orientation[-1])
    heel = math.atan2(R[2, 1], R[2, 2])

    def attitude(roll, pitch):
        return so3.exp(np.array([0.0, pitch, 0.0])) @ so3.exp(np.array([roll, 0.0, 0.0]))

    def residual(u):
        z, roll, pitch, q = u
        Rb, x = attitude(roll, pitch), np.array([0.0, 0.0, z])
        cut = clip(boat.hull, Rb, x, None)
        hull = boat.buoyancy(Rb, x, cut.volume, cut.centroid)                 # with the boat's weight
        arm = so3.exp(np.array([0.0, 0.0, q])) @ e
        F = Rb.T @ np.array([0.0, 0.0, -m_arm * G])
        torque = Rb @ (hull[:3] + np.cross(p + arm, F))
        return np.array([(Rb @ hull[3:])[2] / G - m_arm, torque[0] / G, torque[1] / G, np.cross(arm, F)[2] / G])

    z, roll, pitch, q = fsolve(residual, [0.1, -0.3, 0.0, 0.0], xtol=1e-12)
    assert np.max(np.abs(residual([z, roll, pitch, q]))) < 1e-8
    assert roll < -0.2                                      # port side down, by over 10°
    assert heel == pytest.approx(roll, abs=1e-3)
    assert tr.position[-1, 2] == pytest.approx(z, abs=1e-3)
    assert res.angles["Boom"][-1, 0] == pytest.approx(q, abs=2e-3)


def test_joint_damping_matches_the_damped_pendulum():
    """A damped pendulum under a hovering 1e9 kg helicopter (a fixed pivot to ~1e-8):
    I θ̈ = −m g L sin θ − d θ̇, I = I₀ + m L²."""
    L, m, d, I0 = 2.0, 10.0, 15.0, 0.5
    part = [Part("P", None, "HINGE", (0, 0, 0), end=(0, 0, -L), mass=m, inertia=(I0, I0, I0), axis="x", rate=1.5,
                 damping=d)]
    steps, dt = 300, 0.01
    heavy = Helicopter(mass=1e9, inertia=(1e9, 1e9, 1e9), max_collective=2e10)
    hover = vehicle_base.helicopter_base(heavy, {"collective": np.full(steps, (1e9 + m) * G)}, steps)
    res = articulated.simulate_vehicle(part, hover, np.eye(3), np.zeros(3), (0, 0, 0), (0, 0, 0), dt, steps, "cf4")
    inertia = I0 + m * L**2
    ref = solve_ivp(lambda s, y: [y[1], (-m * G * L * math.sin(y[0]) - d * y[1]) / inertia], (0.0, steps * dt),
                    [0.0, 1.5], rtol=1e-11, atol=1e-12, dense_output=True).sol(res.trajectory.time)[0]
    assert np.max(np.abs(res.angles["P"][:, 0] - ref)) < 1e-6
    assert abs(ref[-1]) < 0.5 * np.max(np.abs(ref))         # it did decay


@pytest.mark.parametrize("root, message", [
    ({"vehicle": {"type": "car"}}, r"\[vehicle\] type: a car has no free-base model"),
    ({"vehicle": {"type": "helicopter", "mass": -1.0}}, r"\[vehicle\] mass: must be positive"),
    ({"vehicle": {"type": "helicopter"}, "controls": {"collective": {"values": [1e9] * 10}}},
     r"\[controls.collective\]: value 1e\+09 at step 0 is outside the limit \[0, 9417.6\]"),
    ({"vehicle": {"type": "boat"}, "controls": {"rudder": {"values": [0.0] * 10}}},
     r"\[controls.rudder\]: unknown input; this vehicle.s inputs are: thruster_1, thruster_2"),
    ({"vehicle": {"type": "rigid_body", "mass": 5.0, "inertia": [1, 1, 1]}, "controls": {"push": {"values": [0] * 10}}},
     r"\[controls.push\]: unknown input; this vehicle.s inputs are: none"),
])
def test_vehicle_bases_refuse_bad_tables_naming_the_key(root, message):
    with pytest.raises(ScenarioError, match=message):
        vehicle_base.from_scenario(root, 10, 0.02)


def test_inputs_must_cover_the_simulated_steps():
    with pytest.raises(ScenarioError,
                       match=r"\[controls\]: the helicopter's inputs cover 10 steps, the simulation takes 20"):
        articulated.simulate_vehicle(CABLE, _helicopter(10), np.eye(3), np.zeros(3), (0, 0, 0), (0, 0, 0), 0.02, 20)


def test_a_blow_up_is_refused_naming_the_moment():
    """Joint damping far too stiff for the step: no NaN or truncated trajectory comes back."""
    part = [Part("P", None, "HINGE", (0, 0, 0), end=(0, 0, -1.0), mass=1.0, inertia=(0.01,) * 3, axis="x",
                 rate=1.0, damping=1e4)]
    with pytest.raises(ScenarioError, match=r"articulated motion: the cf4 integration blew up at frame 1\.1; "
                                            r"try more steps per frame"):
        articulated.simulate_vehicle(part, vehicle_base.rigid_base(100.0, (10.0, 10.0, 10.0)), np.eye(3),
                                     np.zeros(3), (0, 0, 0), (0, 0, 0), 0.1, 50, label=lambda t: f"frame {1 + t:.4g}")
