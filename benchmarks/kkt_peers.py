"""Peer benchmark (issue 24): our two DMOC backends against CasADi+IPOPT and CasADi+FATROP on the same NLP.

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/kkt_peers.py \\
        [--quick] [--cases car,car3,heli] [--N 60,100,200,400,800] [--repeat 3] [--time-limit 30] [--kkt-check]

Needs casadi (with its Ipopt and the FATROP plugin) and cyipopt: ``bash scripts/install_ipopt.sh``. The default
run (repeat 1) takes about 5–6 minutes on the 2-core machine, ``--quick`` about one; most of it is CasADi's
set-up and the helicopter's capped CasADi run.

Cases (duration fixed as in each sample; ``--N`` replaces the car steps, the helicopter keeps 100 and 360):

* ``car``  — samples/car_tunnel.toml at N = 60, 100, 200, 400, 800 steps (``--quick``: 60, 100).
* ``car3`` — "the three-obstacle car": the same scenario text with its two ``type = "box"`` obstacles (the walls
  that form the tunnel) removed, so the boulder (sphere) and the two posts (capsules) remain; start, goal,
  duration, bounds, cost and collision spheres unchanged (:func:`three_obstacle_car`).
* ``heli`` — samples/helicopter_canyon.toml at N = 100 and 360 (``--quick``: 100); ours and CasADi+IPOPT only.

Not run: the snakeboard and boat samples — benchmarks/dmoc_vs_casadi.py has no CasADi restatement of them — and
FATROP on the helicopter (its restatement is not stage-wise; no new vehicle restatement is written here).

Solvers, all from the same initial guess (``core.dmoc.initial_guess``) on the same NLP:

* ``scipy``    — our backend ``backend="scipy"`` (core/dmoc/ipm/) through ``core.dmoc.solve.solve``.
* ``ipopt``    — our backend ``backend="ipopt"`` (cyipopt on CasADi's libipopt), likewise.
* ``ca-ipopt`` — CasADi+IPOPT on the symbolic restatement of benchmarks/dmoc_vs_casadi.py (same free variables,
  same variable/row/objective scaling, same IPOPT options), capped by ``--time-limit`` (IPOPT's max_wall_time).
* ``fatrop``   — CasADi+FATROP (the cars) on a stage-wise form of the same program (:func:`fatrop_car_problem`):
  stage vector v = (s_0, u_0, s_1, u_1, …, s_N), state s_k = (ψ, σ = tan φ, θ, x, y, p) (wheel angle, tangent of
  the steering angle, heading, rear-axle position, wheel momentum), controls u_k = (torque, steering rate). Our
  car model already carries the discrete wheel momentum p as a node state (core/dmoc/models/car.py; docs/
  equations.md, "Car"), so its update s_{k+1} = Φ_h(s_k, u_k) is one-step and needs no extra state: each step
  gives six gap-closing rows x_{k+1} − Φ(D x_k, D u_k)/D_s = 0 (x = s/D, our variable scales), every other row
  (clearances of each obstacle and collision sphere, speed bounds, goal speed, waypoints) is a path row of the
  stage of its node, unscaled (FATROP relaxes inequality bounds by about 1e-8 of the row, and scaled rows would
  turn that into ~1e-6 of our clearance rows). Our NLP eliminates the fixed start s_0 and goal pose; here they
  are simple bounds lbx = ubx. ``nlpsol("fatrop", structure_detection="auto", equality=…)`` finds the stages;
  options tol 1e-8, constr_viol_tol 1e-9, bound_push 0.3 (FATROP's default fails from an at-rest guess at
  N ≥ 200), max_iter 1000 (FATROP has no time limit). Before solving, the stage model is compared with our NLP
  at the guess; its optimum is mapped back to our variables (:func:`free_from_stages`) and measured by our NLP.

Figures, per run (``--repeat`` runs, each rebuilt from the scenario text; the medians of set-up and solve):

* ``setup`` — ours: ``read(loads(text))`` + ``assemble`` + ``initial_guess`` + ``nlp.reduce`` (the presolve and
  scaling ``solve`` does before its first iteration are inside ``solve``). CasADi: building the symbolic model
  (its scaling taken from ours) + the ``nlpsol`` construction (column ``nlpsol``; FATROP's structure detection is
  part of it). CasADi's set-up starts from our assembled NLP and guess, so reading the scenario is not in it; its
  model part is Python building scalar expressions and would be faster written with mapped Functions.
* ``solve`` — wall time of ``solve(nlp, z0, options)``, or of the call of the nlpsol Function.
* ``whole`` — setup + solve.
* ``it``, ``cost``, ``viol`` — iterations; cost and max violation (rows and bounds) measured by OUR NLP.
* ``status`` — ``ok``, or ``did not converge:`` and the solver's status (iteration or time limit, failure).
* Ratios ours/CasADi+IPOPT and ours/FATROP for the whole time and the solve time, per backend of ours (< 1: ours
  faster). ``*``: a side did not converge; ``~``: the two reached different local optima (the costs differ by more
  than 1e-6 relative), so the times are for different answers.
* Checks per case: CasADi's and the stage model's cost and max violation at the guess against ours ("same NLP" at
  1e-9 relative), FATROP's detected stage structure, and which solvers reached the scipy backend's optimum;
  ``--kkt-check`` also warm-starts our ipopt backend at each converged optimum that differs and says whether it
  stays there (a local optimum of our NLP as well) or moves on (and to which cost).
* ``time linear in N?`` — per case and solver, the log-log slope against N of the whole time (1 = linear) and of
  the solve time per iteration (the iteration counts grow with N on these nonconvex programs).

``OPENBLAS_NUM_THREADS=1`` keeps every solver single-threaded; the machine is shared, so use ``--repeat 3``
for figures to quote.
"""
from __future__ import annotations

