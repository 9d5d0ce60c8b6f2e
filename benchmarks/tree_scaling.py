"""Johnson & Murphey 2009, §VI-A (Fig. 7), and the long-run energy comparison, for the tree integrator
(the tables of docs/benchmarks/tree.md).

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/tree_scaling.py --part scaling --md /tmp/tree_scaling.md
    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/tree_scaling.py --part long --md /tmp/tree_long.md
    .venv/bin/python benchmarks/tree_scaling.py --part scaling --quick       # fewer chain sizes

Part "scaling" — the N-link pendulum of §VI-A (core.tree.examples.pendulum_chain: N links of 1 m, a
1 kg mass with inertia 0.1 at the bottom of each, all aligned, the top link at 45°), 20 s at h = 0.01
(2000 steps) with the midpoint VI, for three implementations of the kinematics (identical
trajectories, checked here to 1e-12): closed (the closed-form, vectorised, cached Kinematics, the
production path); recursive (Johnson & Murphey's recursions (2)–(10), each frame from its parent's
memoised values); recursive-nocache (the same recursions recursing to the world frame for every value:
their "without caching", the dashed line of their Fig. 7). The closed runs are timed over the 2000
steps; the recursive ones over a few steps ((t(k steps) − t(1 step))/(k − 1), so set-up and output are
excluded) and extrapolated to 2000 steps (marked "≈"). CPU time: time.process_time.

Part "long" — conservative systems over 10⁵ steps at h = 0.01 (1000 s), VI against classical RK4 on
the same equations in the same generalised coordinates (core.tree.rk4: constraints index-reduced, no
stabilisation): the double pendulum, a 3-link chain, the four-bar linkage and the closed-chain device
of their Fig. 6. Reported: energy band (max − min of E), energy drift (mean of E over the last tenth
minus over the first tenth), max constraint residual, mean Newton iterations; CPU times are printed
only. Scissor lift: benchmarks/scissor_lift.py.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from core.tree import examples as ex
from core.tree import rk4, variational

H = 0.01


def _cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def per_step(model, steps: int) -> tuple[float, np.ndarray]:
    """CPU seconds per step, from runs of 1 and ``steps`` steps; and the final q of the long one."""
    t1, _ = _cpu(lambda: variational.simulate(model.system, model.q0, model.dq0, H, 1))
    tk, run = _cpu(lambda: variational.simulate(model.system, model.q0, model.dq0, H, steps))
    return max(tk - t1, 0.0) / (steps - 1), run.q[-1]


def scaling(links: list[int], total_steps: int, probe: dict[str, int], nocache_max: int) -> str:
    rows = ["| links | variables | closed: 2000 steps [s] | closed µs/step | recursive (cached) [s] | "
            "recursive, no caching [s] | no-cache / cached |",
            "|---:|---:|---:|---:|---:|---:|---:|"]
    for N in links:
        m = ex.pendulum_chain(N)
        t_closed, run = _cpu(lambda: variational.simulate(m.system, m.q0, m.dq0, H, total_steps))
        q_ref = variational.simulate(m.system, m.q0, m.dq0, H, probe["recursive"]).q[-1]
        cells = []
        ratio = ""
        per = {}
        for backend in ("recursive", "recursive-nocache"):
            if backend == "recursive-nocache" and N > nocache_max:
                cells.append("—")
                continue
            mb = ex.pendulum_chain(N, backend=backend)
            per[backend], q_end = per_step(mb, probe[backend])
            steps_b = probe[backend]
            q_closed = q_ref if steps_b == probe["recursive"] else \
                variational.simulate(m.system, m.q0, m.dq0, H, steps_b).q[-1]
            assert np.allclose(q_end, q_closed, atol=1e-12), (N, backend)
            cells.append(f"≈ {per[backend] * total_steps:.3g}")
        if len(per) == 2:
            ratio = f"{per['recursive-nocache'] / per['recursive']:.1f}"
        rows.append(f"| {N} | {m.system.tree.n} | {t_closed:.3g} | {1e6 * t_closed / total_steps:.0f} | "
                    f"{cells[0]} | {cells[1]} | {ratio} |")
        print(rows[-1], flush=True)
    return "\n".join(rows)


def _energy_stats(system, run):
    E = system.energy(system.kinematics(run.q, run.dq))
    n = max(1, len(E) // 10)
    return np.ptp(E), E[-n:].mean() - E[:n].mean(), E[0]


def long_runs(steps: int) -> str:
    systems = {"double pendulum": ex.double_pendulum(), "3-link chain": ex.pendulum_chain(3),
               "four-bar linkage": ex.four_bar(), "Fig. 6 device": ex.fig6_device()}
    rows = ["| system | method | steps | E₀ [J] | energy band [J] | energy drift [J] | max residual | Newton its |",
            "|---|---|---:|---:|---:|---:|---:|---:|"]
    for name, m in systems.items():
        for method, sim in (("VI", variational.simulate), ("RK4", rk4.simulate)):
            cpu, run = _cpu(lambda: sim(m.system, m.q0, m.dq0, H, steps))
            band, drift, E0 = _energy_stats(m.system, run)
            its = f"{run.iterations.mean():.2f}" if run.iterations is not None else "—"
            res = f"{run.residual.max():.1e}" if m.system.m else "—"
            flag = " (blew up)" if run.blew_up else ""
            rows.append(f"| {name} | {method}{flag} | {len(run.time) - 1} | {E0:.4f} | {band:.2e} | {drift:+.2e} | "
                        f"{res} | {its} |")
            print(rows[-1], f"CPU {cpu:.1f} s", flush=True)   # load-dependent: printed, not tabulated
    return "\n".join(rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=("all", "scaling", "long"), default="all")
    ap.add_argument("--quick", action="store_true", help="fewer chain sizes, 10⁴-step long runs")
    ap.add_argument("--md", help="write the markdown tables to this file")
    args = ap.parse_args(argv)
    out = []
    if args.part in ("all", "scaling"):
        links = [1, 2, 5, 10] if args.quick else [1, 2, 3, 5, 10, 15, 20, 30, 40]
        out.append("### N-link pendulum, 20 s at h = 0.01 (Fig. 7)\n")
        out.append(scaling(links, 2000, {"recursive": 6, "recursive-nocache": 3}, 10 if args.quick else 20))
    if args.part in ("all", "long"):
        steps = 10_000 if args.quick else 100_000
        label = "10⁴" if steps == 10_000 else "10⁵"
        out.append(f"\n### Conservative systems, {label} steps at h = 0.01: VI vs RK4\n")
        out.append(long_runs(steps))
    text = "\n".join(out) + "\n"
    print(text)
    if args.md:
        Path(args.md).write_text(text)


if __name__ == "__main__":
    main()
