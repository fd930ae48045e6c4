"""`clear`: delete every shape on the canvas."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp


class Clear(ActionModel):
    """What the model writes for `clear`: nothing besides the name (every shape goes)."""


def _sanitize_clear(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    return data if complete else None


def _resolve_clear(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    ids = [sid for sid, s in ctx.shapes.items() if not s.get("parentId")]
    return [WireOp("delete_shape", {"ids": ids})] if ids else []


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_CLEAR = """Delete every shape on the canvas. Only when the user asks for a clean slate."""

CLEAR = ActionSpec(
    "clear",
    family="shapes",
    kind="canvas",
    schema=Clear,
    description="Delete every shape on the canvas.",
    guide=_CLEAR,
    sanitize=_sanitize_clear,
    resolve=_resolve_clear,
)
