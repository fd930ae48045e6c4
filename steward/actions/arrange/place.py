"""`place`: put a shape beside a reference shape."""

from __future__ import annotations

from typing import Any, Literal

from steward.actions.arrange.mirror_diff import diff_ops
from steward.actions.arrange.targets import when_complete
from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.sanitize import norm_enum, to_number
from steward.canvas import layout

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


class Place(ActionModel):
    """What the model writes for `place`: a shape, the reference shape it goes beside, on which
    side, aligned how and how far off."""

    intent: str
    shapeId: str
    referenceShapeId: str
    side: Literal["top", "bottom", "left", "right"]
    align: Literal["start", "center", "end"]
    sideOffset: float = 0
    alignOffset: float = 0


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
    return diff_ops(ctx, "move", {"ids": [data["_id"]], "dx": delta[0], "dy": delta[1]})


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_PLACE = """Put a shape beside a reference shape: on its top, bottom, left or right side, aligned
with the reference's start, center or end. `sideOffset` adds a gap away from the reference,
`alignOffset` shifts the shape along that side."""

PLACE = ActionSpec(
    "place",
    family="arrange",
    kind="canvas",
    schema=Place,
    description="Place a shape beside another shape.",
    guide=_PLACE,
    sanitize=when_complete(_sanitize_place),
    resolve=_resolve_place,
)
