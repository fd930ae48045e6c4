"""Who the fairy is: its name, id and personality."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    f = state.fairy
    if f is None:
        return []
    return text(f"You are {f.name} (id {f.id}), a fairy. Personality: {f.personality}.")


PART = PromptPart("personality", 6, False, _build)
