"""The scipy backend's interior-point method (core.dmoc.ipm) on small programs with known answers."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from core.dmoc.ipm import (MU_R_MIN, KKTSystem, ScaledProgram, fraction_to_boundary, gap_function, interior_point,
                           masked_fraction_to_boundary, restoration)
from core.dmoc.ipm import kkt as kkt_module
from core.dmoc.ipm import scipy_private
from core.dmoc.ipm.line_search import Filter
from core.dmoc.problem import NLP, Group, Layout


def _nlp(cost_fun, cost_jac, cons, lower, upper, n=2):
    """An NLP over y = (y0, …, y_{n−1}), all free, one cost group and the given constraint groups."""
    lay = Layout()
    lay.add("y", n, columns=tuple(f"y{i}" for i in range(n)))
    idx = np.arange(n)[None, :]
    cost = Group("cost", idx, cost_fun, np.ones((1, n), bool), jac=cost_jac)
    return NLP(lay, np.zeros(n), np.zeros(n, bool), np.asarray(lower, float), np.asarray(upper, float),
               [Group(name, idx, f, np.ones((m, n), bool), jac=j, lower=lo, upper=hi)
                for name, f, j, m, lo, hi in cons], [cost])


def _solve(nlp, z0, **kw):
    return interior_point(nlp, np.asarray(z0, float), np.ones(nlp.n), np.ones(nlp.m), 1.0, **kw)


def test_convex_qp_with_known_solution():
    # min ½|y − a|²  s.t.  y0 + y1 + y2 = 1,  y0 − y1 ≤ −0.5,  0 ≤ y ≤ 1, a = (1, 0, 0.2): the
    # solution has both rows active and no bound active (checked below), so it solves a 2×2 system.
    a = np.array([1.0, 0.0, 0.2])
    nlp = _nlp(lambda X: 0.5 * np.sum((X - a) ** 2, axis=1, keepdims=True),
               lambda X: (X - a)[:, None, :],
               [("sum", lambda X: X.sum(axis=1, keepdims=True), lambda X: np.ones((len(X), 1, 3)), 1, 1.0, 1.0),
                ("diff", lambda X: (X[:, 0] - X[:, 1])[:, None],
                 lambda X: np.tile(np.array([[[1.0, -1.0, 0.0]]]), (len(X), 1, 1)), 1, -np.inf, -0.5)],
               [0, 0, 0], [1, 1, 1], n=3)
    # with both rows active: y = a − λ1 (1,1,1) − λ2 (1,−1,0); two linear equations for λ1, λ2
    A = np.array([[3.0, 0.0], [0.0, 2.0]])
    rhs = np.array([a.sum() - 1.0, a[0] - a[1] + 0.5])
    lam = np.linalg.solve(A, rhs)
    y_star = a - lam[0] * np.ones(3) - lam[1] * np.array([1.0, -1.0, 0.0])
    assert lam[1] > 0 and np.all((y_star > 0) & (y_star < 1))
    r = _solve(nlp, [0.5, 0.5, 0.5])
    assert r.status == "converged", r.message
    np.testing.assert_allclose(r.z, y_star, atol=1e-7)
    assert r.iterations < 30


def test_nonconvex_problem_needs_inertia_correction_and_reaches_a_local_minimum():
    # min y0² − y1² + 0.1 y1 with −1 ≤ y1 ≤ 2: the Hessian is indefinite everywhere, so the Newton matrix
    # has the wrong inertia until δ_w is added; the local minima are y1 = −1 and y1 = 2 (y0 = 0).
    nlp = _nlp(lambda X: (X[:, 0] ** 2 - X[:, 1] ** 2 + 0.1 * X[:, 1])[:, None],
               lambda X: np.stack([2 * X[:, 0], -2 * X[:, 1] + 0.1], axis=1)[:, None, :],
               [], [-np.inf, -1.0], [np.inf, 2.0])
    nlp.hessian = lambda z, lam, sf=1.0: sp.csr_matrix(np.diag([2.0 * sf, -2.0 * sf]))
    r = _solve(nlp, [0.3, 0.2])
    assert r.status == "converged", r.message
    assert abs(r.z[0]) < 1e-7
    assert min(abs(r.z[1] + 1.0), abs(r.z[1] - 2.0)) < 1e-7


def test_infeasible_program_is_reported_infeasible():
    # y0 + y1 = 3 with 0 ≤ y ≤ 1: no feasible point; the restoration ends at a stationary point of |r|².
    nlp = _nlp(lambda X: np.sum(X**2, axis=1, keepdims=True), lambda X: 2 * X[:, None, :],
               [("sum", lambda X: X.sum(axis=1, keepdims=True), lambda X: np.ones((len(X), 1, 2)), 1, 3.0, 3.0)],
               [0, 0], [1, 1])
    r = _solve(nlp, [0.5, 0.5])
    assert r.status == "infeasible", (r.status, r.message)


@pytest.mark.parametrize("mu", [1e-8, 0.34, 10.0])
def test_restoration_lowers_its_barrier_and_finds_the_least_violation(mu):
    """restoration on y0 + y1 = 3 with 0 ≤ y ≤ 1 from y = (0.95, 0.95) (θ = 1.1: the 10 % fall it wants cannot
    happen), entered at the main loop's μ: with μ_r held at a large μ
    its barrier kept y off the bounds (the least violation |r| = 1 lies at y = (1, 1)), the gradient test never
    fired and it ended "stalled" after 200 steps; lowering μ_r it reports infeasible there, |r|₁ → 1."""
    nlp = _nlp(lambda X: np.sum(X**2, axis=1, keepdims=True), lambda X: 2 * X[:, None, :],
               [("sum", lambda X: X.sum(axis=1, keepdims=True), lambda X: np.ones((len(X), 1, 2)), 1, 3.0, 3.0)],
               [0, 0], [1, 1])
    prog = ScaledProgram(nlp, np.ones(2), np.ones(1), 1.0)
    kkt = KKTSystem(prog.n, prog.m, prog.I, nlp.hess_pattern.rows, nlp.hess_pattern.cols, nlp.jac_pattern.rows,
                    nlp.jac_pattern.cols)
    calls = []
    evaluate = prog.evaluate

    def recording(x):
        calls.append(x.copy())
        return evaluate(x)

    prog.evaluate = recording
    out = restoration(prog, kkt, np.array([0.95, 0.95]), 1.1, mu, Filter(mu), math.inf)
    assert out.status == "infeasible"
    assert out.violation == pytest.approx(1.0, abs=1e-5)
    assert np.all((calls[-1] > 0) & (calls[-1] < 1))  # interior all along (fraction to the boundary)
    assert len(calls) < 200
    assert MU_R_MIN < 1e-8


def _random_kkt(seed: int):
    """A random KKT system (n = 12, m = 6, inequality rows 1, 3, 4) with an often indefinite H:
    (rng, KKTSystem, H, J, I, H's lower-triangle values, J's values)."""
    rng = np.random.default_rng(seed)
    n, m, I = 12, 6, np.array([1, 3, 4])
    H = sp.random(n, n, density=0.3, random_state=seed)
    H = ((H + H.T) * 2.0 - sp.identity(n) * rng.uniform(0, 3)).tocsr()
    J = (sp.random(m, n, density=0.3, random_state=seed + 10) + sp.eye(m, n)).tocsr()
    Hl, Jc = sp.tril(H).tocoo(), J.tocoo()
    return rng, KKTSystem(n, m, I, Hl.row, Hl.col, Jc.row, Jc.col), H, J, I, Hl.data, Jc.data


@pytest.mark.parametrize("seed", range(6))
def test_kkt_factor_counts_negative_eigenvalues_and_solves_the_full_system(seed):
    """The reduced matrix (slacks eliminated) gives the full system's inertia and step."""
    rng, kk, H, J, I, hv, jv = _random_kkt(seed)
    n, m, mI = kk.n, kk.m, len(I)
    Dx = rng.uniform(0.0, 1.0, n)
    Ds = 10.0 ** rng.uniform(-3, 8, mI)     # slacks far from and right at their bounds
    dc = np.where(rng.random(m) < 0.3, 1e-6, 0.0)
    neg = kk.factor(hv, jv, Dx, Ds, dc)
    # the full system in (dx, ds, dy)
    P = sp.csr_matrix((np.ones(mI), (I, np.arange(mI))), shape=(m, mI))
    A = sp.bmat([[H + sp.diags(Dx), None, J.T], [None, sp.diags(Ds), -P.T], [J, -P, -sp.diags(dc)]]).toarray()
    ev = np.linalg.eigvalsh(A)
    assert neg == int(np.sum(ev < 0))
    r_x, r_s, r_c = rng.standard_normal(n), rng.standard_normal(mI), rng.standard_normal(m)
    dx, ds, dy, rel = kk.solve(r_x, r_s, r_c)
    d = np.concatenate([dx, ds, dy])
    np.testing.assert_allclose(A @ d, -np.concatenate([r_x, r_s, r_c]), atol=1e-8 * max(1.0, np.max(Ds)))


