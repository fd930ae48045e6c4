"""Strokes (pens, lines, arrows) as the polylines they draw, and where they meet boxes and
each other: the quality report judges a stroke by where its line runs, never by its
bounding box (a stroke that passes between two shapes touches neither)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from steward.canvas.bounds import num, rotate_point
from steward.protocol.box import Box

STROKES = ("draw", "line", "arrow")
Point = tuple[float, float]
# How far (page px) inside a box a stroke must reach to count as crossing into it: a line
# drawn along an edge, or ending on it, only touches.
_INSET = 1.0
# How far (page px) from a stroke's ends two strokes must meet to count as crossing: strokes
# that meet at an end (a fence's rails at a post) join rather than cross.
_END_SLACK = 1.0


def is_stroke(shape: Mapping[str, Any]) -> bool:
    return shape.get("type") in STROKES


def _point(p: Any) -> Point | None:
    if not isinstance(p, Mapping):
        return None
    return num(p.get("x")), num(p.get("y"))


def _local(shape: Mapping[str, Any]) -> list[Point]:
    props = shape.get("props") or {}
    kind = shape.get("type")
    raw: list[Any] = []
    if kind == "arrow":
        raw = [props.get("start"), props.get("end")]
    elif kind == "line":
        pts = props.get("points")
        raw = list(pts.values()) if isinstance(pts, Mapping) else pts or []
    elif kind == "draw":
        for seg in props.get("segments") or []:
            if isinstance(seg, Mapping):
                raw.extend(seg.get("points") or [])
    return [p for p in (_point(r) for r in raw) if p is not None]


def stroke_path(shape: Mapping[str, Any]) -> list[Point]:
    """The page points the stroke runs through, in order (closed strokes end at their start)."""
    x, y, rot = num(shape.get("x")), num(shape.get("y")), num(shape.get("rotation"))
    pts = [rotate_point(x + px, y + py, x, y, rot) for px, py in _local(shape)]
    closed = bool((shape.get("props") or {}).get("isClosed"))
    if closed and len(pts) > 2 and pts[0] != pts[-1]:
        pts.append(pts[0])
    return [p for p in pts if math.isfinite(p[0]) and math.isfinite(p[1])]


def _clip(a: Point, b: Point, box: Box) -> bool:
    """Whether segment a-b passes through the inside of `box` (Liang-Barsky)."""
    t0, t1 = 0.0, 1.0
    dx, dy = b[0] - a[0], b[1] - a[1]
    for p, q in (
        (-dx, a[0] - box.x),
        (dx, box.max_x - a[0]),
        (-dy, a[1] - box.y),
        (dy, box.max_y - a[1]),
    ):
        if p == 0:
            if q <= 0:
                return False
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 >= t1:
            return False
    return True


def enters(path: list[Point], box: Box) -> bool:
    """Whether the stroke runs through the inside of `box` (not along or up to its edge)."""
    inner = box.expand(-_INSET)
    if inner.w <= 0 or inner.h <= 0:
        return False
    if len(path) == 1:
        return inner.contains(Box(path[0][0], path[0][1], 0, 0))
    return any(_clip(a, b, inner) for a, b in pairwise(path))


def inside(path: list[Point], box: Box, slack: float) -> bool:
    """Whether every point of the stroke lies within `box` (grown by `slack`)."""
    outer = box.expand(slack)
    return bool(path) and all(outer.contains(Box(px, py, 0, 0)) for px, py in path)


def _meet(a: Point, b: Point, c: Point, d: Point) -> Point | None:
    """Where segments a-b and c-d meet, or None."""
    rx, ry = b[0] - a[0], b[1] - a[1]
    sx, sy = d[0] - c[0], d[1] - c[1]
    denom = rx * sy - ry * sx
    if denom == 0:
        return None  # parallel or collinear: running alongside is not crossing
    qx, qy = c[0] - a[0], c[1] - a[1]
    t = (qx * sy - qy * sx) / denom
    u = (qx * ry - qy * rx) / denom
    if 0 <= t <= 1 and 0 <= u <= 1:
        return a[0] + t * rx, a[1] + t * ry
    return None


def crosses(one: list[Point], other: list[Point]) -> bool:
    """Whether two strokes cross somewhere along their lines. Meeting at an end (rails that
    join at a post, a line that stops on another) is joining, not crossing."""
    ends = [p for path in (one, other) if path for p in (path[0], path[-1])]
    for a, b in pairwise(one):
        lo_x, hi_x = min(a[0], b[0]), max(a[0], b[0])
        lo_y, hi_y = min(a[1], b[1]), max(a[1], b[1])
        for c, d in pairwise(other):
            if max(c[0], d[0]) < lo_x or min(c[0], d[0]) > hi_x:
                continue
            if max(c[1], d[1]) < lo_y or min(c[1], d[1]) > hi_y:
                continue
            at = _meet(a, b, c, d)
            if at is not None and all(math.dist(at, e) > _END_SLACK for e in ends):
                return True
    return False
