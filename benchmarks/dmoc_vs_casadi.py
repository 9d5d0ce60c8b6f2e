"""DMOC (core.dmoc) against the same NLP written with CasADi and solved by CasADi's IPOPT.

    bash scripts/install_ipopt.sh    # casadi, and cyipopt built on casadi's Ipopt (run by setup.sh)
    nice -n 10 .venv/bin/python benchmarks/dmoc_vs_casadi.py [--quick] [--robustness] [--no-scipy]

Cases: the car tunnel sample (samples/car_tunnel.toml) at N = 50, 100, 200 and the helicopter canyon
sample (samples/helicopter_canyon.toml) at N = 100. For each, the *same* NLP: the scenario is read
and assembled by core.dmoc (variables, fixed start/goal values, bounds, the integrator's update
equations, obstacles with their margins, waypoints, speed limits, goal velocity, cost); the CasADi
model restates every group symbolically over the same free variables, with the same variable,
row and objective scaling (``core.dmoc.solve.scaling``; CasADi solves the scaled program), the same
initial guess (``initial_guess``) and the same IPOPT options (tol 1e-8, constr_viol_tol 1e-9,
adaptive μ, exact Hessian, bound_relax_factor 0). Before solving, the two models are compared at the
initial guess (cost and maximum constraint violation agree to ~1e-12 relative), and CasADi's
solution is evaluated by core.dmoc's NLP (so "cost" and "violation" are measured by one code).

Reported per case: CPU time (process time: other processes on the shared machine do not count) and
wall time, iterations, cost, max violation, our time / CasADi's, and the relative cost difference.
``--robustness``: 20 randomised start/goal pairs per vehicle (car, helicopter, snakeboard) with the
IPOPT backend and the default initial guess; the share that converges.

benchmarks/kkt_peers.py reuses this restatement (``build_casadi_ipopt``, ``solve_casadi_ipopt``, ``ca_car_step``,
``ca_distance``, ``ca_point``) for the peer table with set-up and solve times apart and CasADi+FATROP.
"""
from __future__ import annotations

import argparse
import math
import pathlib
import sys
import time

import numpy as np

from core.dmoc.constraints import assemble
from core.dmoc.initial_guess import initial_guess
from core.dmoc.obstacles import Obstacle
from core.dmoc.scenario import read
from core.dmoc.solve import SolverOptions, ipopt_available, scaling, solve
from core.integrators.common import GRAVITY
from core.scenario import loads

ROOT = pathlib.Path(__file__).resolve().parents[1]

IPOPT_OPTIONS = {"tol": 1e-8, "constr_viol_tol": 1e-9, "mu_strategy": "adaptive", "bound_relax_factor": 0.0,
                 "hessian_approximation": "exact", "max_iter": 3000, "print_level": 0, "sb": "yes"}


def setup_for(sample: str, steps: int | None):
    text = (ROOT / "samples" / sample).read_text()
    if steps is not None:
        import re
        text = re.sub(r"(?m)^steps = \d+", f"steps = {steps}", text)
    setup = read(loads(text), "ipopt")
    nlp = assemble(setup.model, setup.spec)
    z0 = nlp.reduce(initial_guess(setup.model, setup.spec))
    return setup, nlp, z0


# ------------------------------------------------------------------------------------------------
# CasADi restatement of the groups
# ------------------------------------------------------------------------------------------------
def _ca():
    import casadi as ca
    return ca


def ca_hat(w):
    ca = _ca()
    return ca.vertcat(ca.horzcat(0, -w[2], w[1]), ca.horzcat(w[2], 0, -w[0]), ca.horzcat(-w[1], w[0], 0))


def ca_cay(w):
    """SO(3) Cayley: I + 4/(4 + |w|²)(ŵ + ŵ²/2)."""
    ca = _ca()
    W = ca_hat(w)
    return ca.DM.eye(3) + 4 / (4 + ca.sumsqr(w)) * (W + W @ W / 2)


