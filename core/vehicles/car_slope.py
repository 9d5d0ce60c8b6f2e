"""The slope's force on the car's drive: gravity on a terrain z = h(x, y) as a torque on the rear wheel.

The car's path is planned in the ground plane (Kobilarov, Crane & Desbrun 2009, §5.2.1;
``core.vehicles.car``); a terrain adds the potential V = m g h(x, y) to its Lagrangian. Through the
rolling constraint (dx, dy) = ρ (cos θ, sin θ) dψ its generalised force on the wheel angle ψ is

    G(θ, x, y) = −m g ρ (h_x cos θ + h_y sin θ)   (N·m):

m g ρ times the ground's gradient along the heading, braking uphill and driving downhill. The
planar inertia is kept (the small-slope model: against a car rolling on the 3-D surface its error is
O(s²) relative in the grade s). The integrator applies G at the nodes; docs/equations.md, "Car with
simple dynamics", has the derivation, the discrete force and the error.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ScenarioError
from ..integrators.common import GRAVITY

if TYPE_CHECKING:
    from ..terrain.surface import Terrain
    from .car import Car

Array = np.ndarray


def check_terrain(terrain: Any, with_hessian: bool = False) -> None:
    """A terrain answers ``gradient(x, y)`` (and ``hessian(x, y)`` where a Jacobian is formed)."""
    for name in ("gradient", "hessian") if with_hessian else ("gradient",):
        if not callable(getattr(terrain, name, None)):
            raise ScenarioError("terrain", f"must have a {name}(x, y) method (core.terrain.Terrain), "
                                f"got {type(terrain).__name__}")


def slope_torque(car: "Car", terrain: "Terrain", theta: Array, x: Array, y: Array) -> Array:
    """G = −m g ρ ∇h(x, y)·(cos θ, sin θ) (N·m), broadcast over the arguments."""
    grad = terrain.gradient(x, y)
    return (-car.mass * GRAVITY * car.wheel_radius) * (grad[..., 0] * np.cos(theta) + grad[..., 1] * np.sin(theta))


def slope_torque_float(car: "Car", terrain: "Terrain", theta: float, x: float, y: float) -> float:
    """:func:`slope_torque` at one node in Python floats (the single-car path of ``simulate``)."""
    # a terrain broadcasts over any array-likes (module core.terrain.surface), a float is a 0-d point; the
    # Terrain protocol spells its arguments np.ndarray, and np.asarray here would cost the single-car path
    gx, gy = np.reshape(terrain.gradient(x, y), 2).tolist()   # type: ignore[arg-type]
    return (-car.mass * GRAVITY * car.wheel_radius) * (gx * math.cos(theta) + gy * math.sin(theta))


def slope_torque_partials(car: "Car", terrain: "Terrain", theta: Array, x: Array, y: Array) -> tuple[Array, Array]:
    """G and its gradient ∂G/∂(θ, x, y), stacked on a leading axis of 3:

        ∂G/∂θ = −m g ρ (h_y cos θ − h_x sin θ),   ∂G/∂(x, y) = −m g ρ ∇²h (cos θ, sin θ).
    """
    grad = terrain.gradient(x, y)
    hess = terrain.hessian(x, y)
    c, s = np.cos(theta), np.sin(theta)
    k = -car.mass * GRAVITY * car.wheel_radius
    G = k * (grad[..., 0] * c + grad[..., 1] * s)
    dG = np.stack(np.broadcast_arrays(k * (grad[..., 1] * c - grad[..., 0] * s),
                                      k * (hess[..., 0, 0] * c + hess[..., 0, 1] * s),
                                      k * (hess[..., 1, 0] * c + hess[..., 1, 1] * s)))
    return G, dG


def slope_energy(car: "Car", terrain: "Terrain", x: Array, y: Array) -> Array:
    """The potential m g h(x, y) (J) that the slope force derives from."""
    return car.mass * GRAVITY * terrain.height(x, y)


__all__ = ["check_terrain", "slope_torque", "slope_torque_float", "slope_torque_partials", "slope_energy"]