import argparse
import pathlib
import re
import statistics
import sys
import time

import numpy as np

from dmoc_vs_casadi import (IPOPT_OPTIONS, build_casadi_ipopt, ca_car_speed, ca_car_step,
                            ca_distance, ca_point, check_at_guess, ipopt_builds, row_max_abs,
                            solve_casadi_ipopt)

from core.dmoc.constraints import assemble, waypoint_node
from core.dmoc.initial_guess import initial_guess
from core.dmoc.scenario import read
from core.dmoc.solve import SolverOptions, ipopt_available, scaling, solve
from core.scenario import loads

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent

CASES = {"car": ("car_tunnel.toml", "car tunnel"), "car3": ("car_tunnel.toml", "three-obstacle car"),
         "heli": ("helicopter_canyon.toml", "helicopter canyon")}
DEFAULT_N = {"car": (60, 100, 200, 400, 800), "car3": (60, 100, 200, 400, 800), "heli": (100, 360)}
QUICK_N = {"car": (60, 100), "car3": (60, 100), "heli": (100,)}
SOLVERS = ("scipy", "ipopt", "ca-ipopt", "fatrop")
FATROP_OPTIONS = {"tol": 1e-8, "constr_viol_tol": 1e-9, "bound_push": 0.3, "max_iter": 1000, "print_level": 0}
AGREE = 1e-9    # relative agreement of the models at the guess


# ------------------------------------------------------------------------------------------------
# scenarios
# ------------------------------------------------------------------------------------------------
def three_obstacle_car(text: str) -> str:
    """The car tunnel without its walls: every ``[[obstacles]]`` table of ``type = "box"`` removed."""
    head, *tables = re.split(r"(?m)^(?=\[\[obstacles\]\])", text)
    out = [head]
    for t in tables:
        # a table runs to the next header; the last one may carry the following tables
        m = re.search(r"(?m)^\[(?!\[obstacles\]\])", t)
        body, rest = (t[:m.start()], t[m.start():]) if m else (t, "")
        if not re.search(r'(?m)^type\s*=\s*"box"', body):
            out.append(body)
        out.append(rest)
    return "".join(out)


