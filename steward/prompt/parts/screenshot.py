"""The host's JPEG of the agent's viewport."""

from steward.prompt.base import Block, PromptPart
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    if not state.screenshot_jpeg:
        return []
    return [{"type": "text", "text": "Your view of the canvas:"},
            {"type": "image", "jpeg": state.screenshot_jpeg}]  # fmt: skip


PART = PromptPart("screenshot", 20, False, _build)
