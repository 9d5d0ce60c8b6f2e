"""Second-order forward-mode jets, vectorised over a batch: exact Hessians of small explicit updates.

A :class:`Jet` carries a batch of values v (B,), their gradients g (B, n) and Hessians H (B, n, n)
with respect to n independent variables. Arithmetic follows the chain rule to second order:

    (a b)'' = a b'' + b a'' + a' b'ᵀ + b' a'ᵀ,   (1/b)'' = −b''/b² + 2 b' b'ᵀ/b³,
    φ(a)''  = φ'(a) a'' + φ''(a) a' a'ᵀ.

Used for the Lagrangian Hessians of explicit per-step updates (the car's, ``models/car.py``):
Σ_i λ_i ∇²Φ_i is the H of the jet Σ_i λ_i Φ_i (λ constants per instance), exact to rounding.
Constants (floats or (B,) arrays) mix freely with jets.
"""
from __future__ import annotations

from typing import Callable

import numpy as np


def _outer2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """2 a bᵀ per instance (B, n, n): stands for a bᵀ + b aᵀ, see :class:`Jet`."""
    return (2.0 * a)[:, :, None] * b[:, None, :]


def _add(A, B):
    if A is None:
        return B
    if B is None:
        return A
    return A + B


class Jet:
    """Value, gradient and Hessian of a batch of scalars (see the module docstring); H = None is a zero
    Hessian (an affine function of the variables), which the arithmetic skips.

    H is carried *unsymmetrised*: the product rule adds 2 a′b′ᵀ for a′b′ᵀ + b′a′ᵀ, and every later
    operation is linear in H, so the true Hessian is the symmetric part (H + Hᵀ)/2, which
    :meth:`hessian` returns."""

    __slots__ = ("v", "g", "H")

    def __init__(self, v: np.ndarray, g: np.ndarray, H: np.ndarray | None):
        self.v, self.g, self.H = v, g, H

    @staticmethod
    def variables(X: np.ndarray) -> list["Jet"]:
        """The columns of X (B, n) as n independent variables."""
        B, n = X.shape
        eye = np.eye(n)
        return [Jet(X[:, i].astype(float), np.broadcast_to(eye[i], (B, n)), None) for i in range(n)]

    def hessian(self) -> np.ndarray:
        """The symmetric Hessian (B, n, n)."""
        if self.H is None:
            return np.zeros(self.g.shape + self.g.shape[-1:])
        return 0.5 * (self.H + np.swapaxes(self.H, 1, 2))

    # -- arithmetic ----------------------------------------------------------------------------
    def __neg__(self) -> "Jet":
        return Jet(-self.v, -self.g, None if self.H is None else -self.H)

    def __add__(self, o) -> "Jet":
        if isinstance(o, Jet):
            return Jet(self.v + o.v, self.g + o.g, _add(self.H, o.H))
        return Jet(self.v + o, self.g, self.H)

    __radd__ = __add__

    def __sub__(self, o) -> "Jet":
        if isinstance(o, Jet):
            return self + (-o)
        return Jet(self.v - o, self.g, self.H)

    def __rsub__(self, o) -> "Jet":
        return (-self) + o

    def scale(self, s) -> "Jet":
        """s · self for a constant s (float or (B,))."""
        s = np.asarray(s, dtype=float)
        if s.ndim == 0:
            return Jet(s * self.v, s * self.g, None if self.H is None else s * self.H)
        return Jet(s * self.v, s[:, None] * self.g, None if self.H is None else s[:, None, None] * self.H)

    def __mul__(self, o) -> "Jet":
        if not isinstance(o, Jet):
            return self.scale(o)
        a, b = self, o
        H = _outer2(a.g, b.g)
        if b.H is not None:
            H += a.v[:, None, None] * b.H
        if a.H is not None:
            H += b.v[:, None, None] * a.H
        return Jet(a.v * b.v, a.v[:, None] * b.g + b.v[:, None] * a.g, H)

    __rmul__ = __mul__

    def reciprocal(self) -> "Jet":
        r = 1.0 / self.v
        r2 = r * r
        return self.apply(r, -r2, 2.0 * r2 * r)

    def __truediv__(self, o) -> "Jet":
        if not isinstance(o, Jet):
            return self.scale(1.0 / np.asarray(o, dtype=float))
        return self * o.reciprocal()

    def __rtruediv__(self, o) -> "Jet":
        return self.reciprocal().scale(o)

    def apply(self, f0: np.ndarray, f1: np.ndarray, f2: np.ndarray) -> "Jet":
        """φ(self) from φ, φ′, φ″ evaluated at self.v (each (B,))."""
        H = f2[:, None, None] * (self.g[:, :, None] * self.g[:, None, :])
        if self.H is not None:
            H += f1[:, None, None] * self.H
        return Jet(np.asarray(f0, dtype=float), f1[:, None] * self.g, H)


def sin(a: Jet) -> Jet:
    s = np.sin(a.v)
    return a.apply(s, np.cos(a.v), -s)


def cos(a: Jet) -> Jet:
    c = np.cos(a.v)
    return a.apply(c, -np.sin(a.v), -c)


def sinc(a: Jet, dsinc_over_z: Callable[[np.ndarray], np.ndarray]) -> Jet:
    """sin z / z with φ′ = z g(z²) and φ″ = −sinc z − 2 g(z²), g = (cos z − sinc z)/z² given by the
    caller as a function of z² that is finite at 0 (a series there)."""
    z = a.v
    zz = np.where(z == 0.0, 1.0, z)
    s = np.where(z == 0.0, 1.0, np.sin(zz) / zz)
    gz = dsinc_over_z(z * z)
    return a.apply(s, z * gz, -s - 2.0 * gz)


__all__ = ["Jet", "sin", "cos", "sinc"]
