"""core.terrain ride: the wheels on the terrain and the body on its suspension along a planned planar path.

Issue 22's acceptance, measured: every wheel's lowest point on the terrain (a dense rim check written
here, independent of the contact formula); body pitch within 2° of the terrain normal on a steady
slope; the bounce after a bump decays with the damping ratio set (logarithmic decrement); spin ×
radius = 3D contact path length within 1 %; roll follows a banked turn; level ground gives no heave,
pitch or roll after settling and today's planar wheel spin to round-off. The tree integrator on the
suspension: energy of the undamped suspension bounded at O(h²), and agreement with a tight solve_ivp
of the same equations of motion.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from core.errors import ScenarioError
from core.lie import quaternion
from core.shot.car_geometry import wheel_spins
from core.terrain.contact import disc_contact
from core.terrain.ride import PlanarPath, fine_grid, refine, ride, ride_model, static_equilibrium
from core.terrain.struts import Strut, StrutSystem
from core.terrain.surface import FunctionTerrain, PlaneTerrain
from core.terrain.suspension import Suspension, corners
from core.terrain.wheels import car_wheels, place_wheels, wheels_from_tables
from core.tree import variational
from core.tree.frames import WORLD, Frame, Tree
from core.tree.prescribed import Prescribed
from core.tree.rk4 import acceleration
from core.tree.system import Body
from core.vehicles.car import Car, CarInitial, simulate

CAR = Car.preset("hatchback")
FPS = 24.0


def planned(speed: float, seconds: float, fps: float = FPS, steering: float = 0.0, torque=0.0,
            steering_rate=0.0, position=(0.0, 0.0), heading: float = 0.0) -> PlanarPath:
    """A path planned by the car model (core.vehicles.car.simulate) at ``fps`` samples a second."""
    n = int(round(seconds * fps))
    controls = {"torque": np.broadcast_to(np.asarray(torque, float), (n,)).copy(),
                "steering_rate": np.broadcast_to(np.asarray(steering_rate, float), (n,)).copy()}
    initial = CarInitial(position=position, heading=heading, steering_angle=steering,
                         wheel_rate=speed / CAR.wheel_radius)
    return PlanarPath.from_trajectory(simulate(CAR, initial, controls, 1.0 / fps, n))


def rim_clearance(terrain, hub: np.ndarray, axle: np.ndarray, radius: float, count: int = 2001) -> np.ndarray:
    """Least height of a wheel's rim above the terrain (F,), from ``count`` points on its lower half."""
    v = np.array([0.0, 0.0, 1.0]) - axle[:, 2:3] * axle
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    f = np.cross(v, axle)
    s = np.linspace(-0.5 * np.pi, 0.5 * np.pi, count)
    d = -np.cos(s)[None, :, None] * v[:, None, :] + np.sin(s)[None, :, None] * f[:, None, :]
    rim = hub[:, None, :] + radius * d
    return np.min(rim[..., 2] - terrain.height(rim[..., 0], rim[..., 1]), axis=1)


def up_axis(result) -> np.ndarray:
    return quaternion.to_matrix(result.orientation)[:, :, 2]


# --- terrains -------------------------------------------------------------------------------------

def _step(s):
    s = np.clip(s, 0.0, 1.0)
    return s * s * (3.0 - 2.0 * s)


def _dstep(s):
    return np.where((s > 0) & (s < 1), 6.0 * s * (1.0 - s), 0.0)


def _hill_height(x, y):
    """A 1.5 m hill, bumps 3 cm high every 3 m (varying across the road), a 25 cm ramp at x = 55 m,
    and a 2 % cross slope."""
    return (1.5 * np.exp(-(x - 30.0) ** 2 / 200.0) + 0.03 * np.sin(2 * np.pi * x / 3) * np.cos(2 * np.pi * y / 5)
            + 0.25 * _step((x - 55.0) / 2.0) + 0.02 * y)


