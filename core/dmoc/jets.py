"""Second-order forward-mode jets, vectorised over a batch: exact Hessians of small explicit updates.

A :class:`Jet` carries a batch of values v (B,), their gradients g (B, n) and Hessians H (B, n, n)
with respect to n independent variables. Arithmetic follows the chain rule to second order:

    (a b)'' = a b'' + b a'' + a' b'ᵀ + b' a'ᵀ,   (1/b)'' = −b''/b² + 2 b' b'ᵀ/b³,
    φ(a)''  = φ'(a) a'' + φ''(a) a' a'ᵀ.

Used for the Lagrangian Hessians of explicit per-step updates (the momentum maps C_τ(hξ)ᵀ𝕀ξ of
the holonomic vehicles, ``models/holonomic.py``; the tests check the car's closed-form Hessian
against them): Σ_i λ_i ∇²Φ_i is the H of the jet Σ_i λ_i Φ_i (λ constants per instance), exact
to rounding. Constants (floats or (B,) arrays) mix freely with jets.

:class:`RationalMap` gives the exact first and second derivatives of the Cayley-type rotation maps
(cay, B_cay) in closed form, for the multilinear pose update of eq. (9) (``models/holonomic.py``).
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
    __array_ufunc__ = None  # ndarray ∘ Jet defers to the Jet's reflected operator (never an object array)

    def __init__(self, v: np.ndarray, g: np.ndarray, H: np.ndarray | None):
        self.v, self.g, self.H = v, g, H

    @staticmethod
    def variables(X: np.ndarray) -> list["Jet"]:
        """The columns of X (B, n) as n independent variables."""
        B, n = X.shape
        E = np.repeat(np.eye(n)[None], B, axis=0)  # one array whose rows are the unit gradients (never written)
        V = X.T.astype(float)
        return [Jet(V[i], E[:, i], None) for i in range(n)]

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
        if isinstance(o, Jet):  # a − b is exactly a + (−b), without forming −b
            H = self.H if o.H is None else (-o.H if self.H is None else self.H - o.H)
            return Jet(self.v - o.v, self.g - o.g, H)
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


def dot(u, v):
    """Σ_i u_i v_i of two 3-sequences whose entries are jets or constants ((B,) arrays)."""
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


def cross(u, v) -> list:
    """u × v of two 3-sequences whose entries are jets or constants ((B,) arrays)."""
    return [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]


# ------------------------------------------------------------------------------------------------
# Rational rotation maps: exact second derivatives without jets
# ------------------------------------------------------------------------------------------------
_I3 = np.eye(3)
_HAT_E = np.array([[[0, 0, 0], [0, 0, -1], [0, 1, 0]], [[0, 0, 1], [0, 0, 0], [-1, 0, 0]],
                   [[0, -1, 0], [1, 0, 0], [0, 0, 0]]], dtype=float)  # ê_i, (3, 3, 3)

# Φ(w) = c0 I + s (c1 I + c2 ŵ + c3 wwᵀ), s = 4/(4 + |w|²)  (equations.md, "Holonomic vehicles"):
CAY_FORM = (-1.0, 2.0, 1.0, 0.5)      # cay(w) = I + s(ŵ + ŵ²/2) = (2s − 1) I + s ŵ + (s/2) wwᵀ
B_CAY_FORM = (0.0, 1.0, 0.5, 0.25)    # B_cay(w) = (4I + 2ŵ + wwᵀ)/(4 + |w|²)
B_CAY_PAPER_FORM = (0.0, 1.0, 0.5, 0.0)  # B_cay_paper(w) = 2/(4 + |w|²)(2I + ŵ)


class RationalMap:
    """Φ(w) = c0 I + s(w) P(w), P = c1 I + c2 ŵ + c3 wwᵀ, s = 4/(4 + |w|²), batched over w (B, 3):
    the Cayley map and the translation blocks B of the Cayley pairings (``CAY_FORM``, ``B_CAY_FORM``,
    ``B_CAY_PAPER_FORM``). Gives Φ (B, 3, 3), ∂Φ/∂w_i (B, 3, 3, 3) and, for a weight matrix G, the
    gradient and Hessian of ⟨G, Φ(w)⟩ = c0 tr G + s q(w) with q = ⟨G, P⟩ = c1 tr G + c2 k·w + c3 wᵀGw,
    k_i = ⟨G, ê_i⟩:

        ∇s = −s² w/2,   ∇²s = s³ wwᵀ/2 − s² I/2,   ∇q = c2 k + c3 (G + Gᵀ) w,   ∇²q = c3 (G + Gᵀ),
        ∇⟨G, Φ⟩ = q ∇s + s ∇q,   ∇²⟨G, Φ⟩ = q ∇²s + ∇s ∇qᵀ + ∇q ∇sᵀ + s ∇²q.
    """

    def __init__(self, w: np.ndarray, form: tuple[float, float, float, float]):
        c0, c1, c2, c3 = form
        self.w, self.c2, self.c3 = w, c2, c3
        t = np.einsum("bi,bi->b", w, w)
        s = 4.0 / (4.0 + t)
        self.s = s
        self.ds = (-0.5 * s * s)[:, None] * w
        ww = w[:, :, None] * w[:, None, :]
        self.d2s = (0.5 * s**3)[:, None, None] * ww - (0.5 * s * s)[:, None, None] * _I3
        what = np.einsum("kij,bk->bij", _HAT_E, w)
        self.P = c1 * _I3 + c2 * what + c3 * ww
        self.value = c0 * _I3 + s[:, None, None] * self.P
        ew = _I3[None, :, :, None] * w[:, None, None, :]          # e_i wᵀ, (B, i, 3, 3)
        dP = c2 * _HAT_E[None] + c3 * (ew + np.swapaxes(ew, 2, 3))
        self.d = self.ds[:, :, None, None] * self.P[:, None] + s[:, None, None, None] * dP

    def _q(self, G: np.ndarray):
        k = np.stack([G[:, 2, 1] - G[:, 1, 2], G[:, 0, 2] - G[:, 2, 0], G[:, 1, 0] - G[:, 0, 1]], axis=1)
        Gs = G + np.swapaxes(G, 1, 2)
        q = np.einsum("bij,bij->b", G, self.P)
        gq = self.c2 * k + self.c3 * np.einsum("bij,bj->bi", Gs, self.w)
        return q, gq, Gs

    def gradient(self, G: np.ndarray) -> np.ndarray:
        """∇_w ⟨G, Φ(w)⟩ (B, 3)."""
        q, gq, _ = self._q(G)
        return q[:, None] * self.ds + self.s[:, None] * gq

    def hessian(self, G: np.ndarray) -> np.ndarray:
        """∇²_w ⟨G, Φ(w)⟩ (B, 3, 3), symmetric."""
        q, gq, Gs = self._q(G)
        o = self.ds[:, :, None] * gq[:, None, :]
        return (q[:, None, None] * self.d2s + o + np.swapaxes(o, 1, 2)
                + (self.c3 * self.s)[:, None, None] * Gs)


__all__ = ["Jet", "sin", "cos", "sinc", "dot", "cross", "RationalMap", "CAY_FORM", "B_CAY_FORM",
           "B_CAY_PAPER_FORM"]
