"""Boat subject to buoyancy, hydrodynamic drag, current and wind (paper §4.3.2, eq. 15).

A rigid body (J = diag(J₁, J₂, J₃), M = m I₃, body origin at the centre of mass; body x forward,
y to port, z up) with a closed hull mesh (:mod:`core.vehicles.hull`). Body wrench = control + external:

* Thrusters i at body positions c_i with body directions d_i (unit): wrench columns
  (c_i × d_i, d_i), u_i the thrust in newtons (equations.md, Boat). Default: two rear
  thrusters at the transom, along body x.
* Gravity plus buoyancy, exactly the seed's eq. (15):
  9.81 · (Rᵀ((x_s − x) × (0, 0, Π_s)), Rᵀ(0, 0, Π_s − m)), Π_s = ρ_w V_s the displaced water as a
  mass (ρ_w = 1000 kg/m³: Π_s in litres = kg), x_s the world centroid of the submerged volume.
  Buoyancy acts vertically through x_s (the water surface's slope is ignored, as in the seed).
* Hydrodynamics over the submerged hull patches i (body centroid r_i, outward normal n_i, area dA_i):
  f_h,i = −E(ṙ_i − Rᵀ η(x + R r_i)) − P n_i, ṙ_i = v + ω × r_i; wrench (1/A) Σ_i (r_i × f_h,i, f_h,i) dA_i,
  A = Σ_i dA_i. E ≻ 0 is the damping matrix (N·s/m for the whole wetted hull: the patch average
  makes −E v the total drag of a body translating at v in still water). The pressure
  magnitude P defaults to 0: the hydrostatic pressure is already the buoyancy term, and a constant
  P > 0 on the open wetted surface would add a net vertical force of about P·(waterplane area) —
  extra buoyancy counted twice. Set ``pressure`` only to model an extra dynamic pressure.
* Wind: ½ ρ_air C_d A_p |v_rel| v_rel (world), v_rel = w − R v the wind relative to the boat's
  centre of mass, A_p = Σ max(0, −n_i·ê) dA_i the windward area of the emerged patches projected
  normal to ê = v_rel/|v_rel|, applied at the centroid of that projected area (the centre of
  pressure of the emerged part; for an upright boat in a beam wind, the emerged topsides).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
from scipy.optimize import brentq, fsolve

from ..errors import ScenarioError
from ..integrators.common import GRAVITY, VEHICLE_DEFAULT_METHOD, HolonomicSystem, RigidState
from ..trajectory import Trajectory
from .hull import TRANSOM_FRACTION, HeightField, Hull, clip, default_hull
from .water import RHO_WATER, CurrentSpec, Wind, current_field, projected_area

DEFAULT_LENGTH, DEFAULT_BEAM, DEFAULT_HEIGHT = 5.0, 2.0, 0.8
DEFAULT_MASS = 800.0


def default_thrusters(length: float = DEFAULT_LENGTH, beam: float = DEFAULT_BEAM,
                      height: float = DEFAULT_HEIGHT) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Two thrusters at the transom of :func:`default_hull` (``TRANSOM_FRACTION``·length behind the
    centre of mass), ∓0.25·beam off the centreline (thruster_1 starboard, thruster_2 port),
    0.2·height below the centre of mass (under the waterline), both pushing along body +x."""
    d = np.array([1.0, 0.0, 0.0])
    return tuple((np.array([-TRANSOM_FRACTION * length, s * 0.25 * beam, -0.2 * height]), d.copy())
                 for s in (-1.0, 1.0))


