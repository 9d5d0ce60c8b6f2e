"""The one result type that crosses every boundary: integrators and the optimiser
return it, the command line writes it as JSON, the Blender baker reads it.

JSON keys (a contract relied on outside the project): ``time`` (N+1), ``position``
(N+1 × 3), ``orientation`` (N+1 × 4, w x y z), ``angular_velocity`` and
``linear_velocity`` (body frame, N+1 × 3), ``momentum`` {``angular``, ``linear``},
``heading`` (SE(2) vehicles), ``shape`` and ``controls`` (named series), ``stats``,
plus ``vehicle`` and any extra named series (``energy``, …).
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import VehicleMotionError
from .lie import quaternion
from .outputs import write_text


@dataclass
class Trajectory:
    time: np.ndarray
    position: np.ndarray
    orientation: np.ndarray
    angular_velocity: np.ndarray
    linear_velocity: np.ndarray
    momentum_angular: np.ndarray | None = None
    momentum_linear: np.ndarray | None = None
    heading: np.ndarray | None = None
    shape: dict[str, np.ndarray] = field(default_factory=dict)
    controls: dict[str, np.ndarray] = field(default_factory=dict)
    series: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    vehicle: str = "rigid_body"

    def __len__(self) -> int:
        return len(self.time)

    @property
    def rotation_matrices(self) -> np.ndarray:
        return quaternion.to_matrix(self.orientation)

    def truncated(self, n_nodes: int) -> "Trajectory":
        """The first ``n_nodes`` nodes (and n_nodes − 1 controls): used when a run blows up."""
        cut = lambda a: None if a is None else np.asarray(a)[:n_nodes]  # noqa: E731
        return Trajectory(
            time=cut(self.time), position=cut(self.position), orientation=cut(self.orientation),
            angular_velocity=cut(self.angular_velocity), linear_velocity=cut(self.linear_velocity),
            momentum_angular=cut(self.momentum_angular), momentum_linear=cut(self.momentum_linear),
            heading=cut(self.heading),
            shape={k: cut(v) for k, v in self.shape.items()},
            controls={k: np.asarray(v)[: max(n_nodes - 1, 0)] for k, v in self.controls.items()},
            series={k: _cut_series(v, n_nodes) for k, v in self.series.items()},
            stats=dict(self.stats), vehicle=self.vehicle)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "vehicle": self.vehicle,
            "time": self.time,
            "position": self.position,
            "orientation": self.orientation,
            "angular_velocity": self.angular_velocity,
            "linear_velocity": self.linear_velocity,
        }
        if self.momentum_angular is not None:
            d["momentum"] = {"angular": self.momentum_angular, "linear": self.momentum_linear}
        if self.heading is not None:
            d["heading"] = self.heading
        d["shape"] = dict(self.shape)
        d["controls"] = dict(self.controls)
        d.update(self.series)
        d["stats"] = dict(self.stats)
        return _plain(d)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Trajectory":
        try:
            arr = lambda k: np.asarray(d[k], dtype=float)  # noqa: E731
            mom = d.get("momentum")
            known = {"vehicle", "time", "position", "orientation", "angular_velocity",
                     "linear_velocity", "momentum", "heading", "shape", "controls", "stats"}
            return cls(
                time=arr("time"), position=arr("position"), orientation=arr("orientation"),
                angular_velocity=arr("angular_velocity"), linear_velocity=arr("linear_velocity"),
                momentum_angular=None if mom is None else np.asarray(mom["angular"], dtype=float),
                momentum_linear=None if mom is None else np.asarray(mom["linear"], dtype=float),
                heading=None if d.get("heading") is None else np.asarray(d["heading"], dtype=float),
                shape={k: np.asarray(v, dtype=float) for k, v in d.get("shape", {}).items()},
                controls={k: np.asarray(v, dtype=float) for k, v in d.get("controls", {}).items()},
                series={k: v for k, v in d.items() if k not in known},
                stats=dict(d.get("stats", {})), vehicle=str(d.get("vehicle", "rigid_body")))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise VehicleMotionError(f"trajectory: missing or malformed field {exc}") from None

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), allow_nan=False)

    def write_json(self, path: str | os.PathLike) -> None:
        """Write atomically: a failure never leaves a half-written or clobbered file (raises
        VehicleMotionError, a ScenarioError naming the path when the file cannot be written)."""
        path = os.fspath(path)
        write_text(path, self.to_json(), path)

    @classmethod
    def read_json(cls, path: str | os.PathLike) -> "Trajectory":
        """Raises OSError when the file cannot be read, VehicleMotionError when it is not a trajectory
        (not JSON, not UTF-8, fields missing or malformed, NaN or infinite values)."""
        with open(path, "rb") as f:
            raw = f.read()
        try:
            data = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
        except UnicodeDecodeError:
            raise VehicleMotionError("not UTF-8 text (expected a trajectory JSON file)") from None
        except RecursionError:
            raise VehicleMotionError("not a trajectory (its JSON is nested too deeply)") from None
        except ValueError as exc:
            raise VehicleMotionError(f"not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise VehicleMotionError("not a trajectory (expected a JSON object)")
        traj = cls.from_dict(data)
        big = [k for k, a in (("time", traj.time), ("position", traj.position),
                              ("linear_velocity", traj.linear_velocity), ("angular_velocity", traj.angular_velocity),
                              *traj.controls.items(), *traj.shape.items()) if a.size and np.max(np.abs(a)) > 1e15]
        if big:
            raise VehicleMotionError(f"trajectory: {big[0]} has values beyond 1e15 in magnitude")
        n = len(traj.time) if traj.time.ndim == 1 else -1
        per_node = (traj.position, traj.orientation, traj.angular_velocity, traj.linear_velocity)
        if n < 2 or any(a.shape[:1] != (n,) for a in per_node):
            raise VehicleMotionError("trajectory: time, position, orientation and velocities must have one "
                                     "entry per node")
        return traj


def _refuse_constant(name: str) -> float:
    raise VehicleMotionError(f"trajectory contains {name}")


def _cut_series(v: Any, n: int) -> Any:
    if isinstance(v, dict):
        return {k: _cut_series(x, n) for k, x in v.items()}
    a = np.asarray(v)
    return a[:n] if a.ndim >= 1 else v


def _plain(obj: Any) -> Any:
    """numpy → JSON-able lists; refuses NaN/inf so they never reach an output file."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "f" and not np.all(np.isfinite(obj)):
            raise VehicleMotionError("trajectory contains NaN or infinite values")
        return obj.tolist()
    if isinstance(obj, (np.floating, float)):
        if not math.isfinite(float(obj)):
            raise VehicleMotionError("trajectory contains NaN or infinite values")
        return float(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj
