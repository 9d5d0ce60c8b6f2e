"""core.lie.quaternion: unit quaternions stored (w, x, y, z), as Blender stores them.

Checked against so3.exp (q = (cos θ/2, sin θ/2 n) ↔ exp(θ n)), matrix products, and
rotations near the identity, near π and exactly π (every branch of Shepperd's method).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.lie import quaternion as Q
from core.lie import so3
from tests.core.lie.references import (EPS, GRID_ANGLES, LIE_SETTINGS, assert_close, assert_finite,
                                       random_unit, so3_vectors, unit_vectors)

I3 = np.eye(3)

unit_quaternions = (st.tuples(*[st.floats(-1.0, 1.0)] * 4).map(np.array)
                    .filter(lambda q: np.linalg.norm(q) > 0.1).map(lambda q: q / np.linalg.norm(q)))


def _from_axis_angle(n: np.ndarray, theta: float) -> np.ndarray:
    return np.concatenate([[np.cos(theta / 2)], np.sin(theta / 2) * n])


def _half_turn(n: np.ndarray) -> np.ndarray:
    return 2 * np.outer(n, n) - I3  # rotation by exactly π about n, no trigonometry


rotations = st.one_of(
    st.builds(so3.exp, so3_vectors()),                                      # 0 … π − 1e-6
    st.builds(_half_turn, unit_vectors),                                    # exactly π
    st.builds(lambda n, e: so3.exp((np.pi - 10.0**e) * n), unit_vectors, st.floats(-12, -3)),
)


# ---------------------------------------------------------------------------
# to_matrix / from_matrix
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(rotations)
def test_matrix_round_trip(R):
    q = Q.from_matrix(R)
    assert q[0] >= 0
    assert abs(np.linalg.norm(q) - 1) <= 2 * EPS
    assert_close(Q.to_matrix(q), R, rtol=8 * EPS)


@pytest.mark.parametrize("theta", GRID_ANGLES + (np.pi,))
def test_matrix_round_trip_on_the_angle_grid(theta):
    rng = np.random.default_rng(0)
    for n in list(np.eye(3)) + [random_unit(rng) for _ in range(3)]:
        q = _from_axis_angle(n, theta)
        R = so3.exp(theta * n)
        assert_close(Q.to_matrix(q), R, rtol=4 * EPS)
        got = Q.from_matrix(R)
        assert_close(got, q, rtol=4 * EPS)  # w = cos(θ/2) ≥ 0 for θ ≤ π picks q, not −q
        # near the identity the vector part (θ/2) n must be right relative to its size
        if 0 < theta <= 1e-4:
            assert_close(got[1:], q[1:], rtol=4 * EPS)


@LIE_SETTINGS
@given(unit_quaternions)
def test_from_matrix_inverts_to_matrix_up_to_sign(q):
    R = Q.to_matrix(q)
    assert_close(R.T @ R, I3, rtol=8 * EPS)
    assert abs(np.linalg.det(R) - 1) <= 8 * EPS
    assert np.array_equal(Q.to_matrix(-q), R)
    got = Q.from_matrix(R)
    s = 1.0 if got @ q >= 0 else -1.0  # only ambiguous when w ≈ 0
    assert_close(got, s * q, rtol=8 * EPS)
    if q[0] > 1e-6:
        assert s == 1.0


@LIE_SETTINGS
@given(unit_vectors, st.floats(0.0, np.pi))
def test_to_matrix_matches_so3_exp(n, theta):
    assert_close(Q.to_matrix(_from_axis_angle(n, theta)), so3.exp(theta * n), rtol=8 * EPS)


def test_every_shepperd_branch():
    """Largest of (trace, R00, R11, R22) picks the branch: identity-like and half turns."""
    for R in [I3, _half_turn(np.eye(3)[0]), _half_turn(np.eye(3)[1]), _half_turn(np.eye(3)[2]),
              so3.exp([np.pi - 1e-9, 1e-3, 0]), so3.exp([0, np.pi - 1e-9, 1e-3]),
              so3.exp([1e-3, 0, np.pi - 1e-9])]:
        q = Q.from_matrix(R)
        assert q[0] >= 0
        assert_close(Q.to_matrix(q), R, rtol=8 * EPS)


# ---------------------------------------------------------------------------
# multiply / normalize
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(unit_quaternions, unit_quaternions, unit_quaternions)
def test_multiply_matches_matrix_product(p, q, r):
    pq = Q.multiply(p, q)
    assert_close(Q.to_matrix(pq), Q.to_matrix(p) @ Q.to_matrix(q), rtol=16 * EPS)
    assert abs(np.linalg.norm(pq) - 1) <= 4 * EPS
    assert_close(Q.multiply(Q.multiply(p, q), r), Q.multiply(p, Q.multiply(q, r)), rtol=8 * EPS)
    one = np.array([1.0, 0, 0, 0])
    assert np.array_equal(Q.multiply(one, q), q) and np.array_equal(Q.multiply(q, one), q)
    conj = q * [1, -1, -1, -1]
    assert_close(Q.multiply(q, conj), one, rtol=4 * EPS)


@LIE_SETTINGS
@given(unit_quaternions, st.floats(1e-3, 1e3))
def test_normalize(q, s):
    assert_close(Q.normalize(s * q), q, rtol=2 * EPS)


# ---------------------------------------------------------------------------
# make_continuous
# ---------------------------------------------------------------------------
def _check_continuous(q_in: np.ndarray, q_out: np.ndarray) -> None:
    assert q_out.shape == q_in.shape
    assert np.all(np.sum(q_out[1:] * q_out[:-1], axis=-1) >= 0)
    # each entry is the same rotation: exactly ±(the input quaternion)
    same = np.all(q_out == q_in, axis=-1) | np.all(q_out == -q_in, axis=-1)
    assert np.all(same)


@LIE_SETTINGS
@given(st.lists(st.tuples(unit_quaternions, st.booleans()), min_size=0, max_size=30))
def test_make_continuous_random_sequences(items):
    q = np.array([s * (-1.0 if flip else 1.0) for s, flip in items]).reshape(-1, 4)
    before = q.copy()
    out = Q.make_continuous(q)
    assert np.array_equal(q, before)  # input not modified
    _check_continuous(q, out)
    if len(q):
        assert np.array_equal(out[0], q[0])  # the first key is the reference


def test_make_continuous_on_a_spin_beyond_pi():
    """from_matrix returns w ≥ 0, so a steady spin flips sign each time it passes π."""
    n = random_unit(np.random.default_rng(1))
    t = np.linspace(0, 4 * np.pi, 60)
    q = Q.from_matrix(so3.exp(t[:, None] * n))
    assert np.any(np.sum(q[1:] * q[:-1], axis=-1) < 0)  # the raw keys do jump
    out = Q.make_continuous(q)
    _check_continuous(q, out)
    ref = np.stack([_from_axis_angle(n, a) for a in t])
    assert_close(out, ref * np.sign(out[0, 0]), rtol=8 * EPS)


def test_make_continuous_batched_trailing_axes():
    """(frames, objects, 4): each object's track is made continuous along axis 0."""
    rng = np.random.default_rng(2)
    q = rng.normal(size=(20, 3, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    out = Q.make_continuous(q)
    for j in range(3):
        assert np.array_equal(out[:, j], Q.make_continuous(q[:, j]))
    _check_continuous(q, out)


# ---------------------------------------------------------------------------
# Batching and identity
# ---------------------------------------------------------------------------
def test_batched_equals_loop():
    rng = np.random.default_rng(3)
    w = random_unit(rng, (2, 4)) * np.array([0.0, 1e-9, 0.3, 1.0, 2.0, 3.0, np.pi - 1e-9, np.pi]
                                           ).reshape(2, 4, 1)
    R = so3.exp(w)
    R[1, 3] = _half_turn(np.eye(3)[1])  # mixes every Shepperd branch in one batch
    q = Q.from_matrix(R)
    assert q.shape == (2, 4, 4)
    # batched reductions (trace, norm, sum) may round differently from one at a time on other CPUs
    assert_close(q, [[Q.from_matrix(R[i, j]) for j in range(4)] for i in range(2)], rtol=4 * EPS)
    M = Q.to_matrix(q)
    assert_close(M, [[Q.to_matrix(q[i, j]) for j in range(4)] for i in range(2)], rtol=4 * EPS)
    p = np.roll(q, 1, axis=1)
    pq = Q.multiply(p, q)
    assert_close(pq, [[Q.multiply(p[i, j], q[i, j]) for j in range(4)] for i in range(2)], rtol=4 * EPS)
    assert_close(Q.normalize(2 * q), [[Q.normalize(2 * q[i, j]) for j in range(4)] for i in range(2)],
                 rtol=4 * EPS)
    for f in (Q.from_matrix, Q.to_matrix, Q.normalize):
        assert f(np.zeros((0, 3, 3) if f is Q.from_matrix else (0, 4))).shape[0] == 0


def test_identity_is_exact_and_finite():
    one = np.array([1.0, 0, 0, 0])
    assert np.array_equal(Q.to_matrix(one), I3)
    assert np.array_equal(Q.from_matrix(I3), one)
    assert np.array_equal(Q.multiply(one, one), one)
    assert np.array_equal(Q.normalize(one), one)
    assert np.array_equal(Q.make_continuous(one[None]), one[None])
    assert_finite(Q.to_matrix(np.zeros(4)), Q.multiply(np.zeros(4), one))


def test_slerp_against_scipy_and_at_its_ends():
    from scipy.spatial.transform import Rotation, Slerp

    rng = np.random.default_rng(11)
    q = Q.normalize(rng.normal(size=(6, 4)))
    q[3] = -q[3]                     # a sign flip between nodes: the shorter arc is still taken
    q[4] = q[3] + 1e-9               # nearly equal neighbours (the small-angle branch)
    q = Q.normalize(q)
    i = np.array([0, 1, 2, 3, 3, 4])
    u = np.array([0.0, 0.3, 1.0, 0.5, 0.9, 0.25])
    out = Q.slerp(q, i, u)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-15)
    for k in range(len(i)):
        xyzw = lambda a: np.roll(a, -1)  # noqa: E731  scipy stores (x, y, z, w)
        ref = Slerp([0.0, 1.0], Rotation.from_quat([xyzw(q[i[k]]), xyzw(q[i[k] + 1])]))([u[k]]).as_matrix()[0]
        assert np.allclose(Q.to_matrix(out[k]), ref, atol=1e-12)
    assert np.allclose(out[0], q[0]) and np.allclose(np.abs(out[2] @ q[3]), 1.0)
    assert np.array_equal(Q.slerp(q[:1], np.array([0, 0]), np.array([0.2, 0.7])), q[[0, 0]])
