"""The host's screenshot (JPEG or WebP) of the area the request shows (its viewport)."""

from steward.prompt.base import Block, PromptPart
from steward.prompt.parts.viewport import VIEW_WORDS
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    if not state.screenshot:
        return []
    image = {"type": "image", "media_type": state.screenshot_type, "data": state.screenshot}
    what = VIEW_WORDS[state.view_kind]
    return [{"type": "text", "text": f"Your view of the canvas ({what}):"}, image]


_GUIDE = """An image of the part of the canvas you are looking at (your viewport). It shows how
things really look: trust it over the shape lists for overlaps, spacing, whether text fits and
whether arrows meet their shapes. To "see" the canvas, read the image together with the lists of
shapes."""

PART = PromptPart(
    "screenshot",
    20,
    False,
    _build,
    title="Your view",
    guide=_GUIDE,
)
