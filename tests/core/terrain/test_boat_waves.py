"""Boats on moving water (issue 22, item 3): the surface h(x, y, t) of core.vehicles.water in Simulate and Solve.

Acceptance, measured: on one regular wave, long against the hull, a wall-sided box heaves as the forced linear
oscillator m z̈ + c ż + k z = k s ζ(t) (+ c s_o ζ̇ with the orbital velocity) written here from the hull's own
numbers — k = ρ g A_waterplane, c the heave damping, no added mass (the model has none), s the mean of the
wave over the waterplane, s_o that of the orbital velocity over the wetted hull. Against the continuous
oscillator the amplitude and phase differ by the integrator's own O(h) (the damping acts on the previous step's
velocity, eq. (10) of Kobilarov, Crane & Desbrun 2009); against that recurrence, with the sea held at the
steps' midpoints, to 1e-3. Calm water and frozen surfaces give the figures they gave before moving water
existed (literals below, and the boat_docking sample); a DMOC solve on a wave converges and re-simulates.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from core.errors import ScenarioError
from core.integrators.common import GRAVITY, RigidState
from core.lie import quaternion, so3
from core.scenario import Table
from core.scenario.boat import read_boat
from core.vehicles.boat import Boat
from core.vehicles.boat_spec import box_inertia
from core.vehicles.hull import box_hull, clip
from core.vehicles.water import RHO_WATER, SampledSurface, Wind, is_moving, plane_surface, regular_wave, swell

ROOT = Path(__file__).resolve().parents[3]

# the box: 5 × 2 × 1 m floating at a draft of 0.4 m (wall-sided: the heave stiffness is exactly ρ g L B)
L, B, H, DRAFT = 5.0, 2.0, 1.0, 0.4
MASS = RHO_WATER * L * B * DRAFT
C_HEAVE = 6000.0                       # N·s/m: damping ratio 0.15
A, WAVELENGTH, PERIOD = 0.05, 200.0, 2.0


def box_boat(surface, orbital: bool = False) -> Boat:
    return Boat(mass=MASS, inertia=box_inertia(MASS, L, B, H), hull=box_hull((L, B, H)),
                damping=(300.0, 2000.0, C_HEAVE), surface=surface, orbital=orbital)


def heave_forcing(orbital: bool) -> complex:
    """k s + i ω c s_o (N/m of wave amplitude): the waterplane mean s of cos(k x − ω t) over the box (x from −L/2
    to L/2: sin(kL/2)/(kL/2)), and the wetted-area mean s_o of the orbital factor e^{k z} × the same horizontal
    mean (bottom at depth d; the long sides over depth and length; the ends at x = ±L/2)."""
    kw = 2 * math.pi / WAVELENGTH
    w = 2 * math.pi / PERIOD
    stiff = RHO_WATER * GRAVITY * L * B
    s = math.sin(kw * L / 2) / (kw * L / 2)
    force = complex(stiff * s)
    if orbital:
        depth_mean = (1 - math.exp(-kw * DRAFT)) / (kw * DRAFT)
        wet = L * B + 2 * L * DRAFT + 2 * B * DRAFT
        s_o = (L * B * math.exp(-kw * DRAFT) * s + 2 * L * DRAFT * depth_mean * s
               + 2 * B * DRAFT * depth_mean * math.cos(kw * L / 2)) / wet
        force += 1j * w * C_HEAVE * s_o
    return force


def continuous_response(orbital: bool) -> complex:
    """Z with z − z_eq = Re(Z e^{iωt}) for ζ = A cos(ωt) at x = 0: the forced linear oscillator."""
    w = 2 * math.pi / PERIOD
    stiff = RHO_WATER * GRAVITY * L * B
    return A * heave_forcing(orbital) / (stiff - MASS * w * w + 1j * C_HEAVE * w)


def discrete_response(orbital: bool, h: float) -> complex:
    """The same oscillator through the variational integrator: m (v_k − v_{k−1}) = h f_k, z_{k+1} = z_k + h v_k,
    f_k = −k z_k − c v_{k−1} + the wave's forcing averaged over the two half kicks at t_k ∓ h/2 (cos(ωh/2))."""
    w = 2 * math.pi / PERIOD
    stiff = RHO_WATER * GRAVITY * L * B
    lhs = -MASS * (2 - 2 * math.cos(w * h)) / h**2 + stiff + C_HEAVE * (1 - np.exp(-1j * w * h)) / h
    return A * heave_forcing(orbital) * math.cos(w * h / 2) / lhs