def test_fraction_to_boundary():
    v = np.array([1.0, 2.0, 0.5])
    dv = np.array([-2.0, 1.0, -0.1])
    assert fraction_to_boundary(v, dv, 0.99) == pytest.approx(0.99 * 0.5)
    assert fraction_to_boundary(v, np.abs(dv), 0.99) == 1.0


@pytest.mark.parametrize("seed", range(4))
def test_kkt_pivots_from_the_raw_factor_match_public_splu(seed):
    """The direct SuperLU call (panel size 1, no relaxed supernodes) reads the same pivots as splu's U."""
    from scipy.sparse.linalg import splu
    rng, kk, _, _, I, hv, jv = _random_kkt(seed)
    Dx, Ds = rng.uniform(0.0, 1.0, kk.n), 10.0 ** rng.uniform(-3, 3, len(I))
    kk.factor(hv, jv, Dx, Ds, np.zeros(kk.m))
    data = kk.Kp.data.copy()
    _, d = kk.lu_and_pivots(data)
    ref = splu(sp.csc_matrix((data, kk.layout.indices, kk.layout.indptr), shape=(kk.size, kk.size)), permc_spec="NATURAL",
               diag_pivot_thresh=0.0, options=dict(SymmetricMode=True)).U.diagonal()
    np.testing.assert_allclose(d, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_step_for_sigma_is_affine_plus_sigma_centring(seed):
    """Free mode's step d_aff + σ d_cen (IPOPT's split) equals the step solved with μ = σ μ_avg."""
    rng, kk, _, _, I, hv, jv = _random_kkt(seed)
    Dx, Ds = rng.uniform(0.0, 1.0, kk.n), 10.0 ** rng.uniform(-3, 3, len(I))
    assert kk.factor(hv, jv, Dx, Ds, np.zeros(kk.m)) >= 0
    n, m, mI = kk.n, kk.m, len(kk.I)
    r0, g = rng.standard_normal(n + mI), rng.standard_normal(m)
    rb = rng.standard_normal(n + mI)        # the barrier terms at μ_avg; at μ = σ μ_avg they scale by σ
    sigma = 0.37
    aff = kk.solve(r0[:n], r0[n:], g)
    cen = kk.solve(rb[:n], rb[n:], np.zeros(m))
    r = r0 + sigma * rb
    direct = kk.solve(r[:n], r[n:], g)
    for a, c, d in zip(aff[:3], cen[:3], direct[:3]):
        np.testing.assert_allclose(a + sigma * c, d, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(d).max()))


