"""`sendBackward`: lower shapes one step, or just behind a named shape."""

from __future__ import annotations

from typing import Any

from steward.actions.arrange.targets import Layered, layer_step, when_complete
from steward.actions.base import ActionSpec, RunState, WireOp


def _sanitize(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
    return layer_step(data, ctx, "behind")


def _resolve(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return [WireOp("reorder", {"ids": data["_ids"], "to": "behind", "target": data["_target"]})]


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_BACKWARD = """Lower shapes just behind `referenceShapeId` (a window behind its frame, a tree behind
a fence), or, without it, behind the nearest shape under them that they overlap. Everything else
keeps its place in the stacking order: the shapes stay in front of a background that `sendToBack`
would put them behind."""

SEND_BACKWARD = ActionSpec(
    "sendBackward",
    family="arrange",
    kind="canvas",
    schema=Layered,
    description="Send shapes one step back, or just behind a named shape.",
    guide=_BACKWARD,
    sanitize=when_complete(_sanitize),
    resolve=_resolve,
)
