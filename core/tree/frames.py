"""Tree representation of a mechanism (Johnson & Murphey 2009, §III): frames related to their parents.

Every frame is related to its parent (the world frame or another frame) by one of Johnson &
Murphey's six primitive transforms (R1) — a translation along or a rotation about the parent's x,
y or z axis — parameterised by a constant or by its own configuration variable (R2: one variable
per transform), or by a constant SE(3) offset (``fixed``: a position and a unit quaternion), which
composes the constant primitives in one frame.

Conventions of ``docs/equations.md``: twists ξ = (ω, v), angular first (Johnson & Murphey's hat
operator lists the linear part first; only the order differs); body velocity v̂ᵇ = g⁻¹ġ; wrenches
(τ, F). :class:`Kinematics` evaluates, at one configuration (q, q̇) and lazily, each quantity once
(the caching of §III-E: a new configuration is a new object): ``G`` the frames g_{s,k}, eq. (2);
``p``, ``dp``, ``d2p`` body-fixed points and their q-derivatives, eqs. (3)–(4); ``v`` body
velocities, eq. (5), ``J`` = ∂v/∂q̇, eq. (8); ``dv``, ``d2v``, ``d2v_mixed``, eqs. (6), (7), (10).
Johnson & Murphey state (2)–(10) as recursions over the parent; here they are evaluated in their
closed product-of-exponentials form (``docs/equations.md``, "Tree integrator"), vectorised over
frames and variables and batched over a leading shape of q. :mod:`.recursive` evaluates the
literal recursions; the tests check that both agree with each other and with finite differences.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Sequence

import numpy as np

from ..errors import ScenarioError
from ..lie import quaternion, se3

WORLD = "world"
PRIMITIVES: tuple[str, ...] = ("tx", "ty", "tz", "rx", "ry", "rz")
TRANSFORMS: tuple[str, ...] = PRIMITIVES + ("fixed",)
# component of the unit twist (ω, v) that each primitive moves along/about
_TWIST_INDEX = {"rx": 0, "ry": 1, "rz": 2, "tx": 3, "ty": 4, "tz": 5}


def unit_twist(kind: str) -> np.ndarray:
    """The constant twist ξ of a primitive transform: g(x) = exp(ξ̂ x) (§III-D)."""
    xi = np.zeros(6)
    xi[_TWIST_INDEX[kind]] = 1.0
    return xi


def _generators(xi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(K, K², T) with exp(ξ̂x) = I + sin x K + (1 − cos x) K² + x T for unit axis twists ξ."""
    xi = np.asarray(xi, dtype=float)
    rot = np.zeros(xi.shape)
    rot[..., :3] = xi[..., :3]
    lin = np.zeros(xi.shape)
    lin[..., 3:] = xi[..., 3:]
    K = se3.hat(rot)
    return K, K @ K, se3.hat(lin)


def primitive(kind: str, x: float | np.ndarray) -> np.ndarray:
    """g(x) of a primitive transform (e.g. R_z(θ) of §III-D), shape (..., 4, 4)."""
    K, K2, T = _generators(unit_twist(kind))
    x = np.asarray(x, dtype=float)[..., None, None]
    return np.eye(4) + np.sin(x) * K + (1.0 - np.cos(x)) * K2 + x * T


