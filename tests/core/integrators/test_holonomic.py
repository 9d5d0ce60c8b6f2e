"""The holonomic variational integrator (paper eqs. 9–10, α = 1; equations.md "Holonomic
variational integrator"): Newton Jacobians, the reduced kernels, discrete Noether identity,
scalar/batched/generic agreement, convergence orders, forces, start-up, blow-ups, dispatcher."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from core.integrators import METHODS, integrate
from core.integrators import variational as V
from core.integrators.common import GRAVITY, HolonomicSystem, RigidState
from core.integrators.variational import GAMMA1, GAMMA2, TRIPLE_JUMP, integrate_cay4
from core.integrators.variational.cay4_matrices import inverse3
from core.integrators.variational.generic import solve_batched
from core.integrators.variational.newton import accept_coefficients, newton_ln, newton_ln_continued
from core.integrators.variational.triple_jump import CENTRES, PREDICT, PREDICT_JOINT
from core.integrators.euler_poincare import reference
from core.lie import quaternion, se3, so3

RNG = np.random.default_rng(632)

# An asymmetric body tumbling near its intermediate axis, with linear velocity.
J = np.array([3.0, 2.0, 1.0])
MASS = 2.0
INERTIA = np.array([*J, MASS, MASS, MASS])
INITIAL = RigidState(R=so3.exp(np.array([0.3, -0.2, 0.5])), x=np.array([1.0, 2.0, 3.0]),
                     omega=np.array([0.1, 2.0, 0.4]), v=np.array([1.0, 0.5, -0.3]))
SYSTEM = HolonomicSystem(INERTIA)
KERNEL_METHODS = ("vi-cay", "vi-cay-ln", "vi-exp", "vi-exp-ln")


def compass_gravity_wrench(k, R, x, xi):
    """Gravity (0, Rᵀ(0, 0, −mg)) and a smooth orientation-dependent torque c (Rᵀe_z) × e₁:
    a position-dependent (conservative-like) wrench, so the forced VI step stays symmetric."""
    R = np.asarray(R)
    ez_body = R[..., 2, :]
    out = np.zeros(R.shape[:-2] + (6,))
    out[..., :3] = 0.5 * np.cross(ez_body, np.array([1.0, 0.0, 0.0]))
    out[..., 3:] = -GRAVITY * MASS * ez_body
    return out


def rel(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def fd_jacobian(f, x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """Central differences with one Richardson step (truncation O(eps⁴))."""
    x = np.asarray(x, dtype=float)
    cols = []
    for j in range(len(x)):
        e = np.zeros_like(x)
        e[j] = 1.0
        d1 = (f(x + eps * e) - f(x - eps * e)) / (2 * eps)
        d2 = (f(x + 2 * eps * e) - f(x - 2 * eps * e)) / (4 * eps)
        cols.append((4 * d1 - d2) / 3)
    return np.stack(cols, axis=-1)


def geodesic(R1: np.ndarray, R2: np.ndarray) -> float:
    return float(np.linalg.norm(so3.log(R1.T @ R2)))


# --- Newton Jacobians ------------------------------------------------------------------------

@pytest.mark.parametrize("method", V.VI_METHODS)
@pytest.mark.parametrize("h", [0.05, 0.4, 1.3])   # |hω| from the series regime to well past it
def test_full_newton_jacobian_matches_finite_differences(method, h):
    """d/dξ [C_τ(hξ)ᵀ𝕀ξ] = C(hξ)ᵀ𝕀 + h ∂_η[C(η)ᵀμ] (every pairing, general diagonal 𝕀)."""
    for _ in range(3):
        xi = RNG.normal(size=6) * np.array([1.0, 1.0, 1.0, 2.0, 2.0, 2.0])
        inertia = RNG.uniform(0.5, 3.0, 6)
        Jac = V.momentum_map_jacobian(method, h, xi, inertia)
        ref = fd_jacobian(lambda z: V.momentum_map(method, h, z, inertia), xi)
        assert rel(Jac, ref) < 1e-8, (method, h, rel(Jac, ref))


@pytest.mark.parametrize("method", KERNEL_METHODS)
@pytest.mark.parametrize("h", [0.05, 0.4, 1.3])
def test_reduced_newton_jacobian_matches_finite_differences(method, h):
    """The 3×3 Jacobian of the reduced (M = m I₃, linear block eliminated) residual G(ω)."""
    for _ in range(3):
        w = RNG.normal(size=3)
        Jb = RNG.uniform(0.5, 3.0, 3)
        m = RNG.uniform(0.5, 3.0)
        b = RNG.normal(size=6) * 3
        G, Jac = V.reduced_residual(method, h, w, Jb, m, b)
        ref = fd_jacobian(lambda z: V.reduced_residual(method, h, z, Jb, m, b)[0], w)
        assert rel(Jac, ref) < 1e-8, (method, h, rel(Jac, ref))


@pytest.mark.parametrize("method", KERNEL_METHODS)
def test_reduced_kernel_solves_the_full_equations(method):
    """At a true solution ξ of C(hξ)ᵀ𝕀ξ = b the reduced residual vanishes, and the kernel's
    m v, μ⁺ = C(−hξ)ᵀ𝕀ξ and step τ(hξ) equal the generic 6×6 maps."""
    pairing = V.PAIRINGS[method]
    for h in (0.05, 0.7):
        xi = RNG.normal(size=6)
        b = V.momentum_map(method, h, xi, INERTIA)
        G, _ = V.reduced_residual(method, h, xi[:3], J, MASS, b)
        assert np.max(np.abs(G)) < 1e-13 * np.max(np.abs(b))
        p, mu_plus, q_step, t = V.reduced_finish(method, h, xi[:3], J, MASS, b[3:])
        assert rel(p, MASS * xi[3:]) < 1e-14
        assert rel(mu_plus, V.momentum_map(method, -h, xi, INERTIA)) < 1e-14
        Q, t_ref = pairing.tau(h * xi)
        assert rel(quaternion.to_matrix(q_step), Q) < 1e-14
        assert abs(np.linalg.norm(q_step) - 1) < 1e-15
        assert rel(t, t_ref) < 1e-14


def test_pairings_use_the_seed_maps():
    """τ of each pairing is the se3 map the brief names (cay, cay_paper, exp)."""
    for _ in range(3):
        eta = RNG.normal(size=6)
        for method, tau in [("vi-cay", se3.cay), ("vi-cay-ln", se3.cay_paper), ("vi-exp", se3.exp),
                            ("vi-exp-ln", se3.exp), ("vi-exp-series", se3.exp)]:
            Q, t = V.PAIRINGS[method].tau(eta)
            assert rel(se3.make(Q, t), tau(eta)) < 1e-14


def test_exp_coefficients_match_high_precision_reference():
    """sinc, cosc, k1, k4, k5 (scalar and array) against exact series / 120-digit values."""
    from tests.core.lie.references import coefficient_reference
    names = ("sinc", "cosc", "k1", "k4", "k5")
    grid = [0.0, 1e-10, 1e-4, 0.01, 0.2499, 0.25, 0.2501, 0.7, 1.0, 2.0, 4.0, 9.0, 16.0]
    arr = V.exp_coefficients_array(np.array(grid))
    for i, t2 in enumerate(grid):
        sc = V.exp_coefficients_scalar(t2)
        for j, n in enumerate(names):
            ref = coefficient_reference(n, t2)
            assert abs(sc[j] - ref) <= 2e-12 * abs(ref), (n, t2, sc[j], ref)
            assert abs(arr[j][i] - sc[j]) <= 1e-15 * abs(ref), (n, t2)
        th = math.sqrt(t2)
        assert abs(sc[9] - math.cos(th / 2)) < 1e-15
        assert abs(sc[10] - (0.5 if th == 0 else math.sin(th / 2) / th)) < 1e-15


def test_exp_coefficient_derivatives_match_exact_series():
    """dcosc, dk1, dk4, dk5 = d/dθ² of cosc, k1, k4, k5 (series and direct branches) against the
    exact rational Taylor series (26 terms; converges for θ < 2π) differentiated term by term."""
    from fractions import Fraction

    from tests.core.lie.references import EXACT_SERIES
    for t2 in (1e-3, 0.1, 0.2499, 0.2501, 0.6, 1.5, 5.0, 9.0):
        co = V.exp_coefficients_scalar(t2)
        x = Fraction(t2)
        for name, dj in (("cosc", 5), ("k1", 6), ("k4", 7), ("k5", 8)):
            ref = float(sum(k * c * x ** (k - 1) for k, c in enumerate(EXACT_SERIES[name]) if k))
            # the Jacobian only needs a few digits; the direct formulas lose ~1e-9 near θ = 0.5
            assert abs(co[dj] - ref) <= 1e-8 * abs(ref), (t2, name, co[dj], ref)


# --- discrete Noether ------------------------------------------------------------------------

@pytest.mark.parametrize("method", V.VI_METHODS)
def test_discrete_noether_identity(method):
    """C(−ξ)ᵀ = Ad_{τ(ξ)}ᵀ C(ξ)ᵀ holds for the consistent pairings (spatial momentum conserved)
    and fails for the approximate ones."""
    pairing = V.PAIRINGS[method]
    worst = 0.0
    for _ in range(5):
        xi = RNG.normal(size=6) * 0.8
        lhs = pairing.C(-xi).T
        rhs = se3.Ad(se3.make(*pairing.tau(xi))).T @ pairing.C(xi).T
        worst = max(worst, float(np.max(np.abs(lhs - rhs))))
    if pairing.conserves_momentum:
        assert worst < 1e-14, worst
    else:
        assert worst > 1e-3, worst


# --- agreement of the three implementations ----------------------------------------------------

@pytest.mark.parametrize("method", KERNEL_METHODS + ("vi-cay4",))
@pytest.mark.parametrize("forced", [False, True])
def test_scalar_path_equals_batched_and_generic_paths(method, forced):
    """Plain-float path (batch ()), numpy path (batch (1,)) and generic 6×6 path. vi-cay4 has
    two numpy paths for a free body: the three sub-steps solved jointly, and one after another
    (the one a wrench uses); both are checked."""
    wrench = compass_gravity_wrench if forced else None

    def run(initial, system, fast, **kw):
        if method == "vi-cay4":
            return integrate_cay4(system, initial, 0.05, 100, wrench, fast=fast, **kw)
        return V.integrate(system, initial, 0.05, 100, method, wrench, fast=fast)

    one = run(INITIAL, SYSTEM, True)
    assert one.stats["path"] == "scalar"
    b1 = RigidState(INITIAL.R[None], INITIAL.x[None], INITIAL.omega[None], INITIAL.v[None])
    batched = run(b1, SYSTEM, True)
    assert batched.stats["path"] == "batch"
    generic = run(INITIAL, SYSTEM, False)
    assert generic.stats["path"] == "generic"
    others = [batched, generic]
    if method == "vi-cay4" and not forced:
        others.append(run(b1, SYSTEM, True, joint=False))
    for other in others:
        for key in ("position", "orientation", "angular_velocity", "linear_velocity",
                    "momentum_angular", "momentum_linear"):
            a = np.asarray(getattr(one, key))
            b = np.asarray(getattr(other, key)).reshape(a.shape)
            assert rel(a, b) < 1e-12, (method, key, other.stats["path"], rel(a, b))


@pytest.mark.parametrize("method", ["vi-cay", "vi-exp", "vi-exp-series", "vi-cay4"])
def test_batched_equals_loop_of_singles(method):
    B = 5
    inertia = np.concatenate([RNG.uniform(0.5, 3, (B, 3)), np.repeat(RNG.uniform(1, 3, (B, 1)), 3, 1)], 1)
    init = RigidState(so3.exp(RNG.normal(size=(B, 3))), RNG.normal(size=(B, 3)),
                      RNG.normal(size=(B, 3)), RNG.normal(size=(B, 3)))
    tb = integrate(HolonomicSystem(inertia), init, 0.04, 60, method)
    assert tb.position.shape == (61, B, 3) and tb.orientation.shape == (61, B, 4)
    for i in range(B):
        ti = integrate(HolonomicSystem(inertia[i]), RigidState(init.R[i], init.x[i], init.omega[i], init.v[i]),
                       0.04, 60, method)
        for key in ("position", "orientation", "angular_velocity", "linear_velocity", "momentum_angular"):
            assert rel(getattr(tb, key)[:, i], getattr(ti, key)) < 1e-12, (method, key, i)


def test_vi_cay4_large_batch_equals_singles():
    """Above JOINT_MAX_BATCH bodies a free batch runs sub-step after sub-step by default, and the
    joint path (on request) inverts its 3×3 blocks by their adjugate (elementwise) instead of
    LAPACK; both equal the single-body float path."""
    B = V.JOINT_MAX_BATCH + 6
    inertia = np.concatenate([RNG.uniform(0.5, 3, (B, 3)), np.repeat(RNG.uniform(1, 3, (B, 1)), 3, 1)], 1)
    init = RigidState(so3.exp(RNG.normal(size=(B, 3))), RNG.normal(size=(B, 3)),
                      RNG.normal(size=(B, 3)), RNG.normal(size=(B, 3)))
    for joint in (None, True):
        tb = integrate_cay4(HolonomicSystem(inertia), init, 0.04, 30, joint=joint)
        for i in (0, 33, B - 1):
            ti = integrate(HolonomicSystem(inertia[i]), RigidState(init.R[i], init.x[i], init.omega[i], init.v[i]),
                           0.04, 30, "vi-cay4")
            for key in ("position", "orientation", "angular_velocity", "linear_velocity", "momentum_angular"):
                assert rel(getattr(tb, key)[:, i], getattr(ti, key)) < 1e-12, (joint, key, i)
    A = RNG.normal(size=(2, 5, 3, 3))
    assert rel(inverse3(A.reshape(2, 5, 9)), np.linalg.inv(A)) < 1e-12


def test_batched_linear_solver_matches_lapack():
    """The batch-vectorised Gaussian elimination (partial pivoting) used for B > 8 systems."""
    A = RNG.normal(size=(40, 6, 6))
    A[:5, 0, 0] = 0.0          # needs a row swap
    A[5:10] += 50 * np.eye(6)  # diagonally dominant
    b = RNG.normal(size=(40, 6))
    x = solve_batched(A, b)
    assert rel(x, np.linalg.solve(A, b[..., None])[..., 0]) < 1e-11


def test_batched_linear_solver_small_stack_with_a_singular_system():
    """LAPACK raises on a singular matrix in a small stack; the Newton loop needs non-finite rows there
    (its blow-up check) and the other systems solved."""
    A = RNG.normal(size=(3, 6, 6)) + 10 * np.eye(6)
    A[1] = 0.0
    b = RNG.normal(size=(3, 6))
    with np.errstate(all="ignore"):
        x = solve_batched(A, b)
    assert not np.isfinite(x[1]).all()
    for i in (0, 2):
        assert rel(x[i], np.linalg.solve(A[i], b[i])) < 1e-12


def test_large_batch_generic_path_equals_singles():
    """vi-exp-series has no reduced kernel: 12 bodies go through the generic path's own solver."""
    B = 12
    inertia = np.concatenate([RNG.uniform(0.5, 3, (B, 3)), np.repeat(RNG.uniform(1, 3, (B, 1)), 3, 1)], 1)
    init = RigidState(so3.exp(RNG.normal(size=(B, 3))), RNG.normal(size=(B, 3)),
                      RNG.normal(size=(B, 3)), RNG.normal(size=(B, 3)))
    tb = integrate(HolonomicSystem(inertia), init, 0.05, 15, "vi-exp-series")
    for i in (0, 7, 11):
        ti = integrate(HolonomicSystem(inertia[i]), RigidState(init.R[i], init.x[i], init.omega[i], init.v[i]),
                       0.05, 15, "vi-exp-series")
        assert rel(tb.position[:, i], ti.position) < 1e-12 and rel(tb.orientation[:, i], ti.orientation) < 1e-12


