"""ObstacleSet (every obstacle of a kind in one vectorised call) against the per-obstacle distances,
and the clearance groups built on it: same values and derivatives, each group still named after its
own obstacle.

The fused and the per-obstacle evaluations are different code paths (stacked (O, B, 3) arrays and
batched matrix products against one obstacle's (B, 3) arrays and BLAS calls): they agree bit for bit
on some CPUs and not on others (SIMD width, FMA, OpenBLAS kernels), so they are compared to round-off
(1e-13 of the values' size, far below any real discrepancy). The NLP's batch and its groups asked one
by one read the same shared evaluation: those are compared bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from core.dmoc.constraints import Spec, _Shared, assemble, clearance_group
from core.dmoc.models.car import CarModel
from core.dmoc.obstacles import Obstacle, ObstacleSet
from core.lie import quaternion
from core.vehicles.car import Car

ROUND_OFF = 1e-13  # relative to the compared array's largest entry


def _round_off(got, want, rel: float = ROUND_OFF, msg: str = "") -> None:
    """got = want to round-off: entrywise |got − want| ≤ rel (|want| + max|want|)."""
    want = np.asarray(want, dtype=float)
    np.testing.assert_allclose(got, want, rtol=rel, atol=rel * float(np.max(np.abs(want), initial=0.0)),
                               err_msg=msg)


def _obstacles() -> list[Obstacle]:
    R = quaternion.to_matrix(quaternion.normalize(np.array([0.9, 0.1, -0.2, 0.35])))
    return [
        Obstacle("box", center=np.array([4.0, 1.0, 0.5]), half_extents=np.array([1.0, 2.0, 0.5]),
                 rotation=np.eye(3), margin=0.1, label="obstacle #1 (box)"),
        Obstacle("sphere", center=np.array([-2.0, 0.5, 0.0]), radius=1.2, margin=0.2, label="obstacle #2 (sphere)"),
        Obstacle("box", center=np.array([0.0, -3.0, 1.0]), half_extents=np.array([0.5, 1.5, 1.0]),
                 rotation=R, margin=0.1, label="obstacle #3 (box)"),
        Obstacle("capsule", a=np.array([1.0, 4.0, 0.0]), b=np.array([2.0, 4.5, 3.0]), radius=0.6,
                 label="obstacle #4 (capsule)"),
        Obstacle("capsule", a=np.array([-4.0, -1.0, 0.0]), b=np.array([-4.0, -1.0, 2.0]), radius=0.3,
                 label="obstacle #5 (capsule)"),
    ]


@pytest.mark.parametrize("order", ["mixed", "kinds together"])
def test_obstacle_set_matches_each_obstacle(order):
    """Kinds interleaved (each family's rows gathered by index) or listed together (rows as slices)."""
    obs = _obstacles()
    rng = np.random.default_rng(3)
    p = np.concatenate([rng.uniform(-6, 6, (400, 3)), [obs[0].center, obs[2].center + 0.1]])  # some inside
    if order != "mixed":
        obs = [obs[i] for i in (0, 2, 1, 3, 4)]
    S = ObstacleSet(obs)
    d, g = S.distances(p)
    d2, g2, H2 = S.distances(p, hessian=True)
    for i, ob in enumerate(obs):
        ref_d, ref_g = ob.distance(p)
        hd, hg, hH = ob.distance_hessian(p)
        for got, want in ((d[i], ref_d), (g[i], ref_g), (d2[i], hd), (g2[i], hg), (H2[i], hH)):
            _round_off(got, want, msg=ob.label)
    assert S.index(obs[3]) == 3
    assert all(isinstance(pos, slice) == (order != "mixed") for _, pos, _ in S._kinds)


def test_clearance_groups_share_one_evaluation_and_keep_their_labels():
    model = CarModel(Car.preset("hatchback"), 12)
    spheres = np.array([[-0.3, 0.0, 0.6, 1.0], [1.3, 0.2, 0.6, 1.0]])
    obs = _obstacles()
    shared = _Shared(model, spheres, obs)
    rng = np.random.default_rng(5)
    for ob in obs:
        fused = clearance_group(model, ob, spheres, shared)
        alone = clearance_group(model, ob, spheres)  # its own single-obstacle set
        assert fused.name == ob.label
        X = rng.uniform(-3, 3, (fused.K, 3))
        lam = rng.standard_normal((fused.K, 1))
        _round_off(fused.values(X), alone.values(X), msg=ob.label)
        _round_off(fused.jacobian(X), alone.jacobian(X), msg=ob.label)
        _round_off(fused.hessian(X, lam), alone.hessian(X, lam), msg=ob.label)
        # a clearance is a distance: the group's value is d(p) − r_s at the body points
        p, _ = model.point_map(X, fused.params[0])
        assert np.allclose(fused.values(X)[:, 0], ob.distance(p)[0] - fused.params[1])


def test_worst_group_names_the_obstacle():
    model = CarModel(Car.preset("hatchback"), 10)
    obs = _obstacles()
    nlp = assemble(model, Spec(spheres=np.array([[0.0, 0.0, 0.5, 0.5]]), obstacles=obs))
    y = nlp.full(np.zeros(nlp.n))
    y[model.state[:, 3]], y[model.state[:, 4]] = -2.0, 0.5  # every node at the sphere's centre
    name, v = nlp.worst(nlp.reduce(y))
    assert name.startswith("obstacle #2 (sphere)") and v > 1.0
    assert nlp.group_violations(nlp.reduce(y))["obstacle #2 (sphere)"] == v


def test_weighted_hessian_is_the_lambda_sum_of_the_obstacle_hessians():
    """Σ_o λ_o ∇²d_o formed without the per-obstacle Hessians (outside/inside boxes, rotated boxes, capsule
    interiors and ends, spheres) equals the sum of :meth:`ObstacleSet.distances`' Hessians to round-off,
    and central differences of the λ-weighted gradient."""
    obs = _obstacles()
    rng = np.random.default_rng(11)
    p = np.concatenate([rng.uniform(-6, 6, (300, 3)), [obs[0].center + 0.2, obs[2].center + 0.1]])
    S = ObstacleSet(obs)
    lam = rng.standard_normal((len(obs), len(p)))
    _, g, H = S.distances(p, hessian=True)
    W = S.weighted_hessian(p, lam)
    assert np.allclose(W, np.einsum("ob,obij->bij", lam, H), rtol=0, atol=1e-13)
    eps = 1e-6
    for j in range(3):
        dp = np.zeros(3)
        dp[j] = eps
        gp = ObstacleSet(obs).distances(p + dp)[1]
        gm = ObstacleSet(obs).distances(p - dp)[1]
        fd = np.einsum("ob,obi->bi", lam, (gp - gm) / (2 * eps))
        smooth = np.all(np.abs(ObstacleSet(obs).distances(p)[0]) > 1e-3, axis=0)  # away from kinks
        assert np.allclose(W[smooth, :, j], fd[smooth], rtol=1e-5, atol=1e-6)


def _nlp_pair(model, spheres, obs):
    """The same NLP with the clearance groups fused (one batch) and evaluated one by one."""
    fused = assemble(model, Spec(spheres=spheres, obstacles=obs))
    alone = assemble(model, Spec(spheres=spheres, obstacles=obs))
    for g in alone.constraints:
        g.batch = None
    alone = type(alone)(alone.layout, alone.base, alone.fixed, alone.meta["lower_full"], alone.meta["upper_full"],
                        alone.constraints, alone.costs, meta=alone.meta)
    return fused, alone


def test_batched_clearance_rows_match_the_groups_one_by_one():
    """The NLP asks the obstacle batch once per callback: the same constraint values and Jacobian bit for
    bit (the groups one by one read their rows of the same shared evaluation: the same arithmetic), the same
    Hessian pattern, and the Lagrangian Hessian (Σ_o λ_o H_o per instance) to round-off."""
    model = CarModel(Car.preset("hatchback"), 12)
    spheres = np.array([[-0.3, 0.0, 0.6, 1.0], [1.3, 0.2, 0.6, 1.0]])
    fused, alone = _nlp_pair(model, spheres, _obstacles())
    assert sum(b.batch is not None for b in fused._blocks) == 1
    assert all(b.batch is None for b in alone._blocks)
    assert np.array_equal(fused.hess_pattern.rows, alone.hess_pattern.rows)
    assert np.array_equal(fused.hess_pattern.cols, alone.hess_pattern.cols)
    rng = np.random.default_rng(2)
    for _ in range(3):
        z = rng.uniform(-3, 3, fused.n)
        lam = rng.standard_normal(fused.m)
        assert fused.constraint_values(z).tobytes() == alone.constraint_values(z).tobytes()
        assert np.array_equal(fused.jacobian_values(z), alone.jacobian_values(z))
        hf, ha = fused.hessian_values(z, lam, 0.7), alone.hessian_values(z, lam, 0.7)
        assert np.allclose(hf, ha, rtol=0, atol=1e-12 * np.max(np.abs(ha)))
    assert fused.worst(z)[0].split(" (node")[0] == alone.worst(z)[0].split(" (node")[0]
    assert fused.group_violations(z) == alone.group_violations(z)


def test_a_batch_split_or_reordered_falls_back_to_its_groups():
    """Groups of one batch that are not consecutive in its order are evaluated one by one (same results: each
    group reads its rows of the batch's shared evaluation, so the values are the same bits)."""
    model = CarModel(Car.preset("hatchback"), 8)
    spheres = np.array([[0.0, 0.0, 0.5, 0.8]])
    obs = _obstacles()
    nlp = assemble(model, Spec(spheres=spheres, obstacles=obs))
    cons = list(nlp.constraints)
    i = next(k for k, g in enumerate(cons) if g.batch is not None)
    swapped = cons[:i] + [cons[i + 1], cons[i]] + cons[i + 2:]
    other = type(nlp)(nlp.layout, nlp.base, nlp.fixed, nlp.meta["lower_full"], nlp.meta["upper_full"],
                      swapped, nlp.costs, meta=nlp.meta)
    assert all(b.batch is None for b in other._blocks)
    rng = np.random.default_rng(4)
    z = rng.uniform(-2, 2, nlp.n)
    c, c2 = nlp.constraint_values(z), other.constraint_values(z)
    r0, k = nlp.row0[i], cons[i].K
    assert np.array_equal(c[r0:r0 + k], c2[r0 + k:r0 + 2 * k]) and np.array_equal(c[r0 + k:r0 + 2 * k], c2[r0:r0 + k])
    lam = rng.standard_normal(nlp.m)
    H1 = nlp.hessian(z, lam).toarray()
    lam2 = lam.copy()
    lam2[r0:r0 + k], lam2[r0 + k:r0 + 2 * k] = lam[r0 + k:r0 + 2 * k], lam[r0:r0 + k]
    assert np.allclose(H1, other.hessian(z, lam2).toarray(), rtol=0, atol=1e-12 * np.max(np.abs(H1)))
