"""Around a working fairy's task area: the project's other tasks and their shapes, blurry.

A drone sees its own area in full; what must fit with it (a fence around a barn another
drone draws) sits next to it. This part lists, at low detail, the shapes that adjoin the area
but are not inside it, each with the task that drew it, and the other tasks' areas
near it; and it shows a small image of the project area around the task area, so the drone
can match positions without seeing or editing the others' work in full.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from steward.canvas.apply import Shapes
from steward.canvas.bounds import shape_bounds
from steward.canvas.coords import CoordinateSpace
from steward.canvas.tiers import to_blurry
from steward.prompt.base import Block, PromptPart, text
from steward.prompt.parts.viewport import VIEW_WORDS
from steward.prompt.state import Neighbourhood, PromptState
from steward.protocol.box import Box, union

# How far around its area a fairy looks (the image around it, and which other tasks it is
# told of), as a share of the area's larger side (at least MIN_MARGIN px): far enough to see
# the neighbouring tasks' work, not the whole canvas.
MARGIN_SHARE = 0.75
MIN_MARGIN = 200.0
# Which shapes are listed as "next to" the area: those within ADJOIN_SHARE of the area's
# shorter side of its edge, clamped to [MIN_ADJOIN, MAX_ADJOIN] px. What lies that close is
# what the drawing may meet (a fence post at the edge, a path to a door); farther shapes
# belong to other drawings, and the low-detail image shows them without a list of rows.
ADJOIN_SHARE = 0.15
MIN_ADJOIN = 40.0
MAX_ADJOIN = 120.0
MAX_NEIGHBOURS = 60
# The long side of the image around the task area, in px: enough to see where the
# neighbours' shapes are and their colours, cheap in tokens (about 350 for 512x512).
AROUND_MAX_SIZE = 512
# The margin around the neighbouring tasks' areas that image shows, as a share of their
# larger side (at least MIN_PAD px).
PAD_SHARE = 0.05
MIN_PAD = 40.0


@dataclass(frozen=True)
class Surroundings:
    """What lies around a working fairy's task area: the area looked at, the shapes and tasks there,
    and how many were left out."""

    area: Box  # what is looked at: the task area and its margin
    shapes: list[dict[str, Any]]  # blurry rows, model coordinates, with their task
    tasks: list[dict[str, Any]]  # the other tasks whose areas meet `area`
    more: int = 0  # neighbours left out by the cap


def around(r: Box, others: Iterable[Box] = ()) -> Box:
    """The area a working fairy looks at around its task area `r` (the image's area): the
    project around it, i.e. `r` and the other task areas within reach of it, with a small
    margin; with none in reach, `r` grown by its reach. A long, thin task (a road under a
    row of houses) sees the houses, not a wide empty band around itself."""
    reach = r.expand(max(MIN_MARGIN, MARGIN_SHARE * max(r.w, r.h)))
    project = union([r, *(o for o in others if o.intersects(reach))])
    if project is None or project == r:
        return reach
    return project.expand(max(MIN_PAD, PAD_SHARE * max(project.w, project.h)))


def _adjoin_margin(r: Box) -> float:
    return round(min(MAX_ADJOIN, max(MIN_ADJOIN, ADJOIN_SHARE * min(r.w, r.h))))


def adjoining(r: Box) -> Box:
    """`r` grown by the margin within which a shape counts as next to it."""
    return r.expand(_adjoin_margin(r))


def surroundings(
    shapes: Shapes, hood: Neighbourhood, coords: CoordinateSpace, cap: int = MAX_NEIGHBOURS
) -> Surroundings:
    """The shapes adjoining `hood.area` but not inside it (top-level, nearest first), each as
    a BlurryShape with the id of the other task that drew it (null: a person, or work outside
    the project); the other tasks whose areas meet the area around it."""
    own = hood.area
    look = around(own, (t.bounds for t in hood.tasks))
    close = adjoining(own)
    near: list[tuple[float, dict[str, Any]]] = []
    for s in shapes.values():
        if s.get("parentId"):
            continue
        b = shape_bounds(s, shapes)
        if not b.intersects(close) or own.contains(b):
            continue
        cx, cy = b.mid_x, b.mid_y
        owner = next((t.id for t in hood.tasks if s.get("id") in t.made), None)
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
            "status": t.status,
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
    close = f"within {_adjoin_margin(hood.area):g} px of your area"
    if seen.shapes:
        more = f" ({seen.more} more not listed)" if seen.more else ""
        lines += [
            f"Shapes {close}{more}:",
            json.dumps(seen.shapes, separators=(",", ":")),
        ]
    else:
        lines.append(f"No shapes {close} yet (farther ones are in the image, if one is given).")
    return text(*lines) + _picture(state, seen)


def _picture(state: PromptState, seen: Surroundings) -> list[Block]:
    """The low-detail image around the task area, captioned with what it shows."""
    pic, hood = state.around, state.neighbourhood
    if pic is None or hood is None:
        return []
    b = pic.bounds
    box = state.coords.box_to_model("around", {"x": b.x, "y": b.y, "w": b.w, "h": b.h})
    own = state.coords.box_to_model("own", hood.area.to_dict())
    x1, y1 = box["x"] + box["w"], box["y"] + box["h"]
    longest = max(b.w, b.h, 1.0)
    scale = min(1.0, AROUND_MAX_SIZE / longest)
    # What the request's first image showed: the task area, or (a review, a moved view)
    # another area, named as the viewport line names it.
    first = (
        "your first image shows that area in full"
        if state.view_kind == "task"
        else f"your first image shows {VIEW_WORDS[state.view_kind]} (your viewport), which "
        "need not hold all of your area"
    )
    shown = b
    # The areas drawn on it (`steward.fairies.outlines`): every other task's that lies in it.
    tasks = [t for t in hood.tasks if t.bounds.intersects(shown)]
    if tasks:
        names = "; ".join(
            f'"{t.title}" ({t.id}, {t.status}) at '
            + state.coords.box_text(t.bounds.x, t.bounds.y, t.bounds.w, t.bounds.h)
            for t in tasks
        )
        whose = (
            "Other tasks' areas in it, each outlined the same way and tagged with its id, "
            f"with their shapes as they are now: {names}."
        )
    else:
        whose = "No other task's area is in it."
    caption = (
        f"Around your task area, low detail: this image shows x {box['x']} to {x1}, "
        f"y {box['y']} to {y1}, scaled to about {round(b.w * scale)}x{round(b.h * scale)} px "
        f"(1 px is about {1 / scale:.1f} canvas units), too small for text or fine detail. "
        f"Your own task area (x={own['x']}, y={own['y']}, w={own['w']}, h={own['h']}) lies "
        'within it, outlined with grey dashes and tagged "your task" (the dashes and tags '
        f"are not on the canvas); {first}. {whose}"
    )
    image = {"type": "image", "media_type": pic.media_type, "data": pic.data}
    return [{"type": "text", "text": caption}, image]


_GUIDE = """Next to your task area you see the project's other tasks and the shapes that adjoin
your area, briefly (id, kind, box, text, and the task that drew it: null when a person or no
task of the project did), and, when a browser
could render it, a small low-detail image of the area around yours, with each task area
outlined in grey dashes and tagged with its id (yours "your task"). They are others' work: do
not edit them, but line your drawing up with them where the parts meet (a fence around a
barn, a path to a door)."""

PART = PromptPart(
    "neighbours",
    42,
    False,
    _build,
    title="Around your task area",
    guide=_GUIDE,
)
