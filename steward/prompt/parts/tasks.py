"""The fairy's own tasks, or the task it works on and the area it is confined to."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    f = state.fairy
    if f is None or not f.tasks:
        return []
    return text(*f.tasks)


PART = PromptPart("tasks", 9, False, _build)