def test_gap_function_gives_the_distances_to_the_finite_bounds():
    """Bit for bit the distances w − L, U − w on the finite bounds, and 1 where a bound is ±∞."""
    rng = np.random.default_rng(3)
    L, U = rng.standard_normal(40) - 2.0, rng.standard_normal(40) + 2.0
    L[::3], U[1::4] = -np.inf, np.inf
    w = rng.uniform(-1.0, 1.0, 40)
    lo, hi = gap_function(L, U)(w)
    fl, fh = np.isfinite(L), np.isfinite(U)
    assert np.array_equal(lo[fl], w[fl] - L[fl]) and np.all(lo[~fl] == 1.0)
    assert np.array_equal(hi[fh], U[fh] - w[fh]) and np.all(hi[~fh] == 1.0)


@pytest.mark.parametrize("seed", range(4))
def test_masked_fraction_to_boundary_is_the_rule_on_the_masked_entries(seed):
    """masked_fraction_to_boundary with −τv formed beforehand and a mask ANDed into dv < 0 gives, bit for bit, the rule on the gathered
    entries (as the IPM's primal and dual step rules and the quality function use it); 1 when no entry is
    selected."""
    rng = np.random.default_rng(seed)
    v, dv = rng.uniform(0.01, 2.0, 50), rng.standard_normal(50)
    mask = rng.random(50) < 0.6
    tau = 0.995
    ref = float(min(1.0, np.min(-tau * v[mask & (dv < 0)] / dv[mask & (dv < 0)])))
    assert masked_fraction_to_boundary(-tau * v, dv, (dv < 0) & mask) == ref == fraction_to_boundary(v[mask], dv[mask], tau)
    assert masked_fraction_to_boundary(-tau * v, np.abs(dv), np.abs(dv) < 0) == 1.0
    assert masked_fraction_to_boundary(-tau * v, dv, np.zeros(50, bool)) == 1.0


