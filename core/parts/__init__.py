"""Articulated parts of a vehicle, from plain data: links joined to the vehicle (or to each other)
by hinges or two-axis swing joints, simulated either as secondary motion driven by the
vehicle's motion (:mod:`.secondary`, the tree variational integrator of Johnson & Murphey) or as a
free-base articulated system together with the vehicle (:mod:`.articulated`, the chain of
Park & Chung integrated by the Lie group families), the vehicle's own forces on the free base
coming from its model (:mod:`.base`: a helicopter's rotor, a boat's buoyancy and drag).

:mod:`.spec` holds the description (:class:`Part`), its validation and the joint rotations
that a baker applies to each part's object; :mod:`.grip` the lateral wheel damping of a
trailer. Nothing here knows about Blender: the add-on reads the parts from the scene.
"""
from .spec import AXES, Part, joint_quaternions, swing_axes, validate

__all__ = ["Part", "AXES", "validate", "swing_axes", "joint_quaternions"]
