"""Planning a shot from plain data (no Blender): the frame range and frame map, obstacle shapes
fitted to vertex arrays, keys and constraint empties to ``solve`` scenarios, and solver messages
in the artist's terms. ``addon/`` gathers the data from the scene and calls :func:`plan`."""
from .frames import FrameMap, bake_frames, fmt_frame, scene_fps, shot_range
from .geometry import ObstacleShape, fit_shape, polar, quaternion_of, yaw
from .plan import Constraint, KeyPose, Problem, Segment, ShotError, ShotInput, ShotSettings, plan

__all__ = ["FrameMap", "bake_frames", "fmt_frame", "scene_fps", "shot_range", "ObstacleShape", "fit_shape",
           "polar", "quaternion_of", "yaw", "Constraint", "KeyPose", "Problem", "Segment", "ShotError",
           "ShotInput", "ShotSettings", "plan"]
