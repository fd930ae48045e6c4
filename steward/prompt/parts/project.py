"""The project the fairy leads or works in: plan, members, tasks and their status."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    f = state.fairy
    if f is None or not f.project:
        return []
    return text(*f.project)


PART = PromptPart("project", 8, False, _build)
