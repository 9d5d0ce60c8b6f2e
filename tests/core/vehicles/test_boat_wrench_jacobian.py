"""Analytic Jacobian of the boat's external wrench (``Boat.external_wrench_jacobian``, clipped-hull
tangents ``hull.clip_jacobian``) against central differences of the existing ``Boat.external_wrench``
and ``hull.clip``: random poses partly submerged, heeled 20°, fully out of the water, with wind,
current, pressure and a swell; and the DMOC boat model's batched Jacobian (all steps in one call).
"""
from __future__ import annotations

import numpy as np
import pytest

from core.lie import so3
from core.vehicles import hull as H
from core.vehicles.boat import Boat
from core.vehicles.water import Wind, swell

D = 1e-6


def _poses(rng: np.random.Generator, z0: float):
    """Afloat with random small attitudes, heeled 20° about x, pitched, high out of the water, fully sunk."""
    R = [so3.exp(rng.normal(scale=0.08, size=3)) for _ in range(4)]
    R += [so3.exp([np.radians(20.0), 0.0, 0.0]) @ so3.exp(rng.normal(scale=0.02, size=3)),
          so3.exp([-np.radians(20.0), 0.0, 0.3]), so3.exp([0.0, np.radians(12.0), 1.0]),
          so3.exp(rng.normal(scale=0.3, size=3)), so3.exp(rng.normal(scale=0.3, size=3))]
    x = np.column_stack([rng.normal(scale=3.0, size=(9, 2)), z0 + rng.normal(scale=0.05, size=9)])
    x[7, 2] = 3.0       # fully out of the water
    x[8, 2] = -3.0      # fully under
    xi = rng.normal(scale=0.7, size=(9, 6))
    return np.stack(R), x, xi


def _fd(boat: Boat, R, x, xi, D: float = D):
    E = boat.external_wrench
    Es = np.stack([(E(R @ so3.cay(D * e), x, xi) - E(R @ so3.cay(-D * e), x, xi)) / (2 * D) for e in np.eye(3)], -1)
    Ex = np.stack([(E(R, x + D * e, xi) - E(R, x - D * e, xi)) / (2 * D) for e in np.eye(3)], -1)
    Exi = np.stack([(E(R, x, xi + D * e) - E(R, x, xi - D * e)) / (2 * D) for e in np.eye(6)], -1)
    return Es, Ex, Exi


BOATS = {
    "calm, head wind": Boat(wind=Wind(velocity=(-4.0, 0.0, 0.0))),
    "beam wind, current, pressure": Boat(wind=Wind(velocity=(1.0, 6.0, 0.5)), current=(0.3, -0.4, 0.0),
                                         pressure=50.0, damping=(300.0, 2000.0, 3000.0, 10.0, -20.0, 30.0)),
    "swell": Boat(wind=Wind(velocity=(3.0, -2.0, 0.0)), surface=swell(0.15, 8.0, 0.4)),
}


@pytest.mark.parametrize("name", list(BOATS))
def test_wrench_jacobian_matches_central_differences(name):
    boat = BOATS[name]
    rng = np.random.default_rng(7)
    R, x, xi = _poses(rng, boat.float_height())
    E, Es, Ex, Exi = boat.external_wrench_jacobian(R, x, xi)
    np.testing.assert_allclose(E, boat.external_wrench(R, x, xi), rtol=1e-12, atol=1e-9)
    # The clipped wrench has rare tiny jumps (on a curved surface the quad diagonal switch moves the
    # midpoint-rule samples): a pose passes with either step, 1e-6 or 2e-7, where it is smooth.
    err = np.full((3, len(R)), np.inf)
    for d in (D, 2e-7):
        for i, (got, ref) in enumerate(zip((Es, Ex, Exi), _fd(boat, R, x, xi, d))):
            tol = 2e-6 * (np.abs(ref).max(axis=(1, 2)) + 1.0) + 1e-16 / d * 1e2 * np.abs(E).max(axis=1)
            err[i] = np.minimum(err[i], np.abs(got - ref).max(axis=(1, 2)) / tol)
    assert np.all(err <= 1.0), err
    # out of the water: no buoyancy derivative, only wind (and gravity turns with R); sunk: no wind
    assert np.allclose(Ex[7], 0.0, atol=1e-9) and np.abs(Es[7]).max() > 0
    assert np.abs(Ex[3]).max() > 1e3                      # afloat: heave stiffness ρ g A_wp


