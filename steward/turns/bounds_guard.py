"""Task bounds, enforced on the wire actions a working fairy sends.

The rule (checked action by action, against the canvas as the earlier actions of the same
batch left it):

1. A shape *belongs* to a task area when its page bounds lie inside the area (1 px slack).
2. ``create_shape``: a new shape inside the area is kept. One that lies partly or wholly
   outside but fits (its width and height are at most the area's) is *clamped*: moved by
   the smallest shift that brings it inside. One too big for the area is *refused*. Reusing
   the id of an existing shape that does not belong to the area is refused.
3. ``update_shape``: the shape must belong to the area; when the update would carry it
   outside, its position is clamped as for a create if it fits, otherwise refused.
4. Every other canvas verb (delete, move, resize, rotate, group, ungroup, align, distribute,
   stack, reorder): every shape it touches must belong to the area before, and every shape
   it leaves on the canvas must still belong after; otherwise the whole action is refused.
5. Verbs that do not change the canvas (think, todo, add_detail, set_viewport) pass.

Refusals come back as feedback text for the model. Two drones whose areas overlap can
both work in the overlap, but neither can touch a shape that sticks out into the other's
area beyond its own, so parallel drones cannot trample each other's work.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.apply import (
    UI_ONLY_VERBS,
    Shapes,
    affected_ids,
    apply_wire_action,
    descendants,
)
from steward.canvas.bounds import num, shape_bounds
from steward.canvas.coords import CoordinateSpace
from steward.protocol.box import Box
from steward.protocol.messages import WireAction

SLACK = 1.0


@dataclass
class BoundsVerdict:
    """What the bounds guard made of a batch: the actions that may go, the refused ones with
    feedback, the clamped ones."""

    actions: list[WireAction] = field(default_factory=list)  # what may be sent (maybe clamped)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (action id, feedback)
    clamped: list[str] = field(default_factory=list)  # action ids that were moved inside


def belongs(box: Box, area: Box) -> bool:
    return area.expand(SLACK).contains(box)


def clamp_shift(box: Box, area: Box) -> tuple[float, float] | None:
    """The smallest (dx, dy) that moves `box` inside `area`, or None when it cannot fit."""
    if box.w > area.w + SLACK or box.h > area.h + SLACK:
        return None
    dx = max(area.x - box.x, 0.0) + min(area.max_x - box.max_x, 0.0)
    dy = max(area.y - box.y, 0.0) + min(area.max_y - box.max_y, 0.0)
    return dx, dy


def _shifted(action: WireAction, dx: float, dy: float, base: dict[str, Any]) -> WireAction:
    params = dict(action.params)
    params["x"] = num(params.get("x", base.get("x"))) + dx
    params["y"] = num(params.get("y", base.get("y"))) + dy
    return WireAction(id=action.id, name=action.name, params=params)


class BoundsGuard:
    """Checks one fairy's actions against its task area, on its own scratch copy."""

    def __init__(self, area: Box, frame: Callable[[], CoordinateSpace] | None = None) -> None:
        self.area = area
        # The frame the model reads coordinates in (its run's, which is set at its first
        # request): refusals name the area in it.
        self._frame = frame or CoordinateSpace

    def _describe(self, area: Box) -> str:
        return f"({self._frame().box_text(area.x, area.y, area.w, area.h)})"

    def check(self, actions: Iterable[WireAction], shapes: Shapes) -> BoundsVerdict:
        scratch: Shapes = copy.deepcopy(shapes)
        verdict = BoundsVerdict()
        for action in actions:
            kept, why, clamped = self._one(action, scratch)
            if kept is None:
                verdict.refused.append((action.id, why))
                continue
            apply_wire_action(scratch, kept)
            verdict.actions.append(kept)
            if clamped:
                verdict.clamped.append(action.id)
        return verdict

    def _inside(self, sid: str, shapes: Shapes) -> bool:
        s = shapes.get(sid)
        return s is None or belongs(shape_bounds(s, shapes), self.area)

    def _one(self, action: WireAction, shapes: Shapes) -> tuple[WireAction | None, str, bool]:
        area = self.area
        if action.name in UI_ONLY_VERBS:
            return action, "", False
        if action.name in ("create_shape", "update_shape"):
            sid = action.params.get("id")
            if not isinstance(sid, str):
                return action, "", False
            existing = shapes.get(sid)
            if existing is not None and not self._inside(sid, shapes):
                return (
                    None,
                    f'Shape "{sid}" is outside your task bounds {self._describe(area)}; '
                    "you may only change shapes inside them.",
                    False,
                )
            if action.name == "update_shape" and existing is None:
                return action, "", False  # nothing to change: harmless
            trial: Shapes = copy.deepcopy(shapes)
            apply_wire_action(trial, action)
            box = shape_bounds(trial[sid], trial)
            if belongs(box, area):
                return action, "", False
            shift = clamp_shift(box, area)
            if shift is None:
                return (
                    None,
                    f'Shape "{sid}" ({round(box.w)}×{round(box.h)}) does not fit in your task '
                    f"bounds {self._describe(area)}; make it smaller.",
                    False,
                )
            return _shifted(action, shift[0], shift[1], trial[sid]), "", True
        # Every other verb: all touched shapes inside before, and still inside after.
        touched = (
            descendants(shapes, _ids(action))
            if action.name == "delete_shape"
            else affected_ids(shapes, action)
        )
        outside = [sid for sid in touched if not self._inside(sid, shapes)]
        if outside:
            return (
                None,
                f"{action.name} refused: {', '.join(outside[:5])} lie outside your task bounds "
                f"{self._describe(area)}.",
                False,
            )
        trial = copy.deepcopy(shapes)
        apply_wire_action(trial, action)
        escaped = [sid for sid in touched if sid in trial and not self._inside(sid, trial)]
        if escaped:
            return (
                None,
                f"{action.name} refused: it would carry {', '.join(escaped[:5])} outside your "
                f"task bounds {self._describe(area)}.",
                False,
            )
        return action, "", False


def _ids(action: WireAction) -> list[str]:
    raw = action.params.get("ids")
    return [i for i in raw if isinstance(i, str)] if isinstance(raw, list) else []


def shapes_in(shapes: Shapes, area: Box) -> list[dict[str, Any]]:
    """The shapes a fairy working in `area` may see (the ones that belong to it)."""
    return [s for s in shapes.values() if belongs(shape_bounds(s, shapes), area)]
