"""core.parts: parts on a vehicle (secondary motion by the tree VI, free-base chains), checked
against independent references."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from core.errors import ScenarioError
from core.lie import quaternion
from core.parts import Part, joint_quaternions, validate
from core.parts import articulated, secondary
from core.parts.spec import rest_poses

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
