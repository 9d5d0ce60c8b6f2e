"""Johnson & Murphey 2009, §VI-C (Figs. 11–12): the scissor lift against its one-degree-of-freedom
reference (the scissor-lift tables of docs/benchmarks/tree.md).

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/scissor_lift.py --quick --md /tmp/scissor_lift.md   # 10 s, 100 s
    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/scissor_lift.py --md /tmp/scissor_lift_full.md      # 10 s, 1000 s

The lift (core.tree.examples.scissor_lift): N segments of two 1 m, 1 kg links (inertia m L²/12),
hanging from a pin at the origin and a 1 kg slider on the x axis; the links of a segment are pinned
at their centres (2N point constraints, 2N + 1 variables, one degree of freedom). Released at rest
at θ = 45° below the horizontal it swings through the vertical (θ = 90°) to 135° and back.
Reference: the 1-DOF Lagrangian of core.tree.examples.scissor_reference (derived by hand from the
geometry, not from the tree), integrated by DOP853 at rtol = atol = 1e-12 (its own error, against
rtol = 1e-10, is reported).

Measured for the midpoint VI at h = 0.01, for the same step composed as Yoshida's triple jump
(``composition = "triple_jump"``, the scenario method ``variational4``) and for classical RK4 on the
index-reduced equations at h = 0.01 and 0.001 (a run whose residual exceeds 1e-3 is reported as
diverged, and its longer runs are skipped): the period (mean spacing of the upward crossings of
θ = 90° over the first 10 s, against the reference's), the swing amplitude early and late, the phase
at the end (offset of the last crossing from the nearest reference crossing, in periods), the max
constraint residual, the energy band (max − min) and drift (mean over the last tenth − mean over the
first tenth) of T + V, CPU time and mean Newton iterations; the phase for smaller VI steps (0.008,
0.007); the 10 s runtime against the number of segments.
"""
from __future__ import annotations

import argparse
import functools
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

from core.tree import examples as ex
from core.tree import rk4, variational

H = 0.01


def reference(model, T: float, rtol: float = 1e-12):
    M, dM, V, dV = ex.scissor_reference(model.info)

    def rhs(_, y):
        return [y[1], (-0.5 * dM(y[0]) * y[1] ** 2 - dV(y[0])) / M(y[0])]

    return solve_ivp(rhs, (0, T), [model.info["theta0"], 0.0], method="DOP853", rtol=rtol, atol=rtol,
                     dense_output=True)


def crossings(t: np.ndarray, x: np.ndarray, level: float = np.pi / 2) -> np.ndarray:
    s = x - level
    i = np.flatnonzero((s[:-1] < 0) & (s[1:] >= 0))
    return t[i] - s[i] * (t[i + 1] - t[i]) / (s[i + 1] - s[i])


