"""The runs in a room that a request shows besides its own work, as history items in the
response format, each with who asked and which run it belongs to, so the chat_history part
summarises every such run in one line ("[alice's run] asked …; created 4 shapes …").

Two kinds of runs share a room: one-shot runs (each asker's one-shotting fairy, one run per
prompt session) and the crew's runs (the orchestrator and its drones, one run per user
prompt to the crew). A one-shot request shows every one-shot run (its asker's own in full)
and the crew's runs; a crew fairy's request shows its own history and the one-shot runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from steward.fairies.memory import HistoryItem, MemoryLevel, chat_items
from steward.fairies.room_fairies import FairyState, RoomFairies, is_one_shot
from steward.prompt.state import ChatItem

# Stamped history: (made at, order of making, item).
Stamped = tuple[float, int, ChatItem]


def _stamp(out: list[Stamped], items: Sequence[HistoryItem], chats: Iterable[ChatItem]) -> None:
    for item, chat in zip(items, chats, strict=True):
        out.append((item.created, len(out), chat))


def one_shot_runs(room: RoomFairies, level: MemoryLevel) -> list[Stamped]:
    """Every one-shot run in the room: items with their asker and run (the prompt session)."""
    out: list[Stamped] = []
    for state in room.fairies.values():
        if is_one_shot(state.fairy_id):
            _stamp(out, state.history, chat_items(state.history, level, state.asker))
    return out


def _crew(room: RoomFairies) -> list[FairyState]:
    return [s for s in room.fairies.values() if not is_one_shot(s.fairy_id)]


def crew_runs(room: RoomFairies, level: MemoryLevel) -> list[Stamped]:
    """The crew's work, one run per user prompt to any crew fairy (what its drones did in
    between belongs to that run), shown as done for the participant the crew works for."""
    made = sorted(
        (
            (item.created, n, item, state)
            for state in _crew(room)
            for n, item in enumerate(state.history)
        ),
        key=lambda t: (t[0], t[1]),
    )
    out: list[Stamped] = []
    run = 0
    # Whom each run was done for: the person whose prompt opened it (the fairy's current
    # asker only for items kept before prompts named their asker).
    owner: str | None = None
    for created, _, item, state in made:
        if item.kind == "prompt" and item.origin == "user":
            run += 1
            owner = item.asker
        if item.action is not None and item.action.get("name") == "think":
            continue  # what the crew thought is not what it did
        (chat,) = chat_items([item], level, owner or state.asker or "someone")
        out.append((created, len(out), replace(chat, run=f"crew-{run}", crew=True)))
    return out


def own_items(items: Sequence[HistoryItem], level: MemoryLevel) -> list[Stamped]:
    """A crew fairy's own remembered items (no asker: they read as its own work)."""
    out: list[Stamped] = []
    _stamp(out, items, chat_items(items, level))
    return out


def thread(*parts: list[Stamped]) -> list[ChatItem]:
    """The items of several sources in the order they were made."""
    merged = [(created, k, n, chat) for k, part in enumerate(parts) for created, n, chat in part]
    merged.sort(key=lambda t: (t[0], t[1], t[2]))
    return [chat for *_, chat in merged]
