"""Ground from the scene: terrain height, slope and normal queries (bpy-free), and the ride of a car on it.

The mesh terrain (:mod:`.mesh`) and the ride (:mod:`.ride`) load scipy: import them from their modules.
"""
from .surface import FunctionTerrain, PlaneTerrain, Terrain, normal_from_gradient

__all__ = ["Terrain", "PlaneTerrain", "FunctionTerrain", "normal_from_gradient"]
