"""Vehicle Motion: physically plausible motion for cars, helicopters, boats and snakeboards.

The extension's entry point: ``register()`` / ``unregister()`` collect the classes of
``addon/`` (settings), ``operators/`` and ``panels/``. Nothing here imports scipy, which
may be missing until the extension's wheels are installed; ``core`` is imported inside
the operators that need it. Importing this package imports nothing else (not even bpy),
so tools that walk the source tree can import it outside Blender.
"""
from __future__ import annotations


def _classes() -> tuple:
    from . import addon, operators, panels
    return (*addon.classes, *operators.classes, *panels.classes)


def register() -> None:
    import bpy
    from . import addon
    from .addon import live, preview
    for cls in _classes():
        if not cls.is_registered:
            bpy.utils.register_class(cls)
    addon.attach()
    preview.register()
    live.register()


def unregister() -> None:
    import bpy
    from . import addon
    from .addon import live, preview, solving
    live.unregister()
    solving.cancel_all()
    preview.unregister()
    addon.detach()
    for cls in reversed(_classes()):
        if cls.is_registered:
            bpy.utils.unregister_class(cls)