def test_anisotropic_translational_inertia_uses_generic_path():
    """M ≠ m I₃ is outside the reduced kernels; the generic 6×6 Newton handles it (and conserves)."""
    system = HolonomicSystem(np.array([3.0, 2.0, 1.0, 1.0, 2.0, 3.0]))
    tr = V.integrate(system, INITIAL, 0.05, 200, "vi-cay")
    assert tr.stats["path"] == "generic" and not tr.stats["blew_up"]
    L, P = tr.momentum_angular, tr.momentum_linear
    assert rel(L, np.broadcast_to(L[0], L.shape)) < 1e-12
    assert rel(P, np.broadcast_to(P[0], P.shape)) < 1e-12


def test_start_up_rule_node0_is_the_initial_state():
    """m_0 = 𝕀ξ(0): node 0 carries ξ(0) exactly, and the scheme is second order from the start
    (a first step taken with ξ₀ = ξ(0) would be first order: tested by the order fits below)."""
    for method in ("vi-cay", "vi-exp-series", "vi-cay4", "rk4"):
        tr = integrate(SYSTEM, INITIAL, 0.1, 3, method)
        assert np.array_equal(tr.angular_velocity[0], INITIAL.omega)
        assert np.array_equal(tr.linear_velocity[0], INITIAL.v)
        assert np.array_equal(tr.position[0], INITIAL.x)
        assert rel(quaternion.to_matrix(tr.orientation[0]), INITIAL.R) < 1e-15
    # one step: the solved ξ₀ is not ξ(0), but node 1 is O(h³) close to the exact flow
    ref = reference(SYSTEM, INITIAL, 0.01, 1)
    errs = []
    for h in (0.02, 0.01):
        tr = integrate(SYSTEM, INITIAL, h, 1, "vi-cay")
        ref = reference(SYSTEM, INITIAL, h, 1)
        errs.append(np.linalg.norm(tr.position[-1] - ref.position[-1]))
    assert 2.6 < math.log2(errs[0] / errs[1]) < 3.4, errs


