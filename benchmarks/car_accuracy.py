"""Fig. 5 of Kobilarov, Crane & Desbrun 2009: the car's nonholonomic integrator against RK2 and RK4.

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/car_accuracy.py   # 50 cars: docs/benchmarks/car.{csv,png,md}
    .venv/bin/python benchmarks/car_accuracy.py --quick    # 10 cars, fewer step sizes, writes to /tmp/car_bench

Protocol (their §3.3, "Nonholonomic Car"): 50 one-minute runs of the hatchback preset driven by
sinusoidal steering and torque, random (seeded) amplitudes, frequencies, phases and initial states,
in three families cycled over the runs:

- parking: slow (initial |v| ≤ 0.6 m/s), a torque sinusoid that reverses the car every 5–12 s and
  large, slow steering swings (|σ| up to 0.6) — back-and-forth manoeuvres;
- sharp: initial 4.5–9 m/s, a large slow steering sweep (|σ| up to 0.5) plus a faster ripple;
- winding: initial 9–18 m/s, small (|σ| ≤ 0.2) faster steering at 0.2–1 Hz — a winding road.

Inputs are keyframed: the sinusoids are averaged over a 0.25 s control grid and held constant over
each control interval (σ is exact at the keyframes). Every step size divides the grid, so all
methods and the reference integrate *the same* ODE with the same inputs: the measured error is the
integrator's alone. (With smooth inputs sampled at each method's own evaluation points, the error
is dominated by how the inputs are sampled, e.g. a steering bias of O((ωh)²) from midpoint sampling
of the steering rate, for the VI and RK2 alike; see docs/benchmarks/car.md.)

Methods, all batched over the runs with numpy (one step advances every car at once, arrays of
shape (runs,), the same per-step Python loop and lean component-array style), so the timings
compare like with like:

- VI: the explicit car update of §5.2.1 (``core.vehicles.car.advance``), α = ½, τ = exp;
- RK2 (explicit midpoint) and RK4 (classical) on the continuous reduced equations (the right-hand
  side of ``core.vehicles.car.rhs``, written out on component arrays here). Heading is an angle.

Inputs are tabulated per step before any timer starts. Reference: solve_ivp DOP853,
rtol = atol = 1e-12, over each control interval, all runs in one system. Pose error of a run =
max over the samples t = 0, 1, …, 60 s of ‖Δ(x, y)‖ [m] + |Δθ| [rad]; the figure is its mean over
the runs. Time = best of ``--repeats`` CPU times (time.process_time) of the whole batch, methods
interleaved: the machine is shared, and CPU time does not count the time spent waiting for a core.
"Time at equal error" is given two ways: log(time) interpolated linearly in log(error) along each
method's curve, and (less noisy) the per-step cost ratio times the ratio of the step counts the two
methods need for that error (log-log interpolation of the error curves).
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

from core.vehicles import car as C
from machine import measured_on

ROOT = Path(__file__).resolve().parents[1]

T_END = 60.0
GRID = 0.25                       # control (keyframe) interval [s]
FAMILIES = ("parking", "sharp", "winding")


# ---------------------------------------------------------------------------------------------
# Scenarios: σ(t) = Σ s_i sin(ω_i t + φ_i), steering_rate = σ̇; torque f(t) = f0 + Σ a_j sin(γ_j t + χ_j)
# ---------------------------------------------------------------------------------------------
def make_runs(n: int, seed: int, car: C.Car) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    U = rng.uniform
    two_pi = 2 * math.pi
    fam = np.array([i % 3 for i in range(n)])
    s = np.zeros((n, 2)); om = np.zeros((n, 2)); ph = U(0, two_pi, (n, 2))  # noqa: E702
    f0 = np.zeros(n); a = np.zeros(n); ga = np.zeros(n); chi = U(0, two_pi, n)  # noqa: E702
    rate0 = np.zeros(n)
    for i in range(n):
        if fam[i] == 0:      # parking
            s[i] = [U(0.4, 0.6), 0.0]; om[i] = [two_pi * U(1 / 20, 1 / 8), 1.0]  # noqa: E702
            f0[i], a[i], ga[i] = 0.0, U(80, 200), two_pi * U(1 / 24, 1 / 10)
            rate0[i] = U(-2, 2)
        elif fam[i] == 1:    # sharp turns
            s[i] = [U(0.3, 0.5), U(0.05, 0.15)]; om[i] = [two_pi * U(0.05, 0.15), two_pi * U(0.2, 0.4)]  # noqa: E702
            f0[i], a[i], ga[i] = U(-50, 100), U(100, 300), two_pi * U(0.02, 0.1)
            rate0[i] = U(15, 30)
        else:                # winding
            s[i] = [U(0.05, 0.15), U(0.02, 0.06)]; om[i] = [two_pi * U(0.2, 0.5), two_pi * U(0.5, 1.0)]  # noqa: E702
            f0[i], a[i], ga[i] = U(-40, 60), U(50, 200), two_pi * U(0.02, 0.1)
            rate0[i] = U(30, 60)
    runs = dict(family=fam, s=s, om=om, ph=ph, f0=f0, a=a, ga=ga, chi=chi, rate0=rate0,
                heading=U(-math.pi, math.pi, n), x0=U(-10, 10, n), y0=U(-10, 10, n))
    assert np.all(np.sum(s, axis=1) < car.max_sigma)                      # steering stays inside its limit
    assert np.all(np.sum(s * om, axis=1) <= car.max_steering_rate)        # |σ̇| ≤ max_steering_rate
    assert np.all(np.abs(f0) + a <= car.max_torque)
    return runs


def sigma_of(r, t):
    t = np.asarray(t)[..., None]
    return np.sum(r["s"] * np.sin(r["om"] * t[..., None] + r["ph"]), axis=-1)


def rate_of(r, t):
    t = np.asarray(t)[..., None]
    return np.sum(r["s"] * r["om"] * np.cos(r["om"] * t[..., None] + r["ph"]), axis=-1)


def torque_of(r, t):
    t = np.asarray(t)[..., None]
    return r["f0"] + r["a"] * np.sin(r["ga"] * t + r["chi"])


def torque_average(r, t0, h):
    t0 = np.asarray(t0)[..., None]
    return r["f0"] + r["a"] * (np.cos(r["ga"] * t0 + r["chi"]) - np.cos(r["ga"] * (t0 + h) + r["chi"])) / (r["ga"] * h)


def initial_y(r) -> np.ndarray:
    """(ψ, σ, θ, x, y, u) at t = 0 for every run, (runs, 6)."""
    n = len(r["rate0"])
    return np.column_stack([np.zeros(n), sigma_of(r, 0.0), r["heading"], r["x0"], r["y0"], r["rate0"]])


# ---------------------------------------------------------------------------------------------
# Reference and the three methods
# ---------------------------------------------------------------------------------------------
def keyframes(r) -> tuple[np.ndarray, np.ndarray]:
    """Torque and steering rate per control interval (intervals, runs): averages of the sinusoids."""
    t = np.arange(int(round(T_END / GRID))) * GRID
    return torque_average(r, t, GRID), (sigma_of(r, t + GRID) - sigma_of(r, t)) / GRID


def reference(car: C.Car, y0: np.ndarray, F: np.ndarray, W: np.ndarray, every: int) -> np.ndarray:
    """DOP853, rtol = atol = 1e-12, interval by interval, all runs at once: (samples, runs, 6)."""
    n = len(y0)
    y = y0.copy()
    out = [y.copy()]
    for j in range(F.shape[0]):
        f, w = F[j], W[j]
        sol = solve_ivp(lambda t, yy: C.rhs(car, yy.reshape(n, 6), f, w).ravel(), (0.0, GRID), y.ravel(),
                        method="DOP853", rtol=1e-12, atol=1e-12)
        assert sol.success, sol.message
        y = sol.y[:, -1].reshape(n, 6)
        if (j + 1) % every == 0:
            out.append(y.copy())
    return np.array(out)


def run_vi(car, y0, inputs, h, every):
    f_avg, w_avg = inputs
    psi, sg, th, x, y, u = (y0[:, i].copy() for i in range(6))
    p = car.reduced_inertia(sg) * u
    out = [np.stack([th, x, y], -1)]
    advance = C.advance
    for k in range(f_avg.shape[0]):
        psi, sg, th, x, y, p, _ = advance(car, psi, sg, th, x, y, p, f_avg[k], w_avg[k], h, 0.5)
        if (k + 1) % every == 0:
            out.append(np.stack([th, x, y], -1))
    return np.array(out)


def _rates(car, sg, th, u, f, w):
    """Right-hand side of the reduced equations (core.vehicles.car.rhs) on component arrays."""
    ru = car.wheel_radius * u
    csg = car.c * sg
    return (u, w, car.kappa * sg * u, ru * np.cos(th), ru * np.sin(th), (f - csg * w * u) / (car.a + csg * sg))


def run_rk2(car, y0, inputs, h, every):
    f0, w0, fm, wm = inputs
    psi, sg, th, x, y, u = (y0[:, i].copy() for i in range(6))
    out = [np.stack([th, x, y], -1)]
    hh = 0.5 * h
    for k in range(f0.shape[0]):
        d1 = _rates(car, sg, th, u, f0[k], w0[k])
        d2 = _rates(car, sg + hh * d1[1], th + hh * d1[2], u + hh * d1[5], fm[k], wm[k])
        psi = psi + h * d2[0]; sg = sg + h * d2[1]; th = th + h * d2[2]  # noqa: E702
        x = x + h * d2[3]; y = y + h * d2[4]; u = u + h * d2[5]  # noqa: E702
        if (k + 1) % every == 0:
            out.append(np.stack([th, x, y], -1))
    return np.array(out)


def run_rk4(car, y0, inputs, h, every):
    f0, w0, fm, wm, f1, w1 = inputs
    psi, sg, th, x, y, u = (y0[:, i].copy() for i in range(6))
    out = [np.stack([th, x, y], -1)]
    hh, h6 = 0.5 * h, h / 6.0
    for k in range(f0.shape[0]):
        d1 = _rates(car, sg, th, u, f0[k], w0[k])
        d2 = _rates(car, sg + hh * d1[1], th + hh * d1[2], u + hh * d1[5], fm[k], wm[k])
        d3 = _rates(car, sg + hh * d2[1], th + hh * d2[2], u + hh * d2[5], fm[k], wm[k])
        d4 = _rates(car, sg + h * d3[1], th + h * d3[2], u + h * d3[5], f1[k], w1[k])
        psi = psi + h6 * (d1[0] + 2 * (d2[0] + d3[0]) + d4[0])
        sg = sg + h6 * (d1[1] + 2 * (d2[1] + d3[1]) + d4[1])
        th = th + h6 * (d1[2] + 2 * (d2[2] + d3[2]) + d4[2])
        x = x + h6 * (d1[3] + 2 * (d2[3] + d3[3]) + d4[3])
        y = y + h6 * (d1[4] + 2 * (d2[4] + d3[4]) + d4[4])
        u = u + h6 * (d1[5] + 2 * (d2[5] + d3[5]) + d4[5])
        if (k + 1) % every == 0:
            out.append(np.stack([th, x, y], -1))
    return np.array(out)


# ---------------------------------------------------------------------------------------------
# One car at a time in plain Python floats (numpy's per-call overhead dominates a single car):
# the VI through core.vehicles.car.advance_float, RK2 with the same right-hand side as above on
# floats. Same per-step structure as the batched runners (one update call against two rate calls).
# ---------------------------------------------------------------------------------------------
def run_vi_float(car, y0, inputs, h, every):
    kf = C.float_constants(car, h, 0.5)
    adv = C.advance_float
    a, c = car.a, car.c
    out = []
    for y_i, fs, ws in zip(y0.tolist(), *inputs):
        psi, sg, th, x, y, u = y_i
        p = (a + c * sg * sg) * u
        rows = [(th, x, y)]
        for k in range(len(fs)):
            psi, sg, th, x, y, p, _ = adv(kf, psi, sg, th, x, y, p, fs[k], ws[k])
            if (k + 1) % every == 0:
                rows.append((th, x, y))
        out.append(rows)
    return np.array(out).transpose(1, 0, 2)


def _rates_float(k, sg, th, u, f, w):
    """:func:`_rates` on floats; k = (ρ, c, κ, a)."""
    rho, c, kap, a = k
    ru = rho * u
    csg = c * sg
    return (u, w, kap * sg * u, ru * math.cos(th), ru * math.sin(th), (f - csg * w * u) / (a + csg * sg))


def run_rk2_float(car, y0, inputs, h, every):
    kk = (car.wheel_radius, car.c, car.kappa, car.a)
    rates = _rates_float
    hh = 0.5 * h
    out = []
    for y_i, f0, w0, fm, wm in zip(y0.tolist(), *inputs):
        psi, sg, th, x, y, u = y_i
        rows = [(th, x, y)]
        for k in range(len(f0)):
            d1 = rates(kk, sg, th, u, f0[k], w0[k])
            d2 = rates(kk, sg + hh * d1[1], th + hh * d1[2], u + hh * d1[5], fm[k], wm[k])
            psi += h * d2[0]; sg += h * d2[1]; th += h * d2[2]  # noqa: E702
            x += h * d2[3]; y += h * d2[4]; u += h * d2[5]  # noqa: E702
            if (k + 1) % every == 0:
                rows.append((th, x, y))
        out.append(rows)
    return np.array(out).transpose(1, 0, 2)


FLOAT_RUNNERS = {"VI": run_vi_float, "RK2": run_rk2_float}


def tabulate_float(method, F, W, sub):
    """:func:`tabulate` as per-run Python lists (runs × steps)."""
    return tuple(a.T.tolist() for a in tabulate(method, F, W, sub))


def tabulate(method, F, W, sub):
    """Per-step inputs (steps, runs): each keyframe value held for ``sub`` steps (every RK stage too)."""
    f, w = np.repeat(F, sub, axis=0), np.repeat(W, sub, axis=0)
    return {"VI": (f, w), "RK2": (f, w, f, w), "RK4": (f, w, f, w, f, w)}[method]


RUNNERS = {"VI": run_vi, "RK2": run_rk2, "RK4": run_rk4}


def smooth_reference(car: C.Car, r, y0: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """DOP853, rtol = atol = 1e-12, run by run, with the smooth (not keyframed) inputs: (samples, runs, 6)."""
    out = np.empty((len(samples),) + y0.shape)
    for i in range(len(y0)):
        ri = {k: v[i] for k, v in r.items()}
        sol = solve_ivp(lambda t, y: C.rhs(car, y, float(np.squeeze(torque_of(ri, t))),
                                           float(np.squeeze(rate_of(ri, t)))), (0.0, T_END), y0[i],
                        method="DOP853", rtol=1e-12, atol=1e-12, t_eval=samples)
        assert sol.success, sol.message
        out[:, i] = sol.y.T
    return out


def sampling_experiment(car: C.Car, r, y0: np.ndarray, n: int) -> dict[str, float]:
    """Smooth inputs, each method sampling them its own way: mean pose error at ``n`` steps."""
    h = T_END / n
    ref = smooth_reference(car, r, y0, np.arange(0.0, T_END + 0.5, 1.0))
    t = np.arange(n) * h
    mid = t + h / 2
    cases = {
        "VI, step-averaged inputs": ("VI", (torque_average(r, t, h), (sigma_of(r, t + h) - sigma_of(r, t)) / h)),
        "VI, inputs sampled at step midpoints": ("VI", (torque_of(r, mid), rate_of(r, mid))),
        "RK2, inputs at its stage times": ("RK2", (torque_of(r, t), rate_of(r, t), torque_of(r, mid), rate_of(r, mid))),
        "RK4, inputs at its stage times": ("RK4", (torque_of(r, t), rate_of(r, t), torque_of(r, mid), rate_of(r, mid),
                                                   torque_of(r, t + h), rate_of(r, t + h))),
    }
    out = {}
    for name, (m, inputs) in cases.items():
        e, _, _ = pose_error(RUNNERS[m](car, y0, inputs, h, n // 60), ref)
        out[name] = float(np.mean(e))
    return out


def pose_error(poses: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per run: max over samples of ‖Δ(x, y)‖ + |Δθ|, and the two parts; non-finite → inf."""
    dpos = np.hypot(poses[..., 1] - ref[..., 3], poses[..., 2] - ref[..., 4])
    dth = np.abs(poses[..., 0] - ref[..., 2])
    pose = dpos + dth
    bad = ~np.all(np.isfinite(pose), axis=0)
    res = [np.where(bad, np.inf, np.nanmax(np.where(np.isfinite(q), q, np.nan), axis=0)) for q in (pose, dpos, dth)]
    return res[0], res[1], res[2]


def interp_time_at_error(err_from, err_to, time_to):
    """log-time of the other method at the given errors, linear in log-error (None outside its range)."""
    le, lt = np.log(err_to), np.log(time_to)
    order = np.argsort(le)
    le, lt = le[order], lt[order]
    out = []
    for e in np.log(err_from):
        out.append(float(np.exp(np.interp(e, le, lt))) if le[0] <= e <= le[-1] else None)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="10 runs, fewer step sizes, output to /tmp")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--seed", type=int, default=2009)
    ap.add_argument("--out", default=None, help="output folder (default docs/benchmarks, /tmp with --quick)")
    args = ap.parse_args(argv)
    started, machine = time.perf_counter(), measured_on()
    command = " ".join(["benchmarks/car_accuracy.py", *(sys.argv[1:] if argv is None else argv)])
    runs_n = args.runs or (10 if args.quick else 50)
    repeats = args.repeats or (3 if args.quick else 7)
    out_dir = Path(args.out or ("/tmp/car_bench" if args.quick else ROOT / "docs" / "benchmarks"))
    out_dir.mkdir(parents=True, exist_ok=True)
    car = C.Car.preset("hatchback")
    # steps per minute: h = GRID / sub for sub = 1 … 64 (h from 0.25 s to 1/256 s)
    subs = [2**j for j in (range(0, 7) if not args.quick else range(0, 5))]
    step_counts = [int(round(T_END / GRID)) * q for q in subs]
    r = make_runs(runs_n, args.seed, car)
    y0 = initial_y(r)
    F, W = keyframes(r)
    t0 = time.perf_counter()
    ref = reference(car, y0, F, W, int(round(1.0 / GRID)))
    t_ref = time.perf_counter() - t0
    print(f"reference: {runs_n} runs, DOP853 rtol=atol=1e-12, {t_ref:.1f} s")
    speeds = np.abs(ref[..., 5]) * car.wheel_radius
    speed_max = {FAMILIES[f]: float(speeds[:, r["family"] == f].max()) for f in range(3) if np.any(r["family"] == f)}
    print("max speed per family (m/s):", {k: round(v, 1) for k, v in speed_max.items()})

    results = {m: {} for m in RUNNERS}
    tables = {(m, n): tabulate(m, F, W, q) for m in RUNNERS for n, q in zip(step_counts, subs)}
    for _ in range(repeats):
        for n in step_counts:
            h = T_END / n
            for m, fn in RUNNERS.items():
                tic = time.process_time()
                poses = fn(car, y0, tables[(m, n)], h, n // 60)
                wall = time.process_time() - tic
                if n not in results[m]:
                    with np.errstate(all="ignore"):
                        e, ep, eh = pose_error(poses, ref)
                    results[m][n] = dict(error=e, pos=ep, head=eh, time=wall)
                else:
                    results[m][n]["time"] = min(results[m][n]["time"], wall)
    # one car at a time on plain floats (VI and RK2), fewer repeats: the per-run cost of a single car
    fl = {m: {} for m in FLOAT_RUNNERS}
    ftables = {(m, n): tabulate_float(m, F, W, q) for m in FLOAT_RUNNERS for n, q in zip(step_counts, subs)}
    for _ in range(min(repeats, 3)):
        for n in step_counts:
            h = T_END / n
            for m, fn in FLOAT_RUNNERS.items():
                tic = time.process_time()
                poses = fn(car, y0, ftables[(m, n)], h, n // 60)
                wall = time.process_time() - tic
                if n not in fl[m]:
                    with np.errstate(all="ignore"):
                        fl[m][n] = dict(error=float(np.mean(pose_error(poses, ref)[0])), time=wall)
                else:
                    fl[m][n]["time"] = min(fl[m][n]["time"], wall)
    rows = []
    for m in RUNNERS:
        for n in step_counts:
            d = results[m][n]
            ok = np.isfinite(d["error"])
            rows.append(dict(method=m, steps=n, h=T_END / n,
                             pose_error_mean=float(np.mean(d["error"][ok])) if ok.any() else math.inf,
                             pose_error_max=float(np.max(d["error"][ok])) if ok.any() else math.inf,
                             position_error_mean=float(np.mean(d["pos"][ok])) if ok.any() else math.inf,
                             heading_error_mean=float(np.mean(d["head"][ok])) if ok.any() else math.inf,
                             blowups=int((~ok).sum()), time_s=d["time"],
                             us_per_step=1e6 * d["time"] / n))
    # orders: slope of log(error) vs log(h) over the three smallest step sizes
    orders = {}
    for m in RUNNERS:
        sel = [q for q in rows if q["method"] == m][-3:]
        orders[m] = float(np.polyfit(np.log([q["h"] for q in sel]), np.log([q["pose_error_mean"] for q in sel]), 1)[0])
    # time at equal error, VI vs RK2 (and RK4)
    def curve(m):
        sel = [q for q in rows if q["method"] == m and math.isfinite(q["pose_error_mean"]) and q["blowups"] == 0]
        return np.array([q["pose_error_mean"] for q in sel]), np.array([q["time_s"] for q in sel])

    e_vi, t_vi = curve("VI")
    ratios = {}
    for other in ("RK2", "RK4"):
        e_o, t_o = curve(other)
        t_at = interp_time_at_error(e_vi, e_o, t_o)
        ratios[other] = [(float(e), float(tv / to)) for e, tv, to in zip(e_vi, t_vi, t_at) if to is not None]
    geo = {k: (float(np.exp(np.mean(np.log([q for _, q in v])))) if v else math.nan) for k, v in ratios.items()}
    # robust version: per-step cost (median over the larger runs of the best time / steps) × the step
    # count each method needs for the same error (log-log interpolation of its error curve)
    big = [n for n in step_counts if n >= 4 * step_counts[0]] or step_counts
    cost = {m: float(np.median([results[m][n]["time"] / n for n in big])) for m in RUNNERS}
    step_ratio = {o: cost["VI"] / cost[o] for o in ("RK2", "RK4")}
    n_vi = np.array([q["steps"] for q in rows if q["method"] == "VI"], dtype=float)
    model = {}
    for other in ("RK2", "RK4"):
        e_o = np.array([q["pose_error_mean"] for q in rows if q["method"] == other])
        n_o = np.array([q["steps"] for q in rows if q["method"] == other], dtype=float)
        n_at = interp_time_at_error(e_vi, e_o, n_o)
        model[other] = [(float(e), float(cost["VI"] * nv / (cost[other] * no)), float(nv / no))
                        for e, nv, no in zip(e_vi, n_vi, n_at) if no is not None]
    model_geo = {k: (float(np.exp(np.mean(np.log([q for _, q, _ in v])))) if v else math.nan) for k, v in model.items()}
    big_f = [n for n in step_counts if n >= 4 * step_counts[0]] or step_counts
    fcost = {m: float(np.median([fl[m][n]["time"] / n for n in big_f])) for m in FLOAT_RUNNERS}
    e_vf = np.array([fl["VI"][n]["error"] for n in step_counts])
    n_at = interp_time_at_error(e_vf, np.array([fl["RK2"][n]["error"] for n in step_counts]),
                                np.array(step_counts, dtype=float))
    fmodel = [(float(e), float(fcost["VI"] * nv / (fcost["RK2"] * no)), float(nv / no))
              for e, nv, no in zip(e_vf, step_counts, n_at) if no is not None]
    fmodel_geo = float(np.exp(np.mean(np.log([q for _, q, _ in fmodel])))) if fmodel else math.nan
    float_summary = dict(cost=fcost, model=fmodel, geo=fmodel_geo, runs=runs_n, repeats=min(repeats, 3),
                         same_error=bool(all(abs(fl["VI"][n]["error"] / results["VI"][n]["error"].mean() - 1) < 1e-9
                                             and abs(fl["RK2"][n]["error"] / results["RK2"][n]["error"].mean() - 1) < 1e-9
                                             for n in step_counts)))
    fam_err = {FAMILIES[f]: {m: float(np.mean(results[m][step_counts[2]]["error"][r["family"] == f])) for m in RUNNERS}
               for f in range(3) if np.any(r["family"] == f)}
    print(f"{'method':6} {'steps':>6} {'h [s]':>8} {'pose err':>10} {'pos err':>10} {'head err':>10} "
          f"{'blowups':>7} {'time [s]':>9} {'µs/step':>8}")
    for q in rows:
        print(f"{q['method']:6} {q['steps']:6d} {q['h']:8.4f} {q['pose_error_mean']:10.3e} "
              f"{q['position_error_mean']:10.3e} {q['heading_error_mean']:10.3e} {q['blowups']:7d} "
              f"{q['time_s']:9.4f} {q['us_per_step']:8.1f}")
    print("fitted order (error ~ h^p, three smallest h):", {k: round(v, 2) for k, v in orders.items()})
    for k, v in ratios.items():
        print(f"VI time / {k} time at equal pose error:", [f"{e:.1e}: {q:.2f}" for e, q in v],
              f"geometric mean {geo[k]:.2f}")
    print("per-step cost [µs, 50 cars batched]:", {k: round(1e6 * v, 1) for k, v in cost.items()},
          "VI / other:", {k: round(v, 2) for k, v in step_ratio.items()})
    for k, v in model.items():
        print(f"VI time / {k} time at equal error (per-step cost × steps needed):",
              [f"{e:.1e}: {q:.2f} (steps ×{nr:.2f})" for e, q, nr in v], f"geometric mean {model_geo[k]:.2f}")
    print(f"mean pose error per family at {step_counts[2]} steps:", fam_err)
    print("one car at a time, plain floats: per-step cost per car [µs]:",
          {k: round(1e6 * v / runs_n, 2) for k, v in fcost.items()}, f"VI / RK2 = {fcost['VI'] / fcost['RK2']:.2f};",
          "VI / RK2 time at equal error:", [f"{e:.1e}: {q:.2f}" for e, q, _ in fmodel], f"geometric mean {fmodel_geo:.2f}",
          "(errors equal the batched ones)" if float_summary["same_error"] else "(errors differ from the batched ones!)")

    sampling = sampling_experiment(car, r, y0, step_counts[2]) if not args.quick else {}
    if sampling:
        print(f"smooth inputs, {step_counts[2]} steps, mean pose error:", {k: f"{v:.2e}" for k, v in sampling.items()})

    with open(out_dir / "car.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plot(rows, out_dir / "car.png", runs_n)
    write_markdown(out_dir / "car.md", rows, orders, ratios, geo, step_ratio, runs_n, repeats, t_ref, args, speed_max,
                   cost, model, model_geo, fam_err, step_counts[2], sampling, float_summary,
                   run=dict(machine=machine, command=command, minutes=(time.perf_counter() - started) / 60.0))
    print(f"wrote {out_dir / 'car.csv'}, {out_dir / 'car.png'}, {out_dir / 'car.md'}")
    return 0


def plot(rows, path, runs_n):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(14, 4.2))
    styles = {"VI": "o-", "RK2": "s--", "RK4": "^:"}
    for m, st in styles.items():
        sel = [q for q in rows if q["method"] == m]
        n = [q["steps"] for q in sel]
        ax[0].loglog(n, [q["pose_error_mean"] for q in sel], st, label=m)
        ax[1].loglog(n, [q["time_s"] for q in sel], st, label=m)
        ax[2].loglog([q["pose_error_mean"] for q in sel], [q["time_s"] for q in sel], st, label=m)
    ax[0].set(xlabel="steps per 60 s", ylabel="mean pose error (m + rad)", title=f"accuracy ({runs_n} runs)")
    ax[1].set(xlabel="steps per 60 s", ylabel=f"CPU time, {runs_n} cars batched [s]", title="cost")
    ax[2].set(xlabel="mean pose error", ylabel="CPU time [s]", title="work vs precision")
    for a in ax:
        a.grid(True, which="both", alpha=0.3)
        a.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write_markdown(path, rows, orders, ratios, geo, step_ratio, runs_n, repeats, t_ref, args, speeds,
                   cost, model, model_geo, fam_err, n_fam, sampling, fs, run):
    """The page from one run's figures; ``run``: machine, command and minutes of the run."""
    lines = [
        "# Car: nonholonomic integrator vs RK2 / RK4 (Kobilarov, Crane & Desbrun 2009, Fig. 5)",
        "",
        f"Regenerate (about {run['minutes']:.1f} min; writes this page, `car.csv` and `car.png`):",
        "",
        f"    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python {run['command']}",
        "",
        f"Measured on {run['machine']}: times ±30 %.",
        f"The errors do not depend on the load. {runs_n} runs (RNG seed {args.seed}), best of {repeats} CPU-time",
        "measurements, methods interleaved; the protocol is in the script's docstring.",
        "",
        "One-minute runs of the `hatchback` preset driven by sinusoidal steering and torque in three families",
        "(parking, sharp turns, winding road), random seeded amplitudes, frequencies, phases and initial",
        "states, keyframed on a 0.25 s control grid (held constant over each interval), so every method and",
        "the reference integrate the same ODE with the same inputs. All three methods advance the whole",
        "batch of cars per step with numpy in the same lean style, inputs tabulated before the timer starts.",
        "VI = the explicit car update of §5.2.1 (α = ½, τ = exp); RK2 = explicit midpoint, RK4 = classical,",
        "both on the reduced Lagrange–d'Alembert equations. Reference: DOP853, rtol = atol = 1e-12",
        f"({t_ref:.0f} s). Pose error of a run: max over t = 0, 1, …, 60 s of ‖Δ(x, y)‖ [m] + |Δθ| [rad];",
        "the table gives its mean (and max) over the runs. Peak speeds per family (m/s): "
        + ", ".join(f"{k} {v:.1f}" for k, v in speeds.items()) + ".",
        "",
        "![car benchmark](car.png)",
        "",
        "| method | steps | h [s] | mean pose error | max pose error | mean position error [m] "
        "| mean heading error [rad] | blow-ups | time [s] | µs/step |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for q in rows:
        lines.append(f"| {q['method']} | {q['steps']} | {q['h']:.4g} | {q['pose_error_mean']:.3e} | "
                     f"{q['pose_error_max']:.3e} | {q['position_error_mean']:.3e} | {q['heading_error_mean']:.3e} | "
                     f"{q['blowups']} | {q['time_s']:.4f} | {q['us_per_step']:.1f} |")
    lines += ["", "## Summary", "",
              "Fitted order (slope of log error vs log h over the three smallest steps): "
              + ", ".join(f"{k} {v:.2f}" for k, v in orders.items()) + ".", ""]
    lines.append("Time at equal mean pose error, VI / baseline:")
    lines.append("")
    for k in ratios:
        pts = ", ".join(f"{q:.2f} (steps ×{nr:.2f}, at {e:.1e})" for e, q, nr in model[k])
        raw = ", ".join(f"{q:.2f}" for _, q in ratios[k])
        lines.append(f"- vs {k}: **{model_geo[k]:.2f}** (geometric mean of per-step cost ratio × step-count ratio at "
                     f"each VI point inside {k}'s error range: {pts}); directly interpolated CPU times: "
                     f"{raw or 'no overlap'} (geometric mean {geo[k]:.2f}).")
    lines.append(f"- per-step cost, {runs_n} cars batched (median of best-of-repeats over the larger runs): "
                 + ", ".join(f"{m} {1e6 * c:.1f} µs" for m, c in cost.items())
                 + f"; VI / RK2 = {step_ratio['RK2']:.2f}, VI / RK4 = {step_ratio['RK4']:.2f}.")
    lines.append(f"- mean pose error per family at {n_fam} steps: "
                 + "; ".join(f"{fam}: " + ", ".join(f"{m} {e:.2e}" for m, e in d.items()) for fam, d in fam_err.items())
                 + ".")
    fc = fs["cost"]
    lines.append(f"- one car at a time in plain Python floats (VI: `core.vehicles.car.advance_float`, the path "
                 f"`simulate` uses; RK2: the same right-hand side on floats; {fs['runs']} runs one after another, best of "
                 f"{fs['repeats']}; errors {'identical to' if fs['same_error'] else 'NOT equal to'} the batched ones): "
                 f"per car-step VI {1e6 * fc['VI'] / fs['runs']:.2f} µs, RK2 {1e6 * fc['RK2'] / fs['runs']:.2f} µs "
                 f"(VI / RK2 = {fc['VI'] / fc['RK2']:.2f}); time at equal error VI / RK2 **{fs['geo']:.2f}** ("
                 + ", ".join(f"{q:.2f} at {e:.1e}" for e, q, _ in fs["model"]) + ").")
    met = model_geo["RK2"] <= 0.6
    met_f = fs["geo"] <= 0.6
    steps_rk2 = float(np.exp(np.mean(np.log([nr for _, _, nr in model["RK2"]])))) if model["RK2"] else math.nan
    lines += ["", "The paper reports the car integrator \"as accurate as RK2 at about half the computational time\"",
              "(Fig. 5); the acceptance target here is VI/RK2 ≤ 0.6 at equal error. Measured: "
              f"**{fs['geo']:.2f} for one car (plain floats) — {'met' if met_f else 'not met'}; "
              f"{model_geo['RK2']:.2f} for {runs_n} cars batched in numpy — {'met' if met else 'not met'}**.",
              f"Both schemes are second order; the VI needs ×{steps_rk2:.2f} of RK2's steps for the same error. Per step",
              "it is one explicit update with three transcendentals against two right-hand-side evaluations with four:",
              f"on floats, where arithmetic counts, the VI costs ×{fc['VI'] / fc['RK2']:.2f} of RK2; batched, every numpy call",
              f"costs about the same whatever it does (about 33 calls against 46) and the VI costs ×{step_ratio['RK2']:.2f}.",
              "The batched per-step ratio moves with the machine's load more than the float one does, so the",
              "float figure is the one to quote.", ""]
    if sampling:
        lines += ["## Why keyframed inputs", "",
                  f"With the smooth sinusoids themselves (reference: DOP853 per run with the smooth inputs), at {n_fam} "
                  "steps, mean pose error:", ""]
        lines += [f"- {k}: {v:.2e}" for k, v in sampling.items()]
        lines += ["", "Fed the exact step averages of the inputs, the VI looks an order of magnitude better than RK2;",
                  "fed point samples like RK2, it is no better. The difference is the input, not the integrator:",
                  "midpoint-sampling a steering rate u^σ = σ̇ of frequency ω scales every steering increment by",
                  "1/sinc(ωh/2), a steering bias of O((ωh)²) that turns into a heading drift. Comparing integrators",
                  "therefore needs every method to see the same input signal, hence the keyframed protocol above.", ""]
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
