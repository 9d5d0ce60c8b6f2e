"""The snakeboard (main paper §5.2.2; Ostrowski 1996; Bloch et al. 1996), continuous and discrete.

Coordinates q = (ψ, φ, θ, x, y): rotor angle ψ (the rider's torso twist relative to the
board), wheel steering angle φ (the rear wheels steer by +φ, the front wheels by −φ),
board pose (θ, x, y) ∈ SE(2). Body velocity ξ = (ω, v_x, v_y) (angular first, as in
``docs/equations.md``). Parameters (SI): mass m, half wheelbase l (centre to each
wheel axle), rotor inertia I, wheel (steering) inertia J. The derivation is in
``docs/snakeboard.md``; in brief:

* Lagrangian L = ½ q̇ᵀ𝕄q̇, 𝕄 = [[I,0,I,0,0],[0,2J,0,0,0],[I,0,ml²,0,0],[0,0,0,m,0],[0,0,0,0,m]];
  reduced ℓ(r, u, ξ) = ½ I u_ψ² + I u_ψ ω + ½ m l² ω² + J u_φ² + ½ m (v_x² + v_y²),
  μ = ∂ℓ/∂ξ = (I u_ψ + m l² ω, m v_x, m v_y). Positive definite iff I < m l².
* Constraints (paper §5.2.2) in body form: −l cos φ ω − sin φ v_x + cos φ v_y = 0 and
  l cos φ ω + sin φ v_x + cos φ v_y = 0, i.e. v_y = 0 and ω = −(tan φ / l) v_x: ξ = s e₁(φ) with
  e₁(φ) = 2 l cos²φ (tan φ / l, −1, 0) = (sin 2φ, −2 l cos²φ, 0) (rotation about the
  instantaneous centre of rotation, body point (0, −l/tan φ)).
* Nonholonomic momentum p = ⟨μ, e₁⟩ = I sin 2φ u_ψ + 4 m l² cos²φ s; so
  ξ = Ω − A(r) u with Ω = p e₁ / (4 m l² cos²φ) = (p/(2ml)) (tan φ / l, −1, 0) and
  A(r) = (I/(m l²)) [[sin²φ, 0], [−l sin φ cos φ, 0], [0, 0]] (columns ψ, φ).
* Momentum equation: ṗ = ⟨μ, ad_ξ e₁ + ∂e₁/∂φ φ̇⟩ = 2 I cos²φ φ̇ ψ̇ − tan φ φ̇ p.
* Shape equations (constraint forces have no ψ, φ components; A ∥ e₁ so Aᵀλ = 0):
  d/dt [I (ψ̇ + ω)] = τ_ψ (``rotor_torque``), 2 J φ̈ = τ_φ (``steering_torque``).
  p is ``sin 2φ`` times the angular momentum about the instantaneous centre of rotation.

Discrete (paper eqs. 16–17, τ = cay on SE(2) with its exact dcay⁻¹, quadrature α):
ξ_k = s_k e₁(φ_{k+α}) (the discrete constraint: ξ_k lies in the constraint distribution at
r_{k+α} = r_k + α h u_k), g_{k+1} = g_k cay(h ξ_k), r_{k+1} = r_k + h u_k,

    e₁(φ_k)ᵀ [dcay⁻¹(h ξ_k)ᵀ μ_k − dcay⁻¹(−h ξ_{k−1})ᵀ μ_{k−1}] = 0           (momentum, eq. 16)
    I (u^ψ_k + ω_k) − I (u^ψ_{k−1} + ω_{k−1}) = h (α f^ψ_{k−1} + (1−α) f^ψ_k)  (shape, eq. 16)
    2 J (u^φ_k − u^φ_{k−1})                 = h (α f^φ_{k−1} + (1−α) f^φ_k)

(A(r_k)ᵀ DEP(k) vanishes because A(r_k) ∥ e₁(φ_k); ∂ℓ/∂r = 0.) Because μ_k has no v_y part,
the ad terms of dcay⁻¹ drop and the momentum equation is a cubic in s_k with an O(h²)
cubic part: e₁(φ_k)·μ_k + ¼h²s_k² sin 2φ_{k+α} sin 2φ_k (e₁(φ_{k+α})·μ_k) = P_k, solved by
scalar Newton (1–2 iterations). P_k (the momentum arriving at node k) is the discrete
counterpart of p(t_k); with the rotor momentum π^ψ_k = I(u^ψ_{k−1} + ω_{k−1}) + hα f^ψ_{k−1} and
π^φ_k = 2J u^φ_{k−1} + hα f^φ_{k−1} (discrete Legendre transforms; at k = 0 the continuous
initial momenta) it gives the node state. Wheel stops: |φ| ≤ max_wheel_angle is enforced by
an inelastic stop (u^φ_k clipped so φ_{k+1} stays within the limit; counted in
``stats.wheel_stops``).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
from scipy.integrate import solve_ivp

from ..errors import ScenarioError
from ..lie import se2
from ..trajectory import Trajectory
from .snakeboard_spec import SNAKEBOARD

INPUTS = SNAKEBOARD.input_names    # rotor_torque, steering_torque
SHAPE = SNAKEBOARD.shape_names     # rotor_angle, wheel_angle
_RIDER: Mapping[str, Any] = SNAKEBOARD.preset("rider").values   # numbers
# continuous state layout used by the reference and the batched integrator
STATE = ("heading", "x", "y", "rotor_angle", "wheel_angle", "rotor_rate", "wheel_rate", "momentum")

NEWTON_MAX_ITER = 30


@dataclass(frozen=True)
class Snakeboard:
    """Parameters in SI units. ``rider()`` is the preset: board plus a standing rider.

    mass m [kg], half_wheelbase l [m] (centre to each wheel axle), rotor_inertia I [kg m²]
    (the rider's twisting torso and arms about the vertical), wheel_inertia J [kg m²] (one
    foot plate with its wheels and the foot, about its pivot), max_wheel_angle [rad]
    (|φ| limit, below π/2), max_rotor_torque [N m], max_steering_torque [N m]. The model's
    yaw inertia of the whole board is m l² (paper's 𝕄), so I < m l² is required.
    """

    mass: float = _RIDER["mass"]
    half_wheelbase: float = _RIDER["half_wheelbase"]
    rotor_inertia: float = _RIDER["rotor_inertia"]
    wheel_inertia: float = _RIDER["wheel_inertia"]
    max_wheel_angle: float = _RIDER["max_wheel_angle"]
    max_rotor_torque: float = _RIDER["max_rotor_torque"]
    max_steering_torque: float = _RIDER["max_steering_torque"]

    inputs: tuple[str, ...] = field(default=INPUTS, init=False, repr=False)
    shape_names: tuple[str, ...] = field(default=SHAPE, init=False, repr=False)

    def __post_init__(self) -> None:
        for key in SNAKEBOARD.parameter_names:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ScenarioError(f"[vehicle] {key}", f"must be a finite number, got {value!r}")
            if value <= 0:
                raise ScenarioError(f"[vehicle] {key}", f"must be positive, got {value}")
        if self.max_wheel_angle >= 0.5 * math.pi:
            raise ScenarioError("[vehicle] max_wheel_angle",
                                f"must be below π/2 rad (wheels across the board), got {self.max_wheel_angle}")
        yaw = self.mass * self.half_wheelbase ** 2
        if self.rotor_inertia >= yaw:
            raise ScenarioError("[vehicle] rotor_inertia",
                                f"must be below mass·half_wheelbase² = {yaw:.6g} kg m² (the board's yaw "
                                f"inertia in this model), got {self.rotor_inertia}")

    @classmethod
    def rider(cls) -> "Snakeboard":
        """Board (≈5 kg) plus a 55 kg rider; plates 0.3 m from the centre; torso I = 1 kg m²."""
        return cls()

    # -- convenience wrappers ------------------------------------------------------------
    def simulate(self, initial: "SnakeboardState", controls: Mapping[str, np.ndarray], dt: float,
                 steps: int | None = None, alpha: float = 0.5) -> Trajectory:
        return simulate(self, initial, controls, dt, steps, alpha)


@dataclass(frozen=True)
class SnakeboardState:
    """A continuous state: pose, shape, shape rates and the nonholonomic momentum p."""

    heading: float = 0.0
    x: float = 0.0
    y: float = 0.0
    rotor_angle: float = 0.0
    wheel_angle: float = 0.0
    rotor_rate: float = 0.0
    wheel_rate: float = 0.0
    momentum: float = 0.0

    @classmethod
    def with_speed(cls, board: Snakeboard, speed: float, **kw: float) -> "SnakeboardState":
        """The state whose forward body speed v_x is ``speed``: p = I sin 2φ ψ̇ − 2 m l v_x."""
        phi, psid = kw.get("wheel_angle", 0.0), kw.get("rotor_rate", 0.0)
        p = board.rotor_inertia * math.sin(2 * phi) * psid - 2 * board.mass * board.half_wheelbase * speed
        return cls(momentum=p, **kw)

    def vector(self) -> np.ndarray:
        return np.array([getattr(self, k) for k in STATE], dtype=float)


# ---------------------------------------------------------------------------------------------
# Continuous geometry and dynamics (batched over leading axes)
# ---------------------------------------------------------------------------------------------

def e1(board: Snakeboard, phi: np.ndarray) -> np.ndarray:
    """e₁(φ) = 2 l cos²φ (tan φ / l, −1, 0) = (sin 2φ, −2 l cos²φ, 0) (paper §5.2.2)."""
    phi = np.asarray(phi, dtype=float)
    c = np.cos(phi)
    return np.stack([np.sin(2 * phi), -2 * board.half_wheelbase * c * c, np.zeros_like(phi)], axis=-1)


def constraint_forms(board: Snakeboard, phi: np.ndarray) -> np.ndarray:
    """Rows of the two constraints in body form, ω_i(φ)·ξ = 0: (…, 2, 3).

    −l cos φ ω − sin φ v_x + cos φ v_y = 0 (rear wheels, at −l, steered +φ) and
    l cos φ ω + sin φ v_x + cos φ v_y = 0 (front wheels, at +l, steered −φ).
    """
    phi = np.asarray(phi, dtype=float)
    c, s, l = np.cos(phi), np.sin(phi), board.half_wheelbase
    return np.stack([np.stack([-l * c, -s, c], axis=-1), np.stack([l * c, s, c], axis=-1)], axis=-2)


def body_momentum(board: Snakeboard, rotor_rate: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """μ = ∂ℓ/∂ξ = (I u_ψ + m l² ω, m v_x, m v_y)."""
    xi = np.asarray(xi, dtype=float)
    m, l, inertia = board.mass, board.half_wheelbase, board.rotor_inertia
    return np.stack([inertia * np.asarray(rotor_rate) + m * l * l * xi[..., 0], m * xi[..., 1], m * xi[..., 2]], axis=-1)


def nonholonomic_momentum(board: Snakeboard, phi: np.ndarray, rotor_rate: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """p = ⟨∂ℓ/∂ξ, e₁(φ)⟩."""
    return np.sum(body_momentum(board, rotor_rate, xi) * e1(board, phi), axis=-1)


def connection(board: Snakeboard, phi: np.ndarray) -> np.ndarray:
    """A(r) (…, 3, 2), columns (ψ, φ): (I/(m l²)) [[sin²φ, 0], [−l sin φ cos φ, 0], [0, 0]].

    The unique map with −A(r)u in span e₁(φ) (constraints) and ⟨μ(u, −A u), e₁⟩ = 0
    (horizontal = kinetic-metric orthogonal to the symmetry direction).
    """
    phi = np.asarray(phi, dtype=float)
    k = board.rotor_inertia / (board.mass * board.half_wheelbase ** 2)
    s, c = np.sin(phi), np.cos(phi)
    A = np.zeros(phi.shape + (3, 2))
    A[..., 0, 0] = k * s * s
    A[..., 1, 0] = -k * board.half_wheelbase * s * c
    return A


def locked_velocity(board: Snakeboard, phi: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Ω = p e₁(φ) / (4 m l² cos²φ) = (p / (2 m l)) (tan φ / l, −1, 0)."""
    phi = np.asarray(phi, dtype=float)
    p = np.asarray(p, dtype=float)
    l = board.half_wheelbase
    f = p / (2 * board.mass * l)
    return np.stack([f * np.tan(phi) / l, -f, np.zeros_like(f)], axis=-1)


def body_velocity(board: Snakeboard, phi: np.ndarray, rotor_rate: np.ndarray, p: np.ndarray) -> np.ndarray:
    """ξ = Ω − A(r) u: ω = tan φ (p − I sin 2φ ψ̇)/(2 m l²), v_x = −(p − I sin 2φ ψ̇)/(2 m l), v_y = 0."""
    phi = np.asarray(phi, dtype=float)
    A = connection(board, phi)
    return locked_velocity(board, phi, p) - A[..., :, 0] * np.asarray(rotor_rate, dtype=float)[..., None]


def rotor_rate_from_momenta(board: Snakeboard, phi: np.ndarray, p: np.ndarray, rotor_momentum: np.ndarray) -> np.ndarray:
    """Invert π_ψ = I(ψ̇ + ω): ψ̇ = (π_ψ/I − tan φ p/(2 m l²)) / (1 − (I/(m l²)) sin²φ)."""
    ml2 = board.mass * board.half_wheelbase ** 2
    phi = np.asarray(phi, dtype=float)
    k = board.rotor_inertia / ml2
    return (np.asarray(rotor_momentum) / board.rotor_inertia - np.tan(phi) * np.asarray(p) / (2 * ml2)) / (
        1 - k * np.sin(phi) ** 2)


def kinetic_energy(board: Snakeboard, rotor_rate: np.ndarray, wheel_rate: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """ℓ = ½ I u_ψ² + I u_ψ ω + ½ m l² ω² + J u_φ² + ½ m |v|²."""
    xi = np.asarray(xi, dtype=float)
    u, w = np.asarray(rotor_rate), xi[..., 0]
    b = board
    return (0.5 * b.rotor_inertia * u * u + b.rotor_inertia * u * w
            + 0.5 * b.mass * b.half_wheelbase ** 2 * w * w + b.wheel_inertia * np.asarray(wheel_rate) ** 2
            + 0.5 * b.mass * (xi[..., 1] ** 2 + xi[..., 2] ** 2))


def reduced_rhs(board: Snakeboard, state: np.ndarray, rotor_torque: np.ndarray,
                steering_torque: np.ndarray) -> np.ndarray:
    """d/dt of the state (θ, x, y, ψ, φ, ψ̇, φ̇, p) (…, 8): the reduced equations.

    θ̇ = ω, ẋ = cos θ v_x − sin θ v_y, ẏ = sin θ v_x + cos θ v_y with ξ = Ω − A(r)u;
    ṗ = 2 I cos²φ φ̇ ψ̇ − tan φ φ̇ p; 2 J φ̈ = τ_φ;
    I(ψ̈ + θ̈) = τ_ψ with θ̈ = (sec²φ φ̇ p + tan φ ṗ)/(2 m l²) − (I/(m l²))(sin 2φ φ̇ ψ̇ + sin²φ ψ̈).
    """
    s = np.asarray(state, dtype=float)
    th, phi, psid, phid, p = s[..., 0], s[..., 4], s[..., 5], s[..., 6], s[..., 7]
    b = board
    ml2 = b.mass * b.half_wheelbase ** 2
    k = b.rotor_inertia / ml2
    xi = body_velocity(b, phi, psid, p)
    c, sn, t = np.cos(phi), np.sin(phi), np.tan(phi)
    pdot = 2 * b.rotor_inertia * c * c * phid * psid - t * phid * p
    phidd = np.asarray(steering_torque) / (2 * b.wheel_inertia)
    psidd = (np.asarray(rotor_torque) / b.rotor_inertia - (phid * p / (c * c) + t * pdot) / (2 * ml2)
             + k * np.sin(2 * phi) * phid * psid) / (1 - k * sn * sn)
    ct, st = np.cos(th), np.sin(th)
    return np.stack([xi[..., 0], ct * xi[..., 1] - st * xi[..., 2], st * xi[..., 1] + ct * xi[..., 2],
                     psid, phid, psidd, phidd, pdot], axis=-1)


def reference(board: Snakeboard, initial: SnakeboardState | np.ndarray, rotor_torque: np.ndarray,
              steering_torque: np.ndarray, dt: float, rtol: float = 1e-12, atol: float = 1e-12) -> np.ndarray:
    """Tight continuous solution of :func:`reduced_rhs` with inputs held constant over each step.

    One DOP853 solve per step (the input jumps at the nodes). Returns the node states
    (N+1, 8) in the layout :data:`STATE`. No wheel stop: keep |φ| within the limit.
    """
    y = initial.vector() if isinstance(initial, SnakeboardState) else np.asarray(initial, dtype=float).copy()
    tq_psi = np.asarray(rotor_torque, dtype=float)
    tq_phi = np.asarray(steering_torque, dtype=float)
    out = np.empty((len(tq_psi) + 1, 8))
    out[0] = y
    for k in range(len(tq_psi)):
        a, bq = tq_psi[k], tq_phi[k]
        sol = solve_ivp(lambda t, z: reduced_rhs(board, z, a, bq), (0.0, dt), y, method="DOP853",
                        rtol=rtol, atol=atol)
        if not sol.success:
            raise RuntimeError(f"reference solve failed at step {k}: {sol.message}")
        y = sol.y[:, -1]
        out[k + 1] = y
    return out


# ---------------------------------------------------------------------------------------------
# Discrete: the nonholonomic variational integrator (eqs. 16–17) specialised to the snakeboard
# ---------------------------------------------------------------------------------------------

def discrete_momentum_terms(board: Snakeboard, phi_node: np.ndarray, phi_step: np.ndarray,
                            s: np.ndarray, rotor_momentum_step: np.ndarray, h: float, outgoing: bool = False
                            ) -> np.ndarray:
    """e₁(φ_node)ᵀ dcay⁻¹(±h ξ)ᵀ μ with ξ = s e₁(φ_step), μ = ∂ℓ/∂ξ at u_ψ = Π/I − ω.

    Π = I(u_ψ + ω) is the step's rotor momentum. With ``outgoing`` the sign of h ξ is
    flipped (the dcay⁻¹(−h ξ_{k−1}) term). Both signs give the same value here because μ
    has no v_y part, which removes the ad term: e_n·μ + ¼ h² s² e₀ e_n,0 (e·μ).
    """
    b = board
    ml2 = b.mass * b.half_wheelbase ** 2
    e = e1(b, phi_step)
    en = e1(b, phi_node)
    s = np.asarray(s, dtype=float)
    mu = np.stack([np.asarray(rotor_momentum_step) + (ml2 - b.rotor_inertia) * e[..., 0] * s,
                   b.mass * e[..., 1] * s, np.zeros_like(s)], axis=-1)
    w = (-h if outgoing else h) * s[..., None] * e
    # dcay⁻¹(w) = I − ½ ad_w + ¼ w¹ [w | 0 0]; (C en)·μ
    Cen = np.einsum("...ij,...j->...i", se2.dcay_inv(w), en)
    return np.sum(Cen * mu, axis=-1)


def _solve_s(b: Snakeboard, h: float, c0: np.ndarray, c1: np.ndarray, e0: np.ndarray, ee1: np.ndarray,
             Pi: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Newton on F(s) = c·μ(s) + ¼h²s² e0 c0 (e·μ(s)) − P (batched). Returns s, iterations, converged."""
    ml2 = b.mass * b.half_wheelbase ** 2
    a_ = ml2 - b.rotor_inertia
    m = b.mass
    # μ(s) = (Pi + a_ e0 s, m e1 s, 0)
    cm0, cm1 = c0 * Pi, c0 * a_ * e0 + c1 * m * ee1
    em0, em1 = e0 * Pi, a_ * e0 * e0 + m * ee1 * ee1
    q = 0.25 * h * h * e0 * c0
    with np.errstate(all="ignore"):
        s = (P - cm0) / cm1  # root of the O(1) (linear) part
    it = np.zeros(np.shape(s), dtype=int)
    done = np.zeros(np.shape(s), dtype=bool)
    for _ in range(NEWTON_MAX_ITER):
        F = cm0 + cm1 * s + q * s * s * (em0 + em1 * s) - P
        dF = cm1 + q * s * (2 * em0 + 3 * em1 * s)
        with np.errstate(all="ignore"):
            ds = np.where(done, 0.0, F / dF)
        s = s - ds
        it = it + (~done)
        done = done | (np.abs(ds) <= 1e-14 * np.abs(s) + 1e-300) | ~np.isfinite(ds)
        if np.all(done):
            break
    ok = np.isfinite(s) & done
    return s, it, ok


def step(board: Snakeboard, node: np.ndarray, rotor_torque: np.ndarray, steering_torque: np.ndarray,
         h: float, alpha: float = 0.5) -> dict[str, np.ndarray]:
    """One batched step of the discrete scheme from a *discrete node* (…, 8).

    ``node`` holds (θ, x, y, ψ, φ, P, π_ψ, π_φ): pose, shape, the nonholonomic momentum
    arriving at the node and the rotor and steering momenta at the node (discrete
    Legendre transforms; at k = 0 the continuous values). The step's torques are f_k;
    returns the next node and the step velocities (u_ψ, u_φ, s, ξ), Newton iterations and
    a convergence flag. Used by :func:`integrate` (batched); :func:`simulate` runs the
    same equations on Python floats.
    """
    b = board
    n = np.asarray(node, dtype=float)
    th, x, y, psi, phi, P, pi_psi, pi_phi = np.moveaxis(n, -1, 0)
    fpsi, fphi = np.asarray(rotor_torque, float), np.asarray(steering_torque, float)
    Pi = pi_psi + h * (1 - alpha) * fpsi                       # I(u_ψ,k + ω_k): shape eq. (16), ψ row
    uphi = (pi_phi + h * (1 - alpha) * fphi) / (2 * b.wheel_inertia)  # shape eq. (16), φ row
    lim = b.max_wheel_angle
    phi_next = np.clip(phi + h * uphi, -lim, lim)
    stopped = phi_next != phi + h * uphi
    uphi = np.where(stopped, (phi_next - phi) / h, uphi)
    phia = phi + alpha * h * uphi                              # φ_{k+α}
    l = b.half_wheelbase
    c0, c1 = np.sin(2 * phi), -2 * l * np.cos(phi) ** 2        # e₁(φ_k)
    e0, ee1 = np.sin(2 * phia), -2 * l * np.cos(phia) ** 2     # e₁(φ_{k+α})
    s, it, ok = _solve_s(b, h, c0, c1, e0, ee1, Pi, P)        # e₁(r_k)ᵀ DEP(k) = 0, eqs. (16)–(17)
    w, v = s * e0, s * ee1                                     # ξ_k = s e₁(φ_{k+α})
    upsi = Pi / b.rotor_inertia - w
    hw, hv = h * w, h * v
    den = 4 + hw * hw
    dth = 2 * np.arctan(0.5 * hw)                              # g_{k+1} = g_k cay(hξ_k), eq. (16): angle
    bx, by = 4 * hv / den, 2 * hw * hv / den                   # translation of cay(hξ), v_y = 0
    ct, st = np.cos(th), np.sin(th)
    ml2 = b.mass * l * l
    mu0 = Pi + (ml2 - b.rotor_inertia) * w
    mu1 = b.mass * v
    cn0, cn1 = np.sin(2 * phi_next), -2 * l * np.cos(phi_next) ** 2
    # P_{k+1} = e₁(φ_{k+1})ᵀ dcay⁻¹(−h ξ_k)ᵀ μ_k (the ad term drops: μ_k has no v_y part)
    P_next = cn0 * mu0 + cn1 * mu1 + 0.25 * h * h * s * s * e0 * cn0 * (e0 * mu0 + ee1 * mu1)
    nxt = np.stack([th + dth, x + ct * bx - st * by, y + st * bx + ct * by, psi + h * upsi, phi_next,
                    P_next, Pi + h * alpha * fpsi, 2 * b.wheel_inertia * uphi + h * alpha * fphi], axis=-1)
    return {"node": nxt, "rotor_rate": upsi, "wheel_rate": uphi, "s": s,
            "xi": np.stack([w, v, np.zeros_like(w)], axis=-1), "iterations": it, "converged": ok,
            "stopped": stopped}


def node_from_state(board: Snakeboard, state: np.ndarray) -> np.ndarray:
    """Continuous state (θ, x, y, ψ, φ, ψ̇, φ̇, p) → node (θ, x, y, ψ, φ, P, π_ψ, π_φ)."""
    s = np.asarray(state, dtype=float)
    xi = body_velocity(board, s[..., 4], s[..., 5], s[..., 7])
    pi_psi = board.rotor_inertia * (s[..., 5] + xi[..., 0])
    return np.concatenate([s[..., :5], s[..., 7:8], pi_psi[..., None],
                           (2 * board.wheel_inertia * s[..., 6])[..., None]], axis=-1)


def state_from_node(board: Snakeboard, node: np.ndarray) -> np.ndarray:
    """Node (θ, x, y, ψ, φ, P, π_ψ, π_φ) → state (θ, x, y, ψ, φ, ψ̇, φ̇, p) by the continuous Legendre map."""
    n = np.asarray(node, dtype=float)
    psid = rotor_rate_from_momenta(board, n[..., 4], n[..., 5], n[..., 6])
    phid = n[..., 7] / (2 * board.wheel_inertia)
    return np.concatenate([n[..., :5], psid[..., None], phid[..., None], n[..., 5:6]], axis=-1)


def integrate(board: Snakeboard, initial: np.ndarray, rotor_torque: np.ndarray, steering_torque: np.ndarray,
              dt: float, alpha: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Batched discrete run: initial states (…, 8), torques (N, …) → node states (N+1, …, 8), iterations (N, …).

    Node states are in the continuous layout :data:`STATE` (rates and p recovered from the
    discrete momenta), so they compare directly with :func:`reference`.
    """
    fpsi = np.asarray(rotor_torque, dtype=float)
    fphi = np.asarray(steering_torque, dtype=float)
    node = node_from_state(board, initial)
    nodes = [node]
    its = []
    for k in range(len(fpsi)):
        r = step(board, node, fpsi[k], fphi[k], dt, alpha)
        node = r["node"]
        nodes.append(node)
        its.append(r["iterations"])
    return state_from_node(board, np.stack(nodes)), np.asarray(its)


def simulate(board: Snakeboard, initial: SnakeboardState, controls: Mapping[str, np.ndarray], dt: float,
             steps: int | None = None, alpha: float = 0.5) -> Trajectory:
    """Run the discrete scheme for one board and return a Trajectory (vehicle="snakeboard").

    ``controls`` maps ``rotor_torque`` / ``steering_torque`` to per-step values (N); a
    missing input is zero. Same equations as :func:`step`, on Python floats (≈10× faster
    for one board). Outputs: position (x, y, 0), orientation about +z, heading θ, body
    angular (0, 0, ω) and linear (v_x, v_y, 0) velocities and shape rates at the nodes
    from the discrete momenta; shape {rotor_angle, wheel_angle}; series
    ``nonholonomic_momentum`` (P_k) and ``energy``; stats {wall_time_s,
    newton_iterations_mean, blew_up, wheel_stops, steps_done}.
    """
    start = time.perf_counter()
    for name in controls:
        if name not in INPUTS:
            raise ScenarioError(f"[controls.{name}]", f"unknown input; this vehicle's inputs are: {', '.join(INPUTS)}")
    if steps is None:
        if not controls:
            raise ValueError("steps must be given when there are no controls")
        steps = len(next(iter(controls.values())))
    fpsi = np.asarray(controls.get("rotor_torque", np.zeros(steps)), dtype=float)
    fphi = np.asarray(controls.get("steering_torque", np.zeros(steps)), dtype=float)
    if fpsi.shape != (steps,) or fphi.shape != (steps,):
        raise ValueError(f"controls must have shape ({steps},)")
    if not (0.0 <= alpha <= 1.0):
        raise ValueError("alpha must be in [0, 1]")
    if not (math.isfinite(dt) and dt > 0):
        raise ValueError("dt must be positive")
    if abs(initial.wheel_angle) > board.max_wheel_angle:
        raise ScenarioError("[initial] wheel_angle",
                            f"|{initial.wheel_angle}| exceeds max_wheel_angle {board.max_wheel_angle}")

    b, h = board, float(dt)
    m, l, I2, J = b.mass, b.half_wheelbase, b.rotor_inertia, b.wheel_inertia
    ml2 = m * l * l
    a_ = ml2 - I2
    lim = b.max_wheel_angle
    sin, cos, atan = math.sin, math.cos, math.atan
    node = node_from_state(b, initial.vector()).tolist()
    th, x, y, psi, phi, P, pi_psi, pi_phi = node
    n = steps + 1
    TH, X, Y, PSI, PHI, PP, PIPSI, PIPHI = ([0.0] * n for _ in range(8))
    TH[0], X[0], Y[0], PSI[0], PHI[0], PP[0], PIPSI[0], PIPHI[0] = node
    total_it, stops, done, blew = 0, 0, 0, False
    fpsi_l, fphi_l = fpsi.tolist(), fphi.tolist()
    q4 = 0.25 * h * h
    for k in range(steps):
        fp, ff = fpsi_l[k], fphi_l[k]
        # the same equations as step(): shape eq. (16) rows, then e₁(r_k)ᵀ DEP(k) = 0 (eqs. 16–17)
        Pi = pi_psi + h * (1 - alpha) * fp
        uphi = (pi_phi + h * (1 - alpha) * ff) / (2 * J)
        phi_next = phi + h * uphi
        if phi_next > lim or phi_next < -lim:
            phi_next = lim if phi_next > lim else -lim
            uphi = (phi_next - phi) / h
            stops += 1
        phia = phi + alpha * h * uphi
        c0, cph = sin(2 * phi), cos(phi)
        c1 = -2 * l * cph * cph
        e0, cpa = sin(2 * phia), cos(phia)
        ee1 = -2 * l * cpa * cpa
        cm0, cm1 = c0 * Pi, c0 * a_ * e0 + c1 * m * ee1
        em0, em1 = e0 * Pi, a_ * e0 * e0 + m * ee1 * ee1
        q = q4 * e0 * c0
        s = (P - cm0) / cm1
        ok = False
        for _ in range(NEWTON_MAX_ITER):
            F = cm0 + cm1 * s + q * s * s * (em0 + em1 * s) - P
            dF = cm1 + q * s * (2 * em0 + 3 * em1 * s)
            ds = F / dF
            s -= ds
            total_it += 1
            if abs(ds) <= 1e-14 * abs(s) + 1e-300:
                ok = True
                break
        w, v = s * e0, s * ee1
        upsi = Pi / I2 - w
        hw, hv = h * w, h * v
        den = 4 + hw * hw
        bx, by = 4 * hv / den, 2 * hw * hv / den
        ct, st = cos(th), sin(th)
        th, x, y = th + 2 * atan(0.5 * hw), x + ct * bx - st * by, y + st * bx + ct * by
        psi += h * upsi
        mu0, mu1 = Pi + a_ * w, m * v
        cn0, cpn = sin(2 * phi_next), cos(phi_next)
        P = cn0 * mu0 - 2 * l * cpn * cpn * mu1 + q4 * s * s * e0 * cn0 * (e0 * mu0 + ee1 * mu1)
        phi = phi_next
        pi_psi = Pi + h * alpha * fp
        pi_phi = 2 * J * uphi + h * alpha * ff
        if not ok or not all(map(math.isfinite, (th, x, y, psi, phi, P, pi_psi, pi_phi))) \
                or abs(s) * (1 + l) > 1e12:
            blew = True
            break
        done = k + 1
        TH[done], X[done], Y[done], PSI[done], PHI[done] = th, x, y, psi, phi
        PP[done], PIPSI[done], PIPHI[done] = P, pi_psi, pi_phi
    nodes = np.array([TH, X, Y, PSI, PHI, PP, PIPSI, PIPHI]).T[: done + 1]
    traj = _trajectory(b, nodes, fpsi, fphi, h)
    traj.stats = {"wall_time_s": time.perf_counter() - start,
                  "newton_iterations_mean": total_it / max(done + int(blew), 1),
                  "blew_up": blew, "wheel_stops": stops, "steps_done": done, "alpha": alpha, "tau": "cay"}
    return traj


def _trajectory(b: Snakeboard, nodes: np.ndarray, fpsi: np.ndarray, fphi: np.ndarray, h: float) -> Trajectory:
    state = state_from_node(b, nodes)
    th, phi, psid, phid, p = state[:, 0], state[:, 4], state[:, 5], state[:, 6], state[:, 7]
    xi = body_velocity(b, phi, psid, p)
    n = len(nodes)
    zeros = np.zeros(n)
    return Trajectory(
        time=np.arange(n) * h,
        position=np.stack([state[:, 1], state[:, 2], zeros], axis=-1),
        orientation=np.stack([np.cos(0.5 * th), zeros, zeros, np.sin(0.5 * th)], axis=-1),
        angular_velocity=np.stack([zeros, zeros, xi[:, 0]], axis=-1),
        linear_velocity=np.stack([xi[:, 1], xi[:, 2], zeros], axis=-1),
        heading=th,
        shape={"rotor_angle": state[:, 3], "wheel_angle": phi},
        controls={"rotor_torque": fpsi[: n - 1], "steering_torque": fphi[: n - 1]},
        series={"nonholonomic_momentum": p, "rotor_rate": psid, "wheel_rate": phid,
                "energy": kinetic_energy(b, psid, phid, xi)},
        vehicle="snakeboard")


__all__ = ["Snakeboard", "SnakeboardState", "INPUTS", "SHAPE", "STATE", "e1", "constraint_forms", "connection",
           "locked_velocity", "body_velocity", "body_momentum", "nonholonomic_momentum", "kinetic_energy",
           "reduced_rhs", "reference", "step", "integrate", "simulate", "node_from_state", "state_from_node",
           "discrete_momentum_terms", "rotor_rate_from_momenta"]
