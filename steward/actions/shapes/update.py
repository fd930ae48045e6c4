"""`update`: change fields of a shape that exists (never its position or kind)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.convert import norm_kind, record_diff, simple_to_record
from steward.actions.shapes.page_fields import to_page
from steward.canvas.simple import model_type, to_simple
from steward.canvas.styles import Color


# The fields an update may change (no docstring: it would become the schema's description).
# Each kind takes only its own (a rectangle has no `x1`, a text no `fill`); the sanitizer
# refuses any other key, and a position (x, y: that is `move`), with a note to the model.
class ShapeChange(ActionModel):
    """The fields of one shape an `update` changes: its id and only the fields its kind has."""

    shapeId: str
    type_: str | None = Field(default=None, alias="_type")
    text: str | None = None
    note: str | None = None
    color: Color | None = None
    fill: Literal["none", "tint", "background", "solid", "pattern"] | None = None
    w: float | None = None
    h: float | None = None
    fontSize: float | None = None
    width: float | None = None
    wrap: bool | None = None
    textAlign: Literal["start", "middle", "end"] | None = None
    x1: float | None = None
    y1: float | None = None
    x2: float | None = None
    y2: float | None = None
    bend: float | None = None
    fromId: str | None = None
    toId: str | None = None


class Update(ActionModel):
    """What the model writes for `update`: why, and the change to one shape."""

    intent: str
    update: ShapeChange = Field(
        description="shapeId plus only the fields to change, of those its kind has"
    )


def _sanitize_update(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    if not complete:
        return None
    upd = data.get("update") if isinstance(data.get("update"), dict) else data.get("shape")
    if not isinstance(upd, dict):
        return None
    sid = ctx.existing_id(upd.get("shapeId"))
    if sid is None:
        ctx.notes.append(f"update of missing shape {upd.get('shapeId')!r}")
        return None
    upd = {**upd, "shapeId": sid}
    kind = model_type(ctx.shapes[sid])
    moved = [k for k in ("x", "y") if upd.pop(k, None) is not None]
    if moved:
        ctx.notes.append(
            f"update of {sid!r}: position ({', '.join(moved)}) left as it was; use move"
        )
    if "_type" in upd:
        asked = norm_kind(upd["_type"])
        if asked is None:
            ctx.notes.append(f"update of {sid!r}: _type {upd.pop('_type')!r} is not a kind")
        else:
            kind = upd["_type"] = asked
    for key in ("fromId", "toId"):
        if key in upd and upd[key] is not None:
            upd[key] = ctx.existing_id(upd[key])
    note = f"update of {sid!r} (that field was left as it was)"
    page, written = to_page(kind, upd, ctx, note)
    # `update`: what is applied, in the model's frame (the history's echo); `_update`: on
    # the page.
    return {**data, "update": {**written, "shapeId": sid}, "_update": page, "_id": sid}


def _resolve_update(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    sid = data["_id"]
    current = ctx.shapes[sid]
    simple = to_simple(current, ctx.shapes)
    base = simple_to_record(simple, sid)
    merged = {**simple, **{k: v for k, v in data["_update"].items() if k != "shapeId"}}
    new = simple_to_record(merged, sid)
    if base is None or new is None or base["type"] != new["type"]:
        ctx.notes.append(f"update of {sid!r} cannot change its kind")
        return []
    params = record_diff(base, new)
    return [WireOp("update_shape", params)] if len(params) > 1 else []


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_UPDATE = """Change fields of a shape that exists: its `shapeId` and only the fields that change,
one update per shape. The rules of `create` apply to the new values. Never change a position with
it (x, y: that is `move`); an arrow's or line's ends (x1, y1, x2, y2) are fields it may change. A
shape cannot change kind: delete it and create the new one instead."""

UPDATE = ActionSpec(
    "update",
    family="shapes",
    kind="canvas",
    schema=Update,
    description="Change properties of a shape (not its position).",
    guide=_UPDATE,
    sanitize=_sanitize_update,
    resolve=_resolve_update,
)