def scenario_text(case: str, steps: int) -> str:
    text = (ROOT / "samples" / CASES[case][0]).read_text()
    if case == "car3":
        text = three_obstacle_car(text)
    return re.sub(r"(?m)^steps = \d+", f"steps = {steps}", text)


def setup_ours(text: str, backend: str):
    """(setup, nlp, z0, seconds): read + assemble + initial guess + reduce, timed."""
    t0 = time.perf_counter()
    setup = read(loads(text), backend)
    nlp = assemble(setup.model, setup.spec)
    z0 = nlp.reduce(initial_guess(setup.model, setup.spec))
    return setup, nlp, z0, time.perf_counter() - t0


# ------------------------------------------------------------------------------------------------
# the stage-wise car for FATROP
# ------------------------------------------------------------------------------------------------
def stage_index(model) -> np.ndarray:
    """Layout index of each entry of the stage vector v = (s_0, u_0, s_1, u_1, …, s_N)."""
    parts = []
    for k in range(model.N):
        parts += [model.state[k], model.controls[k]]
    parts.append(model.state[model.N])
    return np.concatenate(parts)


def stages_from_free(nlp, model, z: np.ndarray) -> np.ndarray:
    return nlp.full(z)[stage_index(model)]


def free_from_stages(nlp, model, v: np.ndarray) -> np.ndarray:
    """Our free variables from a stage vector (its copies of the fixed values are dropped)."""
    y = nlp.base.copy()
    y[stage_index(model)] = v
    return nlp.reduce(y)


def _column_scales(nlp, D: np.ndarray, block: np.ndarray) -> np.ndarray:
    """Our variable scale of each column of a (nodes, columns) layout block (``scaling`` gives one per column)."""
    out = np.ones(block.shape[1])
    for j in range(block.shape[1]):
        pos = nlp.freepos[block[:, j]]
        if np.any(pos >= 0):
            out[j] = D[pos[pos >= 0][0]]
    return out


def _node_functions(setup, nlp):
    """CasADi Functions of one node's state s (6) and step controls u (2): the update Φ_h(s, u), the
    speed ρp/M(σ), and the obstacle clearances of every (obstacle, sphere) pair at the node (the rows of
    core.dmoc's clearance groups, in the order of benchmarks/dmoc_vs_casadi.py)."""
    import casadi as ca

    model, spec = setup.model, setup.spec
    s, u = ca.SX.sym("s", 6), ca.SX.sym("u", 2)
    h = float(nlp.base[model.T]) / model.N
    at = {int(i): s[j] for j, i in enumerate(model.state[0])}      # node 0's layout indices stand for s

    def yv(idx):
        return ca.vertcat(*[at[int(i)] for i in np.atleast_1d(np.asarray(idx)).ravel()])

    clear = [ca_distance(ob, ca_point(model, yv, 0, sph[:3])) - sph[3] for ob in spec.obstacles for sph in spec.spheres]
    margins = [ob.margin for ob in spec.obstacles for _ in spec.spheres]
    return (ca.Function("step", [s, u], [ca_car_step(model.car, model.alpha, h, s, u)]),
            ca.Function("speed", [s], [ca_car_speed(model.car, s[1], s[5])]),
            ca.Function("clearance", [s], [ca.vertcat(*clear)]), np.array(margins))


def _path_rows(setup, S: list, speed, clearance, margins: np.ndarray, T: float) -> list[list[tuple]]:
    """Per node k, its path rows (expression of the node state S[k], lower, upper): speed bound and goal speed,
    waypoints, clearances."""
    import casadi as ca

    model, spec = setup.model, setup.spec
    N = model.N
    path: list[list[tuple]] = [[] for _ in range(N + 1)]
    node_of = {int(model.state[k, 1]): k for k in range(N + 1)}     # σ_k's layout index → k
    for grp in model.extra_groups:
        if grp.name not in ("bounds: speed", "goal: speed"):
            raise NotImplementedError(grp.name)
        for r, kk in enumerate(grp.idx):
            k = node_of[int(kk[0])]
            path[k].append((speed(S[k]), grp.lower[r, 0], grp.upper[r, 0]))
    for wp in spec.waypoints:
        if wp.exact:
            raise NotImplementedError("an exact waypoint (a chord between two nodes) is not a path row of one stage")
        k = waypoint_node(model, wp.time, T)
        at = {int(i): S[k][j] for j, i in enumerate(model.state[k])}
        p = ca_point(model, lambda idx: ca.vertcat(*[at[int(i)] for i in np.atleast_1d(idx).ravel()]), k, np.zeros(3))
        path[k].append((ca.sumsqr(p - ca.DM(wp.position)), -np.inf, wp.radius**2))
    if len(margins):
        for k in range(N + 1):
            path[k].append((clearance(S[k]), margins, np.full(len(margins), np.inf)))
    return path


