"""Shapes in the agent's viewport, briefly (capped by `steward_blurry_shape_cap`)."""

import json

from steward.canvas.bounds import shape_bounds
from steward.canvas.tiers import to_blurry
from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def in_view(state: PromptState) -> list[str]:
    return [
        sid
        for sid, s in state.shapes.items()
        if not s.get("parentId") and shape_bounds(s, state.shapes).intersects(state.viewport)
    ]


def _build(state: PromptState) -> list[Block]:
    ids = in_view(state)
    if not ids:
        return text("There are no shapes in your view.")
    shown = ids[: state.blurry_cap]
    rows = [state.coords.shape_to_model(to_blurry(state.shapes[i], state.shapes)) for i in shown]
    # Working a task: a shape another task of the project drew says so, as the list of
    # shapes next to the area does (a ground under the shops is the ground task's).
    hood = state.neighbourhood
    owners = {sid: t.id for t in hood.tasks for sid in t.made} if hood is not None else {}
    for row in rows:
        if row["shapeId"] in owners:
            row["task"] = owners[row["shapeId"]]
    more = f" ({len(ids) - len(shown)} more not listed)" if len(ids) > len(shown) else ""
    return text(f"Shapes in your view{more}:", json.dumps(rows, separators=(",", ":")))


_GUIDE = """Every shape in your viewport is listed briefly: id, kind, box and text. Refer to shapes
by these ids. A text's box is the text as drawn; a centred or right-aligned text also gives its
`textAlign`: an x you give for it is then the box's centre or right edge. A long list is cut; it
says how many were left out. Working on a project task, a shape another task drew carries that
task's id ("task"): it is that task's work, not yours to edit."""

PART = PromptPart(
    "blurry_shapes",
    40,
    False,
    _build,
    title="Shapes in view",
    guide=_GUIDE,
)
