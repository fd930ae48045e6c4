"""An area of the canvas the model names (x, y, w, h), for `review` and `setMyView`."""

from __future__ import annotations

from typing import Any

from steward.actions.base import RunState
from steward.actions.sanitize import to_number, to_size
from steward.protocol.box import Box


def named_area(data: dict[str, Any], ctx: RunState, key: str) -> Box | None:
    """The area the model named, on the page (None if a side is missing)."""
    vals = [to_number(data.get(k)) for k in ("x", "y")] + [to_size(data.get(k)) for k in "wh"]
    if any(v is None for v in vals):
        return None
    x, y, w, h = (float(v) for v in vals if v is not None)
    page = ctx.coords.box_from_model(key, {"x": x, "y": y, "w": w, "h": h})
    return Box(page["x"], page["y"], max(page["w"], 1.0), max(page["h"], 1.0))


def needs_box(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    """Complete versions only (the area is read when the action resolves)."""
    if not complete:
        return None
    return data