def ca_distance(ob: Obstacle, p):
    ca = _ca()
    if ob.kind == "sphere":
        return ca.norm_2(p - ca.DM(ob.center)) - ob.radius
    if ob.kind == "capsule":
        a, b = ca.DM(ob.a), ca.DM(ob.b)
        ab = b - a
        t = ca.fmin(ca.fmax(ca.dot(p - a, ab) / float(np.dot(ob.b - ob.a, ob.b - ob.a)), 0), 1)
        return ca.norm_2(p - (a + t * ab)) - ob.radius
    q = ca.DM(ob.rotation).T @ (p - ca.DM(ob.center))
    w = ca.fabs(q) - ca.DM(ob.half_extents)
    out = ca.sqrt(ca.sumsqr(ca.fmax(w, 0)) + 1e-300)
    inside = ca.fmax(ca.fmax(w[0], w[1]), w[2])
    return ca.if_else(ca.sumsqr(ca.fmax(w, 0)) > 0, out, inside)


def ca_point(model, yv, k, body):
    ca = _ca()
    if model.se3:
        R = ca.DM(model.Rref[k]) @ ca_cay(yv(model.rho[k]))
        return yv(model.x[k]) + R @ ca.DM(body)
    th = yv(model.state[k, 2]) if model.vehicle == "car" else yv(model.node[k, 0])
    pos = yv(model.pose_idx[k, 1:])
    c, s = ca.cos(th), ca.sin(th)
    return ca.vertcat(pos[0] + c * body[0] - s * body[1], pos[1] + s * body[0] + c * body[1], body[2])


def ca_car_step(car, alpha: float, h, s, u):
    """Φ_h(s, u), the car's explicit update (core.vehicles.car.step; docs/equations.md, "Car") over the node
    state s = (ψ, σ, θ, x, y, p) and the step's controls u = (f^ψ, u^σ): the next node state (6 × 1)."""
    ca = _ca()
    a_, c_, kap, rho, al = car.a, car.c, car.kappa, car.wheel_radius, alpha
    psi, sg, th, px, py, p = (s[i] for i in range(6))
    f, w = u[0], u[1]
    sa = sg + al * h * w
    s1n = sg + h * w
    uu = (p + h * (1 - al) * f) / (a_ + c_ * sg * sa)
    zz = 0.5 * h * kap * sa * uu
    sinc = ca.if_else(ca.fabs(zz) < 1e-4, 1 - zz**2 / 6 + zz**4 / 120, ca.sin(zz) / zz)
    chord = h * rho * uu * sinc
    return ca.vertcat(psi + h * uu, s1n, th + 2 * zz, px + chord * ca.cos(th + zz), py + chord * ca.sin(th + zz),
                      (a_ + c_ * s1n * sa) * uu + h * al * f)


def ca_car_speed(car, sg, p):
    """The node speed v = ρ p / M(σ) (speed bounds, goal speed)."""
    return car.wheel_radius * p / car.reduced_inertia(sg)


def row_max_abs(J) -> np.ndarray:
    """The largest |entry| of each row of a sparse CasADi matrix (without densifying it)."""
    out = np.zeros(J.shape[0])
    np.maximum.at(out, np.asarray(J.sparsity().row(), dtype=int), np.abs(np.asarray(J.nonzeros())))
    return out


