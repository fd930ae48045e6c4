"""The shapes an arrange action names: the `Ids` schema, the check that they exist, their
common centre, and the rule that arrange actions act on complete versions only."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel, RunState
from steward.actions.sanitize import to_number
from steward.canvas.bounds import shape_bounds, union


class Ids(ActionModel):
    intent: str
    shapeIds: list[str]


def when_complete(fn: Any) -> Any:
    """A sanitize that runs `fn(data, ctx)` on complete versions only."""

    def sanitize(
        data: dict[str, Any], ctx: RunState, index: int, complete: bool
    ) -> dict[str, Any] | None:
        return fn(data, ctx) if complete else None

    return sanitize


def with_ids(data: dict[str, Any], ctx: RunState) -> dict[str, Any] | None:
    """The action with `_ids`: the shapes it names that exist (None if none do)."""
    ids = ctx.existing_ids(data.get("shapeIds") or data.get("shapeId") or [])
    if not ids:
        ctx.notes.append(f"{data.get('_type')}: no existing shapes among {data.get('shapeIds')!r}")
        return None
    return {**data, "_ids": ids}


def origin(data: dict[str, Any], ctx: RunState) -> tuple[float, float]:
    """The page point to turn or scale about: the one given, or the shapes' centre."""
    box = union(shape_bounds(ctx.shapes[i], ctx.shapes) for i in data["_ids"])
    ox, oy = to_number(data.get("originX")), to_number(data.get("originY"))
    cx = ctx.coords.x_from_model(ox) if ox is not None else (box.mid_x if box else 0.0)
    cy = ctx.coords.y_from_model(oy) if oy is not None else (box.mid_y if box else 0.0)
    return cx, cy