def primitive_derivatives(kind: str, x: float | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(g, g', g'') of a primitive transform (§III-D): g' = g ξ̂, g'' = g ξ̂²."""
    K, K2, T = _generators(unit_twist(kind))
    x = np.asarray(x, dtype=float)[..., None, None]
    s, c = np.sin(x), np.cos(x)
    g = np.eye(4) + s * K + (1.0 - c) * K2 + x * T
    return g, c * K + s * K2 + T, -s * K + c * K2


@dataclass(frozen=True)
class Frame:
    """One frame of the tree: its parent and the transform from it (requirements R1, R2).

    ``transform`` is one of tx, ty, tz, rx, ry, rz (parameterised by the configuration
    variable ``variable`` or, if that is None, by the constant ``value``) or ``fixed``
    (a constant offset: ``position`` and unit quaternion ``orientation`` (w, x, y, z)).
    A ``kinematic`` variable is prescribed (driven by a given trajectory) rather than
    solved for.
    """

    name: str
    parent: str = WORLD
    transform: str = "fixed"
    variable: str | None = None
    value: float = 0.0
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    orientation: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    kinematic: bool = False

    def constant_transform(self) -> np.ndarray:
        """The 4×4 transform of a frame without a variable."""
        if self.transform == "fixed":
            return se3.make(quaternion.to_matrix(np.asarray(self.orientation, dtype=float)),
                            np.asarray(self.position, dtype=float))
        return primitive(self.transform, self.value)


@dataclass(frozen=True)
class _Level:
    frames: np.ndarray    # variable frames at this depth
    variables: np.ndarray  # their variables
    anchors: np.ndarray   # nearest variable-or-world ancestor of each parent
    pre: np.ndarray       # constant transform anchor → parent, (m, 4, 4)


class Tree:
    """A validated, compiled tree of frames (Johnson & Murphey §III).

    Frame 0 is the world frame; the others follow in an order where parents come first.
    ``variables`` lists the configuration variables in the order the frames were given;
    q and q̇ vectors are ordered the same way. Errors name the entry as ``[frames #i] key``.
    """

    def __init__(self, frames: Sequence[Frame]):
        frames = list(frames)
        by_name: dict[str, int] = {}
        for i, f in enumerate(frames):
            where = f"[frames #{i + 1}]"
            if not isinstance(f.name, str) or not f.name:
                raise ScenarioError(f"{where} name", "must be a non-empty string")
            if f.name == WORLD:
                raise ScenarioError(f"{where} name", f"{WORLD!r} is reserved for the world frame")
            if f.name in by_name:
                raise ScenarioError(f"{where} name", f"frame {f.name!r} is defined twice")
            if f.transform not in TRANSFORMS:
                raise ScenarioError(f"{where} transform", f"unknown value {f.transform!r}; expected one of: "
                                    + ", ".join(TRANSFORMS))
            if f.transform == "fixed" and f.variable is not None:
                raise ScenarioError(f"{where} variable", "a fixed frame has no variable")
            if f.kinematic and f.variable is None:
                raise ScenarioError(f"{where} kinematic", "only a frame with a variable can be kinematic")
            by_name[f.name] = i
        variables: dict[str, int] = {}
        for i, f in enumerate(frames):
            if f.parent != WORLD and f.parent not in by_name:
                raise ScenarioError(f"[frames #{i + 1}] parent", f"unknown frame {f.parent!r}")
            if f.variable is not None:
                if not isinstance(f.variable, str) or not f.variable:
                    raise ScenarioError(f"[frames #{i + 1}] variable", "must be a non-empty string")
                if f.variable in variables:
                    raise ScenarioError(f"[frames #{i + 1}] variable", f"variable {f.variable!r} is already used by "
                                        f"frame {frames[variables[f.variable]].name!r} (each variable drives one transform)")
                variables[f.variable] = i
        # cycles: follow parents; a chain longer than the number of frames loops
        for i, f in enumerate(frames):
            seen, name = {f.name}, f.parent
            while name != WORLD:
                if name in seen:
                    raise ScenarioError(f"[frames #{i + 1}] parent", f"frame {f.name!r} is its own ancestor (a cycle "
                                        "through " + " → ".join(sorted(seen)) + ")")
                seen.add(name)
                name = frames[by_name[name]].parent
        # order: world first, then depth-first in the given order (parents before children)
        children: dict[str, list[int]] = {WORLD: []}
        for i, f in enumerate(frames):
            children.setdefault(f.parent, []).append(i)
        order: list[int] = []
        stack = list(reversed(children[WORLD]))
        while stack:
            i = stack.pop()
            order.append(i)
            stack.extend(reversed(children.get(frames[i].name, [])))
        self.frames: list[Frame] = [frames[i] for i in order]
        self.names: list[str] = [WORLD] + [f.name for f in self.frames]
        self.index: dict[str, int] = {n: k for k, n in enumerate(self.names)}
        K = len(self.names)
        self.parent = np.array([-1] + [self.index[f.parent] for f in self.frames], dtype=int)
        self.variables: list[str] = [f.variable for f in frames if f.variable is not None]
        self.var_index: dict[str, int] = {v: i for i, v in enumerate(self.variables)}
        n = len(self.variables)
        self.frame_var = np.full(K, -1, dtype=int)
        self.var_frame = np.zeros(n, dtype=int)
        self.kinematic = np.zeros(n, dtype=bool)
        self.var_kind: list[str] = [""] * n
        for k, f in enumerate(self.frames, start=1):
            if f.variable is not None:
                i = self.var_index[f.variable]
                self.frame_var[k], self.var_frame[i] = i, k
                self.kinematic[i] = f.kinematic
                self.var_kind[i] = f.transform
        self.twists = np.array([unit_twist(t) for t in self.var_kind]).reshape(n, 6)
        self._K, self._K2, self._T = _generators(self.twists)
        self.local = np.repeat(np.eye(4)[None], K, axis=0)   # constant local transforms
        for k, f in enumerate(self.frames, start=1):
            if f.variable is None:
                self.local[k] = f.constant_transform()
        # ancestry: anc[k, i] = variable i drives frame k or one of its ancestors
        self.anc = np.zeros((K, n), dtype=bool)
        self.depth = np.zeros(K, dtype=int)
        for k in range(1, K):
            p = self.parent[k]
            self.anc[k] = self.anc[p]
            self.depth[k] = self.depth[p] + 1
            if self.frame_var[k] >= 0:
                self.anc[k, self.frame_var[k]] = True
        # precedence: P[i, j] = variable i is a strict ancestor of variable j
        self.P = self.anc[self.var_frame].T.copy() if n else np.zeros((0, 0), dtype=bool)
        np.fill_diagonal(self.P, False)
        self.Pe = self.P | np.eye(n, dtype=bool)   # i ≼ j
        self._compile_levels()

    # -- compilation -------------------------------------------------------------------
    def _compile_levels(self) -> None:
        """Anchors (nearest ancestor-or-self with a variable, or the world) and the constant
        transform from the anchor, so that eq. (2) runs over variable frames only."""
        K = len(self.names)
        self.anchor = np.zeros(K, dtype=int)
        self.from_anchor = np.repeat(np.eye(4)[None], K, axis=0)
        vdepth = np.zeros(K, dtype=int)
        for k in range(1, K):
            p = self.parent[k]
            if self.frame_var[k] >= 0:
                self.anchor[k] = k
                vdepth[k] = vdepth[self.anchor[p]] + 1
            else:
                self.anchor[k] = self.anchor[p]
                self.from_anchor[k] = self.from_anchor[p] @ self.local[k]
                vdepth[k] = vdepth[self.anchor[p]]
        levels = []
        var_frames = self.var_frame
        for d in sorted(set(vdepth[var_frames].tolist())):
            fr = var_frames[vdepth[var_frames] == d]
            par = self.parent[fr]
            levels.append(_Level(frames=fr, variables=self.frame_var[fr], anchors=self.anchor[par],
                                 pre=self.from_anchor[par].copy()))
        self._levels = levels
        self._rest = np.array([k for k in range(1, K) if self.frame_var[k] < 0], dtype=int)
        # single configurations: one 4×4 product per variable frame, parents first
        order = [k for k in range(1, K) if self.frame_var[k] >= 0]
        self._chain = [(int(self.frame_var[k]), k, int(self.anchor[self.parent[k]])) for k in order]
        self._pre_all = np.repeat(np.eye(4)[None], len(var_frames), axis=0)
        for i, k in enumerate(var_frames):
            self._pre_all[i] = self.from_anchor[self.parent[k]]

    # -- lookups -------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.variables)

    def frame(self, name: str, where: str) -> int:
        """Index of a frame by name ('world' is 0); unknown names raise ScenarioError at ``where``."""
        if not isinstance(name, str) or name not in self.index:
            raise ScenarioError(where, f"unknown frame {name!r}")
        return self.index[name]

    def variable(self, name: str, where: str) -> int:
        if not isinstance(name, str) or name not in self.var_index:
            raise ScenarioError(where, f"unknown variable {name!r}")
        return self.var_index[name]

    # -- eq. (2) ---------------------------------------------------------------------------
    def variable_transforms(self, q: np.ndarray) -> np.ndarray:
        """g_i(q_i) = exp(ξ̂_i q_i) of every variable frame, shape (..., n, 4, 4)."""
        q = np.asarray(q, dtype=float)[..., None, None]
        return np.eye(4) + np.sin(q) * self._K + (1.0 - np.cos(q)) * self._K2 + q * self._T

    def transforms(self, q: np.ndarray) -> np.ndarray:
        """g_{s,k}(q) of every frame (eq. 2), shape (..., K, 4, 4); frame 0 is the world."""
        q = np.asarray(q, dtype=float)
        if q.shape[-1:] != (self.n,):
            raise ValueError(f"q must have {self.n} entries in its last axis, got shape {q.shape}")
        batch = q.shape[:-1]
        E = self.variable_transforms(q)
        if not batch:
            G = np.empty((len(self.names), 4, 4))
            G[0] = np.eye(4)
            PE = self._pre_all @ E
            for i, k, a in self._chain:
                G[k] = G[a].dot(PE[i])
            if self._rest.size:
                G[self._rest] = G[self.anchor[self._rest]] @ self.from_anchor[self._rest]
            return G
        G = np.empty(batch + (len(self.names), 4, 4))
        G[..., 0, :, :] = np.eye(4)
        for lv in self._levels:
            G[..., lv.frames, :, :] = G[..., lv.anchors, :, :] @ lv.pre @ E[..., lv.variables, :, :]
        if self._rest.size:
            G[..., self._rest, :, :] = G[..., self.anchor[self._rest], :, :] @ self.from_anchor[self._rest]
        return G

    def at(self, q: np.ndarray, dq: np.ndarray | None = None, bodies: Iterable[int] | None = None,
           points: "Points | None" = None) -> "Kinematics":
        """Write a configuration to the tree: a fresh cache (§III-E)."""
        return Kinematics(self, q, dq, bodies, points)


@dataclass(frozen=True)
class Points:
    """Body-fixed points: frame index and position in that frame's coordinates."""

    frames: np.ndarray
    offsets: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        fr = np.asarray(self.frames, dtype=int).reshape(-1)
        off = np.zeros((fr.size, 3)) if self.offsets is None else np.asarray(self.offsets, dtype=float).reshape(-1, 3)
        object.__setattr__(self, "frames", fr)
        object.__setattr__(self, "offsets", off)

    def __len__(self) -> int:
        return int(self.frames.size)


# -- Lie algebra helpers on (..., 6) twists (ω, v) ------------------------------------------
_I1, _I2 = np.array([1, 2, 0]), np.array([2, 0, 1])
_AD = np.stack([se3.ad(e) for e in np.eye(6)])   # _AD[a] = ad(e_a) as a 6×6 matrix
_AD_FLAT = _AD.reshape(6, 36)


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b over the last axis, broadcasting (np.cross costs ~10× more on small arrays)."""
    return a.take(_I1, axis=-1) * b.take(_I2, axis=-1) - a.take(_I2, axis=-1) * b.take(_I1, axis=-1)


def ad_matrix(x: np.ndarray) -> np.ndarray:
    """[ad_X] = [[ω̂, 0], [v̂, ω̂]] for X = (ω, v), shape (..., 6, 6)."""
    x = np.asarray(x, dtype=float)
    return (x @ _AD_FLAT).reshape(x.shape[:-1] + (6, 6))


def bracket(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """[X, Y] = ad_X Y = (ω × ω', ω × v' + v × ω')."""
    return (ad_matrix(x) @ np.asarray(y, dtype=float)[..., None])[..., 0]


def ad_transpose(x: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """ad_Xᵀ μ = (μ_ω × ω + μ_v × v, μ_v × ω): μ · [X, Y] = (ad_Xᵀ μ) · Y."""
    return (np.asarray(mu, dtype=float)[..., None, :] @ ad_matrix(x))[..., 0, :]


def sym_by_precedence(T: np.ndarray, Pe: np.ndarray) -> np.ndarray:
    """out[j, l] = T[j, l] where j ≼ l, T[l, j] where l ≺ j, 0 where j and l are not on one
    path from the world (no frame depends on both)."""
    return np.where(Pe, T, np.where(Pe.T, np.swapaxes(T, -1, -2), 0.0))


def adjoint_inverse(g: np.ndarray) -> np.ndarray:
    """Ad_{g⁻¹} = [[Rᵀ, 0], [−Rᵀ x̂, Rᵀ]] in the (ω, v) order, shape (..., 6, 6)."""
    R, x = g[..., :3, :3], g[..., :3, 3]
    Rt = np.swapaxes(R, -1, -2)
    out = np.zeros(g.shape[:-2] + (6, 6))
    out[..., :3, :3] = Rt
    out[..., 3:, 3:] = Rt
    out[..., 3:, :3] = -cross(Rt, x[..., None, :])    # row r of Rᵀ x̂ is (row r of Rᵀ) × x
    return out


class Kinematics:
    """Kinematics of a tree at one configuration (q, q̇), each quantity computed once (§III-E).

    ``bodies`` are the frames whose body velocities are wanted (default: every frame but the
    world); ``points`` the body-fixed points whose positions are wanted (default: the origin
    of every frame). Shapes, with batch shape ``...`` of q: ``G`` (..., K, 4, 4),
    ``p`` (..., P, 3), ``dp`` (..., P, n, 3), ``d2p`` (..., P, n, n, 3), ``v`` (..., B, 6),
    ``J``/``dv`` (..., B, n, 6), ``d2v`` (..., B, n, n, 6) with [j, l] = ∂²v/∂q_j∂q_l,
    ``d2v_mixed`` (..., B, n, n, 6) with [i, j] = ∂²v/∂q_i∂q̇_j.

    Everything derives from n-sized spatial quantities: the joint twists S_i, their
    velocity-weighted brackets DS_j = [Σ_{i≺j} q̇_i S_i, S_j] (∂v_k/∂q_j = Ad_{g_{s,k}⁻¹} DS_j,
    since Ad is a Lie algebra homomorphism) and the body adjoints Ad_{g_{s,k}⁻¹}. Contractions
    with body momenta μ_k go through the spatial momenta π_k = Ad_{g_{s,k}⁻¹}ᵀ μ_k summed over
    each variable's subtree (Π_i = Σ_{k: i ∈ anc(k)} π_k), so that the second-derivative sums
    of eqs. (24), (26) cost O(n²) and never form the (B, n, n, 6) arrays.
    """

    def __init__(self, tree: Tree, q: np.ndarray, dq: np.ndarray | None = None,
                 bodies: Iterable[int] | None = None, points: Points | None = None):
        self.tree = tree
        self.q = np.asarray(q, dtype=float)
        self.dq = np.zeros_like(self.q) if dq is None else np.asarray(dq, dtype=float)
        K = len(tree.names)
        self.bodies = np.arange(1, K) if bodies is None else np.asarray(list(bodies), dtype=int)
        self.points = Points(np.arange(K)) if points is None else points
        self.body_anc = tree.anc[self.bodies]            # (B, n)

    # -- eq. (2) ------------------------------------------------------------------------
    @cached_property
    def G(self) -> np.ndarray:
        return self.tree.transforms(self.q)

    @cached_property
    def spatial(self) -> np.ndarray:
        """S_i = Ad_{g_{s,i}} ξ_i, the spatial twist of each variable's axis, (..., n, 6)."""
        t = self.tree
        g = self.G[..., t.var_frame, :, :]
        R, x = g[..., :3, :3], g[..., :3, 3]
        w = np.einsum("...ab,...b->...a", R, t.twists[:, :3])
        v = cross(x, w) + np.einsum("...ab,...b->...a", R, t.twists[:, 3:])
        return np.concatenate([w, v], axis=-1)

    @cached_property
    def spatial_dv(self) -> np.ndarray:
        """DS_j = [W_j, S_j], W_j = Σ_{i≺j} q̇_i S_i: ∂v_k/∂q_j = Ad_{g_{s,k}⁻¹} DS_j (eq. 6), (..., n, 6)."""
        S = self.spatial
        W = np.swapaxes(self.tree.P.astype(float), 0, 1) @ (self.dq[..., :, None] * S)
        return bracket(W, S)

    @cached_property
    def body_adjoint(self) -> np.ndarray:
        """Ad_{g_{s,k}⁻¹} of every body, (..., B, 6, 6)."""
        return adjoint_inverse(self.G[..., self.bodies, :, :])

    @cached_property
    def body_spatial_velocity(self) -> np.ndarray:
        """V_k = Σ_{i ∈ anc(k)} S_i q̇_i (so v_k = Ad_{g_{s,k}⁻¹} V_k), (..., B, 6)."""
        return self.body_anc.astype(float) @ (self.dq[..., :, None] * self.spatial)

    def _to_bodies(self, X: np.ndarray) -> np.ndarray:
        """(..., n, 6) spatial twists → (..., B, n, 6) body twists Ad_{g_{s,k}⁻¹} X_i, masked by anc(k)."""
        out = X[..., None, :, :] @ np.swapaxes(self.body_adjoint, -1, -2)[..., :, :, :]
        return out * self.body_anc[..., None]

    def subtree_sum(self, f: np.ndarray) -> np.ndarray:
        """Σ_{k: i ∈ anc(k)} f_k for body quantities f (..., B, m) → (..., n, m)."""
        return np.swapaxes(self.body_anc.astype(float), 0, 1) @ f

    # -- positions: eqs. (3), (4) -------------------------------------------------------
    @cached_property
    def _point_anc(self) -> np.ndarray:
        return self.tree.anc[self.points.frames]

    @cached_property
    def p(self) -> np.ndarray:
        g = self.G[..., self.points.frames, :, :]
        return np.einsum("...ab,...b->...a", g[..., :3, :3], self.points.offsets) + g[..., :3, 3]

    @cached_property
    def dp(self) -> np.ndarray:
        """∂p/∂q_i = ω_i × p + v_i for i ∈ anc(k) (eq. 3)."""
        S = self.spatial[..., None, :, :]
        d = cross(S[..., :3], self.p[..., :, None, :]) + S[..., 3:]
        return d * self._point_anc[..., None]

    @cached_property
    def d2p(self) -> np.ndarray:
        """∂²p/∂q_j∂q_l = ω_j × ∂p/∂q_l for j ≼ l (eq. 4), symmetric."""
        w = self.spatial[..., :3]
        C = cross(w[..., None, :, None, :], self.dp[..., :, None, :, :])  # [k, j, l]
        C = np.where(self.tree.Pe[..., None], C, np.swapaxes(C, -2, -3))
        mask = self._point_anc[:, :, None] & self._point_anc[:, None, :]
        return C * mask[..., None]

    def d2p_dot(self, f: np.ndarray) -> np.ndarray:
        """Σ_k f_k · ∂²p_k/∂q_j∂q_l without forming d2p, (..., n, n); f of shape (..., P, 3)."""
        D = cross(self.dp, np.asarray(f, dtype=float)[..., :, None, :]).sum(axis=-3)   # (..., n, 3)
        T = self.spatial[..., :3] @ np.swapaxes(D, -1, -2)
        return sym_by_precedence(T, self.tree.Pe)

    # -- body velocities: eqs. (5)–(10) -------------------------------------------------
    @cached_property
    def J(self) -> np.ndarray:
        """∂v_k/∂q̇_i = Ad_{g_{s,k}⁻¹} S_i for i ∈ anc(k) (eq. 8)."""
        return self._to_bodies(self.spatial)

    @cached_property
    def v(self) -> np.ndarray:
        """v_k = Σ_i J_{k,i} q̇_i (eq. 5)."""
        return (self.body_adjoint @ self.body_spatial_velocity[..., None])[..., 0]

    @cached_property
    def dv(self) -> np.ndarray:
        """∂v_k/∂q_j = [W_{k,j}, J_{k,j}] = Ad_{g_{s,k}⁻¹} DS_j (eq. 6)."""
        return self._to_bodies(self.spatial_dv)

    @cached_property
    def d2v(self) -> np.ndarray:
        """∂²v_k/∂q_j∂q_l = [∂v_k/∂q_j, J_{k,l}] for j ≼ l, symmetric (eq. 7)."""
        X = bracket(self.spatial_dv[..., :, None, :], self.spatial[..., None, :, :])    # [j, l] = [DS_j, S_l]
        X = np.where(self.tree.Pe[..., None], X, np.swapaxes(X, -2, -3))
        deeper = np.where(self.tree.Pe, np.arange(self.tree.n)[None, :], np.arange(self.tree.n)[:, None])
        mask = self.body_anc[:, deeper] & (self.tree.Pe | self.tree.Pe.T)               # (B, n, n)
        out = np.einsum("...kab,...jlb->...kjla", self.body_adjoint, X)
        return out * mask[..., None]

    @cached_property
    def d2v_mixed(self) -> np.ndarray:
        """[i, j] = ∂²v_k/∂q_i∂q̇_j = ∂J_{k,j}/∂q_i = [J_{k,j}, J_{k,i}] if j ≺ i (eq. 10)."""
        X = bracket(self.spatial[..., None, :, :], self.spatial[..., :, None, :])      # [i, j] = [S_j, S_i]
        X = X * self.tree.P.T[..., None]
        out = np.einsum("...kab,...ijb->...kija", self.body_adjoint, X)
        return out * self.body_anc[:, :, None, None]

    def spatial_momenta(self, mu: np.ndarray) -> np.ndarray:
        """Π_i = Σ_{k: i ∈ anc(k)} Ad_{g_{s,k}⁻¹}ᵀ μ_k for body covectors μ (..., B, 6) → (..., n, 6)."""
        pi = (np.asarray(mu, dtype=float)[..., None, :] @ self.body_adjoint)[..., 0, :]
        return self.subtree_sum(pi)

    def d2v_dot(self, mu: np.ndarray, Pi: np.ndarray | None = None) -> np.ndarray:
        """Σ_k μ_k · ∂²v_k/∂q_j∂q_l = −DS_j · ad_{S_l}ᵀ Π_l (j ≼ l), without forming d2v."""
        Pi = self.spatial_momenta(mu) if Pi is None else Pi
        Q = ad_transpose(self.spatial, Pi)
        return sym_by_precedence(-(self.spatial_dv @ np.swapaxes(Q, -1, -2)), self.tree.Pe)

    def d2v_mixed_dot(self, mu: np.ndarray, Pi: np.ndarray | None = None) -> np.ndarray:
        """[i, j] = Σ_k μ_k · ∂²v_k/∂q_i∂q̇_j = −P[j, i] (ad_{S_i}ᵀ Π_i) · S_j, without forming d2v_mixed."""
        Pi = self.spatial_momenta(mu) if Pi is None else Pi
        Q = ad_transpose(self.spatial, Pi)
        return -(Q @ np.swapaxes(self.spatial, -1, -2)) * self.tree.P.T
