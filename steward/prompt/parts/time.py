"""The current time (given, never read from a clock here)."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[Block]:
    return text(f"Current time: {state.now_iso}") if state.now_iso else []


PART = PromptPart("time", 90, False, _build)