def fatrop_car_problem(setup, nlp, z0, scale_rows: bool = False) -> dict:
    """The car program stage by stage (module docstring) in the scaled variables v / Dv (our variable scales),
    rows in the order dyn_0, path_0, dyn_1, path_1, …, dyn_{N−1}, path_{N−1}, path_N that FATROP's structure
    detection needs. Gap rows x_{k+1} − Φ(s_k, u_k)/Ds (unit coefficient of x_{k+1}, as FATROP requires); path
    rows unscaled unless ``scale_rows`` (then 1 / their largest Jacobian entry at the guess, like the CasADi+IPOPT
    model): FATROP relaxes inequality bounds by ~1e-8 of the scaled row, which scaled rows turn into ~1e-6 of
    our clearance rows."""
    import casadi as ca

    model, spec = setup.model, setup.spec
    if model.vehicle != "car" or not model.fixed[model.T]:
        raise NotImplementedError("the stage-wise model covers the car with a fixed duration")
    N, T = model.N, float(nlp.base[model.T])
    h = T / N
    D, _, sf = scaling(nlp, z0)
    Ds, Du = ca.DM(_column_scales(nlp, D, model.state)), ca.DM(_column_scales(nlp, D, model.controls))
    step, speed, clearance, margins = _node_functions(setup, nlp)
    Xs = [ca.SX.sym(f"x{k}", 6) for k in range(N + 1)]
    Us = [ca.SX.sym(f"u{k}", 2) for k in range(N)]
    S = [Ds * x for x in Xs]
    U = [Du * u for u in Us]
    path = _path_rows(setup, S, speed, clearance, margins, T)
    rows, raw, lo, hi, kind = [], [], [], [], []
    for k in range(N + 1):
        if k < N:
            gap = Xs[k + 1] - step(S[k], U[k]) / Ds
            rows.append(gap)
            raw.append(Ds * gap)                 # s_{k+1} − Φ(s_k, u_k), as our dynamics rows
            lo += [0.0] * 6
            hi += [0.0] * 6
            kind += ["gap"] * 6
        for e, a, b in path[k]:
            rows.append(e)
            raw.append(e)
            lo += np.broadcast_to(a, (e.shape[0],)).tolist()
            hi += np.broadcast_to(b, (e.shape[0],)).tolist()
            kind += ["path"] * e.shape[0]
    G = ca.vertcat(*rows)
    lo_u, hi_u = np.array(lo, dtype=float), np.array(hi, dtype=float)
    weights = np.array([spec.cost.input_weights.get(nm, 1.0) for nm in model.inputs]) * spec.cost.effort
    cost = sum(h * ca.dot(ca.DM(weights), u * u) for u in U)
    v = ca.vertcat(*[e for k in range(N) for e in (Xs[k], Us[k])], Xs[N])
    Dv = np.concatenate([np.concatenate([Ds.full().ravel(), Du.full().ravel()])] * N + [Ds.full().ravel()])
    v0 = stages_from_free(nlp, model, z0) / Dv
    Sr = np.ones(len(lo_u))
    if scale_rows:
        path_rows = np.array(kind) == "path"
        rown = row_max_abs(ca.Function("J", [v], [ca.jacobian(G, v)])(v0))
        Sr[path_rows] = np.clip(np.where(rown > 0, 1.0 / np.maximum(rown, 1e-300), 1.0), 1e-6, 1e6)[path_rows]
    idx = stage_index(model)
    lower = np.where(nlp.fixed, nlp.base, nlp.meta["lower_full"])[idx]
    upper = np.where(nlp.fixed, nlp.base, nlp.meta["upper_full"])[idx]
    return {"prob": {"x": v, "f": sf * cost, "g": ca.DM(Sr) * G}, "equality": (lo_u == hi_u).tolist(), "Dv": Dv,
            "v0": v0, "args": {"x0": v0, "lbx": lower / Dv, "ubx": upper / Dv, "lbg": Sr * lo_u, "ubg": Sr * hi_u},
            "fg": ca.Function("fg", [v], [cost, ca.vertcat(*raw)]), "lbg_u": lo_u, "ubg_u": hi_u,
            "lower": lower, "upper": upper}


