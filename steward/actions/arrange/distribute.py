"""`distribute`: space shapes so the gaps between them are equal."""

from __future__ import annotations

from typing import Any, Literal

from steward.actions.arrange.line_up import DIRECTION_ALIASES, DIRECTIONS, sanitize_layout
from steward.actions.arrange.mirror_diff import diff_ops
from steward.actions.arrange.targets import Ids, when_complete
from steward.actions.base import ActionSpec, RunState, WireOp


class Distribute(Ids):
    """What the model writes for `distribute`: the shapes and the axis along which their gaps are
    made equal."""

    direction: Literal["horizontal", "vertical"]


def _resolve_distribute(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return diff_ops(ctx, "distribute", {"ids": data["_ids"], "direction": data["direction"]})


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_DISTRIBUTE = """Space three or more shapes so the gaps between them are equal, horizontally or
vertically; the outermost shapes stay where they are."""

DISTRIBUTE = ActionSpec(
    "distribute",
    family="arrange",
    kind="canvas",
    schema=Distribute,
    description="Space shapes evenly.",
    guide=_DISTRIBUTE,
    sanitize=when_complete(sanitize_layout("direction", DIRECTIONS, DIRECTION_ALIASES)),
    resolve=_resolve_distribute,
)
