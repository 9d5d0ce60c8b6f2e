"""A solved trajectory kept with its object, inside the .blend.

The Trajectory's JSON (``Trajectory.to_json``) is zlib-compressed, base64-encoded and
stored in ``obj.vehicle_motion.trajectory_data`` behind a format tag, so it is saved,
undone, duplicated and linked with the object and Bake works after a reopen.
"""
from __future__ import annotations

import base64
import binascii
import json
import zlib

FORMAT_TAG = "vehicle-motion-trajectory/1;zlib;base64,"


def _errors():
    from ..core.errors import VehicleMotionError
    return VehicleMotionError


def encode(trajectory) -> str:
    raw = trajectory.to_json().encode("utf-8")
    return FORMAT_TAG + base64.b64encode(zlib.compress(raw, 6)).decode("ascii")


def decode(text: str):
    """The Trajectory in ``text`` (as written by ``encode``); raises VehicleMotionError."""
    from ..core.trajectory import Trajectory
    error = _errors()
    if not text.startswith(FORMAT_TAG):
        raise error("stored trajectory has an unknown format")
    try:
        raw = zlib.decompress(base64.b64decode(text[len(FORMAT_TAG):], validate=True))
        data = json.loads(raw.decode("utf-8"))
    except (binascii.Error, zlib.error, UnicodeDecodeError, ValueError) as exc:
        raise error(f"stored trajectory is damaged ({exc})") from None
    if not isinstance(data, dict):
        raise error("stored trajectory is damaged (not a JSON object)")
    return Trajectory.from_dict(data)


def summary(trajectory) -> str:
    t = trajectory.time
    return (f"{trajectory.vehicle}, {len(t)} nodes, "
            f"{float(t[0]):.3g}–{float(t[-1]):.3g} s")


def store(obj, trajectory, text: str | None = None) -> None:
    """Keep ``trajectory`` with ``obj`` (replacing any stored before); ``text``: its :func:`encode`,
    when the caller made it already (to refuse a trajectory before it changed anything)."""
    text = encode(trajectory) if text is None else text
    settings = obj.vehicle_motion
    settings.trajectory_data = text
    settings.trajectory_summary = summary(trajectory)
    settings.has_trajectory = True


def has(obj) -> bool:
    return obj.vehicle_motion.has_trajectory


def load(obj):
    """The trajectory stored with ``obj``; raises VehicleMotionError when there is none."""
    text = obj.vehicle_motion.trajectory_data
    if not text:
        raise _errors()(f"'{obj.name}' has no stored trajectory: solve or simulate it first")
    try:
        return decode(text)
    except _errors() as exc:
        raise _errors()(f"'{obj.name}': {exc}") from None


def clear(obj) -> None:
    settings = obj.vehicle_motion
    settings.trajectory_data = ""
    settings.trajectory_summary = ""
    settings.has_trajectory = False