def measured_heave(orbital: bool, h: float) -> tuple[complex, float]:
    """Simulate from the steady state of the linear oscillator; fit z − z_eq = Re(Z e^{iωt}) + const over the last
    four periods. Returns Z and the boat's mean x over the fit (it drifts a few cm: heave damping acting along the
    pitched body axis is a second-order surge force), whose wave phase k x̄ the predictions are shifted by."""
    w = 2 * math.pi / PERIOD
    z_eq = H / 2 - DRAFT
    Z0 = continuous_response(orbital)
    boat = box_boat(regular_wave(A, WAVELENGTH, 0.0, PERIOD), orbital)
    start = RigidState(R=np.eye(3), x=np.array([0.0, 0.0, z_eq + Z0.real]), omega=np.zeros(3),
                       v=np.array([0.0, 0.0, -w * Z0.imag]))
    steps = int(round(14.0 / h))
    traj = boat.simulate(start, {}, h, steps, method="vi-cay")
    t, pos = np.asarray(traj.time), np.asarray(traj.position)
    fit = t >= 14.0 - 4 * PERIOD - 1e-9
    basis = np.column_stack([np.cos(w * t[fit]), np.sin(w * t[fit]), np.ones(fit.sum())])
    c = np.linalg.lstsq(basis, pos[fit, 2] - z_eq, rcond=None)[0]
    return complex(c[0], -c[1]), float(pos[fit, 0].mean())


@pytest.mark.parametrize("orbital", [False, True], ids=["buoyancy", "orbital-velocity"])
def test_heave_on_a_regular_wave_is_the_forced_linear_oscillator(orbital):
    h = 0.01
    Z, x_mean = measured_heave(orbital, h)
    shift = np.exp(-1j * 2 * math.pi / WAVELENGTH * x_mean)
    cont = continuous_response(orbital) * shift
    amplitude_error = abs(Z) / abs(cont) - 1
    phase_error = float(np.angle(Z / cont))
    print(f"orbital={orbital}: heave amplitude {abs(Z):.6f} m vs {abs(cont):.6f} m ({amplitude_error:+.2%}), "
          f"phase error {phase_error:+.2e} rad")
    # the integrator's damping lag −c v(t − h/2) ≈ −c v + (c h/2) v̇ lowers the mass by c h/2 (0.75 %)
    assert abs(amplitude_error) < 0.006
    assert abs(phase_error) < 0.003
    assert abs(Z / (discrete_response(orbital, h) * shift) - 1) < 1e-3