def stage_check(built: dict, nlp, z0) -> tuple[float, float, float, float]:
    """(stage model's cost, ours, its max violation of rows and bounds, ours) at the guess."""
    v = built["Dv"] * built["v0"]
    f0, g0 = (np.asarray(x.full()).ravel() for x in built["fg"](built["v0"]))
    rows = np.maximum(np.maximum(built["lbg_u"] - g0, g0 - built["ubg_u"]), 0.0)
    bnds = np.maximum(np.maximum(built["lower"] - v, v - built["upper"]), 0.0)
    return float(f0[0]), nlp.objective(z0), float(max(rows.max(initial=0.0), bnds.max(initial=0.0))), \
        nlp.max_violation(z0)


def build_fatrop(setup, nlp, z0, options: dict | None = None, scale_rows: bool = False) -> dict:
    import casadi as ca

    t0 = time.perf_counter()
    built = fatrop_car_problem(setup, nlp, z0, scale_rows)
    built["model_s"] = time.perf_counter() - t0
    opts = {"structure_detection": "auto", "equality": built["equality"], "expand": True, "print_time": False,
            "fatrop": {**FATROP_OPTIONS, **(options or {})}}
    built["solver"] = ca.nlpsol("fatrop", "fatrop", built["prob"], opts)
    built["build_s"] = time.perf_counter() - t0
    return built


def solve_fatrop(built: dict, nlp, model) -> dict:
    solver = built["solver"]
    w0 = time.perf_counter()
    sol = solver(**built["args"])
    wall = time.perf_counter() - w0
    st = solver.stats()
    z = free_from_stages(nlp, model, built["Dv"] * np.asarray(sol["x"].full()).ravel())
    ok = bool(st.get("success", False))
    status = "Solve_Succeeded" if ok else f"{st.get('unified_return_status', '')} (flag {st.get('return_status')})"
    return {"wall": wall, "iterations": int(st.get("iter_count", -1)), "status": status, "success": ok,
            "cost": nlp.objective(z), "violation": nlp.max_violation(z), "z": z, "stages": st.get("N"),
            "nx": st.get("nx"), "nu": st.get("nu")}


# ------------------------------------------------------------------------------------------------
# one run of each solver
# ------------------------------------------------------------------------------------------------
def run_ours(text: str, backend: str, limit: float) -> dict:
    setup, nlp, z0, t_setup = setup_ours(text, backend)
    t0 = time.perf_counter()
    r = solve(nlp, z0, SolverOptions(backend=backend, time_limit_s=limit, max_iter=3000))
    t_solve = time.perf_counter() - t0
    return {"setup": t_setup, "solve": t_solve, "iterations": r.iterations, "status": r.status,
            "ok": r.converged, "cost": r.cost, "violation": r.max_constraint_violation, "n": nlp.n, "m": nlp.m,
            "z": r.z}


def run_ca_ipopt(setup, nlp, z0, limit: float) -> dict:
    built = build_casadi_ipopt(setup, nlp, z0, {"max_wall_time": float(limit), "max_iter": 3000})
    out = solve_casadi_ipopt(built, nlp)
    return {"setup": built["build_s"], "nlpsol": built["build_s"] - built["model_s"], "solve": out["wall"],
            "iterations": out["iterations"], "status": out["status"], "ok": out["success"], "cost": out["cost"],
            "violation": out["violation"], "check": check_at_guess(built, nlp, z0), "z": out["z"]}