# --- convergence orders ----------------------------------------------------------------------

T_ORDER = 2.0


def final_error(tr, ref) -> float:
    """Final-pose error: position distance + rotation angle."""
    return (float(np.linalg.norm(tr.position[-1] - ref.position[-1]))
            + geodesic(quaternion.to_matrix(ref.orientation[-1]), quaternion.to_matrix(tr.orientation[-1])))


def fitted_order(method: str, hs, ref_fn, system=SYSTEM, initial=INITIAL) -> tuple[float, list]:
    errs = []
    for h in hs:
        n = int(round(T_ORDER / h))
        tr = integrate(system, initial, h, n, method)
        assert not tr.stats["blew_up"]
        errs.append(final_error(tr, ref_fn(h, n)))
    slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    return float(slope), errs


@pytest.fixture(scope="module")
def free_reference():
    cache = {}

    def get(h, n):
        if (h, n) not in cache:
            cache[(h, n)] = reference(SYSTEM, INITIAL, h, n, rtol=1e-12, atol=1e-12)
        return cache[(h, n)]
    return get


@pytest.mark.parametrize("method,order,hs", [
    ("vi-cay", 2, (0.04, 0.02, 0.01)),
    ("vi-cay-ln", 2, (0.04, 0.02, 0.01)),
    ("vi-exp", 2, (0.04, 0.02, 0.01)),
    ("vi-exp-ln", 2, (0.04, 0.02, 0.01)),
    ("vi-exp-series", 2, (0.04, 0.02, 0.01)),
    ("vi-cay4", 4, (0.1, 0.05, 0.025)),
])
def test_convergence_order_torque_free(method, order, hs, free_reference):
    slope, errs = fitted_order(method, hs, free_reference)
    print(f"\n{method}: final-pose errors {['%.2e' % e for e in errs]} at h = {hs}; fitted order {slope:.3f}")
    assert abs(slope - order) < 0.2, (slope, errs)


