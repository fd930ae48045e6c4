"""What the drawing agents can draw, for a fairy that plans drawings but does not draw: the
shape kinds and the palette, in the same words the drawing modes' `create` guide uses, so a
plan asks only for what can be drawn."""

from steward.actions.shapes.create import STYLE_GUIDE
from steward.canvas.styles import GEO_KINDS
from steward.prompt.base import Block, PromptPart
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    return []  # all it says is in its guide


_GUIDE = (
    "The members you direct draw with these, and nothing else: plan and describe each task in "
    "these terms (a brown roof is an `orange` one; a shade the palette lacks cannot be drawn).\n"
    f"- Shape kinds: the geometric ones ({', '.join(GEO_KINDS)}), `text`, `note`, `arrow` "
    "and `line`; any other form is drawn as a free line through points (a pen stroke).\n"
    + STYLE_GUIDE
)

PART = PromptPart(
    "drawable",
    9,
    True,
    _build,
    title="What your members can draw",
    guide=_GUIDE,
)
