"""Earlier chat, filtered by memory level (a fairy sees only its level's items)."""

from steward.prompt.base import Block, PromptPart, text
from steward.prompt.state import ChatItem, PromptState

MAX_ITEMS = 20


def filter_history(items: list[ChatItem], level: str) -> list[ChatItem]:
    return [i for i in items if i.level == level][-MAX_ITEMS:]


def _build(state: PromptState) -> list[Block]:
    items = filter_history(state.history, state.memory_level)
    if not items:
        return []
    return text("Earlier in this chat:", *(f"[{i.role}] {i.text}" for i in items))


_GUIDE = """Earlier requests and what you did about them come first, as far as your memory reaches.
Build on them: do not redo what is done, and stay consistent with what you told the user."""

PART = PromptPart(
    "chat_history",
    10,
    False,
    _build,
    title="Earlier in this chat",
    guide=_GUIDE,
)