def test_clip_tangents_match_central_differences():
    hull = H.default_hull()
    rng = np.random.default_rng(3)
    R, x, _ = _poses(rng, 0.08)
    for surface in (None, swell(0.2, 7.0, 0.3)):
        cut, tan = H.clip_jacobian(hull, R, x, surface)

        def outs(c):
            return (c.volume, c.centroid * c.volume[:, None], c.submerged_position, c.submerged_area,
                    c.emerged_position, c.emerged_area)

        fd = []
        for j in range(6):
            e = D * np.eye(3)[j % 3]
            plus = H.clip(hull, R @ so3.cay(e), x, surface) if j < 3 else H.clip(hull, R, x + e, surface)
            minus = H.clip(hull, R @ so3.cay(-e), x, surface) if j < 3 else H.clip(hull, R, x - e, surface)
            fd.append([(a - b) / (2 * D) for a, b in zip(outs(plus), outs(minus))])
        got = (tan.volume, tan.moment, tan.submerged_position, tan.submerged_area, tan.emerged_position,
               tan.emerged_area)
        for i, g in enumerate(got):
            ref = np.stack([f[i] for f in fd], axis=-1)
            np.testing.assert_allclose(g, ref, atol=2e-6 * (1.0 + np.abs(ref).max()))
        assert np.abs(tan.volume[:7]).max() > 1.0           # afloat hulls: dV/dz = −waterplane area ≠ 0


def test_callable_current_falls_back_to_batched_differences():
    boat = Boat(wind=Wind(velocity=(0.0, 3.0, 0.0)), current=lambda p: np.stack(
        [0.1 * p[..., 1], -0.05 * p[..., 0], np.zeros(p.shape[:-1])], axis=-1))
    rng = np.random.default_rng(11)
    R, x, xi = _poses(rng, boat.float_height())
    _, Es, Ex, Exi = boat.external_wrench_jacobian(R, x, xi)
    for got, ref in zip((Es, Ex, Exi), _fd(boat, R, x, xi)):
        np.testing.assert_allclose(got, ref, atol=1e-9 * (1.0 + np.abs(ref).max()))


def test_dmoc_boat_model_uses_the_batched_analytic_jacobian():
    from core.dmoc.models.boat import BoatModel

    boat = BOATS["calm, head wind"]
    model = BoatModel(boat, 20)
    rng = np.random.default_rng(5)
    R, x, xi = _poses(rng, boat.float_height())
    E, Es, Ex, Exi = model.external_wrench_jacobian(R, x, xi)
    for got, ref in zip((Es, Ex, Exi), _fd(boat, R, x, xi)):
        tol = 2e-6 * (np.abs(ref).max(axis=(1, 2)) + 1.0) + 1e-8 * np.abs(E).max(axis=1)
        assert np.all(np.abs(got - ref).max(axis=(1, 2)) <= tol)
    # the declared sparsity covers the computed derivative
    for got, mask in zip((Es, Ex, Exi), (model.ext_rot_mask, model.ext_pos_mask, model.ext_xi_mask)):
        assert not np.any((np.abs(got[:7]) > 1e-9) & ~mask)


def test_head_wind_on_a_symmetric_course_gets_the_symmetric_derivative():
    """Heading straight into the wind, the topsides are edge-on (n·ê = ±round-off): the wrench is even in yaw
    and in sway, so ∂(surge force, pitch torque)/∂(yaw, sway velocity) vanish, whatever the round-off
    (one-sided derivatives would give a spurious ±value picked by the sign of 1e-17)."""
    boat = BOATS["calm, head wind"]
    z = boat.float_height()
    yaw = np.array([0.0, 1e-13, -1e-13, 0.0])
    R = np.stack([so3.exp([0.0, 0.01, a]) for a in yaw])
    x = np.tile([2.0, 0.0, z], (4, 1))
    xi = np.tile([0.0, 0.0, 0.0, 1.0, 0.0, 0.0], (4, 1))
    xi[3, 4] = 1e-12
    _, Es, _, Exi = boat.external_wrench_jacobian(R, x, xi)
    assert np.abs(Es[:, [1, 3], 2]).max() < 1e-3 and np.abs(Exi[:, [1, 3], 4]).max() < 1e-3
    ref_s, _, ref_xi = _fd(boat, R, x, xi)
    np.testing.assert_allclose(Es[:, :, 2], ref_s[:, :, 2], atol=1e-3)
    np.testing.assert_allclose(Exi[:, :, 4], ref_xi[:, :, 4], atol=1e-3)


