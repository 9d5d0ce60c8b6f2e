"""Vehicles on SE(3) driven by the holonomic variational integrator (paper §3.1, §4.2–4.3, eqs. 9–10).

Decision variables: at every node k = 0…N the pose g_k = (R_k, x_k) with R_k = R̄_k cay(ρ_k) —
the orientation stays on SO(3) through a chart centred at a reference rotation R̄_k (from the
initial guess; re-centred between outer solves, see ``recentre``) — per step the body velocity
ξ_k = (ω_k, v_k) of eq. (9) and the controls u_k; plus T when the duration is free (h = T/N).

Equality constraints, the integrator of ``core.integrators.variational`` exactly (the kick–drift–kick
momentum form: both half kicks at node k use the wrench of the step they belong to, so that
re-simulating the controls with ``simulate`` reproduces the trajectory):

    pose (eq. 9), k = 0…N−1:  vee(Q_k − Q_kᵀ)/2 = 0,  Q_k = τ_R(hω_k)ᵀ R_kᵀ R_{k+1}
                              x_{k+1} − x_k − R_k B_τ(hω_k) h v_k = 0
    momentum (eq. 10), k ≥ 1: C_τ(hξ_k)ᵀ𝕀ξ_k − C_τ(−hξ_{k−1})ᵀ𝕀ξ_{k−1}
                              − (h/2)(B(u_{k−1}) + B(u_k)) − h E(g_k, ξ_{k−1}) = 0
    start, k = 0:             C_τ(hξ_0)ᵀ𝕀ξ_0 − 𝕀ξ(0) − (h/2)(B(u_0) + E(g_0, ξ(0))) = 0

with B(u) the control wrench and E(g, ξ) the external wrench (gravity, buoyancy, drag) of the
vehicle. The node velocity (what ``simulate`` reports) is 𝕀⁻¹ m_k with the node momentum
m_k = C_τ(−hξ_{k−1})ᵀ𝕀ξ_{k−1} + (h/2)(B(u_{k−1}) + E(g_k, ξ_{k−1})), and ξ(0) at node 0.

Derivatives (all analytic, checked against differences in the tests): ∂[C_τ(hξ)ᵀ𝕀ξ]/∂ξ is
``momentum_map_jacobian`` of the integrator module and ∂/∂h = K(hξ, 𝕀ξ) ξ with its K maps;
with s the body-frame rotation increment (δR = R ŝ) and the chart's body Jacobian
∂s/∂ρ = dcay(−ρ) = 4/(4 + |ρ|²)(I − ρ̂/2), a right perturbation Q ŝ changes vee(Q − Qᵀ)/2 by
½(tr Q I − Qᵀ) s and a left one −âQ by −½(tr Q I − Q) a (from vee(Aŝ + ŝAᵀ) = (tr A I − Aᵀ) s); the translation B_cay(a)c = y has
∂y/∂a = −½ B_cay(a) ŷ, B_cay_paper(a)c by its rational form (``jets.RationalMap``; the exp pairings:
central differences in ω, 3 columns).

Lagrangian Hessians: for the Cayley pairings (vi-cay, vi-cay-ln) the pose update is exact
(:func:`pose_lagrangian_hessian`, multilinear in the Cayley factors); the momentum maps of vi-cay,
vi-cay-ln and vi-exp-ln are exact by jets (:func:`momentum_lagrangian_hessian`) and the wrench terms
(controls, external wrench) coloured central differences of their analytic Jacobian over their own
columns; the exp pairings, the start and the goal-velocity groups (one instance each) use the
coloured differences of ``core.dmoc.problem``.
"""
from __future__ import annotations

import numpy as np

from ...errors import ScenarioError
from ...integrators import variational
from ...lie import quaternion, se3, so3
from ...scenario import Table
from ...trajectory import Trajectory
from .. import jets
from ..jets import Jet
from ..problem import Group, fd_hessian_colored, fd_hessian_plan
from . import Model

_I3 = np.eye(3)


