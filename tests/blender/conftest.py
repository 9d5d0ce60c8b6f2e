"""Blender tests: a real bpy session with the extension imported as the package
``vehicle_motion`` from the repository root and registered once for the session.

Fixtures only; the helpers the tests share are modules beside this file (addon_session,
operator_runs, scene_builders, world_checks), imported by bare name.

bpy 4.5 hangs at interpreter exit while a Python Operator class is still registered, so
the add-on is unregistered when the session ends (fixture finalizer, with an atexit
fallback for sessions that die before finalizers run).
"""
from __future__ import annotations

import atexit
import types

import pytest

bpy = pytest.importorskip("bpy")

from addon_session import import_package  # noqa: E402
from operator_runs import make_active  # noqa: E402
from scene_builders import axis_angle_quaternion, helix_trajectory  # noqa: E402
from small_shots import add_object  # noqa: E402
from world_checks import pose_error  # noqa: E402


def _unregister_quietly(module) -> None:
    try:
        module.unregister()
    except Exception:  # already unregistered
        pass


@pytest.fixture(scope="session", autouse=True)
def addon():
    module = import_package()
    module.register()
    atexit.register(_unregister_quietly, module)
    yield module
    module.unregister()


@pytest.fixture
def empty_scene(addon):
    """An empty file: one scene at 24 fps, frames 1–250, nothing else."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    scene.frame_set(1)
    return scene


@pytest.fixture(scope="session")
def vm(addon):
    """The shared helpers and the imported package, for the tests."""
    return types.SimpleNamespace(
        package=addon, add_object=add_object, make_active=make_active,
        helix_trajectory=helix_trajectory, pose_error=pose_error,
        axis_angle_quaternion=axis_angle_quaternion)
