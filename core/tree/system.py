"""A mechanical system on a tree (Johnson & Murphey 2009, §IV): masses, potentials, forces, constraints.

- Masses at frames with principal inertias in the frame: T = Σ_k ½ v_kᵀ M_k v_k, eq. (11),
  M_k = diag(I_xx, I_yy, I_zz, m, m, m) in the (ω, v) order of the project.
- Potentials: gravity V = −Σ_k m_k g·p_k, eqs. (30)–(32); linear springs between frame
  origins V = ½ k (x − x₀)², x = |p_a − p_b|, eqs. (33)–(35), with ∂²x written out as
  ∂²x = (∂dᵀ∂d + dᵀ∂²d)/x − ∂x ∂xᵀ/x, d = p_a − p_b.
- Forces f_c(q, q̇, t) in generalised coordinates (§IV-E): dampers −c q̇_i, generalised forces
  F_i(t), body wrenches (τ, F)(t) in a frame's coordinates mapped by the body Jacobian,
  f_c = J_bᵀ F (§IV-E1).
- Constraints (:mod:`.constraints`) and kinematic variables (:mod:`.prescribed`).

:meth:`System.lagrangian` returns the derivatives of L = T − V, eqs. (23)–(27):

    ∂L/∂q_i      = Σ_k μ_k·∂v_k/∂q_i − ∂V/∂q_i,                 μ_k = M_k v_k     (23)
    ∂²L/∂q_i∂q_j = Σ_k (∂v_k/∂q_j)ᵀ M_k ∂v_k/∂q_i + μ_k·∂²v_k/∂q_i∂q_j − ∂²V   (24)
    ∂L/∂q̇_i      = Σ_k μ_k·J_{k,i}                                          (25)
    ∂²L/∂q_i∂q̇_j = Σ_k J_{k,j}ᵀ M_k ∂v_k/∂q_i + μ_k·∂²v_k/∂q_i∂q̇_j            (26)
    ∂²L/∂q̇_i∂q̇_j = Σ_k J_{k,j}ᵀ M_k J_{k,i}   (the mass matrix)               (27)

The μ·∂²v terms are contracted without forming the (n, n, 6) arrays (Kinematics.d2v_dot).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
from scipy.linalg import lapack

from ..errors import ScenarioError
from .constraints import Constraint, ConstraintSet
from .frames import Kinematics, Points, Tree, ad_transpose, sym_by_precedence
from .prescribed import Prescribed
from .recursive import RecursiveKinematics


def solve_small(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with A x = b by LAPACK dgesv, called directly: np.linalg.solve goes through a
    multithreaded BLAS whose thread start-up costs milliseconds on a busy machine."""
    _, _, x, info = lapack.dgesv(A, b)
    if info != 0:
        raise np.linalg.LinAlgError("singular matrix")
    return x