def _hill_gradient(x, y):
    gx = (-1.5 * np.exp(-(x - 30.0) ** 2 / 200.0) * (x - 30.0) / 100.0
          + 0.03 * 2 * np.pi / 3 * np.cos(2 * np.pi * x / 3) * np.cos(2 * np.pi * y / 5)
          + 0.125 * _dstep((x - 55.0) / 2.0))
    gy = -0.03 * np.sin(2 * np.pi * x / 3) * 2 * np.pi / 5 * np.sin(2 * np.pi * y / 5) + 0.02
    return np.stack([gx, gy], axis=-1)


HILL = FunctionTerrain(_hill_height, _hill_gradient)


def _bump_height(x, y, x0=10.0, length=1.0, height=0.05):
    s = (x - x0) / length
    return np.where((s > 0) & (s < 1), 0.5 * height * (1.0 - np.cos(2 * np.pi * s)), 0.0) + 0.0 * y


def _bump_gradient(x, y, x0=10.0, length=1.0, height=0.05):
    s = (x - x0) / length
    gx = np.where((s > 0) & (s < 1), 0.5 * height * 2 * np.pi / length * np.sin(2 * np.pi * s), 0.0)
    return np.stack([gx, 0.0 * gx + 0.0 * y], axis=-1)


BUMP = FunctionTerrain(_bump_height, _bump_gradient)


@pytest.fixture(scope="module")
def hill_ride():
    """The car over the bumpy hill and the ramp: 10 s at 7–9 m/s, weaving gently (σ = 0.05 sin 0.8t)."""
    path = planned(7.0, 10.0, torque=150.0, steering_rate=0.04 * np.cos(0.8 * np.arange(240) / FPS))
    return path, ride(HILL, CAR, path)


# --- acceptance ------------------------------------------------------------------------------------

def test_every_wheel_touches_the_bumpy_hill_and_ramp_at_every_frame(hill_ride):
    """Lowest rim point within 1 cm of the terrain and never below it by more than 1 cm (measured:
    |clearance| < 1e-6 m, the rim sampling's own error is 0.3 m (1 − cos(π/4000)) ≈ 1e-7 m)."""
    path, result = hill_ride
    assert result.stats["substeps"] == 5 and result.position[-1, 0] > 60.0     # over the hill and the ramp
    for role, w in result.wheels.items():
        clearance = rim_clearance(HILL, w.hub, w.axle, CAR.wheel_radius)
        assert np.max(np.abs(clearance)) < 1e-6, role
        assert np.max(np.abs(w.contact[:, 2] - HILL.height(w.contact[:, 0], w.contact[:, 1]))) < 1e-9
        assert np.allclose(np.linalg.norm(w.hub - w.contact, axis=1), CAR.wheel_radius, atol=1e-9)
    # the ride moves: the suspension works over the bumps, the body pitches over the hill
    travel = np.concatenate([w.travel for w in result.wheels.values()])
    assert 0.02 < np.max(np.abs(travel)) < 0.25                             # below the ramp's height
    assert np.degrees(np.ptp(result.pitch)) > 3.0


def test_spin_times_radius_is_the_3d_contact_path_length(hill_ride):
    """spin × r against the length of each contact's path computed on an 8× finer grid: within 1 %
    (measured: 1e-5)."""
    path, result = hill_ride
    substeps, dt = fine_grid(path.time, 1.0 / 120.0)
    fine = 8 * substeps
    t, x, y, yaw, steer = refine(path, fine, dt * substeps / fine)
    footing = place_wheels(HILL, car_wheels(CAR.wheel_radius, CAR.wheelbase), np.stack([x, y], -1), yaw, steer)
    for i, (role, w) in enumerate(result.wheels.items()):
        length = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(footing.contact[:, i], axis=0), axis=1))])
        length = length[::fine]
        rolled = w.spin * CAR.wheel_radius
        assert np.all(np.diff(rolled) > 0), role                              # forward: positive spin
        assert np.max(np.abs(rolled[1:] - length[1:]) / length[1:]) < 0.01, role
        assert abs(rolled[-1] - length[-1]) / length[-1] < 1e-4, role
        planar = np.sum(np.linalg.norm(np.diff(footing.planar_centre[:, i], axis=0), axis=1))
        assert length[-1] > planar * 1.0005                                   # the 3D path is longer than the plan's


