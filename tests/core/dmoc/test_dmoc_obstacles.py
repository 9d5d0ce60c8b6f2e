"""Signed distances of core.dmoc.obstacles against independent references, and their gradients.

References: brute force over dense samples of the obstacle's surface (box faces, capsule
segment) and closed forms; gradients against central differences, outside, inside, near the
surface and near box edges and corners.
"""
from __future__ import annotations

import numpy as np
import pytest

from core.dmoc.obstacles import Obstacle, box_distance, capsule_distance, hazard, sphere_distance
from core.lie import quaternion


def _fd_grad(f, p, d=1e-6):
    g = np.zeros_like(p)
    for i in range(3):
        e = np.zeros(3)
        e[i] = d
        g[:, i] = (f(p + e) - f(p - e)) / (2 * d)
    return g


def _box_reference(p, c, R, e):
    """Outside: distance to a dense grid on the surface; inside: minus the least face distance."""
    q = (p - c) @ R
    inside = np.all(np.abs(q) <= e, axis=1)
    out = np.empty(len(p))
    u = np.linspace(-1, 1, 81)
    pts = []
    for ax in range(3):
        o = [a for a in range(3) if a != ax]
        A, B = np.meshgrid(u * e[o[0]], u * e[o[1]])
        for s in (-1, 1):
            P = np.zeros((A.size, 3))
            P[:, ax] = s * e[ax]
            P[:, o[0]] = A.ravel()
            P[:, o[1]] = B.ravel()
            pts.append(P)
    surf = np.concatenate(pts)
    for i, qi in enumerate(q):
        if inside[i]:
            out[i] = -np.min(e - np.abs(qi))
        else:
            out[i] = np.min(np.linalg.norm(surf - qi, axis=1))
    return out


def test_sphere_distance_and_gradient():
    rng = np.random.default_rng(0)
    c = np.array([1.0, -2.0, 0.5])
    p = c + rng.normal(size=(50, 3)) * 3
    d, g = sphere_distance(p, c, 1.5)
    assert np.allclose(d, np.linalg.norm(p - c, axis=1) - 1.5)
    assert np.allclose(g, _fd_grad(lambda x: sphere_distance(x, c, 1.5)[0], p), atol=1e-8)


def test_capsule_distance_matches_sampled_segment():
    rng = np.random.default_rng(1)
    a, b = np.array([0.0, 0.0, 0.0]), np.array([2.0, 1.0, -1.0])
    p = rng.normal(size=(60, 3)) * 2.5
    d, g = capsule_distance(p, a, b, 0.4)
    seg = a + np.linspace(0, 1, 20001)[:, None] * (b - a)
    ref = np.array([np.min(np.linalg.norm(seg - x, axis=1)) for x in p]) - 0.4
    assert np.allclose(d, ref, atol=1e-7)
    assert np.allclose(g, _fd_grad(lambda x: capsule_distance(x, a, b, 0.4)[0], p), atol=1e-6)


def test_box_distance_matches_reference_inside_and_outside():
    rng = np.random.default_rng(2)
    c = np.array([1.0, 2.0, -0.5])
    R = quaternion.to_matrix(quaternion.normalize(np.array([0.8, 0.3, -0.2, 0.4])))
    e = np.array([1.0, 0.5, 0.8])
    p = c + rng.normal(size=(60, 3)) * 1.2
    d, _ = box_distance(p, c, R, e)
    assert np.allclose(d, _box_reference(p, c, R, e), atol=2e-3)  # grid spacing of the reference
    assert np.any(d < 0) and np.any(d > 0)


@pytest.mark.parametrize("where", ["face", "edge", "corner", "inside", "far"])
def test_box_gradient_matches_differences(where):
    c = np.zeros(3)
    R = quaternion.to_matrix(quaternion.normalize(np.array([0.9, 0.1, 0.2, -0.3])))
    e = np.array([1.0, 0.6, 0.4])
    local = {"face": [1.3, 0.1, -0.2], "edge": [1.2, 0.75, 0.05], "corner": [1.1, 0.7, 0.5],
             "inside": [0.5, 0.1, -0.05], "far": [5.0, -3.0, 2.0]}[where]
    p = (R @ np.array(local))[None, :]
    d, g = box_distance(p, c, R, e)
    assert np.allclose(g, _fd_grad(lambda x: box_distance(x, c, R, e)[0], p), atol=1e-6)
    assert abs(np.linalg.norm(g) - 1.0) < 1e-12  # a distance has a unit gradient


def test_box_gradient_is_continuous_across_the_surface():
    """Just outside and just inside a face the gradient is the same face normal."""
    c, R, e = np.zeros(3), np.eye(3), np.array([1.0, 2.0, 3.0])
    p = np.array([[1.0 + 1e-9, 0.3, -0.4], [1.0 - 1e-9, 0.3, -0.4], [1.0, 0.3, -0.4]])
    d, g = box_distance(p, c, R, e)
    assert np.allclose(d, [1e-9, -1e-9, 0.0], atol=1e-15)
    assert np.allclose(g, [[1.0, 0.0, 0.0]] * 3)


def test_obstacle_dispatch_and_hazard():
    ob = Obstacle("capsule", a=np.zeros(3), b=np.array([0.0, 0.0, 2.0]), radius=0.5, margin=0.1)
    d, _ = ob.distance(np.array([[3.0, 4.0, 1.0]]))
    assert d[0] == pytest.approx(4.5)
    x = np.linspace(-1.0, 3.0, 9)
    phi, dphi = hazard(x, 0.7)
    assert np.allclose(phi, np.exp(-x / 0.7))
    assert np.allclose(dphi, (hazard(x + 1e-6, 0.7)[0] - hazard(x - 1e-6, 0.7)[0]) / 2e-6, atol=1e-8)