def solve_batched(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`solve_small` over leading batch axes: A (..., n, n), b (..., n)."""
    A = np.asarray(A, dtype=float)
    b = np.asarray(b, dtype=float)
    batch = np.broadcast_shapes(A.shape[:-2], b.shape[:-1])
    A2 = np.broadcast_to(A, batch + A.shape[-2:]).reshape((-1,) + A.shape[-2:])
    b2 = np.broadcast_to(b, batch + b.shape[-1:]).reshape(-1, b.shape[-1])
    out = np.empty_like(b2)
    for i in range(A2.shape[0]):
        out[i] = solve_small(A2[i], b2[i])
    return out.reshape(batch + b.shape[-1:])

BACKENDS: tuple[str, ...] = ("closed", "recursive", "recursive-nocache")


@dataclass(frozen=True)
class Body:
    """A mass at the origin of ``frame`` with principal inertias in the frame's axes."""

    frame: str
    mass: float
    inertia: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Spring:
    a: str
    b: str
    stiffness: float
    rest_length: float = 0.0


@dataclass(frozen=True)
class Damper:
    variable: str
    coefficient: float


@dataclass(frozen=True)
class Force:
    """A generalised force on one variable: a constant or a function of time."""

    variable: str
    value: float | Callable[[float], float]


@dataclass(frozen=True)
class Wrench:
    """A body wrench (τ, F) at a frame's origin in the frame's axes: a constant (6,) or f(t) → (6,)."""

    frame: str
    wrench: Sequence[float] | Callable[[float], np.ndarray]


@dataclass
class LagrangianTerms:
    """Derivatives of L at one (q, q̇); second-order entries are None unless asked for.
    ``L_qdq[i, j]`` = ∂²L/∂q_i∂q̇_j; ``M[i, j]`` = ∂²L/∂q̇_i∂q̇_j."""

    L_q: np.ndarray
    L_dq: np.ndarray
    L_qq: np.ndarray | None = None
    L_qdq: np.ndarray | None = None
    M: np.ndarray | None = None


class System:
    """Tree + masses + potentials + forces + constraints + kinematic drives.

    ``backend`` selects the kinematics: "closed" (vectorised closed forms, cached; the
    default), "recursive" (Johnson & Murphey's recursions with caching) or "recursive-nocache".
    Every kinematic variable of the tree needs a drive in ``drives`` (variable → Prescribed).
    """

    def __init__(self, tree: Tree, bodies: Sequence[Body], gravity: Sequence[float] = (0.0, 0.0, -9.81),
                 springs: Sequence[Spring] = (), dampers: Sequence[Damper] = (),
                 forces: Sequence[Force] = (), wrenches: Sequence[Wrench] = (),
                 constraints: Sequence[Constraint] = (), drives: Mapping[str, Prescribed] | None = None,
                 backend: str = "closed"):
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
        self.tree = tree
        self.backend = backend
        n = tree.n
        self.gravity = np.asarray(gravity, dtype=float).reshape(3)
        if not np.all(np.isfinite(self.gravity)):
            raise ScenarioError("[vehicle] gravity", "must be 3 finite numbers")
        # -- masses -----------------------------------------------------------------
        self.bodies = list(bodies)
        body_frames: list[int] = []
        mdiag: list[np.ndarray] = []
        for i, b in enumerate(self.bodies):
            k = tree.frame(b.frame, f"[bodies #{i + 1}] frame")
            if k == 0:
                raise ScenarioError(f"[bodies #{i + 1}] frame", "the world frame cannot carry a mass")
            if k in body_frames:
                raise ScenarioError(f"[bodies #{i + 1}] frame", f"frame {b.frame!r} already has a mass")
            if not (np.isfinite(b.mass) and b.mass > 0):
                raise ScenarioError(f"[bodies #{i + 1}] mass", f"must be positive, got {b.mass}")
            inertia = np.asarray(b.inertia, dtype=float).reshape(-1)
            if inertia.shape != (3,) or not np.all(np.isfinite(inertia)) or np.any(inertia < 0):
                raise ScenarioError(f"[bodies #{i + 1}] inertia", "must be 3 finite non-negative numbers")
            body_frames.append(k)
            mdiag.append(np.concatenate([inertia, np.full(3, float(b.mass))]))
        self.n_massive = len(body_frames)
        # -- wrenches (their frames join the bodies, with zero mass) -------------------------
        self.wrenches = list(wrenches)
        self._wrench_rows: list[int] = []
        for i, w in enumerate(self.wrenches):
            k = tree.frame(w.frame, f"[wrenches #{i + 1}] frame")
            if k == 0:
                raise ScenarioError(f"[wrenches #{i + 1}] frame", "must be a frame of the tree")
            if not callable(w.wrench):
                arr = np.asarray(w.wrench, dtype=float)
                if arr.shape != (6,) or not np.all(np.isfinite(arr)):
                    raise ScenarioError(f"[wrenches #{i + 1}] wrench", "must be 6 finite numbers (torque, force)")
            if k not in body_frames:
                body_frames.append(k)
                mdiag.append(np.zeros(6))
            self._wrench_rows.append(body_frames.index(k))
        self.body_frames = np.array(body_frames, dtype=int)
        self.mdiag = np.array(mdiag, dtype=float).reshape(-1, 6)
        # -- points: massive frame origins, then spring ends ------------------------------
        pts = list(body_frames[: self.n_massive])
        self.springs = list(springs)
        self._spring_pts = np.zeros((len(self.springs), 2), dtype=int)
        for i, s in enumerate(self.springs):
            w = f"[springs #{i + 1}]"
            ends = (tree.frame(s.a, f"{w} a"), tree.frame(s.b, f"{w} b"))
            if ends[0] == ends[1]:
                raise ScenarioError(f"{w} b", "must differ from a")
            if not (np.isfinite(s.stiffness) and s.stiffness >= 0):
                raise ScenarioError(f"{w} stiffness", f"must be non-negative, got {s.stiffness}")
            if not (np.isfinite(s.rest_length) and s.rest_length >= 0):
                raise ScenarioError(f"{w} rest_length", f"must be non-negative, got {s.rest_length}")
            for j, k in enumerate(ends):
                if k not in pts:
                    pts.append(k)
                self._spring_pts[i, j] = pts.index(k)
        self.points = Points(np.array(pts, dtype=int))
        self._k = np.array([s.stiffness for s in self.springs], dtype=float)
        self._x0 = np.array([s.rest_length for s in self.springs], dtype=float)
        P = len(self.points)
        self._spring_incidence = np.zeros((len(self.springs), P))
        for i, (a, b) in enumerate(self._spring_pts):
            self._spring_incidence[i, a] += 1.0
            self._spring_incidence[i, b] -= 1.0
        self._gravity_force = np.zeros((P, 3))
        self._gravity_force[: self.n_massive] = self.mdiag[: self.n_massive, 3:4] * self.gravity
        # -- forces ---------------------------------------------------------------------
        self._damping = np.zeros(n)
        for i, d in enumerate(dampers):
            j = tree.variable(d.variable, f"[dampers #{i + 1}] variable")
            if not (np.isfinite(d.coefficient) and d.coefficient >= 0):
                raise ScenarioError(f"[dampers #{i + 1}] coefficient", f"must be non-negative, got {d.coefficient}")
            self._damping[j] += d.coefficient
        self.forces = [(tree.variable(f.variable, f"[forces #{i + 1}] variable"), f.value)
                       for i, f in enumerate(forces)]
        for i, (_, val) in enumerate(self.forces):
            if not callable(val) and not np.isfinite(val):
                raise ScenarioError(f"[forces #{i + 1}] value", "must be finite")
        # -- constraints and drives -------------------------------------------------------
        self.constraints = ConstraintSet(tree, constraints)
        self.m = len(self.constraints)
        self.dyn = np.flatnonzero(~tree.kinematic)
        self.kin = np.flatnonzero(tree.kinematic)
        drives = dict(drives or {})
        self.drives: list[Prescribed] = []
        for name in drives:
            j = tree.variable(name, f"[prescribed] {name}")
            if not tree.kinematic[j]:
                raise ScenarioError(f"[prescribed] {name}", f"variable {name!r} is not kinematic")
        for j in self.kin:
            name = tree.variables[j]
            if name not in drives:
                raise ScenarioError(f"[prescribed] {name}", "a kinematic variable needs a drive")
            self.drives.append(drives[name])
        if self.n_massive == 0:
            raise ScenarioError("[frames]", "no frame has a mass")
        self._has_forces = bool(np.any(self._damping) or self.forces or self.wrenches)

    # -- kinematics ---------------------------------------------------------------------
    def at(self, q: np.ndarray, dq: np.ndarray | None = None, bodies=None, points: Points | None = None):
        """Kinematics at (q, q̇) with the selected backend; the recursive backends evaluate one
        configuration at a time, so batches (whole trajectories) use the closed form (same values)."""
        if self.backend == "closed" or np.ndim(q) > 1:
            return Kinematics(self.tree, q, dq, bodies, points)
        return RecursiveKinematics(self.tree, q, dq, bodies, points, cache=self.backend == "recursive")

    def kinematics(self, q: np.ndarray, dq: np.ndarray | None = None):
        """Kinematics of the bodies and the potential's points."""
        return self.at(q, dq, self.body_frames, self.points)

    def constraint_kinematics(self, q: np.ndarray):
        return self.constraints.kinematics(q, None, self.at)

    # -- drives --------------------------------------------------------------------------
    def drive(self, t: float | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Values, rates and accelerations of the kinematic variables at t: (..., n_kin) each."""
        t = np.asarray(t, dtype=float)
        if not self.drives:
            z = np.zeros(t.shape + (0,))
            return z, z, z
        return (np.stack([d.value(t) for d in self.drives], axis=-1),
                np.stack([d.rate(t) for d in self.drives], axis=-1),
                np.stack([d.accel(t) for d in self.drives], axis=-1))

    # -- potentials: eqs. (30)–(35) --------------------------------------------------------
    def _springs(self, kin) -> tuple[np.ndarray, ...]:
        d = np.einsum("sp,...pa->...sa", self._spring_incidence, kin.p)
        x = np.linalg.norm(d, axis=-1)
        xs = np.where(x > 0, x, 1.0)
        dd = np.einsum("sp,...pia->...sia", self._spring_incidence, kin.dp)
        x_q = np.einsum("...sia,...sa->...si", dd, d) / xs[..., None]
        return d, x, xs, dd, x_q

    def potential(self, kin, order: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(V, ∂V/∂q, ∂²V/∂q² or None)."""
        Fg = self._gravity_force
        V = -np.einsum("pa,...pa->...", Fg, kin.p)
        V_q = -np.einsum("pa,...pia->...i", Fg, kin.dp)
        V_qq = None
        if self.springs:
            d, x, xs, dd, x_q = self._springs(kin)
            stretch = x - self._x0
            V = V + 0.5 * np.einsum("s,...s->...", self._k, stretch**2)
            V_q = V_q + np.einsum("s,...s,...si->...i", self._k, stretch, x_q)
            if order >= 2:
                coef = self._k * stretch / xs                                   # k (x − x₀)/x
                Fs = np.einsum("sp,...s,...sa->...pa", self._spring_incidence, coef, d)
                V_qq = (-kin.d2p_dot(Fg) + kin.d2p_dot(Fs)
                        + np.einsum("s,...si,...sj->...ij", self._k, x_q, x_q)
                        + np.einsum("...s,...sia,...sja->...ij", coef, dd, dd)
                        - np.einsum("...s,...si,...sj->...ij", coef, x_q, x_q))
        elif order >= 2:
            V_qq = -kin.d2p_dot(np.broadcast_to(Fg, kin.p.shape))
        return V, V_q, V_qq

    # -- the Lagrangian: eqs. (11), (23)–(27) -----------------------------------------------
    def lagrangian(self, kin, order: int = 1, want_qq: bool = True) -> LagrangianTerms:
        """∂L/∂q, ∂L/∂q̇ and (order 2) ∂²L/∂q², ∂²L/∂q∂q̇, ∂²L/∂q̇² at kin's (q, q̇), batched."""
        if isinstance(kin, Kinematics):
            return self._lagrangian_spatial(kin, order, want_qq)
        return self._lagrangian_bodies(kin, order, want_qq)

    def _lagrangian_bodies(self, kin, order: int, want_qq: bool) -> LagrangianTerms:
        """Eqs. (23)–(27) term by term from the body quantities v, J, ∂v/∂q, ∂²v (any backend)."""
        mu = self.mdiag * kin.v
        _, V_q, V_qq = self.potential(kin, order if want_qq else 1)
        L_dq = np.einsum("...kia,...ka->...i", kin.J, mu)
        L_q = np.einsum("...kia,...ka->...i", kin.dv, mu) - V_q
        if order < 2:
            return LagrangianTerms(L_q, L_dq)
        MJ = self.mdiag[:, None, :] * kin.J
        M = np.einsum("...kia,...kja->...ij", kin.J, MJ)
        L_qdq = np.einsum("...kia,...kja->...ij", kin.dv, MJ) + kin.d2v_mixed_dot(mu)
        L_qq = None
        if want_qq:
            L_qq = (np.einsum("...kia,...kja->...ij", kin.dv, self.mdiag[:, None, :] * kin.dv)
                    + kin.d2v_dot(mu) - V_qq)
        return LagrangianTerms(L_q, L_dq, L_qq, L_qdq, M)

    def _spatial_inertia(self, kin: Kinematics) -> np.ndarray:
        """𝕄_k = Ad_{g_{s,k}⁻¹}ᵀ M_k Ad_{g_{s,k}⁻¹}: each body's inertia about the world origin, (..., B, 6, 6)."""
        A = kin.body_adjoint
        return np.swapaxes(A, -1, -2) @ (self.mdiag[:, :, None] * A)

    def _lagrangian_spatial(self, kin: Kinematics, order: int, want_qq: bool) -> LagrangianTerms:
        """Eqs. (23)–(27) through spatial quantities (closed-form backend).

        With J_{k,i} = Ad_k S_i, ∂v_k/∂q_j = Ad_k DS_j and 𝕄_k the spatial inertias, every sum
        over bodies becomes a sum over a variable's subtree: Π_i = Σ 𝕄_k V_k (spatial momentum),
        𝕄ᶜ_i = Σ 𝕄_k (composite inertia), so ∂L/∂q̇_i = S_i·Π_i, ∂L/∂q_i = DS_i·Π_i − ∂V/∂q_i,
        ∂²L/∂q̇_i∂q̇_j = S_iᵀ 𝕄ᶜ_l S_j, ∂²L/∂q_i∂q̇_j = DS_iᵀ 𝕄ᶜ_l S_j + μ·∂²v/∂q_i∂q̇_j,
        ∂²L/∂q_i∂q_j = DS_iᵀ 𝕄ᶜ_l DS_j + μ·∂²v/∂q_i∂q_j − ∂²V/∂q_i∂q_j (l the deeper of i, j)."""
        Ms = self._spatial_inertia(kin)
        pi = (Ms @ kin.body_spatial_velocity[..., None])[..., 0]
        Pi = kin.subtree_sum(pi)
        S, DS = kin.spatial, kin.spatial_dv
        _, V_q, V_qq = self.potential(kin, order if want_qq else 1)
        L_dq = np.einsum("...ia,...ia->...i", S, Pi)
        L_q = np.einsum("...ia,...ia->...i", DS, Pi) - V_q
        if order < 2:
            return LagrangianTerms(L_q, L_dq)
        t = self.tree
        B = Ms.shape[-3]
        Mc = kin.subtree_sum(Ms.reshape(Ms.shape[:-3] + (B, 36))).reshape(S.shape[:-1] + (6, 6))
        Y = (Mc @ S[..., None])[..., 0]
        St = np.swapaxes(S, -1, -2)
        M = sym_by_precedence(S @ np.swapaxes(Y, -1, -2), t.Pe)
        Q = ad_transpose(S, Pi)
        Z = (Mc @ DS[..., None])[..., 0]
        L_qdq = (np.where(t.Pe, DS @ np.swapaxes(Y, -1, -2), np.where(t.P.T, Z @ St, 0.0))
                 - (Q @ St) * t.P.T)
        L_qq = sym_by_precedence(DS @ np.swapaxes(Z - Q, -1, -2), t.Pe) - V_qq if want_qq else None
        return LagrangianTerms(L_q, L_dq, L_qq, L_qdq, M)

    def mass_matrix(self, kin) -> np.ndarray:
        """∂²L/∂q̇² (eq. 27), batched."""
        if isinstance(kin, Kinematics):
            Ms = self._spatial_inertia(kin)
            B = Ms.shape[-3]
            S = kin.spatial
            Mc = kin.subtree_sum(Ms.reshape(Ms.shape[:-3] + (B, 36))).reshape(S.shape[:-1] + (6, 6))
            Y = (Mc @ S[..., None])[..., 0]
            return sym_by_precedence(S @ np.swapaxes(Y, -1, -2), self.tree.Pe)
        return np.einsum("...kia,...kja->...ij", kin.J, self.mdiag[:, None, :] * kin.J)

    def kinetic_energy(self, kin) -> np.ndarray:
        """T = Σ_k ½ v_kᵀ M_k v_k (eq. 11)."""
        return 0.5 * np.einsum("...ka,...ka->...", self.mdiag * kin.v, kin.v)

    def energy(self, kin) -> np.ndarray:
        """T + V (eq. 11 with the potentials), batched."""
        return self.kinetic_energy(kin) + self.potential(kin, 1)[0]

    # -- forces (§IV-E) ---------------------------------------------------------------------
    @property
    def has_forces(self) -> bool:
        return self._has_forces

    def force(self, kin, t: float, derivatives: bool = False
              ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """(f_c, ∂f_c/∂q, ∂f_c/∂q̇) at one configuration (not batched over time)."""
        n = self.tree.n
        f = -self._damping * kin.dq
        for j, val in self.forces:
            f[..., j] += float(val(t)) if callable(val) else float(val)
        f_q = np.zeros(kin.q.shape + (n,)) if derivatives else None
        f_dq = np.diag(-self._damping) if derivatives else None
        if self.wrenches:
            F = np.zeros(kin.q.shape[:-1] + (self.body_frames.size, 6))
            for row, w in zip(self._wrench_rows, self.wrenches):
                F[..., row, :] += np.asarray(w.wrench(t) if callable(w.wrench) else w.wrench, dtype=float)
            if isinstance(kin, Kinematics):   # J_{k,i}·F_k = S_i·(Ad_kᵀ F_k), summed over the subtree
                Phi = kin.spatial_momenta(F)
                f = f + np.einsum("...ia,...ia->...i", kin.spatial, Phi)
            else:
                Phi = None
                f = f + np.einsum("...kia,...ka->...i", kin.J, F)
            if derivatives:   # ∂f_i/∂q_j = Σ_k F_k · ∂J_{k,i}/∂q_j
                dot = kin.d2v_mixed_dot(F, Phi) if Phi is not None else kin.d2v_mixed_dot(F)
                f_q = f_q + np.swapaxes(dot, -1, -2)
        return f, f_q, f_dq

    # -- start-up ---------------------------------------------------------------------------
    def assemble(self, q_dyn: np.ndarray, q_kin: np.ndarray) -> np.ndarray:
        q = np.empty(np.broadcast_shapes(q_dyn.shape[:-1], q_kin.shape[:-1]) + (self.tree.n,))
        q[..., self.dyn] = q_dyn
        q[..., self.kin] = q_kin
        return q

    def project_configuration(self, q: np.ndarray, tol: float = 1e-13, max_iter: int = 100
                              ) -> tuple[np.ndarray, float]:
        """The nearest (minimum-norm Gauss–Newton) q with h(q) = 0, moving dynamic variables only.
        Returns (q, max |correction|); ScenarioError at "[initial] q" if it does not converge."""
        q = np.array(q, dtype=float)
        if self.m == 0:
            return q, 0.0
        q_start = q.copy()
        for _ in range(max_iter):
            kc = self.constraint_kinematics(q)
            r = self.constraints.h(kc)
            if np.max(np.abs(r)) <= tol:
                return q, float(np.max(np.abs(q - q_start)))
            A = self.constraints.Dh(kc)[:, self.dyn]
            step, *_ = np.linalg.lstsq(A, -r, rcond=None)
            q[self.dyn] += step
            if not np.all(np.isfinite(q)):
                break
        raise ScenarioError("[initial] q", "cannot satisfy the constraints from these values "
                            f"(residual {float(np.max(np.abs(r))):.3g} after {max_iter} iterations)")

    def check_solvable(self, q: np.ndarray) -> None:
        """Refuse redundant constraints and variables without inertia at q (ScenarioError)."""
        nd = self.dyn.size
        if self.m:
            A = self.constraints.Dh(self.constraint_kinematics(q))[:, self.dyn]
            scale = max(1.0, float(np.max(np.abs(A))))
            for r in range(1, self.m + 1):
                if np.linalg.matrix_rank(A[:r], tol=1e-9 * scale) < r:
                    e = int(self.constraints.entry[r - 1])
                    raise ScenarioError(f"[constraints #{e + 1}]", "redundant or singular at the initial "
                                        "configuration (dependent on the constraints before it, or on no variable)")
            if self.m > nd:
                raise ScenarioError("[constraints]", f"{self.m} constraint rows but only {nd} dynamic variables")
        M = self.mass_matrix(self.kinematics(q))[np.ix_(self.dyn, self.dyn)]
        if self.m:
            # null space of the constraints: the KKT matrix is regular iff Zᵀ M Z is
            _, s, vt = np.linalg.svd(A)
            Z = vt[self.m:].T
        else:
            Z = np.eye(nd)
        if Z.shape[1] == 0:
            return
        Mz = Z.T @ M @ Z
        w, vecs = np.linalg.eigh(Mz)
        scale = max(float(np.max(np.abs(np.diag(M)))), 1e-300)
        if w[0] <= 1e-12 * scale:
            direction = Z @ vecs[:, 0]
            name = self.tree.variables[self.dyn[int(np.argmax(np.abs(direction)))]]
            raise ScenarioError("[frames]", f"variable {name!r} moves no mass at the initial configuration "
                                "(give a frame it moves a mass or an inertia, or make it kinematic)")

    def project_velocity(self, q: np.ndarray, dq: np.ndarray, p: np.ndarray | None = None) -> np.ndarray:
        """The constrained Legendre transform: the q̇ with Dh q̇ = 0 (kinematic rates kept) whose
        momentum differs from p by a constraint impulse Dhᵀμ, batched over leading axes.

        p defaults to ∂L/∂q̇(q, dq) (the M-orthogonal projection of dq); it holds the dynamic
        components (..., n_dyn)."""
        q = np.asarray(q, dtype=float)
        dq = np.array(dq, dtype=float)
        M = self.mass_matrix(self.kinematics(q, dq))
        d, k = self.dyn, self.kin
        if p is None:
            p = np.einsum("...ij,...j->...i", M, dq)[..., d]
        rhs1 = p - np.einsum("...ij,...j->...i", M[..., d[:, None], k[None, :]], dq[..., k])
        Mdd = M[..., d[:, None], d[None, :]]
        if self.m == 0:
            dq[..., d] = solve_batched(Mdd, rhs1)
            return dq
        Dh = self.constraints.Dh(self.constraint_kinematics(q))
        A = Dh[..., :, d]
        rhs2 = -np.einsum("...rj,...j->...r", Dh[..., :, k], dq[..., k])
        nd, m = d.size, self.m
        batch = Mdd.shape[:-2]
        KKT = np.zeros(batch + (nd + m, nd + m))
        KKT[..., :nd, :nd] = Mdd
        KKT[..., :nd, nd:] = np.swapaxes(A, -1, -2)
        KKT[..., nd:, :nd] = A
        sol = solve_batched(KKT, np.concatenate([rhs1, rhs2], axis=-1))
        dq[..., d] = sol[..., :nd]
        return dq
