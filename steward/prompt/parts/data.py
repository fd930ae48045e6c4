"""Results the agent asked for (counts, API data) from its previous turn."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    rows = [s.text for s in state.scheduled if s.kind == "data"]
    return text("Data you asked for:", *rows) if rows else []


_GUIDE = """Answers to actions that return data (like `count`) arrive in the next request under
this heading. Use them; if one failed, tell the user."""

PART = PromptPart(
    "data",
    60,
    False,
    _build,
    title="Data you asked for",
    guide=_GUIDE,
)
