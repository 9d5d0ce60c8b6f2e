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

Moving water h(x, y, t) (``surface`` with three arguments, :func:`core.vehicles.water.is_moving`): each pose
is clipped by the surface at its own time (``time`` of the wrench methods). Over a step the sea is held at the
step's midpoint time t_k + h/2, as a control is held over it: the variational integrator's two half kicks of
node k then average the surface at t_k ∓ h/2, h f(t_k) to O(h³), and the DMOC model uses the same two times
(:mod:`core.dmoc.models.boat`), so a solved motion re-simulates exactly. ``orbital``: the waves' own orbital
velocity (their ``velocity(points, t)``) is added to η in the hydrodynamic force; off by default, the waves
then move the boat by buoyancy alone (equations.md, Boat).

Sums. ``external_wrench`` and its Jacobian sum the patches in moment form (``Boat._wrench_sums``): the wholly
wet and dry faces from per-face tables, the faces the surface cuts as rows (:func:`core.vehicles.hull.clip_split`).
The patch-by-patch methods ``buoyancy``, ``hydrodynamics`` and ``wind_wrench`` are the definitions they are
tested against (``test_boat_wrench_jacobian.py``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence, overload

import numpy as np
from scipy.optimize import brentq, fsolve

from ..errors import ScenarioError
from ..integrators.common import GRAVITY, VEHICLE_DEFAULT_METHOD, HolonomicSystem, RigidState
from ..trajectory import Trajectory
from .boat_spec import BOAT, DEFAULT_BEAM, DEFAULT_HEIGHT, DEFAULT_LENGTH, DEFAULT_MASS, box_inertia
from .hull import TRANSOM_FRACTION, ClipSplit, Hull, WaterSurface, clip, clip_split, default_hull
from .water import RHO_WATER, CurrentSpec, VelocityField, Wind, current_field, is_moving, projected_area

_RIB: Mapping[str, Any] = BOAT.preset("rib").values   # numbers and the inertia triple
_EDGE_ON = 1e-6       # δ: |n·ê| below this, a patch is edge-on to the wind (see Boat._wind_sums)
_K = 12               # derivative directions of the wrench sums: s, x, ω, v


def _hat(w: np.ndarray) -> np.ndarray:
    """ŵ (…, 3, 3) with ŵ a = w × a."""
    h = np.zeros(w.shape[:-1] + (3, 3))
    h[..., 0, 1], h[..., 0, 2], h[..., 1, 2] = -w[..., 2], w[..., 1], -w[..., 0]
    h[..., 1, 0], h[..., 2, 0], h[..., 2, 1] = w[..., 2], -w[..., 1], w[..., 0]
    return h


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b over the last axis (np.cross is slow on many small vectors)."""
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


def _cross_t(a: np.ndarray, da: np.ndarray, b: np.ndarray, db: np.ndarray) -> np.ndarray:
    """d(a × b) = â db − b̂ da for a, b (B, 3) with tangents da, db (B, 3, K)."""
    return _hat(a) @ db - _hat(b) @ da


def _slot_partials(split: ClipSplit, side: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Partials in the cut parameters t of one side's per-row sums over its slots: Σ dA (n, 2), Σ dA r (n, 3, 2),
    and g_j = Σ dA slide_j r (n, 2, 3), with which Σ dA (∂r/∂t_j) rᵀ = e_j g_jᵀ: the areas change with t and the
    centroids slide along the body edges e_j = (B − A, C − A), ∂r/∂t_j = slide_j e_j."""
    area, pos = getattr(split, side + "_area"), getattr(split, side + "_position")
    area_t, slide = getattr(split, side + "_area_t"), getattr(split, side + "_slide")
    assert split.edges is not None                                        # a split made with tangents
    w = area[..., None] * slide                                           # (n, slot, t)
    S1_t = np.einsum("nsi,nsj->nij", pos, area_t) + (w[:, 0] + w[:, 1])[:, None, :] * np.swapaxes(split.edges, 1, 2)
    g = np.einsum("nsj,nsi->nji", w, pos)                                 # Σ_s w_sj r_s (n, t, 3)
    return area_t[:, 0] + area_t[:, 1], S1_t, g


def _eps_e_eps(E: np.ndarray) -> np.ndarray:
    """G (9, 9) with Σ dA r̂ E r̂ = (G · vec(Σ dA r rᵀ)) reshaped (3, 3): G_(ad),(ef) = Σ_bc ε_abe E_bc ε_cdf."""
    eps = np.zeros((3, 3, 3))
    eps[0, 1, 2] = eps[1, 2, 0] = eps[2, 0, 1] = 1.0
    eps[0, 2, 1] = eps[2, 1, 0] = eps[1, 0, 2] = -1.0
    return np.einsum("abe,bc,cdf->adef", eps, E, eps).reshape(9, 9)


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


def damping_matrix(values: Sequence[float] | np.ndarray, where: str = "[vehicle] damping") -> np.ndarray:
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

    mass: float = _RIB["mass"]
    inertia: tuple[float, float, float] = _RIB["inertia"]        # a uniform box of the default hull's size
    hull: Hull = field(default_factory=default_hull)
    thrusters: tuple[tuple[np.ndarray, np.ndarray], ...] = field(default_factory=default_thrusters)
    # E (N·s/m): surge, sway, heave (any values damping_matrix takes; stored as the 3 × 3 matrix)
    damping: np.ndarray = field(default_factory=lambda: np.array([300.0, 2000.0, 3000.0]))
    wind: Wind = field(default_factory=Wind)
    current: CurrentSpec = None                       # η: None, (3,) or callable (…, 3) → (…, 3)
    max_thrust: float = _RIB["max_thrust"]            # N per thruster, forward or reverse
    pressure: float = 0.0                             # P (Pa-like magnitude; see module docstring)
    surface: WaterSurface | None = None               # water surface h(x, y) or moving h(x, y, t); None = z = 0
    orbital: bool = False                             # a moving surface's orbital velocity enters η
    # derived in __post_init__ (not parameters): η as a field, whether the water moves, the orbital velocity
    # (x, t) ↦ (…, 3) when ``orbital``, the sums' constant tables and the last clipping per batch (_remember)
    _eta: VelocityField = field(init=False, repr=False, compare=False)
    _moving: bool = field(init=False, repr=False, compare=False)
    _orbital_velocity: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = field(init=False, repr=False,
                                                                                    compare=False)
    _eps_E_eps: np.ndarray = field(init=False, repr=False, compare=False)
    _wind_table: np.ndarray = field(init=False, repr=False, compare=False)
    _last_split: dict[int | tuple[int, bytes], ClipSplit] = field(init=False, repr=False, compare=False)

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
        object.__setattr__(self, "_moving", is_moving(self.surface))
        velocity = getattr(self.surface, "velocity", None) if self.orbital else None
        if self.orbital and not (self._moving and callable(velocity)):
            raise ScenarioError("[vehicle] water", "orbital velocity needs moving waves that have one "
                                "(regular waves; a sampled surface gives heights only)")
        object.__setattr__(self, "_orbital_velocity", velocity)
        object.__setattr__(self, "_eps_E_eps", _eps_e_eps(self.damping))
        # the wholly dry faces' wind moments: dA, dA c, dA n, dA c n_ᵀ (c the centroid, n the normal)
        tab = self.hull.tables
        object.__setattr__(self, "_wind_table", np.concatenate(
            [tab.patch[:, :4], tab.vec, (tab.patch[:, 1:4, None] * self.hull.face_normal[:, None, :]).reshape(-1, 9)],
            axis=1))
        # the last values-only clipping per batch size: the optimiser asks the Jacobian at the point whose values
        # it has just evaluated, and clip_split reuses the cut faces when the poses are the same, byte for byte
        object.__setattr__(self, "_last_split", {})
        if self.hull.volume * RHO_WATER <= self.mass:
            raise ScenarioError("[vehicle] mass", f"{self.mass:g} kg sinks: the hull displaces at most "
                                f"{self.hull.volume * RHO_WATER:.6g} kg of water")

    # -- parameters ------------------------------------------------------------------------------
    @property
    def moving(self) -> bool:
        """Whether the water moves (a surface h(x, y, t)): the wrench then depends on the time."""
        return self._moving

    def _times(self, time: np.ndarray | float | None, batch: tuple[int, ...]) -> np.ndarray | None:
        """Each pose's time on moving water (None on still water, which has no clock)."""
        if not self._moving:
            return None
        if time is None:
            raise ValueError("Boat: the water moves, so the wrench needs the time of each pose (time=…)")
        return np.broadcast_to(np.asarray(time, dtype=float), batch)

    def _split_key(self, n: int, t: np.ndarray | None) -> int | tuple[int, bytes]:
        return n if t is None else (n, np.ascontiguousarray(t).tobytes())

    def _remember(self, split: ClipSplit, t: np.ndarray | None) -> None:
        """Keep the values-only split for the Jacobian at the same poses (and times: a few, oldest dropped)."""
        key = self._split_key(len(split.volume), t)
        if t is not None:
            timed = [k for k in self._last_split if isinstance(k, tuple)]
            for k in timed[:max(0, len(timed) - 7)]:
                del self._last_split[k]
        self._last_split[key] = split

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
                      n: np.ndarray, dA: np.ndarray, time: np.ndarray | None = None) -> np.ndarray:
        """(1/A) Σ_i (r_i × f_h,i, f_h,i) dA_i with f_h,i = −E(ṙ_i − Rᵀη(x + R r_i)) − P n_i; (…, 6).

        Patches r, n (…, P, 3) and dA (…, P) in the body frame; zero when nothing is wet. With ``orbital``,
        η includes the waves' orbital velocity at the poses' ``time`` (…).
        """
        R = np.asarray(R, dtype=float)
        xi = np.asarray(xi, dtype=float)
        w, v = xi[..., None, :3], xi[..., None, 3:]
        rdot = v + np.cross(w, r)                                                   # ṙ_i = v + ω × r_i
        Rp = R[..., None, :, :]
        xw = np.asarray(x, float)[..., None, :] + np.einsum("...ij,...j->...i", Rp, r)
        eta = self._eta(xw)
        if self._orbital_velocity is not None:                                      # ``orbital``
            eta = eta + self._orbital_velocity(xw, np.asarray(time, dtype=float)[..., None])
        eta_b = np.einsum("...ji,...j->...i", Rp, eta)                             # Rᵀ η(x + R r_i)
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

    @overload
    def external_wrench(self, R: np.ndarray, x: np.ndarray, xi: np.ndarray, parts: Literal[False] = ...,
                        time: np.ndarray | float | None = ...) -> np.ndarray: ...

    @overload
    def external_wrench(self, R: np.ndarray, x: np.ndarray, xi: np.ndarray, parts: Literal[True],
                        time: np.ndarray | float | None = ...) -> dict[str, Any]: ...

    def external_wrench(self, R: np.ndarray, x: np.ndarray, xi: np.ndarray,
                        parts: bool = False, time: np.ndarray | float | None = None) -> np.ndarray | dict[str, Any]:
        """Gravity + buoyancy + hydrodynamics + wind at pose (R, x), body velocity ξ; (…, 6).

        The sums over the clipped hull's patches are taken in moment form (:meth:`_wrench_sums`: the same as
        :meth:`buoyancy`, :meth:`hydrodynamics` and :meth:`wind_wrench` over :func:`clip`'s patches, to
        round-off); a callable (spatially varying) current, or the waves' orbital velocity, is summed patch by
        patch (:meth:`hydrodynamics`). ``time`` (broadcast to the batch): each pose's time, needed on moving
        water. With ``parts`` True, returns a dict of the three wrenches and the clipping result.
        """
        R, x, xi = (np.asarray(a, dtype=float) for a in (R, x, xi))
        batch = np.broadcast_shapes(R.shape[:-2], x.shape[:-1], xi.shape[:-1])
        Rb, xb = np.broadcast_to(R, batch + (3, 3)), np.broadcast_to(x, batch + (3,))
        t = self._times(time, batch)
        split = clip_split(self.hull, Rb, xb, self.surface, time=t)
        self._remember(split, t)
        Rf, xf, xif = (a.reshape((-1,) + a.shape[len(batch):]) for a in (Rb, xb, np.broadcast_to(xi, batch + (6,))))
        w = self._wrench_sums(Rf, xf, xif, split, False)
        if callable(self.current) or self.orbital:
            cut = split.clipped()
            pf = lambda a: a.reshape((len(Rf), -1) + a.shape[len(batch) + 2:])  # noqa: E731 (…, m, 2) → (nb, 2m)
            w["hydrodynamics"] = self.hydrodynamics(Rf, xf, xif, pf(cut.submerged_position), pf(cut.submerged_normal),
                                                    pf(cut.submerged_area), None if t is None else t.reshape(-1))
        w = {k: v.reshape(batch + (6,)) for k, v in w.items()}
        if parts:
            return {**w, "clipped": split.clipped()}
        return w["buoyancy"] + w["hydrodynamics"] + w["wind"]

    def external_wrench_jacobian(self, R: np.ndarray, x: np.ndarray, xi: np.ndarray,
                                 time: np.ndarray | float | None = None
                                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """E = :meth:`external_wrench` (B, 6) and its exact first derivatives ∂E/∂s (B, 6, 3) in the body
        rotation increment (R → R cay(s)), ∂E/∂x (B, 6, 3) and ∂E/∂ξ (B, 6, 6), for poses R (B, 3, 3),
        x (B, 3) and body velocities ξ (B, 6); all steps at once.

        Analytic (forward mode) through the clipped hull (:func:`core.vehicles.hull.clip_split`: the wholly wet
        and dry faces are patches fixed in the body, the cut faces' slots move with their cut parameters) and
        through eq. (15) and the drag laws written with patch moments (:meth:`_wrench_sums`). A spatially
        varying (callable) current, or the waves' orbital velocity, falls back to central differences of the
        wrench in the pose (the clipped hull is differenced, all steps batched in one call per direction).
        On moving water (``time`` (B,)) each pose is clipped at its own time, held fixed: the surface enters
        the derivatives through its spatial gradient at that time (:func:`core.vehicles.hull.clip_split`).
        """
        R, x, xi = (np.asarray(a, dtype=float) for a in (R, x, xi))
        t = self._times(time, R.shape[:-2])
        if callable(self.current) or self.orbital:
            return self._external_wrench_jacobian_fd(R, x, xi, time=t)
        split = clip_split(self.hull, R, x, self.surface, tangents=True,
                           values=self._last_split.get(self._split_key(len(R), t)), time=t)
        parts = list(self._wrench_sums(R, x, xi, split, True).values())
        E = parts[0][0] + parts[1][0] + parts[2][0]
        D = parts[0][1] + parts[1][1] + parts[2][1]
        return E, D[:, :, 0:3], D[:, :, 3:6], D[:, :, 6:12]

    # -- the wrench in moment form (equations.md, Boat; derivatives over K = 12 directions s, x, ω, v) ----------
    def _wrench_sums(self, R: np.ndarray, x: np.ndarray, xi: np.ndarray, split: ClipSplit, tangents: bool) -> dict:
        """The three wrenches (nb, 6) — with ``tangents`` each a pair (E, ∂E (nb, 6, K)) — at poses R (nb, 3, 3),
        x (nb, 3) and velocities ξ (nb, 6), from their :class:`ClipSplit`; hydrodynamics for a uniform current."""
        out = {"buoyancy": self._buoyancy_sums(R, x, split, tangents),
               "hydrodynamics": self._hydro_sums(R, xi, split, tangents),
               "wind": self._wind_sums(R, xi, split, tangents)}
        return out if tangents else {k: v[0] for k, v in out.items()}

    def _buoyancy_sums(self, R, x, split, tangents):
        """Eq. (15) with Π_s(x_s − x) = ρ_w (V x̄ − V x) from the clipped volume's moments; d(Rᵀw)/ds = (Rᵀw)^."""
        nb = len(R)
        V = split.volume
        M = split.moment - x * V[:, None]                                  # V (x̄ − x) (zero when dry)
        rg = RHO_WATER * GRAVITY
        w = np.zeros((nb, 2, 3))                                           # world torque, force
        w[:, 0, 0], w[:, 0, 1] = rg * M[:, 1], -rg * M[:, 0]               # (x_s − x) × (0, 0, Π_s)
        w[:, 1, 2] = GRAVITY * (RHO_WATER * V - self.mass)
        wb = w @ R                                                         # rows (Rᵀw)ᵀ
        if not tangents:
            return wb.reshape(nb, 6), None
        dM = np.zeros((nb, 3, _K))
        dM[:, :, :6] = split.d_moment - x[:, :, None] * split.d_volume[:, None, :]
        dM[:, :, 3:6] -= V[:, None, None] * np.eye(3)
        dw = np.zeros((nb, 2, 3, _K))
        dw[:, 0, 0], dw[:, 0, 1] = rg * dM[:, 1], -rg * dM[:, 0]
        dw[:, 1, 2, :6] = rg * split.d_volume
        D = np.swapaxes(R, 1, 2)[:, None] @ dw                             # Rᵀ dw
        D[..., :3] += _hat(wb)
        return wb.reshape(nb, 6), D.reshape(nb, 6, _K)

    def _submerged_sums(self, split: ClipSplit, tangents: bool):
        """Σ over the submerged patches of dA (1, A), dA r (3, S₁), dA r rᵀ (9, S₂) and, with a pressure, dA n (3, N)
        and dA r × n (3, T): (nb, 13 or 19), with ``tangents`` also their pose tangents (nb, 13 or 19, K) (only
        the cut faces' slots move: their areas change with the cut parameters t, their centroids slide)."""
        k = 19 if self.pressure != 0.0 else 13
        area, pos = split.submerged_area, split.submerged_position        # (n, 2), (n, 2, 3)
        ap = area[..., None] * pos
        A_r, S1_r = area[:, 0] + area[:, 1], ap[:, 0] + ap[:, 1]
        S2_r = ap[:, 0, :, None] * pos[:, 0, None] + ap[:, 1, :, None] * pos[:, 1, None]   # Σ_s dA r rᵀ
        rows = [A_r[:, None], S1_r, S2_r.reshape(-1, 9)]
        n_f = self.hull.face_normal[split.fi]
        if k == 19:
            rows += [A_r[:, None] * n_f, _cross(S1_r, n_f)]
        S = split.full.astype(float) @ self.hull.tables.patch[:, :k] + split.row_sum(np.concatenate(rows, axis=1))
        if not tangents:
            return S, None
        assert split.edges is not None and split.submerged_area_t is not None   # a split made with tangents
        A_t, S1_t, g = _slot_partials(split, "submerged")
        ge = g[..., :, None] * split.edges[..., None, :]                   # g_j e_jᵀ (n, t, 3, 3)
        Y = pos[..., None] * split.submerged_area_t[:, :, None, :]         # (n, slot, 3, t)
        S2_t = np.einsum("nsit,nsj->ntij", Y, pos) + ge + np.swapaxes(ge, 2, 3)   # (n, t, 3, 3)
        rows_t = [A_t[:, None], S1_t, S2_t.reshape(-1, 2, 9).transpose(0, 2, 1)]
        if k == 19:
            rows_t += [n_f[..., None] * A_t[:, None, :], np.stack([_cross(S1_t[..., j], n_f) for j in range(2)], -1)]
        dS = np.zeros(S.shape + (_K,))
        dS[..., :6] = split.row_sum(np.concatenate(rows_t, axis=1) @ split.dt)
        return S, dS

    def _hydro_sums(self, R, xi, split, tangents):
        """(1/A) Σ_i (r_i × f_h,i, f_h,i) dA_i for a uniform current η, in patch moments (u = v − Rᵀη):
        force = −E(u + ω × S₁/A) − P N/A, torque = −(S₁/A) × Eu + (K/A) ω − P T/A with K = Σ dA_i r̂_i E r̂_i
        (= ε E ε : S₂); zero when nothing is wet."""
        nb = len(R)
        S, dS = self._submerged_sums(split, tangents)
        has = S[:, 0] > 0
        Asafe = np.where(has, S[:, 0], 1.0)[:, None]
        Sa = S / Asafe                                                    # per wetted area
        rbar = Sa[:, 1:4]
        Ka = (Sa[:, 4:13] @ self._eps_E_eps.T).reshape(nb, 3, 3)
        Ed, P = self.damping, self.pressure
        eta = np.broadcast_to(self._eta(np.zeros((1, 3)))[0], (nb, 3))   # uniform current (world)
        eta_b = (eta[:, None, :] @ R)[:, 0]
        w_, v_ = xi[:, :3], xi[:, 3:]
        Eu = (v_ - eta_b) @ Ed.T
        force = -(Eu + _cross(w_, rbar) @ Ed.T)
        torque = -_cross(rbar, Eu) + (Ka @ w_[:, :, None])[..., 0]
        if P != 0.0:
            force, torque = force - P * Sa[:, 13:16], torque - P * Sa[:, 16:19]
        E = np.where(has[:, None], np.concatenate([torque, force], axis=1), 0.0)
        if not tangents:
            return E, None
        dSa = (dS - Sa[:, :, None] * dS[:, None, 0]) / Asafe[:, :, None]
        drbar = dSa[:, 1:4]
        dKa = (self._eps_E_eps @ dSa[:, 4:13]).reshape(nb, 3, 3, _K)
        du = np.zeros((nb, 3, _K))
        du[:, :, :3] = -_hat(eta_b)                                        # d(Rᵀη)/ds = (Rᵀη)^
        du[:, :, 9:] = np.eye(3)
        dw = np.zeros((nb, 3, _K))
        dw[:, :, 6:9] = np.eye(3)
        dEu = Ed @ du
        dforce = -(dEu + Ed @ _cross_t(w_, dw, rbar, drbar))
        dtorque = -_cross_t(rbar, drbar, Eu, dEu) + (w_[:, None, None, :] @ dKa)[:, :, 0] + Ka @ dw
        if P != 0.0:
            dforce, dtorque = dforce - P * dSa[:, 13:16], dtorque - P * dSa[:, 16:19]
        D = np.where(has[:, None, None], np.concatenate([dtorque, dforce], axis=1), 0.0)
        return E, D

    def _wind_sums(self, R, xi, split, tangents):
        """Wind on the emerged patches, face by face (a face's patches share its normal n_f): with E_f and F_f its
        emerged area and first moment, c = ½ρ_air C_d, u_b = Rᵀw − v, ê = u_b/|u_b| and w_f = max(0, −n_f·ê),
        force = c|u_b| u_b Σ w_f E_f, torque = c|u_b| (Σ w_f F_f) × u_b."""
        nb = len(R)
        hull, dry = self.hull, split.dry
        bi, fi = split.bi, split.fi
        area, pos = split.emerged_area, split.emerged_position
        EF_r = np.concatenate([(area[:, 0] + area[:, 1])[:, None], np.einsum("ns,nsi->ni", area, pos)], axis=1)
        wb = (self.wind.velocity[None, None, :] @ R)[:, 0]                  # Rᵀw
        ub = wb - xi[:, 3:]
        speed = np.sqrt((ub * ub).sum(axis=1))
        moving = speed > 0
        sp = np.where(moving, speed, 1.0)
        e = ub / sp[:, None]
        cosine = -e @ hull.face_normal.T                                   # (nb, m)
        cw = np.maximum(cosine, 0.0)
        cw_r = cw[bi, fi][:, None]
        aq = np.where(dry, cw, 0.0) @ self._wind_table[:, :4] + split.row_sum(cw_r * EF_r)   # Σ w_f (E_f, F_f)
        a, q = aq[:, 0], aq[:, 1:]
        c = 0.5 * self.wind.rho * self.wind.drag
        Fw = c * (speed * a)[:, None] * ub
        qxu = _cross(q, ub)
        Tw = c * speed[:, None] * qxu
        on = moving & (a > 0)
        E = np.where(on[:, None], np.concatenate([Tw, Fw], axis=1), 0.0)
        if not tangents:
            return E, None
        dub = np.zeros((nb, 3, _K))
        dub[:, :, :3] = _hat(wb)
        dub[:, :, 9:] = -np.eye(3)
        dspeed = (e[:, None, :] @ dub)[:, 0]
        de = (dub - e[:, :, None] * dspeed[:, None, :]) / sp[:, None, None]
        # ∂max(0, c)/∂c: 1 where lit, 0 where shaded, and a ramp ½ + c/(2δ) across the kink for faces (nearly)
        # edge-on to the wind, |c| < δ (the topsides of a boat heading straight into the wind): the central
        # difference of step δ, so that (nearly) mirror-symmetric states get the symmetric derivative instead of
        # a one-sided one picked by round-off.
        lit = np.clip(0.5 + cosine / (2 * _EDGE_ON), 0.0, 1.0)
        n_r = hull.face_normal[fi]
        lit_r = lit[bi, fi][:, None]
        mQ = np.where(dry, lit, 0.0) @ self._wind_table[:, 4:] + split.row_sum(
            lit_r * np.concatenate([EF_r[:, :1] * n_r, (EF_r[:, 1:, None] * n_r[:, None, :]).reshape(-1, 9)], axis=1))
        mvec, Qm = mQ[:, :3], mQ[:, 3:].reshape(nb, 3, 3)                 # Σ_lit E_f n_f, Σ_lit F_f n_fᵀ
        E_t, F_t, _ = _slot_partials(split, "emerged")
        EF_t = np.concatenate([E_t[:, None], F_t], axis=1)                # (n, 4, 2)
        dEF = split.row_sum(cw_r[:, :, None] * (EF_t @ split.dt))        # Σ w_f (dE_f, dF_f) (nb, 4, 6)
        da = -(mvec[:, None, :] @ de)[:, 0]
        da[:, :6] += dEF[:, 0]
        dq = -Qm @ de
        dq[:, :, :6] += dEF[:, 1:]
        dFw = c * (dspeed[:, None, :] * a[:, None, None] * ub[:, :, None] + (speed * a)[:, None, None] * dub
                   + speed[:, None, None] * ub[:, :, None] * da[:, None, :])
        dTw = c * (dspeed[:, None, :] * qxu[:, :, None] + speed[:, None, None] * _cross_t(q, dq, ub, dub))
        D = np.where(on[:, None, None], np.concatenate([dTw, dFw], axis=1), 0.0)
        return E, D

    def _external_wrench_jacobian_fd(self, R, x, xi, d: float = 1e-6, time=None):
        """Central differences of :meth:`external_wrench` (a callable current, orbital velocity); the 12
        perturbed copies of all steps are evaluated in one batched call (each at its pose's ``time``)."""
        from ..lie.so3 import cay

        nB = R.shape[0]
        I3 = np.eye(3)
        Rs = [R @ cay(sg * d * I3[j]) for j in range(3) for sg in (1, -1)]
        Rb = np.concatenate(Rs + [R] * 18)
        xb = np.concatenate([x] * 6 + [x + sg * d * I3[j] for j in range(3) for sg in (1, -1)] + [x] * 12)
        xib = np.concatenate([xi] * 12 + [xi + sg * d * np.eye(6)[j] for j in range(6) for sg in (1, -1)])
        tb = None if time is None else np.tile(time, 24)
        Wb = self.external_wrench(Rb, xb, xib, time=tb).reshape(24, nB, 6)
        D = ((Wb[0::2] - Wb[1::2]) / (2 * d)).transpose(1, 2, 0)                    # (B, 6, 12)
        return self.external_wrench(R, x, xi, time=time), D[:, :, 0:3], D[:, :, 3:6], D[:, :, 6:12]

    def displaced_mass(self, R: np.ndarray, x: np.ndarray, time: np.ndarray | float = 0.0) -> np.ndarray:
        """Π_s = ρ_w V_s (kg) at pose (R, x) (on moving water, at ``time``)."""
        return RHO_WATER * clip(self.hull, R, x, self.surface, time=time if self._moving else None).volume

    # -- equilibrium ------------------------------------------------------------------------------
    def float_height(self, R: np.ndarray | None = None, time: float = 0.0) -> float:
        """Height z of the centre of mass at which Π_s = m for orientation R (default level; root of Π_s(z) − m),
        at (x, y) = 0 (on moving water, at ``time``)."""
        R = np.eye(3) if R is None else np.asarray(R, dtype=float)
        zs = R[2] @ self.hull.vertices.T
        o = np.array(0.0)
        level = 0.0 if self.surface is None else float(self.surface(o, o, np.array(time)) if self._moving
                                                      else self.surface(o, o))
        lo, hi = level - zs.max(), level - zs.min()     # fully submerged … fully emerged (flat water)
        excess = lambda z: float(self.displaced_mass(R, np.array([0.0, 0.0, z]), time)) - self.mass  # noqa: E731
        span = hi - lo
        for _ in range(30):                             # widen the bracket for a wavy surface
            if excess(lo) > 0 > excess(hi):
                break
            lo, hi = lo - span, hi + span
        return brentq(excess, lo, hi, xtol=1e-13, rtol=1e-14)

    def equilibrium(self, time: float = 0.0) -> tuple[float, float]:
        """Upright static equilibrium (z, pitch θ): Π_s = m and zero pitch moment (roll 0 by symmetry).

        R = R_y(θ) (θ > 0: bow down); solved with scipy's fsolve from the level float height (on moving water,
        in the surface frozen at ``time``).
        """
        def Ry(th: float) -> np.ndarray:
            c, s = math.cos(th), math.sin(th)
            return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])

        def residual(p: np.ndarray) -> np.ndarray:
            R, x = Ry(p[1]), np.array([0.0, 0.0, p[0]])
            cut = clip(self.hull, R, x, self.surface, time=time if self._moving else None)
            wr = self.buoyancy(R, x, cut.volume, cut.centroid)
            return np.array([wr[5] / (GRAVITY * self.mass), wr[1] / (GRAVITY * self.mass)])

        sol, info, ok, msg = fsolve(residual, np.array([self.float_height(time=time), 0.0]), full_output=True,
                                    xtol=1e-13)
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

    def system(self, controls: Mapping[str, np.ndarray], steps: int, dt: float | None = None) -> HolonomicSystem:
        """Thrust + external wrench per step; on moving water the sea is held over step k at its midpoint
        time (k + ½) ``dt`` (module docstring)."""
        thrust = self.check_controls(controls, steps) @ self.control_matrix.T      # (steps, 6)
        if self._moving and dt is None:
            raise ValueError("Boat.system: the water moves, so the step length dt is needed")
        # The VI evaluates the wrench twice at each node (end of step k, start of step k + 1) at
        # the same state: the external part, which clips the hull, is reused when the state (and on
        # moving water the time) repeats.
        last: list = [None, None, None, None, None]
        step = dt if self._moving else None                 # the sea's clock (None: still water has none)

        def wrench(k: int, R: np.ndarray, x: np.ndarray, xi: np.ndarray) -> np.ndarray:
            R, x, xi = (np.asarray(a, dtype=float) for a in (R, x, xi))
            t = None if step is None else (k + 0.5) * step
            if not (last[0] is not None and np.array_equal(R, last[0]) and np.array_equal(x, last[1])
                    and np.array_equal(xi, last[2]) and last[4] == t):
                last[:] = [R.copy(), x.copy(), xi.copy(), self.external_wrench(R, x, xi, time=t), t]
            return thrust[k] + last[3]

        return HolonomicSystem(inertia=self.inertia6, wrench=wrench)

    def simulate(self, initial: RigidState, controls: Mapping[str, np.ndarray], dt: float, steps: int,
                 method: str = VEHICLE_DEFAULT_METHOD) -> Trajectory:
        """Integrate; controls ``thruster_1`` … per step in the trajectory, shape {} (no rudder)."""
        from ..integrators import integrate

        u = self.check_controls(controls, steps)
        traj = integrate(self.system({n: u[:, i] for i, n in enumerate(self.input_names)}, steps, dt),
                         initial, dt, steps, method)
        n = len(traj.time)
        traj.shape = {}
        traj.controls = {name: u[: max(n - 1, 0), i] for i, name in enumerate(self.input_names)}
        traj.vehicle = "boat"
        contains = getattr(self.surface, "contains", None)
        if callable(contains):   # a sampled sea: nodes off its grid (held at the edge)
            p = np.asarray(traj.position, dtype=float)
            traj.stats["water_outside_nodes"] = int(np.count_nonzero(~contains(p[:, 0], p[:, 1])))
        return traj


__all__ = ["Boat", "default_thrusters", "thrust_matrix", "box_inertia", "damping_matrix",
           "DEFAULT_LENGTH", "DEFAULT_BEAM", "DEFAULT_HEIGHT", "DEFAULT_MASS"]
