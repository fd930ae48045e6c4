"""`bringForward`: raise shapes one step, or just in front of a named shape."""

from __future__ import annotations

from typing import Any

from steward.actions.arrange.targets import Layered, layer_step, when_complete
from steward.actions.base import ActionSpec, RunState, WireOp


def _sanitize(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
    return layer_step(data, ctx, "in_front")


def _resolve(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return [WireOp("reorder", {"ids": data["_ids"], "to": "in_front", "target": data["_target"]})]


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_FORWARD = """Raise shapes just in front of `referenceShapeId` (a label over the box it names), or,
without it, in front of the nearest shape above them that they overlap. Everything else keeps its
place in the stacking order."""

BRING_FORWARD = ActionSpec(
    "bringForward",
    family="arrange",
    kind="canvas",
    schema=Layered,
    description="Bring shapes one step forward, or just in front of a named shape.",
    guide=_FORWARD,
    sanitize=when_complete(_sanitize),
    resolve=_resolve,
)
