"""Segments of a tldraw draw shape (`props.segments`).

tldraw draws a `free` segment through all of its points, but a `straight` segment as one line
from its first point to its second: further points are ignored by the renderer and by the
shape's geometry. A straight polyline is therefore one straight segment per edge, each starting
where the previous one ended (as tldraw's own draw tool builds shift-click lines).
"""

from __future__ import annotations

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
