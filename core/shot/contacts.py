"""Contacts are not collisions: a vehicle keyed at rest on or against an obstacle (a helicopter on a
roof, a boat at a pier, a car parked against a wall) touches it, and that is allowed.

The solver keeps the vehicle's collision spheres off the obstacles; the spheres cover the vehicle
generously (a row along the body), so at a touching pose they reach into the obstacle although the
vehicle does not. At a keyed pose (a key, a landing) the clearance is therefore measured with the
vehicle's real geometry — its evaluated mesh vertices, gathered by the add-on in the body frame:

* the spheres clear the obstacle by its margin: nothing to do;
* else the vertices are at most ``TOLERANCE`` (1 cm) inside it: a **contact**. The solver's clearance
  floor for that obstacle is lowered around the key's time to the spheres' clearance there
  (``allowance``, less ``SLACK``) and rises back to the margin quadratically over ``span`` seconds
  (``core.dmoc`` ``[[obstacles]] contact``), so the key is feasible and the motion still arrives from
  outside; the span is long enough for the vehicle to cover the difference with a quarter of its
  acceleration (at least ``MIN_SPAN``);
* else the key is inside the obstacle (a real collision): refused, naming the object and the real
  geometry's clearance.

Without real geometry (a vehicle that is an empty) the spheres decide, as before. After a solve,
:func:`check_motion` measures the real geometry at every baked frame near a contact.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .frames import bake_frames, fmt_frame
from .resample import sample

TOLERANCE = 0.01   # m: how far the real geometry may reach into an obstacle it touches
SLACK = 1e-3       # m: the floor at a contact is this far below the spheres' clearance there
MIN_SPAN = 1.0     # s: the shortest rise of the floor back to the margin


@dataclass
class Contact:
    """A keyed pose touching an obstacle (metres, seconds)."""
    obstacle: int          # index in the shot's obstacles (fitted, then keep-out)
    name: str              # the obstacle's label, for messages
    frame: float
    allowance: float       # m: the clearance floor at the contact (the spheres' clearance − SLACK)
    clearance: float       # m: the real geometry's clearance at the pose (≥ −TOLERANCE)
    span: float            # s: the floor is back at the margin this long before and after
    what: str              # "'Heli' at frame 49"

    def table(self, time: float) -> dict:
        """The ``contact`` entry of the obstacle's ``[[obstacles]]`` table, at ``time`` in its segment."""
        return {"time": float(time), "allowance": float(self.allowance), "span": float(self.span)}


def span_for(margin: float, allowance: float, accel: float | None) -> float:
    """Seconds for the floor to rise from ``allowance`` to ``margin`` (m): the quadratic rise needs an
    acceleration of 2 (margin − allowance)/span²; a quarter of the vehicle's ``accel`` (m/s²) is asked."""
    if accel is None or not accel > 0:
        return MIN_SPAN
    return max(MIN_SPAN, math.sqrt(8.0 * max(margin - allowance, 0.0) / accel))


def world_points(vertices: np.ndarray, position, rotation, scale: float) -> np.ndarray:
    """Body-frame vertices (metres) at a world pose (scene units)."""
    return np.asarray(position, dtype=float) + (np.asarray(vertices, dtype=float) / scale) @ np.asarray(rotation).T


def real_clearance(shape, vertices: np.ndarray, position, rotation, scale: float) -> float:
    """The least signed distance (metres) of the vehicle's real geometry to an obstacle shape."""
    return float(np.min(shape.distance(world_points(vertices, position, rotation, scale)))) * scale


def _poses(trajectory, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions and rotation matrices at ``times`` as the bake places them (core.shot.resample's curve)."""
    smp = sample(trajectory, np.asarray(times, dtype=float))
    return smp.position, smp.rotation


def deepest(problem, trajectory) -> tuple[float, float, str] | None:
    """(clearance m, frame, obstacle label) of the real geometry at its deepest, over the baked frames
    within a contact's span of it and that contact's obstacle; None without contacts or geometry.
    ``trajectory`` is the solved motion in world coordinates (scene units) of the point the solve plans
    (its first node at the problem's start frame)."""
    vertices = getattr(problem, "vertices", None)
    contacts = getattr(problem, "contacts", None)
    if vertices is None or not len(vertices) or not contacts:
        return None
    fm = problem.frame_map
    frames = bake_frames(fm.frame_start, fm.frame_end, fm.key_frames)
    worst = None
    for c in contacts:
        near = frames[np.abs(frames - c.frame) <= c.span * fm.fps + 1e-6]
        if not len(near):
            continue
        pos, rot = _poses(trajectory, (near - fm.frame_start) / fm.fps)
        shape = problem.obstacles[c.obstacle]
        for f, p, r in zip(near, pos, rot):
            d = real_clearance(shape, vertices, p, r, fm.scale)
            if worst is None or d < worst[0]:
                worst = (d, float(f), shape.label())
    return worst


def check_motion(problem, trajectory) -> list[str]:
    """Warnings when the solved motion's real geometry goes deeper than ``TOLERANCE`` into an obstacle
    it touches (the solver keeps the collision spheres out; near a contact their floor is lowered)."""
    worst = deepest(problem, trajectory)
    if worst is None or worst[0] >= -TOLERANCE:
        return []
    d, frame, label = worst
    return [f"'{problem.vehicle}' reaches {-d * 100:.3g} cm into {label} at frame {fmt_frame(frame)} (its mesh; "
            f"a contact may touch by {TOLERANCE * 100:g} cm): key the touching pose later or set a finer Node Spacing"]


__all__ = ["Contact", "TOLERANCE", "SLACK", "MIN_SPAN", "span_for", "world_points", "real_clearance", "deepest",
           "check_motion"]