def test_body_pitch_follows_a_steady_slope():
    """Straight up and across a plane rising 15 % along x and 5 % along y: the body's up axis within 2°
    of the plane's normal at every frame (measured: 0.17°; the centre of mass above the springs leans
    the body a little downhill)."""
    terrain = PlaneTerrain(level=0.3, slope=(0.15, 0.05))
    result = ride(terrain, CAR, planned(6.0, 4.0, heading=0.3))
    normal = terrain.normal(0.0, 0.0)
    angle = np.degrees(np.arccos(np.clip(up_axis(result) @ normal, -1.0, 1.0)))
    assert np.max(angle) < 2.0
    assert np.max(angle) > 0.01                                              # measured, not the terrain's own attitude
    # the terrain's attitude under the car is the plane's: pitch = the slope along the heading
    slope_angle = np.degrees(np.arctan(0.15 * math.cos(0.3) + 0.05 * math.sin(0.3)))
    assert np.allclose(np.degrees(-result.terrain_pitch), slope_angle, atol=1e-9)


@pytest.mark.parametrize("zeta", [0.3, 0.15])
def test_bounce_after_a_bump_decays_with_the_damping_ratio_set(zeta):
    """Over a 5 cm bump at 10 m/s, then level road: the centre of mass's height (the bounce mode, uncoupled
    from pitch because the stiffnesses follow the corner loads, core.terrain.suspension eq. 1) oscillates
    about its height before the bump with successive maxima in the ratio exp(2πζ/√(1 − ζ²)).

    Tolerance 1 % of ζ: what separates the measurement from the linear mode is the integrator's
    O((ωh)²) ≈ 1e-3 phase and amplitude error per cycle, the quadratic peak interpolation (O(h³)) and
    couplings quadratic in the millimetre amplitudes; measured: 0.02 % (ζ = 0.3), 0.03 % (ζ = 0.15)."""
    suspension = Suspension(damping_ratio=zeta)
    path = planned(10.0, 4.0, fps=240.0)
    result = ride(BUMP, CAR, path, suspension=suspension)
    z = result.centre_of_mass[:, 2] - result.centre_of_mass[0, 2]
    after = result.time > 1.2                        # the rear wheels left the bump at 1.1 s
    z = z[after]
    peaks = []
    for i in range(1, len(z) - 1):
        if z[i] > z[i - 1] and z[i] >= z[i + 1]:
            a, b, c = z[i - 1], z[i], z[i + 1]
            peaks.append(b - 0.125 * (a - c) ** 2 / (a - 2 * b + c))
    assert len(peaks) >= 2 and peaks[0] > 1e-3
    decrement = math.log(peaks[0] / peaks[1])
    measured = decrement / math.sqrt(4 * math.pi**2 + decrement**2)
    assert measured == pytest.approx(zeta, rel=0.01)


def test_roll_follows_a_banked_turn():
    """A circle of 25 m radius at 5 m/s on a track banked 10° (higher outside): the terrain's roll under
    the car is the bank, the body's within 2° of it (measured: 0.24° once steady, 0.56° at most while
    entering; the body leans out of the turn, the centrifugal moment (0.78°) exceeding the bank's own
    inward lean of the centre of mass (0.55°))."""
    bank = math.radians(10.0)
    steering = 0.1
    radius = CAR.wheelbase / math.tan(steering)
    centre = np.array([0.0, radius])

    def height(x, y):
        return math.tan(bank) * (np.hypot(x - centre[0], y - centre[1]) - radius)

    def gradient(x, y):
        d = np.hypot(x - centre[0], y - centre[1])
        return math.tan(bank) * np.stack([(x - centre[0]) / d, (y - centre[1]) / d], axis=-1)

    result = ride(FunctionTerrain(height, gradient), CAR, planned(5.0, 6.0, steering=steering))
    assert np.allclose(np.degrees(result.terrain_roll), -10.0, atol=0.2)      # right (outer) side higher
    lean = np.degrees(result.roll - result.terrain_roll)
    assert np.max(np.abs(lean)) < 2.0
    assert np.all(lean[result.time > 1.0] > 0.1)                           # leaning out of the turn