def test_a_regular_wave_and_its_orbital_velocity():
    wave = regular_wave(0.4, 25.0, direction=0.6)
    k = 2 * math.pi / 25.0
    assert wave.frequency == pytest.approx(math.sqrt(GRAVITY * k), rel=1e-15)   # deep-water dispersion
    assert regular_wave(0.4, 25.0, period=3.0).frequency == pytest.approx(2 * math.pi / 3.0)
    x, y, t = np.array([1.3, -4.0]), np.array([0.2, 7.5]), np.array([0.0, 2.7])
    theta = k * (x * math.cos(0.6) + y * math.sin(0.6)) - wave.frequency * t
    np.testing.assert_allclose(wave(x, y, t), 0.4 * np.cos(theta), rtol=1e-15)
    # at the mean level the vertical orbital velocity is the surface's rise rate ∂h/∂t
    p = np.stack([x, y, np.zeros(2)], axis=-1)
    dt = 1e-6
    np.testing.assert_allclose(wave.velocity(p, t)[:, 2], (wave(x, y, t + dt) - wave(x, y, t - dt)) / (2 * dt),
                               rtol=1e-7)
    # u along the crests' travel, decaying as e^{kz} below the surface, held above it
    deep = wave.velocity(p - [0.0, 0.0, 2.0], t)
    np.testing.assert_allclose(deep, wave.velocity(p, t) * math.exp(-2 * k), rtol=1e-14)
    np.testing.assert_allclose(deep[:, 1] / deep[:, 0], math.tan(0.6), rtol=1e-12)
    np.testing.assert_array_equal(wave.velocity(p + [0.0, 0.0, 0.3], t), wave.velocity(p, t))
    assert is_moving(wave) and is_moving(lambda x, y, t: 0 * x) and is_moving(SampledSurface(np.zeros((2, 2, 2)),
                                                                                               (0, 0), (1, 1)))
    assert not (is_moving(None) or is_moving(swell(0.2, 5.0)) or is_moving(plane_surface(0.1))
                or is_moving(lambda x, y, scale=1.0: 0 * x) or is_moving(SampledSurface(np.zeros((1, 2, 2)), (0, 0),
                                                                                          (1, 1))))


def test_sampled_surface_is_bilinear_in_space_linear_in_time_and_held_at_its_edges():
    xs, ys, ts = np.arange(5) * 0.5 - 1.0, np.arange(4) * 0.25 + 2.0, np.arange(3) * 0.2 + 1.0
    field = lambda x, y, t: 0.3 + 0.2 * x - 0.1 * y + 0.05 * x * y + 0.4 * t * (1 + 0.5 * x)  # noqa: E731
    T, Y, X = np.meshgrid(ts, ys, xs, indexing="ij")
    s = SampledSurface(field(X, Y, T), origin=(-1.0, 2.0), spacing=(0.5, 0.25), start=1.0, interval=0.2)
    rng = np.random.default_rng(7)
    px, py, pt = rng.uniform(-1, 1, 50), rng.uniform(2, 2.75, 50), rng.uniform(1.0, 1.4, 50)
    np.testing.assert_allclose(s(px, py, pt), field(px, py, pt), rtol=1e-13, atol=1e-14)   # exact on bilinear data
    assert s.contains(px, py).all()
    # outside the grid: the edge value (no NaN), told apart; before/after the frames: the first/last frame
    qx, qy = np.array([-5.0, 9.0, 0.0]), np.array([2.5, 10.0, 2.0])
    out = s(qx, qy, np.full(3, 1.1))
    np.testing.assert_allclose(out, field(np.array([-1.0, 1.0, 0.0]), np.array([2.5, 2.75, 2.0]), 1.1), rtol=1e-13)
    assert s.contains(qx, qy).tolist() == [False, False, True]
    np.testing.assert_allclose(s(px, py, np.full(50, -3.0)), field(px, py, 1.0), rtol=1e-13)
    np.testing.assert_allclose(s(px, py, np.full(50, 9.0)), field(px, py, 1.4), rtol=1e-13)
    # a single frame is frozen water h(x, y)
    one = SampledSurface(field(X, Y, T)[:1], origin=(-1.0, 2.0), spacing=(0.5, 0.25))
    np.testing.assert_allclose(one(px, py), field(px, py, 1.0), rtol=1e-13, atol=1e-14)
    with pytest.raises(ScenarioError, match="NaN"):
        SampledSurface(np.full((2, 3, 3), np.nan), (0, 0), (1, 1))
    with pytest.raises(ScenarioError, match="frames, ny"):
        SampledSurface(np.zeros((3, 3)), (0, 0), (1, 1))


