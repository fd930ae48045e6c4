"""Page bounds of a shape record: the one formula every implementation of the verbs shares."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from steward.protocol.box import Box, union

# tldraw's font sizes of a text shape by `size` (16 px times 1.125, 1.5, 2.25, 2.75).
FONT_SIZES: dict[str, float] = {"s": 18.0, "m": 24.0, "l": 36.0, "xl": 44.0}
# ... and of the label of a geometric shape or a note (16 px times 1.125, 1.375, 1.625, 2).
LABEL_FONT_SIZES: dict[str, float] = {"s": 18.0, "m": 22.0, "l": 26.0, "xl": 32.0}
NOTE_SIZE = 200.0
CHAR_WIDTH_EM = 0.6
LINE_HEIGHT_EM = 1.35


def num(value: Any, default: float = 0.0) -> float:
    """A finite float from a JSON value, else `default`."""
    if isinstance(value, bool):
        return default
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return default


def font_size(props: Mapping[str, Any]) -> float:
    return FONT_SIZES.get(str(props.get("size", "m")), 24.0) * num(props.get("scale"), 1.0)


def label_font_size(props: Mapping[str, Any]) -> float:
    """The font size of a geometric shape's or a note's label (smaller than a text shape's)."""
    return LABEL_FONT_SIZES.get(str(props.get("size", "m")), 22.0) * num(props.get("scale"), 1.0)


def text_extent(text: str, size: float) -> tuple[float, float]:
    lines = text.split("\n") if text else [""]
    longest = max(len(line) for line in lines)
    return max(longest, 1) * CHAR_WIDTH_EM * size, len(lines) * LINE_HEIGHT_EM * size


def _points_box(points: Iterable[Mapping[str, Any]]) -> tuple[float, float, float, float]:
    xs: list[float] = []
    ys: list[float] = []
    for p in points:
        if isinstance(p, Mapping):
            xs.append(num(p.get("x")))
            ys.append(num(p.get("y")))
    if not xs:
        return 0.0, 0.0, 1.0, 1.0
    return min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)


def local_box(shape: Mapping[str, Any]) -> tuple[float, float, float, float]:
    """(x, y, w, h) of the unrotated shape, relative to its origin."""
    props = shape.get("props") or {}
    kind = shape.get("type")
    if kind == "geo":
        return (
            0.0,
            0.0,
            num(props.get("w"), 1.0),
            num(props.get("h"), 1.0) + num(props.get("growY")),
        )
    if kind == "note":
        side = NOTE_SIZE * num(props.get("scale"), 1.0)
        return 0.0, 0.0, side, side + num(props.get("growY"))
    if kind == "text":
        size = font_size(props)
        est_w, est_h = text_extent(str(props.get("text") or ""), size)
        w = num(props.get("w"), 0.0)
        if props.get("autoSize", True) is not False or w <= 0:
            w = est_w
        return 0.0, 0.0, w, est_h
    if kind == "arrow":
        return _points_box([props.get("start") or {}, props.get("end") or {}])
    if kind == "line":
        pts = props.get("points") or []
        return _points_box(pts if isinstance(pts, list) else [])
    if kind == "draw":
        segs = props.get("segments") or []
        pts = [p for s in segs if isinstance(s, Mapping) for p in (s.get("points") or [])]
        return _points_box(pts)
    return 0.0, 0.0, num(props.get("w"), 1.0), num(props.get("h"), 1.0)


def rotate_point(px: float, py: float, ox: float, oy: float, angle: float) -> tuple[float, float]:
    if angle == 0:
        return px, py
    c, s = math.cos(angle), math.sin(angle)
    dx, dy = px - ox, py - oy
    return ox + dx * c - dy * s, oy + dx * s + dy * c


def shape_bounds(
    shape: Mapping[str, Any], shapes: Mapping[str, Mapping[str, Any]] | None = None
) -> Box:
    """Axis-aligned page bounds; groups are the union of their children (when `shapes` given)."""
    if shape.get("type") == "group" and shapes is not None:
        sid = shape.get("id")
        kids = [s for s in shapes.values() if s.get("parentId") == sid]
        box = union(shape_bounds(k, shapes) for k in kids)
        if box is not None:
            return box
    x, y = num(shape.get("x")), num(shape.get("y"))
    lx, ly, w, h = local_box(shape)
    rot = num(shape.get("rotation"))
    if rot == 0:
        return Box(x + lx, y + ly, w, h)
    corners = [
        rotate_point(x + cx, y + cy, x, y, rot)
        for cx, cy in ((lx, ly), (lx + w, ly), (lx, ly + h), (lx + w, ly + h))
    ]
    xs = [c[0] for c in corners]
    ys = [c[1] for c in corners]
    return Box(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))
