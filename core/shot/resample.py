"""The motion between nodes: a C¹ interpolant of a trajectory on its Lie group, for the bake
(``docs/equations.md``, "Node grid and the motion between nodes", for the curves and their figures).

Poses g_k = (R_k, x_k) with body velocities V_k = (ω_k, v_k) at the nodes t_k; between nodes k and
k+1 (h = t_{k+1} − t_k, s = (t − t_k)/h) the pose is the cubic Hermite curve in the Lie algebra of
the relative motion, g(s) = g_k exp(p(s)), p(s) = H₁₀(s) hV_k + H₀₁(s) Δ + H₁₁(s) h dexp⁻¹₋Δ V_{k+1},
Δ = log(g_k⁻¹ g_{k+1}) (Park & Ravani 1995; Kim, Kim & Shin 1995; the closed-form SE(3) exp, log and
dexp⁻¹ of Park & Chung in ``core.lie.se3``). It passes every node with its velocity; a constant body
velocity gives the exponential curve, a pure translation the cubic Hermite spline. Stored velocities
that do not describe the poses are replaced by the nodes' differences (:func:`node_tangents`).

Scalar channels (steering, wheel and rotor angles, tilts) take the monotone cubic of Fritsch & Carlson
1980 (scipy's PCHIP): C¹ and never past the node values, so a steering angle stays within its limits
and a spinning wheel never turns back. A planar vehicle's heading is the node's plus the yaw turned
since it, continuous over any number of turns. A car's rear axle takes the *rolling curve*
(:func:`rolling_curve`), which follows its own heading: the Lie group curve would let it slip
sideways between coarse nodes. Pure numpy; no Blender. ``addon/baking.py`` calls :func:`sample` for
every frame it keys.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..lie import quaternion, se3

AGREE = 0.5        # node velocities within this fraction of the nodes' differences are used as tangents


def intervals(t: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Node index k and fraction s ∈ [0, 1] with times = t_k + s (t_{k+1} − t_k) (clamped to the ends)."""
    t = np.asarray(t, dtype=float)
    times = np.asarray(times, dtype=float).reshape(-1)
    if len(t) < 2:
        return np.zeros(len(times), dtype=int), np.zeros(len(times))
    k = np.clip(np.searchsorted(t, times, side="right") - 1, 0, len(t) - 2)
    s = np.clip((times - t[k]) / (t[k + 1] - t[k]), 0.0, 1.0)
    return k, s


