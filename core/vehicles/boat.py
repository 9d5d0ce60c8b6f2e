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
from .hull import TRANSOM_FRACTION, HeightField, Hull, clip, clip_jacobian, default_hull
from .water import RHO_WATER, CurrentSpec, Wind, current_field, projected_area

DEFAULT_LENGTH, DEFAULT_BEAM, DEFAULT_HEIGHT = 5.0, 2.0, 0.8
DEFAULT_MASS = 800.0
_EDGE_ON = 1e-6       # δ: |n·ê| below this, a patch is edge-on to the wind (see Boat.external_wrench_jacobian)


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

    def external_wrench_jacobian(self, R: np.ndarray, x: np.ndarray, xi: np.ndarray
                                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """E = :meth:`external_wrench` (B, 6) and its exact first derivatives ∂E/∂s (B, 6, 3) in the body
        rotation increment (R → R cay(s)), ∂E/∂x (B, 6, 3) and ∂E/∂ξ (B, 6, 6), for poses R (B, 3, 3),
        x (B, 3) and body velocities ξ (B, 6); all steps at once.

        Analytic (forward mode) through the clipped hull (:func:`core.vehicles.hull.clip_jacobian`) and
        through eq. (15) and the drag laws written with patch moments:

        * buoyancy: Π_s(x_s − x) = ρ_w (V x̄ − V x); d(Rᵀw)/ds = (Rᵀw)^ (hat);
        * hydrodynamics (uniform or no current η, u = v − Rᵀη): with A = Σ dA_i, S₁ = Σ dA_i r_i,
          S₂ = Σ dA_i r_i r_iᵀ, K = Σ dA_i r̂_i E r̂_i (= ε E ε : S₂),
          force = −E(u + ω × S₁/A) − P N/A,
          torque = −(S₁/A) × Eu + (K/A) ω − P T/A (N = Σ dA_i n_i, T = Σ dA_i r_i × n_i);
        * wind (u_b = Rᵀw − v the body air velocity, c = ½ρ_air C_d, w_i = max(0, −n_i·ê) dA_i):
          force = c|u_b| u_b Σw_i, torque = c|u_b| (Σ w_i r_i) × u_b.

        A spatially varying (callable) current falls back to central differences of the wrench in the pose
        (the clipped hull is differenced, all steps batched in one call per direction).
        """
        R, x, xi = (np.asarray(a, dtype=float) for a in (R, x, xi))
        nB = R.shape[0]
        if callable(self.current):
            return self._external_wrench_jacobian_fd(R, x, xi)
        cut, tan = clip_jacobian(self.hull, R, x, self.surface)
        K = 12                                                    # directions: s (3), x (3), ω (3), v (3)
        eye3 = np.broadcast_to(np.eye(3), (nB, 3, 3))
        zero3 = np.zeros((nB, 3, 3))

        def hat(w):
            z = np.zeros(w.shape[:-1])
            return np.stack([np.stack([z, -w[..., 2], w[..., 1]], -1), np.stack([w[..., 2], z, -w[..., 0]], -1),
                             np.stack([-w[..., 1], w[..., 0], z], -1)], axis=-2)

        def body(w):                                              # Rᵀw (B, 3) and its tangent (B, 3, K)
            wb = np.einsum("bji,bj->bi", R, w)
            return wb, np.concatenate([hat(wb), zero3, zero3, zero3], axis=-1)

        def pad(t):                                               # pose tangent (…, 6) → (…, K)
            return np.concatenate([t, np.zeros(t.shape[:-1] + (K - 6,))], axis=-1)

        def cross_t(a, da, b, db):                                # d(a × b): a (B, 3), da (B, 3, K)
            return (np.cross(da, b[:, :, None], axisa=1, axisb=1, axisc=1)
                    + np.cross(a[:, :, None], db, axisa=1, axisb=1, axisc=1))

        # -- gravity + buoyancy, eq. (15) ---------------------------------------------------------
        ok = cut.volume > 0
        M = np.where(ok[:, None], (cut.centroid - x) * cut.volume[:, None], 0.0)    # V (x̄ − x)
        dx_t = pad(np.concatenate([zero3, eye3], axis=-1))        # dx (B, 3, K)
        dM = pad(tan.moment) - x[:, :, None] * pad(tan.volume)[:, None, :] - cut.volume[:, None, None] * dx_t
        dM = np.where(ok[:, None, None], dM, 0.0)
        rg = RHO_WATER * GRAVITY
        tw = rg * np.stack([M[:, 1], -M[:, 0], np.zeros(nB)], -1)                # (x_s − x) × (0, 0, Π_s)
        dtw = rg * np.stack([dM[:, 1], -dM[:, 0], np.zeros((nB, K))], 1)
        fw = np.zeros((nB, 3))
        fw[:, 2] = GRAVITY * (RHO_WATER * cut.volume - self.mass)
        dfw = np.zeros((nB, 3, K))
        dfw[:, 2] = rg * pad(tan.volume)
        tb, dtb = body(tw)
        fb, dfb = body(fw)
        E = np.concatenate([tb, fb], axis=-1)
        D = np.concatenate([dtb + np.einsum("bji,bjk->bik", R, dtw), dfb + np.einsum("bji,bjk->bik", R, dfw)], axis=1)

        # -- hydrodynamics over the submerged patches, by moments -------------------------------------
        P = cut.submerged_area.shape[-2] * 2
        r = cut.submerged_position.reshape(nB, P, 3)
        nrm = cut.submerged_normal.reshape(nB, P, 3)
        dA = cut.submerged_area.reshape(nB, P)
        dr = tan.submerged_position.reshape(nB, P, 3, 6)
        ddA = tan.submerged_area.reshape(nB, P, 6)
        A = dA.sum(-1)
        dAt = pad(ddA.sum(1))
        S1 = np.einsum("bp,bpi->bi", dA, r)
        dS1 = pad(np.einsum("bpk,bpi->bik", ddA, r) + np.einsum("bp,bpik->bik", dA, dr))
        S2 = np.einsum("bp,bpi,bpj->bij", dA, r, r)
        rdr = np.einsum("bp,bpi,bpjk->bijk", dA, r, dr)
        dS2 = pad(np.einsum("bpk,bpi,bpj->bijk", ddA, r, r) + rdr + rdr.transpose(0, 2, 1, 3))
        eps = np.zeros((3, 3, 3))
        eps[0, 1, 2] = eps[1, 2, 0] = eps[2, 0, 1] = 1.0
        eps[0, 2, 1] = eps[2, 1, 0] = eps[1, 0, 2] = -1.0
        Ed = self.damping
        Kt = np.einsum("abe,bc,cdf,...ef->...ad", eps, Ed, eps, S2)
        dKt = np.einsum("abe,bc,cdf,...efk->...adk", eps, Ed, eps, dS2)
        has = A > 0
        Asafe = np.where(has, A, 1.0)

        def per_area(X, dX):                                      # X/A and its tangent
            Xa = X / Asafe.reshape((-1,) + (1,) * (X.ndim - 1))
            return Xa, (dX - Xa[..., None] * dAt.reshape((-1,) + (1,) * (X.ndim - 1) + (K,))) / \
                Asafe.reshape((-1,) + (1,) * (X.ndim - 1) + (1,))

        eta = np.asarray(self._eta(np.zeros((nB, 3))), dtype=float)                  # uniform current
        eta_b, deta_b = body(eta)
        w_, v_ = xi[:, :3], xi[:, 3:]
        u = v_ - eta_b
        du = -deta_b + np.concatenate([zero3, zero3, zero3, eye3], axis=-1)
        dw = np.concatenate([zero3, zero3, eye3, zero3], axis=-1)
        rbar, drbar = per_area(S1, dS1)
        Ka, dKa = per_area(Kt, dKt)
        Eu = u @ Ed.T
        dEu = np.einsum("ij,bjk->bik", Ed, du)
        force = -(Eu + np.cross(w_, rbar) @ Ed.T)
        dforce = -(dEu + np.einsum("ij,bjk->bik", Ed, cross_t(w_, dw, rbar, drbar)))
        torque = -np.cross(rbar, Eu) + np.einsum("bij,bj->bi", Ka, w_)
        dtorque = (-cross_t(rbar, drbar, Eu, dEu) + np.einsum("bijk,bj->bik", dKa, w_)
                   + np.einsum("bij,bjk->bik", Ka, dw))
        if self.pressure != 0.0:
            Nn = np.einsum("bp,bpi->bi", dA, nrm)
            dNn = pad(np.einsum("bpk,bpi->bik", ddA, nrm))
            Tn = np.einsum("bp,bpi->bi", dA, np.cross(r, nrm))
            dTn = pad(np.einsum("bpk,bpi->bik", ddA, np.cross(r, nrm))
                      + np.einsum("bp,bpik->bik", dA, np.cross(dr, nrm[..., None], axisa=2, axisb=2, axisc=2)))
            na, dna = per_area(Nn, dNn)
            ta, dta = per_area(Tn, dTn)
            force, dforce = force - self.pressure * na, dforce - self.pressure * dna
            torque, dtorque = torque - self.pressure * ta, dtorque - self.pressure * dta
        E = E + np.where(has[:, None], np.concatenate([torque, force], -1), 0.0)
        D = D + np.where(has[:, None, None], np.concatenate([dtorque, dforce], 1), 0.0)

        # -- wind on the emerged patches --------------------------------------------------------------
        r = cut.emerged_position.reshape(nB, P, 3)
        dA = cut.emerged_area.reshape(nB, P)
        dr = tan.emerged_position.reshape(nB, P, 3, 6)
        ddA = tan.emerged_area.reshape(nB, P, 6)
        wb, dwb = body(np.broadcast_to(self.wind.velocity, (nB, 3)))
        ub = wb - v_
        dub = dwb - np.concatenate([zero3, zero3, zero3, eye3], axis=-1)
        speed = np.linalg.norm(ub, axis=-1)
        moving = speed > 0
        sp = np.where(moving, speed, 1.0)
        e = ub / sp[:, None]
        de = (dub - e[:, :, None] * np.einsum("bi,bik->bk", e, dub)[:, None, :]) / sp[:, None, None]
        cosine = -np.einsum("bpi,bi->bp", nrm, e)
        cw = np.maximum(cosine, 0.0)
        wgt = cw * dA
        a = wgt.sum(-1)
        q = np.einsum("bp,bpi->bi", wgt, r)
        # ∂max(0, c)/∂c: 1 where lit, 0 where shaded, and a ramp ½ + c/(2δ) across the kink for patches
        # (nearly) edge-on to the wind, |c| < δ (the topsides of a boat heading straight into the wind): the
        # central difference of step δ, so that (nearly) mirror-symmetric states get the symmetric
        # derivative instead of a one-sided one picked by round-off.
        lit = np.clip(0.5 + cosine / (2 * _EDGE_ON), 0.0, 1.0) * dA
        mvec = np.einsum("bp,bpi->bi", lit, nrm)                                   # Σ_lit dA_i n_i
        Qm = np.einsum("bpi,bpj->bij", lit[..., None] * r, nrm)                    # Σ_lit dA_i r_i n_iᵀ
        da = -np.einsum("bi,bik->bk", mvec, de) + pad(np.einsum("bp,bpk->bk", cw, ddA))
        dq = (-np.einsum("bij,bjk->bik", Qm, de) + pad(np.einsum("bp,bpk,bpi->bik", cw, ddA, r)
                                                        + np.einsum("bp,bpik->bik", wgt, dr)))
        c = 0.5 * self.wind.rho * self.wind.drag
        dspeed = np.einsum("bi,bik->bk", e, dub)
        Fw = c * (speed * a)[:, None] * ub
        dFw = c * (dspeed[:, None, :] * a[:, None, None] * ub[:, :, None] + (speed * a)[:, None, None] * dub
                   + speed[:, None, None] * ub[:, :, None] * da[:, None, :])
        qxu = np.cross(q, ub)
        Tw = c * speed[:, None] * qxu
        dTw = c * (dspeed[:, None, :] * qxu[:, :, None] + speed[:, None, None] * cross_t(q, dq, ub, dub))
        wind_on = (moving & (a > 0))
        E = E + np.where(wind_on[:, None], np.concatenate([Tw, Fw], -1), 0.0)
        D = D + np.where(wind_on[:, None, None], np.concatenate([dTw, dFw], 1), 0.0)
        return E, D[:, :, 0:3], D[:, :, 3:6], D[:, :, 6:12]

    def _external_wrench_jacobian_fd(self, R, x, xi, d: float = 1e-6):
        """Central differences of :meth:`external_wrench` (a callable current); the 12 perturbed copies of all
        steps are evaluated in one batched call."""
        from ..lie.so3 import cay

        nB = R.shape[0]
        I3 = np.eye(3)
        Rs = [R @ cay(sg * d * I3[j]) for j in range(3) for sg in (1, -1)]
        Rb = np.concatenate(Rs + [R] * 18)
        xb = np.concatenate([x] * 6 + [x + sg * d * I3[j] for j in range(3) for sg in (1, -1)] + [x] * 12)
        xib = np.concatenate([xi] * 12 + [xi + sg * d * np.eye(6)[j] for j in range(6) for sg in (1, -1)])
        Wb = self.external_wrench(Rb, xb, xib).reshape(24, nB, 6)
        D = ((Wb[0::2] - Wb[1::2]) / (2 * d)).transpose(1, 2, 0)                    # (B, 6, 12)
        return self.external_wrench(R, x, xi), D[:, :, 0:3], D[:, :, 3:6], D[:, :, 6:12]

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