def chart(Rref: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """R = R̄ cay(ρ)."""
    return Rref @ so3.cay(rho)


def chart_jacobian(rho: np.ndarray) -> np.ndarray:
    """Body Jacobian of the chart: s = dcay(−ρ) δρ with δR = R ŝ."""
    return so3.dcay(-rho)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b over the last axis, broadcasting: the products and differences of np.cross, without its
    axis bookkeeping (a hot path)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _skew_part_right(Q: np.ndarray) -> np.ndarray:
    """∂ vee(Q − Qᵀ)/2 for Q → Q ŝ: ½(tr Q I − Qᵀ), from vee(Aŝ + ŝAᵀ) = (tr A I − Aᵀ) s."""
    return 0.5 * (np.trace(Q, axis1=-2, axis2=-1)[..., None, None] * _I3 - np.swapaxes(Q, -1, -2))


def _skew_part_left(Q: np.ndarray) -> np.ndarray:
    """∂ vee(Q − Qᵀ)/2 for Q → −â Q: −½(tr Q I − Q)."""
    return -0.5 * (np.trace(Q, axis1=-2, axis2=-1)[..., None, None] * _I3 - Q)


# τ's rotation body Jacobian (δτ = τ d̂ with d = Jτ(a) δa) and translation matrix B(a) per pairing
_ROT_BODY_JAC = {"cay": lambda a: so3.dcay(-a), "exp": lambda a: so3.dexp(-a)}
# Structural zeros of ∂[C_τ(hξ)ᵀ𝕀ξ]/∂ξ with M = m I₃: for dcay⁻¹ and I − ½ ad the v rows are
# μ_v ± ½ a × μ_v (no v_i row dependence on ω_i); for I − ½ ad the ω rows are μ_ω − ½(μ_ω × a + μ_v × c)
# with μ_v × c = m v × h v = 0 (no dependence on v). The exp maps are dense.
_MM_DIAGONAL_ZEROS = {"vi-cay", "vi-cay-ln", "vi-exp-ln"}
_MM_LN = {"vi-cay-ln", "vi-exp-ln"}
_PAIRING_PARTS = {
    "vi-cay": ("cay", se3.B_cay), "vi-cay-ln": ("cay", se3.B_cay_paper), "vi-exp": ("exp", so3.dexp),
    "vi-exp-ln": ("exp", so3.dexp), "vi-exp-series": ("exp", so3.dexp),
}


# translation block B of τ for the Cayley pairings, as a rational map (core.dmoc.jets.RationalMap)
_B_FORMS = {"vi-cay": jets.B_CAY_FORM, "vi-cay-ln": jets.B_CAY_PAPER_FORM}


def pose_lagrangian_hessian(X: np.ndarray, lam: np.ndarray, Rref0: np.ndarray, Rref1: np.ndarray, N: int,
                            b_form: tuple[float, float, float, float]) -> np.ndarray:
    """Σ_i λ_i ∇² of the pose update (eq. 9) for the Cayley pairings, exact (B, 19, 19) over the local
    (ρ_k, x_k, ρ_{k+1}, x_{k+1}, ω_k, v_k, T). With C_j = cay(ρ_j), A = cay(a), B = B(a), (a, c) = h(ω, v),
    h = T/N, M = R̄_kᵀR̄_{k+1}, W = ½ λ̂_rot and μ = −R̄_kᵀ λ_trans, the nonlinear part of the Lagrangian is

        F = ⟨W, Aᵀ C_kᵀ M C_{k+1}⟩ + μᵀ C_k B c

    (λ·vee(Q) = ½⟨λ̂, Q⟩; x enters linearly). It is multilinear in the three Cayley factors and B, so
    every block is a contraction of their first derivatives (mixed blocks) or the closed-form
    second derivative of one factor against its weight matrix (``RationalMap.hessian``):
    ∂F/∂C_{k+1} = Mᵀ C_k A W, ∂F/∂C_k = M C_{k+1} Wᵀ Aᵀ + μ (Bc)ᵀ, ∂F/∂A = C_kᵀ M C_{k+1} Wᵀ,
    ∂F/∂B = (C_kᵀ μ) cᵀ. The chain rule through u = (a, c) = h z, z = (ω, v), gives
    ∇²_zz = h² F_uu, ∂²/∂z∂T = (h/N) F_uu z + F_u/N, ∂²/∂T² = zᵀ F_uu z/N², ∂²/∂ρ∂z = h F_ρu,
    ∂²/∂ρ∂T = F_ρu z/N."""
    Bn = X.shape[0]
    h = X[:, 18] / N
    z = X[:, 12:18]
    a, c = h[:, None] * z[:, :3], h[:, None] * z[:, 3:]
    C0, C1 = jets.RationalMap(X[:, 0:3], jets.CAY_FORM), jets.RationalMap(X[:, 6:9], jets.CAY_FORM)
    A, Bm = jets.RationalMap(a, jets.CAY_FORM), jets.RationalMap(a, b_form)
    M = np.swapaxes(Rref0, 1, 2) @ Rref1
    W = 0.5 * so3.hat(lam[:, :3])
    mu = -np.einsum("bji,bj->bi", Rref0, lam[:, 3:])
    Wt = np.swapaxes(W, 1, 2)
    AW = A.value @ W
    MC1 = M @ C1.value
    y = np.einsum("bij,bj->bi", Bm.value, c)                      # B c
    m0 = np.einsum("bji,bj->bi", C0.value, mu)                    # C_kᵀ μ
    G0 = MC1 @ Wt @ np.swapaxes(A.value, 1, 2) + mu[:, :, None] * y[:, None, :]
    G1 = np.swapaxes(M, 1, 2) @ C0.value @ AW
    GA = np.swapaxes(C0.value, 1, 2) @ MC1 @ Wt
    GB = m0[:, :, None] * c[:, None, :]
    MD1 = np.einsum("blm,bjmq->bjlq", M, C1.d)                    # M ∂C_{k+1}/∂ρ_j
    muD0 = np.einsum("bx,bixy->biy", mu, C0.d)                    # μᵀ ∂C_k/∂ρ_i
    dBc = np.einsum("bjxy,by->bjx", Bm.d, c)                      # ∂B/∂a_j c
    H00 = C0.hessian(G0)
    H11 = C1.hessian(G1)
    H01 = np.einsum("bkq,bilk,bjlq->bij", AW, C0.d, MD1)
    Fu = np.concatenate([A.gradient(GA) + Bm.gradient(GB), np.einsum("byj,by->bj", Bm.value, m0)], axis=1)
    Fuu = np.zeros((Bn, 6, 6))
    Fuu[:, :3, :3] = A.hessian(GA) + Bm.hessian(GB)
    Fuu[:, :3, 3:] = np.einsum("by,biyj->bij", m0, Bm.d)
    Fuu[:, 3:, :3] = np.swapaxes(Fuu[:, :3, 3:], 1, 2)
    F0u = np.empty((Bn, 3, 6))                                    # ∂²F/∂ρ_k∂u
    F0u[:, :, :3] = (np.einsum("bjkp,bilk,blp->bij", A.d, C0.d, MC1 @ Wt)
                     + np.einsum("biy,bjy->bij", muD0, dBc))
    F0u[:, :, 3:] = muD0 @ Bm.value
    F1u = np.zeros((Bn, 3, 6))                                    # ∂²F/∂ρ_{k+1}∂u (c does not enter)
    F1u[:, :, :3] = np.einsum("bpq,bjkp,bikq->bij", W, A.d, np.swapaxes(C0.value, 1, 2)[:, None] @ MD1)
    H = np.zeros((Bn, 19, 19))
    r0, r1, zz = slice(0, 3), slice(6, 9), slice(12, 18)
    H[:, r0, r0] = H00
    H[:, r1, r1] = H11
    H[:, r0, r1] = H01
    H[:, r1, r0] = np.swapaxes(H01, 1, 2)
    H[:, zz, zz] = (h * h)[:, None, None] * Fuu
    for r, F in ((r0, F0u), (r1, F1u)):
        H[:, r, zz] = h[:, None, None] * F
        H[:, zz, r] = np.swapaxes(H[:, r, zz], 1, 2)
        H[:, r, 18] = H[:, 18, r] = np.einsum("bij,bj->bi", F, z) / N
    Fz = np.einsum("bij,bj->bi", Fuu, z)
    H[:, zz, 18] = H[:, 18, zz] = (h[:, None] * Fz + Fu) / N
    H[:, 18, 18] = np.einsum("bi,bi->b", z, Fz) / (N * N)
    return H


_MM_JETS = ("vi-cay", "vi-cay-ln", "vi-exp-ln")  # pairings whose C_τᵀμ is polynomial (jets below)


def momentum_lagrangian_hessian(method: str, xi: np.ndarray, T: np.ndarray, sign: np.ndarray, lam: np.ndarray,
                                inertia: np.ndarray, N: int, T_free: bool) -> np.ndarray:
    """λ·∇²[C_τ(hξ)ᵀ𝕀ξ] with h = sign·T/N per instance, by second-order jets (``core.dmoc.jets``) over
    (ξ, T) (B, 7, 7), or over ξ alone (B, 6, 6) with h a constant when the duration is fixed. With
    η = hξ = (a, c), μ = 𝕀ξ = (μ_ω, μ_v) and the terms linear in ξ dropped (zero Hessian):

        vi-cay:          dcay⁻¹ᵀμ = (μ_ω + ½a×μ_ω + ¼a(a·μ_ω) + ½c×q, q), q = μ_v + ½a×μ_v, so
                         λ·dcay⁻¹ᵀμ ≐ ½a·(μ_ω×λ_ω) + ¼(λ_ω·a)(a·μ_ω) + ½μ_v·(λ_ω×c) + ¼(a×μ_v)·(λ_ω×c) + ½a·(μ_v×λ_v)
        vi-cay-ln, -exp-ln: (I − ½ ad)ᵀμ = μ − ½(μ_ω×a + μ_v×c, μ_v×a), so
                         λ·(I − ½ ad)ᵀμ ≐ −½(a·(λ_ω×μ_ω) + c·(λ_ω×μ_v) + a·(λ_v×μ_v)).
    """
    Xv = np.concatenate([xi, T[:, None]], axis=1) if T_free else xi
    var = Jet.variables(Xv)
    h = var[6].scale(sign / N) if T_free else sign * T / N
    w, v = var[:3], var[3:6]
    a = [wi * h for wi in w]
    c = [vi * h for vi in v]
    mw = [w[i].scale(inertia[i]) for i in range(3)]
    mv = [v[i].scale(inertia[3 + i]) for i in range(3)]
    lw = [lam[:, i] for i in range(3)]
    lv = [lam[:, 3 + i] for i in range(3)]
    if method == "vi-cay":
        lc = jets.cross(lw, c)
        L = (jets.dot(a, jets.cross(mw, lw)).scale(0.5) + (jets.dot(lw, a) * jets.dot(a, mw)).scale(0.25)
             + jets.dot(mv, lc).scale(0.5) + jets.dot(jets.cross(a, mv), lc).scale(0.25)
             + jets.dot(a, jets.cross(mv, lv)).scale(0.5))
    elif method in ("vi-cay-ln", "vi-exp-ln"):
        L = (jets.dot(a, jets.cross(lw, mw)) + jets.dot(c, jets.cross(lw, mv))
             + jets.dot(a, jets.cross(lv, mv))).scale(-0.5)
    else:
        raise ValueError(f"no jet form of the momentum map of {method!r}")
    return L.hessian()


def block_hessian(L: int, blocks: list[np.ndarray], shared: int) -> tuple[np.ndarray, np.ndarray]:
    """Hessian mask and colours of a sum of terms, each a function of one block of local columns and of
    the shared column (T): blocks do not mix, so the j-th columns of all blocks share colour j."""
    mask = np.zeros((L, L), dtype=bool)
    colors = np.full(L, L + 1)
    for b in blocks:
        b = np.asarray(b)
        mask[np.ix_(b, b)] = True
        mask[b, shared] = mask[shared, b] = True
        colors[b] = np.arange(len(b))
    mask[shared, shared] = True
    colors[shared] = L
    return mask, colors


class HolonomicModel(Model):
    """Generic SE(3) vehicle; subclasses give the control wrench B(u) and external wrench E(g, ξ)."""

    se3 = True
    pose_dim = 6
    position_dim = 3
    methods = tuple(variational.PAIRINGS)

    def __init__(self, inertia6: np.ndarray, steps: int, method: str = "vi-cay"):
        super().__init__(steps, 0.5)
        if method not in variational.PAIRINGS:
            raise ScenarioError("[integrator] method", f"unknown method {method!r}; expected one of: "
                                f"{', '.join(variational.PAIRINGS)}")
        self.method = method
        self.pairing = variational.PAIRINGS[method]
        self.rot_kind, self.B_map = _PAIRING_PARTS[method]
        self.inertia = np.asarray(inertia6, dtype=float)
        N = self.N
        self.rho = self.layout.add("rho", (N + 1, 3), ("rotation chart ρ1", "rotation chart ρ2", "rotation chart ρ3"))
        self.x = self.layout.add("x", (N + 1, 3), ("x", "y", "z"))
        self.xi = self.layout.add("xi", (N, 6), ("ω1", "ω2", "ω3", "v1", "v2", "v3"), axis="step")
        self.u = self.layout.add("controls", (N, len(self.inputs)), self.inputs, axis="step")
        self.base, self.fixed, self.lo, self.hi = self.arrays()
        self.Rref = np.repeat(np.eye(3)[None], N + 1, axis=0)
        self.xi_start = np.zeros(6)
        self.extra_groups: list[Group] = []
        self.goal_position: np.ndarray | None = None
        self.start_R = np.eye(3)
        self.goal_R: np.ndarray | None = None
        self._goal_speed: float | None = None
        self._goal_heading: float | None = None

    # -- vehicle-specific -----------------------------------------------------------------------
    ext_depends = (True, False, False)   # does E depend on the rotation, the position, ξ_prev?
    control_mask: np.ndarray             # (6, nu) structural nonzeros of ∂B/∂u

    def control_wrench(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """B(u) (B, 6) and ∂B/∂u (B, 6, nu)."""
        raise NotImplementedError

    def external_wrench(self, R: np.ndarray, x: np.ndarray, xi: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def external_wrench_jacobian(self, R: np.ndarray, x: np.ndarray, xi: np.ndarray):
        """E (B, 6) and ∂E/∂s (body rotation), ∂E/∂x, ∂E/∂ξ: central differences (override when analytic)."""
        E = self.external_wrench(R, x, xi)
        B = R.shape[0]
        cols = []
        d = 1e-6
        for j in range(3):
            e = np.zeros(3)
            e[j] = d
            cols.append((self.external_wrench(R @ so3.cay(e), x, xi) - self.external_wrench(R @ so3.cay(-e), x, xi))
                        / (2 * d))
        Es = np.stack(cols, axis=-1)
        Ex = np.zeros((B, 6, 3))
        Exi = np.zeros((B, 6, 6))
        if self.ext_depends[1]:
            for j in range(3):
                e = np.zeros(3)
                e[j] = d
                Ex[:, :, j] = (self.external_wrench(R, x + e, xi) - self.external_wrench(R, x - e, xi)) / (2 * d)
        if self.ext_depends[2]:
            for j in range(6):
                e = np.zeros(6)
                e[j] = d
                Exi[:, :, j] = (self.external_wrench(R, x, xi + e) - self.external_wrench(R, x, xi - e)) / (2 * d)
        return E, Es, Ex, Exi

    # Whether the Lagrangian Hessian includes the second derivatives of E. A vehicle whose external
    # wrench is expensive (the boat clips its hull mesh) sets False: the Hessian then omits them
    # (the Jacobian stays exact); documented where it is used.
    exact_external_hessian = True

    def _ext_jac(self, R, x, xi, frozen: bool, site: str | None = None):
        if frozen:
            B = R.shape[0]
            return np.zeros((B, 6)), np.zeros((B, 6, 3)), np.zeros((B, 6, 3)), np.zeros((B, 6, 6))
        if site is None:
            return self.external_wrench_jacobian(R, x, xi)
        return self._ext_remembered(site, True, R, x, xi)

    def _ext_remembered(self, site: str, jacobian: bool, R: np.ndarray, x: np.ndarray, xi: np.ndarray):
        """E (or with ``jacobian`` the tuple of ``external_wrench_jacobian``) remembered per call ``site`` at its
        last inputs, compared by their exact bytes: the start node's pose and velocity are fixed, so its wrench
        and Jacobian repeat at every evaluation (the boat clips its hull for them). Outputs are read-only."""
        key = (R.shape, R.tobytes(), x.tobytes(), xi.tobytes())
        cache = self.__dict__.setdefault("_ext_cache", {})
        last = cache.get((site, jacobian))
        if last is not None and last[0] == key:
            return last[1]
        out = self.external_wrench_jacobian(R, x, xi) if jacobian else self.external_wrench(R, x, xi)
        for a in (out if jacobian else (out,)):
            a.setflags(write=False)
        cache[(site, jacobian)] = (key, out)
        return out

    def _hess_jac(self, jac):
        if self.exact_external_hessian:
            return None
        return lambda X, *p: jac(X, *p, frozen=True)

    # -- indices and the chart ---------------------------------------------------------------------
    @property
    def pose_idx(self) -> np.ndarray:
        return np.concatenate([self.rho, self.x], axis=1)

    @property
    def position_idx(self) -> np.ndarray:
        return self.x

    @property
    def control_idx(self) -> np.ndarray:
        return self.u

    def pose_params(self, nodes: np.ndarray) -> tuple[np.ndarray, ...]:
        return (self.Rref[np.asarray(nodes)],)

    def point_map(self, X, body, Rref):
        """p = x + R̄ cay(ρ) c; ∂p/∂ρ = −R ĉ dcay(−ρ), ∂p/∂x = I."""
        rho, x = X[:, :3], X[:, 3:6]
        R = chart(Rref, rho)
        p = x + np.einsum("bij,bj->bi", R, body)
        J = np.empty((X.shape[0], 3, 6))
        J[:, :, :3] = -R @ so3.hat(body) @ chart_jacobian(rho)
        J[:, :, 3:] = _I3
        return p, J

    def point_curvature(self, X, body, w, Rref):
        """Σ_i w_i ∇²p_i of :meth:`point_map`: only the ρρ block, ∇²(w̄ᵀ cay(ρ) c) with w̄ = R̄ᵀw. Writing
        cay(ρ) c = c + s(ρ) (ρ × c + ½ ρ̂² c), s = 4/(4 + |ρ|²) and q = w̄ᵀ(ρ × c + ½ ρ̂² c) (quadratic):
        ∇² = q ∇²s + ∇s ∇qᵀ + ∇q ∇sᵀ + s ∇²q with ∇s = −s²ρ/2, ∇²s = −s²/2 I + s³/2 ρρᵀ,
        ∇q = c × w̄ + ½(w̄ (ρ·c) + c (w̄·ρ)) − (w̄·c) ρ, ∇²q = ½(w̄cᵀ + cw̄ᵀ) − (w̄·c) I."""
        rho = X[:, :3]
        c = np.asarray(body, dtype=float)
        # w may carry leading axes (…, B, 3): the ρ-only factors (s, ∇s, ∇²s, ρ·c) are formed once
        wb = np.einsum("bji,...bj->...bi", Rref, w)
        r2 = np.einsum("bi,bi->b", rho, rho)
        s = 4.0 / (4.0 + r2)
        wc = np.einsum("...bi,bi->...b", wb, c)
        rc = np.einsum("bi,bi->b", rho, c)
        wr = np.einsum("...bi,bi->...b", wb, rho)
        q = np.einsum("...bi,bi->...b", wb, _cross(rho, c)) + 0.5 * (wr * rc - wc * r2)
        gs = -0.5 * (s * s)[:, None] * rho
        gq = _cross(c, wb) + 0.5 * (wb * rc[:, None] + c * wr[..., None]) - wc[..., None] * rho
        Hs = (-0.5 * s * s)[:, None, None] * _I3 + (0.5 * s**3)[:, None, None] * rho[:, :, None] * rho[:, None, :]
        o = wb[..., :, None] * c[:, None, :]
        Hq = 0.5 * (o + np.swapaxes(o, -1, -2)) - wc[..., None, None] * _I3
        gsq = gs[:, :, None] * gq[..., None, :]
        H = np.zeros(w.shape[:-1] + (6, 6))
        H[..., :3, :3] = q[..., None, None] * Hs + gsq + np.swapaxes(gsq, -1, -2) + s[:, None, None] * Hq
        return H

    def rotations(self, y: np.ndarray) -> np.ndarray:
        return chart(self.Rref, y[self.rho])

    # -- dynamics ------------------------------------------------------------------------------------
    def _h_groups(self, h: np.ndarray):
        """(h value, selection) for each distinct step length in a batch (one, unless T is perturbed):
        a single value selects with a slice (no boolean-mask copies)."""
        if len(h) and np.all(h == h[0]):
            yield float(h[0]), slice(None)
            return
        for hv in np.unique(h):
            yield float(hv), h == hv

    def dynamics(self) -> list[Group]:
        return [self._pose_group(), self._start_group()] + ([self._momentum_group()] if self.N > 1 else [])

    def _pose_group(self) -> Group:
        """Eq. (9) on the chart: 3 rotation rows vee(Q − Qᵀ)/2 and 3 translation rows."""
        N, Bmap, rot_jac = self.N, self.B_map, _ROT_BODY_JAC[self.rot_kind]
        tau = self.pairing.tau
        idx = np.concatenate([self.rho[:-1], self.x[:-1], self.rho[1:], self.x[1:], self.xi,
                              np.full((N, 1), self.T)], axis=1)  # L = 19
        analytic_B = self.method == "vi-cay"
        b_form = _B_FORMS.get(self.method)

        def parts(X, R0, R1):
            h = X[:, 18] / N
            E0, E1 = chart(R0, X[:, 0:3]), chart(R1, X[:, 6:9])
            eta = h[:, None] * X[:, 12:18]
            Rt, t = tau(eta)
            Q = np.swapaxes(Rt, -1, -2) @ np.swapaxes(E0, -1, -2) @ E1
            return h, E0, E1, eta, Rt, t, Q

        def fun(X, R0, R1):
            h, E0, E1, eta, Rt, t, Q = parts(X, R0, R1)
            out = np.empty((X.shape[0], 6))
            out[:, :3] = so3.vee(Q)  # = vee(Q − Qᵀ)/2
            out[:, 3:] = X[:, 9:12] - X[:, 3:6] - np.einsum("bij,bj->bi", E0, t)
            return out

        def dt_domega(a, c):
            """∂(B(a) c)/∂a (B, 3, 3)."""
            if analytic_B:
                y = np.einsum("bij,bj->bi", Bmap(a), c)
                return -0.5 * Bmap(a) @ so3.hat(y)
            if b_form is not None:  # B_cay_paper: ∂B/∂a_j of the rational map
                return np.einsum("bjxy,by->bxj", jets.RationalMap(a, b_form).d, c)
            cols = []
            d = 1e-7
            for j in range(3):
                e = np.zeros(3)
                e[j] = d
                cols.append(np.einsum("bij,bj->bi", Bmap(a + e) - Bmap(a - e), c) / (2 * d))
            return np.stack(cols, axis=-1)

        def jac(X, R0, R1):
            h, E0, E1, eta, Rt, t, Q = parts(X, R0, R1)
            a, c = eta[:, :3], eta[:, 3:]
            B = X.shape[0]
            J = np.zeros((B, 6, 19))
            Pr, Pl = _skew_part_right(Q), _skew_part_left(Q)
            Jb0, Jb1 = chart_jacobian(X[:, 0:3]), chart_jacobian(X[:, 6:9])
            RtT = np.swapaxes(Rt, -1, -2)
            J[:, :3, 6:9] = Pr @ Jb1                                   # ρ_{k+1}
            J[:, :3, 0:3] = Pl @ RtT @ Jb0                             # ρ_k: a = τᵀ s
            Dw = rot_jac(a)                                            # d = Jτ(hω) h δω
            J[:, :3, 12:15] = Pl @ Dw * h[:, None, None]
            J[:, :3, 18] = np.einsum("bij,bj->bi", Pl @ Dw, X[:, 12:15]) / N
            J[:, 3:, 9:12] = _I3
            J[:, 3:, 3:6] = -_I3
            J[:, 3:, 0:3] = E0 @ so3.hat(t) @ Jb0                      # −E0 ŝ t = E0 t̂ s
            Ta = dt_domega(a, c)                                       # ∂t/∂a
            Bm = Bmap(a)
            J[:, 3:, 12:15] = -E0 @ Ta * h[:, None, None]
            J[:, 3:, 15:18] = -E0 @ Bm * h[:, None, None]
            dtdh = np.einsum("bij,bj->bi", Ta, X[:, 12:15]) + np.einsum("bij,bj->bi", Bm, X[:, 15:18])
            J[:, 3:, 18] = -np.einsum("bij,bj->bi", E0, dtdh) / N
            return J

        mask = np.zeros((6, 19), dtype=bool)
        mask[:3, [0, 1, 2, 6, 7, 8, 12, 13, 14, 18]] = True
        mask[3:, 0:3] = True
        mask[3:, 12:19] = True
        mask[3:, 3:6] = np.eye(3, dtype=bool)
        mask[3:, 9:12] = np.eye(3, dtype=bool)
        nonlinear = np.zeros(19, dtype=bool)
        nonlinear[[0, 1, 2, 6, 7, 8, 12, 13, 14, 15, 16, 17, 18]] = True
        # ρ_{k+1} (rotation rows only) and v (translation rows only) share no row: one colour each pair
        colors = np.arange(19)
        colors[15:18] = colors[6:9]
        R0, R1 = self.Rref[:-1], self.Rref[1:]
        form = _B_FORMS.get(self.method) if self.rot_kind == "cay" else None
        hess = None
        if form is not None:
            def hess(X, lam, R0, R1):
                return pose_lagrangian_hessian(X, lam, R0, R1, N, form)
        return Group("dynamics: pose (eq. 9)", idx, fun, mask, jac=jac, params=(R0, R1), nonlinear=nonlinear,
                     hess=hess, hess_colors=colors, labels=[f"step {k}" for k in range(N)])

    def _start_group(self) -> Group:
        """k = 0: C(hξ_0)ᵀ𝕀ξ_0 − 𝕀ξ(0) − (h/2)(B(u_0) + E(g_0, ξ(0))); local (ξ_0, u_0, ρ_0, x_0, T)."""
        N, nu, I6 = self.N, len(self.inputs), self.inertia
        idx = np.concatenate([self.xi[0], self.u[0], self.rho[0], self.x[0], [self.T]])[None, :]
        L = 6 + nu + 7

        def fun(X, Rr, x0):
            h = X[:, L - 1] / N
            out = np.empty((X.shape[0], 6))
            R = chart(Rr, X[:, 6 + nu:9 + nu])
            Bu, _ = self.control_wrench(X[:, 6:6 + nu])
            E = self._ext_remembered("start", False, R, X[:, 9 + nu:12 + nu], x0)
            for hv, sel in self._h_groups(h):
                out[sel] = variational.momentum_map(self.method, hv, X[sel, :6], I6)
            return out - I6 * x0 - 0.5 * h[:, None] * (Bu + E)

        def jac(X, Rr, x0, frozen=False):
            h = X[:, L - 1] / N
            B = X.shape[0]
            J = np.zeros((B, 6, L))
            R = chart(Rr, X[:, 6 + nu:9 + nu])
            Bu, dBu = self.control_wrench(X[:, 6:6 + nu])
            E, Es, Ex, _ = self._ext_jac(R, X[:, 9 + nu:12 + nu], x0, frozen, "start")
            dh = np.empty((B, 6))
            for hv, sel in self._h_groups(h):
                J[sel, :, :6] = variational.momentum_map_jacobian(self.method, hv, X[sel, :6], I6)
                xs = X[sel, :6]
                dh[sel] = np.einsum("bij,bj->bi", self.pairing.K(hv * xs, I6 * xs), xs)
            J[:, :, 6:6 + nu] = -0.5 * h[:, None, None] * dBu
            J[:, :, 6 + nu:9 + nu] = -0.5 * h[:, None, None] * Es @ chart_jacobian(X[:, 6 + nu:9 + nu])
            J[:, :, 9 + nu:12 + nu] = -0.5 * h[:, None, None] * Ex
            J[:, :, L - 1] = (dh - 0.5 * (Bu + E)) / N
            return J

        mask = np.zeros((6, L), dtype=bool)
        mask[:, :6] = self.mm_mask
        mask[:, 6:6 + nu] = self.control_mask
        mask[:, 6 + nu:9 + nu] = self.ext_rot_mask
        mask[:, 9 + nu:12 + nu] = self.ext_pos_mask
        mask[:, L - 1] = True
        params = (self.Rref[:1], self.xi_start[None, :])
        return Group("dynamics: start (eq. 10, k = 0)", idx, fun, mask, jac=jac, params=params,
                     hess_jac=self._hess_jac(jac), labels=["step 0"])

    def _momentum_group(self) -> Group:
        """k = 1…N−1; local (ξ_{k−1}, ξ_k, u_{k−1}, u_k, ρ_k, x_k, T)."""
        N, nu, I6 = self.N, len(self.inputs), self.inertia
        ks = np.arange(1, N)
        idx = np.concatenate([self.xi[ks - 1], self.xi[ks], self.u[ks - 1], self.u[ks], self.rho[ks], self.x[ks],
                              np.full((N - 1, 1), self.T)], axis=1)
        a_u0, a_u1, a_r, a_x, L = 12, 12 + nu, 12 + 2 * nu, 15 + 2 * nu, 19 + 2 * nu

        def fun(X, Rr):
            h = X[:, L - 1] / N
            out = np.empty((X.shape[0], 6))
            for hv, sel in self._h_groups(h):
                out[sel] = (variational.momentum_map(self.method, hv, X[sel, 6:12], I6)
                            - variational.momentum_map(self.method, -hv, X[sel, 0:6], I6))
            B0, _ = self.control_wrench(X[:, a_u0:a_u1])
            B1, _ = self.control_wrench(X[:, a_u1:a_r])
            R = chart(Rr, X[:, a_r:a_x])
            E = self._ext_remembered("momentum", False, R, X[:, a_x:L - 1], X[:, 0:6])
            return out - 0.5 * h[:, None] * (B0 + B1) - h[:, None] * E

        def wrench_jac(X, Rr, frozen=False, site=None):
            """Jacobian of the wrench terms −(h/2)(B(u_{k−1}) + B(u_k)) − h E(ρ_k, x_k, ξ_{k−1}) alone."""
            h = X[:, L - 1] / N
            J = np.zeros((X.shape[0], 6, L))
            B0, dB0 = self.control_wrench(X[:, a_u0:a_u1])
            B1, dB1 = self.control_wrench(X[:, a_u1:a_r])
            R = chart(Rr, X[:, a_r:a_x])
            E, Es, Ex, Exi = self._ext_jac(R, X[:, a_x:L - 1], X[:, 0:6], frozen, site)
            hh = h[:, None, None]
            J[:, :, 0:6] = -hh * Exi
            J[:, :, a_u0:a_u1] = -0.5 * hh * dB0
            J[:, :, a_u1:a_r] = -0.5 * hh * dB1
            J[:, :, a_r:a_x] = -hh * Es @ chart_jacobian(X[:, a_r:a_x])
            J[:, :, a_x:L - 1] = -hh * Ex
            J[:, :, L - 1] = (-0.5 * (B0 + B1) - E) / N
            return J

        def jac(X, Rr, frozen=False):
            h = X[:, L - 1] / N
            J = wrench_jac(X, Rr, frozen, None if frozen else "momentum")
            dh = np.empty((X.shape[0], 6))
            for hv, sel in self._h_groups(h):
                xp, xc = X[sel, 0:6], X[sel, 6:12]
                J[sel, :, 6:12] = variational.momentum_map_jacobian(self.method, hv, xc, I6)
                J[sel, :, 0:6] -= variational.momentum_map_jacobian(self.method, -hv, xp, I6)
                dh[sel] = (np.einsum("bij,bj->bi", self.pairing.K(hv * xc, I6 * xc), xc)
                           + np.einsum("bij,bj->bi", self.pairing.K(-hv * xp, I6 * xp), xp))
            J[:, :, L - 1] += dh / N
            return J

        mask = np.zeros((6, L), dtype=bool)
        mask[:, 0:6] = self.mm_mask | self.ext_xi_mask
        mask[:, 6:12] = self.mm_mask
        mask[:, a_u0:a_u1] = self.control_mask
        mask[:, a_u1:a_r] = self.control_mask
        mask[:, a_r:a_x] = self.ext_rot_mask
        mask[:, a_x:L - 1] = self.ext_pos_mask
        mask[:, L - 1] = True
        # terms: MM(h, ξ_k), MM(−h, ξ_{k−1}) + h E(ρ_k, x_k, ξ_{k−1}), B(u_{k−1}), B(u_k)
        ext = [np.arange(0, 6)]
        if self.ext_depends[0] and self.ext_depends[2]:
            ext.append(np.arange(a_r, a_x))
        if self.ext_depends[1] and (self.ext_depends[2] or self.ext_depends[0]):
            ext.append(np.arange(a_x, L - 1))
        e_block = np.concatenate(ext)
        blocks = [e_block, np.arange(6, 12), np.arange(a_u0, a_u1), np.arange(a_u1, a_r)]
        if self.ext_depends[0] and not self.ext_depends[2]:
            rot = [np.arange(a_r, a_x)] + ([np.arange(a_x, L - 1)] if self.ext_depends[1] else [])
            blocks.append(np.concatenate(rot))
        hmask, colors = block_hessian(L, blocks, L - 1)
        hess = None
        if self.method in _MM_JETS:
            hess = self._momentum_hessian(L, wrench_jac, [np.arange(a_u0, a_u1), np.arange(a_u1, a_r)],
                                          [np.arange(a_r, a_x), np.arange(a_x, L - 1), np.arange(0, 6)])
        return Group("dynamics: momentum (eq. 10)", idx, fun, mask, jac=jac, params=(self.Rref[ks],),
                     hess=hess, hess_mask=hmask, hess_colors=colors, hess_jac=self._hess_jac(jac),
                     labels=[f"step {k}" for k in ks])

    def _momentum_hessian(self, L: int, wrench_jac, control_blocks: list[np.ndarray],
                          ext_blocks: list[np.ndarray]):
        """Lagrangian Hessian of the momentum group: the momentum maps C_τ(±hξ)ᵀ𝕀ξ exactly by jets
        (:func:`momentum_lagrangian_hessian`), the wrench terms by coloured central differences of their
        analytic Jacobian ``wrench_jac`` over the control columns and the columns E depends on (blocks that
        do not mix share colours; T its own colour when the duration is free). A vehicle without
        ``exact_external_hessian`` omits E's second derivatives, as its ``hess_jac`` does."""
        N, I6 = self.N, self.inertia
        T_free = not self.fixed[self.T]
        exact_E = self.exact_external_hessian
        blocks = list(control_blocks)
        if exact_E and any(self.ext_depends):
            blocks.append(np.concatenate([b for b, dep in zip(ext_blocks, self.ext_depends) if dep]))
        # the differences run on the wrench's columns only (sub-local indices), T last
        sub = np.concatenate(blocks + [[L - 1]]).astype(int)
        pos = np.empty(L, dtype=int)
        pos[sub] = np.arange(len(sub))
        sblocks = [pos[b] for b in blocks]
        width = max(len(b) for b in sblocks)
        colors = [np.array([b[j] for b in sblocks if j < len(b)]) for j in range(width)]
        wmask, _ = block_hessian(len(sub), sblocks, len(sub) - 1)
        if T_free:
            colors.append(np.array([len(sub) - 1]))
        else:
            wmask[-1, :] = wmask[:, -1] = False
        plan = fd_hessian_plan(colors, wmask)
        cur = np.r_[6:12, [L - 1] if T_free else []].astype(int)
        prev = np.r_[0:6, [L - 1] if T_free else []].astype(int)

        def hess(X, lam, Rr):
            K = X.shape[0]
            xi = np.concatenate([X[:, 6:12], X[:, 0:6]])
            T = np.concatenate([X[:, L - 1], X[:, L - 1]])
            sign = np.repeat([1.0, -1.0], K)
            Hm = momentum_lagrangian_hessian(self.method, xi, T, sign, np.concatenate([lam, -lam]), I6, N, T_free)

            def jac_sub(P, pb):
                Xf = np.tile(X, (P.shape[0] // K, 1))
                Xf[:, sub] = P
                return wrench_jac(Xf, *pb, frozen=not exact_E)[:, :, sub]

            Hw = fd_hessian_colored(jac_sub, X[:, sub], (Rr,), lam, colors, wmask, plan)
            H = np.zeros((K, L, L))
            H[:, sub[:, None], sub[None, :]] = Hw
            H[:, cur[:, None], cur[None, :]] += Hm[:K]
            H[:, prev[:, None], prev[None, :]] += Hm[K:]
            return H

        return hess

    ext_rot_rows = (True,) * 6   # which wrench rows E moves with the rotation (gravity: forces only)

    @property
    def ext_rot_mask(self) -> np.ndarray:
        m = np.zeros((6, 3), dtype=bool)
        if self.ext_depends[0]:
            m[np.array(self.ext_rot_rows)] = True
        return m

    @property
    def mm_mask(self) -> np.ndarray:
        """Structural nonzeros of ∂[C_τ(±hξ)ᵀ𝕀ξ]/∂ξ (6, 6)."""
        m = np.ones((6, 6), dtype=bool)
        if self.method in _MM_DIAGONAL_ZEROS:
            m[3, 0] = m[4, 1] = m[5, 2] = False
        if self.method in _MM_LN and np.all(self.inertia[3:] == self.inertia[3]):
            m[:3, 3:] = False
        return m

    @property
    def ext_xi_mask(self) -> np.ndarray:
        """Structural nonzeros of ∂E/∂ξ_prev (6, 6)."""
        return np.full((6, 6), bool(self.ext_depends[2]))

    @property
    def ext_pos_mask(self) -> np.ndarray:
        return np.full((6, 3), bool(self.ext_depends[1]))

    # -- node velocities (output, goal) -------------------------------------------------------------
    def node_momenta(self, y: np.ndarray) -> np.ndarray:
        """m_k (N+1, 6): 𝕀ξ(0) at node 0, C(−hξ_{k−1})ᵀ𝕀ξ_{k−1} + (h/2)(B(u_{k−1}) + E(g_k, ξ_{k−1})) after."""
        h = float(y[self.T]) / self.N
        xi = y[self.xi]
        R = self.rotations(y)
        Bu, _ = self.control_wrench(y[self.u])
        E = self.external_wrench(R[1:], y[self.x][1:], xi)
        m = np.empty((self.N + 1, 6))
        m[0] = self.inertia * self.xi_start
        m[1:] = variational.momentum_map(self.method, -h, xi, self.inertia) + 0.5 * h * (Bu + E)
        return m

    def goal_velocity_group(self, linear_world: np.ndarray | None, angular_body: np.ndarray | None) -> Group:
        """Node-N velocity: R_N 𝕀_v⁻¹ m_N^v = v_goal (world) and/or 𝕀_ω⁻¹ m_N^ω = ω_goal (body).
        Local (ξ_{N−1}, u_{N−1}, ρ_N, x_N, T)."""
        N, nu, I6 = self.N, len(self.inputs), self.inertia
        idx = np.concatenate([self.xi[N - 1], self.u[N - 1], self.rho[N], self.x[N], [self.T]])[None, :]
        L = 6 + nu + 7
        rows = ([0, 1, 2] if angular_body is not None else []) + ([3, 4, 5] if linear_world is not None else [])
        target = np.concatenate([angular_body if angular_body is not None else np.zeros(3),
                                 linear_world if linear_world is not None else np.zeros(3)])

        def node(X, Rr, frozen=False, values_only=False):
            h = X[:, L - 1] / N
            R = chart(Rr, X[:, 6 + nu:9 + nu])
            Bu, dBu = self.control_wrench(X[:, 6:6 + nu])
            if values_only:   # m_N alone: the external wrench without its Jacobian
                m = np.empty((X.shape[0], 6))
                for hv, sel in self._h_groups(h):
                    m[sel] = variational.momentum_map(self.method, -hv, X[sel, :6], I6)
                E = self._ext_remembered("goal", False, R, X[:, 9 + nu:12 + nu], X[:, :6])
                return R, m + 0.5 * h[:, None] * (Bu + E), None
            E, Es, Ex, Exi = self._ext_jac(R, X[:, 9 + nu:12 + nu], X[:, :6], frozen, None if frozen else "goal")
            m = np.empty((X.shape[0], 6))
            Jm = np.zeros((X.shape[0], 6, L))
            dh = np.empty((X.shape[0], 6))
            for hv, sel in self._h_groups(h):
                xs = X[sel, :6]
                m[sel] = variational.momentum_map(self.method, -hv, xs, I6)
                Jm[sel, :, :6] = variational.momentum_map_jacobian(self.method, -hv, xs, I6)
                dh[sel] = -np.einsum("bij,bj->bi", self.pairing.K(-hv * xs, I6 * xs), xs)
            hh = h[:, None, None]
            m += 0.5 * h[:, None] * (Bu + E)
            Jm[:, :, :6] += 0.5 * hh * Exi
            Jm[:, :, 6:6 + nu] = 0.5 * hh * dBu
            Jm[:, :, 6 + nu:9 + nu] = 0.5 * hh * Es @ chart_jacobian(X[:, 6 + nu:9 + nu])
            Jm[:, :, 9 + nu:12 + nu] = 0.5 * hh * Ex
            Jm[:, :, L - 1] = (dh + 0.5 * (Bu + E)) / N
            return R, m, Jm

        def fun(X, Rr):
            R, m, _ = node(X, Rr, values_only=True)
            w = m[:, :3] / I6[:3]
            v = np.einsum("bij,bj->bi", R, m[:, 3:] / I6[3:])
            return np.concatenate([w, v], axis=1)[:, rows]

        def jac(X, Rr, frozen=False):
            R, m, Jm = node(X, Rr, frozen)
            J = np.zeros((X.shape[0], 6, L))
            J[:, :3] = Jm[:, :3] / I6[:3, None]
            vb = m[:, 3:] / I6[3:]
            J[:, 3:] = R @ (Jm[:, 3:] / I6[3:, None])
            J[:, 3:, 6 + nu:9 + nu] += -R @ so3.hat(vb) @ chart_jacobian(X[:, 6 + nu:9 + nu])
            return J[:, rows]

        mask = np.ones((6, L), dtype=bool)
        mm = self.mm_mask | self.ext_xi_mask
        mask[:3, :6] = mm[:3]
        mask[:3, 6:6 + nu] = self.control_mask[:3]
        mask[3:, 6:6 + nu] = np.any(self.control_mask[3:], axis=0)  # R_N mixes the force rows
        mask[:3, 6 + nu:9 + nu] = self.ext_rot_mask[:3]
        mask[:3, 9 + nu:12 + nu] = self.ext_pos_mask[:3]
        mask[3:, 9 + nu:12 + nu] = np.any(self.ext_pos_mask[3:])
        mask = mask[rows]
        return Group("goal: velocity", idx, fun, mask, jac=jac, params=(self.Rref[N:N + 1],),
                     lower=target[rows], upper=target[rows], hess_jac=self._hess_jac(jac), labels=[f"node {N}"])

    def speed_group(self, vmax: float) -> Group:
        """|v_k|² ≤ v_max² for the body linear velocity of every step."""
        idx = self.xi[:, 3:]
        return Group("bounds: speed", idx, lambda X: np.sum(X * X, axis=1)[:, None], np.ones((1, 3), dtype=bool),
                     jac=lambda X: (2 * X)[:, None, :], hess=lambda X, lam: 2.0 * lam[:, :, None] * _I3,
                     lower=-np.inf, upper=vmax**2,
                     labels=[f"step {k}" for k in range(self.N)])

    def heading_group(self, node: int, heading: float, label: str) -> Group:
        """Yaw of the body x axis: −sin ψ (R e_x)_x + cos ψ (R e_x)_y = 0 and cos ψ (R e_x)_x + sin ψ (R e_x)_y ≥ 0."""
        c, s = np.cos(heading), np.sin(heading)
        idx = self.rho[[node]]

        def fun(X, Rr):
            e = chart(Rr, X)[:, :, 0]
            return np.stack([-s * e[:, 0] + c * e[:, 1], c * e[:, 0] + s * e[:, 1]], axis=1)

        def jac(X, Rr):
            R = chart(Rr, X)
            de = -R @ so3.hat(np.array([1.0, 0.0, 0.0])) @ chart_jacobian(X)  # ∂(R e_x)/∂ρ
            return np.stack([-s * de[:, 0] + c * de[:, 1], c * de[:, 0] + s * de[:, 1]], axis=1)

        return Group(f"heading {label}", idx, fun, np.ones((2, 3), dtype=bool), jac=jac, params=(self.Rref[[node]],),
                     lower=[0.0, 0.0], upper=[0.0, np.inf], labels=[f"node {node}"])

    def fix_heading(self, node: int, heading: float, label: str) -> list[Group]:
        return [self.heading_group(node, heading, label)]

    # -- scenario: start, goal, bounds ---------------------------------------------------------
    def read_start(self, t: Table) -> None:
        x0 = t.vector("position", 3, [0.0, 0.0, 0.0])
        R0 = quaternion.to_matrix(t.quaternion("orientation", [1.0, 0.0, 0.0, 0.0]))
        w0 = t.vector("angular_velocity", 3, [0.0, 0.0, 0.0])
        v_world = t.vector("velocity", 3, [0.0, 0.0, 0.0])
        self.start_R = R0
        self.Rref[:] = R0
        self.xi_start = np.concatenate([w0, R0.T @ v_world])
        self.base[self.rho[0]] = 0.0
        self.base[self.x[0]] = x0
        self.fixed[self.rho[0]] = self.fixed[self.x[0]] = True

    def read_goal(self, t: Table) -> None:
        N = self.N
        if t.has("position"):
            pos = t.vector("position", 3)
            self.base[self.x[N]] = pos
            self.fixed[self.x[N]] = True
            self.goal_position = pos
        if t.has("orientation"):
            if t.has("heading"):
                raise t.error("heading", "give orientation or heading, not both")
            self.goal_R = quaternion.to_matrix(t.quaternion("orientation"))
            self.Rref[N] = self.goal_R
            self.base[self.rho[N]] = 0.0
            self.fixed[self.rho[N]] = True
        elif t.has("heading"):
            self._goal_heading = t.number("heading")
            self.extra_groups.append(self.heading_group(N, self._goal_heading, "goal"))
        v = t.vector("velocity", 3) if t.has("velocity") else None
        w = t.vector("angular_velocity", 3) if t.has("angular_velocity") else None
        if v is not None or w is not None:
            self.extra_groups.append(self.goal_velocity_group(v, w))
        self._goal_speed = None if v is None else float(np.linalg.norm(v))

    def read_bounds(self, t: Table) -> None:
        limits = self.input_limits()
        for name in self.inputs:
            if t.has(name):
                v = t.vector(name, 2)
                lo, hi = limits[name]
                if v[0] > v[1]:
                    raise t.error(name, f"lower bound {v[0]:g} exceeds upper bound {v[1]:g}")
                if v[0] < lo - 1e-12 or v[1] > hi + 1e-12:
                    raise t.error(name, f"[{v[0]:g}, {v[1]:g}] exceeds the vehicle's limit [{lo:g}, {hi:g}]")
                limits[name] = (float(v[0]), float(v[1]))
        for j, name in enumerate(self.inputs):
            self.lo[self.u[:, j]], self.hi[self.u[:, j]] = limits[name]
        if t.has("speed"):
            v = t.vector("speed", 2)
            if v[0] != 0.0 or v[1] <= 0:
                raise t.error("speed", f"must be [0, v_max] with v_max > 0 (a limit on |v|), got [{v[0]:g}, {v[1]:g}]")
            self.extra_groups.append(self.speed_group(float(v[1])))

    def input_limits(self) -> dict[str, tuple[float, float]]:
        raise NotImplementedError

    # -- initial guess ---------------------------------------------------------------------------
    def nominal_controls(self) -> np.ndarray:
        return np.zeros(len(self.inputs))

    def _orientations_along(self, n: int) -> np.ndarray:
        """Start → goal orientation along the exponential (a goal heading turns the start about z)."""
        R0 = self.start_R
        goal = self.goal_R
        if goal is None and self._goal_heading is not None:
            yaw0 = np.arctan2(R0[1, 0], R0[0, 0])
            goal = so3.exp(np.array([0.0, 0.0, (self._goal_heading - yaw0 + np.pi) % (2 * np.pi) - np.pi])) @ R0
        if goal is None:
            return np.repeat(R0[None], n, axis=0)
        w = so3.log(R0.T @ goal)
        s = np.linspace(0.0, 1.0, n)[:, None]
        return R0 @ so3.exp(s * w)

    def guess_from_path(self, y: np.ndarray, path: np.ndarray, spec=None) -> np.ndarray:
        """Poses along the path with orientations interpolated on SO(3) (exp of the relative log);
        step velocities from τ⁻¹ of consecutive poses (so eq. 9 holds exactly); nominal controls."""
        N = self.N
        h = float(y[self.T]) / N
        self.Rref = self._orientations_along(N + 1)
        y[self.rho] = 0.0
        y[self.x] = path
        y[self.xi] = self._step_velocities(self.Rref, path, h)
        y[self.u] = np.clip(self.nominal_controls(), self.lo[self.u], self.hi[self.u])
        return np.where(self.fixed, self.base, y)

    def _step_velocities(self, R: np.ndarray, x: np.ndarray, h: float) -> np.ndarray:
        Rrel = np.swapaxes(R[:-1], -1, -2) @ R[1:]
        a = so3.cay_inv(Rrel) if self.rot_kind == "cay" else so3.log(Rrel)
        dx = np.einsum("bji,bj->bi", R[:-1], x[1:] - x[:-1])
        c = np.linalg.solve(self.B_map(a), dx[..., None])[..., 0]
        return np.concatenate([a, c], axis=1) / h

    def guess_rollout(self, y: np.ndarray) -> np.ndarray:
        """Forward simulation from the start with the nominal controls (exactly feasible)."""
        from ...integrators.common import HolonomicSystem, RigidState

        N = self.N
        h = float(y[self.T]) / N
        u = np.clip(self.nominal_controls(), self.lo[self.u[0]], self.hi[self.u[0]])
        Bu, _ = self.control_wrench(u[None, :])

        def wrench(k, R, x, xi):
            return Bu[0] + self.external_wrench(R[None], x[None], xi[None])[0]

        x0 = self.base[self.x[0]]
        traj = variational.integrate(HolonomicSystem(self.inertia, wrench),
                                     RigidState(R=self.start_R, x=x0, omega=self.xi_start[:3], v=self.xi_start[3:]),
                                     h, N, self.method)
        if len(traj.time) != N + 1:
            return self.guess_from_path(y, np.repeat(x0[None], N + 1, axis=0))
        R = traj.rotation_matrices
        self.Rref = R.copy()
        y[self.rho] = 0.0
        y[self.x] = traj.position
        y[self.xi] = self._step_velocities(R, np.asarray(traj.position), h)
        y[self.u] = u
        if self.goal_R is not None:
            self.Rref[N] = self.goal_R
        return np.where(self.fixed, self.base, y)

    def start_position(self) -> np.ndarray:
        return self.base[self.x[0]].copy()

    def start_speed(self) -> float:
        return float(np.linalg.norm(self.xi_start[3:]))

    def goal_speed(self) -> float | None:
        return self._goal_speed

    def recentre(self, y: np.ndarray, threshold: float = 1.0) -> bool:
        """Move chart centres R̄_k to R_k (ρ_k → 0) where |ρ_k| exceeds ``threshold`` (free nodes)."""
        rho = y[self.rho]
        free = ~self.fixed[self.rho[:, 0]]
        big = free & (np.linalg.norm(rho, axis=1) > threshold)
        if not np.any(big):
            return False
        self.Rref[big] = chart(self.Rref[big], rho[big])
        y[self.rho[big]] = 0.0
        return True

    # -- output ----------------------------------------------------------------------------------
    def trajectory(self, y: np.ndarray) -> Trajectory:
        """As ``core.integrators.variational.integrate`` assembles it (node velocity 𝕀⁻¹m_k, ξ(0) at node 0)."""
        h = float(y[self.T]) / self.N
        R = self.rotations(y)
        x = y[self.x]
        m = self.node_momenta(y)
        vel = m / self.inertia
        vel[0] = self.xi_start
        Rm = np.einsum("kij,kj->ki", R, m[:, :3])
        P = np.einsum("kij,kj->ki", R, m[:, 3:])
        L = Rm + np.cross(x, P)
        q = quaternion.from_matrix(R)
        if len(q) > 1:
            dots = np.sum(q[1:] * q[:-1], axis=-1)
            q[1:] *= np.cumprod(np.where(dots < 0, -1.0, 1.0), axis=0)[..., None]
        U = y[self.u]
        return Trajectory(time=h * np.arange(self.N + 1), position=x, orientation=q,
                          angular_velocity=vel[:, :3], linear_velocity=vel[:, 3:],
                          momentum_angular=L, momentum_linear=P,
                          controls={name: U[:, j] for j, name in enumerate(self.inputs)},
                          stats={"method": self.method, "steps": self.N, "dt": h}, vehicle=self.vehicle)

    def from_trajectory(self, traj: Trajectory) -> np.ndarray:
        y = self.base.copy()
        n = self.N + 1
        if len(traj.time) != n or any(len(traj.controls.get(k, [])) != self.N for k in self.inputs):
            raise ScenarioError("initial trajectory", f"must have {n} nodes and {self.N} controls per input")
        h = float(traj.time[-1]) / self.N
        R = traj.rotation_matrices
        fixed_rot = self.fixed[self.rho[:, 0]]
        self.Rref = np.where(fixed_rot[:, None, None], self.Rref, R)
        y[self.rho] = 0.0
        y[self.x] = traj.position
        y[self.xi] = self._step_velocities(R, np.asarray(traj.position), h)
        y[self.u] = np.stack([traj.controls[k] for k in self.inputs], axis=1)
        y[self.T] = float(traj.time[-1])
        return np.where(self.fixed, self.base, y)


__all__ = ["HolonomicModel", "chart", "chart_jacobian"]