def casadi_problem(setup, nlp, z0):
    """(nlp dict, lbg, ubg, lbx, ubx) of the same program in the scaled variables x = z / D."""
    ca = _ca()
    model, spec = setup.model, setup.spec
    D, Sc, sf = scaling(nlp, z0)
    x = ca.SX.sym("x", nlp.n)
    z = x * ca.DM(D)
    full = [None] * nlp.layout.size
    for i in range(nlp.layout.size):
        full[i] = z[int(nlp.freepos[i])] if nlp.freepos[i] >= 0 else ca.DM(nlp.base[i])

    def yv(idx):
        idx = np.atleast_1d(np.asarray(idx)).ravel()
        return ca.vertcat(*[full[int(i)] for i in idx])

    T = full[model.T]
    N = model.N
    h = T / N
    g, lbg, ubg = [], [], []

    def add(expr, lo, hi):
        g.append(expr)
        lbg.extend(np.broadcast_to(lo, (expr.shape[0],)).tolist())
        ubg.extend(np.broadcast_to(hi, (expr.shape[0],)).tolist())

    cost = 0
    if model.vehicle == "car":
        for k in range(N):
            nxt = ca_car_step(model.car, model.alpha, h, yv(model.state[k]), yv(model.controls[k]))
            add(yv(model.state[k + 1]) - nxt, 0.0, 0.0)
        for grp in model.extra_groups:  # speed bound / goal speed: ρ p / M(σ)
            for r, kk in enumerate(grp.idx):
                add(ca_car_speed(model.car, yv(kk[0]), yv(kk[1])), grp.lower[r, 0], grp.upper[r, 0])
    else:
        heli = model.heli
        I6 = ca.DM(model.inertia)
        dt_, dr = heli.main_rotor_offset, heli.tail_rotor_offset

        def R_of(k):
            return ca.DM(model.Rref[k]) @ ca_cay(yv(model.rho[k]))

        def Bcay(a):
            A = ca_hat(a)
            return (4 * ca.DM.eye(3) + 2 * A + a @ a.T) / (4 + ca.sumsqr(a))

        def CT_mu(eta, mu):
            a, c = eta[:3], eta[3:]
            mw, mv = mu[:3], mu[3:]
            q = mv + 0.5 * ca.cross(a, mv)
            return ca.vertcat(mw + 0.5 * ca.cross(a, mw) + 0.25 * a * ca.dot(a, mw) + 0.5 * ca.cross(c, q), q)

        def MM(sign, xi):
            return CT_mu(sign * h * xi, I6 * xi)

        def Bu(u):
            uc, uy, gp, gr = u[0], u[1], u[2], u[3]
            sp_, cp_, sr_, cr_ = ca.sin(gp), ca.cos(gp), ca.sin(gr), ca.cos(gr)
            return ca.vertcat(dt_ * sr_ * uc, dt_ * sp_ * cr_ * uc, dr * uy, sp_ * cr_ * uc, -sr_ * uc - uy, cp_ * cr_ * uc)

        def grav(R):
            return ca.vertcat(0, 0, 0, -GRAVITY * heli.mass * R[2, :].T)

        assert model.method == "vi-cay", "the CasADi restatement covers the vi-cay pairing"
        for k in range(N):
            R0, R1 = R_of(k), R_of(k + 1)
            xi = yv(model.xi[k])
            a, c = h * xi[:3], h * xi[3:]
            Q = ca_cay(a).T @ R0.T @ R1
            add(0.5 * ca.vertcat(Q[2, 1] - Q[1, 2], Q[0, 2] - Q[2, 0], Q[1, 0] - Q[0, 1]), 0.0, 0.0)
            add(yv(model.x[k + 1]) - yv(model.x[k]) - R0 @ (Bcay(a) @ c), 0.0, 0.0)
        u0 = yv(model.u[0])
        add(MM(1, yv(model.xi[0])) - I6 * ca.DM(model.xi_start) - 0.5 * h * (Bu(u0) + grav(R_of(0))), 0.0, 0.0)
        for k in range(1, N):
            add(MM(1, yv(model.xi[k])) - MM(-1, yv(model.xi[k - 1]))
                - 0.5 * h * (Bu(yv(model.u[k - 1])) + Bu(yv(model.u[k]))) - h * grav(R_of(k)), 0.0, 0.0)
        for grp in model.extra_groups:
            if grp.name == "bounds: speed":
                for r in range(N):
                    add(ca.sumsqr(yv(model.xi[r, 3:])), grp.lower[r, 0], grp.upper[r, 0])
            elif grp.name.startswith("heading"):
                node = int(np.flatnonzero(np.all(model.rho == grp.idx[0], axis=1))[0])
                e = R_of(node)[:, 0]
                lo, hi = grp.lower[0], grp.upper[0]
                psi = _heading_of(grp, model)
                add(ca.vertcat(-math.sin(psi) * e[0] + math.cos(psi) * e[1],
                               math.cos(psi) * e[0] + math.sin(psi) * e[1]), lo, hi)
            elif grp.name == "goal: velocity":
                m_N = MM(-1, yv(model.xi[N - 1])) + 0.5 * h * (Bu(yv(model.u[N - 1])) + grav(R_of(N)))
                vals = ca.vertcat(m_N[:3] / I6[:3], R_of(N) @ (m_N[3:] / I6[3:]))
                rows = [0, 1, 2, 3, 4, 5][-grp.m:] if grp.m == 3 else list(range(6))
                add(vals[rows], grp.lower[0], grp.upper[0])
            else:
                raise NotImplementedError(grp.name)
    # waypoints and obstacles (every vehicle)
    from core.dmoc.constraints import waypoint_node
    for wp in spec.waypoints:
        k = waypoint_node(model, wp.time, float(nlp.base[model.T]))
        p = ca_point(model, yv, k, np.zeros(3))
        add(ca.sumsqr(p - ca.DM(wp.position)), -np.inf, wp.radius**2)
    for ob in spec.obstacles:
        for k in range(N + 1):
            for sph in spec.spheres:
                add(ca_distance(ob, ca_point(model, yv, k, sph[:3])) - sph[3], ob.margin, np.inf)
    # cost (effort, the only term of these samples)
    cw = spec.cost
    weights = np.array([cw.input_weights.get(nm, 1.0) for nm in model.inputs]) * cw.effort
    for k in range(N):
        u = yv(model.control_idx[k])
        cost = cost + h * ca.dot(ca.DM(weights), u * u)
    G = ca.vertcat(*g)
    # the same row scaling as core.dmoc: scale each CasADi row by the row scale of the matching
    # core.dmoc row, identified by evaluating both at the initial guess (equal values, same order
    # inside a group) — simpler and exact here: scale by 1/max|∂g/∂x| of CasADi's own Jacobian at x0
    x0 = z0 / D
    rown = row_max_abs(ca.Function("J", [x], [ca.jacobian(G, x)])(x0))
    Srow = np.clip(np.where(rown > 0, 1.0 / np.maximum(rown, 1e-300), 1.0), 1e-6, 1e6)
    prob = {"x": x, "f": sf * cost, "g": ca.DM(Srow) * G}
    return (prob, Srow * np.array(lbg), Srow * np.array(ubg), nlp.lb / D, nlp.ub / D, x0, D,
            ca.Function("fg", [x], [cost, G]), np.array(lbg), np.array(ubg))


