"""The mechanisms of Johnson & Murphey 2009, §V–VI (and the ones used to test the integrator), as systems.

Every builder returns a :class:`Model`: the system and a consistent initial configuration
(q projected onto the constraints). All mechanisms move in the world x–z plane with gravity
along −z; links hang along their frame's −z axis, so a link rotated by ``ry`` φ points along
(−sin φ, 0, −cos φ).

- :func:`pendulum_chain` — §VI-A: N links, a mass with rotational inertia at the bottom of
  each, all aligned and the top link rotated by 45°.
- :func:`double_pendulum` — two point masses (the convergence test's system).
- :func:`four_bar` — a crank–rocker four-bar linkage (one closed chain, one degree of freedom).
- :func:`fig6_device` — the closed-chain device of §V-B, Listing 1 / Fig. 6 (seven bodies,
  two closed chains, three degrees of freedom).
- :func:`scissor_lift` — §VI-C: N scissor segments hanging from a fixed pin (upper left)
  and a slider (upper right), one degree of freedom; :func:`scissor_reference` is its
  one-degree-of-freedom Lagrangian, derived independently of the tree.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .constraints import PointToPoint
from .frames import Frame, Tree
from .system import Body, Spring, System
from .variational import initial_state

XZ = ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0))   # in-plane directions of a planar pin


@dataclass
class Model:
    system: System
    q0: np.ndarray
    dq0: np.ndarray
    info: dict = field(default_factory=dict)


def _model(frames: list[Frame], bodies: list[Body], q_guess: dict[str, float], constraints=(), springs=(),
           gravity=(0.0, 0.0, -9.81), dq: dict[str, float] | None = None, backend: str = "closed",
           info: dict | None = None) -> Model:
    tree = Tree(frames)
    system = System(tree, bodies, gravity=gravity, constraints=constraints, springs=springs, backend=backend)
    q = np.array([q_guess.get(v, 0.0) for v in tree.variables])
    dq0 = np.array([(dq or {}).get(v, 0.0) for v in tree.variables])
    q, _, _ = initial_state(system, q, dq0)
    return Model(system, q, dq0, dict(info or {}))


def pendulum_chain(links: int, length: float = 1.0, mass: float = 1.0, inertia: float = 0.1,
                   backend: str = "closed") -> Model:
    """§VI-A: ``links`` links; variables θ1..θN (relative angles), θ1(0) = 45°."""
    frames, bodies, parent = [], [], "world"
    for i in range(1, links + 1):
        frames += [Frame(f"joint{i}", parent, "ry", variable=f"theta{i}"),
                   Frame(f"mass{i}", f"joint{i}", "tz", value=-length)]
        bodies.append(Body(f"mass{i}", mass, (inertia, inertia, inertia)))
        parent = f"mass{i}"
    return _model(frames, bodies, {"theta1": np.pi / 4}, backend=backend)


def double_pendulum(l1: float = 1.0, l2: float = 0.8, m1: float = 1.0, m2: float = 0.7,
                    q0: tuple[float, float] = (1.0, -0.5), dq0: tuple[float, float] = (0.3, 0.2)) -> Model:
    """Point masses m1, m2 on massless rods; variables a (top, from the vertical), b (relative)."""
    frames = [Frame("j1", "world", "ry", variable="a"), Frame("m1", "j1", "tz", value=-l1),
              Frame("j2", "m1", "ry", variable="b"), Frame("m2", "j2", "tz", value=-l2)]
    return _model(frames, [Body("m1", m1), Body("m2", m2)], {"a": q0[0], "b": q0[1]},
                  dq={"a": dq0[0], "b": dq0[1]}, info=dict(l1=l1, l2=l2, m1=m1, m2=m2))


def _link(name: str, parent: str, variable: str, length: float, mass: float, inertia: float,
          value: float | None = None) -> tuple[list[Frame], Body]:
    """A rod along −z of its joint frame: joint (ry), centre (mass), end."""
    joint = (Frame(name, parent, "ry", variable=variable) if value is None
             else Frame(name, parent, "ry", value=value))
    return ([joint, Frame(f"{name}.c", name, "tz", value=-length / 2), Frame(f"{name}.e", name, "tz", value=-length)],
            Body(f"{name}.c", mass, (inertia, inertia, 0.0)))


def four_bar(ground: float = 1.0, crank: float = 0.6, coupler: float = 1.2, rocker: float = 1.0,
             mass_per_length: float = 1.0, crank_angle: float = 0.3) -> Model:
    """Crank (from the origin), coupler, rocker (from (ground, 0, 0)); pinned at the coupler's end."""
    frames, bodies = [], []
    for name, parent, var, L in (("crank", "world", "q1", crank), ("coupler", "crank.e", "q2", coupler),
                                 ("rocker", "rocker_base", "q3", rocker)):
        if name == "rocker":
            frames.append(Frame("rocker_base", "world", "fixed", position=(ground, 0.0, 0.0)))
        f, b = _link(name, parent, var, L, mass_per_length * L, mass_per_length * L**3 / 12)
        frames += f
        bodies.append(b)
    # guess: crank at crank_angle, rocker hanging, coupler pointing from the crank's end to the rocker's
    E = np.array([-crank * np.sin(crank_angle), -crank * np.cos(crank_angle)])
    F = np.array([ground, -rocker])
    u = F - E
    phi2 = np.arctan2(-u[0], -u[1])
    guess = {"q1": crank_angle, "q2": phi2 - crank_angle, "q3": 0.0}
    return _model(frames, bodies, guess, constraints=[PointToPoint("coupler.e", "rocker.e", XZ)])