def thrust_matrix(thrusters: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """F = [(c_i × d_i, d_i)]_i, shape (6, n): body wrench per newton of each thruster."""
    c = np.array([t[0] for t in thrusters], dtype=float).reshape(-1, 3)
    d = np.array([t[1] for t in thrusters], dtype=float).reshape(-1, 3)
    return np.concatenate([np.cross(c, d), d], axis=1).T


def box_inertia(mass: float, length: float, beam: float, height: float) -> tuple[float, float, float]:
    """J of a uniform box (used as the default boat inertia): m/12 (b² + h², l² + h², l² + b²)."""
    return (mass * (beam**2 + height**2) / 12, mass * (length**2 + height**2) / 12,
            mass * (length**2 + beam**2) / 12)


def damping_matrix(values: Sequence[float], where: str = "[vehicle] damping") -> np.ndarray:
    """E from 3 values (diagonal) or 6 (symmetric, Voigt order E_xx, E_yy, E_zz, E_yz, E_xz, E_xy); must be ≻ 0."""
    v = np.asarray(values, dtype=float)
    if v.shape == (3, 3):
        E = v
    elif v.shape == (3,):
        E = np.diag(v)
    elif v.shape == (6,):
        xx, yy, zz, yz, xz, xy = v
        E = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    else:
        raise ScenarioError(where, f"must have 3 (diagonal) or 6 (symmetric) values, got shape {v.shape}")
    if not np.all(np.isfinite(E)) or not np.allclose(E, E.T):
        raise ScenarioError(where, "must be a finite symmetric matrix")
    if np.linalg.eigvalsh(E).min() <= 0:
        raise ScenarioError(where, f"must be positive definite, eigenvalues {np.linalg.eigvalsh(E)}")
    return E


@dataclass(frozen=True)
class Boat:
    """Boat parameters; the defaults make a ~5 m RIB of 800 kg (see :func:`default_hull`)."""

    mass: float = DEFAULT_MASS
    inertia: tuple[float, float, float] = box_inertia(DEFAULT_MASS, DEFAULT_LENGTH, DEFAULT_BEAM, DEFAULT_HEIGHT)
    hull: Hull = field(default_factory=default_hull)
    thrusters: tuple[tuple[np.ndarray, np.ndarray], ...] = field(default_factory=default_thrusters)
    damping: np.ndarray = (300.0, 2000.0, 3000.0)     # E (N·s/m): surge, sway, heave
    wind: Wind = field(default_factory=Wind)
    current: CurrentSpec = None                       # η: None, (3,) or callable (…, 3) → (…, 3)
    max_thrust: float = 1500.0                        # N per thruster, forward or reverse
    pressure: float = 0.0                             # P (Pa-like magnitude; see module docstring)
    surface: HeightField | None = None                # water surface h(x, y); None = plane z = 0

    def __post_init__(self) -> None:
        if not (self.mass > 0 and math.isfinite(self.mass)):
            raise ScenarioError("[vehicle] mass", f"must be positive, got {self.mass!r}")
        J = np.asarray(self.inertia, dtype=float)
        if J.shape != (3,) or not np.all(np.isfinite(J)) or np.any(J <= 0):
            raise ScenarioError("[vehicle] inertia", f"must be 3 positive numbers, got {self.inertia!r}")
        object.__setattr__(self, "inertia", tuple(float(j) for j in J))
        object.__setattr__(self, "damping", damping_matrix(self.damping))
        if not (self.max_thrust >= 0 and math.isfinite(self.max_thrust)):
            raise ScenarioError("[vehicle] max_thrust", f"must be ≥ 0, got {self.max_thrust!r}")
        if not math.isfinite(self.pressure):
            raise ScenarioError("[vehicle] pressure", f"must be finite, got {self.pressure!r}")
        ts = []
        for i, t in enumerate(self.thrusters):
            c, d = (np.asarray(a, dtype=float) for a in t)
            where = f"[vehicle] thrusters[{i}]"
            if c.shape != (3,) or d.shape != (3,) or not (np.all(np.isfinite(c)) and np.all(np.isfinite(d))):
                raise ScenarioError(where, "must be a position (3) and a direction (3)")
            n = np.linalg.norm(d)
            if n < 1e-12:
                raise ScenarioError(where, "direction must not be zero")
            ts.append((c, d / n))
        if not ts:
            raise ScenarioError("[vehicle] thrusters", "must list at least one thruster")
        object.__setattr__(self, "thrusters", tuple(ts))
        object.__setattr__(self, "_eta", current_field(self.current, "[vehicle] current"))
        if self.hull.volume * RHO_WATER <= self.mass:
            raise ScenarioError("[vehicle] mass", f"{self.mass:g} kg sinks: the hull displaces at most "
                                f"{self.hull.volume * RHO_WATER:.6g} kg of water")

    # -- parameters ------------------------------------------------------------------------------
    @property
    def inertia6(self) -> np.ndarray:
        return np.array([*self.inertia, self.mass, self.mass, self.mass])

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(f"thruster_{i + 1}" for i in range(len(self.thrusters)))

    @property
    def control_matrix(self) -> np.ndarray:
        """(6, n) thruster wrench columns (c_i × d_i, d_i)."""
        return thrust_matrix(self.thrusters)

    # -- forces ----------------------------------------------------------------------------------
    def buoyancy(self, R: np.ndarray, x: np.ndarray, volume: np.ndarray, centroid: np.ndarray) -> np.ndarray:
        """Gravity + buoyancy, eq. (15): 9.81 (Rᵀ((x_s − x) × (0, 0, Π_s)), Rᵀ(0, 0, Π_s − m)); (…, 6)."""
        R = np.asarray(R, dtype=float)
        Pi = RHO_WATER * np.asarray(volume, dtype=float)                           # kg of water
        up = np.zeros(np.shape(Pi) + (3,))
        up[..., 2] = Pi
        torque_w = np.cross(np.asarray(centroid) - np.asarray(x), up)
        force_w = np.zeros_like(up)
        force_w[..., 2] = Pi - self.mass
        to_body = lambda w: np.einsum("...ji,...j->...i", R, w)  # noqa: E731  Rᵀ w
        return GRAVITY * np.concatenate([to_body(torque_w), to_body(force_w)], axis=-1)

    def hydrodynamics(self, R: np.ndarray, x: np.ndarray, xi: np.ndarray, r: np.ndarray,
                      n: np.ndarray, dA: np.ndarray) -> np.ndarray:
        """(1/A) Σ_i (r_i × f_h,i, f_h,i) dA_i with f_h,i = −E(ṙ_i − Rᵀη(x + R r_i)) − P n_i; (…, 6).

        Patches r, n (…, P, 3) and dA (…, P) in the body frame; zero when nothing is wet.
        """
        R = np.asarray(R, dtype=float)
        xi = np.asarray(xi, dtype=float)
        w, v = xi[..., None, :3], xi[..., None, 3:]
        rdot = v + np.cross(w, r)                                                   # ṙ_i = v + ω × r_i
        Rp = R[..., None, :, :]
        xw = np.asarray(x, float)[..., None, :] + np.einsum("...ij,...j->...i", Rp, r)
        eta_b = np.einsum("...ji,...j->...i", Rp, self._eta(xw))                   # Rᵀ η(x + R r_i)
        f = -np.einsum("ij,...j->...i", self.damping, rdot - eta_b) - self.pressure * n
        A = dA.sum(axis=-1)
        force = np.einsum("...p,...pi->...i", dA, f)
        torque = np.einsum("...p,...pi->...i", dA, np.cross(r, f))
        scale = np.where(A > 0, 1.0 / np.where(A > 0, A, 1.0), 0.0)[..., None]
        return np.concatenate([torque, force], axis=-1) * scale

    def wind_wrench(self, R: np.ndarray, xi: np.ndarray, r: np.ndarray, n: np.ndarray,
                    dA: np.ndarray) -> np.ndarray:
        """Wind drag on the emerged patches (body r, n (…, P, 3), dA (…, P)) → body wrench (…, 6)."""
        R = np.asarray(R, dtype=float)
        xi = np.asarray(xi, dtype=float)
        rel_w = self.wind.velocity - np.einsum("...ij,...j->...i", R, xi[..., 3:])
        speed = np.linalg.norm(rel_w, axis=-1, keepdims=True)
        e_b = np.einsum("...ji,...j->...i", R, rel_w / np.where(speed > 0, speed, 1.0))
        area, weights = projected_area(n, dA, e_b)
        F_b = self.wind.force(np.einsum("...ji,...j->...i", R, rel_w), area)
        has = area > 0
        centre = np.einsum("...p,...pi->...i", weights, r) / np.where(has, area, 1.0)[..., None]
        torque = np.cross(centre, F_b)
        return np.where(has[..., None], np.concatenate([torque, F_b], axis=-1), 0.0)

    def external_wrench(self, R: np.ndarray, x: np.ndarray, xi: np.ndarray,
                        parts: bool = False) -> np.ndarray | dict:
        """Gravity + buoyancy + hydrodynamics + wind at pose (R, x), body velocity ξ; (…, 6).

        With ``parts`` True, returns a dict of the three wrenches and the clipping result.
        """
        cut = clip(self.hull, R, x, self.surface)
        lead = np.shape(cut.volume)
        flat = lambda a: a.reshape(lead + (-1,) + a.shape[len(lead) + 2:])  # noqa: E731  (…, m, 2) → (…, 2m)
        b = self.buoyancy(R, x, cut.volume, cut.centroid)
        h = self.hydrodynamics(R, x, xi, flat(cut.submerged_position), flat(cut.submerged_normal),
                               flat(cut.submerged_area))
        w = self.wind_wrench(R, xi, flat(cut.emerged_position), flat(cut.emerged_normal), flat(cut.emerged_area))
        if parts:
            return {"buoyancy": b, "hydrodynamics": h, "wind": w, "clipped": cut}
        return b + h + w

    def displaced_mass(self, R: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Π_s = ρ_w V_s (kg) at pose (R, x)."""
        return RHO_WATER * clip(self.hull, R, x, self.surface).volume

    # -- equilibrium ------------------------------------------------------------------------------
    def float_height(self, R: np.ndarray | None = None) -> float:
        """Height z of the centre of mass at which Π_s = m for orientation R (default level; root of Π_s(z) − m)."""
        R = np.eye(3) if R is None else np.asarray(R, dtype=float)
        zs = R[2] @ self.hull.vertices.T
        level = 0.0 if self.surface is None else float(self.surface(np.array(0.0), np.array(0.0)))
        lo, hi = level - zs.max(), level - zs.min()     # fully submerged … fully emerged (flat water)
        excess = lambda z: float(self.displaced_mass(R, np.array([0.0, 0.0, z]))) - self.mass  # noqa: E731
        span = hi - lo
        for _ in range(30):                             # widen the bracket for a wavy surface
            if excess(lo) > 0 > excess(hi):
                break
            lo, hi = lo - span, hi + span
        return brentq(excess, lo, hi, xtol=1e-13, rtol=1e-14)

    def equilibrium(self) -> tuple[float, float]:
        """Upright static equilibrium (z, pitch θ): Π_s = m and zero pitch moment (roll 0 by symmetry).

        R = R_y(θ) (θ > 0: bow down); solved with scipy's fsolve from the level float height.
        """
        def Ry(th: float) -> np.ndarray:
            c, s = math.cos(th), math.sin(th)
            return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])

        def residual(p: np.ndarray) -> np.ndarray:
            R, x = Ry(p[1]), np.array([0.0, 0.0, p[0]])
            cut = clip(self.hull, R, x, self.surface)
            wr = self.buoyancy(R, x, cut.volume, cut.centroid)
            return np.array([wr[5] / (GRAVITY * self.mass), wr[1] / (GRAVITY * self.mass)])

        sol, info, ok, msg = fsolve(residual, np.array([self.float_height(), 0.0]), full_output=True, xtol=1e-13)
        if ok != 1:
            raise ScenarioError("[vehicle]", f"no upright floating equilibrium found: {msg}")
        return float(sol[0]), float(sol[1])

    # -- simulation -------------------------------------------------------------------------------
    def check_controls(self, controls: Mapping[str, np.ndarray], steps: int) -> np.ndarray:
        """Thrust per step and thruster, (steps, n), from inputs ``thruster_1`` … (missing = 0)."""
        names = self.input_names
        unknown = sorted(set(controls) - set(names))
        if unknown:
            raise ScenarioError(f"[controls.{unknown[0]}]",
                                f"unknown input; this vehicle's inputs are: {', '.join(names)}")
        out = np.zeros((steps, len(names)))
        for i, name in enumerate(names):
            if name not in controls:
                continue
            u = np.asarray(controls[name], dtype=float)
            if u.shape != (steps,):
                raise ScenarioError(f"[controls.{name}]", f"must have one value per step ({steps}), got shape {u.shape}")
            if not np.all(np.isfinite(u)):
                raise ScenarioError(f"[controls.{name}]", "contains NaN or infinite values")
            bad = np.flatnonzero(np.abs(u) > self.max_thrust + 1e-12)
            if bad.size:
                k = int(bad[0])
                raise ScenarioError(f"[controls.{name}]", f"value {u[k]:.6g} at step {k} is outside the limit "
                                    f"[{-self.max_thrust:g}, {self.max_thrust:g}]")
            out[:, i] = u
        return out

    def system(self, controls: Mapping[str, np.ndarray], steps: int) -> HolonomicSystem:
        thrust = self.check_controls(controls, steps) @ self.control_matrix.T      # (steps, 6)
        # The VI evaluates the wrench twice at each node (end of step k, start of step k + 1) at
        # the same state: the external part, which clips the hull, is reused when the state repeats.
        last: list = [None, None, None, None]

        def wrench(k: int, R: np.ndarray, x: np.ndarray, xi: np.ndarray) -> np.ndarray:
            R, x, xi = (np.asarray(a, dtype=float) for a in (R, x, xi))
            if not (last[0] is not None and np.array_equal(R, last[0]) and np.array_equal(x, last[1])
                    and np.array_equal(xi, last[2])):
                last[:] = [R.copy(), x.copy(), xi.copy(), self.external_wrench(R, x, xi)]
            return thrust[k] + last[3]

        return HolonomicSystem(inertia=self.inertia6, wrench=wrench)

    def simulate(self, initial: RigidState, controls: Mapping[str, np.ndarray], dt: float, steps: int,
                 method: str = VEHICLE_DEFAULT_METHOD) -> Trajectory:
        """Integrate; controls ``thruster_1`` … per step in the trajectory, shape {} (no rudder)."""
        from ..integrators import integrate

        u = self.check_controls(controls, steps)
        traj = integrate(self.system({n: u[:, i] for i, n in enumerate(self.input_names)}, steps),
                         initial, dt, steps, method)
        n = len(traj.time)
        traj.shape = {}
        traj.controls = {name: u[: max(n - 1, 0), i] for i, name in enumerate(self.input_names)}
        traj.vehicle = "boat"
        return traj


__all__ = ["Boat", "default_thrusters", "thrust_matrix", "box_inertia", "damping_matrix",
           "DEFAULT_LENGTH", "DEFAULT_BEAM", "DEFAULT_HEIGHT", "DEFAULT_MASS"]