def _heading_of(grp, model) -> float:
    """The heading ψ a heading group imposes: at ρ = 0 about R̄ = I its rows are (−sin ψ, cos ψ)."""
    r = grp.fun(np.zeros((1, 3)), np.eye(3)[None])[0]
    return math.atan2(-r[0], r[1])


def build_casadi_ipopt(setup, nlp, z0, ipopt_options: dict | None = None) -> dict:
    """The symbolic model (:func:`casadi_problem`) and its ``nlpsol("ipopt")``; ``build_s`` is the wall time of
    both. ``ipopt_options`` override :data:`IPOPT_OPTIONS` (e.g. max_iter, max_wall_time)."""
    ca = _ca()
    t_build = time.perf_counter()
    prob, lbg, ubg, lbx, ubx, x0, D, fg, lbg_u, ubg_u = casadi_problem(setup, nlp, z0)
    t_model = time.perf_counter() - t_build
    opts = {"ipopt": {**IPOPT_OPTIONS, "nlp_scaling_method": "none", **(ipopt_options or {})}, "print_time": False}
    solver = ca.nlpsol("s", "ipopt", prob, opts)
    return {"solver": solver, "args": {"x0": x0, "lbx": lbx, "ubx": ubx, "lbg": lbg, "ubg": ubg}, "D": D, "fg": fg,
            "lbg_u": lbg_u, "ubg_u": ubg_u, "build_s": time.perf_counter() - t_build, "model_s": t_model}


def check_at_guess(built: dict, nlp, z0) -> tuple[float, float, float, float]:
    """(CasADi's cost, ours, CasADi's max violation, ours) at the initial guess: the same NLP."""
    f0, g0 = (np.asarray(v.full()).ravel() for v in built["fg"](built["args"]["x0"]))
    viol_ca = float(np.max(np.maximum(np.maximum(built["lbg_u"] - g0, g0 - built["ubg_u"]), 0.0), initial=0.0))
    return float(f0[0]), nlp.objective(z0), viol_ca, float(np.max(nlp.violations(z0), initial=0.0))


def solve_casadi_ipopt(built: dict, nlp) -> dict:
    """Solve a :func:`build_casadi_ipopt` model; its solution measured by our NLP (cost, max violation)."""
    solver = built["solver"]
    c0, w0 = time.process_time(), time.perf_counter()
    sol = solver(**built["args"])
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    st = solver.stats()
    z = built["D"] * np.asarray(sol["x"].full()).ravel()
    return {"cpu": cpu, "wall": wall, "iterations": int(st["iter_count"]), "status": st["return_status"],
            "success": bool(st["success"]), "cost": nlp.objective(z), "violation": nlp.max_violation(z), "z": z}


