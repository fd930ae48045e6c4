"""Shapes outside the viewport, as clusters (75 px padding)."""

import json

from steward.canvas.bounds import shape_bounds
from steward.canvas.tiers import capped_clusters
from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    rects = [
        b
        for s in state.shapes.values()
        if not s.get("parentId")
        and not (b := shape_bounds(s, state.shapes)).intersects(state.viewport)
    ]
    if not rects:
        return []
    clusters = capped_clusters(rects)
    rows = [
        {
            "bounds": state.coords.box_to_model(f"cluster-{i}", c.bounds.to_dict()),
            "numberOfShapes": c.count,
        }
        for i, c in enumerate(sorted(clusters, key=lambda c: (c.bounds.y, c.bounds.x)))
    ]
    return text("Shapes outside your view (clusters):", json.dumps(rows, separators=(",", ":")))


_GUIDE = """Shapes outside your viewport are summarised as groups: their bounds and how many shapes
each holds. To work on them, move your view there first (if your schema has `setMyView`)."""

PART = PromptPart(
    "peripheral_clusters",
    45,
    False,
    _build,
    title="Shapes elsewhere",
    guide=_GUIDE,
)
