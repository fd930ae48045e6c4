"""`label`: set or replace the text of one shape."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.fields import FIELDS
from steward.actions.sanitize import to_text
from steward.canvas.simple import model_type


class Label(ActionModel):
    """What the model writes for `label`: why, the shape, and its new text."""

    intent: str
    shapeId: str
    text: str


def _sanitize_label(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    sid = ctx.existing_id(data.get("shapeId"))
    text = to_text(data.get("text"))
    if sid is None or text is None:
        if complete:  # partial versions come back complete; say it once
            what = "missing shape" if sid is None else "shape, without text"
            ctx.notes.append(f"label of {what} {str(data.get('shapeId'))[:60]!r}")
        return None
    kind = model_type(ctx.shapes[sid])
    if "text" not in FIELDS.get(kind, frozenset()):
        # Browsers would drop the text of a shape that cannot show one; the mirror would not.
        if complete:
            ctx.notes.append(
                f"label of {sid!r} refused: a {kind} shape cannot show text; label a geometric "
                "shape, note or arrow, or create a text shape beside it"
            )
        return None
    return {**data, "_id": sid, "text": text}


def _resolve_label(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return [WireOp("update_shape", {"id": data["_id"], "props": {"text": data["text"]}})]


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_LABEL = """Set or replace the text of one shape: the label of a geometric shape, note or arrow, or
the text of a text shape. The label rules of `create` apply: label only when the request calls for
it, and make sure the text fits its shape."""

LABEL = ActionSpec(
    "label",
    family="shapes",
    kind="canvas",
    schema=Label,
    description="Set the text of a shape.",
    guide=_LABEL,
    sanitize=_sanitize_label,
    resolve=_resolve_label,
    streams=True,
    atomic_fields=("shapeId",),
)
