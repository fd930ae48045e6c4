"""Moving and arranging: move, place, rotate, resize, align, distribute, stack,
bringToFront, sendToBack. Geometry runs against the mirror and is sent as `update_shape`."""

from __future__ import annotations

import math
from typing import Any, Literal

from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.convert import record_diff
from steward.actions.sanitize import norm_enum, to_number
from steward.canvas import layout
from steward.canvas.bounds import shape_bounds, union
from steward.canvas.simple import to_simple

ALIGNMENTS = ("left", "center-horizontal", "right", "top", "center-vertical", "bottom")
ALIGN_ALIASES = {
    "center": "center-horizontal",
    "centre": "center-horizontal",
    "center-x": "center-horizontal",
    "horizontal-center": "center-horizontal",
    "middle": "center-vertical",
    "center-y": "center-vertical",
    "vertical-center": "center-vertical",
    "start": "left",
    "end": "right",
}
DIRECTIONS = ("horizontal", "vertical")
DIRECTION_ALIASES = {"row": "horizontal", "x": "horizontal", "column": "vertical", "y": "vertical"}
SIDES = ("top", "bottom", "left", "right")
SIDE_ALIASES = {
    "above": "top",
    "below": "bottom",
    "under": "bottom",
    "before": "left",
    "after": "right",
}
PLACE_ALIGNS = ("start", "center", "end")
PLACE_ALIGN_ALIASES = {
    "left": "start",
    "top": "start",
    "middle": "center",
    "centre": "center",
    "right": "end",
    "bottom": "end",
}


class Move(ActionModel):
    intent: str
    shapeId: str
    x: float
    y: float


class Place(ActionModel):
    intent: str
    shapeId: str
    referenceShapeId: str
    side: Literal["top", "bottom", "left", "right"]
    align: Literal["start", "center", "end"]
    sideOffset: float = 0
    alignOffset: float = 0


class Ids(ActionModel):
    intent: str
    shapeIds: list[str]


class Rotate(Ids):
    degrees: float
    originX: float | None = None
    originY: float | None = None


class Resize(Ids):
    scaleX: float
    scaleY: float
    originX: float | None = None
    originY: float | None = None


class Align(Ids):
    alignment: Literal["left", "center-horizontal", "right", "top", "center-vertical", "bottom"]
    gap: float = 0


class Distribute(Ids):
    direction: Literal["horizontal", "vertical"]


class Stack(Ids):
    direction: Literal["horizontal", "vertical"]
    gap: float = 0


def _diff_ops(ctx: RunState, ops: list[WireOp]) -> list[WireOp]:
    after = ctx.preview(ops)
    out = []
    for sid, new in after.items():
        old = ctx.shapes.get(sid)
        if old is not None and old != new:
            params = record_diff(old, new)
            if len(params) > 1:
                out.append(WireOp("update_shape", params))
    return out


def _complete(fn: Any) -> Any:
    def sanitize(
        data: dict[str, Any], ctx: RunState, index: int, complete: bool
    ) -> dict[str, Any] | None:
        return fn(data, ctx) if complete else None

    return sanitize


