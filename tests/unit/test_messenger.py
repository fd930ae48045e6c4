"""Chat, prompt and status packets: a streaming message's text is paced, a repeated status not
sent, each run's prompt told to the room with its asker."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from steward.ports import PromptInput
from steward.protocol.messages import ChatMessage, PromptNotice, SessionStatus, StatusMessage
from steward.protocol.names import TOPIC_CHAT, TOPIC_PROMPT, TOPIC_STATUS
from steward.room.context.snapshot_fetcher import SnapshotFetcher
from steward.room.outbound.broadcaster import Broadcaster
from steward.room.outbound.messenger import Messenger
from steward.room.runs.session import RoomSession


class Sent:
    def __init__(self) -> None:
        self.packets: list[tuple[bytes, str]] = []

    async def __call__(
        self, payload: bytes, topic: str, destinations: list[str] | None = None
    ) -> None:
        self.packets.append((payload, topic))

    def chats(self) -> list[ChatMessage]:
        return [ChatMessage.model_validate_json(p) for p, t in self.packets if t == TOPIC_CHAT]

    def prompts(self) -> list[PromptNotice]:
        return [PromptNotice.model_validate_json(p) for p, t in self.packets if t == TOPIC_PROMPT]

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


async def test_a_progress_status_repeated_with_nothing_new_is_not_sent_again() -> None:
    sent = Sent()
    session = RoomSession(
        "room",
        "s1",
        PromptInput(message="hi", source="browser", requester="ann"),
        broadcaster=cast(Broadcaster, LastSeq()),
        messenger=Messenger("room", sent),
        snapshots=cast(SnapshotFetcher, cast(Any, None)),
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
    end: list[SessionStatus] = ["waiting_context", "done"]
    for status in end:
        assert not session.ended
        await session.send_status(status)
    assert session.ended  # the room's sessions send no second final status
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


def _session(sent: Sent, prompt: PromptInput, session_id: str = "s1") -> RoomSession:
    return RoomSession(
        "room",
        session_id,
        prompt,
        broadcaster=cast(Broadcaster, LastSeq()),
        messenger=Messenger("room", sent),
        snapshots=cast(SnapshotFetcher, cast(Any, None)),
    )


async def test_a_runs_prompt_goes_to_the_room_with_the_requester_as_asker() -> None:
    sent = Sent()
    asked = PromptInput(message="draw a barn", source="browser", requester="ann", fairy="f1")
    await _session(sent, asked).announce_prompt()
    spoken = PromptInput(message="and a fence", source="voice", requester="bob")
    await _session(sent, spoken, "s2").announce_prompt()
    # A run the steward starts itself (a fairy waking) has nothing to show.
    woken = PromptInput(message="", source="system", requester="f1", fairy="f1")
    await _session(sent, woken, "s3").announce_prompt()
    got = [(p.session_id, p.asker, p.source, p.text, p.fairy) for p in sent.prompts()]
    assert got == [
        ("s1", "ann", "browser", "draw a barn", "f1"),
        ("s2", "bob", "voice", "and a fence", None),
    ]
    assert all(t == TOPIC_PROMPT for _, t in sent.packets)


async def test_a_long_prompt_is_cut_to_one_packet_and_says_so() -> None:
    sent = Sent()
    messenger = Messenger("room", sent)
    await messenger.prompt("s1", "x" * 7_000, asker="ann", source="http")
    (notice,) = sent.prompts()
    assert len(notice.text) == 3_000 and notice.truncated is True
    assert len(sent.packets[0][0]) < 15 * 1024
    await messenger.prompt("s2", "short", asker="ann", source="browser")
    assert sent.prompts()[1].truncated is None
    # An asker the message cannot carry is logged and dropped, never raised into the run.
    await messenger.prompt("s3", "hi", asker="", source="browser")
    assert len(sent.prompts()) == 2
