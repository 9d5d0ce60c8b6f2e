"""Johnson & Murphey's recursions (2)–(10), literally, with and without caching (Johnson & Murphey
2009, §III-B–E).

Each quantity of frame k — g_{s,k}, its first and second q-derivatives, the body velocity v̂_k and
its derivatives in q and q̇ — is computed from its parent's by the piecewise recursions of the paper
(one case where q_i is frame k's own variable, "i = k", another where it is not), vectorised over
the configuration variables: an (n, 4, 4) array holds ∂/∂q_i for every i, zero where i ∉ anc(k).
g_k⁻¹(x) = g_k(−x), so g⁻¹′ = −g′(−x) and g⁻¹″ = g″(−x). Eq. (7) is taken as the derivative of (6):

    ∂_j∂_i v̂_k = g⁻¹ ∂_j∂_i v̂_par g                              (i ≠ k ≠ j)
               = g⁻¹′ ∂_j v̂_par g + g⁻¹ ∂_j v̂_par g′             (i = k ≠ j, and symmetrically)
               = g⁻¹″ v̂_par g + 2 g⁻¹′ v̂_par g′ + g⁻¹ v̂_par g″   (i = k = j)

With ``cache=True`` every frame's values are computed once from its parent's memoised values (the
paper's caching); with ``cache=False`` every request recurses to the world frame again (the paper's
uncached implementation, its Fig. 7 dashed line). The production path is :class:`.frames.Kinematics`
(closed form, ``docs/equations.md``, "Tree integrator"); this module serves the caching benchmark and
checks it independently. Not batched: q is a single configuration.
"""
from __future__ import annotations

from functools import cached_property
from typing import Callable, Iterable

import numpy as np

from ..lie import se3
from .frames import Points, Tree, primitive_derivatives