def swing_maxima(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Maxima of x by a parabola through each discrete local maximum."""
    i = np.flatnonzero((x[1:-1] > x[:-2]) & (x[1:-1] >= x[2:])) + 1
    a, b, c = x[i - 1], x[i], x[i + 1]
    return b + (a - c) ** 2 / (8 * (2 * b - a - c))


def analyse(model, run, ref, T_end: float) -> dict:
    s = model.system
    theta = ex.scissor_theta(model, run.q)
    t = run.time
    fine = np.arange(0.0, T_end + 1e-9, 1e-3)
    th_ref = ref.sol(fine)[0]
    c_ref, c_run = crossings(fine, th_ref), crossings(t, theta)
    P_ref = np.diff(c_ref[c_ref <= 10.0]).mean()
    P_run = np.diff(c_run[c_run <= 10.0]).mean()
    last = c_run[-1]
    phase = (last - c_ref[np.argmin(np.abs(c_ref - last))]) / P_ref
    early, late = t <= 10.0, t >= T_end - 10.0
    amp_run_early = swing_maxima(t[early], theta[early]).mean()
    amp_run_late = swing_maxima(t[late], theta[late]).mean()
    fr = fine <= 10.0
    amp_ref = swing_maxima(fine[fr], th_ref[fr]).mean()
    E = s.energy(s.kinematics(run.q, run.dq))
    n = max(1, len(E) // 10)
    return dict(P_ref=P_ref, P_err=P_run / P_ref - 1, phase=phase, amp_ref=np.degrees(amp_ref),
                amp_early=np.degrees(amp_run_early), amp_late=np.degrees(amp_run_late),
                dtheta10=float(np.max(np.abs(theta[early] - ref.sol(t[early])[0]))),
                residual=float(run.residual.max()), residual10=float(run.residual[early].max()),
                band=float(np.ptp(E)), drift=float(E[-n:].mean() - E[:n].mean()), E0=float(E[0]))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--md", help="write the markdown tables to this file")
    args = ap.parse_args(argv)
    T_long = 100.0 if args.quick else 1000.0
    m = ex.scissor_lift(segments=5)
    ref = reference(m, T_long)
    ref_loose = reference(m, T_long, 1e-10)
    t_chk = np.linspace(0, T_long, 2001)
    ref_err = float(np.max(np.abs(ref.sol(t_chk)[0] - ref_loose.sol(t_chk)[0])))
    reference_line = (f"Reference: DOP853 rtol = atol = 1e-12 over {T_long:g} s, within {ref_err:.1e} rad of the "
                      "rtol = 1e-10 solution.")
    rows = ["| method | T [s] | steps | period error (first 10 s) | phase at T [periods] | amplitude: ref / first 10 s / last 10 s [deg] "
            "| max Δθ, first 10 s [rad] | max residual: 10 s / all | energy band [J] | energy drift [J] | CPU [s] | Newton its |",
            "|---|---:|---:|---:|---:|---|---:|---|---:|---:|---:|---:|"]
    vi4 = functools.partial(variational.simulate, composition="triple_jump")
    runs = [("VI", variational.simulate, H, 10.0), ("VI", variational.simulate, H, T_long),
            ("VI4 (triple jump)", vi4, H, 10.0), ("VI4 (triple jump)", vi4, H, T_long),
            ("RK4", rk4.simulate, H, 10.0), ("RK4", rk4.simulate, H, T_long),
            ("RK4", rk4.simulate, H / 10, 10.0)] + ([] if args.quick else [("RK4", rk4.simulate, H / 10, 100.0)])
    diverged_at = {}
    for method, sim, h, T in runs:
        if diverged_at.get((method, h)):
            continue   # diverged within 10 s: the longer run is not made
        steps = int(round(T / h))
        t0 = time.process_time()
        run = sim(m.system, m.q0, m.dq0, h, steps)
        cpu = time.process_time() - t0
        bad = np.flatnonzero(run.residual > 1e-3)
        if bad.size:
            diverged_at[(method, h)] = run.time[bad[0]]
            rows.append(f"| {method}, h = {h:g} | {T:g} | {steps} | diverged: residual > 1e-3 from t = {run.time[bad[0]]:.2f} s "
                        f"(max {run.residual.max():.1e}) | | | | | | | {cpu:.1f} | |")
            print(rows[-1], flush=True)
            continue
        a = analyse(m, run, ref, T)
        its = f"{run.iterations.mean():.2f}" if run.iterations is not None else "—"
        rows.append(f"| {method}, h = {h:g} | {T:g} | {steps} | {100 * a['P_err']:+.3f} % | {a['phase']:+.4f} | "
                    f"{a['amp_ref']:.4f} / {a['amp_early']:.4f} / {a['amp_late']:.4f} | {a['dtheta10']:.2e} | "
                    f"{a['residual10']:.1e} / {a['residual']:.1e} | {a['band']:.3e} | {a['drift']:+.2e} | {cpu:.1f} | {its} |")
        print(rows[-1], flush=True)
    # step-size study of the VI's phase at T_long: the period error is O(h²)
    study = ["\n| VI step h [s] | T [s] | steps | period error (first 10 s) | phase at T [periods] | max residual "
             "| CPU [s] |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for h in (0.008, 0.007):
        steps = int(round(T_long / h))
        t0 = time.process_time()
        run = variational.simulate(m.system, m.q0, m.dq0, h, steps)
        cpu = time.process_time() - t0
        b = analyse(m, run, ref, T_long)
        study.append(f"| {h:g} | {T_long:g} | {steps} | {100 * b['P_err']:+.4f} % | {b['phase']:+.4f} | {b['residual']:.1e} | {cpu:.1f} |")
        print(study[-1], flush=True)
    a = analyse(m, variational.simulate(m.system, m.q0, m.dq0, H, 1000), ref, 10.0)
    out = [f"{reference_line} Reference period {a['P_ref']:.5f} s; E₀ = {a['E0']:.4f} J.\n"]
    out.append("\n".join(rows))
    out.append("\n".join(study))
    seg = ["\n| segments | variables | constraints | 10 s at h = 0.01: CPU [s] | µs/step | max residual |",
           "|---:|---:|---:|---:|---:|---:|"]
    for N in ([1, 2, 5] if args.quick else [1, 2, 3, 5, 8, 10]):
        mN = ex.scissor_lift(segments=N)
        t0 = time.process_time()
        run = variational.simulate(mN.system, mN.q0, mN.dq0, H, 1000)
        cpu = time.process_time() - t0
        seg.append(f"| {N} | {mN.system.tree.n} | {mN.system.m} | {cpu:.2f} | {1e6 * cpu / 1000:.0f} | {run.residual.max():.1e} |")
        print(seg[-1], flush=True)
    out.append("\n".join(seg))
    text = "\n".join(out) + "\n"
    print(text)
    if args.md:
        Path(args.md).write_text(text)


if __name__ == "__main__":
    main()