def test_moving_water_wrench_jacobian_matches_differences_at_each_poses_time():
    """The analytic Jacobian holds each pose's time: the surface enters through its spatial gradient then."""
    boat = Boat(surface=regular_wave(0.3, 20.0, 0.4), wind=Wind((-3.0, 1.0, 0.0)))
    rng = np.random.default_rng(3)
    n = 9
    R = np.stack([so3.exp(rng.normal(scale=0.05, size=3)) for _ in range(n)])
    x = np.column_stack([rng.normal(scale=3.0, size=(n, 2)), boat.float_height() + rng.normal(scale=0.03, size=n)])
    xi = rng.normal(scale=0.5, size=(n, 6))
    t = rng.uniform(0.0, 5.0, n)
    E, Es, Ex, Exi = boat.external_wrench_jacobian(R, x, xi, time=t)
    E2, Fs, Fx, Fxi = boat._external_wrench_jacobian_fd(R, x, xi, time=t)
    np.testing.assert_array_equal(E, E2)
    assert np.abs(Es - Fs).max() < 1e-7 * np.abs(Fs).max()
    assert np.abs(Ex - Fx).max() < 1e-7 * np.abs(Fx).max()
    assert np.abs(Exi - Fxi).max() < 1e-5 * np.abs(Fxi).max()
    # each pose alone at its own time gives its row; the frozen snapshot at that time gives it too
    i = 4
    frozen = Boat(surface=lambda px, py: boat.surface(px, py, t[i]), wind=boat.wind)
    np.testing.assert_allclose(frozen.external_wrench(R[i], x[i], xi[i]), E[i], rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="time"):
        boat.external_wrench(R, x, xi)


CALM_FROZEN = {   # Boat.simulate, 60 steps of 0.05 s (below), as before moving water existed
    "calm": ([3.691344594895968, 0.5067663701810384, 0.08413174532904821],
             [0.9974727670256169, 6.069380522844969e-05, 0.00039935363593402524, 0.07104868665355224]),
    "swell": ([3.6717096663619175, 0.4777673848696766, 0.2460698892849106],
              [0.9976036478187551, -0.0039242514218988936, 0.0186058831289222, 0.0665235538924647]),
    "plane": ([3.6910672475079087, 0.5065294274198938, 0.16087904978627404],
              [0.9974614207628709, -0.010786617186219418, -0.004073622163778079, 0.07026925772953481]),
}


@pytest.mark.parametrize("name", sorted(CALM_FROZEN))
def test_calm_water_and_frozen_surfaces_give_the_same_figures(name):
    surface = {"calm": None, "swell": swell(0.2, 12.0, 0.3), "plane": plane_surface(0.05, (0.01, -0.02))}[name]
    boat = Boat(surface=surface, wind=Wind((-3.0, 1.0, 0.0)))
    assert not boat.moving
    start = RigidState(R=so3.exp(np.array([0.02, -0.03, 0.1])), x=np.array([0.0, 0.0, boat.float_height() + 0.05]),
                       omega=np.zeros(3), v=np.array([1.0, 0.2, 0.0]))
    traj = boat.simulate(start, {"thruster_1": np.full(60, 300.0), "thruster_2": np.full(60, 200.0)}, 0.05, 60)
    position, orientation = CALM_FROZEN[name]
    assert np.asarray(traj.position)[-1].tolist() == position
    assert np.asarray(traj.orientation)[-1].tolist() == orientation


def test_boat_docking_sample_is_unchanged():
    """The boat_docking sample (calm water), scipy backend: docs/benchmarks/dmoc.md's figures, bit for bit."""
    import tomllib

    from core.dmoc import solve_scenario
    root = tomllib.loads((ROOT / "samples" / "boat_docking.toml").read_text())
    _, result, _ = solve_scenario(Table(root), backend="scipy")
    assert result.converged
    assert (result.iterations, result.cost) == (124, 7.427759611401039)


