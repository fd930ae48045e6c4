"""The user's selected shapes in full detail (SimpleShape)."""

import json

from steward.canvas.simple import to_simple
from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    rows = [
        state.coords.shape_to_model(to_simple(state.shapes[i], state.shapes))
        for i in state.selection
        if i in state.shapes
    ]
    if not rows:
        return []
    return text("The user has selected:", json.dumps(rows, separators=(",", ":")))


_GUIDE = """The shapes the user has selected come in full detail. When the user says "this",
"these", "it" or "here", they most likely mean the selection."""

PART = PromptPart(
    "selected_shapes",
    50,
    False,
    _build,
    title="Selection",
    guide=_GUIDE,
)