def test_moment_sums_match_the_patch_by_patch_wrench():
    """``external_wrench`` sums the clipped hull in moment form (per-face tables for the wholly wet and dry faces,
    the cut faces as rows): the same wrench, to round-off, as the patch-by-patch definitions ``Boat.buoyancy``,
    ``hydrodynamics`` and ``wind_wrench`` over ``hull.clip``'s patches — afloat, heeled, out of the water and sunk,
    with pressure, a full damping matrix, a uniform current and a swell."""
    rng = np.random.default_rng(13)
    for boat in BOATS.values():
        R, x, xi = _poses(rng, boat.float_height())
        parts = boat.external_wrench(R, x, xi, parts=True)
        cut = H.clip(boat.hull, R, x, boat.surface)
        flat = lambda a: a.reshape((len(R), -1) + a.shape[3:])  # noqa: E731
        ref = {"buoyancy": boat.buoyancy(R, x, cut.volume, cut.centroid),
               "hydrodynamics": boat.hydrodynamics(R, x, xi, flat(cut.submerged_position), flat(cut.submerged_normal),
                                                   flat(cut.submerged_area)),
               "wind": boat.wind_wrench(R, xi, flat(cut.emerged_position), flat(cut.emerged_normal),
                                        flat(cut.emerged_area))}
        for key, want in ref.items():
            scale = 1.0 + np.abs(want).max(axis=1, keepdims=True)
            assert np.all(np.abs(parts[key] - want) <= 1e-12 * scale), key
        assert np.abs(ref["wind"][:7]).max() > 1.0 and np.abs(ref["hydrodynamics"][:7]).max() > 1.0


def test_jacobian_reuses_the_clipping_of_the_values_at_the_same_poses(monkeypatch):
    """The optimiser asks the Jacobian at the point whose values it has just evaluated: the boat keeps its last
    values-only clipping, and the Jacobian reuses its cut faces when the poses are the same, byte for byte —
    with the same result as clipping afresh; other poses are clipped afresh."""
    boat = Boat(wind=Wind(velocity=(-4.0, 0.0, 0.0)))
    R, x, xi = _poses(np.random.default_rng(17), boat.float_height())
    fresh = Boat(wind=boat.wind).external_wrench_jacobian(R, x, xi)
    cuts = []
    cut_faces = H._cut_faces
    monkeypatch.setattr(H, "_cut_faces", lambda *a: cuts.append(1) or cut_faces(*a))
    boat.external_wrench(R, x, xi)
    for got, want in zip(boat.external_wrench_jacobian(R, x, xi), fresh):
        np.testing.assert_array_equal(got, want)
    assert len(cuts) == 1
    moved = x + [0.0, 0.0, 1e-9]
    for got, want in zip(boat.external_wrench_jacobian(R, moved, xi),
                         Boat(wind=boat.wind).external_wrench_jacobian(R, moved, xi)):
        np.testing.assert_array_equal(got, want)
    assert len(cuts) == 3


BOAT_SHOT = """
[vehicle]
type = "boat"
wind = [-3.0, 0.0, 0.0]
[integrator]
steps = 12
[time]
duration = 1.2
[start]
position = [0.0, 0.0, 0.08403097495099042]
velocity = [1.0, 0.0, 0.0]
[goal]
position = [1.3, 0.0]
velocity = [0.5, 0.0, 0.0]
[cost]
effort = 1e-6
"""


def test_dmoc_values_do_not_differentiate_the_wrench_and_the_fixed_start_is_remembered(monkeypatch):
    """Evaluating the constraints' values asks no Jacobian of the external wrench (the goal-velocity group used to);
    the start step's wrench depends on the fixed start alone, so the model remembers it across points; the
    derivatives equal those of a fresh model at the same point."""
    from collections import Counter

    from core.dmoc.constraints import assemble
    from core.dmoc.initial_guess import initial_guess
    from core.dmoc.scenario import read
    from core.scenario import loads

    calls = Counter()
    jacobian = Boat.external_wrench_jacobian
    monkeypatch.setattr(Boat, "external_wrench_jacobian",
                        lambda self, R, x, xi: calls.update([len(R)]) or jacobian(self, R, x, xi))
    setup = read(loads(BOAT_SHOT))
    nlp = assemble(setup.model, setup.spec)
    z = nlp.reduce(initial_guess(setup.model, setup.spec))
    calls.clear()
    nlp.evaluate(z)
    assert not calls
    nlp.derivatives(z)
    assert calls == Counter({1: 2, 11: 1})                 # start and goal nodes, the 11 momentum steps
    z2 = z + 1e-3 * np.random.default_rng(3).normal(size=z.shape)
    calls.clear()
    got = nlp.derivatives(z2).jac
    assert calls == Counter({1: 1, 11: 1})                 # the start's is remembered
    other = read(loads(BOAT_SHOT))
    want = assemble(other.model, other.spec)
    np.testing.assert_array_equal(want.reduce(initial_guess(other.model, other.spec)), z)   # the same charts
    np.testing.assert_array_equal(got, want.derivatives(z2).jac)
