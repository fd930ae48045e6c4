"""The host's screenshot (JPEG or WebP) of the area the request shows (its viewport)."""

from steward.prompt.base import Block, PromptPart
from steward.prompt.parts.viewport import VIEW_WORDS
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    if not state.screenshot:
        return []
    image = {"type": "image", "media_type": state.screenshot_type, "data": state.screenshot}
    what = VIEW_WORDS[state.view_kind]
    # Models had to guess how image pixels map to the canvas: say it.
    view = state.coords.box_to_model("viewport", state.viewport.to_dict())
    where = (
        f"The image below ({what}) shows exactly your viewport, given above: "
        f"x {view['x']} to {view['x'] + view['w']}, y {view['y']} to {view['y'] + view['h']}, "
        f"scaled to fit; its top-left corner is ({view['x']}, {view['y']})."
    )
    return [{"type": "text", "text": where}, image]


_GUIDE = """An image of the part of the canvas you are looking at (your viewport). It shows how
things really look: trust it over the shape lists for overlaps, spacing, whether text fits and
whether arrows meet their shapes. To "see" the canvas, read the image together with the lists of
shapes."""

PART = PromptPart(
    "screenshot",
    30,
    False,
    _build,
    title="Your view",
    guide=_GUIDE,
)
