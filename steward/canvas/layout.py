"""Layout geometry: align, distribute, stack and place as per-shape translations.

The steward resolves the model's layout actions with these functions into concrete
`update_shape` ops; `apply_wire_action` uses the same functions for the layout verbs, so
every implementation lands on the same coordinates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from steward.canvas.bounds import shape_bounds
from steward.protocol.box import Box, union

Alignment = Literal["left", "center-horizontal", "right", "top", "center-vertical", "bottom"]
Direction = Literal["horizontal", "vertical"]
Side = Literal["top", "bottom", "left", "right"]
SideAlign = Literal["start", "center", "end"]

Shapes = Mapping[str, Mapping[str, Any]]
Deltas = dict[str, tuple[float, float]]


def _bounds(ids: Sequence[str], shapes: Shapes) -> list[tuple[str, Box]]:
    return [(i, shape_bounds(shapes[i], shapes)) for i in ids if i in shapes]


def align(ids: Sequence[str], alignment: str, shapes: Shapes) -> Deltas:
    items = _bounds(ids, shapes)
    box = union(b for _, b in items)
    if box is None:
        return {}
    out: Deltas = {}
    for sid, b in items:
        dx = dy = 0.0
        if alignment == "left":
            dx = box.x - b.x
        elif alignment == "right":
            dx = box.max_x - b.max_x
        elif alignment == "center-horizontal":
            dx = box.mid_x - b.mid_x
        elif alignment == "top":
            dy = box.y - b.y
        elif alignment == "bottom":
            dy = box.max_y - b.max_y
        elif alignment == "center-vertical":
            dy = box.mid_y - b.mid_y
        out[sid] = (dx, dy)
    return out


def _sorted(items: list[tuple[str, Box]], horizontal: bool) -> list[tuple[str, Box]]:
    # Stable sort: ties keep the order the ids were given in.
    return sorted(items, key=lambda it: it[1].x if horizontal else it[1].y)


def distribute(ids: Sequence[str], direction: str, shapes: Shapes) -> Deltas:
    horizontal = direction == "horizontal"
    items = _sorted(_bounds(ids, shapes), horizontal)
    if len(items) < 3:
        return {sid: (0.0, 0.0) for sid, _ in items}
    first, last = items[0][1], items[-1][1]
    if horizontal:
        span = last.max_x - first.x
        gap = (span - sum(b.w for _, b in items)) / (len(items) - 1)
        cursor = first.x
    else:
        span = last.max_y - first.y
        gap = (span - sum(b.h for _, b in items)) / (len(items) - 1)
        cursor = first.y
    out: Deltas = {}
    for sid, b in items:
        if horizontal:
            out[sid] = (cursor - b.x, 0.0)
            cursor += b.w + gap
        else:
            out[sid] = (0.0, cursor - b.y)
            cursor += b.h + gap
    return out


def stack(ids: Sequence[str], direction: str, gap: float, shapes: Shapes) -> Deltas:
    horizontal = direction == "horizontal"
    items = _sorted(_bounds(ids, shapes), horizontal)
    if not items:
        return {}
    cursor = items[0][1].x if horizontal else items[0][1].y
    out: Deltas = {}
    for sid, b in items:
        if horizontal:
            out[sid] = (cursor - b.x, 0.0)
            cursor += b.w + gap
        else:
            out[sid] = (0.0, cursor - b.y)
            cursor += b.h + gap
    return out


def place(
    shape_id: str,
    reference_id: str,
    side: str,
    align_to: str,
    side_offset: float,
    align_offset: float,
    shapes: Shapes,
) -> tuple[float, float] | None:
    """Translation putting `shape_id` beside `reference_id` (the kit's `place` action)."""
    if shape_id not in shapes or reference_id not in shapes:
        return None
    b = shape_bounds(shapes[shape_id], shapes)
    r = shape_bounds(shapes[reference_id], shapes)
    if side in ("top", "bottom"):
        y = r.y - side_offset - b.h if side == "top" else r.max_y + side_offset
        if align_to == "start":
            x = r.x + align_offset
        elif align_to == "end":
            x = r.max_x - b.w - align_offset
        else:
            x = r.mid_x - b.w / 2 + align_offset
    else:
        x = r.x - side_offset - b.w if side == "left" else r.max_x + side_offset
        if align_to == "start":
            y = r.y + align_offset
        elif align_to == "end":
            y = r.max_y - b.h - align_offset
        else:
            y = r.mid_y - b.h / 2 + align_offset
    return x - b.x, y - b.y
