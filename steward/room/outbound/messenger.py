"""Chat, prompt, thought and status messages of sessions, on `agent:chat`, `agent:prompt`,
`agent:thought` and `agent:status`: each numbered in the room's conversation and, once
whole, kept in it (`steward.room.outbound.conversation`)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Literal, Protocol, cast

from pydantic import ValidationError

from steward.obs.logging import get_logger
from steward.protocol.limits import MAX_ID_CHARS
from steward.protocol.messages import (
    ChatMessage,
    PromptNotice,
    SessionStatus,
    StatusMessage,
    ThoughtMessage,
)
from steward.protocol.names import TOPIC_CHAT, TOPIC_PROMPT, TOPIC_STATUS, TOPIC_THOUGHT
from steward.room.outbound.conversation import Conversation

log = get_logger(__name__)

# Characters per chat packet: 4 bytes per char worst case stays under 15 KiB with the frame.
CHAT_CHUNK_CHARS = 3_000
ChatRole = Literal["user", "assistant", "system"]


class Publish(Protocol):
    """Publishes to everyone, or to `destinations` only."""

    def __call__(
        self, payload: bytes, topic: str, destinations: list[str] | None = None
    ) -> Awaitable[None]: ...


class Messenger:
    """Publishes to every participant of the room; losing one is not fatal (UI only)."""

    def __init__(
        self,
        room_id: str,
        publish: Publish,
        *,
        partial_interval_s: float = 0.0,
        conversation: Conversation | None = None,
    ) -> None:
        self.room_id = room_id
        self._publish = publish
        # Numbers and keeps what goes out (a room without one keeps it in memory only).
        self.conversation = conversation or Conversation(room_id, None)
        # A streaming message's text goes out at most this often (its final always goes),
        # as an action's previews do: one packet per parser snapshot is not worth sending.
        self.partial_interval_s = partial_interval_s
        self._partial_sent_at: dict[str, float] = {}
        self.partials_paced = 0
        # Told every session status and every whole chat message (not a partial), before
        # they go out: the room's agent state and its `lk.chat` mirror follow them.
        self.on_status: Callable[[str, SessionStatus], None] | None = None
        self.on_chat: Callable[[str, str, str | None], None] | None = None

    async def _send(self, payload: bytes, topic: str, to: list[str] | None = None) -> None:
        try:
            await self._publish(payload, topic, to)
        except Exception as err:
            log.warning("message_publish_failed", room=self.room_id, topic=topic, error=str(err))

    async def publish(self, payload: bytes, topic: str, to: list[str] | None = None) -> None:
        """Another UI-only message to everyone, or to `to` only (e.g. fairy presence on
        `agent:fairies`, a project's state to a tab that joins)."""
        await self._send(payload, topic, to)

    async def chat(
        self,
        session_id: str,
        text: str,
        *,
        role: str = "assistant",
        partial: bool = False,
        fairy: str | None = None,
        message_id: str | None = None,
    ) -> str:
        """Long text goes as numbered parts, each its own message; returns the base id."""
        base = message_id or uuid.uuid4().hex[:12]
        if self._paced(base, partial):
            return base
        if not partial and self.on_chat is not None:
            self.on_chat(text, role, fairy)
        chunks = [text[i : i + CHAT_CHUNK_CHARS] for i in range(0, len(text), CHAT_CHUNK_CHARS)]
        safe_role = cast(ChatRole, role if role in ("user", "assistant", "system") else "assistant")
        for i, chunk in enumerate(chunks or [""]):
            msg_id = base if len(chunks) <= 1 else f"{base}-{i}"
            key = f"chat:{msg_id}"
            msg = ChatMessage(
                id=msg_id,
                session_id=session_id,
                role=safe_role,
                text=chunk,
                fairy=fairy,
                partial=partial or None,
                n=self.conversation.number(key),
                ts=time.time(),
            )
            if not partial:
                await self.conversation.add("chat", key, msg)
            await self._send(msg.to_wire(), TOPIC_CHAT)
        return base

    async def thought(
        self, session_id: str, kind: str, text: str, *, fairy: str | None = None
    ) -> None:
        """A run's whole `think` or `add_detail`, numbered and kept in the conversation."""
        if not text.strip():
            return
        key = f"thought:{uuid.uuid4().hex[:12]}"
        msg = ThoughtMessage(
            session_id=session_id,
            kind="detail" if kind == "add_detail" else "think",
            text=text[:CHAT_CHUNK_CHARS],
            fairy=fairy,
            n=self.conversation.number(key),
            ts=time.time(),
        )
        await self.conversation.add("thought", key, msg)
        await self._send(msg.to_wire(), TOPIC_THOUGHT)

    async def prompt(
        self,
        session_id: str,
        text: str,
        *,
        asker: str,
        source: Literal["browser", "voice", "http"],
        fairy: str | None = None,
        reverts: str | None = None,
    ) -> None:
        """Tells every browser which prompt a run answers and who asked (one packet: a longer
        text is cut, and says so); `reverts`: the run a revert's run takes back."""
        cut = len(text) > CHAT_CHUNK_CHARS
        key = f"prompt:{session_id}"
        try:
            msg = PromptNotice(
                session_id=session_id,
                asker=asker[:MAX_ID_CHARS],
                source=source,
                text=text[:CHAT_CHUNK_CHARS],
                truncated=cut or None,
                fairy=fairy,
                reverts=reverts,
                n=self.conversation.number(key),
                ts=time.time(),
            )
        except ValidationError as err:  # UI only: the run goes on without it
            # The fields only: an error's text quotes the input, which may be the prompt.
            fields = sorted({".".join(map(str, e["loc"])) for e in err.errors()})
            log.warning("prompt_notice_invalid", room=self.room_id, fields=fields)
            return
        await self.conversation.add("prompt", key, msg)
        await self._send(msg.to_wire(), TOPIC_PROMPT)

    def _paced(self, message_id: str, partial: bool) -> bool:
        """True for a partial sent within `partial_interval_s` of the message's last one."""
        if not partial:
            self._partial_sent_at.pop(message_id, None)
            return False
        now = time.monotonic()
        last = self._partial_sent_at.get(message_id)
        if last is not None and now - last < self.partial_interval_s:
            self.partials_paced += 1
            return True
        self._partial_sent_at[message_id] = now
        return False

    async def status(
        self,
        session_id: str,
        status: SessionStatus,
        detail: str | None = None,
        *,
        fairy: str | None = None,
        to: list[str] | None = None,
        last_seq: int | None = None,
    ) -> None:
        """To everyone, or only to the participants `to` (a resend: not news). The room's
        conversation keeps each run's latest status, in the place of its first."""
        if to is None and self.on_status is not None:
            self.on_status(session_id, status)
        key = f"status:{session_id}"
        msg = StatusMessage(
            session_id=session_id,
            status=status,
            detail=(detail or None) and detail[:500],
            fairy=fairy,
            last_seq=last_seq,
            n=self.conversation.number(key),
            ts=time.time(),
        )
        if to is None:
            await self.conversation.add("status", key, msg)
        await self._send(msg.to_wire(), TOPIC_STATUS, to)