def test_level_ground_settles_to_no_heave_pitch_or_roll_and_keeps_todays_spin():
    """Accelerate, turn and brake on level ground, then coast straight: heave, pitch and roll are back to
    0 once the motion is steady, and every wheel's spin is core.shot.car_geometry.wheel_spins's to
    round-off; the rear wheels' mean spin is the car's ψ."""
    n = int(10 * FPS)
    t = np.arange(n) / FPS
    torque = np.where(t < 2.0, 1200.0, np.where((t > 3.0) & (t < 3.5), -1500.0, 0.0))
    rate = np.where(t < 1.0, 0.3, np.where(t < 2.0, -0.3, 0.0))            # steer in and back out
    initial = CarInitial(wheel_rate=3.0 / CAR.wheel_radius)
    trajectory = simulate(CAR, initial, {"torque": torque, "steering_rate": rate}, 1.0 / FPS, n)
    path = PlanarPath.from_trajectory(trajectory)
    result = ride(PlaneTerrain(level=1.7), CAR, path)
    moving = np.max(np.abs(result.pitch)) + np.max(np.abs(result.roll))
    assert moving > math.radians(0.5)                                      # squat, dive and roll happened
    steady = result.time > 8.0
    for series in (result.heave, result.pitch, result.roll):
        assert np.max(np.abs(series[steady])) < 1e-6
    tables = {w.role: w.table() for w in car_wheels(CAR.wheel_radius, CAR.wheelbase)}
    today = wheel_spins(path.position, path.heading, path.steering, tables)
    for role, w in result.wheels.items():
        assert np.max(np.abs(w.spin - today[role])) <= 1e-12 * (1.0 + np.max(np.abs(today[role]))), role
        assert np.allclose(w.hub[:, 2], 1.7 + CAR.wheel_radius, atol=1e-12)
    psi = trajectory.shape["wheel_angle"] - trajectory.shape["wheel_angle"][0]
    rear = 0.5 * (result.wheels["wheel_rear_left"].spin + result.wheels["wheel_rear_right"].spin)
    assert np.max(np.abs(rear - psi)) <= 1e-10 * (1.0 + np.max(np.abs(psi)))
    # straight at constant speed from rest on its springs: nothing moves, to round-off
    still = ride(PlaneTerrain(), CAR, planned(8.0, 2.0))
    assert max(np.max(np.abs(still.heave)), np.max(np.abs(still.pitch)), np.max(np.abs(still.roll))) < 1e-12


# --- the tree integrator on the suspension ------------------------------------------------------

def _car_system(damping_ratio: float, speed: float = 0.0, radius: float = 25.0):
    """The ride system of a car on level ground standing still or circling at ``speed`` (m/s), driven
    by the exact circle (smooth drives: the reference integrator needs no knots), at rest on its springs."""
    wheels = car_wheels(CAR.wheel_radius, CAR.wheelbase)
    tree, bodies, struts = ride_model(wheels, Suspension(damping_ratio=damping_ratio), CAR.mass, CAR.yaw_inertia)
    w = speed / radius
    circle = {"car.x": Prescribed(lambda t: radius * np.sin(w * t), lambda t: radius * w * np.cos(w * t),
                                  lambda t: -radius * w * w * np.sin(w * t)),
              "car.y": Prescribed(lambda t: radius * (1.0 - np.cos(w * t)), lambda t: radius * w * np.sin(w * t),
                                  lambda t: radius * w * w * np.cos(w * t)),
              "car.ground": Prescribed.constant_rate(0.0), "car.yaw": Prescribed.constant_rate(0.0, w)}
    circle.update({f"hub.{wheel.role}": Prescribed.constant_rate(CAR.wheel_radius) for wheel in wheels})
    system = StrutSystem(tree, bodies, drives=circle, struts=struts)
    q0 = np.zeros(system.tree.n)
    q0[system.kin] = system.drive(0.0)[0]
    return system, static_equilibrium(system, q0)