def run_casadi(setup, nlp, z0):
    built = build_casadi_ipopt(setup, nlp, z0)
    out = solve_casadi_ipopt(built, nlp)
    out.update(build_s=built["build_s"], check=check_at_guess(built, nlp, z0))
    return out


def run_ours(nlp, z0, backend: str, time_limit: float = 600.0):
    o = SolverOptions(backend=backend, time_limit_s=time_limit, max_iter=3000)
    c0 = time.process_time()
    r = solve(nlp, z0, o)
    cpu = time.process_time() - c0
    return {"cpu": cpu, "wall": r.wall_time_s, "iterations": r.iterations, "status": r.status, "cost": r.cost,
            "violation": r.max_constraint_violation}


def benchmark(quick: bool, with_scipy: bool) -> list[dict]:
    cases = [("car_tunnel.toml", n) for n in ((50, 100) if quick else (50, 100, 200))]
    cases.append(("helicopter_canyon.toml", 100))
    rows = []
    for sample, n in cases:
        setup, nlp, z0 = setup_for(sample, n)
        ours = run_ours(nlp, z0, "ipopt")
        cas = run_casadi(setup, nlp, z0)
        row = {"case": f"{sample.split('.')[0]} N={n}", "n": nlp.n, "m": nlp.m, "ours": ours, "casadi": cas}
        if with_scipy:
            row["scipy"] = run_ours(nlp, z0, "scipy", 300.0)
        rows.append(row)
        f_ca, f_us, v_ca, v_us = cas["check"]
        print(f"{row['case']:28s} n={nlp.n:5d} m={nlp.m:5d} | same NLP at the guess: cost {f_ca:.10g} vs {f_us:.10g}, "
              f"violation {v_ca:.6g} vs {v_us:.6g}", flush=True)
        for name in ("ours", "casadi", "scipy"):
            if name in row:
                r = row[name]
                print(f"    {name:7s} {r['status']:>22s} it {r['iterations']:5d} cpu {r['cpu']:7.2f} s wall "
                      f"{r['wall']:7.2f} s cost {r['cost']:.8g} viol {r['violation']:.1e}", flush=True)
        ratio = ours["cpu"] / max(cas["cpu"], 1e-9)
        dcost = (ours["cost"] - cas["cost"]) / max(abs(cas["cost"]), 1e-12)
        line = f"    ipopt backend / CasADi cpu time {ratio:.2f}×, cost difference {100 * dcost:+.4f} %"
        if "scipy" in row:
            ds = (row["scipy"]["cost"] - cas["cost"]) / max(abs(cas["cost"]), 1e-12)
            line += (f"; scipy backend / CasADi {row['scipy']['cpu'] / max(cas['cpu'], 1e-9):.2f}× cpu, "
                     f"cost difference {100 * ds:+.4f} %")
        print(line, flush=True)
    return rows


# ------------------------------------------------------------------------------------------------
# robustness: randomised start/goal pairs
# ------------------------------------------------------------------------------------------------
CAR_R = """[vehicle]
type = "car"
preset = "hatchback"
collision_spheres = [[0.0, 0.0, 0.5, 1.0], [2.5, 0.0, 0.5, 1.0]]
[integrator]
steps = 60
[time]
duration = 12.0
[start]
position = [0.0, 0.0]
heading = {h0}
speed = {v0}
[goal]
position = [{gx}, {gy}]
heading = {h1}
speed = {v1}
[[obstacles]]
type = "sphere"
center = [{ox}, {oy}, 0.0]
radius = 2.0
margin = 0.2
[bounds]
steering_angle = [-0.55, 0.55]
[cost]
effort = 1.0
[cost.input_weights]
torque = 1e-6
"""

