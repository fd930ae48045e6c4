"""Around a working fairy's task area: the project's other tasks and their shapes, blurry.

A drone sees its own area in full; what must fit with it (a fence around a barn another
drone draws) sits next to it. This part lists, at low detail, the shapes in a margin around
the area that are not inside it, each with the task whose area holds it, and the other
tasks' areas, so the drone can match positions without seeing or editing them in full.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from steward.canvas.apply import Shapes
from steward.canvas.bounds import Rect, shape_bounds
from steward.canvas.coords import CoordinateSpace
from steward.canvas.tiers import to_blurry
from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import Neighbourhood, PromptState

# How far around its area a fairy looks, as a share of the area's larger side (at least
# MIN_MARGIN px): far enough to see what adjoins, not the whole canvas.
MARGIN_SHARE = 0.75
MIN_MARGIN = 200.0
MAX_NEIGHBOURS = 60


@dataclass(frozen=True)
class Surroundings:
    area: Rect  # what is looked at: the task area and its margin
    shapes: list[dict[str, Any]]  # blurry rows, model coordinates, with their task
    tasks: list[dict[str, Any]]  # the other tasks whose areas meet `area`
    more: int = 0  # neighbours left out by the cap


def _grown(r: Rect) -> Rect:
    return r.expand(max(MIN_MARGIN, MARGIN_SHARE * max(r.w, r.h)))


def surroundings(
    shapes: Shapes, hood: Neighbourhood, coords: CoordinateSpace, cap: int = MAX_NEIGHBOURS
) -> Surroundings:
    """The shapes near `hood.area` but not inside it (top-level, nearest first), each as a
    BlurryShape with the id of the other task whose area holds its centre (or null)."""
    own = hood.area
    look = _grown(own)
    near: list[tuple[float, dict[str, Any]]] = []
    for s in shapes.values():
        if s.get("parentId"):
            continue
        b = shape_bounds(s, shapes)
        if not b.intersects(look) or own.contains(b):
            continue
        cx, cy = b.mid_x, b.mid_y
        owner = next((t.id for t in hood.tasks if t.bounds.contains(Rect(cx, cy, 0, 0))), None)
        row = coords.shape_to_model(to_blurry(s, shapes))
        row["task"] = owner
        dist = max(own.x - cx, cx - own.max_x, own.y - cy, cy - own.max_y, 0.0)
        near.append((dist, row))
    near.sort(key=lambda p: (p[0], str(p[1]["shapeId"])))
    tasks = [
        {
            "id": t.id,
            "title": t.title,
            "assignedTo": t.assigned_to,
            "bounds": coords.box_to_model(t.id, t.bounds.to_dict()),
        }
        for t in hood.tasks
        if t.bounds.intersects(look)
    ]
    rows = [row for _, row in near[:cap]]
    return Surroundings(look, rows, tasks, max(len(near) - cap, 0))


def _build(state: PromptState) -> list[Block]:
    hood = state.neighbourhood
    if hood is None:
        return []
    seen = surroundings(state.shapes, hood, state.coords)
    box = state.coords.box_to_model("around", seen.area.to_dict())
    lines = [
        "Around your task area (x={x:g}, y={y:g}, w={w:g}, h={h:g}), low detail:".format(**box)
    ]
    if seen.tasks:
        lines += ["Other tasks nearby:", json.dumps(seen.tasks, separators=(",", ":"))]
    if seen.shapes:
        more = f" ({seen.more} more not listed)" if seen.more else ""
        lines += [
            f"Shapes next to your area{more}:",
            json.dumps(seen.shapes, separators=(",", ":")),
        ]
    else:
        lines.append("No shapes next to your area yet.")
    return text(*lines)


_GUIDE = """Next to your task area you see the project's other tasks and the shapes around your
area, briefly (id, kind, box, text, and the task whose area holds it). They are others' work:
do not edit them, but line your drawing up with them where the parts meet (a fence around a
barn, a path to a door)."""

PART = PromptPart(
    "neighbours",
    42,
    False,
    _build,
    title="Around your task area",
    guide=_GUIDE,
)