def test_undamped_suspension_keeps_its_energy_to_second_order():
    """Heave 3 cm, pitch and roll 1.5° from rest, no damping, 20 s (≈ 26 bounces): the energy error is
    bounded (no drift: the second half's no larger than 1.2 × the first's) and shrinks 4× when h halves
    (measured: 5.5e-5 of the oscillation's energy at h = 1/60 s, 1.4e-5 at 1/120 s)."""
    errors = []
    for dt in (1.0 / 60.0, 1.0 / 120.0):
        steps = int(round(20.0 / dt))
        system, q_rest = _car_system(0.0)
        q0 = q_rest.copy()
        q0[system.dyn] += (0.03, math.radians(1.5), math.radians(1.5))
        run = variational.simulate(system, q0, np.zeros_like(q0), dt, steps)
        assert not run.blew_up
        energy = system.energy(system.kinematics(run.q, run.dq))
        swing = energy[0] - system.energy(system.kinematics(q_rest, np.zeros_like(q_rest)))
        error = np.abs(energy - energy[0]) / swing
        half = len(error) // 2
        assert np.max(error[half:]) <= 1.2 * np.max(error[:half])
        errors.append(np.max(error))
    assert errors[0] < 1e-4
    assert 3.5 < errors[0] / errors[1] < 4.5


def test_ride_integrator_agrees_with_a_tight_solve_ivp():
    """Circling at 8 m/s (radius 25 m) from 2 cm heave and 1° pitch off rest, with damping: heave, pitch
    and roll of the variational integrator against DOP853 (rtol 1e-11) on the same continuous equations
    (core.tree.rk4.acceleration) at h and h/2: second order, below 1e-4 m or rad at h = 1/60 s (measured:
    5.5e-5 and 1.4e-5)."""
    errors = []
    for dt in (1.0 / 60.0, 1.0 / 120.0):
        steps = int(round(2.0 / dt))
        system, q0 = _car_system(0.3, speed=8.0)
        d = system.dyn
        q0[d] += (0.02, math.radians(1.0), 0.0)
        dq0 = np.zeros_like(q0)
        dq0[system.kin] = system.drive(0.0)[1]
        run = variational.simulate(system, q0, dq0, dt, steps)

        def rhs(t, state):
            q, dq = np.array(q0), np.array(dq0)
            kq, kdq, _ = system.drive(t)
            q[system.kin], dq[system.kin] = kq, kdq
            q[d], dq[d] = state[:3], state[3:]
            return np.concatenate([state[3:], acceleration(system, t, q, dq)[d]])

        ref = solve_ivp(rhs, (0.0, run.time[-1]), np.concatenate([q0[d], run.dq[0, d]]), method="DOP853",
                        rtol=1e-11, atol=1e-13, t_eval=run.time)
        assert ref.success and np.ptp(ref.y[2]) > 1e-3                     # the turn rolled the body
        errors.append(np.max(np.abs(run.q[:, d] - ref.y[:3].T)))
    assert errors[0] < 1e-4
    assert 3.5 < errors[0] / errors[1] < 4.5


# --- parts -----------------------------------------------------------------------------------------