def hermite_basis(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(H₀₀, H₁₀, H₀₁, H₁₁) at s: the cubic with value/slope 1 at one end and 0 elsewhere."""
    s = np.asarray(s, dtype=float)
    s2, s3 = s * s, s * s * s
    return 2 * s3 - 3 * s2 + 1, s3 - 2 * s2 + s, -2 * s3 + 3 * s2, s3 - s2


def hermite_basis_derivative(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """d/ds of :func:`hermite_basis`."""
    s = np.asarray(s, dtype=float)
    s2 = s * s
    return 6 * s2 - 6 * s, 3 * s2 - 4 * s + 1, -6 * s2 + 6 * s, 3 * s2 - 2 * s


def cubic_hermite(t, y, dy, times, derivative: bool = False) -> np.ndarray:
    """The cubic Hermite spline through (t_k, y_k) with slopes dy_k (per unit time), at ``times``;
    y (N,) or (N, d). With ``derivative``, its time derivative instead."""
    t = np.asarray(t, dtype=float)
    y, dy = np.asarray(y, dtype=float), np.asarray(dy, dtype=float)
    if len(t) < 2:
        out = np.zeros_like(y) if derivative else y
        return np.repeat(out[:1], len(np.asarray(times).reshape(-1)), axis=0)
    k, s = intervals(t, times)
    h = (t[k + 1] - t[k]).reshape((-1,) + (1,) * (y.ndim - 1))
    basis = hermite_basis_derivative(s) if derivative else hermite_basis(s)
    b = [c.reshape((-1,) + (1,) * (y.ndim - 1)) for c in basis]
    out = b[0] * y[k] + b[1] * h * dy[k] + b[2] * y[k + 1] + b[3] * h * dy[k + 1]
    return out / h if derivative else out


def pchip_slopes(t, y) -> np.ndarray:
    """Fritsch–Carlson monotone slopes (as scipy's PchipInterpolator): the weighted harmonic mean of
    the neighbouring secants where they agree in sign, 0 at an extremum; one-sided three-point ends."""
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(t)
    if n < 2:
        return np.zeros_like(y)
    h = np.diff(t).reshape((-1,) + (1,) * (y.ndim - 1))
    delta = np.diff(y, axis=0) / h
    if n == 2:
        return np.concatenate([delta, delta])
    d = np.zeros_like(y)
    h0, h1 = h[:-1], h[1:]
    w1, w2 = 2 * h1 + h0, h1 + 2 * h0
    d0, d1 = delta[:-1], delta[1:]
    same = (np.sign(d0) * np.sign(d1)) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        harmonic = (w1 + w2) / (w1 / np.where(same, d0, 1.0) + w2 / np.where(same, d1, 1.0))
    d[1:-1] = np.where(same, harmonic, 0.0)
    d[0] = _pchip_end(h[0], h[1], delta[0], delta[1])
    d[-1] = _pchip_end(h[-1], h[-2], delta[-1], delta[-2])
    return d


def _pchip_end(h0, h1, m0, m1) -> np.ndarray:
    d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
    d = np.where(np.sign(d) != np.sign(m0), 0.0, d)
    return np.where((np.sign(m0) != np.sign(m1)) & (np.abs(d) > 3 * np.abs(m0)), 3 * m0, d)


def pchip(t, y, times) -> np.ndarray:
    """The monotone cubic through (t_k, y_k) at ``times`` (:func:`pchip_slopes`)."""
    return cubic_hermite(t, y, pchip_slopes(t, y), times)


def relative_twists(R: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Δ_k = log(g_k⁻¹ g_{k+1}) ∈ se(3), (N−1, 6) in (ω, v) order."""
    g = se3.make(R, x)
    rel = np.einsum("kij,kjl->kil", se3.inverse(g[:-1]), g[1:])
    return se3.log(rel)


def _agree(gap: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Stored and differenced rates agree: their gap within AGREE of the larger, or of a quarter of the
    largest over the trajectory (a rate near zero is not held to a relative test)."""
    size = np.maximum(a, b)
    floor = 0.25 * float(np.max(size[np.isfinite(size)], initial=0.0))
    return gap <= AGREE * np.maximum(size, floor) + 1e-9


def node_tangents(t, R, x, omega, v) -> np.ndarray:
    """The body velocity (ω, v) to use at each node, (N, 6): the stored one where it agrees with the
    nodes' own differences (:func:`_agree`, angular and linear parts each
    — what a solve or simulation stores) — else those differences: each step's Δ_k/h_k is the body
    velocity at the step's middle to O(h²), interpolated linearly in time to the node (extrapolated at
    the two ends)."""
    t = np.asarray(t, dtype=float)
    V = np.concatenate([np.asarray(omega, dtype=float), np.asarray(v, dtype=float)], axis=-1)
    if len(t) < 2:
        return V
    h = np.diff(t)
    step = relative_twists(R, x) / h[:, None]   # each the body velocity at its step's middle, to O(h²)
    D = np.empty_like(V)
    if len(t) == 2:
        D[:] = step[0]
    else:  # linear in time between the steps' middles; extrapolated to the two ends
        D[1:-1] = (h[1:, None] * step[:-1] + h[:-1, None] * step[1:]) / (h[:-1] + h[1:])[:, None]
        D[0] = ((2 * h[0] + h[1]) * step[0] - h[0] * step[1]) / (h[0] + h[1])
        D[-1] = ((2 * h[-1] + h[-2]) * step[-1] - h[-1] * step[-2]) / (h[-1] + h[-2])
    use = np.all(np.isfinite(V), axis=1)
    for part in (slice(0, 3), slice(3, 6)):
        a, b = V[:, part], D[:, part]
        use &= _agree(np.linalg.norm(a - b, axis=1), np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1))
    return np.where(use[:, None], V, D)


def se3_hermite(t, R, x, tangents, times, velocity: bool = False):
    """Poses on the C¹ Lie group Hermite curve (module doc) at ``times``: (R (K, 3, 3), x (K, 3), p (K, 6),
    and with ``velocity`` the body velocities (K, 6)); p is the Lie algebra offset from node k (its
    angular part is the turn since node k, for a continuous heading). ``tangents``: (N, 6) node body
    velocities (:func:`node_tangents`)."""
    t = np.asarray(t, dtype=float)
    R, x = np.asarray(R, dtype=float), np.asarray(x, dtype=float)
    V = np.asarray(tangents, dtype=float)
    times = np.asarray(times, dtype=float).reshape(-1)
    if len(t) < 2:
        K = len(times)
        out = (np.repeat(R[:1], K, axis=0), np.repeat(x[:1], K, axis=0), np.zeros((K, 6)))
        return out + (np.repeat(V[:1], K, axis=0),) if velocity else out
    k, s = intervals(t, times)
    h = (t[k + 1] - t[k])[:, None]
    delta = relative_twists(R, x)[k]
    m0 = h * V[k]
    m1 = h * np.einsum("kij,kj->ki", se3.dexp_inv(-delta), V[k + 1])
    _, b10, b01, b11 = (c[:, None] for c in hermite_basis(s))
    p = b10 * m0 + b01 * delta + b11 * m1
    g = np.einsum("kij,kjl->kil", se3.make(R[k], x[k]), se3.exp(p))
    out = (g[:, :3, :3], g[:, :3, 3], p)
    if not velocity:
        return out
    _, d10, d01, d11 = (c[:, None] for c in hermite_basis_derivative(s))
    dp = (d10 * m0 + d01 * delta + d11 * m1) / h
    return out + (np.einsum("kij,kj->ki", se3.dexp(-p), dp),)


@dataclass
class Samples:
    """A trajectory at given times: the bake's poses and channels (the trajectory's own units)."""
    time: np.ndarray
    position: np.ndarray                 # (K, 3)
    rotation: np.ndarray                 # (K, 3, 3)
    angular_velocity: np.ndarray         # (K, 3) body frame
    linear_velocity: np.ndarray          # (K, 3) body frame
    heading: np.ndarray                  # (K,) continuous: the trajectory's heading, or the yaw unwrapped
    shape: dict[str, np.ndarray] = field(default_factory=dict)   # one value a time

    @property
    def orientation(self) -> np.ndarray:
        return quaternion.make_continuous(quaternion.from_matrix(self.rotation))


def node_heading(trajectory) -> np.ndarray:
    """The planar heading at each node (continuous): the trajectory's, or the yaw of its orientation."""
    if trajectory.heading is not None and len(trajectory.heading) == len(trajectory.time):
        return np.asarray(trajectory.heading, dtype=float)
    r = quaternion.to_matrix(quaternion.normalize(np.asarray(trajectory.orientation, dtype=float)))
    return np.unwrap(np.arctan2(r[:, 1, 0], r[:, 0, 0]))


_GAUSS = np.polynomial.legendre.leggauss(8)   # nodes and weights on [−1, 1]


def _difference_slopes(t: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Slopes of y at the nodes from its differences: each step's secant is the slope at the step's middle
    to O(h²), interpolated linearly to the node (extrapolated at the ends), as :func:`node_tangents`."""
    h = np.diff(t)
    d = np.diff(y) / h
    if len(t) == 2:
        return np.array([d[0], d[0]])
    out = np.empty(len(t))
    out[1:-1] = (h[1:] * d[:-1] + h[:-1] * d[1:]) / (h[:-1] + h[1:])
    out[0] = ((2 * h[0] + h[1]) * d[0] - h[0] * d[1]) / (h[0] + h[1])
    out[-1] = ((2 * h[-1] + h[-2]) * d[-1] - h[-1] * d[-2]) / (h[-1] + h[-2])
    return out


def _bump(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """q(s) = 30 s²(1 − s)² and q′(s): zero with its slope at both ends, ∫₀¹ q = 1."""
    return 30.0 * s * s * (1.0 - s) ** 2, 60.0 * s * (1.0 - s) * (1.0 - 2.0 * s)


def rolling_curve(t, heading, position, yaw_rate, speed, times):
    """A car's rear axle between nodes (``docs/equations.md``, the rolling curve): it rolls without
    slipping. Heading θ(s) = the cubic Hermite of the node headings and yaw rates (where they agree with
    the headings' differences) + c_k q(s), forward speed v(s) the cubic Hermite of the node speeds (slopes
    from their differences); the position is the no-slip path x_k + ∫ v (cos θ, sin θ) dt (8-point
    Gauss–Legendre) + H₀₁(s) e_k, e_k what that path misses node k+1 by. c_k (Newton) makes the path
    head for node k+1 — its sideways miss zero — so e_k lies along the step and the sideways velocity
    H₀₁′(s) e_k / h is of higher order: a discrete car's chord between nodes follows its mean heading, which
    the cubic heading alone leaves by h²(ω_k − ω_{k+1})/12. Returns (heading (K,), position (K, 3), world
    velocity (K, 3), yaw rate (K,)); the curve passes every node with its heading, yaw rate and speed (C¹),
    and constant speed and yaw rate give the exact circle or line."""
    t = np.asarray(t, dtype=float)
    th, x = np.asarray(heading, dtype=float), np.asarray(position, dtype=float)
    w, v = np.asarray(yaw_rate, dtype=float), np.asarray(speed, dtype=float)
    times = np.asarray(times, dtype=float).reshape(-1)
    if len(t) < 2:
        K = len(times)
        return np.full(K, th[0]), np.repeat(x[:1], K, axis=0), np.zeros((K, 3)), np.zeros(K)
    differences = _difference_slopes(t, th)
    w = np.where(_agree(np.abs(w - differences), np.abs(w), np.abs(differences)), w, differences)
    dv = _difference_slopes(t, v)
    g, gw = _GAUSS

    def curve(k, s, c):
        """θ, θ′ (per unit s) and v on step k at s (same shapes), with the bump c_k."""
        hk = t[k + 1] - t[k]
        b = hermite_basis(s)
        d = hermite_basis_derivative(s)
        q, dq = _bump(s)
        theta = b[0] * th[k] + b[1] * hk * w[k] + b[2] * th[k + 1] + b[3] * hk * w[k + 1] + c * q
        rate = d[0] * th[k] + d[1] * hk * w[k] + d[2] * th[k + 1] + d[3] * hk * w[k + 1] + c * dq
        speed_ = b[0] * v[k] + b[1] * hk * dv[k] + b[2] * v[k + 1] + b[3] * hk * dv[k + 1]
        return theta, rate, speed_

    def path(k, s, c):
        """∫₀ˢ v (cos θ, sin θ) h dσ on step k (k, s, c of the same length)."""
        sigma = 0.5 * s[:, None] * (g[None, :] + 1.0)
        kk = np.broadcast_to(k[:, None], sigma.shape)
        theta, _, speed_ = curve(kk, sigma, c[:, None])
        f = speed_[..., None] * np.stack([np.cos(theta), np.sin(theta)], axis=-1)
        return 0.5 * (s * (t[k + 1] - t[k]))[:, None] * np.einsum("j,kjd->kd", gw, f)

    steps = np.arange(len(t) - 1)
    chord = x[1:, :2] - x[:-1, :2]
    towards = np.arctan2(chord[:, 1], chord[:, 0])
    moving = np.linalg.norm(chord, axis=1) > 1e-9 * (1.0 + np.abs(x[:-1, :2]).max())
    c = np.zeros(len(steps))
    sigma = np.broadcast_to(0.5 * (g + 1.0), (len(steps), len(g)))
    q = _bump(sigma)[0]
    for _ in range(3):   # Newton on the sideways miss ∫ v sin(θ − towards) = 0
        theta, _, speed_ = curve(np.broadcast_to(steps[:, None], sigma.shape), sigma, c[:, None])
        off = theta - towards[:, None]
        miss = (speed_ * np.sin(off)) @ gw
        slope = (speed_ * np.cos(off) * q) @ gw
        ok = moving & (np.abs(slope) > 1e-12 * (1.0 + np.abs(speed_).max(axis=1)))
        c = np.where(ok, c - miss / np.where(ok, slope, 1.0), 0.0)
    miss = chord - path(steps, np.ones(len(steps)), c)                            # e_k
    k, s = intervals(t, times)
    h = t[k + 1] - t[k]
    theta, rate, speed_ = curve(k, s, c[k])
    d2 = hermite_basis_derivative(s)[2]
    pos = np.empty((len(times), 3))
    pos[:, :2] = x[k, :2] + path(k, s, c[k]) + hermite_basis(s)[2][:, None] * miss[k]
    pos[:, 2] = (1.0 - s) * x[k, 2] + s * x[k + 1, 2]
    vel = np.zeros((len(times), 3))
    vel[:, :2] = speed_[:, None] * np.stack([np.cos(theta), np.sin(theta)], axis=1) + (d2 / h)[:, None] * miss[k]
    vel[:, 2] = (x[k + 1, 2] - x[k, 2]) / h
    return theta, pos, vel, rate / h


def rolls(trajectory) -> bool:
    """A car's trajectory of its rear axle (heading given, no sideways velocity at the nodes): it takes
    the rolling curve."""
    if trajectory.vehicle != "car" or trajectory.heading is None or len(trajectory.heading) != len(trajectory.time):
        return False
    v = np.asarray(trajectory.linear_velocity, dtype=float)
    if v.shape != (len(trajectory.time), 3) or not np.all(np.isfinite(v)):
        return False
    return bool(np.all(np.abs(v[:, 1]) <= 1e-9 * (1.0 + np.abs(v[:, 0]))))


def sample(trajectory, times) -> Samples:
    """``trajectory`` (a core Trajectory) at ``times``: poses and velocities on the Lie group Hermite
    curve (a car's rear axle: the rolling curve), the heading continued along it, every shape channel
    with one value a node by the monotone cubic (channels of another length are left out)."""
    t = np.asarray(trajectory.time, dtype=float)
    times = np.asarray(times, dtype=float).reshape(-1)
    k, _ = intervals(t, times)
    heading = node_heading(trajectory)
    shape = {}
    for name, series in trajectory.shape.items():
        a = np.asarray(series, dtype=float)
        if a.ndim >= 1 and len(a) == len(t):
            shape[name] = pchip(t, a, times)
    if rolls(trajectory):
        v = np.asarray(trajectory.linear_velocity, dtype=float)[:, 0]
        w = np.asarray(trajectory.angular_velocity, dtype=float)[:, 2]
        theta, pos, world, rate = rolling_curve(t, heading, trajectory.position, w, v, times)
        c, s_ = np.cos(theta), np.sin(theta)
        rot = np.zeros((len(times), 3, 3))
        rot[:, 0, 0], rot[:, 0, 1], rot[:, 1, 0], rot[:, 1, 1], rot[:, 2, 2] = c, -s_, s_, c, 1.0
        body = np.einsum("kji,kj->ki", rot, world)
        omega = np.zeros((len(times), 3))
        omega[:, 2] = rate
        return Samples(times, pos, rot, omega, body, theta, shape)
    R = quaternion.to_matrix(quaternion.normalize(np.asarray(trajectory.orientation, dtype=float)))
    x = np.asarray(trajectory.position, dtype=float)
    V = node_tangents(t, R, x, _per_node(trajectory.angular_velocity, len(t)),
                      _per_node(trajectory.linear_velocity, len(t)))
    rot, pos, p, vel = se3_hermite(t, R, x, V, times, velocity=True)
    # the yaw turned since node k (less than half a turn: the step's log is), added to node k's heading
    turn = np.remainder(np.arctan2(rot[:, 1, 0], rot[:, 0, 0]) - heading[k] + np.pi, 2 * np.pi) - np.pi
    return Samples(times, pos, rot, vel[:, :3], vel[:, 3:], heading[k] + turn, shape)


def _per_node(a, n: int) -> np.ndarray:
    """(n, 3) velocities, or NaN (then the nodes' differences are used) when malformed."""
    a = np.asarray(a, dtype=float)
    return a if a.shape == (n, 3) else np.full((n, 3), np.nan)


__all__ = ["intervals", "hermite_basis", "hermite_basis_derivative", "cubic_hermite", "pchip_slopes", "pchip",
           "relative_twists", "node_tangents", "se3_hermite", "rolling_curve", "rolls", "Samples", "node_heading",
           "sample", "AGREE"]
