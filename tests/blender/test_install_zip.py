"""The built extension, installed into a FRESH Blender user configuration, solves a scene.

Builds the linux-x64 package with scripts/build_extension.py and the scipy wheel for
CPython 3.11 manylinux x86_64 (downloaded from the package registry into wheels/ with pip
when it is not there yet; skipped only when the registry cannot be reached), installs it
with ``bpy.ops.extensions.package_install_files`` in a separate bpy process whose
BLENDER_USER_* folders point into a temporary directory, enables it and runs Solve
Trajectory on a small car scene through the installed copy, with ``import scipy`` forced
to resolve to the wheel the extension installed. The process disables the extension
before it exits (bpy 4.5 hangs at exit with an operator class registered).
"""
from __future__ import annotations

import os
import pathlib
import platform
import subprocess
import sys
import textwrap

import pytest

bpy = pytest.importorskip("bpy")

ROOT = pathlib.Path(__file__).resolve().parents[2]
import build_extension  # noqa: E402

PYTHON, PLATFORM = "3.11", "manylinux_2_28_x86_64"
UNREACHABLE = ("Could not fetch URL", "NewConnectionError", "Temporary failure in name resolution",
               "Failed to establish a new connection", "Network is unreachable", "ConnectTimeout",
               "ReadTimeoutError", "ProxyError", "Max retries exceeded", "No route to host")


def scipy_wheel() -> pathlib.Path:
    wheels = ROOT / "wheels"
    found = [w for w in build_extension.existing_wheels(wheels) if "cp311" in w.name and "x86_64" in w.name
             and "manylinux" in w.name]
    if found:
        return found[0]
    wheels.mkdir(exist_ok=True)
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                           "-d", str(wheels), *build_extension.pip_args(PYTHON, PLATFORM)],
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        text = done.stdout + done.stderr
        if any(marker in text for marker in UNREACHABLE):
            pytest.skip(f"the package registry cannot be reached to download {build_extension.SCIPY}: "
                        f"{text.strip().splitlines()[-1]}")
        pytest.fail(f"pip download failed: {text[-2000:]}")
    return scipy_wheel()


SCRIPT = textwrap.dedent('''
    import importlib.abc, importlib.machinery, pathlib, sys
    import bpy

    zip_path, user = sys.argv[1], pathlib.Path(sys.argv[2])
    extensions = pathlib.Path(bpy.utils.user_resource("EXTENSIONS"))
    assert extensions.is_relative_to(user), extensions          # the fresh configuration is used
    assert "vehicle_motion" not in bpy.types.Object.bl_rna.properties

    result = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default",
                                                      enable_on_install=True)
    assert result == {"FINISHED"}, result
    module = "bl_ext.user_default.vehicle_motion"
    package = sys.modules[module]
    assert pathlib.Path(package.__file__).is_relative_to(extensions), package.__file__
    site = sorted(extensions.glob(".local/lib/python*/site-packages"))
    assert site and (site[0] / "scipy").is_dir(), "the scipy wheel was not installed"

    class BundledScipyOnly(importlib.abc.MetaPathFinder):
        """scipy must come from the wheel the extension installed, not from this environment."""
        def find_spec(self, name, path=None, target=None):
            if name == "scipy":
                spec = importlib.machinery.PathFinder.find_spec(name, [str(site[0])])
                if spec is None:
                    raise ImportError("scipy is not in the extension's site-packages")
                return spec
            return None

    assert "scipy" not in sys.modules
    sys.meta_path.insert(0, BundledScipyOnly())
    try:
        bpy.ops.wm.read_homefile(use_empty=True)
        scene = bpy.context.scene
        scene.render.fps = 8
        mesh = bpy.data.meshes.new("Car")
        mesh.from_pydata([(x, y, z) for x in (-0.8, 3.4) for y in (-0.9, 0.9) for z in (0.2, 1.4)], [], [])
        car = bpy.data.objects.new("Car", mesh)
        scene.collection.objects.link(car)
        car.vehicle_motion.preset = "HATCHBACK"
        for role in ("wheel_rear_left", "wheel_rear_right", "wheel_front_left", "wheel_front_right"):
            wheel = bpy.data.objects.new(role, None)
            scene.collection.objects.link(wheel)
            wheel.parent = car
            setattr(car.vehicle_motion, role, wheel)
        for frame, x in ((1, 0.0), (17, 8.0)):
            car.location = (x, 0.0, 0.0)
            car.keyframe_insert("location", frame=frame)
        vm = scene.vehicle_motion
        vm.frame_start, vm.frame_end, vm.steps_per_frame, vm.solver_backend = 1, 17, 1, "SCIPY"
        bpy.context.view_layer.objects.active = car
        operator = bpy.types.VEHICLE_MOTION_OT_solve_trajectory
        assert operator.__module__.startswith(module), operator.__module__
        assert bpy.ops.vehicle_motion.solve_trajectory() == {"FINISHED"}
        import scipy
        assert pathlib.Path(scipy.__file__).is_relative_to(site[0]), scipy.__file__
        scene.frame_set(17)
        assert abs(car.matrix_world.translation.x - 8.0) < 1e-5 and abs(car.matrix_world.translation.y) < 1e-5
        print("REPORT", vm.last_report)
        print("SCIPY", scipy.__version__, scipy.__file__)
    finally:
        bpy.ops.preferences.addon_disable(module=module)
    assert not hasattr(bpy.types, "VEHICLE_MOTION_OT_solve_trajectory")
    print("INSTALLED EXTENSION SOLVED")
''')


@pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")),
                    reason="builds the linux-x64 package (the scipy wheel is for linux x86_64)")
def test_install_zip_into_fresh_user_config_and_solve(tmp_path):
    wheel = scipy_wheel()
    built = build_extension.build(build_extension.blender_ext_path(), [wheel], tmp_path / "dist", split=True)
    assert [p.name for p in built] == ["vehicle_motion-0.1.0-linux_x64.zip"]
    user = tmp_path / "user"
    env = dict(os.environ)
    for name, folder in (("BLENDER_USER_RESOURCES", "resources"), ("BLENDER_USER_CONFIG", "config"),
                         ("BLENDER_USER_SCRIPTS", "scripts"), ("BLENDER_USER_EXTENSIONS", "extensions"),
                         ("BLENDER_USER_DATAFILES", "datafiles")):
        env[name] = str(user / folder)
    script = tmp_path / "install_and_solve.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(built[0]), str(user)], capture_output=True, text=True,
                          timeout=900, env=env, cwd=tmp_path)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-4000:])
    assert "INSTALLED EXTENSION SOLVED" in done.stdout
    assert "REPORT Solved 'Car': cost" in done.stdout
    print(next(line for line in done.stdout.splitlines() if line.startswith("SCIPY")))
