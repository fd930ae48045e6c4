"""The host's screenshot (JPEG or WebP) of the agent's viewport."""

from steward.prompt.base import Block, PromptPart
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    if not state.screenshot:
        return []
    image = {"type": "image", "media_type": state.screenshot_type, "data": state.screenshot}
    return [{"type": "text", "text": "Your view of the canvas:"}, image]


PART = PromptPart("screenshot", 20, False, _build)