def fig6_device(backend: str = "closed") -> Model:
    """The device of Listing 1 (§V-B): point masses of 1 kg, pins G–G2 and O–O2 in x and z."""
    F = Frame
    frames = [
        F("J", "world", "ry", variable="J"), F("I", "J", "tz", value=-0.5), F("J.e", "J", "tz", value=-1.0),
        F("H", "J.e", "ry", variable="H"), F("G", "H", "tz", value=-1.0), F("O2", "H", "tz", value=-2.0),
        F("K.base", "world", "tx", value=-1.5), F("K", "K.base", "ry", variable="K"),
        F("L", "K", "tz", value=-1.0), F("K.e", "K", "tz", value=-2.0),
        F("M", "K.e", "ry", variable="M"), F("N", "M", "tz", value=-0.5), F("O", "M", "tz", value=-1.0),
        F("A.base", "world", "tx", value=1.5), F("A", "A.base", "ry", variable="A"),
        F("B", "A", "tz", value=-1.0), F("A.e", "A", "tz", value=-2.0),
        F("C", "A.e", "ry", variable="C"), F("D", "C", "tz", value=-0.375), F("C.e", "C", "tz", value=-0.75),
        F("E", "C.e", "ry", variable="E"), F("F", "E", "tz", value=-0.5), F("G2", "E", "tz", value=-1.0),
    ]
    bodies = [Body(n, 1.0) for n in ("I", "G", "L", "N", "B", "D", "F")]
    constraints = [PointToPoint("G", "G2", XZ), PointToPoint("O", "O2", XZ)]
    # an assembled configuration found from this guess (see fig6_positions)
    guess = {"J": -0.4, "H": 0.6, "K": 0.1, "M": -0.8, "A": 0.1, "C": 0.9, "E": 0.5}
    return _model(frames, bodies, guess, constraints=constraints, backend=backend)