class RecursiveKinematics:
    """Same attributes as :class:`.frames.Kinematics`, computed by Johnson & Murphey's recursions."""

    def __init__(self, tree: Tree, q: np.ndarray, dq: np.ndarray | None = None,
                 bodies: Iterable[int] | None = None, points: Points | None = None, cache: bool = True):
        self.tree = tree
        self.q = np.asarray(q, dtype=float)
        if self.q.shape != (tree.n,):
            raise ValueError(f"q must have shape ({tree.n},), got {self.q.shape}")
        self.dq = np.zeros(tree.n) if dq is None else np.asarray(dq, dtype=float)
        K = len(tree.names)
        self.bodies = np.arange(1, K) if bodies is None else np.asarray(list(bodies), dtype=int)
        self.points = Points(np.arange(K)) if points is None else points
        self._memo: dict | None = {} if cache else None
        n = tree.n
        self._z1 = np.zeros((n, 4, 4))
        self._z2 = np.zeros((n, n, 4, 4))

    # -- memoisation ---------------------------------------------------------------
    def _get(self, name: str, k: int, fn: Callable[[int], np.ndarray]) -> np.ndarray:
        if self._memo is None:
            return fn(k)
        key = (name, k)
        if key not in self._memo:
            self._memo[key] = fn(k)
        return self._memo[key]

    def _local(self, k: int) -> tuple[np.ndarray, ...]:
        """(g, g', g'', g⁻¹, g⁻¹', g⁻¹'') of frame k's local transform (§III-D)."""
        def make(k: int) -> tuple[np.ndarray, ...]:
            t = self.tree
            i = t.frame_var[k]
            if i < 0:
                g = t.local[k]
                z = np.zeros((4, 4))
                return g, z, z, se3.inverse(g), z, z
            x = self.q[i]
            g, d1, d2 = primitive_derivatives(t.var_kind[i], x)
            gi, e1, e2 = primitive_derivatives(t.var_kind[i], -x)
            return g, d1, d2, gi, -e1, e2
        return self._get("local", k, make)

    # -- eqs. (2)–(4) ----------------------------------------------------------------
    def g(self, k: int) -> np.ndarray:
        def make(k: int) -> np.ndarray:
            if k == 0:
                return np.eye(4)
            return self.g(self.tree.parent[k]) @ self._local(k)[0]
        return self._get("g", k, make)

    def dg(self, k: int) -> np.ndarray:
        def make(k: int) -> np.ndarray:
            if k == 0:
                return self._z1
            p, i = self.tree.parent[k], self.tree.frame_var[k]
            g, d1 = self._local(k)[:2]
            out = self.dg(p) @ g
            if i >= 0:
                out = out.copy()
                out[i] = self.g(p) @ d1
            return out
        return self._get("dg", k, make)

    def d2g(self, k: int) -> np.ndarray:
        def make(k: int) -> np.ndarray:
            if k == 0:
                return self._z2
            p, i = self.tree.parent[k], self.tree.frame_var[k]
            g, d1, d2 = self._local(k)[:3]
            out = self.d2g(p) @ g
            if i >= 0:
                row = self.dg(p) @ d1
                out = out.copy()
                out[i, :] = row
                out[:, i] = row
                out[i, i] = self.g(p) @ d2
            return out
        return self._get("d2g", k, make)

    # -- eqs. (5)–(10) ---------------------------------------------------------------
    def vhat(self, k: int) -> np.ndarray:
        def make(k: int) -> np.ndarray:
            if k == 0:
                return np.zeros((4, 4))
            t = self.tree
            p, i = t.parent[k], t.frame_var[k]
            g, _, _, gi = self._local(k)[:4]
            out = gi @ self.vhat(p) @ g
            if i >= 0:
                out = out + se3.hat(t.twists[i]) * self.dq[i]
            return out
        return self._get("vhat", k, make)

    def dvhat(self, k: int) -> np.ndarray:
        def make(k: int) -> np.ndarray:
            if k == 0:
                return self._z1
            p, i = self.tree.parent[k], self.tree.frame_var[k]
            g, d1, _, gi, e1, _ = self._local(k)
            out = gi @ self.dvhat(p) @ g
            if i >= 0:
                vp = self.vhat(p)
                out = out.copy()
                out[i] = e1 @ vp @ g + gi @ vp @ d1
            return out
        return self._get("dvhat", k, make)

    def d2vhat(self, k: int) -> np.ndarray:
        def make(k: int) -> np.ndarray:
            if k == 0:
                return self._z2
            p, i = self.tree.parent[k], self.tree.frame_var[k]
            g, d1, d2, gi, e1, e2 = self._local(k)
            out = gi @ self.d2vhat(p) @ g
            if i >= 0:
                dvp, vp = self.dvhat(p), self.vhat(p)
                row = e1 @ dvp @ g + gi @ dvp @ d1
                out = out.copy()
                out[i, :] = row
                out[:, i] = row
                out[i, i] = e2 @ vp @ g + 2.0 * e1 @ vp @ d1 + gi @ vp @ d2
            return out
        return self._get("d2vhat", k, make)

    def dvhat_ddq(self, k: int) -> np.ndarray:
        def make(k: int) -> np.ndarray:
            if k == 0:
                return self._z1
            t = self.tree
            p, i = t.parent[k], t.frame_var[k]
            g, _, _, gi = self._local(k)[:4]
            out = gi @ self.dvhat_ddq(p) @ g
            if i >= 0:
                out = out.copy()
                out[i] = se3.hat(t.twists[i])
            return out
        return self._get("dvhat_ddq", k, make)

    def d2vhat_mixed(self, k: int) -> np.ndarray:
        """[i, j] = ∂²v̂_k/∂q_i∂q̇_j (eq. 10)."""
        def make(k: int) -> np.ndarray:
            if k == 0:
                return self._z2
            p, i = self.tree.parent[k], self.tree.frame_var[k]
            g, d1, _, gi, e1, _ = self._local(k)
            out = gi @ self.d2vhat_mixed(p) @ g
            if i >= 0:
                ddp = self.dvhat_ddq(p)
                out = out.copy()
                out[i, :] = e1 @ ddp @ g + gi @ ddp @ d1
            return out
        return self._get("d2vhat_mixed", k, make)

    # -- the attributes of frames.Kinematics ---------------------------------------------
    @cached_property
    def G(self) -> np.ndarray:
        return np.stack([self.g(k) for k in range(len(self.tree.names))])

    def _homogeneous_offsets(self) -> np.ndarray:
        return np.concatenate([self.points.offsets, np.ones((len(self.points), 1))], axis=1)

    @cached_property
    def p(self) -> np.ndarray:
        r = self._homogeneous_offsets()
        return np.stack([(self.g(k) @ r[a])[:3] for a, k in enumerate(self.points.frames)])

    @cached_property
    def dp(self) -> np.ndarray:
        r = self._homogeneous_offsets()
        return np.stack([(self.dg(k) @ r[a])[..., :3] for a, k in enumerate(self.points.frames)])

    @cached_property
    def d2p(self) -> np.ndarray:
        r = self._homogeneous_offsets()
        return np.stack([(self.d2g(k) @ r[a])[..., :3] for a, k in enumerate(self.points.frames)])

    @cached_property
    def v(self) -> np.ndarray:
        return np.stack([se3.vee(self.vhat(k)) for k in self.bodies])

    @cached_property
    def J(self) -> np.ndarray:
        return np.stack([se3.vee(self.dvhat_ddq(k)) for k in self.bodies])

    @cached_property
    def dv(self) -> np.ndarray:
        return np.stack([se3.vee(self.dvhat(k)) for k in self.bodies])

    @cached_property
    def d2v(self) -> np.ndarray:
        return np.stack([se3.vee(self.d2vhat(k)) for k in self.bodies])

    @cached_property
    def d2v_mixed(self) -> np.ndarray:
        return np.stack([se3.vee(self.d2vhat_mixed(k)) for k in self.bodies])

    def d2p_dot(self, f: np.ndarray) -> np.ndarray:
        return np.einsum("kjla,ka->jl", self.d2p, f)

    def d2v_dot(self, mu: np.ndarray) -> np.ndarray:
        return np.einsum("kjla,ka->jl", self.d2v, mu)

    def d2v_mixed_dot(self, mu: np.ndarray) -> np.ndarray:
        return np.einsum("kija,ka->ij", self.d2v_mixed, mu)