HELI_R = """[vehicle]
type = "helicopter"
collision_radius = 3.0
[integrator]
method = "vi-cay"
steps = 50
[time]
duration = 15.0
[start]
position = [0.0, 0.0, {z0}]
velocity = [{v0}, 0.0, 0.0]
[goal]
position = [{gx}, {gy}, {gz}]
heading = {h1}
velocity = [0.0, 0.0, 0.0]
angular_velocity = [0.0, 0.0, 0.0]
[[obstacles]]
type = "sphere"
center = [{ox}, {oy}, {oz}]
radius = 5.0
margin = 0.5
[cost]
effort = 1.0
[cost.input_weights]
collective = 1e-6
yaw = 1e-4
pitch_tilt = 50.0
roll_tilt = 50.0
"""

SNAKE_R = """[vehicle]
type = "snakeboard"
[integrator]
steps = 60
[time]
duration = 8.0
[start]
heading = {h0}
[goal]
position = [{gx}, {gy}]
speed = {v1}
[bounds]
wheel_angle = [-0.8, 0.8]
[cost]
effort = 1.0
"""


def robustness(backend: str = "ipopt", pairs: int = 20) -> dict[str, tuple[int, int, float]]:
    from core.dmoc import solve_scenario

    rng = np.random.default_rng(2026)
    out = {}
    for name, make in (
        ("car", lambda: CAR_R.format(h0=rng.uniform(-0.5, 0.5), v0=rng.uniform(0, 6),
                                     gx=rng.uniform(30, 50), gy=rng.uniform(-10, 10), h1=rng.uniform(-0.5, 0.5),
                                     v1=rng.uniform(0, 6), ox=rng.uniform(12, 20), oy=rng.uniform(-4, 4))),
        ("helicopter", lambda: HELI_R.format(z0=rng.uniform(10, 30), v0=rng.uniform(0, 8), gx=rng.uniform(40, 80),
                                             gy=rng.uniform(-20, 20), gz=rng.uniform(5, 30), h1=rng.uniform(-1, 1),
                                             ox=rng.uniform(15, 30), oy=rng.uniform(-5, 5), oz=rng.uniform(10, 25))),
        ("snakeboard", lambda: SNAKE_R.format(h0=rng.uniform(-0.5, 0.5), gx=rng.uniform(1.5, 3.5),
                                              gy=rng.uniform(-0.5, 0.5), v1=rng.uniform(0.5, 1.2))),
    ):
        ok, times = 0, []
        for _ in range(pairs):
            text = make() + f'[solver]\nbackend = "{backend}"\ntime_limit_s = 120\n'
            t0 = time.perf_counter()
            _, r, _ = solve_scenario(loads(text))
            times.append(time.perf_counter() - t0)
            ok += int(r.converged)
        out[name] = (ok, pairs, float(np.median(times)))
        print(f"robustness {name:11s} {backend}: {ok}/{pairs} converged, median {np.median(times):.2f} s", flush=True)
    return out


def ipopt_builds() -> str:
    """Which Ipopt each side runs: the ratios depend on the build as much as on our code."""
    import casadi
    import cyipopt
    libs = set()
    try:
        with open("/proc/self/maps") as maps:  # Linux: the shared libraries actually loaded
            libs = {line.split()[-1] for line in maps if "libipopt" in line}
    except OSError:
        pass
    ours = "Ipopt %d.%d.%d" % tuple(cyipopt.IPOPT_VERSION)
    return (f"ours: cyipopt {cyipopt.__version__} on {ours}; CasADi {casadi.__version__} with its bundled Ipopt; "
            f"libipopt loaded: {', '.join(sorted(libs)) or 'unknown'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="car N = 50, 100 only (plus the canyon)")
    ap.add_argument("--robustness", action="store_true", help="also 20 random start/goal pairs per vehicle")
    ap.add_argument("--no-scipy", action="store_true", help="skip the scipy backend runs")
    ap.add_argument("--robustness-only", action="store_true")
    args = ap.parse_args()
    if not ipopt_available():
        sys.exit("needs cyipopt (scripts/install_ipopt.sh)")
    try:
        import casadi  # noqa: F401
    except ImportError:
        sys.exit("needs casadi: bash scripts/install_ipopt.sh (requirements-ipopt.txt)")
    print(ipopt_builds(), flush=True)
    if not args.robustness_only:
        benchmark(args.quick, not args.no_scipy)
    if args.robustness or args.robustness_only:
        robustness("ipopt")
        if not args.no_scipy:
            robustness("scipy")


if __name__ == "__main__":
    main()
