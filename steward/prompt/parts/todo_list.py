"""The agent's todo list."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    if not state.todo:
        return []
    return text("Your todo list:", *(f"{t.id}. [{t.status}] {t.text}" for t in state.todo))


_GUIDE = """Your todo list so far, with each item's status. Keep working until every item is done,
or tell the user why one cannot be."""

PART = PromptPart(
    "todo_list",
    58,
    False,
    _build,
    title="Todo list",
    guide=_GUIDE,
)
