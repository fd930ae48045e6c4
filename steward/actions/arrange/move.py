"""`move`: put a shape's x, y on a point (the only way to move a shape)."""

from __future__ import annotations

from typing import Any

from steward.actions.arrange.mirror_diff import diff_ops
from steward.actions.arrange.targets import when_complete, with_geometry
from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.sanitize import to_number
from steward.canvas.simple import to_simple


class Move(ActionModel):
    """What the model writes for `move`: one shape and the point its x, y goes to."""

    intent: str
    shapeId: str
    x: float
    y: float


def _sanitize_move(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
    sid = ctx.existing_id(data.get("shapeId"))
    x, y = to_number(data.get("x")), to_number(data.get("y"))
    if sid is None or x is None or y is None:
        return None
    px, py = ctx.coords.point_from_model(sid, x, y)
    return with_geometry({**data, "_id": sid, "_x": px, "_y": py}, ctx, _resolve_move)


def _resolve_move(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    simple = to_simple(ctx.shapes[data["_id"]], ctx.shapes)
    cx = simple.get("x", simple.get("x1", 0.0))
    cy = simple.get("y", simple.get("y1", 0.0))
    return diff_ops(
        ctx, "move", {"ids": [data["_id"]], "dx": data["_x"] - cx, "dy": data["_y"] - cy}
    )


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_MOVE = """Move a shape so its x, y (top-left corner; the anchor of centred or right-aligned text;
the start of an arrow or line) lands on the given point. It is the only way to move a shape: never
`update` a position.
- Plan which actions fit: the layout actions (`place`, `align`, `distribute`, `stack`) are exact
  and take fewer steps when they say what you mean; `move` gives exact control when you need it."""

MOVE = ActionSpec(
    "move",
    family="arrange",
    kind="canvas",
    schema=Move,
    description="Move a shape so its x/y is the given position.",
    guide=_MOVE,
    sanitize=when_complete(_sanitize_move),
    resolve=_resolve_move,
)
