"""Segments of a tldraw draw shape (`props.segments`).

tldraw draws a `free` segment through all of its points, but a `straight` segment as one line
from its first point to its second: further points are ignored by the renderer and by the
shape's geometry. A straight polyline is therefore one straight segment per edge, each starting
where the previous one ended (as tldraw's own draw tool builds shift-click lines).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any


def draw_segments(points: Sequence[Mapping[str, Any]], *, straight: bool) -> list[dict[str, Any]]:
    """The `segments` of a draw shape through `points` (shape-local), straight edges or freehand."""
    seg = {"type": "straight" if straight else "free", "points": [dict(p) for p in points]}
    out: list[dict[str, Any]] = split_straight([seg])
    return out


def split_straight(segments: Any) -> Any:
    """`segments` with every straight segment of more than two points split into its edges.

    Records from any producer go through this on both sides of the wire (the mirror in
    steward/canvas/apply.py, the browser in client-bridge/src/canvas/record.ts), so both hold
    the edges tldraw draws."""
    if not isinstance(segments, list):
        return segments
    out: list[Any] = []
    for seg in segments:
        pts = seg.get("points") if isinstance(seg, dict) else None
        if isinstance(seg, dict) and seg.get("type") == "straight" and isinstance(pts, list):
            if len(pts) > 2:
                # Copies: an edge's end is the next edge's start, and records are edited in place.
                out.extend({**seg, "points": [_copy(a), _copy(b)]} for a, b in pairwise(pts))
                continue
        out.append(seg)
    return out


def _copy(point: Any) -> Any:
    return dict(point) if isinstance(point, dict) else point


# How far apart (page px) the points of a smoothed stroke lie: tldraw's freehand renderer
# trails each point behind the one before (its `streamline`), so a sparse stroke cuts its
# corners and misses the points it was given; at this spacing it stays within a pixel or so.
SMOOTH_STEP = 4.0
MAX_SMOOTH_POINTS = 4000


def smooth_through(
    points: Sequence[tuple[float, float]], *, closed: bool
) -> list[tuple[float, float]]:
    """A dense polyline of the centripetal Catmull-Rom curve through every one of `points`
    (each kept exactly), closed back to the first point when `closed`: what a smooth pen
    stroke holds, so that the mirror and every browser draw a curve through its points."""
    pts = [p for i, p in enumerate(points) if i == 0 or p != points[i - 1]]
    if closed and len(pts) > 2 and pts[-1] == pts[0]:
        pts.pop()
    if len(pts) < 3:
        return [*pts, pts[0]] if closed and len(pts) > 1 else list(pts)
    n = len(pts)
    spans = n if closed else n - 1
    total = sum(math.dist(pts[i], pts[(i + 1) % n]) for i in range(spans))
    step = max(SMOOTH_STEP, total / MAX_SMOOTH_POINTS)
    out: list[tuple[float, float]] = [pts[0]]
    for i in range(spans):
        p0 = pts[(i - 1) % n] if closed or i > 0 else pts[0]
        p1, p2 = pts[i], pts[(i + 1) % n]
        p3 = pts[(i + 2) % n] if closed or i + 2 < n else p2
        pieces = max(math.ceil(math.dist(p1, p2) / step), 1)
        out.extend(_catmull_rom(p0, p1, p2, p3, k / pieces) for k in range(1, pieces))
        out.append(p2)
    return out


def _catmull_rom(
    p0: tuple[float, float],
    p1: tuple[float, float],
    p2: tuple[float, float],
    p3: tuple[float, float],
    u: float,
) -> tuple[float, float]:
    """The point at `u` in [0, 1] between `p1` and `p2` (centripetal parametrisation: no
    loops or cusps where neighbouring points are unevenly spaced)."""
    t1 = max(math.dist(p0, p1) ** 0.5, 1e-6)
    t2 = t1 + max(math.dist(p1, p2) ** 0.5, 1e-6)
    t3 = t2 + max(math.dist(p2, p3) ** 0.5, 1e-6)
    t = t1 + (t2 - t1) * u

    def lerp(
        a: tuple[float, float], b: tuple[float, float], ta: float, tb: float
    ) -> tuple[float, float]:
        w = (t - ta) / (tb - ta)
        return (a[0] + (b[0] - a[0]) * w, a[1] + (b[1] - a[1]) * w)

    a1, a2, a3 = lerp(p0, p1, 0.0, t1), lerp(p1, p2, t1, t2), lerp(p2, p3, t2, t3)
    b1, b2 = lerp(a1, a2, 0.0, t2), lerp(a2, a3, t1, t3)
    return lerp(b1, b2, t1, t2)
