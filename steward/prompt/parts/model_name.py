"""Which model is answering (lets prompts and logs tell runs apart)."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    return text(f"Model: {state.model_name}")


PART = PromptPart("model_name", 5, False, _build)