def continuous_forced_reference(T: float) -> tuple[np.ndarray, np.ndarray]:
    """DOP853 on J ω̇ = Jω × ω + τ(R), m v̇ = m v × ω + F(R), Ṙ = R ω̂, ẋ = R v (wrench continuous)."""
    def rhs(_t, y):
        R = y[:9].reshape(3, 3)
        w, v = y[12:15], y[15:18]
        f = compass_gravity_wrench(0, R, y[9:12], y[12:])
        dw = (np.cross(J * w, w) + f[:3]) / J
        dv = np.cross(v, w) + f[3:] / MASS
        return np.concatenate([(R @ so3.hat(w)).ravel(), R @ v, dw, dv])
    y0 = np.concatenate([INITIAL.R.ravel(), INITIAL.x, INITIAL.omega, INITIAL.v])
    sol = solve_ivp(rhs, (0, T), y0, method="DOP853", rtol=1e-12, atol=1e-12)
    y = sol.y[:, -1]
    return y[:9].reshape(3, 3), y[9:12]


@pytest.mark.parametrize("method,order,hs", [
    ("vi-cay", 2, (0.04, 0.02, 0.01)),
    ("vi-cay-ln", 2, (0.04, 0.02, 0.01)),
    ("vi-exp", 2, (0.04, 0.02, 0.01)),
    ("vi-cay4", 4, (0.025, 0.0125, 0.00625)),
])
def test_convergence_order_with_gravity_and_torque(method, order, hs):
    """The half-kick start keeps the forced scheme second order (fourth for vi-cay4).

    One second only: the falling body gains speed, and vi-cay / vi-exp couple the rotation to
    the linear momentum at O(h² m|v|²/J) (see test_rotation_of_a_falling_body), which delays
    the asymptotic regime of vi-cay4 at larger h.
    """
    T = 1.0
    R_ref, x_ref = continuous_forced_reference(T)
    errs = []
    for h in hs:
        tr = integrate(SYSTEM, INITIAL, h, int(round(T / h)), method, compass_gravity_wrench)
        errs.append(np.linalg.norm(tr.position[-1] - x_ref)
                    + geodesic(R_ref, quaternion.to_matrix(tr.orientation[-1])))
    slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    print(f"\n{method} forced: errors {['%.2e' % e for e in errs]}; fitted order {slope:.3f}")
    assert abs(slope - order) < 0.25, (slope, errs)


