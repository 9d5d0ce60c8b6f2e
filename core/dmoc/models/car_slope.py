"""The car's DMOC update equations on a terrain: the slope's torque G (``core.vehicles.car_slope``).

Over the dynamics group's locals (s_k, u_k, s_{k+1}, T), h = T/N, with G_k = G(θ_k, x_k, y_k) and
G_{k+1} = G(θ_{k+1}, x_{k+1}, y_{k+1}) read from the node variables:

    s_{k+1} − Φ_h(s_k, f_k + G_k, w_k) − e_p hα (G_{k+1} − G_k) = 0,

Φ the flat update (the fused values and Jacobian of ``core.dmoc.models.car``) at the torque f + G_k:
the car's update on a terrain (``core.vehicles.car``, "Terrain"; docs/equations.md, "Car with simple
dynamics") with G_{k+1} at the next node's variables instead of at Φ's pose — the same equations
wherever they hold, and a Jacobian that needs only the terrain's gradient and Hessian at the two
nodes. The Hessian is left to the NLP's central differences of this exact Jacobian: the slope's
second derivatives in (x, y) would need the terrain's third.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...vehicles import car as carlib
from ...vehicles.car_slope import check_terrain, slope_torque, slope_torque_partials
from ..problem import Group

if TYPE_CHECKING:
    from ...terrain.surface import Terrain

PSI, SIG, TH, X, Y, P = range(6)
F, W, T = 6, 7, 14
POSE_K = [TH, X, Y]                     # (θ, x, y) of s_k among the locals
POSE_K1 = [8 + TH, 8 + X, 8 + Y]        # … of s_{k+1}


def slope_mask(flat: np.ndarray) -> np.ndarray:
    """The flat group's structural nonzeros (6, 15) and the slope's: G_k enters wherever the torque
    does, and p's row takes G_k, G_{k+1} and T."""
    mask = flat.copy()
    mask[np.ix_(mask[:, F], POSE_K)] = True
    mask[P, POSE_K + POSE_K1 + [T]] = True
    return mask


def slope_dynamics(car: carlib.Car, terrain: Terrain, idx: np.ndarray, flat_mask: np.ndarray, N: int, alpha: float,
                   free_T: bool, nonlinear: np.ndarray, labels: list[str]) -> Group:
    """The dynamics group (module docstring) over the flat group's locals ``idx`` (N, 15)."""
    from .car import _LastStep, _jacobian_block, _residuals

    check_terrain(terrain, with_hessian=True)
    last = _LastStep()                  # the flat values' intermediates, for the Jacobian at the same point

    def shifted(Xl: np.ndarray, g0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The locals with f + G_k in the torque's column, and hα (h = T/N)."""
        Xf = Xl.copy()
        Xf[:, F] += g0
        return Xf, (Xl[:, T] / N) * alpha

    def fun(Xl):
        g0 = slope_torque(car, terrain, Xl[:, TH], Xl[:, X], Xl[:, Y])
        g1 = slope_torque(car, terrain, Xl[:, 8 + TH], Xl[:, 8 + X], Xl[:, 8 + Y])
        Xf, ha = shifted(Xl, g0)
        out = _residuals(car, Xf, N, alpha, last)
        out[:, P] -= ha * (g1 - g0)
        return out

    def jac(Xl):
        g0, dg0 = slope_torque_partials(car, terrain, Xl[:, TH], Xl[:, X], Xl[:, Y])
        g1, dg1 = slope_torque_partials(car, terrain, Xl[:, 8 + TH], Xl[:, 8 + X], Xl[:, 8 + Y])
        Xf, ha = shifted(Xl, g0)
        J = _jacobian_block(car, Xf, N, alpha, free_T, last)
        J[:, :, POSE_K] += J[:, :, F:F + 1] * dg0.T[:, None, :]       # the torque f + G_k(θ_k, x_k, y_k)
        J[:, P, POSE_K] += ha[:, None] * dg0.T
        J[:, P, POSE_K1] -= ha[:, None] * dg1.T
        if free_T:
            J[:, P, T] -= (alpha / N) * (g1 - g0)
        return J

    return Group("dynamics", idx, fun, slope_mask(flat_mask), jac=jac, nonlinear=nonlinear | _pose_columns(),
                 labels=labels)


def _pose_columns() -> np.ndarray:
    cols = np.zeros(15, dtype=bool)
    cols[POSE_K + POSE_K1] = True
    return cols


__all__ = ["slope_dynamics", "slope_mask"]