def wave_scenario(goal: dict, water: dict | None = None) -> dict:
    water = water or {"waves": [{"amplitude": 0.15, "wavelength": 30.0, "direction": 0.3}]}
    boat = read_boat(Table({"type": "boat", "water": water}, "vehicle"))
    return {"vehicle": {"type": "boat", "water": water, "collision_radius": 1.0},
            "integrator": {"method": "vi-cay", "steps": 40}, "time": {"duration": 4.0},
            "start": {"position": [0.0, 0.0, boat.float_height()]}, "goal": goal,
            "cost": {"effort": 1e-6, "smoothness": 1e-7}, "solver": {"backend": "scipy", "max_iter": 200}}


def test_dmoc_boat_on_a_wave_converges_and_resimulates():
    """Solve heaves through a regular wave to a berth at rest in the horizontal (a boat cannot stop its heave on
    waves: the goal velocity holds the horizontal velocity and the yaw rate); Boat.simulate with the solved
    thrusts retraces the nodes (the same sea times: each step's midpoint)."""
    from core.dmoc import solve_scenario
    sc = wave_scenario({"position": [6.0, 1.0], "heading": 0.0, "velocity": [0.0, 0.0, 0.0],
                        "angular_velocity": [0.0, 0.0, 0.0]})
    traj, result, setup = solve_scenario(Table(sc))
    print(f"DMOC on a wave: {result.status}, {result.iterations} iterations, cost {result.cost:.6g}")
    assert result.converged and result.max_constraint_violation < 1e-8
    pos, vel = np.asarray(traj.position), np.asarray(traj.linear_velocity)
    np.testing.assert_allclose(pos[-1, :2], [6.0, 1.0], atol=1e-8)
    R_end = quaternion.to_matrix(np.asarray(traj.orientation[-1]))
    np.testing.assert_allclose(R_end @ vel[-1][:, None], np.array([[0.0], [0.0], [(R_end @ vel[-1])[2]]]), atol=1e-7)
    assert np.ptp(pos[:, 2]) > 0.2                      # it rides the 0.3 m (crest to trough) wave
    boat = setup.model.boat
    start = RigidState(R=quaternion.to_matrix(np.asarray(traj.orientation[0])), x=pos[0],
                       omega=np.asarray(traj.angular_velocity[0]), v=vel[0])
    sim = boat.simulate(start, {k: np.asarray(v) for k, v in traj.controls.items()}, 0.1, 40, method="vi-cay")
    np.testing.assert_allclose(np.asarray(sim.position), pos, atol=1e-9)
    np.testing.assert_allclose(np.asarray(sim.linear_velocity), vel, atol=1e-9)


def test_moving_water_in_a_solve_needs_a_fixed_duration():
    from core.dmoc import solve_scenario
    sc = wave_scenario({"position": [6.0, 1.0]})
    sc["time"] = {"min": 3.0, "max": 5.0}
    with pytest.raises(ScenarioError, match="fixed duration"):
        solve_scenario(Table(sc))