def test_disc_contact_on_a_tilted_plane_and_in_a_narrow_trench():
    """On a plane the hub stands r·√(1 + |∇h|²) above the ground below it (the disc square to the plane);
    in a trench narrower than the wheel it rests on both edges, above the trench's floor."""
    plane = PlaneTerrain(level=0.2, slope=(0.3, -0.1))
    axle = np.array([[0.0, 1.0, 0.0]])
    n = plane.normal(0.0, 0.0)
    axle = axle - (axle @ n)[:, None] * n
    axle /= np.linalg.norm(axle)
    c = disc_contact(plane, np.array([[1.0, 2.0]]), axle, 0.35)
    # the disc's plane contains n: the hub is r along n from the contact point on the plane
    assert np.allclose(c.to_hub[0], n, atol=1e-12)
    assert c.hub_z[0] - plane.height(1.0, 2.0) == pytest.approx(0.35 * np.linalg.norm([0.3, -0.1, 1.0]), abs=1e-12)

    def trench(x, y):
        return -0.2 * np.exp(-(x / 0.15) ** 2) + 0.0 * y

    def trench_gradient(x, y):
        return np.stack([0.4 * x / 0.15**2 * np.exp(-(x / 0.15) ** 2), 0.0 * x + 0.0 * y], axis=-1)

    terrain = FunctionTerrain(trench, trench_gradient)
    xs = np.linspace(-0.6, 0.6, 25)
    axles = np.tile([0.0, 1.0, 0.0], (len(xs), 1))
    c = disc_contact(terrain, np.stack([xs, np.zeros_like(xs)], -1), axles, 0.3)
    hub = np.concatenate([np.stack([xs, np.zeros_like(xs)], -1), c.hub_z[:, None]], axis=1)
    clearance = rim_clearance(terrain, hub, axles, 0.3)
    assert np.max(np.abs(clearance)) < 2e-3          # resting on the rim: the sampled drop's error ≤ r(1 − cos(π/96))
    assert c.hub_z[len(xs) // 2] > -0.2 + 0.3 + 0.05  # bridging the trench, well above its floor


def test_strut_forces_match_finite_differences():
    """Eqs. (2), (3) of core.terrain.struts: ∂V/∂q, ∂²V/∂q², ∂f/∂q, ∂f/∂q̇ against central differences."""
    frames = [Frame("b.z", WORLD, "tz", variable="z"), Frame("b.p", "b.z", "ry", variable="p"),
              Frame("b", "b.p", "rx", variable="r"), Frame("hub", WORLD, "tz", variable="h", kinematic=True)]
    struts = [Strut("b", (1.2, 0.7, 0.3), "h", 3e4, 2e3, 0.1), Strut("b", (-1.0, -0.6, 0.2), "h", 2e4, 1e3, 0.15)]
    system = StrutSystem(Tree(frames), [Body("b", 500.0, (100.0, 300.0, 350.0))],
                         drives={"h": Prescribed.constant_rate(0.1, 0.3)}, struts=struts)
    rng = np.random.default_rng(7)
    q, dq = rng.normal(size=4) * 0.3, rng.normal(size=4)
    kin = system.kinematics(q, dq)
    V, V_q, V_qq = system.potential(kin, 2)
    f, fq, fdq = system.force(kin, 0.0, derivatives=True)
    e = 1e-6
    for j in range(4):
        step = np.eye(4)[j] * e
        Vp = system.potential(system.kinematics(q + step, dq), 2)
        Vm = system.potential(system.kinematics(q - step, dq), 2)
        assert (Vp[0] - Vm[0]) / (2 * e) == pytest.approx(V_q[j], rel=1e-6, abs=1e-3)
        assert np.allclose((Vp[1] - Vm[1]) / (2 * e), V_qq[:, j], rtol=1e-6, atol=1e-2)
        fp = system.force(system.kinematics(q + step, dq), 0.0)[0]
        fm = system.force(system.kinematics(q - step, dq), 0.0)[0]
        assert np.allclose((fp - fm) / (2 * e), fq[:, j], rtol=1e-6, atol=1e-2)
        fp = system.force(system.kinematics(q, dq + step), 0.0)[0]
        fm = system.force(system.kinematics(q, dq - step), 0.0)[0]
        assert np.allclose((fp - fm) / (2 * e), fdq[:, j], rtol=1e-6, atol=1e-2)


def test_corner_springs_make_the_bounce_its_own_mode():
    """Eq. (1) of core.terrain.suspension: loads sum to the weight with their moment at the centre of
    mass; Σk_i(x_i − x_c) = 0; the bounce frequency and damping ratio are the ones set."""
    s = Suspension.preset("sport")
    wheels = {w.role: np.array(w.centre) for w in car_wheels(0.3, 2.6, 1.55)}
    c = corners(s, 1400.0, wheels)
    x = np.array([wheels[r][0] for r in c.roles])
    assert np.sum(c.load) == pytest.approx(1400.0 * 9.81)
    assert np.sum(c.load[2:]) / np.sum(c.load) == pytest.approx(s.front_load)
    assert np.sum(c.stiffness * (x - c.centre_of_mass[0])) == pytest.approx(0.0, abs=1e-6)
    assert math.sqrt(np.sum(c.stiffness) / 1400.0) / (2 * math.pi) == pytest.approx(s.ride_frequency)
    assert np.sum(c.damping) / (2 * math.sqrt(np.sum(c.stiffness) * 1400.0)) == pytest.approx(s.damping_ratio)


def test_wheels_from_the_scenes_tables_ride_where_they_are():
    """core.shot.car_geometry's wheel tables (scene units, here centimetres): bigger front wheels on a
    wider front track stand at their own radius on level ground, and the body driving straight rests level
    with every hub at its place in the body frame."""
    tables = {"wheel_rear_left": {"centre": [0.0, 70.0, 30.0], "radius": 30.0, "spin_sign": 1.0},
              "wheel_rear_right": {"centre": [0.0, -70.0, 30.0], "radius": 30.0, "spin_sign": -1.0},
              "wheel_front_left": {"centre": [260.0, 80.0, 34.0], "radius": 34.0, "steered": True},
              "wheel_front_right": {"centre": [260.0, -80.0, 34.0], "radius": 34.0, "steered": True}}
    wheels = wheels_from_tables(tables, scale=0.01)
    assert wheels[2].centre == pytest.approx((2.6, 0.8, 0.34)) and wheels[2].steered and wheels[1].spin_sign == -1.0
    result = ride(PlaneTerrain(level=0.5), CAR, planned(5.0, 1.0), wheels=wheels)
    for w, wheel in zip(result.wheels.values(), wheels, strict=True):
        assert np.allclose(w.hub[:, 2], 0.5 + wheel.radius, atol=1e-12)
        assert np.allclose(w.hub_in_body, wheel.centre, atol=1e-6)
    assert np.max(np.abs(result.pitch)) < 1e-12 and np.allclose(result.position[:, 2], 0.5, atol=1e-9)
    assert np.all(np.diff(result.wheels["wheel_rear_right"].spin) < 0)           # its axle points right


def test_bad_input_is_refused_with_one_line():
    with pytest.raises(ScenarioError, match="ride_frequency"):
        Suspension(ride_frequency=-1.0)
    with pytest.raises(ScenarioError, match="damping_ratio"):
        Suspension(damping_ratio=float("nan"))
    with pytest.raises(ScenarioError, match="unknown preset"):
        Suspension.preset("rally")
    path = planned(5.0, 1.0)
    uneven = PlanarPath(path.time ** 1.1, path.position, path.heading, path.steering)
    with pytest.raises(ScenarioError, match="evenly spaced"):
        ride(PlaneTerrain(), CAR, uneven)
    bad = PlanarPath(path.time, path.position[:-1], path.heading, path.steering)
    with pytest.raises(ScenarioError, match="position"):
        ride(PlaneTerrain(), CAR, bad)
    with pytest.raises(ScenarioError, match="track"):
        car_wheels(0.3, 2.5, track=0.0)