def test_kkt_pivots_found_when_the_diagonal_is_not_last_in_its_column(monkeypatch):
    """The pivots are read from the last entry of each column of SuperLU's U; a U whose columns list the
    diagonal elsewhere (the layout is scipy's, not a documented promise) falls back to the search by row."""
    rng, kk, _, _, I, hv, jv = _random_kkt(0)
    kk.factor(hv, jv, rng.uniform(0.0, 1.0, kk.n), 10.0 ** rng.uniform(-3, 3, len(I)), np.zeros(kk.m))
    data = kk.Kp.data.copy()
    _, d_ref = kk.lu_and_pivots(data)
    superlu = kkt_module.superlu

    def reversed_u(*args):
        """The factor with U listing every column's entries in reverse order."""
        lu, (u_data, u_ind, u_ptr) = superlu(*args)
        nnz = int(u_ptr[-1])
        assert np.any(np.diff(u_ptr) > 1)  # some diagonal entry moves off the end of its column
        order = np.concatenate([np.arange(u_ptr[j + 1] - 1, u_ptr[j] - 1, -1) for j in range(len(u_ptr) - 1)])
        return lu, (u_data[:nnz][order], u_ind[:nnz][order], u_ptr)

    monkeypatch.setattr(kkt_module, "superlu", reversed_u)
    _, d = kk.lu_and_pivots(data)
    assert np.array_equal(d, d_ref)


@pytest.mark.parametrize("seed", range(3))
def test_kkt_without_scipys_private_routines_gives_the_same_inertia_and_step(seed, monkeypatch):
    """If scipy moves gstrf or csc_matvec, the public splu and ``@`` take over: the same inertia, and the same
    step to rounding."""
    rng, kk, _, _, I, hv, jv = _random_kkt(seed)
    Dx, Ds = rng.uniform(0.0, 1.0, kk.n), 10.0 ** rng.uniform(-3, 3, len(I))
    r = rng.standard_normal(kk.n), rng.standard_normal(len(I)), rng.standard_normal(kk.m)
    neg = kk.factor(hv, jv, Dx, Ds, np.zeros(kk.m))
    step = kk.solve(*r)
    monkeypatch.setattr(scipy_private, "_gstrf", None)
    monkeypatch.setattr(scipy_private, "_csc_matvec", None)
    assert kk.factor(hv, jv, Dx, Ds, np.zeros(kk.m)) == neg >= 0
    for a, b in zip(step[:3], kk.solve(*r)[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(a).max()))