def test_the_water_table_of_a_scenario():
    waves = {"time_origin": 1.5, "orbital_velocity": True,
             "waves": [{"amplitude": 0.2, "wavelength": 30.0, "direction": 0.4, "period": 4.0, "phase": 0.3},
                       {"amplitude": 0.1, "wavelength": 12.0}]}
    boat = read_boat(Table({"type": "boat", "water": waves}, "vehicle"))
    assert boat.moving and boat.orbital
    x, y, t = np.array([3.0]), np.array([-2.0]), np.array([0.7])
    expect = regular_wave(0.2, 30.0, 0.4, 4.0, 0.3)(x, y, t + 1.5) + regular_wave(0.1, 12.0)(x, y, t + 1.5)
    np.testing.assert_allclose(boat.surface(x, y, t), expect, rtol=1e-12)
    heights = np.zeros((3, 4, 5))
    heights[1] += 0.2
    grid = {"time_origin": 0.5, "grid": {"origin": [-2.0, -1.0], "spacing": [1.0, 0.5], "start": 0.0,
                                         "interval": 0.5, "heights": heights.tolist()}}
    boat = read_boat(Table({"type": "boat", "water": grid}, "vehicle"))
    assert boat.surface(np.array(0.0), np.array(0.0), np.array(0.0)) == pytest.approx(0.2)   # frame 1 at t = 0
    assert boat.displaced_mass(np.eye(3), np.array([0.0, 0.0, boat.float_height(time=0.0)]), 0.0) == \
        pytest.approx(boat.mass, rel=1e-9)
    bad = [({"waves": [{"amplitude": 0.1, "wavelength": 5.0}], "grid": grid["grid"]}, "not both"),
           ({}, "missing"),
           ({"grid": dict(grid["grid"], heights=[[1.0, 2.0], [3.0]])}, "array of numbers"),
           ({"grid": dict(grid["grid"], heights=[[[0.0, np.nan], [0.0, 0.0]]])}, "NaN"),
           ({"waves": [{"amplitude": 0.1, "wavelength": -5.0}]}, "positive"),
           ({"grid": grid["grid"], "orbital_velocity": True}, "orbital velocity"),
           ({"waves": [{"amplitude": 0.1, "wavelength": 5.0, "height": 2.0}]}, "unknown key")]
    for water, message in bad:
        with pytest.raises(ScenarioError, match=message):
            read_boat(Table({"type": "boat", "water": water}, "vehicle"))


def test_a_box_floats_its_weight_on_a_sampled_sea():
    """The displaced mass of a box held level at its float height on a sampled, moving sea is its mass at every
    frame (the grid is a tilted plane rising in time: clipped exactly); Simulate counts its nodes off the grid."""
    xs, ys = np.linspace(-10, 10, 11), np.linspace(-8, 8, 9)
    frames = np.array([0.1 * i + 0.01 * X + 0.02 * Y for i in range(5) for Y, X in [np.meshgrid(ys, xs, indexing="ij")]])
    sea = SampledSurface(frames, (-10.0, -8.0), (2.0, 2.0), 0.0, 0.25)
    boat = box_boat(sea)
    for t in (0.0, 0.3, 1.0):
        z = boat.float_height(time=t)
        assert float(boat.displaced_mass(np.eye(3), np.array([0.0, 0.0, z]), t)) == pytest.approx(MASS, rel=1e-12)
        assert float(RHO_WATER * clip(boat.hull, np.eye(3), np.array([0.0, 0.0, z]), sea, time=t).volume) == \
            pytest.approx(MASS, rel=1e-12)
    # Simulate counts the nodes off the grid (there the sea is held at its edge)
    z = boat.float_height(time=0.0)
    for x0, off in ((0.0, 0), (30.0, 11)):
        start = RigidState(R=np.eye(3), x=np.array([x0, 0.0, z]), omega=np.zeros(3), v=np.zeros(3))
        assert boat.simulate(start, {}, 0.05, 10).stats["water_outside_nodes"] == off


def test_on_moving_water_a_goal_height_and_tilt_are_left_to_the_waves():
    """A scene's goal key holds [x, y, z] and an orientation; on waves the boat cannot choose its heave, roll and
    pitch: x, y and the heading are held, z and the tilt are free."""
    from core.dmoc.scenario import read
    yaw = 0.7
    q = [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
    model = read(Table(wave_scenario({"position": [6.0, 1.0, 0.3], "orientation": q}))).model
    N = model.N
    assert model.fixed[model.x[N]].tolist() == [True, True, False]
    assert model.base[model.x[N, :2]].tolist() == [6.0, 1.0]
    assert not model.fixed[model.rho[N]].any() and model._goal_heading == pytest.approx(yaw, rel=1e-12)
    calm = read(Table(dict(wave_scenario({"position": [6.0, 1.0, 0.3], "orientation": q}),
                           vehicle={"type": "boat", "collision_radius": 1.0}))).model
    assert calm.fixed[calm.x[N]].all() and calm.fixed[calm.rho[N]].all()
