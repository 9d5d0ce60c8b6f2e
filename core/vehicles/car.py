"""The car with simple dynamics of the main paper, §5.2.1 (Kelly & Murray model), and its integrator.

Configuration q = (ψ, σ, θ, x, y): rear-wheel rolling angle ψ, σ = tan φ (φ the steering
angle), pose (θ, x, y) ∈ SE(2). Parameters (SI units): mass m, rear-wheel inertia I, yaw inertia
K, wheel radius ρ, axle distance l. Lagrangian L = ½(I ψ̇² + K θ̇² + m(ẋ² + ẏ²)); constraints
(no side slip, rolling, steering) cos θ dx + sin θ dy = ρ dψ, −sin θ dx + cos θ dy = 0,
dθ = (ρ/l) σ dψ; connection A(r) = [[−(ρ/l)σ, 0], [−ρ, 0], [0, 0]], eq. (18).

Inputs (``INPUT_NAMES``): ``torque`` = f^ψ, the rear-wheel torque (N·m), and ``steering_rate``
= u^σ, the rate of σ = tan φ (1/s; not the rate of φ). Shape outputs (``SHAPE_NAMES``):
``wheel_angle`` = ψ and ``steering_angle`` = φ = atan σ (rad).

Discrete state (what :func:`step` maps, and what a DMOC transcription should use):
``state = (ψ_k, σ_k, θ_k, x_k, y_k, p_k)``, with p_k the discrete momentum of the rear wheel
*arriving* at node k. Writing a = I + ρ²m, c = ρ²K/l², M(σ) = a + cσ² (the reduced inertia):

    p_k = (a + c σ_k σ_{k−1+α}) u^ψ_{k−1} + h α f^ψ_{k−1},      p_0 = M(σ_0) u^ψ(0)

so that the car update of §5.2.1 (equations.md, "Car with simple dynamics")

    (I + ρ²m)(u^ψ_k − u^ψ_{k−1}) + (ρ²K/l²) σ_k (σ_{k+α} u^ψ_k − σ_{k−1+α} u^ψ_{k−1})
        = h(α f^ψ_{k−1+α} + (1−α) f^ψ_{k+α})

reads u^ψ_k = (p_k + h(1−α) f^ψ_k) / (a + c σ_k σ_{k+α}). Equivalently a caller holding
(q_k, u^ψ_{k−1}, σ_{k−1+α}, f^ψ_{k−1}) gets p_k from the first line. p_0 = M(σ_0)u^ψ(0) is the
discrete Legendre transform of the continuous initial velocity (keeps the start second order for
α = ½); the node wheel rate p_k / M(σ_k) approximates u^ψ(t_k) to the order of the scheme.
f^ψ_{k+α} is the torque held over step k. Then, with v_k = ρ u^ψ_k, ω_k = (ρ/l) σ_{k+α} u^ψ_k
and z_k = h ω_k / 2 (τ = exp, the SE(2) exponential of Appendix B):

    x_{k+1} = x_k + h v_k sinc(z_k) cos(θ_k + z_k)  [= (v/ω)(sin(θ_k + hω) − sin θ_k)]
    y_{k+1} = y_k + h v_k sinc(z_k) sin(θ_k + z_k)  [= (v/ω)(cos θ_k − cos(θ_k + hω))]
    θ_{k+1} = θ_k + h ω_k,  σ_{k+1} = σ_k + h u^σ_k,  ψ_{k+1} = ψ_k + h u^ψ_k

Fully explicit for any α ∈ [0, 1]. The chord form with sinc(z) = sin z / z is the paper's
formula rewritten so that it is smooth through ω = 0; its value is computed as sin z / z (exact
to rounding for every z ≠ 0, 1 at z = 0) and its derivative by a series below |z| = 0.25, so the
analytic Jacobian :func:`step_jacobian` stays finite and accurate at ω = 0.

This update is the general nonholonomic integrator, eqs. (16)–(17), specialised to the car with
τ = exp and C_τ = I − ½ ad (``se2.dexp_inv_linear``; ``nonholonomic_system``; shown equal to round-off
in the tests). With the exact dexp⁻¹ (``se2.dexp_inv``) instead the projected DEP keeps O(h³) terms per
step — A(r_k) is parallel to ξ_k = −A(r_{k+α}) u_k only when α = 0 and to ξ_{k−1} only when α = 1 —
so the two schemes differ by O(h²) globally for every α (measured: 1.8e-2 m after 4 s at h = 0.1,
×¼ per halving): same order, not the same scheme. The paper's "A(r_k)ᵀ(μ_k − μ_{k−1})" is the I − ½ ad form.

Terrain (optional ``terrain``, a ``core.terrain.Terrain``; None = the flat plane, the update above
bit for bit): the path stays planar and the slope enters the drive as the torque
G_k = −m g ρ ∇h(x_k, y_k)·(cos θ_k, sin θ_k) at every node (``core.vehicles.car_slope``), split like
the torque's α-quadrature — the discrete Lagrangian's potential h((1−α)V(q_k) + αV(q_{k+1})):

    p_k = (a + c σ_k σ_{k−1+α}) u^ψ_{k−1} + h α (f^ψ_{k−1} + G_k),   u^ψ_k = (p_k + h(1−α)(f^ψ_k + G_k)) / (a + c σ_k σ_{k+α}),

still explicit (G_{k+1} is evaluated at the pose the step has just reached); the update is the flat
one with the torque f^ψ_k + G_k and p_{k+1} corrected by hα(G_{k+1} − G_k). The energy series adds
the potential m g h(x_k, y_k). Derivation and the small-slope error: equations.md, "Car with simple
dynamics".

Steering limit: in :func:`simulate`, a steering-rate input that would take |φ| past
``max_steering_angle`` is saturated — σ_{k+1} is clamped to ±tan(max_steering_angle) and the
applied rate (σ_{k+1} − σ_k)/h is what ``controls["steering_rate"]`` reports — and the number of
saturated steps is in ``stats["steering_saturated_steps"]`` with a line in ``stats["warnings"]``.
Inputs outside their limits (|torque| > max_torque, |steering_rate| > max_steering_rate) are
refused (ScenarioError naming the input and step).

Energy: with zero torque the continuous energy E = ½ M(σ)(u^ψ)² is conserved (the massless
steering does no work: Ė = f^ψ u^ψ). The discrete E_k = p_k² / (2 M(σ_k)) (series ``energy``) is
conserved exactly while the steering is held (u^σ = 0, any α), and then for α = ½ the work balance
E_{k+1} − E_k = f^ψ_k (ψ_{k+1} − ψ_k) is exact as well. With moving steering it is not conserved
exactly: the error is O(h²), without drift for periodic unsaturated steering (6.6e-7 relative over
2000 s at h = 0.04), slowly accumulating (still O(h²)) for irregular steering.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np
from scipy.integrate import solve_ivp

from ..errors import ScenarioError
from ..integrators import nonholonomic as nh
from ..lie import _series as S
from ..trajectory import Trajectory
from .car_slope import check_terrain, slope_energy, slope_torque, slope_torque_float, slope_torque_partials
from .car_spec import CAR

if TYPE_CHECKING:
    from ..terrain.surface import Terrain

Array = np.ndarray

INPUT_NAMES = CAR.input_names          # torque, steering_rate
SHAPE_NAMES = CAR.shape_names          # wheel_angle, steering_angle
STATE_NAMES = ("wheel_angle", "sigma", "heading", "x", "y", "wheel_momentum")
PARAMETERS = CAR.parameter_names
PRESETS: dict[str, dict[str, Any]] = {p.name: dict(p.values) for p in CAR.presets}   # numbers, see car_spec


@dataclass(frozen=True)
class Car:
    """Car parameters (SI: kg, kg·m², m, rad, 1/s, N·m); validated on construction."""

    mass: float
    wheel_inertia: float
    yaw_inertia: float
    wheel_radius: float
    wheelbase: float
    max_steering_angle: float
    max_steering_rate: float
    max_torque: float
    # derived constants (a, c, kappa below), set by __post_init__
    _a: float = field(init=False, repr=False, compare=False)
    _c: float = field(init=False, repr=False, compare=False)
    _kappa: float = field(init=False, repr=False, compare=False)

    input_names = INPUT_NAMES
    shape_names = SHAPE_NAMES

    def __post_init__(self) -> None:
        for name in PARAMETERS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ScenarioError(f"[vehicle] {name}", f"must be a finite number, got {value!r}")
            if value <= 0:
                raise ScenarioError(f"[vehicle] {name}", f"must be positive, got {value}")
            object.__setattr__(self, name, float(value))
        if self.max_steering_angle >= math.pi / 2:
            raise ScenarioError("[vehicle] max_steering_angle",
                                f"must be below π/2 rad (σ = tan φ must stay finite), got {self.max_steering_angle}")
        # derived constants, cached (the step reads them every call)
        object.__setattr__(self, "_a", self.wheel_inertia + self.wheel_radius**2 * self.mass)
        object.__setattr__(self, "_c", self.wheel_radius**2 * self.yaw_inertia / self.wheelbase**2)
        object.__setattr__(self, "_kappa", self.wheel_radius / self.wheelbase)

    @classmethod
    def preset(cls, name: str, **overrides: float) -> "Car":
        if name not in PRESETS:
            raise ScenarioError("[vehicle] preset", f"unknown preset {name!r}; expected one of: {', '.join(PRESETS)}")
        return cls(**{**PRESETS[name], **overrides})

    # -- derived constants ------------------------------------------------------------------
    @property
    def a(self) -> float:
        """I + ρ² m."""
        return self._a

    @property
    def c(self) -> float:
        """ρ² K / l²."""
        return self._c

    @property
    def kappa(self) -> float:
        """ρ / l."""
        return self._kappa

    @property
    def max_sigma(self) -> float:
        return math.tan(self.max_steering_angle)

    def reduced_inertia(self, sigma: Array | float) -> Array | float:
        """M(σ) = I + ρ²m + (ρ²K/l²)σ²: the constrained kinetic energy is ½ M(σ) (u^ψ)²."""
        return self.a + self.c * sigma * sigma

    def lagrangian_matrix(self) -> Array:
        """ℓ = ½ [ξ; u]ᵀ diag(K, m, m, I, 0) [ξ; u] (§5.2.1; steering inertia neglected)."""
        return np.diag([self.yaw_inertia, self.mass, self.mass, self.wheel_inertia, 0.0])

    def connection(self, r: Array) -> Array:
        """A(r) = [[−(ρ/l)σ, 0], [−ρ, 0], [0, 0]], eq. (18); r = (ψ, σ) (..., 2) → (..., 3, 2)."""
        r = np.asarray(r, dtype=float)
        A = np.zeros(r.shape[:-1] + (3, 2))
        A[..., 0, 0] = -self.kappa * r[..., 1]
        A[..., 1, 0] = -self.wheel_radius
        return A

    def nonholonomic_system(self, group: nh.GroupMaps = nh.SE2_EXP_LN) -> nh.NonholonomicSystem:
        """The car as a general nonholonomic system (eqs. 16–17): b = 0, steering velocity prescribed."""
        return nh.NonholonomicSystem(group=group, shape_dim=2,
                                     lagrangian=nh.QuadraticLagrangian(self.lagrangian_matrix(), n=3),
                                     connection=self.connection, momentum_directions=None, prescribed=(1,))


@dataclass(frozen=True)
class CarInitial:
    """Initial node: position (x, y) m, heading θ rad, steering angle φ rad, wheel angle ψ rad, wheel rate u^ψ rad/s."""

    position: tuple[float, float] = (0.0, 0.0)
    heading: float = 0.0
    steering_angle: float = 0.0
    wheel_angle: float = 0.0
    wheel_rate: float = 0.0

    def check(self, car: Car) -> None:
        values = {"position": self.position, "heading": self.heading, "steering_angle": self.steering_angle,
                  "wheel_angle": self.wheel_angle, "wheel_rate": self.wheel_rate}
        for key, value in values.items():
            arr = np.asarray(value, dtype=float)
            if not np.all(np.isfinite(arr)):
                raise ScenarioError(f"[initial] {key}", f"must be finite, got {value!r}")
        if np.shape(self.position) != (2,):
            raise ScenarioError("[initial] position", f"must have 2 entries [x, y], got {np.shape(self.position)}")
        if abs(self.steering_angle) > car.max_steering_angle:
            raise ScenarioError("[initial] steering_angle",
                                f"|{self.steering_angle:.6g}| exceeds max_steering_angle {car.max_steering_angle:.6g}")


def initial_state(car: Car, initial: CarInitial) -> Array:
    """Discrete state at node 0: (ψ, σ, θ, x, y, p₀) with p₀ = M(σ₀) u^ψ(0)."""
    sigma = math.tan(initial.steering_angle)
    return np.array([initial.wheel_angle, sigma, initial.heading, initial.position[0], initial.position[1],
                     car.reduced_inertia(sigma) * initial.wheel_rate])


# ---------------------------------------------------------------------------------------------
# The explicit update (batched over leading axes).
# ---------------------------------------------------------------------------------------------
def _sinc(z: Array) -> Array:
    """sin z / z (1 at 0): exact to rounding for every z, so no series is needed for the value."""
    z = np.asarray(z, dtype=float)
    if np.count_nonzero(z) == z.size:  # no zero: the plain quotient, no masked pass (the same values)
        return np.sin(z) / z
    out = np.ones(z.shape)
    np.divide(np.sin(z), z, out=out, where=z != 0.0)
    return out


# d/dz (sin z / z) = z · g(z²), g = (cos z − sin z / z)/z², by series near 0 (finite derivative at ω = 0)
DSINC_SERIES = (-1 / 3, 1 / 30, -1 / 840, 1 / 45360, -1 / 3991680, 1 / 518918400)  # g's Taylor coefficients in z²
_dsinc_over_z = S.smooth(lambda t: (np.cos(t) - np.sin(t) / t) / t**2, DSINC_SERIES)


def advance(car: Car, psi: Array, sigma: Array, theta: Array, x: Array, y: Array, p: Array,
            torque: Array, steering_rate: Array, dt: float, alpha: float = 0.5,
            terrain: Terrain | None = None) -> tuple[Array, ...]:
    """One explicit car step on component arrays (any common broadcast shape); returns the next
    (ψ, σ, θ, x, y, p) and the wheel rate u^ψ_k of the step. See the module docstring (and its
    "Terrain" paragraph for ``terrain``)."""
    if terrain is not None:
        g0 = slope_torque(car, terrain, theta, x, y)
        return _advance_on_slope(car, terrain, g0, psi, sigma, theta, x, y, p, torque, steering_rate, dt, alpha)[:7]
    h = dt
    a, c = car.a, car.c
    hw = h * steering_rate
    s1 = sigma + hw                                          # σ_{k+1}
    sa = sigma + alpha * hw                                  # σ_{k+α}
    u = (p + (h * (1.0 - alpha)) * torque) / (a + c * sigma * sa)   # u^ψ_k
    hu = h * u
    z = (0.5 * car.kappa) * sa * hu                          # h ω_k / 2
    chord = car.wheel_radius * hu * _sinc(z)
    tm = theta + z
    x1 = x + chord * np.cos(tm)
    y1 = y + chord * np.sin(tm)
    # p_{k+1} = (a + c σ_{k+1} σ_{k+α}) u_k + hα f_k = p_k + h f_k + c h u^σ_k σ_{k+α} u_k, and
    # h σ_{k+α} u_k = 2 z / κ:
    p1 = p + h * torque + (2.0 * c / car.kappa) * steering_rate * z
    return psi + hu, s1, tm + z, x1, y1, p1, u


def _advance_on_slope(car: Car, terrain: Terrain, g0: Array, psi: Array, sigma: Array, theta: Array, x: Array, y: Array,
                      p: Array, torque: Array, steering_rate: Array, dt: float, alpha: float) -> tuple[Array, ...]:
    """:func:`advance` on a terrain, given G_k = ``g0`` at the node: the flat step with the torque f + G_k,
    p_{k+1} corrected by hα(G_{k+1} − G_k). Returns the next state, u^ψ_k and G_{k+1} (the next step's G_k)."""
    psi1, s1, th1, x1, y1, p1, u = advance(car, psi, sigma, theta, x, y, p, torque + g0, steering_rate, dt, alpha)
    g1 = slope_torque(car, terrain, th1, x1, y1)
    return psi1, s1, th1, x1, y1, p1 + (alpha * dt) * (g1 - g0), u, g1


def float_constants(car: Car, dt: float, alpha: float = 0.5) -> tuple[float, ...]:
    """The constants :func:`advance_float` needs, computed once per run."""
    h, al = float(dt), float(alpha)
    return (h, al * h, (1.0 - al) * h, car.a, car.c, 0.5 * h * car.kappa, h * car.wheel_radius,
            2.0 * car.c / car.kappa)


def advance_float(k: tuple[float, ...], psi: float, sigma: float, theta: float, x: float, y: float, p: float,
                  torque: float, steering_rate: float) -> tuple[float, ...]:
    """:func:`advance` for one car in plain Python floats (k = :func:`float_constants`): numpy's
    per-call overhead dominates a single car's step, so one car runs without it. Same formulas and
    the same returns (ψ, σ, θ, x, y, p, u^ψ_k) as :func:`advance` (tests/core/vehicles/test_car.py checks
    that they agree to round-off)."""
    h, ha, hb, a, c, hk2, hrho, c2k = k
    sa = sigma + ha * steering_rate                      # σ_{k+α}
    u = (p + hb * torque) / (a + c * sigma * sa)         # u^ψ_k
    z = hk2 * sa * u                                     # h ω_k / 2
    chord = hrho * u * (math.sin(z) / z if z != 0.0 else 1.0)
    tm = theta + z
    return (psi + h * u, sigma + h * steering_rate, tm + z, x + chord * math.cos(tm), y + chord * math.sin(tm),
            p + h * torque + c2k * steering_rate * z, u)


def advance_float_on_slope(car: Car, terrain: Terrain) -> Callable[..., tuple[float, ...]]:
    """:func:`advance_float` on a terrain: a function with its signature and returns, the flat step with
    the torque f + G_k and p_{k+1} corrected by hα(G_{k+1} − G_k) (module docstring, "Terrain"). It keeps
    G at the node it last reached, so a run that feeds each step's result to the next evaluates the
    terrain once per node."""
    check_terrain(terrain)
    last_pose: tuple[float, float, float] | None = None   # (θ, x, y) of the node reached …
    last_g = 0.0                                            # … and G there

    def advance_on_slope(k: tuple[float, ...], psi: float, sigma: float, theta: float, x: float, y: float,
                         p: float, torque: float, steering_rate: float) -> tuple[float, ...]:
        nonlocal last_pose, last_g
        pose = (theta, x, y)
        g0 = last_g if last_pose == pose else slope_torque_float(car, terrain, theta, x, y)
        psi1, s1, th1, x1, y1, p1, u = advance_float(k, psi, sigma, theta, x, y, p, torque + g0, steering_rate)
        g1 = slope_torque_float(car, terrain, th1, x1, y1)
        last_pose, last_g = (th1, x1, y1), g1
        return psi1, s1, th1, x1, y1, p1 + k[1] * (g1 - g0), u

    return advance_on_slope


def step(state: Array, controls: Array, dt: float, alpha: float, car: Car, terrain: Terrain | None = None) -> Array:
    """state (..., 6) = (ψ, σ, θ, x, y, p), controls (..., 2) = (torque, steering_rate) → next state (..., 6);
    ``terrain``: the ground (None: flat), module docstring "Terrain"."""
    state = np.asarray(state, dtype=float)
    controls = np.asarray(controls, dtype=float)
    psi, sigma, theta, x, y, p = np.moveaxis(state, -1, 0)
    out = advance(car, psi, sigma, theta, x, y, p, controls[..., 0], controls[..., 1], dt, alpha, terrain)
    return np.stack(out[:6], axis=-1)


def step_partials(car: Car, sg: Array, th: Array, p: Array, f: Array, w: Array, dt: float,
                   alpha: float) -> dict[str, Array]:
    """The intermediates of the explicit update and their nonzero partials (chain rule, see
    :func:`step_jacobian`). Only the partials that are not structurally 0 or 1 are formed, stacked over
    the columns (σ, p, f, w) (``_PCOLS``): each is the very same floating-point expression as in the
    dense chain rule with the zero terms dropped (x + 0 = x, x·1 = x exactly), so the Jacobian is
    bit-for-bit that of the dense form. On a terrain ``f`` is the torque the flat update sees, f^ψ + G_k
    (module docstring, "Terrain"; :func:`step_jacobian_rows` then takes the slope's partials)."""
    h, a, c, kap, rho = dt, car.a, car.c, car.kappa, car.wheel_radius
    ah = alpha * h
    sa = sg + ah * w                                     # σ_{k+α}: ∂/∂σ = 1, ∂/∂w = αh
    s1 = sg + h * w                                      # σ_{k+1}: ∂/∂σ = 1, ∂/∂w = h
    D = a + c * sg * sa
    hb = h * (1 - alpha)
    u = (p + hb * f) / D                                 # numerator: ∂/∂p = 1, ∂/∂f = h(1−α)
    shape = np.shape(u)
    du = np.empty((4,) + shape)                          # ∂u/∂(σ, p, f, w)
    du[0] = -(u * (c * (sa + sg))) / D
    du[1] = 1 / D
    du[2] = hb / D
    du[3] = -(u * (c * (sg * ah))) / D
    k = 0.5 * h * kap
    z = k * sa * u
    u0 = np.zeros((4,) + shape)                          # u ∂σ_{k+α}/∂(σ, p, f, w)
    u0[0] = u
    u0[3] = u * ah
    dz = k * (u0 + sa * du)
    sinc = _sinc(z)
    zg = z * _dsinc_over_z(z * z)
    hr = h * rho
    L = hr * u * sinc
    dL = hr * (sinc * du + u * (zg * dz))
    tm = th + z
    ct, st = np.cos(tm), np.sin(tm)
    Mq = a + c * s1 * sa
    cu = c * u
    return dict(sa=sa, s1=s1, D=D, u=u, du=du, z=z, dz=dz, sinc=sinc, zg=zg, L=L, dL=dL, ct=ct, st=st,
                Lst=L * st, Lct=L * ct, Mq=Mq, cu=cu, shape=shape)


# the columns (of ψ, σ, θ, x, y, p, f^ψ, u^σ) of the partials stacked by step_partials
_PCOLS = [1, 5, 6, 7]


def step_jacobian_rows(q: dict[str, Array], dt: float, alpha: float,
                       slope: tuple[Array, Array] | None = None) -> Array:
    """∂(ψ₁, σ₁, θ₁, x₁, y₁, p₁)/∂(ψ, σ, θ, x, y, p, f, w) from :func:`step_partials`, laid out (6, 8, ...).

    ``slope`` = (∂G_k/∂(θ, x, y), ∂G_{k+1}/∂(θ₁, x₁, y₁)), each (3, ...), on a terrain (q formed at the torque
    f + G_k): the chain rule through f + G_k(θ, x, y) and through p₁'s hα(G_{k+1}(θ₁, x₁, y₁) − G_k)."""
    h = dt
    du, dz, dL, Lst, Lct, Mq, cu, sa, s1 = (q[k] for k in ("du", "dz", "dL", "Lst", "Lct", "Mq", "cu", "sa", "s1"))
    T = np.zeros((6, 8) + q["shape"])
    for r in range(5):
        T[r, r] = 1.0                                    # ψ, σ, θ, x, y carried
    T[1, 7] = h
    T[3, 2] = -Lst
    T[4, 2] = Lct
    T[0, _PCOLS] = h * du
    T[2, _PCOLS] = 2 * dz
    T[3, _PCOLS] = q["ct"] * dL - Lst * dz
    T[4, _PCOLS] = q["st"] * dL + Lct * dz
    p0 = np.zeros(du.shape)                              # c u (σ_{k+α} ∂σ_{k+1} + σ_{k+1} ∂σ_{k+α})
    p0[0] = cu * (sa + s1)
    p0[3] = cu * (sa * h + s1 * (alpha * h))
    T[5, _PCOLS] = p0 + Mq * du
    T[5, 6] += h * alpha
    if slope is not None:
        dg0, dg1 = slope
        T[:, 2:5] += T[:, 6:7] * dg0                     # the torque f + G_k(θ, x, y)
        T[5] += (h * alpha) * (dg1[:, None] * T[2:5]).sum(axis=0)   # hα ∂G_{k+1}/∂(θ₁, x₁, y₁) · ∂(θ₁, x₁, y₁)
        T[5, 2:5] -= (h * alpha) * dg0
    return T


def step_jacobian(state: Array, controls: Array, dt: float, alpha: float, car: Car,
                  terrain: Terrain | None = None) -> tuple[Array, Array, Array]:
    """The next state and its analytic Jacobians ∂/∂state (..., 6, 6) and ∂/∂controls (..., 6, 2).

    Chain rule through the explicit update; every intermediate carries its gradient with respect
    to (ψ, σ, θ, x, y, p, torque, steering_rate) (only its nonzero entries are formed,
    :func:`step_partials`). Finite at ω = 0 (series for d sinc/dz). On a ``terrain`` the slope's
    torque and its partials (the terrain's gradient and Hessian) enter as :func:`step_jacobian_rows` says.
    """
    state = np.asarray(state, dtype=float)
    controls = np.asarray(controls, dtype=float)
    batch = np.broadcast_shapes(state.shape[:-1], controls.shape[:-1])
    psi, sg, th, x, y, p = (np.broadcast_to(v, batch) for v in np.moveaxis(state, -1, 0))
    f, w = (np.broadcast_to(v, batch) for v in np.moveaxis(controls, -1, 0))
    if terrain is not None:
        check_terrain(terrain, with_hessian=True)
        g0, dg0 = slope_torque_partials(car, terrain, th, x, y)
        f = f + g0
    q = step_partials(car, sg, th, p, f, w, dt, alpha)
    u, L = q["u"], q["L"]
    nxt = np.stack([psi + dt * u, q["s1"], th + 2 * q["z"], x + L * q["ct"], y + L * q["st"],
                    q["Mq"] * u + dt * alpha * f], axis=-1)
    slope = None
    if terrain is not None:
        g1, dg1 = slope_torque_partials(car, terrain, nxt[..., 2], nxt[..., 3], nxt[..., 4])
        nxt[..., 5] += (dt * alpha) * (g1 - g0)
        slope = (dg0, dg1)
    J = np.ascontiguousarray(np.moveaxis(step_jacobian_rows(q, dt, alpha, slope), (0, 1), (-2, -1)))
    return nxt, J[..., :6], J[..., 6:]


def rollout(car: Car, state0: Array, controls: Array, dt: float, alpha: float = 0.5,
            terrain: Terrain | None = None) -> tuple[Array, Array]:
    """Iterate :func:`advance` over controls (N, ..., 2) from state0 (..., 6), batched, no saturation;
    on a ``terrain`` (None: flat) with the slope's torque, evaluated once per node.

    Returns the node states (N+1, ..., 6) and the wheel rates u^ψ_k (N, ...).
    """
    state0 = np.asarray(state0, dtype=float)
    controls = np.asarray(controls, dtype=float)
    n = controls.shape[0]
    batch = np.broadcast_shapes(state0.shape[:-1], controls.shape[1:-1])
    out = np.empty((n + 1,) + batch + (6,))
    rates = np.empty((n,) + batch)
    psi, sg, th, x, y, p = (np.array(np.broadcast_to(v, batch)) for v in np.moveaxis(state0, -1, 0))
    out[0] = np.stack([psi, sg, th, x, y, p], axis=-1)
    f_all, w_all = controls[..., 0], controls[..., 1]
    if terrain is not None:
        check_terrain(terrain)
        g = slope_torque(car, terrain, th, x, y)
        for k in range(n):
            psi, sg, th, x, y, p, rates[k], g = _advance_on_slope(car, terrain, g, psi, sg, th, x, y, p,
                                                                  f_all[k], w_all[k], dt, alpha)
            out[k + 1] = np.stack([psi, sg, th, x, y, p], axis=-1)
        return out, rates
    for k in range(n):
        psi, sg, th, x, y, p, rates[k] = advance(car, psi, sg, th, x, y, p, f_all[k], w_all[k], dt, alpha)
        for i, v in enumerate((psi, sg, th, x, y, p)):
            out[k + 1, ..., i] = v
    return out, rates


# ---------------------------------------------------------------------------------------------
# Continuous reference: the constrained Lagrange–d'Alembert equations, reduced.
# ---------------------------------------------------------------------------------------------
def rhs(car: Car, y: Array, torque: Array | float, steering_rate: Array | float,
        terrain: Terrain | None = None) -> Array:
    """ẏ for y = (ψ, σ, θ, x, y, u^ψ) (..., 6): the constrained Lagrange–d'Alembert equations.

    ψ̇ = u, σ̇ = u^σ, θ̇ = (ρ/l)σu, ẋ = ρu cos θ, ẏ = ρu sin θ and, from the ψ-row of
    Lagrange–d'Alembert with the constraints substituted, M(σ) u̇ + (ρ²K/l²) σ σ̇ u = f^ψ (+ the slope's
    G = −m g ρ ∇h·(cos θ, sin θ) on a ``terrain``).
    """
    y = np.asarray(y, dtype=float)
    psi, sg, th, px, py, u = np.moveaxis(y, -1, 0)
    if terrain is not None:
        torque = torque + slope_torque(car, terrain, th, px, py)
    du = (torque - car.c * sg * steering_rate * u) / (car.a + car.c * sg * sg)
    rho = car.wheel_radius
    return np.stack([u, np.broadcast_to(steering_rate, u.shape) + 0.0 * u, car.kappa * sg * u,
                     rho * u * np.cos(th), rho * u * np.sin(th), du], axis=-1)


def reference(car: Car, initial: CarInitial, controls: Mapping[str, Array], dt: float, steps: int,
              rtol: float = 1e-12, atol: float = 1e-12, terrain: Terrain | None = None) -> Array:
    """Tight continuous solution at the nodes t_k = k dt: (steps+1, 6) in (ψ, σ, θ, x, y, u^ψ).

    solve_ivp DOP853 with inputs held constant over each step (consecutive steps with equal inputs
    are integrated as one segment). Use the *applied* controls (``Trajectory.controls``).
    """
    f = np.broadcast_to(np.asarray(controls.get("torque", 0.0), float), (steps,))
    w = np.broadcast_to(np.asarray(controls.get("steering_rate", 0.0), float), (steps,))
    y0 = np.array([initial.wheel_angle, math.tan(initial.steering_angle), initial.heading,
                   initial.position[0], initial.position[1], initial.wheel_rate])
    out = np.empty((steps + 1, 6))
    out[0] = y0
    k = 0
    while k < steps:
        j = k + 1
        while j < steps and f[j] == f[k] and w[j] == w[k]:
            j += 1
        fk, wk = float(f[k]), float(w[k])
        t_nodes = np.arange(k, j + 1) * dt
        sol = solve_ivp(lambda t, yy: rhs(car, yy, fk, wk, terrain), (t_nodes[0], t_nodes[-1]), out[k],
                        method="DOP853", rtol=rtol, atol=atol, t_eval=t_nodes)
        if not sol.success:  # pragma: no cover - DOP853 on this smooth ODE does not fail
            raise RuntimeError(f"reference solver failed: {sol.message}")
        out[k + 1: j + 1] = sol.y.T[1:]
        k = j
    return out


# ---------------------------------------------------------------------------------------------
# Forward simulation of one car → Trajectory (scalar fast path in plain floats).
# ---------------------------------------------------------------------------------------------
def check_controls(car: Car, controls: Mapping[str, Array], steps: int) -> dict[str, Array]:
    """Known names, one finite value per step, within ±max_torque / ±max_steering_rate."""
    out: dict[str, Array] = {}
    for name in controls:
        if name not in INPUT_NAMES:
            raise ScenarioError(f"[controls.{name}]", f"unknown input; the car's inputs are: {', '.join(INPUT_NAMES)}")
    limits = {i.name: i.bound(car) for i in CAR.inputs}
    for name in INPUT_NAMES:
        values = np.asarray(controls.get(name, np.zeros(steps)), dtype=float)
        if values.shape != (steps,):
            raise ScenarioError(f"[controls.{name}]", f"must have one value per step ({steps}), got shape {values.shape}")
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise ScenarioError(f"[controls.{name}]", f"value at step {int(bad[0])} is not finite")
        bad = np.flatnonzero(np.abs(values) > limits[name] * (1 + 1e-12))
        if bad.size:
            k = int(bad[0])
            raise ScenarioError(f"[controls.{name}]",
                                f"value {values[k]:.6g} at step {k} is outside the limit ±{limits[name]:g}")
        out[name] = values
    return out


def _check_settings(dt: float, steps: int, alpha: float) -> None:
    if isinstance(dt, bool) or not isinstance(dt, (int, float)) or not math.isfinite(dt) or dt <= 0:
        raise ScenarioError("[integrator] dt", f"must be a positive finite number, got {dt!r}")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ScenarioError("[integrator] steps", f"must be a whole number ≥ 1, got {steps!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 <= alpha <= 1.0:
        raise ScenarioError("[integrator] alpha", f"must be in [0, 1], got {alpha!r}")


def simulate(car: Car, initial: CarInitial, controls: Mapping[str, Array], dt: float, steps: int,
             alpha: float = 0.5, terrain: Terrain | None = None) -> Trajectory:
    """Simulate one car with the explicit update (module docstring) in plain floats → Trajectory.

    Nodes carry the node wheel rate p_k / M(σ_k): angular_velocity = (0, 0, (ρ/l)σ_k ů_k),
    linear_velocity = (ρ ů_k, 0, 0) in the body frame; series ``energy`` = p_k² / (2 M(σ_k)).
    On a ``terrain`` (None: the flat plane) the slope drives the wheel (module docstring, "Terrain"), the
    path stays in the plane z = 0 and ``energy`` adds the potential m g h(x_k, y_k).
    A non-finite state or a non-positive a + cσ_kσ_{k+α} (only possible with extreme steering
    limits) stops the run: ``stats["blew_up"]`` and the trajectory ends at the last good node.
    """
    _check_settings(dt, steps, alpha)
    initial.check(car)
    inputs = check_controls(car, controls, steps)
    t0 = time.perf_counter()
    h, al = float(dt), float(alpha)
    a, c, kap, rho = car.a, car.c, car.kappa, car.wheel_radius
    kf = float_constants(car, h, al)
    ha = kf[1]
    step_float = advance_float if terrain is None else advance_float_on_slope(car, terrain)
    smax = car.max_sigma
    torque = inputs["torque"].tolist()
    rate_in = inputs["steering_rate"].tolist()
    psi, sg, th, x, y = (float(initial.wheel_angle), math.tan(initial.steering_angle), float(initial.heading),
                         float(initial.position[0]), float(initial.position[1]))
    p = (a + c * sg * sg) * float(initial.wheel_rate)
    nodes = [(psi, sg, th, x, y, p)]
    applied = []
    saturated = 0
    first_saturated = -1
    blew_up = False
    isfinite = math.isfinite
    for k in range(steps):
        f = torque[k]
        w = rate_in[k]
        s1 = sg + h * w
        if s1 > smax or s1 < -smax:
            s1 = smax if s1 > 0 else -smax
            w = (s1 - sg) / h
            saturated += 1
            if first_saturated < 0:
                first_saturated = k
        if not a + c * sg * (sg + ha * w) > 0.0:
            blew_up = True
            break
        psi, _, th, x, y, p, _ = step_float(kf, psi, sg, th, x, y, p, f, w)
        sg = s1                                # the clamped σ_{k+1} exactly
        if not (isfinite(x) and isfinite(y) and isfinite(th) and isfinite(p) and isfinite(psi)):
            blew_up = True
            break
        nodes.append((psi, sg, th, x, y, p))
        applied.append((f, w))
    wall = time.perf_counter() - t0
    Q = np.array(nodes)
    U = np.array(applied).reshape(-1, 2)
    n = len(Q)
    sigma = Q[:, 1]
    Mq = car.reduced_inertia(sigma)
    rate = Q[:, 5] / Mq
    heading = Q[:, 2]
    zeros = np.zeros(n)
    stats: dict = {"wall_time_s": wall, "newton_iterations_mean": 0.0, "blew_up": blew_up,
                   "method": "vi", "alpha": al, "steering_saturated_steps": saturated}
    warnings = []
    if saturated:
        warnings.append(f"steering angle reached its limit ±{car.max_steering_angle:.6g} rad: steering_rate "
                        f"saturated on {saturated} step(s), first at step {first_saturated}")
    if blew_up:
        warnings.append(f"simulation stopped at step {n - 1}: the state became non-finite or the reduced "
                        "inertia a + c σ_k σ_(k+α) non-positive")
    stats["warnings"] = warnings
    return Trajectory(
        time=np.arange(n) * h,
        position=np.stack([Q[:, 3], Q[:, 4], zeros], axis=-1),
        orientation=np.stack([np.cos(0.5 * heading), zeros, zeros, np.sin(0.5 * heading)], axis=-1),
        angular_velocity=np.stack([zeros, zeros, kap * sigma * rate], axis=-1),
        linear_velocity=np.stack([rho * rate, zeros, zeros], axis=-1),
        heading=heading,
        shape={"wheel_angle": Q[:, 0], "steering_angle": np.arctan(sigma)},
        controls={"torque": U[:, 0], "steering_rate": U[:, 1]},
        series={"energy": node_energy(car, Q, terrain)},
        stats=stats, vehicle="car")


def node_energy(car: Car, Q: Array, terrain: Terrain | None = None) -> Array:
    """E_k = p_k² / (2 M(σ_k)) of the node states Q (..., 6), plus m g h(x_k, y_k) on a terrain."""
    kinetic = 0.5 * Q[..., 5] ** 2 / car.reduced_inertia(Q[..., 1])
    return kinetic if terrain is None else kinetic + slope_energy(car, terrain, Q[..., 3], Q[..., 4])


__all__ = ["Car", "CarInitial", "PRESETS", "INPUT_NAMES", "SHAPE_NAMES", "STATE_NAMES", "PARAMETERS",
           "initial_state", "advance", "advance_float", "advance_float_on_slope", "float_constants", "step",
           "step_jacobian", "step_partials", "step_jacobian_rows", "rollout", "rhs", "reference", "check_controls",
           "simulate", "node_energy"]
