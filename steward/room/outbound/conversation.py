"""The room's one conversation: prompts, whole chat messages, thoughts and each run's latest
status, numbered in one room order (`n`) as the messenger sends them, kept (the newest
`keep`) in memory and in Postgres, and paged to a tab that loads, reloads or joins late
(RPC `steward.conversation`, `steward.room.inbound.conversation_requests`).

The number is given when an item is first seen (a streamed message at its first partial, a
run's status at its first), so every tab, live or late, shows items in the same order. One
steward serves a room at a time (its lease), so numbering in memory from the highest number
stored is one sequence across restarts. Losing a write loses history, never the live
message: the room goes on, with a log line.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from steward.obs.logging import get_logger
from steward.obs.sampled_log import SampledLog
from steward.protocol.limits import MAX_RPC_PAYLOAD_BYTES
from steward.protocol.messages import (
    ChatMessage,
    ConversationReply,
    PromptNotice,
    StatusMessage,
    ThoughtMessage,
    WireModel,
    jsonable,
)
from steward.store.conversation import ConversationItem, ConversationRepo, ItemKind

log = get_logger(__name__)

DEFAULT_KEEP = 200
# A page's items stay this far under the RPC cap (the reply's frame and field names).
_PAGE_BYTES = MAX_RPC_PAYLOAD_BYTES - 1_000
_MESSAGES: dict[ItemKind, type[WireModel]] = {
    "prompt": PromptNotice,
    "chat": ChatMessage,
    "thought": ThoughtMessage,
    "status": StatusMessage,
}


class Conversation:
    """The room's one conversation in order: kept in memory, written to Postgres, sent as it
    changes."""

    def __init__(
        self, room_id: str, repo: ConversationRepo | None, *, keep: int = DEFAULT_KEEP
    ) -> None:
        self.room_id = room_id
        self._repo = repo
        self.keep = keep
        self._last = 0
        # The items kept, by key (a later version replaces one in place).
        self._items: dict[str, ConversationItem] = {}
        # Numbers given to keys not kept yet (a message still streaming): bounded, so a
        # message that never finished cannot grow it.
        self._numbered: OrderedDict[str, int] = OrderedDict()
        self._sampled = SampledLog(log)

    async def load(self) -> None:
        """Picks up the room's conversation where the last steward left it."""
        if self._repo is None:
            return
        try:
            self._last = await self._repo.last_n(self.room_id)
            items = await self._repo.newest(self.room_id, self.keep)
        except Exception as err:  # the room serves without its past conversation
            log.warning("conversation_load_failed", room=self.room_id, error=repr(err))
            return
        self._items = {item.key: item for item in items}
        self._last = max([self._last, *(i.n for i in items)])

    def number(self, key: str) -> int:
        """The room order of item `key`: given once, at its first sight."""
        item = self._items.get(key)
        if item is not None:
            return item.n
        n = self._numbered.get(key)
        if n is None:
            self._last += 1
            n = self._numbered[key] = self._last
            while len(self._numbered) > self.keep * 4:
                self._numbered.popitem(last=False)
        return n

    async def add(self, kind: ItemKind, key: str, message: WireModel) -> None:
        """Keeps the whole item `message` (its `n` given by `number(key)`)."""
        n = getattr(message, "n", None) or self.number(key)
        session_id = str(getattr(message, "session_id", ""))
        item = ConversationItem(n, key, kind, session_id, jsonable(message))
        self._numbered.pop(key, None)
        self._items[key] = item
        if len(self._items) > self.keep:
            for old in sorted(self._items.values(), key=lambda i: i.n)[: -self.keep]:
                del self._items[old.key]
        if self._repo is None:
            return
        try:
            await self._repo.save(self.room_id, item, keep=self.keep)
        except Exception as err:  # history only: the live message went out regardless
            self._sampled.warning(
                ("conversation_save_failed",),
                "conversation_save_failed",
                room=self.room_id,
                kind=kind,
                error=repr(err),
            )

    def items(self) -> list[ConversationItem]:
        """The items kept, in room order."""
        return sorted(self._items.values(), key=lambda i: i.n)

    def page(self, after: int) -> ConversationReply:
        """The items after `after`, as many as fit one RPC reply; `next` when more follow."""
        reply = ConversationReply()
        size = 0
        for item in self.items():
            if item.n <= after:
                continue
            cost = len(json.dumps(item.payload).encode()) + 2
            if size and size + cost > _PAGE_BYTES:
                reply.next = _last_n(reply)
                break
            size += cost
            _put(reply, item)
        return reply


def _put(reply: ConversationReply, item: ConversationItem) -> None:
    message: Any = _MESSAGES[item.kind].model_validate(item.payload)
    if isinstance(message, PromptNotice):
        reply.prompts.append(message)
    elif isinstance(message, ChatMessage):
        reply.chat.append(message)
    elif isinstance(message, ThoughtMessage):
        reply.thoughts.append(message)
    else:
        reply.statuses.append(message)


def _last_n(reply: ConversationReply) -> int:
    lists: list[list[Any]] = [reply.prompts, reply.chat, reply.thoughts, reply.statuses]
    return max(int(m.n or 0) for items in lists for m in items)
