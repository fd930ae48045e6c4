"""`resize`: scale shapes about an origin (a negative scale flips them)."""

from __future__ import annotations

from typing import Any

from steward.actions.arrange.mirror_diff import diff_ops
from steward.actions.arrange.targets import Ids, origin, when_complete, with_geometry, with_ids
from steward.actions.base import ActionSpec, RunState, WireOp
from steward.actions.sanitize import to_number


class Resize(Ids):
    """What the model writes for `resize`: the shapes, the scale on each axis (negative flips) and
    the origin scaled about."""

    scaleX: float
    scaleY: float
    originX: float | None = None
    originY: float | None = None


def _sanitize_resize(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
    out = with_ids(data, ctx)
    # A negative scale is a flip: the shapes are mirrored across that axis.
    sx, sy = to_number(data.get("scaleX"), limit=100.0), to_number(data.get("scaleY"), limit=100.0)
    if out is None or not sx or not sy:
        return None
    out = {**out, "scaleX": sx, "scaleY": sy}
    # The origin it scales about, as applied (its default is the shapes' centre).
    ox, oy = origin(out, ctx)
    out["originX"], out["originY"] = ctx.coords.frame_x(ox), ctx.coords.frame_y(oy)
    out["_origin"] = (ox, oy)
    return with_geometry(out, ctx, _resolve_resize)


def _resolve_resize(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    ox, oy = data["_origin"]
    params = {
        "ids": data["_ids"],
        "scaleX": data["scaleX"],
        "scaleY": data["scaleY"],
        "originX": ox,
        "originY": oy,
    }
    return diff_ops(ctx, "resize", params)


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_RESIZE = """Scale shapes by scaleX and scaleY about originX, originY (by default their common
centre): 2 doubles, 0.5 halves."""

RESIZE = ActionSpec(
    "resize",
    family="arrange",
    kind="canvas",
    schema=Resize,
    description="Scale shapes about an origin.",
    guide=_RESIZE,
    sanitize=when_complete(_sanitize_resize),
    resolve=_resolve_resize,
)
