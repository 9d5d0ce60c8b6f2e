"""Tree kinematics (Johnson & Murphey 2009, eqs. 2–10): primitives, forward kinematics, body
velocities and all their first and second derivatives, against finite differences, the paper's
literal recursions (cached and uncached), and hand-computed positions; caching; validation."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from core.errors import ScenarioError
from core.lie import quaternion, se3
from core.tree import frames as fr
from core.tree import recursive
from core.tree.frames import Frame, Kinematics, Points, Tree, primitive, primitive_derivatives
from core.tree.prescribed import Prescribed, vehicle_drives, vehicle_root
from core.tree.recursive import RecursiveKinematics

RNG = np.random.default_rng(20260521)


def _quat(*v):
    v = np.asarray(v, dtype=float)
    return tuple(v / np.linalg.norm(v))


def branching_tree() -> Tree:
    """All six primitives, constants and variables, fixed offsets with rotation, two branches."""
    return Tree([
        Frame("a", "world", "rz", variable="q1"),
        Frame("b", "a", "fixed", position=(0.3, 0.1, -0.5), orientation=_quat(1, 0.2, 0.3, -0.1)),
        Frame("c", "b", "ry", variable="q2"),
        Frame("d", "c", "tx", variable="q3"),
        Frame("e", "d", "rx", variable="q4"),
        Frame("f", "e", "tz", value=0.7),
        Frame("g", "a", "ty", variable="q5"),
        Frame("h", "g", "rz", variable="q6"),
        Frame("i", "h", "ry", value=0.4),
        Frame("j", "i", "tz", variable="q7"),
        Frame("k", "world", "tx", value=-0.2),        # a branch straight off the world
        Frame("l", "k", "rx", variable="q8"),
        Frame("m", "l", "fixed", position=(0.0, 0.4, 0.1)),
    ])


TREE = branching_tree()
N = TREE.n
Q = RNG.normal(size=N)
DQ = RNG.normal(size=N)
PTS = Points(np.arange(len(TREE.names)), RNG.normal(size=(len(TREE.names), 3)))


def fd(fun, x, eps=1e-6):
    """Central differences of an array-valued fun w.r.t. each entry of x; the derivative index is
    the last-but-one axis (so shape (..., n, 3) for fun → (..., 3) and x of size n)."""
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        cols.append((fun(x + e) - fun(x - e)) / (2 * eps))
    return np.stack(cols, axis=-2)


def kin(q=Q, dq=DQ):
    return Kinematics(TREE, q, dq, points=PTS)


# -- primitives (§III-D) ------------------------------------------------------------------
@pytest.mark.parametrize("kind", fr.PRIMITIVES)
def test_primitive_is_the_exponential_of_its_twist_with_derivatives(kind):
    xi = fr.unit_twist(kind)
    for x in (-2.0, 0.0, 0.3, 3.0):
        g, d1, d2 = primitive_derivatives(kind, x)
        assert np.allclose(g, expm(se3.hat(xi) * x), atol=1e-14)
        assert np.allclose(primitive(kind, x), g)
        e = 1e-6
        assert np.allclose(d1, (primitive(kind, x + e) - primitive(kind, x - e)) / (2 * e), atol=1e-9)
        assert np.allclose(d2, (primitive_derivatives(kind, x + e)[1] - primitive_derivatives(kind, x - e)[1]) / (2 * e),
                           atol=1e-9)
        assert np.allclose(primitive(kind, -x) @ g, np.eye(4), atol=1e-14)   # g⁻¹(x) = g(−x)


def test_rotation_about_z_matches_johnson_murphey():
    t = 0.7
    c, s = np.cos(t), np.sin(t)
    assert np.allclose(primitive("rz", t), [[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    assert np.allclose(primitive_derivatives("rz", t)[1], [[-s, -c, 0, 0], [c, -s, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert np.allclose(primitive_derivatives("rz", t)[2], [[-c, s, 0, 0], [-s, -c, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])


# -- forward kinematics (eq. 2) -------------------------------------------------------------
def test_forward_kinematics_is_the_product_along_the_path():
    k = kin()
    for name in ("f", "j", "m"):
        idx = TREE.index[name]
        chain, node = [], idx
        while node != 0:
            f = TREE.frames[node - 1]
            g = f.constant_transform() if f.variable is None else primitive(f.transform, Q[TREE.var_index[f.variable]])
            chain.append(g)
            node = TREE.parent[node]
        g = np.eye(4)
        for m in reversed(chain):
            g = g @ m
        assert np.allclose(k.G[idx], g, atol=1e-14)


def test_double_pendulum_positions_by_hand():
    t = Tree([Frame("j1", "world", "ry", variable="a"), Frame("m1", "j1", "tz", value=-1.0),
              Frame("j2", "m1", "ry", variable="b"), Frame("m2", "j2", "tz", value=-0.8)])
    a, b = 0.4, -1.1
    G = t.transforms(np.array([a, b]))
    p1 = np.array([-np.sin(a), 0, -np.cos(a)])
    p2 = p1 + 0.8 * np.array([-np.sin(a + b), 0, -np.cos(a + b)])
    assert np.allclose(G[t.index["m1"], :3, 3], p1)
    assert np.allclose(G[t.index["m2"], :3, 3], p2)


def test_frames_may_be_listed_children_first():
    t = Tree([Frame("child", "parent", "tz", value=1.0), Frame("parent", "world", "rx", variable="x")])
    G = t.transforms(np.array([np.pi / 2]))
    assert np.allclose(G[t.index["child"], :3, 3], [0.0, -1.0, 0.0])


# -- derivatives (eqs. 3–10) against finite differences -----------------------------------------
def test_position_derivatives_eq3_eq4():
    k = kin()
    assert np.allclose(fd(lambda x: kin(x).p, Q), k.dp, atol=2e-9)
    assert np.allclose(fd(lambda x: kin(x).dp, Q), k.d2p, atol=2e-9)


def test_body_velocity_is_g_inverse_g_dot_eq5():
    h = 1e-6
    g_plus, g_minus = TREE.transforms(Q + h * DQ), TREE.transforms(Q - h * DQ)
    k = Kinematics(TREE, Q, DQ)
    vhat = np.linalg.inv(k.G[1:]) @ ((g_plus - g_minus)[1:] / (2 * h))
    assert np.allclose(se3.vee(vhat), k.v, atol=1e-8)
    assert np.allclose(vhat[:, 3, :], 0.0, atol=1e-8)


def test_velocity_derivatives_eq6_to_eq10():
    k = kin()
    assert np.allclose(fd(lambda x: kin(Q, x).v, DQ), k.J, atol=1e-9)          # (8)
    assert np.allclose(fd(lambda x: kin(x).v, Q), k.dv, atol=1e-9)             # (6)
    assert np.allclose(fd(lambda x: kin(x).dv, Q), k.d2v, atol=1e-9)           # (7)
    assert np.allclose(np.swapaxes(fd(lambda x: kin(x).J, Q), -2, -3), k.d2v_mixed, atol=1e-9)   # (10)
    assert np.allclose(fd(lambda x: kin(Q, x).J, DQ), 0.0, atol=1e-9)          # (9)
    assert np.allclose(k.d2v, np.swapaxes(k.d2v, 1, 2))


def test_zero_outside_the_ancestors():
    k = kin()
    J = k.J                       # bodies = every frame but the world
    anc = TREE.anc[1:]
    assert np.all(J[~anc] == 0.0)
    assert np.any(np.abs(J[anc]) > 0)
    # q8 (the world branch) moves nothing on the rz(q1) branch and vice versa
    i8, i1 = TREE.var_index["q8"], TREE.var_index["q1"]
    assert np.all(k.dp[TREE.index["j"], i8] == 0.0) and np.all(k.dp[TREE.index["m"], i1] == 0.0)
    assert np.all(k.d2p[:, i1, i8] == 0.0) and np.all(k.d2v[:, i1, i8] == 0.0)


def test_contractions_equal_the_full_arrays():
    k = kin()
    mu = RNG.normal(size=k.v.shape)
    f = RNG.normal(size=k.p.shape)
    assert np.allclose(k.d2v_dot(mu), np.einsum("kjla,ka->jl", k.d2v, mu), atol=1e-13)
    assert np.allclose(k.d2v_mixed_dot(mu), np.einsum("kija,ka->ij", k.d2v_mixed, mu), atol=1e-13)
    assert np.allclose(k.d2p_dot(f), np.einsum("kjla,ka->jl", k.d2p, f), atol=1e-13)


@pytest.mark.parametrize("cache", [True, False])
def test_johnson_murphey_recursions_agree_with_the_closed_form(cache):
    k = kin()
    r = RecursiveKinematics(TREE, Q, DQ, points=PTS, cache=cache)
    for name in ("G", "p", "dp", "d2p", "v", "J", "dv", "d2v", "d2v_mixed"):
        assert np.allclose(getattr(r, name), getattr(k, name), atol=1e-13), name
    mu = RNG.normal(size=k.v.shape)
    assert np.allclose(r.d2v_dot(mu), k.d2v_dot(mu), atol=1e-13)


def test_batched_evaluation_equals_one_at_a_time():
    Qb = RNG.normal(size=(3, 2, N))
    kb = Kinematics(TREE, Qb, 2 * Qb, points=PTS)
    for idx in ((0, 0), (2, 1)):
        k1 = Kinematics(TREE, Qb[idx], 2 * Qb[idx], points=PTS)
        for name in ("G", "p", "dp", "d2p", "v", "J", "dv", "d2v", "d2v_mixed"):
            assert np.allclose(getattr(kb, name)[idx], getattr(k1, name), atol=1e-14), name


def test_points_with_offsets_are_body_fixed():
    k = kin()
    g = k.G[PTS.frames]
    assert np.allclose(k.p, np.einsum("kab,kb->ka", g[:, :3, :3], PTS.offsets) + g[:, :3, 3])


# -- caching (§III-E) ---------------------------------------------------------------------------
def test_each_quantity_is_computed_once_per_configuration(monkeypatch):
    calls = []
    original = Tree.transforms
    monkeypatch.setattr(Tree, "transforms", lambda self, q: calls.append(1) or original(self, q))
    k = kin()
    for _ in range(3):
        _ = k.J, k.dv, k.p, k.dp, k.d2v, k.v
    assert len(calls) == 1
    assert k.J is k.J
    _ = kin(Q + 0.1).G   # a new configuration is a fresh cache
    assert len(calls) == 2


def test_uncached_recursion_recomputes_the_path_to_the_world(monkeypatch):
    counts = {}

    def counting(kind, x, _orig=recursive.primitive_derivatives):
        counts["n"] = counts.get("n", 0) + 1
        return _orig(kind, x)

    monkeypatch.setattr(recursive, "primitive_derivatives", counting)
    used = {}
    for cache in (True, False):
        counts["n"] = 0
        _ = RecursiveKinematics(TREE, Q, DQ, cache=cache).d2v
        used[cache] = counts["n"]
    assert used[True] == 2 * N          # g(x) and g(−x) once per variable frame
    assert used[False] > 10 * used[True]


# -- validation ---------------------------------------------------------------------------------
BAD_TREES = [
    ([Frame("a", "b", "rx", variable="x"), Frame("b", "a", "rx", variable="y")], "[frames #1] parent", "cycle"),
    ([Frame("a", "world", "rx", variable="x"), Frame("b", "nowhere", "tx", value=1.0)], "[frames #2] parent",
     "unknown frame 'nowhere'"),
    ([Frame("a", "world", "rx", variable="x"), Frame("b", "a", "ty", variable="x")], "[frames #2] variable",
     "already used"),
    ([Frame("a", "world", "spin", variable="x")], "[frames #1] transform", "unknown value 'spin'"),
    ([Frame("a", "world", "rx", variable="x"), Frame("a", "world", "tx", value=1.0)], "[frames #2] name", "defined twice"),
    ([Frame("world", "world", "rx", variable="x")], "[frames #1] name", "reserved"),
    ([Frame("a", "world", "fixed", variable="x")], "[frames #1] variable", "fixed frame"),
    ([Frame("a", "world", "rx", value=1.0, kinematic=True)], "[frames #1] kinematic", "variable"),
    ([Frame("a", "a", "rx", variable="x")], "[frames #1] parent", "cycle"),
]


@pytest.mark.parametrize("frames,where,fragment", BAD_TREES)
def test_bad_trees_are_refused_naming_the_entry(frames, where, fragment):
    with pytest.raises(ScenarioError) as info:
        Tree(frames)
    assert info.value.where == where
    assert fragment in info.value.problem


# -- kinematic drives, vehicle root ----------------------------------------------------------
def test_sampled_drive_reproduces_a_cubic_and_extends_linearly():
    t = np.linspace(0.0, 2.0, 9)
    f = lambda s: 0.5 * s**3 - s**2 + 0.2 * s + 1.0   # noqa: E731
    d = Prescribed.samples(t, f(t))
    s = np.array([0.13, 0.9, 1.77])
    assert np.allclose(d.value(s), f(s), atol=1e-12)
    assert np.allclose(d.rate(s), 1.5 * s**2 - 2 * s + 0.2, atol=1e-11)
    assert np.allclose(d.accel(s), 3 * s - 2, atol=1e-10)
    assert np.isclose(d.value(3.0), f(2.0) + d.rate(2.0) * 1.0)
    with pytest.raises(ScenarioError):
        Prescribed.samples([0.0, 1.0, 1.0], [0.0, 1.0, 2.0])


def test_vehicle_root_follows_pose_samples():
    time = np.linspace(0.0, 4.0, 81)
    yaw, pitch, roll = 0.9 * time, 0.3 * np.sin(time), 0.2 * np.cos(2 * time)
    cy, sy, cp, sp, cr, sr = np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch), np.cos(roll), np.sin(roll)
    Rz = np.stack([np.stack([cy, -sy, 0 * cy], -1), np.stack([sy, cy, 0 * cy], -1), np.stack([0 * cy, 0 * cy, 1 + 0 * cy], -1)], -2)
    Ry = np.stack([np.stack([cp, 0 * cp, sp], -1), np.stack([0 * cp, 1 + 0 * cp, 0 * cp], -1), np.stack([-sp, 0 * cp, cp], -1)], -2)
    Rx = np.stack([np.stack([1 + 0 * cr, 0 * cr, 0 * cr], -1), np.stack([0 * cr, cr, -sr], -1), np.stack([0 * cr, sr, cr], -1)], -2)
    R = Rz @ Ry @ Rx
    pos = np.stack([np.cos(time), 2 * time, 0.1 * time**2], -1)
    drives = vehicle_drives(time, pos, quaternion.from_matrix(R), "car")
    tree = Tree(vehicle_root("car") + [Frame("mast", "car", "tz", value=1.0)])
    q = np.stack([drives[v].value(time) for v in tree.variables], -1)
    G = tree.transforms(q)[:, tree.index["car"]]
    assert np.allclose(G[:, :3, :3], R, atol=1e-12)
    assert np.allclose(G[:, :3, 3], pos, atol=1e-12)
    assert all(tree.kinematic)
