"""Vehicle Motion core: Lie group integrators, vehicles and DMOC in numpy + scipy.

Never imports bpy; relative imports only, so it works as the top-level package
``core`` (tests, ``python -m core``) and inside the installed Blender extension.
"""
