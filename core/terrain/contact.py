"""Where a wheel touches the terrain: a disc of radius r resting on z = h(x, y), batched.

A wheel is a thin disc: centre c, unit axle a, radius r. Its rim point farthest along a unit
direction −n is c − r u with

    u = (n − (n·a) a) / |n − (n·a) a|                                                  (1)

(n projected onto the disc's plane). The disc touches the terrain at p when p is that rim point for
the terrain's own normal there, n = n(p): the tangent planes agree. With the hub's horizontal
position (c_x, c_y) given (the planned path fixes it), the contact solves the fixed point

    p_xy = c_xy − r u_xy(n(p_xy)),      c_z = h(p_xy) + r u_z                             (2)

which contracts while r is below the terrain's radius of curvature (the disc fits the bumps).
Iteration (2) starts from the best of ``SAMPLES`` rim points — the disc dropped onto the terrain
along the rim, c_z ≥ h(c_xy + r d_xy) − r d_z for every rim direction d — so that a dip narrower
than the wheel, where (2) has several solutions, gives the highest (the one the disc rests on);
the drop height also bounds the result from below, so the disc never sinks into the terrain by
more than the rim's sampling error even where (2) does not converge.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .surface import Terrain

SAMPLES = 49          # rim directions over the lower half of the disc (odd: straight down is one)
TOLERANCE = 1e-10     # m: the fixed point's step at convergence
MAX_ITERATIONS = 50


@dataclass
class DiscContact:
    """The solved contacts, shapes (...) of the hubs given: hub height ``hub_z`` (m), the touching
    rim point ``point`` (..., 3), the unit direction ``to_hub`` from the contact to the hub ((1), u),
    and whether iteration (2) converged there (False: the sampled drop point is used)."""

    hub_z: np.ndarray
    point: np.ndarray
    to_hub: np.ndarray
    converged: np.ndarray


def in_plane(n: np.ndarray, axle: np.ndarray) -> np.ndarray:
    """u of eq. (1): n without its component along the axle, normalised, (..., 3)."""
    u = n - np.sum(n * axle, axis=-1, keepdims=True) * axle
    return u / np.linalg.norm(u, axis=-1, keepdims=True)


def rim_directions(axle: np.ndarray, count: int = SAMPLES) -> np.ndarray:
    """Unit rim directions d over the lower half of the disc (..., count, 3): d = −cos s v + sin s f,
    s ∈ [−π/2, π/2], v the disc's upward in-plane direction, f = v × a (along the rolling direction)."""
    v = in_plane(np.broadcast_to(np.array([0.0, 0.0, 1.0]), axle.shape), axle)
    f = np.cross(v, axle)
    s = np.linspace(-0.5 * np.pi, 0.5 * np.pi, count)
    return -np.cos(s)[:, None] * v[..., None, :] + np.sin(s)[:, None] * f[..., None, :]


def drop_height(terrain: Terrain, centre_xy: np.ndarray, radius: np.ndarray,
                directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The least hub height at which no sampled rim point is below the terrain, and the index of
    the rim direction that touches: max_d h(c_xy + r d_xy) − r d_z."""
    r = radius[..., None]
    x = centre_xy[..., None, 0] + r * directions[..., 0]
    y = centre_xy[..., None, 1] + r * directions[..., 1]
    need = terrain.height(x, y) - r * directions[..., 2]
    best = np.argmax(need, axis=-1)
    return np.take_along_axis(need, best[..., None], axis=-1)[..., 0], best


def disc_contact(terrain: Terrain, centre_xy: np.ndarray, axle: np.ndarray, radius: np.ndarray | float
                 ) -> DiscContact:
    """Contacts of discs with horizontal hub positions ``centre_xy`` (..., 2), unit axles (..., 3)
    and radii (broadcast to (...)) on ``terrain``: eq. (2) from the dropped disc (module docstring)."""
    centre_xy = np.asarray(centre_xy, dtype=float)
    axle = np.asarray(axle, dtype=float)
    axle = axle / np.linalg.norm(axle, axis=-1, keepdims=True)
    r = np.broadcast_to(np.asarray(radius, dtype=float), centre_xy.shape[:-1])
    directions = rim_directions(axle)
    drop, best = drop_height(terrain, centre_xy, r, directions)
    d0 = np.take_along_axis(directions, best[..., None, None], axis=-2)[..., 0, :]
    p = centre_xy + r[..., None] * d0[..., :2]
    converged = np.zeros(r.shape, dtype=bool)
    for _ in range(MAX_ITERATIONS):
        u = in_plane(terrain.normal(p[..., 0], p[..., 1]), axle)
        nxt = centre_xy - r[..., None] * u[..., :2]
        step = np.max(np.abs(nxt - p), axis=-1)
        p = nxt
        converged = step <= TOLERANCE
        if np.all(converged):
            break
    u = in_plane(terrain.normal(p[..., 0], p[..., 1]), axle)
    hub = terrain.height(p[..., 0], p[..., 1]) + r * u[..., 2]
    # the fixed point must be the disc's resting contact: never below the dropped disc
    use_drop = ~converged | (drop > hub + 1e-9)
    point = np.concatenate([p, (hub - r * u[..., 2])[..., None]], axis=-1)
    if np.any(use_drop):
        hub = np.where(use_drop, drop, hub)
        sampled = np.concatenate([centre_xy, drop[..., None]], axis=-1) + r[..., None] * d0
        point = np.where(use_drop[..., None], sampled, point)
        u = np.where(use_drop[..., None], -d0, u)
    return DiscContact(hub_z=hub, point=point, to_hub=u, converged=converged & ~use_drop)


__all__ = ["DiscContact", "disc_contact", "drop_height", "in_plane", "rim_directions"]
