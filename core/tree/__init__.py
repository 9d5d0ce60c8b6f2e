"""Mechanisms in generalised coordinates on a tree of frames, and their variational integrator
(Johnson & Murphey 2009, "Scalable variational integrators for constrained mechanical
systems in generalized coordinates"; ``docs/equations.md``, "Tree integrator").

Modules: :mod:`.frames` (the tree, eqs. 2–10, closed form, cached), :mod:`.recursive` (Johnson &
Murphey's recursions literally, with and without caching), :mod:`.system` (masses, potentials,
forces, the Lagrangian's derivatives, eqs. 11, 23–35), :mod:`.constraints` (holonomic
constraints, §IV-D), :mod:`.prescribed` (kinematic variables; attaching a tree to a moving
vehicle), :mod:`.variational` (the midpoint VI, eqs. 16–22, 44–46), :mod:`.rk4` (the baseline),
:mod:`.output` (a run as a Trajectory), :mod:`.examples` (the mechanisms of their §V–VI).

Typical use (e.g. a tree carried by a vehicle, baked as secondary motion)::

    from core.tree import Frame, Tree, System, Body, variational, to_trajectory
    from core.tree.prescribed import vehicle_root, vehicle_drives
    frames = vehicle_root("car") + [Frame("arm", "car", "ry", variable="swing"),
                                    Frame("bob", "arm", "tz", value=-0.5)]
    system = System(Tree(frames), [Body("bob", 1.0)],
                    drives=vehicle_drives(traj.time, traj.position, traj.orientation, "car"))
    run = variational.simulate(system, q0, dq0, dt, steps)   # q0 ordered as system.tree.variables
"""
from .constraints import Distance, PointOnPlane, PointToPoint
from .frames import Frame, Kinematics, Tree
from .output import to_trajectory
from .prescribed import Prescribed, vehicle_drives, vehicle_root
from .system import Body, Damper, Force, Spring, System, Wrench

__all__ = ["Frame", "Tree", "Kinematics", "System", "Body", "Spring", "Damper", "Force", "Wrench",
           "Distance", "PointOnPlane", "PointToPoint", "Prescribed", "vehicle_root", "vehicle_drives",
           "to_trajectory"]