def scissor_lift(segments: int = 5, length: float = 1.0, link_mass: float = 1.0, link_inertia: float | None = None,
                 slider_mass: float = 1.0, theta0: float = np.pi / 4, gravity: float = 9.81,
                 spring: tuple[float, float] | None = None, backend: str = "closed") -> Model:
    """§VI-C: ``segments`` X-shaped segments of two links each (length L, mass m_L at the centre,
    inertia I = m_L L²/12 by default), hanging from a pin at the origin (chain A) and from a
    slider of mass m_S moving along x at z = 0 (chain B); the links of segment n cross at their
    centres (pin: two point constraints). θ is the links' angle below the horizontal:
    θ = π/2 + a1. ``spring = (k, x0)`` adds a spring between the pin and the slider.
    2N + 1 variables, 2N constraint rows, one degree of freedom."""
    I = link_mass * length**2 / 12 if link_inertia is None else link_inertia
    frames, bodies, guess = [], [], {}
    frames.append(Frame("slider", "world", "tx", variable="s"))
    bodies.append(Body("slider", slider_mass))
    guess["s"] = length * np.cos(theta0)
    tilt = np.pi / 2 - theta0
    for chain, parent in (("A", "world"), ("B", "slider")):
        for n in range(1, segments + 1):
            f, b = _link(f"{chain}{n}", parent, f"{chain.lower()}{n}", length, link_mass, I)
            frames += f
            bodies.append(b)
            parent = f"{chain}{n}.e"
            sign = -1.0 if chain == "A" else 1.0
            guess[f"{chain.lower()}{n}"] = sign * tilt if n == 1 else -sign * (-1) ** n * (np.pi - 2 * theta0)
    constraints = [PointToPoint(f"A{n}.c", f"B{n}.c", XZ) for n in range(1, segments + 1)]
    springs = [] if spring is None else [Spring("world", "slider", spring[0], spring[1])]
    info = dict(segments=segments, length=length, link_mass=link_mass, link_inertia=I, slider_mass=slider_mass,
                gravity=gravity, spring=spring, theta0=theta0)
    return _model(frames, bodies, guess, constraints=constraints, springs=springs,
                  gravity=(0.0, 0.0, -gravity), backend=backend, info=info)


def scissor_theta(model: Model, q: np.ndarray) -> np.ndarray:
    """θ (angle of the links below the horizontal) from the configuration: π/2 + a1."""
    return np.pi / 2 + np.asarray(q)[..., model.system.tree.var_index["a1"]]


def scissor_reference(info: dict):
    """The one-degree-of-freedom scissor lift: returns (M(θ), M'(θ), V(θ), V'(θ)) functions.

    With the centres of segment n's links at x = (L/2) cos θ, z = −(n − ½) L sin θ and the
    slider at x = L cos θ:

        T = ½ M(θ) θ̇²,  M(θ) = Σ_n 2 [m_L L² ((n − ½)² cos²θ + ¼ sin²θ) + I] + m_S L² sin²θ
        V(θ) = −Σ_n 2 m_L g (n − ½) L sin θ  (+ ½ k (L cos θ − x₀)² with the spring)

    (the form of Johnson & Murphey's §VI-C Lagrangian, its coefficients derived from the geometry
    above: I per link, ¼ sin²θ)."""
    N, L, m, I, mS, g = (info[k] for k in ("segments", "length", "link_mass", "link_inertia", "slider_mass", "gravity"))
    n = np.arange(1, N + 1)
    a = 2 * m * L**2 * np.sum((n - 0.5) ** 2)     # coefficient of cos²θ
    b = 2 * m * L**2 * N * 0.25                  # coefficient of sin²θ (links)
    c = 2 * N * I
    G = 2 * m * g * L * np.sum(n - 0.5)
    k, x0 = info["spring"] if info.get("spring") else (0.0, 0.0)

    def M(th):
        return a * np.cos(th) ** 2 + (b + mS * L**2) * np.sin(th) ** 2 + c

    def dM(th):
        return 2 * (b + mS * L**2 - a) * np.sin(th) * np.cos(th)

    def V(th):
        return -G * np.sin(th) + 0.5 * k * (L * np.cos(th) - x0) ** 2

    def dV(th):
        return -G * np.cos(th) - k * (L * np.cos(th) - x0) * L * np.sin(th)

    return M, dM, V, dV