def test_per_step_wrench_matches_zero_order_hold_to_second_order():
    """A wrench array (piecewise-constant controls) acts like the zero-order hold of the reference."""
    T = 1.0
    errs, hs = [], (0.04, 0.02, 0.01)
    for h in hs:
        n = int(round(T / h))
        t = h * np.arange(n)
        W = np.stack([np.sin(3 * t), 0.5 * np.cos(2 * t), 0.2 + 0 * t, np.cos(t), -np.sin(t), 0.3 + 0 * t], -1)
        tr = integrate(SYSTEM, INITIAL, h, n, "vi-cay", W)
        ref = reference(SYSTEM, INITIAL, h, n, W, rtol=1e-12, atol=1e-12)
        errs.append(final_error(tr, ref))
    slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    assert abs(slope - 2) < 0.25, (slope, errs)


# --- vi-cay4: the triple jump of the vi-cay-ln step ------------------------------------------

def batch1(state: RigidState) -> RigidState:
    return RigidState(state.R[None], state.x[None], state.omega[None], state.v[None])


def test_vi_cay4_composes_the_symmetric_cay_paper_step():
    """τ = se3.cay_paper satisfies τ(−η) = τ(η)⁻¹ (so the vi-cay-ln step is symmetric and the
    triple jump of order 4), and vi-cay4's generic path is vi-cay-ln with substeps = TRIPLE_JUMP."""
    for _ in range(5):
        eta = RNG.normal(size=6) * 1.5
        assert rel(se3.cay_paper(-eta) @ se3.cay_paper(eta), np.eye(4)) < 1e-14
    assert V.KERNEL == "vi-cay-ln" and TRIPLE_JUMP == (GAMMA1, GAMMA2, GAMMA1)
    a = integrate_cay4(SYSTEM, INITIAL, 0.05, 40, compass_gravity_wrench, fast=False)
    b = V.integrate(SYSTEM, INITIAL, 0.05, 40, "vi-cay-ln", compass_gravity_wrench, fast=False,
                    substeps=TRIPLE_JUMP)
    assert rel(a.position, b.position) == 0.0 and rel(a.orientation, b.orientation) == 0.0


@pytest.mark.parametrize("path", ["scalar", "joint", "sequential", "generic"])
def test_vi_cay4_is_reversible(path):
    """Symmetric step, even kinetic energy: N steps, velocities flipped at the last node, N more
    steps return to the start (round-off grows ~e^{λt} on this body near its unstable axis)."""
    n, h = 60, 0.05

    def run(state):
        if path == "scalar":
            return integrate_cay4(SYSTEM, state, h, n)
        if path == "generic":
            return integrate_cay4(SYSTEM, state, h, n, fast=False)
        tr = integrate_cay4(SYSTEM, batch1(state), h, n, joint=path == "joint")
        return dataclasses.replace(tr, **{k: getattr(tr, k)[:, 0] for k in (
            "position", "orientation", "angular_velocity", "linear_velocity")})

    fwd = run(INITIAL)
    back = run(RigidState(quaternion.to_matrix(fwd.orientation[-1]), fwd.position[-1],
                          -fwd.angular_velocity[-1], -fwd.linear_velocity[-1]))
    assert np.max(np.abs(back.position[-1] - INITIAL.x)) < 1e-11
    assert geodesic(quaternion.to_matrix(back.orientation[-1]), INITIAL.R) < 1e-11
    assert np.max(np.abs(back.angular_velocity[-1] + INITIAL.omega)) < 1e-11
    assert np.max(np.abs(back.linear_velocity[-1] + INITIAL.v)) < 1e-11


