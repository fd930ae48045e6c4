"""Chat and status packets: a streaming message's text is paced, a repeated status not sent."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from steward.ports import PromptInput
from steward.protocol.messages import ChatMessage, SessionStatus, StatusMessage
from steward.protocol.names import TOPIC_CHAT, TOPIC_STATUS
from steward.room.broadcaster import Broadcaster
from steward.room.messenger import Messenger
from steward.room.session import RoomSession
from steward.room.snapshot_fetcher import SnapshotFetcher


class Sent:
    def __init__(self) -> None:
        self.packets: list[tuple[bytes, str]] = []

    async def __call__(
        self, payload: bytes, topic: str, destinations: list[str] | None = None
    ) -> None:
        self.packets.append((payload, topic))

    def chats(self) -> list[ChatMessage]:
        return [ChatMessage.model_validate_json(p) for p, t in self.packets if t == TOPIC_CHAT]

    def statuses(self) -> list[str]:
        return [
            StatusMessage.model_validate_json(p).status
            for p, t in self.packets
            if t == TOPIC_STATUS
        ]


async def test_a_streaming_messages_text_is_paced_and_its_final_always_sent() -> None:
    sent = Sent()
    messenger = Messenger("room", sent, partial_interval_s=0.15)
    text = ""
    for word in "one two three four five six".split():
        text += word + " "
        await messenger.chat("s1", text, partial=True, message_id="m1")
    assert [c.text for c in sent.chats()] == ["one "]  # the first partial is never held
    assert messenger.partials_paced == 5
    await asyncio.sleep(0.2)
    await messenger.chat("s1", text + "seven", partial=True, message_id="m1")
    await messenger.chat("s1", text + "seven.", message_id="m1")  # final, within the interval
    chats = sent.chats()
    assert [c.text for c in chats][1:] == [text + "seven", text + "seven."]
    assert [bool(c.partial) for c in chats] == [True, True, False]
    # Another message streams on its own clock, and pacing off sends every partial.
    await messenger.chat("s1", "other", partial=True, message_id="m2")
    assert sent.chats()[-1].text == "other"
    unpaced = Messenger("room", Sent(), partial_interval_s=0.0)
    for n in range(3):
        await unpaced.chat("s1", "x" * (n + 1), partial=True, message_id="m")
    assert unpaced.partials_paced == 0


class LastSeq:
    async def last_seq(self, session_id: str) -> int:
        return 7


async def test_a_status_repeated_with_nothing_new_is_not_sent_again() -> None:
    sent = Sent()
    session = RoomSession(
        "room",
        "s1",
        PromptInput(message="hi", source="browser", requester="ann"),
        broadcaster=cast(Broadcaster, LastSeq()),
        messenger=Messenger("room", sent),
        context=cast(SnapshotFetcher, cast(Any, None)),
    )
    start: list[SessionStatus] = [
        "waiting_context",
        "waiting_context",
        "calling_model",
        "streaming",
    ]
    for status in start:
        await session.send_status(status)
    await session.send_status("scheduled", "look again")
    await session.send_status("scheduled", "another look")
    end: list[SessionStatus] = ["waiting_context", "done", "done"]
    for status in end:
        await session.send_status(status)
    assert sent.statuses() == [
        "waiting_context",
        "calling_model",
        "streaming",
        "scheduled",
        "scheduled",
        "waiting_context",
        "done",
    ]
    assert session.figures.statuses == sent.statuses()
