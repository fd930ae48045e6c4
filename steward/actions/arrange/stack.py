"""`stack`: put shapes one after another in a row or a column, `gap` apart."""

from __future__ import annotations

from typing import Any, Literal

from steward.actions.arrange.line_up import DIRECTION_ALIASES, DIRECTIONS, sanitize_layout
from steward.actions.arrange.mirror_diff import diff_ops
from steward.actions.arrange.targets import Ids, when_complete
from steward.actions.base import ActionSpec, RunState, WireOp


class Stack(Ids):
    """What the model writes for `stack`: the shapes, row or column, and the gap between them."""

    direction: Literal["horizontal", "vertical"]
    gap: float = 0


def _resolve_stack(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return diff_ops(
        ctx, "stack", {"ids": data["_ids"], "direction": data["direction"], "gap": data["gap"]}
    )


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_STACK = """Put shapes one after another in a row (horizontal) or a column (vertical), `gap` pixels
apart."""

STACK = ActionSpec(
    "stack",
    family="arrange",
    kind="canvas",
    schema=Stack,
    description="Stack shapes with a fixed gap.",
    guide=_STACK,
    sanitize=when_complete(sanitize_layout("direction", DIRECTIONS, DIRECTION_ALIASES)),
    resolve=_resolve_stack,
)