def test_newton_error_bound_of_the_fast_termination():
    """After a Newton update d₁ (Jacobian A₀ at the guess) the error left e satisfies
    eᵀJe ≤ kc D₁², and after a chord update d₂ with A₀, eᵀJe ≤ kc D₁ D₂ (D = dᵀJd,
    kc = 2h²J_max/J_min², newton.accept_coefficients), for (h/2)|ω|J_max/J_min ≤ 2:
    random bodies, steps (γ₂ < 0 too), solutions and guess errors 1e-8…1e-2."""
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(400):
        Jb = rng.uniform(1.0, 5.0, 3)
        w_true = rng.normal(size=3) * rng.uniform(0.3, 3.0)
        h = float(rng.choice([0.01, 0.05, 0.1, 0.2, 0.5])) * float(rng.choice([1.0, GAMMA2]))
        if 0.5 * abs(h) * np.linalg.norm(w_true) * Jb.max() / Jb.min() > 2.0:
            continue
        b = V.momentum_map("vi-cay-ln", h, np.concatenate([w_true, np.zeros(3)]), np.array([*Jb, 2.0, 2.0, 2.0]))
        w0 = w_true + 10 ** rng.uniform(-8, -2) * np.linalg.norm(w_true) * rng.normal(size=3)
        G0, A0 = V.reduced_residual("vi-cay-ln", h, w0, Jb, 2.0, b)
        d1 = np.linalg.solve(A0, G0)
        G1, _ = V.reduced_residual("vi-cay-ln", h, w0 - d1, Jb, 2.0, b)
        d2 = np.linalg.solve(A0, G1)
        kc = accept_coefficients(Jb, [h])[0]
        E = lambda e: float(e @ (Jb * e))  # noqa: E731
        floor = 1e-28 * E(w_true)          # below this the "error" is round-off
        e1, e2 = E(w0 - d1 - w_true), E(w0 - d1 - d2 - w_true)
        if e1 > floor:
            worst = max(worst, e1 / (kc * E(d1) ** 2))
        if e2 > floor:
            worst = max(worst, e2 / (kc * E(d1) * E(d2)))
    assert 1e-4 < worst <= 1.0, worst


def test_continuation_in_h_rescues_a_failed_newton_solve():
    """Large |hω|: Newton from J⁻¹b cycles without converging, continuation in h from h = 0 (where
    ω = J⁻¹b) reaches a root of G(ω) = Jω + (h/2) ω × Jω − b (checked directly)."""
    b = np.array([1.363163023868537, 9.716203552861385, 0.767371611753955])
    Jb = np.array([4.83391729294661, 1.3388614149853901, 1.2850751409063554])
    hh = 1.1885096882171342
    kc = accept_coefficients(Jb, [2 * hh])[0]
    tolE = 1e-32 * float(np.sum(b * b / Jb))
    assert newton_ln(*(b / Jb), *b, *Jb, hh, kc, tolE, False)[5] == 0.0
    w1, w2, w3, _, _, ok = newton_ln_continued(*b, *Jb, hh, kc, tolE, False)
    w = np.array([w1, w2, w3])
    assert ok == 1.0 and np.max(np.abs(Jb * w + hh * np.cross(w, Jb * w) - b)) < 1e-14 * np.max(np.abs(b))


def test_fast_termination_agrees_with_strict_newton():
    """Accept-after-update (error bound below round-off) against full Newton to |δ| ≤ NEWTON_TOL:
    the same trajectory to ~1e-13, with fewer Newton updates, on every path."""
    for initial, kw in ((INITIAL, {}), (batch1(INITIAL), {}), (batch1(INITIAL), {"joint": False})):
        for wrench in (None, compass_gravity_wrench):
            fast = integrate_cay4(SYSTEM, initial, 0.04, 100, wrench, **kw)
            strict = integrate_cay4(SYSTEM, initial, 0.04, 100, wrench, strict=True, **kw)
            for key in ("position", "orientation", "angular_velocity", "linear_velocity"):
                assert rel(getattr(fast, key), getattr(strict, key)) < 1e-13, (kw, key, rel(getattr(fast, key), getattr(strict, key)))
            assert fast.stats["newton_iterations_mean"] < 0.8 * strict.stats["newton_iterations_mean"]


