"""Each vehicle's discrete dynamics as DMOC residuals, vectorised over the steps.

A model owns its block of the decision vector (poses on the group, velocities, shape
variables, controls, and the duration ``T`` shared by all: h = T/N), the groups of its
integrator's update equations, its start/goal handling and its Trajectory output.
:class:`Model` holds what every vehicle shares: the pose chart seen by obstacles and
waypoints (a body point → a world point, with its Jacobian), and the bookkeeping of
fixed variables and bounds.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..problem import Group, Layout

MODELS: dict[str, str] = {"car": "car", "helicopter": "helicopter", "boat": "boat", "snakeboard": "snakeboard"}


class Model:
    """Base class. Subclasses set ``vehicle``, ``inputs``, ``shape``, ``pose_dim`` and build their layout."""

    vehicle = ""
    inputs: tuple[str, ...] = ()
    shape: tuple[str, ...] = ()
    pose_dim = 3
    position_dim = 3
    se3 = False
    default_collision_radius = 0.5
    # a 3D model that keeps to the water surface: its initial guess goes round obstacles, not over them
    # (core.dmoc.initial_guess)
    on_surface = False

    def __init__(self, steps: int, alpha: float = 0.5):
        self.N = int(steps)
        self.alpha = float(alpha)
        self.layout = Layout()
        self.T = int(self.layout.add("T", ()))
        self.size_hint = 0

    # -- arrays over the layout ------------------------------------------------------------------
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        n = self.layout.size
        return np.zeros(n), np.zeros(n, dtype=bool), np.full(n, -np.inf), np.full(n, np.inf)

    # -- the pose chart (overridden by SE(3) models) -------------------------------------------
    @property
    def pose_idx(self) -> np.ndarray:
        """(N+1, pose_dim) indices of the pose coordinates at every node."""
        raise NotImplementedError

    def pose_params(self, nodes: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per-node constants of the chart (SE(3): the reference rotation R̄_k)."""
        return ()

    def point_map(self, X: np.ndarray, body: np.ndarray, *ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World position of body points (B, 3) at poses X (B, pose_dim), and ∂/∂X (B, 3, pose_dim)."""
        raise NotImplementedError

    def point_curvature(self, X: np.ndarray, body: np.ndarray, w: np.ndarray, *ref: np.ndarray) -> np.ndarray:
        """Σ_i w_i ∇²p_i (..., B, pose_dim, pose_dim): the second derivatives of the body point map contracted
        with a world vector w (..., B, 3); leading axes of w (several obstacles' gradients at the same
        points) broadcast, so the pose-only factors are formed once."""
        raise NotImplementedError

    # -- hooks ---------------------------------------------------------------------------------
    def dynamics(self) -> list[Group]:
        raise NotImplementedError

    def presolve_checks(self) -> list[Callable[[], str]]:
        return []

    def recentre(self, y: np.ndarray) -> bool:
        """SE(3) models move their chart centres to the current poses; False when nothing moved."""
        return False

    def describe(self) -> dict[str, Any]:
        return {"vehicle": self.vehicle, "steps": self.N}


def se2_point_map(X: np.ndarray, body: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SE(2) pose (θ, x, y): p = (x + cos θ b_x − sin θ b_y, y + sin θ b_x + cos θ b_y, b_z)."""
    th = X[:, 0]
    c, s = np.cos(th), np.sin(th)
    bx, by = body[:, 0], body[:, 1]
    cbx, sby, sbx, cby = c * bx, s * by, s * bx, c * by  # each product once (p and ∂p/∂θ share them)
    B = X.shape[0]
    p = np.empty((B, 3))
    np.subtract(np.add(X[:, 1], cbx, out=p[:, 0]), sby, out=p[:, 0])
    np.add(np.add(X[:, 2], sbx, out=p[:, 1]), cby, out=p[:, 1])
    np.add(body[:, 2], 0.0 * th, out=p[:, 2])  # b_z, with θ's NaN/inf carried
    J = np.zeros((B, 3, 3))
    np.subtract(-sbx, cby, out=J[:, 0, 0])
    np.subtract(cbx, sby, out=J[:, 1, 0])
    J[:, 0, 1] = 1.0
    J[:, 1, 2] = 1.0
    return p, J


def se2_point_curvature(X: np.ndarray, body: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Σ_i w_i ∇²p_i of :func:`se2_point_map`: only ∂²/∂θ² = −(p − (x, y, b_z)) is nonzero (w (..., B, 3))."""
    th = X[:, 0]
    c, s = np.cos(th), np.sin(th)
    bx, by = body[:, 0], body[:, 1]
    H = np.zeros(w.shape[:-1] + (3, 3))
    np.subtract(-w[..., 0] * (c * bx - s * by), w[..., 1] * (s * bx + c * by), out=H[..., 0, 0])
    return H


__all__ = ["Model", "MODELS", "se2_point_map", "se2_point_curvature"]
