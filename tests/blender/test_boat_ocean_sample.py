"""The boat-on-the-ocean sample built, solved and baked as the README shows it (samples/build_boat_ocean_scene.py),
measured on the baked F-curves (``frame_set`` + ``matrix_world``) against the evaluated Ocean mesh: the solve
converges, the boat ends at its goal key, and it floats on the waves — its displaced mass, averaged over the shot,
is its mass within 1 % (the mean vertical force on a body whose motion stays bounded vanishes:
tests/blender/test_scene_water.py), and its centre of mass rides the sea's height under it."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

import build_boat_ocean_scene as sample  # noqa: E402
from terrain_kit import solve  # noqa: E402


@pytest.fixture(scope="module")
def ride(addon, tmp_path_factory):
    """Build, solve and bake the sample, draw its picture (where matplotlib is installed); the baked ride."""
    if not bpy.app.build_options.mod_oceansim:
        pytest.skip("this bpy build has no Ocean modifier")
    names = sample.build(10)
    scene = bpy.context.scene
    boat = bpy.data.objects[names["vehicle"]]
    report = solve(scene, boat)
    png = None
    if importlib.util.find_spec("matplotlib") is not None:
        png = tmp_path_factory.mktemp("boat_ocean") / "boat_ocean.png"
        sample.draw(scene, boat, png, report)
    baked = sample.read_baked(scene, boat, bpy.data.objects[names["water"]])
    return {"names": names, "scene": scene, "boat": boat, "report": report, "png": png, "baked": baked}


def test_the_solve_converges_and_bakes(ride):
    from vehicle_motion.addon import storage
    assert storage.load(ride["boat"]).stats["converged"], ride["report"]
    assert "baked frames 1–" in ride["report"]
    assert len(ride["baked"].frames) == ride["names"]["frame_end"]


def test_the_boat_ends_at_its_goal_key(ride):
    tolerance = ride["scene"].vehicle_motion.key_tolerance
    end = ride["baked"].matrix[-1, :2, 3]
    assert np.hypot(*(end - sample.GOAL)) < tolerance
    assert np.hypot(*(ride["baked"].matrix[0, :2, 3] - sample.START)) < tolerance


def test_the_sea_is_a_real_sea_and_the_boat_heaves_on_it(ride):
    """The sea under the boat spans 0.3–0.6 m crest to trough; the centre of mass keeps its height above it
    within ±0.1 m of its mean while the boat heaves by more than that."""
    baked = ride["baked"]
    above = baked.matrix[:, 2, 3] - baked.water
    print(f"sea under the boat {np.ptp(baked.water):.3f} m crest to trough, heave {np.ptp(baked.matrix[:, 2, 3]):.3f}"
          f" m, height above the sea {above.min():.3f} … {above.max():.3f} m, pitch ±"
          f"{np.degrees(np.abs(baked.pitch())).max():.2f}°, roll ±{np.degrees(np.abs(baked.roll())).max():.2f}°")
    assert 0.3 <= np.ptp(baked.water) <= 0.6
    assert np.max(np.abs(above - above.mean())) < 0.1
    assert np.ptp(baked.matrix[:, 2, 3]) > 0.2


def test_its_mean_displaced_mass_is_its_mass(ride):
    """Π_s, the displaced water as a mass (docs/equations.md, Boat, eq. 15), at the baked poses on the sea the solve
    read, averaged over the shot by trapezoids: the boat's mass within 1 %."""
    from vehicle_motion.addon import scene_reader
    from vehicle_motion.core.scenario import Table
    from vehicle_motion.core.scenario.boat import read_boat
    scene, boat, baked = ride["scene"], ride["boat"], ride["baked"]
    problem = scene_reader.read_problem(scene, boat)
    model = read_boat(Table(problem.segments[0].scenario["vehicle"], "vehicle"))
    R = baked.matrix[:, :3, :3] / np.linalg.norm(baked.matrix[:, :3, :3], axis=1, keepdims=True)
    x = problem.frame_map.to_solve(baked.matrix[:, :3, 3] / scene.unit_settings.scale_length)
    displaced = np.asarray(model.displaced_mass(R, x, baked.time))
    t = baked.time
    mean = float(np.sum(0.5 * (displaced[1:] + displaced[:-1]) * np.diff(t)) / t[-1])
    print(f"mean displaced mass {mean:.1f} kg for {model.mass:g} kg ({mean / model.mass - 1:+.2%}); "
          f"{displaced.min():.0f} … {displaced.max():.0f} kg")
    assert abs(mean / model.mass - 1.0) < 0.01
    assert displaced.max() - displaced.min() > 0.05 * model.mass     # it rides the waves


def test_the_picture_is_drawn(ride):
    if ride["png"] is None:
        pytest.skip("matplotlib is not installed in this environment")
    assert ride["png"].stat().st_size > 20_000
