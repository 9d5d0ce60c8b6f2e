"""benchmarks/kkt_peers.py: the stage-wise car that CasADi+FATROP solves is our NLP (a few seconds).

The benchmark compares our backends with FATROP on a reformulation of the car program (stage vector
(s_0, u_0, …, s_N), fixed start and goal as bounds); its figures mean something only if that program is ours:
same cost and maximum violation at the initial guess and at a perturbed point, a variable mapping that
round-trips, the three-obstacle car derived from the tunnel sample, and a FATROP optimum that our NLP
measures as feasible.
"""
from __future__ import annotations

import numpy as np
import pytest

ca = pytest.importorskip("casadi")


@pytest.fixture(scope="module")
def kp():
    import kkt_peers  # benchmarks/ is on pytest's pythonpath
    return kkt_peers


def _close(a: float, b: float, rel: float = 1e-9) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


@pytest.fixture(scope="module", params=["car", "car3"])
def car20(kp, request):
    setup, nlp, z0, _ = kp.setup_ours(kp.scenario_text(request.param, 20), "ipopt")
    return setup, nlp, z0, kp.fatrop_car_problem(setup, nlp, z0)


def test_three_obstacle_car_keeps_the_boulder_and_the_posts(kp):
    from core.dmoc.scenario import read
    from core.scenario import loads

    full = read(loads(kp.scenario_text("car", 20))).spec.obstacles
    three = read(loads(kp.scenario_text("car3", 20))).spec.obstacles
    assert [o.kind for o in full].count("box") == 2
    assert [o.kind for o in three] == ["sphere", "capsule", "capsule"]
    assert [o.kind for o in full if o.kind != "box"] == [o.kind for o in three]


def test_stage_mapping_round_trips(kp, car20):
    setup, nlp, z0, _ = car20
    model = setup.model
    idx = kp.stage_index(model)
    assert sorted(idx) == sorted(np.concatenate([model.state.ravel(), model.controls.ravel()]))
    z = z0 + np.random.default_rng(1).normal(size=z0.shape)
    v = kp.stages_from_free(nlp, model, z)
    assert np.array_equal(kp.free_from_stages(nlp, model, v), z)
    assert np.array_equal(v[:6], nlp.base[model.state[0]])         # the fixed start, as its bounds


def test_stage_model_is_our_nlp_at_the_guess_and_nearby(kp, car20):
    setup, nlp, z0, built = car20
    f_st, f_us, v_st, v_us = kp.stage_check(built, nlp, z0)
    assert _close(f_st, f_us) and _close(v_st, v_us), (f_st, f_us, v_st, v_us)
    # a perturbed point (bounds kept): the same cost and the same worst violation
    rng = np.random.default_rng(7)
    z = np.clip(z0 + 0.05 * rng.normal(size=z0.shape) * np.maximum(np.abs(z0), 1.0), nlp.lb, nlp.ub)
    v = kp.stages_from_free(nlp, setup.model, z)
    f, g = (np.asarray(x.full()).ravel() for x in built["fg"](v / built["Dv"]))
    viol = np.maximum(np.maximum(built["lbg_u"] - g, g - built["ubg_u"]), 0.0).max()
    assert _close(float(f[0]), nlp.objective(z))
    assert _close(float(viol), nlp.max_violation(z))
    # row by row, up to order: one stage row per NLP row, the same values and the same bounds
    assert len(g) == nlp.m
    np.testing.assert_allclose(np.sort(g), np.sort(nlp.constraint_values(z)), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(np.sort(built["lbg_u"]), np.sort(nlp.cl))
    np.testing.assert_array_equal(np.sort(built["ubg_u"]), np.sort(nlp.cu))


def test_fatrop_optimum_is_feasible_for_our_nlp(kp, car20):
    if not ca.has_nlpsol("fatrop"):
        pytest.skip("casadi without the FATROP plugin")
    setup, nlp, z0, _ = car20
    out = kp.run_fatrop(setup, nlp, z0)
    assert out["ok"], out["status"]
    assert out["structure"][0] == setup.model.N
    assert out["violation"] < 1e-6
    assert np.isfinite(out["cost"]) and out["cost"] > 0