def run_fatrop(setup, nlp, z0) -> dict:
    built = build_fatrop(setup, nlp, z0)
    out = solve_fatrop(built, nlp, setup.model)
    return {"setup": built["build_s"], "nlpsol": built["build_s"] - built["model_s"], "solve": out["wall"],
            "iterations": out["iterations"], "status": out["status"], "ok": out["success"], "cost": out["cost"],
            "violation": out["violation"], "check": stage_check(built, nlp, z0),
            "structure": (out["stages"], out["nx"], out["nu"]), "z": out["z"]}


def median_run(runs: list[dict]) -> dict:
    """The run of median whole time, with the median set-up and solve times."""
    runs = sorted(runs, key=lambda r: r["setup"] + r["solve"])
    out = dict(runs[len(runs) // 2])
    for key in ("setup", "solve", "nlpsol"):
        if key in out:
            out[key] = statistics.median(r[key] for r in runs)
    return out


def warm_up() -> None:
    """One unreported run of every solver on a small car: imports, plugin loading (casadi's nlpsol plugins are
    loaded at their first use) and first-call caches do not land on the first measured case."""
    text = scenario_text("car3", 10)
    for backend in ("scipy", "ipopt"):
        run_ours(text, backend, 30.0)
    setup, nlp, z0, _ = setup_ours(text, "ipopt")
    run_ca_ipopt(setup, nlp, z0, 30.0)
    run_fatrop(setup, nlp, z0)


def benchmark_case(case: str, steps: int, repeat: int, limit: float) -> dict:
    text = scenario_text(case, steps)
    res: dict[str, dict] = {}
    for backend in ("scipy", "ipopt"):
        res[backend] = median_run([run_ours(text, backend, limit) for _ in range(repeat)])
    setup, nlp, z0, _ = setup_ours(text, "ipopt")
    res["ca-ipopt"] = median_run([run_ca_ipopt(setup, nlp, z0, limit) for _ in range(repeat)])
    if setup.model.vehicle == "car":
        res["fatrop"] = median_run([run_fatrop(setup, nlp, z0) for _ in range(repeat)])
    return {"case": case, "N": steps, "n": nlp.n, "m": nlp.m, "runs": res}


# ------------------------------------------------------------------------------------------------
# report
# ------------------------------------------------------------------------------------------------
def _agree(a: float, b: float) -> bool:
    return abs(a - b) <= AGREE * max(abs(a), abs(b), 1e-300)


def print_checks(row: dict) -> None:
    label = f"{CASES[row['case']][1]} N={row['N']}"
    for name, what in (("ca-ipopt", "CasADi model"), ("fatrop", "stage-wise FATROP model")):
        r = row["runs"].get(name)
        if r is None:
            continue
        f_ca, f_us, v_ca, v_us = r["check"]
        ok = _agree(f_ca, f_us) and _agree(v_ca, v_us)
        print(f"  {label}: {what} vs ours at the guess: cost {f_ca:.12g} vs {f_us:.12g}, max violation "
              f"{v_ca:.10g} vs {v_us:.10g} -> {'same NLP' if ok else 'DIFFERENT'}", flush=True)
    if "fatrop" in row["runs"]:
        N_, nx, nu = row["runs"]["fatrop"]["structure"]
        print(f"  {label}: FATROP structure detected: N = {N_}, nx = {sorted(set(nx))}, nu = {sorted(set(nu))}")


def stays_at(text: str, z: np.ndarray) -> tuple[bool, float, int]:
    """Is z a local optimum of our NLP? Our IPOPT backend warm-started at z (at most 100 iterations): whether it
    converges without moving the cost (1e-6 relative), the cost it ends at, its iterations."""
    _, nlp, _, _ = setup_ours(text, "ipopt")
    r = solve(nlp, z, SolverOptions(backend="ipopt", warm=True, max_iter=100, time_limit_s=60.0))
    f0 = nlp.objective(z)
    return r.converged and abs(r.cost - f0) <= 1e-6 * max(abs(f0), 1e-12), r.cost, r.iterations


def print_optima(row: dict, kkt_check: bool = False) -> None:
    """Which solvers reached the same optimum (relative cost 1e-6, violation 1e-6) as our scipy backend; with
    ``kkt_check``, whether each other converged optimum is a local optimum of our NLP too (:func:`stays_at`)."""
    runs = row["runs"]
    ref = runs["scipy"]
    diffs = []
    for name in SOLVERS[1:]:
        r = runs.get(name)
        if r is None:
            continue
        rel = (r["cost"] - ref["cost"]) / max(abs(ref["cost"]), 1e-12)
        if abs(rel) > 1e-6 or r["violation"] > 1e-6 or not r["ok"]:
            note = "" if r["ok"] else f" ({r['status']})"
            if kkt_check and r["ok"]:
                stays, cost, it = stays_at(scenario_text(row["case"], row["N"]), r["z"])
                note = (" (a local optimum of our NLP too: our ipopt backend warm-started there stays, "
                        f"{it} it)" if stays else f" (our ipopt backend warm-started there moves to {cost:.8g})")
            diffs.append(f"{name} {100 * rel:+.4f} % cost, viol {r['violation']:.1e}{note}")
    label = f"{CASES[row['case']][1]} N={row['N']}"
    if diffs:
        print(f"  {label}: optima differ from scipy's ({ref['cost']:.8g}): " + "; ".join(diffs), flush=True)
    else:
        print(f"  {label}: every solver reached scipy's optimum {ref['cost']:.8g}", flush=True)


def _status(r: dict) -> str:
    return "ok" if r["ok"] else ("did not converge: " + r["status"])[:40]


def _same_optimum(a: dict, b: dict) -> bool:
    return abs(a["cost"] - b["cost"]) <= 1e-6 * max(abs(a["cost"]), abs(b["cost"]), 1e-12)


def _ratio(o: dict, p: dict, key: str) -> str:
    """ours / peer for the whole time (key "whole") or the solve time, with its marks."""
    t = (lambda r: r["setup"] + r["solve"]) if key == "whole" else (lambda r: r["solve"])
    mark = ("*" if not (o["ok"] and p["ok"]) else "") + ("" if _same_optimum(o, p) else "~")
    return f"{t(o) / max(t(p), 1e-9):.2f}{mark}"


def print_table(rows: list[dict]) -> None:
    print("\nPer run (wall times in s; nlpsol = the part of CasADi's set-up spent in nlpsol(); cost and violation "
          "measured by our NLP):")
    print(f"{'case':19s} {'N':>4s} {'solver':9s} {'setup':>7s} {'nlpsol':>7s} {'solve':>8s} {'whole':>8s} {'it':>5s} "
          f"{'cost':>12s} {'viol':>8s}  status")
    for row in rows:
        for name in SOLVERS:
            r = row["runs"].get(name)
            if r is None:
                continue
            nls = f"{r['nlpsol']:7.3f}" if "nlpsol" in r else f"{'-':>7s}"
            print(f"{CASES[row['case']][1]:19s} {row['N']:4d} {name:9s} {r['setup']:7.3f} {nls} {r['solve']:8.3f} "
                  f"{r['setup'] + r['solve']:8.3f} {r['iterations']:5d} {r['cost']:12.8g} {r['violation']:8.1e}  "
                  f"{_status(r)}")
    print("\nRatios ours / peer (whole = set-up + solve; < 1: ours faster; * a side did not converge; "
          "~ the two reached different optima, relative cost difference > 1e-6):")
    print(f"{'case':19s} {'N':>4s} {'ours':6s} {'whole/ca-ipopt':>15s} {'solve/ca-ipopt':>15s} {'whole/fatrop':>13s} "
          f"{'solve/fatrop':>13s}")
    for row in rows:
        runs = row["runs"]
        for ours in ("scipy", "ipopt"):
            cells = []
            for peer in ("ca-ipopt", "fatrop"):
                p = runs.get(peer)
                cells += [_ratio(runs[ours], p, "whole"), _ratio(runs[ours], p, "solve")] if p else ["n/a", "n/a"]
            print(f"{CASES[row['case']][1]:19s} {row['N']:4d} {ours:6s} {cells[0]:>15s} {cells[1]:>15s} "
                  f"{cells[2]:>13s} {cells[3]:>13s}")


def slope(ns: list[int], ts: list[float]) -> float:
    """Least-squares slope of log t against log N."""
    return float(np.polyfit(np.log(ns), np.log(ts), 1)[0])


def print_scaling(rows: list[dict]) -> None:
    """Per case and solver: the log-log slope against N of the whole time and of the solve time per iteration
    (the iteration counts grow with N on these nonconvex programs; per iteration, linear work has slope 1)."""
    for case in CASES:
        sel = [r for r in rows if r["case"] == case]
        if len(sel) < 2:
            continue
        whole, per_it = [], []
        for name in SOLVERS:
            runs = [(r["N"], r["runs"][name]) for r in sel if name in r["runs"]]
            if len(runs) < 2:
                continue
            ns = [n for n, _ in runs]
            whole.append(f"{name} {slope(ns, [x['setup'] + x['solve'] for _, x in runs]):.2f}")
            per_it.append(f"{name} {slope(ns, [x['solve'] / max(x['iterations'], 1) for _, x in runs]):.2f}")
        listed = ", ".join(str(r["N"]) for r in sel)
        print(f"time linear in N? {CASES[case][1]} (N = {listed}): log-log slope of the whole time: {', '.join(whole)}; "
              f"of the solve time per iteration: {', '.join(per_it)}")


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="car and car3 at N = 60, 100; helicopter at N = 100")
    ap.add_argument("--cases", default="car,car3,heli", help="comma-separated: car, car3, heli")
    ap.add_argument("--N", default="", help="comma-separated steps for the car cases (default 60,100,200,400,800)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per solver and case; the median is reported")
    ap.add_argument("--time-limit", type=float, default=30.0,
                    help="wall-time limit (s) of our solves and of CasADi+IPOPT (max_wall_time)")
    ap.add_argument("--kkt-check", action="store_true",
                    help="warm-start our ipopt backend at every converged optimum that differs from scipy's")
    args = ap.parse_args(argv)
    if not ipopt_available():
        sys.exit("needs cyipopt (scripts/install_ipopt.sh)")
    try:
        import casadi as ca
    except ImportError:
        sys.exit("needs casadi: bash scripts/install_ipopt.sh (requirements-ipopt.txt)")
    if not ca.has_nlpsol("fatrop"):
        sys.exit("this casadi has no FATROP plugin")
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    for c in cases:
        if c not in CASES:
            sys.exit(f"unknown case {c!r} (choose from {', '.join(CASES)})")
    print(ipopt_builds(), flush=True)
    print(f"CasADi+IPOPT options: {IPOPT_OPTIONS} (+ max_wall_time {args.time_limit:g} s); "
          f"FATROP options: {FATROP_OPTIONS}; repeat {args.repeat} (median)", flush=True)
    print("not run: snakeboard and boat samples (no CasADi restatement in benchmarks/dmoc_vs_casadi.py)", flush=True)
    warm_up()
    rows = []
    for case in cases:
        ns = (QUICK_N if args.quick else DEFAULT_N)[case]
        if args.N and case != "heli":
            ns = tuple(int(x) for x in args.N.split(",") if x.strip())
        for n in ns:
            t0 = time.perf_counter()
            row = benchmark_case(case, n, args.repeat, args.time_limit)
            rows.append(row)
            print(f"{CASES[case][1]} N={n}: n = {row['n']} variables, m = {row['m']} rows "
                  f"({time.perf_counter() - t0:.1f} s)", flush=True)
            print_checks(row)
            print_optima(row, args.kkt_check)
    print_table(rows)
    print()
    print_scaling(rows)
    return rows


if __name__ == "__main__":
    main()
