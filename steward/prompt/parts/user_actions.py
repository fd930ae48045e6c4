"""What the user changed on the canvas since the agent last looked."""

import json

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState

MAX_CHANGES = 30


def _build(state: PromptState) -> list[Block]:
    if not state.user_changes:
        return []
    items = state.user_changes[-MAX_CHANGES:]
    return text("Recent user edits:", json.dumps(items, separators=(",", ":"), default=str))


_GUIDE = """Changes people made since you last looked. Respect them: do not undo someone's change
unless you are asked to."""

PART = PromptPart(
    "user_actions",
    55,
    False,
    _build,
    title="Recent edits",
    guide=_GUIDE,
)
