"""A car's wheels on the terrain along a planned planar path: hubs, contacts, and spin along each contact path.

The path is planned in the ground plane (the car model of ``core.vehicles.car`` knows no heights): at
each time the rear axle point is at (x, y) with heading θ and steering φ. The car's wheels are
placed on the terrain by the terrain's attitude under the car, R_t = R_z(θ) R_y(β) R_x(α), the
rotation that takes the car's up axis to the normal n of the plane through the wheels' feet:

1. each wheel's hub, at c_i in the body frame (x forward, y left, z up, from the rear axle point on
   the ground), has the horizontal position (x, y) + [R_t c_i]_xy, and its axle is
   R_t R_z(φ_i) ŷ (φ_i = φ for steered wheels): the wheels stand square to the ground under the car;
2. its height is its disc's contact with the terrain (:func:`.contact.disc_contact`);
3. the feet q_i = hub_i − z_i n (z_i the centre's height in the body frame) give, by least squares,
   the plane z = a + b·(x − x₀, y − y₀) under the car, whose normal is the next n; in the yaw frame
   n = (cos α sin β, −sin α, cos α cos β).

Steps 1–3 repeat until β and α change by less than 1e-12 rad (on a plane the feet lie exactly in
it, so R_t is the plane's attitude). The ground height under the rear axle point is a, and the body
pose at rest on the terrain is ((x, y, a), R_t): on a plane every hub is then exactly at its mount.

Spin (:func:`rolling_spin`): a wheel rolling without slipping turns by the length of its contact's
path on the terrain over its radius. Per output interval it is the planar arc of
:func:`core.shot.car_geometry.wheel_spins` (signed: forward or backward along the wheel's rolling
direction) times the ratio of the 3D contact path's length to the planar path's length of the wheel's
centre over the fine steps of that interval: on level ground the ratio is 1 and the spin is exactly
today's planar spin.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..errors import ScenarioError
from ..shot.car_geometry import wheel_spins
from .contact import disc_contact
from .surface import Terrain

ATTITUDE_TOLERANCE = 1e-12   # rad
ATTITUDE_PASSES = 20
TRACK = 1.5                  # m: a car's default track when the scene gives none


@dataclass(frozen=True)
class RideWheel:
    """A wheel: ``centre`` (m, body frame from the rear axle point on the ground, z = height of its
    hub at ride height), ``radius`` (m), ``steered``, ``spin_sign`` (+1: positive spin rolls forward)."""

    role: str
    centre: tuple[float, float, float]
    radius: float
    steered: bool = False
    spin_sign: float = 1.0

    def table(self) -> dict:
        """The wheel as :func:`core.shot.car_geometry.wheel_spins` reads it."""
        return {"centre": list(self.centre), "radius": self.radius, "steered": self.steered,
                "spin_sign": self.spin_sign}


def car_wheels(wheel_radius: float, wheelbase: float, track: float = TRACK) -> tuple[RideWheel, ...]:
    """The four wheels of the car model: rear axle at the origin, front axle ``wheelbase`` ahead,
    ``track`` apart, hubs at ``wheel_radius`` above the ground; front wheels steered."""
    if not (track > 0 and np.isfinite(track)):
        raise ScenarioError("[wheels] track", f"must be a positive number of metres, got {track}")
    half, r = 0.5 * float(track), float(wheel_radius)
    return (RideWheel("wheel_rear_left", (0.0, half, r), r), RideWheel("wheel_rear_right", (0.0, -half, r), r),
            RideWheel("wheel_front_left", (float(wheelbase), half, r), r, steered=True),
            RideWheel("wheel_front_right", (float(wheelbase), -half, r), r, steered=True))


def wheels_from_tables(tables: Mapping[str, Mapping], scale: float = 1.0) -> tuple[RideWheel, ...]:
    """Wheels from :meth:`core.shot.car_geometry.CarGeometry.wheel_tables` (scene units; ``scale``
    metres per unit). The centres there are from the rear axle point on the ground."""
    out = []
    for role, t in tables.items():
        centre = tuple(float(v) * scale for v in t["centre"])
        radius = float(t["radius"]) * scale
        if len(centre) != 3 or not all(np.isfinite(centre)) or not (radius > 0 and np.isfinite(radius)):
            raise ScenarioError(f"[wheels] {role}", "needs a finite centre (x, y, z) and a positive radius")
        out.append(RideWheel(role, centre, radius, bool(t.get("steered", False)), float(t.get("spin_sign", 1.0))))
    return tuple(out)


def rotation_z(angle: np.ndarray) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    z, o = np.zeros_like(c), np.ones_like(c)
    return np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)


def attitude(heading: np.ndarray, pitch: np.ndarray, roll: np.ndarray) -> np.ndarray:
    """R_z(θ) R_y(β) R_x(α) (the tree's vehicle root order), (..., 3, 3)."""
    cb, sb, ca, sa = np.cos(pitch), np.sin(pitch), np.cos(roll), np.sin(roll)
    z, o = np.zeros_like(cb), np.ones_like(cb)
    Ry = np.stack([np.stack([cb, z, sb], -1), np.stack([z, o, z], -1), np.stack([-sb, z, cb], -1)], -2)
    Rx = np.stack([np.stack([o, z, z], -1), np.stack([z, ca, -sa], -1), np.stack([z, sa, ca], -1)], -2)
    return rotation_z(heading) @ Ry @ Rx


@dataclass
class Footing:
    """The wheels on the terrain at T times (W wheels): ``hub``, ``contact``, ``axle``, ``to_hub``
    (T, W, 3); the terrain under the car: ``ground`` (T,) height under the rear axle point, ``pitch``
    and ``roll`` (T,) of R_t; ``planar_centre`` (T, W, 2): each wheel centre on the planar path
    (the heading alone), what the planar spin follows; ``converged`` (T, W) of the contact iteration."""

    hub: np.ndarray
    contact: np.ndarray
    axle: np.ndarray
    to_hub: np.ndarray
    ground: np.ndarray
    pitch: np.ndarray
    roll: np.ndarray
    planar_centre: np.ndarray
    converged: np.ndarray


def _plane(points: np.ndarray, origin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares plane z = a + b·(p_xy − origin) through points (T, W, 3): (a (T,), b (T, 2))."""
    X = points[..., :2] - origin[:, None, :]
    Xm = X.mean(axis=1)
    zm = points[..., 2].mean(axis=1)
    Xc = X - Xm[:, None, :]
    zc = points[..., 2] - zm[:, None]
    A = np.einsum("twi,twj->tij", Xc, Xc)
    r = np.einsum("twi,tw->ti", Xc, zc)
    det = A[:, 0, 0] * A[:, 1, 1] - A[:, 0, 1] * A[:, 1, 0]
    if np.any(np.abs(det) < 1e-12):
        raise ScenarioError("wheels", "the wheels must not stand on one line (a car needs a track and a wheelbase)")
    b = np.stack([A[:, 1, 1] * r[:, 0] - A[:, 0, 1] * r[:, 1], A[:, 0, 0] * r[:, 1] - A[:, 1, 0] * r[:, 0]], -1)
    b = b / det[:, None]
    return zm - np.einsum("ti,ti->t", b, Xm), b


def place_wheels(terrain: Terrain, wheels: Sequence[RideWheel], position: np.ndarray, heading: np.ndarray,
                 steering: np.ndarray) -> Footing:
    """The wheels on ``terrain`` at planar poses: ``position`` (T, 2) of the rear axle point, ``heading``
    and ``steering`` (T,) rad (module docstring, steps 1–3)."""
    P = np.asarray(position, dtype=float)[:, :2]
    th = np.asarray(heading, dtype=float).reshape(-1)
    phi = np.asarray(steering, dtype=float).reshape(-1)
    C = np.array([w.centre for w in wheels], dtype=float)                     # (W, 3)
    r = np.array([w.radius for w in wheels], dtype=float)
    steer = np.array([w.steered for w in wheels], dtype=float)
    beta, alpha = np.zeros_like(th), np.zeros_like(th)
    local_axle = rotation_z(steer[None, :] * phi[:, None])[..., :, 1]          # R_z(φ_i) ŷ, (T, W, 3)
    planar_centre = P[:, None, :] + np.einsum("tij,wj->twi", rotation_z(th), C)[..., :2]
    for _ in range(ATTITUDE_PASSES):
        R = attitude(th, beta, alpha)
        hub_xy = P[:, None, :] + np.einsum("tij,wj->twi", R, C)[..., :2]
        axle = np.einsum("tij,twj->twi", R, local_axle)
        c = disc_contact(terrain, hub_xy, axle, r)
        hub = np.concatenate([hub_xy, c.hub_z[..., None]], axis=-1)
        feet = hub - C[None, :, 2:3] * R[:, None, :, 2]
        ground, slope = _plane(feet, P)
        n = np.concatenate([-slope, np.ones((len(th), 1))], axis=-1)
        n /= np.linalg.norm(n, axis=-1, keepdims=True)
        n_yaw = np.einsum("tji,tj->ti", rotation_z(th), n)                      # R_z(θ)ᵀ n
        new_beta = np.arctan2(n_yaw[:, 0], n_yaw[:, 2])
        new_alpha = -np.arcsin(np.clip(n_yaw[:, 1], -1.0, 1.0))
        change = max(float(np.max(np.abs(new_beta - beta), initial=0.0)),
                     float(np.max(np.abs(new_alpha - alpha), initial=0.0)))
        beta, alpha = new_beta, new_alpha
        if change < ATTITUDE_TOLERANCE:
            break
    else:
        raise ScenarioError("terrain", "the ground under the car does not settle into a plane (the terrain "
                            "changes faster than the wheels can follow)")
    return Footing(hub=hub, contact=c.point, axle=axle, to_hub=c.to_hub, ground=ground, pitch=beta, roll=alpha,
                   planar_centre=planar_centre, converged=c.converged)


def rolling_spin(wheels: Sequence[RideWheel], position: np.ndarray, heading: np.ndarray, steering: np.ndarray,
                 footing: Footing, substeps: int) -> dict[str, np.ndarray]:
    """Each wheel's spin (rad, 0 at the first sample) at the output samples (``position`` (F, 2),
    ``heading``, ``steering`` (F,)), from a ``footing`` on the fine grid of ``substeps`` steps per
    output interval (module docstring)."""
    planar = wheel_spins(position, heading, steering, {w.role: w.table() for w in wheels})
    F = len(np.asarray(heading).reshape(-1))
    out = {}
    for i, w in enumerate(wheels):
        d3 = np.diff(footing.contact[:, i, :], axis=0)
        d2 = np.diff(footing.planar_centre[:, i, :], axis=0)
        length3 = np.sqrt(d3[:, 0] * d3[:, 0] + d3[:, 1] * d3[:, 1] + d3[:, 2] * d3[:, 2]).reshape(F - 1, substeps)
        length2 = np.sqrt(d2[:, 0] * d2[:, 0] + d2[:, 1] * d2[:, 1]).reshape(F - 1, substeps)
        L3, L2 = length3.sum(axis=1), length2.sum(axis=1)
        ratio = np.where(L2 > 1e-12, L3 / np.where(L2 > 1e-12, L2, 1.0), 1.0)
        out[w.role] = np.concatenate([[0.0], np.cumsum(np.diff(planar[w.role]) * ratio)])
    return out


__all__ = ["RideWheel", "Footing", "car_wheels", "wheels_from_tables", "place_wheels", "rolling_spin", "attitude",
           "rotation_z", "TRACK"]
