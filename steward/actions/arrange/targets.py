"""The shapes an arrange action names: the `Ids` schema, the check that they exist, their
common centre, and the rule that arrange actions act on complete versions only."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from steward.actions.base import ActionModel, RunState
from steward.actions.sanitize import to_number
from steward.canvas.apply import Shapes
from steward.canvas.bounds import num, shape_bounds
from steward.protocol.box import union


class Ids(ActionModel):
    """The fields every arrange action shares: why it acts (`intent`) and the shapes it acts on."""

    intent: str
    shapeIds: list[str]


def when_complete(fn: Any) -> Any:
    """A sanitize that runs `fn(data, ctx)` on complete versions only."""

    def sanitize(
        data: dict[str, Any], ctx: RunState, index: int, complete: bool
    ) -> dict[str, Any] | None:
        return fn(data, ctx) if complete else None

    return sanitize


def with_ids(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
    """The action with `_ids`: the shapes it names that exist (None if none do)."""
    ids = ctx.existing_ids(data.get("shapeIds") or data.get("shapeId") or [])
    if not ids:
        ctx.notes.append(f"{data.get('_type')}: no existing shapes among {data.get('shapeIds')!r}")
        return None
    return {**data, "_ids": ids}


def origin(data: dict[str, Any], ctx: RunState) -> tuple[float, float]:
    """The page point to turn or scale about: the one given, or the shapes' centre."""
    box = union(shape_bounds(ctx.shapes[i], ctx.shapes) for i in data["_ids"])
    ox, oy = to_number(data.get("originX")), to_number(data.get("originY"))
    cx = ctx.coords.x_from_model(ox) if ox is not None else (box.mid_x if box else 0.0)
    cy = ctx.coords.y_from_model(oy) if oy is not None else (box.mid_y if box else 0.0)
    return cx, cy


class Layered(ActionModel):
    """The schema of `sendBackward` and `bringForward`: shapes and, optionally, the shape
    they go just behind or just in front of."""

    intent: str
    shapeIds: list[str]
    referenceShapeId: str | None = None


def layer_step(data: dict[str, Any], ctx: RunState, to: str) -> dict[str, Any] | None:
    """`data` with `_ids` and `_target`: the named reference shape, or else the nearest shape
    past the moved ones (behind them for `in_front`, in front for `behind`) that overlaps one
    of them, as tldraw's editor steps; None (with a note) when there is nothing to pass."""
    found = with_ids(data, ctx)
    if found is None:
        return None
    ids: list[str] = found["_ids"]
    name = data.get("_type")
    raw = data.get("referenceShapeId")
    if raw is not None:
        target = ctx.existing_id(raw)
        if target is None or target in ids:
            ctx.notes.append(f"{name}: no other existing shape {raw!r} to place them by")
            return None
        return {**found, "_target": target}
    order = list(ctx.shapes)
    moving = set(ids)
    boxes = [shape_bounds(ctx.shapes[i], ctx.shapes) for i in ids]
    if to == "in_front":
        last = max(order.index(i) for i in ids)
        passing = order[last + 1 :]
    else:
        first = min(order.index(i) for i in ids)
        passing = list(reversed(order[:first]))
    for sid in passing:
        if sid in moving or ctx.shapes[sid].get("parentId") in ctx.shapes:
            continue
        box = shape_bounds(ctx.shapes[sid], ctx.shapes)
        if any(box.intersects(b) for b in boxes):
            return {**found, "_target": sid}
    where = "in front of" if to == "in_front" else "behind"
    ctx.notes.append(f"{name}: no shape overlapping {ids!r} lies {where} them; nothing changed")
    return None


# How many shapes an echo of a geometry change lists before and after (then "more").
_GEOMETRY_SHOWN = 12


def _geometry(shapes: Shapes, ids: list[str], ctx: RunState) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for sid in ids[:_GEOMETRY_SHOWN]:
        s = shapes.get(sid)
        if s is None:
            continue
        b = shape_bounds(s, shapes)
        box: dict[str, Any] = {
            "x": ctx.coords.frame_x(b.x),
            "y": ctx.coords.frame_y(b.y),
            "w": round(b.w),
            "h": round(b.h),
        }
        turn = round(math.degrees(num(s.get("rotation")))) % 360
        if turn:
            box["rotation"] = turn
        out[sid] = box
    if len(ids) > _GEOMETRY_SHOWN:
        out["more"] = len(ids) - _GEOMETRY_SHOWN
    return out


def with_geometry(
    data: dict[str, Any], ctx: RunState, resolve: Callable[[dict[str, Any], RunState], Any]
) -> dict[str, Any]:
    """`data` with what the change does to its shapes: their boxes (and turns) before and
    after, in the model's frame, so the history can tell an exact undo."""
    ids: list[str] = list(data.get("_ids") or ([data["_id"]] if data.get("_id") else []))
    after = ctx.after_ops(resolve(data, ctx))
    return {**data, "before": _geometry(ctx.shapes, ids, ctx), "after": _geometry(after, ids, ctx)}
