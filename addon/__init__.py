"""The only bridge between Blender and ``core``: settings, scene reading, baking.

Importing this package must not import scipy (it may be missing until the extension's
wheels are installed); modules that need core import it inside their functions.
"""
from __future__ import annotations

from . import articulation_properties, properties

classes = (*properties.classes, *articulation_properties.classes)


def attach() -> None:
    properties.attach()
    articulation_properties.attach()


def detach() -> None:
    articulation_properties.detach()
    properties.detach()
