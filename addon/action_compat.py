"""Every difference between Blender's action APIs, in one place.

- 4.2 / 4.3: legacy actions, F-curves in ``action.fcurves``.
- 4.4 / 4.5: slotted actions (``action.slots``, ``action.layers[i].strips[j]
  .channelbag(slot)``) plus a legacy ``action.fcurves`` proxy.
- 5.0: slotted actions only; ``Action.fcurves`` is gone.

Callers pass an ``ActionRef`` (an action and, where the version has slots, the slot
that animates one data-block) and never touch either API themselves.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import bpy


@functools.cache
def has_slots() -> bool:
    """Does this Blender have slotted actions (4.4+)?"""
    return "slots" in bpy.types.Action.bl_rna.properties


@dataclass
class ActionRef:
    action: bpy.types.Action
    slot: object | None = None  # bpy.types.ActionSlot on 4.4+, None on the legacy API


def new_action(name: str, id_data: bpy.types.ID) -> ActionRef:
    """A new empty action for ``id_data`` (not assigned), with a slot where slots exist."""
    action = bpy.data.actions.new(name)
    if not has_slots():
        return ActionRef(action)
    slot = action.slots.new(id_type=id_data.id_type, name=id_data.name)
    layer = action.layers.new("Layer")
    layer.strips.new(type="KEYFRAME")
    return ActionRef(action, slot)


def assigned(id_data: bpy.types.ID) -> ActionRef | None:
    """The action (and slot) that ``id_data`` plays now, or None."""
    anim = id_data.animation_data
    if anim is None or anim.action is None:
        return None
    return ActionRef(anim.action, getattr(anim, "action_slot", None))


def assign(id_data: bpy.types.ID, ref: ActionRef | None) -> None:
    """Make ``id_data`` play ``ref`` (None: no action)."""
    if ref is None:
        if id_data.animation_data is not None:
            id_data.animation_data.action = None
        return
    anim = id_data.animation_data_create()
    anim.action = ref.action
    if ref.slot is not None:
        anim.action_slot = ref.slot


def slot_identifier(ref: ActionRef | None) -> str:
    return "" if ref is None or ref.slot is None else ref.slot.identifier


def find_slot(action: bpy.types.Action, identifier: str):
    """The slot of ``action`` called ``identifier``, or None (always None on the legacy API)."""
    if not identifier or not has_slots():
        return None
    for slot in action.slots:
        if slot.identifier == identifier:
            return slot
    return None


def _channelbag(ref: ActionRef, create: bool):
    action, slot = ref.action, ref.slot
    if slot is None:  # a slotted action that animates nothing yet
        return None
    for layer in action.layers:
        for strip in layer.strips:
            bag = strip.channelbag(slot)
            if bag is not None:
                return bag
    if not create:
        return None
    if not action.layers:
        action.layers.new("Layer")
    layer = action.layers[0]
    if not layer.strips:
        layer.strips.new(type="KEYFRAME")
    return layer.strips[0].channelbag(slot, ensure=True)


def _group(container, name: str):
    group = container.groups.get(name)
    return group if group is not None else container.groups.new(name)


def ensure_fcurve(ref: ActionRef, data_path: str, index: int = 0, group: str = "") -> bpy.types.FCurve:
    """The F-curve for ``data_path[index]``, created (in ``group``) when missing."""
    if not has_slots():
        fcurve = ref.action.fcurves.find(data_path, index=index)
        if fcurve is None:
            fcurve = ref.action.fcurves.new(data_path, index=index, action_group=group)
        return fcurve
    bag = _channelbag(ref, create=True)
    fcurve = bag.fcurves.find(data_path, index=index)
    if fcurve is None:
        fcurve = bag.fcurves.new(data_path, index=index)
        if group and hasattr(bag, "groups"):
            fcurve.group = _group(bag, group)
    return fcurve


def find_fcurve(ref: ActionRef, data_path: str, index: int = 0) -> bpy.types.FCurve | None:
    if not has_slots():
        return ref.action.fcurves.find(data_path, index=index)
    bag = _channelbag(ref, create=False)
    return None if bag is None else bag.fcurves.find(data_path, index=index)


def fcurves(ref: ActionRef) -> list[bpy.types.FCurve]:
    """The F-curves that animate ``ref``'s slot (all of the action's on the legacy API)."""
    if not has_slots():
        return list(ref.action.fcurves)
    bag = _channelbag(ref, create=False)
    return [] if bag is None else list(bag.fcurves)


def all_fcurves(action: bpy.types.Action) -> list[bpy.types.FCurve]:
    """Every F-curve of ``action``, whichever slot it animates."""
    if not has_slots():
        return list(action.fcurves)
    return [fc for layer in action.layers for strip in layer.strips
            for bag in strip.channelbags for fc in bag.fcurves]


def remove_action(action: bpy.types.Action) -> None:
    """Delete ``action``, unassigning it from whatever plays it."""
    bpy.data.actions.remove(action, do_unlink=True)