def test_vi_cay4_predictor_is_exact_for_degree_six_data():
    """The guesses extrapolate each sub-step's ω (degree 4) and correct by the error the other
    sub-steps just made, linear in time: exact when ω_j(k) = f(t_k + c_j h) for a polynomial f of
    degree ≤ 6 (quartic error h⁵f⁽⁵⁾ + O(h⁶) linear in t). Both the sequential and the joint weights."""
    coef = RNG.normal(size=(7, 3))
    f = lambda t: sum(c * t**i for i, c in enumerate(coef))  # noqa: E731
    c = CENTRES
    for k in range(7, 14):
        H7 = np.zeros((7, 3, 3))
        for lag in range(7):
            for j in range(3):
                H7[(k - lag) % 7, j] = f(0.1 * (k - lag + c[j]))
        flat = H7.reshape(21, 3)
        for j in range(3):
            want = f(0.1 * (k + c[j]))
            H_seq = H7.copy()
            H_seq[k % 7, 0] = f(0.1 * (k + c[0]))    # sub-step 1 of step k is solved first
            assert rel(PREDICT[k % 7, j] @ H_seq.reshape(21, 3), want) < 1e-10
            if j == 0:
                H_seq[k % 7, 0] = 0.0
            assert rel(PREDICT_JOINT[k % 7, j] @ np.where(np.arange(21)[:, None] // 3 == k % 7, 0.0, flat), want) < 1e-10


# --- forces ----------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["vi-cay", "vi-cay-ln", "vi-exp", "vi-exp-ln", "vi-exp-series", "vi-cay4"])
def test_dropped_body_falls_exactly(method):
    """No rotation, constant gravity: x(t) = x₀ + v₀t − ½gt² ẑ and v(t) = v₀ − gt ẑ at every node."""
    gravity = lambda k, R, x, xi: np.concatenate([np.zeros(3), -GRAVITY * MASS * np.asarray(R)[2]])  # noqa: E731
    init = RigidState(np.eye(3), np.array([0.0, 0.0, 10.0]), np.zeros(3), np.array([1.0, -0.5, 2.0]))
    tr = integrate(HolonomicSystem(INERTIA, gravity), init, 0.05, 40, method)
    t = tr.time[:, None]
    ez = np.array([0.0, 0.0, 1.0])
    assert np.max(np.abs(tr.position - (init.x + init.v * t - 0.5 * GRAVITY * t**2 * ez))) < 1e-12
    assert np.max(np.abs(tr.linear_velocity - (init.v - GRAVITY * t * ez))) < 1e-12
    assert np.max(np.abs(tr.angular_velocity)) == 0.0


def test_tumbling_body_under_gravity_linear_momentum_balance():
    """With gravity only, the world linear momentum changes by exactly −m g h ẑ per step."""
    gravity = lambda k, R, x, xi: np.concatenate([np.zeros(3), -GRAVITY * MASS * np.asarray(R)[2]])  # noqa: E731
    for method in ("vi-cay", "vi-cay-ln", "vi-exp", "vi-cay4"):
        tr = integrate(HolonomicSystem(INERTIA, gravity), INITIAL, 0.05, 200, method)
        P_expected = tr.momentum_linear[0] - MASS * GRAVITY * tr.time[:, None] * np.array([0, 0, 1.0])
        assert rel(tr.momentum_linear, P_expected) < 1e-13, method


def test_rotation_of_a_falling_body():
    """Gravity acts through the centre of mass, so the exact rotation ignores it. vi-cay-ln and
    vi-exp-ln (C = I − ½ ad with M = m I₃: the angular equation (I + (h/2)ω̂)Jω = b^ω has no v in it)
    reproduce the torque-free rotation exactly, and so does vi-cay4 (composed of vi-cay-ln). vi-cay and vi-exp (exact SE(3) tangent maps)
    couple spin and linear momentum through (h²/4) m v × (ω × v): their rotation error grows
    with the speed, O(h² m|v|²/J) relative per step (measured and printed here)."""
    gravity = lambda k, R, x, xi: np.concatenate([np.zeros(3), -GRAVITY * MASS * np.asarray(R)[2]])  # noqa: E731
    n, h = 200, 0.02
    dev = {}
    for method in ("vi-cay", "vi-cay-ln", "vi-exp", "vi-exp-ln", "vi-cay4"):
        free = integrate(SYSTEM, INITIAL, h, n, method)
        fall = integrate(HolonomicSystem(INERTIA, gravity), INITIAL, h, n, method)
        dev[method] = max(geodesic(quaternion.to_matrix(a), quaternion.to_matrix(b))
                          for a, b in zip(free.orientation, fall.orientation))
    print("\nrotation change caused by gravity over 4 s at h = 0.02 (rad):",
          {k: f"{v:.1e}" for k, v in dev.items()})
    assert dev["vi-cay-ln"] < 1e-12 and dev["vi-exp-ln"] < 1e-12 and dev["vi-cay4"] < 1e-12
    assert dev["vi-cay"] > 1e-4 and dev["vi-exp"] > 1e-4


def test_system_wrench_and_call_wrench_add():
    n = 30
    W = RNG.normal(size=(n, 6))
    sysw = HolonomicSystem(INERTIA, lambda k, R, x, xi: np.array([0.1, 0, 0, 0, 0.2, 0]))
    a = integrate(sysw, INITIAL, 0.05, n, "vi-cay", W)
    b = integrate(SYSTEM, INITIAL, 0.05, n, "vi-cay", W + np.array([0.1, 0, 0, 0, 0.2, 0]))
    assert rel(a.position, b.position) < 1e-14 and rel(a.angular_velocity, b.angular_velocity) < 1e-14


# --- blow-ups ----------------------------------------------------------------------------------

@pytest.mark.parametrize("method", V.VI_METHODS + ("vi-cay4",))
@pytest.mark.parametrize("fast", [True, False])
def test_absurd_step_is_bounded_or_flagged_never_nan(method, fast):
    init = RigidState(np.eye(3), np.zeros(3), np.array([300.0, -200.0, 500.0]), np.array([1e3, 0.0, 0.0]))
    if method == "vi-cay4":
        tr = integrate_cay4(SYSTEM, init, 3.0, 50, fast=fast)
    else:
        tr = V.integrate(SYSTEM, init, 3.0, 50, method, fast=fast)
    for key in ("position", "orientation", "angular_velocity", "linear_velocity",
                "momentum_angular", "momentum_linear"):
        assert np.all(np.isfinite(getattr(tr, key))), key
    assert len(tr.time) == (tr.stats["last_good_node"] + 1 if tr.stats["blew_up"] else 51)
    assert tr.stats["blew_up"] or np.max(np.abs(tr.angular_velocity)) < V.XI_LIMIT
    tr.to_json()  # refuses NaN/inf


@pytest.mark.parametrize("method", ["vi-cay", "vi-exp", "vi-exp-series", "vi-cay4"])
def test_nan_wrench_blows_up_at_that_step(method):
    def bad(k, R, x, xi):
        return np.full(6, np.nan) if k == 5 else np.zeros(6)
    tr = integrate(SYSTEM, INITIAL, 0.05, 20, method, bad)
    assert tr.stats["blew_up"] and len(tr.time) == 6 and tr.stats["last_good_node"] == 5
    assert np.all(np.isfinite(tr.position)) and np.all(np.isfinite(tr.angular_velocity))


def test_malformed_wrench_is_an_error_not_a_blow_up():
    with pytest.raises((TypeError, ValueError)):
        integrate(SYSTEM, INITIAL, 0.05, 5, "vi-cay", lambda k, R, x, xi: np.zeros(5))


@pytest.mark.parametrize("method", ["vi-cay", "vi-exp-series"])
def test_batched_blow_up_freezes_only_that_body(method):
    B = 3

    def bad(k, R, x, xi):
        f = np.zeros((B, 6))
        if k >= 4:
            f[1] = np.inf
        return f
    init = RigidState(np.broadcast_to(INITIAL.R, (B, 3, 3)), np.zeros((B, 3)),
                      np.broadcast_to(INITIAL.omega, (B, 3)), np.broadcast_to(INITIAL.v, (B, 3)))
    tr = integrate(SYSTEM, init, 0.05, 10, method, bad)
    assert tr.stats["blew_up"] and tr.stats["blew_up_per_body"] == [False, True, False]
    assert tr.stats["last_good_node"] == [10, 4, 10]
    assert len(tr.time) == 11 and np.all(np.isfinite(tr.position))
    assert np.all(tr.position[5:, 1] == tr.position[4, 1])        # frozen at its last good node
    assert rel(tr.position[:, 0], tr.position[:, 2]) < 1e-15        # the others carry on


# --- dispatcher ----------------------------------------------------------------------------------

def test_methods_contract():
    assert METHODS == ("vi-cay", "vi-cay-ln", "vi-exp", "vi-exp-ln", "vi-exp-series", "vi-cay4",
                       "rk2", "rk2i", "rk4", "lie-newmark", "lie-euler",
                       "magnus", "cg2", "cg3", "cg4", "cf2", "cf3", "cf4", "mk2", "mk3", "mk4")
    assert abs(2 * GAMMA1 + GAMMA2 - 1) < 1e-15 and abs(2 * GAMMA1**3 + GAMMA2**3) < 1e-15


def test_unknown_method_names_it_and_lists_valid_ones():
    with pytest.raises(ValueError) as e:
        integrate(SYSTEM, INITIAL, 0.1, 3, "euler")
    assert "'euler'" in str(e.value) and all(m in str(e.value) for m in METHODS)
    for bad in (dict(dt=0.0), dict(dt=float("nan")), dict(steps=-1), dict(steps=2.5)):
        kw = dict(dt=0.1, steps=3) | bad
        with pytest.raises(ValueError):
            integrate(SYSTEM, INITIAL, kw["dt"], kw["steps"], "vi-cay")


@pytest.mark.parametrize("method", METHODS)
def test_every_method_single_and_batch(method):
    tr = integrate(SYSTEM, INITIAL, 0.05, 8, method)
    assert tr.position.shape == (9, 3) and tr.orientation.shape == (9, 4)
    assert tr.momentum_angular.shape == (9, 3)
    B = 2
    init = RigidState(np.broadcast_to(INITIAL.R, (B, 3, 3)), np.broadcast_to(INITIAL.x, (B, 3)),
                      np.broadcast_to(INITIAL.omega, (B, 3)), np.broadcast_to(INITIAL.v, (B, 3)))
    tb = integrate(SYSTEM, init, 0.05, 8, method)
    assert tb.position.shape == (9, B, 3) and tb.orientation.shape == (9, B, 4)
    assert tb.angular_velocity.shape == (9, B, 3) and tb.momentum_linear.shape == (9, B, 3)
    assert rel(tb.position[:, 1], tr.position) < 1e-12
    for key in ("wall_time_s", "newton_iterations_mean", "blew_up", "method", "steps", "dt"):
        assert key in tr.stats and key in tb.stats
    assert tr.stats["method"] == method and tr.stats["steps"] == 8 and tr.stats["dt"] == 0.05
    implicit = method.startswith("vi-") or method == "rk2i"
    assert (tr.stats["newton_iterations_mean"] > 0) == implicit


def test_newton_iterations_at_animation_step_sizes():
    """1–3 Newton iterations per solve at h = 0.05 (the paper's claim for its Newton solver)."""
    for method in ("vi-cay", "vi-cay-ln", "vi-exp", "vi-cay4"):
        tr = integrate(SYSTEM, INITIAL, 0.05, 400, method)
        assert 1.0 <= tr.stats["newton_iterations_mean"] <= 3.0, (method, tr.stats)


def test_step_rows_packs_long_runs_into_blocks_in_order():
    """The scalar runners' record: rows beyond 65,536 go to packed blocks, the array keeps every row in order."""
    from core.integrators.variational import StepRows
    rows = StepRows((0.0, 0.5), 2)
    for k in range(1, 70_001):
        rows.add((float(k), k + 0.5))
    assert len(rows.blocks) == 1 and len(rows.rows) == 70_001 - 65_536
    out = rows.array()
    np.testing.assert_array_equal(out, np.stack([np.arange(70_001.0), np.arange(70_001.0) + 0.5], axis=1))
    assert StepRows((1.0, 2.0), 2).array().shape == (1, 2)
