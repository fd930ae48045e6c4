"""An area the user pointed at with the request."""

import json

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    if state.context_bounds is None:
        return []
    box = state.coords.box_to_model("context-area", state.context_bounds.to_dict())
    return text(f"The user is pointing at this area: {json.dumps(box)}")


_GUIDE = """When the user points at an area of the canvas with their request, you get its bounds:
the request is about that area."""

PART = PromptPart(
    "context_items",
    52,
    False,
    _build,
    title="Pointed area",
    guide=_GUIDE,
)
