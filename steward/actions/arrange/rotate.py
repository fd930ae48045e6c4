"""`rotate`: turn shapes by degrees about an origin."""

from __future__ import annotations

import math
from typing import Any

from steward.actions.arrange.mirror_diff import diff_ops
from steward.actions.arrange.targets import Ids, origin, when_complete, with_geometry, with_ids
from steward.actions.base import ActionSpec, RunState, WireOp
from steward.actions.sanitize import to_number


class Rotate(Ids):
    """What the model writes for `rotate`: the shapes, the angle in degrees and the origin turned
    about."""

    degrees: float
    originX: float | None = None
    originY: float | None = None


def _sanitize_rotate(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
    out = with_ids(data, ctx)
    deg = to_number(data.get("degrees"), limit=36_000)
    if out is None or deg is None:
        return None
    out = {**out, "degrees": deg}
    # The origin it turns about, as applied (its default is the shapes' centre).
    ox, oy = origin(out, ctx)
    out["originX"], out["originY"] = ctx.coords.frame_x(ox), ctx.coords.frame_y(oy)
    out["_origin"] = (ox, oy)
    return with_geometry(out, ctx, _resolve_rotate)


def _resolve_rotate(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    ox, oy = data["_origin"]
    angle = math.radians(data["degrees"])
    return diff_ops(
        ctx, "rotate", {"ids": data["_ids"], "angle": angle, "originX": ox, "originY": oy}
    )


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_ROTATE = """Turn shapes clockwise by a number of degrees about originX, originY (by default the
centre of the shapes taken together)."""

ROTATE = ActionSpec(
    "rotate",
    family="arrange",
    kind="canvas",
    schema=Rotate,
    description="Rotate shapes by degrees about an origin.",
    guide=_ROTATE,
    sanitize=when_complete(_sanitize_rotate),
    resolve=_resolve_rotate,
)
