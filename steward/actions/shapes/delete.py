"""`delete`: remove shapes by id."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp


class Delete(ActionModel):
    """What the model writes for `delete`: why, and the shape to remove."""

    intent: str
    shapeId: str


def _sanitize_delete(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    if not complete:
        return None
    asked = data.get("shapeIds") or data.get("shapeId")
    ids = ctx.existing_ids(asked)
    if not ids:
        ctx.notes.append(f"delete of missing shape {str(asked)[:60]!r}")
        return None
    return {**data, "_ids": ids}


def _resolve_delete(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return [WireOp("delete_shape", {"ids": data["_ids"]})]


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_DELETE = """Remove a shape by its id, and only what the request calls for. Arrows bound to a
deleted shape stay, loose at that end: delete or reconnect them too."""

DELETE = ActionSpec(
    "delete",
    family="shapes",
    kind="canvas",
    schema=Delete,
    description="Delete a shape.",
    guide=_DELETE,
    sanitize=_sanitize_delete,
    resolve=_resolve_delete,
)
