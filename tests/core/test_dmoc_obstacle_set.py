"""ObstacleSet (every obstacle of a kind in one vectorised call) against the per-obstacle distances,
and the clearance groups built on it: same values and derivatives bit for bit, each group still
named after its own obstacle."""
from __future__ import annotations

import numpy as np

from core.dmoc.constraints import Spec, _Shared, assemble, clearance_group
from core.dmoc.models.car import CarModel
from core.dmoc.obstacles import Obstacle, ObstacleSet
from core.lie import quaternion
from core.vehicles.car import Car


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


def test_obstacle_set_matches_each_obstacle_bit_for_bit():
    obs = _obstacles()
    rng = np.random.default_rng(3)
    p = np.concatenate([rng.uniform(-6, 6, (400, 3)), [obs[0].center, obs[2].center + 0.1]])  # some inside
    S = ObstacleSet(obs)
    d, g = S.distances(p)
    d2, g2, H2 = S.distances(p, hessian=True)
    for i, ob in enumerate(obs):
        ref_d, ref_g = ob.distance(p)
        hd, hg, hH = ob.distance_hessian(p)
        assert np.array_equal(d[i], ref_d) and np.array_equal(g[i], ref_g), ob.label
        assert np.array_equal(d2[i], hd) and np.array_equal(g2[i], hg) and np.array_equal(H2[i], hH), ob.label
    assert S.index(obs[3]) == 3


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
        assert np.array_equal(fused.values(X), alone.values(X))
        assert np.array_equal(fused.jacobian(X), alone.jacobian(X))
        assert np.array_equal(fused.hessian(X, lam), alone.hessian(X, lam))
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
