"""Speed of the holonomic variational integrators (paper eqs. 9–10).

    .venv/bin/python benchmarks/vi_speed.py [--steps 20000] [--batch 1000] [--batch-steps 200]

One body (batch shape ()): µs per step of every VI method on the plain-float fast path, against
the generic batched-numpy 6×6 Newton path run in the same process (the in-run baseline, on fewer
steps), and their ratio. A batch of bodies: µs per body-step of the numpy component-array path.
Times are process CPU time (other processes on the machine do not count), best of a few
repeats, and include building the Trajectory. Acceptance: ≤ 15 µs per single-body step for
vi-cay and vi-cay-ln, ≤ 1 µs per body-step over 1,000 bodies. vi-cay4 takes three solves per
step; "vi-cay∘3" is the earlier vi-cay4 (triple jump of vi-cay through the generic
``substeps`` option) for comparison.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from core.integrators.common import HolonomicSystem, RigidState
from core.integrators.variational import TRIPLE_JUMP, integrate, integrate_cay4
from core.lie import so3

# "vi-cay∘3" is the triple jump of the vi-cay step through variational.integrate's generic
# ``substeps`` machinery: what vi-cay4 was before it composed vi-cay-ln with its own kernels.
METHODS = ("vi-cay", "vi-cay-ln", "vi-exp", "vi-exp-ln", "vi-exp-series", "vi-cay4", "vi-cay∘3")
DT = 0.05


def run(system, initial, steps, method, fast):
    if method == "vi-cay4":
        return integrate_cay4(system, initial, DT, steps, fast=fast)
    if method == "vi-cay∘3":
        return integrate(system, initial, DT, steps, "vi-cay", fast=fast, substeps=TRIPLE_JUMP, name="vi-cay∘3")
    return integrate(system, initial, DT, steps, method, fast=fast)


def cpu_per_step(system, initial, steps, method, fast, repeats=3):
    best = float("inf")
    tr = None
    for _ in range(repeats):
        t0 = time.process_time()
        tr = run(system, initial, steps, method, fast)
        best = min(best, time.process_time() - t0)
    return best / steps, tr


def calibrate() -> None:
    """Machine state: the per-op costs the two paths are made of (both grow with machine load)."""
    import timeit
    a, b = np.random.rand(1000), np.random.rand(1000)
    t_np = min(timeit.repeat(lambda: a * b, number=20000, repeat=5)) / 20000
    x, y = 1.1, 2.2
    t_py = min(timeit.repeat(lambda: x * y + x, number=200000, repeat=5)) / 200000
    print(f"calibration: numpy (1000,) multiply {t_np * 1e6:.2f} µs, Python float call x*y+x {t_py * 1e9:.0f} ns\n")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20000, help="steps of the single-body fast path")
    ap.add_argument("--generic-steps", type=int, default=300, help="steps of the single-body generic path")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--batch-steps", type=int, default=200)
    args = ap.parse_args(argv)

    calibrate()
    system = HolonomicSystem(np.array([3.0, 2.0, 1.0, 2.0, 2.0, 2.0]))
    initial = RigidState(so3.exp(np.array([0.3, -0.2, 0.5])), np.array([1.0, 2.0, 3.0]),
                         np.array([0.1, 2.0, 0.4]), np.array([1.0, 0.5, -0.3]))
    print(f"one body, h = {DT}: µs per step (process CPU time, best of 3)")
    print(f"{'method':14s} {'fast path':>10s} {'path':>8s} {'generic':>10s} {'speed-up':>9s} {'Newton it.':>10s}")
    for method in METHODS:
        n = args.steps if method != "vi-exp-series" else args.generic_steps
        t_fast, tr = cpu_per_step(system, initial, n, method, True)
        if tr.stats["path"] == "generic":   # no reduced kernel: the generic path is all there is
            print(f"{method:14s} {t_fast * 1e6:10.2f} {'generic':>8s} {'':>10s} {'—':>9s} "
                  f"{tr.stats['newton_iterations_mean']:10.2f}")
            continue
        t_gen, _ = cpu_per_step(system, initial, args.generic_steps, method, False, repeats=2)
        print(f"{method:14s} {t_fast * 1e6:10.2f} {tr.stats['path']:>8s} {t_gen * 1e6:10.1f} "
              f"{t_gen / t_fast:8.1f}× {tr.stats['newton_iterations_mean']:10.2f}")

    rng = np.random.default_rng(1)
    B = args.batch
    inertia = np.concatenate([rng.uniform(1, 3, (B, 3)), np.repeat(rng.uniform(1, 3, (B, 1)), 3, 1)], 1)
    init = RigidState(so3.exp(rng.normal(size=(B, 3))), rng.normal(size=(B, 3)),
                      rng.normal(size=(B, 3)), rng.normal(size=(B, 3)))
    print(f"\n{B} bodies, {args.batch_steps} steps, h = {DT}: µs per body-step (incl. Trajectory assembly)")
    for method in METHODS:
        t, tr = cpu_per_step(HolonomicSystem(inertia), init, args.batch_steps, method, True, repeats=2)
        print(f"{method:14s} {t / B * 1e6:8.3f}   ({tr.stats['path']}, Newton it. {tr.stats['newton_iterations_mean']:.2f})")


if __name__ == "__main__":
    main()