def _with_ids(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
    ids = ctx.existing_ids(data.get("shapeIds") or data.get("shapeId") or [])
    if not ids:
        ctx.notes.append(f"{data.get('_type')}: no existing shapes among {data.get('shapeIds')!r}")
        return None
    return {**data, "_ids": ids}


def _sanitize_move(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
    sid = ctx.existing_id(data.get("shapeId"))
    x, y = to_number(data.get("x")), to_number(data.get("y"))
    if sid is None or x is None or y is None:
        return None
    px, py = ctx.coords.point_from_model(sid, x, y)
    return {**data, "_id": sid, "_x": px, "_y": py}


def _resolve_move(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    simple = to_simple(ctx.shapes[data["_id"]], ctx.shapes)
    cx = simple.get("x", simple.get("x1", 0.0))
    cy = simple.get("y", simple.get("y1", 0.0))
    op = WireOp("move", {"ids": [data["_id"]], "dx": data["_x"] - cx, "dy": data["_y"] - cy})
    return _diff_ops(ctx, [op])


def _sanitize_place(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
    sid, ref = ctx.existing_id(data.get("shapeId")), ctx.existing_id(data.get("referenceShapeId"))
    if sid is None or ref is None or sid == ref:
        return None
    return {
        **data,
        "_id": sid,
        "_ref": ref,
        "side": norm_enum(data.get("side"), SIDES, SIDE_ALIASES) or "right",
        "align": norm_enum(data.get("align"), PLACE_ALIGNS, PLACE_ALIGN_ALIASES) or "center",
        "sideOffset": to_number(data.get("sideOffset")) or 0.0,
        "alignOffset": to_number(data.get("alignOffset")) or 0.0,
    }


def _resolve_place(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    delta = layout.place(
        data["_id"],
        data["_ref"],
        data["side"],
        data["align"],
        data["sideOffset"],
        data["alignOffset"],
        ctx.shapes,
    )
    if delta is None:
        return []
    return _diff_ops(ctx, [WireOp("move", {"ids": [data["_id"]], "dx": delta[0], "dy": delta[1]})])


def _origin(data: dict[str, Any], ctx: RunState) -> tuple[float, float]:
    box = union(shape_bounds(ctx.shapes[i], ctx.shapes) for i in data["_ids"])
    ox, oy = to_number(data.get("originX")), to_number(data.get("originY"))
    cx = ctx.coords.x_from_model(ox) if ox is not None else (box.mid_x if box else 0.0)
    cy = ctx.coords.y_from_model(oy) if oy is not None else (box.mid_y if box else 0.0)
    return cx, cy


def _sanitize_rotate(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
    out = _with_ids(data, ctx)
    deg = to_number(data.get("degrees"), limit=36_000)
    return None if out is None or deg is None else {**out, "degrees": deg}


def _resolve_rotate(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    ox, oy = _origin(data, ctx)
    angle = math.radians(data["degrees"])
    op = WireOp("rotate", {"ids": data["_ids"], "angle": angle, "originX": ox, "originY": oy})
    return _diff_ops(ctx, [op])


def _sanitize_resize(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
    out = _with_ids(data, ctx)
    # A negative scale is a flip: the shapes are mirrored across that axis.
    sx, sy = to_number(data.get("scaleX"), limit=100.0), to_number(data.get("scaleY"), limit=100.0)
    if out is None or not sx or not sy:
        return None
    return {**out, "scaleX": sx, "scaleY": sy}


def _resolve_resize(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    ox, oy = _origin(data, ctx)
    params = {
        "ids": data["_ids"],
        "scaleX": data["scaleX"],
        "scaleY": data["scaleY"],
        "originX": ox,
        "originY": oy,
    }
    return _diff_ops(ctx, [WireOp("resize", params)])


def _sanitize_layout(key: str, allowed: tuple[str, ...], aliases: dict[str, str]) -> Any:
    def fn(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
        out = _with_ids(data, ctx)
        value = norm_enum(data.get(key), allowed, aliases)
        if out is None or value is None:
            return None
        gap = to_number(data.get("gap"), limit=10_000)
        return {**out, key: value, "gap": gap or 0.0}

    return fn


def _resolve_align(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    op = WireOp("align", {"ids": data["_ids"], "alignment": data["alignment"]})
    return _diff_ops(ctx, [op])


def _resolve_distribute(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    op = WireOp("distribute", {"ids": data["_ids"], "direction": data["direction"]})
    return _diff_ops(ctx, [op])


def _resolve_stack(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    op = WireOp("stack", {"ids": data["_ids"], "direction": data["direction"], "gap": data["gap"]})
    return _diff_ops(ctx, [op])


def _reorder(to: str) -> Any:
    def fn(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
        return [WireOp("reorder", {"ids": data["_ids"], "to": to})]

    return fn


# System-prompt sections (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to them.
_MOVE = """Move a shape so its x, y (top-left corner; the anchor of centred or right-aligned text;
the start of an arrow or line) lands on the given point. It is the only way to move a shape: never
`update` a position.
- Plan which actions fit: the layout actions (`place`, `align`, `distribute`, `stack`) are exact
  and take fewer steps when they say what you mean; `move` gives exact control when you need it."""

_PLACE = """Put a shape beside a reference shape: on its top, bottom, left or right side, aligned
with the reference's start, center or end. `sideOffset` adds a gap away from the reference,
`alignOffset` shifts the shape along that side."""

_TO_FRONT = """Raise shapes above every other shape (a marker or label that must show over what it
sits on, for instance)."""

_TO_BACK = """Lower shapes beneath every other shape (a background panel behind its content, for
instance)."""

_ROTATE = """Turn shapes clockwise by a number of degrees about originX, originY (by default the
centre of the shapes taken together)."""

_RESIZE = """Scale shapes by scaleX and scaleY about originX, originY (by default their common
centre): 2 doubles, 0.5 halves."""

_ALIGN = """Line shapes up on one edge or centre line: left, center-horizontal, right, top,
center-vertical or bottom."""

_DISTRIBUTE = """Space three or more shapes so the gaps between them are equal, horizontally or
vertically; the outermost shapes stay where they are."""

_STACK = """Put shapes one after another in a row (horizontal) or a column (vertical), `gap` pixels
apart."""

MOVE = ActionSpec(
    "move",
    family="arrange",
    kind="canvas",
    schema=Move,
    description="Move a shape so its x/y is the given position.",
    guide=_MOVE,
    sanitize=_complete(_sanitize_move),
    resolve=_resolve_move,
)

PLACE = ActionSpec(
    "place",
    family="arrange",
    kind="canvas",
    schema=Place,
    description="Place a shape beside another shape.",
    guide=_PLACE,
    sanitize=_complete(_sanitize_place),
    resolve=_resolve_place,
)

BRING_TO_FRONT = ActionSpec(
    "bringToFront",
    family="arrange",
    kind="canvas",
    schema=Ids,
    description="Bring shapes to the front.",
    guide=_TO_FRONT,
    sanitize=_complete(_with_ids),
    resolve=_reorder("front"),
)

SEND_TO_BACK = ActionSpec(
    "sendToBack",
    family="arrange",
    kind="canvas",
    schema=Ids,
    description="Send shapes to the back.",
    guide=_TO_BACK,
    sanitize=_complete(_with_ids),
    resolve=_reorder("back"),
)

ROTATE = ActionSpec(
    "rotate",
    family="arrange",
    kind="canvas",
    schema=Rotate,
    description="Rotate shapes by degrees about an origin.",
    guide=_ROTATE,
    sanitize=_complete(_sanitize_rotate),
    resolve=_resolve_rotate,
)

RESIZE = ActionSpec(
    "resize",
    family="arrange",
    kind="canvas",
    schema=Resize,
    description="Scale shapes about an origin.",
    guide=_RESIZE,
    sanitize=_complete(_sanitize_resize),
    resolve=_resolve_resize,
)

ALIGN = ActionSpec(
    "align",
    family="arrange",
    kind="canvas",
    schema=Align,
    description="Align shapes to each other.",
    guide=_ALIGN,
    sanitize=_complete(_sanitize_layout("alignment", ALIGNMENTS, ALIGN_ALIASES)),
    resolve=_resolve_align,
)

DISTRIBUTE = ActionSpec(
    "distribute",
    family="arrange",
    kind="canvas",
    schema=Distribute,
    description="Space shapes evenly.",
    guide=_DISTRIBUTE,
    sanitize=_complete(_sanitize_layout("direction", DIRECTIONS, DIRECTION_ALIASES)),
    resolve=_resolve_distribute,
)

STACK = ActionSpec(
    "stack",
    family="arrange",
    kind="canvas",
    schema=Stack,
    description="Stack shapes with a fixed gap.",
    guide=_STACK,
    sanitize=_complete(_sanitize_layout("direction", DIRECTIONS, DIRECTION_ALIASES)),
    resolve=_resolve_stack,
)
